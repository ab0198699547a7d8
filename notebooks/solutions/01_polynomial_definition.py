# Solutions to the exercises of 01_polynomial_definition: load them with
#   %load solutions/01_polynomial_definition.py                      (all three, with their checks)
#   %load -s count_monomials solutions/01_polynomial_definition.py   (one function only)
import numpy as np

from lsa_helpers import Architecture, Layer, forward, multiplication_counts, random_weights
from lsa_helpers.symbolic import monomial_count, symbolic_layer

SEED = 2025


def count_monomials(d, t):
    # Number of monomials in X of one output entry of a layer with d-dimensional tokens, t tokens.
    # Exercise 1 (compute). Entry (s, j) is sum_i (x_i^T A x_j)(v_s . x_i).
    # The query token i = j gives a cubic form in x_j: C(d + 2, 3) monomials.
    # Each of the t - 1 other keys i gives (quadratic form in x_i) * (linear form in x_j):
    # C(d + 1, 2) * d monomials. Different keys use different variables, so nothing cancels.
    # d = 3, t = 3: C(5, 3) + 2 * 3 * C(4, 2) = 10 + 36 = 46.
    from math import comb

    return comb(d + 2, 3) + (t - 1) * d * comb(d + 1, 2)


def degree_in_input(l):
    # Degree of homogeneity of an l-layer lightning network in its input X.
    # Exercise 2 (prove), part 1, by induction on l. One layer:
    #     phi(lam X) = V (lam X) ((lam X)^T A (lam X)) = lam^3 phi(X).
    # If Y = phi_{W_{l-1}} o ... o phi_{W_1} satisfies Y(lam X) = lam^(3^(l-1)) Y(X), then the last
    # layer, cubic in its input, gives phi_W(lam X) = (lam^(3^(l-1)))^3 phi_W(X) = lam^(3^l) phi_W(X).
    return 3**l


def degree_in_layer_weights(l, i):
    # Degree of homogeneity of an l-layer network in Q_i (equally: in K_i, in V_i), layers i = 1..l.
    # Exercise 2 (prove), part 2. Write Y_i for the output of layer i. Layer i is linear in Q_i (and in
    # K_i, in V_i) with its input Y_{i-1} fixed, and Y_{i-1} does not depend on the weights of layer i.
    # So scaling Q_i by lam scales Y_i by lam. Layers i+1, ..., l form a network of l - i layers,
    # homogeneous of degree 3^(l-i) in its input Y_i by part 1. Hence the output scales by
    # lam^(3^(l-i)). For i = l the degree is 3^0 = 1: the last layer is trilinear in (Q_l, K_l, V_l),
    # like a single layer.
    return 3 ** (l - i)


def crossover(d, d_out, a):
    # Smallest t >= 1 with multiplication_counts(d, d_out, a, t)["linear"] < [...]["quadratic"].
    # Exercise 3 (explore). The attention term 2adt is the same in both orders, so a plays no role.
    #     quadratic - linear = (d + d') t^2 - d^2 t - d' d^2 = (t - d) ((d + d') t + d' d).
    # The second factor is positive, so the two orders tie at t = d and the linear order is strictly
    # cheaper exactly for t > d: the crossover is t = d + 1, for every d' and every a.
    t = 1
    while True:
        counts = multiplication_counts(d, d_out, a, t)
        if counts["linear"] < counts["quadratic"]:
            return t
        t += 1


for d_, t_ in [(3, 3), (1, 1), (2, 3), (3, 1), (3, 2)]:  # checks of exercise 1: against sympy
    layer_s = symbolic_layer(d_, 1, d_, t_)
    assert count_monomials(d_, t_) == monomial_count(layer_s.output[0, 0], list(layer_s.X)), (d_, t_)
assert count_monomials(3, 3) == 46

# Checks of exercise 2: a network with three layers, scaled input and scaled weights
deep = Architecture((2, 3, 2, 2), (2, 2, 2), tokens=3)
rng = np.random.default_rng(SEED)
weights = random_weights(deep, rng)
X_deep = rng.normal(size=(2, 3))
lam = 1.1
base = forward(weights, X_deep)
for l in (1, 2, 3):
    scaled = forward(weights[:l], lam * X_deep)
    assert np.allclose(scaled, lam ** degree_in_input(l) * forward(weights[:l], X_deep), rtol=1e-9), l
for i in (1, 2, 3):
    for which in range(3):  # Q_i, K_i, V_i
        changed = list(weights)
        matrices_i = list(changed[i - 1])
        matrices_i[which] = lam * matrices_i[which]
        changed[i - 1] = Layer(*matrices_i)
        expected = lam ** degree_in_layer_weights(3, i) * base
        assert np.allclose(forward(changed, X_deep), expected, rtol=1e-9), (i, "QKV"[which])

# Checks of exercise 3
assert crossover(6, 4, 6) == 7
assert crossover(16, 16, 16) == 17
assert all(crossover(d_, d_out_, 1) == crossover(d_, d_out_, d_) for d_ in range(1, 9) for d_out_ in (1, 4))
assert all(crossover(d_, d_out_, a_) == d_ + 1
           for d_ in range(1, 41) for d_out_ in (1, 2, 7, 40) for a_ in (1, d_))
print("crossover t for d = 1..12, d' = d:", [crossover(d_, d_, d_) for d_ in range(1, 13)])
print("crossover t for d = 1..12, d' = 1:", [crossover(d_, 1, d_) for d_ in range(1, 13)])
print("all checks passed")
