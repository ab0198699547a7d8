"""tools/install_cell.py puts one current install cell first among the code cells, idempotently."""

import copy
import importlib.util
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "install_cell.py"
spec = importlib.util.spec_from_file_location("install_cell", TOOL)
install_cell = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install_cell)


def markdown(text, cell_id):
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": [text]}


def code(text, cell_id):
    return {"cell_type": "code", "execution_count": 1, "id": cell_id, "metadata": {},
            "outputs": [], "source": [text]}


def notebook():
    return {"cells": [markdown("# Title", "a"), markdown("## Set-up", "b"), code("SEED = 1", "c")],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_inserts_after_the_title_and_is_idempotent():
    nb = install_cell.update(notebook())
    assert [c["id"] for c in nb["cells"]] == ["a", "install", "b", "c"]
    cell = nb["cells"][1]
    assert install_cell.source(cell) == install_cell.SOURCE
    assert cell["metadata"]["tags"] == ["install"] and cell["outputs"] == []
    assert cell["metadata"]["jupyter"] == {"source_hidden": True}  # collapsed for the reader
    assert cell["metadata"]["slideshow"] == {"slide_type": "skip"}  # and not on the title slide
    again = install_cell.update(copy.deepcopy(nb))
    assert again == nb


def test_replaces_a_stale_cell_and_moves_it_first():
    nb = notebook()
    stale = code("print('old')", "x")
    stale["metadata"]["tags"] = ["install"]
    nb["cells"].append(stale)
    nb = install_cell.update(nb)
    tagged = [c for c in nb["cells"] if install_cell.is_install_cell(c)]
    assert len(tagged) == 1 and tagged[0]["id"] == "x"
    assert nb["cells"][1] is tagged[0] and install_cell.source(tagged[0]) == install_cell.SOURCE


def test_the_cell_does_nothing_where_lsa_helpers_is_installed(tmp_path):
    done = subprocess.run([sys.executable, "-c", install_cell.SOURCE], check=False, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_cell_refuses_outside_a_clone(tmp_path):
    isolated = [sys.executable, "-I", "-S", "-c", install_cell.SOURCE]  # no site-packages
    done = subprocess.run(isolated, check=False, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: lsa_helpers is not installed: clone the course repository and open "
        'this notebook from its notebooks/ folder (see README.md, "Run in Colab")')


def test_in_the_browser_the_cell_imports_the_package_and_runs_no_pip(tmp_path):
    """With sys.platform "emscripten" the cell imports lsa_helpers; where it is missing, the
    import fails at once, before any pip or clone lookup."""
    browser = f"import sys\nsys.platform = 'emscripten'\n{install_cell.SOURCE}\n"
    here = browser + "print(sorted(m for m in sys.modules if m.startswith('lsa_helpers')))"
    done = subprocess.run([sys.executable, "-c", here], check=False, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "['lsa_helpers']\n", "")
    isolated = [sys.executable, "-I", "-S", "-c", browser]  # no site-packages
    done = subprocess.run(isolated, check=False, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    last = done.stderr.strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: No module named 'lsa_helpers'"
