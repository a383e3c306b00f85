"""The anchor key κ(n) and the admission gate (MIRIX-2.0 A.2; DESIGN.md §3).

κ lowercases a name, turns punctuation into spaces, drops eleven function words,
singularizes tokens of at least four letters conservatively (plural endings
only), keeps numbers, and sorts the tokens. The admission gate runs on the key,
so one entry such as ``user`` also blocks ``User``, ``Users`` and ``the user``.
"""

from __future__ import annotations

from typing import Iterable

from memrepo.nlp.lexicon import GENERIC_TERMS
from memrepo.nlp.morphology import FUNCTION_WORDS, kappa, singular as singularize
from memrepo.nlp.morphology import key_tokens as tokens

__all__ = ["FUNCTION_WORDS", "GENERIC_TERMS", "MAX_ANCHORS", "admit", "kappa", "rejection", "singularize", "tokens"]

MAX_ANCHORS = {"episodic": 16, "semantic": 18}

DIALOGUE_ROLES = frozenset(
    {"user", "assistant", "ai", "bot", "chatbot", "system", "speaker", "human", "agent", "model", "me",
     "i", "you", "we", "us", "he", "she", "they", "them", "him", "her", "it", "myself", "yourself"}
)


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
