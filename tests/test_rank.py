import re

import numpy as np
import pytest

from lsa_helpers import (CLEAR_GAP, PRIME, Architecture, dimension, exact_rank, float_rank,
                         jacobian, random_inputs, random_weights)


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
