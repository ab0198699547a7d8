import re

import numpy as np
import pytest

from lsa_helpers import (
    CLEAR_GAP,
    PRIME,
    Architecture,
    dimension,
    exact_rank,
    float_rank,
    jacobian,
    random_inputs,
    random_weights,
)
from lsa_helpers.rank import RowSpace


def with_spectrum(values, rng, rows=12, cols=10):
    U = np.linalg.qr(rng.normal(size=(rows, rows)))[0][:, : len(values)]
    V = np.linalg.qr(rng.normal(size=(cols, cols)))[0][:, : len(values)]
    return U @ np.diag(values) @ V.T


def test_clear_gap(rng):
    found = float_rank(with_spectrum([1, 1, 1, 1, 1, 1e-5], rng))
    assert found.rank == 6 and found.is_clear and found.gap > CLEAR_GAP


def test_unclear_gap_is_flagged(rng):
    found = float_rank(with_spectrum([1, 1, 1, 1, 1, 1e-5, 1e-13], rng))
    assert found.rank == 7 and not found.is_clear and "UNCLEAR" in repr(found)


def test_zero_and_scaling_invariance(rng):
    assert float_rank(np.zeros((3, 4))).rank == 0
    M = with_spectrum([1, 1, 1], rng)
    scaled = np.diag(10.0 ** rng.integers(-8, 8, 12)) @ M @ np.diag(10.0 ** rng.integers(-8, 8, 10))
    assert float_rank(scaled).rank == 3


def test_exact_rank_is_modular():
    M = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert exact_rank(M, PRIME) == 2
    assert exact_rank(np.diag([1, 3, 5]), 3) == 2  # 3 = 0 mod 3: a rank mod p can only drop
    assert exact_rank(np.zeros((0, 3))) == 0


@pytest.mark.parametrize("widths, ranks",
                         [((3, 2), (2,)), ((4, 3, 4), (2, 3)), ((3, 3, 3, 3), (2, 2, 2))])
def test_float_and_exact_ranks_agree_where_the_gap_is_clear(widths, ranks, rng):
    arch = Architecture(widths, ranks)
    count = 2 * arch.parameter_count // (widths[-1] * arch.tokens) + 1
    J = jacobian(arch, random_weights(arch, rng), random_inputs(arch, count, rng))
    Jp = jacobian(arch, random_weights(arch, rng, modulus=PRIME),
                  random_inputs(arch, count, rng, modulus=PRIME), modulus=PRIME)
    found = float_rank(J)
    assert found.is_clear
    assert found.rank == exact_rank(Jp) == dimension(arch, rng=rng).certified_dimension


@pytest.mark.parametrize("call, message", [
    (lambda: float_rank(np.ones(3)), "M must be a finite 2-D array of numbers, got shape (3,)"),
    (lambda: float_rank(np.array([[1.0, np.nan]])),
     "M must be a finite 2-D array of numbers, got shape (1, 2)"),
    (lambda: exact_rank(np.array([[0.5, 1.0]])),
     "M must be a 2-D array of integers, got shape (1, 2)"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_extreme_floats_keep_their_rank():
    """Row and column norms are taken after scaling, so no square overflows to inf or 0."""
    assert float_rank(np.array([[1e200, 0], [0, 1.0]])).rank == 2
    assert float_rank(np.eye(2) * 1e155).rank == 2
    assert float_rank(np.eye(2) * 1e-170).rank == 2


def test_exact_rank_of_large_python_integers():
    """2^70 = 2 mod 7, so [[2^70, 1], [1, 1]] has determinant 1 mod 7."""
    assert exact_rank([[2**70, 1], [1, 1]], 7) == 2 and exact_rank([[2**70, 2], [1, 1]], 7) == 1


PRIME_MESSAGE = "modulus must be a prime p with 2 <= p < 2^62, got modulus={}"


@pytest.mark.parametrize("call, message", [
    (lambda: exact_rank([[2, 0], [0, 2]], 4), PRIME_MESSAGE.format(4)),
    (lambda: exact_rank([[1]], -7), PRIME_MESSAGE.format(-7)),
    (lambda: exact_rank([[1]], 1), PRIME_MESSAGE.format(1)),
    (lambda: exact_rank([[1]], 2**62 + 135), PRIME_MESSAGE.format(2**62 + 135)),
    (lambda: exact_rank([[1]], True), PRIME_MESSAGE.format(True)),
    (lambda: dimension(Architecture((3, 3), (2,)), rng=0, modulus=9), PRIME_MESSAGE.format(9)),
    (lambda: dimension(Architecture((3, 3), (2,)), rng=0, modulus=15), PRIME_MESSAGE.format(15)),
    (lambda: dimension(Architecture((3, 3), (2,)), rng=0, modulus=2**20),
     PRIME_MESSAGE.format(2**20)),
    (lambda: exact_rank(np.array([[2.0**63, 1], [1, 1]]), 7),
     ("M must be integers below 2^53 in magnitude when given as float64 (float64 is not exact "
      "beyond), got 9.22e+18")),
    (lambda: exact_rank(np.array([[np.inf, 1.0]]), 7),
     "M must be a 2-D array of integers, got shape (1, 2)"),
])
def test_a_bad_modulus_or_entry_is_refused_in_one_line(call, message):
    """A composite modulus would make FLINT abort the process: it is refused before."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_jacobian_refuses_inputs_that_float64_cannot_hold():
    arch = Architecture((2, 1), (1,), tokens=2)
    weights = random_weights(arch, 0, modulus=7)
    inputs = np.array([[[2.0**60, 1], [1, 1]]])
    with pytest.raises(ValueError, match=r"^inputs must be integers below 2\^53"):
        jacobian(arch, weights, inputs, modulus=7)
    exact = jacobian(arch, weights, inputs.astype(np.int64), modulus=7)  # int64 is exact
    assert np.array_equal(exact, jacobian(arch, weights, np.mod(inputs.astype(np.int64), 7),
                                          modulus=7))


def test_a_row_space_grows_like_the_rank_of_all_its_rows(rng):
    """Fed in chunks, the echelon form keeps the rank of everything seen, and spans it."""
    p = 101  # a small prime: dependent rows mod p appear often
    M = np.mod(rng.integers(0, p, (60, 9)) @ rng.integers(0, p, (9, 20)), p).astype(float)
    space = RowSpace(p, 20)
    for end in range(6, 61, 6):
        space = space.extend(M[end - 6:end])
        assert space.rank == exact_rank(M[:end].astype(int), p)
    pivots, F = space.basis
    basis = np.zeros((space.rank, 20))
    basis[:, pivots] = np.eye(space.rank)
    basis[:, np.setdiff1d(np.arange(20), pivots)] = F
    assert exact_rank(np.vstack([basis, M]).astype(int), p) == space.rank == 9
    assert not np.any(space.reduce(M))  # every row seen lies in the span


def test_rows_near_the_largest_float_keep_their_rank():
    """A row of norm above 1.8e308 is scaled without forming its norm (which would be inf)."""
    found = float_rank([[1.5e308, 1.5e308], [1, 2]])
    assert found.rank == 2 and found.is_clear


def test_complex_matrices_have_their_rank_over_c():
    """[[1, i], [i, -1]] = (1, i)^T (1, i) has rank one; its real part alone has rank two."""
    assert float_rank([[1, 1j], [1j, -1]]).rank == 1
    assert float_rank([[1, 1j], [1j, 1]]).rank == 2  # determinant 1 - i^2 = 2
    assert float_rank(np.array([[1, 1j], [1j, -1]]) * 1e-200).rank == 1


def test_rounding_errors_lifted_by_the_column_scaling_make_a_rank_unclear(rng):
    """A column at the size of the rounding errors of its rows is indistinguishable from zero:
    scaled to unit norm it would count as a direction, with a gap of 1e14."""
    B = rng.normal(size=(12, 3)) @ rng.normal(size=(3, 5))       # rank 3
    noisy = np.column_stack([B, 1e-17 * rng.normal(size=12)])
    found = float_rank(noisy)
    assert found.rank == 4 and found.gap > 1e10 and not found.is_clear
    assert "column scaling" in found.reason and "column scaling" in repr(found)
    assert float_rank(B).is_clear and float_rank(B).reason is None


@pytest.mark.parametrize("values", [[["a", "b"]], [[None, 1.0]]])
def test_float_rank_refuses_what_is_not_numbers(values):
    with pytest.raises(ValueError, match=r"^M must be a finite 2-D array of numbers, got "):
        float_rank(values)


def python_product(A, B, p):
    """``A B mod p`` in Python integers: exact whatever the size."""
    return np.mod(A.astype(np.int64).astype(object) @ B.astype(np.int64).astype(object), p)


@pytest.mark.parametrize("p", [2, 101, PRIME, 94906249])  # 94906249: the largest accepted prime
def test_modular_products_are_exact_for_every_accepted_modulus(p, rng):
    from lsa_helpers.rank import mod_matmul

    A = rng.integers(max(p - 50, 0), p, size=(4, 300)).astype(float)  # near p: the worst case
    B = rng.integers(max(p - 50, 0), p, size=(300, 3)).astype(float)
    assert np.array_equal(mod_matmul(A, B, p), python_product(A, B, p).astype(float))


@pytest.mark.parametrize("p, message", [
    (1, "p must be a prime p with 2 <= p < 2^62, got p=1"),
    (9, "p must be a prime p with 2 <= p < 2^62, got p=9"),
    (2**31 - 1, "p must satisfy (p - 1)^2 < 2^53 for exact float64 products, got p=2147483647"),
    (94906297, "p must satisfy (p - 1)^2 < 2^53 for exact float64 products, got p=94906297"),
])
def test_modular_products_refuse_a_modulus_they_cannot_use(p, message):
    from lsa_helpers.rank import mod_matmul

    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mod_matmul(np.ones((2, 2)), np.ones((2, 2)), p)


@pytest.mark.parametrize("A, message", [
    (np.array([[0.5, 1.0]]), "A must be residues mod 7 (integers from 0 to 6), got shape (1, 2)"),
    (np.array([[7.0, 1.0]]), "A must be residues mod 7 (integers from 0 to 6), got shape (1, 2)"),
    (np.ones((1, 3)),
     "A and B must be 2-D with A's columns matching B's rows, got (1, 3) and (2, 2)"),
])
def test_modular_products_refuse_what_is_not_residues(A, message):
    from lsa_helpers.rank import mod_matmul

    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mod_matmul(A, np.ones((2, 2)), 7)


@pytest.mark.parametrize("call, message", [
    (lambda: RowSpace(9, 2), "modulus must be a prime p with 2 <= p < 2^62, got modulus=9"),
    (lambda: RowSpace(1, 2), "modulus must be a prime p with 2 <= p < 2^62, got modulus=1"),
    (lambda: RowSpace(2**61 - 1, 2),
     "modulus must satisfy (modulus - 1)^2 < 2^53 for exact float64 products, "
     "got modulus=2305843009213693951"),
    (lambda: RowSpace(7, -1), "width must be an integer >= 0, got width=-1"),
    (lambda: RowSpace(7, 2).extend(np.array([[0.5, 1.0]])),
     "X must be integers when a modulus is given"),
    (lambda: RowSpace(7, 2).extend(np.array([[np.inf, 1.0]])),
     "X must be integers when a modulus is given"),
    (lambda: RowSpace(7, 2).extend(np.ones((1, 3))), "X must have shape (rows, 2), got (1, 3)"),
])
def test_a_row_space_checks_its_modulus_and_rows(call, message):
    """RowSpace(9, 2).extend([[3, 1], [1, 3]]) would abort the process inside FLINT (3 has no
    inverse mod 9)."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_a_row_space_reduces_integer_rows():
    """[[8, -1]] is [[1, 6]] mod 7; [[3, 1], [1, 3]] has determinant 8 = 1 mod 7: rank 2."""
    assert RowSpace(7, 2).extend([[8, -1], [1, 6]]).rank == 1
    assert RowSpace(7, 2).extend(np.array([[3, 1], [1, 3]], dtype=np.int8)).rank == 2


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_small_integer_types_have_the_rank_of_their_values(dtype):
    """det [[1, 2], [3, 4]] = -2: rank 2 mod PRIME and mod 2^61 - 1 (a prime), rank 1 mod 2."""
    M = np.array([[1, 2], [3, 4]], dtype=dtype)
    assert exact_rank(M) == exact_rank(M, 2**61 - 1) == 2 and exact_rank(M, 2) == 1


def test_unsigned_64_bit_integers_keep_their_value():
    """2^64 - 1 = 1 mod 7 (2^3 = 1 mod 7), so the matrix is [[1, 1], [1, 1]] mod 7: rank 1.
    As int64 it would wrap to -1 and give rank 2."""
    assert exact_rank(np.array([[2**64 - 1, 1], [1, 1]], dtype=np.uint64), 7) == 1
    assert exact_rank(np.array([[True, False], [True, True]])) == 2


@pytest.mark.parametrize("M, message", [
    (np.array([[2048.0, 1.0]], dtype=np.float16),
     "M must be integers below 2^11 in magnitude when given as float16 (float16 is not exact "
     "beyond), got 2.05e+03"),
    (np.array([[2.0**24, 1.0]], dtype=np.float32),
     "M must be integers below 2^24 in magnitude when given as float32 (float32 is not exact "
     "beyond), got 1.68e+07"),
])
def test_short_floats_beyond_their_exact_integers_are_refused(M, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        exact_rank(M)


def test_short_floats_within_their_exact_integers_are_accepted():
    assert exact_rank(np.array([[2047, 1], [1, 1]], dtype=np.float16), 7) == 2
    assert exact_rank(np.array([[2.0**24 - 1, 1], [1, 1]], dtype=np.float32), 2) == 1


def modulus_calls():
    """Every callable of the package that takes a modulus, called with modulus ``m``: the public
    ones and the checks and exact products behind them (:data:`PLUMBING`)."""
    import lsa_helpers as lsa
    from lsa_helpers._checks import prime
    from lsa_helpers.differential import check_modulus
    from lsa_helpers.rank import mod_matmul
    from lsa_helpers.weights import check_weights

    arch, heads = Architecture((2, 2), (1,)), lsa.MultiHead(2, 2, (1, 1), (1, 1))
    W, H = lsa.random_weights(arch, 0, modulus=5), lsa.random_heads(heads, 0, modulus=5)
    X = np.ones((1, 2, 3))
    return {
        "RowSpace": lambda m, w, h: RowSpace(m, 2),
        "check_modulus": lambda m, w, h: check_modulus(arch, m),
        "check_prime": lambda m, w, h: prime("modulus", m),
        "check_weights": lambda m, w, h: check_weights(arch, w or W, modulus=m),
        "degenerate_tangents": lambda m, w, h: lsa.degenerate_tangents(arch, w or W, modulus=m),
        "dimension": lambda m, w, h: dimension(arch, rng=0, modulus=m),
        "exact_rank": lambda m, w, h: exact_rank([[1]], m),
        "fiber_tangents": lambda m, w, h: lsa.fiber_tangents(arch, w or W, modulus=m),
        "head_symmetry_tangents": lambda m, w, h: lsa.head_symmetry_tangents(heads, h or H,
                                                                            modulus=m),
        "jacobian": lambda m, w, h: jacobian(arch, w or W, X, modulus=m),
        "jacobian_along": lambda m, w, h: lsa.jacobian_along(arch, w or W, X,
                                                             np.ones((arch.parameter_count, 1),
                                                                     dtype=np.int64),
                                                             modulus=m),
        "mod_matmul": lambda m, w, h: mod_matmul(np.ones((1, 1)), np.ones((1, 1)), m),
        "multihead_dimension": lambda m, w, h: lsa.multihead_dimension(heads, rng=0, modulus=m),
        "multihead_jacobian": lambda m, w, h: lsa.multihead_jacobian(heads, h or H, X, modulus=m),
        "random_heads": lambda m, w, h: lsa.random_heads(heads, 0, modulus=m),
        "random_inputs": lambda m, w, h: random_inputs(arch, 1, 0, modulus=m),
        "random_weights": lambda m, w, h: random_weights(arch, 0, modulus=m),
        "swap_tangent_dimension": lambda m, w, h: lsa.swap_tangent_dimension(
            Architecture((2, 1), (1,)), [1, 0], [0, 1], [1], [1, 1], rng=0, modulus=m),
        "symmetry_tangent_groups": lambda m, w, h: lsa.symmetry_tangent_groups(arch, w or W,
                                                                              modulus=m),
        "symmetry_tangents": lambda m, w, h: lsa.symmetry_tangents(arch, w or W, modulus=m),
        "tangent_dimension": lambda m, w, h: lsa.tangent_dimension(arch, (w or W)[0], rng=0,
                                                                  modulus=m),
        "virtual_jacobian": lambda m, w, h: lsa.virtual_jacobian(arch, w or W, modulus=m),
        "width_tangents": lambda m, w, h: lsa.width_tangents(arch, w or W, modulus=m),
    }


PLUMBING = {"RowSpace", "check_modulus", "check_prime", "check_weights", "mod_matmul"}


def test_every_public_callable_with_a_modulus_is_listed():
    import inspect

    import lsa_helpers as lsa

    taking = {name for name in lsa.__all__ if callable(getattr(lsa, name))
              and name != "Dimension"  # Dimension only records it
              and {"modulus", "p"} & set(inspect.signature(getattr(lsa, name)).parameters)}
    assert taking == set(modulus_calls()) - PLUMBING


@pytest.mark.parametrize("name", sorted(modulus_calls()))
@pytest.mark.parametrize("modulus", [4, 1])
def test_every_modulus_is_checked_before_flint_sees_it(name, modulus):
    """A composite modulus would abort the process inside FLINT (head_symmetry_tangents with
    modulus=4 inverts 2 mod 4)."""
    with pytest.raises(ValueError, match=r"^(modulus|p) must be a prime p with 2 <= p < 2\^62"):
        modulus_calls()[name](modulus, None, None)


@pytest.mark.parametrize("name", sorted(set(modulus_calls()) - {"exact_rank", "check_prime"}))
def test_a_prime_too_large_for_float64_residues_is_refused(name):
    """2^61 - 1 is prime, but products of its residues are not exact in float64."""
    with pytest.raises(ValueError, match=r"^(modulus|p) must satisfy .*\(\1 - 1\)\^2 < 2\^53"):
        modulus_calls()[name](2**61 - 1, None, None)


WEIGHTED = ["check_weights", "degenerate_tangents", "fiber_tangents", "head_symmetry_tangents",
            "jacobian", "multihead_jacobian", "symmetry_tangent_groups", "symmetry_tangents",
            "tangent_dimension", "virtual_jacobian", "width_tangents"]


@pytest.mark.parametrize("name", WEIGHTED)
def test_float_weights_with_a_modulus_are_refused(name):
    """Gaussian weights reduced mod 7 would be truncated to integers without a word."""
    import lsa_helpers as lsa

    arch, heads = Architecture((2, 2), (1,)), lsa.MultiHead(2, 2, (1, 1), (1, 1))
    weights, head_weights = random_weights(arch, 0), lsa.random_heads(heads, 0)
    with pytest.raises(ValueError, match=r"^(weights|layers) must (be integers|have integer)"):
        modulus_calls()[name](7, weights, head_weights)
