"""`memrepo index`: graph extraction catch-up, committed after the records (M A.1 write ordering).

The graph files follow the records: every episodic, semantic and procedural record (no skill) without a
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

What the graph needs at a commit, and the state per clone, are in :mod:`memrepo.graph.work`; the
anchor registry a run canonicalizes against (and :class:`GraphSession`) in :mod:`memrepo.graph.registry`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from memrepo import records as rec
from memrepo.graph.extract import OfflineReplies, extract_memory, is_visual, record_variables
from memrepo.graph.model import graph_path
from memrepo.graph.parallel import ExtractionPool
from memrepo.graph.rdf import memory_turtle, recorded_blob
from memrepo.graph.registry import GraphSession, fresh_registry, label_rows, make_registry
from memrepo.graph.work import (CHECKED_FILE, SYNCED_FILE, GraphWork, graph_work, memory_id_of_path, pending_records,
                                record_entry, set_state, synced_commit, work_since)

if TYPE_CHECKING:
    from memrepo.context import Context

__all__ = [
    "CHECKED_FILE", "SYNCED_FILE", "GraphSession", "GraphWork", "IndexGraphResult", "after_ingest", "after_write",
    "graph_work", "index_graph", "make_registry", "memory_id_of_path", "pending_records", "synced_commit",
    "work_since",
]

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

    Every episodic, semantic and procedural record without a graph file, or whose graph file was extracted from
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
        set_state(store, CHECKED_FILE, snapshot.commit)
        if not result.failed:
            # In line at the commit made on top of the snapshot read; at the snapshot read if nothing was needed.
            parents = store.commit_of(result.commit).parents if result.commit else None
            if result.commit and parents == (snapshot.commit,):
                set_state(store, SYNCED_FILE, result.commit)
            elif not files:
                set_state(store, SYNCED_FILE, snapshot.commit)
    return result


def _extract_all(ctx: "Context", snapshot: Any, todo: list[tuple[str, str]], backend: Any,
                 progress: Callable[[int, int], None] | None, result: IndexGraphResult,
                 blobs: dict[str, str], session: "GraphSession | None" = None,
                 labels: dict[str, list[tuple[str, str, str]]] | None = None) -> dict[str, bytes]:
    """Graph files for ``todo`` (fail-soft per record); ``labels`` gets each file's label rows."""
    registry = session.registry(ctx, snapshot.commit) if session is not None else fresh_registry(ctx)
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
                                       participants=participants, replies=replies, reader=ctx.analyzer)
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
            record = record_entry(snap, memory_id)
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
