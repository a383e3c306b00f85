"""Dialogue acts (issue 19, fifth pass): turns that assert no event say what they do to the person spoken to,
and that person is neither mentioned by the turn nor a source of recall rows."""

from __future__ import annotations

import json

import pytest

from memrepo.api import MemoryRepo
from memrepo.nlp.lexicon import DIALOGUE_ACTS
from memrepo.nlp.rules import extract_offline
from memrepo.graph.reader import open_reader


def acts(line: str, participants: tuple[str, ...] | None = None) -> list[tuple[str, dict[str, str]]]:
    speaker = line.split(":")[0]
    people = list(participants) if participants is not None else [speaker, "Sam"]
    reply = extract_offline({"text": line, "actor": speaker, "participants": people, "mention_time": "2023-05-08"})
    return [(f["predicate"], {a["role"]: a["entity"] for a in f["arms"]}) for f in reply["frames"]]


@pytest.mark.parametrize("line, predicate", [
    ("Ana: Thanks, Sam!", "thank"),
    ("Ana: Thank you so much. That helps a lot.", "thank"),
    ("Ana: I really appreciate it.", "thank"),
    ("Ana: Hey Sam! Long time no see.", "greet"),
    ("Ana: Hello!", "greet"),
    ("Ana: Bye!", "farewell"),
    ("Ana: Take care and write soon.", "farewell"),
    ("Ana: See ya later!", "farewell"),
    ("Ana: Keep it up!", "encourage"),
    ("Ana: Don't give up on your plans!", "encourage"),
    ("Ana: You can do it!", "encourage"),
    ("Ana: Believe in yourself and try again.", "encourage"),
    pytest.param("Ana: Trust yourself and keep trying.", "encourage", marks=pytest.mark.xfail(
        strict=True, reason="encouragement is known by its cue phrases; 'trust yourself' is not one of them")),
    ("Ana: Congrats, Sam!", "congratulate"),
    ("Ana: Great job on the race!", "praise"),
    ("Ana: I'm so proud of you.", "praise"),
    ("Ana: You're so talented.", "praise"),
    ("Ana: I totally agree.", "agree"),
    ("Ana: Exactly!", "agree"),
    ("Ana: How are you?", "ask"),
])
def test_a_dialogue_act_names_the_speaker_and_the_person_spoken_to(line, predicate):
    found = acts(line)
    assert (predicate, {"agent": "Ana", "recipient": "Sam"}) in found, found


def test_the_thing_thanked_for_or_congratulated_on_is_an_arm():
    assert ("thank", {"agent": "Ana", "recipient": "Sam", "reason": "tips"}) in acts("Ana: Thanks for the tips!")
    assert ("thank", {"agent": "Ana", "recipient": "Sam", "reason": "support"}) in acts(
        "Ana: I appreciate your support.")
    assert ("congratulate", {"agent": "Ana", "recipient": "Sam", "theme": "job"}) in acts(
        "Ana: Congrats on the new job!")
    # An act, not a thing: "having my back", "winning" are no reason or theme.
    assert acts("Ana: Thanks for having my back.") == [("thank", {"agent": "Ana", "recipient": "Sam"})]
    assert acts("Ana: Congrats on winning!") == [("congratulate", {"agent": "Ana", "recipient": "Sam"})]


def test_the_act_replaces_a_clause_the_rules_would_misread():
    # "agree with you" is no decision, "appreciate your support" no liking.
    assert acts("Ana: I agree with you.") == [("agree", {"agent": "Ana", "recipient": "Sam"})]
    assert [p for p, _ in acts("Ana: I really appreciate your support.")] == ["thank"]


def test_the_person_spoken_to_is_left_out_when_the_record_does_not_say_who_that_is():
    # Three participants and no name in the sentence: nobody is guessed, and one anchor makes no frame.
    assert acts("Ana: Thanks!", participants=("Ana", "Sam", "Lea")) == []
    # Three participants, one named: she is the one spoken to.
    assert acts("Ana: Thanks, Lea!", participants=("Ana", "Sam", "Lea")) == [
        ("thank", {"agent": "Ana", "recipient": "Lea"})]
    assert acts("Ana: Thanks!", participants=("Ana",)) == []


@pytest.mark.parametrize("line, named", [
    ("Ana: Take care of the kids while I'm away.", None),  # an instruction, no farewell (and not read: below)
    ("Ana: I agree to lead the project.", "project"),       # a decision, no agreement with anyone
    ("Ana: I'm not giving up on painting.", "painting"),    # her own resolve, no encouragement
    ("Ana: The hike was a great job for the legs.", "hike"),  # no one praised
])
def test_no_act_where_the_cue_words_do_something_else(line, named):
    found = acts(line)
    assert not {p for p, _ in found} & {"farewell", "agree", "encourage", "praise"}, found
    assert [named] == [e for _p, arms in found for e in arms.values() if e == named] if named else found == []


def test_a_decision_to_lead_is_leading():
    assert acts("Ana: I agree to lead the project.") == [("run", {"manager": "Ana", "organization": "project"})]


def test_a_resolve_not_to_give_up_is_negated():
    speaker = "Ana"
    reply = extract_offline({"text": "Ana: I'm not giving up on painting.", "actor": speaker,
                             "participants": [speaker, "Sam"], "mention_time": "2023-05-08"})
    assert [lit for f in reply["frames"] for lit in f["literals"]] == [{"key": "negated", "value": "true"}]


@pytest.mark.xfail(strict=True, reason="an instruction to the person spoken to ('Take care of the kids') gives no "
                   "frame: imperatives are read only as dialogue acts")
def test_an_instruction_names_what_the_person_spoken_to_is_asked_to_do():
    assert any("kids" in arms.values() for _p, arms in acts("Ana: Take care of the kids while I'm away."))


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    root = tmp_path_factory.mktemp("acts")
    conv = {"sample_id": "conv-acts", "conversation": {
        "speaker_a": "Priya", "speaker_b": "Dan",
        "session_1_date_time": "2:00 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Priya", "dia_id": "D1:1", "text": "I painted a portrait of my grandmother last week."},
            {"speaker": "Dan", "dia_id": "D1:2", "text": "Thanks for sharing! Keep it up!"},
            {"speaker": "Priya", "dia_id": "D1:3", "text": "I joined a pottery class at the community center."},
            {"speaker": "Dan", "dia_id": "D1:4", "text": "Bye, take care!"},
            {"speaker": "Dan", "dia_id": "D1:5", "text": "Hi again! You sound excited!"},
        ]}, "qa": []}
    data = root / "conv.json"
    data.write_text(json.dumps([conv]), encoding="utf-8")
    MemoryRepo.init(root / "repo").close()
    repo = MemoryRepo.open(root / "repo", environ={})
    repo.ingest([data])
    yield repo
    repo.close()


def _record_of(repo: MemoryRepo, words: str) -> str:
    return next(r.id for r in repo.records() if words in r.text)


def test_the_person_spoken_to_is_an_arm_but_not_mentioned(chat):
    thanks = _record_of(chat, "Thanks for sharing")
    with open_reader(chat.store, chat.settings) as reader:
        predicates = {p for (p,) in reader.db.execute(
            "SELECT value FROM frame_facts WHERE prop = 'predicate' AND frame IN "
            "(SELECT frame FROM citations WHERE memory LIKE ?)", (f"%{thanks}",))}
        priya = next(a for a in reader.anchors_by_keys(["priya"]))
        rows = {m for m, _ in reader.rows_of_weighted([(priya.iri, 1.0)], 50)}
    assert {"thank", "encourage"} <= predicates
    assert thanks not in rows  # the turn speaks to Priya; it is not a row about her
    assert _record_of(chat, "You sound excited") in rows  # this one names her ("you"): still a mention
    assert _record_of(chat, "I painted a portrait") in rows


def test_recall_builds_no_rows_from_dialogue_acts(chat):
    acts_only = {_record_of(chat, "Thanks for sharing"), _record_of(chat, "Bye, take care")}
    result = chat.recall("What did Priya paint?")
    seen = [entry for entry in result.base_lane if entry["id"] in acts_only]
    for entry in seen:  # the text lanes and the speaker's rows may find them; no dialogue-act frame does
        assert not {"frame", "co-participant"} & set(entry["via"]), entry
    with open_reader(chat.store, chat.settings) as reader:
        priya = next(a for a in reader.anchors_by_keys(["priya"]))
        kept = reader.frames_of([priya.iri], None, 48, exclude=DIALOGUE_ACTS)
        every = reader.frames_of([priya.iri], None, 48)
    assert {f.predicate for f in every} & DIALOGUE_ACTS
    assert not {f.predicate for f in kept} & DIALOGUE_ACTS and kept


def test_an_act_to_the_person_spoken_to_answers_no_question():
    # "Who did Omar say goodbye to?" must not be answered from the farewell's recipient arm: the offline
    # answerer reads a turn's frames (memrepo/read/span.py), and acts addressed to someone are left out.
    from memrepo.read.answer import Evidence
    from memrepo.read.span import read_turn

    turn = read_turn(Evidence("ep-2023-05-09-aaaa0001", "2023-05-09", "Omar: Thanks! Bye!"), 0, ("Omar", "Lena"), [])
    assert turn.frames == []
