"""`repo.search` and `memrepo search`: hybrid full text + vectors over real indexes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from conftest import make_record
from memrepo import records as rec
from memrepo.cli import cli
from memrepo.errors import MemrepoError
from memrepo.index.base import index_root

SOURCE = rec.Source(
    id="src-2023-05-02-bbbb2222",
    kind="conversation",
    mention_time="2023-05-02T14:00:00+09:00",
    parts=(
        rec.SourcePart("D1:1", "We took the shinkansen to Kyoto this morning", {"speaker": "Mia"}),
        rec.SourcePart("D1:2", "[shares a photo] the temple garden", {"speaker": "Jonas"}),
    ),
    title="Session 1",
)


@pytest.fixture
def filled(repo, no_after_write):  # the index layer alone: records as plain commits
    records = [
        make_record("episodic", "Mia bought a Suica card at Tokyo Station", event_time="2023-05-02",
                    sources=["src-2023-05-02-bbbb2222#D1:1"]),
        make_record("semantic", "Jonas lives in Lisbon", mention_time="2023-05-03"),
        make_record("semantic", "Mia's bicycle is a blue Brompton", mention_time="2023-05-03"),
        make_record("episodic", "Jonas adopted a puppy named Pixel", mention_time="2023-05-04", event_time="2023-05-04"),
    ]
    repo.add(records, sources=[SOURCE])
    return repo, {r.summary: r.id for r in records}


def test_full_text_match_comes_first_with_snippet_and_times(filled):
    repo, ids = filled
    hits = repo.search("Suica card")
    assert hits[0].id == ids["Mia bought a Suica card at Tokyo Station"]
    top = hits[0]
    assert top.type == "episodic" and top.event_time == "2023-05-02" and top.mention_time.startswith("2023-05-02")
    assert "**Suica**" in top.snippet and "text" in top.matched and top.score > 0


def test_vectors_find_a_paraphrase_with_no_shared_word(filled):
    repo, ids = filled
    hits = repo.search("dog", k=2)
    assert hits and hits[0].id == ids["Jonas adopted a puppy named Pixel"]
    assert hits[0].matched == ["vector"] and hits[0].bm25 is None and hits[0].cosine > 0.2


def test_hits_matched_both_ways_rank_above_one_way(filled):
    repo, ids = filled
    hits = repo.search("Where does Jonas live?", k=4)
    assert hits[0].id == ids["Jonas lives in Lisbon"]
    assert hits[0].matched == ["text", "vector"]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_type_filter(filled):
    repo, ids = filled
    hits = repo.search("Jonas", type="semantic")
    assert [h.id for h in hits] == [ids["Jonas lives in Lisbon"]] or all(h.type == "semantic" for h in hits)
    assert all(h.type == "semantic" for h in hits)
    with pytest.raises(MemrepoError, match="type: 'nope'"):
        repo.search("Jonas", type="nope")


def test_sources_are_searched_only_when_asked(filled):
    repo, _ = filled
    assert not any(h.type == "source" for h in repo.search("shinkansen Kyoto"))
    hits = repo.search("shinkansen Kyoto", sources=True)
    assert hits[0].id == "src-2023-05-02-bbbb2222#D1:1" and hits[0].type == "source"
    assert "Mia:" in hits[0].snippet or "**shinkansen**" in hits[0].snippet
    assert [h.id for h in repo.search("temple", type="source")] == ["src-2023-05-02-bbbb2222#D1:2"]


def test_records_are_scored_against_records_only(filled):
    """A record's BM25 weighs its words against the other records: adding a long source that repeats the
    word everywhere changes no record's score (the source parts are a collection of their own)."""
    repo, ids = filled
    before = {h.id: h.bm25 for h in repo.search("Suica card")}
    chatter = rec.Source(id="src-2023-05-09-cccc3333", kind="conversation", mention_time="2023-05-09T10:00:00+09:00",
                         parts=tuple(rec.SourcePart(f"D9:{i}", f"my Suica card, your Suica card, card number {i}",
                                                    {"speaker": "Mia"}) for i in range(1, 40)), title="Session 9")
    repo.add([], sources=[chatter])
    after = {h.id: h.bm25 for h in repo.search("Suica card")}
    assert after == before and before[ids["Mia bought a Suica card at Tokyo Station"]]
    assert any(h.type == "source" for h in repo.search("Suica card", sources=True))  # still searched when asked


def test_a_record_type_with_sources_finds_records_of_that_type_only(filled):
    repo, _ = filled
    hits = repo.search("shinkansen Kyoto", type="episodic", sources=True)
    assert hits and all(h.type == "episodic" for h in hits)


def test_search_at_an_older_commit(filled):
    repo, ids = filled
    old = repo.store.head().decode()
    lisbon = ids["Jonas lives in Lisbon"]
    repo.store.commit({rec.record_path(lisbon): None}, "Forget Lisbon")
    newer = make_record("semantic", "Jonas moved to Porto in June", mention_time="2023-06-01")
    repo.add([newer])
    assert lisbon not in [h.id for h in repo.search("Lisbon")]
    at_old = repo.search("Lisbon", at=old)
    assert at_old[0].id == lisbon
    assert newer.id not in [h.id for h in repo.search("Porto", at=old)]
    assert repo.search("Porto")[0].id == newer.id
    # The index for the older commit is kept for the next read, beside the current one.
    assert (index_root(repo.store, "fulltext") / "at" / old / ".done").exists()
    assert repo.search("Lisbon", at="HEAD~2")[0].id == lisbon
    with pytest.raises(MemrepoError, match="revision 'nope' not found"):
        repo.search("Lisbon", at="nope")


def test_a_read_catches_a_behind_index_up(filled):
    repo, _ = filled
    repo.search("anything")
    added = make_record("semantic", "Mia speaks Portuguese", mention_time="2023-05-09")
    repo.add([added])  # no hook ran in-process: the index is one commit behind
    assert repo.search("Portuguese")[0].id == added.id


def test_vault_values_are_never_indexed(repo):
    from memrepo.vault import generate_key

    repo.settings = replace(repo.settings, vault_key=generate_key())
    repo.add([repo.new_record("vault", "bank PIN 482913", summary="bank PIN")])
    hits = repo.search("482913")
    assert all("482913" not in h.snippet for h in hits)
    assert not [h for h in hits if h.bm25 is not None]
    assert repo.search("bank PIN")[0].type == "vault"


def test_bad_queries_are_explained(filled):
    repo, _ = filled
    with pytest.raises(MemrepoError, match="query: is empty"):
        repo.search("   ")
    with pytest.raises(MemrepoError, match="k: must be at least 1"):
        repo.search("x", k=0)
    # Query syntax characters are not errors.
    repo.search('what about "unbalanced ( quotes AND OR:')


def test_empty_repository_search(tmp_path):
    from memrepo.api import MemoryRepo

    with MemoryRepo.init(tmp_path / "m") as repo:
        assert repo.search("anything") == []


# --- the CLI -------------------------------------------------------------------------------


def run(repo, *args: str):
    return CliRunner().invoke(cli, ["--repo", str(repo.root), *args], catch_exceptions=False)


def test_cli_search_text_and_json(filled):
    repo, ids = filled
    result = run(repo, "search", "Suica card", "-k", "2")
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert ids["Mia bought a Suica card at Tokyo Station"] in first and "episodic" in first and "2023-05-02" in first
    result = run(repo, "search", "Brompton", "--type", "semantic", "--json")
    data = json.loads(result.output)
    assert data[0]["id"] == ids["Mia's bicycle is a blue Brompton"]
    assert {"id", "type", "score", "snippet", "event_time", "mention_time", "summary"} <= set(data[0])


def test_cli_search_errors_exit_1(filled):
    repo, _ = filled
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "search", ""])
    assert result.exit_code == 1 and "query: is empty" in result.output
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "search", "x", "--at", "nope"])
    assert result.exit_code == 1 and "revision 'nope' not found" in result.output
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "search", "x", "-k", "0"])
    assert result.exit_code == 2


def test_cli_reindex(filled):
    repo, _ = filled
    result = run(repo, "reindex", "--json")
    data = json.loads(result.output)
    assert data["commit"] == repo.store.head().decode()
    assert data["actions"]["fulltext"].startswith("rebuilt")
    result = run(repo, "reindex")
    assert "fulltext   current" in result.output
    result = run(repo, "reindex", "--full", "--json")
    data = json.loads(result.output)
    assert data["actions"]["vectors"] == "rebuilt 4" and data["embedded"] == 0 and data["cached"] == 4


def test_snippet_highlights_the_right_words_in_non_ascii_text(repo):
    repo.add([make_record(text="Müller und Zoë kauften in Tōkyō eine Suica Karte")])
    assert "eine **Suica** Karte" in repo.search("Suica")[0].snippet
    assert "Suica **Karte**" in repo.search("Karte")[0].snippet
