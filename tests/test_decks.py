"""The presentation decks ``notebooks/slides/NN_name.ipynb``: one per lesson, made for a room.

Static checks, per deck: at most 60 words a slide (its markdown and its fragments; a ``$...$``,
a ``$$...$$`` and a code span count as one word each); a speaker-notes cell on every slide, of
40-200 words, starting with its minutes ("~N min"), which add up to the lesson's core time within
20 %; test markers as cell tags (no ``NBVAL`` in any source); no stored error, stderr or widget
view; every code cell self-contained (each name it loads is defined or imported in the cell, or a
builtin); a hidden-input cell's figure at most 1100x440 px, a shown cell a tagged demo of two
lines; the deck's RISE settings; a deck for every lesson; a title slide naming the lesson, and a
closing slide naming an exercise, the homework sheet and every Bonus section of the lesson.

The browser walk (``-m browser``, needs Chromium like ``test_browser.py``, whose server and
slideshow it uses) opens each deck directly at 1280x720 and steps with Space through every stop:
no stop taller than the screen, body text at least 28 px, math rendered, no error shown; at the
demo it runs the cell live and checks that the sliders and the result are on the screen, then
makes one move (a prediction, the reveal box, or a slider's step) and checks them again.
"""

from __future__ import annotations

import ast
import base64
import builtins
import json
import os
import re
import struct
from pathlib import Path

import pytest

# browser and lab are test_browser's fixtures: one JupyterLab server, one Chromium for the walk
from test_browser import CHROMIUM, RUN_ALL, START, Slideshow, browser, lab  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SLIDES = NOTEBOOKS / "slides"
DECKS = sorted(SLIDES.glob("0*.ipynb"))
LESSONS = sorted(NOTEBOOKS.glob("0*.ipynb"))

RISE = {"theme": "simple", "transition": "none", "slideNumber": "c/t", "center": False,
        "scroll": False, "controls": True, "progress": True}
MAX_WORDS = 60
NOTES_WORDS = (40, 200)
MINUTES = re.compile(r"~\s*(\d+(?:\.\d+)?)\s*min\b")
FIGURE_PX = (1100, 440)  # figsize (11, 4.4) at 100 dpi
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SCAFFOLDING = ["NBVAL", "NotImplementedError", "Estimated timing", "Solution:", "•••"]
DEMO_TAG = "nbval-ignore-output"


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell):
    return "".join(cell["source"])


def kind(cell):
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")


def slides(nb):
    """The slides of a deck, in order: lists of the cells from one ``slide``/``subslide`` on."""
    groups = []
    for cell in nb["cells"]:
        if kind(cell) in ("slide", "subslide") or not groups:
            groups.append([])
        groups[-1].append(cell)
    return groups


def visible_markdown(group):
    """The markdown a slide shows: its own cell and its fragments (not notes, not skipped)."""
    return "\n\n".join(source(cell) for cell in group
                       if cell["cell_type"] == "markdown" and kind(cell) not in ("notes", "skip"))


def plain(markdown):
    """Markdown reduced to its words: math and code spans one token each, markup removed."""
    text = re.sub(r"\$\$.+?\$\$", " MATH ", markdown, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", " MATH ", text)
    text = re.sub(r"`[^`\n]+`", " CODE ", text)
    text = re.sub(r"<[^>\n]+>", " ", text)                      # html tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)      # links and images: their text
    return re.sub(r"[#*_>|~]", " ", text)


def words(markdown):
    return [token for token in plain(markdown).split() if re.search(r"\w", token)]


def normalized(text):
    return " ".join(re.sub(r"[*_`]", "", text).casefold().split())


def loaded_but_undefined(code):
    """Names a cell loads without defining, importing or getting them from builtins."""
    tree = ast.parse(code)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            defined.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
    loaded = {node.id for node in ast.walk(tree)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return sorted(loaded - defined)


def png_size(encoded):
    """(width, height) of a base64 PNG, read from its IHDR chunk."""
    head = base64.b64decode(encoded[:64])
    return struct.unpack(">II", head[16:24])


def lesson_of(deck):
    return NOTEBOOKS / deck.name


def bonus_titles(lesson):
    """``(N, title)`` of each ``## Bonus N: title`` of the lesson, a trailing "(...)" left out."""
    found = re.findall(r"^## Bonus (\d+): (.+)$", "\n".join(source(c) for c in load(lesson)["cells"]
                                                             if c["cell_type"] == "markdown"), re.M)
    return [(n, re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()) for n, title in found]


def core_minutes(lesson):
    match = re.search(r"core about (\d+) minutes", source(load(lesson)["cells"][0]))
    return int(match.group(1)) if match else None


deck_params = pytest.mark.parametrize("deck", DECKS, ids=[deck.stem for deck in DECKS])


def test_a_deck_for_every_lesson():
    assert {deck.stem for deck in DECKS} == {lesson.stem for lesson in LESSONS}


def test_the_room_theme_sets_the_sizes():
    css = (SLIDES / "rise.css").read_text(encoding="utf-8")
    assert re.search(r"\.jp-RenderedHTMLCommon\s*\{[^}]*font-size:\s*30px", css)
    assert re.search(r"\.jp-InputPlaceholder[^{]*\{[^}]*display:\s*none", css, re.S)


@deck_params
def test_rise_settings_and_kernel(deck):
    metadata = load(deck)["metadata"]
    assert metadata.get("rise") == RISE
    assert metadata["kernelspec"]["name"] == "python3"


@deck_params
def test_slides_are_short(deck):
    long = {i: len(words(visible_markdown(group)))
            for i, group in enumerate(slides(load(deck)), start=1)
            if len(words(visible_markdown(group))) > MAX_WORDS}
    assert not long, f"slides (numbered from 1) over {MAX_WORDS} words: {long}"


@deck_params
def test_every_slide_has_speaker_notes_with_its_minutes(deck):
    groups = slides(load(deck))
    missing = [i for i, group in enumerate(groups, start=1)
               if not any(kind(cell) == "notes" for cell in group)]
    assert not missing, f"slides without a notes cell: {missing}"
    notes = [(i, source(cell)) for i, group in enumerate(groups, start=1) for cell in group
             if kind(cell) == "notes"]
    assert all(cell["cell_type"] == "markdown" for group in groups for cell in group
               if kind(cell) == "notes")
    unmarked = [i for i, text in notes if not MINUTES.match(text.strip())]
    assert not unmarked, f"notes of slides {unmarked} do not start with '~N min'"
    sizes = {i: len(words(text)) for i, text in notes}
    bad = {i: n for i, n in sizes.items() if not NOTES_WORDS[0] <= n <= NOTES_WORDS[1]}
    assert not bad, f"notes outside {NOTES_WORDS} words: {bad}"
    total = sum(float(MINUTES.match(text.strip()).group(1)) for _, text in notes)
    core = core_minutes(lesson_of(deck))
    assert core and abs(total - core) <= 0.2 * core, \
        f"the notes add up to {total:g} min; the lesson's core takes {core} min"



@deck_params
def test_speaker_notes_read_as_plain_text(deck):
    """RISE's speaker view shows a note's source: no TeX, no emphasis markers, no broken lines."""
    groups = slides(load(deck))
    notes = [(i, source(cell)) for i, group in enumerate(groups, start=1) for cell in group
             if kind(cell) == "notes"]
    raw = {i: marks for i, text in notes
           for marks in [[m for m in ("$", "**", "\\") if m in text]] if marks}
    assert not raw, f"notes with TeX or markup (slide: marks): {raw}"
    # a line break inside a paragraph: the next line starts no list item
    wrapped = re.compile(r"[^\n]\n(?!\s*(?:[-*]|\d+[.)])\s)[^\n]")
    broken = [i for i, text in notes if wrapped.search(text.strip())]
    assert not broken, f"notes of slides {broken} break a paragraph across lines"

@deck_params
def test_title_and_closing_slides(deck):
    groups = slides(load(deck))
    title, closing = visible_markdown(groups[0]), normalized(visible_markdown(groups[-1]))
    number = deck.stem[:2]
    assert title.lstrip().startswith(f"# {number} · "), title[:80]
    assert f"Lesson: notebooks/{deck.name}" in title.replace("`", "")
    assert re.search(rf"exercise {number}\.\d", closing), "the closing slide names no exercise"
    assert normalized(f"build/handouts/{deck.stem}.html") in closing, "no homework sheet named"
    missing = [f"Bonus {n}: {t}" for n, t in bonus_titles(lesson_of(deck))
               if f"bonus {n}" not in closing or normalized(t) not in closing]
    assert not missing, f"the closing slide does not name {missing}"


@deck_params
def test_no_scaffolding_errors_or_stored_widgets(deck):
    cells = load(deck)["cells"]
    found = [(i, word) for i, cell in enumerate(cells) for word in SCAFFOLDING
             if word in source(cell)]
    assert not found, f"scaffolding in cells: {found}"
    for i, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"cell {i} stores an error"
            assert output.get("name") != "stderr", f"cell {i} stores stderr output"
            assert WIDGET_MIME not in output.get("data", {}), f"cell {i} stores a widget view"
            assert "Traceback" not in json.dumps(output), f"cell {i} stores a traceback"
        assert not ({"raises-exception"} & set(cell.get("metadata", {}).get("tags", []))), i


@deck_params
def test_code_cells_are_self_contained(deck):
    undefined = {i: names for i, cell in enumerate(load(deck)["cells"])
                 if cell["cell_type"] == "code"
                 for names in [loaded_but_undefined(source(cell))] if names}
    assert not undefined, f"names used but not defined in their cell: {undefined}"


@deck_params
def test_code_cells_are_figures_or_short_demos(deck):
    """A hidden-input cell draws a figure that fits; a shown one is a two-line demo, tagged."""
    for i, cell in enumerate(load(deck)["cells"]):
        if cell["cell_type"] != "code":
            continue
        metadata = cell["metadata"]
        if metadata.get("jupyter", {}).get("source_hidden"):
            assert DEMO_TAG not in metadata.get("tags", []), f"cell {i}: a demo with hidden code"
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    width, height = png_size(output["data"]["image/png"])
                    assert width <= FIGURE_PX[0] and height <= FIGURE_PX[1], \
                        f"cell {i}: a {width}x{height} figure, more than {FIGURE_PX}"
        else:
            assert DEMO_TAG in metadata.get("tags", []), f"cell {i}: a shown code cell, untagged"
            lines = [line for line in source(cell).splitlines() if line.strip()]
            assert len(lines) <= 2, f"cell {i}: more than two lines of code"


def test_word_count_rules():
    """The counting itself, on text with a known count."""
    assert words("## Fibers\n\nThe *curve* $(\\lambda A, \\lambda^{-1} V)$ is **[paper]**:") == \
        ["Fibers", "The", "curve", "MATH", "is", "[paper]"]
    assert len(words("$$\nx + y\n$$\n\n- `make slides` → [the sheet](x.html)")) == 4
    assert loaded_but_undefined("import numpy as np\nx = np.ones(2)\nprint(x, y)") == ["y"]
    assert loaded_but_undefined("f = lambda t: t\n[z for z in range(3)]") == []


# --------------------------------------------------------------------------------------------
# The browser walk: each deck opened directly at /rise/slides/<deck> (the server of
# test_browser.py serves notebooks/), at a projector's 1280x720.

VIEWPORT = {"width": 1280, "height": 720}
MIN_BODY_PX = 28


def stops(nb):
    """``(hash position (h, v), fragments shown, slide's cells)`` for every stop of the deck."""
    found, h, v = [], -1, 0
    for group in slides(nb):
        if kind(group[0]) == "subslide" and h >= 0:
            v += 1
        else:
            h, v = h + 1, 0
        fragments = sum(kind(cell) == "fragment" for cell in group)
        found += [((h, v), shown, group) for shown in range(fragments + 1)]
    return found


# JavaScript: what the slide shown puts on the screen. Elements of a fragment not yet shown, of
# notes and of skipped cells take no room.
MEASURE = """() => {
    const slide = document.querySelector(
        '.reveal .slides > section.present > section.present');
    const shown = node => {
        const box = node.getBoundingClientRect();
        const style = getComputedStyle(node);
        return box.width > 0 && box.height > 0 && style.visibility !== 'hidden'
            && !node.closest('.fragment:not(.visible)') && style.opacity !== '0';
    };
    const nodes = Array.from(slide.querySelectorAll('.jp-Cell *')).filter(shown);
    const markdown = Array.from(slide.querySelectorAll('.jp-MarkdownCell')).filter(shown);
    const body = Array.from(slide.querySelectorAll(
        '.jp-MarkdownCell .jp-RenderedHTMLCommon :is(p, li, td, th)')).filter(shown);
    const text = markdown.map(cell => cell.innerText).join('\\n');
    const outputs = Array.from(slide.querySelectorAll('.jp-OutputArea-output')).filter(shown);
    return {
        hash: location.hash,
        bottom: Math.max(0, ...nodes.map(n => n.getBoundingClientRect().bottom)),
        right: Math.max(0, ...nodes.map(n => n.getBoundingClientRect().right)),
        smallest: Math.min(999, ...body.map(n => parseFloat(getComputedStyle(n).fontSize))),
        unrendered: markdown.filter(cell => !cell.classList.contains('jp-mod-rendered')).length,
        raw_math: (text.match(/\\$[^$\\n]+\\$/) || [null])[0],
        math: slide.querySelectorAll('mjx-container').length,
        errors: outputs.filter(node => /Traceback|\\w+Error:/.test(node.innerText)
            || node.dataset.mimeType === 'application/vnd.jupyter.stderr')
            .map(node => node.innerText.slice(0, 200)),
        widget_text: outputs.some(node => node.innerText.startsWith('interactive(')),
    };
}"""


def check_stop(deck, stop, number, total, height):
    (h, v), _, group = stop
    where = f"stop {number} of {total} (slide {h + 1}, {deck.shown()})"
    has_math = "$" in visible_markdown(group)
    settled = deck.wait(f"""() => {{
        const m = ({MEASURE})();
        return !m.unrendered && !m.raw_math && (m.math > 0 || !{str(has_math).lower()}) && m;
    }}""", f"{where}: the markdown and its math to render",
        seen=lambda: str(deck.page.evaluate(MEASURE)))
    deck.check(settled["hash"].startswith(f"#/slide-{h}-{v}"),
               f"{where}: expected slide {h}-{v}, the hash reads {settled['hash']}")
    deck.check(settled["bottom"] <= height,
               f"{where}: the content reaches {settled['bottom']:.0f} px, below the screen")
    deck.check(settled["right"] <= VIEWPORT["width"],
               f"{where}: the content reaches {settled['right']:.0f} px, right of the screen")
    deck.check(settled["smallest"] >= MIN_BODY_PX,
               f"{where}: body text at {settled['smallest']} px, below {MIN_BODY_PX} px")
    deck.check(not settled["errors"], f"{where}: error output {settled['errors']}")
    deck.check(not settled["widget_text"], f"{where}: a widget shown as text")


def run_demo(deck, index, number):
    """Ctrl+Enter in demo cell ``index``; its sliders and result must come, on the screen."""
    deck.wait_for_kernel("the kernel to start and be idle before the demo runs", START)
    hash_before = deck.page.evaluate("location.hash")
    deck.cell(index).locator(".jp-InputArea-editor .cm-content").press("Control+Enter")
    state = """(index) => {
        const cell = document.querySelectorAll('.reveal .slides .jp-Cell')[index];
        const prompt = cell.querySelector('.jp-InputPrompt').innerText.trim();
        const boxes = Array.from(cell.querySelectorAll(
            '.widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-checkbox, '
            + '.widget-output img')).map(node => node.getBoundingClientRect())
            .filter(box => box.width > 0);
        const output = cell.querySelector('.widget-output img, .widget-output pre');
        return {prompt, controls: cell.querySelectorAll('.widget-slider').length,
                output: Boolean(output), bottom: Math.max(0, ...boxes.map(b => b.bottom)),
                top: Math.min(9999, ...boxes.map(b => b.top)),
                text: cell.querySelector('.jp-Cell-outputArea').innerText};
    }"""
    deck.wait(f"""(index) => {{
        const s = ({state})(index);
        return /^\\[\\d+\\]:$/.test(s.prompt) && s.output
            && Array.from(document.querySelectorAll('.reveal .slides .jp-Cell')[index]
                .querySelectorAll('.widget-output img')).every(img => img.complete) && s;
    }}""", f"demo cell {index} to run and show its controls and output", RUN_ALL, arg=index,
        seen=lambda: str(deck.page.evaluate(state, index)))
    settled(deck, index, state, "the demo ran", f"{number:02d}-demo")
    deck.check(deck.page.evaluate("location.hash") == hash_before,
               f"running the demo moved the slideshow: {deck.shown()}")
    interact(deck, index, number, state)


def settled(deck, index, state, after, shot):
    """Once the kernel is idle ``after`` a run or a move: no error in the demo of cell ``index``,
    its controls and result on the 720 px screen; a screenshot named ``shot``."""
    deck.wait_for_kernel(f"the kernel to be idle after {after}")
    result = deck.page.evaluate(state, index)
    deck.check(not re.search(r"Traceback|\w+Error:", result["text"]),
               f"after {after}, the demo shows an error: {result['text'][:300]!r}")
    deck.check(result["top"] >= 0 and result["bottom"] <= VIEWPORT["height"],
               f"after {after}, the demo's controls and result span {result['top']:.0f} to "
               f"{result['bottom']:.0f} px, off the 720 px screen")
    deck.page.screenshot(path=str(deck.tmp_path / f"{deck.stem}-{shot}.png"))


# JavaScript: one move a student makes first, on the control that changes the most: a prediction
# (the second of the toggle buttons; a typed number), the reveal box, or else the first slider,
# whose number the test then types (or, not editable, whose track it clicks). Returns what it did.
MOVE = """(index) => {
    const cell = document.querySelectorAll('.reveal .slides .jp-Cell')[index];
    const button = cell.querySelectorAll('.widget-toggle-buttons button')[1];
    const box = cell.querySelector('.widget-checkbox input');
    const typed = cell.querySelector('.widget-text input');
    if (button) { button.click(); return 'prediction ' + button.innerText; }
    if (box) { box.click(); return 'ticked ' + box.parentElement.innerText; }
    if (typed) {
        typed.value = '10';
        typed.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
        typed.dispatchEvent(new Event('change', {bubbles: true}));
        return 'typed 10';
    }
    return 'slider';
}"""


def interact(deck, index, number, state):
    """One move on the demo of cell ``index``: its output changes and, with its controls, stays
    on the 720 px screen, with no error."""
    before = deck.page.evaluate(state, index)
    done = deck.page.evaluate(MOVE, index)
    if done == "slider":  # to the far end from the handle: the value changes
        slider = deck.cell(index).locator(".widget-slider").first
        low, now, high = (float(slider.locator(".noUi-handle").get_attribute(f"aria-value{end}"))
                          for end in ("min", "now", "max"))
        end = high if now <= (low + high) / 2 else low
        readout = slider.locator(".widget-readout")
        if readout.get_attribute("contenteditable") == "true":  # as INSTRUCTORS.md §3 says
            readout.fill(f"{end:g}")
            readout.press("Enter")
            done = f"{end:g} typed into a slider's number"
        else:
            track = slider.locator(".noUi-base")
            box = track.bounding_box()
            track.click(position={"x": (0.95 if end == high else 0.05) * box["width"],
                                  "y": box["height"] / 2})
    deck.wait(f"""([index, before]) => {{
        const s = ({state})(index);
        return s.text !== before && Array.from(
            document.querySelectorAll('.reveal .slides .jp-Cell')[index]
                .querySelectorAll('.widget-output img')).every(img => img.complete) && s;
    }}""", f"the demo's output to change after {done}", RUN_ALL, arg=[index, before["text"]],
        seen=lambda: str(deck.page.evaluate(state, index)))
    settled(deck, index, state, done, f"{number:02d}-moved")


def walk(deck, nb):
    all_stops = stops(nb)
    demos = [i for i, cell in enumerate(nb["cells"])
             if cell["cell_type"] == "code" and DEMO_TAG in cell["metadata"].get("tags", [])]
    for number, stop in enumerate(all_stops, start=1):
        if number > 1:
            deck.forward("Space")
        check_stop(deck, stop, number, len(all_stops), VIEWPORT["height"])
        deck.page.screenshot(path=str(deck.tmp_path / f"{deck.stem}-{number:02d}.png"))
        if stop[1] == 0:
            for index in demos:
                if any(cell is nb["cells"][index] for cell in stop[2]):
                    run_demo(deck, index, number)
                    check_stop(deck, stop, number, len(all_stops), VIEWPORT["height"])
    deck.page.keyboard.press("Space")
    deck.page.wait_for_timeout(300)
    deck.check(deck.page.evaluate("location.hash").startswith(
        f"#/slide-{all_stops[-1][0][0]}-{all_stops[-1][0][1]}"),
        f"Space moved past the last stop the notebook defines: {deck.shown()}")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                    reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
@deck_params
def test_the_deck_plays_in_a_room(request, tmp_path, deck):
    """At 1280x720: every stop fits the screen, body text >= 28 px, math rendered, no error;
    the demo runs live with its controls and result on the screen. Screenshots in tmp_path."""
    context, server = request.getfixturevalue("browser"), request.getfixturevalue("lab")
    show = Slideshow(context, *server, f"slides/{deck.name}", tmp_path, viewport=VIEWPORT,
                     idle=False)
    show.stem = deck.stem
    try:  # the notebook as the server serves it (a copy taken when the server started)
        walk(show, show.api(f"contents/slides/{deck.name}")["content"])
    finally:
        show.close()
