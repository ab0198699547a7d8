"""Strip widget state and normalise the kernelspec of Jupyter notebooks, in place.

Usage: python tools/clean_notebooks.py NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]
"""

import json
import sys
from pathlib import Path

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def clean(nb: dict) -> dict:
    nb.setdefault("metadata", {})
    nb["metadata"].pop("widgets", None)
    nb["metadata"]["kernelspec"] = dict(KERNELSPEC)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
    return nb


def clean_file(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    new = json.dumps(clean(json.loads(text)), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for name in argv:
        if clean_file(Path(name)):
            print(f"cleaned {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
