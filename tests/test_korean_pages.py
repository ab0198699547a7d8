"""The Korean pages in notebooks/ko agree with their notebooks, the glossary and the English cheat
sheet: each page links to its notebook, states the times of its title, follows its numbered core
sections and asks as many check questions as its core; the pages gloss only glossary terms, print
the four labels and avoid the rejected renderings; the Korean cheat sheet writes the English one's
formulas and paper map, both state the softmax fibers notebook 07 prints, and the reading plan has
the meetings of the instructors' guide."""

import json
import re
from pathlib import Path

import pytest
from test_korean import CALQUES, LABELS, TERMS, prose, rejected_in, terms, title_minutes, words

ROOT = Path(__file__).resolve().parents[1]
KO = ROOT / "notebooks" / "ko"
PAGES = sorted(KO.glob("0*.md"))
CHEATSHEET, READING, INDEX = KO / "CHEATSHEET.ko.md", KO / "READING_GROUP.ko.md", KO / "README.md"
KOREAN = [*PAGES, CHEATSHEET, READING, INDEX]


def read(path):
    return path.read_text(encoding="utf-8")


def notebook(page):
    return ROOT / "notebooks" / f"{page.stem}.ipynb"


def core(page):
    """The markdown cells of a notebook's core: those before its ``## Summary`` (or first Bonus)."""
    cells = []
    for cell in json.loads(read(notebook(page)))["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and re.match(r"## (Summary|Bonus)", text):
            break
        if cell["cell_type"] == "markdown":
            cells.append(text)
    return cells


def section(text, heading):
    """The body of the ``## heading`` section of a page, up to the next ``## ``."""
    return text.split(f"\n## {heading}\n")[1].split("\n## ")[0]


def numbered(text):
    """The top-level numbered items of ``text``, answers under ``<details>`` left out."""
    answers = re.compile(r"<details>.*?</details>", re.DOTALL)
    return re.findall(r"^\d+\. ", answers.sub("", text), re.MULTILINE)


def check_questions(cells):
    """Questions under each ``### Check your understanding``: its numbered items, or one."""
    blocks = [block.split("<details>")[0] for cell in cells
              for block in cell.split("### Check your understanding")[1:]]
    return sum(max(1, len(numbered(block))) for block in blocks)


def glossed(text):
    """``**한글**(English)`` and ``한글(English)`` in prose, quotations of the summary left out."""
    own = "\n".join(line for line in text.splitlines() if not line.startswith(">"))
    english = r"\(([A-Za-z][A-Za-z' \n-]*)\)"  # a gloss may break across lines
    gloss = rf"\*\*([^*\n]*[가-힣][^*\n]*)\*\*{english}|([가-힣]+){english}"
    found = re.findall(gloss, prose(own))
    return [(bold, bold_english) if bold else (word, word_english)
            for bold, bold_english, word, word_english in found]


def formulas(text):
    """Every ``$…$`` and ``$$…$$`` of ``text``, white space collapsed."""
    return {" ".join((m.group(1) or m.group(2)).split())
            for m in re.finditer(r"\$\$(.+?)\$\$|\$(.+?)\$", text, flags=re.DOTALL)}


def symbols(text):
    """The formulas of ``text`` with the words inside ``\\text{…}`` left out: a translated sheet may
    write ``\\dim(\\text{대칭성 궤도})`` for ``\\dim(\\text{symmetry orbit})``."""
    return {re.sub(r"\\text\{[^}]*\}", r"\\text{}", formula) for formula in formulas(text)}


def paper_numbers(text):
    return set(re.findall(r"(?:Theorem|Corollary|Conjecture|Equation|Figure) \d+(?:\.\d+)?", text))


def test_there_is_a_page_for_notebooks_and_the_index_lists_them_all():
    lessons = sorted(path.stem for path in (ROOT / "notebooks").glob("0*.ipynb"))
    assert [page.stem for page in PAGES] == lessons, [page.name for page in PAGES]
    for page in PAGES:
        assert notebook(page).exists(), f"{page.name} names no notebook"
    linked = set(re.findall(r"\]\((0\d_\w+\.md)\)", read(INDEX)))
    assert linked == {page.name for page in PAGES}, sorted(linked)
    assert "(CHEATSHEET.ko.md)" in read(INDEX) and "(READING_GROUP.ko.md)" in read(INDEX)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem[:2])
def test_a_page_links_its_notebook_and_states_the_times_of_its_title(page):
    text = read(page)
    assert f"](../{page.stem}.ipynb)" in text, f"{page.name} does not link its notebook"
    title = "".join(json.loads(notebook(page).read_text(encoding="utf-8"))["cells"][0]["source"])
    assert f"](ko/{page.name})" in title, f"{page.stem}'s title cell does not link {page.name}"
    said = [int(re.search(rf"{part} 약 (\d+)분", text).group(1)) for part in ("본편", "Bonus")]
    assert tuple(said) == title_minutes()[page.stem], f"{page.name} says {said}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem[:2])
def test_a_page_follows_the_core_and_asks_its_check_questions(page):
    text, cells = read(page), core(page)
    for heading in ("본편 요약", "비유가 맞지 않는 곳", "이해 확인", "모임에서 토론할 질문"):
        assert f"\n## {heading}\n" in text, f"{page.name} has no section {heading}"
    sections = [n for cell in cells for n in re.findall(r"^## (\d+)\. ", cell, re.MULTILINE)]
    assert re.findall(r"^### (\d+)\. ", section(text, "본편 요약"), re.MULTILINE) == sections
    asked = len(numbered(section(text, "이해 확인")))
    expected = check_questions(cells)
    assert asked == expected, f"{page.name}: {asked} check questions, its core {expected}"
    assert section(text, "이해 확인").count("<details>") == asked
    assert 2 <= len(re.findall(r"^- ", section(text, "모임에서 토론할 질문"), re.MULTILINE)) <= 3


@pytest.mark.parametrize("path", KOREAN, ids=lambda path: path.name)
def test_the_korean_pages_gloss_only_glossary_terms(path):
    unknown = [f"{korean}({english})" for korean, english in glossed(read(path))
               if not any(korean in terms(row["한국어"]) | terms(row["다른 표기"])
                          and words(english) <= words(row["English"]) for row in TERMS)]
    assert not unknown, f"{path.name} glosses terms that GLOSSARY.md does not give: {unknown}"


@pytest.mark.parametrize("path", KOREAN, ids=lambda path: path.name)
def test_the_korean_pages_print_the_four_labels_and_no_rejected_rendering(path):
    text = read(path)
    labels = set(re.findall(r"\[([^\]\n]*)\](?!\()", prose(text)))
    assert labels <= LABELS, f"{path.name} labels {labels - LABELS}"
    assert labels or path == INDEX, f"{path.name} labels nothing"
    assert not rejected_in(text), rejected_in(text)
    assert not [word for word in CALQUES if word in text]


def test_the_korean_cheat_sheet_writes_the_english_ones_mathematics():
    english, korean = (read(ROOT / "notebooks" / "CHEATSHEET.md"), read(CHEATSHEET))
    foreign = symbols(korean) - symbols(english)
    assert not foreign, f"formulas not in CHEATSHEET.md: {sorted(foreign)}"
    missing = symbols(english) - symbols(korean)
    assert len(missing) <= len(symbols(english)) // 10, f"left out: {sorted(missing)}"
    assert paper_numbers(korean) == paper_numbers(english)
    assert len(korean) <= 1.1 * len(english), "longer than the English sheet's one page"


def printed(path):
    """The text a notebook's code cells print."""
    return "".join("".join(output.get("text", "")) for cell in json.loads(read(path))["cells"]
                   for output in cell.get("outputs", []))


def test_the_softmax_fibers_the_sheets_state_are_those_notebook_07_prints():
    out = printed(ROOT / "notebooks" / "07_softmax_conjecture.ipynb")
    orbit, fiber = re.search(r"GL orbit: (\d+);  together: (\d+)", out).groups()
    parameters, gl, rank = re.search(r"parameters - GL orbit = (\d+) - (\d+) = (\d+)", out).groups()
    english, korean = read(ROOT / "notebooks" / "CHEATSHEET.md"), read(CHEATSHEET)
    assert f"fiber {fiber} > orbit {orbit}" in english
    assert f"파이버 {fiber} > 궤도 {orbit}" in korean
    assert f"{fiber} > {orbit}" in read(ROOT / "README.ko.md")
    for sheet in (english, korean):   # after the collapse (3,3,3), a = (1,3): fiber = orbit
        assert f"${parameters} - {rank} = {gl}$" in sheet


def test_the_reading_plan_has_the_meetings_of_the_instructors_guide():
    guide = read(ROOT / "notebooks" / "INSTRUCTORS.md").split("### 4.3")[1].split("\n## ")[0]
    meetings = re.findall(r"\*\*Meeting (\d+):", guide)
    plan = read(READING)
    assert re.findall(r"^## 모임 (\d+)\.", plan, re.MULTILINE) == meetings
    numbers = {path.name[:2] for path in (ROOT / "notebooks").glob("0*.ipynb")}
    assert set(re.findall(r"\b(0\d)\b", plan)) <= numbers
    for page in PAGES:
        assert f"]({page.name})" in plan, f"the reading plan does not point to {page.name}"
