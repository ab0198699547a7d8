"""Every exercise stub of a lesson has a worked solution in the lesson's solution notebook.

The solution notebooks (``notebooks/solutions/NN_name.ipynb``) run in a kernel of their own, so
opening one never overwrites a reader's variables; strict nbval re-runs them with the lessons and
``test_notebooks_hygiene.py`` checks that they are stored executed. Here: the links and the names.
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("0*.ipynb"))
EXERCISE = re.compile(r"NotImplementedError\(\s*[\"'](Exercise (\d\d\.\d+))")


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell):
    return "".join(cell["source"])


def stubs(path):
    """The exercise ids ``NN.k`` raised by the stubs of a lesson, in order."""
    found = []
    for cell in cells(path):
        if cell["cell_type"] == "code" and "NotImplementedError" in text(cell):
            tagged = "raises-exception" in cell["metadata"].get("tags", [])
            match = EXERCISE.search(text(cell))
            assert tagged and match, (f"{path.name}: an exercise stub must be tagged "
                                      "raises-exception and raise 'Exercise NN.k: ...':\n"
                                      f"{text(cell)[:200]}")
            found.append(match.group(2))
    return found


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.stem)
def test_every_exercise_has_its_solution(lesson):
    ids = stubs(lesson)
    assert ids, f"{lesson.name} has no exercise"
    assert all(i.startswith(lesson.name[:2] + ".") for i in ids), f"{lesson.name}: ids {ids}"
    assert len(set(ids)) == len(ids), f"{lesson.name}: an exercise id is used twice: {ids}"
    solution = NOTEBOOKS / "solutions" / lesson.name
    assert solution.is_file(), f"{lesson.name}: no solution notebook solutions/{lesson.name}"
    link = f"(solutions/{lesson.name}"
    assert any(link in text(c) for c in cells(lesson) if c["cell_type"] == "markdown"), (
        f"{lesson.name} does not link to solutions/{lesson.name}")
    headings = [line for c in cells(solution) if c["cell_type"] == "markdown"
                for line in text(c).splitlines() if line.startswith("## Exercise ")]
    solved = [h.split()[2].rstrip(":") for h in headings]
    assert solved == ids, f"solutions/{lesson.name} solves {solved}, the lesson asks {ids}"


@pytest.mark.parametrize("solution", sorted((NOTEBOOKS / "solutions").glob("*.ipynb")),
                         ids=lambda path: path.stem)
def test_a_solution_notebook_ends_with_its_verdict(solution):
    assert (NOTEBOOKS / solution.name).is_file(), f"solutions/{solution.name} has no lesson"
    code = [c for c in cells(solution) if c["cell_type"] == "code"]
    last = "".join("".join(o.get("text", "")) for o in code[-1]["outputs"]
                   if o["output_type"] == "stream")
    assert last.rstrip().endswith("all checks passed"), f"solutions/{solution.name}: no verdict"


def test_no_solution_is_left_as_a_script():
    scripts = sorted(p.name for p in (NOTEBOOKS / "solutions").glob("*.py"))
    assert not scripts, f"solutions are notebooks now, found scripts {scripts}"
