"""The operator a question's words choose: "share" means "in common" only with a joint subject or a
shared attitude, a mass noun ending in -s is not a list, and the types the recall scores frames by
include the one type the question asks for."""

from __future__ import annotations

import pytest

from memrepo.nlp.questions import classify


@pytest.mark.parametrize("question,operator", [
    ("What seeds did Ilse offer to share with Tariq?", "list-union"),
    ("Which photo did Tariq share with Ilse at the show?", "single"),
    ("What news did Ilse share on 3 June?", "single"),
    ("What hobbies do Ilse and Tariq share?", "intersection"),
    ("Do Ilse and Tariq share a love of roses?", "intersection"),
    ("What do Ilse and Tariq have in common?", "intersection"),
    ("Which club did Ilse and Tariq join together?", "intersection"),
])
def test_sharing_with_someone_is_giving_not_having_in_common(question, operator):
    assert classify(question).operator == operator


@pytest.mark.parametrize("question,operator", [
    ("Which bulbs did Ilse plant?", "list-union"),
    ("What tools did Tariq lend?", "list-union"),
    ("Which bus did Ilse take to the market?", "single"),
    ("What series did Tariq watch?", "single"),
])
def test_only_a_plural_head_makes_a_list_question(question, operator):
    assert classify(question).operator == operator


@pytest.mark.parametrize("question,kind", [
    ("How old is Tariq's greenhouse?", "age"),
    ("What is the email address of the garden club?", "email"),
    ("How often does Ilse water the roses?", "frequency"),
    ("What website sells the blue rose seeds?", "url"),
])
def test_the_frame_types_include_the_type_the_question_asks_for(question, kind):
    q = classify(question)
    assert q.asks == kind
    assert kind in q.answer_types
    assert "thing" not in q.answer_types


def test_a_question_of_no_literal_type_is_still_scored_as_a_thing():
    assert classify("What did Tariq repair?").answer_types == ("thing",)
