"""The anchor key κ and the admission gate (MIRIX-2.0 A.2, DESIGN.md §3)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrepo.graph.kappa import MAX_ANCHORS, admit, kappa, rejection


def test_paper_examples():
    assert kappa("Mobile App") == kappa("Mobile Apps")
    assert kappa("10 Gallons") != kappa("20 Gallons")
    assert kappa("Training") != kappa("Trains")


@pytest.mark.parametrize(
    "a, b",
    [
        ("The Kyoto Institute of Culture and Language", "kyoto institute culture language"),
        ("Tokyo-Station", "station tokyo"),
        ("Mia's bike", "bike, Mia s"),
        ("cities", "city"),
        ("boxes", "box"),
    ],
)
def test_same_key(a, b):
    assert kappa(a) == kappa(b)


@pytest.mark.parametrize("a, b", [("glass", "glas"), ("bus", "bu"), ("status", "statu"), ("art", "arts class")])
def test_conservative_singulars_keep_distinct_names_apart(a, b):
    assert kappa(a) != kappa(b)


def test_key_drops_the_eleven_function_words_and_sorts():
    assert kappa("a an the of and or in on at to for Zebra apple") == "apple zebra"


@settings(max_examples=400)
@given(st.text())
def test_kappa_is_idempotent(name):
    assert kappa(kappa(name)) == kappa(name)


words = st.lists(st.text(alphabet=st.characters(categories=("Ll", "Lu", "Nd")), min_size=1, max_size=12),
                 min_size=1, max_size=6)


@settings(max_examples=400)
@given(words, st.randoms(use_true_random=False))
def test_kappa_is_order_insensitive(tokens, rnd: random.Random):
    shuffled = list(tokens)
    rnd.shuffle(shuffled)
    assert kappa(" ".join(tokens)) == kappa(" ".join(shuffled))


@pytest.mark.parametrize("name", ["user", "User", "Users", "the user", "assistant", "advice", "details",
                                  "Information", "plan", "tips", "42"])
def test_gate_rejects_generic_terms_and_dialogue_roles(name):
    assert rejection(kappa(name)) is not None


@pytest.mark.parametrize("name", ["Mia", "Suica card", "Mount Fuji", "10 Gallons", "pottery course"])
def test_gate_admits_real_names(name):
    assert rejection(kappa(name)) is None


@pytest.mark.parametrize("kind", ["episodic", "semantic"])
def test_caps_per_record(kind):
    names = [f"Person {chr(65 + i)}" for i in range(30)]
    admitted, rejected = admit(names, kind)
    assert len(admitted) == MAX_ANCHORS[kind] == {"episodic": 16, "semantic": 18}[kind]
    assert admitted == names[: MAX_ANCHORS[kind]]
    assert all("cap" in reason for reason in rejected.values())


def test_admission_keeps_one_name_per_key_and_skips_rejected_before_counting():
    admitted, rejected = admit(["user", "Mobile Apps", "mobile app", "Mia"], "episodic")
    assert admitted == ["Mobile Apps", "Mia"]
    assert rejected == {"user": "dialogue-role pseudo-entity"}
