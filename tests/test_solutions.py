"""Every worked solution in notebooks/solutions runs and passes its own checks."""

import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.mark.parametrize("solution", sorted((NOTEBOOKS / "solutions").glob("*.py")),
                         ids=lambda path: path.stem)
def test_solution_passes_its_checks(solution):
    done = subprocess.run([sys.executable, str(solution.relative_to(NOTEBOOKS))], cwd=NOTEBOOKS,
                          capture_output=True, text=True, timeout=300,
                          env={"MPLBACKEND": "Agg", "PATH": ""})
    assert done.returncode == 0, f"{solution.name} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.rstrip().endswith("all checks passed"), f"{solution.name}: no final verdict"
