"""usearch vector indexes: record embeddings (a derived index) and anchor-name embeddings (DESIGN.md §5).

Vectors are L2-normalised, the metric is cosine; usearch reports the cosine
distance ``1 - cos``. Record vectors use the same 63-bit key as the full-text
document of the file (:func:`memrepo.index.fulltext.vector_key`), so a vector
hit is resolved to its record through the full-text index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from memrepo import records as rec
from memrepo.index.base import Change, DerivedIndex, UpdateContext
from memrepo.index.embed import (Embedder, EmbeddingCache, get_embedder, import_onnxruntime, model_id_for,
                                  text_key)
from memrepo.index.fulltext import vector_key
from memrepo.settings import EmbeddingSettings

if TYPE_CHECKING:
    import numpy as np
    from usearch.index import Index

SCHEMA_VERSION = 2
MAIN_FILE = "main.usearch"  # the bulk of the vectors; never modified once written (hard-linked between generations)
DELTA_FILE = "delta.usearch"  # vectors added or changed since main was written (small)
REMOVED_FILE = "removed.json"  # keys of main whose vector is deleted or superseded
RECORD_FILE = MAIN_FILE
RECORD_DTYPE = "f16"  # half the size of f32, cosines within ~1e-3 of the exact ones
EMBED_TEXT_VERSION = "r1"  # part of the cache key: bump when record_text changes
# Fold delta and removals into main once they exceed this (amortised: a one-record commit stays O(delta)).
COMPACT_MIN = 2000
COMPACT_FRACTION = 0.02
PARALLEL_ADD_MIN = 64  # vectors added to the delta on every CPU from this many (a pull); one thread below
MAX_REMOVED = 512  # removed keys cost over-fetching in every search: keep them few
# Up to this many vectors a search is exact (brute force, a few ms): results then do not depend on
# how the HNSW graph was built (threads, insertion order, incremental vs rebuilt). Above it, approximate.
EXACT_MAX = 50_000
# Anchor names are searched twice per recall and once per canonicalized name: exact up to this many
# (about 1 ms), approximate above (an exact search over 15,000 names took 3 ms of a 50 ms recall).
NAMES_EXACT_MAX = 10_000


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
    """One vector per record file, keyed by its path, embedded through the cache.

    A generation holds ``main.usearch`` (hard-linked from the previous generation),
    a small ``delta.usearch`` and ``removed.json``: a one-record commit rewrites only
    the delta, so its cost does not grow with the repository. When delta and
    removals grow past a threshold they are folded into a new ``main.usearch``.
    """

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

        items: list[tuple[int, str, str]] = []  # (key, cache key, text)
        touched: list[int] = []
        for change in changes:
            key = vector_key(change.path)
            touched.append(key)
            if change.new is not None:
                record = ctx.record(change.path, change.new)
                text = record_text(record) if record is not None else None
                if text is not None:
                    items.append((key, f"{EMBED_TEXT_VERSION}:{change.new}", text))
        embedder = get_embedder(self.settings.embedding)
        with ctx.progress(f"embeddings ({len(items)} records)", len(items)) as bar:
            vectors = ctx.embedding_cache.embed(embedder, [(ck, t) for _, ck, t in items], progress=bar.update)
        keys = np.array([k for k, _, _ in items], dtype=np.uint64)
        if previous is None or not (previous / MAIN_FILE).exists():
            main = usearch_index(embedder.dim, RECORD_DTYPE)
            if len(keys):
                main.add(keys, vectors, threads=0)
            main.save(str(folder / MAIN_FILE))
            _write_delta(folder, usearch_index(embedder.dim, RECORD_DTYPE), set())
            return
        delta = load_usearch(previous / DELTA_FILE)
        removed = set(json.loads((previous / REMOVED_FILE).read_text(encoding="utf-8")))
        # A key is in main only if its file was there when main was written: a commit that only adds files
        # (a `remember`) does not map main at all, which at 100,000 records costs more than the rest.
        replaced = [c for c in changes if c.old is not None]
        mapped = load_usearch(previous / MAIN_FILE, view=True) if replaced else None
        for key in touched:
            if delta.contains(key):
                delta.remove(key)
            if mapped is not None and mapped.contains(key):
                removed.add(key)
        main_count = len(mapped) if mapped is not None else _count(previous / MAIN_FILE)
        if len(removed) > MAX_REMOVED or len(delta) + len(keys) > max(COMPACT_MIN, COMPACT_FRACTION * main_count):
            # Folded into a new main at once: the new vectors go straight there, not through the delta.
            _compact(previous / MAIN_FILE, delta, removed, keys, vectors).save(str(folder / MAIN_FILE))
            _write_delta(folder, usearch_index(embedder.dim, RECORD_DTYPE), set())
            return
        if len(keys):
            delta.add(keys, vectors, threads=0 if len(keys) >= PARALLEL_ADD_MIN else 1)
        _link_or_copy(previous / MAIN_FILE, folder / MAIN_FILE)
        _write_delta(folder, delta, removed)

    def verify(self, folder: Path) -> None:
        VectorReader(folder)


def _count(path: Path) -> int:
    """Vectors in the usearch file at ``path``, from its header (the index itself is not loaded)."""
    from usearch.index import Index

    metadata = Index.metadata(str(path))
    if metadata is None:
        raise ValueError(f"{path.name} is not a usearch index")
    return int(metadata["count_present"])


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write_delta(folder: Path, delta: "Index", removed: set[int]) -> None:
    delta.save(str(folder / DELTA_FILE))
    (folder / REMOVED_FILE).write_text(json.dumps(sorted(removed)) + "\n", encoding="utf-8")


def _compact(main_path: Path, delta: "Index", removed: set[int], keys: "np.ndarray", vectors: "np.ndarray") -> "Index":
    """A new main index: the old one loaded into memory, removals applied, the delta's and the new vectors added."""
    import numpy as np

    main = load_usearch(main_path)
    for key in removed:
        if main.contains(key):
            main.remove(key)
    if len(delta):
        delta_keys = np.asarray(delta.keys[:], dtype=np.uint64)
        keys = np.concatenate([delta_keys, keys])
        stored = delta.get(delta_keys, dtype="f32")  # one array per key: every key listed is present
        vectors = np.concatenate([np.vstack(stored).astype(np.float32), vectors])  # type: ignore[arg-type]
    if len(keys):
        order = np.argsort(keys, kind="stable")
        main.add(keys[order], vectors[order], threads=0)
    return main


class VectorReader:
    """Searches one published generation of the record vectors (main minus removed, plus delta)."""

    def __init__(self, folder: Path):
        self.main = load_usearch(folder / MAIN_FILE, view=True)
        self.delta = load_usearch(folder / DELTA_FILE, view=True)
        self.removed = set(json.loads((folder / REMOVED_FILE).read_text(encoding="utf-8")))

    def __len__(self) -> int:
        return len(self.main) - len(self.removed) + len(self.delta)

    def search(self, vector: "np.ndarray", k: int) -> list[tuple[int, float]]:
        """(key, cosine) of the ``k`` nearest record vectors, best first."""
        if k <= 0:
            return []
        found: dict[int, float] = {}
        for index, skip in ((self.main, self.removed), (self.delta, set())):
            if len(index) == 0:
                continue
            matches = index.search(vector, min(k + len(skip), len(index)), exact=len(index) <= EXACT_MAX)
            for key, dist in zip(matches.keys, matches.distances):
                if int(key) not in skip:
                    found[int(key)] = 1.0 - float(dist)
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:k]

    def items(self) -> dict[int, "np.ndarray"]:
        """Every live (key, vector): for tests and checks."""
        import numpy as np

        out: dict[int, np.ndarray] = {}
        for index, skip in ((self.main, self.removed), (self.delta, set())):
            for key in sorted(int(k) for k in index.keys):
                if key not in skip:
                    out[key] = np.asarray(index.get(key, dtype="f32"), dtype=np.float32)
        return out


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

    A generation may also hold a small delta (``anchors-delta.usearch`` +
    ``anchors-delta.json``): the names added since the main files were written,
    so that a commit naming a few new anchors writes those, not every name
    (:func:`add_to_generation`). Loading a generation reads both.

    Names are embedded through the cache (key: the Git blob id of the name), so a
    name is never embedded twice. Cosines are exact (f32 vectors).
    """

    INDEX_FILE = "anchors.usearch"
    NAMES_FILE = "anchors.json"
    DELTA_INDEX_FILE = "anchors-delta.usearch"
    DELTA_NAMES_FILE = "anchors-delta.json"

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None = None):
        self.embedder = embedder
        self.cache = cache
        self._index = usearch_index(embedder.dim, "f32")
        self._extra: "Index | None" = None  # a memory-mapped generation's delta, searched besides the main view
        self._names: dict[str, str] = {}
        self._ids: dict[int, str] = {}

    @classmethod
    def load(cls, folder: Path, embedder: Embedder, cache: EmbeddingCache | None = None, *,
             view: bool = False) -> "AnchorVectors":
        """Open the anchor vectors saved in ``folder`` (an empty set if none were saved there).

        ``view`` memory-maps the main index read-only (for readers; adding to it then fails).
        """
        self = cls(embedder, cache)
        names_path = folder / cls.NAMES_FILE
        if not names_path.exists():
            return self
        data = json.loads(names_path.read_text(encoding="utf-8"))
        delta_names, delta_index = _load_delta(folder)
        if data.get("model") != embedder.model_id or (delta_names and delta_names.get("model") != embedder.model_id):
            everything = {**data["names"], **(delta_names or {}).get("names", {})}
            self.add_many(sorted(everything.items()))  # another model: re-embed every name
            return self
        self._names = dict(data["names"])
        if (folder / cls.INDEX_FILE).exists() and self._names:
            self._index = load_usearch(folder / cls.INDEX_FILE, view=view)
        if delta_names and delta_index is not None and len(delta_index):
            added = dict(delta_names["names"])
            if view:
                self._extra = delta_index
            else:
                import numpy as np

                keys = np.array(sorted(int(k) for k in delta_index.keys), dtype=np.uint64)
                vectors = np.stack([np.asarray(delta_index.get(int(k), dtype="f32"), dtype=np.float32) for k in keys])
                self._index.add(keys, vectors)
            self._names.update(added)
        self._ids = {_anchor_key(a): a for a in self._names}
        return self

    def save(self, folder: Path) -> None:
        """Write ``anchors.usearch`` and ``anchors.json`` (sorted, deterministic) into ``folder``: every name, no delta."""
        if self._extra is not None:
            raise ValueError("a memory-mapped AnchorVectors cannot be saved")
        folder.mkdir(parents=True, exist_ok=True)
        self._index.save(str(folder / self.INDEX_FILE))
        _write_names(folder / self.NAMES_FILE, self.embedder.model_id, self._names)
        for name in (self.DELTA_INDEX_FILE, self.DELTA_NAMES_FILE):
            (folder / name).unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, anchor_id: object) -> bool:
        return anchor_id in self._names

    def name(self, anchor_id: str) -> str | None:
        return self._names.get(anchor_id)

    def stored(self, anchors: Iterable[tuple[str, str]]) -> dict[str, "np.ndarray"]:
        """The stored vector of each (anchor id, name) this set holds under that name: no model run, no cache."""
        import numpy as np

        out: dict[str, np.ndarray] = {}
        for anchor_id, name in anchors:
            if self._names.get(anchor_id) != name:
                continue
            key = _anchor_key(anchor_id)
            for index in (self._extra, self._index):  # the delta first: a renamed anchor's new vector is there
                if index is not None and len(index) and index.contains(key):
                    out[anchor_id] = np.asarray(index.get(key, dtype="f32"), dtype=np.float32).reshape(-1)
                    break
        return out

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
        out = []
        for index in (self._index, self._extra):
            if index is None or not len(index):
                continue
            matches = index.search(vector, min(k, len(index)), exact=len(index) <= NAMES_EXACT_MAX)
            for key, dist in zip(matches.keys, matches.distances):
                anchor_id = self._ids.get(int(key))
                cosine = round(1.0 - float(dist), 6)
                if anchor_id is not None and cosine >= min_cosine:
                    out.append((anchor_id, cosine))
        out.sort(key=lambda item: (-item[1], item[0]))
        return out[:k]


def _write_names(path: Path, model_id: str, names: dict[str, str]) -> None:
    data = {"model": model_id, "names": dict(sorted(names.items()))}
    path.write_text(json.dumps(data, sort_keys=True, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def _load_delta(folder: Path) -> tuple[dict | None, "Index | None"]:
    """The delta of an anchor-name generation: (its names file's data, its index), or (None, None)."""
    path = folder / AnchorVectors.DELTA_NAMES_FILE
    if not path.exists():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    index_path = folder / AnchorVectors.DELTA_INDEX_FILE
    return data, (load_usearch(index_path) if data.get("names") and index_path.exists() else None)


#: Fold an anchor-name delta into the main files once it holds more names than this and this share of main.
NAMES_FOLD_MIN = 512
NAMES_FOLD_FRACTION = 0.05


def add_to_generation(previous: Path, folder: Path, embedder: Embedder, cache: EmbeddingCache | None,
                      labels: Iterable[tuple[str, str]]) -> int:
    """Write into ``folder`` the generation ``previous`` plus the names of anchors it does not have yet.

    An anchor keeps the first name it was given (a later label of the same anchor is not a rename).
    The main files are hard-linked and only the delta is written, so the cost follows the number of
    new names, not the number of anchors; the delta is folded into new main files once it is large.
    Returns the number of names added.
    """
    import numpy as np

    if not (previous / AnchorVectors.INDEX_FILE).exists():  # an empty generation: nothing to link
        vectors = AnchorVectors.load(previous, embedder, cache)
        before = len(vectors)
        vectors.add_many(first_labels(labels, vectors))
        vectors.save(folder)
        return len(vectors) - before
    main = load_usearch(previous / AnchorVectors.INDEX_FILE, view=True)
    delta_data, delta = _load_delta(previous)
    delta_names: dict[str, str] = dict((delta_data or {}).get("names", {}))
    new: dict[str, str] = {}
    for anchor, name in labels:
        if anchor not in new and anchor not in delta_names and not main.contains(_anchor_key(anchor)):
            new[anchor] = name
    main_count = len(main)
    if len(delta_names) + len(new) > max(NAMES_FOLD_MIN, NAMES_FOLD_FRACTION * main_count):
        vectors = AnchorVectors.load(previous, embedder, cache)
        vectors.add_many(sorted(new.items()))
        vectors.save(folder)
        return len(new)
    for name in (AnchorVectors.INDEX_FILE, AnchorVectors.NAMES_FILE):
        if (previous / name).exists():
            _link_or_copy(previous / name, folder / name)
    if delta is None:
        delta = usearch_index(embedder.dim, "f32")
    if new:
        ids = sorted(new)
        vectors_ = (cache.embed(embedder, [(f"name:{text_key(new[a])}", new[a]) for a in ids]) if cache is not None
                    else embedder.embed([new[a] for a in ids]))
        delta.add(np.array([_anchor_key(a) for a in ids], dtype=np.uint64), vectors_)
        delta_names.update(new)
    delta.save(str(folder / AnchorVectors.DELTA_INDEX_FILE))
    _write_names(folder / AnchorVectors.DELTA_NAMES_FILE, embedder.model_id, delta_names)
    return len(new)


def first_labels(labels: Iterable[tuple[str, str]], have: "AnchorVectors | None" = None) -> list[tuple[str, str]]:
    """The first label of each anchor not in ``have``, sorted by anchor (a later label of an anchor is not a rename)."""
    out: dict[str, str] = {}
    for anchor, name in labels:
        if anchor not in out and (have is None or anchor not in have):
            out[anchor] = name
    return sorted(out.items())
