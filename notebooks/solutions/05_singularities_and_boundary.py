# Solutions to the three exercises of 05_singularities_and_boundary.
# Load them into a new cell with  %load solutions/05_singularities_and_boundary.py
import numpy as np
import sympy as sp

from lsa_helpers import (Architecture, Layer, formula_dimension, gradient_descent, layer_forward,
                         layer_from_attention, quadratic_factor, rank_one_layers, slice_coordinates,
                         slice_matrix, slice_position, tangent_dimension)

SEED = 2025


# --- Exercise 1 (prove): the identities behind the picture, and the converse ------------------
#
# (a) With S = sym(z k^T) = (z k^T + k z^T) / 2 for z, k in R^2:
#     S_11 = z1 k1, S_22 = z2 k2, S_12 = (z1 k2 + z2 k1) / 2, so
#     alpha = (S_11 + S_22) / 2 = (z1 k1 + z2 k2) / 2 = z.k / 2,
#     beta  = (S_11 - S_22) / 2 = (z1 k1 - z2 k2) / 2,   gamma = (z1 k2 + z2 k1) / 2,
#     4 (beta^2 + gamma^2) = (z1 k1 - z2 k2)^2 + (z1 k2 + z2 k1)^2
#                          = z1^2 k1^2 + z2^2 k2^2 + z1^2 k2^2 + z2^2 k1^2 = |z|^2 |k|^2
#     (the cross terms -2 z1 k1 z2 k2 and +2 z1 k2 z2 k1 cancel). Hence
#     det S = alpha^2 - beta^2 - gamma^2 = ((z.k)^2 - |z|^2 |k|^2) / 4 = -(z1 k2 - z2 k1)^2 / 4 <= 0
#     by Lagrange's identity |z|^2 |k|^2 - (z.k)^2 = (z1 k2 - z2 k1)^2. Equality iff z || k.
#
# (b) S = alpha I + B with B = [[beta, gamma], [gamma, -beta]]
#       = r [[cos psi, sin psi], [sin psi, -cos psi]],
#     a reflection scaled by r: B u1 = r u1 and B u2 = -r u2 for u1 = (cos psi/2, sin psi/2) and
#     u2 = (-sin psi/2, cos psi/2) (half-angle formulas). So S has eigenvalues alpha + r and
#     alpha - r, and S = (alpha + r) u1 u1^T + (alpha - r) u2 u2^T. For r >= |alpha| put
#     a = sqrt(r + alpha), b = sqrt(r - alpha), z = a u1 + b u2, k = a u1 - b u2. Then
#     z k^T = a^2 u1 u1^T - a b u1 u2^T + a b u2 u1^T - b^2 u2 u2^T, whose symmetric part is
#     a^2 u1 u1^T - b^2 u2 u2^T = (r + alpha) u1 u1^T + (alpha - r) u2 u2^T = S.
#     For r < |alpha| both eigenvalues have the sign of alpha: S is definite, and
#     x^T S x = (z.x)(k.x) is impossible (a product of two real linear forms vanishes on a line,
#     a definite form only at 0).

def factor_symmetric(alpha, beta, gamma):
    # (z, k) with sym(z k^T) = [[alpha + beta, gamma], [gamma, alpha - beta]];
    # ValueError if the point is not attained.
    r, psi = np.hypot(beta, gamma), np.arctan2(gamma, beta)
    if r * r < alpha * alpha * (1 - 1e-12):
        raise ValueError(f"beta^2 + gamma^2 must be >= alpha^2, got {(alpha, beta, gamma)}")
    u1 = np.array([np.cos(psi / 2), np.sin(psi / 2)])
    u2 = np.array([-np.sin(psi / 2), np.cos(psi / 2)])
    a, b = np.sqrt(max(r + alpha, 0.0)), np.sqrt(max(r - alpha, 0.0))
    return a * u1 + b * u2, a * u1 - b * u2


# the identities of (a), symbolically
z1, z2, k1, k2 = sp.symbols("z1 z2 k1 k2", real=True)
z_col, k_col = sp.Matrix([z1, z2]), sp.Matrix([k1, k2])
S_sym = (z_col * k_col.T + k_col * z_col.T) / 2
alpha_s = (S_sym[0, 0] + S_sym[1, 1]) / 2
beta_s, gamma_s = (S_sym[0, 0] - S_sym[1, 1]) / 2, S_sym[0, 1]
assert sp.expand(alpha_s - (z1 * k1 + z2 * k2) / 2) == 0
assert sp.expand(4 * (beta_s**2 + gamma_s**2) - (z1**2 + z2**2) * (k1**2 + k2**2)) == 0
assert sp.expand(S_sym.det() + (z1 * k2 - z2 * k1) ** 2 / 4) == 0

rng_ex = np.random.default_rng(SEED)
for point in rng_ex.uniform(-2, 2, size=(500, 3)):
    if slice_position(*point) == "outside":
        try:
            factor_symmetric(*point)
            raise AssertionError(f"{point} is outside: factor_symmetric must raise ValueError")
        except ValueError:
            pass
    else:
        z_f, k_f = factor_symmetric(*point)
        assert np.allclose(quadratic_factor(z_f, k_f), slice_matrix(*point))
z_b, k_b = factor_symmetric(1.0, 0.6, 0.8)                      # a boundary point: z || k
assert np.isclose(abs(z_b @ k_b), np.linalg.norm(z_b) * np.linalg.norm(k_b))


# --- Exercise 2 (compute): tangent dimensions at rank-one points, a = d -----------------------

def swap_table(d, d_out, seed):
    # (dim M, one branch, both branches, z = k) at a rank-one integer point of (d, d_out, a = d).
    arch = Architecture((d, d_out), (d,))
    rng = np.random.default_rng(seed)
    while True:
        k, q, z = rng.integers(-4, 5, size=(3, d))
        v = rng.integers(-4, 5, size=d_out)
        if (np.linalg.matrix_rank(np.stack([k, z])) == 2 and q.any() and v.any()):
            break
    point, swapped = rank_one_layers(k, q, v, z, a=d)
    return (formula_dimension(arch).value,
            tangent_dimension(arch, point, rng=rng),
            tangent_dimension(arch, point, swapped, rng=rng),
            tangent_dimension(arch, rank_one_layers(k, q, v, k, a=d)[0], rng=rng))


# Result (d, d' = 1, 2, 3):
#   d = 2: (5, 5, 6, 4)    (7, 7, 9, 6)     (9, 9, 12, 8)
#   d = 3: (11, 11, 15, 9) (14, 14, 20, 12) (17, 17, 25, 15)
#   d = 4: (19, 19, 28, 16) (23, 23, 35, 20) (27, 27, 42, 24)
# One branch always has dim M = d^2 + d d' - 1. The patterns [derived, on these nine]:
#   both branches:  (2d - 1)(d + d' - 1),     z = k:  d (d + d' - 1).
# Why d (d + d' - 1) at z = k: the image is {dV X X^T k q^T X + v k^T X X^T dA X}. The first part
# has dimension d' d and the second d^2 (both maps are injective: a non-zero polynomial times a
# non-zero polynomial is non-zero). They overlap where (dV_s . x)(q . y) = v_s (x^T dA y) for every
# row s, i.e. dV = v w^T and dA = w q^T: the d directions (w q^T, -v w^T) of section 3.2. So
# d' d + d^2 - d.
# The two branches intersect in 2 (d^2 + d d' - 1) - (2d - 1)(d + d' - 1) = 3d + d' - 3 dimensions.
table = {(d, d_out): swap_table(d, d_out, SEED) for d in (2, 3, 4) for d_out in (1, 2, 3)}
for (d, d_out), (dim, branch, both, parallel) in table.items():
    assert dim == branch == d * d + d * d_out - 1
    assert both == (2 * d - 1) * (d + d_out - 1) > dim
    assert parallel == d * (d + d_out - 1) < dim
assert swap_table(3, 2, SEED) == (14, 14, 20, 12)


# --- Exercise 3 (explore): the scale of the initialization ------------------------------------
# The set-up of section 4.1, rebuilt from the same seed.
rng = np.random.default_rng(SEED)
U_t, _ = np.linalg.qr(rng.normal(size=(3, 3)))
W_t, _ = np.linalg.qr(rng.normal(size=(3, 3)))
A_teacher = U_t @ np.diag([2.0, 0.8, 0.3]) @ W_t.T
v_t, z_t = rng.normal(size=2), rng.normal(size=3)
V_teacher = 1.5 * np.outer(v_t / np.linalg.norm(v_t), z_t / np.linalg.norm(z_t))
teacher = layer_from_attention(A_teacher, V_teacher)
X_train = rng.normal(size=(64, 3, 3)) / np.sqrt(3)
Y_train = layer_forward(teacher, X_train)
direction = Layer(*(rng.normal(size=shape) for shape in ((3, 3), (3, 3), (2, 3))))


def closest_approach(scale, start_direction=direction):
    # (smallest rank-one ratio while the loss is below half its start,
    #  first recorded step with loss < 1e-6 of the start)
    start = Layer(*(scale * w for w in start_direction))
    run = gradient_descent(start, X_train, Y_train, learning_rate=0.03, steps=4000, record_every=10)
    learned = run.losses < 0.5 * run.losses[0]
    closest = float(run.rank_one_ratio[learned].min()) if learned.any() else float("nan")
    converged = run.losses < 1e-6 * run.losses[0]
    return closest, int(run.steps[np.argmax(converged)]) if converged.any() else None


results = {scale: closest_approach(scale) for scale in (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)}
# (a) scale  closest ratio  converged at step
#     0.003  2e-05          2980
#     0.01   1e-04          1520
#     0.03   6e-04          1010
#     0.1    7e-03          720
#     0.3    1e-01          460
#     1      2e-01          520
# The smaller the initialization, the closer the run comes to a rank-one point (a singular point),
# and the longer it takes: it starts nearer the zero function, leaves it along one direction, and
# learns the other directions one at a time. From scale 0.3 on, the singular values grow together
# and the run stays away from the singular locus. (At scale 0.001 it does not even leave the zero
# function within 4000 steps.)
#
# (b) Ten other initial directions at scale 0.01: every one comes within 0.002 of a rank-one
# point (the largest closest ratio is about 1e-3). For this teacher the visit is not an accident
# of one seed.
other = []
for seed in range(10):
    draw = np.random.default_rng(seed)
    other_direction = Layer(*(draw.normal(size=s) for s in ((3, 3), (3, 3), (2, 3))))
    other.append(closest_approach(0.01, other_direction)[0])
#
# (c) It is a property of the teacher, though. Give its V a second singular value 0.3:
u1, w1 = v_t / np.linalg.norm(v_t), z_t / np.linalg.norm(z_t)
u2 = np.array([-u1[1], u1[0]])                                  # u2 orthogonal to u1
w2 = np.cross(w1, [1.0, 0.0, 0.0])
w2 /= np.linalg.norm(w2)                                        # w2 orthogonal to w1
V_rank_two = 1.5 * np.outer(u1, w1) + 0.3 * np.outer(u2, w2)
Y_rank_two = layer_forward(layer_from_attention(A_teacher, V_rank_two), X_train)
run_two = gradient_descent(Layer(*(0.01 * w for w in direction)), X_train, Y_rank_two,
                           learning_rate=0.03, steps=4000, record_every=10)
closest_two = run_two.rank_one_ratio[run_two.losses < 0.5 * run_two.losses[0]].min()
# The closest rank-one ratio is now about 0.06: the run never comes within 0.01. Once A has a
# large rank-one part, the loss is a convex quadratic in V (the layer is linear in V), and its
# minimizer has rank two when the teacher's V does; V gets there quickly, before A's second
# direction starts to grow. So the first plateau sits at rk A = 1, rk V = 2, where
# rk A * rk V = 2: a smooth point.
# Which singular points a run visits depends on the scale of the initialization and on the target.
# All of this illustrates the implicit-bias hypothesis; none of it proves it [open].

ratios = [results[s][0] for s in (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)]
assert all(r1 < r2 for r1, r2 in zip(ratios, ratios[1:]))     # closer for smaller scales
assert closest_approach(0.01)[0] < 1e-3 < 0.1 < closest_approach(1.0)[0]
assert results[0.003][1] > results[0.01][1] > results[0.03][1] > results[0.1][1]
assert max(other) < 2e-3
assert closest_two > 0.03 and run_two.losses[-1] < 1e-12 * run_two.losses[0]
print("all checks passed")
