import re

import pytest

from lsa_helpers import Architecture, formula_dimension, reproduce_softmax_conjecture

PAPER_EXPECTED = [25, 40, 57, 76, 97, 120, 145, 172]  # the paper's table, widths 3 to 10


def test_expected_dimensions_are_the_papers():
    assert [formula_dimension(Architecture((w,) * 3, (2, 2), "softmax")).value
            for w in range(3, 11)] == PAPER_EXPECTED


def test_small_rerun_is_right_on_every_trial():
    rows = reproduce_softmax_conjecture([3, 4, 5], trials=2, rng=1)
    assert [r.width for r in rows] == [3, 4, 5]
    assert [r.parameters for r in rows] == [42, 64, 90]
    for row in rows:
        assert row.trials_right == len(row.trial_ranks) == 2
        assert row.rank == row.expected_dimension and row.best.is_clear


def test_width_ten_gets_more_trials():
    rows = reproduce_softmax_conjecture([10], samples=20, trials=1, trials_at_10=3)
    assert len(rows[0].trial_ranks) == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"samples": 0}, "samples must be an integer >= 1, got samples=0"),
    ({"samples": 2.5}, "samples must be an integer >= 1, got samples=2.5"),
    ({"workers": 0}, "workers must be an integer >= 1, got workers=0"),
    ({"workers": True}, "workers must be an integer >= 1, got workers=True"),
])
def test_bad_arguments_are_one_line(kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        reproduce_softmax_conjecture([3], trials=1, **kwargs)


def test_the_result_does_not_depend_on_the_workers():
    """Each trial draws from its own child of rng: one process or two give the same ranks."""
    alone, shared = (reproduce_softmax_conjecture([3, 4], samples=20, trials=2, rng=5, workers=w)
                     for w in (1, 2))
    assert [[(t.rank, t.gap) for t in r.trial_ranks] for r in alone] == [
        [(t.rank, t.gap) for t in r.trial_ranks] for r in shared]
