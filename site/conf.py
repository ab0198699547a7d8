"""Sphinx configuration of the course's static book (``make site``).

Sphinx with MyST-NB renders the lessons with their stored outputs (nothing is executed) and the
Markdown pages; ``notebooks`` and ``GLOSSARY.md`` here are links to the repository's own files, so
their relative links resolve as they do in the repository. What a reader sees of a notebook, the
JupyterLite launch button and MathJax's files are the work of ``course_book.py`` beside this file.
Two settings come from the environment:

- ``SITE_REPOSITORY``: the repository's address (a GitHub-style ``…/blob/HEAD/<path>`` serves its
  files); empty, the book names no repository;
- ``SITE_LITE_URL``: the JupyterLite address of a notebook, relative to the book's root, with
  ``{path}`` for its path under ``notebooks/`` (default ``lite/lab/index.html?path={path}``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

project = "The geometry of lightning self-attention"
author = "the course's authors"
copyright = "the course's authors"
language = "en"

extensions = ["myst_nb", "course_book"]
root_doc = "index"
exclude_patterns = ["node_modules", "notebooks/slides", "**/.ipynb_checkpoints"]
nb_execution_mode = "off"
nb_ipywidgets_js: dict[str, dict[str, str]] = {}  # stored widget views are replaced by a note
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4
myst_heading_slug_func = "course_book.heading_slug"
mathjax_path = "mathjax/tex-chtml.js"

html_theme = "sphinx_book_theme"
html_title = "Lightning self-attention"
html_static_path = ["static"]
html_css_files = ["course.css"]
html_last_updated_fmt = None
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "use_fullscreen_button": False,
}

course_repository = os.environ.get("SITE_REPOSITORY", "")
course_lite_url = os.environ.get("SITE_LITE_URL") or "lite/lab/index.html?path={path}"
