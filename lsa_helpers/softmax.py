"""Identifiability of one softmax layer: read ``V`` and ``A`` off evaluations at special inputs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from math import log

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .network import layer_forward
from .weights import Layer, as_generator, layer_from_attention

__all__ = ["SoftmaxRecovery", "recover_attention", "recover_softmax_layer", "recover_values"]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SoftmaxRecovery:
    """Weights ``(A, V)`` of a softmax layer recovered from a black box, and the fit.

    ``residual`` is ``max |phi_rec(X) - phi(X)| / max |phi(X)|`` on random inputs. Unlike the
    lightning case (:func:`~lsa_helpers.identify.recover_layer`), no scale is left free.
    """

    A: np.ndarray
    V: np.ndarray
    residual: float
    rtol: float = 1e-9

    @property
    def layer(self) -> Layer:
        """The recovered weights as a layer (``Q = A``, ``K = I``)."""
        return layer_from_attention(self.A, self.V)

    def __repr__(self) -> str:
        fit = (f"residual<{self.rtol:.0e}" if self.residual < self.rtol
               else f"residual={self.residual:.2e}")
        return (f"SoftmaxRecovery(d={self.A.shape[0]}, d_out={self.V.shape[0]}, {fit}): "
                "(A, V) itself, no scaling left")


def _evaluate(black_box: Callable, X: np.ndarray) -> np.ndarray:
    """``black_box`` on a batch of inputs ``(N, d, t)``, one call per input, as ``(N, d', t)``."""
    Y = np.stack([np.asarray(black_box(x), dtype=np.float64) for x in X])
    if Y.ndim != 3 or Y.shape[2] != X.shape[2]:
        raise ValueError(f"black_box must map a d x t input to a d' x t output, got shape "
                         f"{Y.shape[1:]} for a {X.shape[1]} x {X.shape[2]} input")
    if not np.all(np.isfinite(Y)):
        raise ValueError("black_box must return finite values, got a non-finite output")
    return Y


def recover_values(black_box: Callable, d: int, *, tokens: int = 3, samples: int | None = None,
                   rng: Seed = None) -> np.ndarray:
    """``V`` of a softmax layer from its values at constant inputs ``X = [x, ..., x]``.

    All keys of a constant input are equal, so every column of ``X^T A X`` is constant, the
    softmax weights are uniform (``1/t``) and [derived]

        phi([x, ..., x]) = V X (1/t) 1 1^T = V x 1^T.

    So ``x -> phi([x, ..., x])_{:, 1}`` is the linear map ``V``, found by least squares from
    ``samples`` (default ``d``) random Gaussian ``x``. ``A`` plays no role.

    Parameters
    ----------
    black_box : callable
        ``X -> phi(X)`` for one input ``X`` of shape ``(d, tokens)``.
    d : int
        The token dimension.
    tokens : int
        Number of tokens of each input (any ``t >= 1``).
    samples : int, optional
        Number of constant inputs, at least ``d`` (default ``d``).
    rng : numpy.random.Generator, int or None
        For the random ``x``.

    Returns
    -------
    ndarray of shape ``(d', d)``

    Examples
    --------
    >>> A, V = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([[1.0, -1.0]])
    >>> layer = layer_from_attention(A, V)
    >>> V_rec = recover_values(lambda X: layer_forward(layer, X, normalization="softmax"), 2, rng=0)
    >>> np.allclose(V_rec, V)
    True
    """
    _checks.function("black_box", black_box, "X -> phi(X)")
    d = _checks.positive_int("d", d)
    tokens = _checks.positive_int("tokens", tokens)
    samples = d if samples is None else _checks.integer("samples", samples, d)
    x = as_generator(rng).normal(size=(samples, d))
    Y = _evaluate(black_box, np.repeat(x[:, :, None], tokens, axis=2))[:, :, 0]
    return np.linalg.lstsq(x, Y, rcond=None)[0].T


def recover_attention(black_box: Callable, V: ArrayLike, *, tokens: int = 3,
                      samples: int | None = None,
                      scale: float = 0.5, rng: Seed = None) -> np.ndarray:
    """``A`` of a softmax layer with known ``V``, from inputs ``X = [x, y, ..., y]``.

    Put ``l = (y - x)^T A x`` (key ``y`` against key ``x``, both seen from the query ``x``).
    The ``t - 1`` copies of ``y`` get the total weight ``w = sigmoid(l + log(t - 1))``, so the
    first output column is [derived]

        phi(X)_{:, 1} = V x + w V (y - x).

    Knowing ``V``, ``w`` is the least-squares coefficient of ``V (y - x)`` in
    ``phi(X)_{:, 1} - V x``, and ``l = log(w / (1 - w)) - log(t - 1)``. Likewise the second
    column gives ``(x - y)^T A y``. Each logit difference is the linear function
    ``<(y - x) x^T, A>`` of ``A``; ``samples`` (default ``d^2``) random pairs, Gaussian of
    standard deviation ``scale`` (small logits keep ``w`` away from 0 and 1), determine ``A``
    by least squares. This needs ``V (y - x) != 0``: true for random ``x, y`` when ``V != 0``.

    Parameters
    ----------
    black_box : callable
        ``X -> phi(X)`` for one input ``X`` of shape ``(d, tokens)``.
    V : array_like of shape ``(d', d)``
        The values of the layer (e.g. from :func:`recover_values`).
    tokens : int
        Number of tokens of each input, ``t >= 2``.
    samples : int, optional
        Number of pairs ``(x, y)``, at least ``d^2`` (default ``d^2``).
    scale : float
        Standard deviation of the random tokens.
    rng : numpy.random.Generator, int or None
        For the random pairs.

    Returns
    -------
    ndarray of shape ``(d, d)``

    Raises
    ------
    ValueError
        If an argument is invalid or an attention weight read off ``black_box`` is not in
        ``(0, 1)`` (then it is not a softmax layer with values ``V``).

    Examples
    --------
    >>> A, V = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([[1.0, -1.0]])
    >>> layer = layer_from_attention(A, V)
    >>> A_rec = recover_attention(lambda X: layer_forward(layer, X, normalization="softmax"), V,
    ...                           rng=0)
    >>> np.allclose(A_rec, A)
    True
    """
    _checks.function("black_box", black_box, "X -> phi(X)")
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.size == 0 or not np.all(np.isfinite(V)) or not np.any(V):
        raise ValueError(f"V must be a finite, non-zero d' x d matrix, got shape {V.shape}")
    d = V.shape[1]
    tokens = _checks.integer("tokens", tokens, 2)
    samples = d * d if samples is None else _checks.integer("samples", samples, d * d)
    scale = _checks.finite_positive("scale", scale)
    rng = as_generator(rng)
    x, y = scale * rng.normal(size=(2, samples, d))
    X = np.concatenate([x[:, :, None], np.repeat(y[:, :, None], tokens - 1, axis=2)], axis=2)
    out = _evaluate(black_box, X)
    shift = log(tokens - 1)
    rows, logits = [], []
    for query, other, column, offset in ((x, y, 0, -shift), (y, x, 1, shift)):
        u = (other - query) @ V.T                            # V (other - query)
        rest = out[:, :, column] - query @ V.T               # w V (other - query)
        w = np.einsum("ns,ns->n", u, rest) / np.einsum("ns,ns->n", u, u)
        if not np.all((w > 0) & (w < 1)):
            bad = w[(w <= 0) | (w >= 1)][0]
            raise ValueError("black_box is not a softmax self-attention layer with values V: "
                             f"attention weights outside (0, 1), e.g. {bad!r}")
        logits.append(np.log(w) - np.log1p(-w) + offset)
        rows.append(np.einsum("ni,nj->nij", other - query, query).reshape(samples, d * d))
    solution = np.linalg.lstsq(np.concatenate(rows), np.concatenate(logits), rcond=None)[0]
    return solution.reshape(d, d)


def recover_softmax_layer(black_box: Callable, d: int, *, tokens: int = 3, rng: Seed = None,
                          checks: int = 4, rtol: float = 1e-9) -> SoftmaxRecovery:
    """Recover ``(A, V)`` of a softmax layer ``phi(X) = V X S(X^T A X)`` from evaluations only.

    First ``V`` from constant inputs (:func:`recover_values`), then ``A`` from inputs
    ``[x, y, ..., y]`` (:func:`recover_attention`). The result is ``(A, V)`` itself: the
    softmax leaves no scaling ``(lambda A, V / lambda)`` free, and the paper's theorem that one
    normalized layer is generically one-to-one in ``(A, V)`` [paper] is seen at work. The
    argument needs only ``V != 0`` and ``t >= 2`` [derived]. ``black_box`` maps a ``d x tokens``
    input to the layer's output. The residual, ``max |phi(X) - phi_rec(X)| / max |phi(X)|`` on
    ``checks`` random Gaussian inputs, is reported against ``rtol`` in the result's ``repr``.

    Examples
    --------
    >>> A, V = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([[1.0, -1.0]])
    >>> layer = layer_from_attention(A, V)
    >>> rec = recover_softmax_layer(lambda X: layer_forward(layer, X, normalization="softmax"), 2,
    ...                             rng=0)
    >>> rec
    SoftmaxRecovery(d=2, d_out=1, residual<1e-09): (A, V) itself, no scaling left
    >>> np.allclose(rec.A, A), np.allclose(rec.V, V)
    (True, True)
    """
    _checks.function("black_box", black_box, "X -> phi(X)")
    d = _checks.positive_int("d", d)
    tokens = _checks.integer("tokens", tokens, 2)
    checks = _checks.positive_int("checks", checks)
    rtol = _checks.fraction("rtol", rtol)
    rng = as_generator(rng)
    V = recover_values(black_box, d, tokens=tokens, rng=rng)
    if not np.any(np.abs(V) > 1e-12 * max(1.0, np.abs(V).max())):
        raise ValueError("black_box must not be the zero function (V = 0 hides A), got V = 0")
    A = recover_attention(black_box, V, tokens=tokens, rng=rng)
    X = rng.normal(size=(checks, d, tokens))
    want = _evaluate(black_box, X)
    got = layer_forward(layer_from_attention(A, V), X, normalization="softmax")
    residual = float(np.abs(got - want).max() / max(np.abs(want).max(), np.finfo(float).tiny))
    return SoftmaxRecovery(A, V, residual, rtol)
