# Solutions to the three exercises of 03_dimension: load them with  %load solutions/03_dimension.py
from math import ceil

import flint
import numpy as np

from lsa_helpers import (
    PRIME,
    Architecture,
    dimension,
    exact_rank,
    formula_dimension,
    jacobian,
    random_inputs,
    random_weights,
)

SEED = 2025


# --- Exercise 1 (compute): Jacobian ranks with too few inputs --------------------------------------

def ranks_with_few_inputs(arch, counts, seed):
    # Exact Jacobian ranks (mod PRIME) at one random integer point, on the first N inputs, N in counts.
    rng = np.random.default_rng(seed)
    weights = random_weights(arch, rng, modulus=PRIME)
    inputs = random_inputs(arch, max(counts), rng, modulus=PRIME)
    return [exact_rank(jacobian(arch, weights, inputs[:n], modulus=PRIME), PRIME) for n in counts]


# Widths (3, 2, 3), ranks (2, 2): 32 parameters, dimension 18, 9 rows per input. The ranks are
# 8, 12, 16, 18. At N = 2 there are 18 rows, as many as the dimension, but the rank is only 12: the
# rows of one input are far from independent (one input already wastes one of its 9 rows, and each
# later input adds only 4 new directions). The rows first reach the parameter count at N = 4
# (36 >= 32), and there the rank is 18, the dimension.


# --- Exercise 2 (prove): rank mod p <= rank over Q ------------------------------------------------
#
# Proof. Let r be the rank of the integer matrix M over the field Z/pZ. Over any field, the rank is
# the largest size of a square submatrix with non-zero determinant, so some r x r submatrix M_IJ has
# det(M_IJ mod p) != 0 in Z/pZ. The determinant is a polynomial with integer coefficients in the
# entries (Leibniz formula), and reduction mod p is a ring homomorphism Z -> Z/pZ, so
# det(M_IJ) mod p = det(M_IJ mod p) != 0. Hence the integer det(M_IJ) is not zero: M has a non-zero
# r x r minor over Q, and rank_Q(M) >= r.
#
# For the Jacobian: J mod p is the reduction of the integer Jacobian at the integer point (W, X), so
# rank_p(J) <= rank_Q(J) <= (generic rank) = dim M. The inequality can be strict: [[1, 2], [3, 13]]
# has determinant 7, so it has rank 2 over Q but rank 1 mod 7 (its second row is 3 times the first
# mod 7). An unlucky prime or point only weakens the lower bound; it never makes it wrong.

def _pivot_columns(M, p):
    # Indices of the pivot columns of the reduced row echelon form of M mod p.
    M = np.mod(np.asarray(M, dtype=np.int64), p)
    reduced, rank = flint.nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), p).rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(M.shape[1]) if int(reduced[i, j]) != 0))
    return pivots


def nonzero_minor(M, p):
    # Row and column indices of an r x r submatrix of M (r = rank of M mod p), invertible mod p.
    # The pivot columns are r independent columns; among them, the pivot rows of the transpose are
    # r independent rows, so the r x r submatrix they cut out is invertible mod p.
    M = np.asarray(M, dtype=np.int64)
    cols = _pivot_columns(M, p)
    rows = _pivot_columns(M[:, cols].T, p)
    return rows, cols


def strict_example():
    # A 2 x 2 integer matrix of rank 2 over Q and rank 1 mod 7: its determinant is 13 - 6 = 7.
    return [[1, 2], [3, 13]]


# --- Exercise 3 (explore): how many inputs pin a function down? ----------------------------------

def smallest_inputs(arch, seed, target=None):
    # Smallest N with exact Jacobian rank (mod PRIME) on N inputs = the certified dimension of arch
    # (or = target, for architectures that `dimension` does not certify: (4, 4, 2) with t = 1).
    if target is None:
        target = dimension(arch, rng=seed).certified_dimension
        if target is None:
            raise ValueError(f"no certified dimension for {arch}; pass target=")
    rng = np.random.default_rng(seed)
    weights = random_weights(arch, rng, modulus=PRIME)
    limit = 10 * ceil(arch.parameter_count / (arch.widths[-1] * arch.tokens))
    inputs = random_inputs(arch, limit, rng, modulus=PRIME)
    for n in range(1, limit + 1):
        if exact_rank(jacobian(arch, weights, inputs[:n], modulus=PRIME), PRIME) == target:
            return n
    raise RuntimeError(f"the rank did not reach {target} with {limit} inputs")


# (d, d', a) = (4, 4, 2): 32 parameters, dimension 27.
#   t = 2: 8 rows per input, N = 4 (ranks 8, 16, 24, 27): both guesses, ceil(27/8) = ceil(32/8) = 4.
#   t = 3: 12 rows per input, N = 3 (ranks 10, 20, 27): both guesses, ceil(27/12) = ceil(32/12) = 3.
#   t = 4: 16 rows per input, N = 3 (ranks 12, 20, 27). At N = 2 there are 32 rows, as many as
#          parameters and more than the dimension, but the rank is 20: rows >= parameters is not
#          enough: a single input gives only 12 independent rows out of 16 (with rk A <= 2 the
#          matrix X^T A X has rank 2, which limits what dV can change), and a second one adds 8.
#   t = 1: no formula, and `dimension` does not certify it either: its extra fiber directions
#          (degenerate_tangents) need a >= d, and here a = 2 < d = 4, so its upper bound
#          stays at 27. The layer sees only S = sym(A), and the matrices K^T Q + Q^T K with
#          K, Q of size 2 x 4 fill an open set of the 10-dimensional space of symmetric 4 x 4
#          matrices. So dim <= 10 + 16 - 1 = 25 [derived]; the exact rank reaches 25 at N = 10
#          (4 rows per input, ranks 4, 8, ..., 20, 21, ..., 25), which proves dim = 25 for t = 1.


# --- Checks -----------------------------------------------------------------------------------------

arch_ex = Architecture((3, 2, 3), (2, 2))
assert ranks_with_few_inputs(arch_ex, [1, 2, 3, 4], SEED) == [8, 12, 16, 18]
assert formula_dimension(arch_ex).value == 18

arch_33 = Architecture((3, 3), (3,))
rng = np.random.default_rng(SEED)
W_int = random_weights(arch_33, rng, modulus=PRIME)
X_int = random_inputs(arch_33, 3, rng, modulus=PRIME)
J_p = jacobian(arch_33, W_int, X_int, modulus=PRIME).astype(np.int64)
rows_m, cols_m = nonzero_minor(J_p, PRIME)
minor = flint.fmpz_mat(J_p[np.ix_(rows_m, cols_m)].tolist()).det()
assert len(rows_m) == len(cols_m) == exact_rank(J_p, PRIME) == 17
assert minor % PRIME != 0 and minor != 0
M_strict = np.array(strict_example())
assert np.linalg.matrix_rank(M_strict) == 2 and exact_rank(M_strict, 7) == 1

assert smallest_inputs(Architecture((4, 4), (2,), tokens=2), SEED) == 4
assert smallest_inputs(Architecture((4, 4), (2,), tokens=3), SEED) == 3
assert smallest_inputs(Architecture((4, 4), (2,), tokens=4), SEED) == 3
t_one = dimension(Architecture((4, 4), (2,), tokens=1), rng=SEED)
assert (t_one.rank, t_one.upper_bound, t_one.certified_dimension) == (25, 27, None)
assert smallest_inputs(Architecture((4, 4), (2,), tokens=1), SEED, target=25) == 10
print("all checks passed")
