"""Dimension of a neuromanifold: Jacobian ranks on adaptively many inputs, bounds, certificate."""

from __future__ import annotations

import dataclasses
import sys
from math import ceil

import numpy as np

from .architecture import Architecture
from .formulas import Formula, formula_dimension
from .forward import layer_forward
from .jacobian import check_modulus, jacobian
from .rank import CLEAR_GAP, PRIME, FloatRank, RowSpace, exact_rank, float_rank, mod_matmul
from .symmetries import fiber_tangents
from .weights import as_generator, random_inputs, random_weights

__all__ = [
    "MAX_MEMORY",
    "METHODS",
    "Dimension",
    "check_memory",
    "dimension",
    "jacobian_bytes",
    "memory_estimate",
]

METHODS = ("auto", "float", "exact", "certified")

MAX_MEMORY = 4e9
"""Bytes: :func:`dimension` refuses a request whose first round alone needs more (half a laptop)."""


@dataclasses.dataclass(frozen=True)
class Dimension:
    """The outcome of :func:`dimension`.

    ``rank``: the Jacobian rank on ``samples`` inputs (float, or exact mod ``modulus``; exact ranks
    are lower bounds on the dimension). ``upper_bound``: parameters minus the rank of known fiber
    directions at the same point (:func:`~lsa_helpers.symmetries.fiber_tangents`). ``stopped``:
    why no more inputs were added (``"met upper bound"``, ``"stopped growing"``,
    ``"sample limit"``, or ``"exceeds upper bound"``: a float rank with a clear gap that still
    counted rounding noise). ``float_rank``: the float rank with its gap and, where it cannot be
    trusted, the reasons (:attr:`~lsa_helpers.rank.FloatRank.reason`).
    """

    architecture: Architecture
    method: str
    rank: int
    upper_bound: int
    samples: int
    stopped: str
    formula: Formula
    float_rank: FloatRank | None = None
    modulus: int | None = None

    @property
    def parameters(self) -> int:
        return self.architecture.parameter_count

    @property
    def certified_dimension(self) -> int | None:
        """The proved dimension, when exact lower and upper bounds meet (method "certified")."""
        met = self.method == "certified" and self.rank == self.upper_bound
        return self.rank if met else None

    def __repr__(self) -> str:
        bits = [f"rank={self.rank}", f"upper_bound={self.upper_bound}", f"method={self.method!r}",
                f"parameters={self.parameters}", f"formula={self.formula.value}",
                f"samples={self.samples}", f"stopped={self.stopped!r}"]
        if self.float_rank is not None:
            bits.append(f"gap={self.float_rank.gap:.1e}")
        if self.method == "certified":
            bits.append(f"certified={self.certified_dimension}")
        return f"Dimension({', '.join(bits)})"


def dimension(arch: Architecture, *, method: str = "auto", rng=None, max_samples: int | None = None,
              modulus: int = PRIME, max_memory: float = MAX_MEMORY,
              progress: bool = False) -> Dimension:
    """Dimension of the neuromanifold of ``arch`` from Jacobian ranks at a random point.

    Starts with ``N = ceil(parameters / (d_l t))`` inputs (as many rows as parameters) and adds
    half as many again until the rank meets the symmetry upper bound or stops growing (a float
    rank must also show a clear gap: more inputs sharpen a badly conditioned Jacobian).
    ``method``: ``"float"`` (float64 SVD with its gap; lightning inputs are scaled to outputs of
    norm 1, and the rank is doubted where floating-point exceptions occur or where it leaves the
    proved bounds: above the upper bound or, for lightning, below the exact rank mod
    ``modulus``), ``"exact"`` (rank mod ``modulus``: a certified lower bound), ``"certified"``
    (exact, and the dimension is proved when the lower bound meets ``parameters - rank of the
    symmetry tangents``), or ``"auto"`` (certified for lightning, float for softmax). A request
    whose first round needs more than ``max_memory`` bytes (:func:`memory_estimate`) is refused
    before anything is computed. ``progress``: a ``tqdm`` bar of the rank against the upper bound
    on standard error, shown after 2 seconds.

    Examples
    --------
    >>> dimension(Architecture((3, 3), (3,)), rng=0).certified_dimension
    17
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if max_samples is not None and (not isinstance(max_samples, (int, np.integer))
                                    or isinstance(max_samples, bool) or max_samples < 1):
        raise ValueError(
            f"max_samples must be a positive integer or None, got max_samples={max_samples!r}")
    if method == "auto":
        method = "certified" if arch.is_lightning else "float"
    exact = method != "float"
    p = check_modulus(arch, modulus) if exact else None
    check_memory(memory_estimate(arch, method), max_memory)
    rng = as_generator(rng)
    weights = random_weights(arch, rng, modulus=p)
    tangents = fiber_tangents(arch, weights, modulus=p)
    upper = arch.parameter_count - (_sketched_rank(tangents, p, rng) if exact
                                    else float_rank(tangents).rank)
    count = ceil(arch.parameter_count / (arch.widths[-1] * arch.tokens))
    events = set()  # floating-point exceptions while computing float Jacobians

    def rows(n):
        inputs = random_inputs(arch, n, rng, modulus=p)
        if exact:
            return jacobian(arch, weights, inputs, modulus=p)
        with np.errstate(all="call", call=lambda kind, _: events.add(kind)):
            J = jacobian(arch, weights, _unit_outputs(arch, weights, inputs))
        return J[np.all(np.isfinite(J), axis=1)]

    def exact_bound():
        return dimension(arch, method="exact", rng=rng, max_samples=max_samples,
                         modulus=modulus, max_memory=max_memory).rank

    value, samples, stopped, found = grow_rank(rows, count, upper, modulus=p, rng=rng,
                                               max_samples=max_samples, progress=progress)
    if found is not None:
        found = _doubts(found, arch, upper, events, exact_bound)
    return Dimension(arch, method, value, upper, samples, stopped, formula_dimension(arch),
                     found, p)


def _unit_outputs(arch: Architecture, weights, X: np.ndarray) -> np.ndarray:
    """The inputs ``X`` rescaled so that each output has norm 1 (lightning without skips; other
    networks are not homogeneous, and get ``X`` back).

    ``phi(cX) = c^(3^l) phi(X)`` scales the Jacobian rows of ``X`` only, which keeps the rank,
    while unscaled rows span hundreds of decades from depth 5 on and underflow. The layers are
    normalised one by one (no power ``3^l`` of a norm is formed); then the hidden layers too stay
    near norm 1 [derived]: with ``log n_i`` the growth of layer ``i`` on a unit input, layer
    ``j`` ends at ``-sum_{i>j} 3^(j-i) log n_i``, at most half the largest ``|log n_i|``.
    """
    if not arch.is_lightning or arch.skip:
        return X
    Y = X / np.linalg.norm(X, axis=(1, 2), keepdims=True)
    unit, log_norm = Y, 0.0
    for layer in weights:
        Y = layer_forward(layer, Y)
        norm = np.linalg.norm(Y, axis=(1, 2), keepdims=True)
        Y, log_norm = Y / norm, 3 * log_norm + np.log(norm)
    return unit * np.exp(-log_norm / arch.degree)


def _doubts(found: FloatRank, arch: Architecture, upper: int, events: set, exact_bound):
    """``found`` with the reasons to doubt it that its computation and the proved bounds give.

    A rank above ``upper`` counted rounding errors; for lightning, a rank below ``upper`` is
    compared with the exact rank mod p (``exact_bound()``), a proved lower bound: float64 cannot
    tell a smaller dimension from singular values below its rounding errors.
    """
    if events:
        found = found.doubted(
            f"floating-point {' and '.join(sorted(events))} in computing the Jacobian")
    if found.rank > upper:
        return found.doubted(f"rank above the upper bound {upper} (parameters minus known "
                             "fiber directions): rounding errors counted as directions")
    if found.rank < upper and arch.is_lightning:
        try:
            lower = exact_bound()
        except ValueError as error:
            return found.doubted(f"rank below the upper bound {upper} and no exact rank to "
                                 f"compare with ({error})")
        if lower > found.rank:
            return found.doubted(f"rank below the exact rank {lower} mod p, a proved lower "
                                 "bound: directions below the rounding errors were lost")
    return found


def memory_estimate(arch: Architecture, method: str = "certified") -> int:
    """Bytes that the first round of :func:`dimension` holds at once, roughly; later rounds add
    inputs, so a run can take twice as much or more.

    With ``N = ceil(P / (d_l t))`` inputs for ``P`` parameters: the ``N d_l t x P`` Jacobian, the
    forward-mode tangents of the largest layer (its parameters times ``N d t``), the per-input
    chain matrices ``(d t)^2`` of a deep network, and the rank's own copy: an SVD's for a float
    rank, FLINT's matrix and its Python list of residues for an exact one.
    """
    P, d, t = arch.parameter_count, max(arch.widths), arch.tokens
    count = ceil(P / (arch.widths[-1] * t))
    layer = max(sum(r * c for r, c in shape) for shape in arch.layer_shapes)
    tangents = 3 * layer * count * d * t + (arch.layers > 1) * 2 * count * (d * t) ** 2
    exact = method != "float" and not (method == "auto" and not arch.is_lightning)
    return 8 * tangents + jacobian_bytes(P, count * arch.widths[-1] * t, exact=exact)


def jacobian_bytes(parameters: int, rows: int, *, exact: bool) -> int:
    """Bytes of a ``rows x parameters`` float64 Jacobian and of its rank: three copies for an
    SVD, or FLINT's matrix with the Python list of residues it is built from (about 48 bytes a
    residue, of at most ``2 (parameters + 16)`` combined rows)."""
    copies = 6 * min(rows, 2 * (parameters + 16)) if exact else 3 * rows
    return 8 * (rows + copies) * parameters


def check_memory(needed: int, max_memory: float) -> None:
    """Refuse, in one line, a request that needs more than ``max_memory`` bytes."""
    if needed > max_memory:
        raise ValueError(
            f"this request needs at least {needed / 1e9:.3g} GB of memory, above max_memory = "
            f"{max_memory / 1e9:.3g} GB; raise max_memory (on the command line --max-memory) "
            "to compute it anyway")


def grow_rank(rows, count: int, upper: int, *, modulus: int | None, rng,
              max_samples: int | None = None, progress: bool = False):
    """Rank of the Jacobian rows of more and more inputs, and why it stopped.

    ``rows(n)`` gives the Jacobian rows of ``n`` new random inputs. Starts with ``count`` inputs
    and adds half as many again until the rank meets ``upper`` or stops growing (a float rank
    must also show a clear gap), or ``max_samples`` (default ``40 count``) is reached. Returns
    ``(rank, samples, stopped, float rank or None)``; exact mod ``modulus`` when it is given,
    then with the rows of at most ``count`` inputs in memory at once (:func:`_sketch`).
    """
    from tqdm import tqdm

    limit = max_samples or 40 * count
    with tqdm(total=upper, desc="rank", unit="dir", disable=not progress, delay=2,
              file=sys.stderr, leave=False) as bar:
        return _grow(rows, count, upper, modulus, rng, limit, bar)


def _grow(rows, count, upper, modulus, rng, limit, bar):
    """The loop of :func:`grow_rank`, reporting the rank to the ``tqdm`` ``bar``."""
    samples, new, previous = 0, min(count, limit), -1
    J = space = columns = None
    while True:
        if modulus is None:
            block = rows(new)
            J = block if J is None else np.concatenate([J, block])  # rows of each input alone
            found = float_rank(J)
            value, settled = found.rank, found.gap >= CLEAR_GAP  # doubts: more rows won't help
        else:
            for chunk in [count] * (new // count) + [new % count] * (new % count > 0):
                space, columns = _sketch(rows(chunk), space, columns, upper, modulus, rng)
            found, value, settled = None, space.rank, True
        samples += new
        bar.update(min(value, upper) - bar.n)
        bar.set_postfix(inputs=samples, refresh=False)
        stopped = ("exceeds upper bound" if settled and value > upper else
                   "met upper bound" if settled and value == upper else
                   "stopped growing" if settled and value == previous else
                   "sample limit" if samples >= limit else None)
        if stopped:
            return value, samples, stopped, found
        previous, new = value, min(ceil(samples / 2), limit - samples)


def _sketched_rank(T: np.ndarray, p: int, rng) -> int:
    """Rank mod ``p`` of the ``r x n`` matrix ``T`` from ``r + 16`` random combinations of its
    columns when that is fewer: never more than ``rk(T)`` (so ``parameters - rank`` stays an upper
    bound), and less only with probability about ``p^-16``."""
    r, n = T.shape
    if r + 16 < n:
        T = mod_matmul(T, rng.integers(0, p, size=(n, r + 16)).astype(np.float64), p)
    return exact_rank(T.astype(np.int64), p)


def _sketch(J: np.ndarray, space: RowSpace | None, columns, upper: int, p: int, rng):
    """``space`` extended by the rows of ``J`` (residues mod p), through random combinations.

    The rows of ``J`` add at most ``upper - rank`` new directions (``upper`` is proved), so
    ``k = upper - rank + 16`` random combinations ``R J`` of them keep every one, and
    ``upper + 16`` random combinations of the columns, ``R J C``, keep the rank; ``C`` is drawn
    once (returned as ``columns``). ``rk(R J C) <= rk(J)`` always, so the rank stays a proved
    lower bound; it falls short only if 16 extra combinations all miss, with probability about
    ``p^-16``. Only the part of ``R J C`` outside ``space`` is eliminated (FLINT).
    """
    m, n = J.shape
    k = upper - (space.rank if space else 0) + 16
    if m > k:
        J = mod_matmul(rng.integers(0, p, size=(k, m)).astype(np.float64), J, p)
    if columns is None and upper + 16 < n:
        columns = rng.integers(0, p, size=(n, upper + 16)).astype(np.float64)
    J = J if columns is None else mod_matmul(J, columns, p)
    return (space or RowSpace(p, J.shape[1])).extend(J), columns
