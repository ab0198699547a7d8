"""Forward maps of lightning and softmax self-attention, one layer and deep."""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

import numpy as np

from . import _checks
from ._types import ArrayLike
from .architecture import NORMALIZATIONS
from .weights import Layer, Weights

__all__ = ["ORDERS", "column_softmax", "forward", "layer_forward", "multiplication_counts"]

Order = Literal["linear", "quadratic"]
ORDERS: tuple[Order, ...] = get_args(Order)
"""The two orders of a lightning layer's products: re-associated (``O(t)``) or as written."""


def column_softmax(Z: np.ndarray) -> np.ndarray:
    """``S(Z)_ij = exp(Z_ij) / sum_k exp(Z_kj)``: normalised over keys ``i``, per query ``j``."""
    E = np.exp(Z - Z.max(axis=-2, keepdims=True))
    return E / E.sum(axis=-2, keepdims=True)


def _check_input(layer: Layer, X: ArrayLike) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    d = layer.Q.shape[1]
    if X.ndim < 2 or X.shape[-2] != d:
        raise ValueError(f"X must have shape (..., {d}, t) (tokens as columns), got {X.shape}")
    return X


def layer_forward(layer: Layer, X: ArrayLike, *, normalization: str = "lightning",
                  order: str = "linear") -> np.ndarray:
    """One layer ``phi_W(X) = V X N(X^T A X)`` with ``A = K^T Q``, batched over leading axes of X.

    ``N`` is the identity (``normalization="lightning"``) or the column softmax (``"softmax"``).
    Lightning with ``order="linear"`` is re-associated as ``(V X X^T)(K^T (Q X))``, which costs
    ``t d (2a + d + d') + d' d^2`` multiplications, linear in ``t``; ``order="quadratic"`` forms
    the ``t x t`` matrix ``X^T A X`` (``O(t^2 d)``), the order used for softmax, which cannot be
    re-associated.

    Examples
    --------
    >>> import numpy as np
    >>> layer = Layer(np.eye(1, 2), np.eye(1, 2), np.ones((1, 2)))
    >>> layer_forward(layer, np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[ 7., 14.]])
    """
    _checks.choice("normalization", normalization, NORMALIZATIONS)
    _checks.choice("order", order, ORDERS)
    layer = Layer(*layer)
    Q, K, V = layer
    X = _check_input(layer, X)
    Xt = np.swapaxes(X, -1, -2)
    if normalization == "lightning" and order == "linear":
        return (V @ (X @ Xt)) @ (K.T @ (Q @ X))
    scores = Xt @ (K.T @ (Q @ X))
    if normalization == "softmax":
        scores = column_softmax(scores)
    return (V @ X) @ scores


def forward(weights: Weights, X: ArrayLike, *, normalization: str = "lightning",
            skip: bool = False) -> np.ndarray:
    """The deep network ``phi_{W_l} o ... o phi_{W_1}`` on ``X`` (shape ``(..., d_0, t)``).

    ``normalization`` as in :func:`layer_forward`. With ``skip=True`` each layer is the residual
    block ``Y -> Y + phi_{W_i}(Y)``.
    """
    Y = np.asarray(X, dtype=np.float64)
    for layer in weights:
        Y = (Y if skip else 0) + layer_forward(layer, Y, normalization=normalization)
    return Y


Count = TypeVar("Count", int, np.ndarray)


def multiplication_counts(d: int, d_out: int, a: int, tokens: Count) -> dict[str, Count]:
    """Scalar multiplications of one layer on one input, in both orders.

    ``quadratic``: ``V X (X^T (K^T (Q X)))``, ``2adt + t^2 d + d'dt + d't^2``;
    ``linear``: ``(V (X X^T)) (K^T (Q X))``, ``2adt + d^2 t + d'd^2 + d'dt``.
    """
    t = tokens
    attention = 2 * a * d * t
    return {"quadratic": attention + t * t * d + d_out * d * t + d_out * t * t,
            "linear": attention + d * d * t + d_out * d * d + d_out * d * t}
