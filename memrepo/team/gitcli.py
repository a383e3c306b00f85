"""Running ``git``: the one place the team commands call the Git command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping

from memrepo.errors import RepositoryError

# memrepo's own Git commands must not start the installed hooks' background catch-up: the
# command that ran them brings the indexes up itself, in the foreground, with progress.
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


def git(root: str | os.PathLike | None, *args: str, check: bool = True, input: bytes | None = None,
        env: Mapping[str, str] | None = None, hooks: bool = False) -> subprocess.CompletedProcess:
    """Run ``git -C root ARGS``; output captured as bytes.

    Raises:
        RepositoryError: if ``check`` and git exits non-zero (its last line of stderr says why),
            or git is not installed.
    """
    command = ["git", *(() if hooks else NO_HOOKS)]
    if root is not None:
        command += ["-C", str(root)]
    command += list(args)
    full_env = {**os.environ, **env} if env is not None else None
    try:
        done = subprocess.run(command, input=input, capture_output=True, env=full_env)
    except FileNotFoundError as exc:
        raise RepositoryError("git is not installed (team commands run the git command line)") from exc
    if check and done.returncode != 0:
        raise RepositoryError(f"git {args[0]} failed: {last_line(done.stderr)}")
    return done


def last_line(data: bytes) -> str:
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def out(root: str | os.PathLike | None, *args: str) -> str:
    """stdout of a git command that must succeed, stripped."""
    return git(root, *args).stdout.decode("utf-8", "surrogateescape").strip()


def git_dir(root: str | os.PathLike) -> Path:
    return Path(root) / out(root, "rev-parse", "--git-dir")
