"""`memrepo sync [REMOTE]`: fetch, merge, push; never force (DESIGN.md §8).

The merge is Git's own (``git merge``), so what it does is what a teammate's ``git pull``
does. Files memrepo writes on its own never stay in conflict:

- ``graph/frames/.../<memory-id>.ttl``: both clones extracted the same record (the same text
  remembered twice); both versions describe that record, so the merge keeps the one whose
  blob id sorts first - the same choice whichever clone merges.
- ``graph/decisions/...``: the same run decided the same way in two clones at once: one side's
  file whole (the blob id that sorts first), since a decision file is never edited.
- other ``graph/`` files: the union of both sides' statements.
- ``resource/<name>.md`` added in both clones for two different files: the one whose file
  key sorts last moves to ``resource/<name>-<key8>.md``, where ingesting it after the other
  would have put it (docs/format.md).

Forgets hold (memrepo/tombstones.py): a record or source whose id has an active tombstone on
either side stays out of the merge, whatever the other side did to it meanwhile (an edit, a
modify/delete conflict Git's merge drivers never see, the same text remembered again), and a
record the other side added or edited drops its citations of a forgotten source, so the
merged tree passes the server hook. Each is reported with who forgot it and the commit.

Any other conflict (a core block's same line, a skill, a hand-edited record) is text: the merge
is left in progress with the files named, for the user to resolve; memrepo writes nothing
meanwhile. A merge that fails otherwise is aborted, leaving the clone as it was. Before
memrepo commits a merge it checks the merged tree against both parents: a record or source
either side had is gone only if one side deleted it unchanged from the merge base, or a
tombstone says it was forgotten; otherwise the merge is aborted with the paths named.
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
         notify: Callable[[str], None] | None = None, settled: Callable[[str], bool] | None = None,
         merged: Callable[[], None] | None = None) -> SyncResult:
    """Fetch ``remote``, merge its copy of the current branch, push; retry the push when it raced another.

    ``merged()`` runs after each merge or fast-forward, before the push (the graph catch-up: what the
    merge brought in is extracted and committed, so the push carries it and every clone converges).
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
                if merged is not None:
                    merged()
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
                              "(or `git merge --abort`; `memrepo doctor --fix` finishes a merge left with no "
                              "conflicts if it drops nothing, else aborts it)")
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
    theirs = out(root, "rev-parse", tracking)
    # No rename detection: memrepo's files are named by their ids, so a file deleted on one side (a forget) and a
    # similar one added on the same side are two records, never a rename (Git would apply the other side's edit
    # of the first to the second). Only identical bytes count as a rename, and no two memrepo files are identical
    # (each holds its id); `-X no-renames` is ignored by the ort strategy of Git 2.39.
    done = git(root, "merge", "-q", "--no-ff", "--no-commit", "--no-edit", "-X", "find-renames=100%", "-m", message,
               tracking, check=False)
    try:
        conflicted = _conflicted(root)
        if done.returncode != 0 and not conflicted:
            raise RepositoryError(f"git merge {tracking} failed: {last_line(done.stderr)}")
        if not (git_dir(root) / "MERGE_HEAD").exists():
            raise RepositoryError(f"git merge {tracking} stopped without a merge in progress: "
                                  f"{last_line(done.stderr + done.stdout)}")
        result.resolved += honour_tombstones(root, theirs)
        left: list[str] = []
        deleted: list[str] = []
        for path in _conflicted(root):
            how = _resolve(root, path)
            if how:
                result.resolved.append({"path": path, "how": how})
            elif _stage(root, 2, path) is None or _stage(root, 3, path) is None:
                deleted.append(path)
            else:
                left.append(path)
        if left or deleted:
            raise SyncConflict(_conflict_message(f"{remote}/{branch}", left, deleted, result.resolved),
                               left + deleted)
        check_merged(root, theirs)
        git(root, "commit", "-q", "--no-edit")
    except SyncConflict:
        raise  # left in progress for a person, as the message says
    except BaseException as exc:  # anything else (an interrupt too): no half-merge is left behind
        if (git_dir(root) / "MERGE_HEAD").exists():
            git(root, "merge", "--abort", check=False)
        if isinstance(exc, MemrepoError):
            raise RepositoryError(f"{exc}; the merge was aborted and this clone is as it was") from exc
        raise
    result.merge = out(root, "rev-parse", "HEAD")


def _conflict_message(what: str, left: list[str], deleted: list[str], resolved: list[dict[str, str]]) -> str:
    parts = [f"the merge of {what} stopped"]
    if left:
        parts.append(f"on {len(left)} file(s) changed on both sides: {', '.join(left)}. Edit each to keep what both "
                     "sides meant and remove the <<<<<<< ======= >>>>>>> lines, then `git add` them")
    if deleted:
        parts.append(f"{'and ' if left else 'on '}{len(deleted)} file(s) deleted on one side and changed on the other "
                     f"(no tombstone says it was forgotten): {', '.join(deleted)}. Keep the edit with `git add PATH` "
                     "or the deletion with `git rm PATH`")
    text = "; ".join(parts) + "; then `git commit` and `memrepo sync` again (or `git merge --abort` to give up)"
    return text + (f"; memrepo resolved {len(resolved)} file(s) of its own" if resolved else "")


def _conflicted(root: str) -> list[str]:
    return [p for p in out(root, "diff", "--name-only", "-z", "--diff-filter=U").split("\0") if p]


# --- tombstones and the merged-tree check ------------------------------------------------------------------


def _tree_files(root: str, treeish: str) -> dict[str, str]:
    """path -> blob id of every file in ``treeish`` (a commit or tree)."""
    text = git(root, "ls-tree", "-r", "-z", "--full-tree", treeish).stdout.decode("utf-8", "surrogateescape")
    files: dict[str, str] = {}
    for entry in filter(None, text.split("\0")):
        meta, path = entry.split("\t", 1)
        files[path] = meta.split()[2]
    return files


def _index_files(root: str) -> dict[str, list[tuple[int, str]]]:
    """path -> [(stage, blob id)] of the Git index (stage 0 when merged, 1-3 while in conflict)."""
    text = git(root, "ls-files", "-s", "-z").stdout.decode("utf-8", "surrogateescape")
    files: dict[str, list[tuple[int, str]]] = {}
    for entry in filter(None, text.split("\0")):
        meta, path = entry.split("\t", 1)
        _mode, blob, stage = meta.split()
        files.setdefault(path, []).append((int(stage), blob))
    return files


def _blob(root: str, blob: str) -> bytes:
    return git(root, "cat-file", "blob", blob).stdout


def _id_of(root: str, path: str, blob: str) -> str | None:
    """The record or source id held at ``path`` (from the path where it gives the id, else the file)."""
    from memrepo.tombstones import is_tombstone_path

    if is_tombstone_path(path):
        return None
    name = path.rsplit("/", 1)[-1].removesuffix(".md")
    if path.startswith(rec.SOURCES_FOLDER + "/") and path.endswith(".md"):
        return name
    if not rec.is_record_path(path):
        return None
    if path.startswith("core/"):
        return f"core-{name}"
    if path.startswith(rec.RULES_FOLDER + "/"):
        return rec.rule_id(path)
    if path.startswith(("episodic/", "semantic/", "procedural/experiences/", "vault/")):
        return name
    try:
        return rec.parse(_blob(root, blob), path).id
    except MemrepoError:
        return None


def _active_tombstones(root: str, index: dict[str, list[tuple[int, str]]]) -> dict[str, Any]:
    """id -> the active Tombstone in the merge as it stands (a tombstone added or changed on both sides is
    resolved first: the side whose latest event is later wins, so an undo or a new forget holds)."""
    from memrepo.tombstones import is_tombstone_path, parse_tombstone, serialize_tombstone

    active: dict[str, Any] = {}
    for path, stages in index.items():
        if not is_tombstone_path(path):
            continue
        blobs = dict(stages)
        try:
            if 0 in blobs:
                chosen = parse_tombstone(_blob(root, blobs[0]), path)
            else:
                sides = [parse_tombstone(_blob(root, blobs[s]), path) for s in (2, 3) if s in blobs]
                chosen = max(sides, key=lambda t: (max(t.forgotten_at, t.undone_at or ""), serialize_tombstone(t)))
                _write(root, path, serialize_tombstone(chosen))
        except MemrepoError:
            continue  # a broken tombstone: validate names it; it protects nothing meanwhile
        if chosen.active:
            active[chosen.id] = chosen
    return active


def _forgotten_in(root: str, record_id: str, refs: tuple[str, ...]) -> str:
    """The commit (12 digits) that last wrote ``record_id``'s tombstone on the first of ``refs`` that has it."""
    from memrepo.tombstones import tombstone_path

    for ref in refs:
        found = out(root, "log", "-1", "--format=%h", "--abbrev=12", ref, "--", tombstone_path(record_id))
        if found:
            return found
    return "(unknown commit)"


def honour_tombstones(root: str, theirs: str) -> list[dict[str, str]]:
    """In a merge in progress (the index), keep forgotten ids forgotten; returns {"path", "how"} of what changed.

    Files of an id with an active tombstone are removed (conflicted or not) with the record's graph file;
    records added or changed on either side since the merge base lose their citations of a forgotten source.
    """
    from memrepo.graph.model import graph_path

    index = _index_files(root)
    active = _active_tombstones(root, index)
    if not active:
        return []
    refs = ("HEAD", theirs)
    done: list[dict[str, str]] = []

    def who(record_id: str) -> str:
        t = active[record_id]
        why = f" ({t.reason})" if t.reason else ""
        return f"forgotten by {t.forgotten_by} in commit {_forgotten_in(root, record_id, refs)}{why}"

    resources = any(rec.type_of_id(i) == "resource" for i in active)  # else no resource file need be read
    for path, stages in sorted(index.items()):
        if path.startswith("resource/") and not resources:
            continue
        blob = next((b for s, b in sorted(stages) if s in (0, 2, 3)), None)
        record_id = _id_of(root, path, blob) if blob else None
        if record_id is None or record_id not in active:
            continue
        git(root, "rm", "-q", "-f", "--", path)
        done.append({"path": path, "how": f"{record_id} was {who(record_id)}; kept forgotten, the other side's "
                                          "copy or edit was dropped"})
    for record_id in sorted(active):  # a graph file the other side extracted again goes with its record
        gpath = graph_path(record_id)
        if gpath in index:
            git(root, "rm", "-q", "-f", "--", gpath)
    forgotten_sources = {i for i in active if i.startswith(rec.SOURCE_PREFIX + "-")}
    if forgotten_sources:
        done += _drop_forgotten_citations(root, theirs, forgotten_sources, who)
    return done


def _drop_forgotten_citations(root: str, theirs: str, sources: set[str], who: Callable[[str], str]) -> list[dict[str, str]]:
    import dataclasses

    base = out(root, "merge-base", "HEAD", theirs)
    changed: set[str] = set()
    for side in ("HEAD", theirs):
        text = out(root, "diff", "--name-only", "-z", "--diff-filter=AM", base, side)
        changed.update(p for p in text.split("\0") if p and rec.is_record_path(p))
    index = _index_files(root)
    done = []
    for path in sorted(changed):
        blob = dict(index.get(path, [])).get(0)
        if blob is None:
            continue
        data = _blob(root, blob)
        if not any(s.encode() in data for s in sources):
            continue
        try:
            record = rec.parse(data, path)
        except MemrepoError:
            continue
        dropped = [c for c in record.sources if rec.split_citation(c)[0] in sources]
        if not dropped:
            continue
        _write(root, path, rec.serialize(dataclasses.replace(record, sources=tuple(
            c for c in record.sources if c not in dropped))))
        gone = sorted({rec.split_citation(c)[0] for c in dropped})
        done.append({"path": path, "how": "dropped its citations of " + "; ".join(f"{s} ({who(s)})" for s in gone)})
    return done


def check_merged(root: str, theirs: str) -> None:
    """Raise unless the merge in the index keeps every record and source either parent had.

    A file one parent had may be missing only if the other parent deleted it while this one kept it as the
    merge base had it (a deletion, such as a forget or a dream merge), or an active tombstone covers its id.

    Raises:
        RepositoryError: naming the files the merge would drop (at most five) and the parent that had them.
    """
    base = out(root, "merge-base", "HEAD", theirs)
    sides = {"this clone": _tree_files(root, "HEAD"), "the remote": _tree_files(root, theirs)}
    common = _tree_files(root, base)
    merged = {path: blobs[0][1] for path, blobs in _index_files(root).items()}  # read only: doctor calls this too
    active = None
    dropped: list[str] = []
    for name, files in sides.items():
        other = sides["the remote" if name == "this clone" else "this clone"]
        for path, blob in files.items():
            if path in merged or not (rec.is_record_path(path) or path.startswith(rec.SOURCES_FOLDER + "/")):
                continue
            if path not in other and common.get(path) == blob:
                continue  # the other side deleted it; this side did not touch it
            if active is None:
                active = _active_tombstones(root, {p: [(0, b)] for p, b in merged.items()})
            if _id_of(root, path, blob) in active:
                continue
            dropped.append(f"{path} ({name} had it)")
    if dropped:
        shown = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
        raise RepositoryError(f"the merge would drop {len(dropped)} record file(s) one side had: {shown}")


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
    if path.startswith("graph/decisions/") and path.endswith(".ttl"):
        # Two clones decided the same run the same way at once: a decision file is written once and never
        # edited (the server's `decision` rule), so the merge keeps one side's file whole, never a union.
        from memrepo.graph.rdf import parse_turtle

        parse_turtle(ours, path), parse_turtle(theirs, path)  # a file that does not parse stays in conflict
        return (min((ours, theirs), key=_blob_id),
                "both clones recorded this decision; kept the file whose blob id sorts first")
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
    from memrepo.store.paths import worktree_path

    target = worktree_path(Path(root), path)  # a conflict's path through a pushed link is refused, not followed
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


# --- a merge left in progress by anything else (plain git, a crash) ------------------------------------------


def merge_state(root: str | os.PathLike) -> tuple[list[str], list[str]] | None:
    """The merge in progress at ``root``: (files still in conflict, what committing it as it stands would drop);
    None when no merge is in progress."""
    root = str(root)
    head = git_dir(root) / "MERGE_HEAD"
    if not head.exists():
        return None
    conflicted = _conflicted(root)
    if conflicted:
        return conflicted, []
    theirs = head.read_text(encoding="utf-8").split()[0]
    try:
        check_merged(root, theirs)
    except RepositoryError as exc:
        return [], [str(exc)]
    return [], []


def repair_merge(root: str | os.PathLike) -> list[str]:
    """``memrepo doctor --fix`` for a merge left in progress: finish it when nothing is left in conflict and the
    merged tree keeps every record either side had (forgotten ids kept forgotten), else abort it (both sides
    stay in their commits; ``memrepo sync`` merges again). Messages of what was done."""
    root = str(root)
    state = merge_state(root)
    if state is None:
        return []
    conflicted, dropped = state
    theirs = (git_dir(root) / "MERGE_HEAD").read_text(encoding="utf-8").split()[0]
    if not conflicted and not dropped:
        try:
            resolved = honour_tombstones(root, theirs)
            check_merged(root, theirs)
            git(root, "commit", "-q", "--no-edit")
        except MemrepoError as exc:
            dropped = [str(exc)]
        else:
            extra = f"; {len(resolved)} forgotten file(s) kept out" if resolved else ""
            return [f"finished the Git merge of {theirs[:12]} left in progress (no conflicts, nothing dropped{extra}): "
                    f"commit {out(root, 'rev-parse', '--short=12', 'HEAD')}"]
    git(root, "merge", "--abort")
    why = (f"{len(conflicted)} file(s) were still in conflict ({', '.join(conflicted[:3])})" if conflicted
           else dropped[0])
    return [f"aborted the Git merge of {theirs[:12]} left in progress: {why}; this clone is back at its own commit "
            "and the other side is still in its commits (`memrepo sync` merges again)"]
