"""The precomputed tables: their schema, and reading them back with every check.

Three plain CSV files ship in the package's ``data`` folder (``lsa_helpers/data/``, listed in
``SHA256SUMS`` and described in its ``README.md``), rebuilt by ``python -m lsa_helpers data build``
and read by :func:`load_table`, which checks each file against ``SHA256SUMS``, against its schema
(:data:`TABLES`: column names, order and types) and each row against itself before it returns
anything.

- ``atlas``: one row per lightning architecture of :func:`~lsa_helpers.atlas.atlas_grid`
  (:func:`~lsa_helpers.atlas.atlas_row`): the formula dimension, the float64 rank with its gap,
  the exact rank mod p, the symmetry upper bound and the certified dimension, and the float rank
  of the same architecture with softmax.
- ``softmax_conjecture``: the paper's experiment,
  :func:`~lsa_helpers.experiments.reproduce_softmax_conjecture` with its defaults (two layers,
  ``a = 2``, ``t = 3``, widths 3 to 10).
- ``softmax_conjecture_extension``: the same test on three layers, widths 3 to 12, ranks 1 to 4.

Gaps are stored with two significant digits (their later digits depend on the machine's BLAS);
integers and the ``clear``/``UNCLEAR`` verdicts are what a rebuild must reproduce.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import math
import os
import re
import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from .atlas import KINDS, Row, atlas_problem, conjecture_problem
from .formulas import FORMULA_STATUSES
from .function_space import STOP_REASONS
from .rank import VERDICTS

if TYPE_CHECKING:
    from _csv import Reader

__all__ = ["TABLES", "data_folder", "load_table"]

DATA_ENV = "LSA_DATA_DIR"
"""An environment variable that names another folder of the tables (a rebuilt one)."""

CHECKSUMS = "SHA256SUMS"
SUMS_LIMIT = 2**16
"""Bytes: the largest ``SHA256SUMS`` that :func:`load_table` reads (three lines of 83 bytes)."""
TABLE_LIMIT = 2**26
"""Bytes: the largest table that :func:`load_table` reads (the atlas has half a megabyte)."""

_CELL_TYPES = ("int", "gap", "str", "bool", "sizes")

StrPath: TypeAlias = "str | os.PathLike[str]"
"""A file or folder: a string or a path object."""
Cell: TypeAlias = "int | float | str | bool | tuple[int, ...] | None"
"""The value of one cell, of its column's ``cell_type`` (None: an empty cell)."""


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of a table: ``name``, ``cell_type``, what it holds (``doc``), whether it may be
    empty.

    ``cell_type`` is ``"int"``, ``"gap"`` (a float written with two significant digits, ``inf``
    allowed), ``"str"`` (one of ``choices`` when given), ``"bool"`` (``true``/``false``) or
    ``"sizes"`` (comma-separated positive integers, read as a tuple). An ``"int"`` is at least
    ``minimum`` (counts, ranks and dimensions are never negative).
    """

    name: str
    cell_type: str
    doc: str
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    minimum: int = 0

    def __post_init__(self) -> None:
        if self.cell_type not in _CELL_TYPES:
            raise ValueError(f"cell_type must be one of {_CELL_TYPES}, got {self.cell_type!r}")


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: its name (the file is ``<name>.csv``), what one row is, its columns, and ``key``:
    the columns that tell rows apart (no two rows may share them)."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}.csv"


def _float_columns(prefix: str, what: str) -> tuple[Column, ...]:
    return (
        Column(f"{prefix}rank", "int", f"float64 rank of the Jacobian of {what} (normalized SVD)"),
        Column(f"{prefix}gap", "gap",
               "smallest kept over largest dropped singular value (full rank: kept over the "
               "tolerance; inf: the dropped ones are exactly 0), two significant digits"),
        Column(f"{prefix}verdict", "str", "clear when the gap is at least 1e4 and nothing else "
               "doubts the rank (`FloatRank.reason`), else UNCLEAR", choices=VERDICTS),
        Column(f"{prefix}samples", "int", "inputs used (adaptive, see `dimension`)"),
        Column(f"{prefix}stopped", "str", "why no more inputs were added", choices=STOP_REASONS),
    )


ATLAS = Table("atlas", "one lightning architecture (and the same widths with softmax)", (
    Column("kind", "str",
           "`one layer`; `equal widths` (all d_i equal); `bottleneck` (equal hidden widths "
           "<= d_0 and <= d_l, not all equal); `wide hidden` (a hidden width > min(d_0, d_l)); "
           "`unequal hidden` (the rest: unequal hidden widths, each <= min(d_0, d_l))",
           choices=KINDS),
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
    Column("formula_status", "str", "paper, derived or none",
           choices=tuple(s for s in FORMULA_STATUSES if s != "conjecture")),
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
           choices=STOP_REASONS),
    Column("softmax_formula_dimension", "int", "`formula_dimension` of the softmax network: "
           "the general lightning formula + l (paper for one layer, conjecture for deep "
           "networks), or for t = 1 the linear map V_l...V_1 (derived); empty where none "
           "applies", nullable=True),
    Column("softmax_formula_status", "str", "paper, conjecture, derived or none",
           choices=FORMULA_STATUSES),
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
           "maximum, the submission code's protocol as a reviewer quotes it)"),
    Column("gap", "gap", "singular-value gap of that trial, two significant digits"),
    Column("verdict", "str", "clear when that gap is at least 1e4 and nothing else doubts "
           "the rank", choices=VERDICTS),
    Column("smallest_gap", "gap", "smallest gap over all trials, two significant digits"),
    Column("trials_right", "int", "trials whose rank is the expected dimension"),
    Column("trials_clear", "int", "trials whose gap is clear"),
    Column("trial_ranks", "sizes", "the rank of each trial, in order"),
    Column("seed", "int", "the build seed (each run derives its rng from it as the call "
           "above shows)"),
)

_CONJECTURE_KEY = ("width", "layers", "attention_rank", "tokens")
CONJECTURE = Table("softmax_conjecture", "one width of the paper's experiment (two softmax "
                   "layers, a = 2, t = 3, 250 inputs, 5 trials, 8 at width 10)",
                   _CONJECTURE_COLUMNS, _CONJECTURE_KEY)
EXTENSION = Table("softmax_conjecture_extension", "one (width, rank) of the extension: three "
                  "softmax layers, t = 3, widths 3 to 12, ranks 1 to 4 (a <= width)",
                  _CONJECTURE_COLUMNS, _CONJECTURE_KEY)

TABLES = {table.name: table for table in (ATLAS, CONJECTURE, EXTENSION)}
"""The tables by name: their columns, in file order, with their types."""


_PYTHON_TYPES = {"int": int, "gap": float, "str": str, "bool": bool, "sizes": tuple}


def _record_type(table: Table, name: str) -> type:
    """A frozen dataclass ``name`` with one field per column of ``table``, in order."""
    fields = [(c.name, _PYTHON_TYPES[c.cell_type] | None if c.nullable
               else _PYTHON_TYPES[c.cell_type]) for c in table.columns]
    record = dataclasses.make_dataclass(name, fields, frozen=True)
    record.__module__ = __name__
    record.__doc__ = f"One row of {table.filename}: {table.doc}."
    return record


AtlasRow = _record_type(ATLAS, "AtlasRow")
SoftmaxConjectureRow = _record_type(CONJECTURE, "SoftmaxConjectureRow")
SoftmaxConjectureExtensionRow = _record_type(EXTENSION, "SoftmaxConjectureExtensionRow")
RECORDS = {"atlas": AtlasRow, "softmax_conjecture": SoftmaxConjectureRow,
           "softmax_conjecture_extension": SoftmaxConjectureExtensionRow}
"""The record type of each table: what :func:`load_table` returns a tuple of."""

_PROBLEMS: dict[str, Callable[[Row], str | None]] = {
    "atlas": atlas_problem, "softmax_conjecture": conjecture_problem,
    "softmax_conjecture_extension": conjecture_problem}


# --- cells --------------------------------------------------------------------------------------

def format_cell(column: Column, value: Any) -> str:
    """The text of ``value`` in a cell of ``column``: gaps with two significant digits."""
    if value is None:
        if not column.nullable:
            raise ValueError(f"column {column.name!r} may not be empty")
        return ""
    if column.cell_type == "gap":
        return f"{value:.1e}"
    if column.cell_type == "bool":
        return "true" if value else "false"
    if column.cell_type == "sizes":
        return ",".join(str(int(v)) for v in value)
    return str(value)


_INT = re.compile(r"-?[0-9]+")


def _parse(column: Column, text: str) -> Cell:
    """The value of one cell, or ValueError naming what was expected."""
    if text == "" and column.nullable:
        return None
    if column.cell_type == "int":
        if not _INT.fullmatch(text):
            raise ValueError(f"expected an integer, got {text!r}")
        if int(text) < column.minimum:
            raise ValueError(f"expected an integer >= {column.minimum}, got {text!r}")
        return int(text)
    if column.cell_type == "gap":
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if math.isnan(value) or value < 0:
            raise ValueError(f"expected a non-negative number or inf, got {text!r}")
        return value
    if column.cell_type == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return text == "true"
    if column.cell_type == "sizes":
        parts = text.split(",")
        if not all(re.fullmatch(r"[1-9][0-9]*", p) for p in parts):
            raise ValueError(f"expected comma-separated positive integers, got {text!r}")
        return tuple(int(p) for p in parts)
    if column.choices is not None and text not in column.choices:
        raise ValueError(f"expected one of {column.choices}, got {text!r}")
    if text == "":
        raise ValueError("expected a value, got an empty cell")
    return text


# --- files: bounded reads and checksums ---------------------------------------------------------

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


def read_checksum(folder: Path, filename: str) -> str:
    """The checksum of ``filename`` listed in ``folder/SHA256SUMS`` (sha256sum format)."""
    sums = folder / CHECKSUMS
    if not sums.is_file():
        raise ValueError(f"{folder / filename}: cannot verify it, {sums} does not exist")
    for line in _text(sums, _read(sums, SUMS_LIMIT)).splitlines():
        match = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line)
        if match and match.group(2) == filename:
            return match.group(1)
    raise ValueError(f"{folder / filename}: not listed in {sums}")


def _verified(folder: Path, filename: str) -> bytes:
    """The bytes of ``folder/filename`` that match their checksum, read once.

    A rebuild replaces the tables and then ``SHA256SUMS``: a mismatch is read again once, a
    moment later, before it is reported.
    """
    path = folder / filename
    for wait in (0.1, None):
        expected = read_checksum(folder, filename)
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
    """Where the tables are: ``$LSA_DATA_DIR`` if set (``~`` expanded), else the package's own
    ``data`` folder (``importlib.resources.files("lsa_helpers") / "data"``)."""
    value = os.environ.get(DATA_ENV, "")
    if value:
        if not value.strip():
            raise ValueError(f"{DATA_ENV} must be a folder, got {DATA_ENV}={value!r}")
        return Path(value).expanduser()
    return Path(str(files(__package__) / "data"))


def load_table(name: str, *, folder: StrPath | None = None) -> tuple[Any, ...]:
    """Read table ``name`` (see :data:`TABLES`) as a tuple of frozen records.

    The file, read once (at most :data:`TABLE_LIMIT` bytes), must match its checksum in
    ``SHA256SUMS`` and its schema: the header lists exactly the table's columns in order, every
    row has one cell per column, and every cell parses to its column's type. Each row must agree
    with itself: the columns that follow from the architecture (parameters, formulas), bounds in
    order, a certified dimension exactly where they meet, verdicts that match the gaps, ranks
    that match the trials. Records (:data:`RECORDS`) are frozen dataclasses with one field per
    column: ``int``, ``float`` (gaps, ``inf`` allowed), ``str``, ``bool``, ``tuple`` of ints
    (widths, ranks, trial ranks), or None for an empty cell of a nullable column.

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
    where = data_folder() if folder is None else Path(folder).expanduser()
    path = where / table.filename
    try:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (build it with "
                                    f"`python -m lsa_helpers data build --folder {where}`)")
        data = _verified(where, table.filename)
    except OSError as error:
        if error.filename is None:  # already one line, naming the file
            raise
        raise type(error)(f"{error.filename}: cannot read it ({error.strerror})") from None
    reader = csv.reader(io.StringIO(_text(path, data), newline=""))
    try:
        return _records(table, path, reader)
    except csv.Error as error:
        raise ValueError(f"{path}: line {reader.line_num}: {error}") from None


def _records(table: Table, path: Path, reader: Reader) -> tuple[Any, ...]:
    header = next(reader, [])
    names = [c.name for c in table.columns]
    if header != names:
        missing = [n for n in names if n not in header]
        unexpected = [n for n in header if n not in names]
        difference = (f"missing {missing}" if missing else "") + (
            ", " if missing and unexpected else "") + (
            f"unexpected {unexpected}" if unexpected else "")
        raise ValueError(f"{path}: columns do not match the {table.name} schema: "
                         f"{difference or 'wrong order'}")
    records: list[Any] = []
    lines: dict[tuple[Cell, ...], int] = {}  # key -> the line that first had it
    for row in reader:
        line = reader.line_num
        if len(row) != len(names):
            raise ValueError(f"{path}: line {line} has {len(row)} cells, expected {len(names)}")
        values: Row = {}
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
        records.append(RECORDS[table.name](**values))
    if not records:
        raise ValueError(f"{path}: the table has no rows")
    return tuple(records)
