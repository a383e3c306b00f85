"""The distiller (role ``distiller``): judge a task session from quotes of it and draw experiences from it.

MIRIX-2.0 §2.5 and A.5: an outcome (success, failure, unclear) is kept only when
every quote given for it occurs verbatim in the session's source; otherwise it
is downgraded to unclear. Each experience is a lesson to reuse or a mistake to
avoid, with the quotes of the session it rests on; a quote that is not in the
session is dropped, and an experience left without a quote is dropped.

The offline distiller (no model) reads what a session states: the outcome from
the ``outcome`` part (its status word), and experiences from sentences that
begin with a cue, e.g. "Next time, ..." / "Avoid ..." / "Don't ..." (avoid) and
"Lesson: ..." / "What worked: ..." / "Always ..." / "Make sure ..." (reuse).
The advice is the sentence without its cue; ``;`` separates the steps of one
advice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memrepo.records import Source
from memrepo.text.sentences import split_sentences

ROLE = "distiller"
OUTCOMES = ("success", "failure", "unclear")
LESSONS = ("reuse", "avoid")
MAX_EXPERIENCES = 6  # per session
MAX_QUOTE_CHARS = 400

_QUOTE = {
    "type": "object",
    "required": ["part", "text"],
    "properties": {"part": {"type": "string", "minLength": 1},
                   "text": {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE_CHARS}},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["outcome", "quotes", "experiences"],
    "properties": {
        "outcome": {"type": "string", "enum": list(OUTCOMES)},
        "quotes": {"type": "array", "maxItems": 4, "items": _QUOTE},
        "experiences": {"type": "array", "maxItems": MAX_EXPERIENCES, "items": {
            "type": "object",
            "required": ["lesson", "advice", "quotes"],
            "properties": {
                "lesson": {"type": "string", "enum": list(LESSONS)},
                "advice": {"type": "string", "minLength": 3, "maxLength": 400},
                "quotes": {"type": "array", "minItems": 1, "maxItems": 3, "items": _QUOTE},
            },
        }},
    },
}

_AVOID = re.compile(r"^(?:next time|mistake to avoid|avoid|don't|do not|never)\b[:,]?\s*", re.I)
_REUSE = re.compile(r"^(?:lesson(?: learned)?|tip|what worked|worked|always|make sure(?: to)?|remember to)\b[:,]?\s*",
                    re.I)
_KEEP_CUE = re.compile(r"^(?:avoid|don't|do not|never|always|make sure)\b", re.I)  # the cue is part of the advice


def plain(text: str) -> str:
    """``text`` with its whitespace runs made single spaces: the form in which quotes are compared."""
    return " ".join(text.split())


def quote_in(quote: str, text: str) -> bool:
    """True if ``quote`` occurs verbatim in ``text`` (whitespace runs count as one space)."""
    q = plain(quote)
    return bool(q) and q in plain(text)


@dataclass
class Experience:
    """One distilled lesson: reuse or avoid, its advice, and the checked quotes of the session."""

    lesson: str
    advice: str
    quotes: list[tuple[str, str]]  # (part anchor, verbatim text)


@dataclass
class Distilled:
    """The checked result for one session."""

    outcome: str
    quotes: list[tuple[str, str]]
    experiences: list[Experience] = field(default_factory=list)
    downgraded: bool = False  # the reply's outcome had a quote not found in the session
    dropped: int = 0  # experiences without any quote found in the session


def variables(source: Source, task: str, stated: str) -> dict[str, Any]:
    """The prompt variables for one session: its task, the outcome it states, and its parts."""
    parts = [{"part": p.anchor, "role": str(p.meta.get("role") or p.anchor), "text": p.text} for p in source.parts]
    transcript = "\n".join(f"{p['part']} {p['role']}: {p['text']}" for p in parts)
    return {"task": task, "stated_outcome": stated, "parts": parts, "transcript": transcript}


def _outcome_word(text: str) -> str:
    from memrepo.write.writers import outcome_of  # the ingester's reading of a stated outcome

    found = outcome_of(text)
    return found if found in OUTCOMES else "unclear"  # "partial" is not a verdict the distiller gives


def _advice(sentence: str, cue: re.Pattern[str]) -> str:
    text = sentence if _KEEP_CUE.match(sentence) else cue.sub("", sentence, count=1)
    text = text.strip().rstrip(".!")
    return text[:1].upper() + text[1:] if text else ""


def offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Deterministic distiller: the stated outcome with its quote, and experiences from cue sentences."""
    parts = variables["parts"]
    outcome_part = next((p for p in parts if p["part"] == "outcome"), None)
    outcome, quotes = "unclear", []
    if outcome_part is not None:
        first = next(iter(split_sentences(outcome_part["text"], keep_quotes=True)), outcome_part["text"].strip())
        outcome = _outcome_word(variables.get("stated_outcome", "") + " " + first)
        if outcome != "unclear":
            quotes = [{"part": "outcome", "text": first[:MAX_QUOTE_CHARS]}]
    experiences = []
    for p in parts:
        if p["part"] == "task":
            continue
        for sentence in split_sentences(p["text"], keep_quotes=True):
            for lesson, cue in (("avoid", _AVOID), ("reuse", _REUSE)):
                if cue.match(sentence):
                    advice = _advice(sentence, cue)
                    if len(advice) >= 3:
                        experiences.append({"lesson": lesson, "advice": advice[:400],
                                            "quotes": [{"part": p["part"], "text": sentence[:MAX_QUOTE_CHARS]}]})
                    break
    return {"outcome": outcome, "quotes": quotes, "experiences": experiences[:MAX_EXPERIENCES]}


def check(reply: dict[str, Any], source: Source) -> Distilled:
    """Keep what the session supports: outcome quotes and experience quotes must occur verbatim in their part.

    A quote naming a part the session does not have is checked against the whole session.
    """
    texts = {p.anchor: p.text for p in source.parts}

    def found(q: dict[str, Any]) -> tuple[str, str] | None:
        part, text = str(q.get("part", "")), str(q.get("text", ""))
        if part in texts and quote_in(text, texts[part]):
            return part, plain(text)
        for anchor, body in texts.items():
            if quote_in(text, body):
                return anchor, plain(text)
        return None

    outcome = reply["outcome"]
    quotes = [found(q) for q in reply["quotes"]]
    downgraded = False
    if outcome != "unclear" and (not quotes or any(q is None for q in quotes)):
        outcome, downgraded = "unclear", True
    out = Distilled(outcome, [q for q in quotes if q is not None] if not downgraded else [], downgraded=downgraded)
    seen = set()
    for e in reply["experiences"]:
        checked = [q for q in (found(q) for q in e["quotes"]) if q is not None]
        advice = plain(e["advice"]).rstrip(".")
        if not checked or advice.lower() in seen:
            out.dropped += 1
            continue
        seen.add(advice.lower())
        out.experiences.append(Experience(e["lesson"], advice, checked))
    return out
