"""Tombstones: the tracked trace a ``forget`` leaves, so that merges and hooks keep it forgotten.

A forget removes a record's (or a source's) files from the tip; without a trace a
teammate's concurrent edit of the same file, merged later, would bring it back.
So the forget also writes ``tombstones/<id>.md``: a Markdown file whose YAML front
matter says which id was forgotten, by whom and when, and optionally why. It never
holds the forgotten text (that is what was asked to go), only the id.

```
---
id: se-2023-05-03-1a2b3c4d
forgotten_by: "Mia Example <mia@example.org>"
forgotten_at: 2026-12-01T21:40:00+00:00
reason: "asked to forget her address"
---
Forgotten by `memrepo forget`: this id stays out of the memory (docs/format.md, "Tombstones").
```

An undo (``memrepo forget --undo ID``) adds ``undone_by`` and ``undone_at`` to the
same file; the file stays (a tombstone is never deleted, so history keeps who undid
what) and the record is not restored: whoever wants it back adds it again. A
tombstone is *active* while it has no undo.

This module only maps ids to paths and reads and writes the format; it has no Git
and no I/O of its own (like :mod:`memrepo.records`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memrepo import records as rec
from memrepo.errors import RecordError

FOLDER = "tombstones"
BODY = 'Forgotten by `memrepo forget`: this id stays out of the memory (docs/format.md, "Tombstones").\n'
KEYS = ("id", "forgotten_by", "forgotten_at", "reason", "undone_by", "undone_at")
_AUTHOR_RE = re.compile(r"^[^<>\n]*<[^<>\n]*>$")


@dataclass(frozen=True)
class Tombstone:
    """One forgotten id: who forgot it and when, and the undo if there is one."""

    id: str
    forgotten_by: str
    forgotten_at: str
    reason: str = ""
    undone_by: str | None = None
    undone_at: str | None = None

    @property
    def active(self) -> bool:
        """True while the forget holds (no undo recorded)."""
        return self.undone_at is None

    @property
    def path(self) -> str:
        return tombstone_path(self.id)


def tombstone_path(record_id: str) -> str:
    """``tombstones/<id>.md`` for a record or source id.

    Raises:
        RecordError: ``record_id`` is not a memrepo id.
    """
    return f"{FOLDER}/{rec.check_id(record_id)}.md"


def is_tombstone_path(path: str) -> bool:
    """True for ``tombstones/<id>.md`` (one level, nothing below)."""
    if not path.startswith(FOLDER + "/") or not path.endswith(".md"):
        return False
    name = path[len(FOLDER) + 1 : -3]
    return "/" not in name and bool(name)


def id_of_path(path: str) -> str:
    """The id a tombstone path names (the file name without ``.md``)."""
    return path[len(FOLDER) + 1 : -3]


def _check_datetime(value: object, path: str, key: str) -> str:
    text = str(value).strip()
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise RecordError(f"{path}: field '{key}' is not an ISO datetime: {text!r}") from None
    return text


def _check_author(value: object, path: str, key: str) -> str:
    text = str(value).strip()
    if not _AUTHOR_RE.match(text):
        raise RecordError(f"{path}: field '{key}' must be a commit author 'Name <email>', not {text!r}")
    return text


def parse_tombstone(data: bytes, path: str) -> Tombstone:
    """Parse a tombstone file; ``path`` names it in errors and must match its id.

    Raises:
        RecordError: naming the file and the field at fault (missing id/author/time, an
            id that is not the file's name, an undo with only one of its two fields, or
            an unknown field: a tombstone holds no text of what was forgotten).
    """
    meta, _body = rec.split_front_matter(data, path)
    unknown = sorted(set(meta) - set(KEYS))
    if unknown:
        raise RecordError(f"{path}: unknown field '{unknown[0]}' (a tombstone holds only {', '.join(KEYS)})")
    for key in ("id", "forgotten_by", "forgotten_at"):
        if not meta.get(key):
            raise RecordError(f"{path}: field '{key}' is missing")
    record_id = str(meta["id"]).strip()
    try:
        rec.check_id(record_id)
    except RecordError as exc:
        raise RecordError(f"{path}: field 'id': {exc}") from None
    if is_tombstone_path(path) and id_of_path(path) != record_id:
        raise RecordError(f"{path}: id {record_id} belongs at {tombstone_path(record_id)}")
    undone_by, undone_at = meta.get("undone_by"), meta.get("undone_at")
    if bool(undone_by) != bool(undone_at):
        raise RecordError(f"{path}: an undo needs both 'undone_by' and 'undone_at'")
    return Tombstone(
        id=record_id,
        forgotten_by=_check_author(meta["forgotten_by"], path, "forgotten_by"),
        forgotten_at=_check_datetime(meta["forgotten_at"], path, "forgotten_at"),
        reason=str(meta.get("reason") or "").strip(),
        undone_by=_check_author(undone_by, path, "undone_by") if undone_by else None,
        undone_at=_check_datetime(undone_at, path, "undone_at") if undone_at else None,
    )


def serialize_tombstone(t: Tombstone) -> bytes:
    """The tombstone file's bytes: fields in :data:`KEYS` order, empty ones left out.

    Raises:
        RecordError: the reason is more than one line.
    """
    if "\n" in t.reason or "\r" in t.reason:
        raise RecordError(f"{t.path}: reason must be one line")
    data = {"id": t.id, "forgotten_by": t.forgotten_by, "forgotten_at": t.forgotten_at, "reason": t.reason,
            "undone_by": t.undone_by, "undone_at": t.undone_at}
    kept = {k: v for k, v in data.items() if v not in (None, "")}
    return f"---\n{rec.dump_front_matter(kept)}---\n{BODY}".encode("utf-8")


def undo(t: Tombstone, *, by: str, at: str) -> Tombstone:
    """``t`` with an undo recorded (``by`` a commit author, ``at`` an ISO datetime)."""
    return Tombstone(t.id, t.forgotten_by, t.forgotten_at, t.reason, undone_by=by, undone_at=at)
