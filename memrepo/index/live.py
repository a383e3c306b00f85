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

A process that writes more than once (an MCP server, an ingest, the viewer)
keeps its writer connections open between commits (:func:`writer`): closing the
last connection to a WAL database checkpoints it and syncs the file, about
20 ms a database, which was a fifth of a one-record commit's index work.
SQLite checkpoints the log itself every 1,000 pages, and on the last close.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from memrepo.index.base import OPENED_DATABASES, open_sqlite_readonly

if TYPE_CHECKING:
    from memrepo.errors import MemrepoError

META = "CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"


def open_writer(path: Path) -> sqlite3.Connection:
    """A read-write connection in WAL mode, in autocommit: the caller brackets its transaction (:func:`transaction`).

    ``synchronous=NORMAL``: a process killed at any point loses nothing committed; a power cut may lose the
    last transactions, and with them the commit they recorded, so the index is then simply behind.
    """
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    OPENED_DATABASES.add(Path(path))
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(META)
    return db


class _Kept:
    """Connections kept between uses, by key (a database path first), this process's only, at most ``size``.

    A connection is given back only to the process that opened it and only while its path is still
    the file it was opened on (a rebuilt or replaced database gets a new connection).
    """

    def __init__(self, size: int):
        self.size = size
        self.items: "OrderedDict[tuple, tuple[int, tuple[int, int], sqlite3.Connection]]" = OrderedDict()

    def take(self, key: tuple, path: Path) -> sqlite3.Connection | None:
        with _pool_lock:
            found = self.items.pop(key, None)
        if found is None:
            return None
        pid, identity, db = found
        if pid != os.getpid():
            return None  # inherited through fork: never touch the parent's connection
        if identity != _identity(path) or db.in_transaction:
            db.close()
            return None
        return db

    def put(self, key: tuple, path: Path, db: sqlite3.Connection) -> None:
        identity = _identity(path)
        if identity is None or db.in_transaction:
            db.close()
            return
        evicted = []
        with _pool_lock:
            old = self.items.pop(key, None)
            if old is not None and old[0] == os.getpid() and old[2] is not db:
                evicted.append(old[2])
            self.items[key] = (os.getpid(), identity, db)
            while len(self.items) > self.size:
                _key, (pid, _identity_, conn) = self.items.popitem(last=False)
                if pid == os.getpid():
                    evicted.append(conn)
        for conn in evicted:
            conn.close()

    def pop_under(self, prefix: str) -> list[sqlite3.Connection]:
        """Remove and return this process's connections to the databases whose path starts with ``prefix``."""
        with _pool_lock:
            keys = [key for key in self.items if key[0].startswith(prefix)]
            return [db for pid, _identity_, db in (self.items.pop(key) for key in keys) if pid == os.getpid()]


_pool_lock = threading.Lock()
#: Writer connections of databases updated in place, by path.
_writers = _Kept(size=8)
#: Read-only connections kept between reads, by (path, thread).
_readers = _Kept(size=16)


@contextmanager
def writer(path: Path) -> Iterator[sqlite3.Connection]:
    """``with writer(path) as db:`` a writer connection (:func:`open_writer`), kept open for the next use.

    Only for a database that stays at ``path`` (never one in a folder about to be renamed: SQLite
    finds its log by the name it was opened with). A connection whose use raised is closed, never reused.
    """
    db = _writers.take((str(path),), path)
    if db is None:
        db = open_writer(path)
    try:
        yield db
    except BaseException:
        db.close()
        raise
    _writers.put((str(path),), path, db)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


@atexit.register
def close_writers(under: Path | None = None) -> None:
    """Close the kept writer and reader connections of this process (the last to close checkpoints the
    log): every one, or those of the databases under the folder ``under`` (a repository being closed)."""
    prefix = str(under).rstrip(os.sep) + os.sep if under is not None else ""
    # Readers first: the last connection to close checkpoints the log and removes it, and only a writer can.
    for db in _readers.pop_under(prefix) + _writers.pop_under(prefix):
        try:
            db.close()
        except sqlite3.Error:
            pass


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

    End the read with :func:`end_snapshot` (or close the connection), so that the writer's log can be
    checkpointed. The connection is one this thread used for an earlier read of ``path`` when there is
    one: a fresh connection memory-maps the file anew and pays a page fault for every page it touches,
    and unmaps it on close, which at 100,000 records was a third of a recall.
    """
    db = _readers.take((str(path), threading.get_ident()), path)
    if db is None:
        db = open_sqlite_readonly(path)
    try:
        db.execute("BEGIN")
        db.execute("SELECT value FROM index_meta WHERE key = 'commit'").fetchone()  # the snapshot starts here
    except BaseException as exc:
        db.close()
        if is_damage(exc) and path.parent.parent.parent.name == "indexes":
            set_aside(path, f"unreadable when a read opened it ({exc})")  # the next read or update rebuilds it
        raise
    return db


def end_snapshot(path: Path, db: sqlite3.Connection) -> None:
    """End the read :func:`open_snapshot` began; the connection is kept for this thread's next read of ``path``."""
    try:
        if db.in_transaction:
            db.execute("COMMIT")
    except sqlite3.Error:
        db.close()
        return
    _readers.put((str(path), threading.get_ident()), path, db)


def copy_database(src: Path, dst: Path) -> sqlite3.Connection:
    """A consistent copy of the live database ``src`` at ``dst`` (committed state only), opened for writing."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        target = open_writer(dst)
        source.backup(target)
    finally:
        source.close()
    return target


# --- damage ---------------------------------------------------------------------------------


def sqlite_damage(folder: Path, check: str = "integrity_check") -> str | None:
    """What SQLite's integrity_check (or ``quick_check``) finds wrong in the databases of ``folder``, or None.

    Both read every page of every table and index; integrity_check also finds each index entry's row in
    its table, so a flipped byte in an indexed value (which would make a lookup miss a row) is found too.
    On the example conversation's 770 kB graph index it takes 3 ms, quick_check 7 to 15 ms (the file
    cached). It runs in ``memrepo doctor``, ``memrepo reindex`` and ``doctor --fix``, not on every read.
    A byte flipped inside a value no index holds is not structure: SQLite cannot see it.
    """
    for path in sorted(folder.glob("*.sqlite3")):
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                result = db.execute(f"PRAGMA {check}").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error as exc:
            return f"{path.name} is not a readable database ({exc})"
        if result != "ok":
            return f"{path.name} fails SQLite's {check} ({result.splitlines()[-1] if result else result})"
    return None


def is_damage(exc: BaseException) -> bool:
    """True if SQLite raised ``exc`` because a file's bytes are damaged: "database disk image is malformed",
    "file is not a database", a text value that is no longer UTF-8; not a lock or a constraint."""
    if type(exc) is sqlite3.DatabaseError:
        return True
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith("Could not decode to UTF-8")


def set_aside(database: Path, why: str = "damaged") -> bool:
    """Make the next read or write rebuild the index whose generation holds ``database`` (a damaged one).

    The generation's ``CURRENT`` pointer is removed (a copy for another commit, under ``at/``, is removed
    whole), under the index's update lock; False if it is no longer the published generation.
    """
    import fcntl
    import shutil

    from memrepo.index.base import DAMAGED_MARK, POINTER

    folder = database.parent
    if folder.parent.name == "at":
        shutil.rmtree(folder, ignore_errors=True)
        return True
    root = folder.parent
    state_dir = root.parent.parent  # <gitdir>/memrepo/indexes/<name>/<generation>
    with open(state_dir / f"index-{root.name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            pointer = root / POINTER
            try:
                import json

                current = json.loads(pointer.read_text(encoding="utf-8")).get("generation")
            except (OSError, ValueError, AttributeError):
                return False
            if current != folder.name:
                return False
            close_writers(under=root)
            (root / DAMAGED_MARK).write_text(f"{database.name} in {folder.name} was found {why}\n", encoding="utf-8")
            pointer.unlink(missing_ok=True)
            return True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def damaged_database(exc: BaseException) -> "MemrepoError | None":
    """The explained error for SQLite's "malformed" or "not a database" reaching the command line, or None.

    The index databases this process opened are checked (quick_check, then integrity_check); each damaged one
    is set aside
    (:func:`set_aside`), so the next command rebuilds it from the tracked files, and named.
    """
    from memrepo.index.base import OPENED_DATABASES, IndexError_

    if not is_damage(exc):
        return None
    opened = sorted(p for p in OPENED_DATABASES if p.exists())
    damaged = []
    for check in ("quick_check", "integrity_check"):  # the second compares each index with its table too
        for path in opened:
            problem = sqlite_damage(path.parent, check)
            if problem is not None:
                set_aside(path, f"damaged by a read ({problem})")
                damaged.append(path)
        if damaged:
            break
    if not damaged:
        # SQLite says a file it read is malformed but neither check finds which: every index database this
        # process read is derived, so all of them are rebuilt rather than one left that fails again.
        damaged = [p for p in opened if set_aside(p, f"in use when a read failed ({exc})")]
    if not damaged:
        return IndexError_(f"an index database failed a read ({exc}); `memrepo doctor` checks the index files and "
                           "`memrepo reindex --full` rebuilds every index")
    names = ", ".join(f"{p.parent.parent.name} ({p.name})" for p in damaged)
    return IndexError_(f"index {names}: damaged ({exc}); it was set aside and the next memrepo command rebuilds "
                       "it from the tracked files (`memrepo reindex` does it now)")
