import numpy as np

from lsa_helpers import (
    Architecture,
    forward,
    random_inputs,
    random_weights,
    value_free_forward,
    virtual_weights,
)


def test_value_free_network_equals_the_network(rng):
    arch = Architecture((4, 3, 5, 2), (2, 3, 2))
    weights = random_weights(arch, rng)
    X = random_inputs(arch, 3, rng)
    virtual = virtual_weights(weights)
    assert [M.shape for M in virtual.M] == [(4, 4)] * 3 and virtual.L.shape == (2, 4)
    np.testing.assert_allclose(value_free_forward(virtual, X), forward(weights, X), rtol=1e-10)


def test_virtual_weights_forget_the_hidden_basis(rng):
    arch = Architecture((3, 3, 3), (2, 2))
    weights = random_weights(arch, rng)
    P = rng.normal(size=(3, 3))
    from lsa_helpers import act_width
    moved = virtual_weights(act_width(weights, 1, P))
    original = virtual_weights(weights)
    for M, N in zip(original.M, moved.M):
        np.testing.assert_allclose(M, N, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(original.L, moved.L, rtol=1e-9, atol=1e-12)
