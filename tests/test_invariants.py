"""The (2, 1, 2) neuromanifold as a quartic hypersurface in its 6-dimensional span."""

import numpy as np
import pytest
import sympy

from lsa_helpers import Architecture, Layer, dimension, span_dimension
from lsa_helpers.invariants import (
    quartic_invariant,
    quartic_value,
    span_coordinates,
    symbolic_span_coordinates,
)


def _weights(rng, d=2, d_out=1, a=2, low=-9, high=10):
    return Layer(*(rng.integers(low, high, size=s) for s in ((a, d), (a, d), (d_out, d))))


@pytest.mark.parametrize("d, d_out, a", [(2, 1, 2), (2, 2, 1), (3, 1, 2)])
def test_coordinates_agree_with_the_expanded_polynomial(d, d_out, a, rng):
    w = _weights(rng, d, d_out, a)
    values = {sympy.Symbol(f"{n}_{i}_{j}"): int(M[i, j])
              for n, M in zip("qkv", w) for i in range(M.shape[0]) for j in range(M.shape[1])}
    symbolic = [int(e.subs(values)) for e in symbolic_span_coordinates(d, d_out, a)]
    numeric = span_coordinates(w)
    assert len(numeric) == span_dimension(d, d_out, 2)
    assert np.array_equal(numeric, symbolic)


def test_the_span_is_six_dimensional_and_the_manifold_five():
    assert span_dimension(2, 1, 3) == 6
    assert dimension(Architecture((2, 1), (2,)), rng=0).certified_dimension == 5


def test_quartic_is_irreducible_of_degree_four_and_matches_the_closed_form():
    R, c = quartic_invariant()
    poly = sympy.Poly(R, *c)
    assert poly.total_degree() == 4 and poly.is_homogeneous
    factors = sympy.factor_list(R)[1]
    assert len(factors) == 1 and factors[0][1] == 1
    assert sympy.expand(R - quartic_value(np.array(c, dtype=object))) == 0


def test_quartic_vanishes_on_the_neuromanifold_and_not_on_the_span(rng):
    R, c = quartic_invariant()
    q, k, v = sympy.symbols("q0:4"), sympy.symbols("k0:4"), sympy.symbols("v0:2")
    layer = Layer(sympy.Matrix(2, 2, q), sympy.Matrix(2, 2, k), sympy.Matrix(1, 2, v))
    A = layer.K.T * layer.Q
    coords = [v[0] * A[0, 0], v[0] * A[0, 1], v[0] * A[1, 0] + v[1] * A[0, 0],
              v[0] * A[1, 1] + v[1] * A[0, 1], v[1] * A[1, 0], v[1] * A[1, 1]]
    assert sympy.expand(R.subs(dict(zip(c, coords)))) == 0
    on = [quartic_value(span_coordinates(_weights(rng)).round().astype(np.int64))
          for _ in range(50)]
    off = [quartic_value(rng.integers(-9, 10, size=6)) for _ in range(50)]
    assert all(value == 0 for value in on) and sum(value != 0 for value in off) >= 45


def test_gradient_vanishes_where_attention_has_rank_one(rng):
    R, c = quartic_invariant()
    gradient = [sympy.diff(R, x) for x in c]
    u, w, V = rng.integers(-5, 6, 2), rng.integers(-5, 6, 2), rng.integers(1, 6, (1, 2))
    rank_one = span_coordinates(Layer(np.array([w]), np.array([u]), V))  # A = u w^T
    point = dict(zip(c, [round(x) for x in rank_one]))
    assert all(g.subs(point) == 0 for g in gradient)
    generic = dict(zip(c, [round(x) for x in span_coordinates(_weights(rng))]))
    assert any(g.subs(generic) != 0 for g in gradient)


def test_bad_input():
    with pytest.raises(ValueError, match="coordinates must have 6 entries"):
        quartic_value([1, 2, 3])
    with pytest.raises(ValueError, match=r"layer must be \(Q, K, V\) with shapes"):
        span_coordinates(Layer(np.eye(2), np.eye(3), np.ones((1, 2))))
