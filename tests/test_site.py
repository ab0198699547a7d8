"""The course's static book (``make site``, ``build/site``) in headless Chromium, offline.

The book is served from ``build/site`` on a free loopback port; every request for any other host
is aborted and recorded. Every page of the book (not the decks under ``slides/``, nor a JupyterLite
site under ``lite/``) is opened: it loads without a script error, MathJax typesets every formula
(each ``.math`` element holds an ``mjx-container``, and no ``$…$`` is left in the text), every
image is decoded with a positive width, every link to a page of the book names a file that exists
and, with a fragment, an id of that page, and no request left the machine. A notebook's page also
shows the inputs and figures that the stored notebook shows a reader (hidden inputs hidden) and
links to the same notebook in JupyterLite. Further: every source has its page, the navigation
lists them in course order, and the search page finds a word offline.

Run after ``make site``. Without ``build/site`` the tests are skipped, except on CI (``CI`` set),
where they fail; so are they without ``/usr/bin/chromium``. Run alone with ``pytest -m browser
tests/test_site.py``.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from static_server import serving

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "build" / "site"
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LOAD = 120_000  # milliseconds: a page loaded (2 shared cores: MathJax can take 20 s)
IMAGE_OUTPUT = "image/png"

# The book's pages in course order: the landing page, lessons, solutions, reference, Korean pages.
LESSONS = sorted(NOTEBOOKS.glob("0*.ipynb"))
KOREAN = sorted((NOTEBOOKS / "ko").glob("0*.md"))
ORDER = (["index"]
         + [f"notebooks/{path.stem}" for path in LESSONS]
         + [f"notebooks/solutions/{path.stem}" for path in LESSONS]
         + ["notebooks/CHEATSHEET", "GLOSSARY", "notebooks/INSTRUCTORS", "slides",
            "notebooks/ko/README"]
         + [f"notebooks/ko/{path.stem}" for path in KOREAN]
         + ["notebooks/ko/CHEATSHEET.ko", "notebooks/ko/READING_GROUP.ko"])
NOTEBOOK_PAGES = {f"notebooks/{path.relative_to(NOTEBOOKS).with_suffix('.html')}"
                  for path in LESSONS + sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))}
PAGES = sorted(str(path.relative_to(BOOK)) for path in BOOK.rglob("*.html")
               if path.relative_to(BOOK).parts[0] not in {"_static", "_sources", "slides", "lite"})

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(not BOOK.is_dir() and not os.environ.get("CI"),
                       reason=f"no book in {BOOK}: run make site first"),
]

# JavaScript: after MathJax typeset the page, what a reader would see wrong.
PAGE_STATE = r"""async () => {
    if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
    await Promise.all(Array.from(document.images).map(image => image.decode().catch(() => null)));
    const visible = node => !node.closest('pre, code, script, style, mjx-container, .highlight');
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const text = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement && visible(node.parentElement)) { text.push(node.textContent); }
    }
    return {
        math: document.querySelectorAll('.math').length,
        untypeset: Array.from(document.querySelectorAll('.math'))
            .filter(element => !element.querySelector('mjx-container'))
            .map(element => element.textContent.slice(0, 80)),
        containers: document.querySelectorAll('mjx-container').length,
        text: text.join(' '),
        images: Array.from(document.images).map(image => [image.src, image.naturalWidth]),
        links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
    };
}"""
RAW_MATH = re.compile(r"\$[^$\s][^$]*\$|\\\(|\\\[")
ID = re.compile(r"""\sid=["']([^"']+)["']""")


@pytest.fixture(scope="module")
def server():
    """``build/site`` over HTTP on a free loopback port; its base URL."""
    if not BOOK.is_dir():
        pytest.fail(f"CI without {BOOK}: .ci/run should have run make site")
    with serving(BOOK) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium, driven by Playwright."""
    if not CHROMIUM.exists():
        pytest.fail(f"CI without {CHROMIUM}: .ci/run should have installed Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def offline(browser, server):
    """``(page, outside)``: a new page whose requests for other hosts are aborted and listed."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    outside: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if url.startswith((server, "data:", "blob:")):
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    context.set_default_timeout(LOAD)
    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page, outside, errors
    finally:
        context.close()


@functools.cache
def ids(path: Path) -> frozenset[str]:
    return frozenset(ID.findall(path.read_text(encoding="utf-8")))


def book_file(url: str, server: str) -> tuple[Path, str]:
    """The file of the book that a URL on the server names, and the URL's fragment."""
    parts = urlsplit(url)
    path = BOOK / unquote(parts.path.removeprefix(urlsplit(server).path))
    return (path / "index.html" if path.is_dir() else path), unquote(parts.fragment)


def open_page(page, server: str, name: str) -> dict:
    response = page.goto(server + name, wait_until="load", timeout=LOAD)
    assert response is not None and response.ok, f"{name}: {response and response.status}"
    return page.evaluate(PAGE_STATE)


def reader_view(notebook: Path) -> tuple[int, int]:
    """What the stored notebook shows a reader: code cells with their input shown, and images."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    inputs = sum(not cell["metadata"].get("jupyter", {}).get("source_hidden") for cell in code)
    images = sum(IMAGE_OUTPUT in output.get("data", {})
                 for cell in code for output in cell.get("outputs", []))
    return inputs, images


def check_notebook_page(page, name: str) -> None:
    """A notebook's page: the stored notebook's inputs and figures, and its JupyterLite link."""
    path = Path(name).relative_to("notebooks").with_suffix(".ipynb")
    inputs, images = reader_view(NOTEBOOKS / path)
    assert page.locator(".cell_input").count() == inputs, f"{name}: inputs shown"
    assert page.locator(".cell_output img").count() == images, f"{name}: figures shown"
    lite = page.eval_on_selector_all("a[href*='lite/lab/']",
                                     "links => links.map(a => a.getAttribute('href'))")
    expected = "../" * name.count("/") + f"lite/lab/index.html?path={path.as_posix()}"
    assert expected in lite, f"{name}: JupyterLite links {lite}"


@pytest.mark.parametrize("name", PAGES)
def test_page(offline, server, name):
    page, outside, errors = offline
    state = open_page(page, server, name)
    assert not errors, f"{name}: script errors {errors}"
    assert not state["untypeset"], f"{name}: formulas not typeset: {state['untypeset'][:5]}"
    assert state["containers"] >= state["math"]
    raw = RAW_MATH.findall(state["text"])
    assert not raw, f"{name}: raw TeX left in the text: {raw[:5]}"
    broken = [src for src, width in state["images"] if width <= 0]
    assert not broken, f"{name}: images not shown: {broken}"
    for url in state["links"]:
        if not url.startswith(server) or urlsplit(url).path.startswith(
                urlsplit(server).path + "lite/"):
            continue
        path, fragment = book_file(url, server)
        assert path.is_file(), f"{name}: link to a missing file {url}"
        if fragment and path.suffix == ".html":
            assert fragment in ids(path), f"{name}: link to a missing anchor {url}"
    if name in NOTEBOOK_PAGES:
        check_notebook_page(page, name)
    language = page.evaluate("document.documentElement.lang")
    assert language == ("ko" if name.startswith("notebooks/ko/") else "en"), (name, language)
    assert not outside, f"{name}: requests for other hosts {outside}"


def test_pages_in_course_order(offline, server):
    """Every source has its page, and the navigation lists them in course order."""
    for name in ORDER:
        assert (BOOK / f"{name}.html").is_file(), f"no page {name}.html"
    page, _, _ = offline
    open_page(page, server, "index.html")
    hrefs = page.eval_on_selector_all(
        "nav.bd-docs-nav a.reference, .navbar-brand", "links => links.map(a => a.href)")
    listed = [urlsplit(href).path.removeprefix("/").removesuffix(".html") for href in hrefs]
    listed = [name for name in dict.fromkeys(listed) if name in ORDER]
    assert listed == ORDER


def test_search_offline(offline, server):
    """The search page finds the lessons that speak of fibers, with no network."""
    page, outside, errors = offline
    page.goto(server + "search.html?q=fiber", wait_until="load", timeout=LOAD)
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=LOAD)
    found = page.eval_on_selector_all("#search-results ul.search li a",
                                      "links => links.map(a => a.getAttribute('href'))")
    assert any("02_fibers_and_identifiability" in href for href in found), found
    assert not errors and not outside
