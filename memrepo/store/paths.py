"""Where a path of the tree lands on disk: the one place a tree path or a state file's path becomes a file.

Everything a teammate pushes is untrusted (DESIGN.md section 9), and so is a state file under
``.git/memrepo/``: a committed symbolic link ``episodic/2026 -> /home/mia/notes`` would make the next
``remember`` write its record into that folder, and a pending file naming ``../../x`` would make crash
recovery delete it. So memrepo never follows a link in the work tree: before anything is written,
read or removed under the work tree, :func:`worktree_path` refuses a path that is absolute or has
``..``, ``.`` or ``.git`` parts and checks every component of it with ``lstat``: a symbolic link anywhere
below the root is refused, naming the link and where it points. A path of plain parts none of which is
a link resolves to itself under the root, so that is the check after resolving links. The root itself
may be a link (``~/memory`` pointing at another disk): only what is below it is checked.

Cost: one ``lstat`` per component that exists, and a write checks each folder once
(:class:`PathChecker` remembers the folders it has seen), so 1,000 new records in one month folder
cost about 1,000 ``lstat`` calls. Measured on the shared 2-core machine: 1,000 such paths in 8.5-10.4 ms
(the plain ``root / path`` joins alone: 2.5-4.0 ms); an earlier version that also called ``realpath``
took 15-128 ms, for nothing: a path of plain parts none of which is a link cannot resolve elsewhere.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memrepo.errors import RepositoryError


class OutsideRepositoryError(RepositoryError):
    """A path would leave the repository (``..``, absolute, ``.git``) or pass through a symbolic link."""


def tree_path_problem(path: str) -> str | None:
    """What is wrong with ``path`` as a path of the tree (relative, ``/``-separated), or None if nothing."""
    if not isinstance(path, str) or not path or "\x00" in path or "\\" in path:
        return "not a relative path of the repository"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "an absolute path"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "not a plain relative path (empty, '.' or '..' parts)"
    if any(p.lower() == ".git" for p in parts):
        return "inside the Git directory"
    return None


class PathChecker:
    """Checks tree paths against one work tree; remembers the folders found to be plain folders.

    Use one per write (a folder checked once may be replaced by a link later; a write runs under the
    work-tree lock, and a new write makes a new checker).
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self._base = str(self.root)
        self._folders: set[str] = set()

    def check(self, path: str) -> Path:
        """The file of tree path ``path`` under the work tree, after checking it stays there.

        Raises:
            OutsideRepositoryError: ``path`` is absolute, has ``..`` or ``.git`` parts, or a component of it
                (a folder or the file itself) is a symbolic link in the work tree.
        """
        problem = tree_path_problem(path)
        if problem is not None:
            raise OutsideRepositoryError(f"{path!r}: {problem}; memrepo reads and writes only inside the "
                                         "repository")
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = path if depth == len(parts) else "/".join(parts[:depth])
            if prefix in self._folders:
                continue
            try:
                st = os.lstat(f"{self._base}/{prefix}")  # plain strings: pathlib would double the cost
            except (FileNotFoundError, NotADirectoryError):
                break  # nothing there yet: memrepo creates plain folders and files below
            if stat.S_ISLNK(st.st_mode):
                raise OutsideRepositoryError(_link_message(self.root, prefix, path))
            if depth < len(parts):
                if not stat.S_ISDIR(st.st_mode):
                    break  # a file where a folder is wanted: the write fails on its own, inside the repository
                self._folders.add(prefix)
        # No part is "..", ".", empty or a link: the path resolves to itself under the root, so no realpath
        # (which would lstat every folder above the root again, for each path) is needed.
        return self.root / path


def _link_message(root: Path, link: str, path: str) -> str:
    try:
        points = os.readlink(root / link)
    except OSError:
        points = "?"
    what = f"{link} is a symbolic link" if link == path else f"{path}: {link} is a symbolic link"
    return (f"{what} (to {points}); memrepo does not follow links in the work tree, so it writes nothing "
            f"there: remove the link (`git rm {link}` and commit) and run the command again")


def worktree_path(root: Path, path: str) -> Path:
    """``root / path`` once checked by :class:`PathChecker` (see there); for one path."""
    return PathChecker(root).check(path)


def is_inside(path: Path, *roots: Path) -> bool:
    """True if ``path``, its links resolved, is one of ``roots`` or below one (their links resolved too)."""
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False
