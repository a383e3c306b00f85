"""The role hop at an event (issue 32): "Who was primary on call when the engine monitor lost its connection?"
names no day; the passage that tells the event dates it, and the rota row whose week holds that day names the
holder. The event is recalled by its own clause: the role's words, in the whole question, draw the rota's rows."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.read import hops

PEOPLE = ("Rosa Quintero", "Emeka Obi", "Linnea Berg", "Tariq Suleiman")


def _rota(first: date, weeks: int) -> str:
    rows = []
    for i in range(weeks):
        day = first + timedelta(days=7 * i)
        rows.append(f"| {day.isoformat()} | {PEOPLE[i % 4]} | {PEOPLE[(i + 1) % 4]} |")
    return "\n".join(rows)


HANDBOOK = f"""# Saltmarsh Ferries handbook

## People

- Rosa Quintero is the fleet lead and owns the booking site, harbour-web.
- Emeka Obi is a deck engineer and owns the engine monitor, gauge.

## On-call rota

The primary on call answers every page; the secondary takes over when the primary does not answer in 10 minutes.

| Week starting | Primary | Secondary |
| --- | --- | --- |
{_rota(date(2025, 10, 6), 26)}
"""

NOTES = """# Saltmarsh Ferries meeting notes

## 2026-01-14 Weekly sync

- The card terminals at the north pier went offline for an hour on Tuesday morning.

## 2026-02-25 Incident review

- The engine monitor lost its connection to the Osprey for three hours.
- Emeka replaced the modem on the Osprey.
"""


@pytest.fixture(scope="module")
def ferries(tmp_path_factory) -> MemoryRepo:
    root = tmp_path_factory.mktemp("ferries")
    files = []
    for name, text in (("handbook.md", HANDBOOK), ("notes.md", NOTES)):
        (root / name).write_text(text, encoding="utf-8")
        files.append(root / name)
    repo = MemoryRepo.init(root / "memory")
    repo.ingest(files, mention_time="2026-03-20T12:00:00+00:00")
    yield repo
    repo.close()


def _texts(repo: MemoryRepo, ids: list[str]) -> list[str]:
    by_id = {r.id: r.text for t in ("semantic", "episodic", "procedural") for r in repo.records(t)}
    return [by_id[i] for i in ids if i in by_id]


def test_the_event_a_role_question_dates_by_is_its_own_clause():
    assert hops.event_clause("Who was primary on call when the disk filled?") == "the disk filled"
    assert hops.event_clause("Who was secondary on call in the week of the harbour power cut?") == \
        "the harbour power cut"
    assert hops.event_clause("Who was primary on call in the week the ferry ran aground?") == "the ferry ran aground"
    assert hops.event_clause("Who was primary on call during the timetable import failure?") == \
        "the timetable import failure"
    assert hops.event_clause("Who was primary on call in the week starting 2026-02-09?") == ""  # a day, no event
    assert hops.event_clause("Who owns the booking site?") == ""  # no role asked at a time


def test_the_role_at_an_event_is_read_from_the_week_that_holds_the_events_day(ferries: MemoryRepo):
    # 2026-02-25 is in the week starting 2026-02-23, the twenty-first row: Rosa primary, Emeka secondary
    answer = ferries.ask("Who was secondary on call when the engine monitor lost its connection to the Osprey?")
    assert "Emeka Obi" in answer.answer
    texts = _texts(ferries, answer.record_ids)
    assert any("lost its connection" in t for t in texts) and any("2026-02-23" in t for t in texts)
    assert answer.recalls <= 5


def test_in_the_week_of_an_event_is_answered_like_when(ferries: MemoryRepo):
    # 2026-01-14 is in the week starting 2026-01-12: Linnea primary, Tariq secondary
    answer = ferries.ask("Who was primary on call in the week the card terminals went offline?")
    assert "Linnea Berg" in answer.answer
    assert any("2026-01-12" in t for t in _texts(ferries, answer.record_ids))


def test_a_record_that_names_a_role_and_its_holder_answers_who_holds_it():
    text = "Mei Tanaka is the head baker and is the deputy shift lead when Oskar is away."
    assert hops.role_in(text, "deputy") == "deputy shift lead"  # the whole role, not its first noun
    assert hops.holder_in(text, "deputy shift lead") == "Mei Tanaka"  # the second of two predicates
    assert hops.holder_in("Call the deputy shift lead when Oskar is away.", "deputy shift lead") == ""
    assert hops.Role("deputy shift lead").question() == "Who is the deputy shift lead?"
    assert hops.Role("support lead").question() == "Who leads support?"


def test_who_holds_a_role_is_the_subject_of_the_sentence_that_names_it(tmp_path: Path):
    doc = tmp_path / "bakery.md"
    doc.write_text("# Crumb & Co\n\n## Roles\n\n- Oskar Lindahl is the shift lead and orders the flour.\n"
                   "- Mei Tanaka is the head baker and is the deputy shift lead when Oskar is away.\n", encoding="utf-8")
    repo = MemoryRepo.init(tmp_path / "memory")
    repo.ingest([doc], mention_time="2026-03-20T12:00:00+00:00")
    try:
        answer = repo.ask("Who is the deputy shift lead at the Harbour Road bakery?")
        assert "Mei Tanaka" in answer.answer and "Oskar" not in answer.answer
    finally:
        repo.close()


DYES = """# Loom and Dye works manual

## Dyes

| Dye | Pot | Rinse within |
| --- | --- | --- |
| Madder | Copper pot, red lid | 2 hours |
| Woad | Steel pot, blue lid | 1 hour |

## Procedures

### Rope dyeing

1. Soak the rope overnight in cold water.
2. Pour in two cups of warm Woad liquor and stir for five minutes.
3. Hang the rope in the yard to dry.
"""


def test_a_whose_clause_is_named_by_the_possessor_a_step_of_its_section_names(tmp_path: Path):
    thing = hops.described("What colour is the lid of the pot whose liquor is used for rope dyeing?")
    assert thing is not None and thing.naming == "Which pot's liquor is used for rope dyeing?"
    assert hops.possessor(thing.clause, "Pour in two cups of warm Woad liquor and stir.") == "Woad"
    assert hops.section_of(["src-1#dyes/Procedures/Rope-dyeing:2"]) == "Procedures Rope dyeing"
    doc = tmp_path / "dyes.md"
    doc.write_text(DYES, encoding="utf-8")
    repo = MemoryRepo.init(tmp_path / "memory")
    repo.ingest([doc], mention_time="2026-03-20T12:00:00+00:00")
    try:
        # the step says the liquor is used for rope dyeing by its section's heading, not by its own words
        answer = repo.ask("What colour is the lid of the pot whose liquor is used for rope dyeing?")
        assert "blue" in answer.answer and answer.recalls <= 5
    finally:
        repo.close()
