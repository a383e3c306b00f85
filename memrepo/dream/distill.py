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

It also reads what a session does, with no cue needed (:func:`read_actions`):
the tool calls in order (name and arguments, each quoted as the ``"name":
"<tool>"`` of the call as the transcript holds it), the tool replies that report
an error, and for a failure the sentence that says which step went wrong (an
assistant or outcome sentence that names one of the session's tools and says
it failed, broke, was wrong, skipped, done without or before something). A
success gives one ``reuse`` experience, the steps it took; a failure one
``avoid`` experience: the sentence naming its cause, else the failing tool's
error, else the steps it took. The curator compares those runs
(:func:`memrepo.dream.curate.build_procedure`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from memrepo.records import Source
from memrepo.nlp import analyzer
from memrepo.write.sessions import tool_calls

ROLE = "distiller"
OUTCOMES = ("success", "failure", "unclear")
LESSONS = ("reuse", "avoid")
MAX_EXPERIENCES = 6  # per session
MAX_QUOTE_CHARS = 400
MAX_ACTIONS = 60  # tool calls read per session

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
                "quotes": {"type": "array", "minItems": 1, "maxItems": 12, "items": _QUOTE},
            },
        }},
        "actions": {"type": "array", "maxItems": MAX_ACTIONS, "items": {
            "type": "object", "required": ["part", "tool", "quote"],
            "properties": {"part": {"type": "string"}, "tool": {"type": "string", "minLength": 1},
                           "arguments": {"type": "object"}, "quote": {"type": "string", "minLength": 1},
                           "error": {"type": ["object", "null"]}}}},
        "cause": {"type": ["object", "null"], "required": ["part", "text"], "properties": {
            "part": {"type": "string"}, "text": {"type": "string", "minLength": 3, "maxLength": MAX_QUOTE_CHARS}}},
    },
}

_FAILED = re.compile(r"\b(?:fail(?:ed|s|ure)?|went wrong|wrong|broke|broken|mistake|because|instead of|without|"
                     r"before|forgot|skipped|missed|too early|error)\b", re.I)
_ERROR = re.compile(r"^\s*(?:error\b|\{\s*\"error\"|exception\b|traceback\b|failed\b)|\b(?:error|failed)\s*:", re.I)

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
    actions: list[dict[str, Any]] = field(default_factory=list)  # checked tool calls: part, tool, arguments, error
    cause: tuple[str, str] | None = None  # (part, verbatim sentence) saying which step of a failure went wrong


def variables(source: Source, task: str, stated: str) -> dict[str, Any]:
    """The prompt variables for one session: its task, the outcome it states, and its parts."""
    parts = [{"part": p.anchor, "role": str(p.meta.get("role") or p.anchor), "text": p.text,
              **({"speaker": str(p.meta["speaker"])} if p.meta.get("speaker") else {})} for p in source.parts]
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
        first = next(iter(analyzer().sentences(outcome_part["text"], keep_quotes=True)), outcome_part["text"].strip())
        outcome = _outcome_word(variables.get("stated_outcome", "") + " " + first)
        if outcome != "unclear":
            quotes = [{"part": "outcome", "text": first[:MAX_QUOTE_CHARS]}]
    experiences = []
    for p in parts:
        if p["part"] == "task":
            continue
        for sentence in analyzer().sentences(p["text"], keep_quotes=True):
            for lesson, cue in (("avoid", _AVOID), ("reuse", _REUSE)):
                if cue.match(sentence):
                    advice = _advice(sentence, cue)
                    if len(advice) >= 3:
                        experiences.append({"lesson": lesson, "advice": advice[:400],
                                            "quotes": [{"part": p["part"], "text": sentence[:MAX_QUOTE_CHARS]}]})
                    break
    actions = read_actions(parts)
    cause = failure_cause(parts, actions) if outcome == "failure" else None
    experiences = [*action_experiences(outcome, actions, cause), *experiences]
    return {"outcome": outcome, "quotes": quotes, "experiences": experiences[:MAX_EXPERIENCES], "actions": actions,
            "cause": cause}


def read_actions(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls of a session in order, each with its part, name, arguments and quote, and the error its
    reply reported (the part and the reply's first line) if any."""
    actions: list[dict[str, Any]] = []
    for p in parts:
        if p["role"] == "assistant":
            for call in tool_calls(p["text"]):
                name = str(call["function"].get("name") or "")
                args: Any = call["function"].get("arguments")
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    args = {}
                quote = f'"name": {json.dumps(name, ensure_ascii=False)}'
                if name and quote in p["text"] and len(actions) < MAX_ACTIONS:
                    actions.append({"part": p["part"], "tool": name, "quote": quote, "error": None,
                                    "arguments": args if isinstance(args, dict) else {}})
        elif p["role"] in ("tool", "function") and actions and _ERROR.search(p["text"][:300]):
            line = next((ln.strip() for ln in p["text"].split("\n") if ln.strip()), "")[:MAX_QUOTE_CHARS]
            target = next((a for a in reversed(actions) if a["tool"] == p.get("speaker")), actions[-1])
            if line and target["error"] is None:
                target["error"] = {"part": p["part"], "text": line}
    return actions


def tool_words(tool: str) -> list[str]:
    """The words of a tool's name (``run_tests`` -> run, tests), those of 3 letters or more."""
    return [w for w in re.split(r"[^a-z0-9]+", tool.lower()) if len(w) >= 3]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def mentions(sentence: str, tool: str) -> tuple[int, int]:
    """How many of ``tool``'s words ``sentence`` names (an inflected form counts), and where the first is
    (a large number when none): the sentence names the step it is about first."""
    words = [_stem(w) for w in re.findall(r"[a-z0-9]+", sentence.lower())]
    hits = [i for t in map(_stem, tool_words(tool)) for i, w in enumerate(words) if w.startswith(t) or (
        len(w) >= 4 and t.startswith(w))]
    found = {t for t in map(_stem, tool_words(tool)) if any(w.startswith(t) or (len(w) >= 4 and t.startswith(w))
                                                            for w in words)}
    return len(found), min(hits) if hits else 10**6


def failure_cause(parts: list[dict[str, Any]], actions: list[dict[str, Any]]) -> dict[str, str] | None:
    """The sentence of a failed session that says which step went wrong: the last assistant or outcome sentence
    after the first tool call that says something failed or was done wrong and names one of its tools."""
    tools = {a["tool"] for a in actions}
    if not tools:
        return None
    first = next(i for i, p in enumerate(parts) if p["part"] == actions[0]["part"])
    found: dict[str, dict[str, str]] = {}
    for p in parts[first:]:
        if p["role"] not in ("assistant", "outcome"):
            continue
        text = p["text"].split('[{"function"', 1)[0]
        for sentence in analyzer().sentences(text, keep_quotes=True):
            if _FAILED.search(sentence) and any(mentions(sentence, t)[0] for t in tools):
                found[p["role"]] = {"part": p["part"], "text": sentence.strip()[:MAX_QUOTE_CHARS]}
    return found.get("assistant") or found.get("outcome")  # the agent's own account first


def _steps(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Actions with repeats of the same tool in a row folded into one."""
    out: list[dict[str, Any]] = []
    for a in actions:
        if not out or out[-1]["tool"] != a["tool"]:
            out.append(a)
    return out


def action_experiences(outcome: str, actions: list[dict[str, Any]], cause: dict[str, str] | None
                       ) -> list[dict[str, Any]]:
    """What a session's actions teach: the steps of a success (reuse); the stated cause, the failing tool's
    error, or the steps of a failure (avoid). Each quotes the session."""
    steps = _steps(actions)
    if not steps or outcome not in ("success", "failure"):
        return []
    listed = ", ".join(a["tool"] for a in steps)
    calls = [{"part": a["part"], "text": a["quote"]} for a in steps][:12]
    if outcome == "success":
        return [{"lesson": "reuse", "advice": f"Take the steps of a successful run in order: {listed}",
                 "quotes": calls}]
    if cause is not None:
        return [{"lesson": "avoid", "advice": f"Avoid what made a run fail: {cause['text'].rstrip('.!')}",
                 "quotes": [cause]}]
    failing = next((a for a in steps if a["error"]), None)
    if failing is not None:
        return [{"lesson": "avoid", "advice": f"Check {failing['tool']} before going on: its reply was "
                                              f"{failing['error']['text'][:200]}",
                 "quotes": [failing["error"], {"part": failing["part"], "text": failing["quote"]}]}]
    return [{"lesson": "avoid", "advice": f"Do not repeat the steps of a failed run as they were: {listed}",
             "quotes": calls}]


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
    for a in reply.get("actions") or ():
        if str(a.get("part")) in texts and quote_in(str(a.get("quote", "")), texts[str(a["part"])]):
            error = a.get("error") if isinstance(a.get("error"), dict) else None
            if error is not None and found(error) is None:
                error = None
            out.actions.append({"part": a["part"], "tool": str(a["tool"]), "arguments": a.get("arguments") or {},
                                "error": found(error) if error else None})
    cause = reply.get("cause")
    if isinstance(cause, dict) and out.outcome == "failure":
        out.cause = found(cause)
    return out
