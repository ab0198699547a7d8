"""Identifiability of one lightning layer: recover ``(A, V)`` from black-box evaluations."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .network import layer_forward
from .symmetries import FIBER_CASES, FiberCase
from .weights import Layer, as_generator, layer_from_attention

__all__ = ["Recovery", "factor_quadric", "quadric_matrices", "recover_layer"]

_STORIES = dict(zip(FIBER_CASES, (
    "phi = 0, the fiber is {A = 0} u {V = 0}",
    "two candidates, exchanged by the rank-one swap",
    "(A, V) up to (lambda A, V / lambda)",
)))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Recovery:
    """Weights ``(A, V)`` recovered from a black box, the case of the fiber theorem, and the fit.

    ``case`` (one of :data:`~lsa_helpers.symmetries.FIBER_CASES`) is ``"curve"`` (the function
    fixes ``(A, V)`` up to ``(lambda A, V / lambda)``),
    ``"swap"`` (``rk A = rk V = 1``: ``alternative`` holds the other candidate, the rank-one swap
    of ``(A, V)``) or ``"zero"`` (``phi = 0``; ``A`` and ``V`` are zero). ``ranks`` are
    ``(rk A, rk V)`` as read from the evaluations; ``residual`` is
    ``max |phi_rec(X) - phi(X)| / max |phi(X)|`` on random inputs.
    """

    A: np.ndarray
    V: np.ndarray
    case: FiberCase
    ranks: tuple[int, int]
    residual: float
    alternative: tuple[np.ndarray, np.ndarray] | None = None
    rtol: float = 1e-9

    @property
    def layer(self) -> Layer:
        """The recovered weights as a layer (``Q = A``, ``K = I``)."""
        return layer_from_attention(self.A, self.V)

    @property
    def candidates(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """``((A, V),)``, or both candidates ``((A, V), alternative)`` in the swap case."""
        first = (self.A, self.V)
        return (first,) if self.alternative is None else (first, self.alternative)

    def __repr__(self) -> str:
        fit = (f"residual<{self.rtol:.0e}" if self.residual < self.rtol
               else f"residual={self.residual:.2e}")
        return (f"Recovery(case={self.case!r}, rank_A={self.ranks[0]}, rank_V={self.ranks[1]}, "
                f"{fit}): {_STORIES[self.case]}")


def _evaluate(black_box: Callable, X: np.ndarray) -> np.ndarray:
    Y = np.asarray(black_box(X), dtype=np.float64)
    if Y.ndim != 2 or Y.shape[1] != X.shape[1]:
        raise ValueError(f"black_box must map a d x t input to a d' x t output, got shape "
                         f"{Y.shape} for a {X.shape[0]} x {X.shape[1]} input")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"black_box must return finite values, got {Y.tolist()}")
    return Y


def quadric_matrices(black_box: Callable, d: int) -> np.ndarray:
    """The symmetric matrices ``M[s, f]`` of the quadrics ``q_{s,f}(x) = (v_s . x)(a_f . x)``.

    Two tokens ``X = [x, e_f]`` give, in the second output column,
    ``(x^T A e_f) V x + (e_f^T A e_f) V e_f``, so

        q_{s,f}(x) = phi([x, e_f])_{s,2} - phi([0, e_f])_{s,2} = (v_s . x)(a_f . x)

    with ``v_s`` row ``s`` of ``V`` and ``a_f = A e_f`` column ``f`` of ``A``. Its matrix
    ``M[s, f] = sym(v_s a_f^T)`` follows by polarization: ``M_ii = q(e_i)`` and
    ``M_ij = (q(e_i + e_j) - q(e_i) - q(e_j)) / 2``; ``d (d (d + 1) / 2 + 1)`` evaluations.

    Parameters
    ----------
    black_box : callable
        ``X -> phi(X)`` for one input ``X`` of shape ``(d, t)``, any ``t``.
    d : int
        The token dimension.

    Returns
    -------
    ndarray of shape ``(d', d, d, d)``

    Examples
    --------
    >>> A, V = np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([[1.0, -1.0]])
    >>> M = quadric_matrices(lambda X: V @ X @ X.T @ A @ X, 2)
    >>> M[0, 1]                  # sym(v_0 a_1^T) with v_0 = (1, -1), a_1 = (2, 1)
    array([[ 2. , -0.5],
           [-0.5, -1. ]])
    """
    _checks.function("black_box", black_box, "X -> phi(X)")
    d = _checks.positive_int("d", d)
    eye = np.eye(d)

    def q(x: np.ndarray, f: int) -> np.ndarray:  # the values (q_{s,f}(x))_s
        return _evaluate(black_box, np.column_stack([x, eye[f]]))[:, 1] - base[f]

    base = [_evaluate(black_box, np.column_stack([np.zeros(d), eye[f]]))[:, 1] for f in range(d)]
    M = np.zeros((len(base[0]), d, d, d))
    for f in range(d):
        diagonal = [q(eye[i], f) for i in range(d)]
        for i in range(d):
            M[:, f, i, i] = diagonal[i]
            for j in range(i + 1, d):
                mixed = q(eye[i] + eye[j], f)
                M[:, f, i, j] = M[:, f, j, i] = (mixed - diagonal[i] - diagonal[j]) / 2
    return M


def factor_quadric(M: ArrayLike, *, rtol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Split the quadric ``x^T M x`` into two linear forms: ``x^T M x = (p . x)(m . x)``.

    A real quadric is such a product exactly when ``M`` has at most one positive eigenvalue
    ``lambda_1`` and at most one negative ``lambda_2``. Then, with unit eigenvectors ``u_1, u_2``
    (a missing eigenvalue counts as 0),

        p = sqrt(lambda_1) u_1 + sqrt(-lambda_2) u_2,
        m = sqrt(lambda_1) u_1 - sqrt(-lambda_2) u_2,

    since ``sym(p m^T) = lambda_1 u_1 u_1^T + lambda_2 u_2 u_2^T = M``. By unique factorization the
    unordered pair of lines ``{p, m}`` is all that ``M`` determines: ``(p, m) -> (c p, m / c)``.
    Eigenvalues below ``rtol`` times the largest are treated as 0.

    Examples
    --------
    >>> M = np.array([[1.0, 0.0], [0.0, -1.0]])          # x1^2 - x2^2 = (x1 + x2)(x1 - x2)
    >>> p, m = factor_quadric(M)
    >>> np.abs(p), np.abs(m)                        # the lines x1 + x2 and x1 - x2, up to sign
    (array([1., 1.]), array([1., 1.]))
    >>> np.allclose((np.outer(p, m) + np.outer(m, p)) / 2, M)
    True
    """
    M = np.asarray(M, dtype=np.float64)
    square = M.ndim == 2 and M.shape[0] == M.shape[1]
    if not square or not np.allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max()):
        raise ValueError(f"M must be a symmetric square matrix, got shape {M.shape}")
    eigenvalues, U = np.linalg.eigh(M)
    eigenvalues[np.abs(eigenvalues) <= rtol * np.abs(eigenvalues).max()] = 0.0
    if np.sum(eigenvalues > 0) > 1 or np.sum(eigenvalues < 0) > 1:
        raise ValueError("M must have at most one positive and one negative eigenvalue (a product "
                         f"of two linear forms), got eigenvalues "
                         f"{np.round(eigenvalues, 6).tolist()}")
    plus = np.sqrt(max(eigenvalues[-1], 0.0)) * U[:, -1]
    minus = np.sqrt(max(-eigenvalues[0], 0.0)) * U[:, 0]
    return plus + minus, plus - minus


def _rank(M: np.ndarray, rtol: float) -> int:
    s = np.linalg.svd(M, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s[0] > 0 else 0


def _divides(c: np.ndarray, Ms: np.ndarray) -> float:
    """How far ``c . x`` is from dividing each ``x^T M x``: ``|P M P| / |M|``, ``P`` onto ``c⊥``.

    A linear form divides a quadric exactly when the quadric vanishes on its hyperplane.
    """
    P = np.eye(len(c)) - np.outer(c, c) / (c @ c)
    return float(np.linalg.norm(P @ Ms @ P) / np.linalg.norm(Ms))


def _other_factors(known: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Least-squares ``x_m`` with ``grid[n, m] = sym(known_n x_m^T)`` (linear in ``x_m``)."""
    n, d = known.shape
    eye = np.eye(d)
    L = (np.einsum("ni,jl->nijl", known, eye) + np.einsum("il,nj->nijl", eye, known)) / 2
    rhs = grid.transpose(0, 2, 3, 1).reshape(n * d * d, -1)
    return np.linalg.lstsq(L.reshape(n * d * d, d), rhs, rcond=None)[0].T


def _common_factor(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A, V)`` from ``M[s, f] = sym(v_s a_f^T)`` when the ``a_f`` span two dimensions or more."""
    s0, f0 = np.unravel_index(np.argmax(np.linalg.norm(M, axis=(2, 3))), M.shape[:2])
    v = min(factor_quadric(M[s0, f0]), key=lambda c: _divides(c, M[s0]))  # v_s0 / lambda
    A = _other_factors(v[None], M[s0][None]).T  # columns lambda a_f
    return A, _other_factors(A.T, M.swapaxes(0, 1))  # rows v_s / lambda


def _rank_one(M: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Both candidates if ``M[s, f] = v_s q_f sym(z k^T)``: ``(p q^T, v m^T)``, ``(m q^T, v p^T)``.

    ``{p, m}`` are the two factors of ``sym(z k^T)``; either may be the key ``k``.
    """
    s0, f0 = np.unravel_index(np.argmax(np.linalg.norm(M, axis=(2, 3))), M.shape[:2])
    p, m = factor_quadric(M[s0, f0])
    # M[s, f] = c[s, f] M[s0, f0] with c = outer(v, q) normalised to c[s0, f0] = 1
    c = np.einsum("sfij,ij->sf", M, M[s0, f0]) / np.sum(M[s0, f0] ** 2)
    v, q = c[:, f0], c[s0]
    return (np.outer(p, q), np.outer(v, m)), (np.outer(m, q), np.outer(v, p))


def recover_layer(black_box: Callable, d: int, *, rng: Seed = None, tokens: int = 3,
                  samples: int = 4,
                  rtol: float = 1e-9) -> Recovery:
    """Recover ``(A, V)`` of a lightning layer ``phi(X) = V X X^T A X`` from evaluations only.

    1. Quadrics (:func:`quadric_matrices`): ``M[s, f] = sym(v_s a_f^T)``.
    2. Factor each into its unordered pair of linear forms (:func:`factor_quadric`).
    3. Unique factorization: if ``rk A >= 2``, the factor of ``M[s, f]`` shared by all ``f`` is
       ``v_s``; given it, every ``a_f`` follows linearly, and then every ``v_s``, with one
       common scale. (If ``rk A = 1`` and ``rk V >= 2``, the roles of ``v`` and ``a`` exchange.)
       So the result is ``(lambda A, V / lambda)`` for one ``lambda != 0``.
    4. ``rk A = rk V = 1``: all quadrics are multiples of ``sym(z k^T)``, whose two factors can
       play either role; both candidates are returned (case ``"swap"``). ``phi = 0``: ``"zero"``.

    ``rk A`` and ``rk V`` are read from the evaluations: they are the ranks of ``M`` flattened
    along ``f`` and along ``s``. The residual is measured on ``samples`` random Gaussian inputs
    with ``tokens`` tokens.

    Parameters
    ----------
    black_box : callable
        ``X -> phi(X)`` for one input of shape ``(d, t)``, any ``t >= 2``.
    d : int
        The token dimension.
    rng : numpy.random.Generator, int or None
        For the inputs of the residual check (the recovery itself is deterministic).
    tokens, samples : int
        Shape and number of the check inputs.
    rtol : float
        Relative tolerance of the numerical ranks.

    Returns
    -------
    Recovery

    Raises
    ------
    ValueError
        If an argument is invalid or ``black_box`` is not a lightning self-attention layer.

    Notes
    -----
    By the one-layer fiber theorem [paper] the answer is the best possible: the function
    determines ``(A, V)`` exactly up to ``(lambda A, V / lambda)``, except in the rank-one and
    zero cases.

    Examples
    --------
    >>> A, V = np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([[1.0, -1.0]])
    >>> rec = recover_layer(lambda X: V @ X @ X.T @ A @ X, 2, rng=0)
    >>> rec
    Recovery(case='curve', rank_A=2, rank_V=1, residual<1e-09): (A, V) up to (lambda A, V / lambda)
    >>> lam = rec.A[0, 0] / A[0, 0]
    >>> np.allclose(rec.A, lam * A), np.allclose(lam * rec.V, V)
    (True, True)
    """
    tokens = _checks.integer("tokens", tokens, 2)
    samples = _checks.positive_int("samples", samples)
    rtol = _checks.fraction("rtol", rtol)
    rng = as_generator(rng)
    M = quadric_matrices(black_box, d)
    d_out = M.shape[0]
    ranks = (_rank(M.swapaxes(0, 1).reshape(d, -1), rtol), _rank(M.reshape(d_out, -1), rtol))
    alternative = None
    zero, swap, curve = FIBER_CASES
    try:
        if ranks[0] == 0:
            case, A, V = zero, np.zeros((d, d)), np.zeros((d_out, d))
        elif ranks == (1, 1):
            case, (A, V), alternative = swap, *_rank_one(M)
        elif ranks[0] >= 2:
            case, (A, V) = curve, _common_factor(M)
        else:
            case, (At, Vt) = curve, _common_factor(M.swapaxes(0, 1))
            A, V = Vt.T, At.T
    except ValueError as error:
        raise ValueError(f"black_box is not a lightning self-attention layer: {error}") from None
    X = rng.normal(size=(samples, d, tokens))
    want = np.stack([_evaluate(black_box, x) for x in X])
    got = layer_forward(layer_from_attention(A, V), X)
    residual = float(np.abs(got - want).max() / max(np.abs(want).max(), np.finfo(float).tiny))
    return Recovery(A, V, case, ranks, residual, alternative, rtol)
