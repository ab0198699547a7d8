"""Jacobian of ``W -> (phi_W(X_1), ..., phi_W(X_N))`` by batched forward mode, float64 or mod p."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np

from . import _checks
from ._checks import EXACT_FLOAT
from ._types import ArrayLike
from .architecture import Architecture
from .network import column_softmax
from .rank import Reducer, reducer
from .weights import Layer, Weights, check_weights
from .workers import one_blas_thread

__all__ = ["jacobian", "jacobian_along"]


Tangent: TypeAlias = tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]
"""Directions ``(dQ, dK, dV)`` of one layer, each with a leading direction axis, None where zero."""


def check_modulus(arch: Architecture, modulus: int) -> int:
    """Check that ``modulus`` is usable for exact arithmetic on ``arch`` and return it.

    Residues are stored in float64 so that matrix products run on BLAS; they stay exact while
    ``n (p - 1)^2 < 2^53`` for every inner dimension ``n`` of a product (at most ``max(d, a) t``).
    """
    if not arch.is_lightning:
        raise ValueError(
            "exact arithmetic needs normalization='lightning' (softmax is not polynomial)")
    modulus = _checks.prime("modulus", modulus)
    inner = max(arch.widths + arch.ranks) * arch.tokens
    if inner * (modulus - 1) ** 2 >= EXACT_FLOAT:
        most = (EXACT_FLOAT - 1) // ((modulus - 1) ** 2 * max(arch.widths + arch.ranks))
        raise ValueError(
            f"exact products mod {modulus} need max(widths + ranks) * tokens * (p - 1)^2 < 2^53: "
            f"at most {most} tokens, got tokens={arch.tokens}" if most >= 1 else
            f"modulus must satisfy {inner} * (modulus - 1)^2 < 2^53 for exact float64 products, "
            f"got modulus={modulus}")
    return int(modulus)


def _attention_seeds(layer: Layer, Y: np.ndarray, red: Reducer) -> np.ndarray:
    """``d(AY)`` along the ``2 a d`` one-hot directions of ``Q``, then ``K`` (entries row by row),
    shape ``(2 a d, N, d, t)``, written down instead of multiplied out: along ``Q_ij`` it is the
    outer product ``K_i^T Y_j`` of row ``i`` of ``K`` and row ``j`` of ``Y``, along ``K_ij`` row
    ``i`` of ``Q Y`` placed in row ``j``. The same numbers as the products ``K^T (dQ Y)`` and
    ``dK^T (Q Y)``, in which every other term is an exact zero."""
    Q, K, _ = layer
    a, d = Q.shape
    N, _, t = Y.shape
    rows = np.swapaxes(Y, 0, 1)  # (d, N, t): row j of every input
    seeds = np.zeros((2, a, d, N, d, t))
    seeds[0] = red(K[:, None, None, :, None] * rows[None, :, :, None, :])
    j = np.arange(d)
    seeds[1][:, j, :, j, :] = np.swapaxes(red(Q @ Y), 0, 1)[None]  # (d, a, N, t) by row j
    return seeds.reshape(2 * a * d, N, d, t)


def _value_free(layer: Layer, Y: np.ndarray, normalization: str, red: Reducer) -> np.ndarray:
    """``H`` with ``phi(Y) = V H``: ``Y N(Y^T A Y)``, or ``(Y Y^T)(A Y)`` for lightning when
    ``t > d`` (as :func:`_layer_jvp` associates it)."""
    Q, K, _ = layer
    Yt = np.swapaxes(Y, -1, -2)
    AY = red(K.T @ red(Q @ Y))
    if normalization == "lightning" and Y.shape[-1] > Y.shape[-2]:
        return red(red(Y @ Yt) @ AY)
    Z = red(Yt @ AY)
    return red(Y @ (column_softmax(Z) if normalization == "softmax" else Z))


def _value_block(H: np.ndarray, chain: np.ndarray | None, red: Reducer, out: np.ndarray) -> None:
    """The per-sample Jacobian of the output in ``V`` (``d_out x d``), written into ``out``,
    ``(N, rows, d_out d)`` (columns of ``J``).

    ``phi = V H`` is linear in ``V``: ``d phi_{i'tau} / d V_ij = delta_{i i'} H_{j tau}``, the
    Kronecker product ``I (x) H^T``; through later layers (``chain``, ``(N, rows, d_out t)``)
    it is ``chain_{o, (i, tau)} H_{j tau}``, one product per sample.
    """
    N, d, t = H.shape
    d_out = out.shape[-1] // d
    Ht = np.swapaxes(H, -1, -2)
    if chain is not None:
        rows = chain.shape[1]
        out[...] = red(chain.reshape(N, rows * d_out, t) @ Ht).reshape(N, rows, d_out * d)
        return
    block = out.reshape(N, d_out, t, d_out, d)  # splits axes of a slice of J: a view
    block[...] = 0
    diagonal = np.arange(d_out)
    block[:, diagonal, :, diagonal, :] = Ht


def _layer_jvp(layer: Layer, Y: np.ndarray, dlayer: Tangent | None, dY: np.ndarray | None,
               normalization: str, red: Reducer,
               dAY: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Value and tangent of one layer: ``F = V Y N(Y^T A Y)`` and ``dF`` for a batch of directions.

    ``dlayer = (dQ, dK, dV)``, each with a leading direction axis or None, ``dY`` of shape
    ``(P, N, d, t)`` (or None). With ``A Y = K^T (Q Y)``:
    ``d(AY) = dK^T QY + K^T dQ Y + A dY``, ``dZ = Y^T d(AY) + dY^T AY``,
    ``dN = dZ`` (lightning) or ``S * (dZ - 1 1^T (S * dZ))`` (softmax), and
    ``dF = (dV Y + V dY) N + V Y dN``. When ``t > d``, lightning uses the re-associated
    ``F = (V Y Y^T)(A Y)`` instead, which is linear in ``t``. ``dAY``, when given, is ``d(AY)``
    (:func:`_attention_seeds`) in place of the terms of ``dQ``, ``dK`` and ``dY``.
    """
    Q, K, V = layer
    dQ, dK, dV = (None if w is None else w[:, None] for w in (dlayer or (None,) * 3))
    Yt = np.swapaxes(Y, -1, -2)
    QY = red(Q @ Y)
    AY = red(K.T @ QY)
    if dAY is None:
        dAY = _total(red, dK is not None and _T(dK) @ QY, dQ is not None and K.T @ red(dQ @ Y),
                     dY is not None and red(K.T @ Q) @ dY)
    if normalization == "lightning" and Y.shape[-1] > Y.shape[-2]:
        C = red(Y @ Yt)
        B = red(V @ C)
        dC = None if dY is None else red(dY @ Yt)
        dB = _total(red, dV is not None and dV @ C, dC is not None and V @ red(dC + _T(dC)))
        return red(B @ AY), _total(red, dB is not None and dB @ AY, dAY is not None and B @ dAY)
    Z = red(Yt @ AY)
    dZ = _total(red, dAY is not None and Yt @ dAY, dY is not None and _T(dY) @ AY)
    VY = red(V @ Y)
    dVY = _total(red, dV is not None and dV @ Y, dY is not None and V @ dY)
    if normalization == "softmax":
        S = column_softmax(Z)
        dS = None if dZ is None else S * (dZ - (S * dZ).sum(axis=-2, keepdims=True))
    else:
        S, dS = Z, dZ
    return red(VY @ S), _total(red, dVY is not None and dVY @ S, dS is not None and VY @ dS)


def _T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _total(red: Reducer, *terms: np.ndarray | bool | None) -> np.ndarray | None:
    """Sum of the terms that are arrays (others are ``False`` or ``None``), reduced; or None."""
    arrays = [red(t) for t in terms if isinstance(t, np.ndarray)]
    if not arrays:
        return None
    total = arrays[0]
    for array in arrays[1:]:
        total += array
    return red(total)


def jacobian(arch: Architecture, weights: Weights, inputs: ArrayLike, *,
             modulus: int | None = None) -> np.ndarray:
    """Jacobian of ``W -> (phi_W(X_1), ..., phi_W(X_N))``, shape ``(N d_l t, parameters)``.

    Built by forward mode with all parameter directions of a layer at once; the later layers are
    crossed by the chain rule with their per-sample input Jacobians (``d t x d t`` matrices, found
    by forward mode along the ``d t`` input directions), multiplied from the output backwards:
    ``J_i = L_l ... L_{i+1} S_i`` (``L_j + I`` for residual blocks, ``skip=True``). No loop over
    outputs or parameters. Columns follow
    :func:`~lsa_helpers.weights.weights_to_vector`; rows run over ``(n, output row, token)``.
    With ``modulus=p`` (lightning only) weights and inputs must be integers and the result is
    the Jacobian reduced mod ``p``, computed exactly.

    Examples
    --------
    >>> from lsa_helpers import Architecture, random_weights, random_inputs
    >>> arch = Architecture((2, 1), (1,))
    >>> jacobian(arch, random_weights(arch, 0), random_inputs(arch, 4, 1)).shape
    (12, 6)
    """
    p = None if modulus is None else check_modulus(arch, modulus)
    weights = check_weights(arch, weights, modulus=p)
    inputs = _checked_inputs(arch, inputs, p)
    red = reducer(p)
    values = [inputs]
    for layer in weights[:-1]:
        F = _layer_jvp(layer, values[-1], None, None, arch.normalization, red)[0]
        values.append(red(values[-1] + F) if arch.skip else F)
    J = np.empty((inputs.shape[0], arch.widths[-1] * arch.tokens, arch.parameter_count))
    ends = np.cumsum([sum(w.size for w in layer) for layer in weights])
    chain = None
    for i in reversed(range(arch.layers)):
        layer, Y = weights[i], values[i]
        start, middle = ends[i] - layer.V.size - 2 * layer.Q.size, ends[i] - layer.V.size
        _value_block(_value_free(layer, Y, arch.normalization, red), chain, red,
                     J[..., middle:ends[i]])
        seeds = _attention_seeds(layer, Y, red)
        tangent = _per_sample(_layer_jvp(layer, Y, None, None, arch.normalization, red, seeds)[1])
        J[..., start:middle] = tangent if chain is None else red(chain @ tangent)
        if i:
            d, t = Y.shape[1:]
            basis = np.eye(d * t).reshape(d * t, 1, d, t)
            step = _per_sample(_layer_jvp(layer, Y, None, basis, arch.normalization, red)[1])
            if arch.skip:  # Y -> Y + phi(Y): the input Jacobian gains the identity
                step = red(step + np.eye(d * t))
            chain = step if chain is None else red(chain @ step)
    return J.reshape(J.shape[0] * J.shape[1], J.shape[2])


def jacobian_along(arch: Architecture, weights: Weights, inputs: ArrayLike, directions: ArrayLike,
                   *, modulus: int | None = None) -> np.ndarray:
    """``J C``: the derivatives of ``W -> (phi_W(X_1), ..., phi_W(X_N))`` along the columns of
    ``directions`` (``C``, shape ``(parameters, D)``, rows as in
    :func:`~lsa_helpers.weights.weights_to_vector`), shape ``(N d_l t, D)``, rows as in
    :func:`jacobian`; lightning only.

    Forward mode along all ``D`` directions at once, each moving every layer; the Jacobian itself
    is never formed. With tokens as rows, ``U = Y^T Q^T`` and ``W = Y^T K^T``, a layer is
    ``F^T = U (W^T Y^T) V^T`` (linear in ``t``), and ``dU = dY^T Q^T + Y^T dQ^T``,
    ``dW = dY^T K^T + Y^T dK^T``, ``dM = dW^T Y^T + W^T dY^T`` for ``M = W^T Y^T``,
    ``dG = dU M + U dM`` for ``G = U M``, ``dF^T = dG V^T + G dV^T`` (plus ``dY`` with
    ``skip=True``). With ``modulus=p`` everything is exact mod ``p``, as in :func:`jacobian`.
    BLAS runs on one thread meanwhile: the products, one per input, are too small to share.

    Examples
    --------
    >>> from lsa_helpers import Architecture, random_weights, random_inputs
    >>> arch = Architecture((2, 1), (1,))
    >>> W, X, C = random_weights(arch, 0), random_inputs(arch, 4, 1), np.eye(6)[:, :2]
    >>> np.allclose(jacobian_along(arch, W, X, C), jacobian(arch, W, X)[:, :2])
    True
    """
    if not arch.is_lightning:
        raise ValueError("jacobian_along needs normalization='lightning', got 'softmax'")
    p = None if modulus is None else check_modulus(arch, modulus)
    weights = check_weights(arch, weights, modulus=p)
    X = _checked_inputs(arch, inputs, p)
    return along_checked(arch, weights, X, _checked_directions(arch, directions, p), p)


def along_checked(arch: Architecture, weights: Weights, X: np.ndarray, C: np.ndarray,
                  p: int | None) -> np.ndarray:
    """:func:`jacobian_along` on arguments already checked (float64 residues mod ``p`` when
    given): the directions are neither copied nor checked again, as the chunks of a certified
    rank need."""
    D = C.shape[1]
    out = np.empty((X.shape[0], arch.widths[-1], arch.tokens, D))
    step = max(1, BLOCK // (X.shape[0] * arch.tokens * max(arch.widths + arch.ranks)))
    with one_blas_thread():  # products per input: threads slow them down several fold
        for start in range(0, D, step):
            tangent = _along(arch, weights, X, C[:, start:start + step], p)  # (N, D', t, d_l)
            out[..., start:start + step] = np.transpose(tangent, (0, 3, 2, 1))
    return out.reshape(-1, D)


BLOCK = 2**17
"""Entries of one tangent array of :func:`jacobian_along` (directions x inputs x t x width): the
directions are taken in groups that keep each array near 1 MB, small enough to be reused from
the heap rather than mapped and faulted in afresh (which cost a fifth of the time at 16 MB)."""


def _along(arch: Architecture, weights: Weights, X: np.ndarray, C: np.ndarray,
           p: int | None) -> np.ndarray:
    """The tangents ``dF^T`` of the last layer along the columns of ``C``, ``(N, D, t, d_l)``.

    Inputs first, so that every product is one BLAS product per input at most: with
    ``Z' = U W^T``, ``dG = dU M + (dW U^T)^T Y + Z' dY``. Each tangent is a sum of products of
    residues, reduced once per two terms when two such products (inner dimension at most
    ``max(widths + ranks + (t,))``) add up below ``2^53``, else each on its own first.
    """
    red = reducer(p)
    inner = max(arch.widths + arch.ranks + (arch.tokens,))
    pairs = p is None or 2 * inner * (p - 1) ** 2 < EXACT_FLOAT - p

    def plus(x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        """``x + y`` reduced, for ``x`` reduced or a product and ``y`` a product (in place)."""
        if y is None:
            return red(x)
        if not pairs:
            x, y = red(x), red(y)
        x += y
        return red(x)

    Y, dY = np.swapaxes(X, -1, -2), None
    N, t, D = X.shape[0], arch.tokens, C.shape[1]
    blocks = iter(np.split(C, np.cumsum([w.size for layer in weights for w in layer])[:-1]))
    for Q, K, V in weights:
        dQ, dK, dV = (np.moveaxis(next(blocks), -1, 0).reshape(-1, *w.shape) for w in (Q, K, V))
        U, W = red(Y @ Q.T), red(Y @ K.T)
        M = red(np.swapaxes(W, -1, -2) @ Y)
        G = red(U @ M)
        dU = plus(_outer(Y, dQ), None if dY is None else dY @ Q.T)
        dW = plus(_outer(Y, dK), None if dY is None else dY @ K.T)
        dG = plus(_stacked(dU, M, red), _stacked(_swap(_stacked(dW, np.swapaxes(U, -1, -2), red)),
                                                  Y, red))
        if dY is not None:
            Zt = red(W @ np.swapaxes(U, -1, -2))  # (U W^T)^T
            dG = plus(dG, _swap(_stacked(_swap(dY), Zt, red)))
        dF = plus(dG @ V.T, _outer(G, dV))
        F = red(G @ V.T)
        Y, dY = (red(Y + F), red(dF + dY) if dY is not None else dF) if arch.skip else (F, dF)
    assert dY is not None and dY.shape[:3] == (N, D, t)
    return dY


def _stacked(A: np.ndarray, B: np.ndarray, red: Reducer) -> np.ndarray:
    """``A[n, e] B[n]`` for every input ``n`` and direction ``e``: ``(N, D, r, k)`` and
    ``(N, k, c)`` to ``(N, D, r, c)``, as one product ``(D r, k) (k, c)`` per input."""
    N, D, r, k = A.shape
    product = np.ascontiguousarray(A).reshape(N, D * r, k) @ B
    return red(product).reshape(N, D, r, B.shape[-1])


def _swap(A: np.ndarray) -> np.ndarray:
    """The last two axes exchanged, contiguous."""
    return np.ascontiguousarray(np.swapaxes(A, -1, -2))


def _outer(Y: np.ndarray, dA: np.ndarray) -> np.ndarray:
    """``Y dA_e^T`` for every direction ``e``: ``(N, t, d)`` and ``(D, b, d)`` to ``(N, D, t, b)``,
    as one product ``(N t, d) (d, D b)``."""
    N, t, d = Y.shape
    D, b, _ = dA.shape
    product = Y.reshape(N * t, d) @ dA.reshape(D * b, d).T
    return np.ascontiguousarray(np.swapaxes(product.reshape(N, t, D, b), 1, 2))


def _checked_inputs(arch: Architecture, inputs: ArrayLike, p: int | None) -> np.ndarray:
    """``inputs`` as float64 ``(N, d_0, t)``, residues mod ``p`` when given; or a one-line error."""
    if p is not None:
        inputs = np.mod(_checks.integer_array("inputs", inputs), p)
    X = np.asarray(inputs, dtype=np.float64)
    expected = (arch.widths[0], arch.tokens)
    if X.ndim != 3 or X.shape[1:] != expected:
        raise ValueError(
            f"inputs must have shape (N, {expected[0]}, {expected[1]}), got {X.shape}")
    return X


def _checked_directions(arch: Architecture, directions: ArrayLike, p: int | None) -> np.ndarray:
    """``directions`` as float64 ``(parameters, D)`` (residues mod ``p``), or a one-line error."""
    if p is not None:
        directions = np.mod(_checks.integer_array("directions", directions), p)
    C = np.asarray(directions, dtype=np.float64)
    if C.ndim != 2 or C.shape[0] != arch.parameter_count:
        raise ValueError(f"directions must have shape ({arch.parameter_count}, D), got {C.shape}")
    return C


def _per_sample(tangent: np.ndarray | None) -> np.ndarray:
    """``(P, N, d, t)`` tangents as per-sample matrices ``(N, d t, P)``."""
    assert tangent is not None, "a direction moves the layer"
    P, N, d, t = tangent.shape
    return np.moveaxis(tangent.reshape(P, N, d * t), 0, -1)
