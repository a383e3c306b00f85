"""What counts as an instruction depends on who it is said to (issue 31).

A document's reader is told steps ("drain the node"); in a conversation most imperatives and "must"s are social
("take care", "that must have been fun") and only a standing frame makes a rule ("always ...", "if ..., ...",
"next time, ..."); a task session's user tells the agent rules about kinds of things ("compress attachments over
10 MB"). The router and the writers read the same statements, so what is routed is what is written.
"""

from __future__ import annotations

import re

import pytest

from memrepo.nlp.lexicon import opens_with_imperative
from memrepo.write import offline as rules
from memrepo.write.sessions import standing_instructions
from memrepo.write.writers import route_offline


def _chat_types(text: str) -> list[str]:
    part = {"anchor": "D1:1", "text": text, "speaker": "Ines", "time": "2026-11-02"}
    return route_offline({"kind": "conversation", "parts": [part]})["types"]


def _task_types(text: str) -> list[str]:
    part = {"anchor": "t1", "text": text, "role": "user", "speaker": "user", "time": "2026-11-02"}
    return route_offline({"kind": "task", "parts": [part]})["types"]


SOCIAL = [
    "Wow, that must have been such a long drive.",  # an inference, not an obligation
    "It must be lovely to have the garden back.",
    "You must be so relieved about the results.",
    "That must feel strange after all these years.",
    "A good raincoat is a must in this town.",  # "must" as a noun
    "Always happy to lend a hand.",  # "always" with no verb after it
    "Never saw that one coming.",  # a past tense, its subject left out
    "Always love hearing about your trips.",  # a feeling, its subject left out
    "I'm learning how to knit socks this winter.",  # "how to" as what someone learns
    "To stay calm, I count my breaths.",  # a purpose clause before a statement
    "Whenever you need a lift, just let me know.",  # an offer: the imperative is aimed at the speaker
    "I'll remember that next time I bake bread.",  # "next time" with the speaker as subject
    "We both need a break from the city.",  # "need a" with a person as its subject is a want
]


@pytest.mark.parametrize("text", SOCIAL)
def test_a_social_imperative_or_an_inference_in_a_chat_is_no_instruction(text):
    assert "procedural" not in _chat_types(text)


STANDING = [
    "Always water the basil before noon.",
    "Never leave the stove on when you go out.",
    "If the smoke alarm chirps, replace the battery.",
    "Next time, park behind the bakery.",
    "Next time it rains, bring the cushions in.",
    "First, soak the beans overnight.",
    "Remember to lock the shed when you leave.",
    "To clean the grill, heat it and brush it with a wire brush.",
    "Guests must take off their shoes in the hall.",  # an obligation
    "You need a permit to fish in the lake.",  # a requirement, said to anyone ("you" in general)
]


@pytest.mark.parametrize("text", STANDING)
def test_a_standing_instruction_in_a_chat_is_procedural(text):
    assert "procedural" in _chat_types(text)


def test_an_obligation_in_a_document_is_a_rule_and_an_inference_is_not():
    assert rules.statement_types("Contractors must wear a badge on site.") == {"procedural"}
    assert rules.statement_types("Backups must be encrypted at rest.") == {"procedural"}
    assert "procedural" not in rules.statement_types("That must have been a long night for the on-call team.")


@pytest.mark.parametrize("text", [
    "Compress images over 5 MB before you attach them.",
    "Use staging databases for load tests.",
])
def test_an_imperative_to_the_agent_about_a_kind_of_thing_is_a_standing_instruction(text):
    assert "procedural" in _task_types(text)
    part = {"anchor": "t1", "text": text, "role": "user"}
    assert [i.text for i in standing_instructions([part])] == [text]


@pytest.mark.parametrize("text", [
    "Book a table for two at the corner bistro tonight.",
    "If the price goes up, pay with my store voucher.",  # the user's own case: a step of this task
    "After that, cancel the second booking.",  # points back at the step before
    "I'll have the receipt ready next time.",  # what the user will do
])
def test_a_one_off_request_to_the_agent_is_no_standing_instruction(text):
    assert "procedural" not in _task_types(text)
    assert standing_instructions([{"anchor": "t1", "text": text, "role": "user"}]) == []


def test_what_the_router_routes_is_what_the_writers_write(repo, tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("Ines: We drove to the coast on Saturday.\n"
                    "Omar: Wow, that must have been a long drive!\n"
                    "Ines: It was. Next time, take the ferry from the north pier.\n"
                    "Omar: Will do. I went hiking last weekend and loved it.\n", encoding="utf-8")
    repo.ingest([chat])
    procedural = [r for r in repo.records() if r.type == "procedural"]
    # One record, holding the instruction only: no record of the transcript for a turn that gave none.
    assert [r.text for r in procedural] == ["Ines: Next time, take the ferry from the north pier."]
    # An event that says how it felt is an event (episodic), not a durable fact.
    assert not [r for r in repo.records() if r.type == "semantic"]


@pytest.mark.parametrize("text, opens", [
    ("1. Drain the node before the upgrade.", True),
    ("Then restart the worker.", True),
    ("Always lock the gate.", True),
    ("Never exceed ten replicas.", True),  # a base form in -eed
    ("Make sure the tap is off.", True),
    ("Do not reboot the primary.", True),
    ("Always here to help.", False),
    ("Never saw it coming.", False),
    ("Always runs at night.", False),  # a third person, its subject left out
    ("Now I know the way.", False),
    ("The worker restarts itself.", False),
])
def test_one_imperative_test_for_the_router_and_the_document_writers(text, opens):
    assert opens_with_imperative(text) is opens


def test_the_fact_cues_never_change_what_a_fact_pattern_finds():
    """A pattern is skipped on a sentence without one of its cues: that must never drop a match."""
    sentences = [s for text in SOCIAL + STANDING for s in [text]] + [
        "My stepmother is a paramedic.", "Tomas has two daughters and a dog.", "The queue runs on 3 nodes.",
        "I can't stand cold coffee.", "They are twins.", "She is really into bouldering.", "I was born in Tartu.",
        "The cluster is hosted in Frankfurt.", "It costs 12 euros a month.", "We are big fans of jazz.",
        "Her fiancée Lea is called Lea-Marie at work.", "Our landlady's son is named Ivo.", "I speak Estonian.",
    ]
    for sentence in sentences:
        for kind, pattern in rules.FACT_PATTERNS.items():
            found = bool(pattern.search(sentence))
            if found and kind in rules.FACT_CUES:
                assert any(cue in sentence.lower() for cue in rules.FACT_CUES[kind]), (kind, sentence)
            assert (kind in rules.fact_kinds(sentence)) is found, (kind, sentence)
    for kind, cues in rules.FACT_CUES.items():  # each cue is plain text, found as it is written
        assert all(cue == cue.lower() and not re.search(r"[\\^$*+?]", cue) for cue in cues), kind


@pytest.mark.parametrize("text", ["Keep going - you're doing so well.", "I bet it smells great - you're a natural!",
                                  "Just like you with the marathon - practice pays off."])
def test_a_sentence_with_a_dash_in_a_chat_is_no_labelled_fact(text):
    assert "semantic" not in _chat_types(text)
    assert rules.durable_facts("Area lead: Femi Okoro\nOn call - Jun Park") == ["Area lead: Femi Okoro",
                                                                                 "On call - Jun Park"]
