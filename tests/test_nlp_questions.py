"""The question stage (memrepo/nlp/questions.py) and the answer-type table (memrepo/nlp/answers.py).

The questions are written for these tests: a flat move, a team's notes, a garden club. One
classifier reads them for the planner and for the offline answerer; its answer types are the
keys of the one table.
"""

from __future__ import annotations

import pytest

from memrepo.nlp import answers
from memrepo.nlp.questions import classify
from memrepo.read.plan import plan
from memrepo.read.span import question_kind


@pytest.mark.parametrize("question,asks,head", [
    ("Who is the DBA?", "person", ""),
    ("Whom did Tariq call about the leak?", "person", ""),
    ("Which neighbour fixed the sink?", "person", "neighbour"),
    ("Where did Ilse park the van?", "place", ""),
    ("When did the garden club meet?", "date", ""),
    ("What year did Ilse buy the allotment?", "date", ""),
    ("How long ago did Tariq sell the boat?", "date", ""),
    ("What time does the bakery open?", "time", ""),
    ("When does the nightly backup run?", "time", ""),
    ("How much did the lawnmower cost?", "price", ""),
    ("What did the glazier quote for the window?", "price", ""),
    ("What is the rent of the studio?", "price", ""),
    ("How much memory does the build server have?", "amount", "memory"),
    ("How much time does the drive take?", "duration", ""),
    ("How many hens did Ilse buy?", "count", "hen"),
    ("How long is the lease?", "duration", ""),
    ("How old is the apple tree?", "age", ""),
    ("How often does the club water the beds?", "frequency", ""),
    ("What is Tariq's cat called?", "name", "cat"),
    ("What is the name of the bakery on the corner?", "name", "bakery"),
    ("Which company does Ilse work for?", "which", "company"),
    ("Why did Tariq sell the boat?", "reason", ""),
    ("Is the greenhouse heated?", "yesno", ""),
    ("What is the status of the roof repair?", "state", ""),
    ("What did Ilse plant in March?", "thing", ""),
])
def test_the_classifier_says_what_a_question_asks_for(question, asks, head):
    q = classify(question)
    assert (q.asks, q.head) == (asks, head)
    assert q.asks in answers.ANSWER_TYPES  # one vocabulary: the table's keys
    assert question_kind(question).name == asks  # the answerer's kind is a view on the same reading


@pytest.mark.parametrize("question,level", [
    ("Which street is the new studio on?", "address"),
    ("What is the address of the depot?", "address"),
    ("Which city did Ilse move to?", "city"),
    ("Which country is the supplier in?", "country"),
    ("Which neighbourhood is the allotment in?", "district"),
    ("Where did Ilse park the van?", ""),
])
def test_a_place_question_says_how_specific_a_place_it_asks_for(question, level):
    q = classify(question)
    assert (q.asks, q.place) == ("place", level)


@pytest.mark.parametrize("question,current", [
    ("What is the rent now?", "now"),
    ("Who is currently on call?", "now"),
    ("Does Tariq still keep bees?", "now"),
    ("How much is the rent?", "present"),
    ("Who is the DBA?", "present"),
    ("How much was the rent?", ""),
    ("How much did the rent cost in 2024?", ""),
    ("Who was the DBA last year?", ""),
])
def test_a_question_about_now_is_told_from_one_about_the_past(question, current):
    assert classify(question).current == current


@pytest.mark.parametrize("question,operator", [
    ("When did the garden club meet?", "temporal"),
    ("How many hens does Ilse keep?", "count"),
    ("What vegetables does Tariq grow in the greenhouse?", "list-union"),
    ("What do Ilse and Tariq both grow?", "intersection"),
    ("What did Tariq repair?", "single"),
    ("How much did the lawnmower cost?", "single"),
])
def test_the_planner_takes_its_operator_from_the_classifier(question, operator):
    assert classify(question).operator == operator
    assert plan(question).operator == operator


def test_the_plan_keeps_the_classifiers_names_words_types_and_time():
    question = 'Where did Ilse Brandt buy the "blue rose" seeds in May 2024?'
    q, p = classify(question), plan(question)
    assert p.names == list(q.names) == ["Ilse Brandt"]
    assert p.terms == list(q.terms)
    assert p.answer_types == list(q.answer_types) == ["place"]
    assert "blue rose" in p.constraints and "seeds" in p.constraints and "ilse" not in p.constraints
    assert p.time["months"] == ["may"] and p.time["years"] == ["2024"] and p.time["dates"] == ["2024-05"]
    assert "buy" in p.families
    assert classify(question) == classify(question) and plan(question) == plan(question)  # deterministic


def test_a_plans_time_is_its_own_copy():
    """The classifier's reading is cached: a caller changing its plan must not change the next plan."""
    first = plan("What did Tariq plant before March?")
    first.time["order"].append("after")
    assert plan("What did Tariq plant before March?").time["order"] == ["before"]


def test_every_answer_type_a_plan_names_is_in_the_one_table():
    for question in ("When did Ilse move?", "How many hens does Ilse keep?", "How long is the lease?",
                     "How much did the lawnmower cost?", "Where is the depot?", "Who fixed the sink?",
                     "Why did Tariq sell the boat?", "What did Ilse plant?"):
        assert set(plan(question).answer_types) <= set(answers.ANSWER_TYPES), question


def test_the_table_names_only_literal_keys_the_literal_stage_writes():
    from memrepo.nlp.literals import LITERAL_PATTERNS

    written = {key for key, _ in LITERAL_PATTERNS} | {"year"}  # "year": a model's extraction may write it
    assert answers.LITERAL_KEYS <= written
    assert answers.literal_keys("time")[0] == "time" and answers.literal_keys("date")[0] == "date"
    assert answers.literal_keys("price") == ("price",)
    assert answers.answer_type("person").full_entities == ("person",)
    assert answers.answer_type("place").full_entities == ("location",)
    assert "cost" in answers.cues("price") and answers.answer_type("no such type") == answers.ANSWER_TYPES["thing"]
