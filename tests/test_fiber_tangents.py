import re

import numpy as np
import pytest

from lsa_helpers import (
    PRIME,
    Architecture,
    act_attention,
    act_width,
    dimension,
    exact_rank,
    fiber_tangents,
    float_rank,
    formula_dimension,
    jacobian,
    random_inputs,
    random_weights,
    sees_parallel_tokens,
    symmetry_tangents,
    vector_to_weights,
    virtual_jacobian,
    virtual_weights,
    weights_to_vector,
    width_tangents,
)

WIDE = [  # (widths, ranks, rows of width_tangents): hidden width that is not reached or not read
    ((5, 4, 1), (5, 1), 1 * 5),            # layer 2 reads 2 a_2 + d_2 = 3 forms of R^4
    ((3, 5, 3), (2, 2), (2 * 2 + 3) * 2),  # V_1 reaches 3 of 5 dimensions
    ((4, 2, 5, 3), (2, 2, 2), (2 * 2 + 3) * 3),
    ((3, 3, 3), (2, 2), 0),
    ((4, 4, 4, 4), (2, 3, 2), 0),
]


def _products_mod_p(J, T):
    return np.mod(J.astype(object) @ T.T.astype(object), PRIME)


@pytest.mark.parametrize("widths, ranks, count", WIDE)
def test_width_tangents_lie_in_the_kernel_exactly(widths, ranks, count, rng):
    arch = Architecture(widths, ranks)
    weights = random_weights(arch, rng, modulus=PRIME)
    T = width_tangents(arch, weights, modulus=PRIME)
    assert T.shape == (count, arch.parameter_count)
    J = jacobian(arch, weights, random_inputs(arch, 12, rng, modulus=PRIME), modulus=PRIME)
    assert not _products_mod_p(J, T).any()


@pytest.mark.parametrize("widths, ranks, count", WIDE)
def test_width_tangents_lie_in_the_kernel_in_floats(widths, ranks, count, rng):
    arch = Architecture(widths, ranks)
    weights = random_weights(arch, rng)
    T = width_tangents(arch, weights)
    assert T.shape == (count, arch.parameter_count)
    J = jacobian(arch, weights, random_inputs(arch, 12, rng))
    assert np.abs(J @ T.T).max(initial=0) < 1e-10 * np.abs(J).max()


def test_width_tangents_keep_the_function_along_a_finite_step(rng):
    """The unread direction is exact: a step of size 1 along it keeps the function."""
    arch = Architecture((5, 4, 1), (5, 1))
    weights = random_weights(arch, rng)
    step = weights_to_vector(weights) + width_tangents(arch, weights)[0]
    from lsa_helpers import function_distance
    assert function_distance(arch, weights, vector_to_weights(arch, step), rng=rng) < 1e-10


CERTIFIED = [  # (widths, ranks, dimension): the bounds meet
    ((5, 4, 1), (5, 1), 37), ((3, 5, 3), (2, 2), 23), ((3, 8, 3), (2, 2), 23),
    ((4, 2, 5, 3), (2, 2, 2), 27), ((3, 6, 6, 3), (3, 3, 3), 33),
    ((2, 4, 4), (1, 4), 12), ((3, 3, 3), (1, 3), 18),           # rank-one collapse: no formula
    ((4, 4, 4, 4), (2, 3, 2), 52), ((3, 3), (3,), 17),
]


@pytest.mark.parametrize("widths, ranks, expected", CERTIFIED)
def test_width_directions_certify(widths, ranks, expected):
    arch = Architecture(widths, ranks)
    result = dimension(arch, rng=3)
    assert result.rank == result.upper_bound == result.certified_dimension == expected
    assert result.formula.value in (expected, None)


def test_bounds_that_do_not_meet():
    """After a rank-one layer, a layer with a_2 = 2 < d_1 = 3 has hidden directions nobody lists."""
    result = dimension(Architecture((3, 3, 3), (1, 2)), rng=0)
    assert (result.rank, result.upper_bound, result.certified_dimension) == (18, 20, None)


def test_general_widths_formula_is_certified_on_random_architectures():
    """[derived] formula = certified dimension wherever no layer collapses to parallel tokens."""
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 25:
        depth = int(rng.integers(2, 4))
        arch = Architecture(tuple(int(d) for d in rng.integers(1, 6, size=depth + 1)),
                            tuple(int(a) for a in rng.integers(1, 6, size=depth)))
        if any(sees_parallel_tokens(arch)):
            continue
        assert dimension(arch, rng=checked).certified_dimension == formula_dimension(arch).value
        checked += 1


def test_virtual_jacobian_matches_finite_differences(rng):
    arch = Architecture((4, 3, 5, 2), (2, 3, 2))
    weights = random_weights(arch, rng)
    J = virtual_jacobian(arch, weights)
    assert J.shape == (3 * 16 + 2 * 4, arch.parameter_count)

    def flat(vector):
        virtual = virtual_weights(vector_to_weights(arch, vector))
        return np.concatenate([M.ravel() for M in virtual.M] + [virtual.L.ravel()])

    w, u, h = weights_to_vector(weights), rng.normal(size=arch.parameter_count), 1e-5
    difference = (flat(w + h * u) - flat(w - h * u)) / (2 * h)
    np.testing.assert_allclose(J @ u, difference, rtol=1e-6, atol=1e-8 * np.abs(difference).max())


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((4, 4, 4, 4), (2, 3, 2)),
                                           ((5, 3, 4), (2, 2)), ((5, 4, 1), (5, 1))])
def test_virtual_weights_keep_dimension_plus_l(widths, ranks, rng):
    """(M, L) forget GL_a and GL_d: rank = dim + l, the symmetries of GL type in the kernel."""
    arch = Architecture(widths, ranks)
    weights = random_weights(arch, rng, modulus=PRIME)
    J = virtual_jacobian(arch, weights, modulus=PRIME)
    assert exact_rank(J) == formula_dimension(arch).value + arch.layers
    T = symmetry_tangents(arch, weights, modulus=PRIME)
    gl_rows = sum(a * a for a in arch.ranks) + sum(d * d for d in arch.widths[1:-1])
    assert not _products_mod_p(J, T[:gl_rows]).any()
    assert _products_mod_p(J, T[gl_rows:]).any()  # the scalings move (M, L)


def test_virtual_jacobian_is_blind_to_the_gl_actions_in_floats(rng):
    arch = Architecture((4, 3, 3, 4), (2, 3, 2))
    weights = random_weights(arch, rng)
    moved = act_width(act_attention(weights, 2, rng.normal(size=(3, 3))), 1,
                      rng.normal(size=(3, 3)))
    for M, N in zip(virtual_weights(weights).M, virtual_weights(moved).M):
        np.testing.assert_allclose(M, N, rtol=1e-9, atol=1e-12)
    assert float_rank(virtual_jacobian(arch, weights)).rank == formula_dimension(arch).value + 3


def test_fiber_tangents_span_the_kernel_of_the_jacobian(rng):
    """Widths (3, 3, 3), ranks (1, 3): 21 symmetry directions and the 3 antisymmetric ones of A_2
    span the kernel of J, whose rank on many inputs is 18."""
    arch = Architecture((3, 3, 3), (1, 3))
    weights = random_weights(arch, rng, modulus=PRIME)
    T = fiber_tangents(arch, weights, modulus=PRIME)
    J = jacobian(arch, weights, random_inputs(arch, 30, rng, modulus=PRIME), modulus=PRIME)
    assert not _products_mod_p(J, T).any()
    assert exact_rank(J) == 18 and exact_rank(T) == arch.parameter_count - 18 == 24
    assert exact_rank(symmetry_tangents(arch, weights, modulus=PRIME)) == 1 + 9 + 9 + 2


@pytest.mark.parametrize("call, message", [
    (lambda: dimension(Architecture((3, 3), (2,), normalization="softmax"), method="exact"),
     "exact arithmetic needs normalization='lightning' (softmax is not polynomial)"),
    (lambda: width_tangents(Architecture((3, 3, 3), (2, 2)),
                            random_weights(Architecture((3, 3), (2,)), 0)),
     "weights must have 2 layers, got 1"),
    (lambda: virtual_jacobian(Architecture((3, 3), (2,)),
                              random_weights(Architecture((3, 3), (2,)), 0),
                              modulus=1),
     "modulus must be a prime p with 2 <= p < 2^62, got modulus=1"),
    (lambda: width_tangents(Architecture((3, 3, 3), (2, 2)),
                            random_weights(Architecture((3, 3, 3), (2, 2)), 0),
                            modulus=PRIME),
     "weights must be integers when a modulus is given"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()
