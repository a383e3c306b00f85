"""The stages of the offline language layer (memrepo/nlp), each on sentences written for this test."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from memrepo.errors import RepositoryError
from memrepo.nlp import Analyzer, analyzer
from memrepo.nlp.chunks import parse_np, settle_name_type
from memrepo.nlp.discourse import SPEAKER_RE, Discourse, split_speaker
from memrepo.nlp.literals import DIGIT_PATTERNS, LITERAL_PATTERNS, PATTERNS, find_literals, resolve_date
from memrepo.nlp.morphology import NUMBER_WORDS, kappa, lemma, number, singular
from memrepo.nlp.rules import RulesAnalyzer, extract_offline
from memrepo.nlp.tokens import split_sentences, tokenize

WHEN = date(2026, 3, 10)  # a Tuesday


def frames(text: str, actor: str = "Ana", participants: tuple[str, ...] = ("Ana", "Ben"),
           when: str = "2026-03-10") -> list[tuple[str, list[tuple[str, str]], dict[str, str], str | None, str]]:
    reply = extract_offline({"text": text, "actor": actor, "participants": list(participants), "mention_time": when})
    return [(f["predicate"], [(a["role"], a["entity"]) for a in f["arms"]],
             {lit["key"]: lit["value"] for lit in f["literals"]}, f["event_time"], f["status"]) for f in reply["frames"]]


def phrase(text: str, **variables: Any):
    ctx = Discourse({"actor": "Ana", "participants": ["Ana", "Ben"], **variables})
    sentence, lits = find_literals(text, None)
    np, _end, _carried = parse_np(ctx, tokenize(sentence), 0, lits)
    return np


# --- tokens and sentences ---------------------------------------------------------------------


def test_sentences_end_at_a_stop_and_a_capital_not_after_a_title():
    assert split_sentences("Dr. Reyes came by at noon. She fixed the boiler! Was it loud?") == [
        "Dr. Reyes came by at noon.", "She fixed the boiler!", "Was it loud?"]
    # The writers keep a closing quote with its sentence; the extractor drops it and splits before a digit.
    assert split_sentences('It is called "Low Tide." 3 copies sold.', keep_quotes=True) == [
        'It is called "Low Tide." 3 copies sold.']
    assert split_sentences('It is called "Low Tide." 3 copies sold.') == ['It is called "Low Tide.', "3 copies sold."]


def test_tokens_split_contractions_and_possessives():
    assert [t.low for t in tokenize("I'm sure Ana's bike can't wait")] == [
        "i", "am", "sure", "ana", "'s", "bike", "can", "not", "wait"]
    assert [t.low for t in tokenize("She's here and it's been a year")] == [
        "she", "is", "here", "and", "it", "has", "been", "a", "year"]
    (tok,) = [t for t in tokenize(find_literals("It costs $40.", None)[0]) if t.lit is not None]
    assert tok.lit == 0 and not tok.cap


# --- morphology ---------------------------------------------------------------------------------


@pytest.mark.parametrize("plural, single", [("cities", "city"), ("boxes", "box"), ("apps", "app"), ("children", "child"),
                                            ("glass", "glass"), ("status", "status"), ("bus", "bus"),
                                            ("shelves", "shelf"), ("knives", "knife"), ("gloves", "glove"),
                                            ("drives", "drive")])
def test_one_singularizer(plural, single):
    assert singular(plural) == single
    assert RulesAnalyzer().singular(plural) == single


@pytest.mark.parametrize("form, base", [("bought", "buy"), ("stopped", "stop"), ("hiked", "hike"), ("tunes", "tune"),
                                        ("carried", "carry"), ("focusing", "focus"), ("thing", "thing"),
                                        ("quoted", "quote"), ("squared", "square"), ("equipped", "equip")])
def test_lemmas(form, base):
    assert lemma(form) == base


def test_numbers_in_words_and_digits_read_from_one_table():
    assert number("seven") == 7 and number("1,200") == 1200 and number("a couple of") == 2 and number("half an") == 0.5
    assert NUMBER_WORDS["zero"] == 0 and NUMBER_WORDS["dozen"] == 12 and number("lots") is None
    # "zero" is in the table but is no count of things: "zero issues" leaves no count literal.
    assert [lit.key for lit in find_literals("We had zero issues and two delays.", None)[1]] == ["count"]


def test_the_anchor_key_is_built_from_the_same_singular():
    assert kappa("Mobile Apps") == kappa("the mobile app") == "app mobile"
    assert kappa("10 Gallons") != kappa("20 Gallons")


# --- literals and times ---------------------------------------------------------------------------


def test_values_are_cut_out_with_their_keys():
    text, lits = find_literals("We paid $45 for 3 tickets on March 3 at 7:30 pm, a 2-hour show.", WHEN)
    assert {(lit.key, lit.value) for lit in lits} == {
        ("price", "$45"), ("count", "3"), ("date", "2026-03-03"), ("time", "7:30 pm"), ("duration", "2 hours")}
    assert "$45" not in text and "March" not in text


@pytest.mark.parametrize("said, value", [
    ("yesterday", "2026-03-09"), ("last Friday", "2026-03-06"), ("next Friday", "2026-03-13"),
    ("two weeks ago", "2026-02-24"), ("last weekend", "2026-03-07/2026-03-08"), ("next month", "2026-04"),
    ("last June", "2025-06"), ("next spring", "2027-03/2027-05"), ("7th of March 2021", "2021-03-07"),
    ("in 2019", "2019"), ("2026-01-31", "2026-01-31"), ("February 30", None)])
def test_dates_resolve_against_the_day_they_were_said(said, value):
    assert resolve_date(said, WHEN) == value


def test_month_shifts_cross_the_year():
    assert resolve_date("next month", date(2026, 12, 15)) == "2027-01"
    assert resolve_date("last month", date(2026, 1, 15)) == "2025-12"


def test_patterns_are_chosen_by_name_and_digit_ones_are_flagged_by_name():
    assert PATTERNS["iso_date"].needs_digit and PATTERNS["price"].needs_digit and not PATTERNS["relative_date"].needs_digit
    assert [key for key, _ in LITERAL_PATTERNS] == [p.key for p in PATTERNS.values()]
    names = list(PATTERNS)
    assert {names[i] for i in DIGIT_PATTERNS} == {name for name, p in PATTERNS.items() if p.needs_digit}


# --- chunks and names ---------------------------------------------------------------------------


def test_an_appositive_makes_the_name_the_entity_and_the_noun_its_category():
    np = phrase("my cousin Ines")
    assert (np.name, np.type, np.category, np.possessor) == ("Ines", "person", "cousin", "Ana")
    np = phrase("a nurse called Rui Alves")
    assert (np.name, np.type, np.category) == ("Rui Alves", "person", "nurse")


@pytest.mark.parametrize("text, type_", [("Lake Geneva", "location"), ("Northwind Studios", "organization"),
                                         ("Mr. Okoro", "person"), ("the old ferry", "concept"),
                                         ("the night market", "location"), ("a pottery workshop", "event")])
def test_a_phrase_is_typed_by_its_head_or_its_name(text, type_):
    assert phrase(text).type == type_


def test_a_bare_name_is_a_place_after_a_place_preposition_else_a_guessed_person():
    np = phrase("Tavira")
    assert np.type == "name"
    assert settle_name_type(np, "in", "object") == "location"
    assert settle_name_type(np, None, "object") == "person?"


def test_judging_adjectives_are_dropped_from_the_front_of_a_phrase():
    assert phrase("a tiny little noodle bar").name == "noodle bar"


# --- clauses and roles ----------------------------------------------------------------------------


def test_a_clause_gives_its_predicate_roles_and_time():
    assert frames("Ana: I moved to Porto in 2021.") == [
        ("move", [("mover", "Ana"), ("destination", "Porto")], {"date": "2021"}, "2021", "done")]


def test_a_capacity_and_the_kinship_an_appositive_implies():
    got = frames("Ana: My brother Rui works as a nurse in Braga.")
    assert ("work", [("worker", "Rui"), ("capacity", "nurse"), ("location", "Braga")], {}, None, "done") in got
    assert ("relative", [("person", "Ana"), ("relative", "Rui")], {"relation": "brother"}, None, "done") in got


def test_passive_plans_and_states():
    assert frames("Ana: The mural was painted by Ines.")[0][:2] == ("paint", [("theme", "mural"), ("agent", "Ines")])
    (visit,) = frames("Ana: I'm planning to visit Kyoto next spring.")
    assert visit[0] == "visit" and visit[4] == "planned" and visit[3] == "2027-03/2027-05"
    (state,) = frames("Ana: I'm allergic to cats.")
    assert state[:3] == ("state", [("subject", "Ana"), ("theme", "cats")], {"quality": "allergic"})


def test_a_named_pet_is_an_instance_of_its_noun():
    got = frames("Ana: I adopted a puppy named Pip last Friday.")
    assert ("adopt", [("adopter", "Ana"), ("adoptee", "Pip")], {"date": "2026-03-06"}, "2026-03-06", "done") in got
    assert ("is_a", [("instance", "Pip"), ("category", "puppy")], {}, None, "done") in got


# --- discourse ------------------------------------------------------------------------------------


def test_one_speaker_pattern_for_parsers_rules_and_answers():
    from memrepo.write import parsers

    assert parsers._SPEAKER_RE is SPEAKER_RE
    assert split_speaker("Dr. Ana Ruiz: the scan is clear") == ("Dr. Ana Ruiz", "the scan is clear")
    assert split_speaker("Note to self from today: buy milk") == ("", "Note to self from today: buy milk")
    assert split_speaker("no speaker here") == ("", "no speaker here")


def test_an_opening_pronoun_names_the_one_person_the_earlier_sentence_named():
    got = frames("Ana: My sister Lena moved to Ghent. She works at a bakery.")
    assert ("work", [("worker", "Lena"), ("location", "bakery")], {}, None, "done") in got


def test_a_dialogue_act_names_the_person_spoken_to():
    assert frames("Ben: Thanks, Ana!", actor="Ben") == [("thank", [("agent", "Ben"), ("recipient", "Ana")], {}, None, "done")]
    (asked,) = frames("Ana: Where did you buy the lamp?")
    assert asked[:2] == ("ask", [("agent", "Ana"), ("topic", "lamp")])


# --- the analyzer -----------------------------------------------------------------------------------


def test_the_rules_analyzer_is_found_by_name_and_implements_the_protocol():
    rules = analyzer()
    assert isinstance(rules, RulesAnalyzer) and isinstance(rules, Analyzer) and rules.name == "rules"
    assert analyzer("rules") is rules
    assert rules.extract({"text": "Ana: I moved to Porto in 2021.", "actor": "Ana", "participants": ["Ana"],
                          "mention_time": "2026-03-10"})["frames"][0]["predicate"] == "move"
    assert rules.sentences("One. Two.") == ["One.", "Two."]
    assert rules.lemma("went") == "go" and rules.split_speaker("Ben: hi") == ("Ben", "hi")
    assert [lit.key for lit in rules.literals("at 9:15 am", WHEN)[1]] == ["time"]
    assert rules.question("Where does Lena work?").asks == "place"
    with pytest.raises(RepositoryError, match="unknown analyzer 'spacy'"):
        analyzer("spacy")


def test_names_fold_alike_and_a_geographic_title_needs_the_records_to_say_it():
    rules = analyzer()
    assert rules.name_words("Café-Lumière") == ("cafe", "lumiere")
    assert "".join(rules.name_words("Menya-Kaiko")) == "".join(rules.name_words("menya kaiko"))
    assert rules.geographic_title("Mt. Etna") == ("mt", "Etna")
    assert rules.geographic_title("Mountain View") is None and rules.geographic_title("Lake") is None
    assert rules.says_title("lake", ["We swam along the shore at dawn."])
    assert not rules.says_title("mount", ["We flew to Etna airport."])


def test_the_context_resolves_its_analyzer(tmp_path):
    from memrepo.api import MemoryRepo

    repo = MemoryRepo.init(tmp_path / "mem")
    ctx = repo.ctx
    assert ctx.analyzer.name == "rules"
    with pytest.raises(RepositoryError, match="unknown analyzer 'nope'"):
        _ = ctx.with_analyzer("nope").analyzer
