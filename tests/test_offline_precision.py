"""Offline extractor precision rules (issue 19): adverbs and adjectives are no predicates, a gerund subject
is not the speaker's act, set phrases are no clauses."""

from __future__ import annotations

import pytest

from memrepo.graph.offline import extract_offline


def frames(line: str) -> list[tuple[str, list[tuple[str, str]], dict[str, str]]]:
    speaker = line.split(":")[0]
    reply = extract_offline({"text": line, "actor": speaker, "participants": [speaker, "Sam"],
                             "mention_time": "2023-05-08"})
    return [(f["predicate"], [(a["role"], a["entity"]) for a in f["arms"]],
             {lit["key"]: lit["value"] for lit in f["literals"]}) for f in reply["frames"]]


@pytest.mark.parametrize("line, predicate", [
    ("Nate: I highly recommend this book.", "recommend"),
    ("Jon: I color-code my goals so I can easily track my progress.", "track"),
    ("Maria: I slowly formed connections with the volunteers.", "form"),
])
def test_an_adverb_is_no_predicate(line, predicate):
    predicates = [p for p, _arms, _lits in frames(line)]
    assert predicate in predicates
    assert not any(p.endswith("ly") for p in predicates), predicates


def test_an_adjective_after_be_is_a_state_not_a_verb():
    got = frames("Joanna: I'm allergic to most reptiles and animals with fur.")
    assert [p for p, _a, _l in got] == ["state"]
    _p, arms, lits = got[0]
    assert arms[0] == ("subject", "Joanna") and ("theme", "reptiles") in arms and ("theme", "animals") in arms
    assert lits["quality"] == "allergic"


def test_an_adjective_without_a_complement_gives_no_frame():
    assert frames("Joanna: I'm so vulnerable these days.") == []


@pytest.mark.parametrize("line", [
    "Gina: Connecting with like-minded people is key.",
    "Maria: Kickboxing is a perfect way to stay in shape.",
    "Caroline: Finding those happy moments and clinging to them is key.",
])
def test_a_gerund_subject_is_not_the_speakers_act(line):
    assert all(("agent", line.split(":")[0]) not in arms for _p, arms, _l in frames(line)), frames(line)


def test_a_gerund_with_the_speakers_own_things_is_her_act_without_the_judgement():
    got = frames("Gina: Sourcing trendy pieces for my store was a big hurdle.")
    assert got[0][0] == "source" and ("agent", "Gina") in got[0][1]
    assert all(e != "hurdle" for _p, arms, _l in got for _r, e in arms)


def test_set_phrases_name_nothing():
    got = frames("Nate: Of course! Fingers crossed for the festival.")
    assert all(e not in ("course", "Fingers") for _p, arms, _l in got for _r, e in arms), got


def test_a_photo_of_an_unnamed_person_shows_what_the_person_holds():
    got = frames("Caroline: Take a look at this.\n[image: a photo of a person holding a necklace with a cross]")
    assert ("give", [("giver", "Caroline"), ("item", "necklace")], {"medium": "photo"}) in got


def test_why_starts_a_clause():
    expected = [("like", [("experiencer", "John"), ("theme", "traveling")], {})]
    assert frames("John: That's why I love traveling.") == expected



def test_a_verbless_clause_relates_nothing_without_a_value():
    assert frames("Joanna: Sounds like a nice encounter on your walk.") == []


def test_an_imperative_that_starts_like_a_question_asks_nothing():
    assert all(p != "ask" for p, _a, _l in frames("Joanna: Have faith in yourself and share it with friends."))


def test_an_imperative_verb_is_not_the_thing_judged():
    got = frames("Nate: Believe in yourself and your talent - you're incredible!")
    assert all(e != "Believe" for _p, arms, _l in got for _r, e in arms), got


def test_everything_seen_is_what_was_seen():
    (watch,) = [f for f in frames("Joanna: Got to see some lovely scenery and historic buildings.") if f[0] == "watch"]
    assert ("work", "scenery") in watch[1] and ("work", "historic buildings") in watch[1]


def test_a_participle_after_a_comma_is_no_adjective():
    got = frames("Mia: It is 4 sessions, taught by a potter called Hiroshi Tanabe.")
    assert any(p == "is_a" and ("instance", "Hiroshi Tanabe") in arms for p, arms, _l in got)


def test_a_photo_of_a_group_of_things_shows_the_things():
    got = frames("Jon: Look.\n[image: a photo of a stack of books sitting on a wooden table]")
    assert ("give", [("giver", "Jon"), ("item", "books")], {"medium": "photo"}) in got


def test_a_gerund_subject_of_a_verb_is_not_the_speakers_act():
    assert all(p != "eat" and p != "try" for p, _a, _l in frames("John: Trying new things takes guts.")), \
        frames("John: Trying new things takes guts.")


def test_the_verb_after_a_subject_is_no_topic_of_a_question():
    # No topic: only the dialogue act of asking the person spoken to.
    assert frames("Caroline: Did anything happen?") == [("ask", [("agent", "Caroline"), ("recipient", "Sam")], {})]
    assert frames("Mia: Have you been to Kyoto?") == [("ask", [("agent", "Mia"), ("topic", "Kyoto")], {})]


def test_kind_of_is_no_adjective():
    assert all(p != "state" for p, _a, _l in frames("Joanna: I'm kind of a sucker for superheroes."))


def test_an_adjective_about_an_activity_names_the_activity():
    got = frames("John: I'm passionate about improving education and infrastructure in our community.")
    (state,) = [f for f in got if f[0] == "state"]
    assert state[1][0] == ("subject", "John") and state[2] == {"quality": "passionate"}
    assert any("education" in e for _r, e in state[1][1:])
