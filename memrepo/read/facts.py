"""The relation lane (MIRIX-2.0 Adj(A_q, P_q), eq. 11) and the fact score s_F.

Frames of the exactly named anchors, predicate-filtered in the graph index and capped at FRAME_CAP,
each scored by :func:`score_fact`; the best B_R that meet the question are rendered as facts.
A frame that holds an answer of the question's type (:data:`memrepo.nlp.answers.ANSWER_TYPES`) scores higher.
"""

from __future__ import annotations

from typing import Callable

from memrepo.graph.reader import FrameInfo, GraphReader
from memrepo.nlp.answers import answer_type
from memrepo.read import constants as C
from memrepo.read.plan import Plan, content_terms
from memrepo.read.results import AnchorHit, Arm, Fact, RecallResult
from memrepo.text.dates import MONTHS



def relation_lane(graph: GraphReader, plan: Plan, anchors: list[AnchorHit], result: RecallResult,
                  current: Callable[[list[Fact]], list[Fact]] | None = None) -> list[Fact]:
    """Frames of the exactly named anchors, predicate-filtered in the index, capped, scored; top B_R rendered.

    ``current`` keeps the facts whose citations still say so (:func:`memrepo.read.recall._cited_current`),
    before B_R is taken.
    """
    named = [a for a in anchors if a.kept and "exact" in a.routes]
    if not plan.relations or not named:
        return []
    # The question names a concrete object: only frames that contain it are kept (A.3). The filter runs in
    # the index with the predicate filter, before the cap: after it, a hub's first 240 frames would rarely
    # hold the object. Without such frames, the named anchors' frames are used.
    objects = [a.iri for a in named if a.type != "person"]
    frames = graph.frames_of(objects, plan.families, C.FRAME_CAP) if objects else []
    if not frames:
        frames = graph.frames_of([a.iri for a in named], plan.families, C.FRAME_CAP)
    facts = [score_fact(f, plan, named) for f in frames]
    if current is not None:
        facts = current(facts)
    facts.sort(key=lambda f: (-f.score, f.id))
    # A fact is rendered only if it meets the question beyond "a named anchor takes part in the
    # relation": a constraint word, the answer type, the requested time, or both sides of an intersection.
    answering = [f for f in facts if any(f.terms.get(t) for t in C.FACT_EVIDENCE_TERMS)]
    chosen = answering[: plan.cited_budget]
    for f in facts:
        result.relation_lane.append({"frame": f.id, "predicate": f.predicate, "score": f.score, "terms": f.terms,
                                     "cites": f.cites, "kept": f in chosen})
    return chosen


def score_fact(frame: FrameInfo, plan: Plan, named: list[AnchorHit]) -> Fact:
    """s_F = rel + entity + constraint + type + time + intersection + specificity + role + state."""
    terms: dict[str, float] = {}
    named_iris = {a.iri for a in named}
    arm_iris = {arm[1] for arm in frame.arms}
    terms["rel"] = C.F_REL if frame.predicate in plan.families else 0.0
    bound = named_iris & arm_iris
    terms["entity"] = C.F_ENTITY * len(bound)
    text = " ".join([arm[2] for arm in frame.arms] + list(frame.literal_text().values())).lower()
    frame_words = set(content_terms(text))
    terms["constraint"] = C.F_CONSTRAINT * len({c for c in plan.constraints if c in frame_words})
    terms["type"] = C.F_TYPE if _answers_type(frame, plan.answer_types) else 0.0
    terms["time"] = _time_term(frame, plan)
    if plan.operator == "intersection":
        persons = [a for a in named if a.type == "person"]
        terms["intersection"] = C.F_INTERSECTION if len(persons) >= 2 and {p.iri for p in persons} <= arm_iris else 0.0
    terms["specificity"] = C.F_SPECIFICITY * len(frame.arms)
    terms["role"] = _role_term(frame, plan, named)
    if frame.status == "planned" and plan.operator in ("count", "list-union", "temporal"):
        terms["state"] = C.F_PLANNED
    terms = {k: round(v, 4) for k, v in terms.items() if v}
    return Fact(
        id=frame.iri, predicate=frame.predicate,
        arms=[Arm(role, iri, name, type_) for role, iri, name, type_ in frame.arms],
        literals=frame.literal_text(), event_time=frame.event_time, status=frame.status, kind=frame.kind,
        cites=list(frame.cites), score=round(sum(terms.values()), 4), terms=terms,
    )


def _answers_type(frame: FrameInfo, answer_types: list[str]) -> bool:
    """A frame answers a question of type t (plan.answer_types) if it has a literal of a key that answers t, or
    an arm of an anchor type that answers t fully (the one table, :data:`memrepo.nlp.answers.ANSWER_TYPES`)."""
    for t in answer_types:
        answers = answer_type(t)
        if any(k in frame.literals for k in answers.literals):
            return True
        if t == "date" and frame.event_time:
            return True
        if any(arm[3] in answers.full_entities for arm in frame.arms):
            return True
    return False


def _time_term(frame: FrameInfo, plan: Plan) -> float:
    wanted = plan.time
    if not wanted:
        return 0.0
    weight = C.F_TIME
    when = frame.event_time
    if not when:
        when, weight = frame.mention_time, C.F_TIME / 2  # no extracted event time: half weight on the record time
    if not when:
        return 0.0
    months = {f"{i:02d}" for i, m in enumerate(MONTHS, 1) if m in wanted.get("months", [])}
    ok = (not wanted.get("years") or when[:4] in wanted["years"]) and (not months or when[5:7] in months)
    return weight if ok and (wanted.get("years") or months) else 0.0


def _role_term(frame: FrameInfo, plan: Plan, named: list[AnchorHit]) -> float:
    rel = next((r for r in plan.relations if r.family == frame.predicate), None)
    if rel is None:
        return 0.0
    persons = {a.iri for a in named if a.type == "person"}
    for role, iri, _name, _type in frame.arms:
        if iri in persons:
            wanted = rel.object_role if plan.direction == "object" else rel.subject_role
            if role == wanted:
                return C.F_ROLE
            if role in (rel.subject_role, rel.object_role):
                return -C.F_ROLE
    return 0.0
