"""Notebook 01: its exercise checks accept the worked solutions (nbval runs the solutions notebook),
and its demo draws the size panel only when asked."""

import json
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSON = NOTEBOOKS / "01_polynomial_definition.ipynb"

# each stub's raise, keyed by the start of its message, and the lines of the worked solution
ANSWERS = {
    "Exercise 01.1:": [("entries = [k * q * v * (x1**3 + x1 * x2**2), "
                        "k * q * v * (x1**2 * x2 + x2**3)]")],
    "Exercise 01.2:": ["from math import comb",
                       "return comb(d + 2, 3) + (t - 1) * d * comb(d + 1, 2)"],
    "Exercise 01.3:": ["t = 1",
                       ("while not multiplication_counts(d, d_out, a, t)['linear'] < "
                        "multiplication_counts(d, d_out, a, t)['quadratic']:"),
                       "    t += 1",
                       "return t"],
    "Exercise 01.4: replace this raise by the degree, a formula in l\"": ["return 3**l"],
    "Exercise 01.4: replace this raise by the degree, a formula in l and i":
        ["return 3 ** (l - i)"],
}
RAISE = re.compile(r"^( *)raise NotImplementedError\((?:[^()]|\([^()]*\))*\)\n?", re.MULTILINE)


def solved(source):
    """The stub's source with every raise replaced by its answer, at the raise's indentation."""
    def answer(match):
        keys = [key for key in ANSWERS if key in match.group(0)]
        assert len(keys) == 1, f"no single answer for {match.group(0)!r}"
        return "".join(f"{match.group(1)}{line}\n" for line in ANSWERS[keys[0]])
    return RAISE.sub(answer, source)


def test_every_stub_is_an_exercise_without_its_answer():
    nb = json.loads(LESSON.read_text(encoding="utf-8"))
    stubs = [c for c in nb["cells"] if "raises-exception" in c["metadata"].get("tags", [])]
    assert len(stubs) == 4
    for cell in stubs:
        source = "".join(cell["source"])
        assert "NotImplementedError(" in source and solved(source) != source
        for lines in ANSWERS.values():  # the message never holds the answer
            assert lines[-1].strip() not in source


def test_lesson_runs_with_the_exercises_solved():
    nb = nbformat.read(LESSON, as_version=4)
    for cell in nb.cells:
        if "raises-exception" in cell.metadata.get("tags", []):
            cell.source = solved(cell.source)
            cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != "raises-exception"]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    printed = [o.get("text",
                     "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert sum("all checks passed" in text for text in printed) == 2  # exercises 01.3 and 01.4
    assert any("monomials per entry: [2, 2]" in text for text in printed)  # exercise 01.1
    assert any("d = 3, t = 3: 46 monomials per entry" in text for text in printed)  # exercise 01.2



def test_the_demo_draws_the_size_panel_only_with_sizes(caplog):
    """Section 4 draws the cost alone; Bonus 2's sizes=True adds the bars, a count of 1 visible."""
    from widget_support import set_and_run

    from lsa_helpers.widgets import polynomial_explorer

    demo = polynomial_explorer()
    set_and_run(demo, caplog)
    assert len(demo.figure.axes) == 1
    demo = polynomial_explorer(sizes=True)
    facts = set_and_run(demo, caplog, d=1, d_out=1, a=1, t=1)
    bars = demo.figure.axes[-1]
    assert [b.get_width() for b in bars.patches] == [1, 1, 3] == [  # d = d' = a = t = 1: 2ad + dd'
        facts["monomials per output entry"], facts["span dimension of the neuromanifold"],
        facts["parameters"]]
    assert all(b.get_x() + b.get_width() > bars.get_xlim()[0] for b in bars.patches)
