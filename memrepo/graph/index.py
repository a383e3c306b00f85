"""The graph index: anchors, frames, arms, literals, citations and the owl:sameAs closure in SQLite.

Derived and disposable (DESIGN.md §5): built from the Turtle files under
``graph/`` and brought to a new commit by applying the tree diff through the
shared mechanism of :mod:`memrepo.index.base` (one file changed, one file's
rows replaced). Lookups by anchor, by predicate and by citation use indexes;
none scans the graph. A file that is not valid Turtle is recorded in
``problems`` and skipped; it never breaks a read.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from memrepo.graph import beliefs
from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER
from memrepo.graph.rdf import TurtleError, file_rows, recorded_blob
from memrepo.index import live
from memrepo.index.base import Change, DerivedIndex, UpdateContext

DB_FILE = "graph.sqlite3"
INDEX_NAME = "graph"

SCHEMA = """
CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, blob TEXT NOT NULL);
CREATE TABLE anchor_facts (file INTEGER NOT NULL, anchor TEXT NOT NULL, prop TEXT NOT NULL, value TEXT NOT NULL, n3 TEXT NOT NULL);
CREATE INDEX anchor_facts_anchor ON anchor_facts (anchor, prop);
CREATE INDEX anchor_facts_value ON anchor_facts (prop, value);
CREATE INDEX anchor_facts_file ON anchor_facts (file);
CREATE TABLE anchor_labels (anchor TEXT NOT NULL, prop TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL,
                            PRIMARY KEY (anchor, prop, value)) WITHOUT ROWID;
CREATE TABLE frame_facts (file INTEGER NOT NULL, frame TEXT NOT NULL, prop TEXT NOT NULL, value TEXT NOT NULL, n3 TEXT NOT NULL);
CREATE INDEX frame_facts_frame ON frame_facts (frame, prop, value);
CREATE INDEX frame_facts_value ON frame_facts (prop, value);
CREATE INDEX frame_facts_file ON frame_facts (file);
CREATE TABLE arms (file INTEGER NOT NULL, frame TEXT NOT NULL, arm TEXT NOT NULL, role TEXT NOT NULL, anchor TEXT NOT NULL,
                   predicate TEXT);
CREATE INDEX arms_anchor ON arms (anchor, frame, predicate);
CREATE INDEX arms_anchor_predicate ON arms (anchor, predicate, frame);
CREATE INDEX arms_frame ON arms (frame, arm, role, anchor);
CREATE INDEX arms_file ON arms (file);
CREATE TABLE literals (file INTEGER NOT NULL, frame TEXT NOT NULL, lit TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, n3 TEXT NOT NULL);
CREATE INDEX literals_frame ON literals (frame, key, value);
CREATE INDEX literals_file ON literals (file);
CREATE TABLE citations (file INTEGER NOT NULL, frame TEXT NOT NULL, memory TEXT NOT NULL);
CREATE INDEX citations_memory ON citations (memory);
CREATE INDEX citations_frame ON citations (frame, memory);
CREATE INDEX citations_file ON citations (file);
CREATE TABLE same_as (file INTEGER NOT NULL, alias TEXT NOT NULL, rep TEXT NOT NULL);
CREATE INDEX same_as_file ON same_as (file);
CREATE TABLE closure (anchor TEXT PRIMARY KEY, rep TEXT NOT NULL);
CREATE INDEX closure_rep ON closure (rep);
CREATE TABLE anchor_info (anchor TEXT PRIMARY KEY, name TEXT NOT NULL, key TEXT NOT NULL, type TEXT NOT NULL,
                          degree INTEGER NOT NULL);
CREATE INDEX anchor_info_key ON anchor_info (key);
CREATE TABLE mentions (anchor TEXT NOT NULL, seq INTEGER NOT NULL, memory TEXT NOT NULL, file INTEGER NOT NULL,
                       PRIMARY KEY (anchor, seq)) WITHOUT ROWID;
CREATE INDEX mentions_file ON mentions (file);
CREATE INDEX mentions_seq ON mentions (seq);
CREATE TABLE other (file INTEGER NOT NULL, s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL);
CREATE INDEX other_file ON other (file);
CREATE TABLE problems (path TEXT PRIMARY KEY, line INTEGER, message TEXT NOT NULL);
CREATE TABLE record_blobs (file INTEGER NOT NULL, memory TEXT NOT NULL, blob TEXT NOT NULL);
CREATE INDEX record_blobs_memory ON record_blobs (memory, blob);
CREATE INDEX record_blobs_file ON record_blobs (file);
CREATE TABLE belief_occurrences (file INTEGER NOT NULL, slot TEXT NOT NULL, holder TEXT NOT NULL, subkey TEXT NOT NULL,
                                 frame TEXT NOT NULL, value TEXT NOT NULL, time TEXT NOT NULL, memory TEXT NOT NULL);
CREATE INDEX belief_occurrences_holder ON belief_occurrences (holder, slot);
CREATE INDEX belief_occurrences_file ON belief_occurrences (file);
CREATE TABLE beliefs (slot TEXT NOT NULL, holder TEXT NOT NULL, subkey TEXT NOT NULL, frame TEXT NOT NULL,
                      value TEXT NOT NULL, valid_from TEXT NOT NULL, valid_until TEXT, superseded_by TEXT NOT NULL,
                      conflicts TEXT NOT NULL, memories TEXT NOT NULL);
CREATE INDEX beliefs_holder ON beliefs (holder, slot);
CREATE INDEX beliefs_frame ON beliefs (frame);
"""
#: Tables whose rows belong to one graph file (by its ``files.id``; each path is stored once, in ``files``).
_TABLES = ("anchor_facts", "mentions", "frame_facts", "arms", "literals", "citations", "same_as", "other",
           "record_blobs", "belief_occurrences")
_LABEL_PROPS = ("label", "entityType")  # counted per anchor in anchor_labels (the canonicalization registry reads them)


def wants(path: str) -> bool:
    return path.endswith(".ttl") and (path.startswith(FRAMES_FOLDER + "/") or path.startswith(DECISIONS_FOLDER + "/"))


class GraphIndex(DerivedIndex):
    """The SQLite graph index, updated by tree diff (see :mod:`memrepo.index.base`)."""

    name = INDEX_NAME
    # 2: arms indexed by (anchor, frame), so the relation lane reads a hub in frame order;
    # 3: arms carry their frame's predicate, indexed by (anchor, predicate, frame), so a predicate filter
    #    reads only the matching frames of a hub; anchor_info holds each anchor's name, key, type and degree;
    # 4: mentions(anchor, seq, memory): an anchor's memories, newest first, read from one covering index
    #    range (no table lookup per mention); arms_anchor covers the predicate too;
    # 5: the per-frame indexes cover what a frame is loaded with (facts, arms, literals, citations)
    # 6: updated in place (WAL, the commit recorded in index_meta in the same transaction as the rows);
    #    each path stored once (rows name their file by id); anchor_labels counts each anchor's labels and types
    # 7: anchor_info's name and type are the most frequent of all the anchor's labels and types (anchor_labels),
    #    not of a sample of its first rows: the name every reader of memrepo.graph.reader gives
    # 8: record_blobs(memory, blob): the record blob each frames file was extracted from (mr:recordBlob), so a
    #    read drops the frames of a record edited or removed since (a plain `git commit`, `git rm`, a pull)
    # 9: belief_occurrences (each file's statements of a one-value relation, memrepo.graph.beliefs) and beliefs
    #    (each such frame's valid_from / valid_until, recomputed for the holders a changed file touches)
    schema = 9
    in_place = True

    def wants(self, path: str) -> bool:
        return wants(path)

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        target = folder / DB_FILE
        if previous == folder:
            with live.writer(target) as db:  # in place (memrepo.index.live), the connection kept for the next commit
                with live.transaction(db, ctx.commit):
                    apply_changes(db, changes, ctx.read_blob, ctx.progress)
            return
        if previous is None:
            db = live.open_writer(target)  # a new build, in a folder about to be renamed: closed before that
            db.executescript(SCHEMA)
        else:
            db = live.copy_database(previous / DB_FILE, target)  # a copy for an --at read
        try:
            with live.transaction(db, ctx.commit):
                apply_changes(db, changes, ctx.read_blob, ctx.progress)
        finally:
            db.close()

    def recorded_commit(self, folder: Path) -> str | None:
        return live.recorded_commit(folder / DB_FILE)

    def verify(self, folder: Path) -> None:
        db = sqlite3.connect(f"file:{folder / DB_FILE}?mode=ro", uri=True)
        try:
            db.execute("SELECT count(*) FROM files").fetchone()
        finally:
            db.close()


def apply_changes(db: sqlite3.Connection, changes: list[Change], read_blob: Any, progress: Any = None) -> None:
    """Replace the rows of every changed file; recompute the sameAs closure if a decision file changed."""
    decisions = False
    touched: set[str] = set()  # anchors whose anchor_info row is recomputed
    holders: set[str] = set()  # anchors whose beliefs are derived again
    bar_ctx = progress("graph index", len(changes)) if progress and len(changes) > 50 else None
    bar = bar_ctx.__enter__() if bar_ctx else None
    try:
        for change in changes:
            row = db.execute("SELECT id FROM files WHERE path = ?", (change.path,)).fetchone()
            if row is not None:
                file_id = row[0]
                touched.update(r[0] for r in db.execute("SELECT DISTINCT anchor FROM anchor_facts WHERE file = ?",
                                                        (file_id,)))
                _count_labels(db, file_id, -1)
                holders.update(r[0] for r in db.execute("SELECT holder FROM belief_occurrences WHERE file = ?",
                                                        (file_id,)))
                for table in _TABLES:
                    db.execute(f"DELETE FROM {table} WHERE file = ?", (file_id,))
                db.execute("DELETE FROM files WHERE id = ?", (file_id,))
            db.execute("DELETE FROM problems WHERE path = ?", (change.path,))
            decisions = decisions or change.path.startswith(DECISIONS_FOLDER + "/")
            if change.new is not None:
                described, stated = _insert_file(db, change.path, change.new, read_blob(change.new))
                touched.update(described)
                holders.update(stated)
            if bar:
                bar.update(1)
    finally:
        if bar_ctx:
            bar_ctx.__exit__(None, None, None)
    if decisions:
        rebuild_closure(db)
    derive_beliefs(db, None if decisions else holders)
    for anchor in sorted(touched):  # read paths look anchors up here in O(1), however many memories name them
        summary = anchor_summary(db, anchor)
        if summary is None:
            db.execute("DELETE FROM anchor_info WHERE anchor = ?", (anchor,))
            continue
        degree = db.execute("SELECT count(*) FROM mentions WHERE anchor = ?", (anchor,)).fetchone()[0]
        db.execute("INSERT OR REPLACE INTO anchor_info VALUES (?, ?, ?, ?, ?)", (anchor, *summary, degree))


def most_frequent(counts: Counter) -> str | None:
    """The most frequent value (ties: the least); None when there is none."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if counts else None


class LabelCounts:
    """Every anchor representative's label and type counts (``anchor_labels`` through the owl:sameAs
    closure) and the (name, type) the one naming rule gives it: its most frequent own label (else the
    most frequent of its class), its most frequent type.

    What the canonicalization registry is built from (:meth:`memrepo.graph.reader.GraphReader.anchor_names`);
    a run of writes in one process keeps it up to date in memory (:class:`memrepo.graph.build.GraphSession`).
    """

    def __init__(self, closure: dict[str, str]):
        self.closure = closure  # alias -> representative
        self.labels: dict[str, Counter] = {}
        self.types: dict[str, Counter] = {}
        self.own: dict[str, Counter] = {}
        self._named: dict[str, tuple[str, str]] = {}  # rep -> (name, type), dropped when its counts change

    def add(self, anchor: str, prop: str, value: str, n: int = 1) -> None:
        rep = self.closure.get(anchor, anchor)
        (self.labels if prop == "label" else self.types).setdefault(rep, Counter())[value] += n
        if prop == "label" and anchor == rep:
            self.own.setdefault(rep, Counter())[value] += n
        self._named.pop(rep, None)

    def names(self) -> list[tuple[str, str]]:
        """(name, type) of every representative with a label, by representative IRI."""
        return [self.name_of(rep) for rep in sorted(self.labels)]

    def name_of(self, rep: str) -> tuple[str, str]:
        """(name, type) of one representative with a label."""
        named = self._named.get(rep)
        if named is None:
            named = self._named[rep] = (most_frequent(self.own.get(rep) or self.labels[rep]) or rep,
                                        most_frequent(self.types.get(rep, Counter())) or "concept")
        return named


LABEL_SAMPLE = 48  # key rows read per anchor (a hub has one row per memory that mentions it; all say the same)


def anchor_summary(db: sqlite3.Connection, anchor: str) -> tuple[str, str, str] | None:
    """(name, key, type) of one anchor IRI: its most frequent label and type (exact counts from
    ``anchor_labels``; ties: the least), its least key; None if the index has no label, key or type of it.

    The same rule as :meth:`memrepo.graph.reader.GraphReader.info` for an anchor no owl:sameAs merges.
    """
    counts: dict[str, Counter] = {"label": Counter(), "entityType": Counter()}
    for prop, value, n in db.execute("SELECT prop, value, n FROM anchor_labels WHERE anchor = ?", (anchor,)):
        counts[prop][value] += n
    keys = [r[0] for r in db.execute("SELECT value FROM anchor_facts WHERE anchor = ? AND prop = 'key' LIMIT ?",
                                     (anchor, LABEL_SAMPLE))]
    if not (counts["label"] or counts["entityType"] or keys):
        return None
    most = lambda c: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]  # noqa: E731
    return (most(counts["label"]) if counts["label"] else "", min(keys) if keys else "",
            most(counts["entityType"]) if counts["entityType"] else "concept")


def _count_labels(db: sqlite3.Connection, file_id: int, sign: int) -> None:
    """Add (sign 1) or take away (sign -1) one file's label and type rows in ``anchor_labels``."""
    counts = db.execute("SELECT anchor, prop, value, count(*) FROM anchor_facts WHERE file = ? AND prop IN (?, ?) "
                        "GROUP BY anchor, prop, value", (file_id, *_LABEL_PROPS)).fetchall()
    db.executemany("INSERT INTO anchor_labels VALUES (?, ?, ?, ?) ON CONFLICT (anchor, prop, value) "
                   "DO UPDATE SET n = n + excluded.n", [(a, p, v, sign * n) for a, p, v, n in counts])
    if sign < 0 and counts:
        db.executemany("DELETE FROM anchor_labels WHERE anchor = ? AND prop = ? AND value = ? AND n <= 0",
                       [(a, p, v) for a, p, v, _n in counts])


def _insert_file(db: sqlite3.Connection, path: str, blob: str, data: bytes) -> tuple[set[str], set[str]]:
    """Insert the rows of one graph file; returns the anchors it describes and the belief holders it states."""
    fid = db.execute("INSERT INTO files (path, blob) VALUES (?, ?)", (path, blob)).lastrowid
    assert fid is not None  # an INSERT always sets it
    try:
        parsed = file_rows(data, path)  # rows(parse_turtle(...)), without an rdflib graph for canonical files
    except TurtleError as exc:
        db.execute("INSERT INTO problems (path, line, message) VALUES (?, ?, ?)", (path, exc.line, str(exc)))
        return set(), set()
    db.executemany("INSERT INTO anchor_facts VALUES (?, ?, ?, ?, ?)", [(fid, *r) for r in parsed.anchor_facts])
    mentions = [(anchor, value) for anchor, prop, value, _n3 in parsed.anchor_facts if prop == "mentionedIn"]
    if mentions:  # numbered in the order they are indexed: a higher seq is a later mention
        seq = db.execute("SELECT coalesce(max(seq), 0) FROM mentions INDEXED BY mentions_seq").fetchone()[0]
        db.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?)",
                       [(anchor, seq + i, memory, fid) for i, (anchor, memory) in enumerate(mentions, 1)])
    db.executemany("INSERT INTO frame_facts VALUES (?, ?, ?, ?, ?)", [(fid, *r) for r in parsed.frame_facts])
    predicate = {frame: value for frame, prop, value, _n3 in parsed.frame_facts if prop == "predicate"}
    db.executemany("INSERT INTO arms VALUES (?, ?, ?, ?, ?, ?)", [(fid, *r, predicate.get(r[0])) for r in parsed.arms])
    db.executemany("INSERT INTO literals VALUES (?, ?, ?, ?, ?, ?)", [(fid, *r) for r in parsed.literals])
    db.executemany("INSERT INTO citations VALUES (?, ?, ?)", [(fid, *r) for r in parsed.citations])
    db.executemany("INSERT INTO same_as VALUES (?, ?, ?)", [(fid, *r) for r in parsed.same_as])
    db.executemany("INSERT INTO other VALUES (?, ?, ?, ?)", [(fid, *r) for r in parsed.other])
    followed = recorded_blob(data) if path.startswith(FRAMES_FOLDER + "/") else None
    if followed:  # the file is named after its record: graph/frames/YYYY/MM/<memory id>.ttl
        db.execute("INSERT INTO record_blobs VALUES (?, ?, ?)", (fid, path.rsplit("/", 1)[-1][:-4], followed))
    stated = _occurrences(parsed, path)
    db.executemany("INSERT INTO belief_occurrences VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(fid, o.slot, o.holder, o.subkey, o.frame, o.value, o.time, o.memory) for o in stated])
    _count_labels(db, fid, 1)
    return {r[0] for r in parsed.anchor_facts}, {o.holder for o in stated}


def _occurrences(parsed: Any, path: str) -> list[beliefs.Occurrence]:
    """The one-value relations one frames file states (:data:`memrepo.graph.beliefs.SLOTS`)."""
    if not path.startswith(FRAMES_FOLDER + "/"):
        return []
    memory = path.rsplit("/", 1)[-1][:-4]
    facts: dict[str, dict[str, list[str]]] = {}
    for frame, prop, value, _n3 in parsed.frame_facts:
        facts.setdefault(frame, {}).setdefault(prop, []).append(value)
    names = {anchor: value for anchor, prop, value, _n3 in sorted(parsed.anchor_facts) if prop == "label"}
    arms: dict[str, list[tuple[str, str, str]]] = {}
    for frame, _arm, role, anchor in sorted(parsed.arms):
        arms.setdefault(frame, []).append((role, anchor, names.get(anchor, anchor)))
    literals: dict[str, dict[str, list[str]]] = {}
    for frame, _lit, key, value, _n3 in sorted(parsed.literals):
        literals.setdefault(frame, {}).setdefault(key, []).append(value)
    out: list[beliefs.Occurrence] = []
    for frame, f in sorted(facts.items()):
        predicate = (f.get("predicate") or [""])[0]
        if predicate in beliefs.SLOT_PREDICATES:
            out += beliefs.frame_occurrences(frame, predicate, arms.get(frame, []), literals.get(frame, {}),
                                             beliefs.time_of(f.get("eventTime", []), f.get("mentionTime", [])), memory)
    return out


def derive_beliefs(db: sqlite3.Connection, holders: set[str] | None) -> None:
    """Derive the ``beliefs`` rows again for ``holders`` (anchor IRIs; None: every holder) from the occurrences.

    A holder's chain is read through its owl:sameAs class, so the statements of merged anchors supersede
    each other as one anchor's.
    """
    closure = dict(db.execute("SELECT anchor, rep FROM closure"))
    if holders is None:
        db.execute("DELETE FROM beliefs")
        reps = None
    else:
        reps = sorted({closure.get(h, h) for h in holders})
        if not reps:
            return
    members: list[str] = []
    for rep in reps or []:
        db.execute("DELETE FROM beliefs WHERE holder = ?", (rep,))
        found = [r[0] for r in db.execute("SELECT anchor FROM closure WHERE rep = ?", (rep,))]
        members += found or [rep]
    cols = "slot, holder, subkey, frame, value, time, memory"
    if reps is None:
        rows = db.execute(f"SELECT {cols} FROM belief_occurrences").fetchall()
    else:
        rows = []
        for start in range(0, len(members), 400):
            chunk = members[start : start + 400]
            rows += db.execute(f"SELECT {cols} FROM belief_occurrences WHERE holder IN ({','.join('?' * len(chunk))})",
                               chunk).fetchall()
    derived = beliefs.derive((beliefs.Occurrence(*r) for r in rows), closure)
    db.executemany("INSERT INTO beliefs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (b.slot, b.holder, b.subkey, b.frame, b.value, b.valid_from, b.valid_until, " ".join(b.superseded_by),
         " ".join(b.conflicts), " ".join(b.memories)) for b in derived])


def rebuild_closure(db: sqlite3.Connection) -> None:
    """Union-find over owl:sameAs; a class's representative is the one no statement renames (else the least IRI)."""
    pairs = db.execute("SELECT alias, rep FROM same_as s JOIN files f ON f.id = s.file ORDER BY f.path, alias, rep").fetchall()
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    aliases = {a for a, _ in pairs}
    for alias, rep in pairs:
        ra, rb = find(alias), find(rep)
        if ra != rb:
            parent[ra] = rb
    classes: dict[str, list[str]] = {}
    for node in list(parent):
        classes.setdefault(find(node), []).append(node)
    db.execute("DELETE FROM closure")
    for members in classes.values():
        kept = sorted(m for m in members if m not in aliases) or sorted(members)
        rep = kept[0]
        db.executemany("INSERT INTO closure (anchor, rep) VALUES (?, ?)", [(m, rep) for m in members])
