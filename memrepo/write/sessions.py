"""A task session's steps: what the user asked, what the agent said, each tool call with its reply, the outcome.

MIRIX keeps what happened in episodic memory and how a task was done in procedural memory. A task session
(:func:`memrepo.write.parsers` ``_task`` / ``_run``: parts ``task``, ``t1``..., ``outcome``) is therefore
written as

- one episodic record per step (:func:`episodes`): a user's or the agent's message, or a tool call paired with
  the reply it got (``assistant called sql with host: db-stage-2; sql failed: ERROR: ...``), citing the parts
  it rests on, so that recall and the answerer reach "which tool failed", "what error", "what did the user ask";
- the procedural task-session record, which keeps the task, the outcome and the steps in short
  (:func:`listing`, bounded by :data:`MAX_LISTING_CHARS`), the experience skills distillation reads;
- one procedural ``instruction`` record per standing instruction of the user's (:func:`standing_instructions`:
  "always run the linter before pushing a tag", "next time ...").

A system or developer message (an agent's policy, often thousands of words) is no step. A step's words are
kept verbatim up to a bound (a reply to :data:`MAX_REPLY_CHARS`, arguments to :data:`MAX_ARGUMENTS_CHARS`); the
whole message stays in the source, which every record cites.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memrepo.nlp.tokens import split_sentences
from memrepo.write import offline as rules

MAX_SAID_CHARS = 2000  # a user's or the agent's message in one episodic record
MAX_REPLY_CHARS = 400  # a tool's reply in a step ("in short": the source keeps all of it)
MAX_ARGUMENTS_CHARS = 200
MAX_LINE_CHARS = 300  # one step in the task-session record's listing
MAX_LISTING_CHARS = 6000  # all the steps in the task-session record
TOOL_ROLES = ("tool", "function")
SKIPPED_ROLES = ("system", "developer")
_CALLS_AT = '[{"function"'  # where the parser appended an assistant message's tool calls (json.dumps, sorted keys)
# A tool reply that reports a failure: it starts with error/exception/traceback/failed, is a JSON error object,
# or labels an error ("... failed: ...", "error: ...").
_FAILED_RE = re.compile(r"^\s*(?:error\b|\{\s*\"error\"|exception\b|traceback\b|failed\b|fatal\b)|"
                        r"\b(?:error|failed|exception)\s*:", re.I)
# A sentence of the user's that asks for more than this task: a rule for next time.
_STANDING_RE = re.compile(r"\b(?:always|never|next time|in (?:the )?future|from now on|whenever|every time|"
                          r"each time|going forward)\b", re.I)

# The user as the subject: "I'll have it ready next time" is what the user will do, not a rule for the agent.
_SPEAKER_SUBJECT_RE = re.compile(r"\bI(?:['’](?:ll|m|ve|d))?\b(?!['’])")


@dataclass
class Step:
    """One step of a session: ``kind`` is ``task``, ``said`` (a message), ``call`` (a tool call and its reply),
    ``reply`` (a tool reply no call asked for) or ``outcome``."""

    kind: str
    anchors: list[str]
    actor: str = ""
    text: str = ""  # what was said, the task, the outcome, or the tool's reply
    tool: str = ""
    arguments: str = ""
    failed: bool = False
    time: str = ""
    status: str = ""  # the outcome's
    replied: bool = False

    def episode(self) -> str:
        """The step as one episodic record's text."""
        if self.kind == "task":
            return f"Task: {self.text}"
        if self.kind == "outcome":
            return f"Outcome ({self.status}): {self.text}" if self.status else f"Outcome: {self.text}"
        if self.kind == "call":
            called = f"{self.actor or 'the agent'} called {self.tool}" + (f" with {self.arguments}" if self.arguments
                                                                          else "")
            if not self.replied:
                return f"{called}; no reply"
            return f"{called}; {self.tool} {'failed' if self.failed else 'returned'}: {self.text}"
        if self.kind == "reply":
            return f"{self.actor or 'tool'} {'failed' if self.failed else 'replied'}: {self.text}"
        return f"{self.actor}: {self.text}" if self.actor else self.text


def spoken(text: str) -> str:
    """A message's own words: its text without the tool calls the parser appended as JSON."""
    at = text.find(_CALLS_AT)
    return (text[:at] if at >= 0 else text).strip()


def tool_calls(text: str) -> list[dict[str, Any]]:
    """The tool calls the parser appended to an assistant message (``[{"function": {...}, "id": ...}]``)."""
    at = text.find(_CALLS_AT)
    if at < 0:
        return []
    try:
        calls = json.loads(text[at:])
    except ValueError:
        return []
    if not isinstance(calls, list):
        return []
    return [c for c in calls if isinstance(c, dict) and isinstance(c.get("function"), dict)]


def failed(reply: str) -> bool:
    """Whether a tool's reply reports a failure (read from its first 300 characters)."""
    return bool(_FAILED_RE.search(reply[:300]))


def _bounded(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _arguments(raw: Any) -> str:
    """A call's arguments in short: ``key: value, ...`` (strings as they are, other values as JSON)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return _bounded(str(raw), MAX_ARGUMENTS_CHARS)
    if isinstance(value, dict):
        text = ", ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)}"
                         for k, v in value.items())
    elif value in (None, "", [], {}):
        text = ""
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _bounded(text, MAX_ARGUMENTS_CHARS)


def read_steps(parts: list[dict[str, Any]]) -> list[Step]:
    """The steps of a session's parts (a window's ``variables()["parts"]``), in order.

    Each tool reply goes to the earliest call still waiting for one: of the tool it names (a ``tool`` message's
    ``name``), else the earliest of any tool. The task is a step only in a session without a message of the
    user's (whose request says it in their words; an agent run's task is its first user message).
    """
    steps: list[Step] = []
    waiting: list[Step] = []
    asked = any(p.get("role") == "user" and str(p.get("text") or "").strip() for p in parts)
    for p in parts:
        anchor, role, text = p["anchor"], p.get("role"), str(p.get("text") or "")
        when = str(p.get("time") or "")
        if anchor == "task" and not role:
            if text.strip() and not asked:
                steps.append(Step("task", [anchor], text=_bounded(text, MAX_SAID_CHARS), time=when))
        elif anchor == "outcome" and not role:
            steps.append(Step("outcome", [anchor], text=_bounded(text, MAX_SAID_CHARS), time=when,
                              status=str(p.get("status") or "")))
        elif role in SKIPPED_ROLES:
            continue
        elif role in TOOL_ROLES:
            reply = _bounded(text, MAX_REPLY_CHARS)
            name = str(p.get("speaker") or "")
            target = next((s for s in waiting if s.tool == name), waiting[0] if waiting else None)
            if target is None:
                steps.append(Step("reply", [anchor], actor=name, text=reply, failed=failed(text), time=when))
                continue
            waiting.remove(target)
            target.anchors.append(anchor)
            target.text, target.failed, target.replied = reply, failed(text), True
        else:
            actor = str(p.get("speaker") or role or "")
            words = spoken(text)
            if words:
                steps.append(Step("said", [anchor], actor=actor, text=_bounded(words, MAX_SAID_CHARS), time=when))
            for call in tool_calls(text):
                function = call["function"]
                step = Step("call", [anchor], actor=actor, tool=str(function.get("name") or "a tool"),
                            arguments=_arguments(function.get("arguments")), time=when)
                steps.append(step)
                waiting.append(step)
    return steps


def listing(steps: list[Step]) -> str:
    """The steps as the task-session record lists them: one numbered line each, each and all of them bounded;
    the task and the outcome are not listed (the record states them above)."""
    lines: list[str] = []
    used = 0
    listed = [s for s in steps if s.kind not in ("task", "outcome")]
    for n, step in enumerate(listed, 1):
        line = _bounded(f"{n}. " + " ".join(step.episode().split()), MAX_LINE_CHARS)
        if used + len(line) > MAX_LISTING_CHARS:
            lines.append(f"... and {len(listed) - n + 1} more steps (in the source)")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


@dataclass
class Instruction:
    """A standing instruction of the user's: the sentence, verbatim, and the part it was said in."""

    anchor: str
    text: str
    speaker: str = ""


def standing_instructions(parts: list[dict[str, Any]]) -> list[Instruction]:
    """The sentences of the user's messages that give a rule beyond this task ("always run the linter before
    pushing a tag", "next time also post the release note"): an instruction said to the agent
    (:func:`memrepo.write.offline.is_instruction` with ``addressee=AGENT``) or a sentence naming when the rule holds (always, never, next
    time, from now on, whenever...) that does not have the user as its subject. A sentence holding a secret is left to
    the vault."""
    out: list[Instruction] = []
    seen: set[str] = set()
    for p in parts:
        if p.get("role") != "user":
            continue
        for line in spoken(str(p.get("text") or "")).split("\n"):
            for sentence in split_sentences(line, keep_quotes=True):
                s = sentence.strip()
                if not s or s.endswith("?") or s in seen or rules.secrets(s):
                    continue
                standing = _STANDING_RE.search(s) and not _SPEAKER_SUBJECT_RE.search(s)
                if standing or rules.is_instruction(s, addressee=rules.AGENT):
                    seen.add(s)
                    out.append(Instruction(p["anchor"], s, str(p.get("speaker") or "user")))
    return out
