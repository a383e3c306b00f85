"""Deterministic rules the offline backend uses for the router and the six writers.

They read only the window they are given (and, for core, the current block), so
the same input always yields the same records.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memrepo import sensitive
from memrepo.text.dates import find_date
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
    """A calendar date named in ``text`` ("2023-08-12", "12 August 2023", "August 12"): in its own year if it
    names one, else in the session's; None without a session day or a valid date."""
    if not session_day:
        return None
    named = find_date(text)
    if named is None:
        return None
    year, month, day = named
    try:
        return date(year or int(session_day[:4]), month, day).isoformat()
    except ValueError:
        return None


def reported_date(text: str, session_day: str) -> str | None:
    """The day a reported (done) event happened, when ``text`` names it: a named date not after the session's
    day. A date named without a year that would fall after it is last year's ("on December 20", said on
    1 December); a later date with a year is not the day of something already done, so None."""
    named = find_date(text)
    if named is None:
        return None
    year, month, day = named
    session_year = int(session_day[:4])
    for candidate in ([year] if year else [session_year, session_year - 1]):
        try:
            found = date(candidate, month, day).isoformat()
        except ValueError:  # 31 April, 29 February
            return None
        if found <= session_day:
            return found
    return None


def event_timing(text: str, session_day: str | None) -> tuple[str | None, str]:
    """(event time, status) of what a turn reports: planned events keep their planned date, done events the
    date the text names (else yesterday's for "yesterday", else the session's day)."""
    named = mentioned_date(text, session_day)
    if _PLAN_RE.search(text) and named and session_day and named >= session_day:
        return named, "planned"
    if _PLAN_STRONG_RE.search(text):
        return None, "planned"
    if session_day and (reported := reported_date(text, session_day)):
        return reported, "done"
    if session_day and re.search(r"\byesterday\b", text, re.I):
        return (date.fromisoformat(session_day) - timedelta(days=1)).isoformat(), "done"
    return session_day, "done"
