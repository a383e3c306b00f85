"""Bounded, graph-owned evidence retrieval (MIRIX-2.0 Alg. 1 Read, §2.4, A.3).

``recall(question)`` plans the question, enters the graph at scored anchors,
runs the base lane (rows of the anchors, cited rows of incident frames,
co-participant rows, provenance neighbours) and the relation lane (predicate
filter in the index, 240-frame cap in frame-id order, additive fact score,
B_R facts rendered), adds the text and vector lanes (the best full-text and
nearest-vector records of the question), reranks the pool, and fuses it under the
operator's budgets. If the graph read raises, direct full-text + vector retrieval
is used instead and the result says so. Core blocks, resource documents, procedural skills and
vault entries keep their own typed paths.

This module is the entry point and the graph read's assembly; each part lives in its own module:

    results.py       what a recall returns (RecallResult, AnchorHit, Fact, Arm, Row)
    reading.py       what one recall reads, opened once (Reading: indexes, embedder, records)
    anchors.py       anchor entry (eq. 10)
    facts.py         the relation lane and the fact score s_F (answer types: memrepo/nlp/answers.py)
    belief_lane.py   one-value relations over time (memrepo.graph.beliefs)
    lanes.py         the base, text and vector lanes, provenance neighbours
    rerank.py        rerank's terms and the features they read
    typed.py         core, resource, procedural and vault paths
    fuse.py          citation-balanced fusion under the budgets
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError
from memrepo.graph.reader import GraphReader, open_graph
from memrepo.read import constants as C
from memrepo.read import recall_hop
from memrepo.read.anchors import anchor_entry, question_keys
from memrepo.read.belief_lane import annotate_beliefs, asked_slots, asked_window, belief_lane, relative_window
from memrepo.read.facts import relation_lane, score_fact
from memrepo.read.fuse import DANGLING, fuse
from memrepo.read.lanes import GRAPH_TYPES, base_lane, graph_record, provenance_neighbours, text_lane, vector_lane
from memrepo.read.plan import Plan, plan as make_plan
from memrepo.read.rank import rank_pool
from memrepo.read.reading import Reading
from memrepo.read.rerank import rerank, rerank_order
from memrepo.read.results import AnchorHit, Arm, Fact, RecallResult, Row
from memrepo.read.typed import TYPED_HITS, typed_paths

if TYPE_CHECKING:
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore

__all__ = [
    "DEFAULT_TYPES", "GRAPH_TYPES", "TYPED_HITS", "AnchorHit", "Arm", "Fact", "RecallResult", "Row", "Reading",
    "recall", "graph_recall", "fallback_recall", "typed_paths", "anchor_entry", "question_keys", "relation_lane",
    "score_fact", "belief_lane", "asked_slots", "asked_window", "relative_window", "base_lane", "text_lane",
    "vector_lane", "provenance_neighbours", "rerank", "rerank_order",
]

DEFAULT_TYPES = ("core", "episodic", "semantic", "procedural", "resource")


# --- the entry point -------------------------------------------------------------------


def recall(
    store: "GitStore",
    settings: "Settings",
    question: str,
    *,
    at: str | None = None,
    types: Iterable[str] | None = None,
    graph_opener: Callable[["GitStore", "Settings", str | None], GraphReader] = open_graph,
) -> RecallResult:
    """Bounded evidence for ``question``: graph facts with their cited ids, and fused records.

    Args:
        at: a commit-ish to read as of (default: HEAD).
        types: record types the recall may return (default: all but the vault).
        graph_opener: opens the graph index (the default reads the graph engineer's SQLite index).

    Raises:
        RecordError: the question is empty or a type is unknown.
        NotFoundError: ``at`` names no commit.
    """
    if not question or not question.strip():
        raise RecordError("question: is empty")
    chosen = list(dict.fromkeys(types)) if types is not None else list(DEFAULT_TYPES)
    for t in chosen:
        if t not in rec.TYPES:
            raise RecordError(f"types: {t!r} is not one of {', '.join(rec.TYPES)}")
    resolved = store.resolve(at)
    if resolved is None and at is not None:
        raise NotFoundError(f"revision {at!r} not found")
    commit = resolved.decode() if resolved else None
    the_plan = make_plan(question.strip())
    result = RecallResult(question=question.strip(), commit=commit, plan=the_plan, types=chosen)
    if commit is None:
        return result
    ctx = Reading(store, settings, commit)
    try:
        wanted = [t for t in chosen if t in GRAPH_TYPES]
        if wanted:
            try:
                graph = graph_opener(store, settings, commit)
                try:
                    graph_recall(ctx, graph, the_plan, result, wanted)
                finally:
                    graph.close()
            except Exception as exc:  # M A.6 invariant 4: a failing graph read falls back
                result.anchors, result.base_lane, result.relation_lane = [], [], []
                result.facts, result.records, result.fusion = [], [], []
                result.fallback = f"graph read failed ({type(exc).__name__}: {exc}); used direct full-text + vector retrieval"
                fallback_recall(ctx, the_plan, result, wanted)
        typed_paths(ctx, the_plan, result, chosen)
    finally:
        ctx.close()
    # a question about a thing it only describes: the second hop, within the plan's capacity (read/recall_hop.py)
    recall_hop.hop(result, lambda q: recall(store, settings, q, at=commit, types=chosen, graph_opener=graph_opener))
    return result


# --- the graph read, whole -------------------------------------------------------------------


def graph_recall(ctx: Reading, graph: GraphReader, plan: Plan, result: RecallResult, types: list[str]) -> None:
    """Entry, both lanes, rerank and fusion; fills ``result``. Any exception means: fall back."""
    anchors = anchor_entry(ctx, graph, plan)
    result.anchors = anchors
    facts = relation_lane(graph, plan, anchors, result, lambda found: _cited_current(ctx, graph, found, result))
    facts = belief_lane(ctx, graph, plan, anchors, result) + facts
    annotate_beliefs(graph, facts)
    first: dict[str, Fact] = {}
    for fact in facts:  # a belief's fact first, and once
        first.setdefault(fact.id, fact)
    facts = list(first.values())
    result.facts = facts
    pool = base_lane(ctx, graph, plan, anchors)
    cited_ids: list[str] = []
    for fact in facts:
        for record_id in fact.cites:
            if record_id not in cited_ids:
                cited_ids.append(record_id)
    for record_id in cited_ids:
        entry = pool.setdefault(record_id, {"via": [], "anchor": 0.0})
        entry["via"].append("fact")
    for lane, found in (("text", text_lane(ctx, plan, types)), ("vector", vector_lane(ctx, plan, types))):
        for record_id in found:
            entry = pool.setdefault(record_id, {"via": [], "anchor": 0.0})
            if lane not in entry["via"]:
                entry["via"].append(lane)
    # Provenance neighbours of the best rows join the pool, and the pool is ranked with them.
    seeds = rerank_order(ctx, plan, pool)[: C.NEIGHBOUR_SEEDS]
    room = len(pool) + C.NEIGHBOUR_SEEDS * 4
    for other, relation in provenance_neighbours(ctx, seeds):
        if other not in pool and len(pool) < room:
            pool[other] = {"via": [relation], "anchor": 0.0}
    ranked = rank_pool(ctx, graph, plan, anchors, pool)  # rerank, the second hop, the pool's terms (read/rank.py)
    ranked = [c for c in ranked if rec.type_of_id(c.id) in types]
    cited = [c for c in ranked if "fact" in c.via]
    base = [c for c in ranked if "fact" not in c.via]
    chosen, order = fuse(cited, base, plan.base_budget, plan.cited_budget, ctx.record)
    chosen.sort(key=lambda c: (-c.score, c.id))  # fusion chose them by lane; they are returned best first
    result.fusion = order
    result.dangling = sorted(set(result.dangling) | {e["id"] for e in order if e["outcome"] == DANGLING})
    kept_ids = {c.id for c in chosen}
    result.base_lane = [{"id": c.id, "score": c.score, "terms": c.terms, "via": c.via, "kept": c.id in kept_ids}
                        for c in base]
    result.records = [_row(ctx, c.id, c.lane, c.score, c.terms) for c in chosen]
    result.inspected = {"anchors": len(anchors), "frames": len(result.relation_lane), "rows": len(pool)}


def _cited_current(ctx: Reading, graph: GraphReader, facts: list[Fact], result: RecallResult) -> list[Fact]:
    """Facts without their citations of records that are gone or changed since the frame was extracted.

    The graph index records the blob of each record its frames came from; a record edited by hand
    (a plain ``git commit``, a pulled edit) or removed (``git rm``) no longer says what its graph file
    says until the graph catch-up extracts it again, so its citations are dropped here, on every read,
    and listed in ``result.stale_dropped`` (a removed record in ``result.dangling`` too). A fact keeps the
    citations that still hold, and a fact left with none is dropped.
    """
    cited = {i for fact in facts for i in fact.cites}
    followed = graph.record_blobs(cited)
    reasons: dict[str, str] = {}
    for record_id in sorted(cited):
        reason = _citation_stale(ctx, record_id, followed.get(record_id))
        if reason:
            reasons[record_id] = reason
    kept = []
    for fact in facts:
        present = [i for i in fact.cites if i not in reasons]
        for i in fact.cites:
            if i in reasons:
                result.stale_dropped.append({"frame": fact.id, "predicate": fact.predicate, "record": i,
                                             "reason": reasons[i]})
                if reasons[i] == "gone" and i not in result.dangling:
                    result.dangling.append(i)
        if present:
            fact.cites = present
            kept.append(fact)
    return kept


def _citation_stale(ctx: Reading, record_id: str, followed: set[str] | None) -> str | None:
    """"gone" if the record is not in the commit read, "changed" if its blob is not the one its frames
    were extracted from, else None (also when the graph file names no blob: written before memrepo kept it)."""
    try:
        blob = ctx.snapshot.blob_id(rec.record_path(record_id))
    except RecordError:
        blob = None
    if blob is None:  # (a record that does not parse is the fusion's to leave out: it reads only the chosen rows)
        return "gone"
    if followed and blob not in followed:
        return "changed"
    return None


def _row(ctx: Reading, record_id: str, lane: str, score: float, terms: dict[str, float]) -> Row:
    record = ctx.record(record_id)
    if record is None:
        raise NotFoundError(f"record {record_id!r} is cited by the graph but not in the repository")
    parts: list[dict[str, Any]] = []
    for citation in record.sources:
        source_id, anchor = rec.split_citation(citation)
        text = None
        try:
            source = ctx.source(source_id)
            part = source.part(anchor) if source and anchor else None
            text = part.text if part else None
        except RecordError:
            pass
        parts.append({"citation": citation, "text": text})
    return Row(
        id=record.id, type=record.type, summary=record.summary, text=record.text, mention_time=record.mention_time,
        event_time=record.event_time, status=record.status, sources=list(record.sources), lane=lane, score=score,
        terms=terms, parts=parts,
    )


# --- the fallback (graph read raised) ----------------------------------------------------------


def fallback_recall(ctx: Reading, plan: Plan, result: RecallResult, types: list[str]) -> None:
    """Direct full-text + vector retrieval over ``types``, within the operator's capacity."""
    from memrepo.index.search import _search

    hits = []
    for type_ in types:
        hits += [h for h in _search(ctx.indexes, ctx.commit, plan.question, type_, C.FALLBACK_DEPTH, False)
                 if graph_record(ctx, h.id, types)]  # skills and task sessions keep their typed path
    hits.sort(key=lambda h: (-h.score, h.id))
    pool = {h.id: {"via": ["fallback"], "anchor": 0.0} for h in hits}
    ranked = rerank(ctx, plan, pool)
    chosen, order = fuse([], ranked, plan.capacity, 0, ctx.record)
    result.fusion = order
    result.records = [_row(ctx, c.id, "fallback", c.score, c.terms) for c in chosen]
    result.inspected = {"anchors": 0, "frames": 0, "rows": len(pool)}
