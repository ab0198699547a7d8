import pytest
from widget_support import set_and_run

from lsa_helpers import Architecture, formula_dimension
from lsa_helpers.widgets import softmax_explorer


@pytest.mark.parametrize("depth, width, rank, lightning", [
    (1, 3, 2, 16),     # the default: one layer, (d, d', a) = (3, 3, 2)
    (1, 2, 1, 6),      # every slider at its minimum
    (2, 5, 5, 73),     # every slider at its maximum
    (2, 3, 2, 23),     # the paper's experiment at width 3 (softmax: 25)
    (2, 2, 5, 10),     # a > d: extra rank adds no dimension
])
def test_softmax_adds_one_dimension_per_layer(depth, width, rank, lightning, caplog):
    result = set_and_run(softmax_explorer(), caplog, depth=depth, width=width, rank=rank,
                         reveal=True)
    arch = Architecture((width,) * (depth + 1), (rank,) * depth, normalization="softmax")
    assert result["parameters"] == arch.parameter_count
    assert result["lightning"] == lightning
    assert result["softmax"] == lightning + depth == result["formula"]
    assert result["formula"] == formula_dimension(arch).value
    assert result["difference"] == depth and result["gap clear"]
    assert result["status"] == ("paper" if depth == 1 else "conjecture")


def test_every_setting_draws_both_cliffs_at_the_dimensions(caplog):
    # the spectra on the right: the lightning float rank of the same Jacobian is the certified
    # value, the softmax one is lightning + l, at every slider setting (equal widths and equal
    # ranks: the bottleneck hypotheses hold and no rank-one layer precedes a wider one); no timing
    # here, since a test must not depend on the machine's load
    widget = softmax_explorer(seed=2025, reveal=True)
    for depth in (1, 2):
        for width in range(2, 6):
            for rank in range(1, 6):
                result = set_and_run(widget, caplog, depth=depth, width=width, rank=rank)
                assert result["lightning float"] == result["lightning"], (depth, width, rank)
                assert result["difference"] == depth and result["gap clear"], (depth, width, rank)


def test_softmax_explorer_hides_the_answer_until_revealed(caplog, capsys):
    widget = softmax_explorer(seed=2025)
    capsys.readouterr()
    hidden = set_and_run(widget, caplog, depth=2, width=4, rank=2)
    printed = capsys.readouterr().out
    assert "softmax: ?" in printed and "40" not in printed
    shown = set_and_run(widget, caplog, reveal=True)
    assert hidden == shown and shown["softmax"] == 40


def test_softmax_explorer_clamps_out_of_range(caplog):
    widget = softmax_explorer(seed=2025, reveal=True)
    result = set_and_run(widget, caplog, depth=9, width=-1, rank=0)
    assert [child.value for child in widget.children[:3]] == [2, 2, 1]
    assert result["difference"] == 2 and result["gap clear"]


def test_softmax_explorer_prints_verdicts_not_digits(caplog, capsys):
    widget = softmax_explorer(seed=2025, reveal=True)
    capsys.readouterr()
    set_and_run(widget, caplog, depth=2, width=4, rank=2)
    printed = capsys.readouterr().out
    assert "gap clear" in printed and "difference: 2 = l" in printed and "e+" not in printed
