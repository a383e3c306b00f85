"""Offline ``ask`` answers from an ingested document (issue 32): the value of a table's column a question asks
for, a question that needs two passages (a thing described in one, its owner named in another), and a "when"
answered by the time the text gives, not the day the document was ingested; and a rule that names a role ("tell
the Plot Secretary") resolved into who holds it (a sentence, a role line of a "Label: value" paragraph, or the row of
a week rota whose interval holds the day asked), the answer citing both records."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.nlp.morphology import lemma
from memrepo.read import hops

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


def _ingested(root: Path, text: str, mention_time: str) -> MemoryRepo:
    """A fresh repository at ``root`` holding one Markdown document ``text``, ingested offline."""
    doc = root / "document.md"
    doc.write_text(text, encoding="utf-8")
    repo = MemoryRepo.init(root / "memory")
    repo.ingest([doc], mention_time=mention_time)
    return repo


@pytest.fixture(scope="module")
def handbook(tmp_path_factory) -> MemoryRepo:
    repo = _ingested(tmp_path_factory.mktemp("answers"), HANDBOOK, "2026-05-20T12:00:00+00:00")
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


# --- the role hop ---------------------------------------------------------------------------------

RULES = """# Greenway Allotments

## Committee

- Hamid Okafor is Plot Secretary; he keeps the waiting list and the plot map.
- Ines Duarte is the tools coordinator and owns the pump shed and the tool store.

Treasurer: Walter Brandt
Chair: Lea Berg
Meeting room: the back hall of the chapel

## Rules

1. If a plot is left unworked for two months, tell the Plot Secretary.
2. If a tap in the lower field breaks, call the owner of the pump shed.
3. A member whose yearly fee is late gets a reminder from the treasurer.
4. Bonfires are lit only on Sundays, and only when approved by the duty steward.

## Duty rota

| Week starting | Duty steward | Reserve |
| --- | --- | --- |
| 2026-04-06 | Noor Haddou | Pavel Novak |
| 2026-04-13 | Pavel Novak | Greta Lind |
| 2026-04-20 | Greta Lind | Noor Haddou |

## Log

- On 2026-04-15 the pump shed flooded after the night's storm.
"""


@pytest.fixture(scope="module")
def allotments(tmp_path_factory) -> MemoryRepo:
    repo = _ingested(tmp_path_factory.mktemp("roles"), RULES, "2026-05-02T12:00:00+00:00")
    yield repo
    repo.close()


def _texts(repo: MemoryRepo, ids: list[str]) -> list[str]:
    by_id = {r.id: r.text for t in ("semantic", "episodic", "procedural") for r in repo.records(t)}
    return [by_id[i] for i in ids if i in by_id]


def test_label_lines_of_one_paragraph_are_each_their_own_record(allotments: MemoryRepo):
    texts = [r.text for r in allotments.records("semantic")]
    assert "Committee — Treasurer: Walter Brandt" in texts
    assert "Committee — Chair: Lea Berg" in texts
    assert not any("Walter Brandt" in t and "Lea Berg" in t for t in texts)


def test_a_rule_naming_a_title_is_answered_by_its_holder_citing_both(allotments: MemoryRepo):
    answer = allotments.ask("Who must be told if a plot is left unworked for two months?")
    assert "Hamid Okafor" in answer.answer
    texts = _texts(allotments, answer.record_ids)
    assert any("tell the Plot Secretary" in t for t in texts) and any(t.startswith("Hamid Okafor is") for t in texts)
    assert answer.recalls <= 5


def test_the_owner_of_a_thing_is_whoever_owns_it(allotments: MemoryRepo):
    answer = allotments.ask("Who is called if a tap in the lower field breaks?")
    assert "Ines Duarte" in answer.answer
    assert any("owner of the pump shed" in t for t in _texts(allotments, answer.record_ids))


def test_a_role_line_names_the_holder(allotments: MemoryRepo):
    answer = allotments.ask("Who sends the reminder when a yearly fee is late?")
    assert "Walter Brandt" in answer.answer
    assert any("Treasurer: Walter Brandt" in t for t in _texts(allotments, answer.record_ids))


def test_a_week_rota_answers_for_the_week_the_question_names(allotments: MemoryRepo):
    answer = allotments.ask("Who approves a bonfire in the week starting 2026-04-13?")
    assert "Pavel Novak" in answer.answer
    texts = _texts(allotments, answer.record_ids)
    assert any("approved by the duty steward" in t for t in texts)
    assert any("2026-04-13" in t and "Pavel Novak" in t for t in texts)


def test_a_dated_event_finds_the_rota_row_whose_week_holds_it(allotments: MemoryRepo):
    # 2026-04-15 is no row's first day: the row of the week starting 2026-04-13 holds it
    answer = allotments.ask("Who was duty steward when the pump shed flooded?")
    assert "Pavel Novak" in answer.answer and "Greta" not in answer.answer
    texts = _texts(allotments, answer.record_ids)
    assert any("flooded" in t for t in texts) and any("2026-04-13" in t for t in texts)


def test_a_person_answer_takes_no_role_hop(allotments: MemoryRepo):
    answer = allotments.ask("Who owns the tool store?")
    assert "Ines Duarte" in answer.answer and answer.recalls == 1


def test_role_phrases_and_intervals():
    assert hops.role_in("If it breaks, call the Head of Grounds.") == "Head of Grounds"
    assert hops.role_in("Tell the owner of the pump shed, at any hour.") == "owner of the pump shed"
    assert hops.role_in("Ines Duarte owns the pump shed.") == ""
    assert hops.Role("owner of the pump shed").question() == "Who owns the pump shed?"
    assert hops.asked_role("Who was primary on call when the disk filled?") == "primary on call"
    assert hops.interval_holds("Week starting", "2026-04-13", "2026-04-19")
    assert not hops.interval_holds("Week starting", "2026-04-13", "2026-04-20")
    assert not hops.interval_holds("Day", "2026-04-13", "2026-04-14")
    assert not hops.is_person_name("Head of Engineering") and hops.is_person_name("Lea Berg")


def test_a_name_stands_beside_its_description_before_or_after_it():
    assert hops.name_in("big oven", "Oksana owns kestrel, the big oven, and its tins.") == "kestrel"
    assert hops.name_in("dough mixer", "Bastien owns the dough mixer plover and the slicer wren.") == "plover"
    assert hops.name_in("slicer", "Bastien keeps the bread slicer, wren-2.") == "wren-2"
    assert hops.name_in("slicer", "Bastien keeps the slicer and the oven.") == "slicer"  # nothing named beside it


def test_a_count_is_read_from_the_cell_with_a_number_and_the_asked_noun():
    from memrepo.read import cells, span
    from memrepo.read.answer import Evidence

    ledger = [Evidence("se-1", "2026-05-20", "Machines — Machine: plover; Where it runs: Hall A in Leuven"),
              Evidence("se-2", "2026-05-20", "Machines — Machine: plover; Size: 2 bowls")]
    question = "How many bowls does plover run?"
    cell = cells.read(question, span.question_kind(question), ledger)
    assert cell is not None and cell.answer == "2 bowls"
    question = "How many mixers does plover run?"
    cell = cells.read(question, span.question_kind(question), ledger[:1])
    assert cell is None  # "Hall A in Leuven" gives no count


def test_a_whose_clause_names_the_possessor_before_the_possessed_noun():
    thing = hops.described("Where does the machine whose night shift ends at 06:00 stand?")
    assert thing is not None and thing.clause.startswith("whose night shift")
    assert hops.thing_in(thing, "Shifts — Shift: kestrel night shift; Ends: 06:00") == "kestrel"
    assert hops.thing_in(thing, "Plover's night shift ends at 06:00.") == "Plover"
    assert hops.possessor("feeds the oven", "kestrel night shift") == ""  # no "whose" clause


def test_a_clause_opening_with_its_verb_names_that_verbs_subject():
    thing = hops.described("How many bowls does the mixer that kneads the spelt dough hold?")
    assert thing is not None and thing.clause == "kneads the spelt dough"
    assert hops.thing_in(thing, "Each morning Plover kneads the spelt dough for two hours.") == "Plover"
    assert hops.thing_in(thing, "Each morning plover-2 kneads the spelt dough.") == "plover-2"
    assert hops.thing_in(thing, "The dough is kneaded by hand.") == "mixer"  # no subject of the verb


def test_the_questions_own_verb_after_a_relative_clause_is_no_part_of_it():
    thing = hops.described("What speed of the mixer that feeds Kestrel gives a warning?")
    assert thing is not None and thing.clause == "feeds Kestrel"
    assert thing.follow_up("plover") == "What speed of plover gives a warning?"
    thing = hops.described("Who owns the mixer that is stopped when Kestrel fails?")
    assert thing is not None and thing.clause == "is stopped when Kestrel fails"  # one clause


def test_a_rows_first_cell_names_what_its_other_cells_describe():
    row = "Machines — Machine: plover; What it does: Mixer that kneads the spelt dough"
    assert hops.name_in("Mixer", row) == "plover"
    assert hops.name_in("oven", row) == "oven"  # the row describes no oven


def test_a_clause_with_a_named_subject_names_the_object_of_its_verb():
    thing = hops.described("How hot does the machine Oksana Petrenko runs get?")
    assert thing is not None and thing.clause == "Oksana Petrenko runs"
    assert hops.thing_in(thing, "Oksana Petrenko joined in May and runs Kestrel, every morning.") == "Kestrel"
    assert hops.thing_in(thing, "Bastien runs Plover.") == "machine"  # another subject


def test_a_described_thing_is_named_by_a_question_english_would_ask():
    thing = hops.described("How tall is the shed that Mirela Costa paints?")
    assert thing is not None and thing.naming == "Which shed does Mirela Costa paint?"
    thing = hops.described("How many hens does the coop Jonah watches keep?")
    assert thing is not None and thing.naming == "Which coop does Jonah watch?"
    thing = hops.described("Who mends the gate that faces the lane?")
    assert thing is not None and thing.naming == "Which gate faces the lane?"  # its verb has the thing as subject
    assert [lemma(v) for v in ("carries", "passes", "goes", "keeps")] == ["carry", "pass", "go", "keep"]


def test_after_does_or_can_the_questions_own_verb_ends_the_relative_clause():
    thing = hops.described("How far can the van that tows the trailer go on a full tank?")
    assert thing is not None and thing.clause == "tows the trailer"
    assert thing.follow_up("Bluebell") == "How far can Bluebell go on a full tank?"
    thing = hops.described("When does the job that writes the charge sheets finish?")
    assert thing is not None and thing.clause == "writes the charge sheets"  # "the charge" is a noun
    thing = hops.described("How many seats does the van that carries the crew on call have?")
    assert thing is not None and thing.clause == "carries the crew on call"  # "on call": no verb
