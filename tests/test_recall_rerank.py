"""Rerank's lexical term on real repositories: where a word sits in a turn does not change its weight."""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo

FILLER = ("the weather was grey and windy all week, so we stayed inside most days, read old books, "
          "played long card games and cooked big pots of soup for the neighbours")


@pytest.fixture(scope="module")
def two_turns(tmp_path_factory):
    root = tmp_path_factory.mktemp("rerank") / "memory"
    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    lead = repo.new_record("episodic", f"Mia: We bought sourdough at the station bakery, and {FILLER}.",
                           mention_time="2023-06-01T10:00:00", actor="Mia", source="test", position="1")
    late = repo.new_record("episodic", f"Mia: {FILLER[0].upper()}{FILLER[1:]}, and we bought sourdough at the station "
                           "bakery.", mention_time="2023-06-02T10:00:00", actor="Mia", source="test", position="2")
    repo.add([lead, late])
    from memrepo.graph.build import index_graph

    index_graph(repo.ctx)
    yield repo, lead.id, late.id
    repo.close()


def test_a_word_after_the_lead_of_a_turn_weighs_as_much_as_one_in_it(two_turns):
    """The summary of a turn is the lead of its text: counted as a field of its own, it made the answer of a long
    turn (said after a greeting) weigh less than the same words in a short turn that only echoes the question."""
    repo, lead, late = two_turns
    result = repo.recall("Where did Mia buy sourdough?", types=["episodic"])
    lex = {row.id: row.terms.get("lex", 0.0) for row in result.records}
    assert lead in lex and late in lex
    assert lex[late] == pytest.approx(lex[lead], rel=0.01)
