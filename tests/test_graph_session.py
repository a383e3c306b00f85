"""An ingest's graph session: the same graph files as one write at a time, without re-reading the index per write."""

from __future__ import annotations

import dataclasses
import subprocess

from conftest import EXAMPLES
from memrepo.api import MemoryRepo
from memrepo.graph.build import GraphSession, after_write
from memrepo.graph.index import GraphIndex
from memrepo.graph.reader import open_reader
from memrepo.write import hooks

CONVERSATION = EXAMPLES / "conversation.txt"


def trees(repo: MemoryRepo) -> list[str]:
    """The tree of every commit on HEAD, oldest first (commit ids differ: they hold the time)."""
    out = subprocess.run(["git", "-C", str(repo.root), "log", "--reverse", "--format=%T"], check=True,
                         capture_output=True, text=True)
    return out.stdout.split()


def index_names(repo: MemoryRepo) -> list[tuple[str, str]]:
    """The registry's names as a lone write reads them: from the graph index brought up to the tip."""
    reader = open_reader(repo.store, repo.settings)
    try:
        return reader.anchor_names()
    finally:
        reader.close()


def test_an_ingest_writes_the_same_repository_as_one_write_at_a_time(tmp_path, monkeypatch):
    lone = MemoryRepo.init(tmp_path / "lone")
    # The graph step without any session: not the table's own entry, so the ingest leaves it alone.
    lone.ctx = lone.ctx.with_capabilities(
        after_commit={**lone.ctx.capabilities.after_commit, "graph": lambda ctx, ids: after_write(ctx, ids)})
    lone.ingest([CONVERSATION])

    updates: list[int] = []
    real_update = GraphIndex.update
    monkeypatch.setattr(GraphIndex, "update", lambda self, *a: updates.append(1) or real_update(self, *a))
    batched = MemoryRepo.init(tmp_path / "batched")
    result = batched.ingest([CONVERSATION])

    assert len(result.commits) == 10 and len(trees(batched)) == 11  # a record and a graph commit per session
    assert trees(batched) == trees(lone)
    # The graph index was read once (before the first session), not brought up to date after each session.
    assert len(updates) == 1
    assert index_names(batched) == index_names(lone)


def test_a_session_sees_graph_files_another_writer_committed_between_its_writes(tmp_path):
    repo = MemoryRepo.init(tmp_path / "memory")
    plain = repo.ctx
    with hooks.batched(repo.ctx) as ctx:
        session = ctx.capabilities.after_commit["graph"]
        assert isinstance(session, GraphSession)
        repo.ctx = ctx
        repo.remember("Hiroshi Tanabe opened Menya-Kaiko, a ramen shop in Osaka.")
        repo.remember("Aiko Tanabe visited Menya Kaiko with Hiroshi on Sunday.")
        assert session.commit == repo.store.head().decode()  # its own graph commits: counts kept in memory
        assert session.counts.names() == index_names(repo)

        repo.ctx = plain  # another writer: a graph file the session did not write
        repo.remember("Kenji Mori adopted a grey cat named Miso in Kyoto.")
        assert session.commit != repo.store.head().decode()

        repo.ctx = ctx
        repo.remember("Miso the cat met Kenji's friend Hiroshi at Menya Kaiko.")
        assert session.commit == repo.store.head().decode()
        names = session.counts.names()
        assert any(name == "Kenji Mori" for name, _ in names)  # read again from the index, then kept
        assert names == index_names(repo)
    repo.close()


def test_a_reextracted_graph_file_makes_the_session_read_the_index_again(tmp_path):
    repo = MemoryRepo.init(tmp_path / "memory")
    with hooks.batched(repo.ctx) as ctx:
        session = ctx.capabilities.after_commit["graph"]
        repo.ctx = ctx
        added = repo.remember("Hiroshi Tanabe opened Menya-Kaiko, a ramen shop in Osaka.", type="episodic")
        path = repo.find_path(added.written[0])
        edited = repo.store.snapshot().read(path).replace(b"Osaka", b"Sapporo")
        repo.store.commit(lambda snap: {path: edited}, "Edit a record by hand")  # no graph step ran
        repo.remember("Aiko Tanabe flew to Nagoya.", type="episodic")  # re-extracts the edited record too
        assert session.commit is None  # a graph file was replaced: its old rows are not known in memory
        repo.remember("Kenji Mori stayed in Osaka.", type="episodic")
        assert session.commit == repo.store.head().decode()
        names = [name for name, _ in session.counts.names()]
        assert "Sapporo" in names and "Nagoya" in names
        assert session.counts.names() == index_names(repo)
    repo.close()


def test_the_graph_index_reads_the_same_rows_from_a_graph_file_without_an_rdflib_graph(tmp_path):
    from dataclasses import fields

    from memrepo.graph.rdf import file_rows, parse_turtle, rows

    repo = MemoryRepo.init(tmp_path / "memory")
    repo.ingest([CONVERSATION])
    snap = repo.store.snapshot()
    files = [(path, snap.read_blob(blob)) for path, blob in snap.walk("graph") if path.endswith(".ttl")]
    path, data = files[0]
    edited = b"# edited by hand\n" + data  # not the canonical layout: read by rdflib's parser, the same rows
    assert len(files) > 40
    for path, data in files + [(path, edited)]:
        old, new = rows(parse_turtle(data, path)), file_rows(data, path)
        for f in fields(old):
            assert sorted(getattr(new, f.name)) == sorted(getattr(old, f.name)), (path, f.name)
    repo.close()


WRITES = ["Okada repaired the brass telescope at Cedar Harbor.", "Okada met Hiroshi Tanabe at the Moon Garden.",
          "Hiroshi bought a red kite in Osaka.", "Mia Tanaka adopted a dog called Pixel.",
          "okada painted the paper kite.", "Tanabe sold the brass telescope.", "Pixel chased a cat at the moon garden."]


def test_writes_of_a_repository_kept_open_give_the_graph_files_of_writes_each_in_a_new_process(tmp_path):
    """A repository kept open (an MCP server) carries its graph step's state from one write to the next
    (``ctx.caches``), and still writes what a fresh process writing each one would."""
    kept = MemoryRepo.init(tmp_path / "kept")
    MemoryRepo.init(tmp_path / "fresh").close()
    try:
        for day, text in enumerate(WRITES, 1):
            kept.remember(text, type="episodic", mention_time=f"2024-03-{day:02d}")
            with MemoryRepo.open(tmp_path / "fresh") as fresh:  # nothing carried over
                fresh.remember(text, type="episodic", mention_time=f"2024-03-{day:02d}")
            if day == 3:  # another writer's graph file: the kept session must read the index again
                with MemoryRepo.open(tmp_path / "kept") as other, MemoryRepo.open(tmp_path / "fresh") as other2:
                    other.remember("Hiroshi Tanabe flew a blue kite.", type="episodic", mention_time="2024-03-20")
                    other2.remember("Hiroshi Tanabe flew a blue kite.", type="episodic", mention_time="2024-03-20")
        assert isinstance(kept.ctx.caches.get(hooks.SESSION_KEY), GraphSession)
        with MemoryRepo.open(tmp_path / "fresh") as fresh:
            assert trees(kept) == trees(fresh)
            assert index_names(kept) == index_names(fresh)
    finally:
        kept.close()
    assert hooks.SESSION_KEY not in kept.ctx.caches  # closed with its repository


def test_an_ingest_extracts_the_records_it_commits_without_parsing_them_back(tmp_path, monkeypatch):
    from memrepo import records as rec
    from memrepo.graph import build

    parsed: list[str] = []
    real_parse = rec.parse
    monkeypatch.setattr(build.rec, "parse", lambda data, path: parsed.append(path) or real_parse(data, path))
    repo = MemoryRepo.init(tmp_path / "memory")
    result = repo.ingest([CONVERSATION])
    graph_parses = [p for p in parsed if p.startswith(("episodic/", "semantic/"))]
    written = sum(result.records.get(t, 0) for t in ("episodic", "semantic"))
    # commit_records reads each file it writes back once (its check); the graph step took them as they were.
    assert written > 40 and len(graph_parses) == written
    snap = repo.store.snapshot()
    for record_id in result.record_ids:
        path = repo.find_path(record_id)
        if path.startswith(("episodic/", "semantic/")):  # every record got its graph file, following its blob
            graph = snap.read(f"graph/frames/{path.split('/', 1)[1].rsplit('.', 1)[0]}.ttl")
            assert graph is not None and snap.blob_id(path).encode() in graph
    repo.close()
