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
import re
import stat
import tempfile
import zlib
from bisect import bisect_left
from binascii import hexlify, unhexlify
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from dulwich.objects import Commit, ObjectID, ShaFile, Tag, TreeEntry

from memrepo.errors import RepositoryError

LOOSE_COMPRESSION = 1  # Git's default core.looseCompression
HEX_SHA = re.compile(rb"[0-9a-f]{40}")


class CorruptObjectError(RepositoryError):
    """A Git object is missing or cannot be read; the message names it (and the file, when known)."""

    def __init__(self, sha: str | None, problem: str, path: str | None = None):
        self.sha, self.problem, self.path = sha, problem, path
        what = f"Git object {sha}" if sha else "a Git object"
        where = f" ({path})" if path else ""
        super().__init__(f"{what}{where} is {problem}; run `memrepo doctor` to see what it affects")


def _problem(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return "missing"
    text = str(exc).splitlines()[0] if str(exc) else ""
    kind = "zlib error" if isinstance(exc, zlib.error) else type(exc).__name__
    return f"corrupt ({kind}{': ' + text if text else ''})"


def read_raw(object_store, sha: bytes, path: str | None = None) -> tuple[int, bytes]:
    """``(type number, raw content)`` of object ``sha``.

    Raises:
        CorruptObjectError: if it is missing, or truncated or altered so that it cannot be read.
    """
    try:
        return object_store.get_raw(sha)
    except Exception as exc:  # a missing object is a KeyError; a damaged one anything zlib or dulwich raise
        raise CorruptObjectError(sha.decode("ascii", "replace"), _problem(exc), path) from exc


def read_object(object_store, sha: bytes, path: str | None = None) -> ShaFile:
    """Object ``sha`` parsed by dulwich (raises :class:`CorruptObjectError` like :func:`read_raw`)."""
    try:
        return object_store[sha]
    except Exception as exc:
        raise CorruptObjectError(sha.decode("ascii", "replace"), _problem(exc), path) from exc


def read_commit(repo, name: bytes) -> Commit:
    """The commit a hex id or a ref name (``refs/heads/...``) names; raises like :func:`read_object`."""
    sha = name if HEX_SHA.fullmatch(name) else repo.refs[name]
    obj = read_object(repo.object_store, sha, "commit")
    if not isinstance(obj, Commit):
        raise CorruptObjectError(sha.decode("ascii", "replace"), f"a {obj.type_name.decode()}, not a commit", "commit")
    return obj


def object_error(exc: BaseException) -> CorruptObjectError | None:
    """The :class:`CorruptObjectError` a dulwich exception raised outside :func:`read_raw` stands for, if any.

    For the command line's last line of defence: a missing object surfaces as a ``KeyError`` of its
    hex id, a damaged one as dulwich's format and checksum errors or zlib's.
    """
    import zlib

    from dulwich.errors import ChecksumMismatch, MissingCommitError, ObjectFormatException

    if isinstance(exc, (KeyError, MissingCommitError)) and len(exc.args) == 1:
        key = exc.args[0]
        key = key.encode("ascii", "replace") if isinstance(key, str) else key
        if isinstance(key, bytes) and HEX_SHA.match(key):
            return CorruptObjectError(key[:40].decode(), "missing")
    if isinstance(exc, (ChecksumMismatch, ObjectFormatException, zlib.error)):
        return CorruptObjectError(None, _problem(exc))
    return None


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
        return ShaFile.from_raw_string(_TYPE_NUMS[self.type_name], self.raw, sha=ObjectID(self.id))


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
            yield TreeEntry(name, mode, ObjectID(sha))

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


@dataclass(frozen=True)
class Damage:
    """A missing or damaged object found by :func:`walk_objects`, with what refers to it."""

    sha: str
    path: str | None  # the file or folder (ending in "/") whose entry names the object; None for commits and tags
    message: str


def walk_objects(repo) -> Iterator[Damage]:
    """Read every object reachable from the refs and HEAD once: each must exist, read, hash to its id and parse.

    The tip's tree is walked before the parents, so a damaged file or folder is reported with the
    newest commit that holds it.
    """
    from dulwich.objects import S_ISGITLINK

    store = repo.object_store
    todo: list[tuple[bytes, str | None, str]] = []  # (sha, path, where)
    for ref, sha in sorted(repo.get_refs().items(), reverse=True):
        todo.append((sha, None, f"tip of {ref.decode('utf-8', 'replace')}"))
    seen: set[bytes] = set()
    while todo:
        sha, path, where = todo.pop()
        if sha in seen:
            continue
        seen.add(sha)
        hexsha = sha.decode("ascii", "replace")
        what = f"Git object {hexsha}" + (f" ({path or '/'} {where})" if path is not None else f" ({where})")
        try:
            type_num, raw = read_raw(store, sha)
        except CorruptObjectError as exc:
            yield Damage(hexsha, path, f"{what} is {exc.problem}; restore it from another clone of this repository")
            continue
        type_name = {v: k for k, v in _TYPE_NUMS.items()}.get(type_num, b"?")
        digest = hashlib.sha1(b"%s %d\0" % (type_name, len(raw)))
        digest.update(raw)
        if digest.hexdigest() != hexsha:
            yield Damage(hexsha, path, f"{what} is altered: its content hashes to {digest.hexdigest()}; "
                         "restore it from another clone of this repository")
            continue
        try:
            if type_num == 2:
                for entry in RawTree.from_raw(raw).iteritems():
                    if not S_ISGITLINK(entry.mode):
                        name = entry.path.decode("utf-8", "surrogateescape")
                        child = f"{path.rstrip('/')}/{name}" if path else name
                        todo.append((entry.sha, child + ("/" if stat.S_ISDIR(entry.mode) else ""), where))
                continue
            obj = ShaFile.from_raw_string(type_num, raw, sha=ObjectID(sha))
            obj.check()
        except Exception as exc:  # dulwich and the tree parser raise several types for malformed content
            yield Damage(hexsha, path, f"{what} is malformed ({type(exc).__name__}: {exc})")
            continue
        if isinstance(obj, Commit):  # type 1
            label = f"commit {hexsha[:12]}"
            todo.extend((parent, None, f"parent of {label}") for parent in reversed(obj.parents))
            todo.append((obj.tree, "", f"in {label}"))
        elif isinstance(obj, Tag):  # type 4
            todo.append((obj.object[1], None, f"tagged by {hexsha[:12]}"))
