"""The course's Sphinx extension: what the book shows of a notebook, where its links go.

- Code cells with a collapsed input (``jupyter.source_hidden``) show their output only, or
  nothing when they have none; a stored widget view becomes a note; an exercise's traceback is
  cut to its last line.
- A Markdown link to a repository file outside the book (``README.ko.md``) goes to that file in
  the repository (``course_repository``), or is left as text when no repository is set.
- Each notebook's page has a JupyterLite entry in its launch menu (``course_lite_url``), and every
  page a button to the repository when one is set.
- The directive ``course-decks`` lists the decks ``notebooks/slides/*.ipynb``, each linked to its
  static reveal.js page ``slides/<name>.slides.html`` (built by ``make slides``, copied into the
  site by ``tools/build_site.py``).
- The Korean pages (``notebooks/ko/``) carry ``lang="ko"``, the others the book's ``en``.
- MathJax 3 is copied from npm's package (``site/node_modules``) into ``_static/mathjax``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util.docutils import SphinxDirective

SITE = Path(__file__).resolve().parent
ROOT = SITE.parent
DECKS = ROOT / "notebooks" / "slides"
MATHJAX = SITE / "node_modules" / "mathjax" / "es5"
# What tex-chtml.js loads from its own folder: TeX extensions on demand, the CHTML fonts, and the
# menu's accessibility and speech modules.
MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2",
                 "a11y", "sre", "ui", "adaptors")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ("*An interactive demo: its controls work where the notebook runs "
               "(JupyterLab, or JupyterLite from the launch menu at the top of this page).*")


def heading_slug(text: str) -> str:
    """A heading's anchor as JupyterLab writes it: the heading's text, spaces as hyphens."""
    return text.strip().replace(" ", "-")


def reader_cell(cell: dict) -> dict:
    """A notebook cell as the book shows it (see the module's docstring)."""
    if cell["cell_type"] != "code":
        return cell
    outputs = []
    for output in cell.get("outputs", []):
        if WIDGET_VIEW in output.get("data", {}):
            output = {"output_type": "display_data", "metadata": {},
                      "data": {"text/markdown": WIDGET_NOTE}}
        elif output["output_type"] == "error":
            output = {"output_type": "stream", "name": "stderr",
                      "text": f"{output['ename']}: {output['evalue']}\n"}
        outputs.append(output)
    cell["outputs"] = outputs
    if cell["metadata"].get("jupyter", {}).get("source_hidden"):
        cell["metadata"].setdefault("tags", []).append("remove-input" if outputs else "remove-cell")
    return cell


def read_notebook(app: Sphinx, docname: str, source: list[str]) -> None:
    """``source-read``: a notebook's cells as :func:`reader_cell` gives them."""
    if Path(app.env.doc2path(docname)).suffix == ".ipynb":
        notebook = json.loads(source[0])
        notebook["cells"] = [reader_cell(cell) for cell in notebook["cells"]]
        source[0] = json.dumps(notebook)


def outside_links(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: each MyST link to a repository file outside the book becomes a link to
    the repository's copy, or its text alone."""
    folder = Path(app.env.doc2path(app.env.docname)).resolve().parent  # through site/ links
    repository = app.config.course_repository.rstrip("/")
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("reftype") != "myst" or node.get("refdomain"):
            continue
        target = (folder / node["reftarget"].split("#")[0]).resolve()
        if not (target.is_file() and target.is_relative_to(ROOT)):
            continue
        text = node.astext()
        if repository:
            url = f"{repository}/blob/HEAD/{target.relative_to(ROOT).as_posix()}"
            node.replace_self(nodes.reference(text, text, refuri=url))
        else:
            node.replace_self(nodes.Text(text))


def header_buttons(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree: nodes.document | None) -> None:
    """``html-page-context``: the repository's button, and a launch menu with JupyterLite on each
    notebook's page."""
    repository = app.config.course_repository.rstrip("/")
    if repository:
        context["header_buttons"].append({
            "type": "link", "url": repository, "tooltip": "Source repository",
            "icon": "fab fa-github" if "github.com" in repository else "fas fa-code-branch",
            "label": "repository-button"})
    if context.get("page_source_suffix") != ".ipynb":
        return
    path = pagename.removeprefix("notebooks/") + ".ipynb"
    url = "../" * pagename.count("/") + app.config.course_lite_url.format(path=path)
    context["header_buttons"].insert(0, {
        "type": "group", "tooltip": "Launch interactive content", "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [{"type": "link", "text": "JupyterLite", "icon": "fas fa-play",
                     "tooltip": "Run this notebook in the browser", "url": url,
                     "label": "launch-jupyterlite-button"}],
    })


def page_language(app: Sphinx, pagename: str, templatename: str, context: dict,
                  doctree: nodes.document | None) -> None:
    """``html-page-context``: the Korean pages (``notebooks/ko/``) are marked ``lang="ko"``."""
    if pagename.startswith("notebooks/ko/"):
        context["language"] = "ko"


class Decks(SphinxDirective):
    """A list of the decks, each its title (the first line of its first cell) linked to its page."""

    def run(self) -> list[nodes.Node]:
        items = nodes.bullet_list()
        prefix = "../" * self.env.docname.count("/")
        for deck in sorted(DECKS.glob("*.ipynb")):
            self.env.note_dependency(str(deck))
            first = json.loads(deck.read_text(encoding="utf-8"))["cells"][0]["source"]
            title = "".join(first).split("\n", 1)[0].lstrip("# ").strip()
            link = nodes.reference(title, title, refuri=f"{prefix}slides/{deck.stem}.slides.html")
            items += nodes.list_item("", nodes.paragraph("", "", link))
        return [items]


def check_mathjax(app: Sphinx) -> None:
    """``builder-inited``: MathJax must have been installed from npm."""
    if not (MATHJAX / "tex-chtml.js").is_file():
        raise ConfigError(f"{MATHJAX / 'tex-chtml.js'} is missing: run `npm ci` in {SITE}")


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: MATHJAX_PARTS into the site's ``_static/mathjax``."""
    if exception is not None or app.builder.format != "html":
        return
    for part in MATHJAX_PARTS:
        source, target = MATHJAX / part, Path(app.outdir) / "_static" / "mathjax" / part
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def setup(app: Sphinx) -> dict:
    app.add_config_value("course_repository", "", "html", str)
    app.add_config_value("course_lite_url", "lite/lab/index.html?path={path}", "html", str)
    app.add_directive("course-decks", Decks)
    app.connect("builder-inited", check_mathjax)
    app.connect("source-read", read_notebook)
    app.connect("doctree-read", outside_links)
    app.connect("html-page-context", header_buttons, priority=502)
    app.connect("html-page-context", page_language)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
