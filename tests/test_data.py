import hashlib
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from processes import start_with_workers

from lsa_helpers import Architecture, atlas_row, load_table, tables
from lsa_helpers._build import build_data, write_atomic
from lsa_helpers.tables import CHECKSUMS, DATA_ENV, RECORDS, TABLES, data_folder

DATA_DIR = Path(tables.__file__).parent / "data"  # where the package's files are in this checkout

PAPER_EXPECTED = [25, 40, 57, 76, 97, 120, 145, 172]  # the paper's table, widths 3 to 10
RECOMPUTED = ["kind", "rank_one_intermediate", "parameters", "formula_dimension", "formula_status",
              "float_rank", "float_verdict", "float_samples", "float_stopped", "exact_rank",
              "upper_bound", "certified_dimension", "exact_samples", "exact_stopped",
              "softmax_formula_dimension", "softmax_formula_status", "softmax_rank",
              "softmax_verdict", "softmax_samples", "softmax_stopped", "softmax_upper_bound"]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_shipped_checksums_match():
    listed = dict(reversed(line.split("  ", 1)) for line in
                  (DATA_DIR / CHECKSUMS).read_text().splitlines())
    assert set(listed) == {table.filename for table in TABLES.values()}
    for filename, digest in listed.items():
        assert sha256(DATA_DIR / filename) == digest, filename


@pytest.mark.parametrize("name", list(TABLES))
def test_shipped_tables_load_with_their_schema(name):
    rows = load_table(name)
    assert rows and all(type(r) is RECORDS[name] for r in rows)
    assert list(type(rows[0]).__dataclass_fields__) == [c.name for c in TABLES[name].columns]


def test_atlas_formulas_agree_with_exact_ranks():
    rows = load_table("atlas")
    with_formula = [r for r in rows if r.formula_dimension is not None]
    assert len(with_formula) > 1000
    assert all(r.formula_dimension == r.exact_rank <= r.upper_bound for r in with_formula)
    assert all(r.certified_dimension in (None, r.exact_rank) for r in rows)
    assert all(r.float_rank == r.exact_rank and r.float_verdict == "clear" for r in rows)
    assert {r.kind for r in rows} == set(TABLES["atlas"].columns[0].choices)
    assert {r.layers for r in rows} == {1, 2, 3} and {r.tokens for r in rows} == {1, 2, 3}


def test_paper_reproduction_finds_the_papers_dimensions():
    rows = load_table("softmax_conjecture")
    assert [r.width for r in rows] == list(range(3, 11))
    assert [r.expected_dimension for r in rows] == PAPER_EXPECTED
    assert [r.jacobian_rank for r in rows] == PAPER_EXPECTED
    assert all(r.trials_right == r.trials_clear == r.trials == len(r.trial_ranks) for r in rows)
    assert [r.trials for r in rows] == [5] * 7 + [8]


def test_extension_is_clear_everywhere():
    rows = load_table("softmax_conjecture_extension")
    assert {(r.layers, r.attention_rank) for r in rows} == {(3, a) for a in (1, 2, 3, 4)}
    assert max(r.width for r in rows) == 12
    assert all(r.jacobian_rank == r.expected_dimension and r.smallest_gap >= 1e4 for r in rows)


def test_seeded_slice_of_the_atlas_recomputes():
    """Integers and verdicts, not gap digits; small rows away from the verdict threshold."""
    rows = [r for r in load_table("atlas") if r.parameters <= 150
            and all(g >= 1e5 for g in (r.float_gap, r.softmax_gap))]
    picked = np.random.default_rng(2025).choice(len(rows), size=5, replace=False)
    for row in (rows[i] for i in picked):
        arch = Architecture(row.widths, row.ranks, row.normalization, row.tokens)
        fresh = atlas_row(arch, row.seed)
        assert {k: fresh[k] for k in RECOMPUTED} == {k: getattr(row, k) for k in RECOMPUTED}, arch


def test_every_stored_atlas_row_has_todays_cheap_columns():
    """Parameters from sum_i (2 a_i + d_i) d_(i-1), formulas and their status from today's
    formula_dimension, the kind from today's classification: for all rows, read as plain CSV."""
    import csv
    import dataclasses

    from lsa_helpers import formula_dimension
    from lsa_helpers.atlas import _kind

    with open(DATA_DIR / "atlas.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) > 3000
    for row in rows:
        widths, ranks = (tuple(map(int, row[k].split(","))) for k in ("widths", "ranks"))
        arch = Architecture(widths, ranks, tokens=int(row["tokens"]))
        light = formula_dimension(arch)
        soft = formula_dimension(dataclasses.replace(arch, normalization="softmax"))
        today = {"parameters": sum((2 * a + d) * d_in
                                   for a, d, d_in in zip(ranks, widths[1:], widths)),
                 "formula_dimension": light.value, "formula_status": light.status,
                 "softmax_formula_dimension": soft.value, "softmax_formula_status": soft.status,
                 "kind": _kind(arch)}
        stored = {k: (int(row[k]) if row[k].isdigit() else row[k] or None) for k in today}
        assert stored == today, (widths, ranks, arch.tokens)


# --- the loader's errors, on copies -------------------------------------------------------------

@pytest.fixture
def copy(tmp_path):
    for name in [*(t.filename for t in TABLES.values()), CHECKSUMS]:
        shutil.copy(DATA_DIR / name, tmp_path / name)
    return tmp_path


def resign(folder):
    """Rewrite SHA256SUMS so that only the schema checks can catch a change."""
    (folder / CHECKSUMS).write_text("".join(
        f"{sha256(folder / t.filename)}  {t.filename}\n" for t in TABLES.values()))


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_copies_load_like_the_originals(copy):
    assert load_table("atlas", folder=copy) == load_table("atlas")


def test_corrupted_file_is_refused(copy):
    path = copy / "atlas.csv"
    edit(path, ",clear,", ",UNCLEAR,")
    with pytest.raises(ValueError, match=re.escape(f"{path}: checksum does not match SHA256SUMS")):
        load_table("atlas", folder=copy)


def test_truncated_file_is_refused(copy):
    path = copy / "softmax_conjecture.csv"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=re.escape(f"{path}: checksum does not match")):
        load_table("softmax_conjecture", folder=copy)
    resign(copy)  # the cut falls inside a row: that row is short
    lines = path.read_text().splitlines()
    cells = len(lines[-1].split(","))
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: line {len(lines)} has {cells} cells, expected 16")):
        load_table("softmax_conjecture", folder=copy)


def test_wrong_column_is_refused(copy):
    path = copy / "atlas.csv"
    edit(path, "exact_rank,", "rank,")
    resign(copy)
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: columns do not match the atlas schema: missing ['exact_rank'], "
            "unexpected ['rank']")):
        load_table("atlas", folder=copy)


def test_columns_in_the_wrong_order_are_refused(copy):
    path = copy / "softmax_conjecture.csv"
    edit(path, "width,layers,", "layers,width,")
    resign(copy)
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: columns do not match the softmax_conjecture schema: wrong order")):
        load_table("softmax_conjecture", folder=copy)


@pytest.mark.parametrize("old, new, message", [
    ("\n3,2,2,3,42,25,", "\n3,2,2,3,4x,25,",
     "line 2, column 'parameters': expected an integer, got '4x'"),
    (",clear,", ",fine,", "column 'verdict': expected one of ('clear', 'UNCLEAR'), got 'fine'"),
    ("\n3,2,2,3,42,25,250,5,25,", "\n3,2,2,3,42,25,250,5,25,-",
     "line 2, column 'gap': expected a non-negative number or inf, got '-"),
    ('"25,25,25,25,25"', '"25,25,x"',
     "column 'trial_ranks': expected comma-separated positive integers, got '25,25,x'"),
    ("\n3,2,2,3,42,25,", "\n3,2,2,3,,25,",  # an empty cell where a value is required
     "line 2, column 'parameters': expected an integer, got ''"),
])
def test_bad_value_is_refused(copy, old, new, message):
    path = copy / "softmax_conjecture.csv"
    edit(path, old, new)
    resign(copy)
    pattern = re.escape(f"{path}: ") + r"(line \d+, )?" + re.escape(message)
    with pytest.raises(ValueError, match=pattern):
        load_table("softmax_conjecture", folder=copy)


def test_missing_or_unlisted_checksums_are_refused(copy):
    path = copy / "atlas.csv"
    (copy / CHECKSUMS).write_text(f"{sha256(path)}  other.csv\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}: not listed in {copy / CHECKSUMS}")):
        load_table("atlas", folder=copy)
    (copy / CHECKSUMS).unlink()
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: cannot verify it, {copy / CHECKSUMS} does not exist")):
        load_table("atlas", folder=copy)


def test_unknown_table_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=re.escape(
            "name must be one of ('atlas', 'softmax_conjecture', "
            "'softmax_conjecture_extension'), got 'atlas.csv'")):
        load_table("atlas.csv")
    with pytest.raises(FileNotFoundError, match=re.escape(
            f"{tmp_path / 'atlas.csv'}: no such file (build it with "
            f"`python -m lsa_helpers data build --folder {tmp_path}`)")):
        load_table("atlas", folder=tmp_path)


# --- writing ------------------------------------------------------------------------------------

def interrupted(lines):
    yield from lines
    raise KeyboardInterrupt("stopped mid-write")


def test_atomic_writer_leaves_the_old_file_when_interrupted(tmp_path):
    path = write_atomic(tmp_path / "table.csv", ["a,b\n", "1,2\n"])
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, interrupted(["a,b\n", "3,4\n"]))
    assert path.read_text() == "a,b\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_atomic_writer_creates_nothing_when_interrupted(tmp_path):
    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(tmp_path / "new.csv", (_ for _ in ()).throw(RuntimeError("disk full")))
    assert list(tmp_path.iterdir()) == []


SMALL = {"atlas": [Architecture((3, 3), (3,)), Architecture((2, 2, 2), (1, 2))],
         "paper": {"widths": [3], "trials": 1, "samples": 20},
         "extension": {"widths": (3,), "ranks": (1, 2), "layers": 3, "samples": 20, "trials": 1,
                       "trials_at_10": 1},
         "workers": 1, "progress": False}


def test_small_build_round_trip(tmp_path):
    summary = build_data(tmp_path, seed=3, **SMALL)
    assert summary["rows"] == {"atlas": 2, "softmax_conjecture": 1,
                               "softmax_conjecture_extension": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*(t.filename for t in TABLES.values()), CHECKSUMS, "README.md"])
    atlas = load_table("atlas", folder=tmp_path)
    assert [(r.widths, r.exact_rank, r.seed) for r in atlas] == [((3, 3), 17, 3),
                                                                ((2, 2, 2), 8, 3)]
    assert atlas[1].formula_dimension is None and atlas[1].rank_one_intermediate
    extension = load_table("softmax_conjecture_extension", folder=tmp_path)
    assert [(r.attention_rank, r.expected_dimension) for r in extension] == [(1, 24), (2, 33)]
    readme = (tmp_path / "README.md").read_text()
    assert "python -m lsa_helpers data build --seed 3" in readme
    assert "## `atlas.csv` (2 rows)" in readme


def test_build_stops_when_a_formula_disagrees(tmp_path, monkeypatch):
    from lsa_helpers import _build

    def off_by_one(arch, seed=0):
        return {**atlas_row(arch, seed), "exact_rank": 16}

    monkeypatch.setattr(_build, "atlas_row", off_by_one)
    with pytest.raises(ValueError, match=re.escape(
            "atlas: formula dimension 17 (paper) disagrees with the exact rank 16 at "
            "widths=(3, 3) ranks=(3,) t=3 (seed 0)")):
        build_data(tmp_path, **SMALL)
    assert list(tmp_path.iterdir()) == []


def test_progress_shows_on_standard_error(tmp_path, capsys):
    build_data(tmp_path, seed=3, **{**SMALL, "progress": True})
    captured = capsys.readouterr()
    assert captured.out == "" and "atlas: 100%" in captured.err and "2/2" in captured.err


def test_records_are_frozen_and_pickle():
    import dataclasses
    import pickle

    row = load_table("softmax_conjecture")[0]
    assert pickle.loads(pickle.dumps(row)) == row
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.width = 4


# --- the loader refuses what its checksums cannot catch ---------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda text: text.splitlines(keepends=True)[0], "the table has no rows"),
    (lambda text: text.replace("\n3,2,2,3,", "\n-3,2,2,3,", 1),
     "line 2, column 'width': expected an integer >= 1, got '-3'"),
    (lambda text: text.replace(',5,25,', ',4,25,', 1),
     "line 2: trials = 4 but trial_ranks lists 5 ranks"),
    (lambda text: text + text.splitlines(keepends=True)[1],
     "line 10 repeats line 2 (width=3, layers=2, attention_rank=2, tokens=3)"),
    (lambda text: text.replace('"25,25,25,25,25"', '"' + "1," * 70000 + '1"', 1),
     "line 2: field larger than field limit (131072)"),
])
def test_a_signed_but_wrong_table_is_refused(copy, change, message):
    path = copy / "softmax_conjecture.csv"
    path.write_text(change(path.read_text()))
    resign(copy)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: {message}')}$"):
        load_table("softmax_conjecture", folder=copy)


def test_checksums_that_are_not_text_are_refused(copy):
    (copy / CHECKSUMS).write_bytes(b"\xff\xfe not text")
    with pytest.raises(ValueError, match=f"^{re.escape(f'{copy / CHECKSUMS}: not UTF-8 text')}$"):
        load_table("atlas", folder=copy)


def test_the_tables_are_the_packages_unless_the_environment_names_others(copy, tmp_path,
                                                                        monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert data_folder() == DATA_DIR
    monkeypatch.chdir(tmp_path)  # the current folder plays no part
    (tmp_path / "data").mkdir()
    assert data_folder() == DATA_DIR
    monkeypatch.setenv(DATA_ENV, str(copy))
    assert data_folder() == copy and load_table("atlas") == load_table("atlas", folder=DATA_DIR)


# --- the build checks its folder first and swaps complete files in -------------------------------

@pytest.mark.parametrize("folder, message", [
    ("", "folder must be a path, got folder=''"),
    ("   ", "folder must be a path, got folder='   '"),
])
def test_an_empty_folder_name_is_refused(folder, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build_data(folder, **SMALL)


def test_a_file_as_folder_is_refused_before_computing(tmp_path, monkeypatch):
    target = tmp_path / "notes.txt"
    target.write_text("not a folder")

    def never(*args):
        raise AssertionError("the build computed before it checked its folder")

    monkeypatch.setattr("lsa_helpers._build._atlas_rows", never)
    with pytest.raises(ValueError, match=re.escape(f"folder must be a directory, got {target}")):
        build_data(target, **SMALL)


def test_a_build_that_fails_while_writing_leaves_the_old_files(copy, monkeypatch):
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    from lsa_helpers import _build

    chunks, written = _build._csv_chunks, []

    def second_write_fails(table, rows):
        written.append(table.name)
        if len(written) == 2:
            raise OSError("No space left on device")
        return chunks(table, rows)

    monkeypatch.setattr(_build, "_csv_chunks", second_write_fails)
    with pytest.raises(OSError, match="No space left"):
        build_data(copy, **SMALL)
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before  # no staging left either
    assert load_table("atlas", folder=copy) == load_table("atlas")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="workers learn of their parent's death through Linux's prctl")
def test_killing_the_build_leaves_no_worker_behind(tmp_path):
    """Killed while its workers compute the atlas (its progress bar is shown)."""
    import signal

    import psutil

    build, _, workers = start_with_workers(["data", "build", "--folder", str(tmp_path)],
                                           lambda seen: b"atlas" in seen, 2)
    build.send_signal(signal.SIGKILL)
    build.wait(timeout=30)
    _gone, alive = psutil.wait_procs(workers, timeout=15)
    for process in alive:
        process.kill()
    assert not alive, f"{len(alive)} workers outlived the killed build"


# --- rows that contradict themselves, signed again ----------------------------------------------

def tamper(path, match, **cells):
    """Change ``cells`` in the first row whose cells include ``match``; returns its line."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    header = rows[0]
    line = next(i for i, row in enumerate(rows) if all(row[header.index(k)] == v
                                                      for k, v in match.items()))
    for name, value in cells.items():
        rows[line][header.index(name)] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())
    return line + 1


ATLAS_ROW = {"widths": "3,3,3", "ranks": "2,2", "tokens": "3"}  # 42 parameters, 23 certified


@pytest.mark.parametrize("cells, message", [
    ({"certified_dimension": "24"},
     "certified_dimension = 24 with exact rank 23 and upper bound 23"),
    ({"certified_dimension": ""},
     "certified_dimension = None with exact rank 23 and upper bound 23"),
    ({"upper_bound": "24", "exact_stopped": "stopped growing"},
     "certified_dimension = 23 with exact rank 23 and upper bound 24"),
    ({"parameters": "43"}, "parameters = 43, not 42 as the widths, ranks and tokens give"),
    ({"widths": "3,3"}, "layers = 2 with widths (3, 3) and ranks (2, 2)"),
    ({"formula_dimension": "24"},
     "formula_dimension = 24, not 23 as the widths, ranks and tokens give"),
    ({"formula_status": "derived"},
     "formula_status = 'derived', not 'paper' as the widths, ranks and tokens give"),
    ({"kind": "bottleneck"}, "kind = 'bottleneck', not 'equal widths' as the widths, ranks and "
                             "tokens give"),
    ({"exact_rank": "22", "upper_bound": "22", "certified_dimension": "22"},
     "formula dimension 23 (paper) disagrees with the exact rank 22"),
    ({"exact_stopped": "stopped growing"},
     "exact_stopped = 'stopped growing' with exact rank 23 and upper bound 23"),
    ({"softmax_rank": "43"}, "softmax_rank = 43 exceeds the 42 parameters"),
    ({"float_gap": "1.0e+02"}, "float_verdict = 'clear' with float_gap = 1.0e+02"),
])
def test_an_atlas_row_that_contradicts_itself_is_refused(copy, cells, message):
    path = copy / "atlas.csv"
    line = tamper(path, ATLAS_ROW, **cells)
    resign(copy)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: line {line}: {message}')}$"):
        load_table("atlas", folder=copy)


@pytest.mark.parametrize("cells, message", [
    ({"jacobian_rank": "26"}, "jacobian_rank = 26, not 25 as the other columns give"),
    ({"expected_dimension": "26"}, "expected_dimension = 26, not 25 as the other columns give"),
    ({"trials_right": "4"}, "trials_right = 4, not 5 as the other columns give"),
    ({"parameters": "41"}, "parameters = 41, not 42 as the other columns give"),
    ({"gap": "1.0e+03", "smallest_gap": "1.0e+03"}, "verdict = 'clear' with gap = 1.0e+03"),
    ({"gap": "4.7e+14", "smallest_gap": "1.0e+15"}, "smallest_gap = 1.0e+15 exceeds gap = 4.7e+14"),
])
def test_an_experiment_row_that_contradicts_itself_is_refused(copy, cells, message):
    path = copy / "softmax_conjecture.csv"
    line = tamper(path, {"width": "3"}, **cells)
    resign(copy)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: line {line}: {message}')}$"):
        load_table("softmax_conjecture", folder=copy)


def test_a_verdict_at_the_rounded_threshold_stands(copy):
    """A gap just under 1e4 is written 1.0e+04 with two digits and stays UNCLEAR."""
    path = copy / "softmax_conjecture.csv"
    tamper(path, {"width": "3"}, gap="1.0e+04", smallest_gap="1.0e+04", verdict="UNCLEAR",
           trials_clear="4")
    resign(copy)
    assert load_table("softmax_conjecture", folder=copy)[0].verdict == "UNCLEAR"


# --- reading files: once, with a bound, and what the folder names --------------------------------

def test_a_rebuild_between_the_checksums_and_the_table_is_read_again(copy, monkeypatch):
    """A rebuild swaps the table and then SHA256SUMS: read in between, they disagree for a
    moment; the loader reads them again instead of calling the file corrupted."""
    rebuilt = copy / "rebuilt"
    shutil.copytree(copy, rebuilt)
    tamper(rebuilt / "softmax_conjecture.csv", {"width": "3"}, seed="7")
    resign(rebuilt)
    read = tables.read_checksum

    def rebuild_after_the_first_read(folder, filename):
        expected = read(folder, filename)
        for name in ("softmax_conjecture.csv", CHECKSUMS):  # the order of build_data
            shutil.copy(rebuilt / name, copy / name)
        return expected

    monkeypatch.setattr(tables, "read_checksum", rebuild_after_the_first_read)
    assert load_table("softmax_conjecture", folder=copy)[0].seed == 7


def test_padded_checksums_are_refused_without_reading_them_whole(copy):
    sums = copy / CHECKSUMS
    with open(sums, "r+b") as handle:
        handle.truncate(2**30)  # a sparse gigabyte of zeros after the three lines
    with pytest.raises(ValueError, match=f"^{re.escape(str(sums))}: larger than 65536 bytes"):
        load_table("atlas", folder=copy)


def test_an_unreadable_folder_is_one_line(copy, monkeypatch):
    from pathlib import Path

    path = copy / "atlas.csv"
    is_file = Path.is_file

    def denied(self):
        if self.parent == copy:
            raise PermissionError(13, "Permission denied", str(self))
        return is_file(self)

    monkeypatch.setattr(Path, "is_file", denied)
    with pytest.raises(PermissionError, match=f"^{re.escape(f'{path}: cannot read it')} "
                                              r"\(Permission denied\)$"):
        load_table("atlas", folder=copy)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="needs file permissions that apply (not root)")
def test_an_unreadable_folder_on_disk_is_one_line(copy):
    copy.chmod(0)
    try:
        with pytest.raises(PermissionError, match=r"cannot read it \(Permission denied\)$"):
            load_table("atlas", folder=copy)
    finally:
        copy.chmod(0o755)


def test_the_folder_variable_expands_home_and_refuses_blanks(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(DATA_ENV, "~/tables")
    assert data_folder() == tmp_path / "tables"
    monkeypatch.setenv(DATA_ENV, "   ")
    with pytest.raises(ValueError, match=re.escape("LSA_DATA_DIR must be a folder, got "
                                                   "LSA_DATA_DIR='   '")):
        data_folder()
    monkeypatch.setenv(DATA_ENV, "")  # empty: as if unset
    assert data_folder() == DATA_DIR


def test_a_build_into_a_blank_folder_variable_writes_nothing(tmp_path, monkeypatch, capsys):
    from lsa_helpers.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATA_ENV, "   ")
    assert main(["data", "build"]) == 2
    assert capsys.readouterr().err == ("lsa_helpers: error: LSA_DATA_DIR must be a folder, got "
                                       "LSA_DATA_DIR='   '\n")
    assert list(tmp_path.iterdir()) == []
