import re

import numpy as np
import pytest

from lsa_helpers import (
    PRIME,
    Architecture,
    Layer,
    act_attention,
    act_width,
    degenerate_tangents,
    exact_rank,
    function_distance,
    is_same_function,
    jacobian,
    random_inputs,
    random_weights,
    rank_one_swap,
    scale_layers,
    sees_parallel_tokens,
    symmetry_tangents,
)

DEEP = Architecture((4, 3, 3, 2), (2, 3, 1))


def test_attention_action_keeps_the_function(rng):
    weights = random_weights(DEEP, rng)
    for layer, a in enumerate(DEEP.ranks, start=1):
        moved = act_attention(weights, layer, rng.normal(size=(a, a)))
        assert not np.allclose(moved[layer - 1].Q, weights[layer - 1].Q)
        assert function_distance(DEEP, weights, moved, rng=rng) < 1e-10


def test_width_action_keeps_the_function(rng):
    weights = random_weights(DEEP, rng)
    for layer, d in enumerate(DEEP.widths[1:-1], start=1):
        moved = act_width(weights, layer, rng.normal(size=(d, d)))
        assert function_distance(DEEP, weights, moved, rng=rng) < 1e-10


def test_constrained_scalings_keep_the_function(rng):
    weights = random_weights(DEEP, rng)
    alphas, betas = np.array([2.0, -0.5, 3.0]), np.array([0.7, 1.5, 1.0])
    # prod (alpha_i beta_i)^(3^(l-i)) = 1 fixes beta_3
    betas[2] = 1 / (alphas[2] * (alphas[0] * betas[0]) ** 9 * (alphas[1] * betas[1]) ** 3)
    assert function_distance(DEEP, weights, scale_layers(weights, alphas, betas), rng=rng) < 1e-10


def test_unconstrained_scaling_changes_the_function(rng):
    weights = random_weights(DEEP, rng)
    with pytest.raises(ValueError, match=re.escape(
            "alphas and betas must satisfy prod_i (alpha_i beta_i)^(3^(l-i)) = 1")):
        scale_layers(weights, [2.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    scaled = [Layer(2 * Q, K, V) if i == 0 else Layer(Q, K, V)
              for i, (Q, K, V) in enumerate(weights)]
    assert function_distance(DEEP, weights, scaled, rng=rng) > 0.5


def test_random_perturbation_changes_the_function(rng):
    weights = random_weights(DEEP, rng)
    nudged = [Layer(*(w + 1e-6 * rng.normal(size=w.shape) for w in layer)) for layer in weights]
    assert not is_same_function(DEEP, weights, nudged, rng=rng)
    assert function_distance(DEEP, weights, nudged, rng=rng) > 1e-9


def test_rank_one_swap_gives_the_same_function_from_other_weights(rng):
    arch = Architecture((3, 2), (3,))
    q, k, z, v = (rng.normal(size=n) for n in (3, 3, 3, 2))
    Q, K = np.zeros((3, 3)), np.zeros((3, 3))
    Q[1], K[1] = q, k
    layer = Layer(Q, K, np.outer(v, z))
    swapped = rank_one_swap(layer)
    ratio = swapped.attention / np.outer(z, q)  # z q^T up to the scale of the factors of V
    np.testing.assert_allclose(ratio, ratio[0, 0], rtol=1e-9)
    assert not np.allclose(swapped.attention, layer.attention)
    assert is_same_function(arch, [layer], [swapped], rng=rng)


def test_swap_needs_rank_one(rng):
    layer = random_weights(Architecture((3, 2), (2,)), rng)[0]
    with pytest.raises(ValueError, match=r"^A = K\^T Q must have rank one for the swap"):
        rank_one_swap(layer)


@pytest.mark.parametrize("normalization", ["lightning", "softmax"])
def test_tangents_lie_in_the_kernel_of_the_jacobian(normalization, rng):
    arch = Architecture((4, 3, 3, 2), (2, 3, 1), normalization)
    weights = random_weights(arch, rng)
    J = jacobian(arch, weights, random_inputs(arch, 20, rng))
    T = symmetry_tangents(arch, weights)
    sym = sum(a * a for a in arch.ranks) + 3 * 3 + 3 * 3 + (2 * 3 - 1 if arch.is_lightning else 0)
    assert T.shape == (sym, arch.parameter_count)
    assert np.abs(J @ T.T).max() < 1e-10 * np.abs(J).max() * np.abs(T).max()


def test_tangents_lie_in_the_kernel_exactly_mod_p(rng):
    weights = random_weights(DEEP, rng, modulus=PRIME)
    J = jacobian(DEEP, weights, random_inputs(DEEP, 10, rng, modulus=PRIME), modulus=PRIME)
    T = symmetry_tangents(DEEP, weights, modulus=PRIME)
    products = np.mod(J.astype(object) @ T.T.astype(object), PRIME)
    assert not products.any()
    # generic orbit dimension: sum a_i^2 + sum hidden d_i^2 + l
    assert exact_rank(T) == 4 + 9 + 1 + 9 + 9 + 3


@pytest.mark.parametrize("call, message", [
    (lambda w: act_attention(w, 4, np.eye(2)),
     "layer_index must be an integer from 1 to 3, got layer_index=4"),
    (lambda w: act_attention(w, 1, np.eye(3)), "G must be a 2x2 matrix, got shape (3, 3)"),
    (lambda w: act_attention(w, 1, np.ones((2, 2))), "G must be invertible, got a singular matrix"),
    (lambda w: act_width(w, 3, np.eye(2)),
     "layer_index must be an integer from 1 to 2, got layer_index=3"),
    (lambda w: scale_layers(w, [1, 1], [1, 1]), "alphas and betas must be 3 non-zero numbers each"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(random_weights(DEEP, 0))


@pytest.mark.parametrize("widths, ranks, tokens, count", [
    ((3, 3), (3,), 1, 3), ((3, 3, 3), (1, 3), 3, 3), ((3, 3, 3), (3, 4), 1, 6),
    ((3, 3, 3), (2, 2), 3, 0),
    ((3, 3, 3), (2, 3), 1, 3)])
def test_degenerate_tangents_lie_in_the_kernel(widths, ranks, tokens, count, rng):
    arch = Architecture(widths, ranks, tokens=tokens)
    weights = random_weights(arch, rng, modulus=PRIME)
    T = degenerate_tangents(arch, weights, modulus=PRIME)
    assert T.shape == (count, arch.parameter_count)
    J = jacobian(arch, weights, random_inputs(arch, 10, rng, modulus=PRIME), modulus=PRIME)
    assert not np.mod(J.astype(object) @ T.T.astype(object), PRIME).any()
    floating = random_weights(arch, rng)
    Jf = jacobian(arch, floating, random_inputs(arch, 10, rng))
    product = Jf @ degenerate_tangents(arch, floating).T
    assert np.abs(product).max(initial=0) < 1e-9 * np.abs(Jf).max()


def test_parallel_tokens():
    assert sees_parallel_tokens(Architecture((3, 3, 3, 3), (2, 1, 2))) == (False, False, True)
    assert sees_parallel_tokens(Architecture((3, 1, 3), (2, 2))) == (False, True)
    assert sees_parallel_tokens(Architecture((3, 3), (2,), tokens=1)) == (True,)
