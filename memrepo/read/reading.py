"""What one recall reads, opened once: the indexes at one commit, the embedder, the records and sources it cites.

Every lane of :mod:`memrepo.read.recall` takes this ``Reading``; ``recall`` closes it when it is done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from memrepo import records as rec
from memrepo.errors import RecordError

if TYPE_CHECKING:
    from memrepo.read.rerank import Features
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore


class Reading:
    """Opens what one recall reads (indexes at one commit, the embedder) once, lazily."""

    def __init__(self, store: "GitStore", settings: "Settings", commit: str | None):
        from memrepo.index.base import Indexes

        self.store = store
        self.settings = settings
        self.commit = commit
        self.snapshot = store.snapshot(commit.encode() if commit else None)
        self.indexes = Indexes(store, settings)
        self._opened: dict[str, Any] = {}
        self._stack: list[Any] = []
        self._qvec: Any = None
        self._records: dict[str, rec.Record | None] = {}
        self._sources: dict[str, rec.Source | None] = {}
        self.features: dict[str, Features] = {}  # rerank's, by record id

    def close(self) -> None:
        for cm in reversed(self._stack):
            try:
                cm.__exit__(None, None, None)
            except Exception:
                pass
        cache = self._opened.get("_cache")
        if cache is not None:  # index readers belong to the index layer (it may keep them open); the cache is ours
            cache.close()
        self.indexes.close()

    def reader(self, name: str, opener: Callable) -> Any:
        if name not in self._opened:
            cm = self.indexes.reading(name, self.commit, opener)
            self._opened[name] = cm.__enter__()
            self._stack.append(cm)
        return self._opened[name]

    def fulltext(self) -> Any:
        from memrepo.index.fulltext import FullTextReader

        return self.reader("fulltext", FullTextReader)

    def vectors(self) -> Any:
        from memrepo.index.vectors import VectorReader

        return self.reader("vectors", VectorReader)

    def provenance(self) -> Any:
        from memrepo.read.provenance import ProvenanceReader

        return self.reader("provenance", ProvenanceReader)

    @property
    def embedder(self) -> Any:
        from memrepo.index.embed import get_embedder

        return get_embedder(self.settings.embedding)

    def query_vector(self, question: str) -> Any:
        if self._qvec is None:
            self._qvec = self.embedder.embed([question])[0]
        return self._qvec

    def query_vectors(self, question: str, other: str) -> tuple[Any, Any]:
        """The question's vector and another text's, in one model run if the question's is not known yet."""
        if self._qvec is None:
            self._qvec, vector = self.embedder.embed([question, other])
            return self._qvec, vector
        return self._qvec, self.embedder.embed([other])[0]

    def name_vectors(self, names: Sequence[str]) -> Any:
        """Anchor-name vectors through the embedding cache (the keys AnchorVectors uses)."""
        from memrepo.index.base import open_embedding_cache
        from memrepo.index.embed import text_key

        cache = self._opened.get("_cache")
        if cache is None:
            cache = self._opened["_cache"] = open_embedding_cache(self.store)
        return cache.embed(self.embedder, [(f"name:{text_key(n)}", n) for n in names])

    def source(self, source_id: str) -> rec.Source | None:
        if source_id not in self._sources:
            path = rec.source_path(source_id)
            data = self.snapshot.read(path)
            self._sources[source_id] = rec.parse_source(data, path) if data is not None else None
        return self._sources[source_id]

    def record(self, record_id: str) -> rec.Record | None:
        if record_id not in self._records:
            try:
                path = rec.record_path(record_id)
                data = self.snapshot.read(path)
                self._records[record_id] = rec.parse(data, path) if data is not None else None
            except RecordError:
                self._records[record_id] = None
        return self._records[record_id]
