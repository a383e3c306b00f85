"""Bounded access (M A.6 invariant 3): the evidence a recall inspects does not grow with the history.

A synthetic history where one person is in every record (a hub with hundreds of
rows and frames) is written with its graph files, every index is built, and
the recall's inspected anchors, frames and rows stay under the caps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.read import constants as C

ITEMS = ["lantern", "teapot", "kite", "clock", "scarf", "bowl", "camera", "guitar", "vase", "umbrella"]
PLACES = ["North Market", "Old Temple", "River Park", "Harbor Cafe", "Stone Bridge", "Maple Garden"]


def build_history(root, n: int) -> MemoryRepo:
    """``n`` episodic records in sources of 20 turns, each with a graph file binding Mia, an item and a place."""
    from memrepo.graph.model import AnchorRef, Arm, Frame, FrameLiteral, MemoryGraph, frame_iri, graph_path
    from memrepo.graph.rdf import memory_turtle

    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    files: dict[str, bytes] = {}
    mia = AnchorRef.make("default", "Mia", "person")
    for s in range(n // 20):
        day = f"2021-{1 + s // 28 % 12:02d}-{1 + s % 28:02d}"
        source_id = rec.make_source_id(namespace="default", origin="synthetic", position=str(s), content=str(s),
                                       mention_time=day)
        turns = []
        for t in range(20):
            i = s * 20 + t
            item, place = f"{ITEMS[i % 10]} {i % 97}", PLACES[i % 6]
            turns.append((f"D{s + 1}:{t + 1}", item, place, f"Mia: I bought the {item} at {place}, it was {100 + i} yen."))
        source = rec.Source(source_id, "conversation", day, tuple(rec.SourcePart(a, x, {"speaker": "Mia"})
                                                                   for a, _, _, x in turns))
        files[source.path] = rec.serialize_source(source)
        for anchor, item, place, text in turns:
            record = repo.new_record("episodic", text, mention_time=day, source=source_id, position=anchor,
                                     actor="Mia", sources=[f"{source_id}#{anchor}"])
            files[record.path] = rec.serialize(record)
            a_item, a_place = AnchorRef.make("default", item, "object"), AnchorRef.make("default", place, "location")
            arms = (Arm("buyer", mia), Arm("item", a_item), Arm("location", a_place))
            frame = Frame(frame_iri("default", "buy", arms, "episodic", record.id), "buy", arms,
                          (FrameLiteral("price", text.split("was ")[1].rstrip(".")),), "episodic", day, None, "done",
                          (record.id,))
            files[graph_path(record.id)] = memory_turtle(MemoryGraph(record.id, "episodic", [mia, a_item, a_place],
                                                                     [frame]))
    repo.store.commit(files, f"synthetic history of {n} records")
    return repo


@pytest.fixture(scope="module")
def hub_repo(tmp_path_factory):
    repo = build_history(tmp_path_factory.mktemp("bounds") / "memory", 800)
    yield repo
    repo.close()


@pytest.mark.parametrize("question", [
    "What did Mia buy at North Market?",            # single, the hub named with a relation
    "How many times did Mia buy something?",        # count: the largest budgets
    "When did Mia buy the kite 3?",
    "What kinds of things did Mia buy?",
])
def test_evidence_inspected_is_bounded_by_the_caps(hub_repo, question):
    result = hub_repo.recall(question, types=["episodic", "semantic"])
    assert result.fallback is None
    assert result.inspected["anchors"] <= C.ANCHOR_RECALL + C.EXACT_ANCHORS
    assert sum(a.kept for a in result.anchors) <= C.KEEP_ANCHORS
    assert result.inspected["frames"] <= C.FRAME_CAP
    assert result.inspected["rows"] <= C.BASE_POOL_CAP + C.TEXT_LANE + C.VECTOR_LANE + 4 * C.NEIGHBOUR_SEEDS
    assert len(result.facts) <= result.plan.cited_budget
    assert len(result.records) <= result.plan.capacity
    for fact in result.facts:
        assert fact.cites


def test_the_hub_has_more_rows_than_any_cap(hub_repo):
    """The bound above is real: without the caps, the hub alone would bring every record."""
    from memrepo.graph.reader import open_graph

    graph = open_graph(hub_repo.store, hub_repo.settings, hub_repo.store.head().decode())
    try:
        mia = graph.anchors_by_keys(["mia"])[0]
        assert mia.degree >= 800 > C.BASE_POOL_CAP + C.FRAME_CAP
        assert len(graph.frames_of([mia.iri], ["buy"], C.FRAME_CAP)) == C.FRAME_CAP
    finally:
        graph.close()


def test_relation_lane_filters_by_predicate_and_object_in_the_index_before_the_cap(hub_repo):
    """Mia (the hub) has 800 buy frames, more than the cap; the question names North Market, so the
    lane takes the market's buy frames in frame-id order, and the answer is among them."""
    import sqlite3

    from memrepo.graph.reader import open_graph

    result = hub_repo.recall("What did Mia buy at North Market?", types=["episodic"])
    graph = open_graph(hub_repo.store, hub_repo.settings, hub_repo.store.head().decode())
    try:
        market = graph.anchors_by_keys(["market north"])[0]
        db: sqlite3.Connection = graph.db
        expected = [r[0] for r in db.execute(
            "SELECT DISTINCT a.frame FROM arms a JOIN frame_facts f ON f.frame = a.frame AND f.prop = 'predicate' "
            "WHERE a.anchor = ? AND f.value = 'buy' ORDER BY a.frame LIMIT ?", (market.iri, C.FRAME_CAP))]
    finally:
        graph.close()
    assert 0 < len(expected) < 800
    assert sorted(f["frame"] for f in result.relation_lane) == expected
    assert sum(f["kept"] for f in result.relation_lane) == len(result.facts) <= result.plan.cited_budget
    assert any("North Market" in r.text for r in result.records[:5])


def test_no_query_of_a_recall_scans_an_index_table(hub_repo, monkeypatch):
    """Every SQL statement a recall runs searches an index (SQLite's own query plan says so), so its cost
    does not grow with the number of memories; only bounded sub-results and one-row probes are scanned."""
    import re
    import sqlite3

    from memrepo.index.base import forget_opened

    statements: dict[str, str] = {}
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        db = real_connect(database, *args, **kwargs)
        db.set_trace_callback(lambda sql, path=str(database): statements.setdefault(sql, path))
        return db

    monkeypatch.setattr(sqlite3, "connect", connect)
    forget_opened()  # readers kept open by earlier tests would run untraced
    from memrepo.index import live

    live.close_writers()  # and so would the SQLite connections kept between reads and writes
    for question in ["What did Mia buy at North Market?", "How many times did Mia buy something?",
                     "When did Mia buy the kite 3?"]:
        hub_repo.recall(question)
    assert {Path(p.split("?")[0]).name for p in statements.values()} >= {"graph.sqlite3", "provenance.sqlite3"}
    scans = []
    for sql, path in statements.items():
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")) or re.search(r"LIMIT 1\s*$", sql):
            continue
        db = real_connect(path, uri=path.startswith("file:"))
        try:
            plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql)]
        finally:
            db.close()
        scans += [(step, sql[:120]) for step in plan
                  if step.startswith("SCAN") and not re.match(r"SCAN (\(|\d+ CONSTANT ROWS|k$|a$|subquery)", step)]
    assert not scans, scans
