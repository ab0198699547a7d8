"""Closedness, boundary and singular points of one lightning layer; gradient descent near them."""

from __future__ import annotations

import dataclasses
from math import ceil
from typing import Literal, get_args

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .architecture import Architecture
from .differential import jacobian
from .rank import PRIME, exact_rank
from .symmetries import function_distance
from .weights import Layer, as_generator, check_weights, random_inputs

__all__ = [
    "SLICE_POSITIONS",
    "Trajectory",
    "gradient_descent",
    "loss_and_gradient",
    "quadratic_factor",
    "rank_one_layers",
    "slice_coordinates",
    "slice_matrix",
    "slice_position",
    "swap_tangent_dimension",
    "tangent_dimension",
    "value_map_matrix",
]

SlicePosition = Literal["inside", "boundary", "outside"]
SLICE_POSITIONS: tuple[SlicePosition, ...] = get_args(SlicePosition)
"""Where a point ``(alpha, beta, gamma)`` of the ``d = 2`` slice lies (:func:`slice_position`)."""


def _vector(name: str, x: ArrayLike) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a non-empty finite vector, got shape {x.shape}")
    return x


# --- The boundary: the quadratic factor sym(z k^T) ---------------------------------------------

def quadratic_factor(z: ArrayLike, k: ArrayLike) -> np.ndarray:
    """The symmetric matrix ``S = sym(z k^T) = (z k^T + k z^T) / 2`` of a rank-one layer [derived].

    A layer with ``A = k q^T`` and ``V = v z^T`` computes

        phi(X) = v (z^T X X^T k) q^T X = v tr(X^T S X) q^T X,

    because ``z^T X X^T k = sum_i (z . x_i)(k . x_i) = sum_i x_i^T S x_i``. So the function sees
    ``(z, k)`` only through ``S``, the matrix of the quadric ``x -> (z . x)(k . x)``. ``S`` has
    rank at most two, with at most one positive and one negative eigenvalue; ``z || k`` exactly
    when ``rk S <= 1`` (for ``d = 2``: when ``det S = 0``).

    Examples
    --------
    >>> quadratic_factor([1.0, 0.0], [0.0, 2.0])
    array([[0., 1.],
           [1., 0.]])
    """
    z, k = _vector("z", z), _vector("k", k)
    if z.shape != k.shape:
        raise ValueError(f"z and k must have the same length, got shapes {z.shape} and {k.shape}")
    return (np.outer(z, k) + np.outer(k, z)) / 2


def slice_coordinates(S: ArrayLike) -> np.ndarray:
    """Coordinates ``(alpha, beta, gamma)`` of symmetric ``2 x 2`` matrices ``S`` [derived].

    ``S = [[alpha + beta, gamma], [gamma, alpha - beta]]``, so ``alpha = tr(S) / 2``,
    ``beta = (S_11 - S_22) / 2``, ``gamma = S_12`` and ``det S = alpha^2 - beta^2 - gamma^2``.
    Batched over leading axes; returns an array of shape ``(..., 3)``.

    Examples
    --------
    >>> slice_coordinates([[3.0, 1.0], [1.0, -1.0]])
    array([1., 2., 1.])
    """
    S = np.asarray(S, dtype=np.float64)
    if S.ndim < 2 or S.shape[-2:] != (2, 2):
        raise ValueError(f"S must have shape (..., 2, 2), got {S.shape}")
    scale = max(np.abs(S).max(), 1.0)
    if not np.allclose(S[..., 0, 1], S[..., 1, 0], rtol=1e-12, atol=1e-12 * scale):
        raise ValueError("S must be symmetric, got S_12 != S_21")
    alpha = (S[..., 0, 0] + S[..., 1, 1]) / 2
    beta = (S[..., 0, 0] - S[..., 1, 1]) / 2
    return np.stack([alpha, beta, S[..., 0, 1]], axis=-1)


def slice_matrix(alpha: float, beta: float, gamma: float) -> np.ndarray:
    """The symmetric matrix ``[[alpha + beta, gamma], [gamma, alpha - beta]]``.

    Inverse of :func:`slice_coordinates`.

    Examples
    --------
    >>> slice_matrix(1.0, 2.0, 1.0)
    array([[ 3.,  1.],
           [ 1., -1.]])
    """
    alpha, beta, gamma = (_checks.finite(name, x) for name, x in
                          (("alpha", alpha), ("beta", beta), ("gamma", gamma)))
    return np.array([[alpha + beta, gamma], [gamma, alpha - beta]])


def slice_position(alpha: float, beta: float, gamma: float, *,
                   rtol: float = 1e-9) -> SlicePosition:
    """Whether ``S = [[alpha + beta, gamma], [gamma, alpha - beta]]`` is a ``sym(z k^T)`` [derived].

    ``det sym(z k^T) = -((z_1 k_2 - z_2 k_1) / 2)^2 <= 0``, and conversely every symmetric ``S``
    with ``det S <= 0`` is ``sym(z k^T)`` (:func:`~lsa_helpers.identify.factor_quadric` finds
    ``z, k``). With ``det S = alpha^2 - beta^2 - gamma^2`` the attained set is the outside of the
    double cone ``beta^2 + gamma^2 = alpha^2``:

    - ``"inside"``: ``beta^2 + gamma^2 > alpha^2``, attained with ``z`` not parallel to ``k``;
    - ``"boundary"``: ``beta^2 + gamma^2 = alpha^2`` (up to ``rtol`` times
      ``alpha^2 + beta^2 + gamma^2``), attained only with ``z || k`` (or ``S = 0``);
    - ``"outside"``: ``beta^2 + gamma^2 < alpha^2``, ``S`` is definite and ``x^T S x`` has no real
      linear factor: not attained.

    Examples
    --------
    >>> slice_position(0.5, 1.0, 0.0), slice_position(1.0, 0.6, 0.8), slice_position(1.0, 0.0, 0.0)
    ('inside', 'boundary', 'outside')
    """
    values = [_checks.finite(name, x) for name, x in
              (("alpha", alpha), ("beta", beta), ("gamma", gamma))]
    rtol = _checks.fraction("rtol", rtol, zero=True)
    top = max(map(abs, values)) or 1.0  # S and cS lie on the same side: work at scale 1
    alpha, beta, gamma = (x / top for x in values)
    excess = beta * beta + gamma * gamma - alpha * alpha
    inside, boundary, outside = SLICE_POSITIONS
    if abs(excess) <= rtol * (alpha * alpha + beta * beta + gamma * gamma):
        return boundary
    return inside if excess > 0 else outside


# --- Closedness ----------------------------------------------------------------------------------

def value_map_matrix(A: ArrayLike, inputs: ArrayLike) -> np.ndarray:
    """The ``d x (N t)`` matrix ``M_A`` of the linear map ``V -> (V X_n X_n^T A X_n)_n = V M_A``.

    ``M_A = [X_1 X_1^T A X_1, ..., X_N X_N^T A X_N]``, so ``V M_A`` lists the outputs
    ``phi(X_n)`` side by side. For ``A != 0`` and ``t >= 2`` the map ``V -> (X -> V X X^T A X)`` is
    injective [derived]: for two tokens ``x, y``, ``(v . x)(x^T A y)`` is a product of two non-zero
    polynomials when ``v != 0``. On
    enough generic inputs ``M_A`` then has rank ``d``, and ``||V|| <= ||V M_A|| / s_min(M_A)``:
    this bounds ``V`` by the function, the step of the closedness proof.

    Examples
    --------
    >>> X = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> value_map_matrix(np.eye(2), X)
    array([[1., 0.],
           [0., 1.]])
    """
    A = np.asarray(A, dtype=np.float64)
    inputs = np.asarray(inputs, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    if inputs.ndim != 3 or inputs.shape[1] != A.shape[0]:
        raise ValueError(f"inputs must have shape (N, {A.shape[0]}, t), got {inputs.shape}")
    blocks = inputs @ np.swapaxes(inputs, -1, -2) @ A @ inputs  # (N, d, t)
    return np.concatenate(list(blocks), axis=1)


# --- Singular points: tangent dimensions -----------------------------------------------------

def rank_one_layers(k: ArrayLike, q: ArrayLike, v: ArrayLike, z: ArrayLike, *,
                    a: int) -> tuple[Layer, Layer]:
    """The rank-one point ``(A, V) = (k q^T, v z^T)`` and its swap ``(z q^T, v k^T)``, as layers.

    Both compute ``phi(X) = v (z^T X X^T k) q^T X`` [paper]. ``(Q, K)`` is a preimage of ``A``
    with ``a`` rows: for ``a >= d``, ``Q = [A; 0]`` and ``K = [I_d; 0]``, where
    ``dA = dK^T Q + K^T dQ`` reaches every ``d x d`` matrix; for ``a < d``, ``Q = [q^T; 0]`` and
    ``K = [k^T; 0]`` (for ``1 < a < d`` a critical point of ``(Q, K) -> K^T Q``: other preimages
    of ``A`` have larger differentials). Integer vectors give integer weights.

    Examples
    --------
    >>> one, swapped = rank_one_layers([1, 0], [0, 1], [2], [1, 1], a=2)
    >>> one.attention, swapped.V
    (array([[0., 1.],
           [0., 0.]]), array([[2., 0.]]))
    """
    k, q, v, z = (_vector(name, x) for name, x in (("k", k), ("q", q), ("v", v), ("z", z)))
    d = k.size
    if q.size != d or z.size != d:
        raise ValueError(f"k, q and z must have the same length, got {k.size}, {q.size}, {z.size}")
    a = _checks.positive_int("a", a)

    def layer(key: np.ndarray, value_factor: np.ndarray) -> Layer:
        Q, K = np.zeros((a, d)), np.zeros((a, d))
        if a >= d:
            Q[:d], K[:d] = np.outer(key, q), np.eye(d)
        else:
            Q[0], K[0] = q, key
        return Layer(Q, K, np.outer(v, value_factor))

    return layer(k, z), layer(z, k)


def _one_layer(arch: Architecture) -> Architecture:
    if not (isinstance(arch, Architecture) and arch.layers == 1 and arch.is_lightning):
        raise ValueError(f"arch must be a one-layer lightning Architecture, got {arch!r}")
    return arch


def tangent_dimension(arch: Architecture, *layers: Layer, rng: Seed = None, modulus: int = PRIME,
                      max_rounds: int = 8) -> int:
    """Dimension of the span of the images of the differential of ``W -> phi_W`` at ``layers``.

    ``layers`` are preimages ``W_1, ..., W_m`` of one function ``f``. Each image
    ``dphi_{W_i}(R^P)`` lies in the tangent space of ``M`` at ``f`` (the curve
    ``s -> phi_{W_i + s U}`` stays in ``M``, so its velocity satisfies the linearized equations),
    so a span larger than ``dim M`` proves that ``f`` is a singular point [derived]. A single
    image of rank below ``dim M`` only shows that the parametrization is critical at ``W_i``.

    Parameters
    ----------
    arch : Architecture
        One lightning layer.
    *layers : Layer
        Preimages of one function, with integer weights.
    rng : numpy.random.Generator, int or None
        For the random integer inputs.
    modulus : int
        The prime of the exact rank.
    max_rounds : int
        At most this many rounds of adding inputs.

    Returns
    -------
    int
        The rank mod ``modulus`` of ``[J(W_1) | ... | J(W_m)]`` on random integer inputs, added
        until the rank stops growing: a certified *lower bound* on the dimension of the span (an
        upper bound needs vectors of the kernel).

    Raises
    ------
    ValueError
        If ``arch`` is not one lightning layer, no layer is given, the weights are not integers,
        or the layers compute different functions.

    Examples
    --------
    >>> arch = Architecture((3, 2), (3,))
    >>> point, swapped = rank_one_layers([1, 2, 0], [1, 0, 1], [1, 1], [0, 1, 1], a=3)
    >>> tangent_dimension(arch, point, rng=0), tangent_dimension(arch, point, swapped, rng=0)
    (14, 20)
    """
    arch = _one_layer(arch)
    max_rounds = _checks.positive_int("max_rounds", max_rounds)
    if not layers:
        raise ValueError("layers must hold at least one layer (a preimage of the point)")
    layers = tuple(check_weights(arch, [layer])[0] for layer in layers)
    if any(not np.array_equal(w, np.round(w)) for layer in layers for w in layer):
        raise ValueError("layers must have integer weights (ranks are computed exactly mod p)")
    for i, layer in enumerate(layers[1:], start=2):
        if function_distance(arch, [layers[0]], [layer], rng=0) > 1e-9:
            raise ValueError(f"layers must all compute the same function, layer {i} differs "
                             "from layer 1")
    rng = as_generator(rng)
    step = ceil(len(layers) * arch.parameter_count / (arch.widths[1] * arch.tokens)) + 1
    inputs = random_inputs(arch, step, rng, modulus=modulus)
    rank = -1
    for _ in range(max_rounds):
        J = np.concatenate([jacobian(arch, [layer], inputs, modulus=modulus) for layer in layers],
                           axis=1)
        new = exact_rank(J, modulus)
        if new == rank:
            break
        rank = new
        inputs = np.concatenate([inputs, random_inputs(arch, step, rng, modulus=modulus)])
    return rank


def swap_tangent_dimension(arch: Architecture, k: ArrayLike, q: ArrayLike, v: ArrayLike,
                           z: ArrayLike, *, rng: Seed = None,
                           modulus: int = PRIME) -> int:
    """:func:`tangent_dimension` at both swap preimages ``(k q^T, v z^T)`` and ``(z q^T, v k^T)``.

    For ``a >= d`` and ``z`` not parallel to ``k`` each branch alone has ``dim M``, and together
    they span more, e.g. 20 > 14 for ``(d, d', a) = (3, 2, 3)`` [derived]. For ``a = d' = 1``
    both branches have the same image, ``dim M`` [derived].

    Examples
    --------
    >>> arch = Architecture((3, 1), (1,))
    >>> swap_tangent_dimension(arch, [1, 2, 0], [1, 0, 1], [1], [0, 1, 1], rng=0)
    7
    """
    arch = _one_layer(arch)
    d, d_out = arch.widths
    shapes = {"k": np.shape(k), "q": np.shape(q), "v": np.shape(v), "z": np.shape(z)}
    expected = {"k": (d,), "q": (d,), "v": (d_out,), "z": (d,)}
    if shapes != expected:
        raise ValueError(f"k, q, v, z must have shapes {expected} for {arch}, got {shapes}")
    return tangent_dimension(arch, *rank_one_layers(k, q, v, z, a=arch.ranks[0]), rng=rng,
                             modulus=modulus)


# --- Gradient descent -----------------------------------------------------------------------------

def _training_data(layer: Layer, inputs: ArrayLike,
                   targets: ArrayLike) -> tuple[Layer, np.ndarray, np.ndarray]:
    Q, K, V = (np.asarray(w, dtype=np.float64) for w in layer)
    if Q.ndim != 2 or Q.shape != K.shape or V.ndim != 2 or V.shape[1] != Q.shape[1]:
        raise ValueError(f"layer must be (Q, K, V) with Q, K of shape (a, d) and V of shape "
                         f"(d', d), got shapes {Q.shape}, {K.shape}, {V.shape}")
    inputs = np.asarray(inputs, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    d, d_out = Q.shape[1], V.shape[0]
    if inputs.ndim != 3 or inputs.shape[1] != d:
        raise ValueError(f"inputs must have shape (N, {d}, t), got {inputs.shape}")
    expected = (inputs.shape[0], d_out, inputs.shape[2])
    if targets.shape != expected:
        raise ValueError(f"targets must have shape {expected}, got {targets.shape}")
    return Layer(Q, K, V), inputs, targets


def _loss_and_gradient(layer: Layer, X: np.ndarray, Y: np.ndarray) -> tuple[float, Layer]:
    Q, K, V = layer
    A = K.T @ Q
    Xt = np.swapaxes(X, -1, -2)
    C = X @ Xt                                   # X X^T
    AX = A @ X
    B = V @ C                                    # V X X^T
    R = B @ AX - Y                               # residuals phi(X) - Y
    n = len(X)
    grad_A = (np.swapaxes(B, -1, -2) @ R @ Xt).sum(axis=0) / n
    grad_V = (R @ np.swapaxes(C @ AX, -1, -2)).sum(axis=0) / n
    loss = 0.5 * float(np.einsum("nst,nst->", R, R)) / n
    return loss, Layer(K @ grad_A, Q @ grad_A.T, grad_V)


def loss_and_gradient(layer: Layer, inputs: ArrayLike, targets: ArrayLike) -> tuple[float, Layer]:
    """The loss ``L = (1 / 2N) sum_n ||phi_W(X_n) - Y_n||^2`` and its gradient in ``(Q, K, V)``.

    With residuals ``R_n = V X_n X_n^T A X_n - Y_n`` and ``A = K^T Q``::

        G_A = (1/N) sum_n (V X_n X_n^T)^T R_n X_n^T,      grad_Q = K G_A,   grad_K = Q G_A^T,
        grad_V = (1/N) sum_n R_n (X_n X_n^T A X_n)^T.

    Examples
    --------
    >>> layer = Layer(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    >>> loss, grad = loss_and_gradient(layer, np.ones((1, 1, 1)), np.zeros((1, 1, 1)))
    >>> loss, grad.V
    (0.5, array([[1.]]))
    """
    return _loss_and_gradient(*_training_data(layer, inputs, targets))


def _singular_values(M: np.ndarray) -> np.ndarray:
    return np.linalg.svd(M, compute_uv=False)


@dataclasses.dataclass(frozen=True, eq=False)
class Trajectory:
    """A gradient-descent run, recorded every ``record_every`` steps and at the end.

    ``steps[i]`` is the step of record ``i``, ``losses[i]`` the loss there and ``weights[i]`` the
    layer there; ``final`` is the layer after the last step.
    """

    steps: np.ndarray
    losses: np.ndarray
    weights: tuple[Layer, ...]
    learning_rate: float

    @property
    def final(self) -> Layer:
        """The weights after the last step."""
        return self.weights[-1]

    @property
    def attention_singular_values(self) -> np.ndarray:
        """Singular values of ``A = K^T Q`` per record, largest first: shape ``(records, d)``."""
        K, Q = (np.array([getattr(w, name) for w in self.weights]) for name in "KQ")
        return _singular_values(K.swapaxes(1, 2) @ Q)  # all records in one call

    @property
    def value_singular_values(self) -> np.ndarray:
        """Singular values of ``V`` per record, largest first: shape ``(records, min(d', d))``."""
        return _singular_values(np.array([w.V for w in self.weights]))

    @property
    def rank_one_ratio(self) -> np.ndarray:
        """``max(s_2(A) / s_1(A), s_2(V) / s_1(V))`` per record (a missing ``s_2`` counts as 0).

        Zero exactly at rank-one pairs ``rk A = rk V = 1`` (for ``d >= 2`` and ``a >= d`` singular
        points [paper]; for ``d = 1`` every point, and none is singular), small near them; 1 where
        ``A`` or ``V`` vanishes.
        """
        def ratio(s: np.ndarray) -> np.ndarray:
            if s.shape[1] < 2:
                return np.zeros(len(s))
            return np.divide(s[:, 1], s[:, 0], out=np.ones(len(s)), where=s[:, 0] > 0)

        return np.maximum(ratio(self.attention_singular_values), ratio(self.value_singular_values))

    def __repr__(self) -> str:
        return (f"Trajectory(steps={int(self.steps[-1])}, records={len(self.steps)}, "
                f"learning_rate={self.learning_rate:g}, "
                f"loss {self.losses[0]:.2e} -> {self.losses[-1]:.2e})")


def gradient_descent(layer: Layer, inputs: ArrayLike, targets: ArrayLike, *, learning_rate: float,
                     steps: int,
                     record_every: int = 1) -> Trajectory:
    """Plain gradient descent ``W <- W - learning_rate * grad L(W)`` on :func:`loss_and_gradient`.

    A pure function: ``layer`` is not modified, nothing random happens (draw the initial weights
    from a seeded generator).

    Parameters
    ----------
    layer : Layer
        The initial weights ``(Q, K, V)``.
    inputs : array of shape (N, d, t)
    targets : array of shape (N, d', t)
    learning_rate : float
    steps : int
        Number of updates.
    record_every : int
        Record the loss and the weights every this many steps (and after the last one).

    Returns
    -------
    Trajectory

    Raises
    ------
    ValueError
        For shapes that do not fit, a non-positive ``learning_rate``, ``steps`` or
        ``record_every``, and when the loss stops being finite (the learning rate is too large).

    Examples
    --------
    >>> X = np.ones((1, 1, 1))
    >>> run = gradient_descent(Layer(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1))), X, 2 * X,
    ...                        learning_rate=0.1, steps=200, record_every=100)
    >>> run.steps.tolist(), round(float(run.losses[-1]), 12)
    ([0, 100, 200], 0.0)
    """
    layer, X, Y = _training_data(layer, inputs, targets)
    learning_rate = _checks.finite_positive("learning_rate", learning_rate)
    steps = _checks.positive_int("steps", steps)
    record_every = _checks.positive_int("record_every", record_every)
    Q, K, V = (w.copy() for w in layer)
    records = []
    for step in range(steps + 1):
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported below
            loss, grad = _loss_and_gradient(Layer(Q, K, V), X, Y)
        if not np.isfinite(loss):
            raise ValueError(f"learning_rate={learning_rate} is too large: the loss diverged at "
                             f"step {step}")
        if step % record_every == 0 or step == steps:
            records.append((step, loss, Layer(Q, K, V)))
        if step < steps:
            Q, K, V = (w - learning_rate * g for w, g in zip((Q, K, V), grad))
    return Trajectory(np.array([r[0] for r in records]), np.array([r[1] for r in records]),
                      tuple(r[2] for r in records), float(learning_rate))
