"""Rerank's lexical term on real repositories: where a word sits in a turn, and how long the turn is, cost little."""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo

FILLER = ("the weather was grey and windy all week, so we stayed inside most days, read old books, "
          "played long card games and cooked big pots of soup for the neighbours")


@pytest.fixture(scope="module")
def turns(tmp_path_factory):
    root = tmp_path_factory.mktemp("rerank") / "memory"
    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    lead = repo.new_record("episodic", f"Mia: We bought sourdough at the station bakery, and {FILLER}.",
                           mention_time="2023-06-01T10:00:00", actor="Mia", source="test", position="1")
    late = repo.new_record("episodic", f"Mia: {FILLER[0].upper()}{FILLER[1:]}, and we bought sourdough at the station "
                           "bakery.", mention_time="2023-06-02T10:00:00", actor="Mia", source="test", position="2")
    short = repo.new_record("episodic", "Mia: We bought sourdough at the station bakery.",
                            mention_time="2023-06-03T10:00:00", actor="Mia", source="test", position="3")
    repo.add([lead, late, short])
    from memrepo.graph.build import index_graph

    index_graph(repo.ctx)
    yield repo, lead.id, late.id, short.id
    repo.close()


def test_a_word_after_the_lead_of_a_turn_weighs_as_much_as_one_in_it(turns):
    """The summary of a turn is the lead of its text: counted as a field of its own, it made the answer of a long
    turn (said after a greeting) weigh less than the same words in a short turn that only echoes the question."""
    repo, lead, late, _short = turns
    result = repo.recall("Where did Mia buy sourdough?", types=["episodic"])
    lex = {row.id: row.terms.get("lex", 0.0) for row in result.records}
    assert lead in lex and late in lex
    assert lex[late] == pytest.approx(lex[lead], rel=0.01)


def test_a_long_turn_keeps_most_of_the_weight_of_a_short_one_with_the_same_words(turns):
    """A conversation turn is the unit: the long one that answers after small talk ("...and we bought sourdough at
    the station bakery") is not worth half the short one that says only that. Tantivy's length normalisation (b
    0.75) gave it 0.62 of the short turn's lexical score; rerank's (R_BM25_B 0.4) gives it 0.78."""
    repo, lead, _late, short = turns
    result = repo.recall("Where did Mia buy sourdough?", types=["episodic"])
    lex = {row.id: row.terms.get("lex", 0.0) for row in result.records}
    assert lex[lead] / lex[short] > 0.7
