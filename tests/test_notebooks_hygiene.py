"""Committed notebooks (lessons and their solutions) are executed in order, free of widget state and
of unexpected errors; each lesson starts with the install cell."""

import importlib.util
import json
import os
from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(
    os.environ.get("LSA_NOTEBOOKS_DIR", Path(__file__).resolve().parent.parent / "notebooks")
)
LESSONS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
NOTEBOOKS = LESSONS + sorted(NOTEBOOK_DIR.glob("solutions/*.ipynb"))


def code_cells(nb):
    return [(i, c) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def may_raise(cell):
    if "raises-exception" in cell.get("metadata", {}).get("tags", []):
        return True
    comments = [line.strip() for line in source(cell).splitlines()]
    return any(
        c.startswith("#") and c.lstrip("#").strip() == "NBVAL_RAISES_EXCEPTION" for c in comments
    )


def load(path):
    return str(path.relative_to(NOTEBOOK_DIR)), json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=NOTEBOOKS, ids=[str(p.relative_to(NOTEBOOK_DIR)) for p in NOTEBOOKS])
def notebook(request):
    return load(request.param)


@pytest.fixture(params=LESSONS, ids=[p.name for p in LESSONS])
def lesson(request):
    return load(request.param)


def test_course_map_exists():
    path = NOTEBOOK_DIR / "00_course_map.ipynb"
    exists = path.is_file()
    assert exists, f"{path} is missing"


def test_every_code_cell_executed(notebook):
    name, nb = notebook
    for i, cell in code_cells(nb):
        executed = cell.get("execution_count") is not None
        assert executed, f"{name} cell {i}: code cell has no execution_count (unexecuted or empty)"


def test_execution_counts_sequential(notebook):
    name, nb = notebook
    for expected, (i, cell) in enumerate(code_cells(nb), start=1):
        count = cell.get("execution_count")
        assert count == expected, (
            f"{name} cell {i}: execution_count is {count}, expected {expected} (re-run all cells)"
        )


def test_no_widget_state(notebook):
    name, nb = notebook
    has_widgets = "widgets" in nb.get("metadata", {})
    assert not has_widgets, f"{name}: metadata holds widget state (run tools/clean_notebooks.py)"


def test_no_stored_widget_view(notebook):
    """A stored widget view shows as ``interactive(children=...`` text until its cell runs."""
    name, nb = notebook
    stored = [i for i, cell in code_cells(nb) for output in cell.get("outputs", [])
              if "application/vnd.jupyter.widget-view+json" in output.get("data", {})]
    assert not stored, f"{name} cells {stored}: stored widget views (run tools/clean_notebooks.py)"


def test_kernelspec_python3(notebook):
    name, nb = notebook
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    assert kernel == "python3", f"{name}: kernelspec is {kernel!r}, expected 'python3'"


def test_no_unexpected_errors(notebook):
    name, nb = notebook
    for i, cell in code_cells(nb):
        outputs = cell.get("outputs", [])
        errors = [o.get("ename", "error") for o in outputs if o.get("output_type") == "error"]
        allowed = not errors or may_raise(cell)
        assert allowed, (
            f"{name} cell {i}: unexpected {errors[0]} output (fix it or tag it raises-exception)"
        )


def load_install_cell_tool():
    path = Path(__file__).resolve().parent.parent / "tools" / "install_cell.py"
    spec = importlib.util.spec_from_file_location("install_cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_first_code_cell_is_the_install_cell(lesson):
    name, nb = lesson
    tool = load_install_cell_tool()
    cells = code_cells(nb)
    assert cells, f"{name}: no code cell"
    i, first = cells[0]
    tagged = tool.TAG in first.get("metadata", {}).get("tags", [])
    assert tagged and source(first) == tool.SOURCE, (
        f"{name} cell {i}: the first code cell is not the current install cell "
        f"(run tools/install_cell.py {name}, then re-execute the notebook)"
    )
    assert not first.get("outputs"), f"{name} cell {i}: the install cell has stored outputs"
    others = [j for j, cell in cells[1:] if tool.TAG in cell.get("metadata", {}).get("tags", [])]
    assert not others, f"{name}: more than one cell tagged {tool.TAG!r} (cells {others})"
