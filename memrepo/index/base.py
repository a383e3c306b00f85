"""Derived indexes rebuilt per commit: the one mechanism every index uses (DESIGN.md §5).

An index lives under ``<gitdir>/memrepo/indexes/<name>/``::

    CURRENT             {"commit", "schema", "identity", "generation"}   (replaced with os.replace)
    g000007/            the published generation CURRENT points to
    g000006/            the previous one, kept so that a reader that just read CURRENT can still open it
    at/<commit>/        generations built for ``--at REV`` reads (a few, least recently used dropped)

Moving an index from commit A to commit B applies the Git tree diff between A
and B: each index sees only the changed paths it wants, so a one-record commit
costs one record's work. The new state is written into a fresh generation
folder (starting from a copy or hard links of the previous one, as the index
chooses) and published by replacing ``CURRENT`` in one rename: a reader in
another process sees the old generation or the new one, never a half-update.

Writers of one index are serialised by a file lock; readers never take it
unless they find the index behind and catch it up.

Every index is listed in :data:`memrepo.capabilities.DERIVED_INDEXES` (lazily, by
``"module:attr"`` name, as RDFLib plugins are; other distributions add theirs through
the ``memrepo.indexes`` entry points) and implements :class:`DerivedIndex`.
:class:`Indexes` works on the table a context carries (``ctx.capabilities.indexes``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
import zlib
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, ContextManager, Iterable, Iterator, Mapping, Protocol

from memrepo import records as rec
from memrepo.capabilities import Entry, installed, resolve
from memrepo.errors import MemrepoError, NotFoundError, RecordError
from memrepo.settings import Settings
from memrepo.store.objects import CorruptObjectError

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.records import Record, Source
    from memrepo.index.embed import EmbeddingCache
    from memrepo.store.git import GitStore, Snapshot

INDEX_DIR = "indexes"
POINTER = "CURRENT"
DAMAGED_MARK = "DAMAGED"  # beside CURRENT: why a read set the generation aside (the next update rebuilds it)
MANIFEST = "MANIFEST.json"  # size, mtime and CRC-32 of each file of a generation, written before it is published
EMBEDDING_CACHE = "embeddings.sqlite3"
KEEP_AT = 4  # generations kept for --at reads, per index


class IndexError_(MemrepoError):
    """An index could not be built or read."""


class ProgressBar(Protocol):
    def update(self, n: int) -> None: ...


#: ``progress(label, total)`` returns a context manager yielding an object with ``update(n)``;
#: the CLI passes a function that returns ``click.progressbar(length=total, label=label)``.
Progress = Callable[[str, int], ContextManager[ProgressBar]]


class _NoBar:
    def update(self, n: int) -> None:
        pass


def no_progress(label: str, total: int) -> ContextManager[ProgressBar]:
    return nullcontext(_NoBar())


@dataclass(frozen=True)
class Change:
    """One file changed between two commits: old blob None = added, new blob None = deleted."""

    path: str
    old: str | None
    new: str | None


class ParsedFiles:
    """Record and source files parsed by blob id, shared by the indexes one :class:`Indexes` updates.

    Several indexes read the same changed files (full text, vectors, provenance): a catch-up parses each
    once. A blob's contents never change, so an entry is never stale; the oldest go past ``size`` entries.
    """

    def __init__(self, size: int = 20_000):
        self.size = size
        self._items: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()  # a reader's catch-up may run on any thread

    def get(self, key: tuple[str, str], parse: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                return self._items[key]
        value = parse()
        with self._lock:
            self._items[key] = value
            if len(self._items) > self.size:
                del self._items[next(iter(self._items))]
        return value


@dataclass
class UpdateContext:
    """What an index gets while it updates: the target snapshot, settings, and shared helpers."""

    store: "GitStore"
    snapshot: "Snapshot"
    settings: Settings
    progress: Progress = no_progress
    notify: Callable[[str], None] = lambda message: None
    _cache: "EmbeddingCache | None" = field(default=None, repr=False)
    _parsed: ParsedFiles = field(default_factory=ParsedFiles, repr=False)

    @property
    def commit(self) -> str | None:
        return self.snapshot.commit

    def read_blob(self, blob_id: str) -> bytes:
        return self.snapshot.read_blob(blob_id)

    def record(self, path: str, blob_id: str) -> "Record | None":
        """The record file ``blob_id`` at ``path``, parsed (None if it does not parse: `doctor` reports it)."""
        return self._parsed.get((path, blob_id), lambda: _parse_or_none(rec.parse, self.read_blob(blob_id), path))

    def source(self, path: str, blob_id: str) -> "Source | None":
        """The source file ``blob_id`` at ``path``, parsed (None if it does not parse)."""
        return self._parsed.get((path, blob_id), lambda: _parse_or_none(rec.parse_source, self.read_blob(blob_id), path))

    @property
    def embedding_cache(self) -> "EmbeddingCache":
        """The repository's embedding cache (opened on first use)."""
        if self._cache is None:
            self._cache = open_embedding_cache(self.store, self.notify)
        return self._cache


def _parse_or_none(parse: Callable[[bytes, str], Any], data: bytes, path: str) -> Any:
    try:
        return parse(data, path)
    except RecordError:
        return None


class DerivedIndex:
    """Base class of a derived index. Subclasses set ``name`` and ``schema`` and implement ``wants`` and ``update``.

    ``identity()`` names anything besides the schema that the contents depend on
    (an embedding model id, say): if it differs from what the published
    generation was built with, the index is rebuilt from scratch and the
    :meth:`identity_changed` message is shown.
    """

    name: ClassVar[str] = ""
    schema: ClassVar[int] = 1
    #: True: ``update`` is also called with ``folder is previous`` and then changes the published generation in
    #: place, in one transaction that records the target commit too (read back by :meth:`recorded_commit`;
    #: see :mod:`memrepo.index.live`). False: every update writes a new generation.
    in_place: ClassVar[bool] = False

    def __init__(self, settings: Settings):
        self.settings = settings

    def identity(self) -> dict[str, Any]:
        return {}

    def identity_changed(self, old: dict[str, Any], new: dict[str, Any], count: int) -> str:
        return f"index {self.name}: settings changed ({old} -> {new}); rebuilding from {count} files"

    def wants(self, path: str) -> bool:
        """True for tracked paths this index is derived from."""
        raise NotImplementedError

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        """Write the state at ``ctx.snapshot`` into the empty ``folder``.

        Args:
            previous: the published generation to start from (None for a build from scratch,
                in which case ``changes`` adds every wanted file).
            changes: the wanted paths that differ between ``previous``'s commit and the target.
        """
        raise NotImplementedError

    def verify(self, folder: Path) -> None:
        """Raise if the generation in ``folder`` cannot be opened (used to detect corruption)."""

    def recorded_commit(self, folder: Path) -> str | None:
        """For an ``in_place`` index: the commit the generation in ``folder`` reflects (raise if unreadable)."""
        raise NotImplementedError


# --- the index table ---------------------------------------------------------------

IndexFactory = Callable[[Settings], DerivedIndex]


def registered(table: Mapping[str, Entry] | None = None) -> list[str]:
    """Names of every derived index: ``table``'s (a context's ``capabilities.indexes``), else the installed table's."""
    return list(installed().indexes if table is None else table)


def _factory(table: Mapping[str, Entry], name: str) -> IndexFactory:
    try:
        entry = table[name]
    except KeyError:
        raise NotFoundError(f"index {name!r} is not known (known: {', '.join(table)})") from None
    return resolve(entry)


# --- on-disk state ----------------------------------------------------------------


@dataclass(frozen=True)
class IndexState:
    """What a published generation reflects."""

    commit: str | None
    schema: int
    identity: dict[str, Any]
    generation: str

    def to_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "schema": self.schema, "identity": self.identity, "generation": self.generation}


def index_root(store: "GitStore", name: str) -> Path:
    return store.state_dir / INDEX_DIR / name


def read_state(root: Path) -> IndexState | None:
    """The published state of the index at ``root``; None if there is none.

    Raises:
        ValueError: if ``CURRENT`` exists but cannot be read (a corrupt index).
    """
    try:
        data = json.loads((root / POINTER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{POINTER} is unreadable ({exc})") from exc
    try:
        state = IndexState(
            commit=data["commit"],
            schema=int(data["schema"]),
            identity=dict(data.get("identity") or {}),
            generation=str(data["generation"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{POINTER} is missing {exc}") from exc
    if state.generation in ("", ".", "..") or any(c in state.generation for c in "/\\\0"):
        # A state file is not trusted to name a folder: the index is read and written (in place) there.
        raise ValueError(f"{POINTER} names generation {state.generation!r}, which is not a folder of the index")
    return state


def _write_state(root: Path, state: IndexState, *, durable: bool = True) -> None:
    """Replace ``CURRENT`` atomically; ``durable``: synced to disk first.

    A pointer that only moves to a newer commit (nothing the index derives from changed, or a live
    database that records its own commit) need not be durable: lost in a power cut, it leaves the
    index one commit behind, which the next update catches up by tree diff.
    """
    tmp = root / f".{POINTER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(state.to_dict(), sort_keys=True, indent=1) + "\n", encoding="utf-8")
    if durable:
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
    os.replace(tmp, root / POINTER)


def copy_generation(src: Path, dst: Path, *, link: bool = False) -> None:
    """Fill ``dst`` with ``src``'s files; hard links when ``link`` (only for files never modified in place)."""
    for item in sorted(src.rglob("*")):
        target = dst / item.relative_to(src)
        if item.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if link:
            try:
                os.link(item, target)
                continue
            except OSError:
                pass
        shutil.copy2(item, target)


def _manifest_files(folder: Path) -> list[Path]:
    skip = {MANIFEST, ".done"}
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in skip and not p.name.endswith(".lock")]


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _read_manifest(folder: Path) -> dict[str, dict[str, int]] | None:
    """The files a generation was published with; None if it has no manifest (built before manifests).

    Raises:
        ValueError: if the manifest cannot be read.
    """
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{MANIFEST} is unreadable ({exc})") from exc
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(e, dict) and all(isinstance(e.get(k), int) for k in ("size", "mtime_ns", "crc32")) for e in files.values()
    ):
        raise ValueError(f"{MANIFEST} is malformed")
    return files


def write_manifest(folder: Path, previous: Path | None = None) -> None:
    """Record size, mtime and CRC-32 of every file of a finished generation, before it is published.

    A file hard-linked from ``previous`` and unchanged since its manifest was written keeps its
    recorded checksum, so a one-record update reads only the files it wrote.
    """
    try:
        old = (_read_manifest(previous) or {}) if previous is not None else {}
    except ValueError:
        old = {}
    files: dict[str, dict[str, int]] = {}
    for path in _manifest_files(folder):
        rel = path.relative_to(folder).as_posix()
        info = path.stat()
        prior = old.get(rel)
        same = (
            prior is not None
            and prior["size"] == info.st_size
            and prior["mtime_ns"] == info.st_mtime_ns
            and previous is not None
            and _same_file(previous / rel, info)
        )
        crc = prior["crc32"] if same and prior is not None else _crc32(path)
        files[rel] = {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "crc32": crc}
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"files": files}, sort_keys=True, indent=0) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)


def _same_file(path: Path, info: os.stat_result) -> bool:
    try:
        other = path.stat()
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)


def verify_generation(folder: Path, *, full: bool = False) -> str | None:
    """What is wrong with a published generation's files, or None if they are as published.

    Cheap by default: sizes always, and the CRC-32 of a file only if its modification time
    changed since it was published (a garbled file written in place); ``full`` checksums
    every file (``memrepo doctor``). A generation without a manifest is not checked.
    """
    try:
        files = _read_manifest(folder)
    except ValueError as exc:
        return str(exc)
    if files is None:
        return None
    for rel, entry in sorted(files.items()):
        path = folder / rel
        try:
            info = path.stat()
        except OSError:
            return f"{rel} is missing"
        if info.st_size != entry["size"]:
            return f"{rel} has {info.st_size} bytes, {entry['size']} when it was published"
        if (full or info.st_mtime_ns != entry["mtime_ns"]) and _crc32(path) != entry["crc32"]:
            return f"{rel} does not match the checksum it was published with"
    return None


def _next_generation(root: Path, state: IndexState | None) -> str:
    numbers = [int(p.name[1:]) for p in root.glob("g[0-9]*") if p.name[1:].isdigit()]
    if state is not None and state.generation[1:].isdigit():
        numbers.append(int(state.generation[1:]))
    return f"g{max(numbers, default=0) + 1:06d}"


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _make_folder(root: Path, notify: Callable[[str], None]) -> None:
    """Create ``root`` (and its parents), replacing a stray file found where a folder belongs."""
    for path in reversed([root, *root.parents][:3]):
        if path.exists() and not path.is_dir():
            notify(f"{path}: a file where the index folder belongs; replacing it")
            path.unlink()
    root.mkdir(parents=True, exist_ok=True)


# --- tree diff ------------------------------------------------------------------------


def tree_diff(store: "GitStore", old_commit: str | None, new_commit: str | None) -> list[Change]:
    """Files that differ between two commits (either may be None for the empty tree)."""
    return [Change(path, old, new) for path, old, new in store.changed_files(old_commit, new_commit)]


def all_files(snapshot: "Snapshot") -> list[Change]:
    return [Change(path, None, blob) for path, blob in snapshot.walk()]


# --- the manager -------------------------------------------------------------------------


@dataclass
class UpdateReport:
    """What :func:`update_indexes` did, per index: "current", "updated N", "rebuilt N", with messages."""

    commit: str | None
    actions: dict[str, str] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    embedded: int = 0  # texts sent to the embedding model
    cached: int = 0  # texts whose vectors came from the cache

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "actions": self.actions,
            "messages": self.messages,
            "embedded": self.embedded,
            "cached": self.cached,
        }


class Indexes:
    """Every derived index of one repository: bring them to a commit, find a published generation.

    Args:
        table: the indexes (name -> ``"module:attr"`` factory): a context's ``capabilities.indexes``;
            the installed table (memrepo's own and plugins') by default.
    """

    def __init__(
        self,
        store: "GitStore",
        settings: Settings | None = None,
        *,
        progress: Progress | None = None,
        notify: Callable[[str], None] | None = None,
        table: Mapping[str, Entry] | None = None,
    ):
        self.store = store
        self.settings = settings or Settings()
        self.table: Mapping[str, Entry] = installed().indexes if table is None else table
        self.progress = progress or no_progress
        self.notify = notify or (lambda message: None)
        self._indexes: dict[str, DerivedIndex] = {}
        self._cache: "EmbeddingCache | None" = None
        self._parsed = ParsedFiles()  # the changed files, parsed once for every index this object updates

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def index(self, name: str) -> DerivedIndex:
        found = self._indexes.get(name)
        if found is None:
            found = self._indexes[name] = _factory(self.table, name)(self.settings)
        return found

    def _context(self, snapshot: "Snapshot", messages: list[str]) -> UpdateContext:
        def notify(message: str) -> None:
            messages.append(message)
            self.notify(message)

        ctx = UpdateContext(self.store, snapshot, self.settings, self.progress, notify, self._cache, self._parsed)
        return ctx

    @property
    def names(self) -> list[str]:
        """Every index of the table, in the order they are built."""
        return list(self.table)

    def state(self, name: str) -> IndexState | None:
        """The published state of index ``name`` (None if missing or unreadable)."""
        try:
            return read_state(index_root(self.store, name))
        except ValueError:
            return None

    # -- updating --

    def update(
        self, commit: str | None = None, *, names: Iterable[str] | None = None, full: bool = False,
        check: bool = False,
    ) -> UpdateReport:
        """Bring indexes (every one of the table by default) to ``commit`` (HEAD by default).

        Args:
            full: throw the indexes away and rebuild them from the tracked files
                (the embedding cache is kept, so unchanged text is not embedded again,
                unless SQLite finds it damaged: then it is started afresh).
            check: first check every file of each index (each published file's checksum, SQLite's
                integrity_check of a live database, the embedding cache) and rebuild what is damaged, with a
                message (``memrepo reindex``, ``memrepo doctor --fix``); reads and the hooks only run the
                cheap check.
        """
        head = self.store.head()
        target = commit or (head.decode() if head else None)
        report = UpdateReport(commit=target)
        snapshot = self.store.snapshot(target.encode() if target else None)
        if full or check:
            self._check_embedding_cache(report.messages)
        for name in list(names) if names is not None else self.names:
            report.actions[name] = self._update_one(name, snapshot, full, report.messages, check=check)
        if self._cache is not None:
            report.embedded, report.cached = self._cache.misses, self._cache.hits
        return report

    def _check_embedding_cache(self, messages: list[str]) -> None:
        """Start the embedding cache afresh if SQLite finds it damaged (part of ``reindex --full``)."""

        def notify(message: str) -> None:
            messages.append(message)
            self.notify(message)

        if self._cache is None:
            self._cache = open_embedding_cache(self.store, notify)
        problem = self._cache.check()
        if problem is not None:
            self._cache.notify = notify
            self._cache.reset(problem)

    def _update_one(self, name: str, snapshot: "Snapshot", full: bool, messages: list[str], *,
                    check: bool = False) -> str:
        index = self.index(name)
        root = index_root(self.store, name)
        with self.store.lock(f"index-{name}"):
            ctx = self._context(snapshot, messages)
            _make_folder(root, ctx.notify)
            try:
                state = read_state(root)
            except ValueError as exc:
                ctx.notify(f"index {name}: {exc}; rebuilding it from the tracked files")
                state = None
            aside = root / DAMAGED_MARK
            if state is None and aside.exists():  # a read found it damaged (memrepo.index.live.set_aside)
                ctx.notify(f"index {name}: {aside.read_text(encoding='utf-8', errors='replace').strip()}; "
                           "rebuilding it from the tracked files")
            aside.unlink(missing_ok=True)
            if state is not None and not (root / state.generation).is_dir():
                ctx.notify(f"index {name}: generation folder {state.generation} is missing; rebuilding it")
                state = None
            state = _reconcile(index, root, state, ctx.notify)
            damage = None
            if state is not None and not full and check:
                from memrepo.index.live import sqlite_damage

                folder = root / state.generation
                damage = verify_generation(folder, full=True) or (sqlite_damage(folder) if index.in_place else None)
            elif state is not None and not full and not index.in_place:
                damage = verify_generation(root / state.generation)
            if damage is not None:
                ctx.notify(f"index {name}: generation {state.generation} is damaged ({damage}); "  # type: ignore[union-attr]
                           "rebuilding it from the tracked files")
                state = None
            if state is not None and state.commit == snapshot.commit and state.schema == index.schema and state.identity == index.identity() and not full:
                return "current"
            previous, changes = self._plan(index, state, snapshot, full, ctx)
            try:
                action = self._build(index, root, state, previous, snapshot, changes, ctx)
            except MemrepoError:
                raise  # explained (an embedding endpoint down, say): not a corrupt generation
            except Exception as exc:
                if previous is None:
                    raise
                ctx.notify(f"index {name}: could not update generation {state.generation} ({exc}); rebuilding it")  # type: ignore[union-attr]
                changes = [c for c in all_files(snapshot) if index.wants(c.path)]
                action = self._build(index, root, state, None, snapshot, changes, ctx)
            self._prune(root)
            return action

    def _plan(
        self, index: DerivedIndex, state: IndexState | None, snapshot: "Snapshot", full: bool, ctx: UpdateContext
    ) -> tuple[Path | None, list[Change]]:
        root = index_root(self.store, index.name)
        everything = lambda: [c for c in all_files(snapshot) if index.wants(c.path)]  # noqa: E731
        if full or state is None:
            return None, everything()
        if state.schema != index.schema:
            ctx.notify(f"index {index.name}: schema {state.schema} -> {index.schema}; rebuilding it")
            return None, everything()
        if state.identity != index.identity():
            changes = everything()
            ctx.notify(index.identity_changed(state.identity, index.identity(), len(changes)))
            return None, changes
        try:
            diff = tree_diff(self.store, state.commit, snapshot.commit)
        except (KeyError, CorruptObjectError) as exc:
            if isinstance(exc, CorruptObjectError) and exc.sha != state.commit:
                raise
            ctx.notify(f"index {index.name}: commit {str(state.commit)[:12]} is no longer in the repository; rebuilding it")
            return None, everything()
        return root / state.generation, [c for c in diff if index.wants(c.path)]

    def _build(
        self,
        index: DerivedIndex,
        root: Path,
        state: IndexState | None,
        previous: Path | None,
        snapshot: "Snapshot",
        changes: list[Change],
        ctx: UpdateContext,
    ) -> str:
        if index.in_place and previous is not None and state is not None:
            # Changed in place, in one transaction that records the commit too (memrepo.index.live).
            try:
                index.update(ctx, previous, previous, changes)
            finally:
                self._cache = ctx._cache
            _write_state(root, IndexState(snapshot.commit, index.schema, index.identity(), state.generation), durable=False)
            return f"updated {len(changes)}" if changes else "current"
        if previous is not None and not changes and state is not None:
            # Nothing this index derives from changed: only the pointer moves.
            _write_state(root, IndexState(snapshot.commit, index.schema, index.identity(), state.generation), durable=False)
            return "current"
        generation = _next_generation(root, state)
        tmp = root / f".tmp-{generation}-{os.getpid()}"
        _remove(tmp)
        tmp.mkdir(parents=True)
        try:
            index.update(ctx, previous, tmp, changes)
            if not index.in_place:  # a live database changes in place: SQLite and its recorded commit vouch for it
                write_manifest(tmp, previous)
            os.replace(tmp, root / generation)
        except BaseException:
            _remove(tmp)
            raise
        finally:
            self._cache = ctx._cache
        _write_state(root, IndexState(snapshot.commit, index.schema, index.identity(), generation))
        if previous is None:
            _remove(root / "at")  # built with another schema or model, or from a corrupt generation
        return f"{'updated' if previous is not None else 'rebuilt'} {len(changes)}"

    def _prune(self, root: Path) -> None:
        """Drop generations older than the previous one (readers that opened them keep their open files)."""
        try:
            state = read_state(root)
        except ValueError:
            return
        if state is None:
            return
        gens = sorted(p for p in root.glob("g[0-9]*") if p.is_dir())
        keep = {state.generation}
        older = [p for p in gens if p.name < state.generation]
        if older:
            keep.add(older[-1].name)
        for path in gens:
            if path.name not in keep:
                _remove(path)
        # Every writer of this index holds its lock, as this one does now: a build folder still here
        # was left by a killed writer.
        for path in (*root.glob(".tmp-*"), *root.glob("at/.tmp-*")):
            _remove(path)

    # -- reading --

    def folder(self, name: str, commit: str | None = None) -> Path:
        """The published generation of index ``name`` at ``commit`` (HEAD by default), caught up first.

        For the commit the index follows (normally HEAD) this is the current
        generation; for another commit (``--at REV``) it is a generation built
        for that commit by applying the diff from the current one, kept among
        the last few under ``at/``.
        """
        head = self.store.head()
        tip = head.decode() if head else None
        target = commit or tip
        state = self.state(name)
        root = index_root(self.store, name)
        index = self.index(name)
        unusable = (
            state is None
            or state.schema != index.schema
            or state.identity != index.identity()
            or not (root / state.generation).is_dir()
            or verify_generation(root / state.generation) is not None
            or (index.in_place and not any((root / state.generation).glob("*.sqlite3")))  # a live database deleted
        )
        behind = target == tip and state is not None and state.commit != tip
        if behind and not unusable and self._busy(name):
            # Readers are never blocked by a writer: read the published state while it works.
            self.notify(
                f"index {name}: another process is updating it; reading it as of {str(state.commit)[:12]}"  # type: ignore[union-attr]
            )
            return root / state.generation  # type: ignore[union-attr]
        if unusable or behind:
            # The followed generation must be usable (and at HEAD when HEAD is read) before anything derives from it.
            self._update_one(name, self.store.snapshot(head), False, [])
            state = self.state(name)
        if state is None:
            raise IndexError_(f"index {name}: could not be built")
        if state.commit == target and (target == tip or not index.in_place):
            # (a live database moves on with HEAD: a read of another commit gets its own copy under at/)
            return root / state.generation
        return self._at(name, target)

    def _busy(self, name: str) -> bool:
        """True while another process holds the update lock of index ``name``."""
        import fcntl

        path = self.store.state_dir / f"index-{name}.lock"  # the file GitStore.lock(f"index-{name}") locks
        try:
            with open(path, "a+") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(handle, fcntl.LOCK_UN)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return False

    def _at(self, name: str, commit: str | None) -> Path:
        index = self.index(name)
        root = index_root(self.store, name) / "at"
        folder = root / str(commit)
        if (folder / ".done").exists():
            damage = verify_generation(folder)
            if damage is None:
                os.utime(folder / ".done")
                return folder
            self.notify(f"index {name}: the generation for {str(commit)[:12]} is damaged ({damage}); rebuilding it")
        root.mkdir(parents=True, exist_ok=True)
        with self.store.lock(f"index-{name}"):
            if (folder / ".done").exists() and verify_generation(folder) is None:
                return folder
            state = _reconcile(index, index_root(self.store, name), read_state(index_root(self.store, name)), self.notify)
            if state is None:
                raise IndexError_(f"index {name}: could not be read; run `memrepo reindex`")
            snapshot = self.store.snapshot(commit.encode() if commit else None)
            messages: list[str] = []
            ctx = self._context(snapshot, messages)
            previous = index_root(self.store, name) / state.generation
            changes = [c for c in tree_diff(self.store, state.commit, commit) if index.wants(c.path)]
            tmp = root / f".tmp-{commit}-{os.getpid()}"
            _remove(tmp)
            tmp.mkdir(parents=True)
            try:
                index.update(ctx, previous, tmp, changes)
                if not index.in_place:  # SQLite may checkpoint its WAL into the file when a reader closes it
                    write_manifest(tmp, previous)
                (tmp / ".done").write_text(str(commit) + "\n", encoding="utf-8")
                _remove(folder)
                os.replace(tmp, folder)
            except BaseException:
                _remove(tmp)
                raise
            finally:
                self._cache = ctx._cache
            olds = sorted((p for p in root.iterdir() if (p / ".done").exists()), key=lambda p: (p / ".done").stat().st_mtime)
            for path in olds[:-KEEP_AT]:
                _remove(path)
        return folder

    @contextmanager
    def reading(self, name: str, commit: str | None, opener: Callable[[Path], Any]) -> Iterator[Any]:
        """Open index ``name`` at ``commit`` with ``opener(folder)``; a corrupt generation is rebuilt once, with a message."""
        folder = self.folder(name, commit)
        # A live database (in_place) changes under the same folder: each read opens its own snapshot.
        live = self.index(name).in_place and folder.parent.name != "at"
        for _attempt in range(5):
            try:
                handle = opener(folder) if live else open_cached(folder, opener)
                break
            except Exception as exc:
                again = self.folder(name, commit)
                if again != folder:  # a writer published a newer generation meanwhile: open that one
                    folder = again
                    continue
                # The published generation itself is corrupt: rebuild it from the tracked files, say so.
                self.notify(f"index {name}: cannot open {folder.name} ({exc}); rebuilding it from the tracked files")
                with self.store.lock(f"index-{name}"):
                    if folder.parent.name == "at":
                        _remove(folder)
                    elif self.state(name) is not None and index_root(self.store, name) / self.state(name).generation == folder:  # type: ignore[union-attr]
                        (index_root(self.store, name) / POINTER).unlink(missing_ok=True)
                folder = self.folder(name, commit)
        else:
            handle = opener(folder)
        try:
            yield handle
        except (ValueError, RuntimeError, OSError, sqlite3.DatabaseError) as exc:
            # What Tantivy, usearch and SQLite raise when a file fails them half-way through a read (damage that
            # kept its size and mtime, so the cheap check let it through): one line that says what to do.
            raise IndexError_(f"index {name}: reading {folder.name} failed ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''}); `memrepo doctor` checks the "
                              "index files and `memrepo reindex` rebuilds a damaged one") from exc
        finally:
            if live and hasattr(handle, "close"):
                handle.close()


def _reconcile(
    index: DerivedIndex, root: Path, state: IndexState | None, notify: Callable[[str], None]
) -> IndexState | None:
    """For an in-place index, the state its database records (None: unreadable, rebuild it).

    A writer killed between its database transaction and the ``CURRENT`` rewrite leaves the pointer one
    commit behind: the commit recorded in the same transaction as the rows is the one that holds.
    """
    if state is None or not index.in_place:
        return state
    try:
        recorded = index.recorded_commit(root / state.generation)
    except Exception as exc:
        notify(f"index {index.name}: cannot read generation {state.generation} ({exc}); rebuilding it")
        return None
    if recorded != state.commit:
        state = IndexState(recorded, state.schema, state.identity, state.generation)
        _write_state(root, state)
    return state


_OPENED: dict[tuple, Any] = {}
OPENED_MAX = 32  # generations kept open: a few indexes each of a few repositories or revisions


def open_cached(folder: Path, opener: Callable[[Path], Any]) -> Any:
    """``opener(folder)``, reused while the process lives: a published generation never changes.

    The key has the folder's inode, so a folder rebuilt under the same name is opened afresh.
    """
    key = (str(folder), folder.stat().st_ino, opener)
    handle = _OPENED.get(key)
    if handle is None:
        handle = opener(folder)
        if len(_OPENED) >= OPENED_MAX:
            _OPENED.pop(next(iter(_OPENED)))
        _OPENED[key] = handle
    return handle


def forget_opened() -> None:
    """Drop the readers :func:`open_cached` keeps, so that the next read opens its files afresh."""
    _OPENED.clear()


# Index readers memory-map their SQLite files: a lookup then reads pages the OS already caches instead of
# copying them through SQLite's small page cache with a system call each, which made point lookups grow
# with the file's size. A published generation is never written again, so the mapping stays valid.
SQLITE_MMAP_BYTES = 1 << 32  # SQLite clamps it to its build's ceiling (2 GiB by default)


def open_sqlite_readonly(path: Path) -> "sqlite3.Connection":
    """A read-only, memory-mapped connection to one published SQLite index file."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    db.execute(f"PRAGMA mmap_size = {SQLITE_MMAP_BYTES}")
    OPENED_DATABASES.add(Path(path))
    return db


# Every index database this process opened: where :func:`memrepo.index.live.damaged_database` looks for the
# one a "database disk image is malformed" that reached the command line came from.
OPENED_DATABASES: set[Path] = set()


def open_embedding_cache(store: "GitStore", notify: Callable[[str], None] | None = None) -> "EmbeddingCache":
    """The repository's embedding cache; an unreadable cache file is replaced by an empty one (``notify`` says so)."""
    from memrepo.index.embed import EmbeddingCache

    return EmbeddingCache(store.state_dir / EMBEDDING_CACHE, notify)


def update_indexes(
    ctx: "Context | GitStore",
    commit: str | None = None,
    progress: Progress | None = None,
    *,
    full: bool = False,
    names: Iterable[str] | None = None,
    notify: Callable[[str], None] | None = None,
    check: bool = False,
) -> UpdateReport:
    """Bring every index of the context's table (or ``names``) to ``commit`` (HEAD by default).

    Args:
        ctx: a repository's :class:`~memrepo.context.Context` (its settings and index table are
            used), or a bare GitStore (default settings, the installed table).
        progress: ``progress(label, total)`` -> context manager with ``update(n)``.
        full: rebuild from scratch (``memrepo reindex --full``).
        notify: called with each message worth showing (rebuilt corrupt index, model changed...).
        check: check every file of each index first and rebuild what is damaged (``memrepo reindex``).
    """
    from memrepo.context import Context

    if isinstance(ctx, Context):
        indexes = Indexes(ctx.store, ctx.settings, progress=progress, notify=notify, table=ctx.capabilities.indexes)
    else:
        indexes = Indexes(ctx, Settings(), progress=progress, notify=notify)
    try:
        return indexes.update(commit, names=names, full=full, check=check)
    finally:
        indexes.close()
