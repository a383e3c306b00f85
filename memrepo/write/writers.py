"""The Meta Memory Manager (router) and the six typed writers (MIRIX-2.0 §2.2, A.1).

Each role is one ``backend.run`` call on a *window* of a source (a few turns or
chunks): the router picks the memory types the window updates, then each chosen
writer returns its type's records as JSON, validated against a schema whose
``anchors`` enumerate the window's parts, so every record cites real source
parts. Offline, each role runs the deterministic rules in
:mod:`memrepo.write.offline`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError
from memrepo.llm import Backend
from memrepo.records import Record, Source, SourcePart
from memrepo.nlp.tokens import split_sentences
from memrepo.write import documents, sessions
from memrepo.write import offline as rules

WRITER_ORDER = ("episodic", "semantic", "core", "procedural", "resource", "vault")
WINDOW_PARTS = {"conversation": 12, "note": 12, "document": 4, "task": 10**6}
# The type a source kind always produces, whatever the router says.
# A task session's steps are always events (episodic) and it is always one procedural task-session record.
REQUIRED = {"conversation": ("episodic",), "document": ("resource",), "task": ("episodic", "procedural"), "note": ()}
EXCERPT_CHARS = 6000
# Bounds in the writer schemas: endpoints with grammar-constrained output (llama.cpp) cannot run
# away into endless arrays (strings are bounded by the backend's max_tokens); a reply over them is
# invalid and gets repaired. The offline rules stay within them.
MAX_SUMMARY_CHARS = 300
FACTS_PER_PART = 3
NON_TURN_ROLES = ("system", "tool", "function", "developer")
OUTCOMES = ("success", "failure", "partial", "unclear")
_OUTCOME_WORDS = {
    "success": ("success", "succeeded", "successful", "done", "pass", "passed", "solved", "completed", "ok"),
    "failure": ("failure", "failed", "fail", "error", "crashed", "aborted"),
    "partial": ("partial", "partially"),
}


@dataclass
class Window:
    """A few consecutive parts of one source: the unit one role call reads."""

    source: Source
    parts: list[SourcePart]
    _variables: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def time_of(self, anchor: str) -> str:
        part = self.source.part(anchor)
        return str((part.meta.get("time") if part else None) or self.source.mention_time)

    def citations(self, anchors: list[str]) -> list[str]:
        return [f"{self.source.id}#{a}" for a in anchors]

    def variables(self) -> dict[str, Any]:
        """What the roles read of the window (a new dict each call over one reading: the router and every writer
        of a window read the same parts)."""
        if self._variables is None:
            self._variables = self._read()
        return dict(self._variables)

    def _read(self) -> dict[str, Any]:
        parts = []
        lines = []
        for p in self.parts:
            speaker = p.meta.get("speaker")
            item: dict[str, Any] = {"anchor": p.anchor, "text": p.text}
            if speaker:
                item["speaker"] = str(speaker)
            if p.meta.get("role"):
                item["role"] = str(p.meta["role"])
            if p.meta.get("status"):
                item["status"] = str(p.meta["status"])
            if p.meta.get("blip_caption"):
                item["caption"] = str(p.meta["blip_caption"])
            for key in ("block", "section", "header"):  # a document part: what it is and under which heading
                if p.meta.get(key):
                    item[key] = p.meta[key]
            item["time"] = self.time_of(p.anchor)
            parts.append(item)
            caption = f" [image: {item['caption']}]" if "caption" in item else ""
            who = f"{speaker}: " if speaker else ""
            lines.append(f"{p.anchor} {who}{p.text}{caption}")
        return {
            "kind": self.source.kind,
            "title": self.source.title,
            "date": self.source.mention_time,
            "parts": parts,
            "anchors": [p.anchor for p in self.parts],
            "transcript": "\n".join(lines),
        }


def windows(source: Source) -> Iterator[Window]:
    size = WINDOW_PARTS.get(source.kind, 12)
    for start in range(0, len(source.parts), size):
        yield Window(source, list(source.parts[start : start + size]))


def _anchors_schema(window: Window) -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "items": {"type": "string", "enum": [p.anchor for p in window.parts]}}


def _checked_time(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return rec.check_time(value.strip(), "event_time", interval=True)
    except RecordError:
        return None  # a model's malformed date is dropped, never guessed at


@dataclass
class WriteContext:
    """What writers may read of the current store (P_u^{t-1}) and how they build records."""

    new_record: Callable[..., Record]
    core_blocks: dict[str, str] = field(default_factory=dict)
    # Each core block as the writers first read it (the base of the three-way merge on the tip, core_merges).
    core_base: dict[str, str] = field(default_factory=dict)
    vault_enabled: bool = False
    warnings: list[str] = field(default_factory=list)


# --- the router ------------------------------------------------------------------


def route(backend: Backend, window: Window, allowed: tuple[str, ...]) -> list[str]:
    """The memory types ``window`` updates (Meta Memory Manager, M eq. A.1)."""
    schema = {
        "type": "object",
        "required": ["types"],
        "properties": {
            "types": {"type": "array", "items": {"type": "string", "enum": list(allowed)}},
            "reason": {"type": "string"},
        },
    }
    variables = window.variables() | {"allowed": list(allowed)}
    offline = documents.document_route_offline if window.source.kind == "document" else route_offline
    reply = backend.run("router", variables, schema, offline)
    return [t for t in WRITER_ORDER if t in reply["types"] and t in allowed]


#: How a part of each source kind is read (:func:`memrepo.write.offline.read`): who its instructions are
#: addressed to and what a sentence stating nothing special is there (an event of a chat, a note or a session).
_READING = {"conversation": (rules.PERSON, "episodic"), "note": (rules.READER, "episodic"),
            "task": (rules.AGENT, "episodic")}


def _statements(kind: str, text: str, type_: str) -> list[str]:
    """The statements of one part of a ``kind`` source that belong to ``type_``: the router's reading, shared."""
    addressee, default = _READING.get(kind, (rules.READER, "semantic"))
    return rules.statements_of_type(text, type_, addressee=addressee, default=default)


def _types(kind: str, text: str) -> set[str]:
    addressee, default = _READING.get(kind, (rules.READER, "semantic"))
    return rules.text_types(text, addressee=addressee, default=default)


def _holds_secret(sentence: str, text: str) -> bool:
    """Whether ``sentence`` of ``text`` holds a sensitive value: one of its own, or one only the whole text shows
    (a reply on the line after "What's the PIN?")."""
    return bool(rules.secrets(sentence)) or any(value in sentence for _, value in rules.secrets(text))


def route_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """The offline router: each sentence's type (:func:`memrepo.write.offline.statement_types`: instructions and
    rules -> procedural, events -> episodic, durable facts -> semantic), plus core for first-person attributes
    and vault for secrets. A source kind's required type is added by :func:`write_source`, not here. The
    writers read the same statements (:func:`memrepo.write.offline.read`), so what is routed is what is written."""
    kind = variables["kind"]
    allowed = variables.get("allowed", WRITER_ORDER)
    types: set[str] = set()
    turns = [p for p in variables["parts"] if p.get("role") not in NON_TURN_ROLES]
    if kind == "task":
        # What the user's messages say (an event, a durable fact, a rule for next time); the agent's words and
        # the tool replies are steps (events) only: what an agent reports ("Price: $102") is what it found then,
        # not a fact that holds. The session's steps and record are required (REQUIRED), not routed.
        for p in variables["parts"]:
            if p.get("role") == "user":
                types |= _types(kind, p["text"])
                types |= {"procedural"} if sessions.standing_instructions([p]) else set()
            elif p.get("role") and p.get("role") not in sessions.SKIPPED_ROLES and sessions.spoken(p["text"]):
                types.add("episodic")
        types |= {"vault"} if any(rules.secrets(p["text"]) for p in turns) else set()
    elif kind in ("conversation", "note"):
        if kind == "note":
            types.add("episodic")  # a remembered note is always an event of its day, as before
        for p in turns:
            types |= _types(kind, p["text"])
            if rules.core_attributes(p["text"]):
                types.add("core")
            if rules.secrets(p["text"]):
                types.add("vault")
    return {"types": [t for t in WRITER_ORDER if t in types and t in allowed], "reason": "offline rules"}


# --- episodic --------------------------------------------------------------------


def episodic_schema(window: Window) -> dict[str, Any]:
    event = {
        "type": "object",
        "required": ["anchors", "text"],
        "properties": {
            "anchors": _anchors_schema(window),
            "text": {"type": "string", "minLength": 1},
            "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
            "actor": {"type": ["string", "null"]},
            "event_time": {"type": ["string", "null"]},
            "status": {"type": "string", "enum": ["done", "planned"]},
        },
    }
    return {"type": "object", "required": ["events"],
            "properties": {"events": {"type": "array", "maxItems": len(window.parts), "items": event}}}


def episodic_offline(variables: dict[str, Any]) -> dict[str, Any]:
    if variables["kind"] == "task":
        return _steps_offline(variables)
    events = []
    redact = variables.get("vault_enabled", False)
    for p in variables["parts"]:
        if p.get("role") in NON_TURN_ROLES or not p["text"].strip():
            continue
        text = rules.redact(p["text"]) if redact else p["text"]
        speaker = p.get("speaker")
        body = f"{speaker}: {text}" if speaker else text
        if p.get("caption"):
            body += f"\n[image: {p['caption']}]"
        event_time, status = rules.event_timing(p["text"], str(p["time"])[:10])
        events.append({"anchors": [p["anchor"]], "text": body, "actor": speaker, "event_time": event_time,
                       "status": status})
    return {"events": events}


def _steps_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """A task session's steps (:func:`memrepo.write.sessions.read_steps`: a message, a tool call with its reply,
    the outcome), one event each, in order, citing the parts each rests on."""
    redact = variables.get("vault_enabled", False)
    events = []
    for step in sessions.read_steps(variables["parts"]):
        text = rules.redact(step.episode()) if redact else step.episode()
        day = (step.time or str(variables["date"]))[:10]
        event_time, status = rules.event_timing(step.text, day) if step.kind == "said" else (day, "done")
        events.append({"anchors": step.anchors, "text": text, "actor": step.actor or None, "event_time": event_time,
                       "status": status})
    return {"events": events[: len(variables["parts"])]}


def episodic_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    out = []
    for event in reply["events"]:
        anchors = list(dict.fromkeys(event["anchors"]))
        out.append(ctx.new_record(
            "episodic", event["text"], mention_time=window.time_of(anchors[0]), source=window.source.id,
            position=",".join(anchors), summary=(event.get("summary") or None), event_time=_checked_time(event.get("event_time")),
            status=event.get("status") or "done", sources=window.citations(anchors), actor=event.get("actor") or None,
        ))
    return out


# --- semantic --------------------------------------------------------------------


def semantic_schema(window: Window) -> dict[str, Any]:
    fact = {
        "type": "object",
        "required": ["anchors", "text"],
        "properties": {
            "anchors": _anchors_schema(window),
            "text": {"type": "string", "minLength": 1},
            "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
            "subject": {"type": ["string", "null"]},
        },
    }
    return {"type": "object", "required": ["facts"],
            "properties": {"facts": {"type": "array", "maxItems": FACTS_PER_PART * len(window.parts), "items": fact}}}


def semantic_offline(variables: dict[str, Any]) -> dict[str, Any]:
    facts = []
    task = variables["kind"] == "task"
    for p in variables["parts"]:
        if p.get("role") in NON_TURN_ROLES or (task and p.get("role") != "user"):
            continue  # a task session's facts are the user's (the agent's words are steps: route_offline)
        speaker = p.get("speaker")
        for sentence in _statements(variables["kind"], p["text"], "semantic"):
            if _holds_secret(sentence, p["text"]):
                continue  # sensitive values go to the vault only
            facts.append({"anchors": [p["anchor"]], "text": f"{speaker}: {sentence}" if speaker else sentence,
                          "subject": speaker})
    return {"facts": facts[: FACTS_PER_PART * len(variables["parts"])]}


def semantic_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    out = []
    for fact in reply["facts"]:
        anchors = list(dict.fromkeys(fact["anchors"]))
        extra = {"subject": fact["subject"]} if fact.get("subject") else {}
        out.append(ctx.new_record(
            "semantic", fact["text"], mention_time=window.time_of(anchors[0]), source=window.source.id,
            position=",".join(anchors), summary=fact.get("summary") or None, sources=window.citations(anchors),
            actor=fact.get("subject") or None, **extra,
        ))
    return out


# --- core ------------------------------------------------------------------------

CORE_LABELS = ("human", "persona")


def core_schema(window: Window) -> dict[str, Any]:
    block = {
        "type": "object",
        "required": ["label", "text", "anchors"],
        "properties": {
            "label": {"type": "string", "enum": list(CORE_LABELS)},
            "text": {"type": "string", "minLength": 1},
            "anchors": _anchors_schema(window),
        },
    }
    return {"type": "object", "required": ["blocks"],
            "properties": {"blocks": {"type": "array", "maxItems": len(CORE_LABELS), "items": block}}}


#: Attributes with one value at a time: a newer one replaces the line (a name or an allergy adds one).
_SINGLE_VALUED = frozenset({"diet", "lives in", "from", "works as", "age", "prefers"})


def core_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Every first-person attribute a turn states goes into the human block as ``- [Speaker says: ]key: value``;
    a newer value of a single-valued key (for the same speaker) replaces the older line, an unchanged one is
    kept, and names and allergies add up."""
    current = dict(variables.get("core") or {})
    touched: dict[str, list[str]] = {}
    for p in variables["parts"]:
        speaker = p.get("speaker")
        who = f"{speaker} says: " if speaker else ""
        for key, value in rules.core_attributes(p["text"]):
            line = f"- {who}{key}: {value}"
            lines = current.get("human", "").split("\n")
            if line in lines:
                continue
            prefix = f"- {who}{key}: "
            kept = [ln for ln in lines if ln.strip() and not (key in _SINGLE_VALUED and ln.startswith(prefix))]
            current["human"] = "\n".join([*kept, line])
            touched.setdefault("human", []).append(p["anchor"])
    return {"blocks": [{"label": label, "text": current[label], "anchors": list(dict.fromkeys(anchors))}
                       for label, anchors in touched.items()]}


def core_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    out = []
    for block in reply["blocks"]:
        label, anchors = block["label"], list(dict.fromkeys(block["anchors"]))
        ctx.core_base.setdefault(label, ctx.core_blocks.get(label, ""))
        ctx.core_blocks[label] = block["text"]
        out.append(ctx.new_record("core", block["text"], label=label, mention_time=window.time_of(anchors[0]),
                                  sources=window.citations(anchors), summary=f"core block: {label}"))
    return out


def merge_block(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of a core block by lines: ``ours`` edited ``base``; ``theirs`` is the block on the tip now.

    The lines ours removed from base are removed from theirs, and the lines ours added are added where
    they followed in ours (at the end if that line is gone). A core block is a list of facts, so both
    sides' additions are kept, never one dropped for the other.
    """
    if theirs == base:
        return ours
    if ours == base:
        return theirs
    base_lines, our_lines = base.split("\n") if base else [], ours.split("\n")
    removed = {line for line in base_lines if line.strip() and line not in our_lines}
    merged = [line for line in theirs.split("\n") if line not in removed]
    previous: str | None = None
    for line in our_lines:
        if line not in merged and line not in base_lines:
            at = merged.index(previous) + 1 if previous in merged else len(merged)
            merged.insert(at, line)
        previous = line
    return "\n".join(merged).strip("\n")


def core_merges(ctx: WriteContext, records: list[Record]) -> dict[str, Callable[[Record | None], Record]]:
    """For each core block the writers edited: a function that redoes the edit on the block the tip holds.

    Passed to ``commit_records(merge=...)``, which runs it inside the commit's change function, so a
    writer that loses the compare-and-swap merges again on the new tip instead of writing the text it
    computed from the old one (two concurrent ``remember`` calls both keep their lines).
    """
    import dataclasses

    def merger(record: Record, base: str) -> Callable[[Record | None], Record]:
        def on_tip(current: Record | None) -> Record:
            theirs = current.text if current is not None else ""
            if theirs == base:
                return record
            cited = tuple(dict.fromkeys((current.sources if current is not None else ()) + record.sources))
            return dataclasses.replace(record, text=merge_block(base, record.text, theirs), sources=cited)

        return on_tip

    out = {}
    for record in records:
        label = record.extra.get("label")
        if record.type == "core" and label in ctx.core_base:
            out[record.id] = merger(record, ctx.core_base[label])
    return out


# --- vault -----------------------------------------------------------------------


def vault_schema(window: Window) -> dict[str, Any]:
    entry = {
        "type": "object",
        "required": ["anchors", "label", "value"],
        "properties": {
            "anchors": _anchors_schema(window),
            "label": {"type": "string", "minLength": 1},
            "value": {"type": "string", "minLength": 1},
        },
    }
    return {"type": "object", "required": ["entries"],
            "properties": {"entries": {"type": "array", "maxItems": FACTS_PER_PART * len(window.parts), "items": entry}}}


def vault_offline(variables: dict[str, Any]) -> dict[str, Any]:
    entries = []
    for p in variables["parts"]:
        for sentence in split_sentences(p["text"], keep_quotes=True):
            for label, _ in rules.secrets(sentence):
                entries.append({"anchors": [p["anchor"]], "label": label, "value": sentence})
    return {"entries": entries[: FACTS_PER_PART * len(variables["parts"])]}


def vault_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    out = []
    for entry in reply["entries"]:
        anchors = list(dict.fromkeys(entry["anchors"]))
        out.append(ctx.new_record("vault", entry["value"], mention_time=window.time_of(anchors[0]),
                                  source=window.source.id, position=",".join(anchors), sensitive=True,
                                  summary=f"vault entry: {entry['label']}"[:120], sources=window.citations(anchors)))
    return out


# --- procedural ------------------------------------------------------------------


def procedural_schema(window: Window) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "required": ["task", "outcome", "summary"],
        "properties": {
            "task": {"type": "string", "minLength": 1},
            "outcome": {"type": "string", "enum": list(OUTCOMES)},
            "summary": {"type": "string", "minLength": 1},
            "anchors": _anchors_schema(window),  # the parts holding a conversation's or note's instructions
        },
    }
    if window.source.kind == "task":  # the user's standing instructions, each verbatim with its part
        instruction = {"type": "object", "required": ["anchors", "text"],
                       "properties": {"anchors": _anchors_schema(window), "text": {"type": "string", "minLength": 1}}}
        schema["properties"]["instructions"] = {"type": "array", "maxItems": FACTS_PER_PART * len(window.parts),
                                                "items": instruction}
    return schema


def outcome_of(text: str) -> str:
    words = text.lower().replace(":", " ").split()
    for outcome, names in _OUTCOME_WORDS.items():
        if any(w in names for w in words[:3]):
            return outcome
    return "unclear"


def procedural_offline(variables: dict[str, Any]) -> dict[str, Any]:
    parts = {p["anchor"]: p for p in variables["parts"]}
    if variables["kind"] != "task":
        return _instructions_offline(variables)
    task = parts.get("task", {}).get("text") or variables["title"]
    outcome_part = parts.get("outcome")
    outcome = outcome_of(outcome_part.get("status", "") + " " + outcome_part["text"]) if outcome_part else "unclear"
    summary = outcome_part["text"] if outcome_part else variables["transcript"][:500]
    instructions = [{"anchors": [i.anchor], "text": i.text}
                    for i in sessions.standing_instructions(variables["parts"])]
    return {"task": task, "outcome": outcome, "summary": summary,
            "instructions": instructions[: FACTS_PER_PART * len(variables["parts"])]}


def _instructions_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """A conversation's or a note's instructions, verbatim, as one procedural reply: the first is the task, all
    of them (one per line, with who said them) the summary; ``anchors`` names the parts that hold them."""
    lines: list[str] = []
    anchors: list[str] = []
    for p in variables["parts"]:
        if p.get("role") in NON_TURN_ROLES:
            continue
        found = [s for s in _statements(variables["kind"], p["text"], "procedural") if not _holds_secret(s, p["text"])]
        if found:
            anchors.append(p["anchor"])
            who = f"{p['speaker']}: " if p.get("speaker") else ""
            lines.extend(who + s for s in found)
    if not lines:
        return {"task": variables["title"], "outcome": "unclear", "summary": variables["transcript"][:500]}
    return {"task": rec.default_summary(lines[0], 120), "outcome": "unclear", "summary": "\n".join(lines),
            "anchors": anchors}


def procedural_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    anchors = [p.anchor for p in window.parts]
    if window.source.kind != "task":
        cited = [a for a in reply.get("anchors") or () if a in anchors] or anchors
        return [ctx.new_record(
            "procedural", reply["summary"], mention_time=window.time_of(cited[0]), source=window.source.id,
            position=",".join(cited), summary=f"instructions: {rec.default_summary(reply['task'], 90)}",
            sources=window.citations(cited), kind="instruction",
        )]
    text = f"Task: {reply['task']}\nOutcome: {reply['outcome']}\n\n{reply['summary']}"
    steps = sessions.listing(sessions.read_steps(window.variables()["parts"]))
    if steps:  # the steps verbatim in short, whatever wrote the summary: what the session did, for recall
        text += "\n\nSteps:\n" + (rules.redact(steps) if ctx.vault_enabled else steps)
    session = ctx.new_record(
        "procedural", text, mention_time=window.time_of(anchors[0]), source=window.source.id, position=",".join(anchors),
        summary=f"task session ({reply['outcome']}): {rec.default_summary(reply['task'], 90)}",
        sources=window.citations(anchors), kind="task-session", outcome=reply["outcome"], distillation="pending",
    )
    out = [session]
    for item in reply.get("instructions") or ():
        cited = [a for a in dict.fromkeys(item["anchors"]) if a in anchors] or anchors
        out.append(ctx.new_record(
            "procedural", item["text"], mention_time=window.time_of(cited[0]), source=window.source.id,
            position=",".join(cited), sources=window.citations(cited), kind="instruction",
            summary=f"standing instruction: {rec.default_summary(item['text'], 90)}", session=session.id,
        ))
    return out


# --- resource --------------------------------------------------------------------


def resource_schema(window: Window) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["title", "summary"],
        "properties": {"title": {"type": "string", "minLength": 1}, "summary": {"type": "string", "minLength": 1}},
    }


def resource_offline(variables: dict[str, Any]) -> dict[str, Any]:
    first = next((p["text"] for p in variables["parts"] if p["text"].strip()), variables["title"])
    body = [ln for ln in first.split("\n") if ln.strip() and not ln.startswith("#")]
    summary = rec.default_summary(" ".join(body) or variables["title"], 200)
    return {"title": variables["title"], "summary": summary}


def resource_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    source = window.source
    document = document_text(source)
    name = str(source.extra.get("file") or source.title or source.id)
    stem = name.rsplit(".", 1)[0] if "." in name else name
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem).strip("-.") or source.id
    anchors = [p.anchor for p in source.parts]
    return [ctx.new_record(
        "resource", document, mention_time=source.mention_time, source=source.id, position="document",
        summary=rec.default_summary(reply["summary"]), sources=window.citations(anchors),
        path=rec.check_resource_path(slug), title=reply["title"], file=name,
        **{key: source.extra[key] for key in ("file_key", "digest", "titled") if source.extra.get(key)},
    )]


def document_text(source: Source) -> str:
    """The document a source holds, rebuilt from its chunks at their offsets."""
    end = int(source.extra.get("chars") or 0)
    buffer = ["\n"] * end if end else []
    text_parts = []
    for p in source.parts:
        start = p.meta.get("start")
        if isinstance(start, int) and end:
            buffer[start : start + len(p.text)] = list(p.text)
        else:
            text_parts.append(p.text)
    if buffer:
        return "".join(buffer)
    return "\n\n".join(text_parts)


def resource_variables(window: Window) -> dict[str, Any]:
    variables = window.variables()
    variables["excerpt"] = document_text(window.source)[:EXCERPT_CHARS]
    variables["file"] = str(window.source.extra.get("file") or "")
    variables["parts"] = variables["parts"][:3]
    variables["transcript"] = variables["excerpt"]
    return variables


@dataclass(frozen=True)
class Writer:
    type: str
    role: str
    schema: Callable[[Window], dict[str, Any]]
    offline: Callable[[dict[str, Any]], dict[str, Any]]
    to_records: Callable[[dict[str, Any], Window, WriteContext], list[Record]]


WRITERS = {
    "episodic": Writer("episodic", "episodic-writer", episodic_schema, episodic_offline, episodic_records),
    "semantic": Writer("semantic", "semantic-writer", semantic_schema, semantic_offline, semantic_records),
    "core": Writer("core", "core-writer", core_schema, core_offline, core_records),
    "procedural": Writer("procedural", "procedural-writer", procedural_schema, procedural_offline, procedural_records),
    "resource": Writer("resource", "resource-writer", resource_schema, resource_offline, resource_records),
    "vault": Writer("vault", "vault-writer", vault_schema, vault_offline, vault_records),
}


# --- documents: one record per statement of a part (memrepo/write/documents.py) ---------------------------------


def _per_statement(schema_of: Callable[[Window], dict[str, Any]], key: str) -> Callable[[Window], dict[str, Any]]:
    """``schema_of`` with room for one item per statement of a document's parts (a paragraph may state many)."""
    def schema(window: Window) -> dict[str, Any]:
        out = schema_of(window)
        out["properties"][key]["maxItems"] = documents.STATEMENTS_PER_PART * len(window.parts)
        return out

    return schema


def instruction_schema(window: Window) -> dict[str, Any]:
    step = {
        "type": "object",
        "required": ["anchors", "text"],
        "properties": {
            "anchors": _anchors_schema(window),
            "text": {"type": "string", "minLength": 1},
            "section": {"type": "string"},
        },
    }
    return {"type": "object", "required": ["steps"], "properties": {
        "steps": {"type": "array", "maxItems": documents.STATEMENTS_PER_PART * len(window.parts), "items": step}}}


def instruction_records(reply: dict[str, Any], window: Window, ctx: WriteContext) -> list[Record]:
    """One procedural record per instruction a document gives, verbatim, citing its part."""
    out = []
    for step in reply["steps"]:
        anchors = list(dict.fromkeys(step["anchors"]))
        extra = {"section": step["section"]} if step.get("section") else {}
        out.append(ctx.new_record(
            "procedural", step["text"], mention_time=window.time_of(anchors[0]), source=window.source.id,
            position=",".join(anchors), sources=window.citations(anchors), kind="instruction", **extra,
        ))
    return out


DOCUMENT_WRITERS = {
    "episodic": Writer("episodic", "episodic-writer", _per_statement(episodic_schema, "events"), documents.events_offline,
                       episodic_records),
    "semantic": Writer("semantic", "semantic-writer", _per_statement(semantic_schema, "facts"), documents.facts_offline,
                       semantic_records),
    "procedural": Writer("procedural", "instruction-writer", instruction_schema, documents.instructions_offline,
                         instruction_records),
}
DOCUMENT_TYPES = tuple(DOCUMENT_WRITERS)


def write(backend: Backend, writer: Writer, window: Window, ctx: WriteContext) -> list[Record]:
    """One writer call on one window: its records, built and validated."""
    if writer.type == "resource":
        variables = resource_variables(window)
    else:
        variables = window.variables()
    if writer.type == "core":
        variables["core"] = {label: ctx.core_blocks.get(label, "") for label in CORE_LABELS}
    variables["vault_enabled"] = ctx.vault_enabled
    reply = backend.run(writer.role, variables, writer.schema(window), writer.offline)
    return writer.to_records(reply, window, ctx)


def write_source(backend: Backend, source: Source, ctx: WriteContext, allowed: tuple[str, ...],
                 progress: Callable[[int], None] | None = None) -> list[Record]:
    """Route every window of ``source`` and run the chosen writers; records in a stable order, no duplicates.

    A document's windows go to the document writers (:data:`DOCUMENT_WRITERS`: its statements as semantic,
    episodic and procedural records). ``progress`` is called with the number of parts of each window done.
    """
    out: dict[str, Record] = {}
    required = REQUIRED.get(source.kind, ())
    routable = tuple(t for t in allowed if t != "resource")
    writers = WRITERS
    if source.kind == "document":
        routable, writers = tuple(t for t in routable if t in DOCUMENT_TYPES), {**WRITERS, **DOCUMENT_WRITERS}
    for window in windows(source):
        types = set(required) - {"resource"} | set(route(backend, window, routable))
        for type_ in WRITER_ORDER:
            if type_ in types:
                for record in write(backend, writers[type_], window, ctx):
                    out[record.id] = record
        if progress:
            progress(len(window.parts))
    if "resource" in required:
        whole = Window(source, list(source.parts))
        for record in write(backend, WRITERS["resource"], whole, ctx):
            out[record.id] = record
    return list(out.values())


def current_core_blocks(get: Callable[[str], Record]) -> dict[str, str]:
    blocks = {}
    for label in CORE_LABELS:
        try:
            blocks[label] = get(rec.core_id(label)).text
        except NotFoundError:
            blocks[label] = ""
    return blocks
