"""The planner asks for the predicates the extractor writes: every verb of the lexicon, both ways (issue 13)."""

from __future__ import annotations

import pytest

from memrepo.nlp import lexicon as lx
from memrepo.nlp.morphology import predicate_for
from memrepo.read.plan import plan, relations_of

AUXILIARIES = ("be", "do", "have", "get")  # the planner reads these as auxiliaries, never as the relation


def forms(lemma: str) -> list[str]:
    """The lemma, its irregular forms, and the regular past, -ing and third person."""
    out = [lemma] + sorted(k for k, v in lx.IRREGULAR.items() if v == lemma)
    if lemma.endswith("e"):
        out += [lemma + "d", lemma[:-1] + "ing", lemma + "s"]
    elif lemma.endswith("y") and lemma[-2] not in "aeiou":
        out += [lemma[:-1] + "ied", lemma + "ing", lemma[:-1] + "ies"]
    else:
        out += [lemma + "ed", lemma + "ing", lemma + "s"]
    return out


def asked(question: str) -> list[str]:
    return [r.family for r in relations_of(question)]


@pytest.mark.parametrize("lemma", sorted(set(lx.VERBS) - set(AUXILIARIES)))
def test_every_verb_form_asks_for_the_predicate_the_extractor_writes(lemma):
    wrong = {form: (predicate_for(form), asked(f"Did Mia {form} it?")) for form in forms(lemma)}
    assert {f: w for f, w in wrong.items() if w[0] not in w[1]} == {}


def test_phrasal_verbs_ask_for_what_the_extractor_reads_them_as():
    wrong = {}
    for (verb, particle), meaning in lx.PHRASAL.items():
        families = asked(f"Did Mia {verb} {particle} it?")
        if lx.predicate_of(meaning) not in families:
            wrong[f"{verb} {particle}"] = (lx.predicate_of(meaning), families)
    assert wrong == {}


def test_the_planner_asks_only_for_predicates_the_extractor_writes_and_vice_versa():
    written = {predicate_for(form) for lemma in lx.VERBS for form in forms(lemma)}
    requestable = {family for lemma in lx.VERBS for form in forms(lemma) for family in asked(f"Did Mia {form} it?")}
    assert requestable - written == set()
    # Only "do" cannot be asked for: in a question it is the auxiliary ("what did Mia do" asks nothing).
    assert written - requestable == {"do"}


def test_how_many_bowls_did_mia_make_finds_the_make_frame(repo):
    assert plan("How many bowls did Mia make?").families == ["make"]
    made = repo.remember("I made 2 bowls and a very crooked cup at the pottery course.", type="episodic",
                         actor="Mia", mention_time="2023-05-20T18:00:00+09:00").written[0]
    assert [f.predicate for f in repo.graph_frames("Mia", "make")] == ["make"]
    result = repo.recall("How many bowls did Mia make?")
    assert [entry["predicate"] for entry in result.relation_lane] == ["make"]
    (fact,) = result.facts
    assert fact.predicate == "make" and fact.cites == [made] and fact.literals.get("count") == "2"
