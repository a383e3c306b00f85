"""Git trees as sorted entry chunks, and loose objects written in one piece.

A one-record commit rewrites the trees on its path, and the deepest of them (a
month folder) can hold a thousand entries. dulwich serializes, hashes and
compresses a tree one entry at a time in Python, so that commit would cost in
proportion to the folder. :class:`RawTree` keeps a tree as its sorted sort keys
and raw entry chunks instead: changing one entry is a bisection and a list
insert, and the new object is one ``join``, one SHA-1 and one ``zlib`` call,
all in C. Loose objects are compressed at level 1, Git's default
(``core.looseCompression``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import zlib
from bisect import bisect_left
from binascii import hexlify, unhexlify
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from dulwich.objects import ShaFile, TreeEntry

LOOSE_COMPRESSION = 1  # Git's default core.looseCompression


@dataclass(frozen=True)
class RawObject:
    """A Git object as its type name, raw content and hex id."""

    type_name: bytes
    raw: bytes
    id: bytes

    @classmethod
    def make(cls, type_name: bytes, raw: bytes) -> "RawObject":
        header = b"%s %d\0" % (type_name, len(raw))
        return cls(type_name, raw, hashlib.sha1(header + raw).hexdigest().encode("ascii"))

    def to_shafile(self) -> ShaFile:
        return ShaFile.from_raw_string(_TYPE_NUMS[self.type_name], self.raw, sha=self.id)


_TYPE_NUMS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def write_loose(objects_dir: Path, obj: RawObject, before_rename: Callable[[], None] | None = None) -> None:
    """Write ``obj`` as a loose object (atomically: a temporary file renamed into place).

    The temporary file's name carries this process's pid, so that one left by a kill is known to be stale
    (:mod:`memrepo.store.recovery`). ``before_rename`` is a fault-injection point for tests.
    """
    hexid = obj.id.decode("ascii")
    folder = objects_dir / hexid[:2]
    target = folder / hexid[2:]
    if target.exists():
        return
    folder.mkdir(exist_ok=True)
    data = zlib.compress(b"%s %d\0" % (obj.type_name, len(obj.raw)) + obj.raw, LOOSE_COMPRESSION)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"tmp_obj_{os.getpid()}_")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o444)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RawTree:
    """A tree as parallel sorted lists of Git sort keys and raw entries, plus a name index."""

    __slots__ = ("keys", "chunks", "entries")

    def __init__(self) -> None:
        self.keys: list[bytes] = []  # the name, with "/" appended for a tree (Git's entry order)
        self.chunks: list[bytes] = []  # b"<octal mode> <name>\0<20-byte sha>"
        self.entries: dict[bytes, tuple[int, bytes]] = {}  # name -> (mode, hex sha)

    @classmethod
    def from_raw(cls, raw: bytes) -> "RawTree":
        tree = cls()
        pos, end = 0, len(raw)
        while pos < end:
            space = raw.index(b" ", pos)
            nul = raw.index(b"\0", space)
            mode = int(raw[pos:space], 8)
            name = raw[space + 1 : nul]
            stop = nul + 21
            tree.keys.append(name + b"/" if stat.S_ISDIR(mode) else name)
            tree.chunks.append(raw[pos:stop])
            tree.entries[name] = (mode, hexlify(raw[nul + 1 : stop]))
            pos = stop
        return tree

    def copy(self) -> "RawTree":
        other = RawTree()
        other.keys, other.chunks, other.entries = list(self.keys), list(self.chunks), dict(self.entries)
        return other

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __getitem__(self, name: bytes) -> tuple[int, bytes]:
        return self.entries[name]

    def iteritems(self) -> Iterator[TreeEntry]:
        """Entries in Git's order, as dulwich's ``TreeEntry(path, mode, sha)``."""
        for key in self.keys:
            name = key[:-1] if key.endswith(b"/") else key
            mode, sha = self.entries[name]
            yield TreeEntry(name, mode, sha)

    def set(self, name: bytes, mode: int, sha: bytes) -> None:
        if name in self.entries:
            self.delete(name)
        key = name + b"/" if stat.S_ISDIR(mode) else name
        i = bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.chunks.insert(i, b"%o %s\0%s" % (mode, name, unhexlify(sha)))
        self.entries[name] = (mode, sha)

    def delete(self, name: bytes) -> None:
        mode, _sha = self.entries.pop(name)
        i = bisect_left(self.keys, name + b"/" if stat.S_ISDIR(mode) else name)
        del self.keys[i]
        del self.chunks[i]

    def to_object(self) -> RawObject:
        return RawObject.make(b"tree", b"".join(self.chunks))
