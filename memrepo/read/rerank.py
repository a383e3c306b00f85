"""Rerank: each candidate of a recall's pool scored by its terms (:data:`_TERMS`).

BM25 within the pool, a vector prior, its anchor link, its speaker, its date against the question's,
a graph fact citing it, and the best score of its adjacent turns; the features each term reads are
looked up once per recall (:class:`Features`, kept in the :class:`~memrepo.read.reading.Reading`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memrepo import records as rec
from memrepo.index.fulltext import terms as terms_of
from memrepo.read import constants as C
from memrepo.read.fuse import Candidate
from memrepo.read.lanes import query_text
from memrepo.read.plan import Plan
from memrepo.read.reading import Reading


@dataclass
class Features:
    """What rerank knows of one candidate, read once per recall: BM25 within the pool (global statistics,
    so it does not depend on which other rows are in the pool), the vector cosine (None: no stored vector),
    the head of its text, and the (source, position) of each part it cites."""

    lex: float
    vec: float | None
    head: str
    positions: list[tuple[str, int]]


_TERMS = ("lex", "vec", "anchor", "actor", "time", "cited", "context")
_ID_DATE_RE = re.compile(r"^(?:[a-z]+-)?(\d{4})-(\d{2})-(\d{2})")


def date_match(record_id: str, dates: list[str]) -> float:
    """How well the row's date (the mention date every record id carries, or an ISO date given instead of an
    id) meets a date the question names: 1 on the day (less and less up to TIME_DAYS away), in the month, or
    in the year named."""
    from datetime import date

    m = _ID_DATE_RE.match(record_id)
    if m is None or not dates:
        return 0.0
    year, month, day = m.groups()
    best = 0.0
    for wanted in dates:
        if len(wanted) == 10:
            try:
                gap = abs((date(int(year), int(month), int(day)) - date.fromisoformat(wanted)).days)
            except ValueError:
                continue
            best = max(best, 1.0 - gap / C.TIME_DAYS if gap < C.TIME_DAYS else 0.0)
        elif len(wanted) == 7 and wanted == f"{year}-{month}":
            best = max(best, 1.0)
        elif len(wanted) == 4 and wanted == year:
            best = max(best, 1.0)
    return best


def rerank(ctx: Reading, plan: Plan, candidates: dict[str, dict[str, Any]]) -> list[Candidate]:
    """Each candidate row scored by BM25 within the pool, a vector prior, its anchor link, its speaker,
    and the best score of its adjacent turns (provenance context); best first, with each score's terms."""
    out = []
    for record_id, values in _term_values(ctx, plan, candidates).items():
        terms = {k: round(v, 4) for k, v in zip(_TERMS, values) if v}
        out.append(Candidate(record_id, round(sum(terms.values()), 4), terms, list(candidates[record_id]["via"])))
    out.sort(key=lambda c: (-c.score, c.id))
    return out


def rerank_order(ctx: Reading, plan: Plan, candidates: dict[str, dict[str, Any]]) -> list[str]:
    """The ids :func:`rerank` would return, in its order, without building each candidate's terms."""
    scores = {i: round(sum(round(v, 4) for v in values if v), 4)
              for i, values in _term_values(ctx, plan, candidates).items()}
    return sorted(scores, key=lambda i: (-scores[i], i))


def _term_values(ctx: Reading, plan: Plan, candidates: dict[str, dict[str, Any]]) -> dict[str, tuple[float, ...]]:
    """Each candidate's rerank terms, in :data:`_TERMS` order (unrounded)."""
    ids = sorted(candidates)
    feats = _features(ctx, plan, ids)
    top_lex = max((f.lex for f in feats.values()), default=0.0) or 1.0
    cosines = [f.vec for f in feats.values() if f.vec is not None]
    lo, hi = min(cosines, default=0.0), max(cosines, default=0.0)
    span = (hi - lo) or 1.0
    named = tuple(n.lower() for n in plan.names)
    dates = plan.time.get("dates", [])
    own: dict[str, tuple[float, ...]] = {}
    for record_id in ids:
        info, f = candidates[record_id], feats[record_id]
        own[record_id] = (
            C.R_LEX * f.lex / top_lex,
            C.R_VEC * (f.vec - lo) / span if f.vec is not None else 0.0,
            C.R_ANCHOR * info.get("anchor", 0.0),
            C.R_ACTOR if named and f.head.startswith(named) else 0.0,
            C.R_TIME * date_match(record_id, dates) if dates else 0.0,
            C.R_CITED if "fact" in info["via"] else 0.0,
        )
    if not C.R_CONTEXT:
        return {i: (*own[i], 0.0) for i in ids}
    base_score = {i: sum(t) for i, t in own.items()}
    context = _best_adjacent(feats, base_score, C.NEIGHBOUR_TURNS)
    return {i: (*own[i], C.R_CONTEXT * context[i]) for i in ids}


def _features(ctx: Reading, plan: Plan, ids: list[str]) -> dict[str, Features]:
    """Rerank's features of ``ids``; only the ones this recall has not read yet are looked up."""
    known = ctx.features
    new = [i for i in ids if i not in known]
    if new:
        rows = ctx.provenance().features(new)
        lex = _bm25_within(ctx, plan, {i: (_own_summary(row.summary, row.text), row.text) for i, row in rows.items()})
        vec = _row_cosines(ctx, plan.question, new, {i: row.vkey for i, row in rows.items()})
        for record_id in new:
            row = rows.get(record_id)
            known[record_id] = Features(lex.get(record_id, 0.0), vec.get(record_id), row.head if row else "",
                                         row.positions if row else [])
    return {i: known[i] for i in ids}


def _own_summary(summary: list[str], text: list[str]) -> list[str]:
    """The summary's words for rerank's BM25, or none when the summary only repeats the lead of the text.

    A turn's summary is its first words (cut at about 120 characters): boosted as a field of its own, it
    would count every word of a short turn 2.5 times and the words of a long turn after its lead once,
    so a short turn that only echoes the question ("What was your favourite trip?") outranks the long
    one that answers it after a greeting. A summary in words of its own (written by a model) still counts.
    """
    return [] if summary == text[: len(summary)] else summary


def _best_adjacent(feats: dict[str, Features], score: dict[str, float], span: int) -> dict[str, float]:
    """For each candidate, the best ``score`` among the other candidates citing a part 1..``span`` positions
    away from one of its parts (0.0 if there is none).

    Each position keeps its two best candidates, so a candidate that cites the neighbouring part itself
    (a record over several turns) still finds the best *other* one there.
    """
    best: dict[tuple[str, int], list[tuple[float, str]]] = {}
    for record_id, f in feats.items():
        for position in set(f.positions):
            top = best.setdefault(position, [])
            top.append((score[record_id], record_id))
            top.sort(key=lambda t: t[0], reverse=True)
            del top[2:]
    offsets = [d for d in range(-span, span + 1) if d]
    out: dict[str, float] = {}
    for record_id, f in feats.items():
        found: float | None = None
        for source, ordinal in f.positions:
            for d in offsets:
                for other_score, other in best.get((source, ordinal + d), ()):
                    if other != record_id:  # best first: the first other one is the best other one
                        found = other_score if found is None else max(found, other_score)
                        break
        out[record_id] = 0.0 if found is None else found
    return out


def _bm25_within(ctx: Reading, plan: Plan, docs: dict[str, tuple[list[str], list[str]]]) -> dict[str, float]:
    """BM25 of each candidate for the question's content words (absent: no word matches), from the
    candidates' analyzed words in the provenance index and the full-text index's global statistics: the
    cost is the pool's, not the history's."""
    from memrepo.index.fulltext import bm25

    query = terms_of(query_text(plan))
    if not query or not docs:
        return {}
    reader = ctx.fulltext()
    return bm25(query, docs, reader.idf, ctx.provenance().mean_lengths(), b=C.R_BM25_B)


def _stored_vectors(reader: Any, keys: list[int]) -> dict[int, Any]:
    """Stored record vectors by key from the vector index's generation (its main and delta parts)."""
    import numpy as np

    parts: list[tuple[Any, set[int]]] = [(getattr(reader, "delta", None), set()), (getattr(reader, "main", None), getattr(reader, "removed", set()))]
    if getattr(reader, "index", None) is not None:
        parts = [(reader.index, set())]
    out: dict[int, Any] = {}
    for index, removed in parts:
        if index is None or len(index) == 0:
            continue
        candidates = [k for k in keys if k not in out and k not in removed]
        if not candidates:
            continue
        present = index.contains(np.array(candidates, dtype=np.uint64))  # one call for the whole pool
        wanted = [k for k, hit in zip(candidates, np.atleast_1d(present)) if hit]
        if not wanted:
            continue
        got = np.asarray(index.get(np.array(wanted, dtype=np.uint64), dtype=np.float32), dtype=np.float32)
        for key, vector in zip(wanted, got.reshape(len(wanted), -1)):
            out[key] = vector
    return out


def _row_cosines(ctx: Reading, question: str, ids: list[str], known: dict[str, int]) -> dict[str, float]:
    """Cosine of each candidate's stored vector (read from the vector index by key) to the question.
    ``known`` holds vector keys the provenance index already has; the others are computed."""
    import numpy as np

    from memrepo.index.fulltext import vector_key

    if not ids:
        return {}
    reader = ctx.vectors()
    keys = [known[i] if i in known else vector_key(rec.record_path(i)) for i in ids]
    q = np.asarray(ctx.query_vector(question), dtype=np.float32)
    found = _stored_vectors(reader, keys)
    present = [(i, k) for i, k in zip(ids, keys) if k in found]
    if not present:
        return {}
    vectors = np.stack([found[k] for _, k in present])
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    cosines = vectors @ q / norms
    return {record_id: float(c) for (record_id, _), c in zip(present, cosines)}
