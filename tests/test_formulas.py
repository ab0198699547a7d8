import itertools

import numpy as np
import pytest

from lsa_helpers import Architecture, dimension, formula_dimension, span_dimension
from lsa_helpers.function_space import grow_rank

ONE_LAYER = [(d, d_out, a, t) for t in (2, 3) for d, d_out, a in
             itertools.product(range(1, 5), range(1, 4), range(1, 6))]


@pytest.mark.parametrize("d, d_out, a, t", ONE_LAYER)
def test_one_layer_formula_is_the_certified_dimension(d, d_out, a, t):
    arch = Architecture((d, d_out), (a,), tokens=t)
    formula = formula_dimension(arch)
    assert formula.status == "paper"
    assert dimension(arch, rng=d * 100 + a).certified_dimension == formula.value


DEEP = [  # (widths, ranks, status of the formula: a rank-one layer makes a bottleneck "derived")
    ((2, 2, 2), (1, 1), "derived"), ((3, 3, 3), (2, 2), "paper"), ((3, 3, 3), (3, 3), "paper"),
    ((4, 4, 4), (2, 3), "paper"), ((4, 4, 4, 4), (2, 3, 2), "paper"), ((5, 5, 5), (2, 2), "paper"),
    ((3, 3, 3, 3), (1, 1, 1), "derived"),
    ((5, 3, 4), (2, 2), "paper"), ((4, 2, 2, 3), (3, 2, 1), "derived"),
    ((6, 3, 5), (4, 3), "paper"),
    ((3, 3, 3), (5, 4), "derived"), ((2, 2, 2), (4, 3), "derived"),
    ((3, 2, 4, 2), (2, 2, 3), "derived"),
    ((3, 5, 3), (2, 2), "derived"), ((2, 4, 2), (2, 2), "derived"),
    ((4, 6, 3, 4), (3, 2, 2), "derived"),
    ((5, 4, 1), (5, 1), "derived"), ((6, 5, 1), (6, 1), "derived"), ((4, 3, 5), (2, 3), "paper"),
    ((3, 4, 4, 2), (2, 3, 3), "derived"),
]


@pytest.mark.parametrize("widths, ranks, status", DEEP)
@pytest.mark.parametrize("tokens", [2, 3])
def test_deep_formula_is_the_certified_dimension(widths, ranks, status, tokens):
    arch = Architecture(widths, ranks, tokens=tokens)
    formula = formula_dimension(arch)
    assert formula.status == status
    result = dimension(arch, rng=7)
    assert result.certified_dimension == formula.value < arch.parameter_count


def test_equal_widths_closed_form():
    """delta^2 + sum_i a_i (2 delta - a_i) - l."""
    for delta, ranks in [(3, (2, 2)), (5, (2, 4, 5)), (7, (3, 3, 3, 3))]:
        arch = Architecture((delta,) * (len(ranks) + 1), ranks)
        expected = delta**2 + sum(a * (2 * delta - a) for a in ranks) - len(ranks)
        assert formula_dimension(arch).value == expected


def test_a_wide_last_layer_reads_only_2a_plus_d_forms():
    """Derived: widths (5, 4, 1), ranks (5, 1): layer 2 reads 3 linear forms of its 4-d input."""
    arch = Architecture((5, 4, 1), (5, 1))
    narrow = Architecture((5, 3, 1), (5, 1))
    assert formula_dimension(arch).value == formula_dimension(narrow).value == 37
    result = dimension(arch, rng=0)
    assert result.rank == result.certified_dimension == 37  # the unread direction is in the fiber


@pytest.mark.parametrize("widths, ranks, rank, certified", [
    ((3, 3, 3), (1, 3), 18, True), ((3, 3, 2, 3), (1, 3, 5), 19, True),
    ((2, 4, 4), (1, 4), 12, True),
    ((3, 3, 3), (1, 2), 18, False)])
def test_rank_one_collapse_has_no_formula_and_drops(widths, ranks, rank, certified):
    arch = Architecture(widths, ranks)
    formula = formula_dimension(arch)
    assert formula.value is None and formula.reason.startswith("rank-one collapse")
    assert formula_dimension(Architecture(widths, (2, *ranks[1:]))).value > rank
    result = dimension(arch, rng=3)
    assert result.rank == rank
    # the antisymmetric directions of a later A_i close the gap when a_i >= d_{i-1}, not otherwise
    assert result.certified_dimension == (rank if certified else None)


def test_one_token_is_degenerate():
    arch = Architecture((3, 3), (3,), tokens=1)
    assert formula_dimension(arch).value is None
    assert dimension(arch, rng=0).certified_dimension == 14
    assert formula_dimension(Architecture((3, 3), (3,))).value == 17


@pytest.mark.parametrize("widths, ranks", [((3, 2), (2,)), ((4, 3), (5,)), ((3, 3, 3), (2, 2)),
                                           ((4, 3, 4), (2, 3)), ((3, 3, 3, 3), (2, 2, 2))])
def test_softmax_is_lightning_plus_l(widths, ranks):
    lightning = Architecture(widths, ranks)
    softmax = Architecture(widths, ranks, "softmax")
    formula = formula_dimension(softmax)
    assert formula.value == formula_dimension(lightning).value + lightning.layers
    assert formula.status == ("paper" if lightning.layers == 1 else "conjecture")
    found = dimension(softmax, rng=5)
    assert found.rank == formula.value and found.float_reading.is_clear
    assert found.rank == dimension(lightning, rng=5).certified_dimension + lightning.layers


@pytest.mark.parametrize("d, d_out, t",
                         [(1, 1, 2), (2, 1, 2), (2, 2, 3), (3, 1, 2), (2, 1, 1), (3, 2, 1)])
def test_span_dimension_against_sampled_functions(d, d_out, t, rng):
    """The span of the neuromanifold: rank of many functions evaluated at many inputs."""
    from lsa_helpers import Architecture, forward, random_inputs, random_weights
    arch = Architecture((d, d_out), (d,), tokens=t)
    expected = span_dimension(d, d_out, t)
    X = random_inputs(arch, 4 * expected, rng)
    values = np.stack([forward(random_weights(arch, rng), X).ravel() for _ in range(2 * expected)])
    assert np.linalg.matrix_rank(values) == expected


@pytest.mark.parametrize("widths, ranks",
                         [((3, 3), (3,)), ((3, 2, 4), (2, 2)), ((4, 3, 5), (2, 3))])
def test_softmax_with_one_token_is_linear(widths, ranks):
    """t = 1: each softmax weight is 1, so the network is the linear map V_l ... V_1 [derived]."""
    arch = Architecture(widths, ranks, "softmax", 1)
    b = min(widths)
    formula = formula_dimension(arch)
    assert formula.value == b * (widths[0] + widths[-1] - b) and formula.status == "derived"
    found = dimension(arch, rng=1)
    assert found.rank == formula.value and found.float_reading.is_clear


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (1, 3)), ((3, 3, 2, 3), (1, 3, 5))])
def test_softmax_does_not_collapse_after_a_rank_one_layer(widths, ranks):
    arch = Architecture(widths, ranks, "softmax")
    formula = formula_dimension(arch)
    assert formula.status == "conjecture"
    assert formula_dimension(Architecture(widths, ranks)).value is None
    found = dimension(arch, rng=1)
    assert found.rank == formula.value == found.upper_bound and found.float_reading.is_clear


def test_a_float_rank_above_the_upper_bound_is_flagged():
    """A clear float rank above the bound is flagged, not reported as met (rank 3, bound 2)."""
    rng = np.random.default_rng(0)
    rank, _, stopped, found = grow_rank(lambda n: rng.standard_normal((n, 3)), 4, 2, modulus=None,
                                        rng=rng)
    assert (rank, stopped) == (3, "exceeds upper bound") and found.is_clear
