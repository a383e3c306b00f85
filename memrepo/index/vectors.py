"""usearch vector indexes: record embeddings (a derived index) and anchor-name embeddings (DESIGN.md §5).

Vectors are L2-normalised, the metric is cosine; usearch reports the cosine
distance ``1 - cos``. Record vectors use the same 63-bit key as the full-text
document of the file (:func:`memrepo.index.fulltext.vector_key`), so a vector
hit is resolved to its record through the full-text index.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from memrepo import records as rec
from memrepo.errors import RecordError
from memrepo.index.base import Change, DerivedIndex, UpdateContext
from memrepo.index.embed import Embedder, EmbeddingCache, get_embedder, import_onnxruntime, model_id_for, text_key
from memrepo.index.fulltext import vector_key
from memrepo.settings import EmbeddingSettings

if TYPE_CHECKING:
    import numpy as np
    from usearch.index import Index

SCHEMA_VERSION = 1
RECORD_FILE = "records.usearch"
RECORD_DTYPE = "f16"  # half the size of f32, cosines within ~1e-3 of the exact ones
EMBED_TEXT_VERSION = "r1"  # part of the cache key: bump when record_text changes


def usearch_index(ndim: int, dtype: str = "f32") -> "Index":
    """A new cosine usearch index (onnxruntime is imported first: the reverse order crashes)."""
    import_onnxruntime()
    from usearch.index import Index

    return Index(ndim=ndim, metric="cos", dtype=dtype)


def load_usearch(path: Path, *, view: bool = False) -> "Index":
    """Open a saved usearch index; ``view`` memory-maps it read-only (fast, for readers)."""
    import_onnxruntime()
    from usearch.index import Index

    index = Index.restore(str(path), view=view)
    if index is None:
        raise ValueError(f"{path.name} is not a usearch index")
    return index


def embedder_id(settings: EmbeddingSettings) -> str:
    """The model id an embedder built from ``settings`` reports, without loading it."""
    return model_id_for(settings)


def record_text(record: rec.Record) -> str | None:
    """The text a record is embedded from (None: not embedded, e.g. vault values)."""
    if record.type == "vault":
        return None
    return f"{record.summary}\n{record.text}" if record.summary and not record.text.startswith(record.summary) else record.text


class RecordVectorIndex(DerivedIndex):
    """One vector per record file, keyed by its path, embedded through the cache."""

    name = "vectors"
    schema = SCHEMA_VERSION

    def identity(self) -> dict[str, str]:
        return {"model": embedder_id(self.settings.embedding)}

    def identity_changed(self, old: dict, new: dict, count: int) -> str:
        return (
            f"embedding model changed from {old.get('model')} to {new.get('model')}: "
            f"re-embedding {count} records (vectors of the old model stay in the cache)"
        )

    def wants(self, path: str) -> bool:
        return rec.is_record_path(path)

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        import numpy as np

        embedder = get_embedder(self.settings.embedding)
        items: list[tuple[int, str, str]] = []  # (key, cache key, text)
        removed: list[int] = []
        for change in changes:
            key = vector_key(change.path)
            if change.old is not None:
                removed.append(key)
            if change.new is not None:
                text = _text_of(change.path, ctx.read_blob(change.new))
                if text is not None:
                    items.append((key, f"{EMBED_TEXT_VERSION}:{change.new}", text))
        if previous is not None and (previous / RECORD_FILE).exists():
            index = load_usearch(previous / RECORD_FILE)
        else:
            index = usearch_index(embedder.dim, RECORD_DTYPE)
        for key in removed:
            if index.contains(key):
                index.remove(key)
        with ctx.progress(f"embeddings ({len(items)} records)", len(items)) as bar:
            vectors = ctx.embedding_cache.embed(embedder, [(ck, t) for _, ck, t in items], progress=bar.update)
        if items:
            keys = np.array([k for k, _, _ in items], dtype=np.uint64)
            for key in keys:  # adding an existing key raises in usearch: a modified file was removed above
                if index.contains(int(key)):
                    index.remove(int(key))
            index.add(keys, vectors, threads=0 if len(items) > 256 else 1)
        index.save(str(folder / RECORD_FILE))

    def verify(self, folder: Path) -> None:
        load_usearch(folder / RECORD_FILE, view=True)


def _text_of(path: str, data: bytes) -> str | None:
    try:
        return record_text(rec.parse(data, path))
    except RecordError:
        return None


class VectorReader:
    """Searches one published generation of the record vectors."""

    def __init__(self, folder: Path):
        self.index = load_usearch(folder / RECORD_FILE, view=True)

    def __len__(self) -> int:
        return len(self.index)

    def search(self, vector: "np.ndarray", k: int) -> list[tuple[int, float]]:
        """(key, cosine) of the ``k`` nearest record vectors."""
        if len(self.index) == 0 or k <= 0:
            return []
        matches = self.index.search(vector, min(k, len(self.index)))
        return [(int(key), 1.0 - float(dist)) for key, dist in zip(matches.keys, matches.distances)]


def _anchor_key(anchor_id: str) -> int:
    return int.from_bytes(hashlib.sha1(anchor_id.encode("utf-8")).digest()[:8], "big") >> 1


class AnchorVectors:
    """Anchor-name embeddings for canonicalization and AutoDream pairs (M§2.3, §2.5).

    Usable in memory (while extracting a batch) and saved into a derived index's
    generation folder (``anchors.usearch`` + ``anchors.json``)::

        vectors = AnchorVectors.load(previous, embedder, ctx.embedding_cache) if previous else AnchorVectors(embedder, ctx.embedding_cache)
        vectors.add("urn:memrepo:anchor:ab12", "Mia")
        vectors.search("mia", k=4, min_cosine=0.72)   # -> [("urn:memrepo:anchor:ab12", 1.0)]
        vectors.save(folder)

    Names are embedded through the cache (key: the Git blob id of the name), so a
    name is never embedded twice. Cosines are exact (f32 vectors).
    """

    INDEX_FILE = "anchors.usearch"
    NAMES_FILE = "anchors.json"

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None = None):
        self.embedder = embedder
        self.cache = cache
        self._index = usearch_index(embedder.dim, "f32")
        self._names: dict[str, str] = {}
        self._ids: dict[int, str] = {}

    @classmethod
    def load(cls, folder: Path, embedder: Embedder, cache: EmbeddingCache | None = None) -> "AnchorVectors":
        """Open the anchor vectors saved in ``folder`` (an empty set if none were saved there)."""
        self = cls(embedder, cache)
        names_path = folder / cls.NAMES_FILE
        if names_path.exists():
            data = json.loads(names_path.read_text(encoding="utf-8"))
            if data.get("model") != embedder.model_id:
                self.add_many(sorted(data["names"].items()))  # another model: re-embed every name
                return self
            self._names = dict(data["names"])
            self._ids = {_anchor_key(a): a for a in self._names}
            if (folder / cls.INDEX_FILE).exists() and self._names:
                self._index = load_usearch(folder / cls.INDEX_FILE)
        return self

    def save(self, folder: Path) -> None:
        """Write ``anchors.usearch`` and ``anchors.json`` (sorted, deterministic) into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        self._index.save(str(folder / self.INDEX_FILE))
        data = {"model": self.embedder.model_id, "names": dict(sorted(self._names.items()))}
        (folder / self.NAMES_FILE).write_text(json.dumps(data, sort_keys=True, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, anchor_id: object) -> bool:
        return anchor_id in self._names

    def name(self, anchor_id: str) -> str | None:
        return self._names.get(anchor_id)

    def embed_names(self, names: Sequence[str]) -> "np.ndarray":
        if self.cache is not None:
            return self.cache.embed(self.embedder, [(f"name:{text_key(n)}", n) for n in names])
        return self.embedder.embed(list(names))

    def add(self, anchor_id: str, name: str) -> None:
        """Add (or rename) one anchor."""
        self.add_many([(anchor_id, name)])

    def add_many(self, anchors: Iterable[tuple[str, str]]) -> None:
        import numpy as np

        batch = dict(anchors)
        batch = {a: n for a, n in batch.items() if self._names.get(a) != n}
        if not batch:
            return
        ids = list(batch)
        vectors = self.embed_names([batch[a] for a in ids])
        keys = []
        for anchor_id in ids:
            key = _anchor_key(anchor_id)
            if self._index.contains(key):
                self._index.remove(key)
            keys.append(key)
            self._ids[key] = anchor_id
            self._names[anchor_id] = batch[anchor_id]
        self._index.add(np.array(keys, dtype=np.uint64), vectors)

    def remove(self, anchor_id: str) -> None:
        key = _anchor_key(anchor_id)
        if anchor_id in self._names:
            del self._names[anchor_id]
            self._ids.pop(key, None)
            if self._index.contains(key):
                self._index.remove(key)

    def search(self, name: str, k: int = 4, min_cosine: float = 0.0) -> list[tuple[str, float]]:
        """Up to ``k`` anchors whose name is nearest to ``name``: (anchor id, cosine), best first, cosine >= ``min_cosine``."""
        return self.search_vector(self.embed_names([name])[0], k, min_cosine)

    def search_vector(self, vector: "np.ndarray", k: int = 4, min_cosine: float = 0.0) -> list[tuple[str, float]]:
        if not self._names or k <= 0:
            return []
        matches = self._index.search(vector, min(k, len(self._names)))
        out = []
        for key, dist in zip(matches.keys, matches.distances):
            anchor_id = self._ids.get(int(key))
            cosine = round(1.0 - float(dist), 6)
            if anchor_id is not None and cosine >= min_cosine:
                out.append((anchor_id, cosine))
        out.sort(key=lambda item: (-item[1], item[0]))
        return out
