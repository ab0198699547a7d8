"""Rebuilding the tables: ``python -m lsa_helpers data build``.

The rows are computed in worker processes (:func:`~lsa_helpers.workers.parallel_map`), checked as
they come, written atomically with their checksums, and described in a generated ``README.md``.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import platform
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .architecture import Architecture
from .atlas import Row, atlas_grid, atlas_problem, atlas_row
from .experiments import ConjectureRow, reproduce_softmax_conjecture
from .tables import (
    ATLAS,
    CHECKSUMS,
    CONJECTURE,
    EXTENSION,
    TABLES,
    StrPath,
    Table,
    data_folder,
    format_cell,
)
from .workers import parallel_map, worker_count

EXTENSION_EXPERIMENT = {"widths": tuple(range(3, 13)), "ranks": (1, 2, 3, 4), "layers": 3,
                        "samples": 120, "trials": 3, "trials_at_10": 3}
"""The extension: for each rank ``a``, the widths ``>= a``. 120 inputs per trial (at least six
rows per parameter) keep every gap far above 1e4 (see the ``smallest_gap`` column), 3 trials at
every width, in seconds."""


def write_atomic(path: StrPath, chunks: Iterable[str]) -> Path:
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


def _atlas_job(job: tuple[Architecture, int]) -> Row:
    return atlas_row(*job)


def _check_atlas_row(row: Row) -> None:
    """Stop the build at a row that contradicts itself
    (:func:`~lsa_helpers.atlas.atlas_problem`)."""
    problem = atlas_problem(row)
    if problem:
        raise ValueError(f"atlas: {problem} at widths={row['widths']} ranks={row['ranks']} "
                         f"t={row['tokens']} (seed {row['seed']})")


def _atlas_rows(archs: Iterable[Architecture], seed: int, workers: int,
                progress: Callable[[int], object]) -> list[Row]:
    """Atlas rows in order, in ``workers`` processes with one BLAS thread each; each row is
    checked (:func:`_check_atlas_row`) and counted by ``progress(1)`` as it comes."""
    def each(row: Row) -> None:
        _check_atlas_row(row)
        progress(1)

    return parallel_map(_atlas_job, [(arch, seed) for arch in archs], workers, chunksize=4,
                        each=each)


# --- the softmax experiments --------------------------------------------------------------------

def _conjecture_rows(rows: Iterable[ConjectureRow], seed: int) -> list[Row]:
    """Table rows from :class:`~lsa_helpers.experiments.ConjectureRow` values."""
    return [{"width": r.width, "layers": r.architecture.layers,
             "attention_rank": r.architecture.ranks[0], "tokens": r.architecture.tokens,
             "parameters": r.parameters, "expected_dimension": r.expected_dimension,
             "samples": r.samples, "trials": len(r.trial_ranks), "jacobian_rank": r.rank,
             "gap": r.gap, "verdict": r.best.verdict,
             "smallest_gap": min(t.gap for t in r.trial_ranks), "trials_right": r.trials_right,
             "trials_clear": sum(t.is_clear for t in r.trial_ranks),
             "trial_ranks": tuple(t.rank for t in r.trial_ranks), "seed": seed} for r in rows]


def _paper_rows(seed: int, options: dict[str, Any], workers: int) -> list[Row]:
    return _conjecture_rows(reproduce_softmax_conjecture(rng=seed, workers=workers, **options),
                            seed)


def _extension_rows(seed: int, options: dict[str, Any], workers: int,
                    progress: Callable[[int], object]) -> list[Row]:
    """One call per rank ``a`` with ``rng = numpy.random.default_rng([seed, a])``."""
    options = dict(options)
    widths, ranks = options.pop("widths"), options.pop("ranks")
    out: list[Row] = []
    for a in ranks:
        rows = reproduce_softmax_conjecture([w for w in widths if w >= a], rank=a,
                                            rng=np.random.default_rng([seed, a]),
                                            workers=workers, **options)
        out += _conjecture_rows(rows, seed)
        progress(1)
    return sorted(out, key=lambda r: (r["attention_rank"], r["width"]))


# --- building -----------------------------------------------------------------------------------

def _csv_chunks(table: Table, rows: list[Row]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in table.columns])
    yield buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([format_cell(c, row[c.name]) for c in table.columns])
        yield buffer.getvalue()


def build_data(folder: StrPath | None = None, *, seed: int = 0,
               atlas: Iterable[Architecture] | None = None, paper: dict[str, Any] | None = None,
               extension: dict[str, Any] | None = None, workers: int | None = None,
               progress: bool = True) -> dict[str, Any]:
    """Recompute every table and write it into ``folder`` (default
    :func:`~lsa_helpers.tables.data_folder`), with ``README.md`` and ``SHA256SUMS``.

    ``atlas``: the architectures (default :func:`atlas_grid`); ``paper``: keyword arguments of
    :func:`reproduce_softmax_conjecture` (default ``{}``, the paper's settings); ``extension``: as
    :data:`EXTENSION_EXPERIMENT` (the default). ``workers``: processes for every table (default
    :func:`~lsa_helpers.workers.usable_cpus`). ``progress``: ``tqdm`` bars on standard error.
    The folder is checked before anything is computed; every file is first written into a
    staging folder inside it, and only when all of them are complete are they moved into place
    (``SHA256SUMS`` last), so a failed build leaves the old files as they were. Returns a
    summary: rows per table and the seconds each stage took.

    Raises
    ------
    ValueError
        If ``folder`` is empty or not a directory, ``workers`` not a positive integer, or a
        formula dimension disagrees with the exact rank of an atlas row (or an exact rank
        exceeds its upper bound): nothing is written.
    """
    workers = worker_count(workers)
    target = _output_folder(folder)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target))  # fails now, if it must
    archs = atlas_grid() if atlas is None else tuple(atlas)
    paper = dict(paper or {})
    extension = dict(EXTENSION_EXPERIMENT if extension is None else extension)
    times: dict[str, float] = {}
    start, cpu = time.perf_counter(), _cpu_seconds()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    live = getattr(sys.stderr, "isatty", lambda: False)()

    def bar(label: str, total: int) -> tqdm[Any]:
        """A log file gets a line every 10 s, a terminal a live bar."""
        return tqdm(total=total, desc=label, file=sys.stderr, disable=not progress,
                    mininterval=0.1 if live else 10, dynamic_ncols=live)

    try:
        clock = time.perf_counter()
        with bar("atlas", len(archs)) as shown:
            atlas_rows = _atlas_rows(archs, seed, workers, shown.update)
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
        summary = {"folder": str(target), "seed": seed, "workers": workers,
                   "rows": {name: len(rows) for name, rows in tables.items()},
                   "seconds": {k: round(v, 1) for k, v in times.items()}, "load": load,
                   "paper": paper, "extension": extension, "atlas_default": atlas is None}
        write_atomic(staging / "README.md", [_readme(summary, atlas_rows)])
        files = [TABLES[name].filename for name in tables]
        write_atomic(staging / CHECKSUMS, [f"{_sha256(staging / f)}  {f}\n" for f in files])
        for name in [*files, "README.md", CHECKSUMS]:
            os.replace(staging / name, target / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def _output_folder(folder: StrPath | None) -> Path:
    """The folder a build writes into, created if need be: :func:`data_folder` by default."""
    if folder is None:
        path = data_folder()
    elif not str(folder).strip():
        raise ValueError(f"folder must be a path, got folder={str(folder)!r}")
    else:
        path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"folder must be a directory, got {path} (not a directory)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cpu_seconds() -> float:
    """User and system CPU time of this process and its finished children (the workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# --- README.md ---------------------------------------------------------------------------------

def _columns_doc(table: Table) -> str:
    lines = ["| column | type | what it holds |", "|---|---|---|"]
    for c in table.columns:
        kind = {"sizes": "ints `a,b,...`", "gap": "float (2 digits)"}.get(c.cell_type, c.cell_type)
        if c.nullable:
            kind += ", may be empty"
        doc = c.doc + (f" (one of: {', '.join(c.choices)})" if c.choices and len(c.choices) > 1
                       else "")
        lines.append(f"| `{c.name}` | {kind} | {doc} |")
    return "\n".join(lines)


def _atlas_counts(rows: list[Row]) -> str:
    counts: dict[tuple[int, str], list[int]] = {}
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


def _atlas_care(rows: list[Row]) -> str:
    """The atlas rows whose float ranks need care, as a Markdown table (or a sentence)."""
    lines: list[str] = []
    counts: dict[str, int] = {}
    for r in rows:
        notes: dict[str, str] = {}  # what -> detail
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
                     r["tokens"], r["softmax_rank"], f"{r['softmax_gap']:.1e}",
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


def _readme(summary: dict[str, Any], atlas_rows: list[Row]) -> str:
    from importlib.metadata import PackageNotFoundError, version

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

Generated by `{command}` (seed {seed}): do not edit by hand, change the package and
rebuild. `lsa_helpers.load_table(name)` reads a table after checking it against
`SHA256SUMS` and its schema, and returns a tuple of frozen records, one field per column (`int`,
`float`, `str`, `bool`, a tuple of ints, or `None` for an empty cell). Plain CSV: comma-separated,
one header line, `\\n` line ends, lists such as widths written `3,3,3` (quoted).
`sha256sum -c SHA256SUMS` checks the files from a shell.

The build used {summary['workers']} worker process(es) with one BLAS thread each (Python
{platform.python_version()}, numpy {np.__version__}, python-flint {flint_version},
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
