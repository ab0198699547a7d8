"""Symmetries of deep lightning networks, the rank-one swap, and their tangent vectors."""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .architecture import Architecture
from .network import forward
from .rank import inverse, kernel, reducer
from .weights import Layer, Weights, as_generator, check_weights, parameter_placer, random_inputs

__all__ = [
    "FIBER_CASES",
    "SymmetryTangents",
    "act_attention",
    "act_width",
    "degenerate_tangents",
    "fiber_kind",
    "fiber_tangents",
    "function_distance",
    "is_same_function",
    "rank_one_swap",
    "scale_layers",
    "sees_parallel_tokens",
    "symmetry_tangent_groups",
    "symmetry_tangents",
    "width_tangents",
]

FiberCase = Literal["zero", "swap", "curve"]
FIBER_CASES: tuple[FiberCase, ...] = get_args(FiberCase)
"""The cases of the one-layer fiber theorem (:func:`fiber_kind`)."""


def _layer_index(weights: Weights, layer_index: int, *, last: int | None = None) -> int:
    """The 0-based position of layer ``layer_index`` (counted from 1, at most ``last``)."""
    last = len(weights) if last is None else last
    if not _checks.is_integer(layer_index) or not 1 <= layer_index <= last:
        raise ValueError(f"layer_index must be an integer from 1 to {last}, "
                         f"got layer_index={layer_index!r}")
    return int(layer_index) - 1


def _invertible(name: str, M: ArrayLike, size: int) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (size, size):
        raise ValueError(f"{name} must be a {size}x{size} matrix, got shape {M.shape}")
    if np.linalg.matrix_rank(M) < size:
        raise ValueError(f"{name} must be invertible, got a singular matrix")
    return M


def _replace(weights: Weights, index: int, layer: Layer) -> tuple[Layer, ...]:
    return tuple(layer if i == index else w for i, w in enumerate(weights))


def act_attention(weights: Weights, layer_index: int, G: ArrayLike) -> tuple[Layer, ...]:
    """``(Q_i, K_i) -> (G Q_i, G^{-T} K_i)``, ``G`` in ``GL_{a_i}``: ``A_i = K_i^T Q_i`` is kept.

    ``layer_index`` is ``i``, counted from 1 as in the paper.
    """
    weights = tuple(Layer(*w) for w in weights)
    i = _layer_index(weights, layer_index)
    Q, K, V = weights[i]
    G = _invertible("G", G, Q.shape[0])
    return _replace(weights, i, Layer(G @ Q, np.linalg.inv(G).T @ K, V))


def act_width(weights: Weights, layer_index: int, P: ArrayLike) -> tuple[Layer, ...]:
    """``V_i -> P V_i``, ``(Q, K, V)_{i+1} -> (Q, K, V)_{i+1} P^{-1}``, ``P`` in ``GL_{d_i}``,
    with ``i = layer_index`` counted from 1."""
    weights = tuple(Layer(*w) for w in weights)
    i = _layer_index(weights, layer_index, last=len(weights) - 1)
    P = _invertible("P", P, weights[i].V.shape[0])
    P_inv = np.linalg.inv(P)
    Q, K, V = weights[i]
    weights = _replace(weights, i, Layer(Q, K, P @ V))
    return _replace(weights, i + 1, Layer(*(w @ P_inv for w in weights[i + 1])))


def scale_layers(weights: Weights, alphas: ArrayLike, betas: ArrayLike) -> tuple[Layer, ...]:
    """``(Q_i, V_i) -> (alpha_i Q_i, beta_i V_i)``, when ``prod_i (alpha_i beta_i)^(3^(l-i)) = 1``.

    ``alphas`` and ``betas`` hold one factor per layer. Each later layer is cubic in its input, so
    it cubes the scale of every earlier one; the constraint is checked in logarithms (relative
    tolerance 1e-12).
    """
    weights = tuple(Layer(*w) for w in weights)
    depth = len(weights)
    alphas, betas = np.asarray(alphas, dtype=np.float64), np.asarray(betas, dtype=np.float64)
    if alphas.shape != (depth,) or betas.shape != (depth,) or np.any(alphas * betas == 0):
        raise ValueError(f"alphas and betas must be {depth} non-zero numbers each")
    exponents = 3.0 ** np.arange(depth - 1, -1, -1)
    log_total = exponents @ np.log(np.abs(alphas * betas))
    sign = np.prod(np.sign(alphas * betas) ** (exponents % 2))
    if sign < 0 or abs(log_total) > 1e-12 * exponents.sum():
        raise ValueError("alphas and betas must satisfy prod_i (alpha_i beta_i)^(3^(l-i)) = 1")
    return tuple(Layer(a * Q, K, b * V) for (Q, K, V), a, b in zip(weights, alphas, betas))


def rank_one_swap(layer: Layer) -> Layer:
    """The swap ``(k q^T, v z^T) -> (z q^T, v k^T)`` of a layer with ``rk A = rk V = 1``.

    Both give ``phi(X) = v (z^T X X^T k) q^T X``. The result keeps the shapes of ``layer``
    (``Q`` and ``K`` get one non-zero row).
    """
    Q, K, V = Layer(*(np.asarray(w, dtype=np.float64) for w in layer))
    k, q = _rank_one_factors("A = K^T Q", K.T @ Q)
    v, z = _rank_one_factors("V", V)
    Q_new, K_new = np.zeros_like(Q), np.zeros_like(K)
    Q_new[0], K_new[0] = q, z
    return Layer(Q_new, K_new, np.outer(v, k))


def fiber_kind(layer: Layer, *, rtol: float = 1e-10) -> FiberCase:
    """The case of the one-layer fiber theorem (:data:`FIBER_CASES`) that ``layer`` falls in
    (assumes ``t >= 2``). Ranks count singular values above ``rtol`` times the largest entry.

    ``"zero"``: ``A = 0`` or ``V = 0``, the fiber is ``{A = 0} u {V = 0}``. ``"swap"``:
    ``rk A = rk V = 1``, two curves ``(lambda A, V / lambda)`` exchanged by the swap (one when
    ``z || k``). ``"curve"``: otherwise, the single curve ``(lambda A, V / lambda)``.
    """
    layer = Layer(*(np.asarray(w, dtype=np.float64) for w in layer))
    ranks = [np.linalg.matrix_rank(M, tol=rtol * max(np.abs(M).max(), np.finfo(float).tiny))
             for M in (layer.attention, layer.V)]
    zero, swap, curve = FIBER_CASES
    if 0 in ranks:
        return zero
    return swap if ranks == [1, 1] else curve


def _rank_one_factors(name: str, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    U, s, Vt = np.linalg.svd(M)
    if s[0] == 0 or (len(s) > 1 and s[1] > 1e-10 * s[0]):
        raise ValueError(
            f"{name} must have rank one for the swap, got singular values {s.round(6)}")
    return U[:, 0] * s[0], Vt[0]


def function_distance(arch: Architecture, weights: Weights, other: Weights, *, rng: Seed = None,
                      samples: int = 8) -> float:
    """``max |phi_W(X) - phi_W'(X)| / max |phi_W(X)|`` over ``samples`` random Gaussian inputs,
    for ``W = weights`` and ``W' = other``."""
    samples = _checks.positive_int("samples", samples)
    weights, other = check_weights(arch, weights), check_weights(arch, other)
    X = random_inputs(arch, samples, as_generator(rng))
    f = forward(weights, X, normalization=arch.normalization, skip=arch.skip)
    g = forward(other, X, normalization=arch.normalization, skip=arch.skip)
    return float(np.abs(f - g).max() / max(np.abs(f).max(), np.finfo(float).tiny))


def is_same_function(arch: Architecture, weights: Weights, other: Weights, *, rng: Seed = None,
                     samples: int = 8,
                     rtol: float = 1e-10) -> bool:
    """Whether ``weights`` and ``other`` give the same function: :func:`function_distance` on
    ``samples`` random inputs below ``rtol``."""
    rtol = _checks.fraction("rtol", rtol)
    return function_distance(arch, weights, other, rng=rng, samples=samples) < rtol


class SymmetryTangents(NamedTuple):
    """Tangent vectors of the symmetry orbit, one per row, by group (:func:`symmetry_tangents`)."""

    attention: np.ndarray
    """``E`` in ``gl_{a_i}``, each layer in turn: ``(dQ_i, dK_i) = (E Q_i, -E^T K_i)``."""
    width: np.ndarray
    """``E`` in ``gl_{d_i}`` (``i < l``): ``dV_i = E V_i``,
    ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``."""
    scaling: np.ndarray
    """The scalings (lightning): ``(dQ_i, dV_i) = (Q_i, -V_i)``,
    ``(dV_i, dV_{i+1}) = (V_i, -3 V_{i+1})``."""


def symmetry_tangent_groups(arch: Architecture, weights: Weights, *,
                            modulus: int | None = None) -> SymmetryTangents:
    """The rows of :func:`symmetry_tangents`, by group: ``GL_{a_i}``, ``GL_{d_i}``, scalings.

    Examples
    --------
    >>> from lsa_helpers import random_weights
    >>> arch = Architecture((3, 3, 3), (2, 2))
    >>> [len(rows) for rows in symmetry_tangent_groups(arch, random_weights(arch, 0))]
    [8, 9, 3]
    """
    weights = check_weights(arch, weights, modulus=modulus)
    red = reducer(modulus)
    groups: dict[str, list[np.ndarray]] = {"attention": [], "width": [], "scaling": []}
    place = {name: parameter_placer(arch.layer_shapes, rows) for name, rows in groups.items()}
    scales = arch.is_lightning  # softmax is not homogeneous: no scalings
    for i, (Q, K, V) in enumerate(weights):
        a = Q.shape[0]
        eye = np.eye(a)
        place["attention"](a * a, {(i, 0): np.einsum("rx,sy->rsxy", eye, Q),
                                   (i, 1): -np.einsum("sx,ry->rsxy", eye, K)})
        if scales:
            place["scaling"](1, {(i, 0): Q, (i, 2): -V})
        if i + 1 < arch.layers and not arch.skip:
            d = V.shape[0]
            eye = np.eye(d)
            nxt = weights[i + 1]
            later = {(i + 1, f): -np.einsum("xr,sy->rsxy", w, eye) for f, w in enumerate(nxt)}
            place["width"](d * d, {(i, 2): np.einsum("rx,sy->rsxy", eye, V), **later})
            if scales:
                place["scaling"](1, {(i, 2): V, (i + 1, 2): -3 * nxt.V})
    empty = np.zeros((0, arch.parameter_count))
    return SymmetryTangents(*(red(np.concatenate([empty, *rows])) for rows in groups.values()))


def symmetry_tangents(arch: Architecture, weights: Weights, *,
                      modulus: int | None = None) -> np.ndarray:
    """Tangent vectors at ``W`` of the symmetry orbit, one per row, in parameter coordinates.

    Generators: ``E`` in ``gl_{a_i}`` gives ``(dQ_i, dK_i) = (E Q_i, -E^T K_i)``; ``E`` in
    ``gl_{d_i}`` (``i < l``) gives ``dV_i = E V_i`` and ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``;
    lightning adds the scalings ``(dQ_i, dV_i) = (Q_i, -V_i)`` and
    ``(dV_i, dV_{i+1}) = (V_i, -3 V_{i+1})``, a basis of the tangent space of
    ``prod_i (alpha_i beta_i)^(3^(l-i)) = 1``. Residual blocks (``skip=True``) keep only the
    per-layer ``gl_{a_i}`` and ``(Q_i, -V_i)``: the identity path fixes the basis of every hidden
    layer and its scale. Each row lies in the kernel of the Jacobian. The rows come in that
    order: all ``gl_{a_i}``, all ``gl_{d_i}``, the scalings (:func:`symmetry_tangent_groups`
    names the three blocks); reduced mod ``modulus`` if given.
    """
    return np.concatenate(symmetry_tangent_groups(arch, weights, modulus=modulus))


def sees_parallel_tokens(arch: Architecture) -> tuple[bool, ...]:
    """Per layer: whether all its input tokens are parallel, for every input [derived].

    True when ``t = 1``, when ``d_0 = 1``, or when an earlier layer's output has rank one: for
    lightning ``min(a_j, d_j) = 1`` (the output ``V Y (Y^T A Y)`` has rank at most ``rk A``); for
    softmax only ``d_j = 1`` (a softmax of a rank-one score matrix is not rank one). Such a layer
    sees ``Y^T A Y = c (y^T A y) c^T``, that is only ``sym(A)``. A residual block
    ``Y + phi(Y)`` keeps its input, so with ``skip=True`` only ``t = 1`` or ``d_0 = 1`` count.
    """
    flags, parallel = [], arch.tokens == 1 or arch.widths[0] == 1
    for a, d_out in zip(arch.ranks, arch.widths[1:]):
        flags.append(parallel)
        collapses = d_out == 1 or (arch.is_lightning and a == 1)
        parallel = parallel or (collapses and not arch.skip)
    return tuple(flags)


def degenerate_tangents(arch: Architecture, weights: Weights, *,
                        modulus: int | None = None) -> np.ndarray:
    """Fiber directions beyond the symmetries, where a layer sees only ``sym(A_i)`` [derived].

    For a layer whose tokens are all parallel (:func:`sees_parallel_tokens`) and ``a_i >= d_{i-1}``,
    ``dQ_i = K_i (K_i^T K_i)^{-1} B`` moves ``A_i`` by any antisymmetric ``B`` and leaves the
    function unchanged. Mod ``p`` the inverse is taken mod ``p`` (no rows if it does not exist).
    """
    weights = check_weights(arch, weights, modulus=modulus)
    rows = [np.zeros((0, arch.parameter_count))]
    place = parameter_placer(arch.layer_shapes, rows)
    for i, ((Q, K, _), parallel) in enumerate(zip(weights, sees_parallel_tokens(arch))):
        a, d = Q.shape
        if not parallel or a < d or d < 2:
            continue
        gram_inverse = inverse(K.T @ K, modulus)
        if gram_inverse is None:
            continue
        r, s = np.triu_indices(d, 1)
        B = np.zeros((len(r), d, d))
        B[np.arange(len(r)), r, s], B[np.arange(len(r)), s, r] = 1, -1
        place(len(r), {(i, 0): K @ gram_inverse @ B})
    return reducer(modulus)(np.concatenate(rows))


def width_tangents(arch: Architecture, weights: Weights, *,
                   modulus: int | None = None) -> np.ndarray:
    """Fiber directions from width that nothing uses, one per row, in parameters [derived].

    Two kinds, both exact fiber directions for every input:

    - **unreached**: the tokens entering layer ``i >= 2`` lie in ``R_{i-1} = im(V_{i-1} ... V_1)``,
      so a change ``w r^T`` of any row of ``Q_i``, ``K_i`` or ``V_i`` with ``r^T`` vanishing on
      ``R_{i-1}`` changes nothing;
    - **unread**: layer ``i + 1`` and the later layers read layer ``i``'s output only through the
      linear forms ``F_i = span(rows of Q_{i+1}, K_{i+1}, F_{i+1} V_{i+1})`` (``F_l``: all), so
      ``dV_i = n z^T`` with ``F_i n = 0`` changes nothing, for every ``z``.

    Some of them are also symmetry directions (``GL_{d_i}``); stacked with
    :func:`symmetry_tangents` they give the upper bound of
    :func:`~lsa_helpers.function_space.dimension`. They exist only where a hidden layer is wider
    than what reaches it (``d_i > min(d_0, ..., d_i)``) or than what is read from it: the width that
    the effective widths of :func:`~lsa_helpers.formulas.formula_dimension` leave out. Valid for
    lightning and softmax alike (both read a layer's input through ``Q Y``, ``K Y`` and ``V Y``).

    Parameters
    ----------
    arch : Architecture
    weights : sequence of (Q, K, V)
        The point, with the shapes of ``arch``; integers when ``modulus`` is given.
    modulus : int, optional
        Compute the kernels exactly mod this prime (FLINT ``nullspace``); default float64 SVD.

    Returns
    -------
    ndarray of shape (count, parameters)
        One direction per row, in the coordinates of
        :func:`~lsa_helpers.weights.weights_to_vector`; reduced mod ``modulus`` if given.

    Raises
    ------
    ValueError
        If the weights do not match ``arch``.

    Examples
    --------
    >>> from lsa_helpers import Architecture, random_weights
    >>> arch = Architecture((3, 3, 3), (2, 2))        # equal widths: no unused width
    >>> width_tangents(arch, random_weights(arch, 0)).shape
    (0, 42)
    >>> arch = Architecture((5, 4, 1), (5, 1))        # layer 2 reads 3 forms of its 4-d input
    >>> width_tangents(arch, random_weights(arch, 0)).shape
    (5, 82)
    """
    weights = check_weights(arch, weights, modulus=modulus)
    if arch.skip:  # the identity path reaches and reads every direction of every layer
        return np.zeros((0, arch.parameter_count))
    reduce = reducer(modulus)
    rows = [np.zeros((0, arch.parameter_count))]
    place = parameter_placer(arch.layer_shapes, rows)
    reach = np.eye(arch.widths[0])                      # P_{i-1} = V_{i-1} ... V_1
    for i, layer in enumerate(weights):
        if i:
            unreached = kernel(reach.T, modulus)       # r with r^T P_{i-1} = 0
            for factor, w in enumerate(layer):
                if len(unreached):
                    values = np.zeros((w.shape[0], len(unreached), *w.shape))
                    for row in range(w.shape[0]):
                        values[row, :, row, :] = unreached
                    place(w.shape[0] * len(unreached), {(i, factor): values})
        reach = reduce(layer.V @ reach)
    forms = np.eye(arch.widths[-1])                     # F_l: every output is read
    for i in range(arch.layers - 1, 0, -1):
        Q, K, V = weights[i]
        forms = reduce(np.vstack([Q, K, forms @ V]))    # F_{i}: what layers i+1.. read of Y_i
        unread = kernel(forms, modulus)
        if len(unread):
            d_in = weights[i - 1].V.shape[1]
            place(len(unread) * d_in,
                  {(i - 1, 2): np.einsum("nr,zs->nzrs", unread, np.eye(d_in))})
    return reduce(np.concatenate(rows))


def fiber_tangents(arch: Architecture, weights: Weights, *,
                   modulus: int | None = None) -> np.ndarray:
    """Every known fiber direction at ``weights``: symmetries, antisymmetric and width directions.

    The rows of :func:`symmetry_tangents`, :func:`degenerate_tangents` and
    :func:`width_tangents`, stacked; all lie in the kernel of the Jacobian at every point.
    """
    return np.concatenate([symmetry_tangents(arch, weights, modulus=modulus),
                           degenerate_tangents(arch, weights, modulus=modulus),
                           width_tangents(arch, weights, modulus=modulus)])
