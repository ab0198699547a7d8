import re

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    column_softmax,
    layer_forward,
    layer_from_attention,
    random_weights,
    recover_attention,
    recover_softmax_layer,
    recover_values,
)

SHAPES = [(1, 1, 1, 2), (2, 1, 2, 3), (3, 2, 2, 3), (4, 4, 1, 2), (5, 3, 5, 4), (6, 2, 3, 8)]


def softmax_box(layer):
    return lambda X: layer_forward(layer, X, normalization="softmax")


def random_layer(rng, d, d_out, a, t=3):
    return random_weights(Architecture((d, d_out), (a,), "softmax", t), rng)[0]


def test_constant_inputs_give_uniform_weights_and_reveal_V(rng):
    layer = random_layer(rng, 3, 2, 2)
    x = rng.normal(size=3)
    X = np.repeat(x[:, None], 4, axis=1)
    S = column_softmax(X.T @ layer.attention @ X)
    np.testing.assert_allclose(S, np.full((4, 4), 0.25), atol=1e-15)
    np.testing.assert_allclose(layer_forward(layer, X, normalization="softmax"),
                               np.outer(layer.V @ x, np.ones(4)), atol=1e-13)


@pytest.mark.parametrize("t", [2, 3, 5])
def test_two_distinct_tokens_reveal_a_sigmoid_of_the_logit_difference(rng, t):
    layer = random_layer(rng, 3, 2, 3)
    A, V = layer.attention, layer.V
    x, y = rng.normal(size=(2, 3))
    X = np.column_stack([x] + [y] * (t - 1))
    w = 1 / (1 + np.exp(-((y - x) @ A @ x + np.log(t - 1))))
    np.testing.assert_allclose(layer_forward(layer, X, normalization="softmax")[:, 0],
                               V @ x + w * V @ (y - x), rtol=1e-12)


@pytest.mark.parametrize("d, d_out, a, t", SHAPES)
def test_recovery_is_exact_with_no_scaling_left(rng, d, d_out, a, t):
    layer = random_layer(rng, d, d_out, a, t)
    rec = recover_softmax_layer(softmax_box(layer), d, tokens=t, rng=rng)
    np.testing.assert_allclose(rec.V, layer.V, atol=1e-10)
    np.testing.assert_allclose(rec.A, layer.attention, atol=1e-9)
    assert rec.residual < 1e-10
    assert repr(rec) == (f"SoftmaxRecovery(d={d}, d_out={d_out}, residual<1e-09): "
                         "(A, V) itself, no scaling left")


def test_recovery_of_the_parts_batched_over_samples(rng):
    layer = random_layer(rng, 4, 3, 2)
    box = softmax_box(layer)
    V = recover_values(box, 4, samples=12, rng=rng)
    np.testing.assert_allclose(V, layer.V, atol=1e-12)
    A = recover_attention(box, V, samples=40, rng=rng)
    np.testing.assert_allclose(A, layer.attention, atol=1e-10)
    assert np.linalg.matrix_rank(A, tol=1e-8) == 2      # rk A = a, read off the function


def test_recovery_works_when_V_is_rank_one(rng):
    A, V = rng.normal(size=(3, 3)), np.outer(rng.normal(size=2), rng.normal(size=3))
    rec = recover_softmax_layer(softmax_box(layer_from_attention(A, V)), 3, rng=rng)
    np.testing.assert_allclose(rec.A, A, atol=1e-9)
    np.testing.assert_allclose(rec.V, V, atol=1e-10)


@pytest.mark.parametrize("lam", [0.5, 2.0, -1.0])
def test_the_lightning_scaling_is_an_inverse_temperature_for_softmax(rng, lam):
    """(lambda A, V / lambda): lightning keeps V X X^T A X, softmax turns lambda into an inverse
    temperature, V X S(lambda X^T A X) / lambda."""
    layer = random_layer(rng, 3, 2, 2)
    A, V = layer.attention, layer.V
    moved = layer_from_attention(lam * A, V / lam)
    X = rng.normal(size=(5, 3, 4))
    scores = np.swapaxes(X, 1, 2) @ A @ X
    np.testing.assert_allclose(layer_forward(moved, X), V @ X @ scores, rtol=1e-12)
    weights = np.exp(lam * scores) / np.exp(lam * scores).sum(axis=1, keepdims=True)
    softmax = layer_forward(moved, X, normalization="softmax")
    np.testing.assert_allclose(softmax, V @ X @ weights / lam, rtol=1e-12)
    original = layer_forward(layer, X, normalization="softmax")
    assert np.abs(softmax - original).max() > 1e-3 * np.abs(original).max()


def test_recovery_reports_what_is_not_a_softmax_layer(rng):
    layer = random_layer(rng, 3, 2, 2)

    def lightning(X):
        return layer_forward(layer, X)

    with pytest.raises(ValueError, match=re.escape(
            "black_box is not a softmax self-attention layer with values V: attention weights "
            "outside (0, 1)")):
        recover_attention(lightning, layer.V, samples=50, scale=3.0, rng=rng)


@pytest.mark.parametrize("call, message", [
    (lambda box: recover_values(box, 0), "d must be an integer >= 1, got d=0"),
    (lambda box: recover_values(3, 3), "black_box must be a callable X -> phi(X), got 3"),
    (lambda box: recover_values(box, 3, samples=2),
     "samples must be an integer >= 3, got samples=2"),
    (lambda box: recover_attention(box, np.zeros((2, 3))),
     "V must be a finite, non-zero d' x d matrix, got shape (2, 3)"),
    (lambda box: recover_attention(box, np.ones(3)),
     "V must be a finite, non-zero d' x d matrix, got shape (3,)"),
    (lambda box: recover_attention(box, np.ones((2, 3)), tokens=1),
     "tokens must be an integer >= 2, got tokens=1"),
    (lambda box: recover_attention(box, np.ones((2, 3)), samples=8),
     "samples must be an integer >= 9, got samples=8"),
    (lambda box: recover_attention(box, np.ones((2, 3)), scale=0),
     "scale must be a finite number > 0, got scale=0"),
    (lambda box: recover_softmax_layer(box, 3, tokens=1),
     "tokens must be an integer >= 2, got tokens=1"),
    (lambda box: recover_softmax_layer(box, 3, rtol=2),
     "rtol must be a number between 0 and 1, got rtol=2"),
    (lambda box: recover_softmax_layer(lambda X: np.zeros((2, X.shape[1])), 3),
     "black_box must not be the zero function (V = 0 hides A), got V = 0"),
    (lambda box: recover_values(lambda X: np.zeros(2), 3),
     "black_box must map a d x t input to a d' x t output, got shape (2,) for a 3 x 3 input"),
])
def test_bad_input(rng, call, message):
    box = softmax_box(random_layer(rng, 3, 2, 2))
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call(box)
