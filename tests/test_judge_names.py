"""The canonicalization judge keeps apart names whose modifiers differ and joins a place to its titled name (issue 31).

Real repositories, the offline extractor and the offline judge: each test writes records one after another, so
later records are canonicalized against the anchors of earlier ones.
"""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.graph.canon import decide_offline


def anchors_after(repo: MemoryRepo, texts: list[str]) -> dict[str, str]:
    for n, text in enumerate(texts, 1):
        record = repo.new_record("episodic", text, actor="Mia", mention_time=f"2026-04-{n:02d}T09:00:00+00:00",
                                 source="judge", position=str(n))
        repo.add([record])
        repo.index_graph()
    return dict(repo.graph_anchor_names())


def test_a_modifier_keeps_two_things_apart(repo):
    got = anchors_after(repo, ["I bought a cast iron pan at the flea market.", "My iron pan needs oil."])
    assert {"cast iron pan", "iron pan"} <= set(got)


def test_a_place_with_its_region_is_not_the_bare_place(repo):
    got = anchors_after(repo, ["We drove to Portland, Maine for the lobster.", "Portland was rainy all week."])
    assert "Portland, Maine" in got and got["Portland, Maine"] == "location"
    assert "Portland" in got


def test_a_bare_place_name_joins_its_titled_name_when_the_text_says_what_the_title_names(repo):
    got = anchors_after(repo, ["Last summer we climbed Mount Olympus.", "The summit of Olympus was windy."])
    assert "Mount Olympus" in got and "Olympus" not in got


def test_a_bare_name_without_the_titles_words_stays_apart(repo):
    got = anchors_after(repo, ["We climbed Mount Kenya in June.", "Kenya was hot and the safari was long."])
    assert {"Mount Kenya", "Kenya"} <= set(got)


def test_the_judge_never_joins_names_with_different_numbers():
    items = [{"name": "Bus 12", "type": "object", "candidates": [{"name": "Bus 21", "type": "object"}]}]
    assert decide_offline({"entities": items})["decisions"] == [{"entity": "Bus 12", "choice": None}]


@pytest.mark.xfail(strict=True, reason="the anchor key of a name is its words only: 'Java' the language and 'Java' "
                   "the island share it, and the offline types cannot tell them apart (a bare name is a guessed "
                   "person, a language a concept), so a typed anchor needs the extractor to say which types a cue set")
def test_a_language_and_an_island_of_one_name_are_two_anchors(repo):
    got = anchors_after(repo, ["I learned Java at university.", "We sailed around the island of Java."])
    assert sum(1 for name in got if name.startswith("Java")) == 2
