"""Ingestion parsers: turn one input file into Sources kept verbatim with anchored parts.

Formats (detected from the extension and the content):

- OpenAI messages: a JSON list of ``{"role", "content"}`` objects, an object with
  ``"messages"`` (and optionally ``"date"``, ``"title"``), or JSONL with one message
  per line. One source per file; turn anchors ``D1:1``, ``D1:2``, ...
- LoCoMo conversations: a JSON list (or one object) with ``"conversation"``
  holding ``session_<n>`` turn lists and ``session_<n>_date_time``. One source per
  session; anchors are the turns' own ``dia_id``. Annotations (``qa``,
  ``event_summary``, ``observation``, ``session_summary``) are not read.
- Plain-text conversations: ``# Session N: YYYY-MM-DD HH:MM`` lines start
  sessions, then ``Speaker: text`` lines. One source per session; anchors ``DN:k``.
- Agent task sessions: a JSON object (or JSONL of objects) with ``"task"``,
  ``"messages"`` (or ``"transcript"``) and ``"outcome"``. Anchors ``t1``... and ``outcome``.
- Agent runs: OpenAI-style chat transcripts with ``tool_calls`` and ``tool`` messages
  (``"messages"`` or ``"traj"``, the shape of tau-bench runs), one object, a list or
  JSONL of them, with an optional ``"outcome"`` or numeric ``"reward"``. Read as task
  sessions: the task is ``"task"`` or the first user message. Other keys (a run's
  ``info``, say) are not read.
- Documents: Markdown, HTML, PDF and any other UTF-8 text (plain text), split along
  their structure into parts anchored by section and position (``handbook/People:2``,
  :mod:`memrepo.write.documents`), each carrying its character offsets.

Limits: a file may hold at most :data:`MAX_FILE_BYTES`; a document at most
:data:`MAX_DOCUMENT_BYTES` (it is kept whole as one resource record). Empty,
binary, non-UTF-8, unparseable or wrongly shaped files raise
:class:`~memrepo.errors.RecordError` naming the file and the problem.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from memrepo import records as rec
from memrepo import safejson
from memrepo.errors import RecordError
from memrepo.nlp.discourse import SPEAKER_RE as _SPEAKER_RE
from memrepo.records import Source, SourcePart
from memrepo.text.dates import parse_clock_date, parse_written_time
from memrepo.write import documents

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_DOCUMENT_BYTES = rec.MAX_TEXT_BYTES
CONVERSATION_ROLES = ("user", "assistant")

_SESSION_RE = re.compile(r"^#+\s*Session\s+(\d+)\s*[:\-–—]\s*(.+?)\s*$", re.I)
# A line that is only a date in brackets ("[3 March 2026 6:30 pm]", "[2026-03-03 18:30]"), as chat exports write
# them: the next session begins then, numbered after the one before. (A heading is never one: a document's
# "## 2026-02-02 Weekly planning" stays a document.)
_DATE_LINE_RE = re.compile(r"^\s*\[\s*(.+?)\s*\]\s*$")


def _date_line(line: str) -> str | None:
    """The time a date line (:data:`_DATE_LINE_RE`) says, or None when ``line`` is no date line."""
    m = _DATE_LINE_RE.match(line)
    return parse_session_time(m.group(1)) if m and any(ch.isdigit() for ch in m.group(1)) else None


@dataclass
class ParsedFile:
    """The sources one input file yields, and how many turns/chunks they hold."""

    name: str
    format: str
    sources: list[Source] = field(default_factory=list)

    @property
    def parts(self) -> int:
        return sum(len(s.parts) for s in self.sources)


# --- times -----------------------------------------------------------------------


def parse_session_time(text: str) -> str | None:
    """``2023-05-02 14:03``, ``4:27 pm on 3 June, 2024`` or a date written out ("3 March 2026, 18:30") as an
    ISO date or datetime, else None."""
    text = text.strip()
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?)?", text)
    if m:
        try:
            date.fromisoformat(m.group(1))
        except ValueError:
            return None
        if not m.group(2):
            return m.group(1)
        return f"{m.group(1)}T{m.group(2)}{m.group(3) or ':00'}"
    clock = parse_clock_date(text) or parse_written_time(text)
    if clock is not None:
        return clock
    try:
        return rec.check_time(text, "time")
    except RecordError:
        return None


def file_time(path: Path) -> str:
    """The file's modification time (UTC, to the second): the mention time of undated input."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).replace(microsecond=0)
    return stamp.isoformat()


# --- reading ---------------------------------------------------------------------


def read_bytes(path: Path) -> bytes:
    """The file's bytes after the size checks."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror})") from exc
    if not path.is_file():
        raise RecordError(f"{path}: not a file")
    if size > MAX_FILE_BYTES:
        raise RecordError(f"{path}: {size} bytes is over the ingest limit of {MAX_FILE_BYTES} bytes; split it")
    if size == 0:
        raise RecordError(f"{path}: is empty")
    return path.read_bytes()


def read_text(path: Path) -> str:
    """The file's text after the size, binary and encoding checks (newlines normalised)."""
    name = path.name
    data = read_bytes(path)
    if b"\x00" in data[:8192] or b"\x00" in data:
        raise RecordError(f"{path}: looks binary (contains NUL bytes); only text, Markdown and JSON can be ingested")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise RecordError(f"{path}: is empty")
    del name
    return text


def parse_file(path: Path, *, namespace: str = "default", mention_time: str | None = None,
               blind: Callable[[str], str] | None = None,
               blind_turns: Callable[[list[str]], list[str]] | None = None) -> ParsedFile:
    """The sources in the file at ``path``.

    Args:
        namespace: the repository's namespace (part of every id).
        mention_time: when undated input was said; default: the file's modification time.
        blind: maps the content a source id is hashed from to what is hashed instead (secrets
            replaced by keyed digests, :func:`memrepo.vault.id_content`); default: the content.
        blind_turns: the same for the texts of a source's parts, in order, so that a value given in
            reply to the turn before is blinded too (:func:`memrepo.vault.id_content_turns`).

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    fmt = documents.document_format(path)
    data: bytes | str = read_bytes(path) if fmt == "pdf" else read_text(path)
    fallback = rec.check_time(mention_time, "mention_time") if mention_time else file_time(path)
    ctx = _Context(path=path, name=path.name, namespace=namespace, fallback_time=fallback, blind=blind or _same,
                   blind_turns=blind_turns or _same_turns)
    if fmt in ("pdf", "html"):
        return ParsedFile(path.name, "document", [_document(ctx, documents.read_document(path, data))])
    assert isinstance(data, str)
    text = data
    if suffix == ".json":
        try:
            data = safejson.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
        return _parse_json(ctx, data)
    if suffix == ".jsonl":
        items = []
        for lineno, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                items.append(safejson.loads(line))
            except json.JSONDecodeError as exc:
                raise RecordError(f"{path}: line {lineno} is not valid JSON ({exc.msg})") from exc
        return _parse_jsonl(ctx, items)
    if _looks_like_conversation(text):
        return ParsedFile(path.name, "text-conversation", _text_conversation(ctx, text))
    return ParsedFile(path.name, "document", [_document(ctx, documents.read_document(path, text))])


def _same(text: str) -> str:
    return text


def _same_turns(turns: list[str]) -> list[str]:
    return turns


@dataclass
class _Context:
    path: Path
    name: str
    namespace: str
    fallback_time: str
    blind: Callable[[str], str] = _same
    blind_turns: Callable[[list[str]], list[str]] = _same_turns

    def fail(self, problem: str) -> RecordError:
        return RecordError(f"{self.path}: {problem}")

    def source(self, kind: str, key: str, parts: list[SourcePart], mention_time: str, title: str,
               extra: dict[str, Any] | None = None) -> Source:
        if not parts:
            raise self.fail(f"{key or kind}: has no turns or text")
        for part in parts:
            if "<!-- part " in part.text and any(rec.PART_MARKER_RE.match(ln) for ln in part.text.split("\n")):
                raise self.fail(f"{part.anchor}: holds a line that reads as a memrepo source-part marker "
                                "('<!-- part ... -->'); the source file could not be read back as written")
        texts = self.blind_turns([p.text for p in parts])
        content = json.dumps([[p.anchor, t, dict(p.meta)] for p, t in zip(parts, texts)], sort_keys=True,
                             ensure_ascii=False)
        origin = f"{self.name}#{key}" if key else self.name
        source_id = rec.make_source_id(namespace=self.namespace, origin=origin, position=key, content=self.blind(content),
                                       mention_time=mention_time)
        return Source(id=source_id, kind=kind, mention_time=mention_time, parts=tuple(parts),
                      namespace=self.namespace, title=title, origin=origin, extra=extra or {})


# --- JSON shapes -----------------------------------------------------------------


def _parse_json(ctx: _Context, data: Any) -> ParsedFile:
    if isinstance(data, dict) and "conversation" in data:
        data = [data]
    if isinstance(data, list) and data and all(isinstance(x, dict) and "conversation" in x for x in data):
        return ParsedFile(ctx.name, "locomo", [s for i, conv in enumerate(data) for s in _locomo(ctx, conv, i)])
    if _agent_run(data):
        return ParsedFile(ctx.name, "task", [_run(ctx, data, "")])
    if isinstance(data, list) and data and all(_agent_run(x) for x in data):
        return ParsedFile(ctx.name, "task", [_run(ctx, x, f"task{i + 1}") for i, x in enumerate(data)])
    if isinstance(data, dict) and "outcome" in data:
        return ParsedFile(ctx.name, "task", [_task(ctx, data, "")])
    if isinstance(data, list) and data and all(isinstance(x, dict) and "outcome" in x for x in data):
        return ParsedFile(ctx.name, "task", [_task(ctx, x, f"task{i + 1}") for i, x in enumerate(data)])
    if isinstance(data, dict) and "messages" in data:
        return ParsedFile(ctx.name, "messages", [_messages(ctx, data["messages"], data)])
    if isinstance(data, list) and data and all(isinstance(x, dict) and "role" in x for x in data):
        return ParsedFile(ctx.name, "messages", [_messages(ctx, data, {})])
    if isinstance(data, list) and not data:
        raise ctx.fail("is an empty JSON list")
    raise ctx.fail(
        "JSON of an unknown shape: expected OpenAI messages (a list of {role, content} or {messages: [...]}), "
        "LoCoMo conversations ({conversation: {session_1: [...]}}) or a task session ({task, messages, outcome})"
    )


def _parse_jsonl(ctx: _Context, items: list[Any]) -> ParsedFile:
    if not items:
        raise ctx.fail("is empty")
    if all(_agent_run(x) for x in items):
        return ParsedFile(ctx.name, "task", [_run(ctx, x, f"task{i + 1}") for i, x in enumerate(items)])
    if all(isinstance(x, dict) and "outcome" in x for x in items):
        return ParsedFile(ctx.name, "task", [_task(ctx, x, f"task{i + 1}") for i, x in enumerate(items)])
    if all(isinstance(x, dict) and "role" in x for x in items):
        return ParsedFile(ctx.name, "messages", [_messages(ctx, items, {})])
    bad = next(i for i, x in enumerate(items, 1) if not (isinstance(x, dict) and "role" in x))
    raise ctx.fail(f"JSONL record {bad} is not an OpenAI message (an object with 'role' and 'content')")


def _content_text(ctx: _Context, content: Any, where: str) -> tuple[str, dict[str, Any]]:
    """Text of an OpenAI message content (string or list of parts) and part metadata."""
    if content is None:
        return "", {}
    if isinstance(content, str):
        return content, {}
    if isinstance(content, list):
        texts, images = [], 0
        for item in content:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, dict) and item.get("type") == "text":
                texts.append(str(item.get("text", "")))
            elif isinstance(item, dict) and item.get("type") in ("image_url", "input_image", "image"):
                images += 1
                texts.append("[image]")
            else:
                raise ctx.fail(f"{where}: content part of unknown type {item!r:.60}")
        return "\n".join(t for t in texts if t), ({"images": images} if images else {})
    raise ctx.fail(f"{where}: content must be a string or a list of parts, got {type(content).__name__}")


def _message_time(ctx: _Context, msg: dict[str, Any], where: str) -> str | None:
    for key in ("timestamp", "created_at", "date", "time"):
        value = msg.get(key)
        if value in (None, ""):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, timezone.utc).replace(microsecond=0).isoformat()
        parsed = parse_session_time(str(value))
        if parsed is None:
            raise ctx.fail(f"{where}: '{key}' {value!r} is not a date or time")
        return parsed
    return None


def _message_parts(ctx: _Context, messages: Any, prefix: str) -> tuple[list[SourcePart], str | None]:
    if not isinstance(messages, list) or not messages:
        raise ctx.fail("'messages' must be a non-empty list of {role, content} objects")
    parts: list[SourcePart] = []
    first_time = None
    for i, msg in enumerate(messages, 1):
        where = f"message {i}"
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise ctx.fail(f"{where}: not an object with a 'role'")
        text, meta = _content_text(ctx, msg.get("content"), where)
        if msg.get("tool_calls"):
            text = (text + "\n" if text else "") + json.dumps(msg["tool_calls"], sort_keys=True, ensure_ascii=False)
        meta = {"role": msg["role"], **meta}
        speaker = msg.get("name") or msg["role"]
        meta["speaker"] = str(speaker)
        when = _message_time(ctx, msg, where)
        if when:
            meta["time"] = when
            first_time = first_time or when
        parts.append(SourcePart(f"{prefix}{i}", text, meta))
    if not any(p.text.strip() for p in parts):
        raise ctx.fail("every message is empty")
    return parts, first_time


def _messages(ctx: _Context, messages: Any, head: dict[str, Any]) -> Source:
    parts, first_time = _message_parts(ctx, messages, "D1:")
    when = _message_time(ctx, head, "the conversation") if head else None
    mention = when or first_time or ctx.fallback_time
    title = str(head.get("title") or f"{ctx.name}")
    return ctx.source("conversation", "", parts, mention, title, {"format": "openai-messages"})


def _task(ctx: _Context, data: dict[str, Any], key: str) -> Source:
    where = key or "the task session"
    task = data.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ctx.fail(f"{where}: 'task' must be a non-empty string")
    messages = data.get("messages", data.get("transcript"))
    if isinstance(messages, str):
        messages = [{"role": "transcript", "content": messages}]
    parts, first_time = _message_parts(ctx, messages, "t")
    outcome = data.get("outcome")
    if isinstance(outcome, dict):
        status = str(outcome.get("status") or outcome.get("result") or "unclear")
        outcome_text = str(outcome.get("text") or outcome.get("summary") or outcome.get("details") or status)
    elif isinstance(outcome, str) and outcome.strip():
        status, outcome_text = outcome.split(":", 1)[0].strip().lower(), outcome
    else:
        raise ctx.fail(f"{where}: 'outcome' must be a string or an object with 'status'")
    when = _message_time(ctx, data, where) or first_time or ctx.fallback_time
    all_parts = [SourcePart("task", task, {}), *parts, SourcePart("outcome", outcome_text, {"status": status})]
    return ctx.source("task", key, all_parts, when, task.strip().split("\n")[0][:120], {"format": "task-session"})


def _agent_run(data: Any) -> bool:
    """True for an agent run: an object with a ``traj`` list, or a ``messages`` list with a ``reward`` or with a
    tool call or tool reply in it."""
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("traj"), list) and "messages" not in data:
        return True
    messages = data.get("messages")
    return isinstance(messages, list) and ("reward" in data or any(
        isinstance(m, dict) and (m.get("tool_calls") or m.get("role") in ("tool", "function")) for m in messages))


def _run_outcome(ctx: _Context, data: dict[str, Any], where: str) -> tuple[str, str]:
    """(status, text) of an agent run: its ``outcome`` as for a task session, else its ``reward``, else unclear."""
    if "outcome" in data:
        outcome = data["outcome"]
        if isinstance(outcome, dict):
            status = str(outcome.get("status") or outcome.get("result") or "unclear")
            return status, str(outcome.get("text") or outcome.get("summary") or outcome.get("details") or status)
        if isinstance(outcome, str) and outcome.strip():
            return outcome.split(":", 1)[0].strip().lower(), outcome
        raise ctx.fail(f"{where}: 'outcome' must be a string or an object with 'status'")
    reward = data.get("reward")
    if reward is None:
        return "unclear", "unclear: the run states no outcome or reward"
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise ctx.fail(f"{where}: 'reward' must be a number, got {reward!r:.40}")
    status = "success" if reward >= 1 else "failure" if reward <= 0 else "partial"
    return status, f"{status}: reward {reward:g}"


def _run(ctx: _Context, data: dict[str, Any], key: str) -> Source:
    where = key or "the agent run"
    messages: list[Any] = data.get("messages", data.get("traj")) or []
    task = data.get("task")
    if not isinstance(task, str) or not task.strip():
        first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
        task = _content_text(ctx, first.get("content"), f"{where}: the first user message")[0] if first else ""
    if not task.strip():
        raise ctx.fail(f"{where}: no 'task' and no user message to take it from")
    parts, first_time = _message_parts(ctx, messages, "t")
    status, outcome_text = _run_outcome(ctx, data, where)
    when = _message_time(ctx, data, where) or first_time or ctx.fallback_time
    all_parts = [SourcePart("task", task, {}), *parts, SourcePart("outcome", outcome_text, {"status": status})]
    return ctx.source("task", key, all_parts, when, task.strip().split("\n")[0][:120], {"format": "agent-run"})


def _locomo(ctx: _Context, conv: dict[str, Any], index: int) -> Iterable[Source]:
    sample = str(conv.get("sample_id") or f"conversation{index + 1}")
    body = conv.get("conversation")
    if not isinstance(body, dict):
        raise ctx.fail(f"{sample}: 'conversation' must be an object with session_<n> lists")
    numbers = sorted(int(k.split("_")[1]) for k in body if re.fullmatch(r"session_\d+", k))
    if not numbers:
        raise ctx.fail(f"{sample}: no session_<n> lists in 'conversation'")
    for n in numbers:
        turns = body[f"session_{n}"]
        where = f"{sample} session_{n}"
        if not isinstance(turns, list):
            raise ctx.fail(f"{where}: must be a list of turns")
        stamp = body.get(f"session_{n}_date_time")
        when = parse_session_time(str(stamp)) if stamp else None
        if stamp and when is None:
            raise ctx.fail(f"{where}: session_{n}_date_time {stamp!r} is not a date")
        parts = []
        for j, turn in enumerate(turns, 1):
            if not isinstance(turn, dict) or not all(isinstance(turn.get(k), str) for k in ("speaker", "dia_id", "text")):
                raise ctx.fail(f"{where}: turn {j} needs string 'speaker', 'dia_id' and 'text'")
            meta = {"speaker": turn["speaker"]}
            for key in ("blip_caption", "query"):
                if turn.get(key):
                    meta[key] = str(turn[key])
            if turn.get("img_url"):
                urls = turn["img_url"]
                meta["img_url"] = list(urls) if isinstance(urls, list) else [str(urls)]
            anchor = turn["dia_id"].strip().replace(" ", "")
            parts.append(SourcePart(anchor, turn["text"], meta))
        if not parts:
            continue
        speakers = [str(body.get("speaker_a") or ""), str(body.get("speaker_b") or "")]
        yield ctx.source("conversation", f"{sample}/session_{n}", parts, when or ctx.fallback_time,
                         f"{sample} session {n}", {"format": "locomo", "speakers": [s for s in speakers if s]})


# --- plain text ------------------------------------------------------------------


def _looks_like_conversation(text: str) -> bool:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if any(ln.startswith("#") and not _SESSION_RE.match(ln) for ln in lines):
        return False  # a heading other than a session's: a document ("Attendees: ..." lines under it are no turns)
    if any(_SESSION_RE.match(ln) or _date_line(ln) for ln in lines) and any(_SPEAKER_RE.match(ln) for ln in lines):
        return True
    body = [ln for ln in lines if not ln.startswith("#")]
    speakers = [m.group(1) for m in map(_SPEAKER_RE.match, body) if m]
    distinct = len(set(speakers))
    # A few speakers taking turns; "Note: ..." paragraphs of a document name many distinct "speakers".
    return len(body) >= 2 and len(speakers) >= 0.8 * len(body) and distinct <= 8 and (distinct < len(speakers) or distinct <= 2)


def _text_conversation(ctx: _Context, text: str) -> list[Source]:
    sessions: list[tuple[int, str, list[SourcePart]]] = []
    current: tuple[int, str, list[SourcePart]] | None = None
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        header = _SESSION_RE.match(line)
        if header:
            when = parse_session_time(header.group(2))
            if when is None:
                raise ctx.fail(f"line {lineno}: session date {header.group(2)!r} is not a date (expected YYYY-MM-DD HH:MM, or the day, month and year written out: 3 March 2026 18:30)")
            current = (int(header.group(1)), when, [])
            sessions.append(current)
            continue
        dated = _date_line(line)
        if dated:
            current = (max((n for n, _, _ in sessions), default=0) + 1, dated, [])
            sessions.append(current)
            continue
        if current is None:
            current = (1, ctx.fallback_time, [])
            sessions.append(current)
        turn = _SPEAKER_RE.match(line)
        parts = current[2]
        if turn:
            meta: dict[str, Any] = {"speaker": turn.group(1).strip()}
            if re.search(r"\[(shares?|sent|sends) (a |an )?(photo|picture|image)", turn.group(2), re.I):
                meta["image"] = True
            parts.append(SourcePart(f"D{current[0]}:{len(parts) + 1}", turn.group(2), meta))
        elif parts:
            prev = parts[-1]
            parts[-1] = SourcePart(prev.anchor, prev.text + "\n" + line, prev.meta)
        else:
            raise ctx.fail(f"line {lineno}: expected 'Speaker: text', '# Session N: date' or a date line "
                           "('[3 March 2026 18:30]')")
    seen = set()
    for number, _, _ in sessions:
        if number in seen:
            raise ctx.fail(f"session {number} appears twice")
        seen.add(number)
    return [ctx.source("conversation", f"session_{n}", parts, when, f"{ctx.name} session {n}", {"format": "text"})
            for n, when, parts in sessions if parts]


def _document(ctx: _Context, doc: "documents.Document") -> Source:
    """A document's source: one part per block (:mod:`memrepo.write.documents`), at its offsets in the text."""
    text = doc.text
    if len(text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise ctx.fail(f"a document may hold at most {MAX_DOCUMENT_BYTES} bytes of text "
                       f"({len(text.encode('utf-8'))} here); split it")
    parts = [SourcePart(b.anchor, text[b.start:b.end], b.meta()) for b in doc.blocks]
    parts = [p for p in parts if p.text.strip()]
    # Which file this is, beyond its name: a hash of where it was read from (the path itself is not kept),
    # so that notes.md from two folders are two documents while a new version of one replaces it.
    file_key = rec.content_hash("file", str(ctx.path.resolve()), length=16)
    extra: dict[str, Any] = {"format": doc.format, "file": ctx.name, "chars": len(text), "file_key": file_key,
                             "digest": documents.digest(text)}
    if doc.titled:
        extra["titled"] = True
    return ctx.source("document", "", parts, _front_matter_date(text) or ctx.fallback_time, doc.title[:200], extra)


def _front_matter_date(text: str) -> str | None:
    """The ``date:`` of a Markdown document's YAML front matter, if it has one (a stable mention time)."""
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not m:
        return None
    found = re.search(r"^date:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", m.group(1), re.M)
    return parse_session_time(found.group(1)) if found else None


def relative_date(day: str, delta_days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=delta_days)).isoformat()
