"""SQLite indexes updated in place: one live database per generation, moved to a new commit in one transaction.

The graph and provenance indexes are SQLite files that a one-record commit
changes by a few rows. Copying the file into a new generation per commit cost
time proportional to the repository (2.9 s for the 1.18 GB graph index at
100,000 records), so these indexes change their published generation in place
(:attr:`memrepo.index.base.DerivedIndex.in_place`):

- The database runs in WAL mode. A writer (serialised by the index lock)
  applies a commit's changes and records the commit it now reflects in the
  ``index_meta`` table *in the same transaction*: the rows and the commit they
  belong to are published together, or not at all. A writer killed at any point
  leaves the last committed transaction (SQLite rolls back the rest when the
  database is next opened), and that transaction names its own commit, so the
  next reader or writer knows exactly where the index stands and catches it up
  from there; ``CURRENT`` may lag by one commit, and the recorded commit wins.
- A reader opens its own connection and begins a read transaction: every query
  of one read sees the one snapshot the transaction started with, whatever a
  writer commits meanwhile (WAL keeps the pages a reader still needs). It reads
  the commit its snapshot reflects from ``index_meta``.
- A read of another commit (``--at REV``) never reads the live database: it gets
  a copy made for that commit (SQLite's online backup, then that diff applied),
  kept among the last few under ``at/`` like every index's.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memrepo.index.base import open_sqlite_readonly

META = "CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"


def open_writer(path: Path) -> sqlite3.Connection:
    """A read-write connection in WAL mode, in autocommit: the caller brackets its transaction (:func:`transaction`).

    ``synchronous=NORMAL``: a process killed at any point loses nothing committed; a power cut may lose the
    last transactions, and with them the commit they recorded, so the index is then simply behind.
    """
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(META)
    return db


class transaction:
    """``with transaction(db, commit):`` one write transaction that ends by recording ``commit``; rolled back on error."""

    def __init__(self, db: sqlite3.Connection, commit: str | None):
        self.db = db
        self.commit = commit

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is not None:
            self.db.execute("ROLLBACK")
            return
        self.db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES ('commit', ?)", (self.commit or "",))
        self.db.execute("COMMIT")


def recorded_commit(path: Path) -> str | None:
    """The commit the database at ``path`` reflects (None: an empty repository's index).

    Raises:
        ValueError: if the file is missing, unreadable, or records no commit.
    """
    if not path.exists():
        raise ValueError(f"{path.name} is missing")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM index_meta WHERE key = 'commit'").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ValueError(f"{path.name} is unreadable ({exc})") from exc
    if row is None:
        raise ValueError(f"{path.name} records no commit")
    return row[0] or None


def open_snapshot(path: Path) -> sqlite3.Connection:
    """A read-only connection holding one read transaction: every query sees the same committed state.

    Close it (or ``COMMIT``) when the read ends, so that the writer's log can be checkpointed.
    """
    db = open_sqlite_readonly(path)
    db.execute("BEGIN")
    db.execute("SELECT value FROM index_meta WHERE key = 'commit'").fetchone()  # the snapshot starts here
    return db


def copy_database(src: Path, dst: Path) -> sqlite3.Connection:
    """A consistent copy of the live database ``src`` at ``dst`` (committed state only), opened for writing."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        target = open_writer(dst)
        source.backup(target)
    finally:
        source.close()
    return target
