"""Equations of a neuromanifold: ``(d, d', a) = (2, 1, 2)`` is a quartic hypersurface [derived].

A layer's function is linear in its coefficients ``c[o, (i, p), q]``, the coefficient of
``x_{ik} x_{pk} x_{qj}`` (``i <= p``, a token ``k`` other than ``j``) in output ``o`` of token
``j``: ``c = V_oi A_pq + V_op A_iq`` for ``i < p`` and ``V_oi A_iq`` for ``i = p``. They are
coordinates on the span (dimension ``d' d d(d+1)/2`` for ``t >= 2``).

For ``d = 2, d' = 1`` write ``v = (v_0, v_1)``. Each ``q`` gives a binary quadric
``f_q(s_0, s_1) = c_11q s_0^2 - c_01q s_0 s_1 + c_00q s_1^2`` that vanishes at ``(v_0, v_1)``,
so the two quadrics share a root and their resultant vanishes: a quartic equation for the
5-dimensional neuromanifold in the 6-dimensional span. (Alexandr, Duan, Montufar report the
hypersurface [reported]; the equation here is derived and checked on samples.)
"""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
import sympy

from ._types import ArrayLike
from .symbolic import symbolic_layer
from .weights import Layer

__all__ = [
    "COORDINATE_NAMES",
    "quartic_invariant",
    "quartic_value",
    "span_coordinates",
    "symbolic_span_coordinates",
]

COORDINATE_NAMES = ("c00_0", "c00_1", "c01_0", "c01_1", "c11_0", "c11_1")
"""The span coordinates of ``(d, d') = (2, 1)``: ``c{i}{p}_{q}``."""


def _pairs(d: int) -> list[tuple[int, int]]:
    return list(combinations_with_replacement(range(d), 2))


def span_coordinates(layer: Layer) -> np.ndarray:
    """The coordinates ``c[o, (i, p), q]`` of one layer's function, flattened ``(o, (i, p), q)``.

    ``c = V_oi A_pq + V_op A_iq`` (``i < p``), ``V_oi A_iq`` (``i = p``), with ``A = K^T Q``.

    Examples
    --------
    >>> span_coordinates(Layer(np.eye(2), np.eye(2), np.array([[1.0, 2.0]])))
    array([1., 0., 2., 1., 0., 2.])
    """
    Q, K, V = (np.asarray(w, dtype=np.float64) for w in Layer(*layer))
    if not (Q.ndim == K.ndim == V.ndim == 2 and Q.shape == K.shape and V.shape[1] == Q.shape[1]):
        raise ValueError(f"layer must be (Q, K, V) with shapes (a, d), (a, d), (d', d), "
                         f"got {Q.shape}, {K.shape}, {V.shape}")
    A = K.T @ Q
    i, p = np.array(_pairs(A.shape[0])).T
    c = V[:, i, None] * A[None, p, :] + V[:, p, None] * A[None, i, :]
    c[:, i == p] /= 2
    return c.reshape(-1)


def symbolic_span_coordinates(d: int, d_out: int, a: int) -> list[sympy.Expr]:
    """The same coordinates read off the expanded polynomial of :func:`symbolic_layer` (``t = 2``).

    The coefficient of ``x_{i1} x_{p1} x_{q0}`` in output ``(o, 0)``, as a polynomial in the
    entries of ``Q, K, V``: an independent computation of :func:`span_coordinates`.
    """
    layer = symbolic_layer(d, d_out, a, 2)
    X = layer.X
    out = []
    for o in range(d_out):
        poly = sympy.Poly(layer.output[o, 0], *X)
        for i, p in _pairs(d):
            for q in range(d):
                monomial = X[i, 1] * X[p, 1] * X[q, 0]
                out.append(poly.coeff_monomial(monomial))
    return out


def quartic_invariant() -> tuple[sympy.Expr, tuple[sympy.Symbol, ...]]:
    """The equation of the ``(2, 1, 2)`` neuromanifold in its span, by a sympy resultant.

    ``Res_s(c_11,0 s^2 - c_01,0 s + c_00,0, c_11,1 s^2 - c_01,1 s + c_00,1)``: returns
    ``(expression, symbols)`` with the symbols named :data:`COORDINATE_NAMES`.
    """
    c = sympy.symbols(COORDINATE_NAMES)
    s = sympy.Symbol("s")
    f0, f1 = (c[4 + q] * s**2 - c[2 + q] * s + c[q] for q in range(2))
    return sympy.expand(sympy.resultant(f0, f1, s)), c


def quartic_value(coordinates: ArrayLike) -> np.ndarray:
    """The quartic at ``coordinates`` (last axis: :data:`COORDINATE_NAMES`), in closed form.

    For quadrics ``a_q s^2 + b_q s + c_q`` the resultant is
    ``(a_0 c_1 - a_1 c_0)^2 - (a_0 b_1 - a_1 b_0)(b_0 c_1 - b_1 c_0)``, here with
    ``a_q = c_11q``, ``b_q = -c_01q``, ``c_q = c_00q``. Exact for Python integers.
    """
    x = np.asarray(coordinates)
    if x.shape[-1:] != (6,):
        raise ValueError(f"coordinates must have 6 entries {COORDINATE_NAMES} on the last axis, "
                         f"got shape {x.shape}")
    if x.dtype.kind in "iu":  # Python integers: exact, whatever their size
        x = x.astype(object)
    c0, c1, b0, b1, a0, a1 = np.moveaxis(x, -1, 0)
    b0, b1 = -b0, -b1
    return (a0 * c1 - a1 * c0) ** 2 - (a0 * b1 - a1 * b0) * (b0 * c1 - b1 * c0)
