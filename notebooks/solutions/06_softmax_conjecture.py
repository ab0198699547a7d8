# Solutions to the three exercises of 06_softmax_conjecture: load them with  %load solutions/06_softmax_conjecture.py
from math import ceil

import numpy as np

from lsa_helpers import (
    Architecture,
    Layer,
    float_rank,
    formula_dimension,
    jacobian,
    layer_forward,
    random_inputs,
    random_weights,
    symmetry_tangents,
)

SEED = 2025


# --- Exercise 1 (compute): one token ----------------------------------------------------------------

def softmax_rank(d, d_out, a, tokens, seed):
    # Float Jacobian rank of one softmax layer at a random point, with twice as many rows as parameters.
    arch = Architecture((d, d_out), (a,), normalization="softmax", tokens=tokens)
    rng = np.random.default_rng(seed)
    samples = 2 * ceil(arch.parameter_count / (d_out * tokens))
    J = jacobian(arch, random_weights(arch, rng), random_inputs(arch, samples, rng))
    return float_rank(J)


# With t = 1 the score matrix X^T A X is 1 x 1 and its column softmax is the number 1, so
# phi(x) = V x: a linear map that does not see Q and K at all. The dimension is d d' (the entries of
# V), far below the lightning value at t = 1 (which still sees sym(A)): for (3, 2, 2), 6 against
# 13 + 1 = 14 for every t >= 2. Normalization needs at least two keys to compare.


# --- Exercise 2 (prove): one softmax layer is one-to-one wherever V != 0 -------------------------------
#
# Claim [derived]. Let t >= 2. If phi_(A, V) = phi_(A', V') and V != 0, then (A', V') = (A, V).
#
# Proof. (1) At a constant input X = [x, ..., x] every column of X^T A X is constant, so the softmax
# weights are 1/t and phi(X) = V x 1^T. Hence V x = V' x for all x, and V' = V.
# (2) At X = [x, y, ..., y] the first output column is V x + w V (y - x) with
# w = sigmoid(l + log(t - 1)), l = (y - x)^T A x; the same with w', l' for A'. Where V (y - x) != 0
# we get w = w', and since the sigmoid is injective, l = l'. The set of pairs (x, y) with
# V (y - x) != 0 is open and dense when V != 0 (its complement is a proper linear subspace), and
# l - l' = (y - x)^T (A - A') x is a polynomial in (x, y) that vanishes on it, so it vanishes
# everywhere. With x = e_j and y = e_j + e_i it reads (A - A')_ij = 0. So A' = A.
# (3) If V = 0 the layer is the zero function for every A: the fiber is {V = 0}, and A is lost.
# The paper's theorem says "generically one-to-one" [paper]; this argument shows that in (A, V) the
# only exception is V = 0. In (Q, K, V), the fiber is the GL_a orbit of (Q, K) (when rk A = a <= d).
#
# The computation behind step (2) with x = e_j, y = e_j + e_i (two tokens): the first output column is
# V e_j + sigmoid(A_ij) V e_i, so sigmoid(A_ij) is the coefficient of V e_i in phi - V e_j.

def attention_entry(black_box, V, i, j):
    # A_ij of a softmax layer with values V, from one evaluation at X = [e_j, e_j + e_i] (needs V e_i != 0).
    d = V.shape[1]
    x, y = np.eye(d)[j], np.eye(d)[j] + np.eye(d)[i]
    first = black_box(np.column_stack([x, y]))[:, 0]       # V x + sigmoid(A_ij) V (y - x)
    u = V @ (y - x)                                         # = V e_i
    w = u @ (first - V @ x) / (u @ u)                       # sigmoid(A_ij)
    return float(np.log(w / (1 - w)))


# --- Exercise 3 (explore): temperature -----------------------------------------------------------------

def rank_at_temperature(arch, c, seed, samples=40):
    # FloatRank of the Jacobian at random weights with every Q_i multiplied by c (scores scaled by c).
    rng = np.random.default_rng(seed)
    weights = [Layer(c * Q, K, V) for Q, K, V in random_weights(arch, rng)]
    return float_rank(jacobian(arch, weights, random_inputs(arch, samples, rng)))


# For each fixed c != 0, c Q is as random as Q, so the true rank is 40 for every c. What the float
# rank reads (widths (4, 4, 4), ranks (2, 2), seed 2025):
#   c = 0.001: 44 (gap 2e4, "clear"!)  c = 0.01: 41 (unclear)  c = 0.1 to 100: 40, clear
#   c = 300: 43  c = 1000: 34  c = 3000: 29, all with gaps below 1e3.
# Small c: the softmax is almost uniform, the Jacobian columns of the K_i (and Q_2) are tiny, and the
# row and column scaling magnifies their rounding errors: the rank reads *more* than the symmetry
# bound 40, which is impossible. A clear gap is therefore not enough; compare with the bound.
# Large c: the softmax saturates (each query puts almost all its weight on one key), its derivative
# S * (dZ - 1 1^T (S * dZ)) is nearly zero, and true directions sink below the tolerance: the rank
# under-counts, and the gap says so. A computation in float32 has about 9 fewer digits of room, so
# the same effect sets in at much milder weights: a plausible cause of the under-counts reported for
# the float32 experiment (our guess, not checked against that code).


# --- Checks -----------------------------------------------------------------------------------------

def _check_solutions():
    # inside a function, so that loading this file does not overwrite the notebook's variables
    for t in (1, 2, 3):
        for d, d_out, a in [(3, 2, 2), (4, 4, 4), (2, 1, 1)]:
            found = softmax_rank(d, d_out, a, t, SEED)
            expected = d * d_out if t == 1 else formula_dimension(
                Architecture((d, d_out), (a,), normalization="softmax", tokens=t)).value
            assert found.rank == expected and found.is_clear, (d, d_out, a, t)

    hidden = random_weights(Architecture((4, 3), (2,), normalization="softmax"), SEED)[0]
    box = lambda X: layer_forward(hidden, X, normalization="softmax")  # noqa: E731
    A_entries = np.array([[attention_entry(box, hidden.V, i, j) for j in range(4)] for i in range(4)])
    assert np.allclose(A_entries, hidden.attention, rtol=0, atol=1e-12)

    arch_t = Architecture((4, 4, 4), (2, 2), normalization="softmax")
    bound = arch_t.parameter_count - float_rank(symmetry_tangents(arch_t, random_weights(arch_t, SEED))).rank
    assert bound == 40 == formula_dimension(arch_t).value
    at_one = rank_at_temperature(arch_t, 1.0, SEED)
    assert at_one.rank == 40 and at_one.is_clear
    assert rank_at_temperature(arch_t, 1e-3, SEED).rank > bound            # impossible: an artefact
    hot = rank_at_temperature(arch_t, 3000.0, SEED)
    assert hot.rank < 40 and not hot.is_clear                                # under-count, flagged


_check_solutions()
print("all checks passed")
