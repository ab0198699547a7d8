"""Insert or update the install cell of Jupyter notebooks, in place.

Usage: python tools/install_cell.py NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]

The install cell is the first code cell of every notebook of the course, the same in all of them,
recognised by the tag ``install`` in its metadata. Where ``lsa_helpers`` is importable (after
``make lab``, on Binder, in the test run) it does nothing and prints nothing, so the stored
notebooks stay reproducible under nbval. In a fresh kernel started in the ``notebooks/`` folder of a
clone of the course (Colab: see the README, "Run in Colab") it installs the pinned requirements and
the package, as ``make lab`` does, and makes the package importable in the running kernel. In the
browser (the JupyterLite site, where ``sys.platform`` is ``"emscripten"``) it imports the package:
the kernel installs the packages a cell imports, from the site's own lock.

A notebook that has the cell gets its source replaced by the current one; a notebook without it
gets it right after its title cell (the first cell, when that is a markdown cell), which puts it
before every code cell. Outputs and execution count are cleared: run ``make notebooks`` (or
nbconvert on that notebook) and ``tools/clean_notebooks.py`` afterwards, as for any edit.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clean_notebooks import run  # the same folder, on the path just above

TAG = "install"
# Collapsed in JupyterLab and left out of the slides.
METADATA = {"tags": [TAG], "jupyter": {"source_hidden": True}, "slideshow": {"slide_type": "skip"}}

SOURCE = '''\
# Install cell, the same in every notebook: nothing to do where lsa_helpers is installed; in a clone
# opened in Colab it installs the pinned requirements and the package (README, "Run in Colab"); in
# the browser the kernel installs the package when this cell imports it.
import importlib.util
import subprocess
import sys
from pathlib import Path

if sys.platform == "emscripten":
    import lsa_helpers  # noqa: F401
elif importlib.util.find_spec("lsa_helpers") is None:
    _course = Path.cwd().parent  # the clone: its pyproject.toml names the package lsa-helpers
    _project = _course / "pyproject.toml"
    if not (_project.is_file() and 'name = "lsa-helpers"' in _project.read_text(encoding="utf-8")):
        raise ModuleNotFoundError(
            "lsa_helpers is not installed: clone the course repository and open this notebook from "
            'its notebooks/ folder (see README.md, "Run in Colab")')
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "-r", str(_course / "requirements.txt"), "-e", str(_course)], check=True)
    importlib.invalidate_caches()  # see the packages that pip just added
    sys.path.append(str(_course))  # an editable install is on the path only after a restart
    importlib.import_module("lsa_helpers")'''


def install_cell(cell_id: str = "install") -> dict:
    """A fresh, unexecuted install cell."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id,
        "metadata": dict(METADATA),
        "outputs": [],
        "source": SOURCE.splitlines(keepends=True),
    }


def source(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def is_install_cell(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and TAG in cell.get("metadata", {}).get("tags", [])


def update(nb: dict) -> dict:
    """Put the current install cell into ``nb``, as its first code cell, right after the title.

    A notebook whose first code cell already is the current install cell is left as it is (with
    its outputs and execution count); otherwise every tagged cell is removed and a fresh one is
    inserted, keeping the id of the cell it replaces.
    """
    cells = nb.setdefault("cells", [])
    tagged = [i for i, cell in enumerate(cells) if is_install_cell(cell)]
    code = [i for i, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    if tagged and tagged == code[:1] and source(cells[tagged[0]]) == SOURCE:
        cells[tagged[0]]["metadata"] = {**cells[tagged[0]].get("metadata", {}), **METADATA}
        return nb
    cell_id = cells[tagged[0]].get("id", "install") if tagged else None
    for i in reversed(tagged):
        del cells[i]
    if cell_id is None:
        ids = {cell.get("id") for cell in cells}
        cell_id = next(name for name in ("install", *(f"install-{k}" for k in range(1, 100)))
                       if name not in ids)
    position = 1 if cells and cells[0].get("cell_type") == "markdown" else 0
    cells.insert(position, install_cell(cell_id))
    return nb


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:], update, "updated", __doc__))
