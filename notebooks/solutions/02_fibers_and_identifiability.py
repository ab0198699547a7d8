# Solutions to the three exercises of 02_fibers_and_identifiability.
# Load them into a new cell with  %load solutions/02_fibers_and_identifiability.py
import numpy as np
import sympy as sp

from lsa_helpers import (Architecture, formula_dimension, layer_forward, layer_from_attention,
                         random_weights, recover_layer, symmetry_tangents)

rng = np.random.default_rng(2025)


def is_multiple(B, A):
    """Whether B is a scalar multiple of the non-zero array A (up to rounding)."""
    stacked = np.stack([np.ravel(A), np.ravel(B)])
    return np.linalg.matrix_rank(stacked, tol=1e-9 * np.abs(stacked).max()) == 1


# Exercise 1 (compute): the fiber dimension from the symmetry tangents.
def fiber_dimension_by_tangents(d, d_out, a, rng):
    # Rank of the symmetry tangents at random weights of one layer (widths (d, d_out), rank a).
    arch = Architecture((d, d_out), (a,))
    weights = random_weights(arch, rng)
    return int(np.linalg.matrix_rank(symmetry_tangents(arch, weights)))


for d, d_out, a in [(3, 2, 1), (3, 2, 2), (3, 2, 3), (3, 2, 4), (2, 3, 5), (4, 1, 2)]:
    arch_e = Architecture((d, d_out), (a,))
    expected = a * a + 1 if a <= d else 2 * a * d - d * d + 1
    assert fiber_dimension_by_tangents(d, d_out, a, rng) == expected, f"wrong for {(d, d_out, a)}"
    assert expected == arch_e.parameter_count - formula_dimension(arch_e).value
# Why fewer than a^2 + 1 when a > d: the a^2 generators E of gl_a move (Q, K) by (E Q, -E^T K).
# Q (a x d) has rank d < a, so every E with E Q = 0 and E^T K = 0 gives the zero vector: these E
# form a space of dimension (a - d)^2, and a^2 - (a - d)^2 = 2ad - d^2 directions remain.


# Exercise 2 (prove): the rank-one swap keeps the function.
# Proof. With A = k q^T and V = v z^T,
#     phi(X) = V X X^T A X = v (z^T X X^T k) q^T X,
# because matrix products are associative and z^T X X^T k is a 1 x 1 matrix, a number, which
# commutes with everything. That number is a bilinear form in (z, k) whose matrix X X^T is
# symmetric:  z^T (X X^T) k = (z^T X X^T k)^T = k^T (X X^T)^T z = k^T X X^T z.
# So exchanging z and k, that is passing to A' = z q^T and V' = v k^T, gives
#     phi'(X) = v (k^T X X^T z) q^T X = v (z^T X X^T k) q^T X = phi(X)
# for every X with any number of tokens t. The symmetry of X X^T is the only step that uses
# the structure of attention: the query side q^T X is untouched, while the key vector k and the
# value-read-out vector z enter through the same Gram matrix X X^T.
d, d_out, t = 2, 2, 3
k_s, q_s, z_s = (sp.Matrix(sp.symbols(f"{name}1:{d + 1}")) for name in "kqz")
v_s = sp.Matrix(sp.symbols(f"v1:{d_out + 1}"))
X_s = sp.Matrix(d, t, sp.symbols(f"x1:{d * t + 1}"))


def rank_one_layer(k, q, v, z, X):
    # phi(X) = V X X^T A X with A = k q^T and V = v z^T, as a sympy Matrix of shape (d', t).
    A = k * q.T
    V = v * z.T
    return V * X * X.T * A * X


original = rank_one_layer(k_s, q_s, v_s, z_s, X_s)
assert (original - rank_one_layer(z_s, q_s, v_s, k_s, X_s)).expand() == sp.zeros(d_out, t)
closed_form = (z_s.T * X_s * X_s.T * k_s)[0, 0] * v_s * q_s.T * X_s  # (z^T X X^T k) v q^T X
assert (original - closed_form).expand() == sp.zeros(d_out, t)


# Exercise 3 (explore): recovery when z is parallel to k.
def parallel_case(c, rng):
    # Recover the layer A = k q^T, V = c v k^T (so z = c k is parallel to k) from its black box;
    # return recover_layer(...).candidates.
    k, q, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=2)
    layer = layer_from_attention(np.outer(k, q), c * np.outer(v, k))
    recovery = recover_layer(lambda X: layer_forward(layer, X), 3, rng=rng)
    assert recovery.case == "swap"  # both ranks are one: recovery still flags the rank-one case
    return recovery.candidates


for c in (2.0, -0.5):
    (A_1, V_1), (A_2, V_2) = parallel_case(c, rng)
    assert is_multiple(A_2, A_1) and is_multiple(V_2, V_1), "candidates should agree up to scaling"
# What happens: the recovery reports the case "swap" (both ranks are one), but its two candidates
# agree up to the scaling. All quadrics are multiples of sym(z k^T) = c k k^T, a square: its two
# linear factors are the same line, so "which factor is the key" no longer matters. The swap maps
# (k q^T, c v k^T) to (c k q^T, v k^T) = (lambda A, V / lambda) with lambda = c: it stays on the
# scaling curve, and the fiber has one component instead of two.
# Closed form: phi(X) = c (k^T X X^T k) v q^T X = c |X^T k|^2 v q^T X, a non-negative multiple (for
# c > 0) of v q^T X. These functions are the boundary points of the neuromanifold (notebook 05).
print("all checks passed")
