"""The Korean pages agree with the glossary and with the notebooks: README.ko's glossed terms are
glossary terms, its commands and times are the English README's and the notebooks' titles, and the
renderings the glossary rejects occur nowhere in the course's Korean."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "README.ko.md").read_text(encoding="utf-8")
GLOSSARY = (ROOT / "GLOSSARY.md").read_text(encoding="utf-8")
LESSONS = sorted((ROOT / "notebooks").glob("0*.ipynb"))
HANGUL = re.compile("[가-힣]")
LABELS = {"paper", "derived", "reported", "open"}
REJECTED = ("일반적으로", "모듈러 p", "결정 다양체", "(일반적)", "일반적(generic)")
CALQUES = ("두 개의 명령", "출처 표시", "대화형", "따라가며", "이루어져 있습니다", "한계")
# Glossary terms whose other renderings the course never writes: deep network is 심층 네트워크, not
# 깊은 네트워크; lower semicontinuity is 하반연속성, never bare 반연속성; a fiber direction is
# 파이버의 접방향, not 파이버 방향; and the words with a 사이시옷 take the standard
# spelling (특잇값, not 특이값).
ONE_RENDERING = ("deep network", "lower semicontinuity", "fiber direction", "singular value",
                 "eigenvalue", "minimum value", "initial value (of training)")
# The glossary's vocabulary decisions: the course's rendering of each term, and (in the table of
# renderings to avoid) the rendering it replaces.
DECISIONS = {"lower / upper bound": ("하한 / 상한", "두 경계"),
             "hidden width": ("은닉 폭", "숨은 폭"),
             "version (of the paper)": ("버전", "판본"),
             "strict saddle": ("엄격한 안장점", "엄밀한 안장점"),
             "singular locus": ("특이점 집합", "특이 자취"),
             "symmetry": ("대칭성", None),
             "singular value": ("특잇값", None),
             "eigenvalue": ("고윳값", None),
             "core (of a notebook)": ("본편", None),
             "minimum point": ("최소점", None),
             "minimum value": ("최솟값", None),
             "network": ("네트워크", None)}
# 대칭 without 성 is the adjective "symmetric" (대칭 행렬, 대칭 부분, …에 대해 대칭이며) or
# 반대칭; the noun symmetry is 대칭성. A paper's version is 버전 and a figure's panel 패널,
# never 판.
BARE_SYMMETRY = re.compile(r"(?<!반)대칭(?!성| 행렬| 부분|이며|이기|\))")
EDITION = re.compile(r"판마다|세 판|나오는 판|판에 따라")
# The core of a notebook is 본편 (핵심 keeps its everyday sense, "key"); the summary's 신경망 and
# 평탄한 최솟값 (a minimum is a point, 최소점) occur only in quotations of it.
CORE_AS_KEY = re.compile(r"핵심 (요약|약|시간)|핵심\(core\)|노트북의 핵심")
QUOTED_ONLY = ("신경망", "평탄한 최솟값")
KOREAN_FILES = [ROOT / "README.ko.md", *sorted((ROOT / "notebooks" / "ko").glob("*.md"))]


def tables(text):
    """Each Markdown table of ``text`` as (section heading, header cells, rows of cells)."""
    found, section, lines = [], "", text.splitlines()
    rule = re.compile(r"\|[-| ]+\|")
    for n, line in enumerate(lines):
        if line.startswith("#"):
            section = line.lstrip("# ")
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and n + 1 < len(lines) and rule.fullmatch(lines[n + 1]):
            found.append((section, cells, []))
        elif line.startswith("|") and found and not rule.fullmatch(line):
            found[-1][2].append(dict(zip(found[-1][1], cells)))
    return found


def terms(cell):
    """The terms of a cell: ``계수(階數), 랭크 / 키`` gives 계수, 랭크, 키 (no parentheses, no
    dashes)."""
    parts = (re.sub(r"\([^)]*\)", "", part).strip() for part in re.split(r"[/,]", cell))
    return {part for part in parts if part and part != "—"}


def words(english):
    """Lower-case English words without a plural s: ``Lower / upper bounds`` gives lower, upper,
    bound."""
    return {w[:-1] if w.endswith("s") else w for w in re.findall(r"[a-z]+", english.lower())}


GLOSSARY_TABLES = tables(GLOSSARY)
TERMS = GLOSSARY_TABLES[0][2]
AVOID = next(rows for section, _, rows in GLOSSARY_TABLES if "피할 번역" in section)
AVOIDED = tuple(term for row in AVOID for term in terms(row["피할 번역"]))


def prose(text):
    """``text`` without code and mathematics: fenced and indented blocks, `code`, $…$ and $$…$$."""
    text = re.sub(r"```.*?```|\$\$.*?\$\$", " ", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    "))
    return re.sub(r"`[^`]*`|\$[^$]*\$", " ", text)


def doubled_parentheses(text):
    """Korean glosses in doubled parentheses, in prose: ``(일반적(generic))``,
    ``((유클리드 위상에서) 닫힌)``."""
    text = prose(text)
    nested = re.findall(r"\(\**[가-힣(][^()]*\([^()]*\)[^()]*\)", text)
    return nested + [line for line in text.splitlines()
                     if HANGUL.search(line) and re.search(r"\(\(|\)\)", line)]


def rejected_in(text):
    words_found = [word for word in REJECTED + AVOIDED if word in prose(text)]
    return words_found + doubled_parentheses(text)


def title_minutes():
    """Each lesson's core and Bonus minutes as its title cell states them."""
    minutes = {}
    for path in LESSONS:
        title = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        core = int(re.search(r"core about (\d+) minutes", title).group(1))
        bonus = int(re.search(r"Bonus[^.]*?about (\d+) minutes", title, re.S).group(1))
        minutes[path.stem] = core, bonus
    return minutes


def test_the_glossary_has_its_columns_and_every_course_term_one_rendering():
    _, header, rows = GLOSSARY_TABLES[0]
    assert header == ["English", "한국어", "다른 표기", "definition", "notebooks"], header
    assert len(rows) >= 90, f"{len(rows)} terms"
    alternatives = {term for row in rows for term in terms(row["다른 표기"])}
    named = alternatives | {term for row in rows for term in terms(row["한국어"])}
    for word in ("올", "역상", "계수", "야코비 행렬", "헤세 행렬", "매개변수", "레이어", "값",
                 "순열", "잔차 연결", "식별성", "비특이점"):
        assert any(word in term for term in named), f"{word}: no rendering, no alternative"
    english = {w for row in rows for w in words(row["English"])}
    for word in ("head", "width", "kernel", "minor", "preimage", "torus", "parametrization",
                 "hypersurface", "injective", "critical", "semicontinuity", "codimension",
                 "temperature", "teacher", "student", "sample", "expressivity", "branch", "cone"):
        assert words(word) <= english, f"no glossary term for {word!r}"


def test_the_glossary_rejects_the_summarys_mistranslations_and_says_what_to_write():
    rejected = set(AVOIDED)
    assert {"결정 다양체", "유클리드 폐쇄", "핵-테이크", "모듈러 p 정확 랭크", "일반적으로",
            "요약본의 그림", "그림이 맞지 않는 곳", "경계가 만나", "숨은 층"} <= rejected
    for row in AVOID:
        assert row["write instead"] and not rejected & terms(row["write instead"]), row


def test_every_glossed_term_of_the_korean_guide_is_a_glossary_term():
    """``**한글**(English)`` and ``한글(English)``: the Korean is a rendering or an alternative of a
    glossary row whose English has the gloss's words."""
    english = r"\(([A-Za-z][A-Za-z' -]*)\)"
    bold = r"\*\*([^*\n]*[가-힣][^*\n]*)\*\*"
    glossed = re.findall(rf"{bold}{english}|([가-힣]+){english}", prose(GUIDE))
    assert len(glossed) >= 10
    unknown = []
    for bold, bold_english, word, word_english in glossed:
        korean, english = (bold, bold_english) if bold else (word, word_english)
        if not any(korean in terms(row["한국어"]) | terms(row["다른 표기"])
                   and words(english) <= words(row["English"]) for row in TERMS):
            unknown.append(f"{korean}({english})")
    assert not unknown, f"README.ko.md glosses terms that GLOSSARY.md does not give: {unknown}"


def test_the_korean_guide_has_the_commands_of_the_english_readme():
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^\| `(make \w+)`", english, flags=re.M)
    assert len(commands) == 7, commands
    listed = re.findall(r"^\| `(make \w+)`", GUIDE, flags=re.M)
    assert listed == commands, f"README.ko.md lists {listed}, README.md {commands}"
    for line in ("python -m lsa_helpers dimension --widths",
                 "python -m lsa_helpers reproduce softmax-conjecture",
                 "python -m pip install -r requirements.txt", "jupyter lab", "!git clone",
                 "mybinder.org", "@inproceedings{henry2025geometry"):
        assert line in GUIDE, f"README.ko.md lacks {line!r}"


def test_the_korean_guide_links_the_korean_pages_above_its_first_section():
    top = GUIDE.split("\n## ")[0]
    for name in ("README.md", "CHEATSHEET.ko.md", "READING_GROUP.ko.md"):
        target = f"notebooks/ko/{name}"
        assert f"]({target})" in top and (ROOT / target).exists(), f"no link to {target} at the top"


def test_the_korean_guide_gives_the_times_the_titles_state():
    minutes = title_minutes()
    rows = {row["노트북"].strip("`"): row for _, header, rows in tables(GUIDE) if "본편" in header
            for row in rows}
    assert set(rows) == set(minutes), sorted(rows)
    for stem, (core, bonus) in minutes.items():
        cells = rows[stem]["본편"] + " " + rows[stem]["Bonus"]
        said = [int(n) for n in re.findall(r"(\d+)분", cells)]
        assert said[:2] == [core, bonus], f"{stem}: README.ko.md {said}, its title {core}, {bonus}"
    cores, bonuses = zip(*minutes.values())
    total = re.search(r"본편 시간을 모두 더하면 (\d+)분\((\d+)시간 (\d+)분\)이고, "
                      r"Bonus는 모두 (\d+)분", GUIDE)
    assert total, "README.ko.md states no totals"
    assert [int(n) for n in total.groups()] == [sum(cores), *divmod(sum(cores), 60), sum(bonuses)]
    span = re.search(r"본편\(core\)은 (\d+)–(\d+)분", GUIDE)
    assert span and (int(span[1]), int(span[2])) == (min(cores), max(cores))


def test_every_correction_of_the_summary_is_labelled_and_counted():
    section = GUIDE.split("## 요약본이 부정확한 곳")[1].split("\n## ")[0]
    items = re.split(r"\n\d+\. ", section)[1:]
    assert int(re.search(r"아래 (\d+)곳", section).group(1)) == len(items) >= 14
    for item in items:
        assert re.search(r"\*\*\[(paper|derived|reported|open)\]\*\*", item), item[:60]
        assert re.search(r"\(0\d(, 0\d)*\)", item), f"no notebook for {item[:60]}"


def test_the_korean_guide_prints_the_labels_as_the_notebooks_do():
    labels = set(re.findall(r"\*\*\[([^\]]+)\]\*\*", GUIDE))
    assert labels == LABELS, labels


def test_the_korean_guide_and_glossary_avoid_the_rejected_renderings():
    assert not rejected_in(GUIDE), rejected_in(GUIDE)
    assert not [word for word in CALQUES if word in GUIDE]
    outside = (GLOSSARY.split("## Renderings to avoid")[0]
               + GLOSSARY.split("## The summary's analogies")[1])
    assert not rejected_in(outside), rejected_in(outside)


def other_renderings(text):
    """The other renderings of the ``ONE_RENDERING`` terms that ``text`` writes outside the
    glossary's rendering itself (반연속성 only inside 하반연속성)."""
    rows = {row["English"]: row for row in TERMS}
    found = []
    for english in ONE_RENDERING:
        renderings, others = terms(rows[english]["한국어"]), terms(rows[english]["다른 표기"])
        assert others, f"the glossary gives no other rendering of {english}"
        rest = prose(text)
        for rendering in renderings:
            rest = rest.replace(rendering, " ")
        found += [other for other in others if other in rest]
    return found


def test_the_korean_files_write_the_glossarys_rendering_and_not_the_other_usage():
    found = [(path.name, other) for path in KOREAN_FILES
             for other in other_renderings(path.read_text(encoding="utf-8"))]
    assert not found, f"(file, rendering the glossary does not use): {found}"


def test_the_notebooks_korean_avoids_the_rejected_renderings_and_the_other_usage():
    found = []
    for path in sorted((ROOT / "notebooks").glob("**/0*.ipynb")):
        for n, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            text = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and HANGUL.search(text):
                found += [(path.stem[:2], n, word)
                          for word in rejected_in(text) + other_renderings(text)]
    assert not found, f"(notebook, cell, rendering): {found}"


def test_the_glossary_records_the_vocabulary_decisions():
    """Each decided term has its rendering in the glossary, and the rendering it replaces is one to
    avoid; the header states the spelling convention that the renderings of ``ONE_RENDERING``
    follow."""
    rows = {row["English"]: row for row in TERMS}
    rejected = set(AVOIDED)
    for english, (rendering, replaced) in DECISIONS.items():
        assert rows[english]["한국어"] == rendering, (english, rows[english]["한국어"])
        assert replaced is None or replaced in rejected, f"{replaced} is not a rendering to avoid"
    assert "고윳값, 특잇값, 최솟값, 초깃값" in GLOSSARY.split("| English |")[0]


def test_the_korean_files_write_symmetry_and_version_as_the_glossary_decides():
    found = []
    for path in KOREAN_FILES:
        text = prose(path.read_text(encoding="utf-8"))
        found += [(path.name, m.group(0)) for pattern in (BARE_SYMMETRY, EDITION)
                  for m in re.finditer(pattern.pattern + r"\S*", text)]
    assert not found, f"(file, word): {found}"


def unquoted(text):
    """``text`` without quotations: blockquote lines and ``"…"`` spans."""
    own = "\n".join(line for line in text.splitlines() if not line.startswith(">"))
    return re.sub(r'"[^"]*"', " ", own)


def test_the_korean_files_call_the_core_bonpyeon_and_quote_the_summarys_words_only():
    found = []
    for path in KOREAN_FILES:
        text = path.read_text(encoding="utf-8")
        found += [(path.name, m.group(0)) for m in CORE_AS_KEY.finditer(text)]
        found += [(path.name, word) for word in QUOTED_ONLY if word in unquoted(text)]
    assert not found, f"(file, word): {found}"
