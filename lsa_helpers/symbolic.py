"""One lightning layer as explicit polynomials (sympy), for small sizes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import sympy

from . import _checks

__all__ = ["SymbolicLayer", "coefficients", "is_homogeneous", "monomial_count", "symbolic_layer"]


class SymbolicLayer(NamedTuple):
    """The output ``phi = V X (X^T K^T Q X)`` of one layer, with its symbol matrices."""

    output: sympy.Matrix
    X: sympy.Matrix
    Q: sympy.Matrix
    K: sympy.Matrix
    V: sympy.Matrix


def symbolic_layer(d: int, d_out: int, a: int, tokens: int) -> SymbolicLayer:
    """The ``d' x t`` matrix of cubic forms ``phi_W(X)`` with symbolic ``X, Q, K, V``, expanded.

    Entry ``(s, j)`` is ``sum_i (x_i^T A x_j) (v_s . x_i)`` with ``A = K^T Q``.

    Examples
    --------
    >>> layer = symbolic_layer(1, 1, 1, 1)
    >>> layer.output[0, 0]
    k_0_0*q_0_0*v_0_0*x_0_0**3
    """
    d, d_out, a, tokens = (_checks.positive_int(name, value) for name, value in
                           (("d", d), ("d_out", d_out), ("a", a), ("tokens", tokens)))
    X = sympy.Matrix(d, tokens, lambda i, j: sympy.Symbol(f"x_{i}_{j}"))
    Q = sympy.Matrix(a, d, lambda i, j: sympy.Symbol(f"q_{i}_{j}"))
    K = sympy.Matrix(a, d, lambda i, j: sympy.Symbol(f"k_{i}_{j}"))
    V = sympy.Matrix(d_out, d, lambda i, j: sympy.Symbol(f"v_{i}_{j}"))
    output = (V * X * (X.T * K.T * Q * X)).applyfunc(sympy.expand)
    return SymbolicLayer(output, X, Q, K, V)


def coefficients(expr: sympy.Expr,
                 variables: Sequence[sympy.Symbol]) -> dict[tuple[int, ...], sympy.Expr]:
    """``{exponent tuple: coefficient}`` of ``expr`` as a polynomial in ``variables``.

    Examples
    --------
    >>> x, y, a = sympy.symbols("x y a")
    >>> dict(sorted(coefficients(a * x**2 * y + 3 * x, [x, y]).items()))
    {(1, 0): 3, (2, 1): a}
    """
    return dict(sympy.Poly(expr, *variables).as_dict())


def monomial_count(expr: sympy.Expr, variables: Sequence[sympy.Symbol]) -> int:
    """Number of distinct monomials of ``expr`` as a polynomial in ``variables``."""
    return len(sympy.Poly(expr, *variables).monoms())


def is_homogeneous(expr: sympy.Expr, variables: Sequence[sympy.Symbol], degree: int) -> bool:
    """Whether ``expr`` is homogeneous of total ``degree`` in ``variables``."""
    return all(sum(m) == degree for m in sympy.Poly(expr, *variables).monoms())
