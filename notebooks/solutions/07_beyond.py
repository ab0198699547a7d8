# Solutions to the three exercises of 07_beyond: load them with  %load solutions/07_beyond.py
import numpy as np

from lsa_helpers import Architecture, Layer, MultiHead, dimension, formula_dimension, multihead_dimension
from lsa_helpers.invariants import span_coordinates

SEED = 2025


# --- Exercise 1 (compute): heads at a fixed budget, d = d' = 8 -------------------------------------

def budget_dimensions(d):
    # {h: (parameters, naive count parameters - sum(a^2 + rho^2), certified)}, a = rho = d / h.
    table = {}
    for h in (h for h in range(1, d + 1) if d % h == 0):
        layer = MultiHead(d, d, (d // h,) * h, (d // h,) * h)
        naive = layer.parameter_count - sum(a * a + r * r for a, r in zip(layer.ranks, layer.value_ranks))
        table[h] = (layer.parameter_count, naive, multihead_dimension(layer, rng=SEED).certified_dimension)
    return table


table = budget_dimensions(8)
print(table)
assert sorted(table) == [1, 2, 4, 8] and {row[0] for row in table.values()} == {256}
assert all(naive - certified == h for h, (_, naive, certified) in table.items())
# Eight heads of rank one give the largest function space, 232 of 256 parameters (one head: 127).
# The naive count misses by h every time: it forgets the scaling (lambda A_j, V_j / lambda) of each
# head, a symmetry of every head on its own.
assert [table[h][2] for h in (1, 2, 4, 8)] == [127, 190, 220, 232]


# --- Exercise 2 (explore): what skip connections add -------------------------------------------

def skip_gain(widths, ranks):
    # certified dimension with skip=True minus the certified dimension without
    with_skip = dimension(Architecture(widths, ranks, skip=True), rng=SEED).certified_dimension
    without = dimension(Architecture(widths, ranks), rng=SEED).certified_dimension
    return with_skip - without


for widths, ranks in [((3, 3, 3), (2, 2)), ((4, 4, 4, 4), (2, 2, 2)), ((5, 5, 5), (3, 1))]:
    assert formula_dimension(Architecture(widths, ranks)).status == "paper"        # bottleneck
    assert skip_gain(widths, ranks) == (len(ranks) - 1) * widths[0] ** 2
# A rank-one middle layer: without skips the tokens collapse to a line after layer 2, layer 3 sees only
# sym(A_3), and the plain network loses more than the d^2 per hidden layer; the identity path of the
# residual network keeps the tokens apart, so nothing collapses and the gain is larger.
my_architecture = ((3, 3, 3, 3), (3, 1, 3))
gain = skip_gain(*my_architecture)
print("gain for widths (3, 3, 3, 3), ranks (3, 1, 3):", gain, " (l - 1) d^2 =", 2 * 9)
assert formula_dimension(Architecture(*my_architecture)).value is None
assert gain == 47 - 26 > 2 * 9
assert skip_gain((3, 3, 3), (2, 2)) == 9 and skip_gain((4, 4, 4, 4), (2, 2, 2)) == 32
widths, ranks = my_architecture
assert len(ranks) == 3 and len(set(widths)) == 1
assert skip_gain(widths, ranks) != (len(ranks) - 1) * widths[0] ** 2


# --- Exercise 3 (prove and compute): the equations of M(2, 1, 1) -------------------------------
#
# Proof. With A = u w^T (rank one) and V = (v_0, v_1):
#   c_00,q = v_0 A_0q = v_0 u_0 w_q,   c_11,q = v_1 u_1 w_q,   c_01,q = v_0 A_1q + v_1 A_0q = (v_0 u_1 + v_1 u_0) w_q.
# So C = (v_0 u_0, v_0 u_1 + v_1 u_0, v_1 u_1)^T w^T is a column times a row: rank <= 1, and its three
# 2 x 2 minors vanish on M(2, 1, 1). Conversely a 3 x 2 matrix of rank one is z w^T, and z = (z_0, z_1, z_2)
# is the coefficient vector of the binary quadric z_0 s_0^2 + z_1 s_0 s_1 + z_2 s_1^2 =
# (v_0 s_0 + v_1 s_1)(u_0 s_0 + u_1 s_1) when that quadric splits into real linear factors (an open set,
# discriminant > 0); so the layers fill an open part of the rank <= 1 matrices, which have dimension
# 3 + 2 - 1 = 4. Both sides have dimension 4. Over the reals the layers are the rank <= 1 matrices whose
# quadric splits (c_01,q^2 >= 4 c_00,q c_11,q): the minors cut out the Zariski closure, not the set itself.

def minors(coordinates):
    # The three 2 x 2 minors of C = [[c00_0, c00_1], [c01_0, c01_1], [c11_0, c11_1]].
    C = np.asarray(coordinates).reshape(3, 2)
    return [C[i, 0] * C[j, 1] - C[i, 1] * C[j, 0] for i, j in ((0, 1), (0, 2), (1, 2))]


rng = np.random.default_rng([SEED, 9])
layers = [Layer(*(rng.integers(-9, 10, size=s) for s in ((1, 2), (1, 2), (1, 2)))) for _ in range(100)]
assert all(not any(minors(span_coordinates(w).round().astype(np.int64))) for w in layers)
assert all(any(minors(rng.integers(-9, 10, size=6))) for _ in range(100))
assert dimension(Architecture((2, 1), (1,)), rng=SEED).certified_dimension == 3 + 2 - 1
print("all checks passed")
