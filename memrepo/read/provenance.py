"""Provenance neighbours: which records cite a source part, and which parts are adjacent (M A.3).

The base lane adds same-chunk support and immediate temporal neighbours
"recomputed from the provenance stored in the evidence plane instead of being
duplicated as graph bookkeeping edges". This derived index is that provenance,
in SQLite, rebuilt per commit from the tracked files like every other index:

    parts(source, anchor, ordinal)       every part of every source, in file order
    cites(source, anchor, record)        every citation of every record
    records(record, head, summary_terms, text_terms, vkey, positions)
                                         what rerank reads of each candidate: the head of its
                                         text, its analyzed words (a forward index, scored
                                         with BM25 against the full-text index's statistics),
                                         the key of its vector in the vector index, and the
                                         (source, ordinal) of each part it cites (kept with the
                                         record, so that rerank reads one row per candidate)
    totals(name, value)                  records and words counted, for BM25's mean lengths

A lookup is an indexed read of a few rows, whatever the size of the history.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterable, NamedTuple

from memrepo import records as rec
from memrepo.graph.model import holds_frames, indexed_path
from memrepo.index import live
from memrepo.index.base import Change, DerivedIndex, UpdateContext
from memrepo.index.fulltext import terms, vector_key
from memrepo.read import constants as C

DB_FILE = "provenance.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS parts (source TEXT NOT NULL, anchor TEXT NOT NULL, ordinal INTEGER NOT NULL,
                                  PRIMARY KEY (source, anchor)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS parts_ordinal ON parts (source, ordinal);
CREATE TABLE IF NOT EXISTS cites (source TEXT NOT NULL, anchor TEXT NOT NULL, record TEXT NOT NULL, path TEXT NOT NULL,
                                  PRIMARY KEY (source, anchor, record)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cites_path ON cites (path);
CREATE INDEX IF NOT EXISTS cites_record ON cites (record);
CREATE TABLE IF NOT EXISTS records (record TEXT PRIMARY KEY, path TEXT NOT NULL, head TEXT NOT NULL,
                                    summary_terms TEXT NOT NULL, text_terms TEXT NOT NULL, vkey INTEGER NOT NULL,
                                    positions TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_path ON records (path);
CREATE TABLE IF NOT EXISTS totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO totals VALUES ('records', 0), ('summary', 0), ('text', 0);
"""
_SOURCE_ROOT = rec.SOURCES_FOLDER + "/"


class ProvenanceIndex(DerivedIndex):
    """Source parts in order and the records that cite them."""

    name = "provenance"
    schema = 6  # 4: updated in place (memrepo.index.live); 5: each record's cited positions in its row; 6: procedural
    in_place = True

    def wants(self, path: str) -> bool:
        return path.endswith(".md") and (path.startswith(_SOURCE_ROOT) or indexed_path(path))

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        if previous == folder:
            with live.writer(folder / DB_FILE) as db:  # in place (memrepo.index.live), kept for the next commit
                self._apply_all(ctx, db, changes, create=False)
            return
        if previous is None:
            db = live.open_writer(folder / DB_FILE)  # a new build, in a folder about to be renamed: closed before that
        else:
            db = live.copy_database(previous / DB_FILE, folder / DB_FILE)  # a copy for an --at read
        try:
            self._apply_all(ctx, db, changes, create=previous is None)
        finally:
            db.close()

    def _apply_all(self, ctx: UpdateContext, db: sqlite3.Connection, changes: list[Change], *, create: bool) -> None:
        if create:
            db.executescript(SCHEMA)
        with live.transaction(db, ctx.commit):
            with ctx.progress(f"provenance ({len(changes)} files)", len(changes)) as bar:
                touched: set[str] = set()  # records whose cited positions may have changed
                for change in changes:
                    touched |= _apply(db, ctx, change)
                    bar.update(1)
                _store_positions(db, touched)

    def recorded_commit(self, folder: Path) -> str | None:
        return live.recorded_commit(folder / DB_FILE)

    def verify(self, folder: Path) -> None:
        ProvenanceReader(folder).close()


def _apply(db: sqlite3.Connection, ctx: UpdateContext, change: Change) -> set[str]:
    """Apply one changed file; returns the records whose cited positions are to be stored again."""
    is_source = change.path.startswith(_SOURCE_ROOT)
    touched: set[str] = set()
    if is_source:  # the records citing a source see its parts renumbered (or gone)
        source_id = change.path.rsplit("/", 1)[-1][:-3]
        touched = {r for (r,) in db.execute("SELECT DISTINCT record FROM cites WHERE source = ?", (source_id,))}
    if change.old is not None:
        if is_source:
            db.execute("DELETE FROM parts WHERE source = ?", (source_id,))
        else:
            db.execute("DELETE FROM cites WHERE path = ?", (change.path,))
            for summary, text in db.execute("SELECT summary_terms, text_terms FROM records WHERE path = ?",
                                            (change.path,)).fetchall():
                _count(db, -1, summary.split(), text.split())
            db.execute("DELETE FROM records WHERE path = ?", (change.path,))
    if change.new is None:
        return touched
    if is_source:
        source = ctx.source(change.path, change.new)
        if source is not None:  # else a hand-broken file: `memrepo doctor` reports it
            db.executemany("INSERT OR REPLACE INTO parts VALUES (?, ?, ?)",
                           [(source.id, p.anchor, i) for i, p in enumerate(source.parts)])
        return touched
    record = ctx.record(change.path, change.new)
    if record is None:
        return touched  # a hand-broken file: `memrepo doctor` reports it
    if not holds_frames(record):
        return touched  # a task session's record cites every turn; the graph read never returns it (read/lanes.py)
    rows = []
    for citation in record.sources:
        source_id, anchor = rec.split_citation(citation)
        rows.append((source_id, anchor or "", record.id, change.path))
    db.executemany("INSERT OR REPLACE INTO cites VALUES (?, ?, ?, ?)", rows)
    summary, text = terms(record.summary or ""), terms(record.text)
    db.execute("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, '')",  # positions: stored at the end
               (record.id, change.path, record.text[:C.HEAD_CHARS].lower(), " ".join(summary), " ".join(text),
                vector_key(change.path)))
    _count(db, 1, summary, text)
    touched.add(record.id)
    return touched


def _store_positions(db: sqlite3.Connection, records: set[str]) -> None:
    """Store in each record's row the (source, ordinal) of the parts it cites, as "source\tordinal" lines."""
    for record in sorted(records):
        rows = db.execute("SELECT c.source, p.ordinal FROM cites c JOIN parts p ON p.source = c.source "
                          "AND p.anchor = c.anchor WHERE c.record = ? ORDER BY c.source, p.ordinal", (record,))
        db.execute("UPDATE records SET positions = ? WHERE record = ?",
                   ("\n".join(f"{source}\t{ordinal}" for source, ordinal in rows), record))


def _count(db: sqlite3.Connection, sign: int, summary: list[str], text: list[str]) -> None:
    for name, value in (("records", 1), ("summary", len(summary)), ("text", len(text))):
        db.execute("UPDATE totals SET value = value + ? WHERE name = ?", (sign * value, name))


def _positions(stored: str) -> list[tuple[str, int]]:
    """The "source\tordinal" lines of a record's row as (source, ordinal) pairs (most records cite one part)."""
    if "\n" not in stored:
        source, _, ordinal = stored.partition("\t")
        return [(source, int(ordinal))] if ordinal else []
    return [(source, int(ordinal)) for source, ordinal in (line.split("\t") for line in stored.split("\n"))]


class Features(NamedTuple):
    """One record's row as rerank reads it."""

    head: str  # the start of its text, lowercased
    summary: list[str]  # its summary's analyzed words
    text: list[str]  # its text's analyzed words
    vkey: int  # its vector's key in the vector index
    positions: list[tuple[str, int]]  # (source, ordinal) of each part it cites


class ProvenanceReader:
    """Read-only lookups on one generation of the provenance index."""

    def __init__(self, folder: Path):
        path = folder / DB_FILE
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing")
        self.path = path
        self.db = live.open_snapshot(path)  # one read transaction: every lookup sees one commit
        self.db.execute("SELECT 1 FROM parts LIMIT 1")

    def close(self) -> None:
        live.end_snapshot(self.path, self.db)

    def citing(self, source: str, anchor: str, limit: int = 8) -> list[str]:
        """Records citing one part (same-chunk support), in id order."""
        return [r for (r,) in self.db.execute(
            "SELECT record FROM cites WHERE source = ? AND anchor = ? ORDER BY record LIMIT ?", (source, anchor, limit))]

    def adjacent(self, source: str, anchor: str, span: int = 1) -> list[str]:
        """Anchors of the parts within ``span`` positions of one part (itself excluded), in order."""
        row = self.db.execute("SELECT ordinal FROM parts WHERE source = ? AND anchor = ?", (source, anchor)).fetchone()
        if row is None:
            return []
        return [a for (a,) in self.db.execute(
            "SELECT anchor FROM parts WHERE source = ? AND ordinal BETWEEN ? AND ? AND ordinal != ? ORDER BY ordinal",
            (source, row[0] - span, row[0] + span, row[0]))]

    def neighbours(self, citations: Iterable[str], span: int = 1, per_part: int = 4) -> list[tuple[str, str]]:
        """(record id, relation) of records citing the same parts ("same-chunk") or adjacent ones ("adjacent")."""
        out: list[tuple[str, str]] = []
        for citation in citations:
            source, anchor = rec.split_citation(citation)
            if not anchor:
                continue
            out += [(r, "same-chunk") for r in self.citing(source, anchor, per_part)]
            for near in self.adjacent(source, anchor, span):
                out += [(r, "adjacent") for r in self.citing(source, near, per_part)]
        return out

    def features(self, record_ids: Iterable[str]) -> dict[str, "Features"]:
        """What rerank reads of each record the index has, one row each (batched lookups)."""
        ids = sorted(set(record_ids))
        out: dict[str, Features] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            for record, head, summary, text, vkey, positions in self.db.execute(
                    f"SELECT record, head, summary_terms, text_terms, vkey, positions FROM records "
                    f"WHERE record IN ({','.join('?' * len(chunk))})", chunk):
                out[record] = Features(head, summary.split(), text.split(), vkey, _positions(positions))
        return out

    def mean_lengths(self) -> dict[str, float]:
        """Mean number of analyzed words per record, by field (``summary``, ``text``)."""
        totals = dict(self.db.execute("SELECT name, value FROM totals WHERE name IN ('records', 'summary', 'text')"))
        n = max(totals.get("records", 0), 1)
        return {"summary": totals.get("summary", 0) / n, "text": totals.get("text", 0) / n}
