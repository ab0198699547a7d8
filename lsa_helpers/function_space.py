"""Dimension of a neuromanifold: Jacobian ranks on adaptively many inputs, bounds, certificate."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Literal, TypeAlias, get_args

import numpy as np

from . import _checks
from ._types import Seed
from .architecture import Architecture
from .differential import BLOCK, along_checked, check_modulus, jacobian
from .formulas import Formula, formula_dimension
from .network import layer_forward
from .rank import CLEAR_GAP, PRIME, FloatRank, RowSpace, exact_rank, float_rank, mod_matmul
from .symmetries import fiber_tangents, sees_parallel_tokens
from .weights import Weights, as_generator, random_inputs, random_weights
from .workers import progress_bar

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = [
    "MAX_MEMORY",
    "METHODS",
    "STOP_REASONS",
    "Dimension",
    "dimension",
    "memory_estimate",
]

Method = Literal["auto", "float", "exact", "certified"]
METHODS: tuple[Method, ...] = get_args(Method)
"""How :func:`dimension` computes a rank; ``"auto"``: certified for lightning, float for softmax."""

StopReason = Literal["met upper bound", "stopped growing", "sample limit", "memory limit",
                     "exceeds upper bound"]
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
"""Why :func:`dimension` added no more inputs (:attr:`Dimension.stopped`)."""
_MET, _STALLED, _SAMPLE_LIMIT, _MEMORY_LIMIT, _EXCEEDS = STOP_REASONS

Growth: TypeAlias = tuple[int, int, StopReason, FloatRank | None]
"""What :func:`grow_rank` returns: the rank, the inputs used, why it stopped, the float rank."""

MAX_MEMORY = 4e9
"""Bytes: :func:`dimension` refuses a request whose first round alone needs more (half a laptop)."""


@dataclasses.dataclass(frozen=True)
class Dimension:
    """The outcome of :func:`dimension`.

    ``rank``: the Jacobian rank on ``samples`` inputs (float, or exact mod ``modulus``; exact ranks
    are lower bounds on the dimension). ``upper_bound``: parameters minus the rank of known fiber
    directions at the same point (:func:`~lsa_helpers.symmetries.fiber_tangents`). ``stopped``
    (:data:`STOP_REASONS`): why no more inputs were added (``"met upper bound"``,
    ``"stopped growing"``, ``"sample limit"``, ``"memory limit"``: the next round would need more
    than ``max_memory``, or ``"exceeds upper bound"``: a float rank with a clear gap that still
    counted rounding noise). ``float_reading``: for a float rank, the
    :class:`~lsa_helpers.rank.FloatRank` read off the Jacobian, with its gap and, where it cannot
    be trusted, the reasons (:attr:`~lsa_helpers.rank.FloatRank.reason`).
    """

    architecture: Architecture
    method: Method
    rank: int
    upper_bound: int
    samples: int
    stopped: StopReason
    formula: Formula
    float_reading: FloatRank | None = None
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
        if self.float_reading is not None:
            bits.append(f"gap={self.float_reading.gap:.1e}")
        if self.method == "certified":
            bits.append(f"certified={self.certified_dimension}")
        return f"Dimension({', '.join(bits)})"


def dimension(arch: Architecture, *, method: Method = "auto", rng: Seed = None,
              max_samples: int | None = None,
              modulus: int = PRIME, max_memory: float = MAX_MEMORY,
              progress: bool = False) -> Dimension:
    """Dimension of the neuromanifold of ``arch`` from Jacobian ranks at a random point.

    Starts with ``N = ceil(parameters / (d_l t))`` inputs (as many rows as parameters) and adds
    half as many again until the rank meets the symmetry upper bound or stops growing (a float
    rank must also show a clear gap: more inputs sharpen a badly conditioned Jacobian).
    ``method``: ``"float"`` (float64 SVD with its gap; lightning inputs are scaled to outputs of
    norm 1, and the rank is doubted where floating-point exceptions occur or where it leaves the
    proved bounds: above the upper bound or, for lightning, below the exact rank mod
    ``modulus``), ``"exact"`` (rank mod ``modulus`` of the Jacobian, or of ``J C`` along
    ``upper + 16`` random directions when that is fewer than the parameters, computed directly
    by forward mode: a certified lower bound either way), ``"certified"``
    (exact, and the dimension is proved when the lower bound meets ``parameters - rank of the
    symmetry tangents``), or ``"auto"`` (certified for lightning, float for softmax). A request
    whose first round needs more than ``max_memory`` bytes (:func:`memory_estimate`) is refused
    before anything is computed, and no later round starts that would need more
    (``stopped="memory limit"``), nor one beyond ``max_samples`` inputs (default ``40 N``).
    ``progress``: a ``tqdm`` bar of the rank against the upper bound
    on standard error, shown after 2 seconds.

    Examples
    --------
    >>> dimension(Architecture((3, 3), (3,)), rng=0).certified_dimension
    17
    """
    method = _checks.choice("method", method, METHODS)
    max_samples = _checks.optional_positive_int("max_samples", max_samples)
    progress = _checks.bool_flag("progress", progress)
    if method == "auto":
        method = "certified" if arch.is_lightning else "float"
    exact = method != "float"
    p = check_modulus(arch, modulus) if exact else None
    check_memory(memory_estimate(arch, method), max_memory)
    rng = as_generator(rng)
    weights = random_weights(arch, rng, modulus=p)
    upper = arch.parameter_count - _fiber_rank(arch, weights, p, rng)
    events: set[str] = set()  # floating-point exceptions while computing float Jacobians

    columns = _column_sketch(arch.parameter_count, upper, p, rng) if p else None

    def rows(n: int) -> np.ndarray:
        inputs = random_inputs(arch, n, rng, modulus=p)
        if columns is not None:
            return along_checked(arch, weights, inputs, columns, p)
        if exact:
            return jacobian(arch, weights, inputs, modulus=p)
        with np.errstate(all="call", call=lambda kind, _: events.add(kind)):
            J = jacobian(arch, weights, _unit_outputs(arch, weights, inputs))
        return J[np.all(np.isfinite(J), axis=1)]

    def exact_bound() -> int:
        return dimension(arch, method="exact", rng=rng, max_samples=max_samples,
                         modulus=modulus, max_memory=max_memory).rank

    def fits(inputs: int) -> bool:
        return memory_estimate(arch, method, inputs=inputs, upper=upper) <= max_memory

    value, samples, stopped, found = grow_rank(rows, _first_round(arch), upper, modulus=p,
                                               rng=rng, max_samples=max_samples,
                                               progress=progress, fits=fits,
                                               chunk=_chunk_inputs(arch) if p else None)
    if found is not None:
        found = _doubts(found, arch, upper, events, exact_bound)
    return Dimension(arch, method, value, upper, samples, stopped, formula_dimension(arch),
                     found, p)


def _unit_outputs(arch: Architecture, weights: Weights, X: np.ndarray) -> np.ndarray:
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


def _doubts(found: FloatRank, arch: Architecture, upper: int, events: set[str],
            exact_bound: Callable[[], int]) -> FloatRank:
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


def _fiber_rank(arch: Architecture, weights: Weights, p: int | None,
                rng: np.random.Generator) -> int:
    """Rank of the known fiber directions at ``weights`` (mod ``p``, or float)."""
    tangents = fiber_tangents(arch, weights, modulus=p)
    return _sketched_rank(tangents, p, rng) if p else float_rank(tangents).rank


def _first_round(arch: Architecture) -> int:
    """``ceil(P / (d_l t))`` inputs: as many Jacobian rows as parameters."""
    return -(-arch.parameter_count // (arch.widths[-1] * arch.tokens))


def memory_estimate(arch: Architecture, method: str = "certified", *,
                    inputs: int | None = None, upper: int | None = None) -> int:
    """Bytes that :func:`dimension` with ``method`` adds to the memory of the process at its peak,
    for a run that ends with ``inputs`` inputs (default: its first round, ``ceil(P / (d_l t))``).

    The largest of: the known fiber directions and their rank; for an exact rank, one chunk of
    the rows of at most :data:`CHUNK` (rows are eliminated as they come, so later rounds add
    nothing: :func:`_exact_bytes`), with the random directions ``C`` and the echelon form kept
    between chunks; for a float rank, each round, which holds the rows of all inputs so far,
    with the forward-mode tangents of its largest parameter group and the copies its rank makes.
    :data:`OVERHEAD` on top. ``upper``: the symmetry upper bound, once known (it fixes the
    ``upper + 16`` directions of ``J C``); before, ``parameters`` directions are counted. An
    upper bound: the peak resident memory measured on softmax, deep lightning, float and exact
    runs that add 15 MB to 3 GB lies between a third of it and all of it.
    """
    method = _checks.choice("method", method, METHODS)
    inputs = _checks.optional_positive_int("inputs", inputs)
    upper = None if upper is None else _checks.nonnegative_int("upper", upper)
    exact = method in ("exact", "certified") or (method == "auto" and arch.is_lightning)
    count = _first_round(arch)
    if exact:
        size = min(_chunk_inputs(arch), inputs or count)
        return OVERHEAD + max(_fiber_bytes(arch, exact), _exact_bytes(arch, size, upper))
    held, rounds = 0, []
    for new in _rounds(count, inputs or count):
        rounds.append(_round_bytes(arch, held, new))
        held += new
    return OVERHEAD + max(_fiber_bytes(arch, exact), *rounds)


def _chunk_inputs(arch: Architecture) -> int:
    """Inputs per chunk of an exact rank: at most :data:`CHUNK` rows, at least one input, at most
    a first round."""
    return max(1, min(_first_round(arch), CHUNK // (arch.widths[-1] * arch.tokens)))


CHUNK = 1024
"""Rows that an exact :func:`dimension` computes and eliminates at once: a chunk of ``J C`` takes
:data:`ELIMINATION` bytes a residue at its peak (about 1.4 GB for widths 64^3, ranks 16)."""


def _exact_bytes(arch: Architecture, inputs: int, upper: int | None) -> int:
    """Peak of an exact chunk of ``inputs`` inputs: the ``P x D`` directions ``C`` when
    ``D = upper + 16 < P`` and the echelon form ``[I | F]`` (``r (D - r) <= D^2 / 4`` entries),
    then the larger of computing the chunk (``J C`` by forward mode, in tangent arrays of at most
    :data:`~lsa_helpers.differential.BLOCK` entries, or ``J`` itself, :func:`_jacobian_bytes`)
    and eliminating its ``m x D`` residues (:data:`ELIMINATION` bytes each). While ``upper`` is
    unknown, ``D = P`` and both ways of computing are counted.
    """
    P, t, last = arch.parameter_count, arch.tokens, arch.widths[-1]
    D = P if upper is None else min(P, upper + 16)
    m = inputs * last * t
    sketched = upper is None or D < P
    tangents = min(BLOCK, inputs * t * max(arch.widths + arch.ranks) * D)
    along = 8 * m * D + 8 * ALONG_ARRAYS * tangents if sketched else 0
    whole = _jacobian_bytes(arch, inputs, exact=True) if D == P else 0
    return 8 * P * D * sketched + 2 * D * D + max(along, whole, ELIMINATION * m * D)


ELIMINATION = 128
"""Bytes per residue of a chunk at the peak of its elimination (:func:`_sketch`): float64 and
int64 copies, its random combinations, the reduced rows, the Python integers handed to FLINT
(40 bytes each) and FLINT's matrix; 108 measured on widths 48^3, ranks 12 (a rise of 1185 MiB
in rows of 2016), and a margin."""

ALONG_ARRAYS = 12
"""Tangent arrays of :data:`~lsa_helpers.differential.BLOCK` entries alive at once in
:func:`~lsa_helpers.differential.jacobian_along`: 6 to 8 measured (tracemalloc) on widths 10^4,
32^4 and 64^3, and a margin."""


OVERHEAD = 2**24
"""Bytes that any run may add besides its arrays: modules imported on first use, Python objects."""


def _round_bytes(arch: Architecture, held: int, new: int) -> int:
    """Peak of a float round: the rows of ``held`` inputs with the Jacobian of ``new`` more, then
    the rows of all of them with the copies of their float rank."""
    rows = (held + new) * arch.widths[-1] * arch.tokens
    return max(_rows_bytes(arch, held) + _jacobian_bytes(arch, new, exact=False),
               _rank_bytes(rows, arch.parameter_count))


def float_rank_memory(arch: Architecture, inputs: int) -> int:
    """Bytes of the float rank of the Jacobian of ``inputs`` inputs at once, as
    :func:`memory_estimate` counts a float round (the trials of
    :func:`~lsa_helpers.experiments.reproduce_softmax_conjecture`)."""
    return OVERHEAD + _round_bytes(arch, 0, inputs)


def _rows_bytes(arch: Architecture, inputs: int) -> int:
    """Bytes of the float64 Jacobian of ``inputs`` inputs: ``inputs d_l t x P``."""
    return 8 * inputs * arch.widths[-1] * arch.tokens * arch.parameter_count


def _jacobian_bytes(arch: Architecture, inputs: int, *, exact: bool) -> int:
    """Peak of :func:`~lsa_helpers.differential.jacobian` on ``inputs`` inputs: its rows twice (the
    per-layer blocks and their concatenation) and the tangents of a parameter group, 1.5 times
    (3.5 times with the residues mod p, which copy each array they reduce)."""
    tangents = 8 * inputs * _tangent_entries(arch)
    return 2 * _rows_bytes(arch, inputs) + tangents * (7 if exact else 3) // 2


def _tangent_entries(arch: Architecture) -> int:
    """Entries per input of the forward-mode tangents of one parameter group alive at once, for
    the largest group: ``2 a d`` attention, ``d' d`` value and, after the first layer, ``d t``
    input directions, times what each direction carries per input: its terms of ``d(AY)``
    (``d t``, ``a t``), of the scores (``t^2``; three arrays with softmax) or of the
    re-associated lightning layer (``d^2``, ``d' d`` when ``t > d``), of the output (``d' t``)
    and its product with the later layers (``d_l t``)."""
    t, last, soft = arch.tokens, arch.widths[-1], not arch.is_lightning
    largest = 0
    for i, (a, d, e) in enumerate(zip(arch.ranks, arch.widths, arch.widths[1:])):
        if arch.is_lightning and t > d:
            groups = [(2 * a * d, (3 * d + a + e) * t), (e * d, e * d + e * t),
                      (d * t, 2 * d * d + e * d + 2 * e * t)]
        else:
            groups = [(2 * a * d, (3 * d + a + e) * t + (1 + 2 * soft) * t * t),
                      (e * d, 2 * e * t), (d * t, (2 + 2 * soft) * t * t + 2 * e * t)]
        largest = max(largest, *(n * (m + last * t) for n, m in groups[:3 if i else 2]))
    return largest


def _fiber_bytes(arch: Architecture, exact: bool) -> int:
    """Peak of the fiber directions and their rank: ``r`` rows of ``P`` entries
    (:func:`_fiber_rows`) and the copies of a float rank, or for an exact rank their sketch with
    ``r + 16`` random columns and its residues as Python integers."""
    P, r = arch.parameter_count, _fiber_rows(arch)
    if exact:
        return 24 * r * P + 16 * P * (r + 16) + 64 * r * min(P, r + 16)
    return _rank_bytes(r, P)


def _fiber_rows(arch: Architecture) -> int:
    """Rows of :func:`~lsa_helpers.symmetries.fiber_tangents` at a generic point: ``a_i^2`` per
    layer, ``d_i^2`` per hidden layer and ``2 l - 1`` scalings (lightning; ``a_i^2`` and ``l``
    scalings with residual blocks) for the symmetries,
    ``d (d - 1) / 2`` per layer that sees parallel tokens with ``a >= d >= 2``, and the width
    directions: the next layer's ``2 a + d'`` rows times the unreached part of a hidden layer
    (``d_i - min(d_0, ..., d_i)``), and ``d_{i-1}`` times its unread part."""
    widths, ranks, skip = arch.widths, arch.ranks, arch.skip
    rows = sum(a * a for a in ranks) + (0 if skip else sum(d * d for d in widths[1:-1]))
    rows += (2 * arch.layers - 1 if not skip else arch.layers) if arch.is_lightning else 0
    for a, d, parallel in zip(ranks, widths, sees_parallel_tokens(arch)):
        rows += d * (d - 1) // 2 if parallel and a >= d >= 2 else 0
    if skip:
        return rows
    read = widths[-1]
    for i in range(arch.layers - 1, 0, -1):
        reached = min(widths[:i + 1])
        read = min(widths[i], 2 * ranks[i] + read)
        rows += (2 * ranks[i] + widths[i + 1]) * (widths[i] - reached)
        rows += widths[i - 1] * (widths[i] - read)
    return rows


def _rank_bytes(rows: int, columns: int) -> int:
    """Peak of :func:`~lsa_helpers.rank.float_rank` with its argument: the matrix, its scaled
    copy and LAPACK's (three copies), and the triangular factor of a QR step (``min^2``)."""
    return 8 * (3 * rows * columns + min(rows, columns) ** 2)


def jacobian_bytes(parameters: int, rows: int, *, exact: bool, computing: int | None = None) -> int:
    """Peak bytes of the rank of ``rows`` Jacobian rows of ``parameters`` columns, which take
    ``computing`` bytes to compute (default: three copies of them).

    A float rank: the copies of :func:`~lsa_helpers.rank.float_rank`. An exact rank (a chunk of
    :func:`grow_rank`): the rows, or their sketch (``k <= parameters + 16`` random combinations,
    as float64 and int64, and its products with the columns), or the eliminated part as Python
    integers and FLINT matrices (about 64 bytes a residue); on top of the column sketch and the
    echelon form kept between chunks (``2 parameters^2`` residues).
    """
    P, J = parameters, 8 * rows * parameters
    computing = 3 * J if computing is None else computing
    if not exact:
        return max(computing, _rank_bytes(rows, P))
    k = min(rows, P + 16)
    return 16 * P * P + max(computing, J + 8 * k * (2 * rows + 3 * P), 64 * k * P)


def check_memory(needed: int, max_memory: float, name: str = "max_memory") -> None:
    """Refuse, in one line, a request that needs more than ``max_memory`` bytes; ``name``: the
    argument to raise (``--max-memory`` on the command line)."""
    max_memory = _checks.finite_positive(name, max_memory)
    if needed > max_memory:
        raise ValueError(
            f"this request may need up to {_gigabytes(needed)} GB of memory, above {name} = "
            f"{max_memory / 1e9:.3g} GB; raise {name} to compute it anyway")


def _gigabytes(count: int) -> str:
    """``count`` bytes in GB, three significant digits (beyond float64 too)."""
    return f"{count / 1e9:.3g}" if count < 1e300 else f"{Decimal(count) / 10**9:.3g}"


def grow_rank(rows: Callable[[int], np.ndarray], count: int, upper: int, *, modulus: int | None,
              rng: np.random.Generator, max_samples: int | None = None, progress: bool = False,
              fits: Callable[[int], bool] | None = None, chunk: int | None = None) -> Growth:
    """Rank of the Jacobian rows of more and more inputs, and why it stopped.

    ``rows(n)`` gives the Jacobian rows of ``n`` new random inputs. Starts with ``count`` inputs
    and adds half as many again until the rank meets ``upper`` or stops growing (a float rank
    must also show a clear gap), or ``max_samples`` (default ``40 count``) is reached, or
    ``fits(inputs)`` (default: always true) says that a round ending with ``inputs`` inputs
    would not fit in memory. Returns ``(rank, samples, stopped, float rank or None)``; exact mod
    ``modulus`` when it is given, then with the rows of at most ``chunk`` inputs (default
    ``count``) in memory at once (:func:`_sketch`).
    """
    limit = max_samples or 40 * count
    with progress_bar(total=upper, desc="rank", unit="dir", disable=not progress, delay=2,
              file=sys.stderr, leave=False) as bar:
        return _grow(rows, count, upper, modulus, rng, limit, bar, fits or (lambda n: True),
                     chunk or count)


def _rounds(count: int, limit: int) -> Iterator[int]:
    """Inputs added by each round: ``count``, then half as many as so far, ``limit`` in all."""
    samples, new = 0, min(count, limit)
    while new > 0:
        yield new
        samples += new
        new = min(-(-samples // 2), limit - samples)


def _grow(rows: Callable[[int], np.ndarray], count: int, upper: int, modulus: int | None,
          rng: np.random.Generator, limit: int, bar: tqdm, fits: Callable[[int], bool],
          chunk: int) -> Growth:
    """The loop of :func:`grow_rank`, reporting the rank to the ``tqdm`` ``bar``."""
    samples, value, previous, found = 0, 0, -1, None
    J = space = columns = None
    for new in _rounds(count, limit):
        if not fits(samples + new):
            return value, samples, _MEMORY_LIMIT, found
        if modulus is None:
            block = rows(new)
            J = block if J is None else np.concatenate([J, block])  # rows of each input alone
            del block
            found = float_rank(J)
            value, settled = found.rank, found.gap >= CLEAR_GAP  # doubts: more rows won't help
        else:
            for size in [chunk] * (new // chunk) + [new % chunk] * (new % chunk > 0):
                space, columns = _sketch(rows(size), space, columns, upper, modulus, rng)
            assert space is not None  # new > 0 inputs make at least one chunk
            found, value, settled = None, space.rank, True
        samples += new
        bar.update(min(value, upper) - bar.n)
        bar.set_postfix(inputs=samples, refresh=False)
        stopped = (_EXCEEDS if settled and value > upper else
                   _MET if settled and value == upper else
                   _STALLED if settled and value == previous else None)
        if stopped:
            return value, samples, stopped, found
        previous = value
    return value, samples, _SAMPLE_LIMIT, found


def _column_sketch(parameters: int, upper: int, p: int,
                   rng: np.random.Generator) -> np.ndarray | None:
    """``upper + 16`` random directions mod ``p`` (a ``parameters x (upper + 16)`` matrix ``C``),
    or None when that is not fewer than the parameters.

    ``rk(J C) <= rk(J)`` always, so the rank of ``J C`` is a proved lower bound too; as
    ``rk(J) <= upper``, it falls short only if 16 extra directions all miss, with probability
    about ``p^-16``. :func:`~lsa_helpers.differential.jacobian_along` computes ``J C`` by forward
    mode along these directions, without forming ``J``.
    """
    if upper + 16 >= parameters:
        return None
    return rng.integers(0, p, size=(parameters, upper + 16)).astype(np.float64)


def _sketched_rank(T: np.ndarray, p: int, rng: np.random.Generator) -> int:
    """Rank mod ``p`` of the ``r x n`` matrix ``T`` from ``r + 16`` random combinations of its
    columns when that is fewer: never more than ``rk(T)`` (so ``parameters - rank`` stays an upper
    bound), and less only with probability about ``p^-16``."""
    r, n = T.shape
    if r + 16 < n:
        T = mod_matmul(T, rng.integers(0, p, size=(n, r + 16)).astype(np.float64), p)
    return exact_rank(T.astype(np.int64), p)


def _sketch(J: np.ndarray, space: RowSpace | None, columns: np.ndarray | None, upper: int, p: int,
            rng: np.random.Generator) -> tuple[RowSpace, np.ndarray | None]:
    """``space`` extended by the rows of ``J`` (residues mod p), through random combinations.

    The rows of ``J`` add at most ``upper - rank`` new directions (``upper`` is proved), so
    ``k = upper - rank + 16`` random combinations ``R J`` of them keep every one, and
    ``upper + 16`` random combinations of the columns, ``R J C``, keep the rank; ``C`` is drawn
    once (returned as ``columns``) unless ``J`` has no more columns (``J C`` computed by forward
    mode). ``rk(R J C) <= rk(J)`` always, so the rank stays a proved lower bound; it falls short
    only if 16 extra combinations all miss, with probability about ``p^-16``. Only the part of
    ``R J C`` outside ``space`` is eliminated (FLINT).
    """
    m, n = J.shape
    k = upper - (space.rank if space else 0) + 16
    if m > k:
        J = mod_matmul(rng.integers(0, p, size=(k, m)).astype(np.float64), J, p)
    if columns is None and upper + 16 < n:
        columns = rng.integers(0, p, size=(n, upper + 16)).astype(np.float64)
    J = J if columns is None else mod_matmul(J, columns, p)
    space = space or RowSpace(p, J.shape[1])
    for start in range(0, J.shape[0], ROWS):
        space = space.extend(J[start:start + ROWS])
    return space, columns


ROWS = 2048
"""Rows that :func:`_sketch` hands to FLINT at once: each block is first reduced by the rows
before it with one BLAS product, so FLINT eliminates only what is new in it, and converts only
a block's residues to Python integers at a time."""
