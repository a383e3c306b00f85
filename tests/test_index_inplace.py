"""The graph and provenance indexes are updated in place (issue 18): no copy per commit, snapshots, crash safety."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.graph.index import DB_FILE, INDEX_NAME
from memrepo.graph.reader import GraphReader
from memrepo.graph.model import AnchorRef, Arm, Frame, MemoryGraph, frame_iri, graph_path
from memrepo.graph.rdf import memory_turtle
from memrepo.index.base import Indexes, index_root, read_state

KILLED = -9


def graph_files(repo: MemoryRepo, start: int, n: int) -> dict[str, bytes]:
    """``n`` graph files, each a purchase of its own numbered lantern by Mia."""
    files = {}
    day = "2023-05-01"
    for i in range(start, start + n):
        record = repo.new_record("episodic", f"Mia bought lantern {i} at Harbor Market", mention_time=day,
                                 source="test", position=str(i))
        who, thing = AnchorRef.make("default", "Mia", "person"), AnchorRef.make("default", f"lantern {i}", "object")
        arms = (Arm("buyer", who), Arm("item", thing))
        frame = Frame(frame_iri("default", "buy", arms, "episodic", day), "buy", arms, (), "episodic", day, day,
                      "done", (record.id,))
        files[graph_path(record.id)] = memory_turtle(MemoryGraph(record.id, "episodic", [who, thing], [frame]))
    return files


def read_graph(repo: MemoryRepo, commit: str | None = None) -> dict[str, int]:
    indexes = Indexes(repo.store, repo.settings)
    try:
        folder = indexes.folder(INDEX_NAME, commit)
    finally:
        indexes.close()
    with GraphReader(folder / DB_FILE) as reader:
        return {"files": reader.counts()["files"], "lanterns": len(reader.find_anchors("lantern 59"))}


def commit(repo: MemoryRepo, files: dict[str, bytes]) -> str:
    return repo.store.commit(files, f"{len(files)} graph files").decode()


@pytest.fixture
def graph_repo(tmp_path):
    repo = MemoryRepo.init(tmp_path / "memory")
    commit(repo, graph_files(repo, 0, 50))
    Indexes(repo.store, repo.settings).update(names=[INDEX_NAME])
    yield repo
    repo.close()


def test_a_commit_updates_the_published_database_in_place(graph_repo):
    root = index_root(graph_repo.store, INDEX_NAME)
    before = read_state(root)
    inode = (root / before.generation / DB_FILE).stat().st_ino
    head = commit(graph_repo, graph_files(graph_repo, 50, 1))
    report = Indexes(graph_repo.store, graph_repo.settings).update(names=[INDEX_NAME])
    after = read_state(root)
    assert report.actions[INDEX_NAME] == "updated 1"
    assert (after.commit, after.generation) == (head, before.generation)  # no new generation, no copy
    assert (root / after.generation / DB_FILE).stat().st_ino == inode
    assert sorted(p.name for p in root.glob("g*")) == [before.generation]
    assert read_graph(graph_repo)["files"] == 51


def test_a_reader_keeps_its_snapshot_while_a_writer_updates(graph_repo):
    first = graph_repo.store.head().decode()
    folder = index_root(graph_repo.store, INDEX_NAME) / read_state(index_root(graph_repo.store, INDEX_NAME)).generation
    with GraphReader(folder / DB_FILE) as old:
        commit(graph_repo, graph_files(graph_repo, 50, 20))
        Indexes(graph_repo.store, graph_repo.settings).update(names=[INDEX_NAME])
        assert old.counts()["files"] == 50 and old.find_anchors("lantern 59") == []
        with GraphReader(folder / DB_FILE) as new:
            assert new.counts()["files"] == 70 and len(new.find_anchors("lantern 59")) == 1
    # a read of the older commit gets an index for that commit, never the live one
    assert read_graph(graph_repo, first) == {"files": 50, "lanterns": 0}
    assert read_graph(graph_repo) == {"files": 70, "lanterns": 1}


KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import memrepo.graph.index as graph_index
    import memrepo.index.base as base
    from memrepo.api import MemoryRepo

    point = sys.argv[2]
    if point == "mid-transaction":  # after 10 of the new files' rows went into the open transaction
        insert, count = graph_index._insert_file, [0]
        def killing_insert(*args):
            count[0] += 1
            if count[0] == 10:
                os.kill(os.getpid(), signal.SIGKILL)
            return insert(*args)
        graph_index._insert_file = killing_insert
    else:  # after the database transaction, before CURRENT names the new commit
        def killing_write_state(root, state):
            os.kill(os.getpid(), signal.SIGKILL)
        base._write_state = killing_write_state
    repo = MemoryRepo.open(Path(sys.argv[1]), environ={})
    base.Indexes(repo.store, repo.settings).update(names=["graph"])
""")


@pytest.mark.parametrize("point", ["mid-transaction", "after-transaction"])
def test_a_writer_killed_mid_update_leaves_an_index_readers_use(graph_repo, point):
    first = graph_repo.store.head().decode()
    head = commit(graph_repo, graph_files(graph_repo, 50, 30))
    killed = subprocess.run([sys.executable, "-c", KILLER, str(graph_repo.root), point], capture_output=True,
                            text=True, timeout=120)
    assert killed.returncode == KILLED, killed.stderr
    root = index_root(graph_repo.store, INDEX_NAME)
    state = read_state(root)
    assert state.commit == first  # CURRENT was not rewritten in either case
    recorded = Indexes(graph_repo.store, graph_repo.settings).index(INDEX_NAME).recorded_commit(root / state.generation)
    assert recorded == (first if point == "mid-transaction" else head)
    # the reader of the old commit and the reader of HEAD both get their commit's answer
    assert read_graph(graph_repo, first) == {"files": 50, "lanterns": 0}
    assert read_graph(graph_repo) == {"files": 80, "lanterns": 1}
    assert read_state(root).commit == head and read_state(root).generation == state.generation


def test_paths_are_stored_once_and_label_counts_follow_adds_and_removals(graph_repo):
    """Rows name their file by id; anchor_labels (what canonicalization reads per write) equals a full count."""
    import sqlite3

    removed = sorted(graph_files(graph_repo, 0, 50))[:5]
    commit(graph_repo, {**graph_files(graph_repo, 50, 5), **{path: None for path in removed}})
    Indexes(graph_repo.store, graph_repo.settings).update(names=[INDEX_NAME])
    state = read_state(index_root(graph_repo.store, INDEX_NAME))
    db = sqlite3.connect(index_root(graph_repo.store, INDEX_NAME) / state.generation / DB_FILE)
    columns = {table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
               for table in ("anchor_facts", "frame_facts", "arms", "literals", "citations", "mentions")}
    assert all("path" not in names and "file" in names for names in columns.values()), columns
    counted = db.execute("SELECT anchor, prop, value, count(*) FROM anchor_facts WHERE prop IN ('label', 'entityType') "
                         "GROUP BY anchor, prop, value ORDER BY 1, 2, 3").fetchall()
    kept = db.execute("SELECT anchor, prop, value, n FROM anchor_labels ORDER BY 1, 2, 3").fetchall()
    db.close()
    assert kept == counted and len([v for _a, p, v, _n in kept if p == "label" and v.startswith("lantern")]) == 50
    assert read_graph(graph_repo)["files"] == 50


def test_a_long_lived_process_writes_to_the_database_that_is_there_now_not_one_it_opened_before(tmp_path):
    """Writer connections are kept open between commits (memrepo.index.live.writer); a database
    rebuilt or replaced at the same path since must get the rows, never the old file's connection."""
    import sqlite3

    from memrepo.index import live

    path = tmp_path / "db.sqlite3"
    with live.writer(path) as db:
        with live.transaction(db, "a" * 40):
            db.execute("CREATE TABLE t (v)")
            db.execute("INSERT INTO t VALUES (1)")
    kept = db
    path.unlink()  # `reindex --full`, or another process, put a new database here
    (tmp_path / "db.sqlite3-wal").unlink(missing_ok=True)
    with live.writer(path) as db:
        assert db is not kept
        with live.transaction(db, "b" * 40):
            db.execute("CREATE TABLE t (v)")
            db.execute("INSERT INTO t VALUES (2)")
    assert live.recorded_commit(path) == "b" * 40
    reader = sqlite3.connect(path)
    assert reader.execute("SELECT v FROM t").fetchall() == [(2,)]
    reader.close()

    with live.writer(path) as db:
        assert db is not kept  # unchanged file: the same connection is used again
        again = db
    with live.writer(path) as db:
        assert db is again
    with pytest.raises(sqlite3.OperationalError):
        with live.writer(path) as db:
            with live.transaction(db, "c" * 40):
                db.execute("INSERT INTO missing VALUES (3)")
    with live.writer(path) as db:
        assert db is not again  # a connection whose use failed is closed, not kept
    assert live.recorded_commit(path) == "b" * 40


def test_a_connection_kept_between_reads_sees_each_read_as_one_snapshot_of_the_latest_commit(tmp_path):
    """Readers keep their connection between reads (memrepo.index.live.end_snapshot); each read is still
    one snapshot, and the next read starts at the latest committed state, never at the one before."""
    from memrepo.index import live

    path = tmp_path / "db.sqlite3"
    with live.writer(path) as db:
        with live.transaction(db, "a" * 40):
            db.execute("CREATE TABLE t (v)")
            db.execute("INSERT INTO t VALUES (1)")
    first = live.open_snapshot(path)
    assert first.execute("SELECT count(*) FROM t").fetchone() == (1,)
    with live.writer(path) as db, live.transaction(db, "b" * 40):
        db.execute("INSERT INTO t VALUES (2)")
    assert first.execute("SELECT count(*) FROM t").fetchone() == (1,)  # the read's own snapshot
    live.end_snapshot(path, first)
    second = live.open_snapshot(path)
    assert second is first  # the same connection, kept
    assert second.execute("SELECT count(*) FROM t").fetchone() == (2,)  # at the latest commit
    live.end_snapshot(path, second)
    path.unlink()  # replaced by another database: a kept connection must not read the old one
    (tmp_path / "db.sqlite3-wal").unlink(missing_ok=True)
    with live.writer(path) as db, live.transaction(db, "c" * 40):
        db.execute("CREATE TABLE t (v)")
    third = live.open_snapshot(path)
    assert third is not first and third.execute("SELECT count(*) FROM t").fetchone() == (0,)
    live.end_snapshot(path, third)
    live.close_writers(under=tmp_path)
