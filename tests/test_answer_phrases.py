"""Offline answers that are a phrase of their sentence, not one literal in it (issues 31 and 32).

A bakery's operations notes, written for these tests (not taken from any evaluation set), are ingested into a
real repository; ``ask`` answers with the command written in a step, a code name, a schedule's days and hours
said together, how often something repeats, a "when" said from the event before it ("after 12 hours"), a count
whose noun was said before it ("needs three", "carries up to 4"), the noun that says which one ("the
recipes table"), a size in what it holds ("pallets of 1,200 bags"), and questions whose words the text writes otherwise (a
hyphenated word apart, "weekly" as "per week", a passive verb in other words).
"""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.nlp.literals import find_literals
from memrepo.nlp.questions import classify
from memrepo.read.phrases import commands

from conftest import document_memory

NOTES = """\
# Crumbline Bakery operations notes

## Ovens

- Preheat the ovens with `ovenctl --zone north warmup --target 230`; a cold start takes about 25 minutes.
- Each finished batch is logged to a queue named `bake.finished` on the broker.
- A replaced oven controller is named `ctl-spare-NNNN` until its serial is known.
- The maintenance scripts read the controller address from `OVEN_HOST` in the vault.
- The proofing room takes only 12 racks, and each trolley carries up to 4.
- Flour arrives in pallets of 1,200 bags.
- Add an allergen column to the recipes table on shop-db-3 before the audit.
- The wedding needed a French bakery near the harbour; Panadería Sol had no free van, so we hired Forno Aurelia.

## Schedule

- Deliveries go out every Wednesday and Saturday at 05:30 Europe/Lisbon.
- The flour silo is refilled on Tuesday to Friday between 06:00 and 08:00.
- Hygiene audits take place in the second week of February, May, August and November.
- The starter culture is fed once every 8 hours, day and night.

## Rules

- Temporary door badges expire after 12 hours.
- Every new recipe needs one review; a recipe with nuts needs three, one of them from the allergen lead.
- Ask for a stand at the market at least 6 working days ahead.
- The night baker gets a stipend of €45 per shift and the day baker €20 per shift.
- The head baker signs off orders above €800.
"""


CHAT = """\
# Session 1: 2026-03-04 18:20
Lea: We picked up a kitten from the shelter, her name is Miso.
Jonas: Lovely! How old is she?
Lea: Ten weeks. Miso's first vet visit is on Friday.
Jonas: Which vet do you use?
Lea: The clinic by the canal, they open early.
Jonas: And does she like the scratching post?
Lea: She has already shredded 2 cardboard boxes.
"""


@pytest.fixture(scope="module")
def bakery(tmp_path_factory):
    repo = document_memory(tmp_path_factory.mktemp("bakery"), "operations.md", NOTES, "2026-04-02T09:00:00+00:00",
                           graph=False)
    yield repo
    repo.close()


@pytest.mark.parametrize("question,expected,sentence", [
    # the command of a step, whole, and a name written in code
    ("What command preheats the ovens?", "ovenctl --zone north warmup --target 230", "Preheat the ovens with"),
    ("What is a replaced oven controller named?", "ctl-spare-NNNN", "A replaced oven controller is named"),
    ("Which queue are finished batches logged to?", "bake.finished", "Each finished batch is logged"),
    # a schedule's days and hours said together, with the ordinal period of its months
    ("On which days do deliveries go out?", "every Wednesday and Saturday at 05:30 Europe/Lisbon",
     "Deliveries go out every Wednesday"),
    ("When is the flour silo refilled?", "Tuesday to Friday between 06:00 and 08:00", "The flour silo is refilled"),
    ("When do hygiene audits take place?", "second week of February, May, August and November",
     "Hygiene audits take place"),
    # how often, never an amount; a "when" said from the event before it
    ("How often is the starter culture fed?", "once every 8 hours", "The starter culture is fed"),
    ("When do temporary door badges expire?", "after 12 hours", "Temporary door badges expire"),
    # a count whose noun was said before it, bound to the clause the question names
    ("How many reviews does a recipe with nuts need?", "three", "a recipe with nuts needs three"),
    # the noun before the one asked names it; a number whose noun its sentence said before it; "pallets of"
    ("Which table got the allergen column?", "recipes", "Add an allergen column to the recipes table"),
    ("How many racks does each trolley carry?", "4", "each trolley carries up to 4"),
    ("How big are the flour pallets?", "1,200 bags", "Flour arrives in pallets of 1,200 bags."),
    # a name bound to the question's verb, as its object or its subject, not a place described with "a"
    ("Which bakery was hired for the wedding?", "Forno Aurelia", "we hired Forno Aurelia"),
    ("Which bakery had no free van?", "Panadería Sol", "Panadería Sol had no free van"),
    # words the text writes otherwise: a passive verb, "weekly"/"per shift", a hyphenated word apart
    ("How far ahead must a market stand be requested?", "6 working days", "Ask for a stand at the market"),
    ("Above what amount do orders need the head baker's sign-off?", "€800", "The head baker signs off"),
])
def test_an_answer_is_the_phrase_its_sentence_says(bakery, question, expected, sentence):
    answer = bakery.ask(question)
    assert answer.answer == expected, (question, answer.answer, answer.quote)
    assert answer.record_ids and sentence in answer.quote, answer.quote


def test_a_command_starts_at_its_program_and_ends_before_the_prose():
    said = "If the queue grows, restart it with brokerctl -q bake restart --all; it takes a minute."
    assert commands(said) == [(36, "brokerctl -q bake restart --all")]
    assert commands("There were errors in app/render.py today.") == []  # a path alone is no command


def test_a_repeating_period_is_a_frequency_and_a_weekday_stays_a_date():
    _, literals = find_literals("Costs are checked every quarter and backups run once every 6 hours.", None)
    assert [(lit.key, lit.surface) for lit in literals] == [("frequency", "every quarter"),
                                                            ("frequency", "once every 6 hours")]
    _, literals = find_literals("We meet every Tuesday.", None)
    assert all(lit.key != "frequency" for lit in literals)


@pytest.mark.parametrize("question,asks,head", [
    ("What is an incident room called?", "name", "room"),
    ("What is a restored cache node named?", "name", "node"),
    ("On which days does the market open?", "date", ""),
    ("Up to what amount can a baker spend without asking?", "price", ""),
    ("Which baker's bread is sold when the shop opens?", "which", "baker"),  # a "when" clause asks no date
    ("How far ahead must a stand be booked?", "duration", ""),
])
def test_what_a_question_asks_for(question, asks, head):
    q = classify(question)
    assert (q.asks, q.head) == (asks, head)
    assert "Up" not in q.names


def test_a_pronoun_stands_for_the_name_said_before_it(tmp_path):
    path = tmp_path / "kitten.txt"
    path.write_text(CHAT, encoding="utf-8")
    repo = MemoryRepo.init(tmp_path / "memory")
    repo.ingest([path])
    try:
        answer = repo.ask("How many cardboard boxes has Miso shredded?")
        assert answer.answer == "2", (answer.answer, answer.quote)
        assert "She has already shredded 2 cardboard boxes." in answer.quote
        assert repo.ask("How many cardboard boxes has Pixel shredded?").answer != "2"  # a name never said
    finally:
        repo.close()

