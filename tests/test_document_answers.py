"""Offline ``ask`` answers from an ingested document (issue 32): the value of a table's column a question asks
for, a question that needs two passages (a thing described in one, its owner named in another), and a "when"
answered by the time the text gives, not the day the document was ingested."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrepo.api import MemoryRepo

HANDBOOK = """# Orchard Works handbook

## Machines

| Machine | What it does | Where it stands |
| --- | --- | --- |
| kestrel | Oven that bakes the rye loaves | Hall B in Ghent |
| plover | Mixer that kneads the spelt dough | Hall A in Leuven |
| wren | Slicer for the finished loaves | Hall C in Bruges |

## People

- Oksana Petrenko runs the bakery floor and owns kestrel, the big oven.
- Bastien Moreau is the maintenance lead and owns plover and wren.

## Meetings

- The safety walk is on Thursday at 08:30, led by Bastien.
- The stock count is held on the last Friday of the month.
"""


@pytest.fixture(scope="module")
def handbook(tmp_path_factory) -> MemoryRepo:
    root = tmp_path_factory.mktemp("answers")
    doc = root / "handbook.md"
    doc.write_text(HANDBOOK, encoding="utf-8")
    repo = MemoryRepo.init(root / "memory")
    repo.ingest([doc], mention_time="2026-05-20T12:00:00+00:00")
    yield repo
    repo.close()


def _record_text(repo: MemoryRepo, record_id: str) -> str:
    return next(r.text for t in ("semantic", "episodic", "procedural") for r in repo.records(t) if r.id == record_id)


def test_a_table_question_is_answered_by_the_column_it_asks_for(handbook: MemoryRepo):
    answer = handbook.ask("Where does plover stand?")
    assert "Leuven" in answer.answer and "Hall A" in answer.answer
    assert any("plover" in _record_text(handbook, i) for i in answer.record_ids)


def test_a_two_passage_question_follows_the_thing_it_describes_and_cites_both(handbook: MemoryRepo):
    answer = handbook.ask("Who owns the machine that bakes the rye loaves?")
    assert "Oksana" in answer.answer
    texts = [_record_text(handbook, i) for i in answer.record_ids]
    assert any("rye loaves" in t for t in texts)  # the row that names the machine: kestrel
    assert any("Oksana" in t for t in texts)  # the sentence that names its owner
    assert answer.recalls <= 5


def test_when_is_answered_by_the_time_the_text_gives_not_the_ingestion_day(handbook: MemoryRepo):
    answer = handbook.ask("When is the safety walk?")
    assert "Thursday" in answer.answer and "08:30" in answer.answer
    assert "May 2026" not in answer.answer


def test_a_thing_described_by_its_owner_is_named_first_then_its_column_read(handbook: MemoryRepo):
    answer = handbook.ask("Where does the oven Oksana Petrenko owns stand?")
    assert "Ghent" in answer.answer
    texts = [_record_text(handbook, i) for i in answer.record_ids]
    assert any("Oksana" in t for t in texts) and any("kestrel" in t and "Ghent" in t for t in texts)


def test_a_question_without_a_described_thing_takes_no_second_hop(handbook: MemoryRepo):
    answer = handbook.ask("Who owns kestrel?")
    assert "Oksana" in answer.answer and answer.recalls == 1
