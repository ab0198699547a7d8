import re

import numpy as np
import pytest

from lsa_helpers import (
    PRIME,
    Architecture,
    forward,
    jacobian,
    random_inputs,
    random_weights,
    vector_to_weights,
    weights_to_vector,
)

CASES = [  # (widths, ranks, tokens): t <= d uses the scores form, t > d the re-associated one
    ((3, 2), (2,), 3), ((3, 3, 2), (2, 1), 4), ((2, 3, 4, 2), (2, 3, 1), 2), ((2, 3, 2), (1, 2), 5),
]


def finite_differences(arch, weights, X, eps=1e-6):
    w0 = weights_to_vector(weights)

    def f(w):
        return forward(vector_to_weights(arch, w), X, normalization=arch.normalization).ravel()

    return np.stack([(f(w0 + eps * e) - f(w0 - eps * e)) / (2 * eps) for e in np.eye(w0.size)], 1)


@pytest.mark.parametrize("normalization", ["lightning", "softmax"])
@pytest.mark.parametrize("widths, ranks, tokens", CASES)
def test_matches_finite_differences(widths, ranks, tokens, normalization, rng):
    arch = Architecture(widths, ranks, normalization, tokens)
    weights, X = random_weights(arch, rng), random_inputs(arch, 3, rng)
    J = jacobian(arch, weights, X)
    assert J.shape == (3 * widths[-1] * tokens, arch.parameter_count)
    fd = finite_differences(arch, weights, X)
    assert np.abs(J - fd).max() < 1e-7 * np.abs(fd).max()


@pytest.mark.parametrize("widths, ranks, tokens", CASES)
def test_modular_jacobian_is_the_integer_jacobian_reduced(widths, ranks, tokens, rng):
    arch = Architecture(widths, ranks, tokens=tokens)
    small = [tuple(rng.integers(-1, 2, shape).astype(float) for shape in shapes)
             for shapes in arch.layer_shapes]
    X = rng.integers(-1, 2, (2, widths[0], tokens)).astype(float)
    exact_integers = jacobian(arch, small, X)
    assert np.abs(exact_integers).max() < 2**53  # so the float64 result is the integer Jacobian
    np.testing.assert_array_equal(np.mod(exact_integers, PRIME),
                                  jacobian(arch, small, X, modulus=PRIME))


def test_batched_rows_are_per_input(rng):
    arch = Architecture((3, 3, 2), (2, 2))
    weights, X = random_weights(arch, rng), random_inputs(arch, 4, rng)
    J = jacobian(arch, weights, X)
    np.testing.assert_allclose(J[-6:], jacobian(arch, weights, X[3:]), rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda a, w, X: jacobian(Architecture((3, 2), (2,), "softmax"), w, X, modulus=PRIME),
     "exact arithmetic needs normalization='lightning' (softmax is not polynomial)"),
    (lambda a, w, X: jacobian(a, w, X, modulus=2**40 + 15),
     "modulus must satisfy 9 * (modulus - 1)^2 < 2^53 for exact float64 products, "
     "got modulus=1099511627791"),
    (lambda a, w, X: jacobian(a, w, X, modulus=1),
     "modulus must be a prime p with 2 <= p < 2^62, got modulus=1"),
    (lambda a, w, X: jacobian(a, w, X + 0.5, modulus=PRIME),
     "inputs must be integers when a modulus is given"),
    (lambda a, w, X: jacobian(a, [[x + 0.5 for x in w[0]]], X, modulus=PRIME),
     "weights must be integers when a modulus is given"),
    (lambda a, w, X: jacobian(a, w, X[:, :2]), "inputs must have shape (N, 3, 3), got (2, 2, 3)"),
    (lambda a, w, X: jacobian(a, w[0][:2], X), "weights must have 1 layers, got 2"),
])
def test_errors(call, message):
    arch = Architecture((3, 2), (2,))
    weights = random_weights(arch, 0, modulus=PRIME)
    X = random_inputs(arch, 2, 0, modulus=PRIME)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(arch, weights, X)


def test_fast_residues_are_exact(rng):
    from lsa_helpers.rank import residues
    x = np.concatenate([rng.integers(-2**52, 2**52, 10**5), np.arange(-3 * PRIME, 3 * PRIME, 7),
                        [0, PRIME, PRIME - 1, 2**53 - PRIME - 1, PRIME * 2**32, PRIME * 2**32 - 1]])
    np.testing.assert_array_equal(residues(x.astype(float), PRIME), np.mod(x, PRIME))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8])
def test_small_integer_types_give_the_integer_jacobian_reduced(dtype, rng):
    """The float64 Jacobian of small integers is exact, so reduced mod p it is the exact one."""
    arch = Architecture((2, 3, 2), (1, 2))
    weights = [tuple(rng.integers(0, 3, shape) for shape in shapes) for shapes in arch.layer_shapes]
    X = rng.integers(0, 4, (2, 2, 3))
    expected = np.mod(jacobian(arch, weights, X.astype(float)), PRIME)
    typed = [tuple(w.astype(dtype) for w in layer) for layer in weights]
    np.testing.assert_array_equal(jacobian(arch, typed, X.astype(dtype), modulus=PRIME),
                                  expected)


@pytest.mark.parametrize("modulus", [None, PRIME])
def test_no_inputs_give_no_rows(modulus):
    arch = Architecture((3, 2, 2), (2, 1))
    weights = random_weights(arch, 0, modulus=modulus)
    J = jacobian(arch, weights, np.zeros((0, 3, 3)), modulus=modulus)
    assert J.shape == (0, arch.parameter_count)


ALONG = [(*case, False) for case in CASES] + [((3, 3, 3), (2, 1), 2, True),
                                              ((2, 2, 2, 2), (1, 2, 2), 5, True)]


@pytest.mark.parametrize("widths, ranks, tokens, skip", ALONG)
def test_derivatives_along_directions_match_finite_differences(widths, ranks, tokens, skip, rng):
    """J C by forward mode along C, against central differences of the network along each column."""
    from lsa_helpers.differential import jacobian_along

    arch = Architecture(widths, ranks, tokens=tokens, skip=skip)
    weights, X = random_weights(arch, rng), random_inputs(arch, 3, rng)
    C = rng.standard_normal((arch.parameter_count, 5))
    w0, eps = weights_to_vector(weights), 1e-6

    def f(w):
        return forward(vector_to_weights(arch, w), X, skip=skip).ravel()

    fd = np.stack([(f(w0 + eps * c) - f(w0 - eps * c)) / (2 * eps) for c in C.T], 1)
    JC = jacobian_along(arch, weights, X, C)
    assert JC.shape == (3 * widths[-1] * tokens, 5)
    assert np.abs(JC - fd).max() < 1e-7 * np.abs(fd).max()


@pytest.mark.parametrize("widths, ranks, tokens, skip", ALONG)
def test_derivatives_along_directions_mod_p_are_the_jacobian_times_directions(
        widths, ranks, tokens, skip, rng, monkeypatch):
    """Exactly mod p: the Jacobian (computed layer by layer with the chain rule) times C in Python
    integers; one direction at a time (BLOCK = 1), so the grouping of directions is exercised."""
    from lsa_helpers import differential

    arch = Architecture(widths, ranks, tokens=tokens, skip=skip)
    weights = random_weights(arch, rng, modulus=PRIME)
    X = random_inputs(arch, 2, rng, modulus=PRIME)
    C = rng.integers(0, PRIME, (arch.parameter_count, 4))
    J = jacobian(arch, weights, X, modulus=PRIME).astype(np.int64).astype(object)
    expected = np.mod(J @ C.astype(object), PRIME).astype(np.int64)
    monkeypatch.setattr(differential, "BLOCK", 1)
    got = differential.jacobian_along(arch, weights, X, C, modulus=PRIME)
    np.testing.assert_array_equal(got.astype(np.int64), expected)


@pytest.mark.parametrize("normalization, directions, message", [
    ("softmax", np.zeros((8, 2)), "jacobian_along needs normalization='lightning', got 'softmax'"),
    ("lightning", np.zeros((7, 2)), "directions must have shape (8, D), got (7, 2)"),
    ("lightning", np.zeros(8), "directions must have shape (8, D), got (8,)"),
])
def test_directions_are_checked(normalization, directions, message):
    from lsa_helpers.differential import jacobian_along

    arch = Architecture((2, 2), (1,), normalization)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        jacobian_along(arch, random_weights(arch, 0), random_inputs(arch, 2, 0), directions)
