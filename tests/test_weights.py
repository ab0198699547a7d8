import re

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    random_inputs,
    random_weights,
    vector_to_weights,
    weights_to_vector,
)
from lsa_helpers.weights import as_generator, check_weights

ARCH = Architecture((4, 3, 2), (2, 5))


def test_vector_round_trip(rng):
    weights = random_weights(ARCH, rng)
    vector = weights_to_vector(weights)
    assert vector.shape == (ARCH.parameter_count,)
    back = vector_to_weights(ARCH, vector)
    assert all(np.array_equal(x, y) for a, b in zip(weights, back) for x, y in zip(a, b))


def test_shapes_and_seeding():
    first, second = random_weights(ARCH, 7), random_weights(ARCH, 7)
    assert [tuple(w.shape for w in layer) for layer in first] == list(ARCH.layer_shapes)
    assert np.array_equal(first[1].V, second[1].V)
    assert random_inputs(ARCH, 5, 0).shape == (5, 4, 3)


def test_modular_draws_are_residues():
    weights = random_weights(ARCH, 0, modulus=101)
    values = weights_to_vector(weights)
    assert values.min() >= 0 and values.max() < 101 and np.array_equal(values, np.round(values))


def test_attention_matrix(rng):
    layer = random_weights(ARCH, rng)[0]
    assert np.allclose(layer.attention, layer.K.T @ layer.Q)
    assert np.linalg.matrix_rank(layer.attention) == 2


@pytest.mark.parametrize("call, message", [
    (lambda: vector_to_weights(ARCH, np.zeros(3)),
     f"vector must have shape ({ARCH.parameter_count},), got (3,)"),
    (lambda: check_weights(ARCH, random_weights(ARCH, 0)[:1]), "weights must have 2 layers, got 1"),
    (lambda: check_weights(ARCH, (random_weights(ARCH, 0)[1],) * 2),
     "layer 1 weights (Q, K, V) must have shapes ((2, 4), (2, 4), (3, 4)), "
     "got ((5, 3), (5, 3), (2, 3))"),
    (lambda: random_inputs(ARCH, 0), "count must be an integer >= 1, got count=0"),
    (lambda: as_generator("seed"),
     "rng must be a numpy Generator, a non-negative int seed or None, got rng='seed'"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()
