"""Record files: the six memory types, their ids, paths and on-disk format (DESIGN.md §2).

A record is one Markdown file with YAML front matter. This module is the single
place that maps ids to paths, derives ids, and reads and writes the file format;
it has no Git and no I/O of its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import cached_property
from typing import Any, Iterable, Mapping

import yaml

from memrepo import safejson
from memrepo.errors import RecordError

TYPES = ("core", "episodic", "semantic", "procedural", "resource", "vault")
STATUSES = ("done", "planned")
PREFIX = {"episodic": "ep", "semantic": "se", "procedural": "pr", "resource": "re", "vault": "va"}
SOURCE_PREFIX = "src"
# Top-level folder of each record type; sources have their own folder.
FOLDER = {
    "core": "core",
    "episodic": "episodic",
    "semantic": "semantic",
    "procedural": "procedural/experiences",
    "resource": "resource",
    "vault": "vault",
}
SKILLS_FOLDER = "procedural/skills"
SOURCES_FOLDER = "sources"
RULES_FOLDER = "rules"  # hand-written rules for agents: plain Markdown, front matter optional (DESIGN.md §2)
RECORD_ROOTS = ("core/", "episodic/", "semantic/", "procedural/", "resource/", "vault/", "rules/")

# Front-matter keys in the order they are written; any other key follows, sorted.
KEY_ORDER = (
    "id",
    "type",
    "namespace",
    "summary",
    "event_time",
    "mention_time",
    "status",
    "sources",
    "actor",
)
MAX_TEXT_BYTES = 1_000_000

_ID_RE = re.compile(r"^[a-z]{2,5}-[0-9a-z][0-9a-z._-]{0,120}$")
_LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_DATED_ID_RE = re.compile(r"^(ep|se|pr|re|va|src)-(\d{4})-(\d{2})-(\d{2})-[0-9a-z][0-9a-z._-]*$")


@dataclass(frozen=True)
class Record:
    """One memory record: front matter fields plus the Markdown body (``text``)."""

    id: str
    type: str
    text: str
    mention_time: str
    namespace: str = "default"
    summary: str = ""
    event_time: str | None = None
    status: str | None = None
    sources: tuple[str, ...] = ()
    actor: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """Path of the record's file inside the repository."""
        return record_path(self.id, self.type, self.extra)

    @property
    def encrypted(self) -> bool:
        """True for a vault record whose value is still ciphertext."""
        return self.type == "vault" and bool(self.extra.get("cipher"))

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain JSON-ready dict (front matter plus ``text`` and ``path``)."""
        data = front_matter(self)
        data["text"] = self.text
        data["path"] = self.path
        return data


# --- time values -----------------------------------------------------------------


def check_time(value: str, field_name: str, *, interval: bool = False) -> str:
    """Validate an ISO date or datetime (or ``start/end`` interval) and return it unchanged.

    Raises:
        RecordError: naming ``field_name`` if the value does not parse.
    """
    text = str(value).strip()
    parts = text.split("/") if interval and "/" in text else [text]
    for part in parts:
        if not _parse_time(part):
            raise RecordError(
                f"{field_name}: {value!r} is not an ISO date or datetime (e.g. 2023-05-02 or 2023-05-02T14:03:00+09:00)"
            )
    return text


def _parse_time(text: str) -> datetime | date | None:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", text):
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            return None
    return None


def time_date(value: str | None) -> str | None:
    """The calendar date (``YYYY-MM-DD``) a time value starts on, or None."""
    if not value:
        return None
    return str(value)[:10]


# --- ids and paths ---------------------------------------------------------------


def content_hash(*parts: str, length: int = 8) -> str:
    """A short stable hex digest of ``parts`` (each part is length-delimited)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:length]


def make_id(
    type_: str, *, namespace: str, source: str, position: str, content: str, mention_time: str
) -> str:
    """Deterministic record id from namespace, source, position and content (DESIGN.md §2).

    The mention date is part of the id so that the id alone gives the record's path.
    """
    if type_ == "core":
        raise RecordError("type: core blocks are identified by their label, not a derived id")
    day = time_date(mention_time)
    digest = content_hash(namespace, type_, source, position, content)
    return f"{PREFIX[type_]}-{day}-{digest}"


def make_source_id(*, namespace: str, origin: str, position: str, content: str, mention_time: str) -> str:
    """Deterministic source id, shaped like record ids (``src-YYYY-MM-DD-<hash>``)."""
    return f"{SOURCE_PREFIX}-{time_date(mention_time)}-{content_hash(namespace, 'source', origin, position, content)}"


def core_id(label: str) -> str:
    """Id of the core block with ``label`` (``persona``, ``human``, ...)."""
    check_label(label)
    return f"core-{label}"


def check_label(label: str) -> str:
    if not _LABEL_RE.match(label or ""):
        raise RecordError(f"label: {label!r} must be lowercase letters, digits, '-' or '_' (at most 64)")
    return label


def check_id(record_id: str) -> str:
    """Reject ids that are malformed or could escape the repository."""
    if not isinstance(record_id, str) or not _ID_RE.match(record_id) or ".." in record_id:
        raise RecordError(f"id: {record_id!r} is not a memrepo id (expected e.g. ep-2023-05-02-7f3a9c1e)")
    return record_id


def type_of_id(record_id: str) -> str | None:
    """The record type an id belongs to, or None for source ids and unknown prefixes."""
    if record_id.startswith("core-"):
        return "core"
    if record_id.startswith("skill-"):
        return "procedural"
    if record_id.startswith("rule-"):
        return "resource"
    prefix = record_id.split("-", 1)[0]
    for type_, p in PREFIX.items():
        if p == prefix:
            return type_
    return None


def record_path(record_id: str, type_: str | None = None, extra: Mapping[str, Any] | None = None) -> str:
    """The one mapping from a record id to its file path (DESIGN.md §2).

    Dated ids shard by their mention month; core blocks live at ``core/<label>.md``,
    skills at ``procedural/skills/<slug>/SKILL.md``; a resource record may carry an
    explicit ``path`` under ``resource/``.
    """
    check_id(record_id)
    type_ = type_ or type_of_id(record_id)
    if type_ not in TYPES:
        raise RecordError(f"id: {record_id!r} does not name a record type")
    if record_id.startswith("core-"):
        return f"core/{check_label(record_id[5:])}.md"
    if record_id.startswith("skill-"):
        return f"{SKILLS_FOLDER}/{check_label(record_id[6:])}/SKILL.md"
    if record_id.startswith("rule-") and extra and str(extra.get("path", "")).startswith(RULES_FOLDER + "/"):
        return str(extra["path"])
    if type_ == "resource" and extra and extra.get("path"):
        return check_resource_path(str(extra["path"]))
    if type_ == "vault":
        return f"vault/{record_id}.md"
    m = _DATED_ID_RE.match(record_id)
    if not m:
        raise RecordError(f"id: {record_id!r} has no mention date (expected <prefix>-YYYY-MM-DD-<hash>)")
    return f"{FOLDER[type_]}/{m.group(2)}/{m.group(3)}/{record_id}.md"


def source_path(source_id: str) -> str:
    """Path of a source file from its id."""
    check_id(source_id)
    m = _DATED_ID_RE.match(source_id)
    if not m or m.group(1) != SOURCE_PREFIX:
        raise RecordError(f"source: {source_id!r} is not a source id (expected src-YYYY-MM-DD-<hash>)")
    return f"{SOURCES_FOLDER}/{m.group(2)}/{m.group(3)}/{source_id}.md"


def check_resource_path(path: str) -> str:
    """A resource path must stay under ``resource/`` and name a Markdown file."""
    norm = path.replace("\\", "/").lstrip("/")
    if not norm.startswith("resource/"):
        norm = f"resource/{norm}"
    parts = norm.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts[1:]) or len(parts) < 2:
        raise RecordError(f"path: {path!r} would escape the resource/ folder")
    if not norm.endswith(".md"):
        norm += ".md"
    return norm


def find_record_path(snap: Any, record_id: str) -> str | None:
    """Path of the file holding ``record_id`` in ``snap`` (a :class:`memrepo.store.git.Snapshot`), or None.

    Raises:
        RecordError: ``record_id`` is not a well-formed id of a record type.
    """
    check_id(record_id)
    type_ = type_of_id(record_id)
    if type_ is None:
        raise RecordError(f"id: {record_id!r} does not name a record type")
    if record_id.startswith("rule-"):  # rules are kept by path: find the one whose path gives this id
        return next((p for p, _ in snap.walk(RULES_FOLDER) if p.endswith(".md") and rule_id(p) == record_id), None)
    path = record_path(record_id, type_)
    if snap.exists(path) or type_ != "resource":
        return path
    # Resource documents are kept by path: find the file that carries this id.
    for candidate, _ in snap.walk("resource"):
        if candidate.endswith(".md") and record_id in candidate:
            return candidate
    for candidate, blob in snap.walk("resource"):
        if candidate.endswith(".md") and f"id: {record_id}\n".encode() in snap.read_blob(blob)[:4096]:
            return candidate
    return None


def rule_id(path: str) -> str:
    """Id of the rule at ``rules/<path>``: the path as a slug (``rule-python--vllm``), hashed when a slug would lose
    information (upper case, spaces, ``--`` in a name)."""
    inner = path[len(RULES_FOLDER) + 1:].removesuffix(".md")
    slug = inner.replace("/", "--")
    if not re.fullmatch(r"[0-9a-z][0-9a-z._-]{0,100}", slug) or "--" in inner:
        slug = re.sub(r"[^0-9a-z._-]+", "-", inner.lower()).strip("-._")[:80] or "rule"
        slug = f"{slug}-{content_hash(path)}"
    return f"rule-{slug}"


def is_record_path(path: str) -> bool:
    """True for paths that hold records (Markdown files under a typed folder)."""
    return path.endswith(".md") and path.startswith(RECORD_ROOTS) and not path.endswith("/README.md")


def split_citation(citation: str) -> tuple[str, str | None]:
    """``src-...#D3:14`` -> (``src-...``, ``D3:14``)."""
    source_id, _, anchor = citation.partition("#")
    return source_id, anchor or None


# --- building records ------------------------------------------------------------


def check_text(text: Any, field_name: str = "text") -> str:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"{field_name}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if not isinstance(text, str):
        raise RecordError(f"{field_name}: expected text, got {type(text).__name__}")
    if "\x00" in text:
        raise RecordError(f"{field_name}: contains a NUL byte (binary data is not a memory)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError(f"{field_name}: not valid UTF-8 ({exc.reason})") from exc
    if not text.strip():
        raise RecordError(f"{field_name}: is empty")
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise RecordError(f"{field_name}: longer than {MAX_TEXT_BYTES} bytes; ingest it as a document instead")
    return text


def new_record(
    type_: str,
    text: str,
    *,
    mention_time: str,
    namespace: str = "default",
    source: str = "",
    position: str = "",
    summary: str | None = None,
    event_time: str | None = None,
    status: str | None = None,
    sources: Iterable[str] = (),
    actor: str | None = None,
    label: str | None = None,
    **extra: Any,
) -> Record:
    """Validate inputs and build a record with its deterministic id.

    Args:
        type_: one of :data:`TYPES`.
        text: the body, kept verbatim.
        mention_time: when it was said or written (tau_m).
        source: id of the source (or a free origin string) the record came from; part of the id.
        position: position in that source (turn id, chunk offset); part of the id.
        label: core blocks only: the block's label.

    Raises:
        RecordError: naming the field at fault.
    """
    if type_ not in TYPES:
        raise RecordError(f"type: {type_!r} is not one of {', '.join(TYPES)}")
    text = check_text(text)
    mention_time = check_time(mention_time, "mention_time")
    if event_time is not None:
        event_time = check_time(event_time, "event_time", interval=True)
    if status is not None:
        if type_ != "episodic":
            raise RecordError("status: only episodic records have a planned/done status")
        if status not in STATUSES:
            raise RecordError(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    elif type_ == "episodic":
        status = "done"
    if type_ == "core":
        if not label:  # a default would silently overwrite a block the writer never named
            raise RecordError("label: a core block needs a label (persona, human, ...)")
        record_id = core_id(label)
        extra["label"] = label
    else:
        if label is not None:
            raise RecordError("label: only core blocks have a label")
        content = extra.get("keyed_content", text)
        extra.pop("keyed_content", None)
        record_id = make_id(
            type_, namespace=namespace, source=source, position=position, content=content, mention_time=mention_time
        )
    cited = tuple(sources)
    for citation in cited:
        try:
            source_path(split_citation(citation)[0])
        except RecordError as exc:
            raise RecordError(f"sources: {citation!r} is not a source citation (expected src-YYYY-MM-DD-<hash>#<part>)") from exc
    if summary is None:
        summary = default_summary(text)
    return Record(
        id=record_id,
        type=type_,
        text=text,
        mention_time=mention_time,
        namespace=namespace,
        summary=summary,
        event_time=event_time,
        status=status,
        sources=cited,
        actor=actor,
        extra=dict(extra),
    )


def default_summary(text: str, limit: int = 120) -> str:
    """First line of ``text``, cut at a word boundary to at most ``limit`` characters."""
    line = " ".join(text.strip().split())
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0]
    return cut + "…"


# --- file format -----------------------------------------------------------------


_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~4x faster


class _Loader(_SafeLoader):  # type: ignore[misc,valid-type]
    """Safe loader that keeps dates and times as the strings they were written as."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

# Front matter is written by our own small emitter rather than PyYAML's, whose
# output differs between its C and Python emitters: the bytes of a record must not
# depend on how PyYAML was built. Strings are plain when that is unambiguous and
# JSON-quoted otherwise (a JSON string is a valid YAML double-quoted scalar);
# nested values are JSON flow collections.
_PLAIN = re.compile(r"^[A-Za-z0-9_(][^\n\r\t\\\"#:{}\[\],&*!|>'%@`]*$")
_PLAIN_NOT = re.compile(r"^(?:true|false|yes|no|on|off|null|~|y|n|[-+]?[0-9.][0-9._:eE+-]*)$", re.IGNORECASE)
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = str(value)
    if _DATE_LIKE.match(text):
        return text  # read back as a string: the loader has no timestamp resolver
    if _PLAIN.match(text) and not _PLAIN_NOT.match(text) and text == text.strip() and not text.endswith(("-", "?")):
        return text
    return json.dumps(text, ensure_ascii=False)


def _emit_value(value: Any) -> str:
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


def front_matter(record: Record) -> dict[str, Any]:
    """Front matter of ``record`` in the canonical key order, without empty fields."""
    data: dict[str, Any] = {
        "id": record.id,
        "type": record.type,
        "namespace": record.namespace,
        "summary": record.summary,
        "event_time": record.event_time,
        "mention_time": record.mention_time,
        "status": record.status,
        "sources": list(record.sources),
        "actor": record.actor,
    }
    data = {k: v for k, v in data.items() if v not in (None, "", [])}
    for key in sorted(record.extra):
        if key in KEY_ORDER or key == "text":
            continue
        value = record.extra[key]
        if value not in (None, "", [], {}):
            data[key] = list(value) if isinstance(value, tuple) else value
    return data


def dump_front_matter(data: Mapping[str, Any]) -> str:
    """Deterministic YAML for a flat mapping of front-matter fields (see :func:`_scalar`)."""
    return "".join(f"{key}: {_emit_value(value)}\n" for key, value in data.items())


def dump_block_front_matter(data: Mapping[str, Any]) -> str:
    """Deterministic YAML in block style only (no flow-style list), one level of mappings and lists deep: the
    front matter of a ``SKILL.md``, which the Agent Skills reference validator (StrictYAML) reads."""
    def block(key: str, value: Any, indent: str) -> str:
        if isinstance(value, Mapping):
            return f"{indent}{key}:\n" + "".join(block(str(k), v, indent + "  ") for k, v in value.items()
                                                 if v not in (None, "", [], {}))
        if isinstance(value, (list, tuple)):
            return f"{indent}{key}:\n" + "".join(f"{indent}  - {_scalar(v)}\n" for v in value)
        return f"{indent}{key}: {_scalar(value)}\n"
    return "".join(block(str(k), v, "") for k, v in data.items() if v not in (None, "", [], {}))


def serialize(record: Record) -> bytes:
    """The record file's bytes: deterministic for the same record."""
    text = record.text if record.text.endswith("\n") else record.text + "\n"
    return f"---\n{dump_front_matter(front_matter(record))}---\n{text}".encode("utf-8")


MAX_YAML_ALIASES = 8  # a few are harmless; nine chained ones expand to 9**9 nodes ("billion laughs")


def _check_yaml_events(head: str, where: str) -> None:
    """Refuse front matter with explicit tags or more than :data:`MAX_YAML_ALIASES` aliases, before it is
    built: an alias is shared when loaded, but everything that walks the value (JSON, a page) expands it.

    Raises:
        RecordError: naming ``where``.
    """
    aliases = 0
    for event in yaml.parse(head, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise RecordError(f"{where}: front matter uses more than {MAX_YAML_ALIASES} YAML aliases "
                                  "(memrepo writes none; many chained ones expand without bound)")
        elif isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)) and event.tag:
            implicit = event.implicit[0] if isinstance(event, yaml.ScalarEvent) else event.implicit
            if not implicit:
                raise RecordError(f"{where}: front matter uses the YAML tag {event.tag} (tags are not allowed)")


def split_front_matter(data: bytes, where: str) -> tuple[dict[str, Any], str]:
    """Split a Markdown file into its parsed front matter and body.

    Raises:
        RecordError: naming ``where`` if the file is not UTF-8 or its front matter is not YAML.
    """
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{where}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if content.startswith("\ufeff"):
        content = content[1:]
    content = content.replace("\r\n", "\n")
    if not content.startswith("---\n"):
        raise RecordError(f"{where}: no YAML front matter (the file must start with a '---' line)")
    end = content.find("\n---\n", 3)
    if end < 0:
        if content.endswith("\n---"):
            end = len(content) - 4
        else:
            raise RecordError(f"{where}: front matter is not closed by a '---' line")
    head, body = content[4 : end + 1], content[end + 5 :]
    try:
        if "&" in head or "*" in head or "!" in head:  # memrepo never writes anchors, aliases or tags
            _check_yaml_events(head, where)
        meta = yaml.load(head, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 2}" if mark else ""
        raise RecordError(f"{where}:{line}: front matter is not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(meta, dict):
        raise RecordError(f"{where}: front matter must be a mapping of fields")
    return meta, body


def parse(data: bytes, path: str) -> Record:
    """Parse a record file; ``path`` is used in error messages and for skills/core checks.

    Raises:
        RecordError: naming the file and the field at fault.
    """
    if path.startswith(RULES_FOLDER + "/"):
        return _parse_rule(data, path)
    meta, body = split_front_matter(data, path)
    if path.startswith(SKILLS_FOLDER + "/"):
        return _parse_skill(meta, body, path)

    def need(key: str) -> Any:
        if key not in meta or meta[key] in (None, ""):
            raise RecordError(f"{path}: field '{key}' is missing")
        return meta[key]

    record_id = str(need("id"))
    type_ = str(need("type"))
    if type_ not in TYPES:
        raise RecordError(f"{path}: field 'type': {type_!r} is not one of {', '.join(TYPES)}")
    try:
        check_id(record_id)
        mention_time = check_time(str(need("mention_time")), "mention_time")
        event_time = meta.get("event_time")
        if event_time not in (None, ""):
            event_time = check_time(str(event_time), "event_time", interval=True)
        else:
            event_time = None
        status = meta.get("status")
        if status is not None and status not in STATUSES:
            raise RecordError(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    except RecordError as exc:
        raise RecordError(f"{path}: field {exc}") from exc
    sources = meta.get("sources") or []
    if isinstance(sources, str):
        sources = [sources]
    if not isinstance(sources, list):
        raise RecordError(f"{path}: field 'sources' must be a list of source citations")
    extra = {k: v for k, v in meta.items() if k not in KEY_ORDER}
    body = body[:-1] if body.endswith("\n") else body
    return Record(
        id=record_id,
        type=type_,
        text=body,
        mention_time=mention_time,
        namespace=str(meta.get("namespace") or "default"),
        summary=str(meta.get("summary") or ""),
        event_time=event_time,
        status=status,
        sources=tuple(str(s) for s in sources),
        actor=None if meta.get("actor") is None else str(meta["actor"]),
        extra=extra,
    )


def _parse_skill(meta: dict[str, Any], body: str, path: str) -> Record:
    """Skills follow the Agent Skills format: front matter ``name`` and ``description``.

    A hand-written skill usually has no ``mention_time``: it is then "" (unknown) here, and
    readers that know the history date it by the commit that last changed the file.
    """
    slug = path.split("/")[2]
    for key in ("name", "description"):
        if not meta.get(key):
            raise RecordError(f"{path}: field '{key}' is missing (Agent Skills front matter)")
    extra = {k: v for k, v in meta.items() if k not in ("name", "description", "mention_time", "sources")}
    extra["name"] = str(meta["name"])
    extra["kind"] = "skill"
    body = body[:-1] if body.endswith("\n") else body
    return Record(
        id=f"skill-{slug}",
        type="procedural",
        text=body,
        mention_time=str(meta.get("mention_time") or ""),
        summary=str(meta["description"]),
        sources=tuple(str(s) for s in meta.get("sources") or ()),
        extra=extra,
    )


def _parse_rule(data: bytes, path: str) -> Record:
    """A rule is a Markdown file that may have no front matter; its id and path come from where it is."""
    head = data.lstrip(b"\xef\xbb\xbf")
    if head.startswith(b"---\n") or head.startswith(b"---\r\n"):
        meta, body = split_front_matter(data, path)
    else:
        try:
            body = data.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError as exc:
            raise RecordError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
        meta = {}
    body = body[:-1] if body.endswith("\n") else body
    first = next((line.lstrip("# ").strip() for line in body.splitlines() if line.strip()), "")
    extra = {k: v for k, v in meta.items() if k not in KEY_ORDER}
    extra.update(kind="rule", path=path)
    return Record(
        id=rule_id(path),
        type="resource",
        text=body,
        mention_time=str(meta.get("mention_time") or ""),
        summary=str(meta.get("summary") or default_summary(first or path, 200)),
        sources=tuple(str(s) for s in meta.get("sources") or ()),
        extra=extra,
    )


def with_text(record: Record, text: str) -> Record:
    return replace(record, text=text)


# --- sources ---------------------------------------------------------------------

_PART_RE = re.compile(r"^<!-- part (\S+)(?: (\{.*\}))? -->$")
PART_MARKER_RE = _PART_RE  # the line that starts a part of a source file; a part's own text may not hold one


@dataclass(frozen=True)
class SourcePart:
    """One addressable part of a source: a turn (``D3:14``), a chunk (``c0``), a line range."""

    anchor: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """A raw input kept verbatim, split into anchored parts that records cite."""

    id: str
    kind: str  # conversation | document | task | note
    mention_time: str
    parts: tuple[SourcePart, ...]
    namespace: str = "default"
    title: str = ""
    origin: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return source_path(self.id)

    def part(self, anchor: str) -> SourcePart | None:
        return self._by_anchor.get(anchor)

    @cached_property
    def _by_anchor(self) -> dict[str, SourcePart]:
        """Parts by anchor (the first of an anchor given twice): a document has thousands, each cited."""
        out: dict[str, SourcePart] = {}
        for p in self.parts:
            out.setdefault(p.anchor, p)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "namespace": self.namespace,
            "title": self.title,
            "origin": self.origin,
            "mention_time": self.mention_time,
            "path": self.path,
            **{k: v for k, v in self.extra.items()},
            "parts": [{"anchor": p.anchor, "text": p.text, **dict(p.meta)} for p in self.parts],
        }


def serialize_source(source: Source) -> bytes:
    """A source file: front matter, then each part after a ``<!-- part ANCHOR {meta} -->`` line."""
    meta: dict[str, Any] = {
        "id": source.id,
        "type": "source",
        "kind": source.kind,
        "namespace": source.namespace,
        "title": source.title,
        "origin": source.origin,
        "mention_time": source.mention_time,
    }
    meta = {k: v for k, v in meta.items() if v not in (None, "")}
    for key in sorted(source.extra):
        meta[key] = source.extra[key]
    chunks = []
    for part in source.parts:
        if "\n" in part.anchor or " " in part.anchor:
            raise RecordError(f"source part anchor {part.anchor!r} may not contain spaces")
        tag = f"<!-- part {part.anchor}"
        if part.meta:
            tag += " " + json.dumps(dict(part.meta), sort_keys=True, ensure_ascii=False)
        chunks.append(f"{tag} -->\n{part.text}\n")
    return f"---\n{dump_front_matter(meta)}---\n{''.join(chunks)}".encode("utf-8")


def parse_source(data: bytes, path: str) -> Source:
    """Parse a source file written by :func:`serialize_source` (or by hand in that format)."""
    meta, body = split_front_matter(data, path)
    for key in ("id", "kind", "mention_time"):
        if not meta.get(key):
            raise RecordError(f"{path}: field '{key}' is missing")
    parts: list[SourcePart] = []
    anchor: str | None = None
    part_meta: dict[str, Any] = {}
    lines: list[str] = []

    def flush() -> None:
        if anchor is not None:
            parts.append(SourcePart(anchor, "\n".join(lines).rstrip("\n"), part_meta))

    for lineno, line in enumerate(body.split("\n"), 1):
        m = _PART_RE.match(line)
        if m:
            flush()
            anchor, lines = m.group(1), []
            try:
                part_meta = safejson.loads(m.group(2)) if m.group(2) else {}
            except json.JSONDecodeError as exc:
                raise RecordError(f"{path}: part {anchor}: metadata is not JSON ({exc.msg})") from exc
        elif anchor is not None:
            lines.append(line)
        elif line.strip():
            raise RecordError(f"{path}: text before the first '<!-- part ... -->' line (line {lineno} of the body)")
    flush()
    extra = {k: v for k, v in meta.items() if k not in ("id", "type", "kind", "namespace", "title", "origin", "mention_time")}
    return Source(
        id=str(meta["id"]),
        kind=str(meta["kind"]),
        mention_time=str(meta["mention_time"]),
        parts=tuple(parts),
        namespace=str(meta.get("namespace") or "default"),
        title=str(meta.get("title") or ""),
        origin=str(meta.get("origin") or ""),
        extra=extra,
    )
