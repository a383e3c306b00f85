"""What the installed Git hooks do: bring memrepo's derived state up to the new commit.

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
(:data:`memrepo.capabilities.DERIVED_INDEXES`, and plugins') to HEAD.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.store.git import GitStore

HOOKS = ("post-commit", "post-merge", "post-checkout")  # the Git hooks `memrepo init` installs
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
            update_indexes(ctx)
    return True


def outdated_hooks(store: "GitStore", hooks_dir: Path) -> dict[str, str]:
    """Installed memrepo hooks that differ from the shipped ones: name -> the Python they run.

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
    return out
