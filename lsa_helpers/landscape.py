"""The loss landscape at a global minimum: the Hessian of the squared loss and its flat directions.

A network trained to **zero loss** on data from a teacher sits at a global minimum of the loss,
the mean squared error over the ``N`` training pairs (the one loss of the package, also of
:func:`~lsa_helpers.singularities.loss_and_gradient`):

    loss(W) = 1/(2N) sum_n || phi_W(X_n) - Y_n ||^2 .

Its Hessian is ``H = (J^T J + sum_k r_k grad^2 r_k) / N``, with ``J`` the Jacobian of the outputs
on the training inputs and ``r`` the residuals; at zero loss ``r = 0`` and ``H = J^T J / N``. So the
flat
directions (the null space of ``H``) number ``parameters - rank J``; at a generic zero-loss point
with enough inputs ``rank J = dim M`` and they are the tangent directions of the fiber, at special
points (a teacher on the boundary) more [derived].

Gradient descent of one layer from a small start (:func:`descend_together`, many runs at once) and
the measurements of its stops (:func:`first_step_below`, :func:`loss_along`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .architecture import Architecture
from .differential import jacobian
from .network import forward
from .singularities import Trajectory
from .weights import (
    Layer,
    Weights,
    as_generator,
    check_weights,
    random_inputs,
    random_weights,
    vector_to_weights,
    weights_to_vector,
)

__all__ = [
    "FlatDirections",
    "LossMoments",
    "TeacherProblem",
    "TrainingRun",
    "descend_together",
    "first_step_below",
    "flat_directions",
    "hessian_at_minimum",
    "hessian_spectrum",
    "loss_along",
    "loss_hessian",
    "loss_moments",
    "squared_loss",
    "teacher_problem",
    "train_to_zero_loss",
]


class TeacherProblem(NamedTuple):
    """Training data from a teacher network, and a starting point for the student."""

    teacher: tuple[Layer, ...]
    inputs: np.ndarray
    targets: np.ndarray
    start: tuple[Layer, ...]


@dataclasses.dataclass(frozen=True)
class TrainingRun:
    """The end of a training run: ``weights``, the loss after each step, and whether it reached
    relative loss ``loss / (1/(2N) sum ||Y_n||^2) <= rtol`` (``converged``)."""

    weights: tuple[Layer, ...]
    losses: tuple[float, ...]
    converged: bool

    @property
    def steps(self) -> int:
        """Number of accepted and rejected steps taken."""
        return len(self.losses) - 1

    def __repr__(self) -> str:
        return (f"TrainingRun(steps={self.steps}, loss {self.losses[0]:.1e} -> "
                f"{self.losses[-1]:.1e}, converged={self.converged})")


@dataclasses.dataclass(frozen=True)
class FlatDirections:
    """The zero block of ``H = J^T J / N``: ``flat = parameters - rank`` zero eigenvalues.

    ``eigenvalues`` are those of ``H`` in decreasing order (squared singular values of ``J``
    over ``N``, padded with zeros), ``basis`` an orthonormal basis of the null space
    (``flat x parameters``),
    ``gap`` the smallest kept over the largest dropped eigenvalue (infinite when nothing is
    dropped or the dropped ones are exactly zero).
    """

    parameters: int
    rank: int
    eigenvalues: np.ndarray
    basis: np.ndarray
    tolerance: float

    @property
    def flat(self) -> int:
        """The size of the zero block: ``parameters - rank``."""
        return self.parameters - self.rank

    @property
    def gap(self) -> float:
        if self.rank == 0:
            return 0.0
        dropped = self.eigenvalues[self.rank] if self.rank < self.parameters else 0.0
        return np.inf if dropped == 0 else float(self.eigenvalues[self.rank - 1] / dropped)

    def __repr__(self) -> str:
        return (f"FlatDirections(parameters={self.parameters}, rank={self.rank}, "
                f"flat={self.flat}, gap={self.gap:.1e})")


def _check_inputs(arch: Architecture, inputs: ArrayLike) -> np.ndarray:
    X = np.asarray(inputs, dtype=np.float64)
    expected = (arch.widths[0], arch.tokens)
    if X.ndim != 3 or X.shape[1:] != expected or X.shape[0] < 1:
        raise ValueError(
            f"inputs must have shape (N, {expected[0]}, {expected[1]}) with N >= 1, "
            f"got {X.shape}")
    return X


def _check_data(arch: Architecture, inputs: ArrayLike,
                targets: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    X, Y = _check_inputs(arch, inputs), np.asarray(targets, dtype=np.float64)
    wanted = (X.shape[0], arch.widths[-1], arch.tokens)
    if Y.shape != wanted:
        raise ValueError(f"targets must have shape {wanted} (one output per input), "
                         f"got {Y.shape}")
    return X, Y


def teacher_problem(arch: Architecture, count: int, rng: Seed = None, *,
                    perturbation: float = 0.3) -> TeacherProblem:
    """Random teacher weights, ``count`` inputs with their teacher outputs, and a start nearby.

    The teacher is :func:`~lsa_helpers.weights.random_weights`; each input is a Gaussian
    ``d_0 x t`` matrix rescaled to Frobenius norm ``sqrt(t)`` (tokens of about unit length, which
    keeps the degree-``3^l`` outputs of moderate size); the targets are ``Y_n = phi_T(X_n)``. The
    start adds to each teacher weight ``perturbation`` times a Gaussian of the teacher's scale
    (variance ``1/d_{i-1}``): near the teacher, not at it.

    Raises
    ------
    ValueError
        If ``count`` is not a positive integer or ``perturbation`` is negative.

    Examples
    --------
    >>> problem = teacher_problem(Architecture((3, 2, 3), (2, 2)), 8, 0)
    >>> problem.inputs.shape, problem.targets.shape
    ((8, 3, 3), (8, 3, 3))
    """
    perturbation = _checks.finite_nonnegative("perturbation", perturbation)
    rng = as_generator(rng)
    teacher = random_weights(arch, rng)
    X = random_inputs(arch, count, rng)
    X *= np.sqrt(arch.tokens) / np.linalg.norm(X, axis=(1, 2), keepdims=True)
    Y = forward(teacher, X, normalization=arch.normalization, skip=arch.skip)
    start = tuple(Layer(*(w + perturbation * rng.normal(scale=w.shape[1] ** -0.5, size=w.shape)
                          for w in layer)) for layer in teacher)
    return TeacherProblem(teacher, X, Y, start)


def _residuals(arch: Architecture, vector: np.ndarray, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    weights = vector_to_weights(arch, vector)
    return (forward(weights, X, normalization=arch.normalization, skip=arch.skip) - Y).ravel()


def squared_loss(arch: Architecture, weights: Weights, inputs: ArrayLike,
                 targets: ArrayLike) -> float:
    """``1/(2N) sum_n || phi_W(X_n) - Y_n ||_F^2`` over the ``N`` training pairs.

    Examples
    --------
    >>> problem = teacher_problem(Architecture((3, 2, 3), (2, 2)), 8, 0)
    >>> squared_loss(Architecture((3, 2, 3), (2, 2)), problem.teacher, *problem[1:3])
    0.0
    """
    X, Y = _check_data(arch, inputs, targets)
    r = _residuals(arch, weights_to_vector(check_weights(arch, weights)), X, Y)
    return _mean_loss(r, len(X))


def _mean_loss(r: np.ndarray, count: int) -> float:
    """``1/(2N) ||r||^2`` for the residuals ``r`` of ``N = count`` training pairs."""
    return 0.5 * float(r @ r) / count


def train_to_zero_loss(arch: Architecture, weights: Weights, inputs: ArrayLike, targets: ArrayLike,
                       *, max_steps: int = 300,
                       rtol: float = 1e-24) -> TrainingRun:
    """Minimize the squared loss from ``weights`` by Levenberg-Marquardt.

    Each step solves ``min_s ||J s + r||^2 + lam ||s||^2`` (a damped Gauss-Newton step) by least
    squares; a step that lowers the loss is taken and ``lam`` divided by 3, otherwise ``lam`` grows
    (doubling its factor each time). It stops when the relative loss
    ``loss / (1/(2N) sum ||Y_n||^2)`` is at most ``rtol`` (``converged=True``: a zero-loss point up
    to rounding), after ``max_steps`` steps, or when ``lam`` overflows (a stalled run).

    Raises
    ------
    ValueError
        If ``max_steps`` is not a positive integer, ``rtol`` is not positive, or the shapes of
        the weights, inputs and targets do not match ``arch``.

    Examples
    --------
    >>> arch = Architecture((3, 2, 3), (2, 2))
    >>> problem = teacher_problem(arch, 8, 1)
    >>> run = train_to_zero_loss(arch, problem.start, problem.inputs, problem.targets)
    >>> run.converged, squared_loss(arch, run.weights, problem.inputs, problem.targets) < 1e-20
    (True, True)
    """
    max_steps = _checks.positive_int("max_steps", max_steps)
    rtol = _checks.finite_positive("rtol", rtol)
    X, Y = _check_data(arch, inputs, targets)
    w = weights_to_vector(check_weights(arch, weights))
    scale = max(_mean_loss(Y.ravel(), len(X)), float(np.finfo(np.float64).tiny))
    r = _residuals(arch, w, X, Y)
    loss = _mean_loss(r, len(X))
    losses = [loss]
    J = jacobian(arch, vector_to_weights(arch, w), X)
    lam, factor = 1e-3 * float(np.linalg.norm(J, 2)) ** 2 + 1e-300, 2.0
    zeros = np.zeros(w.size)
    while loss > rtol * scale and len(losses) <= max_steps and np.isfinite(lam) and lam < 1e40:
        A = np.vstack([J, np.sqrt(lam) * np.eye(w.size)])
        step = np.linalg.lstsq(A, np.concatenate([-r, zeros]), rcond=None)[0]
        r_new = _residuals(arch, w + step, X, Y)
        loss_new = _mean_loss(r_new, len(X))
        if loss_new < loss:
            w, r, loss = w + step, r_new, loss_new
            lam, factor = lam / 3, 2.0
            J = jacobian(arch, vector_to_weights(arch, w), X)
        else:
            lam, factor = lam * factor, factor * 2
        losses.append(loss)
    return TrainingRun(vector_to_weights(arch, w), tuple(losses), bool(loss <= rtol * scale))


def hessian_at_minimum(arch: Architecture, weights: Weights, inputs: ArrayLike) -> np.ndarray:
    """``J^T J / N``, the Gauss-Newton matrix: the Hessian of the squared loss at a zero-loss point.

    ``H = (J^T J + sum_k r_k grad^2 r_k) / N``; the second term vanishes with the residuals ``r``
    [derived]. ``J`` is :func:`~lsa_helpers.differential.jacobian` on the ``N`` training inputs.
    """
    X = _check_inputs(arch, inputs)
    J = jacobian(arch, weights, X)
    return J.T @ J / len(X)


def loss_hessian(arch: Architecture, weights: Weights, inputs: ArrayLike, targets: ArrayLike, *,
                 step: float = 1e-6) -> np.ndarray:
    """The full Hessian of the squared loss, by central differences of its exact gradient.

    The gradient is ``J^T r / N``; column ``q`` of the Hessian is
    ``(g(W + h e_q) - g(W - h e_q)) / 2h`` with ``h = step * max(1, ||W||_inf)``, and the result is
    symmetrized. Its error is of order ``h^2`` plus rounding ``eps ||g|| / h``: use it to check
    ``H = J^T J / N`` at a minimum, not to count small eigenvalues.

    Raises
    ------
    ValueError
        If ``step`` is not positive or the shapes do not match ``arch``.
    """
    step = _checks.finite_positive("step", step)
    X, Y = _check_data(arch, inputs, targets)
    w = weights_to_vector(check_weights(arch, weights))
    h = step * max(1.0, float(np.abs(w).max()))

    def gradient(v: np.ndarray) -> np.ndarray:
        return jacobian(arch, vector_to_weights(arch, v), X).T @ _residuals(arch, v, X, Y) / len(X)

    columns = [(gradient(w + h * e) - gradient(w - h * e)) / (2 * h) for e in np.eye(w.size)]
    H = np.array(columns).T
    return (H + H.T) / 2


def hessian_spectrum(arch: Architecture, weights: Weights, inputs: ArrayLike) -> np.ndarray:
    """The eigenvalues of ``H = J^T J / N`` in decreasing order, as squared singular values of
    ``J`` over ``N``.

    Squaring the singular values keeps the small eigenvalues accurate (an eigensolver on
    ``J^T J`` would blur everything below ``eps * lambda_max``). Padded with zeros to the number
    of parameters when ``J`` has fewer rows.
    """
    X = _check_inputs(arch, inputs)
    s = np.linalg.svd(jacobian(arch, weights, X), compute_uv=False)
    eigenvalues = np.zeros(arch.parameter_count)
    eigenvalues[: s.size] = s**2 / len(X)
    return eigenvalues


def flat_directions(arch: Architecture, weights: Weights, inputs: ArrayLike) -> FlatDirections:
    """The null space of the Hessian ``J^T J / N`` at a zero-loss point: its size and a basis.

    A singular value ``s_i`` of ``J`` counts as zero when ``s_i <= max(J.shape) * eps * s_1``
    (the rule of ``numpy.linalg.matrix_rank``); the eigenvalues of ``H`` are ``s_i^2 / N``. So
    ``flat = parameters - rank J``. With enough inputs ``rank J = dim M`` at a generic point,
    and the flat directions are the tangent space of the fiber; where the bottleneck formula
    applies that is the symmetry count ``sum_i a_i^2 + sum_{i<l} d_i^2 + l``, elsewhere more
    (widths (3, 3, 3), ranks (1, 3): 24, count 21) [derived]. At special points (a boundary
    teacher) ``rank J < dim M``, and with too few inputs too: extra flat directions, the latter
    changing the function off the training inputs.

    Raises
    ------
    ValueError
        If the shapes of the weights or the inputs do not match ``arch``.

    Examples
    --------
    >>> arch = Architecture((3, 2, 3), (2, 2))
    >>> problem = teacher_problem(arch, 8, 1)
    >>> flat_directions(arch, problem.teacher, problem.inputs).flat
    14
    """
    X = _check_inputs(arch, inputs)
    J = jacobian(arch, weights, X)
    _, s, Vt = np.linalg.svd(J, full_matrices=True)
    tolerance = max(J.shape) * np.finfo(np.float64).eps * (s[0] if s.size else 0.0)
    rank = int(np.count_nonzero(s > tolerance))
    eigenvalues = np.zeros(arch.parameter_count)
    eigenvalues[: s.size] = s**2 / len(X)
    return FlatDirections(arch.parameter_count, rank, eigenvalues, Vt[rank:],
                          float(tolerance**2 / len(X)))


# --- Gradient descent of one layer, many runs at once ---------------------------------------------

class LossMoments(NamedTuple):
    """The moments of a training set, in which the mean squared loss of one layer is quadratic in
    the products ``V_sp A_qr`` (:func:`loss_moments`)."""

    gram: np.ndarray
    linear: np.ndarray
    constant: float


def _one_layer_data(inputs: ArrayLike, targets: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(inputs, dtype=np.float64)
    Y = np.asarray(targets, dtype=np.float64)
    if X.ndim != 3 or X.shape[0] < 1:
        raise ValueError(f"inputs must have shape (N, d, t) with N >= 1, got {X.shape}")
    if Y.ndim != 3 or Y.shape[0] != X.shape[0] or Y.shape[2] != X.shape[2]:
        raise ValueError(f"targets must have shape ({X.shape[0]}, d', {X.shape[2]}) (one output "
                         f"per input), got {Y.shape}")
    return X, Y


def loss_moments(inputs: ArrayLike, targets: ArrayLike) -> LossMoments:
    """The moments ``(G, h, c)`` of a training set for one layer ``phi(X) = V X X^T A X``.

    With ``F_nj[p, q, r] = (X_n X_n^T)_pq (X_n)_rj``, so that
    ``phi_W(X_n)_sj = sum_pqr V_sp A_qr F_nj[p, q, r]``, and ``b_s[p, q, r] = V_sp A_qr``::

        L(W) = (1/2N) sum_n ||phi_W(X_n) - Y_n||^2 = 1/2 sum_s b_s^T G b_s - sum_s h_s^T b_s + c/2,
        G = (1/N) sum_nj F_nj F_nj^T,  h_s = (1/N) sum_nj Y_n[s, j] F_nj,  c = (1/N) sum_n |Y_n|^2.

    ``G`` has shape ``(d^3, d^3)``, ``h`` shape ``(d', d^3)``: their size does not depend on ``N``.

    Raises
    ------
    ValueError
        If ``inputs`` is not of shape ``(N, d, t)`` or ``targets`` not of shape ``(N, d', t)``.

    Examples
    --------
    >>> moments = loss_moments(np.ones((5, 2, 3)), np.zeros((5, 1, 3)))
    >>> moments.gram.shape, moments.linear.shape, moments.constant
    ((8, 8), (1, 8), 0.0)
    """
    X, Y = _one_layer_data(inputs, targets)
    N, d, t = X.shape
    C = X @ np.swapaxes(X, 1, 2)
    F = np.einsum("npq,nrj->njpqr", C, X).reshape(N, t, d**3)
    return LossMoments(np.einsum("nji,njk->ik", F, F) / N, np.einsum("nsj,nji->si", Y, F) / N,
                       float(np.sum(Y**2)) / N)


def _stacked_starts(starts: Sequence[Layer]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        Q, K, V = (np.array([np.asarray(layer[i], dtype=np.float64) for layer in starts])
                   for i in range(3))
    except (TypeError, ValueError, IndexError):
        Q = K = V = np.empty(0)
    if Q.ndim != 3 or len(Q) == 0 or K.shape != Q.shape or V.ndim != 3 or V.shape[2] != Q.shape[2]:
        raise ValueError("starts must be a non-empty sequence of layers (Q, K, V) of one shape, "
                         "Q and K (a, d) and V (d', d)")
    return Q, K, V


def _stacked_moments(moments: LossMoments | Sequence[LossMoments], count: int, d: int,
                     d_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(moments, LossMoments):
        moments = [moments]
    moments = list(moments)
    if len(moments) not in (1, count) or not all(isinstance(m, LossMoments) for m in moments):
        raise ValueError(f"moments must be one LossMoments or one per start ({count}), "
                         f"got {len(moments)} item(s)")
    G = np.array([m.gram for m in moments])
    h = np.array([m.linear for m in moments])
    if G.shape[1:] != (d**3, d**3) or h.shape[1:] != (d_out, d**3):
        raise ValueError(f"moments must be those of a training set with d = {d}, d' = {d_out}, "
                         f"got gram {G.shape[1:]} and linear {h.shape[1:]}")
    return G, h, np.array([m.constant for m in moments])


def descend_together(starts: Sequence[Layer], moments: LossMoments | Sequence[LossMoments], *,
                     learning_rate: float, steps: int,
                     record_every: int = 1) -> tuple[Trajectory, ...]:
    """:func:`~lsa_helpers.singularities.gradient_descent` of many one-layer students at once.

    Student ``k`` starts at ``starts[k]`` and descends ``W <- W - learning_rate * grad L_k(W)`` on
    the mean squared loss of ``moments[k]`` (one :class:`LossMoments` for every student, or one
    each). The loss and its gradient come from the moments: with ``g_s = G b_s - h_s``,

        grad_V[s, p] = sum_qr g_s[p, q, r] A_qr,    grad_A[q, r] = sum_sp g_s[p, q, r] V_sp,
        grad_Q = K grad_A,    grad_K = Q grad_A^T,

    so a step costs the same for every number of training inputs, and all students share one
    loop. Losses below about ``1e-15 c`` are rounding (the quadratic form cancels there).

    Returns
    -------
    tuple of Trajectory
        One per start, recorded every ``record_every`` steps and after the last one.

    Raises
    ------
    ValueError
        If the starts are not layers of one shape, the moments do not fit them, ``learning_rate``
        is not positive, ``steps`` or ``record_every`` is not a positive integer, or a loss stops
        being finite (the learning rate is too large for that start).

    Examples
    --------
    >>> X = np.ones((1, 1, 1))
    >>> runs = descend_together([Layer(*np.ones((3, 1, 1)))] * 2, loss_moments(X, 2 * X),
    ...                         learning_rate=0.1, steps=200, record_every=100)
    >>> runs[1].steps.tolist(), round(float(runs[1].losses[-1]), 12)
    ([0, 100, 200], 0.0)
    """
    Q, K, V = _stacked_starts(starts)
    count, _, d = Q.shape
    d_out = V.shape[1]
    G, h, c = _stacked_moments(moments, count, d, d_out)
    learning_rate = _checks.finite_positive("learning_rate", learning_rate)
    steps = _checks.positive_int("steps", steps)
    record_every = _checks.positive_int("record_every", record_every)
    records = []
    for step in range(steps + 1):
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported below
            A = np.swapaxes(K, 1, 2) @ Q
            b = (V[:, :, :, None] * A.reshape(count, 1, 1, d * d)).reshape(count, d_out, d**3)
            Gb = b @ G                                      # G is symmetric: row s is G b_s
            losses = 0.5 * np.einsum("ksi,ksi->k", b, Gb - 2 * h) + 0.5 * c
        if not np.all(np.isfinite(losses)):
            raise ValueError(f"learning_rate={learning_rate} is too large: the loss of start "
                             f"{int(np.argmin(np.isfinite(losses)))} diverged at step {step}")
        if step % record_every == 0 or step == steps:
            records.append((step, losses, Q, K, V))         # each step makes new arrays
        if step < steps:
            g = (Gb - h).reshape(count, d_out, d, d, d)
            grad_V = np.einsum("kspqr,kqr->ksp", g, A)
            grad_A = np.einsum("kspqr,ksp->kqr", g, V)
            Q, K, V = (Q - learning_rate * (K @ grad_A),
                       K - learning_rate * (Q @ np.swapaxes(grad_A, 1, 2)),
                       V - learning_rate * grad_V)
    recorded_steps = np.array([r[0] for r in records])
    losses = np.array([r[1] for r in records])
    return tuple(Trajectory(recorded_steps, losses[:, k],
                            tuple(Layer(r[2][k], r[3][k], r[4][k]) for r in records),
                            float(learning_rate)) for k in range(count))


def first_step_below(run: Trajectory, fraction: float) -> int | None:
    """The first recorded step at which the loss is below ``fraction`` times the initial loss.

    ``None`` if the run never gets there. With ``fraction = 0.9`` this is when a run from a small
    start leaves the zero function.

    Raises
    ------
    ValueError
        If ``fraction`` is not a positive number.

    Examples
    --------
    >>> X = np.ones((1, 1, 1))
    >>> runs = descend_together([Layer(*np.full((3, 1, 1), s)) for s in (0.2, 0.1, 0.05)],
    ...                         loss_moments(X, X), learning_rate=0.1, steps=100, record_every=10)
    >>> [first_step_below(run, 0.9) for run in runs]
    [30, 80, None]
    """
    fraction = _checks.finite_positive("fraction", fraction)
    below = np.flatnonzero(np.asarray(run.losses) < fraction * run.losses[0])
    return int(run.steps[below[0]]) if below.size else None


def loss_along(run: Trajectory, inputs: ArrayLike, targets: ArrayLike) -> np.ndarray:
    """The loss ``(1/2N) sum_n ||phi_W(X_n) - Y_n||^2`` at every record of a one-layer run.

    On any inputs, e.g. held-out ones; computed from the forward map, not from moments.

    Raises
    ------
    ValueError
        If the shapes of the inputs or targets do not fit the run's layer.

    Examples
    --------
    >>> X = np.ones((1, 1, 1))
    >>> run = descend_together([Layer(*np.ones((3, 1, 1)))], loss_moments(X, 2 * X),
    ...                        learning_rate=0.1, steps=200, record_every=100)[0]
    >>> loss_along(run, 2 * X, 16 * X).round(12).tolist()      # learned phi(x) = 2 x^3
    [32.0, 0.0, 0.0]
    """
    X, Y = _one_layer_data(inputs, targets)
    Q, K, V = (np.array([layer[i] for layer in run.weights]) for i in range(3))
    if X.shape[1] != Q.shape[2] or Y.shape[1] != V.shape[1]:
        raise ValueError(f"inputs and targets must have shapes (N, {Q.shape[2]}, t) and "
                         f"(N, {V.shape[1]}, t) for this run, got {X.shape} and {Y.shape}")
    A = np.swapaxes(K, 1, 2) @ Q
    phi = np.einsum("rsp,npq,rqk,nkj->rnsj", V, X @ np.swapaxes(X, 1, 2), A, X, optimize=True)
    return 0.5 * np.sum((phi - Y) ** 2, axis=(1, 2, 3)) / len(X)
