"""The course's static book (``make site``): ``build/site/`` from ``site/``, Sphinx and MyST-NB.

MathJax comes from npm: ``npm ci`` of ``site/package-lock.json`` (again when the lock changes).
Sphinx renders every page afresh and fails on any warning, a broken link among them. The decks
that ``make slides`` built (``build/slides/``) are copied into the book's ``slides/``; a deck of
``notebooks/slides/`` that was not built fails the build. Run from anywhere:
``python tools/build_site.py [--out DIR] [--slides DIR] [--repository URL] [--lite-url URL]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
DECKS = ROOT / "notebooks" / "slides"


def node_modules() -> None:
    """``site/node_modules``, installed by ``npm ci`` from the lock (again when it changes)."""
    lock = (SITE / "package-lock.json").read_text(encoding="utf-8")
    installed = SITE / "node_modules" / ".package-lock.json"
    stamp = SITE / "node_modules" / "installed-lock.json"
    if not (installed.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == lock):
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=SITE,
                       check=True, stdout=subprocess.DEVNULL)
        stamp.write_text(lock, encoding="utf-8")


def missing_decks(slides: Path) -> list[str]:
    """The decks of ``notebooks/slides/`` that have no page in ``slides``."""
    return [deck.stem for deck in sorted(DECKS.glob("*.ipynb"))
            if not (slides / f"{deck.stem}.slides.html").is_file()]


def build(out: Path, slides: Path, repository: str = "", lite_url: str = "") -> None:
    """Build the book into ``out`` (its doctrees beside it, in ``out``-doctrees)."""
    missing = missing_decks(slides)
    if missing:
        sys.exit(f"build_site: decks not built in {slides}: {', '.join(missing)} (run make slides)")
    node_modules()
    env = {**os.environ, "SITE_REPOSITORY": repository, "SITE_LITE_URL": lite_url}
    doctrees = out.with_name(out.name + "-doctrees")
    subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q",
                    "-b", "html", "-d", str(doctrees), str(SITE), str(out)], env=env, check=True)
    if any(DECKS.glob("*.ipynb")):
        shutil.copytree(slides, out / "slides", dirs_exist_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site",
                        help="the book's folder (default: build/site)")
    parser.add_argument("--slides", type=Path, default=ROOT / "build" / "slides",
                        help="the decks built by make slides (default: build/slides)")
    parser.add_argument("--repository", default="",
                        help="the repository's address, linked from every page (default: none)")
    parser.add_argument("--lite-url", default="",
                        help="a notebook's JupyterLite address relative to the book, with {path} "
                             "(default: lite/lab/index.html?path={path})")
    args = parser.parse_args(argv)
    try:
        build(args.out, args.slides, args.repository, args.lite_url)
    except subprocess.CalledProcessError as error:
        command = " ".join(str(part) for part in error.cmd[:3])
        sys.exit(f"build_site: {command} … failed with exit code {error.returncode} (see above)")


if __name__ == "__main__":
    main()
