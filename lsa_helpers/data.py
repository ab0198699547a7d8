"""Precomputed tables in ``data/``: a dimension atlas and reruns of the softmax experiment.

Three plain CSV tables, rebuilt by ``python -m lsa_helpers data build`` (:func:`build_data`) and
read back by :func:`load_table`, which checks each file against ``data/SHA256SUMS``, against
its schema (:data:`TABLES`: column names, order and types) and each row against itself before it
returns anything.

- ``atlas``: one row per lightning architecture of :func:`atlas_grid` (:func:`atlas_row`): the
  formula dimension, the float64 rank with its gap, the exact rank mod p, the symmetry upper
  bound and the certified dimension, and the float rank of the same architecture with softmax.
- ``softmax_conjecture``: the paper's experiment, :func:`reproduce_softmax_conjecture` with its
  defaults (two layers, ``a = 2``, ``t = 3``, widths 3 to 10).
- ``softmax_conjecture_extension``: the same test on three layers, widths 3 to 12, ranks 1 to 4.

Gaps are stored with two significant digits (their later digits depend on the machine's BLAS);
integers and the ``clear``/``UNCLEAR`` verdicts are what a rebuild must reproduce.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import math
import os
import platform
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from itertools import product
from pathlib import Path

from .architecture import Architecture
from .formulas import formula_dimension
from .rank import CLEAR_GAP

__all__ = ["DATA_DIR", "DATA_ENV", "TABLES", "Column", "Table", "atlas_grid", "atlas_row",
           "build_data", "data_folder", "load_table", "write_atomic"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
"""The repository's ``data/`` folder (next to the package in a source checkout)."""

DATA_ENV = "LSA_DATA_DIR"
"""An environment variable that names the folder of the tables, for an installed package."""

CHECKSUMS = "SHA256SUMS"
_TYPES = ("int", "gap", "str", "bool", "sizes")


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of a table: ``name``, ``kind``, what it holds (``doc``), whether it may be empty.

    ``kind`` is ``"int"``, ``"gap"`` (a float written with two significant digits, ``inf``
    allowed), ``"str"`` (one of ``choices`` when given), ``"bool"`` (``true``/``false``) or
    ``"sizes"`` (comma-separated positive integers, read as a tuple). An ``"int"`` is at least
    ``minimum`` (counts, ranks and dimensions are never negative).
    """

    name: str
    kind: str
    doc: str
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    minimum: int = 0

    def __post_init__(self):
        if self.kind not in _TYPES:
            raise ValueError(f"kind must be one of {_TYPES}, got {self.kind!r}")


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: its file name in ``data/``, what one row is, its columns and the record type.

    ``key``: the columns that tell rows apart (no two rows may share them).
    """

    name: str
    doc: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}.csv"

    @property
    def record(self) -> type:
        return _RECORDS[self.name]


_VERDICTS = ("clear", "UNCLEAR")
_STOPPED = ("met upper bound", "stopped growing", "sample limit", "memory limit",
            "exceeds upper bound")
_KINDS = ("one layer", "equal widths", "bottleneck", "wide hidden", "unequal hidden")


def _float_columns(prefix: str, what: str) -> tuple[Column, ...]:
    return (
        Column(f"{prefix}rank", "int", f"float64 rank of the Jacobian of {what} (normalized SVD)"),
        Column(f"{prefix}gap", "gap",
               "smallest kept over largest dropped singular value (full rank: kept over the "
               "tolerance; inf: the dropped ones are exactly 0), two significant digits"),
        Column(f"{prefix}verdict", "str", "clear when the gap is at least 1e4 and nothing else doubts the "
               "rank (`FloatRank.reason`), else UNCLEAR",
               choices=_VERDICTS),
        Column(f"{prefix}samples", "int", "inputs used (adaptive, see `dimension`)"),
        Column(f"{prefix}stopped", "str", "why no more inputs were added", choices=_STOPPED),
    )


ATLAS = Table("atlas", "one lightning architecture (and the same widths with softmax)", (
    Column("kind", "str",
           "`one layer`; `equal widths` (all d_i equal); `bottleneck` (equal hidden widths "
           "<= d_0 and <= d_l, not all equal); `wide hidden` (a hidden width > min(d_0, d_l)); "
           "`unequal hidden` (the rest: unequal hidden widths, each <= min(d_0, d_l))",
           choices=_KINDS),
    Column("rank_one_intermediate", "bool", "some layer i < l has a_i = 1"),
    Column("layers", "int", "depth l", minimum=1),
    Column("widths", "sizes", "d_0,...,d_l"),
    Column("ranks", "sizes", "a_1,...,a_l"),
    Column("tokens", "int", "t, tokens per input", minimum=1),
    Column("normalization", "str", "normalization of the architecture of the formula, float and "
           "exact columns (always lightning; softmax columns are prefixed)",
           choices=("lightning",)),
    Column("parameters", "int", "sum_i (2 a_i + d_i) d_{i-1}", minimum=1),
    Column("formula_dimension", "int", "`formula_dimension`; empty where no formula applies",
           nullable=True),
    Column("formula_status", "str", "paper, derived or none", choices=("paper", "derived", "none")),
    *_float_columns("float_",
                    "the lightning network, `dimension(arch, method=\"float\", rng=seed)`"),
    Column("exact_rank", "int", "rank mod p = 1048573 of the integer Jacobian, "
           "`dimension(arch, method=\"certified\", rng=seed)`: a lower bound on the dimension"),
    Column("upper_bound", "int", "parameters minus the rank mod p of the known fiber directions "
           "(`fiber_tangents`: symmetries, antisymmetric and width directions) at the same point"),
    Column("certified_dimension", "int", "the dimension, proved (exact rank = upper bound); "
           "empty when the bounds do not meet", nullable=True),
    Column("exact_samples", "int", "inputs used by the exact rank"),
    Column("exact_stopped", "str", "why the exact computation added no more inputs",
           choices=_STOPPED),
    Column("softmax_formula_dimension", "int", "`formula_dimension` of the softmax network: "
           "the general lightning formula + l (paper for one layer, conjecture for deep "
           "networks), or for t = 1 the linear map V_l...V_1 (derived); empty where none "
           "applies", nullable=True),
    Column("softmax_formula_status", "str", "paper, conjecture, derived or none",
           choices=("paper", "conjecture", "derived", "none")),
    *_float_columns("softmax_", "the softmax network with the same widths, ranks and tokens, "
                    "`dimension(Architecture(widths, ranks, \"softmax\", t), method=\"float\", "
                    "rng=seed)`"),
    Column("softmax_upper_bound", "int", "the `upper_bound` of that softmax `dimension` call: "
           "parameters minus the float rank of the known fiber directions at the same point"),
    Column("seed", "int", "the `rng` of the three `dimension` calls"),
), key=("widths", "ranks", "tokens"))

_CONJECTURE_COLUMNS = (
    Column("width", "int", "delta: every width d_0 = ... = d_l", minimum=1),
    Column("layers", "int", "depth l", minimum=1),
    Column("attention_rank", "int", "a, the same in every layer", minimum=1),
    Column("tokens", "int", "t", minimum=1),
    Column("parameters", "int", "parameters of the network", minimum=1),
    Column("expected_dimension", "int", "lightning formula + l (what the paper's conjecture "
           "gives); empty where no formula applies", nullable=True),
    Column("samples", "int", "Gaussian inputs per trial", minimum=1),
    Column("trials", "int", "random points (weights and inputs) tried (one rank each in "
           "`trial_ranks`)", minimum=1),
    Column("jacobian_rank", "int", "largest float64 Jacobian rank over the trials (the "
           "maximum, as in the authors' submission code)"),
    Column("gap", "gap", "singular-value gap of that trial, two significant digits"),
    Column("verdict", "str", "clear when that gap is at least 1e4 and nothing else doubts "
           "the rank", choices=_VERDICTS),
    Column("smallest_gap", "gap", "smallest gap over all trials, two significant digits"),
    Column("trials_right", "int", "trials whose rank is the expected dimension"),
    Column("trials_clear", "int", "trials whose gap is clear"),
    Column("trial_ranks", "sizes", "the rank of each trial, in order"),
    Column("seed", "int", "the build seed (see data/README.md for how each run derives its rng)"),
)

_CONJECTURE_KEY = ("width", "layers", "attention_rank", "tokens")
CONJECTURE = Table("softmax_conjecture", "one width of the paper's experiment (two softmax "
                   "layers, a = 2, t = 3, 250 inputs, 5 trials, 8 at width 10)",
                   _CONJECTURE_COLUMNS, _CONJECTURE_KEY)
EXTENSION = Table("softmax_conjecture_extension", "one (width, rank) of the extension: three "
                  "softmax layers, t = 3, widths 3 to 12, ranks 1 to 4 (a <= width)",
                  _CONJECTURE_COLUMNS, _CONJECTURE_KEY)

TABLES = {table.name: table for table in (ATLAS, CONJECTURE, EXTENSION)}
"""The tables of ``data/`` by name: their columns, in file order, with their types."""

_GAP = Column("gap", "gap", "a singular-value gap")
_PYTHON_TYPES = {"int": int, "gap": float, "str": str, "bool": bool, "sizes": tuple}


def _record_type(table: Table) -> type:
    fields = [(c.name, _PYTHON_TYPES[c.kind] | None if c.nullable else _PYTHON_TYPES[c.kind])
              for c in table.columns]
    name = "".join(part.title() for part in table.name.split("_")) + "Row"
    cls = dataclasses.make_dataclass(name, fields, frozen=True)
    cls.__module__ = __name__
    cls.__doc__ = f"One row of data/{table.filename}: {table.doc}."
    return cls


_RECORDS = {name: _record_type(table) for name, table in TABLES.items()}
globals().update({cls.__name__: cls for cls in _RECORDS.values()})  # records pickle by name

PAPER_EXPERIMENT: dict = {}
"""Keyword arguments of :func:`reproduce_softmax_conjecture` for the paper's run: its defaults."""

EXTENSION_EXPERIMENT = {"widths": tuple(range(3, 13)), "ranks": (1, 2, 3, 4), "layers": 3,
                        "samples": 120, "trials": 3, "trials_at_10": 3}
"""The extension: for each rank ``a``, the widths ``>= a``. 120 inputs per trial (at least six
rows per parameter) keep every gap far above 1e4 (see the ``smallest_gap`` column), 3 trials at
every width, in seconds."""


# --- formatting and parsing ---------------------------------------------------------------------

def _format(column: Column, value) -> str:
    if value is None:
        if not column.nullable:
            raise ValueError(f"column {column.name!r} may not be empty")
        return ""
    if column.kind == "gap":
        return "inf" if math.isinf(value) else f"{value:.1e}"
    if column.kind == "bool":
        return "true" if value else "false"
    if column.kind == "sizes":
        return ",".join(str(int(v)) for v in value)
    return str(value)


_INT = re.compile(r"-?[0-9]+")


def _parse(column: Column, text: str):
    """The value of one cell, or ValueError naming what was expected."""
    if text == "" and column.nullable:
        return None
    if column.kind == "int":
        if not _INT.fullmatch(text):
            raise ValueError(f"expected an integer, got {text!r}")
        if int(text) < column.minimum:
            raise ValueError(f"expected an integer >= {column.minimum}, got {text!r}")
        return int(text)
    if column.kind == "gap":
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if math.isnan(value) or value < 0:
            raise ValueError(f"expected a non-negative number or inf, got {text!r}")
        return value
    if column.kind == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return text == "true"
    if column.kind == "sizes":
        parts = text.split(",")
        if not all(re.fullmatch(r"[1-9][0-9]*", p) for p in parts):
            raise ValueError(f"expected comma-separated positive integers, got {text!r}")
        return tuple(int(p) for p in parts)
    if column.choices is not None and text not in column.choices:
        raise ValueError(f"expected one of {column.choices}, got {text!r}")
    if text == "":
        raise ValueError("expected a value, got an empty cell")
    return text


# --- files: atomic writes and checksums ---------------------------------------------------------

def write_atomic(path, chunks: Iterable[str]) -> Path:
    """Write the text ``chunks`` to ``path`` all at once or not at all.

    The text goes to a temporary file in the same folder, which is flushed, synced and then
    moved over ``path`` by ``os.replace`` (atomic on POSIX and Windows). If anything fails
    before that, including the iteration over ``chunks``, the temporary file is removed and
    ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_atomic(pathlib.Path(folder) / "a.txt", ["one\\n", "two\\n"]).read_text()
    'one\\ntwo\\n'
    """
    path = Path(path)
    temporary = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_checksums(folder: Path, filename: str) -> str:
    """The checksum of ``filename`` listed in ``folder/SHA256SUMS`` (sha256sum format)."""
    sums = folder / CHECKSUMS
    if not sums.is_file():
        raise ValueError(f"{folder / filename}: cannot verify it, {sums} does not exist")
    for line in _text(sums, _read(sums, SUMS_LIMIT)).splitlines():
        match = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line)
        if match and match.group(2) == filename:
            return match.group(1)
    raise ValueError(f"{folder / filename}: not listed in {sums}")


SUMS_LIMIT = 2**16
"""Bytes: the largest ``SHA256SUMS`` that :func:`load_table` reads (three lines of 83 bytes)."""

TABLE_LIMIT = 2**26
"""Bytes: the largest table that :func:`load_table` reads (the atlas has half a megabyte)."""


def _read(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, read once; ValueError if there are more than ``limit``."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit} bytes, not one of the course's files")
    return data


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None


def _verified(folder: Path, filename: str) -> bytes:
    """The bytes of ``folder/filename`` that match their checksum, read once.

    A rebuild replaces the tables and then ``SHA256SUMS``: a mismatch is read again once, a
    moment later, before it is reported.
    """
    path = folder / filename
    for wait in (0.1, None):
        expected = _read_checksums(folder, filename)
        data = _read(path, TABLE_LIMIT)
        found = hashlib.sha256(data).hexdigest()
        if found == expected:
            return data
        if wait:
            time.sleep(wait)
    raise ValueError(f"{path}: checksum does not match {CHECKSUMS} (expected "
                     f"{expected[:12]}..., got {found[:12]}...): the file was changed or "
                     "cut short")


# --- reading ------------------------------------------------------------------------------------

def data_folder() -> Path:
    """Where the tables are: ``$LSA_DATA_DIR`` if set (``~`` expanded); else :data:`DATA_DIR`
    when it holds them (a clone, or an editable install); else ``data/`` of the current folder
    or of its parent (a clone whose package was installed elsewhere: the notebooks run in
    ``notebooks/``)."""
    value = os.environ.get(DATA_ENV, "")
    if value:
        if not value.strip():
            raise ValueError(f"{DATA_ENV} must be a folder, got {DATA_ENV}={value!r}")
        return Path(value).expanduser()
    here = Path.cwd()
    return next((f for f in (DATA_DIR, here / "data", here.parent / "data")
                 if (f / CHECKSUMS).is_file()), DATA_DIR)


def load_table(name: str, *, folder=None) -> tuple:
    """Read table ``name`` of ``data/`` (see :data:`TABLES`) as a tuple of frozen records.

    The file, read once (at most :data:`TABLE_LIMIT` bytes), must match its checksum in
    ``SHA256SUMS`` and its schema: the header lists exactly the table's columns in order, every
    row has one cell per column, and every cell parses to its column's type. Each row must agree
    with itself: the columns that follow from the architecture (parameters, formulas), bounds in
    order, a certified dimension exactly where they meet, verdicts that match the gaps, ranks
    that match the trials. Records are frozen dataclasses with one field per column: ``int``,
    ``float`` (gaps, ``inf`` allowed), ``str``, ``bool``, ``tuple`` of ints (widths, ranks, trial
    ranks), or None for an empty cell of a nullable column.

    Parameters
    ----------
    name : str
        ``"atlas"``, ``"softmax_conjecture"`` or ``"softmax_conjecture_extension"``.
    folder : path, optional
        Where the tables are (default :func:`data_folder`).

    Raises
    ------
    ValueError
        One line naming the file and the problem: unknown table, checksum mismatch or missing
        checksum, a file too large, wrong columns, a row of the wrong length, a cell of the wrong
        type, a row that contradicts itself (with its line).
    FileNotFoundError
        If the file does not exist.
    OSError
        One line naming the file, if it cannot be read (permissions).

    Examples
    --------
    >>> rows = load_table("softmax_conjecture")
    >>> [(r.width, r.expected_dimension, r.jacobian_rank, r.verdict) for r in rows[:2]]
    [(3, 25, 25, 'clear'), (4, 40, 40, 'clear')]
    """
    if name not in TABLES:
        raise ValueError(f"name must be one of {tuple(TABLES)}, got {name!r}")
    table = TABLES[name]
    folder = data_folder() if folder is None else Path(folder).expanduser()
    path = folder / table.filename
    try:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (build it with "
                                    f"`python -m lsa_helpers data build`, or set {DATA_ENV} to "
                                    "the course's data/ folder)")
        data = _verified(folder, table.filename)
    except OSError as error:
        if error.filename is None:  # already one line, naming the file
            raise
        raise type(error)(f"{error.filename}: cannot read it ({error.strerror})") from None
    reader = csv.reader(io.StringIO(_text(path, data), newline=""))
    try:
        return _records(table, path, reader)
    except csv.Error as error:
        raise ValueError(f"{path}: line {reader.line_num}: {error}") from None


def _records(table: Table, path: Path, reader) -> tuple:
    header = next(reader, None)
    names = [c.name for c in table.columns]
    if header != names:
        header = header or []
        missing = [n for n in names if n not in header]
        unexpected = [n for n in header if n not in names]
        problem = (f"missing {missing}" if missing else "") + (
            ", " if missing and unexpected else "") + (
            f"unexpected {unexpected}" if unexpected else "")
        raise ValueError(f"{path}: columns do not match the {table.name} schema: "
                         f"{problem or 'wrong order'}")
    records, lines = [], {}
    for row in reader:
        line = reader.line_num
        if len(row) != len(names):
            raise ValueError(f"{path}: line {line} has {len(row)} cells, expected {len(names)}")
        values = {}
        for column, cell in zip(table.columns, row):
            try:
                values[column.name] = _parse(column, cell)
            except ValueError as error:
                raise ValueError(f"{path}: line {line}, column {column.name!r}: {error}") from None
        key = tuple(values[name] for name in table.key)
        if key in lines:
            raise ValueError(f"{path}: line {line} repeats line {lines[key]} "
                             f"({', '.join(f'{n}={v!r}' for n, v in zip(table.key, key))})")
        lines[key] = line
        problem = _PROBLEMS[table.name](values)
        if problem:
            raise ValueError(f"{path}: line {line}: {problem}")
        records.append(table.record(**values))
    if not records:
        raise ValueError(f"{path}: the table has no rows")
    return tuple(records)


# --- the atlas ----------------------------------------------------------------------------------

def _kind(arch: Architecture) -> str:
    widths = arch.widths
    hidden = widths[1:-1]
    if not hidden:
        return "one layer"
    if len(set(widths)) == 1:
        return "equal widths"
    ends = min(widths[0], widths[-1])
    if len(set(hidden)) == 1 and hidden[0] <= ends:
        return "bottleneck"
    return "wide hidden" if max(hidden) > ends else "unequal hidden"


def atlas_grid() -> tuple[Architecture, ...]:
    """The lightning architectures of the atlas, without repeats, sorted by depth, widths, ranks.

    - one layer: every ``d <= 8``, ``d' <= 6``, ``a <= 9``, ``t`` in 1, 2, 3;
    - two layers of equal widths ``delta <= 8``, every ``a_1, a_2 <= delta``, ``t = 3``
      (and ``t`` = 1, 2 for ``delta <= 4``);
    - three layers of equal widths: every rank triple for ``delta <= 6``, ranks in
      ``{1, 2, 4, delta}`` for ``delta`` = 7, 8;
    - two layers of general widths ``d_0, d_1, d_2`` in ``{1, 2, 3, 5, 8}``, ranks
      ``a_1`` in ``{1, 2, d_0}``, ``a_2`` in ``{1, 2, d_1}`` (``a_i <=`` its input width):
      bottlenecks, wide hidden layers, rank-one intermediate layers;
    - three layers of general widths in ``{2, 4, 7}``, ranks ``(2, 2, 2)``,
      ``(d_0, d_1, d_2)`` and ``(2, 1, 2)`` (``a_i <=`` its input width).

    Rows with ``t = 3`` unless stated.
    """
    archs = [Architecture((d, d_out), (a,), tokens=t) for d, d_out, a, t in
             product(range(1, 9), range(1, 7), range(1, 10), (1, 2, 3))]
    for delta in range(1, 9):
        for a1, a2 in product(range(1, delta + 1), repeat=2):
            for t in ((1, 2, 3) if delta <= 4 else (3,)):
                archs.append(Architecture((delta,) * 3, (a1, a2), tokens=t))
        ranks = range(1, delta + 1) if delta <= 6 else (1, 2, 4, delta)
        archs += [Architecture((delta,) * 4, r) for r in product(ranks, repeat=3)]
    sizes = (1, 2, 3, 5, 8)
    for widths in product(sizes, repeat=3):
        for ranks in product(sorted({1, 2, widths[0]}), sorted({1, 2, widths[1]})):
            if all(a <= d for a, d in zip(ranks, widths)):
                archs.append(Architecture(widths, ranks))
    for widths in product((2, 4, 7), repeat=4):
        for ranks in ((2, 2, 2), widths[:3], (2, 1, 2)):
            if all(a <= d for a, d in zip(ranks, widths)):
                archs.append(Architecture(widths, ranks))
    unique = dict.fromkeys(archs)
    return tuple(sorted(unique, key=lambda a: (a.layers, a.widths, a.ranks, a.tokens)))


def atlas_row(arch: Architecture, seed: int = 0) -> dict:
    """One row of the atlas: three :func:`dimension` calls on ``arch`` with ``rng=seed``.

    ``dimension(arch, method="certified")`` (exact rank, upper bound, certificate),
    ``dimension(arch, method="float")`` (float rank and gap) and the same widths, ranks and tokens
    with softmax, ``method="float"``. Returns a dict keyed by the atlas columns, gaps unrounded.

    Examples
    --------
    >>> row = atlas_row(Architecture((3, 3), (3,)))
    >>> row["formula_dimension"], row["exact_rank"], row["certified_dimension"], row["softmax_rank"]
    (17, 17, 17, 18)
    """
    from .function_space import dimension

    exact = dimension(arch, method="certified", rng=seed)
    floating = dimension(arch, method="float", rng=seed)
    softmax = dimension(dataclasses.replace(arch, normalization="softmax"), method="float",
                        rng=seed)
    row = {"kind": _kind(arch), "rank_one_intermediate": 1 in arch.ranks[:-1],
           "layers": arch.layers, "widths": arch.widths, "ranks": arch.ranks,
           "tokens": arch.tokens, "normalization": arch.normalization,
           "parameters": arch.parameter_count,
           "formula_dimension": exact.formula.value, "formula_status": exact.formula.status}
    for prefix, result in (("float_", floating), ("softmax_", softmax)):
        row.update({f"{prefix}rank": result.rank, f"{prefix}gap": result.float_reading.gap,
                    f"{prefix}verdict": result.float_reading.verdict,
                    f"{prefix}samples": result.samples, f"{prefix}stopped": result.stopped})
    row.update({"exact_rank": exact.rank, "upper_bound": exact.upper_bound,
                "certified_dimension": exact.certified_dimension,
                "exact_samples": exact.samples, "exact_stopped": exact.stopped,
                "softmax_upper_bound": softmax.upper_bound,
                "softmax_formula_dimension": softmax.formula.value,
                "softmax_formula_status": softmax.formula.status, "seed": seed})
    return {column.name: row[column.name] for column in ATLAS.columns}


def _check_atlas_row(row: dict) -> None:
    """Stop the build at a row that contradicts itself (:func:`_atlas_problem`)."""
    problem = _atlas_problem(row)
    if problem:
        raise ValueError(f"atlas: {problem} at widths={row['widths']} ranks={row['ranks']} "
                         f"t={row['tokens']} (seed {row['seed']})")


def _atlas_problem(row: dict) -> str | None:
    """What contradicts itself in an atlas row, or None.

    The columns that follow from the widths, ranks and tokens (depth, parameters, kind, today's
    formulas); the bounds (the formula, where one applies, equal to the exact rank; exact rank
    <= upper bound <= parameters); the certificate, present exactly when the bounds meet; the
    exact rank's stop reason; float ranks at most the parameters, and their verdicts.
    """
    widths, ranks = row["widths"], row["ranks"]
    if row["layers"] != len(ranks) or len(widths) != len(ranks) + 1:
        return f"layers = {row['layers']} with widths {widths} and ranks {ranks}"
    arch = Architecture(widths, ranks, tokens=row["tokens"])
    P = arch.parameter_count
    lightning = formula_dimension(arch)
    softmax = formula_dimension(dataclasses.replace(arch, normalization="softmax"))
    implied = {"parameters": P, "kind": _kind(arch), "rank_one_intermediate": 1 in ranks[:-1],
               "formula_dimension": lightning.value, "formula_status": lightning.status,
               "softmax_formula_dimension": softmax.value,
               "softmax_formula_status": softmax.status}
    for name, value in implied.items():
        if row[name] != value:
            return f"{name} = {row[name]!r}, not {value!r} as the widths, ranks and tokens give"
    exact, upper = row["exact_rank"], row["upper_bound"]
    if lightning.value is not None and lightning.value != exact:
        return (f"formula dimension {lightning.value} ({lightning.status}) disagrees with the "
                f"exact rank {exact}")
    if exact > upper:
        return f"exact rank {exact} exceeds the upper bound {upper}"
    certified = exact if exact == upper else None
    if row["certified_dimension"] != certified:
        return (f"certified_dimension = {row['certified_dimension']} with exact rank {exact} and "
                f"upper bound {upper}")
    if (row["exact_stopped"] == "met upper bound") != (exact == upper):
        return (f"exact_stopped = {row['exact_stopped']!r} with exact rank {exact} and upper "
                f"bound {upper}")
    for name in ("upper_bound", "float_rank", "softmax_rank", "softmax_upper_bound"):
        if row[name] > P:
            return f"{name} = {row[name]} exceeds the {P} parameters"
    return _verdict_problem(row, "float_") or _verdict_problem(row, "softmax_")


def _conjecture_problem(row: dict) -> str | None:
    """What contradicts itself in a row of the softmax experiments, or None: the parameters and
    expected dimension of its architecture, the trials, the largest rank and the right trials
    from the trial ranks, the verdict from the gap, the smallest gap at most the gap."""
    arch = Architecture((row["width"],) * (row["layers"] + 1),
                        (row["attention_rank"],) * row["layers"], "softmax", row["tokens"])
    ranks = row["trial_ranks"]
    implied = {"parameters": arch.parameter_count,
               "expected_dimension": formula_dimension(arch).value,
               "jacobian_rank": max(ranks),
               "trials_right": sum(r == row["expected_dimension"] for r in ranks)}
    if len(ranks) != row["trials"]:
        return f"trials = {row['trials']} but trial_ranks lists {len(ranks)} ranks"
    for name, value in implied.items():
        if row[name] != value:
            return f"{name} = {row[name]!r}, not {value!r} as the other columns give"
    if max(ranks) > arch.parameter_count or row["trials_clear"] > row["trials"]:
        return (f"trial ranks {ranks} above the {arch.parameter_count} parameters, or "
                f"trials_clear = {row['trials_clear']} above trials = {row['trials']}")
    if row["smallest_gap"] > row["gap"]:
        return (f"smallest_gap = {_format(_GAP, row['smallest_gap'])} exceeds gap = "
                f"{_format(_GAP, row['gap'])}")
    return _verdict_problem(row, "")


def _verdict_problem(row: dict, prefix: str) -> str | None:
    """A verdict that its gap contradicts: a clear rank has a gap of at least 1e4 (stored with two
    digits, it reads >= 1e4); an unclear one may have any gap, since other doubts than the gap
    (:attr:`~lsa_helpers.rank.FloatRank.reason`) make a rank unclear too."""
    gap, verdict = row[f"{prefix}gap"], row[f"{prefix}verdict"]
    if gap < CLEAR_GAP and verdict == "clear":
        return f"{prefix}verdict = {verdict!r} with {prefix}gap = {_format(_GAP, gap)}"
    return None


_PROBLEMS = {"atlas": _atlas_problem, "softmax_conjecture": _conjecture_problem,
             "softmax_conjecture_extension": _conjecture_problem}


def _atlas_job(job) -> dict:
    return atlas_row(*job)


def _atlas_rows(archs, seed: int, workers: int, progress: Callable[[int], object]) -> list[dict]:
    """Atlas rows in order, in ``workers`` processes with one BLAS thread each; each row is
    checked (:func:`_check_atlas_row`) and counted by ``progress(1)`` as it comes."""
    from .workers import parallel_map

    def each(row):
        _check_atlas_row(row)
        progress(1)

    return parallel_map(_atlas_job, [(arch, seed) for arch in archs], workers, chunksize=4,
                        each=each)


# --- the softmax experiments --------------------------------------------------------------------

def _conjecture_rows(rows, *, options: dict, seed: int) -> list[dict]:
    """Table rows from :class:`ConjectureRow` values; ``options`` complete with the defaults."""
    return [{"width": r.width, "layers": options["layers"], "attention_rank": options["rank"],
             "tokens": options["tokens"], "parameters": r.parameters,
             "expected_dimension": r.expected_dimension, "samples": options["samples"],
             "trials": len(r.trial_ranks), "jacobian_rank": r.rank, "gap": r.gap,
             "verdict": r.best.verdict, "smallest_gap": min(t.gap for t in r.trial_ranks),
             "trials_right": r.trials_right,
             "trials_clear": sum(t.is_clear for t in r.trial_ranks),
             "trial_ranks": tuple(t.rank for t in r.trial_ranks), "seed": seed} for r in rows]


def _with_defaults(options: dict) -> dict:
    """``options`` completed with the defaults of :func:`reproduce_softmax_conjecture`."""
    import inspect

    from .experiments import reproduce_softmax_conjecture

    defaults = {name: p.default for name, p in
                inspect.signature(reproduce_softmax_conjecture).parameters.items()
                if p.kind is p.KEYWORD_ONLY}
    return {**defaults, **options}


def _paper_rows(seed: int, options: dict, workers: int) -> list[dict]:
    from .experiments import reproduce_softmax_conjecture

    rows = reproduce_softmax_conjecture(rng=seed, workers=workers, **options)
    return _conjecture_rows(rows, options=_with_defaults(options), seed=seed)


def _extension_rows(seed: int, options: dict, workers: int,
                    progress: Callable[[int], object]) -> list[dict]:
    """One call per rank ``a`` with ``rng = numpy.random.default_rng([seed, a])``."""
    import numpy as np

    from .experiments import reproduce_softmax_conjecture

    options = dict(options)
    widths, ranks = options.pop("widths"), options.pop("ranks")
    out = []
    for a in ranks:
        rows = reproduce_softmax_conjecture([w for w in widths if w >= a], rank=a,
                                            rng=np.random.default_rng([seed, a]),
                                            workers=workers, **options)
        out += _conjecture_rows(rows, options=_with_defaults({**options, "rank": a}), seed=seed)
        progress(1)
    return sorted(out, key=lambda r: (r["attention_rank"], r["width"]))


# --- building -----------------------------------------------------------------------------------

def _csv_chunks(table: Table, rows: list[dict]) -> Iterable[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in table.columns])
    yield buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_format(c, row[c.name]) for c in table.columns])
        yield buffer.getvalue()


def build_data(folder=None, *, seed: int = 0, atlas=None, paper: dict | None = None,
               extension: dict | None = None, workers: int | None = None,
               progress: bool = True) -> dict:
    """Recompute every table of ``data/`` and write it, with ``README.md`` and ``SHA256SUMS``.

    ``atlas``: the architectures (default :func:`atlas_grid`); ``paper``: keyword arguments of
    :func:`reproduce_softmax_conjecture` (default ``{}``, the paper's settings); ``extension``: as
    :data:`EXTENSION_EXPERIMENT` (the default). ``workers``: processes for every table (default
    one per core). ``progress``: ``tqdm`` bars on standard error. The folder is checked before
    anything is computed; every file is first written into a staging folder inside it, and only
    when all of them are complete are they moved into place (``SHA256SUMS`` last), so a failed
    build leaves the old files as they were. Returns a summary: rows per table and the seconds
    each stage took.

    Raises
    ------
    ValueError
        If ``folder`` is empty or not a directory, or a formula dimension disagrees with the exact
        rank of an atlas row (or an exact rank exceeds its upper bound): nothing is written.
    """
    from tqdm import tqdm

    folder = _output_folder(folder)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=folder))  # fails now, if it must
    atlas_default = atlas is None
    atlas = atlas_grid() if atlas is None else tuple(atlas)
    paper = dict(PAPER_EXPERIMENT if paper is None else paper)
    extension = dict(EXTENSION_EXPERIMENT if extension is None else extension)
    workers = workers or os.cpu_count() or 1
    times, start, cpu = {}, time.perf_counter(), _cpu_seconds()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    live = getattr(sys.stderr, "isatty", lambda: False)()

    def bar(label, total):  # a log file gets a line every 10 s, a terminal a live bar
        return tqdm(total=total, desc=label, file=sys.stderr, disable=not progress,
                    mininterval=0.1 if live else 10, dynamic_ncols=live)

    try:
        clock = time.perf_counter()
        with bar("atlas", len(atlas)) as shown:
            atlas_rows = _atlas_rows(atlas, seed, workers, shown.update)
        times["atlas"] = time.perf_counter() - clock

        clock = time.perf_counter()
        with bar("softmax conjecture (paper)", 1) as shown:
            paper_rows = _paper_rows(seed, paper, workers)
            shown.update(1)
        times["softmax_conjecture"] = time.perf_counter() - clock

        clock = time.perf_counter()
        with bar("softmax conjecture (extension)", len(extension["ranks"])) as shown:
            extension_rows = _extension_rows(seed, extension, workers, shown.update)
        times["softmax_conjecture_extension"] = time.perf_counter() - clock
        times["total"] = time.perf_counter() - start
        times["cpu"] = _cpu_seconds() - cpu

        tables = {"atlas": atlas_rows, "softmax_conjecture": paper_rows,
                  "softmax_conjecture_extension": extension_rows}
        for name, rows in tables.items():
            write_atomic(staging / TABLES[name].filename, _csv_chunks(TABLES[name], rows))
        summary = {"folder": str(folder), "seed": seed, "workers": workers,
                   "rows": {name: len(rows) for name, rows in tables.items()},
                   "seconds": {k: round(v, 1) for k, v in times.items()}, "load": load,
                   "paper": paper, "extension": extension, "atlas_default": atlas_default}
        write_atomic(staging / "README.md", [_readme(summary, atlas_rows)])
        files = [TABLES[name].filename for name in tables]
        write_atomic(staging / CHECKSUMS, [f"{_sha256(staging / f)}  {f}\n" for f in files])
        for name in [*files, "README.md", CHECKSUMS]:
            os.replace(staging / name, folder / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def _output_folder(folder) -> Path:
    """The folder a build writes into, created if need be: :func:`data_folder` by default."""
    if folder is None:
        folder = data_folder()
    elif not str(folder).strip():
        raise ValueError(f"folder must be a path, got folder={str(folder)!r}")
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"folder must be a directory, got {folder} (not a directory)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _cpu_seconds() -> float:
    """User and system CPU time of this process and its finished children (the workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# --- data/README.md -----------------------------------------------------------------------------

def _columns_doc(table: Table) -> str:
    lines = ["| column | type | what it holds |", "|---|---|---|"]
    for c in table.columns:
        kind = {"sizes": "ints `a,b,...`", "gap": "float (2 digits)"}.get(c.kind, c.kind)
        if c.nullable:
            kind += ", may be empty"
        doc = c.doc + (f" (one of: {', '.join(c.choices)})" if c.choices and len(c.choices) > 1
                       else "")
        lines.append(f"| `{c.name}` | {kind} | {doc} |")
    return "\n".join(lines)


def _atlas_counts(rows: list[dict]) -> str:
    counts: dict[tuple, list[int]] = {}
    for row in rows:
        key = (row["layers"], row["kind"])
        entry = counts.setdefault(key, [0, 0, 0, 0])
        entry[0] += 1
        entry[1] += row["formula_dimension"] is None
        entry[2] += row["certified_dimension"] is None
        entry[3] += row["float_verdict"] != "clear" or row["float_rank"] != row["exact_rank"]
    lines = [("| layers | kind | rows | no formula | not certified | float rank unclear or "
              "off the exact rank |"), "|---|---|---|---|---|---|"]
    for (layers, kind), (n, none, uncertified, off) in sorted(counts.items()):
        lines.append(f"| {layers} | {kind} | {n} | {none} | {uncertified} | {off} |")
    return "\n".join(lines)


def _atlas_care(rows: list[dict]) -> str:
    """The atlas rows whose float ranks need care, as a Markdown table (or a sentence)."""
    lines, counts = [], {}
    for r in rows:
        notes = {}  # what -> detail
        if r["float_verdict"] != "clear" or r["float_rank"] != r["exact_rank"]:
            notes["lightning float rank off the exact rank or UNCLEAR"] = (
                f"lightning float rank {r['float_rank']} ({r['float_verdict']}) vs exact "
                f"{r['exact_rank']}")
        if r["softmax_verdict"] != "clear":
            notes["softmax gap UNCLEAR"] = "softmax gap UNCLEAR"
        if r["softmax_rank"] > r["softmax_upper_bound"]:
            notes["softmax rank above its upper bound"] = (
                f"softmax rank above its upper bound {r['softmax_upper_bound']}")
        formula = r["softmax_formula_dimension"]
        if formula is not None and r["softmax_rank"] != formula:
            notes["softmax rank off its formula"] = (
                f"softmax rank off its formula {formula} ({r['softmax_formula_status']})")
        for what in notes:
            counts[what] = counts.get(what, 0) + 1
        if notes:
            cells = (",".join(map(str, r["widths"])), ",".join(map(str, r["ranks"])),
                     r["tokens"], r["softmax_rank"], _format(_GAP, r["softmax_gap"]),
                     "; ".join(notes.values()))
            lines.append("| " + " | ".join(map(str, cells)) + " |")
    if not lines:
        return "None: every float rank is clear and agrees with the exact rank and the formulas."
    summary = "; ".join(f"{what}: {n}" for what, n in counts.items())
    return "\n".join([f"{len(lines)} rows ({summary}).", "",
                      "| widths | ranks | t | softmax rank | softmax gap | note |",
                      "|---|---|---|---|---|---|", *lines])


def _count(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


_GRID = """:

- one layer: `d <= 8`, `d' <= 6`, `a <= 9`, `t` in 1, 2, 3;
- two layers of equal widths up to 8, every pair of ranks (`t` in 1, 2, 3 up to width 4);
- three layers of equal widths: every triple of ranks up to width 6, ranks in {1, 2, 4, width}
  at widths 7 and 8;
- two layers with widths in {1, 2, 3, 5, 8} and ranks `a_1` in {1, 2, d_0}, `a_2` in
  {1, 2, d_1}: bottlenecks, wide hidden layers, rank-one intermediate layers;
- three layers with widths in {2, 4, 7}, ranks `(2, 2, 2)`, `(d_0, d_1, d_2)`, `(2, 1, 2)`;

with `t = 3` unless stated, `a_i` at most its input width in the deep grids."""


def _readme(summary: dict, atlas_rows: list[dict]) -> str:
    from importlib.metadata import PackageNotFoundError, version

    import numpy

    try:
        flint_version = version("python-flint")
    except PackageNotFoundError:  # pragma: no cover
        flint_version = "unknown"
    seed, seconds, rows = summary["seed"], summary["seconds"], summary["rows"]
    command = "python -m lsa_helpers data build" + (f" --seed {seed}" if seed else "")
    grid = ("the default grid, `atlas_grid()`" if summary["atlas_default"]
            else "a custom list of architectures (not the default grid)")
    grid_list = _GRID if summary["atlas_default"] else "."
    paper = ", ".join(f"{k}={v!r}" for k, v in summary["paper"].items())
    ext = dict(summary["extension"])
    widths, ranks = ext.pop("widths"), ext.pop("ranks")
    ext_call = ", ".join(f"{k}={v!r}" for k, v in ext.items())
    load_text = ("" if summary["load"] is None else
                 f"; load average {summary['load']:.1f} when the build started")
    same_as = ("" if paper else "the same as `python -m lsa_helpers reproduce softmax-conjecture "
               f"--seed {seed}`. ")
    return f"""# Precomputed data

Generated by `{command}` (seed {seed}) from `lsa_helpers/data.py`: do not edit by hand, change
the module and rebuild. `lsa_helpers.load_table(name)` reads a table after checking it against
`SHA256SUMS` and its schema, and returns a tuple of frozen records, one field per column (`int`,
`float`, `str`, `bool`, a tuple of ints, or `None` for an empty cell). Plain CSV: comma-separated,
one header line, `\\n` line ends, lists such as widths written `3,3,3` (quoted).
`sha256sum -c SHA256SUMS` checks the files from a shell.

The build used {summary['workers']} worker process(es) with one BLAS thread each (Python
{platform.python_version()}, numpy {numpy.__version__}, python-flint {flint_version},
{platform.machine()}). Measured wall time: **{seconds['total']:.0f} s** (atlas
{seconds['atlas']:.0f} s, paper experiment {seconds['softmax_conjecture']:.0f} s, extension
{seconds['softmax_conjecture_extension']:.0f} s), {seconds['cpu']:.0f} s of CPU time{load_text}.

Gaps (singular-value gaps of float64 ranks) are written with two significant digits: their
later digits depend on the machine's BLAS. A rebuild on another machine reproduces the integers
and the `clear`/`UNCLEAR` verdicts (a verdict can flip only where a gap lies near 1e4); the
test `tests/test_data.py` recomputes a seeded slice of the atlas and compares exactly those.
The build stops, writing nothing, if an atlas row where a formula applies disagrees with its
exact rank.

## `atlas.csv` ({_count(rows['atlas'])})

{ATLAS.doc[0].upper() + ATLAS.doc[1:]} per row, over {grid}{grid_list} Each row is
`atlas_row(arch, seed={seed})`, three calls:

```python
dimension(arch, method="certified", rng={seed})       # exact rank, upper bound, certificate
dimension(arch, method="float", rng={seed})           # float rank and gap
dimension(dataclasses.replace(arch, normalization="softmax"), method="float", rng={seed})
```

the same numbers as `python -m lsa_helpers dimension --widths 3,3,3 --ranks 2,2 --tokens 3
--seed {seed}` (add `--method float`, or `--softmax`).

{_columns_doc(ATLAS)}

Rows per kind. No formula: `t = 1`, or a rank-one intermediate layer followed by a layer of
rank at least 2. Not certified: the exact rank stays below the symmetry upper bound.

{_atlas_counts(atlas_rows)}

Rows to read with care: a float rank that is UNCLEAR, off the exact rank, above its upper
bound, or off its formula. A rank above its upper bound (stopped: `exceeds upper bound`) is
not a dimension: the float rank counted rounding noise, typically of a badly scaled Jacobian
(parameter columns 1e8 times smaller than others, whose rounding errors the row and column
scaling of `float_rank` lifts above its tolerance). A softmax rank off its formula is either
such a rank or a counterexample to check: none of these rows has been settled here.

{_atlas_care(atlas_rows)}

## `softmax_conjecture.csv` ({_count(rows['softmax_conjecture'])})

{CONJECTURE.doc[0].upper() + CONJECTURE.doc[1:]}:

```python
reproduce_softmax_conjecture({paper + ", " if paper else ""}rng={seed})
```

{same_as}The paper's expected dimensions are 25, 40, 57, 76, 97, 120, 145, 172.

{_columns_doc(CONJECTURE)}

## `softmax_conjecture_extension.csv` ({_count(rows['softmax_conjecture_extension'])})

{EXTENSION.doc[0].upper() + EXTENSION.doc[1:]}. One run per rank `a` in {ranks!r}, over the
widths in {widths!r} that are at least `a`:

```python
reproduce_softmax_conjecture(widths, rank=a, {ext_call},
                             rng=numpy.random.default_rng([{seed}, a]))
```

{_columns_doc(EXTENSION)}

## `SHA256SUMS`

The SHA-256 of each CSV file, in `sha256sum` format. `load_table` refuses a file that does not
match.
"""
