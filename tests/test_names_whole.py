"""Names are never cut (issue 31): an anchor is the whole name a sentence says, with its digits and without
the word after it; through the analyzer of memrepo/nlp and through a real repository's graph."""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.nlp import analyzer
from memrepo.nlp.literals import find_literals
from memrepo.nlp.tokens import tokenize

#: (sentence, the whole name it says, a cut name it must not give)
WHOLE = [
    ("We moved the nightly jobs to db-stage-2 on Monday.", "db-stage-2", "db-stage-"),
    ("The bucket lives in region eu-west-1 now.", "eu-west-1", "region eu-west-"),
    ("The build runs on runner-7b since the upgrade.", "runner-7b", "runner-"),
    ("I bought a steel kettle next to the station.", "steel kettle", "steel kettle next"),
    ("Mia met Jonas at Café Lumière every Friday.", "Café Lumière", "Café Lumière every"),
    ("Ines left her umbrella close to the door.", "umbrella", "umbrella close"),
    ("I bought a stainless steel bottle at the market in Paris, Texas.", "Paris, Texas", "Paris"),
    ("Our cousins drove up from Portland, Maine, last summer.", "Portland, Maine", "Portland"),
    ("The training job needs two p4.24xlarge machines.", "p4.24xlarge machines", "xlarge machines"),
    ("The printer moved to the 3rd floor.", "3rd floor", "rd floor"),
    ("Our cat naps on the shelf above the heater.", "shelf", "shelf above"),
]


@pytest.mark.parametrize("sentence", ["We flew from Lisbon, Porto and Faro to Madrid.", "I am flying to Paris, Ben!",
                                      "In Paris, Ana met an old friend."])
def test_a_list_a_vocative_or_a_clause_after_a_place_is_no_part_of_its_name(sentence):
    assert not [n for n in names(sentence) if "," in n], names(sentence)


def names(text: str) -> list[str]:
    reply = analyzer().extract({"text": text, "actor": "Ana", "participants": ["Ana", "Ben"],
                                "mention_time": "2026-03-10T09:00:00"})
    return [e["name"] for e in reply["entities"]]


@pytest.mark.parametrize(("sentence", "whole", "cut"), WHOLE)
def test_the_analyzer_keeps_a_name_whole(sentence, whole, cut):
    found = names(sentence)
    assert cut not in found, found
    assert any(whole == n or n.endswith(" " + whole) for n in found), found


def test_a_digit_glued_to_a_hyphenated_name_is_part_of_it_not_a_literal():
    sentence, lits = find_literals("Move db-stage-2 to eu-west-1 by 3 pm.", None)
    assert [(lit.key, lit.surface) for lit in lits] == [("time", "3 pm")]
    assert [t.text for t in tokenize(sentence)][:4] == ["Move", "db-stage-2", "to", "eu-west-1"]


def test_dates_and_durations_after_a_hyphen_are_still_literals():
    _, lits = find_literals("The outage in mid-2024 lasted a 3-hour shift.", None)
    assert ("date", "2024") in [(lit.key, lit.value) for lit in lits]
    assert ("duration", "3 hours") in [(lit.key, lit.value) for lit in lits]


def test_a_repository_graph_anchors_whole_names(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    for i, (sentence, _whole, _cut) in enumerate(WHOLE):
        repo.add([repo.new_record("semantic", sentence, mention_time=f"2026-03-{10 + i:02d}T09:00:00")])
    repo.index_graph()
    from memrepo.graph.reader import open_reader

    reader = open_reader(repo.store, repo.settings)
    try:
        anchored = {name for name, _type in reader.anchor_names()}
    finally:
        reader.close()
    for _sentence, whole, cut in WHOLE:
        assert cut not in anchored, (cut, sorted(anchored))
        assert any(whole == n or n.endswith(" " + whole) for n in anchored), (whole, sorted(anchored))
    assert repo.graph_anchor("db-stage-2").anchor.name == "db-stage-2"
    repo.close()


# --- a place and its geographic title ---------------------------------------------------------


def _anchors(tmp_path, *sentences: str) -> list[tuple[str, str]]:
    from memrepo.graph.reader import open_reader

    repo = MemoryRepo.init(tmp_path / "m")
    for i, sentence in enumerate(sentences):
        repo.add([repo.new_record("semantic", sentence, mention_time=f"2026-03-{10 + i:02d}T09:00:00")])
    repo.index_graph()
    reader = open_reader(repo.store, repo.settings)
    try:
        return sorted(reader.anchor_names())
    finally:
        reader.close()
        repo.close()


def test_a_bare_place_name_joins_its_titled_anchor_when_the_text_says_what_the_title_says(tmp_path):
    anchors = _anchors(tmp_path, "We walked around the base of Mount Fuji in August.",
                       "Mia wants to climb Fuji again next year.")
    assert ("Mount Fuji", "location") in anchors and not [n for n, _ in anchors if n == "Fuji"], anchors


def test_a_title_that_names_another_place_keeps_the_two_apart(tmp_path):
    anchors = _anchors(tmp_path, "Mia saw Mount Kenya from the plane.", "Mia went on a safari in Kenya.")
    assert ("Mount Kenya", "location") in anchors and ("Kenya", "location") in anchors, anchors


def test_the_offline_canonicalizer_takes_the_titled_place_only_with_support():
    from memrepo.graph.canon import decide_offline

    cands = [{"name": "Lake Bled", "cosine": 0.8, "type": "location"}]
    item = {"name": "Bled", "type": "location", "candidates": cands}
    [on_shore] = decide_offline({"entities": [item], "text": "We swam off the shore at Bled."})["decisions"]
    assert on_shore == {"entity": "Bled", "choice": "Lake Bled"}
    [in_town] = decide_offline({"entities": [item], "text": "We took the bus to Bled."})["decisions"]
    assert in_town["choice"] is None
    [person] = decide_offline({"entities": [{**item, "type": "person"}], "text": "Bled swam off the shore."})["decisions"]
    assert person["choice"] is None
