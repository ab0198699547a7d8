"""The six-session plan of ``notebooks/INSTRUCTORS.md`` (section 4.2) against the decks.

A citation "`NN` A–B (M min)" names slides A to B of deck NN, whose speaker notes add up to M
minutes; "`NN` K 'Heading'" names slide K by its heading. Each session's minutes (its opening, its
slides and what is left) add up to 90.
"""

import re
from pathlib import Path

import pytest
from test_decks import MINUTES, SLIDES, kind, load, slides, source

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "notebooks" / "INSTRUCTORS.md").read_text(encoding="utf-8")
PLAN = GUIDE.split("### 4.2 ")[1].split("\n### ")[0]
SESSIONS = re.split(r"\n(?=\*\*Session \d+:)", PLAN)[1:]
RANGE = re.compile(r"`(0\d)` (\d+)–(\d+) \((\d+) min\)")
SLIDE = re.compile(r"`(0\d)` (\d+)\s+'([^']+)'")


def deck(number):
    """The slides of deck ``number``: (heading, minutes of its notes) for each."""
    found = []
    for group in slides(load(next(SLIDES.glob(f"{number}_*.ipynb")))):
        heading = next((line for line in source(group[0]).splitlines() if line.startswith("#")), "")
        notes = next(source(cell) for cell in group if kind(cell) == "notes")
        found.append((heading.lstrip("#").replace("**", "").strip(),
                      float(MINUTES.match(notes).group(1))))
    return found


def test_the_plan_has_six_sessions_and_plays_every_slide_of_every_deck_once():
    assert len(SESSIONS) == 6
    played = sorted((number, slide) for number, first, last, _ in RANGE.findall(PLAN)
                    for slide in range(int(first), int(last) + 1))
    every = sorted((path.name[:2], slide)
                   for path in SLIDES.glob("0*.ipynb")
                   for slide in range(1, len(deck(path.name[:2])) + 1))
    assert played == every


@pytest.mark.parametrize("number, first, last, minutes", RANGE.findall(PLAN))
def test_cited_minutes_are_those_of_the_speaker_notes(number, first, last, minutes):
    notes = [m for _, m in deck(number)[int(first) - 1:int(last)]]
    assert sum(notes) == int(minutes)


@pytest.mark.parametrize("number, slide, heading", SLIDE.findall(PLAN))
def test_cited_slides_have_the_cited_heading(number, slide, heading):
    assert deck(number)[int(slide) - 1][0] == " ".join(heading.split())


@pytest.mark.parametrize("session", SESSIONS, ids=[f"session {i}" for i in range(1, 7)])
def test_each_session_adds_up_to_90_minutes(session):
    slides = session.split("*Slides:*")[1].split("\n- ")[0]
    opening = sum(int(m) for m in re.findall(r"open with (\d+) minutes", slides))
    played = sum(int(m) for *_, m in RANGE.findall(slides))
    left = int(re.search(r"(\d+) min\s+(?:left|for the discussion)", slides).group(1))
    assert opening + played + left == 90
