import pytest
from widget_support import set_and_run

from lsa_helpers.widgets import dimension_explorer, fiber_explorer, polynomial_explorer


def test_polynomial_explorer_counts(caplog):
    widget = polynomial_explorer()
    facts = set_and_run(widget, caplog, d=2, d_out=1, a=1, t=2)
    assert facts["monomials per output entry"] == 10 and facts["span dimension of the neuromanifold"] == 6
    facts = set_and_run(widget, caplog, d=6, d_out=4, a=6, t=64)
    assert facts["multiplications, (V X X^T)(A X)"] < facts["multiplications, V X (X^T A X)"]
    set_and_run(widget, caplog, d=1, d_out=1, a=1, t=1)


@pytest.mark.parametrize("rank_A, rank_V, kind", [(1, 1, "swap"), (2, 1, "curve"), (3, 2, "curve"),
                                                  (0, 2, "zero"), (3, 0, "zero")])
def test_fiber_explorer_cases(rank_A, rank_V, kind, caplog):
    result = set_and_run(fiber_explorer(), caplog, rank_A=rank_A, rank_V=rank_V)
    assert result["kind"] == kind
    if kind != "zero" or rank_A == 0:  # a nudge of A = 0 makes phi non-zero when V != 0
        assert result["scaling (2A, V/2)"] < 1e-10 < result["random nudge 1e-3"]
    else:                               # V = 0: nothing moves phi away from 0
        assert result["random nudge 1e-3"] == result["scaling (2A, V/2)"] == 0.0
    if kind == "swap":
        assert result["rank-one swap"] < 1e-10


def test_fiber_explorer_clamps_out_of_range(caplog):
    widget = fiber_explorer()
    assert set_and_run(widget, caplog, rank_A=99, rank_V=-5)["kind"] == "zero"
    assert widget.children[0].value == 3 and widget.children[1].value == 0


@pytest.mark.parametrize("values, expected", [
    ({"d": 3, "d_out": 3, "a": 3, "t": 3}, {"parameters": 27, "formula": 17, "certified": 17}),
    ({"d": 1, "d_out": 1, "a": 1, "t": 1}, {"parameters": 3, "formula": None}),
    ({"d": 8, "d_out": 6, "a": 9, "t": 4}, {"parameters": 192, "formula": 111, "certified": 111}),
    ({"d": 8, "d_out": 1, "a": 1, "t": 2}, {"parameters": 24, "formula": 22, "certified": 22}),
])
def test_dimension_explorer(values, expected, caplog):
    result = set_and_run(dimension_explorer(), caplog, **values)
    for key, value in expected.items():
        assert result[key] == value
    if result["formula"] is not None:
        assert result["float rank"] == result["exact rank"] == result["formula"]
