"""Virtual weights ``(M, L)``: a deep lightning network as value-free layers plus one read-out."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .weights import Layer

__all__ = ["VirtualWeights", "virtual_weights", "value_free_forward"]


class VirtualWeights(NamedTuple):
    """``M_1..M_l`` (each ``d_0 x d_0``) and the read-out ``L`` (``d_l x d_0``)."""

    M: tuple[np.ndarray, ...]
    L: np.ndarray


def virtual_weights(weights) -> VirtualWeights:
    """``M_i = P_{i-1}^T K_i^T Q_i P_{i-1}`` and ``L = V_l ... V_1``, where ``P_i = V_i ... V_1``.

    Derived from the paper's virtual weights; :func:`value_free_forward` of the result is the
    original network.
    """
    layers = [Layer(*(np.asarray(w, dtype=np.float64) for w in layer)) for layer in weights]
    P = np.eye(layers[0].Q.shape[1])
    Ms = []
    for Q, K, V in layers:
        Ms.append(P.T @ (K.T @ Q) @ P)
        P = V @ P
    return VirtualWeights(tuple(Ms), P)


def value_free_forward(virtual: VirtualWeights, X) -> np.ndarray:
    """``L g_{M_l}( ... g_{M_1}(X))`` with the value-free layer ``g_M(Y) = Y Y^T M Y``."""
    Y = np.asarray(X, dtype=np.float64)
    for M in virtual.M:
        Y = (Y @ np.swapaxes(Y, -1, -2)) @ (M @ Y)
    return virtual.L @ Y
