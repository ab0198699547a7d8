"""Each notebook is a lesson: a lean core on the paper's story, then Bonus sections.

The budgets are those of the course design ("Core, then Bonus"): the core is every cell before
the first heading that starts with "Bonus"; it opens with an Intuition block, ends with a Summary,
carries timing markers and slides, and keeps its checks out of the reader's way.
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("0*.ipynb"))
BONUS = re.compile(r"^#{1,4}\s*(\d+[.\s]*)?Bonus", re.MULTILINE | re.IGNORECASE)


def text(cell):
    return "".join(cell["source"])


def split(path):
    """(core, bonus) cells of a lesson."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    start = next((i for i, c in enumerate(cells)
                  if c["cell_type"] == "markdown" and BONUS.search(text(c))), len(cells))
    return cells[:start], cells[start:]


def hidden(cell):
    return cell["metadata"].get("jupyter", {}).get("source_hidden", False)


def slide_type(cell):
    return cell["metadata"].get("slideshow", {}).get("slide_type")


def prose_words(markdown):
    return len(re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", " ", markdown, flags=re.DOTALL).split())


@pytest.fixture(params=LESSONS, ids=[p.stem for p in LESSONS])
def lesson(request):
    return request.param.name, *split(request.param)


def test_the_core_is_short(lesson):
    name, core, _ = lesson
    words = sum(prose_words(text(c)) for c in core if c["cell_type"] == "markdown")
    assert words <= 2200, f"{name}: the core has {words} words of prose (at most 2,200)"


def test_the_core_opens_with_intuition_and_ends_with_a_summary(lesson):
    name, core, bonus = lesson
    headings = [line for c in core if c["cell_type"] == "markdown"
                for line in text(c).splitlines() if line.startswith("#")]
    assert any(re.match(r"#{1,4}\s.*\bIntuition\b", h) for h in headings[:3]), (
        f"{name}: no Intuition block among the first headings {headings[:3]}")
    summary = [c for c in core if re.search(r"^#{1,3}\s*Summary", text(c), re.MULTILINE)]
    assert summary, f"{name}: no Summary in the core"
    body = text(summary[0])
    bullets = len(re.findall(r"^\s*[-*]\s", body, re.MULTILINE))
    words = len(re.sub(r"\$[^$]*\$", " ", body).split())
    assert bullets <= 8 and words <= 250, f"{name}: Summary of {bullets} bullets, {words} words"
    assert bonus, f"{name}: no Bonus section after the core"


def test_the_core_has_pictures_timing_and_slides(lesson):
    name, core, _ = lesson
    figures = sum("image/png" in o.get("data", {}) for c in core if c["cell_type"] == "code"
                  for o in c["outputs"])
    markers = sum(len(re.findall(r"estimated timing", text(c), re.IGNORECASE)) for c in core)
    slides = sum(slide_type(c) == "slide" for c in core)
    assert figures >= 2, f"{name}: {figures} figures in the core (at least 2)"
    assert markers >= 2, f"{name}: {markers} 'Estimated timing' markers (at least 2)"
    assert slides >= 8, f"{name}: {slides} slides in the core (at least 8)"


def test_checks_stay_out_of_the_readers_way(lesson):
    name, core, _ = lesson
    visible = [c for c in core if c["cell_type"] == "code" and not hidden(c)]
    asserts = sum(len(re.findall(r"^\s*assert\b", text(c), re.MULTILINE)) for c in visible)
    long = [text(c).splitlines()[0] for c in visible if len(text(c).splitlines()) > 25]
    assert asserts <= 6, f"{name}: {asserts} visible assert lines in the core (at most 6)"
    assert not long, f"{name}: visible code cells over 25 lines: {long}"


def test_bonus_cells_are_left_out_of_the_slides(lesson):
    name, _, bonus = lesson
    shown = [text(c).splitlines()[0] if text(c) else "" for c in bonus if slide_type(c) != "skip"]
    assert not shown, f"{name}: Bonus cells without slide type 'skip': {shown[:3]}"
