"""The belief lane: what a question asks of a one-value relation over time (:mod:`memrepo.graph.beliefs`).

"Where does Ana live?", "Where did she live before she moved?": the belief that holds now, or on the
day the question names (or implies), and the one before it, as facts citing the records that said so.
"""

from __future__ import annotations

import re
from typing import Any

from memrepo.graph.reader import GraphReader
from memrepo.read.facts import score_fact
from memrepo.read.plan import Plan
from memrepo.read.reading import Reading
from memrepo.read.results import AnchorHit, Fact, RecallResult


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


def belief_lane(ctx: Reading, graph: GraphReader, plan: Plan, anchors: list[AnchorHit],
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


def _current_chain(ctx: Reading, graph: GraphReader, anchor: str, slots: list[str], result: RecallResult) -> list[Any]:
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


def annotate_beliefs(graph: GraphReader, facts: list[Fact]) -> None:
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
