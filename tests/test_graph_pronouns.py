"""Pronouns within a record (issue 19, sixth pass): a sentence-opening "he"/"she"/"his"/"her" names the one
person an earlier sentence of the same record named as its subject."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memrepo.cli import cli
from memrepo.nlp.rules import extract_offline
from memrepo.nlp.tokens import tokenize

JONAS = "Jonas moved to Berlin in 2019. He works as a nurse at Charité. His sister Lena lives in Hamburg."


def frames(text: str, actor: str | None = None, participants: tuple[str, ...] = ()) -> list[tuple[str, dict]]:
    reply = extract_offline({"text": text, "actor": actor, "participants": list(participants)})
    return [(f["predicate"], {a["role"]: a["entity"] for a in f["arms"]}) for f in reply["frames"]]


def test_the_user_path_offline_ask_answers_where_jonas_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "memory"], catch_exceptions=False).exit_code == 0
    monkeypatch.chdir(tmp_path / "memory")
    assert runner.invoke(cli, ["remember", JONAS], catch_exceptions=False).exit_code == 0
    out = runner.invoke(cli, ["ask", "Where does Jonas work?"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0] == "Charité"


def test_he_opening_a_later_sentence_is_the_earlier_subject():
    got = frames(JONAS)
    assert ("work", {"worker": "Jonas", "capacity": "nurse", "location": "Charité"}) in got


def test_his_before_a_noun_makes_the_earlier_subject_the_owner():
    got = frames(JONAS)
    assert ("relative", {"person": "Jonas", "relative": "Lena"}) in got
    assert ("is_a", {"instance": "Lena", "category": "sister"}) not in got  # whose sister is now said


def test_she_names_a_subject_named_by_a_kin_noun_in_a_speakers_turn():
    got = frames("Priya: My sister moved to Denver last year. She teaches yoga there.",
                 actor="Priya", participants=("Priya", "Dan"))
    assert ("teach", {"teacher": "Priya's sister", "subject": "yoga"}) in got


def test_a_pronoun_the_kin_noun_contradicts_stays_unresolved():
    got = frames("My brother moved to Denver last year. She teaches yoga there.", actor="Priya")
    assert not [f for f in got if f[0] == "teach"]
    assert ("relative", {"person": "Priya", "relative": "Priya's brother"}) in got
    assert [f[1]["mover"] for f in got if f[0] == "move"] == ["Priya's brother"]


def test_two_candidate_persons_leave_the_pronoun_unresolved():
    got = frames("Jonas met Lena in Paris. He works as a nurse at Charité.")
    assert not [f for f in got if f[0] == "work"]
    assert got == [("meet", {"agent": "Jonas", "person": "Lena", "location": "Paris"})]


def test_a_person_who_was_never_a_subject_is_no_candidate():
    got = frames("I went to the park with Jonas. He bought a bike.", actor="Priya")
    assert not [f for f in got if f[0] == "buy"]
    assert got == [("travel", {"traveler": "Priya", "destination": "park", "companion": "Jonas"})]


def test_he_in_the_first_sentence_stays_unresolved():
    assert frames("He works as a nurse at Charité. Jonas moved to Berlin in 2019.")[0][0] == "move"
    assert len(frames("He works as a nurse at Charité. Jonas moved to Berlin in 2019.")) == 1


def test_first_person_turns_are_unchanged():
    line = "Priya: I moved to Berlin in 2019. I work as a nurse at Charité now."
    with_rule = extract_offline({"text": line, "actor": "Priya", "participants": ["Priya", "Dan"]})
    without = extract_offline({"text": line, "actor": "Priya", "participants": ["Priya", "Dan"]},
                              pronouns=False)
    assert with_rule == without
    assert ("move", {"mover": "Priya", "destination": "Berlin"}) in frames(line, "Priya")


def test_the_people_of_the_conversation_are_no_candidates():
    # Ana is a participant: "she" here is someone of an earlier turn, not Ana.
    got = frames("Priya: Ana told me about the race. She won it.", actor="Priya", participants=("Priya", "Ana"))
    assert not [f for f in got if f[0] == "get"]  # "win" is of the get family
    assert got == [("tell", {"agent": "Ana", "person": "Priya", "topic": "race"})]
    named = frames("Priya: Ana told me about the race. Mira won it.", actor="Priya", participants=("Priya", "Ana"))
    assert ("get", {"recipient": "Mira", "item": "race"}) in named  # a named winner is read


@pytest.mark.parametrize("word", ["Charité", "Zoë", "café", "São"])
def test_a_word_with_letters_outside_ascii_is_one_token(word):
    assert [t.text for t in tokenize(f"She went to {word} today")] == ["She", "went", "to", word, "today"]


def test_a_capitalized_word_the_rules_did_not_read_may_be_a_second_person():
    # "Ravi" opens the sentence before an adverb and is read as no entity; "he" may still be Ravi.
    got = frames("Ravi excitedly told Ana about the concert. He was inspired by their energy.")
    assert not [f for f in got if f[0] in ("inspire", "help")]
    # Where the rules read Ravi as the subject, "he" is Ravi.
    plain = frames("Ravi bought tickets for the concert. He was inspired by their energy.")
    assert ("inspire", {"theme": "Ravi", "agent": "energy"}) in plain


@pytest.mark.xfail(strict=True, reason="an adverb between a sentence-opening name and its verb makes the name no "
                   "entity: the buyer is the lower-cased word 'ravi'")
def test_an_adverb_after_the_subject_keeps_the_name():
    got = frames("Ravi excitedly bought tickets for the concert.")
    assert ("buy", {"buyer": "Ravi", "item": "tickets", "purpose": "concert"}) in got


def test_a_name_read_as_a_place_but_named_as_a_subject_is_a_second_candidate():
    got = frames("Ravi lent a travel guide to Omar. Omar described his sailing season. "
                 "He mentioned his dream of crossing an ocean.")
    assert not [f for f in got if f[0] == "mention"]
    (lent,) = [arms for p, arms in got if p == "give"]
    assert lent["giver"] == "Ravi" and lent["item"] == "travel guide"


def test_a_common_word_opening_a_sentence_is_no_candidate():
    got = frames("Work has been hard for her recently. She had to find a cheaper flat in a rush.")
    assert not [f for f in got if f[0] == "find"]
    named = frames("Ana moved out in May. She had to find a cheaper flat in a rush.")
    assert [arms["finder"] for p, arms in named if p == "find"] == ["Ana"]


@pytest.mark.xfail(strict=True, reason="a common noun opening a sentence ('Money') is taken for a name, then for the "
                   "subject a later 'he' stands for: only closed-class, verb and evaluative words are known to be "
                   "capitalized because they open a sentence")
def test_a_common_noun_opening_a_sentence_is_no_subject():
    got = frames("Money has been tight for him lately. He had to sell his car in a rush.")
    assert not [f for f in got if f[0] == "sell"]


def test_a_named_pet_that_was_the_subject_is_the_one_candidate():
    got = frames("My dog Rex chased a squirrel this morning. He dug a hole in the garden.", actor="Mia")
    assert ("dig", {"agent": "Rex", "theme": "hole", "location": "garden"}) in got


def test_the_person_spoken_to_is_never_she():
    # "She" is the kitten: the person spoken to is "you", so no frame of the later sentences names Dan.
    got = frames("Ines: Wow, Dan! You are doing great things. I just rescued a tiny kitten from the street. "
                 "She makes me so happy!", actor="Ines", participants=("Ines", "Dan"))
    assert [f[0] for f in got if "Dan" in f[1].values()] == ["do"], got  # "You are doing great things" only
    assert ("adopt", {"adopter": "Ines", "adoptee": "kitten", "origin": "street"}) in got


def test_the_person_given_something_is_the_recipient_not_the_item():
    got = frames("Omar: Sure! I'll send you the playlist tonight. She showed me the trick.", actor="Omar",
                 participants=("Omar", "Lena"))
    assert ("give", {"giver": "Omar", "recipient": "Lena", "item": "playlist"}) in got
    idiom = frames("Lena: Joining the choir sounds fun - I should give it a go!", actor="Lena",
                   participants=("Lena", "Omar"))
    assert ("attend", {"attendee": "Lena", "event": "choir"}) in idiom
    assert not [arms for _p, arms in idiom if "recipient" in arms]  # "it" is no recipient


@pytest.mark.xfail(strict=True, reason="'give it a go' is read as give(giver, item=the thing tried): the idiom means "
                   "trying, nothing is handed to anyone")
def test_giving_something_a_go_gives_nothing():
    idiom = frames("Lena: Joining the choir sounds fun - I should give it a go!", actor="Lena",
                   participants=("Lena", "Omar"))
    assert not [arms for p, arms in idiom if p == "give"]
