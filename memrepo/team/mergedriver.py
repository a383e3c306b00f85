"""The ``memrepo`` Git merge driver: a plain ``git pull`` or ``git merge`` never conflicts on graph files.

Installed in every non-bare memory repository (``memrepo init``, ``memrepo clone``, ``memrepo init`` in
an existing clone, ``memrepo doctor --fix``): a tracked ``.gitattributes`` line ``graph/** merge=memrepo``
(and ``views/quests/*.md merge=memrepo``: a Quest's resolve histories are unioned and its counts added
up, memrepo/views/quest.py; ``views/derivations/*.json merge=memrepo``: two manifests of the same files keep
the one that sorts first, memrepo/views/derive.py) and, in the clone's ``.git/config``, ``merge.memrepo.driver`` running ``python -m memrepo merge-driver
%O %A %B %P`` with the Python the hooks use (else a ``memrepo`` on the PATH). The driver applies the
rule ``memrepo sync`` applies (memrepo/team/sync.py): a frame file of one record keeps the extraction
whose blob id sorts first, any other Turtle file gets the union of both sides' statements. Anything
else (a file that does not parse) is merged as Git would, with conflict markers, and reported.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from memrepo.errors import MemrepoError
from memrepo.team.gitcli import git

DRIVER = "memrepo"
ATTRIBUTES_FILE = ".gitattributes"
ATTRIBUTES_LINE = f"graph/** merge={DRIVER}"
QUESTS_LINE = f"views/quests/*.md merge={DRIVER}"  # Quests: resolve histories unioned, counts added up
DERIVATIONS_LINE = f"views/derivations/*.json merge={DRIVER}"  # the same id: the same files
LINES = (ATTRIBUTES_LINE, QUESTS_LINE, DERIVATIONS_LINE)
ATTRIBUTES = (f"# Installed by memrepo: files memrepo writes on its own are merged by its driver\n"
              f"# (`git config merge.{DRIVER}.driver`, set by memrepo init / clone / doctor --fix).\n"
              f"{ATTRIBUTES_LINE}\n{QUESTS_LINE}\n{DERIVATIONS_LINE}\n")
NAME = "memrepo: graph files merged as memrepo sync merges them"


def driver_command(python: str) -> str:
    """The ``merge.memrepo.driver`` value: ``python`` if it still runs, else ``memrepo`` on the PATH."""
    p = shlex.quote(python)
    return (f"if [ -x {p} ]; then {p} -m memrepo merge-driver %O %A %B %P; "
            f"else memrepo merge-driver %O %A %B %P; fi")


def missing_lines(text: str) -> list[str]:
    have = {line.strip() for line in text.splitlines()}
    return [line for line in LINES if line not in have]


def attributes_missing(text: str) -> bool:
    return bool(missing_lines(text))


def attributes_text(current: str) -> str:
    """``.gitattributes`` with memrepo's lines added (``current`` kept as it is)."""
    missing = missing_lines(current)
    if not missing:
        return current
    if len(missing) < len(LINES):  # an older memrepo wrote its block: add the new line(s) only
        return current + ("\n" if not current.endswith("\n") else "") + "".join(f"{line}\n" for line in missing)
    return (current + ("\n" if current and not current.endswith("\n") else "") + ("\n" if current else "")
            + ATTRIBUTES)


def configured(root: str | os.PathLike) -> str | None:
    """The driver command configured in the clone at ``root`` (None: none)."""
    done = git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False)
    return done.stdout.decode("utf-8", "replace").strip() or None if done.returncode == 0 else None


def configure(root: str | os.PathLike, python: str) -> bool:
    """Set ``merge.memrepo.driver`` in the clone's config; True if it changed."""
    command = driver_command(python)
    if configured(root) == command:
        return False
    git(root, "config", f"merge.{DRIVER}.name", NAME)
    git(root, "config", f"merge.{DRIVER}.driver", command)
    return True


def merge_files(base: str, ours: str, theirs: str, path: str) -> int:
    """Merge ``theirs`` into ``ours`` (written in place) for the file ``path``: 0 merged, 1 conflict.

    Raises:
        MemrepoError: if a file cannot be read or written.
    """
    from memrepo.graph.rdf import TurtleError
    from memrepo.team.sync import resolve_graph
    from memrepo.views import derive, quest

    try:
        mine, other = Path(ours).read_bytes(), Path(theirs).read_bytes()
        common = Path(base).read_bytes()
    except OSError as exc:
        raise MemrepoError(f"merge-driver: cannot read {exc.filename}: {exc.strerror}") from exc
    try:
        if quest.is_quest_path(path):
            text = quest.merge(common or None, mine, other, path)
            merged = (text, "quest histories unioned") if text is not None else None
        elif derive.is_manifest_path(path):
            text = derive.merge_manifests(mine, other, path)
            merged = (text, "the same derivation; kept the manifest that sorts first") if text is not None else None
        else:
            merged = resolve_graph(path, mine, other)
    except (MemrepoError, TurtleError):  # a side that does not parse: a person decides
        merged = None
    if merged is None:  # not a file memrepo can merge: Git's own text merge, with markers
        done = git(None, "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs, check=False)
        return 0 if done.returncode == 0 else 1
    try:
        Path(ours).write_bytes(merged[0])
    except OSError as exc:
        raise MemrepoError(f"merge-driver: cannot write {exc.filename}: {exc.strerror}") from exc
    return 0
