"""Hybrid search: Tantivy BM25 and record vectors, fused by normalised score (DESIGN.md §5).

Both lists are read from indexes at the same commit. ``at`` reads an older
commit through an index built for that commit (see docs/indexes.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from memrepo import records as rec
from memrepo.errors import RecordError
from memrepo.index.base import Indexes, Progress
from memrepo.settings import Settings

if TYPE_CHECKING:
    from memrepo.store.git import GitStore

# Fusion: score = TEXT_WEIGHT * min(1, bm25 / ideal bm25) + (1 - TEXT_WEIGHT) * rescaled cosine, in [0, 1].
# The ideal is what a perfect match of every query word would score, so a document that
# matches only a common word scores low. Scores rather than ranks: with reciprocal-rank
# fusion a weak vector-only neighbour ties with the best text match (both 1/61).
TEXT_WEIGHT = 0.5
MIN_COSINE = 0.2  # vector hits below this are noise for any query (cosine rescaled from here to 1)
TYPES = (*rec.TYPES, "source")
MAX_K = 1000  # a bound on every result list a user asks for (usearch aborts the process on absurd counts)


@dataclass
class Hit:
    """One search result."""

    id: str
    type: str
    path: str
    summary: str
    snippet: str
    score: float
    event_time: str | None = None
    mention_time: str | None = None
    namespace: str = "default"
    bm25: float | None = None
    cosine: float | None = None
    matched: list[str] = field(default_factory=list)  # "text", "vector"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def search(
    store: "GitStore",
    settings: Settings,
    query: str,
    type: str | None = None,
    k: int = 10,
    at: str | None = None,
    sources: bool = False,
    *,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
) -> list[Hit]:
    """The ``k`` best records (and source parts with ``sources``) for ``query``.

    Args:
        type: only records of this type ("source" for source parts only).
        at: a commit-ish to search as of (default: HEAD, catching the indexes up first).

    Raises:
        RecordError: if the query is empty, ``k`` is not between 1 and :data:`MAX_K` or ``type`` is unknown.
        NotFoundError: if ``at`` names no commit.
    """
    if not query or not query.strip():
        raise RecordError("query: is empty")
    if k <= 0:
        raise RecordError(f"k: must be at least 1 (got {k})")
    if k > MAX_K:
        raise RecordError(f"k: must be at most {MAX_K} (got {k})")
    if type is not None and type not in TYPES:
        raise RecordError(f"type: {type!r} is not one of {', '.join(TYPES)}")
    if type == "source":
        sources = True
    resolved = store.resolve(at)
    if resolved is None:
        return []
    commit = resolved.decode()
    indexes = Indexes(store, settings, progress=progress, notify=notify)
    try:
        return _search(indexes, commit, query, type, k, sources)
    finally:
        indexes.close()


def _search(indexes: Indexes, commit: str | None, query: str, type_: str | None, k: int, sources: bool) -> list[Hit]:
    from memrepo.index.fulltext import FullTextReader

    depth = max(3 * k, 30)
    with indexes.reading("fulltext", commit, FullTextReader) as text_index:
        text_hits = text_index.search(query, k=depth, type_=type_, sources=sources)
        vector_hits: list[tuple[int, float]] = []
        if type_ != "source":
            vector_hits = _vector_search(indexes, commit, query, depth * (10 if type_ else 1))
        fused: dict[str, Hit] = {}
        ideal = text_index.ideal_score(query) or 1.0
        for score, doc in text_hits:
            hit = fused.setdefault(doc["id"], _hit(doc))
            hit.bm25 = round(score, 4)
            hit.score += TEXT_WEIGHT * min(1.0, score / ideal)
            hit.matched.append("text")
        docs = text_index.by_vkeys([key for key, cosine in vector_hits if cosine >= MIN_COSINE])
        for key, cosine in vector_hits:
            doc = docs.get(key)
            if doc is None or cosine < MIN_COSINE or (type_ and doc["type"] != type_):
                continue
            hit = fused.setdefault(doc["id"], _hit(doc))
            hit.cosine = round(cosine, 4)
            hit.score += (1.0 - TEXT_WEIGHT) * (cosine - MIN_COSINE) / (1.0 - MIN_COSINE)
            hit.matched.append("vector")
    ranked = sorted(fused.values(), key=lambda h: (-h.score, h.id))[:k]
    for hit in ranked:
        hit.score = round(hit.score, 6)
    return ranked


def _vector_search(indexes: Indexes, commit: str | None, query: str, depth: int) -> list[tuple[int, float]]:
    from memrepo.index.embed import get_embedder
    from memrepo.index.vectors import VectorReader

    embedder = get_embedder(indexes.settings.embedding)
    vector = embedder.embed([query])[0]
    with indexes.reading("vectors", commit, VectorReader) as vectors:
        return vectors.search(vector, depth)


def _hit(doc: dict) -> Hit:
    return Hit(
        id=doc["id"],
        type=doc["type"],
        path=doc["path"],
        summary=doc["summary"],
        snippet=doc.get("snippet") or "",
        score=0.0,
        event_time=doc.get("event_time"),
        mention_time=doc.get("mention_time"),
        namespace=doc.get("namespace") or "default",
    )
