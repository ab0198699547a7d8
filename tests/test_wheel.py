"""The package as a user installs it: a wheel, not editable, in a fresh virtual environment."""

import csv
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("atlas", "softmax_conjecture", "softmax_conjecture_extension")

LOAD = """
import json, sys, lsa_helpers
print(json.dumps({"file": lsa_helpers.__file__,
                  "rows": {name: len(lsa_helpers.load_table(name)) for name in sys.argv[1:]}}))
"""


def run(*args, cwd):
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of ``source`` as pip builds it, offline, with the setuptools of the lock."""
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-q", "--disable-pip-version-check", "-w", str(out), str(source), cwd=out)
    return next(out.glob("*.whl"))


def test_an_installed_wheel_loads_the_tables(tmp_path):
    """Built from a copy of the sources (the checkout stays clean), installed by pip into a venv
    that sees this environment's dependencies through a .pth line (whose own .pth files, among
    them the editable install's, are not read), and run from a folder outside the checkout."""
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(ROOT / "lsa_helpers", source / "lsa_helpers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    wheel = build_wheel(source, tmp_path)

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                    cwd=tmp_path).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
        "--disable-pip-version-check", "--target", str(site), str(wheel), cwd=tmp_path)

    found = json.loads(run(str(python), "-I", "-c", LOAD, *TABLES, cwd=tmp_path))
    assert Path(found["file"]).is_relative_to(venv)
    expected = {}
    for name in TABLES:
        with open(ROOT / "lsa_helpers" / "data" / f"{name}.csv", newline="") as handle:
            expected[name] = sum(1 for _ in csv.reader(handle)) - 1
    assert found["rows"] == expected
