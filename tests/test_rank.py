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


@pytest.mark.parametrize("widths, ranks", [((3, 2), (2,)), ((4, 3, 4), (2, 3)), ((3, 3, 3, 3), (2, 2, 2))])
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
    (lambda: float_rank(np.ones(3)), "M must be a finite 2-D array, got shape (3,)"),
    (lambda: float_rank(np.array([[1.0, np.nan]])), "M must be a finite 2-D array, got shape (1, 2)"),
    (lambda: exact_rank(np.array([[0.5, 1.0]])), "M must be a 2-D array of integers, got shape (1, 2)"),
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
     ("M must be integers below 2^53 in magnitude when given as floats (float64 is not exact "
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
    from lsa_helpers.rank import RowSpace

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
