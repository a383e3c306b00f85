"""The anchor registry a graph catch-up canonicalizes against (:class:`memrepo.graph.canon.AnchorRegistry`).

Alone, a run reads it from the graph index brought up to the branch tip (:func:`fresh_registry`);
the writes of one process carry it from one write to the next (:class:`GraphSession`), with the
same graph files, byte for byte, as without it.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING, Any, Iterable

from memrepo import records as rec
from memrepo.graph.canon import AnchorRegistry
from memrepo.graph.model import indexed_id

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.graph.reader import GraphReader
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore

log = logging.getLogger("memrepo.graph")


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


def fresh_registry(ctx: "Context") -> AnchorRegistry:
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
        from memrepo.graph.build import after_write

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
        self._records = {_blob_id(rec.serialize(r)): r for r in records if indexed_id(r.id)}

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
