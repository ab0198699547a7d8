"""Strip widget state and stored widget views, and normalise the kernelspec of notebooks, in place.

A stored widget view has no live model behind it: before its cell runs, JupyterLab shows its text
fallback, ``interactive(children=(IntSlider(...``. Such outputs are dropped; the cell keeps its
execution count.

Usage: python tools/clean_notebooks.py NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]
"""

import json
import sys
from pathlib import Path

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clean(nb: dict) -> dict:
    nb.setdefault("metadata", {})
    nb["metadata"].pop("widgets", None)
    nb["metadata"]["kernelspec"] = dict(KERNELSPEC)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        if "outputs" in cell:
            cell["outputs"] = [output for output in cell["outputs"]
                               if WIDGET_VIEW not in output.get("data", {})]
    return nb


def rewrite(path: Path, transform) -> bool:
    """Apply ``transform`` to the notebook at ``path``; write it back if it changed."""
    text = path.read_text(encoding="utf-8")
    nb = transform(json.loads(text))
    new = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def run(argv: list[str], transform, verb: str, usage: str) -> int:
    """Command line: rewrite every notebook named in ``argv``, saying ``verb`` for each changed."""
    if not argv:
        print(usage.strip(), file=sys.stderr)
        return 2
    for name in argv:
        if rewrite(Path(name), transform):
            print(f"{verb} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:], clean, "cleaned", __doc__))
