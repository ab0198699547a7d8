"""``make slides``, end to end: ``tools/build_slides.py`` run once into a temporary folder.

- Each cheat-sheet PDF is one page of its paper (``pdfinfo``), and its text (``pdftotext``) holds
  every run-in heading of the markdown sheet, the cells of the paper map's last row (the end of
  the sheet) and no ``$`` (MathJax typeset the formulas before printing).
- Each lesson's homework sheet names every exercise the lesson has (its numbers ``Exercise NN.k``,
  read from the notebook) and no line that only its solution notebook holds.
- Each static deck, opened from ``file://`` in Debian's Chromium with every request that is not
  a local file refused: reveal.js starts with the deck's slide numbers, one slide per slide cell,
  one speaker note per notes cell, no raw ``$…$`` and some typeset math, its first figure (if its
  notebook stores one) loaded within the 1280×720 screen; no request leaves the machine or fails.

Marked ``browser`` (Chromium, Playwright); skipped without ``/usr/bin/chromium``, ``pdfinfo``
(poppler-utils) or ``npm``, except on CI, where their absence fails.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SHEETS = {"CHEATSHEET": NOTEBOOKS / "CHEATSHEET.md",
          "CHEATSHEET.ko": NOTEBOOKS / "ko" / "CHEATSHEET.ko.md"}
PAPERS = {"A4": "595.92 x 841.92", "Letter": "612.96 x 792.96"}  # pdfinfo's page sizes, in pt
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
DECKS = sorted((NOTEBOOKS / "slides").glob("*.ipynb"))
MISSING = [tool for tool in ("pdfinfo", "pdftotext", "npm") if shutil.which(tool) is None]
MISSING += [str(CHROMIUM)] if not CHROMIUM.exists() else []

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(bool(MISSING) and not os.environ.get("CI"),
                       reason=f"needs {MISSING} (apt-get install chromium poppler-utils npm)"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The folder that ``tools/build_slides.py --out`` filled: slides/ and handouts/."""
    assert not MISSING, f"CI without {MISSING}: .ci/run should have installed them"
    out = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_slides.py"), "--out", str(out)],
                   check=True, timeout=600)
    return out


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def letters(text):
    """Text without spaces and hyphens: how words compare across pdftotext's line breaks."""
    return re.sub(r"[\s-]+", "", text)


def text_of(page):
    """The text of an HTML page, tags removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


# --------------------------------------------------------------------------------------------
# Cheat sheets

@pytest.mark.parametrize("paper", PAPERS)
@pytest.mark.parametrize("name", SHEETS)
def test_cheat_sheet_is_one_page_with_every_heading(built, name, paper):
    pdf = built / "handouts" / f"{name}.{paper}.pdf"
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Pages:\s+1$", info, re.MULTILINE), info
    assert PAPERS[paper] in info, info
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    source = SHEETS[name].read_text(encoding="utf-8")
    headings = [heading.rstrip(".") for heading in re.findall(r"^\*\*([^*$]+)\*\*", source,
                                                               re.MULTILINE)]
    last_row = [cell.strip() for cell in source.strip().splitlines()[-1].strip("|").split("|")]
    assert len(headings) >= 8, headings
    missing = [words for words in headings + last_row if letters(words) not in letters(text)]
    assert not missing, f"{pdf.name} lacks {missing}"
    assert "$" not in text, f"{pdf.name} shows raw math: {text[text.index('$') - 40:][:80]!r}"


# --------------------------------------------------------------------------------------------
# Homework sheets

@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.stem)
def test_homework_sheet_has_the_exercises_and_no_solution(built, lesson):
    sheet = (built / "handouts" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    assert (built / "handouts" / f"{lesson.stem}.pdf").stat().st_size > 0
    number = lesson.name[:2]
    lesson_sources = ["".join(cell["source"]) for cell in cells(lesson)]
    in_lesson = set(re.findall(rf"Exercise {number}\.\d+", "\n".join(lesson_sources)))
    headed = set(re.findall(rf"<h2>[^<]*(Exercise {number}\.\d+)", sheet))
    assert in_lesson and headed == in_lesson, (sorted(headed), sorted(in_lesson))
    assert f"notebooks/solutions/{lesson.name}" in sheet
    in_lesson_text = letters("\n".join(lesson_sources))
    solution_only = {line.strip() for cell in cells(NOTEBOOKS / "solutions" / lesson.name)
                     for line in "".join(cell["source"]).splitlines()
                     if len(line.strip()) >= 20 and letters(line) not in in_lesson_text}
    assert len(solution_only) >= 10
    text = text_of(sheet)
    leaked = sorted(line for line in solution_only if letters(line) in letters(text))
    assert not leaked, f"{lesson.stem}'s homework sheet holds solution lines: {leaked[:3]}"
    assert "Solution:" not in text and "Estimated timing" not in text


# --------------------------------------------------------------------------------------------
# Static decks

@pytest.fixture(scope="module")
def chromium():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# JavaScript: what the deck shows once reveal.js and MathJax are done.
DECK_STATE = """() => {
    const slides = Array.from(document.querySelectorAll('.reveal .slides > section'));
    const raw = slides.filter(slide => {
        const copy = slide.cloneNode(true);
        copy.querySelectorAll('script, aside.notes').forEach(node => node.remove());
        return /\\$[^$\\s][^$]*\\$/.test(copy.textContent);
    }).map(slide => slides.indexOf(slide) + 1);
    return {slides: slides.length, notes: document.querySelectorAll('aside.notes').length,
            number: document.querySelector('.slide-number').textContent
                .replace(/\\s+/g, ' ').trim(),
            math: document.querySelectorAll('.slides .MathJax_CHTML').length, raw: raw,
            figure: slides.findIndex(slide => slide.querySelector('.jp-OutputArea-output img'))};
}"""
FIGURE_SHOWN = """() => {
    const image = document.querySelector('section.present .jp-OutputArea-output img');
    if (!image || !image.complete || image.naturalWidth === 0) return null;
    const box = image.getBoundingClientRect();
    return [box.left, box.top, box.right, box.bottom];
}"""


@pytest.mark.skipif(not DECKS, reason="no deck in notebooks/slides")
@pytest.mark.parametrize("deck", DECKS, ids=lambda path: path.stem)
def test_static_deck_plays_offline(built, chromium, deck, tmp_path):
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    outside, failed, errors = [], [], []

    def local_only(route):
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", local_only)
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((built / "slides" / f"{deck.stem}.slides.html").as_uri())
    try:
        page.wait_for_selector(".reveal.ready", timeout=30_000)
        page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                               " && MathJax.Hub.queue.running === 0", timeout=60_000)
        state = page.evaluate(DECK_STATE)
        stored = [cell for cell in cells(deck) if cell["cell_type"] != "raw"]
        kinds = [cell["metadata"].get("slideshow", {}).get("slide_type") for cell in stored]
        assert state["slides"] == kinds.count("slide"), state
        assert state["notes"] == kinds.count("notes"), state
        assert state["number"] == f"1 / {state['slides']}", state
        assert state["math"] > 0 and not state["raw"], state
        figures = any("image/png" in output.get("data", {})
                      for cell in stored for output in cell.get("outputs", []))
        assert (state["figure"] >= 0) == figures, state
        if figures:
            page.evaluate(f"() => {{ window.location.hash = '#/{state['figure']}'; }}")
            box = page.wait_for_function(FIGURE_SHOWN, timeout=10_000).json_value()
            assert box[2] - box[0] > 100 and box[0] >= 0 and box[1] >= 0
            assert box[2] <= 1280 and box[3] <= 720, box
    except Exception:
        page.screenshot(path=str(tmp_path / f"{deck.stem}.png"))
        raise
    finally:
        page.close()
    assert not outside, f"requests that left the machine: {outside}"
    assert not failed and not errors, (failed, errors)
