"""Typed trees, their generations, and locators (DESIGN.md §4, Memorix §4.1-4.2).

A typed tree is a top-level folder of the memory repository (``rules/``,
``resource/``, ``sources/``, ``procedural/``, ...). All trees live in the one
branch history, but each has its own generation chain: ``refs/memrepo/trees/<tree>``
points at the newest commit that changed that tree, so an ingest into ``rules/``
leaves ``resource/``'s generation where it was. The ref is brought forward lazily,
by the first read or write after a commit (one root-tree comparison when the tree
did not change; a first-parent walk over the commits since the ref when it did).

A locator is ``<tree>/<path>[@latest|@<generation>]``: a path ending in ``/``
selects a subtree, a generation is any commit-ish (sha, tag, ``main~3``);
without ``@`` it means ``@latest``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError, RepositoryError
from memrepo.store.git import GitStore, Snapshot, commit_parent, get_ref, set_ref

TREES = ("rules", "resource", "sources", "procedural", "core", "episodic", "semantic", "vault")
LATEST = "latest"
TREE_REF = "refs/memrepo/trees/"
_SEGMENT = re.compile(r"[^/\x00]+")


@dataclass(frozen=True)
class Locator:
    """One parsed locator: ``path`` (a file, or a folder ending in ``/``) at ``generation``."""

    path: str
    generation: str = LATEST

    @property
    def tree(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def is_folder(self) -> bool:
        return self.path.endswith("/")

    def __str__(self) -> str:
        return f"{self.path}@{self.generation}"


@dataclass(frozen=True)
class Input:
    """One resolved input of a selection: a file's ``path``, the ``generation`` (commit) it was read at, its ``blob``."""

    path: str
    generation: str
    blob: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "generation": self.generation, "blob": self.blob}


def parse_locator(text: str) -> Locator:
    """Parse ``rules/python/@latest``, ``resource/api.md@v1.2``, ``procedural/skills/``.

    Raises:
        RecordError: the locator names no typed tree or its path could escape the repository.
    """
    raw = text.strip()
    path, at, generation = raw.rpartition("@") if "@" in raw else (raw, "", "")
    if at and not generation:
        raise RecordError(f"locator {text!r}: nothing after '@' (give @latest or a commit, tag or main~3)")
    path = path.lstrip("/")
    if path in TREES:
        path += "/"
    parts = path.rstrip("/").split("/")
    if not path or parts[0] not in TREES:
        raise RecordError(f"locator {text!r}: must start with a typed tree ({', '.join(t + '/' for t in TREES)})")
    if any(not _SEGMENT.fullmatch(p) or p in (".", "..", ".git") for p in parts):
        raise RecordError(f"locator {text!r}: a path segment is empty or would escape the tree")
    return Locator(path, generation or LATEST)


def tree_generation(store: GitStore, tree: str) -> str | None:
    """The commit of ``tree``'s tip (``refs/memrepo/trees/<tree>``), brought forward to HEAD's version of the tree.

    Returns None when the tree does not exist at HEAD.
    """
    if tree not in TREES:
        raise RecordError(f"{tree!r} is not a typed tree ({', '.join(TREES)})")
    head = store.head()
    if head is None:
        return None
    ref = TREE_REF + tree
    old = get_ref(store, ref)
    wanted = _subtree(store, head.decode(), tree)
    if wanted is None:
        return None
    if old is not None and _subtree(store, old, tree) == wanted:
        return old
    # The tree's generation is the oldest commit on HEAD's first-parent chain that already had this version of it.
    generation = head.decode()
    while True:
        parent = commit_parent(store, generation)
        if parent is None or parent == old or _subtree(store, parent, tree) != wanted:
            break
        generation = parent
    try:
        set_ref(store, ref, generation, old)  # a concurrent reader that moved it first moved it to the same place
    except (OSError, RepositoryError):
        pass  # a read-only clone: the generation is still right, only not remembered
    return generation


def _subtree(store: GitStore, commit: str, tree: str) -> str | None:
    entry = store.snapshot(commit.encode()).entry(tree)
    return entry[1].decode() if entry else None


def generation_of(store: GitStore, locator: Locator) -> str:
    """The commit ``locator`` reads at.

    Raises:
        NotFoundError: the tree is empty at latest, or the generation names no commit.
    """
    if locator.generation == LATEST:
        commit = tree_generation(store, locator.tree)
        if commit is None:
            raise NotFoundError(f"{locator}: the tree {locator.tree}/ has nothing yet")
        return commit
    commit_id = store.resolve(locator.generation)
    if commit_id is None:
        raise NotFoundError(f"{locator}: the repository has no commits")
    return commit_id.decode()


def resolve(store: GitStore, locator: Locator) -> list[Input]:
    """The files ``locator`` selects, as (path, generation, blob), in path order.

    Raises:
        NotFoundError: nothing at that path in that generation.
    """
    commit = generation_of(store, locator)
    snap = store.snapshot(commit.encode())
    found = [Input(path, commit, blob) for path, blob in snap.walk(locator.path.rstrip("/"))]
    if not found:
        raise NotFoundError(f"{locator}: no such file or folder at {commit[:12]}")
    return found


def list_tree(store: GitStore, locator: Locator) -> list[Input]:
    """Files under a folder locator (``memrepo ls``); an empty tree is an empty list, not an error."""
    try:
        return resolve(store, locator)
    except NotFoundError:
        if locator.path.rstrip("/") == locator.tree:
            return []
        raise


def read(store: GitStore, locator: Locator) -> tuple[Input, bytes]:
    """The one file ``locator`` names and its bytes (``memrepo cat``).

    Raises:
        RecordError: the locator names a folder.
        NotFoundError: no such file.
    """
    commit = generation_of(store, locator)
    snap = store.snapshot(commit.encode())
    blob = snap.blob_id(locator.path)
    if blob is None:
        if locator.is_folder or snap.exists(locator.path):
            raise RecordError(f"{locator}: is a folder (list it with `memrepo ls {locator.path.rstrip('/')}/`)")
        raise NotFoundError(f"{locator}: no such file at {commit[:12]}")
    return Input(locator.path, commit, blob), snap.read_blob(blob)


# --- placing a file in a typed tree -----------------------------------------------------------------------------

PLACEABLE = ("rules/", "resource/", "procedural/skills/")


@dataclass(frozen=True)
class Placed:
    """What placing one file did: its path, the commit (None if the path already held it), and the file it
    replaced (None if the path was free or held the same file)."""

    path: str
    commit: str | None
    replaced: "ReplacedFile | None" = None


@dataclass(frozen=True)
class ReplacedFile:
    """The file a ``--replace`` placement replaced: its blob and its first line, to name it in messages."""

    blob: str
    first_line: str

    def __str__(self) -> str:
        return f"blob {self.blob[:12]}, {self.first_line!r}"


def read_input(file: str) -> bytes:
    """The bytes of a file to place, checked to be text (``ingest --to`` stores Markdown, never binary).

    Raises:
        NotFoundError: ``file`` does not exist (or is a folder).
        RecordError: it cannot be read, holds a NUL byte, or is not UTF-8; each names the file.
    """
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise NotFoundError(f"{file}: no such file; nothing was stored") from None
    except IsADirectoryError:
        raise NotFoundError(f"{file}: is a folder, not a file; nothing was stored") from None
    except OSError as exc:
        raise RecordError(f"{file}: cannot be read ({exc.strerror}); nothing was stored") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise RecordError(f"{file}: is a binary file (a NUL byte at offset {nul}); --to stores text (Markdown) "
                          "files; nothing was stored")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{file}: is not UTF-8 text ({exc.reason} at byte {exc.start}); --to stores text "
                          "(Markdown) files; nothing was stored") from None
    return data


def place(store: GitStore, target: str, data: bytes, *, mention_time: str, namespace: str,
          author: bytes | None = None) -> tuple[str, str | None]:
    """Store ``data`` at ``target``, replacing what is there; (path, commit or None if unchanged).

    The Python API's placement (a program that places a file means it); ``ingest --to`` uses
    :func:`place_file`, which refuses to replace a different file unless asked.
    """
    placed = place_file(store, target, data, mention_time=mention_time, namespace=namespace, author=author,
                        replace=True)
    return placed.path, placed.commit


def place_file(store: GitStore, target: str, data: bytes, *, mention_time: str, namespace: str,
               author: bytes | None = None, replace: bool = False) -> Placed:
    """Store ``data`` at ``target`` (``rules/python/vllm.md``) in one commit.

    Rules and skills are kept byte for byte. A document placed under ``resource/`` becomes a resource record
    at exactly that path: its own front matter is kept (``package``, ``version`` ...) and the fields a record
    needs (id, type, mention_time) are added when missing. Another file of the same name elsewhere is another
    path. The same file placed again is no change (a resource is compared as the record it would become at the
    mention time already there). A different file at the target is replaced only with ``replace``, as a new
    generation of that tree, and :attr:`Placed.replaced` names it.

    Raises:
        RecordError: the target is outside the placeable trees, or the file does not parse there.
        RepositoryError: the target holds a different file and ``replace`` is false (nothing is written), or
            the work-tree file at the target has uncommitted edits.
    """
    path = _check_target(target)
    if b"\0" in data:
        raise RecordError(f"{path}: the input is a binary file (it holds a NUL byte); only text files are placed")
    fresh = _as_resource(data, path, mention_time=mention_time, namespace=namespace) if path.startswith("resource/") else data
    rec.parse(fresh, path)  # what is written must read back as a record
    if not store.bare and store.dirty_paths([path]):
        raise RepositoryError(f"{path}: has uncommitted changes in the work tree; commit or discard them first")
    replaced: list[ReplacedFile] = []

    def change(snap: Snapshot) -> dict[str, bytes]:
        replaced.clear()
        old = snap.read(path)
        if old is None:
            return {path: fresh}
        new = _same_input(old, data, path, namespace) or fresh
        if new == old:
            return {}
        held = ReplacedFile(snap.blob_id(path) or "", _first_line(old, path))
        if not replace:
            raise RepositoryError(f"{path}: already holds a different file ({held}); nothing was stored. "
                                  "Pass --replace to replace it, or choose another --to path")
        replaced.append(held)
        return {path: new}

    commit = store.commit(change, f"ingest --to {path}", author=author)
    tree_generation(store, path.split("/", 1)[0])
    return Placed(path, commit.decode() if commit else None, replaced[0] if replaced and commit else None)


def _same_input(old: bytes, data: bytes, path: str, namespace: str) -> bytes | None:
    """For a resource, ``data`` as the record it becomes at the mention time ``old`` has (so placing the same
    document again gives ``old`` byte for byte); None when ``old`` is not a resource record."""
    if not path.startswith("resource/"):
        return None
    try:
        held = rec.parse(old, path)
        return _as_resource(data, path, mention_time=held.mention_time, namespace=namespace)
    except RecordError:
        return None


def _first_line(data: bytes, path: str) -> str:
    try:
        record = rec.parse(data, path)
        text = record.summary or record.text
    except RecordError:
        text = data.decode("utf-8", "replace")
    line = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), "")
    return rec.default_summary(line, 60) if line else "(empty)"


def _check_target(target: str) -> str:
    path = target.strip().lstrip("/")
    if path.endswith("/") or not path.startswith(PLACEABLE):
        raise RecordError(f"--to {target!r}: give a file path under {', '.join(PLACEABLE)} (e.g. rules/python/vllm.md)")
    parts = path.split("/")
    if any(p in ("", ".", "..", ".git") or p.startswith(".") for p in parts):
        raise RecordError(f"--to {target!r}: a path segment is empty, hidden or would escape the tree")
    if not path.endswith(".md"):
        raise RecordError(f"--to {target!r}: memory files are Markdown; end the path with .md")
    if path.startswith("procedural/skills/") and (len(parts) != 4 or parts[3] != "SKILL.md"):
        raise RecordError(f"--to {target!r}: a skill goes to procedural/skills/<name>/SKILL.md")
    return path


def _as_resource(data: bytes, path: str, *, mention_time: str, namespace: str) -> bytes:
    """A document as the resource record at ``path``, keeping its own front matter."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    meta: dict = {}
    if text.lstrip("\ufeff").startswith("---\n"):
        meta, text = rec.split_front_matter(data, path)
    text = text[:-1] if text.endswith("\n") else text
    extra = {k: v for k, v in meta.items() if k not in rec.KEY_ORDER and k != "path"}
    first = next((line.lstrip("# ").strip() for line in text.splitlines() if line.strip()), path)
    record = rec.new_record("resource", text, mention_time=str(meta.get("mention_time") or mention_time),
                            namespace=namespace, source=path, position="placed",
                            summary=str(meta.get("summary") or rec.default_summary(first, 200)), path=path, **extra)
    return rec.serialize(record)
