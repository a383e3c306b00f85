"""The anchor key κ(n) and the admission gate (MIRIX-2.0 A.2; DESIGN.md §3).

κ lowercases a name, turns punctuation into spaces, drops eleven function words,
singularizes tokens of at least four letters conservatively (plural endings
only), keeps numbers, and sorts the tokens. The admission gate runs on the key,
so one entry such as ``user`` also blocks ``User``, ``Users`` and ``the user``.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for"})
MAX_ANCHORS = {"episodic": 16, "semantic": 18}

# Generic filing terms and dialogue-role pseudo-entities (written as keys: singular, lowercase).
GENERIC_TERMS = frozenset(
    {
        "advice", "detail", "information", "info", "plan", "tip", "note", "update", "thing", "stuff",
        "topic", "issue", "matter", "question", "answer", "conversation", "discussion", "chat",
        "message", "summary", "context", "example", "idea", "point", "fact", "event", "activity",
        "experience", "situation", "something", "anything", "everything", "nothing", "lot", "way",
        "time", "day", "today", "yesterday", "tomorrow", "moment", "part", "kind", "sort", "bit",
        "memory", "record", "reminder", "task", "goal", "news", "preference", "feeling",
    }
)
DIALOGUE_ROLES = frozenset(
    {"user", "assistant", "ai", "bot", "chatbot", "system", "speaker", "human", "agent", "model", "me",
     "i", "you", "we", "us", "he", "she", "they", "them", "him", "her", "it", "myself", "yourself"}
)

_PUNCT_RE = re.compile(r"[^\w]+", re.UNICODE)
# Endings that are never plural markers on their own.
_KEEP_S = ("ss", "us", "is", "ous", "ics", "ness", "ies'")
_IRREGULAR_PLURALS = {
    "children": "child", "people": "person", "women": "woman", "men": "man", "feet": "foot",
    "teeth": "tooth", "mice": "mouse", "geese": "goose",
}


def singularize(token: str) -> str:
    """Conservative singular of one token: only plural endings change, short tokens never do.

    ``apps`` -> ``app``, ``cities`` -> ``city``, ``boxes`` -> ``box``; ``training``,
    ``trains`` -> ``train`` but ``training`` stays, ``glass`` and ``status`` stay.
    """
    if len(token) < 4 or not token.isalpha():
        return token
    if token in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[token]
    if token.endswith(_KEEP_S[:-1]) or not token.endswith("s"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return token[:-2]
    return token[:-1]


def tokens(name: str) -> list[str]:
    """The unsorted key tokens of ``name`` (lowercased, function words dropped, singularized)."""
    words = _PUNCT_RE.sub(" ", name.lower().replace("_", " ")).split()
    out = []
    for word in words:
        if word in FUNCTION_WORDS:
            continue
        single = singularize(word)
        if single not in FUNCTION_WORDS:  # "ands" -> "and" must not survive as a token
            out.append(single)
    return out


@functools.lru_cache(maxsize=1 << 16)  # pure; the canonicalization registry asks it for every anchor name per write
def kappa(name: str) -> str:
    """The anchor key κ(n): lowercase, no punctuation or function words, singular, sorted tokens.

    >>> kappa("Mobile Apps") == kappa("the mobile app")
    True
    >>> kappa("10 Gallons") == kappa("20 Gallons")
    False
    """
    return " ".join(sorted(tokens(name)))


def rejection(key: str) -> str | None:
    """Why the admission gate rejects the anchor key ``key``, or None if it is admitted."""
    if not key:
        return "empty name"
    if key in GENERIC_TERMS:
        return "generic filing term"
    if key in DIALOGUE_ROLES:
        return "dialogue-role pseudo-entity"
    parts = key.split()
    if all(p.isdigit() for p in parts):
        return "a number is a literal, not an anchor"
    if len(key) < 2:
        return "too short"
    return None


def admit(names: Iterable[str], kind: str) -> tuple[list[str], dict[str, str]]:
    """Apply the admission gate and the per-record cap to canonical ``names`` (in priority order).

    Args:
        names: canonical anchor names, most important first; duplicates by key are kept once.
        kind: ``episodic`` (at most 16 anchors) or ``semantic`` (at most 18).

    Returns:
        (admitted names, {rejected name: reason}).
    """
    cap = MAX_ANCHORS.get(kind, MAX_ANCHORS["episodic"])
    admitted: list[str] = []
    keys: set[str] = set()
    rejected: dict[str, str] = {}
    for name in names:
        key = kappa(name)
        if key in keys:
            continue
        reason = rejection(key)
        if reason is None and len(admitted) >= cap:
            reason = f"over the cap of {cap} anchors for one {kind} record"
        if reason:
            rejected.setdefault(name, reason)
            continue
        keys.add(key)
        admitted.append(name)
    return admitted, rejected
