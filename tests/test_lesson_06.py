"""Notebook 06: the check of Exercise 06.1 accepts the worked answer and rejects wrong ones.

The check compares the powers of ``s`` in ``L(sU) - L(0)`` with a polynomial fit of the computed
loss, and the exponent of the escape time with section 3's measurement; the cells it needs (set-up,
the run of section 3 and the sweep over scales) run here in one namespace, and the whole core runs
in a kernel with the exercise answered. The Hessian the text names, J^T J / N, is the curvature of
the loss it writes once, 1/(2N) sum_n ||phi_W(X_n) - Y_n||^2.
"""

import json
import re
from pathlib import Path

import matplotlib
import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from lsa_helpers import (
    Architecture,
    forward,
    hessian_at_minimum,
    layer_forward,
    teacher_problem,
    vector_to_weights,
    weights_to_vector,
)

matplotlib.use("Agg")

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "06_training.ipynb"
SOLUTION = LESSON.parent / "solutions" / LESSON.name
RAISE = re.compile(r"^( *)raise NotImplementedError\((?:[^()]|\([^()]*\))*\)\n?", re.MULTILINE)
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
    return the_cell('"Exercise 06.1: replace this line')


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


def markdown(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_the_hessian_is_named_as_the_hessian_of_the_mean_loss():
    """The lesson writes the loss once, as 1/(2N) sum_n ||phi_W(X_n) - Y_n||^2, and its Hessian at a
    zero-loss point as J^T J / N: the curvature of that loss along the top eigenvector, by second
    differences, is the top eigenvalue of the package's Hessian (widths (3, 2, 3), ranks (2, 2))."""
    assert markdown(LESSON).count(r"\frac{1}{2N}") == 1
    for path in (LESSON, SOLUTION):
        assert not re.search(r"J\^\\top J(?! / N)", markdown(path)), path.name
    arch = Architecture((3, 2, 3), (2, 2))
    problem = teacher_problem(arch, 8, 0)

    def loss(vector):
        residuals = forward(vector_to_weights(arch, vector), problem.inputs) - problem.targets
        return 0.5 * np.mean(np.sum(residuals**2, axis=(1, 2)))

    eigenvalues, vectors = np.linalg.eigh(hessian_at_minimum(arch, problem.teacher, problem.inputs))
    w, u, h = weights_to_vector(problem.teacher), vectors[:, -1], 1e-4
    curvature = (loss(w + h * u) + loss(w - h * u) - 2 * loss(w)) / h**2
    assert loss(w) < 1e-28 and abs(curvature / eigenvalues[-1] - 1) < 1e-4


def test_the_demos_default_problem_is_the_lessons(namespace):
    """``training_explorer()`` with no data trains on the problem the lesson builds by hand."""
    from lsa_helpers.widgets import stall_problem

    demo_cell = the_cell("training_explorer(X_train")
    built = dict(namespace)
    exec(demo_cell.split("demo = ")[0].replace("from lsa_helpers.widgets import training_explorer",
                                               ""), built)
    inputs, targets, direction, (held, held_targets) = stall_problem(2025)
    assert np.array_equal(inputs, built["X_train"]) and np.array_equal(targets, built["Y_train"])
    assert all(np.array_equal(mine, theirs) for mine, theirs in zip(direction, built["wide"]))
    assert np.array_equal(held, built["X_held"])
    assert np.array_equal(held_targets, layer_forward(built["teacher"], built["X_held"]))

