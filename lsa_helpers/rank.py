"""Ranks of Jacobians: float64 with its singular-value gap, and exact mod a prime through FLINT.

FLINT is imported here and nowhere else: exact ranks, kernels and inverses mod p.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeAlias, cast, get_args

import numpy as np

from . import _checks
from ._checks import EXACT_FLOAT
from ._types import ArrayLike

if TYPE_CHECKING:
    import flint

__all__ = [
    "CLEAR_GAP",
    "PRIME",
    "VERDICTS",
    "FloatRank",
    "exact_rank",
    "float_rank",
    "scaled_singular_values",
]

PRIME = 1048573
"""The largest prime below ``2^20``: residues multiply exactly in float64 (``check_modulus``)."""

Verdict = Literal["clear", "UNCLEAR"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
"""What :attr:`FloatRank.verdict` says of a float rank."""

EPS = float(np.finfo(np.float64).eps)
"""The rounding unit of float64, ``2^-52``."""

Reducer: TypeAlias = Callable[[np.ndarray], np.ndarray]
"""What :func:`reducer` returns: ``x -> x mod p`` on float64 residues, or the identity."""

CLEAR_GAP = 1e4
"""A float rank is trusted when the kept and dropped singular values differ by this factor."""


@dataclasses.dataclass(frozen=True)
class FloatRank:
    """A numerical rank with its evidence: ``rank`` singular values above ``tolerance``.

    ``kept`` is the smallest kept and ``dropped`` the largest dropped singular value, both relative
    to the largest (``dropped`` is None when nothing was dropped). ``gap = kept / dropped``
    (infinite when the dropped values are exactly zero); for a full rank, where nothing was
    dropped, ``gap = kept / tolerance``, the margin above the cut. ``doubts``: reasons other than
    the gap why the rank cannot be trusted, one line each.
    """

    rank: int
    kept: float
    dropped: float | None
    tolerance: float
    doubts: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        if self.rank == 0:
            return 0.0
        below = self.tolerance if self.dropped is None else self.dropped
        return np.inf if below == 0 else self.kept / below

    @property
    def is_clear(self) -> bool:
        """Whether the gap is at least :data:`CLEAR_GAP` and nothing casts doubt on the rank."""
        return bool(self.gap >= CLEAR_GAP) and not self.doubts

    @property
    def verdict(self) -> Verdict:
        """``"clear"`` or ``"UNCLEAR"`` (:data:`VERDICTS`), by :attr:`is_clear`."""
        return VERDICTS[0] if self.is_clear else VERDICTS[1]

    @property
    def reason(self) -> str | None:
        """Why the rank cannot be trusted, in one line; None when it is clear."""
        small = () if self.gap >= CLEAR_GAP else (f"gap {self.gap:.1e} below {CLEAR_GAP:.0e}",)
        return "; ".join(small + self.doubts) or None

    def doubted(self, reason: str) -> FloatRank:
        """The same rank with one more reason to doubt it."""
        return dataclasses.replace(self, doubts=(*self.doubts, reason))

    def __repr__(self) -> str:
        doubts = f": {'; '.join(self.doubts)}" if self.doubts else ""
        return f"FloatRank(rank={self.rank}, gap={self.gap:.1e}, {self.verdict}{doubts})"


def float_rank(M: ArrayLike) -> FloatRank:
    """Rank of ``M`` (real or complex) by SVD after scaling rows, then columns, to unit norm
    (which keeps the rank), with the evidence for it.

    Singular values above ``tolerance = max(M.shape) eps`` times the largest count, as in
    ``numpy.linalg.matrix_rank``. Entries are taken to be accurate to ``eps`` times the norm of
    their row, as the sums of products in a Jacobian are: a column of norm ``c_j`` among unit
    rows, scaled to norm 1, carries errors up to ``eps sqrt(m) / c_j``. The rank is doubted when
    these lifted errors, ``eps sqrt(m sum_j c_j^-2)`` in norm (relative to the largest singular
    value), reach the smallest kept singular value: below it, by Weyl's inequality, every kept
    direction is one of the matrix without its errors.

    Examples
    --------
    >>> float_rank(np.diag([2.0, 1.0, 0.0]))
    FloatRank(rank=2, gap=inf, clear)
    """
    A, columns, rows = _balanced(M)
    tolerance = max(A.shape[1], rows) * EPS
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return FloatRank(0, 0.0, None, tolerance)
    with np.errstate(over="ignore", divide="ignore"):
        lifted = EPS * np.sqrt(rows * np.sum(columns[columns > 0] ** -2.0)) / s[0]
    s = s / s[0]
    rank = int(np.count_nonzero(s > tolerance))
    found = FloatRank(rank, float(s[rank - 1]), float(s[rank]) if rank < s.size else None,
                      tolerance)
    if found.kept <= lifted:
        found = found.doubted(
            f"the column scaling lifts rounding errors to {lifted:.1e}, up to the smallest kept "
            f"singular value {found.kept:.1e}: kept directions may be rounding errors")
    return found


def scaled_singular_values(M: ArrayLike) -> np.ndarray:
    """The singular values that :func:`float_rank` cuts: those of ``M`` with rows, then columns,
    scaled to unit norm, relative to the largest (largest first; zeros for a zero matrix).

    Examples
    --------
    >>> scaled_singular_values(np.diag([4.0, 1e-3, 0.0])).tolist()
    [1.0, 1.0, 0.0]
    """
    s = np.linalg.svd(_balanced(M)[0], compute_uv=False)
    return s / s[0] if s.size and s[0] > 0 else s


def _balanced(M: ArrayLike) -> tuple[np.ndarray, np.ndarray, int]:
    """A matrix with the singular values of ``M`` with rows, then columns, scaled to unit norm
    (which keeps the rank), the norms of the columns after the row scaling, and ``M``'s rows.

    A tall ``M`` (more than twice as many rows as columns) is replaced after the row scaling by
    the triangular factor ``R`` of its QR decomposition: ``A = Q R`` with orthonormal columns
    ``Q`` keeps the singular values and the norm of each column, and Householder QR is backward
    stable column by column, so scaling the columns of ``R`` is scaling those of ``A``; the
    column scaling then touches ``n^2`` entries, not ``m n``.
    """
    A = np.asarray(M)
    try:
        A = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)
    except (TypeError, ValueError):
        A = np.full(A.shape, np.nan)
    if A.ndim != 2 or not np.all(np.isfinite(A)):
        raise ValueError(f"M must be a finite 2-D array of numbers, got shape {A.shape}")
    rows = A.shape[0]
    A /= _nonzero(np.max(np.abs(A), axis=1, initial=0.0))[:, None]  # so no square overflows
    A /= _nonzero(np.linalg.norm(A, axis=1))[:, None]
    if rows > 2 * A.shape[1]:
        A = cast(np.ndarray, np.linalg.qr(A, mode="r"))  # numpy's stubs: a QRResult
    columns = _nonzero(np.max(np.abs(A), axis=0, initial=0.0))
    columns = columns * np.linalg.norm(A / columns, axis=0)
    return A / _nonzero(columns), columns, rows


def _nonzero(norms: np.ndarray) -> np.ndarray:
    """``norms`` with 1 in place of 0, to divide by."""
    return np.where(norms == 0, 1.0, norms)


def exact_rank(M: ArrayLike, modulus: int = PRIME) -> int:
    """Rank over ``Z/pZ`` of an integer matrix: a lower bound on its rank over Q.

    Examples
    --------
    >>> exact_rank([[1, 2], [2, 4]], 7), exact_rank([[1, 2], [3, 4]], 2)
    (1, 1)
    """
    p = _checks.prime("modulus", modulus)
    M = _checks.integer_array("M", M)
    if M.ndim != 2:
        raise ValueError(f"M must be a 2-D array of integers, got shape {M.shape}")
    return 0 if 0 in M.shape else nmod_matrix(M, p).rank()


def nmod_matrix(M: np.ndarray, modulus: int) -> flint.nmod_mat:
    """The integer matrix ``M`` as a FLINT ``nmod_mat`` over ``Z/pZ``."""
    import flint

    entries = np.mod(M, modulus).astype(np.int64).ravel().tolist()
    return flint.nmod_mat(M.shape[0], M.shape[1], entries, modulus)


def mod_matmul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """``A B mod p`` for residues mod ``p`` held in float64 (a prime with ``(p - 1)^2 < 2^53``),
    exactly: BLAS products over slices of the inner dimension short enough that no partial sum
    reaches ``2^53``."""
    p = _checks.prime("p", p, inner=1)
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"A and B must be 2-D with A's columns matching B's rows, got {A.shape} "
                         f"and {B.shape}")
    for name, X in (("A", A), ("B", B)):
        if not np.all((X >= 0) & (X < p) & (X == np.floor(X))):
            raise ValueError(f"{name} must be residues mod {p} (integers from 0 to {p - 1}), "
                             f"got shape {X.shape}")
    step = (EXACT_FLOAT - p) // (p - 1) ** 2  # a residue below p plus step products of them
    out: np.ndarray = np.zeros((A.shape[0], B.shape[1]))
    for start in range(0, A.shape[1], step):
        out += A[:, start:start + step] @ B[start:start + step]
        out = np.mod(out, p) if A.shape[1] > step else out
    return np.mod(out, p)


@dataclasses.dataclass(frozen=True)
class RowSpace:
    """The span mod ``p`` of the rows seen so far, in reduced echelon form ``[I | F]``.

    ``p`` is a prime with ``(p - 1)^2 < 2^53`` (:func:`mod_matmul`); rows are integers of
    length ``width``. Basis row ``i`` is 1 in column ``pivots[i]``, 0 in the other pivot columns
    and ``F[i]`` in the free columns (the others, in order). New rows ``X`` are reduced by one
    product, ``X_free - X_pivots F``, and only that residual is eliminated (FLINT); the new rows
    of ``F`` are read back from FLINT only when the next rows come, so a last round costs its
    rank alone.

    >>> space = RowSpace(7, 3).extend(np.array([[1., 2, 3], [2, 4, 6]]))
    >>> space.rank, space.extend(np.array([[0., 1, 1], [1, 3, 4]])).rank
    (1, 2)
    """

    modulus: int
    width: int
    pivots: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))
    F: np.ndarray | None = None
    pending: tuple | None = None  # (FLINT's echelon form of the last residual, its rank)

    def __post_init__(self) -> None:
        object.__setattr__(self, "modulus", _checks.prime("modulus", self.modulus, inner=1))
        object.__setattr__(self, "width", _checks.nonnegative_int("width", self.width))

    @property
    def rank(self) -> int:
        return len(self.pivots) + (self.pending[1] if self.pending else 0)

    @functools.cached_property
    def basis(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pivots, F)``, with the pending echelon rows read back and merged in."""
        pivots = self.pivots
        F = np.zeros((0, self.width)) if self.F is None else self.F
        if self.pending is None:
            return pivots, F
        echelon, new = self.pending
        p, free = self.modulus, np.setdiff1d(np.arange(self.width), pivots)
        R = np.array([[int(x) for x in row] for row in echelon.tolist()[:new]], dtype=np.float64)
        lead = np.argmax(R != 0, axis=1)  # positions among the free columns
        rest = np.setdiff1d(np.arange(free.size), lead)
        G = R[:, rest]
        F = np.mod(F[:, rest] - mod_matmul(F[:, lead], G, p), p)
        return np.concatenate([pivots, free[lead]]), np.concatenate([F, G])

    def reduce(self, X: np.ndarray) -> np.ndarray:
        """The part of the rows ``X`` outside the span, on the free columns."""
        pivots, F = self.basis
        free = np.setdiff1d(np.arange(self.width), pivots)
        if pivots.size == 0:
            return X
        return np.mod(X[:, free] - mod_matmul(X[:, pivots], F, self.modulus), self.modulus)

    def extend(self, X: ArrayLike) -> RowSpace:
        """The span of these rows and of the integer rows of ``X`` (reduced mod ``p``)."""
        X = _checks.integer_array("X", X)
        if X.ndim != 2 or X.shape[1] != self.width:
            raise ValueError(f"X must have shape (rows, {self.width}), got {X.shape}")
        residual = self.reduce(np.mod(X, self.modulus).astype(np.float64))
        residual = residual[np.any(residual != 0, axis=1)]
        if residual.shape[0] == 0:
            return self
        pivots, F = self.basis
        echelon, new = nmod_matrix(residual, self.modulus).rref()
        return RowSpace(self.modulus, self.width, pivots, F, (echelon, new) if new else None)


def residues(x: np.ndarray, p: int) -> np.ndarray:
    """``x mod p`` for float64 integers ``|x| < 2^53 - p``, exactly: ``x - p floor(x / p)``, fixed.

    The quotient may be off by one where ``x / p`` rounds across an integer; one correction fixes
    that. Many times faster than ``np.mod`` on floats (in place on one new array).
    """
    r = x * (1.0 / p)
    np.floor(r, out=r)
    r *= p
    np.subtract(x, r, out=r)
    np.subtract(r, p, out=r, where=r >= p)
    np.add(r, p, out=r, where=r < 0)
    return r


def reducer(modulus: int | None) -> Reducer:
    """The map ``x -> x mod modulus`` (:func:`residues`), or the identity when ``modulus`` is None:
    what every computation that runs both in float64 and exactly mod p applies to its results."""
    return _identity if modulus is None else functools.partial(_reduce, p=modulus)


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def _reduce(x: np.ndarray, p: int) -> np.ndarray:
    return residues(np.asarray(x, dtype=np.float64), p)


def kernel(M: np.ndarray, modulus: int | None = None) -> np.ndarray:
    """A basis of ``{x : M x = 0}``, one vector per row: float64 SVD (singular values above
    ``max(M.shape) eps s_1`` count), or exactly mod ``modulus`` (FLINT ``nullspace``)."""
    rows, cols = M.shape
    if rows == 0:
        return np.eye(cols)
    if modulus is None:
        _, s, vt = np.linalg.svd(M)
        cut = max(M.shape) * EPS * (s[0] if s.size else 0.0)
        return vt[int(np.count_nonzero(s > cut)):]
    basis, nullity = nmod_matrix(M, modulus).nullspace()
    return np.array([[int(basis[r, c]) for r in range(cols)] for c in range(nullity)],
                    dtype=np.float64).reshape(nullity, cols)


def inverse(G: np.ndarray, modulus: int | None = None) -> np.ndarray | None:
    """``G^{-1}`` in float64, or mod ``modulus`` (FLINT); None if ``G`` is singular."""
    if modulus is None:
        return np.linalg.inv(G) if np.linalg.matrix_rank(G) == len(G) else None
    M = nmod_matrix(G, modulus)
    if int(M.det()) == 0:
        return None
    return np.array([[int(x) for x in row] for row in M.inv().tolist()], dtype=np.float64)
