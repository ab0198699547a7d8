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

CLEAR_GAP = 1e4
"""A float rank is trusted when the kept and dropped singular values differ by this factor."""


@dataclasses.dataclass(frozen=True)
class FloatRank:
    """A numerical rank with its evidence: ``rank`` singular values above ``tolerance``.

    ``kept`` is the smallest kept and ``dropped`` the largest dropped singular value, both relative
    to the largest (``dropped`` is None when nothing was dropped). ``gap = kept / dropped``
    (infinite when the dropped values are exactly zero); for a full rank, where nothing was
    dropped, ``gap = kept / tolerance``, the margin above the cut.
    """

    rank: int
    kept: float
    dropped: float | None
    tolerance: float

    @property
    def gap(self) -> float:
        if self.rank == 0:
            return 0.0
        below = self.tolerance if self.dropped is None else self.dropped
        return np.inf if below == 0 else self.kept / below

    @property
    def is_clear(self) -> bool:
        """Whether the gap is at least :data:`CLEAR_GAP`."""
        return bool(self.gap >= CLEAR_GAP)

    @property
    def verdict(self) -> str:
        """``"clear"`` or ``"UNCLEAR"``, by :attr:`is_clear`."""
        return "clear" if self.is_clear else "UNCLEAR"

    def __repr__(self) -> str:
        return f"FloatRank(rank={self.rank}, gap={self.gap:.1e}, {self.verdict})"


def float_rank(M) -> FloatRank:
    """Rank of ``M`` by SVD after scaling rows and columns to unit norm (which keeps the rank).

    Singular values above ``max(M.shape) * eps * s_max`` count, as in ``numpy.linalg.matrix_rank``.

    Examples
    --------
    >>> float_rank(np.diag([2.0, 1.0, 0.0]))
    FloatRank(rank=2, gap=inf, clear)
    """
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or not np.all(np.isfinite(M)):
        raise ValueError(f"M must be a finite 2-D array, got shape {M.shape}")
    tolerance = max(M.shape) * np.finfo(np.float64).eps
    M = M / _norms(M, axis=1)[:, None]
    M /= _norms(M, axis=0)
    s = np.linalg.svd(M, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return FloatRank(0, 0.0, None, tolerance)
    s = s / s[0]
    rank = int(np.count_nonzero(s > tolerance))
    dropped = float(s[rank]) if rank < s.size else None
    return FloatRank(rank, float(s[rank - 1]), dropped, tolerance)


def _norms(M: np.ndarray, axis: int) -> np.ndarray:
    """Euclidean norms along ``axis``, with 1 in place of 0, scaled first so no square overflows."""
    top = np.max(np.abs(M), axis=axis, initial=0.0)
    top = np.where(top == 0, 1.0, top)
    scaled = M / (top if axis == 0 else top[:, None])
    norms = top * np.sqrt(np.einsum("ij,ij->j" if axis == 0 else "ij,ij->i", scaled, scaled))
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


def check_prime(modulus) -> int:
    """``modulus`` as an ``int``, after checking that it is a prime ``p`` with ``2 <= p < 2^62``.

    A composite modulus has no inverses to eliminate with (FLINT would abort the process).

    >>> check_prime(7)
    7
    """
    import flint

    ok = (isinstance(modulus, (int, np.integer)) and not isinstance(modulus, bool)
          and 2 <= modulus < MAX_PRIME and flint.fmpz(int(modulus)).is_prime())
    if not ok:
        raise ValueError(f"modulus must be a prime p with 2 <= p < 2^62, got modulus={modulus!r}")
    return int(modulus)


def exact_integers(values, name: str) -> np.ndarray:
    """``values`` as an integer array (int64, or Python ints beyond it), refusing anything else.

    Floats must be finite integers of magnitude below ``2^53``, where float64 is exact; a larger
    float may not be the integer that was meant, so its residue mod p would be wrong.
    """
    A = np.asarray(values)
    if A.dtype.kind in "iub" or (A.dtype == object and all(
            isinstance(x, (int, np.integer)) for x in A.flat)):
        return A
    if A.dtype.kind != "f" or A.size and not (np.all(np.isfinite(A))
                                              and np.array_equal(A, np.round(A))):
        raise ValueError(f"{name} must be a 2-D array of integers, got shape {A.shape}"
                         if name == "M" else f"{name} must be integers when a modulus is given")
    if A.size and np.max(np.abs(A)) >= EXACT_FLOAT:
        raise ValueError(f"{name} must be integers below 2^53 in magnitude when given as floats "
                         f"(float64 is not exact beyond), got {np.max(np.abs(A)):.3g}")
    return A.astype(np.int64)


def nmod_matrix(M: np.ndarray, modulus: int):
    """The integer matrix ``M`` as a FLINT ``nmod_mat`` over ``Z/pZ``."""
    import flint

    entries = np.mod(M, modulus).astype(np.int64).ravel().tolist()
    return flint.nmod_mat(M.shape[0], M.shape[1], entries, modulus)


def mod_matmul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """``A B mod p`` for float64 residues, exactly: BLAS products over slices of the inner
    dimension short enough that no partial sum reaches ``2^53``."""
    step = max(1, (EXACT_FLOAT - 1) // (p - 1) ** 2)
    out = np.zeros((A.shape[0], B.shape[1]))
    for start in range(0, A.shape[1], step):
        out += A[:, start:start + step] @ B[start:start + step]
        out = np.mod(out, p) if A.shape[1] > step else out
    return np.mod(out, p)


@dataclasses.dataclass(frozen=True)
class RowSpace:
    """The span mod ``p`` of the rows seen so far, in reduced echelon form ``[I | F]``.

    Basis row ``i`` is 1 in column ``pivots[i]``, 0 in the other pivot columns and ``F[i]`` in the
    free columns (the others, in order). New rows ``X`` are reduced by one product,
    ``X_free - X_pivots F``, and only that residual is eliminated (FLINT); the new rows of ``F`` are
    read back from FLINT only when the next rows come, so a last round costs its rank alone.

    >>> space = RowSpace(7, 3).extend(np.array([[1., 2, 3], [2, 4, 6]]))
    >>> space.rank, space.extend(np.array([[0., 1, 1], [1, 3, 4]])).rank
    (1, 2)
    """

    modulus: int
    width: int
    pivots: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))
    F: np.ndarray | None = None
    pending: tuple | None = None  # (FLINT's echelon form of the last residual, its rank)

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

    def extend(self, X: np.ndarray) -> RowSpace:
        """The span of these rows and of the rows of ``X`` (float64 residues mod ``p``)."""
        residual = self.reduce(np.asarray(X, dtype=np.float64))
        residual = residual[np.any(residual != 0, axis=1)]
        if residual.shape[0] == 0:
            return self
        pivots, F = self.basis
        echelon, new = nmod_matrix(residual, self.modulus).rref()
        return RowSpace(self.modulus, self.width, pivots, F, (echelon, new) if new else None)
