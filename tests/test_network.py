import re

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    Layer,
    column_softmax,
    forward,
    layer_forward,
    multiplication_counts,
    random_weights,
)

ARCH = Architecture((4, 3), (2,))


def test_linear_and_quadratic_orders_agree(rng):
    layer = random_weights(ARCH, rng)[0]
    X = rng.normal(size=(6, 4, 50))
    linear = layer_forward(layer, X, order="linear")
    quadratic = layer_forward(layer, X, order="quadratic")
    assert linear.shape == (6, 3, 50)
    np.testing.assert_allclose(linear, quadratic, rtol=1e-10, atol=1e-10)


def test_coordinate_formula(rng):
    """phi(X)_{:, j} = sum_i (x_i^T A x_j) V x_i."""
    layer = random_weights(ARCH, rng)[0]
    X = rng.normal(size=(4, 5))
    A, V = layer.attention, layer.V
    expected = np.stack([sum((X[:, i] @ A @ X[:, j]) * (V @ X[:, i]) for i in range(5))
                         for j in range(5)], axis=1)
    np.testing.assert_allclose(layer_forward(layer, X), expected, rtol=1e-12)


def test_cubic_and_trilinear(rng):
    layer = random_weights(ARCH, rng)[0]
    X = rng.normal(size=(4, 3))
    f = layer_forward(layer, X)
    np.testing.assert_allclose(layer_forward(layer, 2.5 * X), 2.5**3 * f, rtol=1e-12)
    for factor in range(3):
        other = random_weights(ARCH, rng)[0]
        mix = [list(layer), list(layer)]
        mix[1][factor] = other[factor]
        combo = list(layer)
        combo[factor] = 2 * layer[factor] - 3 * other[factor]
        expected = 2 * f - 3 * layer_forward(Layer(*mix[1]), X)
        np.testing.assert_allclose(layer_forward(Layer(*combo), X), expected, rtol=1e-10,
                                   atol=1e-12)


def test_deep_network_is_homogeneous_of_degree_three_to_the_l(rng):
    arch = Architecture((3, 3, 2), (2, 2))
    weights = random_weights(arch, rng)
    X = rng.normal(size=(2, 3, 3))
    np.testing.assert_allclose(forward(weights, 1.5 * X), 1.5**9 * forward(weights, X), rtol=1e-10)


def test_softmax_columns_are_probabilities_over_keys(rng):
    Z = rng.normal(size=(2, 4, 4)) * 30
    S = column_softmax(Z)
    np.testing.assert_allclose(S.sum(axis=-2), 1.0)
    layer = random_weights(ARCH, rng)[0]
    x = rng.normal(size=(4, 1))
    constant = np.repeat(x, 3, axis=1)  # identical tokens: uniform attention reveals V
    np.testing.assert_allclose(layer_forward(layer, constant, normalization="softmax"),
                               np.repeat(layer.V @ x, 3, axis=1), rtol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    ({"X": np.ones((3, 2))}, "X must have shape (..., 4, t) (tokens as columns), got (3, 2)"),
    ({"X": np.ones(4)}, "X must have shape (..., 4, t) (tokens as columns), got (4,)"),
    ({"X": np.ones((4, 2)), "order": "cubic"},
     "order must be one of ('linear', 'quadratic'), got 'cubic'"),
    ({"X": np.ones((4, 2)), "normalization": "relu"},
     "normalization must be one of ('lightning', 'softmax'), got 'relu'"),
])
def test_errors(kwargs, message):
    layer = random_weights(ARCH, 0)[0]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        layer_forward(layer, **kwargs)


def test_multiplication_counts_grow_linearly_in_the_reassociated_order():
    small, large = (multiplication_counts(4, 3, 2, t) for t in (1000, 2000))
    assert large["linear"] - small["linear"] == 1000 * (2 * 2 * 4 + 16 + 3 * 4)
    assert large["quadratic"] > 3.9 * small["quadratic"]
