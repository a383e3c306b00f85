"""The graph follows every change: typed writes, plain `git rm`, hand edits, crashed ingests (issues 13, 21)."""

from __future__ import annotations

import json
import subprocess

from click.testing import CliRunner

from conftest import EXAMPLES
from memrepo.cli import cli
from memrepo.graph.model import graph_path

LENA = "Jonas's sister Lena lives in Hamburg and works as an architect."


def git(repo, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo.root, check=True, capture_output=True, text=True).stdout


def test_a_typed_remember_is_recallable_at_once_and_in_the_dream_frontier(repo):
    added = repo.remember(LENA, type="semantic")
    (lena,) = added.written
    assert repo.snapshot.exists(graph_path(lena)) and not added.warnings
    recalled = repo.recall("What does Lena work as?")
    assert recalled.fallback is None
    assert lena in recalled.record_ids and "Lena" in [a.name for a in recalled.anchors if a.kept]
    assert lena in repo.graph_anchor("Lena").anchor.semantic
    assert repo.dream(now="2026-01-01T00:00:00+00:00").frontier_records == 1


def test_cli_typed_remember_reaches_the_graph_like_ingest(repo):
    base = ["--repo", str(repo.root)]
    out = CliRunner().invoke(cli, [*base, "remember", LENA, "--type", "semantic", "--json"])
    assert out.exit_code == 0, out.output
    (lena,) = json.loads(out.stdout)["written"]
    out = CliRunner().invoke(cli, [*base, "recall", "What does Lena work as?", "--json"])
    result = json.loads(out.stdout)
    assert result["fallback"] is None and lena in [r["id"] for r in result["records"]]
    assert "graph is up to date" in CliRunner().invoke(cli, [*base, "index"]).output


def test_git_rm_costs_the_frame_not_the_graph_and_catch_up_removes_the_file(repo):
    repo.ingest([EXAMPLES / "conversation.txt"])
    (pixel,) = [r for r in repo.records("episodic") if "greyhound named Pixel" in r.text]
    git(repo, "rm", "-q", pixel.path)
    git(repo, "commit", "-q", "-m", "forget the dog by hand")
    assert repo.snapshot.exists(graph_path(pixel.id))  # left behind by git rm
    recalled = repo.recall("When did Jonas adopt a dog?")  # its adopt frame cites only the removed record
    assert recalled.fallback is None and recalled.records  # the graph still answers
    assert pixel.id in recalled.dangling and pixel.id not in recalled.record_ids
    assert all(pixel.id not in f.cites for f in recalled.facts)
    problems = repo.doctor()
    assert [p.path for p in problems] == [graph_path(pixel.id)] and "not in the repository" in problems[0].message
    result = repo.index_graph()
    assert result.removed == [graph_path(pixel.id)] and not repo.snapshot.exists(graph_path(pixel.id))
    assert repo.doctor() == [] and repo.recall("When did Jonas adopt a dog?").dangling == []


def test_the_next_write_catches_up_a_plain_git_rm_too(repo):
    repo.remember(LENA, type="semantic")
    repo.index_graph()
    (lena,) = repo.records("semantic")
    assert repo.snapshot.exists(graph_path(lena.id))
    git(repo, "rm", "-q", lena.path)
    git(repo, "commit", "-q", "-m", "by hand")
    repo.remember("Mia owns a Brompton bike.", type="semantic")
    assert not repo.snapshot.exists(graph_path(lena.id)) and repo.doctor() == []


def test_a_hand_edited_record_is_extracted_again(repo):
    repo.remember(LENA, type="semantic")
    (lena,) = repo.records("semantic")
    edited = (repo.root / lena.path).read_text().replace("Hamburg and works as an architect",
                                                         "Porto and works as a ceramicist")
    (repo.root / lena.path).write_text(edited)
    git(repo, "commit", "-q", "-am", "Lena moved")
    problems = repo.doctor()
    assert [p.path for p in problems] == [graph_path(lena.id)] and "older version" in problems[0].message
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "index", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["stale"] == [lena.id]
    names = {a.name for f in repo.graph_anchor("Lena").frames for a in f.arms}
    assert "Porto" in names and "Hamburg" not in names
    text = "\n".join(r.text for r in repo.recall("Where does Lena live?").records)
    assert "Porto" in text
    assert repo.doctor() == [] and repo.index_graph().pending == 0


def test_a_crashed_ingest_rerun_catches_the_graph_up(repo):
    whole = repo.ctx
    repo.ctx = whole.with_capabilities(after_commit={})  # killed after each record commit, before its graph commit
    first = repo.ingest([EXAMPLES / "conversation.txt"])
    assert first.record_ids and not list(repo.snapshot.walk("graph/frames"))
    repo.ctx = whole
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "ingest", str(EXAMPLES / "conversation.txt")])
    assert out.exit_code == 0 and "0 source(s) (5 already present)" in out.output
    indexed = [r for r in repo.records() if r.type in ("episodic", "semantic")]
    assert all(repo.snapshot.exists(graph_path(r.id)) for r in indexed)
    assert repo.doctor() == [] and repo.index_graph().pending == 0
