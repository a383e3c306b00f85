"""`memrepo index`: graph extraction catch-up, committed after the records (M A.1 write ordering).

Every episodic and semantic record without a graph file gets one; the files are
committed together in one commit through ``store.commit``. Failures are
fail-soft: a record whose extraction fails is logged and left for the next run,
and nothing here ever touches a record file.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from memrepo import records as rec
from memrepo.graph.canon import AnchorRegistry
from memrepo.graph.extract import extract_memory
from memrepo.graph.model import FRAMES_FOLDER, INDEXED_TYPES, graph_path
from memrepo.graph.rdf import memory_turtle

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo
    from memrepo.graph.index import GraphReader

log = logging.getLogger("memrepo.graph")

#: Test seam for the fail-soft invariant: called with each record before extraction.
BEFORE_EXTRACT: list[Callable[[rec.Record], None]] = []


@dataclass
class IndexGraphResult:
    """What one catch-up run did."""

    commit: str | None
    indexed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    frames: int = 0
    anchors: int = 0
    repaired: int = 0
    pending: int = 0  # records that had no graph file when the run started

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit, "indexed": self.indexed, "failed": self.failed, "frames": self.frames,
            "anchors": self.anchors, "repaired": self.repaired, "pending": self.pending,
        }


def pending_records(snapshot: Any) -> list[tuple[str, str]]:
    """(path, blob) of every episodic and semantic record that has no graph file at ``snapshot``."""
    indexed = {p.rsplit("/", 1)[-1][:-4] for p, _ in snapshot.walk(FRAMES_FOLDER) if p.endswith(".ttl")}
    out = []
    for folder in INDEXED_TYPES:
        for path, blob in snapshot.walk(folder):
            if rec.is_record_path(path) and path.rsplit("/", 1)[-1][:-3] not in indexed:
                out.append((path, blob))
    return out


def open_reader(repo: "MemoryRepo", rev: str | None = None) -> "GraphReader":
    """The graph index at ``rev`` (HEAD by default), caught up first."""
    from memrepo.graph.index import DB_FILE, INDEX_NAME, GraphReader
    from memrepo.index.base import Indexes

    indexes = Indexes(repo.store, repo.settings)
    try:
        resolved = repo.store.resolve(rev) if rev else None
        commit = resolved.decode() if resolved else None
        folder = indexes.folder(INDEX_NAME, commit)
    finally:
        indexes.close()
    return GraphReader(folder / DB_FILE)


def registry_names(reader: "GraphReader") -> list[tuple[str, str]]:
    """(canonical name, type) of every anchor representative, in one pass over the anchor rows."""
    labels: dict[str, Counter] = {}
    types: dict[str, Counter] = {}
    for anchor, prop, value in reader.db.execute(
            "SELECT anchor, prop, value FROM anchor_facts WHERE prop IN ('label', 'entityType')"):
        rep = reader.representative(anchor)
        (labels if prop == "label" else types).setdefault(rep, Counter())[value] += 1
    out = []
    for rep in sorted(labels):
        name = sorted(labels[rep].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        kind = sorted(types.get(rep, Counter({"concept": 1})).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        out.append((name, kind))
    return out


def make_registry(repo: "MemoryRepo", reader: "GraphReader | None") -> AnchorRegistry:
    """The namespace's anchors with name vectors (the shared embedder and its cache); κ-only without an embedder."""
    embedder = cache = None
    try:
        from memrepo.index.base import open_embedding_cache
        from memrepo.index.embed import get_embedder

        embedder = get_embedder(repo.settings.embedding)
        cache = open_embedding_cache(repo.store)
    except Exception as exc:  # an embedder that cannot load leaves exact-key canonicalization only
        log.warning("graph: no embedder for canonicalization candidates (%s); exact keys only", exc)
    registry = AnchorRegistry(embedder, cache)
    if reader is not None:
        try:
            registry.add(registry_names(reader))
        except sqlite3.Error as exc:
            log.warning("graph: cannot read anchors from the graph index (%s)", exc)
    return registry


def _participants(view: Any, record: rec.Record, cache: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for citation in record.sources:
        source_id, _ = rec.split_citation(citation)
        if source_id not in cache:
            try:
                source = view.source(source_id)
                cache[source_id] = [str(s) for s in source.extra.get("speakers") or []]
            except Exception:
                cache[source_id] = []
        out += cache[source_id]
    return list(dict.fromkeys(out))


def index_graph(
    repo: "MemoryRepo",
    *,
    backend: Any = None,
    progress: Callable[[int, int], None] | None = None,
    only: list[str] | None = None,
) -> IndexGraphResult:
    """Extract and commit graph files for every episodic/semantic record that has none (catch-up).

    Args:
        backend: the :mod:`memrepo.llm` backend (default: the one the settings name).
        progress: called with (done, total) after each record.
        only: restrict to these record ids (still only those without a graph file).

    Returns:
        What was indexed and what failed; failures never raise and never touch records.
    """
    snapshot = repo.store.snapshot()
    todo = pending_records(snapshot)
    if only is not None:
        wanted = set(only)
        todo = [(p, b) for p, b in todo if p.rsplit("/", 1)[-1][:-3] in wanted]
    result = IndexGraphResult(commit=None, pending=len(todo))
    if not todo:
        return result
    if backend is None:
        from memrepo.llm import STATS_FILE, get_backend

        backend = get_backend(repo.settings, stats_path=repo.store.state_dir / STATS_FILE)
    reader = None
    try:
        reader = open_reader(repo)
    except Exception as exc:
        log.warning("graph: the graph index is unavailable (%s); canonicalizing against this run only", exc)
    registry = make_registry(repo, reader)
    if reader is not None:
        reader.close()
    files: dict[str, bytes] = {}
    sources: dict[str, list[str]] = {}
    view = repo.at(snapshot.commit)
    for done, (path, blob) in enumerate(_ordered(snapshot, todo), 1):
        record_id = path.rsplit("/", 1)[-1][:-3]
        try:
            record = rec.parse(snapshot.read_blob(blob), path)
            for hook in BEFORE_EXTRACT:
                hook(record)
            graph = extract_memory(record, namespace=repo.settings.namespace, backend=backend, registry=registry,
                                   participants=_participants(view, record, sources))
            files[graph_path(record.id)] = memory_turtle(graph)
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
    if files:
        result.commit = _commit(repo, files, result)
    if registry.cache is not None:
        registry.cache.close()
    return result


def _ordered(snapshot: Any, todo: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Oldest mention first, so that canonical names are the ones used first."""
    return iter(sorted(todo, key=lambda pb: (pb[0].rsplit("/", 1)[-1], pb[0])))


def _commit(repo: "MemoryRepo", files: dict[str, bytes], result: IndexGraphResult) -> str | None:
    def change(snap: Any) -> dict[str, bytes]:
        # Only files that are still missing: another writer may have indexed some meanwhile.
        return {p: data for p, data in files.items() if not snap.exists(p)}

    message = (f"Index graph: {len(files)} memories, {result.frames} frames\n\n"
               f"memrepo index ({len(result.failed)} failed)")
    commit = repo.store.commit(change, message, author=repo.commit_author)
    return commit.decode() if commit else None


def after_ingest(repo: "MemoryRepo", record_ids: list[str]) -> None:
    """The step ingestion runs after its record commit (registered in ``memrepo.write.AFTER_INGEST``)."""
    result = index_graph(repo)
    if result.failed:
        log.warning("graph: %d of %d records could not be indexed; run `memrepo index` to retry",
                    len(result.failed), result.pending)
