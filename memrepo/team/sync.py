"""`memrepo sync [REMOTE]`: fetch, merge, push; never force (DESIGN.md §8).

The merge is Git's own (``git merge``), so what it does is what a teammate's ``git pull``
does. Files memrepo writes on its own never stay in conflict:

- ``graph/frames/.../<memory-id>.ttl``: both clones extracted the same record (the same text
  remembered twice); both versions describe that record, so the merge keeps the one whose
  blob id sorts first - the same choice whichever clone merges.
- other ``graph/`` files (decision files): the union of both sides' statements.
- ``resource/<name>.md`` added in both clones for two different files: the one whose file
  key sorts last moves to ``resource/<name>-<key8>.md``, where ingesting it after the other
  would have put it (docs/format.md).

Any other conflict (a core block, a skill, a hand-edited record) is text: the merge is left
in progress with the files named, for the user to resolve; memrepo writes nothing meanwhile.
A push that loses a race with another is retried after merging again.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memrepo import records as rec
from memrepo.errors import MemrepoError, RepositoryError
from memrepo.team.gitcli import git, git_dir, last_line, out

ATTEMPTS = 5
# What git prints when another push moved the branch first: before this push's advertisement ("fetch
# first", "non-fast-forward"), or between the advertisement and the update of the ref (the remote's ref
# "is at X but expected Y"; a stale lock file on the remote is not a race and is reported).
RACED = re.compile(r"fetch first|non-fast-forward|stale info|cannot lock ref '[^']+': is at [0-9a-f]+ but expected")


class SyncConflict(RepositoryError):
    """The merge stopped on files only a person can resolve (named in the message and in ``files``)."""

    def __init__(self, message: str, files: list[str]):
        super().__init__(message)
        self.files = files


@dataclass
class SyncResult:
    """What ``memrepo sync`` did."""

    remote: str
    branch: str
    fetched: int = 0  # commits the remote had that this clone had not
    merge: str | None = None  # the merge commit (None: nothing to merge, or a fast-forward)
    fast_forward: bool = False
    pushed: int = 0  # commits the remote did not have
    attempts: int = 0
    resolved: list[dict[str, str]] = field(default_factory=list)  # {"path", "how"}: conflicts memrepo resolved
    review_branches: list[str] = field(default_factory=list)  # dream/ branches published
    indexes: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "branch": self.branch, "fetched": self.fetched, "merge": self.merge,
                "fast_forward": self.fast_forward, "pushed": self.pushed, "attempts": self.attempts,
                "resolved": self.resolved, "review_branches": self.review_branches, "indexes": self.indexes}


def sync(root: str | os.PathLike, remote: str | None = None, *, attempts: int = ATTEMPTS,
         notify: Callable[[str], None] | None = None, settled: Callable[[str], bool] | None = None) -> SyncResult:
    """Fetch ``remote``, merge its copy of the current branch, push; retry the push when it raced another.

    Local ``dream/`` branches are then published, except those ``settled(name)`` says were decided.

    Raises:
        SyncConflict: a text conflict (the merge is left in progress; the message says how to finish it).
        RepositoryError: no such remote, a detached HEAD, uncommitted changes, a merge already in
            progress, or a push the remote refused (its message is included).
    """
    root = str(root)
    _check_ready(root)
    branch = out(root, "symbolic-ref", "--short", "HEAD")
    remote = remote or _default_remote(root, branch)
    result = SyncResult(remote, branch)
    for attempt in range(1, attempts + 1):
        result.attempts = attempt
        git(root, "fetch", "-q", "--prune", remote)
        tracking = f"refs/remotes/{remote}/{branch}"
        if git(root, "rev-parse", "--verify", "-q", tracking, check=False).returncode == 0:
            new = int(out(root, "rev-list", "--count", f"HEAD..{tracking}"))
            if new:
                result.fetched += new
                _merge(root, remote, branch, tracking, result)
            ahead = int(out(root, "rev-list", "--count", f"{tracking}..HEAD"))
        else:
            ahead = int(out(root, "rev-list", "--count", "HEAD"))
        if not ahead:
            break
        done = git(root, "push", "--porcelain", "-u", remote, f"refs/heads/{branch}:refs/heads/{branch}", check=False)
        if done.returncode == 0:
            result.pushed = ahead
            break
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        if RACED.search(text):
            if notify:
                notify(f"the push raced another (attempt {attempt} of {attempts}): fetching and merging again")
            continue
        refused = [line.removeprefix("remote:").strip() for line in text.splitlines() if line.startswith("remote:")]
        raise RepositoryError(f"{remote} refused the push of {branch}: "
                              + ("\n  ".join(filter(None, refused)) or last_line(done.stderr)))
    else:
        raise RepositoryError(f"the push to {remote} raced other pushes {attempts} times; run `memrepo sync` again")
    result.review_branches = _publish_review_branches(root, remote, notify, settled)
    return result


def pull(root: str | os.PathLike, remote: str | None = None) -> SyncResult:
    """Fetch ``remote`` and merge its copy of the current branch as :func:`sync` does, without pushing
    (a read-only copy, such as a project's cache of the memory it mounts).

    Raises:
        SyncConflict, RepositoryError: as :func:`sync`.
    """
    root = str(root)
    _check_ready(root)
    branch = out(root, "symbolic-ref", "--short", "HEAD")
    remote = remote or _default_remote(root, branch)
    result = SyncResult(remote, branch)
    git(root, "fetch", "-q", "--prune", remote)
    tracking = f"refs/remotes/{remote}/{branch}"
    if git(root, "rev-parse", "--verify", "-q", tracking, check=False).returncode == 0:
        result.fetched = int(out(root, "rev-list", "--count", f"HEAD..{tracking}"))
        if result.fetched:
            _merge(root, remote, branch, tracking, result)
    return result


def _check_ready(root: str) -> None:
    if (git_dir(root) / "MERGE_HEAD").exists():
        raise RepositoryError("a Git merge is in progress (.git/MERGE_HEAD): resolve the conflicted files "
                              "(`git status`), `git add` them and `git commit`, then run `memrepo sync` again "
                              "(or `git merge --abort`)")
    if git(root, "symbolic-ref", "-q", "HEAD", check=False).returncode != 0:
        raise RepositoryError("HEAD is detached: check out the memory's branch (`git switch main`) before syncing")
    dirty = out(root, "diff", "HEAD", "--name-only", "-z")
    if dirty:
        files = [p for p in dirty.split("\0") if p][:5]
        raise RepositoryError(f"uncommitted changes in {', '.join(files)}: commit them (`git commit -a`) "
                              "or set them aside (`git stash`) before syncing")


def _default_remote(root: str, branch: str) -> str:
    configured = git(root, "config", f"branch.{branch}.remote", check=False).stdout.decode().strip()
    remotes = out(root, "remote").split()
    if configured and configured in remotes:
        return configured
    if "origin" in remotes:
        return "origin"
    if len(remotes) == 1:
        return remotes[0]
    raise RepositoryError("no remote to sync with: add one with `git remote add origin URL`"
                          if not remotes else f"several remotes ({', '.join(remotes)}): name one, `memrepo sync REMOTE`")


def _merge(root: str, remote: str, branch: str, tracking: str, result: SyncResult) -> None:
    if git(root, "merge-base", "--is-ancestor", "HEAD", tracking, check=False).returncode == 0:
        git(root, "merge", "-q", "--ff-only", tracking)
        result.fast_forward = True
        return
    message = f"Sync: merge {remote}/{branch}\n\nmemrepo sync"
    done = git(root, "merge", "-q", "--no-ff", "--no-edit", "-m", message, tracking, check=False)
    if done.returncode == 0:
        result.merge = out(root, "rev-parse", "HEAD")
        return
    conflicted = [p for p in out(root, "diff", "--name-only", "-z", "--diff-filter=U").split("\0") if p]
    if not conflicted:
        raise RepositoryError(f"git merge {tracking} failed: {last_line(done.stderr)}")
    left: list[str] = []
    for path in conflicted:
        how = _resolve(root, path)
        if how:
            result.resolved.append({"path": path, "how": how})
        else:
            left.append(path)
    if left:
        raise SyncConflict(
            f"the merge of {remote}/{branch} stopped on {len(left)} file(s) changed on both sides: "
            + ", ".join(left)
            + ". Edit each to keep what both sides meant and remove the <<<<<<< ======= >>>>>>> lines, "
              "`git add` them and `git commit`, then `memrepo sync` again (or `git merge --abort` to give up)"
            + (f"; memrepo resolved {len(result.resolved)} file(s) of its own" if result.resolved else ""), left)
    git(root, "commit", "-q", "--no-edit")
    result.merge = out(root, "rev-parse", "HEAD")


def _stage(root: str, stage: int, path: str) -> bytes | None:
    done = git(root, "show", f":{stage}:{path}", check=False)
    return done.stdout if done.returncode == 0 else None


def _resolve(root: str, path: str) -> str | None:
    """Resolve one conflicted file memrepo wrote itself; returns how (None: a person must)."""
    ours, theirs = _stage(root, 2, path), _stage(root, 3, path)
    if ours is None or theirs is None:
        return None  # deleted on one side, changed on the other: a person decides
    from memrepo.views import derive, quest

    if derive.is_manifest_path(path):
        manifest = derive.merge_manifests(ours, theirs, path)
        if manifest is not None:
            _write(root, path, manifest)
            return "the same derivation from both clones; kept the manifest that sorts first"
        return None
    if quest.is_quest_path(path):
        merged = quest.merge(_stage(root, 1, path), ours, theirs, path)
        if merged is not None:
            _write(root, path, merged)
            return "quest: resolve histories unioned, counts added up"
        return None
    graph = resolve_graph(path, ours, theirs)
    if graph is not None:
        _write(root, path, graph[0])
        return graph[1]
    if path.startswith("resource/") and path.endswith(".md"):
        return _resolve_resource(root, path, ours, theirs)
    return None


def resolve_graph(path: str, ours: bytes, theirs: bytes) -> tuple[bytes, str] | None:
    """The merge of a graph file changed on both sides, and how; None if ``path`` is not one.

    The same choice whichever clone merges (also used by the ``memrepo merge-driver`` Git runs).

    Raises:
        MemrepoError: if a Turtle file does not parse.
    """
    if path.startswith("graph/frames/") and path.endswith(".ttl"):
        return (min((ours, theirs), key=_blob_id),
                "both clones extracted this record; kept the extraction whose blob id sorts first")
    if path.startswith("graph/") and path.endswith(".ttl"):
        return _union_turtle(ours, theirs, path), "union of both sides' statements"
    return None


def _resolve_resource(root: str, path: str, ours: bytes, theirs: bytes) -> str | None:
    import dataclasses

    try:
        mine, other = rec.parse(ours, path), rec.parse(theirs, path)
    except MemrepoError:
        return None
    keys = (str(mine.extra.get("file_key") or ""), str(other.extra.get("file_key") or ""))
    if not all(keys) or keys[0] == keys[1] or _base_exists(root, path):
        return None  # the same file edited twice, or a record not from ingest: text
    stay, move = (mine, other) if keys[0] < keys[1] else (other, mine)
    key = str(move.extra["file_key"])
    new_path = f"{path[:-len('.md')]}-{key[:8]}.md"
    moved = dataclasses.replace(move, extra={**move.extra, "path": new_path})
    _write(root, path, rec.serialize(stay))
    _write(root, new_path, rec.serialize(moved))
    return f"two different files of this name: the one with file key {key[:8]} moved to {new_path}"


def _base_exists(root: str, path: str) -> bool:
    return _stage(root, 1, path) is not None


def _blob_id(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _union_turtle(ours: bytes, theirs: bytes, path: str) -> bytes:
    from memrepo.graph.rdf import bind_prefixes, parse_turtle, turtle

    graph = bind_prefixes(parse_turtle(ours, path) + parse_turtle(theirs, path))
    names = graph.namespace_manager
    return turtle((s.n3(names), p.n3(names), o.n3(names)) for s, p, o in graph)


def _write(root: str, path: str, data: bytes) -> None:
    target = Path(root) / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    git(root, "add", "--", path)


def _publish_review_branches(root: str, remote: str, notify: Callable[[str], None] | None,
                             settled: Callable[[str], bool] | None) -> list[str]:
    """Push local ``dream/`` branches the remote does not have yet (so teammates can review them)."""
    from memrepo.dream.constants import BRANCH_PREFIX

    local = out(root, "for-each-ref", "--format=%(refname)", f"refs/heads/{BRANCH_PREFIX}").split()
    published = []
    for ref in local:
        name = ref.removeprefix("refs/heads/")
        if git(root, "rev-parse", "--verify", "-q", f"refs/remotes/{remote}/{name}", check=False).returncode == 0:
            continue
        if git(root, "merge-base", "--is-ancestor", ref, "HEAD", check=False).returncode == 0:
            continue  # approved (merged) already
        if settled is not None and settled(name):
            continue  # rejected by someone: deleted on the remote, not to be offered again
        done = git(root, "push", "-q", remote, f"{ref}:{ref}", check=False)
        if done.returncode == 0:
            published.append(name)
        elif notify:
            notify(f"could not publish the review branch {name}: {last_line(done.stderr)}")
    return published
