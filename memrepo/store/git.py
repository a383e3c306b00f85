"""The Git object store under a memory repository (dulwich).

Every write is one commit built directly in the object store: only the trees on
the changed paths are rewritten (bottom-up versioning), and the branch moves by
compare-and-swap. A writer that loses the race re-runs its change on the new tip,
so concurrent writers lose nothing. When the repository has a work tree, the
changed files and their index entries are brought up to date afterwards so that
``git status`` stays clean; a write killed in between is completed by the next
command (:mod:`memrepo.store.recovery`).
"""

from __future__ import annotations

import fcntl
import os
import random
import re
import shutil
import signal
import subprocess
import stat
import threading
import time
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from dulwich.errors import NotGitRepository
from dulwich.file import FileLocked
from dulwich.objects import Commit, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from memrepo.errors import NotFoundError, RepositoryError
from memrepo.store.objects import Damage, RawObject, RawTree, read_commit, read_raw, write_loose
from memrepo.store.paths import PathChecker
from memrepo.store.recovery import (INDEX_LOCK_STALE, INDEX_LOCK_WAIT, PENDING_DIR, REF_LOCK_STALE, PendingSync,
                                    remove_if_unchanged)

FILE_MODE = 0o100644
TREE_MODE = 0o040000
DEFAULT_BRANCH = b"refs/heads/main"
STATE_DIR = "memrepo"  # under the Git directory: indexes, locks, caches (never tracked)
PACK_THRESHOLD = 512  # write objects as one pack above this many
DIFF_CACHE_ENTRIES = 16  # diffs between two commits remembered per store
DIFF_CACHE_MAX_FILES = 5000  # larger diffs (a pull, a rebuild) are not kept

Changes = Mapping[str, bytes | None]
ChangeFn = Callable[["Snapshot"], Changes]


@dataclass(frozen=True)
class CommitInfo:
    """One commit as memrepo reports it."""

    id: str
    message: str
    author: str
    time: int
    timezone: int
    parents: tuple[str, ...]

    @property
    def summary(self) -> str:
        return self.message.splitlines()[0] if self.message else ""

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "message": self.message,
            "author": self.author,
            "time": self.time,
            "timezone": self.timezone,
            "parents": list(self.parents),
        }


class Snapshot:
    """Read-only view of one commit's tree: reads see exactly that commit."""

    def __init__(self, repo: Repo, commit_id: bytes | None, trees: "TreeCache | None" = None):
        self._repo = repo
        self.commit_id = commit_id
        self.tree_id: bytes | None = read_commit(repo, commit_id).tree if commit_id else None
        self._trees = trees if trees is not None else TreeCache(repo.object_store)

    @property
    def commit(self) -> str | None:
        return self.commit_id.decode() if self.commit_id else None

    def _tree(self, tree_id: bytes) -> RawTree:
        return self._trees.get(tree_id)

    def entry(self, path: str) -> tuple[int, bytes] | None:
        """(mode, sha) of ``path`` in this commit, or None if it does not exist."""
        if self.tree_id is None:
            return None
        mode, sha = TREE_MODE, self.tree_id
        for name in path.strip("/").split("/"):
            if not name:
                continue
            if not stat.S_ISDIR(mode):
                return None
            tree = self._tree(sha)
            try:
                mode, sha = tree[name.encode("utf-8")]
            except KeyError:
                return None
        return mode, sha

    def blob_id(self, path: str) -> str | None:
        found = self.entry(path)
        if found is None or stat.S_ISDIR(found[0]):
            return None
        return found[1].decode()

    def read(self, path: str) -> bytes | None:
        """Bytes of the file at ``path`` in this commit, or None."""
        found = self.entry(path)
        if found is None or stat.S_ISDIR(found[0]):
            return None
        return read_raw(self._repo.object_store, found[1], path)[1]

    def read_blob(self, blob_id: str) -> bytes:
        return read_raw(self._repo.object_store, blob_id.encode())[1]

    def exists(self, path: str) -> bool:
        return self.entry(path) is not None

    def walk(self, prefix: str = "") -> Iterator[tuple[str, str]]:
        """Yield (path, blob id) of every file under ``prefix`` in path order."""
        found = self.entry(prefix) if prefix else ((TREE_MODE, self.tree_id) if self.tree_id else None)
        if found is None:
            return
        mode, sha = found
        base = prefix.strip("/")
        if not stat.S_ISDIR(mode):
            yield base, sha.decode()
            return
        yield from self._walk_tree(sha, base)

    def _walk_tree(self, tree_id: bytes, base: str) -> Iterator[tuple[str, str]]:
        for item in self._tree(tree_id).iteritems():
            name = item.path.decode("utf-8", "surrogateescape")
            path = f"{base}/{name}" if base else name
            if stat.S_ISDIR(item.mode):
                yield from self._walk_tree(item.sha, path)
            elif stat.S_ISREG(item.mode):
                yield path, item.sha.decode()


class GitStore:
    """A Git repository used as a memory store (work tree optional)."""

    def __init__(self, repo: Repo):
        self.repo = repo
        self.root = Path(repo.path)
        self.bare = repo.bare
        self.state_dir = Path(repo.controldir()) / STATE_DIR
        self.trees = TreeCache(repo.object_store)
        # changed_files results by (old, new) commit: commits are immutable, and one write asks for the
        # same diff once per derived index and again in the graph step.
        self._diffs: "OrderedDict[tuple[str | None, str | None], list[tuple[str, str | None, str | None]]]" = OrderedDict()
        self._diffs_lock = threading.Lock()
        # Messages for the user about work done besides what was asked (a repaired work tree, a commit whose
        # work-tree sync failed); the CLI prints them on stderr.
        self.notices: list[str] = []
        # Fault injection (tests/test_faults.py): names of the points at which this process kills itself.
        self.kill_at: frozenset[str] = frozenset()
        self._writing = threading.local()  # how deep this thread is in write_lock()
        self._refs_checked: tuple | None = None  # the control files' identity when check_refs last passed
        # Close the packs at exit if the caller did not: dulwich's own finalizers would run during
        # interpreter shutdown and print "sys.meta_path is None" tracebacks.
        self._closer = weakref.finalize(self, repo.close)

    # --- opening -------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike) -> "GitStore":
        try:
            repo = Repo(str(path))
        except NotGitRepository as exc:
            raise RepositoryError(f"{path}: not a Git repository") from exc
        except Exception as exc:  # dulwich reads .git/config (and HEAD) here: name the damaged file, not a traceback
            raise _unopenable(Path(path), exc) from exc
        return cls(repo)

    @classmethod
    def init(cls, path: str | os.PathLike, *, bare: bool = False) -> "GitStore":
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        if bare:
            repo = Repo.init_bare(str(target), default_branch=b"main")
        else:
            repo = Repo.init(str(target), default_branch=b"main")
            config = repo.get_config()
            # The index of a large memory is big; a split index lets git rewrite only a small delta.
            config.set((b"core",), b"splitIndex", True)
            config.write_to_path()
        return cls(repo)

    def close(self) -> None:
        self._closer()

    # --- refs ----------------------------------------------------------------

    def branch_ref(self) -> bytes:
        """The branch HEAD points to (writes go there).

        Raises:
            DamagedRepositoryError: HEAD, the branch ref or packed-refs is damaged, or the branch is missing
                in a repository with history (:mod:`memrepo.store.control`).
        """
        self.check_refs()
        chain, _ = self.repo.refs.follow(Ref(b"HEAD"))
        ref = chain[-1]
        if ref == b"HEAD" or not ref.startswith(b"refs/heads/"):
            raise RepositoryError("HEAD is detached: check out a branch before writing memories")
        return ref

    def head(self) -> bytes | None:
        """Commit id HEAD points to, or None before the first commit.

        Raises:
            DamagedRepositoryError: HEAD, the branch ref or packed-refs is damaged, or the branch is missing
                in a repository with history (it is not a new repository then).
        """
        self.check_refs()
        try:
            return self.repo.refs[Ref(b"HEAD")]
        except KeyError:
            return None

    def check_refs(self) -> None:
        """Raise :class:`DamagedRepositoryError` if HEAD, its branch ref or packed-refs is damaged (see
        :func:`memrepo.store.control.ref_damage`); checked again only when one of those files changed."""
        from memrepo.store.control import DamagedRepositoryError, ref_damage

        key = _refs_key(self.git_dir)
        if key == self._refs_checked:
            return
        found = ref_damage(self.git_dir, bare=self.bare)
        if found is not None:
            raise DamagedRepositoryError(*found)
        self._refs_checked = key

    def resolve(self, rev: str | None) -> bytes | None:
        """Commit id of ``rev`` (sha, branch, tag, ``main~3``...); HEAD when rev is None."""
        if rev is None or rev == "HEAD":
            return self.head()
        if not rev.strip():
            raise NotFoundError("an empty revision names no commit (give a commit, branch, tag or main~3)")
        from dulwich.objectspec import parse_commit

        match = re.fullmatch(r"(.+?)((?:[~^]\d*)*)", rev)
        base, suffix = (match.group(1), match.group(2)) if match else (rev, "")
        try:
            commit = parse_commit(self.repo, base.encode())
            # dulwich resolves names and shas; walk the ~N / ^N ancestry suffixes ourselves.
            for op, num in re.findall(r"([~^])(\d*)", suffix):
                n = int(num) if num else 1
                if op == "~":
                    for _ in range(n):
                        commit = _commit(self.repo, commit.parents[0])
                elif n:
                    commit = _commit(self.repo, commit.parents[n - 1])
            return commit.id
        except (KeyError, ValueError, IndexError, NotImplementedError) as exc:
            raise NotFoundError(f"revision {rev!r} not found") from exc

    def snapshot(self, rev: str | bytes | None = None) -> Snapshot:
        commit_id = rev if isinstance(rev, bytes) else self.resolve(rev)
        return Snapshot(self.repo, commit_id, self.trees)  # trees never change: parsed ones are shared

    def create_branch(self, name: str, at: bytes) -> bool:
        """Create ``refs/heads/<name>`` at commit ``at``; False (nothing changed) if it already exists."""
        return bool(self.repo.refs.add_if_new(Ref(b"refs/heads/" + name.encode("utf-8")), ObjectID(at)))

    def changed_files(self, old_commit: str | None, new_commit: str | None) -> list[tuple[str, str | None, str | None]]:
        """(path, old blob, new blob) of each file that differs between two commits (None: the empty tree).

        Only the trees on changed paths are read. A file that moved is a removal and an addition.
        Small diffs are remembered (commits never change), so asking again costs nothing.
        """
        key = (old_commit, new_commit)
        with self._diffs_lock:
            found = self._diffs.get(key)
            if found is not None:
                self._diffs.move_to_end(key)
                return list(found)
        out = self._changed_files(old_commit, new_commit)
        if len(out) <= DIFF_CACHE_MAX_FILES:
            with self._diffs_lock:
                self._diffs[key] = out
                while len(self._diffs) > DIFF_CACHE_ENTRIES:
                    self._diffs.popitem(last=False)
        return list(out)

    def _changed_files(self, old_commit: str | None, new_commit: str | None) -> list[tuple[str, str | None, str | None]]:
        old_tree = self.snapshot(old_commit.encode()).tree_id if old_commit else None
        new_tree = self.snapshot(new_commit.encode()).tree_id if new_commit else None
        out: list[tuple[str, str | None, str | None]] = []
        self._diff_trees(old_tree, new_tree, "", out)
        out.sort()
        return out

    def _diff_trees(self, old_id: bytes | None, new_id: bytes | None, prefix: str,
                    out: list[tuple[str, str | None, str | None]]) -> None:
        """Append the files that differ between two trees (the parsed trees of the cache; identical subtrees
        skipped). The entries that differ are found by a set difference of the two trees' entries, so a
        month folder of a thousand files costs a C-speed comparison, not a Python loop over its entries."""
        if old_id == new_id:
            return
        old = self.trees.get(old_id).entries if old_id else {}
        new = self.trees.get(new_id).entries if new_id else {}
        for name in {name for name, _entry in old.items() ^ new.items()}:
            before, after = old.get(name), new.get(name)
            path = prefix + name.decode("utf-8", "surrogateescape")
            old_dir = before is not None and stat.S_ISDIR(before[0])
            new_dir = after is not None and stat.S_ISDIR(after[0])
            if old_dir or new_dir:
                self._diff_trees(before[1] if old_dir else None, after[1] if new_dir else None,  # type: ignore[index]
                                 path + "/", out)
            old_blob = before[1].decode() if before is not None and not old_dir else None
            new_blob = after[1].decode() if after is not None and not new_dir else None
            if old_blob is not None or new_blob is not None:
                out.append((path, old_blob, new_blob))

    def branches(self) -> dict[str, str]:
        out = {}
        for ref, sha in self.repo.refs.as_dict(Ref(b"refs/heads/")).items():
            out[ref.decode()] = sha.decode()
        return out

    # --- refs and objects: what layers above the store need, so that none of them imports dulwich ---

    @property
    def git_dir(self) -> Path:
        """The repository's Git directory (``.git``; the repository itself when bare)."""
        return Path(self.repo.controldir())

    def damaged_objects(self) -> Iterator[Damage]:
        """Every object reachable from a ref or HEAD that is missing, unreadable or malformed
        (:func:`memrepo.store.objects.walk_objects`)."""
        from memrepo.store.objects import walk_objects

        return walk_objects(self.repo)

    def ref(self, name: str) -> str | None:
        """The object id the full ref ``name`` (``refs/heads/...``, ``refs/remotes/...``) points to, or None."""
        key = Ref(name.encode("utf-8"))
        return self.repo.refs[key].decode() if key in self.repo.refs else None

    def refs_under(self, prefix: str) -> dict[str, str]:
        """Full ref name -> object id of every ref whose name starts with ``prefix`` (a folder: ends with ``/``)."""
        base = prefix.encode("utf-8")
        out: dict[str, str] = {}
        for name in sorted(self.repo.refs.allkeys()):
            if name.startswith(base) and name != b"HEAD":
                try:
                    out[name.decode("utf-8", "surrogateescape")] = self.repo.refs[name].decode()
                except KeyError:  # a symbolic ref to nothing
                    continue
        return out

    def add_ref(self, name: str, at: str | bytes) -> bool:
        """Create the full ref ``name`` at ``at``; False (nothing changed) if it already exists."""
        target = at if isinstance(at, bytes) else at.encode()
        return bool(self.repo.refs.add_if_new(Ref(name.encode("utf-8")), ObjectID(target)))

    def delete_ref(self, name: str) -> bool:
        """Remove the full ref ``name``; False if there was none."""
        key = Ref(name.encode("utf-8"))
        if key not in self.repo.refs:
            return False
        return bool(self.repo.refs.remove_if_equals(key, None))

    def has_object(self, object_id: str) -> bool:
        """True if the object database holds ``object_id`` (40 hex digits)."""
        return ObjectID(object_id.encode()) in self.repo.object_store

    def commit_of(self, object_id: str) -> CommitInfo:
        """The commit ``object_id`` (raises KeyError if there is none)."""
        return commit_info(_commit(self.repo, object_id.encode()))

    def commits_between(self, include: str, exclude: str | None = None, *,
                        limit: int | None = None) -> list[CommitInfo]:
        """Commits reachable from ``include`` and not from ``exclude``, newest first, at most ``limit``."""
        walker = self.repo.get_walker(include=[ObjectID(include.encode())], exclude=[ObjectID(exclude.encode())] if exclude else None,
                                      max_entries=limit)
        return [commit_info(entry.commit) for entry in walker]

    # --- writing -------------------------------------------------------------

    def commit(self, changes: Changes | ChangeFn, message: str, *, author: bytes | None = None,
               ref: bytes | None = None, allow_empty: bool = False, sync_worktree: bool = True) -> bytes | None:
        """Write one commit under :meth:`write_lock` (see :meth:`_commit`, which says what it does)."""
        with self.write_lock():
            return self._commit(changes, message, author=author, ref=ref, allow_empty=allow_empty,
                                sync_worktree=sync_worktree)

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """The one lock of a clone's writes: every memrepo commit (CLI, Python API, MCP, hooks) and
        ``memrepo sync`` hold it (flock on ``write.lock`` in the state dir), so a sync's ``git merge`` never
        runs while a write moves HEAD or the Git index. Re-entrant within a thread (a sync's catch-up
        commits under the sync's hold); other threads and processes wait."""
        depth = getattr(self._writing, "depth", 0)
        if depth:
            self._writing.depth = depth + 1
            try:
                yield
            finally:
                self._writing.depth = depth
            return
        with self.lock("write"):
            self._writing.depth = 1
            try:
                yield
            finally:
                self._writing.depth = 0

    def _commit(
        self,
        changes: Changes | ChangeFn,
        message: str,
        *,
        author: bytes | None = None,
        ref: bytes | None = None,
        allow_empty: bool = False,
        sync_worktree: bool = True,
    ) -> bytes | None:
        """Write one commit with ``changes`` (path -> bytes, or None to delete) and move the branch.

        ``changes`` may be a function of the tip snapshot; it is called again on the
        new tip if another writer moved the branch in between (compare-and-swap), so a
        read-modify-write done inside it is never applied to an old tip.

        Once the branch has moved the commit stands: a failure to sync the work tree
        afterwards is added to :attr:`notices` (the next command completes the sync),
        never raised.

        Returns:
            The new commit id, or None if the changes left the tree as it was.
        """
        self.refuse_during_merge()
        ref = Ref(ref or self.branch_ref())
        author = author or self.identity()
        pending = self.begin_sync() if sync_worktree and not self.bare else None
        try:
            attempt = 0
            while True:
                attempt += 1
                old = self.repo.refs[ref] if ref in self.repo.refs else None
                if old is None:
                    self._refuse_new_root(ref)
                snap = Snapshot(self.repo, old, self.trees)
                wanted = changes(snap) if callable(changes) else changes
                if pending is not None:  # refused before anything lands: the sync would write through a link
                    checker = PathChecker(self.root)
                    for path in wanted:
                        checker.check(path)
                new_tree, objects = build_tree(self.repo.object_store, snap.tree_id, wanted, self.trees)
                if new_tree == snap.tree_id and not allow_empty:
                    return None
                commit = Commit()
                commit.tree = new_tree
                commit.parents = [old] if old else []
                commit.author = commit.committer = author
                commit.commit_time = commit.author_time = int(time.time())
                commit.commit_timezone = commit.author_timezone = 0
                commit.encoding = b"UTF-8"
                commit.message = message.encode("utf-8") if message.endswith("\n") else (message + "\n").encode("utf-8")
                objects.append(commit)
                self._add_objects(objects)
                if pending is not None:
                    pending.record(list(wanted))  # before the branch moves: a kill after it leaves this behind
                self.checkpoint("before-swap")
                if self._swap(ref, old, commit.id, message):
                    break
                if attempt > 200:
                    raise RepositoryError(f"could not update {ref.decode()}: too many concurrent writers")
                time.sleep(random.uniform(0.001, 0.01) * min(attempt, 10))
            self.checkpoint("after-commit-before-sync")
            if pending is not None and self._is_head(ref):
                # Files new in this commit can go straight into the split index (see sync_worktree).
                added = {p for p, data in wanted.items() if data is not None and not snap.exists(p)}
                self.finish_sync(pending, list(wanted), commit.id, added, contents=wanted)
            return commit.id
        finally:
            if pending is not None:
                pending.done()

    def merge_in_progress(self) -> bool:
        """True while a ``git merge`` (or ``git pull``) waits for its conflicts to be resolved (MERGE_HEAD)."""
        return not self.bare and (Path(self.repo.controldir()) / "MERGE_HEAD").exists()

    def refuse_during_merge(self) -> None:
        """Raises RepositoryError during an unresolved merge: a commit then would bury the conflict."""
        if self.merge_in_progress():
            raise RepositoryError(
                "a Git merge is in progress (.git/MERGE_HEAD): resolve the conflicted files (`git status` lists "
                "them), `git add` them and `git commit`, or `git merge --abort`; memrepo writes nothing until then "
                "(`memrepo doctor --fix` finishes a merge left with no conflicts if it drops nothing, else aborts it)")

    def begin_sync(self) -> PendingSync:
        """Start a write that will sync the work tree: its pending file (see :mod:`memrepo.store.recovery`)."""
        return PendingSync(self.state_dir / PENDING_DIR)

    def finish_sync(self, pending: PendingSync, paths: list[str], commit_id: bytes, added: set[str] | None = None,
                    contents: Mapping[str, bytes | None] | None = None) -> None:
        """Sync ``paths`` after ``commit_id`` landed; on failure say so in :attr:`notices` and leave ``pending``
        for the next command to complete."""
        try:
            self.sync_worktree(paths, added, pending=pending, contents=contents)
        except Exception as exc:  # the commit stands whatever happens to the work tree
            pending.abandon()
            self.notices.append(
                f"commit {commit_id.decode()[:12]} landed, but the work tree and Git index were not updated "
                f"({exc}); the next memrepo command (or `memrepo doctor --fix`) brings them to HEAD")
            return
        pending.done()

    def checkpoint(self, point: str) -> None:
        """Kill this process at ``point`` when asked to (fault injection: tests/test_faults.py, benchmarks/crash.py)."""
        if point in self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def recover(self) -> list[str]:
        """Complete the work-tree syncs of writers that were killed; messages of what was done (also in notices)."""
        from memrepo.store.recovery import recover_pending

        messages = recover_pending(self)
        if not self.bare:
            from memrepo.store.control import INDEX_FIX, index_damage

            damage = index_damage(self.git_dir, self.root)  # header and checksum: memrepo's reads never use it
            if damage:
                messages.append(f".git/index: {damage}: `git status` and `git commit` fail until it is rebuilt; "
                                f"{INDEX_FIX}")
        self.notices.extend(messages)
        return messages

    def _refuse_new_root(self, ref: bytes) -> None:
        """Raise if ``ref`` is missing in a repository that has history: a root commit there would hide it."""
        from memrepo.store.control import DamagedRepositoryError, has_history, restore_command

        if has_history(self.git_dir, ref) and Ref(ref) not in self.repo.refs:  # re-read: a first writer may have landed
            name = ref.decode("utf-8", "replace")
            raise DamagedRepositoryError(f".git/{name}", (
                "is missing, but this repository has history: memrepo does not start a new root commit there "
                f"(it would hide every memory); {restore_command(self.git_dir, ref)}"))

    def _swap(self, ref: bytes, old: bytes | None, new: bytes, message: str) -> bool:
        """Compare-and-swap ``ref`` from ``old`` to ``new``; False if another writer won.

        memrepo writers swap under the ``refs`` flock, so a ref lock seen while holding it belongs to a
        Git command (held for microseconds) or to a killed process: one that stays for
        :data:`REF_LOCK_STALE` seconds is removed with a notice.

        Raises:
            RepositoryError: the ref lock kept changing hands for longer than that (naming the lock).
        """
        reflog = b"memrepo: " + message.splitlines()[0].encode()
        lock_path = Path(self.repo.controldir()) / (ref.decode() + ".lock")
        started = time.monotonic()
        with self.lock("refs"):
            while True:
                try:
                    if old is None:
                        return self.repo.refs.add_if_new(Ref(ref), ObjectID(new), message=reflog)
                    return self.repo.refs.set_if_equals(Ref(ref), ObjectID(old), ObjectID(new), message=reflog)
                except FileLocked:
                    pass
                try:
                    seen = lock_path.lstat()
                except FileNotFoundError:
                    continue
                held = time.time() - seen.st_mtime
                if held > REF_LOCK_STALE and remove_if_unchanged(lock_path, seen):
                    self.notices.append(f"removed a stale {ref.decode()}.lock ({held:.0f} s old, left by a killed "
                                        "process)")
                    continue
                if time.monotonic() - started > REF_LOCK_STALE + 1:
                    raise RepositoryError(
                        f"could not update {ref.decode()}: {ref.decode()}.lock is held by another process (waited "
                        f"{REF_LOCK_STALE + 1:.0f} s); if no git command is running, remove it")
                time.sleep(random.uniform(0.005, 0.02))

    def _add_objects(self, objects: list) -> None:
        """Store ``objects`` (:class:`RawObject` or dulwich objects): loose, or as one pack when there are many."""
        store = self.repo.object_store
        fresh = [o for o in objects if o.id not in store]
        if len(fresh) > PACK_THRESHOLD:
            store.add_objects([(o.to_shafile() if isinstance(o, RawObject) else o, None) for o in fresh])
            return
        objects_dir = Path(store.path)
        for obj in fresh:
            if not isinstance(obj, RawObject):
                obj = RawObject(obj.type_name, obj.as_raw_string(), obj.id)
            write_loose(objects_dir, obj, before_rename=self._object_written)

    def _object_written(self) -> None:
        self.checkpoint("mid-object-write")

    def gc(self, progress: Callable[[str], None] | None = None) -> dict[str, int]:
        """Pack every loose object and every pack file into one pack, like ``git gc`` does for objects.

        A bulk commit writes a pack of its own, and a lookup probes the packs one after another, so a
        history built by many bulk commits reads slower than the same history in one pack. Commits and
        reads may run meanwhile: only the loose objects and packs seen at the start are removed, after
        the new pack holding them is written. Returns the pack and loose-object counts before and after.
        """
        store = self.repo.object_store

        def counts() -> tuple[int, int]:
            return len(store.packs), sum(1 for _ in store._iter_loose_objects())

        with self.lock("gc"):
            packs, loose = counts()
            packed = store.repack(progress=progress) if packs > 1 or loose else 0  # one pack: nothing to do
            packs_after, loose_after = counts()
        return {"packs_before": packs, "loose_before": loose, "objects": packed, "packs_after": packs_after,
                "loose_after": loose_after}

    def _is_head(self, ref: bytes) -> bool:
        try:
            return self.branch_ref() == ref
        except RepositoryError:
            return False

    def identity(self) -> bytes:
        config = self.repo.get_config_stack()
        try:
            name = config.get((b"user",), b"name")
            email = config.get((b"user",), b"email")
            return name + b" <" + email + b">"
        except KeyError:
            return b"memrepo <memrepo@localhost>"

    # --- work tree -----------------------------------------------------------

    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An inter-process lock held while the block runs (flock on a file in the state dir)."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / f"{name}.lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def sync_worktree(self, paths: list[str], added: set[str] | None = None, *, pending: PendingSync | None = None,
                      contents: Mapping[str, bytes | None] | None = None) -> None:
        """Bring ``paths`` in the work tree and Git index to the branch tip.

        Runs under a lock and always copies the *current* tip, so whichever writer
        syncs last leaves the newest content on disk. Files ``added`` by the commit go
        straight into the split index that ``memrepo init`` enables, without reading
        the shared index (:mod:`memrepo.store.splitindex`); other changes go through
        ``git update-index`` when git is installed, through dulwich otherwise. ``contents``: the bytes the
        caller just committed, written as they are where the tip still holds them (not read back from the
        object store).

        Raises:
            RepositoryError: ``.git/index.lock`` stayed held for :data:`INDEX_LOCK_WAIT` seconds.
            OutsideRepositoryError: a path would leave the work tree or pass through a symbolic link
                (:mod:`memrepo.store.paths`); nothing is written then.
        """
        with self.lock("worktree"):
            snap = Snapshot(self.repo, self.head(), self.trees)
            present: dict[str, str] = {}
            checker = PathChecker(self.root)
            targets = {path: checker.check(path) for path in paths}  # all of them before the first write
            for path in paths:
                target = targets[path]
                blob_id = snap.blob_id(path)
                if blob_id is None:
                    if target.exists():
                        target.unlink()
                        _prune_empty_dirs(target.parent, self.root)
                    continue
                present[path] = blob_id
                target.parent.mkdir(parents=True, exist_ok=True)
                data = contents.get(path) if contents is not None else None
                if data is None or RawObject.make(b"blob", data).id.decode() != blob_id:
                    data = snap.read_blob(blob_id)
                if not _create(target, data):  # a file that is there is replaced whole, never rewritten in place
                    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                    tmp.write_bytes(data)
                    os.replace(tmp, target)
                self.checkpoint("mid-sync")
            if added is not None and set(paths) == set(present) <= added:
                status = self._split_index_add(present, pending)
                if status == "written":
                    return
            else:
                status = "unsupported"
            if shutil.which("git"):
                self._git_update_index(paths, resplit=status == "full")
            else:
                self._dulwich_update_index(paths, present)

    def _index_locked(self, started: float) -> None:
        """``.git/index.lock`` is held: clear it if stale, else wait a little; raise once the wait is over."""
        lock = Path(self.repo.controldir()) / "index.lock"
        try:
            seen = lock.lstat()
        except FileNotFoundError:
            return
        from memrepo.store.recovery import clear_orphaned_index_lock

        cleared = clear_orphaned_index_lock(self)  # a killed memrepo writer's: no need to wait
        if cleared:
            self.notices.extend(cleared)
            return
        held = time.time() - seen.st_mtime
        if held > INDEX_LOCK_STALE and remove_if_unchanged(lock, seen):
            self.notices.append(f"removed a stale .git/index.lock ({held:.0f} s old)")
            return
        if time.monotonic() - started > INDEX_LOCK_WAIT:
            raise RepositoryError(f".git/index.lock is held by another process (waited {INDEX_LOCK_WAIT:.0f} s); "
                                  "is a git command running?")
        time.sleep(0.01)

    def _split_index_add(self, present: dict[str, str], pending: PendingSync | None = None) -> str:
        """New files straight into the split index (memrepo/store/splitindex.py); its status."""
        from binascii import unhexlify

        from memrepo.store.splitindex import IndexLocked, add_entries, encode_entry

        entries = {}
        for path, blob_id in present.items():
            key = path.encode("utf-8")
            entries[key] = encode_entry(key, unhexlify(blob_id), os.lstat(self.root / path), FILE_MODE)

        def locked(st: os.stat_result) -> None:
            # This process holds index.lock now: name it in the pending file, so that if this process is
            # killed before releasing it, the next command knows the lock is memrepo's and removes it.
            if pending is not None:
                pending.record(pending.paths, (st.st_ino, st.st_ctime_ns))
            self.checkpoint("holding-index-lock")

        started = time.monotonic()
        while True:
            try:
                return add_entries(Path(self.repo.controldir()), entries, on_locked=locked)
            except IndexLocked:
                self._index_locked(started)

    def _git_update_index(self, paths: list[str], resplit: bool = False) -> None:
        payload = b"".join(p.encode("utf-8") + b"\0" for p in paths)
        # resplit: the split part of the index is full, so this update also rewrites the shared index
        command = ["git", *(["-c", "splitIndex.maxPercentChange=0"] if resplit else []),
                   "update-index", "--add", "--remove", "-z", "--stdin"]
        started = time.monotonic()
        while True:
            proc = subprocess.run(command, cwd=self.root, input=payload, capture_output=True)
            if proc.returncode == 0:
                return
            if b"index.lock" not in proc.stderr:
                raise RepositoryError(f"git update-index failed: {proc.stderr.decode(errors='replace').strip()}")
            self._index_locked(started)

    def _dulwich_update_index(self, paths: list[str], present: dict[str, str]) -> None:
        from dulwich.index import index_entry_from_stat

        index = self.repo.open_index()
        for path in paths:
            key = path.encode("utf-8")
            if path in present:
                st = os.lstat(self.root / path)
                index[key] = index_entry_from_stat(st, present[path].encode(), FILE_MODE)
            elif key in index:
                del index[key]
        started = time.monotonic()
        while True:
            try:
                index.write()
                return
            except FileLocked:
                self._index_locked(started)

    def dirty_paths(self, paths: list[str]) -> list[str]:
        """Paths among ``paths`` whose work-tree file differs from the branch tip (uncommitted edits).

        Compares file bytes with the committed blobs, so its cost is that of the
        paths named, not of the repository. A file holding an older committed version
        is not an edit (the sync of a concurrent or killed writer is behind).
        """
        if self.bare:
            return []
        from memrepo.store.recovery import blob_of_file, committed_before

        snap = Snapshot(self.repo, self.head(), self.trees)
        dirty = []
        checker = PathChecker(self.root)
        for path in paths:
            target = checker.check(path)  # a link is refused, not read through
            if not target.exists():
                continue
            committed = snap.read(path)
            if committed is None or target.read_bytes() != committed:
                # An older committed version is a copy another writer has not synced yet (or a killed one
                # never did), not an edit: it is overwritten with the tip's version by the sync.
                if not committed_before(self, path, blob_of_file(target)):
                    dirty.append(path)
        return dirty

    # --- history -------------------------------------------------------------

    def log(self, path: str | None = None, *, rev: str | None = None, limit: int | None = None) -> list[CommitInfo]:
        """Commits reachable from ``rev`` (HEAD), newest first; only those touching ``path`` if given."""
        tip = self.resolve(rev)
        if tip is None:
            return []
        walker = self.repo.get_walker(
            include=[ObjectID(tip)], paths=[path.encode()] if path else None, max_entries=limit
        )
        return [commit_info(entry.commit) for entry in walker]

    def diff(self, commit_id: str) -> list[tuple[str, str | None, str | None]]:
        """(path, old blob, new blob) for each file a commit changed against its first parent."""
        from dulwich.diff_tree import tree_changes

        commit = _commit(self.repo, commit_id.encode())
        parent_tree = _commit(self.repo, commit.parents[0]).tree if commit.parents else None
        out: list[tuple[str, str | None, str | None]] = []
        for change in tree_changes(self.repo.object_store, parent_tree, commit.tree):
            old = change.old if change.old and change.old.path else None
            new = change.new if change.new and change.new.path else None
            entry = new or old
            out.append(
                (
                    (entry.path if entry else b"").decode("utf-8", "surrogateescape"),
                    old.sha.decode() if old else None,
                    new.sha.decode() if new else None,
                )
            )
        return out


def _refs_key(git_dir: Path) -> tuple:
    """What identifies the state of HEAD, its branch ref and packed-refs (their bytes or stat)."""
    def ident(path: Path) -> tuple[int, int, int] | None:
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    try:
        head = (git_dir / "HEAD").read_bytes()[:512]
    except OSError:
        head = b""
    branch = head[4:].strip().decode("ascii", "replace") if head.startswith(b"ref:") else ""
    loose = ident(git_dir / branch) if branch.startswith("refs/") and ".." not in branch else None
    return head, loose, ident(git_dir / "packed-refs")


def _unopenable(path: Path, exc: Exception) -> RepositoryError:
    """The error for a repository dulwich cannot open: the damaged file named with its fix."""
    from memrepo.store.control import DamagedRepositoryError, config_damage

    git_dir = path / ".git" if (path / ".git").is_dir() else path
    problem = config_damage(git_dir)
    if problem:
        return DamagedRepositoryError(".git/config", problem)
    return RepositoryError(f"{path}: the Git repository cannot be opened ({type(exc).__name__}: {exc}); "
                           "`git status` there names the damaged file")


def _commit(repo: Repo, sha: bytes) -> Commit:
    """Commit ``sha`` (a KeyError if it is missing, like ``repo[sha]``)."""
    obj = repo[sha]
    if not isinstance(obj, Commit):
        raise RepositoryError(f"Git object {sha.decode('ascii', 'replace')} is a {obj.type_name.decode()}, not a commit")
    return obj


def commit_info(commit: Commit) -> CommitInfo:
    return CommitInfo(
        id=commit.id.decode(),
        message=commit.message.decode("utf-8", "replace"),
        author=commit.author.decode("utf-8", "replace"),
        time=commit.commit_time,
        timezone=commit.commit_timezone,
        parents=tuple(p.decode() for p in commit.parents),
    )


def build_tree(object_store, base_tree: bytes | None, changes: Changes, cache: "TreeCache | None" = None) -> tuple[bytes, list]:
    """Apply ``changes`` to ``base_tree``, rewriting only the trees on changed paths.

    Returns:
        The new root tree id and the new objects (blobs and trees) to store.
    """
    nested: dict = {}
    for path, data in changes.items():
        parts = [p for p in path.strip("/").split("/") if p]
        if not parts or any(p in (".", "..", ".git") for p in parts):
            raise RepositoryError(f"path {path!r} would escape the repository")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part.encode("utf-8"), {})
            if not isinstance(node, dict):
                raise RepositoryError(f"path {path!r} is below a file")
        node[parts[-1].encode("utf-8")] = data
    objects: list = []
    cache = cache if cache is not None else TreeCache(object_store)
    root = _apply(cache, base_tree, nested, objects)
    if root is None:
        empty = RawObject.make(b"tree", b"")
        objects.append(empty)
        root = empty.id
    return root, objects


class TreeCache:
    """Parsed trees (:class:`RawTree`) by id, shared by the snapshots and commits of one store.

    Trees never change, so a parsed one serves every later read and commit that
    passes through it; the month folder a commit rewrites is parsed once, not per commit.
    Least recently used trees are dropped when the entries held pass ``entries``.
    """

    def __init__(self, object_store, entries: int = 262_144):
        self.object_store = object_store
        self.max_entries = entries  # about 100 MB of parsed trees at most
        self._trees: dict[bytes, RawTree] = {}
        self._entries = 0
        self._lock = threading.Lock()  # snapshots read from several threads (the viewer, index builds)

    def get(self, tree_id: bytes) -> RawTree:
        with self._lock:
            tree = self._trees.get(tree_id)
        if tree is None:
            type_num, raw = read_raw(self.object_store, tree_id, "tree")
            if type_num != Tree.type_num:
                raise RepositoryError(f"object {tree_id.decode()} is not a tree")
            tree = RawTree.from_raw(raw)
        self.put(tree_id, tree)  # most recently used last
        return tree

    def put(self, tree_id: bytes, tree: RawTree) -> None:
        with self._lock:
            old = self._trees.pop(tree_id, None)
            self._entries += len(tree) - (len(old) if old is not None else 0)
            self._trees[tree_id] = tree
            while self._entries > self.max_entries and len(self._trees) > 1:
                evicted = self._trees.pop(next(iter(self._trees)))
                self._entries -= len(evicted)


def _apply(cache: TreeCache, tree_id: bytes | None, changes: dict, objects: list) -> bytes | None:
    tree = cache.get(tree_id).copy() if tree_id is not None else RawTree()
    for name, change in changes.items():
        if isinstance(change, dict):
            sub = None
            if name in tree and stat.S_ISDIR(tree[name][0]):
                sub = tree[name][1]
            new_sub = _apply(cache, sub, change, objects)
            if new_sub is None:
                if name in tree:
                    tree.delete(name)
            else:
                tree.set(name, TREE_MODE, new_sub)
        elif change is None:
            if name in tree:
                tree.delete(name)
        else:
            blob = RawObject.make(b"blob", change)
            objects.append(blob)
            tree.set(name, FILE_MODE, blob.id)
    if not len(tree):
        return None
    obj = tree.to_object()
    if obj.id == tree_id:
        return tree_id
    objects.append(obj)
    cache.put(obj.id, tree)
    return obj.id


def _create(target: Path, data: bytes) -> bool:
    """Write a file that does not exist yet, straight under its name; False if it exists.

    One directory entry instead of two (a temporary file, then a rename): for a new file nothing
    could read an older content, and a writer killed halfway leaves a pending sync that rewrites it.
    """
    try:
        with open(target, "xb") as out:
            out.write(data)
    except FileExistsError:
        return False
    return True


def _prune_empty_dirs(directory: Path, root: Path) -> None:
    while directory != root and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


# --- refs and trees for views (memrepo/views/) ----------------------------------------------------------------

VIEW_AUTHOR = b"memrepo <memrepo@localhost>"


def _ref_name(ref: str) -> Ref:
    if not ref.startswith("refs/memrepo/") or any(p in ("", ".", "..") for p in ref.split("/")):
        raise RepositoryError(f"{ref!r} is not a memrepo ref")
    return Ref(ref.encode("utf-8"))


def get_ref(store: GitStore, ref: str) -> str | None:
    """Object id a ``refs/memrepo/...`` ref points to, or None."""
    name = _ref_name(ref)
    return store.repo.refs[name].decode() if name in store.repo.refs else None


def set_ref(store: GitStore, ref: str, new: str, old: str | None = None) -> bool:
    """Move ``refs/memrepo/...`` from ``old`` (None: must not exist) to ``new`` by compare-and-swap."""
    return store._swap(_ref_name(ref), old.encode() if old else None, new.encode(), f"memrepo: {ref}")


def list_refs(store: GitStore, prefix: str) -> dict[str, str]:
    """Refs under ``prefix`` (``refs/memrepo/...``): short name -> object id."""
    base = Ref(_ref_name(prefix.rstrip("/")) + b"/")
    return {k.decode(): v.decode() for k, v in store.repo.refs.as_dict(base).items()}


def write_tree(store: GitStore, files: Mapping[str, str]) -> str:
    """Store a tree holding existing blobs (path -> blob id) and return its id (a Derivation's tree)."""
    nested: dict = {}
    for path, blob in files.items():
        node = nested
        parts = path.split("/")
        for part in parts[:-1]:
            node = node.setdefault(part.encode("utf-8"), {})
        node[parts[-1].encode("utf-8")] = blob.encode()
    objects: list = []

    def build(node: dict) -> bytes:
        tree = RawTree()
        for name, value in node.items():
            if isinstance(value, dict):
                tree.set(name, TREE_MODE, build(value))
            else:
                tree.set(name, FILE_MODE, value)
        obj = tree.to_object()
        objects.append(obj)
        return obj.id

    root = build(nested)
    store._add_objects(objects)
    return root.decode()


def write_tree_commit(store: GitStore, tree: str, message: str) -> str:
    """A commit holding ``tree`` with a fixed author and time, so the same tree gives the same commit anywhere."""
    commit = Commit()
    commit.tree = tree.encode()
    commit.parents = []
    commit.author = commit.committer = VIEW_AUTHOR
    commit.commit_time = commit.author_time = 0
    commit.commit_timezone = commit.author_timezone = 0
    commit.encoding = b"UTF-8"
    commit.message = (message.rstrip("\n") + "\n").encode("utf-8")
    store._add_objects([commit])
    return commit.id.decode()


def commit_parent(store: GitStore, commit: str) -> str | None:
    """First parent of ``commit`` (None for a root commit)."""
    parents = _commit(store.repo, commit.encode()).parents
    return parents[0].decode() if parents else None


def commit_time(store: GitStore, commit: str) -> int:
    return int(_commit(store.repo, commit.encode()).commit_time)


def is_ancestor(store: GitStore, ancestor: str, commit: str) -> bool:
    """True if ``ancestor`` is ``commit`` or reachable from it."""
    walker = store.repo.get_walker(include=[ObjectID(commit.encode())])
    return any(entry.commit.id == ancestor.encode() for entry in walker)
