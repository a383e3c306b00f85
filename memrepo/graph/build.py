"""`memrepo index`: graph extraction catch-up, committed after the records (M A.1 write ordering).

The graph files follow the records: every episodic and semantic record without a
graph file gets one, a record whose content changed since its graph file was
extracted (the file names the record blob it follows, ``mr:recordBlob``) is
extracted again, and the graph file of a record that is gone is removed. The
files are committed together in one commit through ``store.commit``. Failures
are fail-soft: a record whose extraction fails is logged and left for the next
run, and nothing here ever touches a record file.

Every write runs the same step afterwards (:func:`after_write`), incrementally:
it reads the tree diff since the last commit at which the graph was complete
(kept per clone in the state directory), so a one-record write costs one
record, and a run that was killed or failed is caught up by the next write.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from memrepo import records as rec
from memrepo.graph.canon import AnchorRegistry
from memrepo.graph.extract import OfflineReplies, extract_memory, is_visual, record_variables
from memrepo.graph.model import FRAMES_FOLDER, INDEXED_TYPES, graph_path
from memrepo.graph.rdf import memory_turtle, recorded_blob
from memrepo.graph.parallel import ExtractionPool
from memrepo.store.objects import read_commit

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.graph.reader import GraphReader
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore

log = logging.getLogger("memrepo.graph")

@dataclass
class IndexGraphResult:
    """What one catch-up run did."""

    commit: str | None
    indexed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    frames: int = 0
    anchors: int = 0
    repaired: int = 0
    pending: int = 0  # records that needed a graph file (missing or stale) when the run started
    stale: list[str] = field(default_factory=list)  # records re-extracted because their content changed
    removed: list[str] = field(default_factory=list)  # graph files removed: their record is gone
    in_workers: int = 0  # records whose offline rules ran in worker processes (memrepo/graph/parallel.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit, "indexed": self.indexed, "failed": self.failed, "frames": self.frames,
            "anchors": self.anchors, "repaired": self.repaired, "pending": self.pending, "stale": self.stale,
            "removed": self.removed, "in_workers": self.in_workers,
        }


#: State files (per clone, untracked, disposable): a commit at which every graph file followed its record,
#: and the last commit a catch-up run looked at (``memrepo doctor`` expects graph files for its records).
SYNCED_FILE = "graph-synced"
CHECKED_FILE = "graph-checked"
_GRAPH_PREFIX = FRAMES_FOLDER + "/"


@dataclass
class GraphWork:
    """What the graph needs at one commit: records to (re-)extract and graph files to remove."""

    extract: list[tuple[str, str]] = field(default_factory=list)  # (record path, blob)
    stale: list[str] = field(default_factory=list)  # ids among ``extract`` whose graph file is out of date
    remove: list[str] = field(default_factory=list)  # graph file paths whose record is gone

    def __bool__(self) -> bool:
        return bool(self.extract or self.remove)


def memory_id_of_path(path: str) -> str:
    """``episodic/2023/05/ep-....md`` or ``graph/frames/2023/05/ep-....ttl`` -> ``ep-...``."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _indexed_record(path: str) -> bool:
    return path.startswith(tuple(t + "/" for t in INDEXED_TYPES)) and rec.is_record_path(path)


def graph_work(snapshot: Any, ids: Iterable[str] | None = None, changed: set[str] | None = None, *,
               read_graphs: bool = True) -> GraphWork:
    """The work that brings the graph files of ``snapshot`` in line with its records.

    Args:
        ids: the memories to look at (None: every record and graph file, a full scan).
        changed: ids whose record file changed since the graph was last in line; a graph file
            that does not say which content it follows (written before memrepo recorded it)
            is stale when its record is among them.
        read_graphs: read each graph file to compare the content it follows with its record's
            (False: presence only, a walk of the trees without reading a file).
    """
    records: dict[str, tuple[str, str]] = {}
    graphs: dict[str, tuple[str, str]] = {}
    if ids is None:
        for folder in INDEXED_TYPES:
            for path, blob in snapshot.walk(folder):
                if rec.is_record_path(path):
                    records[memory_id_of_path(path)] = (path, blob)
        for path, blob in snapshot.walk(FRAMES_FOLDER):
            if path.endswith(".ttl"):
                graphs[memory_id_of_path(path)] = (path, blob)
        wanted = sorted(set(records) | set(graphs))
    else:
        wanted = sorted(set(ids))
        for memory_id in wanted:
            found = _record_entry(snapshot, memory_id)
            if found:
                records[memory_id] = found
            gpath = graph_path(memory_id)
            gblob = snapshot.blob_id(gpath)
            if gblob:
                graphs[memory_id] = (gpath, gblob)
    work = GraphWork()
    for memory_id in wanted:
        record, graph = records.get(memory_id), graphs.get(memory_id)
        if record is None:
            if graph is not None and graph[0] == graph_path(memory_id):
                work.remove.append(graph[0])
            continue
        if graph is None:
            work.extract.append(record)
            continue
        if not read_graphs:
            continue
        recorded = recorded_blob(snapshot.read_blob(graph[1]))
        if recorded != record[1] and (recorded is not None or (changed is not None and memory_id in changed)):
            work.extract.append(record)
            work.stale.append(memory_id)
    return work


def _record_entry(snapshot: Any, memory_id: str) -> tuple[str, str] | None:
    """(path, blob) of an episodic or semantic record by id, or None."""
    type_ = rec.type_of_id(memory_id)
    if type_ not in INDEXED_TYPES:
        return None
    try:
        path = rec.record_path(memory_id, type_)
    except rec.RecordError:
        return None
    blob = snapshot.blob_id(path)
    return (path, blob) if blob else None


def pending_records(snapshot: Any) -> list[tuple[str, str]]:
    """(path, blob) of every episodic and semantic record whose graph file is missing or stale at ``snapshot``."""
    return graph_work(snapshot).extract


def synced_commit(store: Any, name: str = SYNCED_FILE) -> str | None:
    """The last commit at which every graph file followed its record (None: unknown, scan everything).

    ``name`` = :data:`CHECKED_FILE`: the last commit a catch-up run looked at.
    """
    try:
        commit = (store.state_dir / name).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(commit) != 40 or not store.has_object(commit):
        return None  # gone (history rewritten) or garbled: a full scan finds everything again
    return commit


def _set_state(store: "GitStore", name: str, commit: str) -> None:
    import os

    folder = store.state_dir
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{name}.{os.getpid()}.tmp"
    tmp.write_text(commit + "\n", encoding="ascii")
    os.replace(tmp, folder / name)


def work_since(store: "GitStore", snapshot: Any, since: str | None, *, read_graphs: bool = True) -> GraphWork:
    """The graph work at ``snapshot``: from the tree diff since ``since`` (cheap), or a full scan without it
    (``read_graphs``: see :func:`graph_work`)."""
    if since is None or snapshot.commit is None:
        return graph_work(snapshot, read_graphs=read_graphs)
    if since == snapshot.commit:
        return GraphWork()
    from memrepo.index.base import tree_diff

    ids: set[str] = set()
    changed: set[str] = set()
    for change in tree_diff(store, since, snapshot.commit):
        if _indexed_record(change.path):
            memory_id = memory_id_of_path(change.path)
            ids.add(memory_id)
            if change.old and change.new:
                changed.add(memory_id)
        elif change.path.startswith(_GRAPH_PREFIX) and change.path.endswith(".ttl"):
            ids.add(memory_id_of_path(change.path))
    return graph_work(snapshot, ids, changed)


def make_registry(store: "GitStore", settings: "Settings", reader: "GraphReader | None") -> AnchorRegistry:
    """The namespace's anchors with name vectors (the shared embedder and its cache); κ-only without an embedder."""
    embedder = cache = None
    try:
        from memrepo.index.base import open_embedding_cache
        from memrepo.index.embed import LazyEmbedder

        embedder = LazyEmbedder(settings.embedding)  # loaded only if a name needs a vector not cached
        cache = open_embedding_cache(store, log.warning)  # a cache it had to replace is said
    except Exception as exc:  # an embedder that cannot load leaves exact-key canonicalization only
        log.warning("graph: no embedder for canonicalization candidates (%s); exact keys only", exc)
    registry = AnchorRegistry(embedder, cache)
    if reader is not None:
        try:
            registry.add(reader.anchor_names())
        except sqlite3.Error as exc:
            log.warning("graph: cannot read anchors from the graph index (%s)", exc)
    return registry


def _participants(snapshot: Any, record: rec.Record, cache: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for citation in record.sources:
        source_id, _ = rec.split_citation(citation)
        if source_id not in cache:
            try:
                path = rec.source_path(source_id)
                data = snapshot.read(path)
                source = rec.parse_source(data, path) if data is not None else None
                cache[source_id] = [str(s) for s in source.extra.get("speakers") or []] if source else []
            except Exception:
                cache[source_id] = []
        out += cache[source_id]
    return list(dict.fromkeys(out))


def index_graph(
    ctx: "Context",
    *,
    backend: Any = None,
    progress: Callable[[int, int], None] | None = None,
    only: list[str] | None = None,
    full: bool = True,
    session: "GraphSession | None" = None,
) -> IndexGraphResult:
    """Bring the graph files in line with the records (catch-up), in one commit after the records.

    Every episodic/semantic record without a graph file, or whose graph file was extracted from
    other content (the record was edited), is extracted; a graph file whose record is gone is
    removed.

    Args:
        backend: the :mod:`memrepo.llm` backend (default: the one the settings name).
        progress: called with (done, total) after each record.
        only: restrict extraction to these record ids.
        full: look at every record and graph file; False looks only at what changed since the
            last complete run (the tree diff; a full scan when that is unknown).
        session: state kept between the runs of one process (an ingest's sessions): the anchor
            registry is carried over instead of being read from the caught-up graph index each run.

    Returns:
        What was indexed and what failed; failures never raise and never touch records.
    """
    store = ctx.store
    snapshot = store.snapshot()
    # Without a known complete commit, the after-write step checks presence only (it must stay cheap at
    # any size); `memrepo index` reads every graph file and so also finds records edited before that.
    work = work_since(store, snapshot, None if full else synced_commit(store), read_graphs=full)
    todo = work.extract
    if only is not None:
        wanted = set(only)
        todo = [(p, b) for p, b in todo if memory_id_of_path(p) in wanted]
    result = IndexGraphResult(commit=None, pending=len(todo), removed=list(work.remove),
                              stale=[i for i in work.stale if only is None or i in set(only)])
    files: dict[str, bytes | None] = {path: None for path in work.remove}
    blobs: dict[str, str] = {}  # graph path -> the record blob it follows
    labels: dict[str, list[tuple[str, str, str]]] = {}  # graph path -> its label and type rows (for ``session``)
    if todo:
        with ctx.model(backend) as model:  # a backend of its own (closed after) unless one was given
            files.update(_extract_all(ctx, snapshot, todo, model, progress, result, blobs, session, labels))
    if files:
        result.commit = _commit(ctx, files, blobs, result)
    if session is not None:
        session.committed(store, snapshot.commit, result.commit, files, labels)
    if only is None and snapshot.commit:
        _set_state(store, CHECKED_FILE, snapshot.commit)
        if not result.failed:
            # In line at the commit made on top of the snapshot read; at the snapshot read if nothing was needed.
            parents = store.commit_of(result.commit).parents if result.commit else None
            if result.commit and parents == (snapshot.commit,):
                _set_state(store, SYNCED_FILE, result.commit)
            elif not files:
                _set_state(store, SYNCED_FILE, snapshot.commit)
    return result


def _extract_all(ctx: "Context", snapshot: Any, todo: list[tuple[str, str]], backend: Any,
                 progress: Callable[[int, int], None] | None, result: IndexGraphResult,
                 blobs: dict[str, str], session: "GraphSession | None" = None,
                 labels: dict[str, list[tuple[str, str, str]]] | None = None) -> dict[str, bytes]:
    """Graph files for ``todo`` (fail-soft per record); ``labels`` gets each file's label rows."""
    registry = session.registry(ctx, snapshot.commit) if session is not None else _fresh_registry(ctx)
    files: dict[str, bytes] = {}
    ordered = list(_ordered(snapshot, todo))
    pool = ExtractionPool.open(len(ordered), backend)
    try:
        for done, (path, blob, prepared, replies) in enumerate(_prepared(snapshot, ordered, session, pool), 1):
            record_id = memory_id_of_path(path)
            try:
                if isinstance(prepared, Exception):
                    raise prepared
                record, participants = prepared
                result.in_workers += replies is not None
                graph = extract_memory(record, namespace=ctx.settings.namespace, backend=backend, registry=registry,
                                       participants=participants, replies=replies)
                graph.record_blob = blob
                files[graph_path(record.id)] = memory_turtle(graph)
                blobs[graph_path(record.id)] = blob
                if labels is not None:
                    labels[graph_path(record.id)] = label_rows(graph, files[graph_path(record.id)], graph_path(record.id))
                result.indexed.append(record.id)
                result.frames += len(graph.frames)
                result.anchors += len(graph.anchors)
                result.repaired += int(graph.repaired)
            except Exception as exc:  # fail-soft (M A.1): log, keep the record, retry on the next run
                message = f"{type(exc).__name__}: {exc}"
                log.warning("graph: indexing %s failed (%s); it stays unindexed until the next `memrepo index`",
                            record_id, message)
                result.failed[record_id] = message
            if progress:
                progress(done, len(todo))
    finally:
        if pool is not None:
            pool.close()
        if session is None and registry.cache is not None:
            registry.cache.close()
    return files


_WINDOW = 256  # records parsed and handed to the extraction workers ahead of the ones being canonicalized

Prepared = tuple[str, str, "tuple[rec.Record, list[str]] | Exception", "OfflineReplies | None"]


def _prepared(snapshot: Any, ordered: list[tuple[str, str]], session: "GraphSession | None",
              pool: ExtractionPool | None) -> Iterator[Prepared]:
    """(path, blob, (record, participants) or the error reading it, offline replies computed ahead or None).

    With a pool, each window of records is parsed and handed to the workers before the previous
    window's replies are used, so the workers run while this process canonicalizes.
    """
    sources: dict[str, list[str]] = {}

    def prepare(path: str, blob: str) -> "tuple[rec.Record, list[str]] | Exception":
        try:
            record = session.record(blob) if session is not None else None
            if record is None:
                record = rec.parse(snapshot.read_blob(blob), path)
            return record, _participants(snapshot, record, sources)
        except Exception as exc:  # reported per record by the caller (fail-soft)
            return exc

    if pool is None:
        for path, blob in ordered:
            yield path, blob, prepare(path, blob), None
        return

    def window(start: int) -> tuple[list[tuple[str, str, Any]], list[Any]]:
        rows = [(path, blob, prepare(path, blob)) for path, blob in ordered[start:start + _WINDOW]]
        items = [(record_variables(p[0], p[1]), is_visual(p[0])) for _, _, p in rows if not isinstance(p, Exception)]
        return rows, pool.submit(items)

    ahead = window(0)
    for start in range(0, len(ordered), _WINDOW):
        rows, chunks = ahead
        if start + _WINDOW < len(ordered):
            ahead = window(start + _WINDOW)
        replies = iter([r for future, size in chunks for r in pool.results(future, size)])
        for path, blob, prepared in rows:
            yield path, blob, prepared, None if isinstance(prepared, Exception) else next(replies)


def _fresh_registry(ctx: "Context") -> AnchorRegistry:
    """The registry of the graph index brought up to the branch tip (the anchors of every indexed graph file)."""
    from memrepo.graph.reader import open_reader

    reader = None
    try:
        reader = open_reader(ctx.store, ctx.settings)
    except Exception as exc:
        log.warning("graph: the graph index is unavailable (%s); canonicalizing against this run only", exc)
    registry = make_registry(ctx.store, ctx.settings, reader)
    if reader is not None:
        reader.close()
    return registry


def _ordered(snapshot: Any, todo: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Oldest mention first, so that canonical names are the ones used first."""
    return iter(sorted(todo, key=lambda pb: (pb[0].rsplit("/", 1)[-1], pb[0])))


def _commit(ctx: "Context", files: dict[str, bytes | None], blobs: dict[str, str],
            result: IndexGraphResult) -> str | None:
    def change(snap: Any) -> dict[str, bytes | None]:
        # Re-run on a new tip: another writer may have indexed, edited or removed a record meanwhile.
        out: dict[str, bytes | None] = {}
        for path, data in files.items():
            memory_id = memory_id_of_path(path)
            record = _record_entry(snap, memory_id)
            if data is None:
                if record is None and snap.exists(path):
                    out[path] = None
            elif record is not None and record[1] == blobs[path]:
                current = snap.read(path)
                if current is None or recorded_blob(current) != blobs[path]:
                    out[path] = data
        return out

    written = sum(1 for d in files.values() if d is not None)
    removed = len(files) - written
    title = f"Index graph: {written} memories, {result.frames} frames" + (f", {removed} removed" if removed else "")
    message = f"{title}\n\nmemrepo index ({len(result.failed)} failed)"
    commit = ctx.store.commit(change, message, author=ctx.commit_author)
    return commit.decode() if commit else None


def after_write(ctx: "Context", record_ids: list[str], session: "GraphSession | None" = None) -> None:
    """The graph step every write runs after its record commit (``AFTER_COMMIT`` in memrepo/capabilities.py).

    Incremental: it looks at the tree diff since the last complete run, so a one-record write
    costs one record's extraction, and anything a crashed or failed run left behind (records
    without graph files, edited records, graph files of removed records) is caught up too.
    ``session``: state kept between the writes of one run (see :class:`GraphSession`).
    """
    result = index_graph(ctx, full=False, session=session)
    if result.failed:
        log.warning("graph: %d of %d records could not be indexed; run `memrepo index` to retry",
                    len(result.failed), result.pending)


after_ingest = after_write  # the name ingestion used


# --- many writes in one process -----------------------------------------------------------


class GraphSession:
    """The graph step of a run of writes in one process (an ingest, one commit per session), with memory.

    Each write's extraction canonicalizes against the anchors of every graph file committed
    before it. Alone, a write reads them from the graph index, which it first brings up to the
    branch tip (parsing and inserting the previous write's graph files) and then reads whole.
    A session instead keeps the index's label and type counts (:class:`memrepo.graph.index.LabelCounts`)
    in memory, adds the rows of the graph files it commits itself, and keeps the embedder, the
    embedding cache and the name vectors open; so every write gets the same registry, hence the
    same graph files, byte for byte, as without it. Whenever anything else changed a graph file
    (another writer, a removal, a re-extraction) it reads the index again. The graph index itself
    is left to catch up on its next read, in one transaction.
    """

    def __init__(self) -> None:
        self.counts: Any = None  # LabelCounts at ``commit``
        self.commit: str | None = None
        self._embedder: Any = None
        self._cache: _VectorMemo | None = None
        self._opened = False
        self._records: dict[str, rec.Record] = {}  # blob id -> the record that blob holds (see ``expect``)
        # The registry of the last write, kept while it is the one the counts give (see ``committed``),
        # and how many names it had before that write's extraction added its anchors.
        self._registry: AnchorRegistry | None = None
        self._registered = 0
        self._unconfirmed = False  # the registry was handed out and ``committed`` has not vouched for it since

    def __call__(self, ctx: "Context", record_ids: list[str]) -> None:
        """The after-commit step (an entry of ``ctx.capabilities.after_commit``)."""
        after_write(ctx, record_ids, self)

    def registry(self, ctx: "Context", commit: str | None) -> AnchorRegistry:
        """The registry a write at ``commit`` (the branch tip it extracts at) canonicalizes against."""
        if not self._opened:
            self._opened = True
            base = make_registry(ctx.store, ctx.settings, None)  # the embedder and cache, as a lone write has
            self._embedder, self._cache = base.embedder, _VectorMemo(base.cache)
        if self.counts is None or commit is None or self.commit is None or not self._graph_unchanged(ctx, commit):
            self._reload(ctx, commit)
            self._registry = None
        else:
            self.commit = commit  # no graph file changed since: the counts hold at ``commit`` too
        if self._registry is None or self._unconfirmed:
            self._registry = AnchorRegistry(self._embedder, self._cache)
            self._registry.add(self.counts.names())
        self._registered = len(self._registry)
        self._unconfirmed = True
        return self._registry

    def expect(self, records: Iterable[rec.Record]) -> None:
        """Records a write is about to commit: their graph step takes them as they are, not parsed back from Git.

        Each is kept under the blob id of its file (``rec.serialize``), so only a record committed
        byte for byte as given is taken (a sealed or merged one is parsed from its blob, as without this).
        """
        self._records = {_blob_id(rec.serialize(r)): r for r in records if r.type in INDEXED_TYPES}

    def record(self, blob: str) -> rec.Record | None:
        """The record ``expect`` was given whose file is ``blob``, or None."""
        return self._records.pop(blob, None)

    def committed(self, store: "GitStore", base: str | None, commit: str | None, files: dict[str, bytes | None],
                  labels: dict[str, list[tuple[str, str, str]]]) -> None:
        """Add the label rows of the graph files ``commit`` (made on ``base``) added; forget them on anything else."""
        from memrepo.graph.index import wants
        from memrepo.index.base import tree_diff

        if commit is None:
            # Nothing committed: the registry holds only what the counts give unless the extraction added to it.
            self._unconfirmed = self._registry is not None and len(self._registry) != self._registered
            return
        if base is None or base != self.commit or self.counts is None \
                or store.commit_of(commit).parents != (base,):
            self.commit = self._registry = None
            return
        changes = [c for c in tree_diff(store, base, commit) if wants(c.path)]
        for change in changes:
            data = files.get(change.path)
            if change.old is not None or change.new is None or data is None or change.path not in labels \
                    or _blob_id(data) != change.new:
                self.commit = self._registry = None  # a file replaced or removed: its old rows are not known here
                return
        touched: set[str] = set()
        new: set[str] = set()  # representatives that had no label before this commit
        for change in changes:
            for anchor, prop, value in labels[change.path]:
                rep = self.counts.closure.get(anchor, anchor)
                if rep not in self.counts.labels:
                    new.add(rep)
                self.counts.add(anchor, prop, value)
                touched.add(rep)
        self.commit = commit
        if self._registry is not None and self._registry_holds(touched, new):
            self._unconfirmed = False
        else:
            self._registry = None

    def _registry_holds(self, touched: set[str], new: set[str]) -> bool:
        """Whether the registry the last write extended is the one the updated counts give: the same name and
        type under every key (only the order of its names differs, which no decision depends on)."""
        from memrepo.graph.canon import kappa

        registry = self._registry
        assert registry is not None
        for rep in sorted(touched):
            if rep not in self.counts.labels:
                continue  # a type row alone: no name, not registered
            name, type_ = self.counts.name_of(rep)
            index = registry.keys.get(kappa(name))
            if index is None or registry.names[index] != name or registry.types[index] != type_:
                return False  # a name or type changed, or two anchors share a key
            if rep in new and index < self._registered:
                return False  # a new anchor whose key an older one holds: the fresh order decides which wins
        return True

    def close(self) -> None:
        if self._cache is not None and self._cache.cache is not None:
            self._cache.cache.close()
        self._cache = None
        self._opened = False

    def _graph_unchanged(self, ctx: "Context", commit: str) -> bool:
        from memrepo.graph.index import wants
        from memrepo.index.base import tree_diff

        return commit == self.commit or not any(wants(c.path) for c in tree_diff(ctx.store, self.commit, commit))

    def _reload(self, ctx: "Context", commit: str | None) -> None:
        from memrepo.graph.index import LabelCounts
        from memrepo.graph.reader import open_reader

        self.counts, self.commit = LabelCounts({}), None
        try:
            reader = open_reader(ctx.store, ctx.settings)
        except Exception as exc:
            log.warning("graph: the graph index is unavailable (%s); canonicalizing against this run only", exc)
            return
        try:
            self.counts = reader.label_counts()
            self.commit = commit
        except sqlite3.Error as exc:
            log.warning("graph: cannot read anchors from the graph index (%s)", exc)
        finally:
            reader.close()


class _VectorMemo:
    """The embedding cache with the vectors it gave kept in memory: a session's registries embed the same names."""

    def __init__(self, cache: Any):
        self.cache = cache
        self.vectors: dict[str, Any] = {}

    def embed(self, embedder: Any, items: list[tuple[str, str]]) -> Any:
        import numpy as np

        missing = list({k: t for k, t in items if k not in self.vectors}.items())
        if missing:
            if self.cache is not None:
                got = self.cache.embed(embedder, missing)
            else:
                got = np.asarray(embedder.embed([t for _, t in missing]), dtype=np.float32)
            for (key, _), vector in zip(missing, got):
                self.vectors[key] = vector
        if not items:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([self.vectors[k] for k, _ in items]).astype(np.float32)


def _blob_id(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_IRI_UNSAFE = set('<>"{}|^`\\ ')


def label_rows(graph: Any, data: bytes, path: str) -> list[tuple[str, str, str]]:
    """(anchor, prop, value) of the label and type rows the graph index takes from one graph file.

    Read from the model the file was written from (what parsing its Turtle gives, without parsing);
    a name or IRI that Turtle might read differently is parsed instead.
    """
    out: set[tuple[str, str, str]] = set()
    for anchor in graph.anchors:
        if any(c in _IRI_UNSAFE or ord(c) < 0x20 for c in anchor.iri) or any(
                ord(c) < 0x20 and c not in "\n\r\t" for c in anchor.name + anchor.type):
            return _parsed_label_rows(data, path)
        out.add((anchor.iri, "label", anchor.name))
        out.add((anchor.iri, "entityType", anchor.type))
    return sorted(out)


def _parsed_label_rows(data: bytes, path: str) -> list[tuple[str, str, str]]:
    from memrepo.graph.rdf import TurtleError, parse_turtle, rows

    try:
        parsed = rows(parse_turtle(data, path))
    except TurtleError:
        return []  # the index records a problem for it and takes no rows
    return sorted({(a, p, v) for a, p, v, _n3 in parsed.anchor_facts if p in ("label", "entityType")})
