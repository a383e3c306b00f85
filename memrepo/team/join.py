"""Joining a team's memory: ``memrepo clone URL [DIR]`` and ``memrepo init`` in an existing clone.

A bare remote made with ``git init --bare`` names ``master`` in its HEAD whatever was
pushed to it, so ``git clone`` of a remote that holds only ``main`` checks nothing out;
``memrepo init`` there used to start an unrelated root commit. :func:`set_up_branch`
checks out the remote's branch instead, and says why.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memrepo.errors import RepositoryError
from memrepo.team.gitcli import git, last_line, out

PREFERRED = ("main", "master")


def remote_branches(root: str | os.PathLike, remote: str = "origin") -> list[str]:
    """Branch names the clone knows on ``remote`` (from its last fetch), without ``HEAD``."""
    names = out(root, "for-each-ref", "--format=%(refname)", f"refs/remotes/{remote}/").splitlines()
    prefix = f"refs/remotes/{remote}/"
    return sorted(n.removeprefix(prefix) for n in names if n and n != prefix + "HEAD")


def has_commit(root: str | os.PathLike) -> bool:
    return git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).returncode == 0


def set_up_branch(root: str | os.PathLike, remote: str = "origin") -> list[str]:
    """In a clone with nothing checked out, check out the remote's memory branch; messages of what was done.

    Nothing is done if HEAD already has a commit. With no branch on the remote, HEAD is set to ``main``
    (the caller then creates the repository layout there, and ``memrepo sync`` publishes it).
    """
    if has_commit(root):
        return []
    branches = remote_branches(root, remote)
    if not branches:
        git(root, "symbolic-ref", "HEAD", "refs/heads/main")
        return [f"the remote {remote} has no branch yet: the memory starts here on branch main "
                "(`memrepo sync` publishes it)"]
    name = next((b for b in PREFERRED if b in branches), branches[0] if len(branches) == 1 else None)
    if name is None:
        raise RepositoryError(f"the remote {remote} has several branches and none is main or master "
                              f"({', '.join(branches)}): check one out with `git switch NAME`, then run memrepo init")
    head = git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.decode().strip()
    git(root, "checkout", "-q", "-B", name, "--track", f"{remote}/{name}", hooks=False)
    return [f"the remote's HEAD names {head or 'no branch'}, which does not exist there: checked out {name} "
            f"(to fix it for everyone, run `git symbolic-ref HEAD refs/heads/{name}` in the remote repository)"]


def clone(url: str, directory: str | os.PathLike | None) -> tuple[Path, list[str]]:
    """``git clone URL DIR`` and :func:`set_up_branch`; returns the clone's folder and messages.

    Raises:
        RepositoryError: if the clone fails (the target is then left as it was).
    """
    target = Path(directory) if directory else Path(_default_name(url))
    if target.exists() and any(target.iterdir()):
        raise RepositoryError(f"{target}: exists and is not empty; clone into a new folder")
    existed = target.exists()
    done = git(None, "clone", "-q", "--no-checkout", "--", url, str(target), check=False)
    if done.returncode != 0:
        _remove(target, existed)
        raise RepositoryError(f"cannot clone {url}: {last_line(done.stderr)}")
    try:
        git(target, "config", "core.splitIndex", "true")  # as `memrepo init` sets it (docs/store.md)
        messages = []
        if has_commit(target):
            git(target, "checkout", "-q")  # --no-checkout: check out now, with the split index on
        else:
            messages = set_up_branch(target)
        if has_commit(target) and git(target, "cat-file", "-e", "HEAD:memrepo.toml", check=False).returncode != 0:
            raise RepositoryError(f"{url} is a Git repository but not a memory repository "
                                  f"(no memrepo.toml on {out(target, 'rev-parse', '--abbrev-ref', 'HEAD')})")
    except BaseException:
        _remove(target, existed)
        raise
    return target, messages


def _default_name(url: str) -> str:
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git") or "memory"


def _remove(target: Path, existed: bool) -> None:
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    if existed:
        target.mkdir(exist_ok=True)
