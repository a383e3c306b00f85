"""Deterministic rules the offline backend uses for the router and the six writers.

They read only the window they are given (and, for core, the current block), so
the same input always yields the same records.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memrepo import sensitive
from memrepo.text.dates import find_month_day
from memrepo.text.sentences import split_sentences

SELF_STATEMENT_RE = re.compile(
    r"\b(I am|I'm|I have|I've|I like|I love|I enjoy|I prefer|I hate|I dislike|I work|I live|I own|"
    r"my [\w'’ -]{1,30}? (?:is|are|was|were))\b",
    re.I,
)
SECRET_RE = sensitive.LABELLED_RE  # labelled values; memrepo.sensitive also finds token shapes
NAME_RE = re.compile(r"\b(?:[Mm]y name is|[Cc]all me)\s+([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)")
_PLAN_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to|will|scheduled|booked)\b", re.I)
_PLAN_STRONG_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to)\b", re.I)


def self_statements(text: str) -> list[str]:
    """Sentences of ``text`` in which the speaker states something about themselves."""
    return [s for s in split_sentences(text, keep_quotes=True) if SELF_STATEMENT_RE.search(s)]


def secrets(text: str) -> list[tuple[str, str]]:
    """(kind, value) of sensitive values in ``text``: labelled ("my PIN is 4321") or token-shaped."""
    return [(f.kind, f.value) for f in sensitive.find(text)]


def redact(text: str) -> str:
    """``text`` with every sensitive value replaced by a pointer to the vault (twice is the same as once)."""
    return sensitive.redact(text)


def mentioned_date(text: str, session_day: str | None) -> str | None:
    """A calendar date named in ``text`` ("August 12", "12 August"), in the session's year, else None."""
    if not session_day:
        return None
    named = find_month_day(text)
    if named is None:
        return None
    try:
        return date(int(session_day[:4]), *named).isoformat()
    except ValueError:
        return None


def event_timing(text: str, session_day: str | None) -> tuple[str | None, str]:
    """(event time, status) of what a turn reports: planned events keep their planned date."""
    named = mentioned_date(text, session_day)
    if _PLAN_RE.search(text) and named and session_day and named >= session_day:
        return named, "planned"
    if _PLAN_STRONG_RE.search(text):
        return None, "planned"
    if session_day and re.search(r"\byesterday\b", text, re.I):
        return (date.fromisoformat(session_day) - timedelta(days=1)).isoformat(), "done"
    return session_day, "done"
