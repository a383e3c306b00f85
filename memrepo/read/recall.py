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
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError
from memrepo.read import constants as C
from memrepo.read.fuse import DANGLING, Candidate, fuse
from memrepo.graph.lexicon import DIALOGUE_ACTS
from memrepo.graph.reader import AnchorInfo, FrameInfo, GraphReader, open_graph
from memrepo.read.plan import Plan, content_terms, plan as make_plan, words
from memrepo.index.fulltext import terms as terms_of
from memrepo.text.dates import MONTHS
from memrepo.text.stopwords import ENTRY_STOPWORDS

if TYPE_CHECKING:
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore

GRAPH_TYPES = ("episodic", "semantic")
DEFAULT_TYPES = ("core", "episodic", "semantic", "procedural", "resource")
TYPED_HITS = 3  # resource documents / skills returned by their own typed path


# --- results ----------------------------------------------------------------------


@dataclass
class AnchorHit:
    """An entry anchor with each term of its score s_A (eq. 10)."""

    iri: str
    name: str
    key: str
    type: str
    degree: int
    routes: list[str] = field(default_factory=list)  # "vector", "exact"
    terms: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Arm:
    role: str
    anchor: str
    label: str
    type: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fact:
    """A graph fact rendered by the relation lane; ``cites`` are the record ids that justify it."""

    id: str
    predicate: str
    arms: list[Arm]
    literals: dict[str, str]
    event_time: str | None
    status: str | None
    kind: str
    cites: list[str]
    score: float = 0.0
    terms: dict[str, float] = field(default_factory=dict)
    # a one-value relation (memrepo.graph.beliefs): the interval this frame's value held, the frames that closed it
    valid_from: str | None = None
    valid_until: str | None = None
    superseded_by: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["arms"] = [a.to_dict() for a in self.arms]
        return data


@dataclass
class Row:
    """A returned record with its place in the fusion and the source parts it cites."""

    id: str
    type: str
    summary: str
    text: str
    mention_time: str
    event_time: str | None
    status: str | None
    sources: list[str]
    lane: str  # cited | base | fill | fallback
    score: float = 0.0
    terms: dict[str, float] = field(default_factory=dict)
    parts: list[dict[str, Any]] = field(default_factory=list)  # {citation, title, text}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RecallResult:
    """Everything a recall did: plan, entry anchors, both lanes, fusion, facts and records."""

    question: str
    commit: str | None
    plan: Plan
    types: list[str]
    anchors: list[AnchorHit] = field(default_factory=list)
    base_lane: list[dict[str, Any]] = field(default_factory=list)  # candidates with score and "kept"
    relation_lane: list[dict[str, Any]] = field(default_factory=list)  # frames before/after the cap, scored
    facts: list[Fact] = field(default_factory=list)
    records: list[Row] = field(default_factory=list)
    fusion: list[dict[str, Any]] = field(default_factory=list)  # the fusion order with each step's reason
    core: list[Row] = field(default_factory=list)
    typed: list[Row] = field(default_factory=list)  # resource documents, skills, vault entries
    fallback: str | None = None
    inspected: dict[str, int] = field(default_factory=dict)
    dangling: list[str] = field(default_factory=list)  # ids the graph cites that are not in the repository (dropped)
    # frames left out because a record they cite changed or is gone since they were extracted:
    # {"frame", "predicate", "record", "reason": "changed" | "gone"}
    stale_dropped: list[dict[str, str]] = field(default_factory=list)
    # what the question asks of a one-value relation: {"slot", "holder", "at", "answer", "cites", "beliefs"}
    beliefs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def record_ids(self) -> list[str]:
        return [r.id for r in self.records]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "commit": self.commit,
            "types": self.types,
            "plan": self.plan.to_dict(),
            "anchors": [a.to_dict() for a in self.anchors],
            "base_lane": self.base_lane,
            "relation_lane": self.relation_lane,
            "facts": [f.to_dict() for f in self.facts],
            "records": [r.to_dict() for r in self.records],
            "fusion": self.fusion,
            "core": [r.to_dict() for r in self.core],
            "typed": [r.to_dict() for r in self.typed],
            "fallback": self.fallback,
            "inspected": self.inspected,
            "dangling": self.dangling,
            "stale_dropped": self.stale_dropped,
            "beliefs": self.beliefs,
        }


# --- shared per-recall context ------------------------------------------------------


class _Context:
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
        self.features: dict[str, _Features] = {}  # rerank's, by record id

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
    ctx = _Context(store, settings, commit)
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
    return result


# --- anchor entry (eq. 10) ----------------------------------------------------------------


def question_keys(question: str, longest: int = C.EXACT_NGRAM) -> list[str]:
    """κ keys of the question's word n-grams (longest first) that could name an anchor exactly."""
    from memrepo.graph.kappa import kappa

    toks = words(question)
    keys: list[str] = []
    for n in range(min(longest, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            gram = toks[i : i + n]
            if n == 1 and gram[0].lower() in ENTRY_STOPWORDS:
                continue
            if gram[0].lower() in ENTRY_STOPWORDS or gram[-1].lower() in ENTRY_STOPWORDS:
                continue
            key = kappa(" ".join(re.sub(r"['’]s$", "", g) for g in gram))
            if key and key not in keys:
                keys.append(key)
    return keys


def anchor_entry(ctx: _Context, graph: GraphReader, plan: Plan) -> list[AnchorHit]:
    """The union of name-vector recall (15) and exactly named anchors (16), scored and capped at 15."""
    hits: dict[str, AnchorHit] = {}
    # Two name-vector probes: the question, and its words without the people it names (whose
    # possessives, "Caroline's dad", would otherwise crowd out the anchors the question is about).
    topic = _topic(plan)
    if topic and topic.lower() != plan.question.lower():
        probes = list(ctx.query_vectors(plan.question, topic))
    else:
        probes = [ctx.query_vector(plan.question)]
    per_probe = max(1, C.ANCHOR_RECALL // len(probes)) if len(probes) > 1 else C.ANCHOR_RECALL
    for probe in probes:
        for info, cosine in graph.search_anchor_names(probe, per_probe + (C.ANCHOR_RECALL % len(probes))):
            hit = hits.setdefault(info.iri, _hit(info))
            if "vector" not in hit.routes:
                hit.routes.append("vector")
            hit.terms["vec"] = max(hit.terms.get("vec", 0.0), round(C.W_VEC * cosine, 4))
    exact = graph.anchors_by_keys(question_keys(plan.question))[: C.EXACT_ANCHORS]
    missing = [a for a in exact if a.iri not in hits]
    cosines = _cosines(ctx, graph, plan.question, missing) if missing else []
    for info, cosine in zip(missing, cosines):
        hits[info.iri] = _hit(info)
        hits[info.iri].terms["vec"] = round(C.W_VEC * cosine, 4)
    q_tokens = _key_tokens(plan.question)
    named = {w.lower() for n in plan.names for w in n.split()}
    for info in exact:
        hit = hits[info.iri]
        hit.routes.append("exact")
        hit.terms["exact"] = C.W_EXACT
        # Only exactly named anchors carry degree and predicate information (A.3).
        preds = graph.predicates_of(info.iri) if plan.relations else set()
        if preds & set(plan.families):
            hit.terms["pred"] = C.W_PRED
        person_unnamed = info.type == "person" and not (set(info.key.split()) & named)
        weight = C.W_HUB_PERSON if person_unnamed else C.W_HUB
        hit.terms["hub"] = -round(weight * math.log1p(info.degree), 4)
    for hit in hits.values():
        toks = hit.key.split()
        if toks:
            hit.terms["lex"] = round(C.W_LEX * len(set(toks) & q_tokens) / len(toks), 4)
            hit.terms["spec"] = round(C.W_SPEC * (len(toks) - 1), 4)
        hit.score = round(sum(hit.terms.values()), 4)
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.key, h.iri))
    for hit in ranked[: C.KEEP_ANCHORS]:
        hit.kept = True
    return ranked


def _topic(plan: Plan) -> str:
    """The question's content words without the names of the people it mentions."""
    named = {w.lower() for n in plan.names for w in n.split()}
    return " ".join(t for t in plan.terms if t not in named)


def _hit(info: AnchorInfo) -> AnchorHit:
    return AnchorHit(info.iri, info.name, info.key, info.type, info.degree)


def _key_tokens(text: str) -> set[str]:
    from memrepo.graph.kappa import tokens

    return set(tokens(text))


def _cosines(ctx: _Context, graph: GraphReader, question: str, anchors: Sequence[AnchorInfo]) -> list[float]:
    """Cosine of each anchor's name to the question: the name's vector from the anchor-name index when it
    holds it (a lookup), else through the embedding cache."""
    import numpy as np

    stored = graph.stored_name_vectors(anchors)
    rest = [a.name for a in anchors if a.iri not in stored]
    computed = iter(ctx.name_vectors(rest) if rest else [])
    q = ctx.query_vector(question)
    return [float(np.dot(stored[a.iri] if a.iri in stored else next(computed), q)) for a in anchors]


# --- the relation lane (Adj(A_q, P_q), eq. 11) ------------------------------------------------


def relation_lane(graph: GraphReader, plan: Plan, anchors: list[AnchorHit], result: RecallResult,
                  current: Callable[[list[Fact]], list[Fact]] | None = None) -> list[Fact]:
    """Frames of the exactly named anchors, predicate-filtered in the index, capped, scored; top B_R rendered.

    ``current`` keeps the facts whose citations still say so (:func:`_cited_current`), before B_R is taken.
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


_TYPE_LITERALS = {"date": ("date", "time", "year"), "count": ("count", "number", "frequency"), "price": ("price",),
                  "duration": ("duration", "age")}
_TYPE_ARMS = {"location": ("location",), "person": ("person",)}


def _answers_type(frame: FrameInfo, answer_types: list[str]) -> bool:
    for t in answer_types:
        if any(k in frame.literals for k in _TYPE_LITERALS.get(t, ())):
            return True
        if t == "date" and frame.event_time:
            return True
        if any(arm[3] in _TYPE_ARMS.get(t, ()) for arm in frame.arms):
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


# --- the belief lane (one-value relations over time, memrepo.graph.beliefs) --------------------------


def asked_slots(question: str) -> list[str]:
    """The one-value relations a question asks for, by :data:`memrepo.graph.beliefs.SLOT_QUESTIONS`."""
    from memrepo.graph.beliefs import SLOT_QUESTIONS

    q = " ".join(question.replace("’", "'").split())
    return [slot for slot, pattern in SLOT_QUESTIONS.items() if re.search(pattern, q, re.I)]


def asked_window(plan: Plan) -> tuple[str, str] | None:
    """The dates a question asks about, as (first day, last day); None: it asks about now."""
    dates = [d for d in plan.time.get("dates", []) if re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", d)]
    if not dates:
        return None
    start = min(dates)
    end = max(dates)
    return (start + "-01-01"[len(start) - 4:] if len(start) < 10 else start,
            end + "-12-31"[len(end) - 4:] if len(end) < 10 else end)


# A question about the past without a date: "before she moved" (the day before the holder's last change of
# that slot), "used to", "previous", "former", "before that" (the value just before the current one).
_BEFORE_EVENT = (
    ("home", re.compile(r"\bbefore (?:he|she|they|\w+) (?:moved|relocated)\b", re.I)),
    ("job", re.compile(r"\bbefore (?:he|she|they|\w+) (?:changed jobs|quit|started (?:working|a new job)|"
                       r"got (?:a|the) new job|was hired|retrained)\b", re.I)),
    ("partner", re.compile(r"\bbefore (?:he|she|they|\w+) (?:married|got married|got engaged|met)\b", re.I)),
)
_PREVIOUS = re.compile(r"\b(used to|previous|previously|former|formerly|before that|earlier|before (?:this|the "
                       r"current) one)\b", re.I)


def relative_window(question: str, chains: dict[str, list[Any]]) -> tuple[str, str] | None:
    """The day a question about the past without a date asks about, from the holder's beliefs (``chains``: slot
    -> its beliefs); None when it names no such change."""
    from datetime import date, timedelta

    def day_before(iso: str) -> tuple[str, str]:
        try:
            d = (date.fromisoformat(iso[:10]) - timedelta(days=1)).isoformat()
        except ValueError:
            d = iso[:10]
        return d, d

    for slot, pattern in _BEFORE_EVENT:
        if pattern.search(question):
            changes = sorted(b.valid_from for b in chains.get(slot, []) if b.valid_from)
            if len(changes) >= 2:  # the last change: the day before the current value began
                return day_before(changes[-1])
    if _PREVIOUS.search(question):  # the day the value before the current one began (same-day changes too)
        for links in chains.values():
            closed = sorted((b.valid_until, b.valid_from) for b in links if b.valid_until is not None and b.valid_from)
            if closed and any(b.current for b in links):
                return closed[-1][1][:10], closed[-1][1][:10]
    return None


def belief_lane(ctx: _Context, graph: GraphReader, plan: Plan, anchors: list[AnchorHit],
                result: RecallResult) -> list[Fact]:
    """The belief a question asks of a named anchor's one-value relation: the one that holds now (or in the
    dates the question names), and the one before it; two values for one time are a conflict, both kept.

    A chain that rests on a record changed or removed since it was indexed is derived again here, in
    memory, from the statements of the records that still say so (``result.stale_dropped`` says which).
    """
    from memrepo.graph import beliefs as bl

    slots = asked_slots(plan.question)
    named = [a for a in anchors if a.kept and "exact" in a.routes]
    if not slots or not named:
        return []
    window = asked_window(plan)
    named_iris = {a.iri for a in named}
    facts: list[Fact] = []
    for hit in named:
        events = [slot for slot, pattern in _BEFORE_EVENT if pattern.search(plan.question)]
        chain = _current_chain(ctx, graph, hit.iri, sorted(set(slots) | set(events)), result)
        if window is None:
            by_name: dict[str, list[Any]] = {}
            for b in chain:
                by_name.setdefault(b.slot, []).append(b)
            hit_window = relative_window(plan.question, by_name)
        else:
            hit_window = window
        chain = [b for b in chain if b.slot in slots]
        for (slot, subkey), links in _by_slot(chain).items():
            if subkey and subkey not in named_iris:
                continue  # "How many cats does Ana have?" reads Ana's cats, not her dogs (nor her trips)
            text = bl.describe(links, hit_window)
            if not text:
                continue
            held = [b for b in links if (b.holds_at(*hit_window) if hit_window else b.current)]
            start = min(b.valid_from for b in held)
            before = [b for b in links if b.valid_until is not None and b.valid_until <= start]
            shown = held + before[-1:]
            cites = sorted({m for b in shown for m in b.memories})
            result.beliefs.append({"slot": slot, "holder": hit.name, "at": list(hit_window) if hit_window else None,
                                   "answer": text, "cites": cites, "beliefs": [b.to_dict() for b in links]})
            loaded = {f.iri: f for f in graph.load_frames(sorted({b.frame for b in shown}))}
            for b in shown:
                if b.frame not in loaded or not loaded[b.frame].arms:
                    continue  # extracted again in memory from a record edited since: in the belief, not a graph fact
                fact = score_fact(loaded[b.frame], plan, named)
                fact.cites = list(b.memories)
                fact.valid_from, fact.valid_until = b.valid_from, b.valid_until
                fact.superseded_by, fact.conflicts = list(b.superseded_by), list(b.conflicts)
                facts.append(fact)
    return facts


def _by_slot(chain: list[Any]) -> dict[tuple[str, str], list[Any]]:
    out: dict[tuple[str, str], list[Any]] = {}
    for b in chain:
        out.setdefault((b.slot, b.subkey), []).append(b)
    return out


def _current_chain(ctx: _Context, graph: GraphReader, anchor: str, slots: list[str], result: RecallResult) -> list[Any]:
    """The anchor's beliefs of ``slots`` as the index derived them, or derived again without the statements of
    records that changed or are gone since, with what a changed record says now extracted again in memory
    (:func:`memrepo.graph.beliefs.current_chain`)."""
    from memrepo.graph import beliefs as bl

    chain, dropped, why = bl.current_chain(graph, anchor, ctx.snapshot, slots, namespace=ctx.settings.namespace)
    for o in dropped:
        entry = {"frame": o.frame, "predicate": o.slot, "record": o.memory, "reason": why[o.memory]}
        if entry not in result.stale_dropped:
            result.stale_dropped.append(entry)
    return chain


def _annotate_beliefs(graph: GraphReader, facts: list[Fact]) -> None:
    """Give each fact that states a one-value relation the interval its value held (its latest one)."""
    todo = [f for f in facts if f.valid_from is None]
    if not todo:
        return
    found = graph.beliefs_of_frames(f.id for f in todo)
    for fact in todo:
        held = found.get(fact.id)
        if held:
            last = held[-1]
            fact.valid_from, fact.valid_until = last.valid_from, last.valid_until
            fact.superseded_by, fact.conflicts = list(last.superseded_by), list(last.conflicts)


# --- the base lane (Rows(A_q)) ------------------------------------------------------------


def base_lane(ctx: _Context, graph: GraphReader, plan: Plan, anchors: list[AnchorHit]) -> dict[str, dict[str, Any]]:
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


def text_lane(ctx: _Context, plan: Plan, types: list[str]) -> list[str]:
    """The best TEXT_LANE records of ``types`` for the question's content words, by the full-text index.

    The graph's rows reach a turn through the anchors it mentions; a turn that says what the question asks
    in other entities' words (or names no anchor the entry kept) is found by its words."""
    if not C.TEXT_LANE:
        return []
    query = " ".join(w for w in (_escape(t) for t in (plan.terms or content_terms(plan.question))) if w)
    if not query:
        return []
    return list(islice((i for _score, i in ctx.fulltext().search_ids(query, C.TEXT_LANE * 2)
                        if i and rec.type_of_id(i) in types), C.TEXT_LANE))


def vector_lane(ctx: _Context, plan: Plan, types: list[str]) -> list[str]:
    """The VECTOR_LANE records of ``types`` whose stored vectors are nearest the question's."""
    if not C.VECTOR_LANE:
        return []
    out: list[str] = []
    seen: set[int] = set()
    for k in (C.VECTOR_LANE, C.VECTOR_LANE * 2):  # the nearest first: most questions need no more
        chunk = [key for key, _cosine in ctx.vectors().search(ctx.query_vector(plan.question), k) if key not in seen]
        seen.update(chunk)
        found = ctx.fulltext().ids_by_vkeys(chunk)
        out += [i for i in (found.get(key) for key in chunk) if i and rec.type_of_id(i) in types]
        if len(out) >= C.VECTOR_LANE:
            break
    return out[: C.VECTOR_LANE]


def provenance_neighbours(ctx: _Context, seeds: list[str]) -> list[tuple[str, str]]:
    """Same-chunk and adjacent-turn rows of ``seeds`` from the provenance index (not graph edges)."""
    reader = ctx.provenance()
    out: list[tuple[str, str]] = []
    for record_id in seeds:
        record = ctx.record(record_id)
        if record is None:
            continue
        for other, relation in reader.neighbours(record.sources, C.NEIGHBOUR_TURNS):
            if other != record_id and rec.type_of_id(other) in GRAPH_TYPES:
                out.append((other, relation))
    return out


# --- rerank ----------------------------------------------------------------------------------


@dataclass
class _Features:
    """What rerank knows of one candidate, read once per recall: BM25 within the pool (global statistics,
    so it does not depend on which other rows are in the pool), the vector cosine (None: no stored vector),
    the head of its text, and the (source, position) of each part it cites."""

    lex: float
    vec: float | None
    head: str
    positions: list[tuple[str, int]]


_TERMS = ("lex", "vec", "anchor", "actor", "time", "cited", "context")
_ID_DATE_RE = re.compile(r"^[a-z]+-(\d{4})-(\d{2})-(\d{2})-")


def _time_match(record_id: str, dates: list[str]) -> float:
    """How well the row's date (the mention date every record id carries) meets a date the question names:
    1 on the day (less and less up to TIME_DAYS away), in the month, or in the year named."""
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


def rerank(ctx: _Context, plan: Plan, candidates: dict[str, dict[str, Any]]) -> list[Candidate]:
    """Each candidate row scored by BM25 within the pool, a vector prior, its anchor link, its speaker,
    and the best score of its adjacent turns (provenance context); best first, with each score's terms."""
    out = []
    for record_id, values in _term_values(ctx, plan, candidates).items():
        terms = {k: round(v, 4) for k, v in zip(_TERMS, values) if v}
        out.append(Candidate(record_id, round(sum(terms.values()), 4), terms, list(candidates[record_id]["via"])))
    out.sort(key=lambda c: (-c.score, c.id))
    return out


def rerank_order(ctx: _Context, plan: Plan, candidates: dict[str, dict[str, Any]]) -> list[str]:
    """The ids :func:`rerank` would return, in its order, without building each candidate's terms."""
    scores = {i: round(sum(round(v, 4) for v in values if v), 4)
              for i, values in _term_values(ctx, plan, candidates).items()}
    return sorted(scores, key=lambda i: (-scores[i], i))


def _term_values(ctx: _Context, plan: Plan, candidates: dict[str, dict[str, Any]]) -> dict[str, tuple[float, ...]]:
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
            C.R_TIME * _time_match(record_id, dates) if dates else 0.0,
            C.R_CITED if "fact" in info["via"] else 0.0,
        )
    if not C.R_CONTEXT:
        return {i: (*own[i], 0.0) for i in ids}
    base_score = {i: sum(t) for i, t in own.items()}
    context = _best_adjacent(feats, base_score, C.NEIGHBOUR_TURNS)
    return {i: (*own[i], C.R_CONTEXT * context[i]) for i in ids}


def _features(ctx: _Context, plan: Plan, ids: list[str]) -> dict[str, _Features]:
    """Rerank's features of ``ids``; only the ones this recall has not read yet are looked up."""
    known = ctx.features
    new = [i for i in ids if i not in known]
    if new:
        rows = ctx.provenance().features(new)
        lex = _bm25_within(ctx, plan, {i: (_own_summary(row.summary, row.text), row.text) for i, row in rows.items()})
        vec = _row_cosines(ctx, plan.question, new, {i: row.vkey for i, row in rows.items()})
        for record_id in new:
            row = rows.get(record_id)
            known[record_id] = _Features(lex.get(record_id, 0.0), vec.get(record_id), row.head if row else "",
                                         row.positions if row else [])
    return {i: known[i] for i in ids}


def _own_summary(summary: list[str], text: list[str]) -> list[str]:
    """The summary's words for rerank's BM25, or none when the summary only repeats the lead of the text.

    A turn's summary is its first words (cut at about 120 characters): boosted as a field of its own, it
    would count every word of a short turn 2.5 times and the words of a long turn after its lead once,
    so a short turn that only echoes the question ("What's your best camping memory?") outranks the long
    one that answers it after a greeting. A summary in words of its own (written by a model) still counts.
    """
    return [] if summary == text[: len(summary)] else summary


def _best_adjacent(feats: dict[str, _Features], score: dict[str, float], span: int) -> dict[str, float]:
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


def _bm25_within(ctx: _Context, plan: Plan, docs: dict[str, tuple[list[str], list[str]]]) -> dict[str, float]:
    """BM25 of each candidate for the question's content words (absent: no word matches), from the
    candidates' analyzed words in the provenance index and the full-text index's global statistics: the
    cost is the pool's, not the history's."""
    from memrepo.index.fulltext import bm25

    words = " ".join(w for w in (_escape(t) for t in (plan.terms or content_terms(plan.question))) if w)
    query = terms_of(words)
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


def _escape(term: str) -> str:
    return re.sub(r"[^\w]", " ", term).strip()


def _row_cosines(ctx: _Context, question: str, ids: list[str], known: dict[str, int]) -> dict[str, float]:
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


# --- the graph read, whole -------------------------------------------------------------------


def graph_recall(ctx: _Context, graph: GraphReader, plan: Plan, result: RecallResult, types: list[str]) -> None:
    """Entry, both lanes, rerank and fusion; fills ``result``. Any exception means: fall back."""
    anchors = anchor_entry(ctx, graph, plan)
    result.anchors = anchors
    facts = relation_lane(graph, plan, anchors, result, lambda found: _cited_current(ctx, graph, found, result))
    facts = belief_lane(ctx, graph, plan, anchors, result) + facts
    _annotate_beliefs(graph, facts)
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
    ranked = rerank(ctx, plan, pool)
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


def _cited_current(ctx: _Context, graph: GraphReader, facts: list[Fact], result: RecallResult) -> list[Fact]:
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


def _citation_stale(ctx: _Context, record_id: str, followed: set[str] | None) -> str | None:
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


def _row(ctx: _Context, record_id: str, lane: str, score: float, terms: dict[str, float]) -> Row:
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


def fallback_recall(ctx: _Context, plan: Plan, result: RecallResult, types: list[str]) -> None:
    """Direct full-text + vector retrieval over ``types``, within the operator's capacity."""
    from memrepo.index.search import _search

    hits = []
    for type_ in types:
        hits += _search(ctx.indexes, ctx.commit, plan.question, type_, C.FALLBACK_DEPTH, False)
    hits.sort(key=lambda h: (-h.score, h.id))
    pool = {h.id: {"via": ["fallback"], "anchor": 0.0} for h in hits}
    ranked = rerank(ctx, plan, pool)
    chosen, order = fuse([], ranked, plan.capacity, 0, ctx.record)
    result.fusion = order
    result.records = [_row(ctx, c.id, "fallback", c.score, c.terms) for c in chosen]
    result.inspected = {"anchors": 0, "frames": 0, "rows": len(pool)}


# --- typed paths (M A.1): core, resource, procedural, vault ---------------------------------------


def typed_paths(ctx: _Context, plan: Plan, result: RecallResult, types: list[str]) -> None:
    if "core" in types:
        for path, blob in ctx.snapshot.walk("core"):
            if rec.is_record_path(path):
                try:
                    record = rec.parse(ctx.snapshot.read_blob(blob), path)
                except RecordError:
                    continue
                result.core.append(_plain_row(record, "core"))
    for type_ in ("resource", "procedural"):
        if type_ in types and _has_records(ctx, type_):
            from memrepo.index.search import _search

            for hit in _search(ctx.indexes, ctx.commit, plan.question, type_, TYPED_HITS, False):
                result.typed.append(Row(id=hit.id, type=hit.type, summary=hit.summary, text=hit.snippet,
                                        mention_time=hit.mention_time or "", event_time=hit.event_time, status=None,
                                        sources=[], lane=type_, score=hit.score))
    if "vault" in types:
        _vault(ctx, plan, result)


def _has_records(ctx: _Context, type_: str) -> bool:
    folders = (type_, rec.RULES_FOLDER) if type_ == "resource" else (type_,)  # rules are resource records
    return any(rec.is_record_path(p) for folder in folders for p, _ in ctx.snapshot.walk(folder))


def _vault(ctx: _Context, plan: Plan, result: RecallResult) -> None:
    """Vault entries only when the question names their label, and only with the key."""
    from memrepo import vault

    if not ctx.settings.vault_key:
        return
    asked = set(content_terms(plan.question))
    for path, blob in ctx.snapshot.walk("vault"):
        if not rec.is_record_path(path):
            continue
        try:
            record = rec.parse(ctx.snapshot.read_blob(blob), path)
        except RecordError:
            continue
        label = record.summary.split(":", 1)[-1].strip().lower()
        if label and set(content_terms(label)) <= asked:
            result.typed.append(_plain_row(vault.unseal(record, ctx.settings.vault_key), "vault"))


def _plain_row(record: rec.Record, lane: str) -> Row:
    return Row(id=record.id, type=record.type, summary=record.summary, text=record.text,
               mention_time=record.mention_time, event_time=record.event_time, status=record.status,
               sources=list(record.sources), lane=lane)
