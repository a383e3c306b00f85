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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from memrepo.graph.kappa import kappa
from memrepo.graph.model import ANCHOR_PREFIX, DECISIONS_FOLDER, FRAMES_FOLDER, anchor_iri
from memrepo.graph.rdf import (
    ANCHOR_PROPS,
    FRAME_PROPS,
    NS,
    OWL,
    PROV,
    TurtleError,
    parse_turtle,
    rows,
)
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
"""
#: Tables whose rows belong to one graph file (by its ``files.id``; each path is stored once, in ``files``).
_TABLES = ("anchor_facts", "mentions", "frame_facts", "arms", "literals", "citations", "same_as", "other")
_LABEL_PROPS = ("label", "entityType")  # counted per anchor in anchor_labels (the canonicalization registry reads them)
_PROP_IRI = {v: k for k, v in ANCHOR_PROPS.items()}
_FRAME_PROP_IRI = {v: k for k, v in FRAME_PROPS.items()}


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
    schema = 6
    in_place = True

    def wants(self, path: str) -> bool:
        return wants(path)

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        target = folder / DB_FILE
        if previous is None:
            db = live.open_writer(target)
            db.executescript(SCHEMA)
        elif previous == folder:
            db = live.open_writer(target)  # in place (memrepo.index.live)
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
                for table in _TABLES:
                    db.execute(f"DELETE FROM {table} WHERE file = ?", (file_id,))
                db.execute("DELETE FROM files WHERE id = ?", (file_id,))
            db.execute("DELETE FROM problems WHERE path = ?", (change.path,))
            decisions = decisions or change.path.startswith(DECISIONS_FOLDER + "/")
            if change.new is not None:
                touched.update(_insert_file(db, change.path, change.new, read_blob(change.new)))
            if bar:
                bar.update(1)
    finally:
        if bar_ctx:
            bar_ctx.__exit__(None, None, None)
    if decisions:
        rebuild_closure(db)
    for anchor in sorted(touched):  # read paths look anchors up here in O(1), however many memories name them
        summary = anchor_summary(bounded_anchor_facts(db, anchor))
        if summary is None:
            db.execute("DELETE FROM anchor_info WHERE anchor = ?", (anchor,))
            continue
        degree = db.execute("SELECT count(*) FROM mentions WHERE anchor = ?", (anchor,)).fetchone()[0]
        db.execute("INSERT OR REPLACE INTO anchor_info VALUES (?, ?, ?, ?, ?)", (anchor, *summary, degree))


LABEL_SAMPLE = 48  # label/key/type rows read per anchor (a hub has one row per memory that mentions it)


def bounded_anchor_facts(db: sqlite3.Connection, anchor: str) -> list[tuple[str, str]]:
    """Label, key and type rows of one anchor IRI: a bounded sample of each, in index order."""
    out: list[tuple[str, str]] = []
    for prop in ("label", "key", "entityType"):
        out += db.execute("SELECT prop, value FROM anchor_facts WHERE anchor = ? AND prop = ? LIMIT ?",
                          (anchor, prop, LABEL_SAMPLE)).fetchall()
    return out


def anchor_summary(facts: Iterable[tuple[str, str]]) -> tuple[str, str, str] | None:
    """(name, key, type) from label/key/type rows: the most frequent label and type, the least key; None if no rows."""
    facts = list(facts)
    if not facts:
        return None
    labels = Counter(v for p, v in facts if p == "label")
    types = Counter(v for p, v in facts if p == "entityType")
    keys = sorted({v for p, v in facts if p == "key"})
    name = sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if labels else ""
    type_ = sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if types else "concept"
    return name, keys[0] if keys else "", type_


def _count_labels(db: sqlite3.Connection, file_id: int, sign: int) -> None:
    """Add (sign 1) or take away (sign -1) one file's label and type rows in ``anchor_labels``."""
    counts = db.execute("SELECT anchor, prop, value, count(*) FROM anchor_facts WHERE file = ? AND prop IN (?, ?) "
                        "GROUP BY anchor, prop, value", (file_id, *_LABEL_PROPS)).fetchall()
    db.executemany("INSERT INTO anchor_labels VALUES (?, ?, ?, ?) ON CONFLICT (anchor, prop, value) "
                   "DO UPDATE SET n = n + excluded.n", [(a, p, v, sign * n) for a, p, v, n in counts])
    if sign < 0 and counts:
        db.executemany("DELETE FROM anchor_labels WHERE anchor = ? AND prop = ? AND value = ? AND n <= 0",
                       [(a, p, v) for a, p, v, _n in counts])


def _insert_file(db: sqlite3.Connection, path: str, blob: str, data: bytes) -> set[str]:
    """Insert the rows of one graph file; returns the anchors it describes."""
    fid = db.execute("INSERT INTO files (path, blob) VALUES (?, ?)", (path, blob)).lastrowid
    assert fid is not None  # an INSERT always sets it
    try:
        parsed = rows(parse_turtle(data, path))
    except TurtleError as exc:
        db.execute("INSERT INTO problems (path, line, message) VALUES (?, ?, ?)", (path, exc.line, str(exc)))
        return set()
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
    _count_labels(db, fid, 1)
    return {r[0] for r in parsed.anchor_facts}


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


# --- reading ----------------------------------------------------------------------------


@dataclass
class AnchorInfo:
    """An anchor as the graph index sees it: canonical name, type, aliases, the rows that mention it, its frames."""

    iri: str
    name: str
    type: str
    key: str
    aliases: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # anchor IRIs merged into it (owl:sameAs)
    episodic: list[str] = field(default_factory=list)
    semantic: list[str] = field(default_factory=list)
    frame_count: int = 0

    @property
    def rows(self) -> list[str]:
        return sorted(self.episodic + self.semantic)

    def to_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri, "name": self.name, "type": self.type, "key": self.key, "aliases": self.aliases,
            "members": self.members, "episodic": self.episodic, "semantic": self.semantic,
            "frame_count": self.frame_count,
        }


@dataclass
class ArmInfo:
    role: str
    anchor: str
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "anchor": self.anchor, "name": self.name}


@dataclass
class FrameInfo:
    """A frame with every citation the union of graph files gives it (M eq. 6)."""

    iri: str
    predicate: str
    kind: str
    arms: list[ArmInfo] = field(default_factory=list)
    literals: dict[str, list[str]] = field(default_factory=dict)
    event_time: list[str] = field(default_factory=list)
    mention_time: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri, "predicate": self.predicate, "kind": self.kind,
            "arms": [a.to_dict() for a in self.arms], "literals": self.literals, "event_time": self.event_time,
            "mention_time": self.mention_time, "status": self.status, "citations": self.citations,
        }

    def render(self) -> str:
        args = ", ".join(f"{a.role}={a.name}" for a in self.arms)
        lits = "".join(f", {k}={'|'.join(v)}" for k, v in sorted(self.literals.items()))
        when = f" @{'|'.join(self.event_time)}" if self.event_time else ""
        state = f" [{'|'.join(self.status)}]" if self.status else ""
        return f"{self.predicate}({args}{lits}){when}{state}"


class GraphReader:
    """Read-only lookups over one generation of the graph index."""

    def __init__(self, path: Path):
        self.path = path
        self.db = live.open_snapshot(path)  # one read transaction: every lookup sees one commit
        self._labels: dict[str, tuple[str, str, str]] = {}

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "GraphReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the sameAs closure --

    def representative(self, anchor: str) -> str:
        row = self.db.execute("SELECT rep FROM closure WHERE anchor = ?", (anchor,)).fetchone()
        return row[0] if row else anchor

    def members(self, anchor: str) -> list[str]:
        rep = self.representative(anchor)
        found = [r[0] for r in self.db.execute("SELECT anchor FROM closure WHERE rep = ? ORDER BY anchor", (rep,))]
        return found or [anchor]

    # -- anchors --

    def find_anchors(self, name: str) -> list[str]:
        """Representatives of the anchors whose key is κ(name) or whose label is ``name`` (case-folded)."""
        key = kappa(name)
        found = [r[0] for r in self.db.execute(
            "SELECT DISTINCT anchor FROM anchor_facts WHERE prop = 'key' AND value = ?", (key,))]
        if not found and name.startswith(ANCHOR_PREFIX):
            found = [name]
        if not found:
            found = [r[0] for r in self.db.execute(
                "SELECT DISTINCT anchor FROM anchor_facts WHERE prop = 'label' AND value = ? COLLATE NOCASE", (name,))]
        return sorted({self.representative(a) for a in found})

    def _facts(self, anchors: list[str], prop: str) -> list[str]:
        marks = ",".join("?" * len(anchors))
        return [r[0] for r in self.db.execute(
            f"SELECT value FROM anchor_facts WHERE prop = ? AND anchor IN ({marks})", (prop, *anchors))]

    def anchor(self, anchor: str) -> AnchorInfo:
        members = self.members(anchor)
        rep = self.representative(anchor)
        labels = Counter(self._facts(members, "label"))
        own = Counter(self._facts([rep], "label"))
        types = Counter(self._facts(members, "entityType"))
        name = sorted((own or labels).items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if (own or labels) else rep
        type_ = sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if types else "concept"
        keys = self._facts([rep], "key") or self._facts(members, "key")
        rows_ = sorted({v[len("urn:memrepo:memory:"):] for v in self._facts(members, "mentionedIn")})
        marks = ",".join("?" * len(members))
        cited = [r[0] for r in self.db.execute(
            f"SELECT DISTINCT c.memory FROM arms a JOIN citations c ON c.frame = a.frame WHERE a.anchor IN ({marks})",
            members)]
        all_rows = sorted(set(rows_) | set(cited))
        frames = self.db.execute(f"SELECT count(DISTINCT frame) FROM arms WHERE anchor IN ({marks})", members).fetchone()[0]
        return AnchorInfo(
            iri=rep, name=name, type=type_, key=keys[0] if keys else kappa(name),
            aliases=sorted(set(labels) - {name}), members=[m for m in members if m != rep],
            episodic=[r for r in all_rows if r.startswith("ep-")],
            semantic=[r for r in all_rows if not r.startswith("ep-")],
            frame_count=frames,
        )

    def anchors(self) -> list[str]:
        """Every anchor representative (for exports and statistics, not for lookups)."""
        found = {r[0] for r in self.db.execute("SELECT DISTINCT anchor FROM anchor_facts")}
        return sorted({self.representative(a) for a in found})

    def label(self, anchor: str) -> str:
        if anchor not in self._labels:
            info = self.anchor(anchor)
            self._labels[anchor] = (info.name, info.type, info.iri)
        return self._labels[anchor][0]

    # -- frames --

    def frame_ids(self, *, anchor: str | None = None, predicate: str | None = None, cited: str | None = None,
                  limit: int | None = None) -> list[str]:
        """Frame IRIs by incident anchor (through its sameAs class), predicate family and/or cited memory id.

        Every filter runs on an index; frames are returned in frame-id order (DESIGN.md §3), at most ``limit``.
        """
        sql, params = self.frame_query(anchor=anchor, predicate=predicate, cited=cited, limit=limit)
        return [r[0] for r in self.db.execute(sql, params)]

    def frame_query(self, *, anchor: str | None = None, predicate: str | None = None, cited: str | None = None,
                    limit: int | None = None) -> tuple[str, list[Any]]:
        """The SQL (and parameters) of :meth:`frame_ids`; exposed so that its query plan can be checked."""
        clauses: list[str] = []
        params: list[Any] = []
        sql = "SELECT DISTINCT f.frame FROM frame_facts f"
        if anchor is not None:
            members = self.members(anchor)
            sql += f" JOIN arms a ON a.frame = f.frame AND a.anchor IN ({','.join('?' * len(members))})"
            params += members
        if cited is not None:
            sql += " JOIN citations c ON c.frame = f.frame AND c.memory = ?"
            params.append(cited)
        clauses.append("f.prop = 'predicate'")
        if predicate is not None:
            preds = [p.strip() for p in predicate.split(",") if p.strip()]
            clauses.append(f"f.value IN ({','.join('?' * len(preds))})")
            params += preds
        sql += " WHERE " + " AND ".join(clauses) + " ORDER BY f.frame"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return sql, params

    def frame(self, frame: str) -> FrameInfo:
        facts: dict[str, list[str]] = {}
        for prop, value in self.db.execute(
                "SELECT prop, value FROM frame_facts WHERE frame = ? ORDER BY prop, value", (frame,)):
            facts.setdefault(prop, [])
            if value not in facts[prop]:
                facts[prop].append(value)
        arms: list[ArmInfo] = []
        seen = set()
        for role, anchor in self.db.execute(
                "SELECT role, anchor FROM arms WHERE frame = ? ORDER BY arm, role, anchor", (frame,)):
            rep = self.representative(anchor)
            if (role, rep) in seen:
                continue
            seen.add((role, rep))
            arms.append(ArmInfo(role, rep, self.label(rep)))
        literals: dict[str, list[str]] = {}
        for key, value in self.db.execute(
                "SELECT key, value FROM literals WHERE frame = ? ORDER BY key, value", (frame,)):
            if value not in literals.setdefault(key, []):
                literals[key].append(value)
        citations = [r[0] for r in self.db.execute(
            "SELECT DISTINCT memory FROM citations WHERE frame = ? ORDER BY memory", (frame,))]
        return FrameInfo(
            iri=frame, predicate=(facts.get("predicate") or ["related"])[0],
            kind=(facts.get("kind") or [""])[0], arms=arms, literals=literals,
            event_time=facts.get("eventTime", []), mention_time=facts.get("mentionTime", []),
            status=facts.get("status", []), citations=citations,
        )

    def frames(self, **filters: Any) -> list[FrameInfo]:
        return [self.frame(f) for f in self.frame_ids(**filters)]

    def frames_citing(self, memory_id: str) -> list[str]:
        return self.frame_ids(cited=memory_id)

    def indexed_memories(self) -> set[str]:
        """Memory ids that have a graph file (from the file names)."""
        return {p.rsplit("/", 1)[-1][:-4] for (p,) in self.db.execute(
            "SELECT path FROM files WHERE path LIKE ?", (FRAMES_FOLDER + "/%",))}

    def problems(self) -> list[tuple[str, int | None, str]]:
        return list(self.db.execute("SELECT path, line, message FROM problems ORDER BY path"))

    def counts(self) -> dict[str, int]:
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "files": one("SELECT count(*) FROM files"),
            "anchors": len(self.anchors()),
            "frames": one("SELECT count(DISTINCT frame) FROM frame_facts WHERE prop = 'predicate'"),
            "arms": one("SELECT count(*) FROM (SELECT DISTINCT frame, arm FROM arms)"),
            "citations": one("SELECT count(*) FROM (SELECT DISTINCT frame, memory FROM citations)"),
            "merged": one("SELECT count(*) FROM closure WHERE anchor != rep"),
            "problems": one("SELECT count(*) FROM problems"),
        }

    def anchor_names(self) -> list[tuple[str, str]]:
        """(canonical name, type) of every anchor, for the canonicalization registry."""
        out = []
        for anchor in self.anchors():
            info = self.anchor(anchor)
            out.append((info.name, info.type))
        return out

    # -- RDF view --

    def triples(self) -> Iterable[tuple[str, str, str]]:
        """Every triple of the indexed files, rebuilt from the index's rows (N3 terms)."""
        for anchor, prop, n3 in self.db.execute("SELECT DISTINCT anchor, prop, n3 FROM anchor_facts"):
            yield f"<{anchor}>", f"<{_PROP_IRI[prop]}>", n3
        for frame, prop, n3 in self.db.execute("SELECT DISTINCT frame, prop, n3 FROM frame_facts"):
            yield f"<{frame}>", f"<{_FRAME_PROP_IRI[prop]}>", n3
        for frame, arm, role, anchor in self.db.execute("SELECT DISTINCT frame, arm, role, anchor FROM arms"):
            yield f"<{frame}>", f"<{NS}arm>", f"<{arm}>"
            yield f"<{arm}>", f"<{NS}role>", _n3_string(role)
            yield f"<{arm}>", f"<{NS}anchor>", f"<{anchor}>"
        for frame, lit, key, n3 in self.db.execute("SELECT DISTINCT frame, lit, key, n3 FROM literals"):
            yield f"<{frame}>", f"<{NS}literal>", f"<{lit}>"
            yield f"<{lit}>", f"<{NS}key>", _n3_string(key)
            yield f"<{lit}>", f"<{NS}value>", n3
        for frame, memory in self.db.execute("SELECT DISTINCT frame, memory FROM citations"):
            yield f"<{frame}>", f"<{PROV}wasDerivedFrom>", f"<urn:memrepo:memory:{memory}>"
        for alias, rep in self.db.execute("SELECT DISTINCT alias, rep FROM same_as"):
            yield f"<{alias}>", f"<{OWL}sameAs>", f"<{rep}>"
        yield from self.db.execute("SELECT DISTINCT s, p, o FROM other")


def _n3_string(text: str) -> str:
    from rdflib import Literal

    return Literal(text).n3()


def anchor_for_name(namespace: str, name: str) -> str:
    return anchor_iri(namespace, kappa(name))
