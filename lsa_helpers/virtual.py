"""Virtual weights ``(M, L)``: a deep lightning network as value-free layers plus one read-out."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._types import ArrayLike
from .architecture import Architecture
from .rank import reducer
from .weights import Layer, Weights, check_weights

__all__ = ["VirtualWeights", "value_free_forward", "virtual_jacobian", "virtual_weights"]


class VirtualWeights(NamedTuple):
    """``M_1..M_l`` (each ``d_0 x d_0``) and the read-out ``L`` (``d_l x d_0``)."""

    M: tuple[np.ndarray, ...]
    L: np.ndarray


def virtual_weights(weights: Weights) -> VirtualWeights:
    """``M_i = L_{i-1}^T K_i^T Q_i L_{i-1}`` and ``L = L_l``, with ``L_i = V_i ... V_1``,
    ``L_0 = I``.

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


def value_free_forward(virtual: VirtualWeights, X: ArrayLike) -> np.ndarray:
    """``L g_{M_l}( ... g_{M_1}(X))`` with the value-free layer ``g_M(Y) = Y Y^T M Y``."""
    Y = np.asarray(X, dtype=np.float64)
    for M in virtual.M:
        Y = (Y @ np.swapaxes(Y, -1, -2)) @ (M @ Y)
    return virtual.L @ Y


def virtual_jacobian(arch: Architecture, weights: Weights, *,
                     modulus: int | None = None) -> np.ndarray:
    """Jacobian of ``W -> (M_1, ..., M_l, L)``, shape ``(l d_0^2 + d_l d_0, parameters)`` [derived].

    Forward mode with all parameter directions at once, from ``L_0 = I``, ``L_i = V_i L_{i-1}``,
    ``M_i = L_{i-1}^T A_i L_{i-1}``, ``L = L_l`` (the code calls ``L_i`` ``P``)::

        dA_i = dK_i^T Q_i + K_i^T dQ_i,      dL_i = dV_i L_{i-1} + V_i dL_{i-1},
        dM_i = dL_{i-1}^T A_i L_{i-1} + L_{i-1}^T dA_i L_{i-1} + L_{i-1}^T A_i dL_{i-1}.

    Rows: the entries of ``M_1, ..., M_l`` and ``L``, each row-major; columns follow
    :func:`~lsa_helpers.weights.weights_to_vector`. With ``modulus=p`` (integer weights) the result
    is exact mod ``p``. Its rank is the dimension of the set of virtual weights; the
    symmetries ``GL_{a_i}`` and ``GL_{d_i}`` lie in its kernel, so where the lightning fiber in
    ``(M, L)`` is the ``l``-dimensional torus of scalings (no rank-one collapse) the rank is
    ``dim + l``; a deep softmax network generically one-to-one in ``(M, L)`` (the paper's
    conjecture) has dimension this rank.

    Raises
    ------
    ValueError
        If the weights do not match ``arch``.

    Examples
    --------
    >>> from lsa_helpers import Architecture, random_weights
    >>> arch = Architecture((3, 3, 3), (2, 2))
    >>> virtual_jacobian(arch, random_weights(arch, 0)).shape
    (27, 42)
    """
    weights = check_weights(arch, weights, modulus=modulus)
    reduce = reducer(modulus)
    count, d0 = arch.parameter_count, arch.widths[0]
    directions = iter(np.split(np.eye(count), np.cumsum(
        [r * c for shapes in arch.layer_shapes for r, c in shapes])[:-1], axis=1))
    P, dP = np.eye(d0), np.zeros((count, arch.widths[0], d0))
    blocks = []
    for Q, K, V in weights:
        dQ, dK, dV = (next(directions).reshape(count, *w.shape) for w in (Q, K, V))
        A = reduce(K.T @ Q)
        dA = reduce(reduce(np.swapaxes(dK, 1, 2) @ Q) + reduce(K.T @ dQ))
        AP = reduce(A @ P)
        dM = (reduce(np.swapaxes(dP, 1, 2) @ AP) + reduce(P.T @ reduce(dA @ P))
              + reduce(reduce(P.T @ A) @ dP))
        blocks.append(reduce(dM).reshape(count, -1))
        dP = reduce(reduce(dV @ P) + reduce(V @ dP))
        P = reduce(V @ P)
    blocks.append(dP.reshape(count, -1))
    return np.concatenate(blocks, axis=1).T
