"""The seminar kit agrees with the course: the Korean guide maps every notebook, the glossary's
notebooks exist, and the notebooks' Korean terms are the glossary's."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("0*.ipynb"))
HANGUL = re.compile("[가-힣]")
KOREAN_TERM = re.compile(r"\(((?:\([가-힣 ]+\) )?[가-힣][가-힣 ]*(?:\(generic\))?)\)")
"""A Korean term in parentheses, e.g. (파이버) or ((일반) 파이버)."""


def table_rows(text):
    """The cells of every row of the Markdown tables in ``text``, headers left out."""
    lines = [line.strip() for line in text.splitlines()]
    rule = re.compile(r"\|[-| ]+\|")
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line, after in zip(lines, [*lines[1:], ""])
            if line.startswith("|") and not rule.fullmatch(line) and not rule.fullmatch(after)]


def normal(term):
    """A Korean term without its parentheses and its ``(generic)``: ``(유클리드 위상에서) 닫힌``."""
    return " ".join(re.sub(r"\(generic\)|[()]", " ", term).split())


def glossary():
    return table_rows((ROOT / "GLOSSARY.md").read_text(encoding="utf-8"))


def korean_terms():
    terms = set()
    for row in glossary():
        terms.update(normal(part) for part in re.split(r"[/,]", row[1]))
    return terms


def test_every_notebook_is_in_the_korean_guides_map():
    guide = (ROOT / "README.ko.md").read_text(encoding="utf-8")
    mapped = {row[0].strip("`") for row in table_rows(guide)}
    missing = [path.stem for path in LESSONS if path.stem not in mapped]
    assert not missing, f"README.ko.md's notebook map misses {missing}"
    assert "README.ko.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_glossary_is_bilingual_and_its_notebooks_exist():
    rows = [row for row in glossary() if HANGUL.search(row[1])]
    terms = [row for row in rows if len(row) == 5]
    assert len(terms) >= 40, f"{len(terms)} bilingual terms, at least 40 expected"
    numbers = {path.name[:2] for path in LESSONS}
    for row in rows:
        cited = set(re.findall(r"\b0\d\b", " ".join(row[-2:] if len(row) == 5 else row[-1:])))
        assert cited and cited <= numbers, f"{row[0]}: notebooks {sorted(cited)} do not all exist"


def test_the_notebooks_korean_terms_come_from_the_glossary():
    terms, unknown = korean_terms(), set()
    for path in LESSONS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for term in KOREAN_TERM.findall(text):
                if normal(term) not in terms:
                    unknown.add((path.name[:2], term))
    assert not unknown, f"Korean terms not in GLOSSARY.md: {sorted(unknown)}"


def test_the_cheat_sheet_and_guides_point_to_existing_notebooks():
    numbers = {path.name[:2] for path in LESSONS}
    for name in ("notebooks/CHEATSHEET.md", "notebooks/INSTRUCTORS.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "Paper map" in text or "paper map" in text, f"{name} has no paper map"
        for row in table_rows(text):
            cited = re.findall(r"\b0[0-9]\b", row[-1])
            assert set(cited) <= numbers, f"{name}: row {row[0]!r} cites {cited}"


def stated_core_minutes():
    """Each lesson's core time as its title cell states it ("core about N minutes")."""
    minutes = {}
    for path in LESSONS:
        title = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        minutes[path.stem] = int(re.search(r"core about (\d+) minutes", title).group(1))
    return minutes


def test_every_map_of_the_course_gives_the_times_the_notebooks_state():
    minutes = stated_core_minutes()
    course_map = json.loads(
        (ROOT / "notebooks" / "00_course_map.ipynb").read_text(encoding="utf-8"))
    tables = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8"),
              "README.ko.md": (ROOT / "README.ko.md").read_text(encoding="utf-8"),
              "00_course_map (Bonus 3)": "".join("".join(c["source"]) for c in course_map["cells"]
                                                 if c["cell_type"] == "markdown")}
    for where, text in tables.items():
        shown = {row[0].strip("`"): row for row in table_rows(text) if row[0].strip("`") in minutes}
        assert set(shown) == set(minutes), f"{where} lists {sorted(shown)}"
        for stem, row in shown.items():
            said = [int(n) for n in re.findall(r"(\d+) ?(?:min|분)", " ".join(row[2:]))]
            assert said and said[0] == minutes[stem], (
                f"{where}: {stem} takes {said[:1]} minutes there, {minutes[stem]} in its title")
