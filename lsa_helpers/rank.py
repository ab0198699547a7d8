"""Ranks of Jacobians: float64 with its singular-value gap, and exact mod a prime through FLINT."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

__all__ = [
    "CLEAR_GAP",
    "PRIME",
    "FloatRank",
    "RowSpace",
    "check_prime",
    "exact_integers",
    "exact_rank",
    "float_rank",
    "mod_matmul",
]

PRIME = 1048573
"""The largest prime below ``2^20``: residues multiply exactly in float64 (``check_modulus``)."""

MAX_PRIME = 2**62
"""Moduli must lie below this: FLINT's ``nmod_mat`` works with word-size residues."""

EXACT_FLOAT = 2**53
"""float64 holds every integer of smaller magnitude exactly, and not every larger one."""

EPS = float(np.finfo(np.float64).eps)
"""The rounding unit of float64, ``2^-52``."""

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
    def verdict(self) -> str:
        """``"clear"`` or ``"UNCLEAR"``, by :attr:`is_clear`."""
        return "clear" if self.is_clear else "UNCLEAR"

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


def float_rank(M) -> FloatRank:
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
    A = np.asarray(M)
    try:
        A = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)
    except (TypeError, ValueError):
        A = np.full(A.shape, np.nan)
    if A.ndim != 2 or not np.all(np.isfinite(A)):
        raise ValueError(f"M must be a finite 2-D array of numbers, got shape {A.shape}")
    tolerance = max(A.shape) * EPS
    A = A / _nonzero(np.max(np.abs(A), axis=1, initial=0.0))[:, None]  # so no square overflows
    A = A / _nonzero(np.linalg.norm(A, axis=1))[:, None]
    columns = _nonzero(np.max(np.abs(A), axis=0, initial=0.0))
    columns = columns * np.linalg.norm(A / columns, axis=0)
    A = A / _nonzero(columns)
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return FloatRank(0, 0.0, None, tolerance)
    with np.errstate(over="ignore", divide="ignore"):
        lifted = EPS * np.sqrt(A.shape[0] * np.sum(columns[columns > 0] ** -2.0)) / s[0]
    s = s / s[0]
    rank = int(np.count_nonzero(s > tolerance))
    found = FloatRank(rank, float(s[rank - 1]), float(s[rank]) if rank < s.size else None,
                      tolerance)
    if found.kept <= lifted:
        found = found.doubted(
            f"the column scaling lifts rounding errors to {lifted:.1e}, up to the smallest kept "
            f"singular value {found.kept:.1e}: kept directions may be rounding errors")
    return found


def _nonzero(norms: np.ndarray) -> np.ndarray:
    """``norms`` with 1 in place of 0, to divide by."""
    return np.where(norms == 0, 1.0, norms)


def exact_rank(M, modulus: int = PRIME) -> int:
    """Rank over ``Z/pZ`` of an integer matrix: a lower bound on its rank over Q.

    Examples
    --------
    >>> exact_rank([[1, 2], [2, 4]], 7), exact_rank([[1, 2], [3, 4]], 2)
    (1, 1)
    """
    p = check_prime(modulus)
    M = exact_integers(M, "M")
    if M.ndim != 2:
        raise ValueError(f"M must be a 2-D array of integers, got shape {M.shape}")
    return 0 if 0 in M.shape else nmod_matrix(M, p).rank()


def check_prime(modulus, *, inner: int = 0, name: str = "modulus") -> int:
    """``modulus`` as an ``int``, after checking that it is a prime ``p`` with ``2 <= p < 2^62``
    and, for ``inner >= 1``, that ``inner (p - 1)^2 < 2^53``: float64 products of residues with
    ``inner`` terms are then exact.

    A composite modulus has no inverses to eliminate with (FLINT would abort the process).

    >>> check_prime(7)
    7
    """
    import flint

    ok = (isinstance(modulus, (int, np.integer)) and not isinstance(modulus, bool)
          and 2 <= modulus < MAX_PRIME and flint.fmpz(int(modulus)).is_prime())
    if not ok:
        raise ValueError(f"{name} must be a prime p with 2 <= p < 2^62, got {name}={modulus!r}")
    if inner * (int(modulus) - 1) ** 2 >= EXACT_FLOAT:
        factor = f"{inner} * " if inner > 1 else ""
        raise ValueError(f"{name} must satisfy {factor}({name} - 1)^2 < 2^53 for exact float64 "
                         f"products, got {name}={modulus}")
    return int(modulus)


def exact_integers(values, name: str) -> np.ndarray:
    """``values`` as an integer array (int64, or Python ints beyond it), refusing anything else.

    Floats must be finite integers of magnitude below ``2^(m + 1)`` for ``m`` mantissa bits
    (``2^53`` for float64, ``2^24`` for float32, ``2^11`` for float16), where they are exact; a
    larger float may not be the integer that was meant, so its residue mod p would be wrong.
    """
    A = np.asarray(values)
    if A.dtype.kind in "iub":
        wide = A.dtype == np.uint64 and A.size and A.max() > np.iinfo(np.int64).max
        return A.astype(object) if wide else A.astype(np.int64)
    if A.dtype == object and all(isinstance(x, (int, np.integer)) for x in A.flat):
        return np.array([int(x) for x in A.flat], dtype=object).reshape(A.shape)
    if A.dtype.kind != "f" or A.size and not (np.all(np.isfinite(A))
                                              and np.array_equal(A, np.round(A))):
        raise ValueError(f"{name} must be a 2-D array of integers, got shape {A.shape}"
                         if name == "M" else f"{name} must be integers when a modulus is given")
    bits = min(np.finfo(A.dtype).nmant + 1, 63)
    if A.size and np.max(np.abs(A)) >= 2.0**bits:
        raise ValueError(f"{name} must be integers below 2^{bits} in magnitude when given as "
                         f"{A.dtype} ({A.dtype} is not exact beyond), got {np.max(np.abs(A)):.3g}")
    return A.astype(np.int64)


def nmod_matrix(M: np.ndarray, modulus: int):
    """The integer matrix ``M`` as a FLINT ``nmod_mat`` over ``Z/pZ``."""
    import flint

    entries = np.mod(M, modulus).astype(np.int64).ravel().tolist()
    return flint.nmod_mat(M.shape[0], M.shape[1], entries, modulus)


def mod_matmul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """``A B mod p`` for residues mod ``p`` held in float64 (a prime with ``(p - 1)^2 < 2^53``),
    exactly: BLAS products over slices of the inner dimension short enough that no partial sum
    reaches ``2^53``."""
    p = check_prime(p, inner=1, name="p")
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"A and B must be 2-D with A's columns matching B's rows, got {A.shape} "
                         f"and {B.shape}")
    for name, X in (("A", A), ("B", B)):
        if not np.all((X >= 0) & (X < p) & (X == np.floor(X))):
            raise ValueError(f"{name} must be residues mod {p} (integers from 0 to {p - 1}), "
                             f"got shape {X.shape}")
    step = (EXACT_FLOAT - p) // (p - 1) ** 2  # a residue below p plus step products of them
    out = np.zeros((A.shape[0], B.shape[1]))
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

    def __post_init__(self):
        object.__setattr__(self, "modulus", check_prime(self.modulus, inner=1))
        if (not isinstance(self.width, (int, np.integer)) or isinstance(self.width, bool)
                or self.width < 0):
            raise ValueError(f"width must be a non-negative integer, got width={self.width!r}")

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

    def extend(self, X) -> RowSpace:
        """The span of these rows and of the integer rows of ``X`` (reduced mod ``p``)."""
        X = exact_integers(X, "X")
        if X.ndim != 2 or X.shape[1] != self.width:
            raise ValueError(f"X must have shape (rows, {self.width}), got {X.shape}")
        residual = self.reduce(np.mod(X, self.modulus).astype(np.float64))
        residual = residual[np.any(residual != 0, axis=1)]
        if residual.shape[0] == 0:
            return self
        pivots, F = self.basis
        echelon, new = nmod_matrix(residual, self.modulus).rref()
        return RowSpace(self.modulus, self.width, pivots, F, (echelon, new) if new else None)
