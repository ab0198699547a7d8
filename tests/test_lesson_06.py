"""Notebook 06: the check of Exercise 06.1 accepts the worked answer and rejects wrong ones.

The check compares the powers of ``s`` in ``L(sU) - L(0)`` with a polynomial fit of the computed
loss, and the exponent of the escape time with section 3's measurement; the cells it needs (set-up,
the run of section 3 and the sweep over scales) run here in one namespace, and the whole core runs
in a kernel with the exercise answered.
"""

import json
import re
from pathlib import Path

import matplotlib
import nbformat
import pytest
from nbclient import NotebookClient

matplotlib.use("Agg")

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "06_training.ipynb"
RAISE = re.compile(r"^raise NotImplementedError\(.*\)\n", re.MULTILINE)
ANSWER = "powers = (3, 6)\nexponent = -1\n"


def sources():
    return ["".join(c["source"]) for c in json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def the_cell(containing):
    found = [s for s in sources() if containing in s]
    assert len(found) == 1, f"{len(found)} code cells contain {containing!r}"
    return found[0]


@pytest.fixture(scope="module")
def namespace():
    names = {}
    for marker in ("SEED = 2025", "descent = gradient_descent(", "left_zero = np.array("):
        exec(the_cell(marker), names)
    return names


def stub():
    return the_cell('NotImplementedError("Exercise 06.1')


def test_the_stub_does_not_give_the_answer():
    assert RAISE.search(stub()) and "(3, 6)" not in stub() and "-1" not in stub()


def test_the_check_accepts_the_worked_answer(namespace, capsys):
    exec(RAISE.sub(ANSWER, stub()), dict(namespace))
    assert capsys.readouterr().out.strip().endswith("all checks passed")


@pytest.mark.parametrize("answer, message", [
    ("powers = (2, 3)\nexponent = -1\n", "not yet: expand again"),
    ("powers = (3,)\nexponent = -1\n", "not yet: expand again"),
    ("powers = (3, 6)\nexponent = -2\n", "not yet: solve"),
    ("powers = (3, 6)\nexponent = 0\n", "not yet: solve"),
])
def test_the_check_rejects_wrong_answers(namespace, answer, message):
    with pytest.raises(AssertionError, match=message):
        exec(RAISE.sub(answer, stub()), dict(namespace))


def test_the_core_runs_with_the_exercise_answered():
    """Every core cell, up to the Summary, in one kernel: the check finds all it uses there."""
    nb = nbformat.read(LESSON, as_version=4)
    summary = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Summary"))
    nb.cells = nb.cells[:summary]
    stubs = [c for c in nb.cells if "raises-exception" in c.metadata.get("tags", [])]
    assert len(stubs) == 1
    stubs[0].source = RAISE.sub(ANSWER, stubs[0].source)
    stubs[0].metadata["tags"] = []
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(LESSON.parent)}}).execute()
    assert "all checks passed" in "".join(o.get("text", "") for o in stubs[0].outputs)
