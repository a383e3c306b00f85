"""Merging and deleting branches in the object store (what approving a review branch does).

A merge is a true merge commit (two parents, like a pull request merged on a Git
host), so that ``git revert -m 1 <merge>`` undoes it. Its tree is three-way: the
changes the branch made since the merge base are applied to the target's tree;
a path that both sides changed differently is a conflict and nothing is written.
The target moves by compare-and-swap, and the work tree follows when the target
is HEAD's branch.
"""

from __future__ import annotations

import stat
import time
from typing import Any

from dulwich.diff_tree import tree_changes
from dulwich.graph import find_merge_base
from dulwich.objects import Commit, ObjectID

from memrepo.errors import NotFoundError, RepositoryError
from memrepo.store.git import GitStore, build_tree
from memrepo.store.recovery import PendingSync


class MergeConflict(RepositoryError):
    """Both sides changed the same file differently; nothing was merged."""


def _changes(store: GitStore, old_tree: bytes | None, new_tree: bytes) -> dict[str, bytes | None]:
    """path -> new blob id (None: deleted) between two trees."""
    out: dict[str, bytes | None] = {}
    for change in tree_changes(store.repo.object_store, old_tree, new_tree):  # type: ignore[arg-type]
        if change.old is not None and change.old.path and (change.new is None or change.new.path != change.old.path):
            out[change.old.path.decode("utf-8", "surrogateescape")] = None
        if change.new is not None and change.new.path:
            out[change.new.path.decode("utf-8", "surrogateescape")] = change.new.sha
    return out


def merge_branch(store: GitStore, branch: bytes, message: str, *, into: bytes | None = None,
                 author: bytes | None = None) -> bytes:
    """Merge ``branch`` (a full ref, ``refs/heads/dream/...``) into ``into`` (default: HEAD's branch).

    Always writes a merge commit (parents: the target's tip, then the branch's tip),
    even when a fast-forward would do, so that the merge can be reverted as one unit.
    ``author`` (``Name <email>``) defaults to the store's Git identity.

    Returns:
        The merge commit id.

    Raises:
        NotFoundError: if either ref does not exist.
        MergeConflict: if a file was changed on both sides differently (nothing is written).
        RepositoryError: if the branch is already merged.
    """
    store.refuse_during_merge()
    into = into or store.branch_ref()
    refs: Any = store.repo.refs  # dulwich's ref types are NewTypes of bytes
    if branch not in refs:
        raise NotFoundError(f"branch {branch.decode().removeprefix('refs/heads/')} not found")
    theirs = refs[branch]
    pending = store.begin_sync() if not store.bare else None  # a kill after the swap is completed by the next command
    try:
        with store.write_lock():  # the clone's one write lock, as every commit (memrepo/store/git.py)
            store.refuse_during_merge()
            commit_id = _merge(store, branch, theirs, into, message, pending, author)
    finally:
        if pending is not None:
            pending.done()
    return commit_id


def _merge(store: GitStore, branch: bytes, theirs: bytes, into: bytes, message: str,
           pending: PendingSync | None, author: bytes | None) -> bytes:
    refs: Any = store.repo.refs
    objects_: Any = store.repo.object_store
    while True:
        if into not in refs:
            raise NotFoundError(f"branch {into.decode()} not found")
        ours = refs[into]
        bases = find_merge_base(store.repo, [ours, ObjectID(theirs)])
        if theirs in bases or theirs == ours:
            raise RepositoryError(f"{branch.decode().removeprefix('refs/heads/')} is already merged")
        base_tree = store.snapshot(bases[0]).tree_id if bases else None
        ours_snap, theirs_snap = store.snapshot(ours), store.snapshot(theirs)
        wanted = _changes(store, base_tree, theirs_snap.tree_id)  # type: ignore[arg-type]
        base_snap = store.snapshot(bases[0]) if bases else None
        apply: dict[str, bytes | None] = {}
        conflicts = []
        for path, blob in sorted(wanted.items()):
            mine = ours_snap.blob_id(path)
            before = base_snap.blob_id(path) if base_snap else None
            target = blob.decode() if blob else None
            if mine == target:
                continue
            if mine != before:
                conflicts.append(path)
                continue
            apply[path] = objects_[blob].as_raw_string() if blob else None
        if conflicts:
            raise MergeConflict(f"cannot merge {branch.decode().removeprefix('refs/heads/')}: "
                                f"changed on both sides: {', '.join(conflicts[:5])}")
        tree, objects = build_tree(store.repo.object_store, ours_snap.tree_id, apply, store.trees)
        commit = Commit()
        commit.tree = tree
        commit.parents = [ours, ObjectID(theirs)]
        commit.author = commit.committer = author or store.identity()
        commit.commit_time = commit.author_time = int(time.time())
        commit.commit_timezone = commit.author_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = (message.rstrip("\n") + "\n").encode("utf-8")
        objects.append(commit)
        store._add_objects(objects)
        if pending is not None:
            pending.record(sorted(apply))
        if store._swap(into, ours, commit.id, message):
            break
    if pending is not None and store._is_head(into):
        store.finish_sync(pending, sorted(apply), commit.id)
    return commit.id


def delete_branch(store: GitStore, branch: bytes) -> None:
    """Delete ``branch`` (a full ref). Raises NotFoundError if it does not exist; HEAD's branch is refused."""
    refs: Any = store.repo.refs
    if branch not in refs:
        raise NotFoundError(f"branch {branch.decode().removeprefix('refs/heads/')} not found")
    if store._is_head(branch):
        raise RepositoryError(f"{branch.decode()} is the checked-out branch; it cannot be deleted")
    refs.remove_if_equals(branch, None)


def is_merged(store: GitStore, branch: bytes, into: bytes | None = None) -> bool:
    """True if ``branch``'s tip is reachable from ``into`` (default: HEAD's branch)."""
    into = into or store.branch_ref()
    refs: Any = store.repo.refs
    tip, ours = refs[branch], refs[into]
    return tip == ours or tip in find_merge_base(store.repo, [ours, tip])


def branch_changes(store: GitStore, branch: bytes, folder: str, into: bytes | None = None) -> dict[str, bytes | None]:
    """Files under ``folder`` that ``branch`` changed since its merge base with ``into`` (default: HEAD's branch).

    Only the two ``folder`` subtrees are compared, so the cost does not grow with the rest of the tree.

    Returns:
        path -> new blob id (None: deleted on the branch): what approving the branch would bring in there.
    """
    into = into or store.branch_ref()
    refs: Any = store.repo.refs
    theirs = refs[branch]
    bases = find_merge_base(store.repo, [refs[into], theirs]) if into in refs else []
    folder = folder.strip("/")

    def subtree(commit: bytes | None) -> bytes | None:
        found = store.snapshot(commit).entry(folder) if commit else None
        return found[1] if found and stat.S_ISDIR(found[0]) else None

    changed = _changes(store, subtree(bases[0] if bases else None), subtree(theirs))  # type: ignore[arg-type]
    return {f"{folder}/{p}": b for p, b in sorted(changed.items())}
