"""Citation-balanced fusion (MIRIX-2.0 §2.4, A.3).

Up to B_R cited rows first (a graph fact without the row that supports it would
leave the answer unverifiable), then up to B_B base rows, then the remaining
capacity from the rest of either lane by score; no id twice. Near-duplicate
episodic paraphrases collapse only when they fall on the same calendar date,
so the same words on two different days stay two rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from memrepo.read import constants as C

_TOKEN_RE = re.compile(r"[a-z0-9]+")


@dataclass
class Candidate:
    """A row a lane proposes, with its rerank score and terms."""

    id: str
    score: float
    terms: dict[str, float] = field(default_factory=dict)
    via: list[str] = field(default_factory=list)
    lane: str = ""


def _tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN_RE.findall(text.lower()))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word sets."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def _day(record: Any) -> str | None:
    when = getattr(record, "event_time", None) or getattr(record, "mention_time", None)
    return str(when)[:10] if when else None


def is_near_duplicate(record: Any, kept: list[Any]) -> str | None:
    """The id of a kept row that ``record`` merely repeats on the same calendar date, else None.

    Two rows repeat each other when they cite the same source parts said on one day, or when
    their words are nearly the same (Jaccard >= NEAR_DUPLICATE) on one calendar date.
    """
    if record is None:
        return None
    day = _day(record)
    said = _said(record)
    for other in kept:
        if other is None:
            continue
        # Rows citing the same source parts repeat one utterance (a semantic fact drawn from an episode
        # whose event time is the day before): the day it was said decides, not the event time.
        same_parts = bool(record.sources) and set(record.sources) <= set(other.sources)
        if same_parts and said is not None and _said(other) == said:
            return other.id
        if day is not None and _day(other) == day and similarity(record.text, other.text) >= C.NEAR_DUPLICATE:
            return other.id
    return None


def _said(record: Any) -> str | None:
    when = getattr(record, "mention_time", None)
    return str(when)[:10] if when else None


DANGLING = "dropped: not in the repository"


def fuse(
    cited: list[Candidate],
    base: list[Candidate],
    base_budget: int,
    cited_budget: int,
    load: Callable[[str], Any],
) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """Fuse two ranked lanes into at most ``base_budget + cited_budget`` rows.

    Args:
        cited: rows cited by rendered facts, best first.
        base: base-lane rows, best first.
        load: record id -> record (for the near-duplicate rule); None if unreadable.

    Returns:
        (chosen rows in order, the fusion log: one entry per row considered, with its step and outcome).
    """
    capacity = base_budget + cited_budget
    chosen: list[Candidate] = []
    kept_records: list[Any] = []
    seen: set[str] = set()
    log: list[dict[str, Any]] = []

    def take(c: Candidate, step: str) -> bool:
        if c.id in seen:
            return False
        seen.add(c.id)
        record = load(c.id)
        if record is None:  # cited by the graph, but gone from the repository: costs this row only
            log.append({"id": c.id, "step": step, "outcome": DANGLING})
            return False
        duplicate = is_near_duplicate(record, kept_records)
        if duplicate:
            log.append({"id": c.id, "step": step, "outcome": f"collapsed into {duplicate} (same date)"})
            return False
        c.lane = step
        chosen.append(c)
        kept_records.append(record)
        log.append({"id": c.id, "step": step, "outcome": "kept", "score": c.score})
        return True

    def run(lane: list[Candidate], step: str, limit: int) -> None:
        taken = 0
        for c in lane:
            if taken >= limit or len(chosen) >= capacity:
                break
            if take(c, step):
                taken += 1

    run(cited, "cited", cited_budget)
    run(base, "base", base_budget)
    rest = sorted((c for c in cited + base if c.id not in seen), key=lambda c: (-c.score, c.id))
    run(rest, "fill", capacity - len(chosen))
    return chosen, log
