"""Entity types of the offline extractor: a bare capitalized name is typed by its context."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES
from memrepo.nlp.rules import extract_offline


def types_of(text: str) -> dict[str, str]:
    reply = extract_offline({"text": text, "actor": "Mia", "mention_time": "2023-06-20",
                             "participants": ["Mia", "Jonas"]})
    return {e["name"]: e["type"] for e in reply["entities"]}


def test_the_demo_conversation_climbs_fuji_a_place():
    line = next(t for t in (EXAMPLES / "conversation.txt").read_text().splitlines() if "climb Fuji" in t)
    assert types_of(line.split(": ", 1)[1])["Fuji"] == "location"


@pytest.mark.parametrize("text, name, type_", [
    ("Yuki climbed Fuji last summer.", "Fuji", "location"),
    ("We hiked Takao last Sunday.", "Takao", "location"),
    ("I want to visit Kasama next week.", "Kasama", "location"),
    ("I am planning to climb Mount Fuji on August 12.", "Mount Fuji", "location"),
    # the rule is the verb's, not the word's: people stay people
    ("I called Yuki yesterday.", "Yuki", "person"),
    ("I climbed with Yuki.", "Yuki", "person"),
    ("Yuki climbed Fuji last summer.", "Yuki", "person"),
])
def test_the_object_of_a_place_verb_is_a_location(text, name, type_):
    assert types_of(text)[name] == type_
