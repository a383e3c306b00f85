"""`memrepo forget`: records and the graph statements only they support leave the tip in one commit."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import NotFoundError, RepositoryError
from memrepo.graph.model import graph_path


def semantic(repo: MemoryRepo, text: str, day: str) -> str:
    return repo.add([repo.new_record("semantic", text, mention_time=day)]).written[0]


@pytest.fixture
def two_bikes(repo):
    """Two semantic records that support the same frame own(Mia, Brompton bike), both indexed."""
    kept = semantic(repo, "Mia owns a Brompton bike.", "2023-05-02")
    gone = semantic(repo, "Mia owns a Brompton bike and rides it to the pottery studio.", "2023-05-03")
    repo.index_graph()
    (own,) = [f for f in repo.graph_frames("Mia", "own")]
    assert own.citations == sorted([kept, gone])
    return kept, gone


def test_forget_removes_the_record_and_its_graph_file_in_one_commit(repo, two_bikes):
    kept, gone = two_bikes
    head = repo.store.head()
    result = repo.forget([gone])
    assert result.removed == [gone] and result.commit
    assert result.graph_files == [graph_path(gone)]
    assert repo.store.repo[result.commit.encode()].parents == [head]  # one commit
    snap = repo.snapshot
    assert not snap.exists(graph_path(gone)) and snap.exists(graph_path(kept))
    with pytest.raises(NotFoundError):
        repo.get(gone)
    # The shared frame keeps the other record's citation; the frames only ``gone`` supported are gone.
    (own,) = repo.graph_frames("Mia", "own")
    assert own.citations == [kept]
    assert all(gone not in f.citations for f in repo.graph_frames("Mia"))
    assert gone not in repo.graph_anchor("Mia").anchor.semantic
    # Indexes follow: search no longer finds it, recall never cites it, doctor is happy.
    assert gone not in [h.id for h in repo.search("pottery studio")]
    recalled = repo.recall("What does Mia own?")
    assert recalled.fallback is None and gone not in [r.id for r in recalled.records]
    assert repo.doctor() == []
    subprocess.run(["git", "fsck", "--strict"], cwd=repo.root, check=True, capture_output=True)
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo.root, capture_output=True,
                          text=True).stdout == ""


def test_unknown_id_is_an_error_and_nothing_is_written(repo, two_bikes):
    kept, _ = two_bikes
    head = repo.store.head()
    with pytest.raises(NotFoundError, match="se-2023-05-09-00000000"):
        repo.forget([kept, "se-2023-05-09-00000000"])
    assert repo.store.head() == head and repo.get(kept).id == kept
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", kept, "ep-2023-01-01-deadbeef"])
    assert result.exit_code == 1 and "ep-2023-01-01-deadbeef" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", "../etc/passwd"])
    assert result.exit_code == 1 and "not a memrepo id" in result.output
    assert repo.store.head() == head


def test_cli_forget_json_and_a_routed_remember_takes_its_note_along(repo):
    added = repo.remember("Jonas's sister Lena lives in Hamburg and works as an architect.")
    (source_id,) = added.sources
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", *added.written, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"commit", "removed", "sources", "graph_files", "paths"}
    assert data["removed"] == added.written and data["sources"] == [source_id]
    assert not repo.snapshot.exists(f"sources/{source_id[4:8]}/{source_id[9:11]}/{source_id}.md")
    assert [r.id for r in repo.records()] == [] and repo.doctor() == []
    assert "Hamburg" not in repo.graph_export("nt")


def test_a_conversation_source_stays_and_a_cited_source_cannot_go_alone(repo, tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("# Session 1: 2023-05-02\nMia: I bought a Suica card at Tokyo Station.\n"
                    "Jonas: My greyhound Pixel loves the park.\n")
    repo.ingest([chat])
    (source_id,) = [s.id for s in repo.sources()]
    episodic = [r.id for r in repo.records("episodic")]
    with pytest.raises(RepositoryError, match="still cited by"):
        repo.forget([source_id])
    result = repo.forget(episodic[:1])
    assert result.kept_sources == [source_id] and result.sources == []
    result = repo.forget([source_id, *[r.id for r in repo.records() if r.sources]])
    assert source_id in result.removed and repo.doctor() == []


# --- tombstones (issue 29) --------------------------------------------------------------------------------------------


def identify(repo: MemoryRepo, name: str, email: str) -> None:
    """The clone's Git identity, which memrepo's commits (and tombstones) carry."""
    subprocess.run(["git", "config", "user.name", name], cwd=repo.root, check=True)
    subprocess.run(["git", "config", "user.email", email], cwd=repo.root, check=True)


def test_a_forget_leaves_a_tombstone_with_who_when_why_and_never_the_text(repo):
    from memrepo.tombstones import parse_tombstone, tombstone_path

    identify(repo, "Mia Example", "mia@example.org")
    added = repo.remember("Mia's home address is 12 Example Lane, Springfield.")
    (record_id,), (note_id,) = added.written, added.sources
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", record_id, "--reason",
                                      "asked to forget her address", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tombstones"] == sorted([tombstone_path(record_id), tombstone_path(note_id)])
    snap = repo.snapshot
    for forgotten in (record_id, note_id):
        path = f"tombstones/{forgotten}.md"
        raw = snap.read(path)
        assert raw is not None and b"Example Lane" not in raw and b"Springfield" not in raw
        stone = parse_tombstone(raw, path)
        assert stone.id == forgotten and stone.active and stone.reason == "asked to forget her address"
        assert stone.forgotten_by == "Mia Example <mia@example.org>" and stone.forgotten_at.startswith("20")
    log = subprocess.run(["git", "log", "-1", "--format=%an <%ae>", "--", f"tombstones/{record_id}.md"],
                         cwd=repo.root, capture_output=True, text=True).stdout.strip()
    assert log == "Mia Example <mia@example.org>"
    assert repo.doctor() == []
    subprocess.run(["git", "fsck", "--strict"], cwd=repo.root, check=True, capture_output=True)


def test_forget_undo_edits_the_tombstone_keeps_it_and_restores_nothing(repo):
    from memrepo.tombstones import parse_tombstone

    record_id = semantic(repo, "Jonas keeps his spare key under the blue flowerpot.", "2023-05-04")
    repo.forget([record_id])
    identify(repo, "Jonas Example", "jonas@example.org")
    path = f"tombstones/{record_id}.md"
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", "--undo", record_id])
    assert result.exit_code == 0 and "not restored" in result.output, result.output
    stone = parse_tombstone(repo.snapshot.read(path), path)
    assert not stone.active and stone.undone_by == "Jonas Example <jonas@example.org>" and stone.undone_at
    with pytest.raises(NotFoundError):
        repo.get(record_id)  # the undo brings nothing back
    again = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", "--undo", record_id])
    assert again.exit_code == 1 and "undone already, by Jonas Example <jonas@example.org>" in again.output
    unknown = CliRunner().invoke(cli, ["--repo", str(repo.root), "forget", "--undo", "se-2023-05-09-00000000"])
    assert unknown.exit_code == 1 and "nothing was forgotten under this id" in unknown.output
    # Added again after the undo, then forgotten again: a fresh, active tombstone in the same file.
    assert semantic(repo, "Jonas keeps his spare key under the blue flowerpot.", "2023-05-04") == record_id
    repo.forget([record_id])
    assert parse_tombstone(repo.snapshot.read(path), path).active
    assert repo.doctor() == []


@pytest.mark.parametrize("front, message", [
    ("id: se-2023-05-04-1a2b3c4d\nforgotten_by: \"Mia <mia@example.org>\"\nforgotten_at: 2026-12-01T21:40:00+00:00\n"
     "text: her address\n", "unknown field 'text'"),
    ("id: se-2023-05-04-99999999\nforgotten_by: \"Mia <mia@example.org>\"\nforgotten_at: 2026-12-01T21:40:00+00:00\n",
     "belongs at tombstones/se-2023-05-04-99999999.md"),
    ("id: se-2023-05-04-1a2b3c4d\nforgotten_by: \"Mia <mia@example.org>\"\nforgotten_at: 2026-12-01T21:40:00+00:00\n"
     "undone_at: 2026-12-02T10:00:00+00:00\n", "needs both 'undone_by' and 'undone_at'"),
    ("id: se-2023-05-04-1a2b3c4d\nforgotten_by: Mia\nforgotten_at: 2026-12-01T21:40:00+00:00\n",
     "'forgotten_by' must be a commit author"),
    ("id: se-2023-05-04-1a2b3c4d\nforgotten_by: \"Mia <mia@example.org>\"\nforgotten_at: yesterday\n",
     "'forgotten_at' is not an ISO datetime"),
])
def test_a_tombstone_that_could_hide_text_or_lie_about_its_id_does_not_parse(front, message):
    from memrepo.errors import RecordError
    from memrepo.tombstones import Tombstone, parse_tombstone, serialize_tombstone

    path = "tombstones/se-2023-05-04-1a2b3c4d.md"
    with pytest.raises(RecordError, match=message):
        parse_tombstone(f"---\n{front}---\n".encode(), path)
    stone = Tombstone("se-2023-05-04-1a2b3c4d", "Mia <mia@example.org>", "2026-12-01T21:40:00+00:00", "why: this")
    assert parse_tombstone(serialize_tombstone(stone), path) == stone  # the writer's bytes read back
