"""Residual blocks ``Y + phi(Y)`` (``skip=True``): forward, Jacobian, symmetries, dimension."""

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    act_width,
    dimension,
    formula_dimension,
    forward,
    is_same_function,
    jacobian,
    random_inputs,
    random_weights,
    scale_layers,
    symmetry_tangents,
    vector_to_weights,
    weights_to_vector,
)


def test_skip_needs_equal_widths_and_a_bool():
    with pytest.raises(ValueError, match="skip=True needs equal widths"):
        Architecture((3, 2), (1,), skip=True)
    with pytest.raises(ValueError, match="skip must be True or False"):
        Architecture((3, 3), (1,), skip=1)


def test_forward_adds_the_input_at_every_layer(rng):
    arch = Architecture((2, 2, 2), (1, 2), skip=True)
    w = random_weights(arch, rng)
    X = rng.normal(size=(2, 3))
    Y1 = X + forward(w[:1], X)
    assert np.allclose(forward(w, X, skip=True), Y1 + forward(w[1:], Y1))


def test_homogeneity_breaks(rng):
    arch = Architecture((3, 3), (2,), skip=True)
    w = random_weights(arch, rng)
    X = rng.normal(size=(3, 3))
    assert np.allclose(forward(w, 2 * X), 8 * forward(w, X))
    assert not np.allclose(forward(w, 2 * X, skip=True), 8 * forward(w, X, skip=True))
    assert np.allclose(forward(w, 2 * X, skip=True), 2 * X + 8 * forward(w, X))


def test_inter_layer_symmetries_break_and_layer_scalings_stay(rng):
    plain = Architecture((3, 3, 3), (2, 2))
    skip = Architecture((3, 3, 3), (2, 2), skip=True)
    w = random_weights(plain, rng)
    G = rng.normal(size=(3, 3))
    moved = act_width(w, 1, G)
    assert is_same_function(plain, w, moved, rng=0)
    assert not is_same_function(skip, w, moved, rng=0)
    across = scale_layers(w, [1.0, 1.0], [2.0, 1 / 8])  # V_1 * 2, V_2 / 2^3
    assert is_same_function(plain, w, across, rng=0)
    assert not is_same_function(skip, w, across, rng=0)
    within = scale_layers(w, [2.0, 3.0], [0.5, 1 / 3])  # (lambda A_i, V_i / lambda) per layer
    assert is_same_function(skip, w, within, rng=0)


def test_jacobian_matches_finite_differences(rng):
    arch = Architecture((2, 2, 2), (2, 1), skip=True)
    w = random_weights(arch, rng)
    X = random_inputs(arch, 3, rng)
    J = jacobian(arch, w, X)
    v = weights_to_vector(w)

    def f(u):
        return forward(vector_to_weights(arch, u), X, skip=True).reshape(-1)

    eps = 1e-6
    fd = np.stack([(f(v + eps * e) - f(v - eps * e)) / (2 * eps) for e in np.eye(len(v))], 1)
    assert np.abs(J - fd).max() < 1e-6 * max(1.0, np.abs(J).max())


def test_exact_jacobian_agrees_with_float(rng):
    arch = Architecture((2, 2, 2), (1, 2), skip=True)
    p = 1009  # small integers: the float64 Jacobian is exact, so it must agree mod p
    w = [[rng.integers(-2, 3, size=np.shape(m)).astype(float) for m in layer]
         for layer in random_weights(arch, rng)]
    X = rng.integers(-2, 3, size=(2, 2, 3)).astype(float)
    exact = jacobian(arch, w, X, modulus=p)
    assert np.array_equal(exact, np.mod(jacobian(arch, w, X), p))


def test_symmetry_tangents_keep_only_per_layer_directions(rng):
    skip = Architecture((3, 3, 3), (2, 2), skip=True)
    w = random_weights(skip, rng)
    T = symmetry_tangents(skip, w)
    assert T.shape[0] == 2 * 4 + 2  # gl_2 per layer and one scaling per layer
    J = jacobian(skip, w, random_inputs(skip, 4, rng))
    assert np.abs(J @ T.T).max() < 1e-9 * np.abs(J).max()


@pytest.mark.parametrize("widths, ranks, tokens", [
    ((2, 2, 2), (1, 1), 3), ((3, 3, 3), (2, 2), 2), ((3, 3, 3), (1, 3), 3),
    ((4, 4, 4), (2, 3), 3), ((3, 3, 3, 3), (2, 2, 2), 3),
])
def test_dimension_is_the_sum_of_one_layer_dimensions(widths, ranks, tokens):
    arch = Architecture(widths, ranks, tokens=tokens, skip=True)
    result = dimension(arch, rng=0)
    expected = sum(dimension(Architecture(widths[:2], (a,), tokens=tokens), rng=0)
                   .certified_dimension for a in ranks)
    assert result.certified_dimension == expected == formula_dimension(arch).value
    plain = dimension(Architecture(widths, ranks, tokens=tokens), rng=0).certified_dimension
    assert expected > plain


def test_residual_dimensions_by_hand():
    """min(a, d)(2d - min(a, d)) + d^2 - 1 per block: (2, 2, 2), ranks (1, 1): 6 + 6."""
    for widths, ranks, expected in [((2, 2, 2), (1, 1), 12), ((2, 2, 2, 2), (1, 1, 1), 18),
                                    ((3, 3, 3), (1, 3), 30), ((2, 2, 2), (2, 1), 13)]:
        arch = Architecture(widths, ranks, skip=True)
        assert dimension(arch, rng=1).certified_dimension == expected


def test_softmax_and_one_token_formulas():
    deep_softmax = formula_dimension(Architecture((3, 3, 3), (2, 2), "softmax", skip=True))
    # not the paper's conjecture
    assert (deep_softmax.value, deep_softmax.status) == (34, "derived")
    assert formula_dimension(Architecture((3, 3, 3), (2, 2), skip=True)).status == "derived"
    assert formula_dimension(Architecture((3, 3), (2,), "softmax", skip=True)).status == "paper"
    assert formula_dimension(Architecture((3, 3, 3), (2, 2), "softmax", 1, skip=True)).value == 9
    assert formula_dimension(Architecture((3, 3, 3), (2, 2), tokens=1, skip=True)).value is None
    found = dimension(Architecture((3, 3, 3), (2, 2), "softmax", skip=True), rng=0)
    assert found.rank == 34 and found.float_reading.is_clear
