"""Offline decks and handouts (``make slides``), built from the notebooks as they are stored.

- ``build/slides/NN_name.slides.html``: each deck ``notebooks/slides/NN_name.ipynb`` exported by
  nbconvert's reveal template with its stored outputs, hidden inputs removed and notes cells as
  reveal.js speaker notes (key S); reveal.js, MathJax, require.js and jQuery in
  ``build/slides/lib``;
- ``build/handouts/CHEATSHEET[.ko].{A4,Letter}.pdf``: each cheat sheet on one page, two columns;
- ``build/handouts/NN_name.html`` and ``.pdf``: the exercises of each lesson, without solutions.

The libraries come from npm (``npm ci`` of ``tools/web/package-lock.json``, kept in ``build/web``);
the PDFs are printed by Debian's Chromium through Playwright. Run from anywhere:
``python tools/build_slides.py [--out DIR] [DECK.ipynb ...]``.
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbconvert import SlidesExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "tools" / "web"
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
CHEAT_SHEETS = {"CHEATSHEET": NOTEBOOKS / "CHEATSHEET.md",
                "CHEATSHEET.ko": NOTEBOOKS / "ko" / "CHEATSHEET.ko.md"}
PAPERS = {"A4": (210, 297), "Letter": (215.9, 279.4)}  # millimetres
MARGIN = 8  # millimetres, on every side
FONT_SIZES = (9.5, 9, 8.75, 8.5, 8.25, 8)  # points: the largest that fits one page is kept
MATHJAX = "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
# What the pages load, copied from node_modules into lib/ (destination: source).
MATHJAX_FILES = {f"mathjax/{part}": f"mathjax/{part}" for part in (
    "MathJax.js", "config/TeX-AMS_CHTML-full.js", "config/Safe.js", "extensions", "jax/input/TeX",
    "jax/element", "jax/output/CommonHTML", "fonts/HTML-CSS/TeX/woff", "localization/en")}
DECK_FILES = {
    "reveal.js/dist/reveal.js": "reveal.js/dist/reveal.js",
    "reveal.js/dist/reveal.css": "reveal.js/dist/reveal.css",
    "reveal.js/dist/theme": "reveal.js/dist/theme",
    "reveal.js/plugin/notes": "reveal.js/plugin/notes",
    "require.js": "requirejs/require.js",
    "jquery.min.js": "jquery/dist/jquery.min.js",
    **MATHJAX_FILES,
}
# A theme's @import of a web font: dropped, so nothing is fetched (the theme's next font serves).
WEB_IMPORT = re.compile(r"^@import url\(https?://[^)]*\);\n", re.MULTILINE)
# A line of links only (to the other language, the glossary): not for paper.
NAVIGATION = re.compile(r"^\[[^\]]*\]\([^)]*\)(?: · \[[^\]]*\]\([^)]*\))*\n", re.MULTILINE)
EXERCISE = re.compile(r"^#+ .*\bExercise \d\d\.\d+\b")
HEADING = re.compile(r"^#+ ", re.MULTILINE)
SECTION_NUMBER = re.compile(r"^#+ (?:\d+\. )?")  # "## 5. Exercise 03.1": an exercise heading
# Lines of an exercise section that belong to the lesson, not to the sheet.
LESSON_ONLY = re.compile(r"^(Solution: .*|\*Estimated timing.*\*)\n?", re.MULTILINE)


def markdown(text: str) -> str:
    """HTML of markdown with its $…$ math kept for MathJax (nbconvert's renderer, no ¶ anchors)."""
    return MarkdownWithMath(IPythonRenderer(escape=False, exclude_anchor_links=True)).render(text)


def node_modules(build: Path) -> Path:
    """``build/web/node_modules``, installed by ``npm ci`` from the lock (again when it changes)."""
    web = build / "web"
    lock = (WEB / "package-lock.json").read_text(encoding="utf-8")
    installed = web / "node_modules" / ".package-lock.json"
    stamp = web / "installed-lock.json"
    if not (installed.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == lock):
        web.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(WEB / name, web / name)
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=web,
                       check=True, stdout=subprocess.DEVNULL)
        stamp.write_text(lock, encoding="utf-8")
    return web / "node_modules"


def copy_libraries(modules: Path, files: dict[str, str], lib: Path) -> None:
    """``files`` (destination: source in ``modules``) into ``lib``; reveal.js themes without web
    fonts."""
    for destination, source in files.items():
        target, origin = lib / destination, modules / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target, dirs_exist_ok=True)
        else:
            shutil.copy(origin, target)
    for theme in (lib / "reveal.js/dist/theme").glob("*.css"):
        theme.write_text(WEB_IMPORT.sub("", theme.read_text(encoding="utf-8")), encoding="utf-8")


def without_hidden_inputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy whose code cells with a collapsed input (jupyter.source_hidden) show outputs only."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden"):
            cell.metadata.setdefault("transient", {})["remove_source"] = True
    return notebook


def export_deck(path: Path, out: Path) -> Path:
    """``out/<stem>.slides.html``: the reveal.js deck of notebook ``path``, loading ``out/lib``."""
    notebook = nbformat.read(path, as_version=4)
    rise = notebook.metadata.get("rise", {})
    exporter = SlidesExporter(
        extra_template_basedirs=[str(WEB)], template_name="deck",
        reveal_url_prefix="lib/reveal.js", reveal_theme=rise.get("theme", "simple"),
        mathjax_url=MATHJAX, require_js_url="lib/require.js", jquery_url="lib/jquery.min.js")
    resources = {"metadata": {"name": path.stem}}
    if (path.parent / "rise.css").exists():
        shutil.copy(path.parent / "rise.css", out / "rise.css")
        resources["deck_css"] = "rise.css"
    body, _ = exporter.from_notebook_node(without_hidden_inputs(notebook), resources=resources)
    target = out / f"{path.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def page(title: str, body: str, lang: str, css: str) -> str:
    """A standalone HTML page with MathJax from lib/; ``body.dataset.typeset`` is set when done."""
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<link rel="stylesheet" href="lib/{css}">
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{messageStyle: "none", tex2jax: {{processEscapes: true,
                    inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]]}}}});
MathJax.Hub.Queue(function () {{ document.body.dataset.typeset = "done"; }});
</script>
<script src="{MATHJAX}"></script>
</head><body><main>
{body}
</main></body></html>
"""


def cheat_sheet(source: Path) -> str:
    """The cheat sheet as a print page (tools/web/handout.css: two columns)."""
    text = NAVIGATION.sub("", source.read_text(encoding="utf-8"))
    title = text.splitlines()[0].lstrip("# ")
    lang = "ko" if source.suffixes[-2:] == [".ko", ".md"] else "en"
    return page(title, markdown(text), lang, "handout.css")


def sections(notebook: nbformat.NotebookNode) -> list[tuple[str, str, list]]:
    """``(heading line, slide type, cells)`` for each heading of the notebook, in order.

    A markdown cell is cut at its headings; a code cell goes to the section it follows, with its
    source only; cells with a collapsed input (checks, figures) are left out.
    """
    found: list[tuple[str, str, list]] = []
    for cell in notebook.cells:
        slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        if cell.cell_type == "markdown":
            starts = [match.start() for match in HEADING.finditer(cell.source)]
            if found and (not starts or starts[0] > 0):
                found[-1][2].append(("markdown", cell.source[:starts[0] if starts else None]))
            for start, end in zip(starts, [*starts[1:], None]):
                part = cell.source[start:end]
                found.append((part.splitlines()[0], slide_type, [("markdown", part)]))
        elif found and not cell.metadata.get("jupyter", {}).get("source_hidden"):
            found[-1][2].append(("code", cell.source))
    return found


def exercises(lesson: Path) -> list[tuple[str, str, list]]:
    """``(heading line, Bonus section or "" in the core, cells)`` of each exercise of a lesson."""
    found, bonus = [], ""
    for heading, slide_type, cells in sections(nbformat.read(lesson, as_version=4)):
        if heading.startswith("## "):
            bonus = heading[3:] if slide_type == "skip" else ""
        if EXERCISE.match(heading):
            found.append((heading, bonus, cells))
    return found


def exercise_html(heading: str, bonus: str, cells: list) -> str:
    """One exercise: the Bonus section it belongs to (unless it is one), its text, its stub code."""
    from_bonus = markdown(f"From {bonus}").replace("<p>", "<p class='from'>", 1)
    parts = [from_bonus] if bonus not in heading else []
    for kind, source in cells:
        if kind == "code":
            parts.append(f"<pre><code>{html.escape(source)}</code></pre>")
        else:
            parts.append(markdown(SECTION_NUMBER.sub("## ", LESSON_ONLY.sub("", source))))
    return "<section class='exercise'>\n" + "\n".join(parts) + "\n</section>"


def homework(lesson: Path) -> str:
    """The homework sheet of a lesson: its exercises as stated there, the stubs, no solutions."""
    title = nbformat.read(lesson, as_version=4).cells[0].source.splitlines()[0].lstrip("# ")
    found = exercises(lesson)
    core = [exercise_html(*exercise) for exercise in found if not exercise[1]]
    bonus = [exercise_html(*exercise) for exercise in found if exercise[1]]
    parts = [f"<h1>Homework · {html.escape(title)}</h1>",
             f"<p class='where'>Lesson: <code>notebooks/{lesson.name}</code>. Type your answers "
             "into the exercise cells there: each checks itself. Solutions, after the session: "
             f"<code>notebooks/solutions/{lesson.name}</code>.</p>", *core]
    if bonus:
        parts += ["<h2 class='part'>Further exercises, with the Bonus reading</h2>", *bonus]
    return page(f"Homework · {title}", "\n".join(parts), "en", "homework.css")


# JavaScript: the first of the font sizes (pt) at which <main>'s columns hold the whole sheet.
FIT = """(sizes) => {
    const main = document.querySelector('main');
    for (const size of sizes) {
        document.documentElement.style.fontSize = size + 'pt';
        if (main.scrollWidth <= main.clientWidth + 1) return size;
    }
    return null; }"""


def print_pdfs(browser, html_path: Path, papers: dict, one_page: bool) -> list[tuple[Path, str]]:
    """``(PDF, note)`` for each paper: with ``one_page``, ``<stem>.<paper>.pdf`` at the largest font
    size of FONT_SIZES at which the two columns hold the whole sheet (an error if none does), noted;
    else ``<stem>.pdf``. The page is laid out in a viewport of the paper's printed area."""
    view = browser.new_page()
    view.emulate_media(media="print")
    view.goto(html_path.as_uri())
    view.wait_for_function("document.body.dataset.typeset === 'done'", timeout=60_000)
    printed = []
    for paper, (width, height) in papers.items():
        view.set_viewport_size({"width": round((width - 2 * MARGIN) * 96 / 25.4),
                                "height": round((height - 2 * MARGIN) * 96 / 25.4)})
        size = view.evaluate(FIT, FONT_SIZES) if one_page else None
        if one_page and size is None:
            raise SystemExit(f"build_slides: {html_path.name} does not fit one {paper} page at "
                             f"{FONT_SIZES[-1]} pt")
        target = html_path.with_suffix(f".{paper}.pdf" if one_page else ".pdf")
        view.pdf(path=str(target), width=f"{width}mm", height=f"{height}mm", print_background=True,
                 margin=dict.fromkeys(("top", "right", "bottom", "left"), f"{MARGIN}mm"))
        printed.append((target, f"{size} pt" if size else ""))
    view.close()
    return printed


def build(out: Path, decks: list[Path]) -> list[tuple[Path, str]]:
    """Everything ``make slides`` makes, under ``out``: ``(file, note)`` for each file written."""
    from playwright.sync_api import sync_playwright

    for tool, package in (("npm", "npm"), (CHROMIUM, "chromium"), ("fc-list", "fontconfig")):
        if shutil.which(tool) is None:
            raise SystemExit(f"build_slides: {tool} not found (apt-get install {package})")
    korean = subprocess.run(["fc-list", ":lang=ko"], capture_output=True, text=True).stdout
    if not korean.strip():
        raise SystemExit("build_slides: no font for the Korean cheat sheet "
                         "(apt-get install fonts-noto-cjk)")
    modules = node_modules(ROOT / "build")
    slides, handouts = out / "slides", out / "handouts"
    copy_libraries(modules, DECK_FILES, slides / "lib")
    copy_libraries(modules, MATHJAX_FILES, handouts / "lib")
    for css in WEB.glob("*.css"):  # the handouts' style sheets
        shutil.copy(css, handouts / "lib" / css.name)
    written = []
    written += [(export_deck(deck, slides), "") for deck in decks]
    pages = []
    for name, source in CHEAT_SHEETS.items():
        pages.append((handouts / f"{name}.html", cheat_sheet(source), PAPERS, True))
    for lesson in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        pages.append((handouts / f"{lesson.stem}.html", homework(lesson), {"A4": PAPERS["A4"]},
                      False))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path, text, papers, one_page in pages:
            path.write_text(text, encoding="utf-8")
            written += [(path, ""), *print_pdfs(browser, path, papers, one_page)]
        browser.close()
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build",
                        help="folder for slides/ and handouts/ (default: build)")
    parser.add_argument("decks", nargs="*", type=Path,
                        help="deck notebooks (default: notebooks/slides/*.ipynb)")
    args = parser.parse_args(argv)
    decks = args.decks or sorted((NOTEBOOKS / "slides").glob("*.ipynb"))
    for deck in decks:
        if deck.suffix != ".ipynb" or not deck.is_file():
            parser.error(f"decks: expected notebook files (.ipynb), got {deck}")
    for path, note in build(args.out, decks):
        print(path.relative_to(args.out), note)


if __name__ == "__main__":
    sys.exit(main())
