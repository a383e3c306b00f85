"""Add entries to a split Git index without reading the shared index.

With ``core.splitIndex`` (which ``memrepo init`` sets), ``.git/index`` holds only
the entries changed since the shared index (``.git/sharedindex.<sha>``) was
written, plus a ``link`` extension naming it. Adding a file that the index does
not have yet touches only that small file, so this module does it directly: it
reads ``.git/index`` under Git's own ``index.lock``, inserts the new entries
among the added ones in name order, keeps the ``link`` extension, drops the
optional caches that the new entries would make stale (cache tree, untracked
cache, fsmonitor, offset tables: Git rebuilds them), and renames the lock into
place. Git's ``git update-index`` reads the whole shared index instead, about
25 ms at 100,000 files.

Anything it does not handle returns False and the caller falls back to
``git update-index``: an index that is not split, a version other than 2 or 3,
a required extension other than ``link``, a path the split part holds as a
replaced entry, or a split part that has grown past ``SPLIT_MAX`` entries (then
the fallback also rewrites the shared index, so the split part starts small
again). Format: Git's Documentation/gitformat-index.txt.
"""

from __future__ import annotations

import hashlib
import os
import struct
from bisect import bisect_left
from pathlib import Path
from typing import Callable

SPLIT_MAX = 256  # entries in .git/index before the shared index is rewritten (by git)
KEEP_OPTIONAL = {b"REUC"}  # optional extensions whose content new entries do not invalidate
_ENTRY_FIXED = 62  # bytes before the path in an on-disk entry (versions 2 and 3)
_EXTENDED = 0x4000


class IndexLocked(Exception):
    """``.git/index.lock`` exists: another Git command is writing the index."""


def _entry_size(name_len: int, extended: bool) -> int:
    return (_ENTRY_FIXED + (2 if extended else 0) + name_len + 8) & ~7


def _ewah_count(data: bytes, pos: int) -> tuple[int, int]:
    """(number of set bits, position after) of the EWAH bitmap serialized at ``pos``."""
    _bits, words = struct.unpack_from(">II", data, pos)
    buf = struct.unpack_from(f">{words}Q", data, pos + 8)
    count, i = 0, 0
    while i < words:
        rlw = buf[i]
        if rlw & 1:
            count += ((rlw >> 1) & 0xFFFFFFFF) * 64
        literals = rlw >> 33
        count += sum(bin(w).count("1") for w in buf[i + 1 : i + 1 + literals])
        i += 1 + literals
    return count, pos + 8 + 8 * words + 4


def encode_entry(path: bytes, blob_sha: bytes, st: os.stat_result, mode: int) -> bytes:
    """One stage-0 index entry for a file whose stat is ``st`` and content ``blob_sha`` (20 bytes)."""
    head = struct.pack(
        ">10I", int(st.st_ctime) & 0xFFFFFFFF, st.st_ctime_ns % 1_000_000_000, int(st.st_mtime) & 0xFFFFFFFF,
        st.st_mtime_ns % 1_000_000_000, st.st_dev & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF, mode,
        st.st_uid & 0xFFFFFFFF, st.st_gid & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    body = head + blob_sha + struct.pack(">H", min(len(path), 0xFFF)) + path
    return body + b"\0" * (_entry_size(len(path), False) - len(body))


def add_entries(git_dir: Path, entries: dict[bytes, bytes],
                on_locked: Callable[[os.stat_result], None] | None = None) -> str:
    """Put ``entries`` (path -> encoded entry) into the split index.

    ``on_locked`` is called with the stat of ``index.lock`` once this process holds it (the caller
    records it, so that a lock left by a kill is known to be its own).

    Returns:
        ``"written"``; ``"full"`` if the split part has SPLIT_MAX entries (the caller lets git
        rewrite the shared index); ``"unsupported"`` if the index is not one this writer handles.

    Raises:
        IndexLocked: another process holds ``index.lock``.
    """
    index_path = git_dir / "index"
    lock_path = git_dir / "index.lock"
    try:
        fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as exc:
        raise IndexLocked(str(lock_path)) from exc
    try:
        if on_locked is not None:
            on_locked(os.fstat(fd))
        try:
            data = index_path.read_bytes()
        except FileNotFoundError:
            return "unsupported"
        new = _with_entries(data, entries)
        if not isinstance(new, bytes):
            return new
        with os.fdopen(fd, "wb") as handle:
            fd = -1
            handle.write(new)
        os.replace(lock_path, index_path)
        return "written"
    finally:
        if fd >= 0:
            os.close(fd)
        lock_path.unlink(missing_ok=True)


def _with_entries(data: bytes, entries: dict[bytes, bytes]) -> bytes | str:
    """The index ``data`` with ``entries`` added, or why not (``"full"``, ``"unsupported"``)."""
    if len(data) < 32 or data[:4] != b"DIRC" or hashlib.sha1(data[:-20]).digest() != data[-20:]:
        return "unsupported"
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3):
        return "unsupported"
    if count + len(entries) > SPLIT_MAX:
        return "full"
    pos, chunks, names = 12, [], []
    for _ in range(count):
        (flags,) = struct.unpack_from(">H", data, pos + 60)
        extended = bool(flags & _EXTENDED)
        start = pos + _ENTRY_FIXED + (2 if extended else 0)
        name_len = flags & 0xFFF
        if name_len == 0xFFF:
            name_len = data.index(b"\0", start) - start
        names.append(data[start : start + name_len])
        size = _entry_size(name_len, extended)
        chunks.append(data[pos : pos + size])
        pos += size
    extensions, link = [], None
    end = len(data) - 20
    while pos < end:
        sig, size = data[pos : pos + 4], struct.unpack_from(">I", data, pos + 4)[0]
        body = data[pos + 8 : pos + 8 + size]
        if sig == b"link":
            link = body
            extensions.append(data[pos : pos + 8 + size])
        elif sig in KEEP_OPTIONAL:
            extensions.append(data[pos : pos + 8 + size])
        elif not (b"A" <= sig[:1] <= b"Z"):
            return "unsupported"  # a required extension this writer does not know
        pos += 8 + size
    if link is None or len(link) < 20 or link[:20] == b"\0" * 20:
        return "unsupported"  # not split
    replaced = 0
    if len(link) > 20:
        _deleted, after = _ewah_count(link, 20)
        replaced, _ = _ewah_count(link, after)
    added_names, added_chunks = names[replaced:], chunks[replaced:]
    if any(name in entries for name in names[:replaced]):
        return "unsupported"  # the path is a replaced entry of the shared index: let git resolve it
    for name, chunk in sorted(entries.items()):
        i = bisect_left(added_names, name)
        if i < len(added_names) and added_names[i] == name:
            added_chunks[i] = chunk
        else:
            added_names.insert(i, name)
            added_chunks.insert(i, chunk)
    body = b"".join([data[:8], struct.pack(">I", replaced + len(added_chunks)), *chunks[:replaced], *added_chunks,
                     *extensions])
    return body + hashlib.sha1(body).digest()
