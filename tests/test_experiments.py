import re

import numpy as np
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


def test_each_trial_is_reported_in_its_place():
    """Trials run largest first but are reported in order: trial i is the float rank of the
    Jacobian drawn from the i-th child of rng, recomputed here one by one."""
    from lsa_helpers import float_rank, jacobian, random_inputs, random_weights
    from lsa_helpers.workers import one_blas_thread

    rows = reproduce_softmax_conjecture([3, 4], samples=20, trials=2, rng=5, workers=2)
    archs = [row.architecture for row in rows for _ in row.trial_ranks]
    with one_blas_thread():
        direct = [float_rank(jacobian(arch, random_weights(arch, seed),
                                      random_inputs(arch, 20, seed)))
                  for arch, seed in zip(archs, np.random.default_rng(5).spawn(len(archs)))]
    reported = [trial for row in rows for trial in row.trial_ranks]
    assert [(t.rank, t.gap) for t in reported] == [(t.rank, t.gap) for t in direct]
    assert len({t.gap for t in direct}) == len(direct)  # the trials are told apart
