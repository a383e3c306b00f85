"""The offline router and writers file what a text says under the memory type it belongs to (MIRIX §2.2).

Durable facts (kinship, jobs, preferences, attributes, where a system runs) are semantic, events episodic,
instructions and how-tos procedural, and a core block keeps every attribute the user states about themselves.
"""

from __future__ import annotations

import pytest

from memrepo.write import offline as rules
from memrepo.write.writers import route_offline


def _route(text: str, kind: str = "conversation", speaker: str | None = "Noor") -> list[str]:
    part = {"anchor": "D1:1", "text": text, "time": "2026-11-02"}
    if speaker:
        part["speaker"] = speaker
    return route_offline({"kind": kind, "parts": [part]})["types"]


@pytest.mark.parametrize("text", [
    "Lena is Jonas's sister and works as a vet.",
    "My cousin Arvid works at the harbour office.",
    "Priya Raman is our DBA.",
    "She absolutely loves salt liquorice.",
    "Tomas has two daughters and a dog named Pepper.",
    "The billing service runs in eu-west-1.",
    "The nightly backup runs at 02:30 UTC.",
])
def test_a_durable_fact_is_semantic(text):
    assert "semantic" in _route(text)


@pytest.mark.parametrize("text", [
    "We went to the beach yesterday.",
    "The parcel finally arrived this morning.",
])
def test_an_event_is_episodic_and_not_a_fact(text):
    assert _route(text) == ["episodic"]


@pytest.mark.parametrize("text, kind", [
    ("Always run the linter before pushing.", "conversation"),
    ("Make sure you water the fern before the weekend.", "conversation"),
    ("To rotate the key, open the vault and press Rotate.", "conversation"),
    ("Restart the queue worker after changing its config.", "note"),
    ("1. Drain the node before the upgrade.", "note"),
])
def test_an_instruction_is_procedural(text, kind):
    assert "procedural" in _route(text, kind)


@pytest.mark.parametrize("text", ["Take care of yourself.", "Check out this view!", "Keep going, you are doing great."])
def test_a_social_imperative_in_a_chat_is_not_an_instruction(text):
    assert "procedural" not in _route(text)


def test_a_labelled_line_of_notes_is_a_fact():
    assert rules.durable_facts("DBA: Priya Raman\nRegion: eu-west-1") == ["DBA: Priya Raman", "Region: eu-west-1"]


def test_the_core_block_keeps_every_stated_attribute_and_the_newest_value(repo):
    repo.remember("Noor: My name is Noor and I'm vegetarian.", mention_time="2026-11-01T09:00:00")
    repo.remember("Noor: I'm allergic to peanuts. I live in Leeds.", mention_time="2026-11-02T09:00:00")
    repo.remember("Noor: I moved to York last month.", mention_time="2026-11-20T09:00:00")
    block = repo.get("core-human").text.split("\n")
    assert "- name: Noor" in block
    assert "- diet: vegetarian" in block
    assert "- allergic to: peanuts" in block
    assert "- lives in: York" in block and not any("Leeds" in line for line in block)


def test_a_chat_instruction_becomes_a_procedural_record_citing_its_turn(repo, tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("Ines: Hi, how was the trip?\n"
                    "Omar: Great. Always lock the bike shed before you leave the house.\n"
                    "Ines: Will do.\n", encoding="utf-8")
    repo.ingest([chat])
    (record,) = [r for r in repo.records() if r.type == "procedural"]
    assert record.text == "Omar: Always lock the bike shed before you leave the house."
    assert record.extra["kind"] == "instruction" and "distillation" not in record.extra
    assert [s.split("#")[1] for s in record.sources] == ["D1:2"]


@pytest.mark.parametrize("sentence, types", [
    ("The reactor room was flooded on 4 May.", {"episodic"}),
    ("Last week the courier lost two parcels.", {"episodic"}),
    ("Participants: Ilse, Marek and Tove.", {"episodic"}),
    ("My aunt Greet moved to Ghent in June.", {"episodic", "semantic"}),  # an event that also says who she is
    ("The archive server keeps 90 days of logs.", {"semantic"}),
    ("Olav chairs the works council.", {"semantic"}),  # a name ending in -ed is no past tense
    ("Visitors must sign in at the front desk.", {"procedural"}),
    ("If the printer jams, open tray 2 and pull the sheet out.", {"procedural"}),
    ("Next time, book the larger van.", {"procedural"}),
])
def test_a_document_sentence_gets_the_type_it_states(sentence, types):
    assert rules.statement_types(sentence, default="semantic") == types


def test_a_task_session_message_gets_the_types_it_states():
    part = {"anchor": "t1", "text": "The deploy failed twice. Always pin the image tag.", "role": "user",
            "time": "2026-11-02"}
    assert route_offline({"kind": "task", "parts": [part]})["types"] == ["episodic", "procedural"]
    call = {"anchor": "t2", "role": "assistant", "time": "2026-11-02",
            "text": '[{"function": {"arguments": "{}", "name": "always_on"}, "id": "c1", "type": "function"}]'}
    assert route_offline({"kind": "task", "parts": [call]})["types"] == []  # a tool call's JSON says nothing
