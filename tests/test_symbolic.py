import itertools

import numpy as np
import pytest

from lsa_helpers import Layer, layer_forward, monomials_per_entry
from lsa_helpers.symbolic import is_homogeneous, monomial_count, symbolic_layer


@pytest.mark.parametrize("d, d_out, a, t", [(1, 1, 1, 1), (2, 1, 1, 2), (2, 2, 1, 3), (3, 1, 2, 2)])
def test_cubic_in_x_and_linear_in_each_weight(d, d_out, a, t):
    layer = symbolic_layer(d, d_out, a, t)
    assert layer.output.shape == (d_out, t)
    xs = list(layer.X)
    for entry in layer.output:
        assert is_homogeneous(entry, xs, 3)
        for weights in (layer.Q, layer.K, layer.V):
            assert is_homogeneous(entry, list(weights), 1)
        assert monomial_count(entry, xs) == monomials_per_entry(d, t)


def test_agrees_with_the_numeric_layer(rng):
    layer = symbolic_layer(2, 2, 1, 3)
    values = {s: rng.normal() for s in itertools.chain(layer.X, layer.Q, layer.K, layer.V)}
    numeric = Layer(*(np.array(m.subs(values), dtype=float) for m in (layer.Q, layer.K, layer.V)))
    X = np.array(layer.X.subs(values), dtype=float)
    np.testing.assert_allclose(np.array(layer.output.subs(values), dtype=float),
                               layer_forward(numeric, X), rtol=1e-10)


def test_errors():
    with pytest.raises(ValueError, match=r"^tokens must be an integer >= 1, got tokens=0$"):
        symbolic_layer(2, 1, 1, 0)
