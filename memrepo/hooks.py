"""What the installed Git hooks do: bring memrepo's derived state up to the new commit.

``hooks/pre-commit`` is the exception: it runs in the foreground, and only when a memrepo write's pending
file exists, to complete the sync of a write that was killed before a plain ``git commit`` can drop its files
(:func:`pre_commit`).

The hooks (``hooks/post-commit``, ``post-merge``, ``post-checkout``) are small
``sh`` scripts that start ``memrepo hook NAME`` as a detached, low-priority
background process and return at once, so a plain ``git commit`` never waits
for Python to start or for an index build. :func:`run_hook` runs in that
process. Commits in quick succession do not queue one catch-up each: at most
one catch-up runs and one waits; a later one finds a waiter, which reads HEAD
only once it runs, and leaves. A failed catch-up writes its message to
``<gitdir>/memrepo/hook-failed``, which the next hook prints on stderr until a
catch-up succeeds.

The catch-up brings every derived index of the context's table
(:data:`memrepo.capabilities.DERIVED_INDEXES`, and plugins') to HEAD. After a merge
(``post-merge``: a plain ``git pull``, a pull of a PR merged on the host) it first runs the
graph step (records the merge brought in or edited get their graph files, committed under the
clone's write lock), so ``memrepo doctor`` is green without anyone running ``memrepo index``.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.store.git import GitStore

HOOKS = ("post-commit", "post-merge", "post-checkout", "pre-commit")  # the Git hooks `memrepo init` installs
FAILED_FILE = "hook-failed"  # under <gitdir>/memrepo: why the last catch-up failed (the hooks print it)


def run_hook(ctx: "Context", name: str, args: tuple[str, ...]) -> bool:
    """Bring every derived index of ``ctx.capabilities.indexes`` to HEAD; called (in the background) by
    post-commit, post-merge and post-checkout.

    Returns:
        False if it left at once because another catch-up is already waiting to run (that one will
        see this commit), True if it ran.

    Raises:
        Exception: whatever an index update raised (the hook script keeps its message in :data:`FAILED_FILE`).
    """
    from memrepo.index import update_indexes

    state = ctx.store.state_dir
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "hook-waiting.lock", "a+") as waiting:
        try:
            fcntl.flock(waiting, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with ctx.store.lock("hook-running"):
            fcntl.flock(waiting, fcntl.LOCK_UN)  # from now on a newer commit needs a new catch-up: let one wait
            if name == "post-merge" and not ctx.store.merge_in_progress():
                _graph_catch_up(ctx)
            update_indexes(ctx)
    return True


def _graph_catch_up(ctx: "Context") -> None:
    """The graph step of ``ctx`` (``after_commit["graph"]``), as a write runs it after its commit."""
    from memrepo.capabilities import resolve

    entry = ctx.capabilities.after_commit.get("graph")
    if entry is not None:
        resolve(entry)(ctx, [])


def pre_commit(path: str | Path, index_file: str | None) -> tuple[bool, list[str]]:
    """Before a plain ``git commit`` (``hooks/pre-commit``, run only when a pending file exists): complete the
    work-tree sync of memrepo writes that were killed after their commit landed.

    Their files are missing from the Git index, so the commit would delete them from HEAD. On the index Git
    commits as it is (``index_file`` is ``.git/index``) the sync is completed here, and Git reads the index
    again after the hook. ``git commit -a`` and ``git commit PATH`` commit a temporary index that this
    cannot repair: the commit is refused then, with the command that repairs it.

    Returns:
        Whether the commit may go on, and messages for the user (on stderr).
    """
    from memrepo.store.git import GitStore
    from memrepo.store.recovery import interrupted_writes

    store = GitStore.open(path)
    try:
        if not interrupted_writes(store):
            return True, []  # the pending files are live writers' (their own sync follows) or there are none
        index = Path(index_file) if index_file else store.git_dir / "index"
        if not index.is_absolute():
            index = store.root / index
        refused = ("memrepo: a memrepo write was interrupted after its commit and this commit would delete its "
                   "files from HEAD: run `memrepo doctor --fix` (or any memrepo command), then commit again")
        if index.resolve() != (store.git_dir / "index").resolve():
            return False, [refused + " (`git commit -a` and `git commit PATH` commit a temporary index that "
                           "memrepo cannot repair from here)"]
        messages = [f"memrepo: {m}" for m in store.recover()]
        if interrupted_writes(store):
            return False, messages + [refused]
        if _index_is_head(store.root):
            return False, messages + ["memrepo: the Git index now equals HEAD, so nothing is left to commit (what "
                                      "`git status` showed staged was that interrupted write's, now repaired)"]
        return True, messages
    finally:
        store.close()


def _index_is_head(root: Path) -> bool:
    """True if the Git index holds exactly HEAD's tree (`git diff --cached --quiet`); False without git."""
    import shutil
    import subprocess

    if not shutil.which("git"):
        return False
    return subprocess.run(["git", "diff", "--cached", "--quiet", "HEAD", "--"], cwd=root,
                          capture_output=True).returncode == 0


def outdated_hooks(store: "GitStore", hooks_dir: Path) -> dict[str, str]:
    """Installed memrepo hooks that differ from the shipped ones, and the pre-commit hook missing beside them
    (a clone made before it shipped): name -> the Python they run.

    A hook that is not memrepo's (no recognisable ``python -m memrepo`` line) is never touched.
    """
    import os
    import re
    import sys

    if store.bare:
        return {}
    out = {}
    for name in HOOKS:
        path = store.git_dir / "hooks" / name
        try:
            installed = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found = re.search(r'^python="([^"\n]+)"$', installed, re.M) or re.search(r'^"([^"\n]+)" -m memrepo ', installed, re.M)
        if not found:
            continue
        python = found.group(1)
        if (hooks_dir / name).read_text(encoding="utf-8").replace("@PYTHON@", python) != installed:
            out[name] = python if os.access(python, os.X_OK) else sys.executable
    hooks = store.git_dir / "hooks"
    if not (hooks / "pre-commit").exists() and any(_is_memrepos(hooks / n) for n in HOOKS):
        # A clone set up before memrepo shipped its pre-commit hook (a hook removed on purpose is left removed:
        # only this one is added beside the others).
        out["pre-commit"] = next(iter(out.values()), None) or sys.executable
    return out


def _is_memrepos(path: Path) -> bool:
    try:
        return "-m memrepo " in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
