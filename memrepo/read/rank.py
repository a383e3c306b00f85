"""The ranking stage over the recall pool: what the pool already knows, added to rerank's score.

Rerank scores each candidate alone (its words, its vector, its anchor link, its speaker, its date, its
neighbours). This stage adds what only the pool as a whole says, each term measured on its own on LoCoMo
(docs/recall.md, "The ranking stage"):

- ``agree``: how many independent lanes proposed the row (text, vector, the graph's rows, a rendered fact);
- ``cover``: the share of the question's words (analyzed as the full-text index analyzes them) the row holds,
  so a row that holds every word the question asks about beats one that repeats one rare word;
- ``session``: other strong candidates a few turns away in the same source (a conversation's session):
  evidence gathers around the best matches;
- ``event``: the question names a date and the row's event time (when it happened, which a turn saying
  "last week" moves away from the day it was said) meets it better than its mention date;
- ``anchors`` and ``role``: the graph frames citing the row bind the concrete anchors the question names
  (share of them), and a person the question names in the role its relation implies;
- ``asks`` and ``reply``: a strong row whose text ends in a question mark asks for what the question wants
  and does not say it (it loses ``K_ASKS``), and the part right after it in its source is the reply, which
  does (it gains ``K_REPLY`` times the asking row's share of the best score). A question and its answer
  are a pair in any dialogue, and the same holds for a FAQ's question and the paragraph under it.
- ``when``: for a question asking for a date, a row among the best ``K_WHEN_DEPTH`` that says when (a date,
  a duration, "ago", "since", "last ...") gains ``K_WHEN``: "when did ..." is answered by a time the evidence
  states, and of two rows about the same thing the one that dates it is the evidence;
- ``session+``: for the operators that gather evidence, each of the best ``K_NEW_SESSION_DEPTH`` rows that
  cites a source no better row cites gains ``K_NEW_SESSION``: a list's members are told on different days;
- ``brief``: a dialogue turn among the best ``K_BRIEF_DEPTH`` that says fewer than ``K_BRIEF_WORDS`` words
  (a reaction, a thanks, a statement cut down to a feeling) loses ``K_BRIEF``: it holds little of what a
  question asks, and the vector of a few words sits near many questions.

And, for the operators that gather evidence (list-union, count, intersection), a second hop: the concrete
anchors the frames of the first hop's best rows bind, which the question did not name, bring at most
``K_HOP_ROWS`` of their rows into the pool (``via`` "hop"), and the pool is ranked again. The hop reads
``K_HOP_SEEDS`` rows' frames and ``K_HOP_ANCHORS`` anchors: bounded like every lane, and the records
returned stay within the operator's budgets B_B + B_R (fusion's, unchanged).

Every weight is in :mod:`memrepo.read.constants` (``K_*``); a weight of 0 turns its term off and costs
nothing. The kept term reads only what rerank has read (the cited positions of the same rows); ``cover``
reads the rows' analyzed words again, ``event`` the records of the best ``K_EVENT_DEPTH`` rows, ``anchors``
and ``role`` the frames citing the best ``K_ANCHOR_DEPTH``; ``asks`` and ``reply`` the records of the best
``K_ASKS_DEPTH`` (which fusion reads anyway, most of them), ``when`` and ``brief`` the same records, ``session+``
rerank's cited positions.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memrepo.index.fulltext import terms as terms_of
from memrepo.nlp import lexicon as lx
from memrepo.nlp.literals import PATTERNS
from memrepo.read import constants as C
from memrepo.read.fuse import Candidate
from memrepo.read.lanes import query_text
from memrepo.read.plan import Plan
from memrepo.read.reading import Reading
from memrepo.read.rerank import date_match, rerank
from memrepo.read.results import AnchorHit

if TYPE_CHECKING:
    from memrepo.graph.reader import GraphReader

#: The lanes a pool entry's ``via`` names, by the independent evidence each is: neighbours are not evidence.
LANES = {"text": "text", "vector": "vector", "anchor": "graph", "frame": "graph", "co-participant": "graph",
         "fact": "fact"}


def lanes_of(via: list[str]) -> int:
    """How many independent lanes proposed a row."""
    return len({LANES[v] for v in via if v in LANES})


def coverage(query: set[str], words: frozenset[str]) -> float:
    """The share of the question's analyzed words a row holds (0.0 for an empty question)."""
    return len(query & words) / len(query) if query else 0.0


def session_support(ranked: list[Candidate], positions: dict[str, list[tuple[str, int]]], depth: int,
                    span: int | None = None) -> dict[str, int]:
    """For each candidate, how many *other* candidates of the best ``depth`` cite a part of the same source
    within ``span`` positions of one of its parts (anywhere in the source when ``span`` is None)."""
    top = [(c.id, positions.get(c.id, [])) for c in ranked[:depth]]
    out: dict[str, int] = {}
    for c in ranked:
        mine = positions.get(c.id, [])
        out[c.id] = sum(1 for other, theirs in top if other != c.id and any(
            source == near and (span is None or abs(at - there) <= span)
            for source, at in mine for near, there in theirs))
    return out


def stage_terms(ctx: Reading, plan: Plan, pool: dict[str, dict[str, Any]],
                ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """The stage's terms of each candidate of ``ranked`` (rerank's order), by record id (absent: none)."""
    feats = {c.id: ctx.features[c.id] for c in ranked if c.id in ctx.features}
    added: dict[str, dict[str, float]] = {c.id: {} for c in ranked}
    if C.K_AGREE:
        for c in ranked:
            n = lanes_of(pool.get(c.id, {}).get("via", c.via))
            if n > 1:
                added[c.id]["agree"] = C.K_AGREE * (n - 1)
    query = set(terms_of(query_text(plan))) if C.K_COVER else set()
    if query:
        rows = ctx.provenance().features(c.id for c in ranked)
        for c in ranked:
            row = rows.get(c.id)
            share = coverage(query, frozenset(row.summary) | frozenset(row.text)) if row else 0.0
            if share:
                added[c.id]["cover"] = C.K_COVER * share
    if C.K_SESSION:
        positions = {i: f.positions for i, f in feats.items()}
        support = session_support(ranked, positions, C.K_SESSION_DEPTH, C.K_SESSION_SPAN)
        for c in ranked:
            if support.get(c.id):
                added[c.id]["session"] = C.K_SESSION * min(support[c.id], C.K_SESSION_CAP) / C.K_SESSION_CAP
    dates = plan.time.get("dates", [])
    if C.K_EVENT and dates:
        for c in ranked[: C.K_EVENT_DEPTH]:
            record = ctx.record(c.id)
            when = record.event_time if record is not None else None
            if when:
                gain = date_match(str(when)[:10], dates) - date_match(c.id, dates)
                if gain > 0:
                    added[c.id]["event"] = C.K_EVENT * gain
    return added


def _frames_of(graph: "GraphReader", ids: list[str]) -> dict[str, list[Any]]:
    """The frames citing each record (FrameInfo), read in one batch."""
    citing = {i: graph.frames_citing(i) for i in ids}
    loaded = {f.iri: f for f in graph.load_frames(sorted({f for fs in citing.values() for f in fs}))}
    return {i: [loaded[f] for f in fs if f in loaded] for i, fs in citing.items()}


def anchor_terms(graph: "GraphReader", plan: Plan, anchors: list[AnchorHit],
                 ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """``anchors`` and ``role`` of the best ``K_ANCHOR_DEPTH`` candidates, from the frames that cite them."""
    named = [a for a in anchors if a.kept and "exact" in a.routes]
    things = {a.iri for a in named if a.type != "person"}
    persons = {a.iri for a in named if a.type == "person"}
    rel = plan.relations[0] if plan.relations else None
    wanted = (rel.object_role if plan.direction == "object" else rel.subject_role) if rel else ""
    if not (things and C.K_ANCHORS) and not (persons and wanted and C.K_ROLE):
        return {}
    frames = _frames_of(graph, [c.id for c in ranked[: C.K_ANCHOR_DEPTH]])
    reps: dict[str, str] = {}
    out: dict[str, dict[str, float]] = {}
    for record_id, found in frames.items():
        bound = set()
        role = False
        for frame in found:
            for arm_role, iri, _name, _type in frame.arms:
                rep = reps.setdefault(iri, graph.representative(iri))
                bound.add(rep)
                if rep in persons and arm_role == wanted and frame.predicate in plan.families:
                    role = True
        terms = {}
        if things and C.K_ANCHORS and bound & things:
            terms["anchors"] = C.K_ANCHORS * len(bound & things) / len(things)
        if role and C.K_ROLE:
            terms["role"] = C.K_ROLE
        if terms:
            out[record_id] = terms
    return out


def second_hop(graph: "GraphReader", plan: Plan, anchors: list[AnchorHit], ranked: list[Candidate],
               pool: dict[str, dict[str, Any]]) -> list[str]:
    """Rows of the concrete anchors the first hop's best rows bind and the question did not name, at most
    ``K_HOP_ROWS``, for the operators that gather evidence; they are added to ``pool`` (``via`` "hop")."""
    if not C.K_HOP_ROWS or plan.operator not in C.GATHERING:
        return []
    kept = {a.iri for a in anchors if a.kept}
    found: list[str] = []
    for frames in _frames_of(graph, [c.id for c in ranked[: C.K_HOP_SEEDS]]).values():
        for frame in frames:
            for _role, iri, _name, type_ in frame.arms:
                rep = graph.representative(iri)
                if type_ != "person" and rep not in kept and rep not in found:
                    found.append(rep)
    added = []
    weights = [(iri, 1.0) for iri in found[: C.K_HOP_ANCHORS]]
    for record_id, _strength in graph.rows_of_weighted(weights, C.K_HOP_ROWS) if weights else []:
        if record_id not in pool:
            pool[record_id] = {"via": ["hop"], "anchor": 0.0}
            added.append(record_id)
    return added


def rank_pool(ctx: Reading, graph: "GraphReader", plan: Plan, anchors: list[AnchorHit],
              pool: dict[str, dict[str, Any]]) -> list[Candidate]:
    """The pool reranked, widened by the second hop (which joins ``pool``), ranked with the stage's terms."""
    def ranked_once() -> list[Candidate]:
        first = rerank(ctx, plan, pool)
        graph_terms = anchor_terms(graph, plan, anchors, first) if (C.K_ANCHORS or C.K_ROLE) else {}
        return rank(ctx, plan, pool, first, graph_terms)

    ranked = ranked_once()
    if second_hop(graph, plan, anchors, ranked, pool):
        ranked = ranked_once()  # rerank reads the features of the hop's rows only: the others are known
    return ranked


def asks(text: str) -> bool:
    """Whether a row's text ends by asking (its last sentence is a question)."""
    return text.rstrip().endswith("?")


def _text_of(ctx: Reading, record_id: str, head: str | None) -> str:
    """A row's text: its head when the head is the whole of it (shorter than ``HEAD_CHARS``), else its record's."""
    if head is not None and len(head) < C.HEAD_CHARS:
        return head
    record = ctx.record(record_id)
    return record.text if record is not None else ""


def reply_terms(ctx: Reading, ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """``asks`` of the best ``K_ASKS_DEPTH`` rows of ``ranked`` (scored, best first) whose text asks, and
    ``reply`` of the rows citing the part right after one of them in the same source.

    Only the best few rows are read: fusion reads most of them anyway (a record is read once per recall), and
    reading the best 30 instead cost about 6 ms a LoCoMo recall for no more recall."""
    if not ranked or not (C.K_ASKS or C.K_REPLY):
        return {}
    best = ranked[0].score or 1.0
    out: dict[str, dict[str, float]] = {}
    asked: dict[tuple[str, int], float] = {}
    for c in ranked[: C.K_ASKS_DEPTH]:
        feats = ctx.features.get(c.id)
        if not asks(_text_of(ctx, c.id, feats.head if feats else None)):
            continue
        if C.K_ASKS:
            out.setdefault(c.id, {})["asks"] = -C.K_ASKS
        for source, at in feats.positions if feats else []:
            asked[(source, at + 1)] = max(asked.get((source, at + 1), 0.0), c.score / best)
    if C.K_REPLY and asked:
        for c in ranked:
            feats = ctx.features.get(c.id)
            share = max((asked.get(p, 0.0) for p in feats.positions), default=0.0) if feats else 0.0
            if share:
                out.setdefault(c.id, {})["reply"] = C.K_REPLY * share
    return out


def _with_terms(ranked: list[Candidate], added: dict[str, dict[str, float]]) -> list[Candidate]:
    """``ranked`` with ``added`` summed into each candidate's score and terms, best first."""
    out = []
    for c in ranked:
        extra = {k: round(v, 4) for k, v in added.get(c.id, {}).items() if v}
        if extra:
            c = Candidate(c.id, round(c.score + sum(extra.values()), 4), {**c.terms, **extra}, c.via, c.lane)
        out.append(c)
    out.sort(key=lambda c: (-c.score, c.id))
    return out


def rank(ctx: Reading, plan: Plan, pool: dict[str, dict[str, Any]], ranked: list[Candidate],
         extra_terms: dict[str, dict[str, float]] | None = None) -> list[Candidate]:
    """``ranked`` (rerank's order) with the stage's terms added to each candidate's score, best first; the
    rows that ask and their replies are found in that order (:func:`reply_terms`)."""
    added = stage_terms(ctx, plan, pool, ranked)
    for record_id, terms in (extra_terms or {}).items():
        added.setdefault(record_id, {}).update(terms)
    out = _with_terms(ranked, added)
    out = _with_terms(out, reply_terms(ctx, out))
    last = when_terms(ctx, plan, out)
    for more in (new_session_terms(ctx, plan, out), brief_terms(ctx, out)):
        for record_id, terms in more.items():
            last.setdefault(record_id, {}).update(terms)
    return _with_terms(out, last)


#: Words that place a statement in time without a date of their own ("two weekends ago", "since I moved",
#: "last time", "I did it earlier", "recently"), beside the literal patterns of dates and durations.
_WHEN_WORDS_RE = re.compile(r"\b(?:ago|since|last|earlier|recently|before)\b", re.I)
#: The patterns, cheapest first (the relative-date one, with its many alternatives, costs most).
_WHEN_PATTERNS = (_WHEN_WORDS_RE,) + tuple(PATTERNS[k].regex for k in (
    "month_day", "day_month", "month", "year", "duration", "iso_date", "relative_date"))
_WORD_RE = re.compile(r"[a-z]+")
#: A word one of the patterns needs when the text has no digit ("this" and "next" need a word of this set
#: after them, "May" a year): a text with none of them and no digit says no date, and is passed over at
#: the cost of a split instead of the seven patterns (about 60 µs a text).
_TIME_WORDS = frozenset(
    "ago since last earlier recently before yesterday today tonight tomorrow morning afternoon evening "
    "night nights minute minutes min mins hour hours hr hrs day days week weeks weekend weekends month months "
    "year years yr yrs decade decades fortnight summer winter spring fall autumn".split()
    + [m for m in lx.MONTHS if m != "may"] + [m[:3] for m in lx.MONTHS if m != "may"]  # "May" is a month with a year
    + list(lx.WEEKDAYS) + [d + "s" for d in lx.WEEKDAYS])
_DIGIT_RE = re.compile(r"\d")


def says_when(text: str) -> bool:
    """Whether a text places something in time: a date (absolute or relative: "in May", "last Friday", "three
    days ago"), a duration ("for four years"), or a word that dates a statement ("since", "earlier", "ago")."""
    if not (_DIGIT_RE.search(text) or not _TIME_WORDS.isdisjoint(_WORD_RE.findall(text.lower()))):
        return False
    return any(p.search(text) for p in _WHEN_PATTERNS)


def when_terms(ctx: Reading, plan: Plan, ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """``when`` (``K_WHEN``) of the best ``K_WHEN_DEPTH`` rows of ``ranked`` that say when, for a question
    asking for a date: the answer to "when did ..." is a time the evidence states, so of two rows about the
    same thing, the one that dates it is the evidence. Reads the records of the rows ``reply_terms`` read."""
    if not C.K_WHEN or "date" not in plan.answer_types:
        return {}
    out: dict[str, dict[str, float]] = {}
    for c in ranked[: C.K_WHEN_DEPTH]:
        record = ctx.record(c.id)
        if record is not None and says_when(record.text):
            out[c.id] = {"when": C.K_WHEN}
    return out


def new_session_terms(ctx: Reading, plan: Plan, ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """``session+`` (``K_NEW_SESSION``) of each of the best ``K_NEW_SESSION_DEPTH`` rows of ``ranked`` that
    cites a source (a conversation's session) no better row cites, for the operators that gather evidence
    (list-union, count, intersection): the members of a list are told on different days, so the best row of
    a session not yet represented is worth more than the next row of one that is. Reads rerank's positions."""
    if not C.K_NEW_SESSION or plan.operator not in C.GATHERING:
        return {}
    seen: set[str] = set()
    out: dict[str, dict[str, float]] = {}
    for c in ranked[: C.K_NEW_SESSION_DEPTH]:
        feats = ctx.features.get(c.id)
        sources = {source for source, _at in feats.positions} if feats else set()
        if sources and not sources & seen:
            out[c.id] = {"session+": C.K_NEW_SESSION}
        seen |= sources
    return out


def said_words(text: str, actor: str | None) -> int | None:
    """How many words a dialogue turn says (its text after the speaker's name it opens with, "Ben: ..."); None
    for a row that is no one's turn (a document's passage, a note)."""
    if not actor or not text.startswith(actor + ":"):
        return None
    return len(text[len(actor) + 1:].split())


def brief_terms(ctx: Reading, ranked: list[Candidate]) -> dict[str, dict[str, float]]:
    """``brief`` (-``K_BRIEF``) of each of the best ``K_BRIEF_DEPTH`` rows of ``ranked`` that is a dialogue turn
    of fewer than ``K_BRIEF_WORDS`` words: a reaction ("Oh, how lovely!"), a thanks, or a statement cut down to
    its speaker and a feeling ("I feel so proud") holds little of what a question asks, and its vector, made
    of few words, sits near many questions. A document's short line (a heading, "Room: Lab 2") is no turn and
    keeps its score: it may be the answer. Reads the records the asking terms read."""
    if not C.K_BRIEF:
        return {}
    out: dict[str, dict[str, float]] = {}
    for c in ranked[: C.K_BRIEF_DEPTH]:
        feats = ctx.features.get(c.id)
        if feats is not None and not _may_be_brief(feats.head):
            continue  # the head (the text's start) already says enough, or opens no turn: nothing to read
        record = ctx.record(c.id)
        said = said_words(record.text, record.actor) if record is not None else None
        if said is not None and said < C.K_BRIEF_WORDS:
            out[c.id] = {"brief": -C.K_BRIEF}
    return out


def _may_be_brief(head: str) -> bool:
    """Whether a row whose text starts with ``head`` may be a turn of fewer than ``K_BRIEF_WORDS`` words: its
    head has a colon (a turn's speaker ends there), and fewer words after it (the head is a prefix of the text,
    so the turn says at least as many)."""
    _speaker, colon, after = head.partition(":")
    return bool(colon) and len(after.split()) < C.K_BRIEF_WORDS
