"""What a killed write leaves behind, and how the next command repairs it.

A memrepo write stores its objects, moves the branch by compare-and-swap (from
then on the commit has *landed*), and then brings the work tree and the Git
index to the new tip. A kill between the last two steps leaves files of HEAD
missing from the index and the work tree: ``git status`` shows them as staged
deletions, and the user's next plain ``git commit`` would delete them from HEAD.

So a writer first creates a *pending* file under ``<gitdir>/memrepo/pending/``
and holds an ``flock`` on it; before moving the branch it writes there the paths
it is about to sync, and it removes the file once they are synced. The kernel
releases an ``flock`` when its process dies, so a pending file whose lock can be
taken belongs to a writer that is gone. :func:`recover_pending` (run when a
repository is opened: one ``listdir`` of an empty folder) brings those paths to
HEAD and removes the file. If the writer died holding ``.git/index.lock`` (the
split-index writer takes it in-process), the pending file names the lock's inode
and change time, and that very lock is removed too.

Git's own lock files name no owner. A ref lock is held for microseconds, so one
that stays put for :data:`REF_LOCK_STALE` seconds while memrepo's ``refs`` flock
is held (no memrepo writer is inside a swap then) is stale. ``index.lock`` can be
held for minutes by a live ``git commit`` waiting on its editor, so a write only
waits :data:`INDEX_LOCK_WAIT` seconds for it and then reports the work tree as
not synced (the commit has landed; the next command syncs it); it is removed
automatically only when proven to be memrepo's own or older than
:data:`INDEX_LOCK_STALE`, and by ``memrepo doctor --fix`` when older than
:data:`LOCK_FIX_AGE`.

Temporary files of a killed writer (``tmp_obj_*`` loose objects, pack temp
files, index build folders, ``.<name>.<pid>.tmp`` work-tree files) are removed
when their writer's pid is gone (memrepo names them with it) or when they are
older than :data:`TEMP_STALE`.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from memrepo.store.objects import read_commit
from memrepo.store.paths import OutsideRepositoryError, PathChecker

if TYPE_CHECKING:
    from memrepo.store.git import GitStore

PENDING_DIR = "pending"  # under <gitdir>/memrepo
REF_LOCK_STALE = 5.0  # s: a ref lock that stays this long under memrepo's refs flock is stale
INDEX_LOCK_WAIT = 5.0  # s: a write waits this long for .git/index.lock, then leaves the sync to the next command
INDEX_LOCK_STALE = 600.0  # s: an index.lock this old is removed by any write
LOCK_FIX_AGE = 60.0  # s: `memrepo doctor --fix` removes Git lock files older than this
TEMP_STALE = 3600.0  # s: temporary files this old are left by a killed writer, whoever wrote them
HISTORY_DEPTH = 100  # commits searched for a path's older versions (to tell a stale copy from an edit)

_OBJ_TMP = re.compile(r"^tmp_obj_(\d+)_")  # memrepo's loose-object temp files carry their writer's pid
_INDEX_TMP = re.compile(r"^\.tmp-.*-(\d+)$")  # memrepo/index/base.py build folders
_WORKTREE_TMP = re.compile(r"(?:^|/)\.[^/]+\.(\d+)\.tmp$")  # GitStore.sync_worktree's temp files


def pid_alive(pid: int) -> bool:
    """True if a process with ``pid`` exists on this machine (it may be another program: a pid is reused)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def age(path: Path) -> float | None:
    """Seconds since ``path`` was last modified, or None if it does not exist."""
    try:
        return max(0.0, time.time() - path.lstat().st_mtime)
    except FileNotFoundError:
        return None


# --- pending syncs -----------------------------------------------------------------


class PendingSync:
    """The paths one write is about to sync, on disk and flock-ed while it runs.

    Created under a temporary name and renamed into place once locked, so that a
    recovering process never mistakes a file being created for an orphan.
    """

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{secrets.token_hex(4)}"
        tmp = folder / f".{name}.tmp"
        self.path = folder / f"{name}.json"
        self.fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        os.rename(tmp, self.path)
        self.paths: list[str] = []

    def record(self, paths: list[str], index_lock: tuple[int, int] | None = None) -> None:
        """Write the paths (and the identity of an index.lock this process holds) before the branch moves."""
        self.paths = paths
        data = json.dumps({"paths": paths, "index_lock": index_lock}).encode()
        os.pwrite(self.fd, data, 0)
        os.ftruncate(self.fd, len(data))

    def done(self) -> None:
        """The paths are synced: remove the file."""
        if self.fd >= 0:
            self.path.unlink(missing_ok=True)
            os.close(self.fd)
            self.fd = -1

    def abandon(self) -> None:
        """The sync failed: release the file for the next command to repair."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def recover_pending(store: "GitStore") -> list[str]:
    """Sync the paths of writers that died after (or while) committing; messages of what was done.

    Never raises: a sync that cannot be done now (the index is locked by a live Git command) is left
    pending for the next command, and said so.
    """
    orphans = _orphans(store)
    if not orphans:
        return []
    messages: list[str] = []
    try:
        messages.extend(_remove_own_index_locks(store, orphans))
        named, refused = _pending_paths(store, orphans)
        messages.extend(refused)
        paths = sorted({p for ps in named.values() for p in ps})
        if paths and not store.bare:
            for path, _, data in orphans:  # a temporary copy the killed writer was about to rename into place
                pid = path.name.split("-", 1)[0]
                for p in named[path]:
                    target = store.root / p
                    target.with_name(f".{target.name}.{pid}.tmp").unlink(missing_ok=True)
            try:
                store.sync_worktree(paths)
            except Exception as exc:  # left pending: the next command tries again
                messages.append(f"could not yet complete an interrupted write's work-tree sync ({exc}); the next "
                                "memrepo command tries again")
                return messages
            pids = ", ".join(sorted({path.name.split("-", 1)[0] for path, _, _ in orphans if named[path]}))
            messages.append(f"brought {len(paths)} file(s) of an interrupted write (pid {pids}) in the work tree and "
                            "Git index to HEAD")
        for path, _, _ in orphans:
            path.unlink(missing_ok=True)
        messages.extend(message for _, message in sweep_temporary(store, fix=True))
    finally:
        for _, fd, _ in orphans:
            os.close(fd)
    return messages


def _pending_paths(store: "GitStore", orphans: list[tuple[Path, int, dict]]
                   ) -> tuple[dict[Path, list[str]], list[str]]:
    """The paths each pending file names that are inside the work tree, and a message for each one refused.

    A pending file is a state file anyone with access to the clone can write: a path in it that is absolute,
    climbs out with ``..``, enters ``.git`` or passes through a symbolic link is never synced (the sync would
    delete or overwrite whatever is there); it is reported and nothing is done with it.
    """
    checker = PathChecker(store.root)
    git_dir = Path(store.repo.controldir())
    named: dict[Path, list[str]] = {}
    refused: list[str] = []
    for path, _, data in orphans:
        raw = data.get("paths") or []
        good: list[str] = []
        for p in raw if isinstance(raw, list) else [raw]:
            try:
                checker.check(p)
            except OutsideRepositoryError as exc:
                refused.append(f"ignored a path named by {_relative(path, git_dir)}, an interrupted write's "
                               f"pending sync: {exc}")
                continue
            good.append(p)
        named[path] = good
    return named, refused


def _orphans(store: "GitStore") -> list[tuple[Path, int, dict]]:
    """(path, locked fd, content) of each pending file whose writer is gone; the caller closes the fds."""
    folder = store.state_dir / PENDING_DIR
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for name in names:
        path = folder / name
        try:
            fd = os.open(path, os.O_RDWR)
        except (FileNotFoundError, IsADirectoryError):
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # its writer is alive
            continue
        if os.fstat(fd).st_nlink == 0 or name.endswith(".tmp"):
            # A ".<pid>-<hex>.tmp" file may be one a live writer has created and not yet locked:
            # only a dead writer's is removed (it was killed while creating it; nothing was recorded).
            if name.endswith(".tmp") and not pid_alive(_pid_of(name)):
                path.unlink(missing_ok=True)
            os.close(fd)
            continue
        try:
            data = json.loads(os.pread(fd, 1 << 26, 0) or b"{}")
            if not isinstance(data, dict):
                data = {}
        except ValueError:
            data = {}
        out.append((path, fd, data))
    return out


def _pid_of(name: str) -> int:
    """The writer's pid in a pending file's name (``<pid>-<hex>.json`` or ``.<pid>-<hex>.tmp``); 0 if none."""
    head = name.lstrip(".").split("-", 1)[0]
    return int(head) if head.isdigit() else 0


def _remove_own_index_locks(store: "GitStore", orphans: list[tuple[Path, int, dict]]) -> list[str]:
    index_lock = Path(store.repo.controldir()) / "index.lock"
    out: list[str] = []
    for path, _, data in orphans:
        lock = data.get("index_lock")
        if not lock:
            continue
        try:
            st = index_lock.lstat()
        except FileNotFoundError:
            return out
        # The same inode, changed at most seconds after it was created (the writer had written the
        # new index into it): the lock the killed writer held, not a new one that reuses its inode.
        if st.st_ino == lock[0] and 0 <= st.st_ctime_ns - lock[1] < 5_000_000_000:
            index_lock.unlink(missing_ok=True)
            out.append(f"removed .git/index.lock left by a killed memrepo process (pid {path.name.split('-', 1)[0]})")
    return out


def clear_orphaned_index_lock(store: "GitStore") -> list[str]:
    """Remove ``.git/index.lock`` if a killed memrepo writer is proven to have left it (a waiting writer
    calls this rather than wait for its bound); the pending files stay for :func:`recover_pending`."""
    orphans = _orphans(store)
    try:
        return _remove_own_index_locks(store, orphans)
    finally:
        for _, fd, _ in orphans:
            os.close(fd)


# --- Git's lock files ----------------------------------------------------------------


def git_locks(store: "GitStore") -> Iterator[Path]:
    """Git lock files that exist now: index.lock, HEAD.lock, config.lock, packed-refs.lock, refs/**/*.lock."""
    git_dir = Path(store.repo.controldir())
    for name in ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock"):
        if (git_dir / name).exists():
            yield git_dir / name
    refs = git_dir / "refs"
    if refs.is_dir():
        yield from sorted(refs.rglob("*.lock"))


def remove_if_unchanged(path: Path, seen: os.stat_result) -> bool:
    """Remove the lock ``path`` if it is still the file ``seen`` (not one a new owner just created)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    if (st.st_ino, st.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
        return False
    path.unlink(missing_ok=True)
    return True


# --- temporary files ---------------------------------------------------------------


def _stale(path: Path, pid: int | None, now: float) -> bool:
    if pid is not None and not pid_alive(pid):
        return True
    try:
        return now - path.lstat().st_mtime > TEMP_STALE
    except FileNotFoundError:
        return False


def temporary_files(store: "GitStore") -> Iterator[Path]:
    """Temporary files and folders left by killed writers (pid gone, or older than :data:`TEMP_STALE`)."""
    now = time.time()
    objects = Path(store.repo.object_store.path)
    with os.scandir(objects) as entries:
        folders = [Path(e.path) for e in entries if len(e.name) == 2 and e.is_dir()]
    for folder in folders:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("tmp_obj_"):
                    m = _OBJ_TMP.match(entry.name)
                    if _stale(Path(entry.path), int(m.group(1)) if m else None, now):
                        yield Path(entry.path)
    for folder in (objects, objects / "pack"):
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            name = path.name
            temp = name.startswith("tmp_pack_") or (name.startswith("tmp") and name.endswith((".pack", ".idx")))
            if temp and _stale(path, None, now):
                yield path
    indexes = store.state_dir / "indexes"
    if indexes.is_dir():
        for root in (p for p in indexes.iterdir() if p.is_dir()):
            for base in (root, root / "at"):
                if base.is_dir():
                    for path in base.glob(".tmp-*"):
                        m = _INDEX_TMP.match(path.name)
                        if _stale(path, int(m.group(1)) if m else None, now):
                            yield path


def sweep_temporary(store: "GitStore", *, fix: bool) -> list[tuple[str, str]]:
    """(path, message) of each temporary file a killed writer left; removed when ``fix``."""
    out = []
    git_dir = Path(store.repo.controldir())
    for path in temporary_files(store):
        where = _relative(path, git_dir)
        if fix:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            out.append((where, "removed a temporary file left by a killed writer"))
        else:
            out.append((where, "temporary file left by a killed writer (`memrepo doctor --fix` removes it)"))
    return out


def _relative(path: Path, git_dir: Path) -> str:
    try:
        return ".git/" + str(path.relative_to(git_dir))
    except ValueError:
        return str(path)


# --- the work tree and the Git index against HEAD ---------------------------------------


@dataclass(frozen=True)
class Difference:
    """One path whose index entry or work-tree file is not HEAD's."""

    path: str
    head: str | None  # blob id in HEAD
    index: str | None  # blob id in the index
    worktree: str | None  # blob id of the work-tree file
    stale: bool  # every side is HEAD's or an older committed version: safe to bring to HEAD

    def describe(self) -> str:
        kinds = []
        if self.head and not self.index:
            kinds.append("deleted in the index (a plain `git commit` would delete it from HEAD)")
        elif self.index and not self.head:
            kinds.append("in the index but not in HEAD")
        elif self.index != self.head:
            kinds.append("an older version in the index")
        if self.head and not self.worktree:
            kinds.append("missing from the work tree")
        elif self.worktree and not self.index:
            kinds.append("untracked in the work tree")
        elif self.worktree not in (self.head, self.index):
            kinds.append("another version in the work tree")
        what = "; ".join(kinds) or "stat information differs"
        if self.stale:
            return f"work tree / index differs from HEAD: {what} (`memrepo doctor --fix` brings it to HEAD)"
        return f"work tree / index differs from HEAD: {what} (an uncommitted change; commit or discard it)"


def blob_of_file(path: Path) -> str | None:
    import hashlib

    try:
        if not path.is_file() or path.is_symlink():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def worktree_differences(store: "GitStore") -> list[Difference]:
    """Paths whose index entry or work-tree file differs from HEAD (``git status``; empty without git)."""
    if store.bare or not shutil.which("git") or store.head() is None:
        return []
    proc = subprocess.run(
        ["git", "-c", "core.quotePath=false", "status", "--porcelain=v2", "-z", "--untracked-files=all",
         "--no-renames", "--ignored=no"],
        cwd=store.root, capture_output=True,
    )
    if proc.returncode != 0:
        return []
    entries: dict[str, dict[str, str | None]] = {}
    head: str | None  # a blob id; None: no such file on that side
    index: str | None
    for line in proc.stdout.split(b"\0"):
        text = line.decode("utf-8", "surrogateescape")
        if text.startswith("1 "):
            fields = text.split(" ", 8)
            head, index, path = fields[6], fields[7], fields[8]
            entries[path] = {"head": None if set(head) == {"0"} else head,
                             "index": None if set(index) == {"0"} else index}
        elif text.startswith("? "):
            entries.setdefault(text[2:], {"head": None, "index": None})
    snap = store.snapshot()
    out = []
    for path, sides in sorted(entries.items()):
        head = snap.blob_id(path)
        index = sides["index"]
        worktree = blob_of_file(store.root / path)
        if index == head == worktree:
            continue
        if head is None and index is None and not committed_before(store, path, worktree):
            continue  # an untracked file of the user's: not memrepo's business
        stale = all(side is None or side == head or committed_before(store, path, side) for side in (index, worktree))
        out.append(Difference(path, head, index, worktree, stale))
    return out


def committed_before(store: "GitStore", path: str, blob: str | None) -> bool:
    """True if ``blob`` is what ``path`` held in one of the last :data:`HISTORY_DEPTH` commits (or a temp file)."""
    if blob is None:
        return False
    m = _WORKTREE_TMP.search(path)
    if m and not pid_alive(int(m.group(1))):
        return True
    commit = store.head()
    for _ in range(HISTORY_DEPTH):
        if commit is None:
            return False
        snap = store.snapshot(commit)
        if snap.blob_id(path) == blob:
            return True
        parents = read_commit(store.repo, commit).parents
        commit = parents[0] if parents else None
    return False


# --- everything, for `memrepo doctor` and `memrepo doctor --fix` ------------------------------


def write_problems(store: "GitStore") -> list[tuple[str, str]]:
    """(path, message) for every leftover of an interrupted write: pending syncs, stale locks, temp files,
    work tree / index differing from HEAD."""
    out: list[tuple[str, str]] = []
    folder = store.state_dir / PENDING_DIR
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if _lockable(path):
                out.append((_relative(path, Path(store.repo.controldir())),
                            "an interrupted write's sync is pending (the next memrepo command completes it)"))
    for lock in git_locks(store):
        seconds = age(lock)
        if seconds is not None and seconds > LOCK_FIX_AGE:
            out.append((_relative(lock, Path(store.repo.controldir())),
                        f"stale lock, {seconds:.0f} s old: Git commands on this repository fail until it is "
                        "removed (`memrepo doctor --fix` removes it if no git command is running)"))
    out.extend(sweep_temporary(store, fix=False))
    # Only what interrupted writes leave (stale copies of committed content); the user's own uncommitted
    # changes are `git status`'s business, and --fix leaves them alone.
    out.extend((d.path, d.describe()) for d in worktree_differences(store) if d.stale)
    return out


def repair(store: "GitStore") -> list[str]:
    """Repair what interrupted writes left: pending syncs, stale locks, temp files, stale work-tree copies."""
    messages = recover_pending(store)
    for lock in git_locks(store):
        try:
            seen = lock.lstat()
        except FileNotFoundError:
            continue
        seconds = time.time() - seen.st_mtime
        if seconds > LOCK_FIX_AGE and remove_if_unchanged(lock, seen):
            messages.append(f"removed stale {_relative(lock, Path(store.repo.controldir()))} ({seconds:.0f} s old)")
    messages.extend(message for _, message in sweep_temporary(store, fix=True))
    differences = worktree_differences(store)
    stale = [d.path for d in differences if d.stale]
    if stale:
        store.sync_worktree(stale)
        messages.append(f"brought {len(stale)} file(s) in the work tree and Git index back to HEAD")
    kept = [d.path for d in differences if not d.stale]
    if kept:
        messages.append(f"left {len(kept)} uncommitted change(s) alone (e.g. {kept[0]})")
    return messages


def interrupted_writes(store: "GitStore") -> list[Path]:
    """Pending files of writers that are gone (their flock can be taken): syncs the next command completes."""
    folder = store.state_dir / PENDING_DIR
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / name for name in names if name.endswith(".json") and _lockable(folder / name)]


def _lockable(path: Path) -> bool:
    """True if nobody holds the flock on ``path`` (its writer is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
