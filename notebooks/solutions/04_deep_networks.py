# Solutions to the three exercises of 04_deep_networks: load them with  %load solutions/04_deep_networks.py
import numpy as np

from lsa_helpers import (
    Architecture,
    act_attention,
    act_width,
    float_rank,
    is_same_function,
    jacobian,
    random_inputs,
    random_weights,
    scale_layers,
    virtual_weights,
)

SEED = 2025


# --- Exercise 1 (compute): a random point of the orbit ---------------------------------------------

def random_symmetry(arch, W, rng):
    # A random point of the orbit of W under GL_(a_i), GL_(d_i) and the constrained scalings.
    for i, a in enumerate(arch.ranks, start=1):                 # G_i in GL_(a_i) on every layer
        W = act_attention(W, i, rng.normal(size=(a, a)))
    for i, d in enumerate(arch.widths[1:-1], start=1):          # P_i in GL_(d_i) on every hidden width
        W = act_width(W, i, rng.normal(size=(d, d)))
    l = arch.layers
    alphas = rng.uniform(0.5, 2.0, size=l) * rng.choice([-1.0, 1.0], size=l)
    betas = rng.uniform(0.5, 2.0, size=l) * rng.choice([-1.0, 1.0], size=l)
    # prod_i (alpha_i beta_i)^(3^(l-i)) = 1: solve for beta_l (its exponent is 3^0 = 1)
    earlier = np.prod((alphas[:-1] * betas[:-1]) ** (3 ** np.arange(l - 1, 0, -1)))
    betas[-1] = 1 / (alphas[-1] * earlier)
    return scale_layers(W, alphas, betas)


# A random Gaussian matrix is invertible with probability one, so act_attention and act_width accept
# it. Negative alphas and betas are allowed too: solving for beta_l makes the whole product +1.


# --- Exercise 2 (prove): the scalings in virtual weights -------------------------------------------
#
# (a) The scaling sends A_i = K_i^T Q_i to alpha_i A_i and V_j to beta_j V_j, so
#     P_(i-1) = V_(i-1) ... V_1 becomes (beta_1 ... beta_(i-1)) P_(i-1), and
#     M_i = P_(i-1)^T A_i P_(i-1) is multiplied by lambda_i = alpha_i prod_(j<i) beta_j^2
#     (P_(i-1) appears twice); L = V_l ... V_1 is multiplied by mu = beta_1 ... beta_l.
# (b) In logarithms, log lambda_i = log alpha_i + 2 sum_(j<i) log beta_j and
#     log mu = sum_j log beta_j: the matrix E below. Let tau = (3^(l-1), ..., 3, 1, 1) be the
#     exponents of the torus equation mu prod_i lambda_i^(3^(l-i)) = 1. Then (tau E) has, at
#     alpha_j, the entry 3^(l-j) (alpha_j only enters lambda_j), and at beta_j the entry
#     1 + 2 sum_(i>j) 3^(l-i) = 1 + (3^(l-j) - 1) = 3^(l-j) (a geometric sum). So tau E = c, the
#     exponents of the constraint: a scaling satisfies the constraint exactly when its image
#     satisfies the torus equation.
# (c) The l + 1 columns of E at alpha_1, ..., alpha_l and beta_l form the identity matrix (beta_l
#     enters only mu, since no lambda_i has i > l), so rank E = l + 1 and E is
#     onto R^(l+1): the constrained scalings (the hyperplane c . x = 0, of dimension 2l - 1) map onto
#     the torus (tau . y = 0, of dimension l), because c = tau E. The kernel of E has dimension
#     2l - (l + 1) = l - 1 and lies in the hyperplane c . x = 0 (c . k = tau E k = 0). The scalar
#     P = cI between layers i and i + 1 is, by section 2, G = cI (which does not move (M, L)) and the
#     scaling beta_i = c, alpha_(i+1) = c^-2, beta_(i+1) = c^-1; its log vector
#     (+1 at beta_i, -2 at alpha_(i+1), -1 at beta_(i+1)) is in the kernel: lambda_(i+1) gets
#     -2 + 2 = 0, later lambdas 2(1 - 1) = 0, mu gets 1 - 1 = 0. These l - 1 vectors are independent
#     (each has its own alpha_(i+1)), so they span the kernel: the scalings that virtual weights do
#     not see are exactly the scalar matrices of the hidden GL_(d_i), which is why the symmetry count
#     is sum a_i^2 + sum d_i^2 + l and not + 2l - 1.

def scaling_exponents(l):
    # Integer matrix E: log(lambda_1..lambda_l, mu) = E @ log(alpha_1..alpha_l, beta_1..beta_l).
    E = np.zeros((l + 1, 2 * l), dtype=int)
    for i in range(l):
        E[i, i] = 1                 # lambda_i has alpha_i once
        E[i, l:l + i] = 2           # and every earlier beta_j twice
    E[l, l:] = 1                    # mu = beta_1 ... beta_l
    return E


# --- Exercise 3 (explore): how often does float64 mislead? ----------------------------------------

def classify_float_readings(indices, n_inputs):
    # Counts of the four classes of float_rank readings (right/wrong x clear/unclear) on
    # widths (4, 4, 4, 4), ranks (2, 3, 2), and the indices read wrong with a clear gap.
    arch = Architecture((4, 4, 4, 4), (2, 3, 2))
    counts = {"right, clear": 0, "right, unclear": 0, "wrong, clear": 0, "wrong, unclear": 0}
    misleading = []
    for k in indices:
        rng = np.random.default_rng([SEED, k])
        weights = random_weights(arch, rng)
        fr = float_rank(jacobian(arch, weights, random_inputs(arch, n_inputs, rng)))
        name = f"{'right' if fr.rank == 52 else 'wrong'}, {'clear' if fr.is_clear else 'unclear'}"
        counts[name] += 1
        if name == "wrong, clear":
            misleading.append(k)
    return counts, misleading


# With N = 9 inputs (108 rows for 104 parameters), the 300 draws give 265 right readings with a
# clear gap, 20 right with an unclear gap, 13 wrong with an unclear gap (the warning works), and 2
# wrong with a CLEAR gap (k = 73 and k = 225). k = 225 reads 49 with a gap near 1e6: three singular
# values lie far below the tolerance although the true rank is 52 (exact ranks on 9 inputs reach
# 52; 8 inputs already do). These counts may move by one or two on another machine, where a
# borderline gap falls on the other side of 1e4; k = 225 is far from every threshold.
# At such a draw the inputs barely determine the 52nd direction, and its singular value is below
# what float64 can resolve, with nothing in between to blur the cut. So a clear gap is evidence,
# not proof: it says that the count is stable under rounding, not that no genuine singular value
# hides below the cut. An exact rank mod p has no such failure. With N = 12 inputs (144 rows) all
# 300 readings are right, with clear gaps: the extra rows lift the small singular values
# (notebook 03).


# --- Checks -----------------------------------------------------------------------------------------

arch = Architecture((4, 3, 3, 4), (2, 3, 2))
rng = np.random.default_rng(SEED)
W = random_weights(arch, rng)
W_orbit = random_symmetry(arch, W, rng)
unchanged = [(i, name) for i, (layer, other) in enumerate(zip(W, W_orbit), start=1)
             for name, w, v in zip("QKV", layer, other) if np.allclose(w, v)]
assert is_same_function(arch, W, W_orbit, rng) and not unchanged

alphas, betas = rng.uniform(0.5, 2.0, size=3), rng.uniform(0.5, 2.0, size=3)
betas[2] = 1 / (alphas[2] * (alphas[0] * betas[0]) ** 9 * (alphas[1] * betas[1]) ** 3)
virtual, scaled_virtual = virtual_weights(W), virtual_weights(scale_layers(W, alphas, betas))
lambdas = [np.sum(N * M) / np.sum(M * M) for M, N in zip(virtual.M, scaled_virtual.M)]
mu = np.sum(scaled_virtual.L * virtual.L) / np.sum(virtual.L * virtual.L)
measured = np.log(np.abs(np.array(lambdas + [mu])))
assert np.allclose(scaling_exponents(3) @ np.log(np.concatenate([alphas, betas])), measured, rtol=1e-10)
for l in range(1, 7):
    E = np.asarray(scaling_exponents(l))
    powers = 3 ** np.arange(l - 1, -1, -1)
    c, tau = np.concatenate([powers, powers]), np.append(powers, 1)
    scalars_of_P = [np.eye(2 * l, dtype=int)[l + i] - 2 * np.eye(2 * l, dtype=int)[i + 1]
                    - np.eye(2 * l, dtype=int)[l + i + 1] for i in range(l - 1)]
    assert E.shape == (l + 1, 2 * l) and np.array_equal(tau @ E, c)
    assert np.linalg.matrix_rank(E) == l + 1
    assert all(not np.any(E @ k) for k in scalars_of_P)
    assert l == 1 or np.linalg.matrix_rank(np.array(scalars_of_P)) == l - 1

counts, misleading = classify_float_readings(range(300), 9)
print("N = 9: ", counts, " wrong with a clear gap:", misleading)
assert sum(counts.values()) == 300 and counts["wrong, clear"] == len(misleading)
assert counts["wrong, unclear"] >= 5 and 225 in misleading
counts_12, misleading_12 = classify_float_readings(range(300), 12)
print("N = 12:", counts_12, " wrong with a clear gap:", misleading_12)
assert counts_12["wrong, clear"] + counts_12["wrong, unclear"] < counts["wrong, clear"] + counts["wrong, unclear"]
assert counts_12["right, clear"] == 300

# the sign remark of exercise 1: a constrained scaling with negative factors
assert is_same_function(arch, W, scale_layers(W, [-1.0, 1.0, 1.0], [1.0, 1.0, -1.0]), SEED)
print("all checks passed")
