"""The candidate lanes of a recall's pool: the base lane (MIRIX-2.0 Rows(A_q)), the text and vector
lanes, and the provenance neighbours of the best rows.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from memrepo import records as rec
from memrepo.graph.model import holds_frames, indexed_id
from memrepo.graph.reader import GraphReader
from memrepo.nlp.lexicon import DIALOGUE_ACTS
from memrepo.read import constants as C
from memrepo.read.plan import Plan, content_terms
from memrepo.read.reading import Reading
from memrepo.read.results import AnchorHit

# The types the graph read returns: those the graph extracts (memrepo.graph.model.INDEXED_TYPES). A procedural
# record there is an instruction that cites the passage or turn it was said in, ranked, fused and cited like a
# fact or an event; a skill and a task session's record keep their typed path (read/typed.py).
GRAPH_TYPES = ("episodic", "semantic", "procedural")


def graph_record(ctx: Reading, record_id: str, types: list[str] | tuple[str, ...] = GRAPH_TYPES) -> bool:
    """Whether ``record_id`` is a record of ``types`` the graph read may return: not a skill, not a task
    session's record (memrepo.graph.model.holds_frames: its turns' own records are the evidence)."""
    type_ = rec.type_of_id(record_id) if record_id else None
    if type_ not in types:
        return False
    if type_ != "procedural":
        return True
    if not indexed_id(record_id):
        return False
    record = ctx.record(record_id)
    return record is not None and holds_frames(record)


def base_lane(ctx: Reading, graph: GraphReader, plan: Plan, anchors: list[AnchorHit]) -> dict[str, dict[str, Any]]:
    """Candidate rows: rows of the kept anchors, cited rows of their frames, co-participant rows.

    Returns {record id: {"via": [...], "anchor": weight}}, at most BASE_POOL_CAP entries.
    """
    kept = [a for a in anchors if a.kept]
    pool: dict[str, dict[str, Any]] = {}

    def add(record_id: str, via: str, weight: float = 0.0) -> None:
        if len(pool) >= C.BASE_POOL_CAP and record_id not in pool:
            return
        entry = pool.setdefault(record_id, {"via": [], "anchor": 0.0})
        if via not in entry["via"]:
            entry["via"].append(via)
        entry["anchor"] = max(entry["anchor"], weight)

    top = max((a.score for a in kept), default=1.0) or 1.0
    weights = [(a.iri, max(a.score, 0.0) / top) for a in kept]
    rows = graph.rows_of_weighted(weights, C.ROWS_PER_ANCHOR * 4)
    strongest = max((s for _, s in rows), default=1.0) or 1.0
    for record_id, strength in rows:
        add(record_id, "anchor", strength / strongest)
    frames = graph.frames_of([a.iri for a in kept], None, C.BASE_FRAMES, exclude=DIALOGUE_ACTS)  # no rows from acts
    kept_iris = {a.iri for a in kept}
    co_participants: list[str] = []
    for frame in frames:
        for record_id in frame.cites:
            add(record_id, "frame")
        for _role, iri, _name, _type in frame.arms:
            if iri not in kept_iris and iri not in co_participants:
                co_participants.append(iri)
    for iri in co_participants[: C.KEEP_ANCHORS]:
        for record_id, _ in graph.rows_of_weighted([(iri, 0.1)], C.CO_PARTICIPANT_ROWS):
            add(record_id, "co-participant", 0.0)
    return pool


def text_lane(ctx: Reading, plan: Plan, types: list[str]) -> list[str]:
    """The best TEXT_LANE records of ``types`` for the question's content words, by the full-text index.

    The graph's rows reach a turn through the anchors it mentions; a turn that says what the question asks
    in other entities' words (or names no anchor the entry kept) is found by its words."""
    if not C.TEXT_LANE:
        return []
    query = query_text(plan)
    if not query:
        return []
    return list(islice((i for _score, i in ctx.fulltext().search_ids(query, C.TEXT_LANE * 2)
                        if i and graph_record(ctx, i, types)), C.TEXT_LANE))


def vector_lane(ctx: Reading, plan: Plan, types: list[str]) -> list[str]:
    """The VECTOR_LANE records of ``types`` whose stored vectors are nearest the question's."""
    if not C.VECTOR_LANE:
        return []
    out: list[str] = []
    seen: set[int] = set()
    for k in (C.VECTOR_LANE, C.VECTOR_LANE * 2):  # the nearest first: most questions need no more
        chunk = [key for key, _cosine in ctx.vectors().search(ctx.query_vector(plan.question), k) if key not in seen]
        seen.update(chunk)
        found = ctx.fulltext().ids_by_vkeys(chunk)
        out += [i for i in (found.get(key) for key in chunk) if i and graph_record(ctx, i, types)]
        if len(out) >= C.VECTOR_LANE:
            break
    return out[: C.VECTOR_LANE]


def provenance_neighbours(ctx: Reading, seeds: list[str]) -> list[tuple[str, str]]:
    """Same-chunk and adjacent-turn rows of ``seeds`` from the provenance index (not graph edges)."""
    reader = ctx.provenance()
    out: list[tuple[str, str]] = []
    for record_id in seeds:
        record = ctx.record(record_id)
        if record is None:
            continue
        for other, relation in reader.neighbours(record.sources, C.NEIGHBOUR_TURNS):
            if other != record_id and graph_record(ctx, other):
                out.append((other, relation))
    return out


def query_text(plan: Plan) -> str:
    """The question's content words (the plan's terms, else the question's) as one full-text query, each
    word's punctuation blanked (the text lane searches with it, rerank's BM25 scores by it)."""
    return " ".join(w for w in (_escape(t) for t in (plan.terms or content_terms(plan.question))) if w)


def _escape(term: str) -> str:
    return re.sub(r"[^\w]", " ", term).strip()
