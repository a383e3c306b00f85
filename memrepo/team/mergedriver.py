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

Core blocks (``core/*.md merge=memrepo``) are merged line by line, the way a team edits a shared
document: the body by Git's 3-way text merge (``git merge-file``), refined where Git is stricter than
a person: two edits of *different* lines next to each other merge, and lines both sides added at the
same place (say, at the end) are all kept, this side's first. An edit of the *same* line on both sides
stays a conflict, with both sides (and the base) between markers, so nothing is dropped. The front
matter is merged field by field: a field one side changed takes that side's value; ``mention_time``
changed on both sides takes the later; ``summary`` changed on both is made again from the merged text;
any other field both sides changed differently is a conflict of the whole file. A block created on
both sides (no base) is a plain conflict. Tombstones (``tombstones/*.md merge=memrepo``) changed on
both sides keep the side whose latest event (forget or undo) is later.

Clones made before these lines existed get them from ``memrepo init`` or ``memrepo doctor --fix``, which
commit the missing lines to ``.gitattributes`` (doctor reports them missing until then).
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
CORE_LINE = f"core/*.md merge={DRIVER}"  # core blocks: line by line, front matter by field
TOMBSTONES_LINE = f"tombstones/*.md merge={DRIVER}"  # the later forget or undo holds
LINES = (ATTRIBUTES_LINE, QUESTS_LINE, DERIVATIONS_LINE, CORE_LINE, TOMBSTONES_LINE)
ATTRIBUTES = (f"# Installed by memrepo: files memrepo writes on its own are merged by its driver\n"
              f"# (`git config merge.{DRIVER}.driver`, set by memrepo init / clone / doctor --fix).\n"
              + "".join(f"{line}\n" for line in LINES))
NAME = "memrepo: graph files merged as memrepo sync merges them"
# A plain `git pull` must not take a forgotten record's file and a similar new one for a rename (files are
# named by their ids): it would apply the other side's edit of the first to the second. Git 2.39's default
# strategy (ort) ignores merge.renames, so pull uses the recursive strategy, which honours it; `memrepo sync`
# passes -X find-renames=100% itself, and the server hook refuses a merge that got it wrong (rule graph).
NO_RENAMES = (("merge.renames", "false"), ("pull.twohead", "recursive"))


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
    if configured(root) == command and all(_config(root, k) == v for k, v in NO_RENAMES):
        return False
    git(root, "config", f"merge.{DRIVER}.name", NAME)
    git(root, "config", f"merge.{DRIVER}.driver", command)
    for key, value in NO_RENAMES:
        git(root, "config", key, value)
    return True


def _config(root: str | os.PathLike, key: str) -> str:
    return git(root, "config", "--get", key, check=False).stdout.decode("utf-8", "replace").strip()


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
    if path.startswith("core/") and path.endswith(".md") and "/" not in path[len("core/"):]:
        core, conflict = merge_core(common, mine, other, path)
        return _write_merged(ours, core, 1 if conflict else 0)
    try:
        if path.startswith("tombstones/") and path.endswith(".md"):
            stone = merge_tombstones(mine, other, path)
            merged = (stone, "the later forget or undo") if stone is not None else None
        elif quest.is_quest_path(path):
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
    return _write_merged(ours, merged[0], 0)


def _write_merged(ours: str, data: bytes, status: int) -> int:
    try:
        Path(ours).write_bytes(data)
    except OSError as exc:
        raise MemrepoError(f"merge-driver: cannot write {exc.filename}: {exc.strerror}") from exc
    return status


def merge_tombstones(ours: bytes, theirs: bytes, path: str) -> bytes | None:
    """Two versions of one tombstone: the one whose latest event (forget or undo) is later; None if one does
    not parse (a person decides)."""
    from memrepo.tombstones import parse_tombstone, serialize_tombstone

    try:
        sides = [parse_tombstone(data, path) for data in (ours, theirs)]
    except MemrepoError:
        return None
    chosen = max(sides, key=lambda t: (max(t.forgotten_at, t.undone_at or ""), serialize_tombstone(t)))
    return serialize_tombstone(chosen)


# --- core blocks: line by line --------------------------------------------------------------------------------

_MARK = 40  # marker size while parsing git merge-file's output (no body line looks like one)


def merge_core(base: bytes, ours: bytes, theirs: bytes, path: str) -> tuple[bytes, bool]:
    """The 3-way merge of a core block; (bytes, True if a conflict is left between markers).

    Raises:
        MemrepoError: ``git`` cannot be run.
    """
    from memrepo import records as rec

    if not base.strip():
        return _text_merge(base, ours, theirs)  # created on both sides: a person decides
    try:
        parts = [rec.split_front_matter(data, path) for data in (base, ours, theirs)]
    except MemrepoError:
        return _text_merge(base, ours, theirs)
    (meta_b, body_b), (meta_o, body_o), (meta_t, body_t) = parts
    body, conflict = merge_lines(body_b, body_o, body_t)
    meta = _merge_meta(meta_b, meta_o, meta_t, body)
    if meta is None:
        return _text_merge(base, ours, theirs)
    data = f"---\n{rec.dump_front_matter(meta)}---\n{body}".encode("utf-8")
    if not conflict:
        try:
            rec.parse(data, path)
        except MemrepoError:
            return _text_merge(base, ours, theirs)
    return data, conflict


def _merge_meta(base: dict, ours: dict, theirs: dict, body: str) -> dict | None:
    from memrepo import records as rec

    merged: dict = {}
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif key == "mention_time" and o is not None and t is not None:
            value = max(str(o), str(t))
        elif key == "summary":
            first = next((line.strip() for line in body.splitlines() if line.strip()), "")
            value = rec.default_summary(first) if first else o
        else:
            return None  # a field both sides set differently: the whole file is a conflict
        if value is not None:
            merged[key] = value
    return merged


def merge_lines(base: str, ours: str, theirs: str, *, refine: bool = True) -> tuple[str, bool]:
    """Line-level 3-way merge of two texts; (text, True if a conflict is left between markers).

    Git's merge (``git merge-file --diff3``), then each hunk it could not merge looked at again: lines
    both sides only added are all kept (this side's first); hunks of the same length on all three sides
    whose lines each changed on one side at most merge line by line. Anything else stays a conflict.
    Without ``refine``, Git's merge as it is.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memrepo-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            file = Path(tmp) / name
            file.write_text(text, encoding="utf-8")
            files.append(str(file))
        done = git(None, "merge-file", "-p", "--diff3", f"--marker-size={_MARK}", "-L", "ours", "-L", "base",
                   "-L", "theirs", *files, check=False)
    if done.returncode < 0 or done.returncode > 127:
        raise MemrepoError(f"merge-driver: git merge-file failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    text = done.stdout.decode("utf-8", "replace")
    if done.returncode == 0:
        return text, False
    out: list[str] = []
    conflict = False
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if not lines[i].startswith("<" * _MARK + " "):
            out.append(lines[i])
            i += 1
            continue
        sections: list[list[str]] = [[], [], []]
        part, i = 0, i + 1
        while i < len(lines) and not lines[i].startswith(">" * _MARK + " "):
            if lines[i].startswith("|" * _MARK + " ") and part == 0:
                part = 1
            elif lines[i].rstrip("\n") == "=" * _MARK and part == 1:
                part = 2
            else:
                sections[part].append(lines[i])
            i += 1
        i += 1
        mine, common, other = sections
        resolved = _resolve_hunk(common, mine, other) if refine else None
        if resolved is None:
            conflict = True
            out += ["<<<<<<< ours\n", *_ended(mine), "||||||| base\n", *_ended(common), "=======\n", *_ended(other),
                    ">>>>>>> theirs\n"]
        else:
            out += resolved
    return "".join(out), conflict


def _resolve_hunk(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    if not base:
        return ours + [line for line in theirs if line not in ours] if ours != theirs else ours
    if len(base) == len(ours) == len(theirs):
        merged = []
        for b, o, t in zip(base, ours, theirs):
            if o != b and t != b and o != t:
                return None
            merged.append(t if o == b else o)
        return merged
    return None


def _ended(lines: list[str]) -> list[str]:
    return [*lines[:-1], lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"] if lines else []


def _text_merge(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
    """Git's own merge of the whole files, with markers where it cannot."""
    text, conflict = merge_lines(base.decode("utf-8", "replace"), ours.decode("utf-8", "replace"),
                                 theirs.decode("utf-8", "replace"), refine=False)
    return text.encode("utf-8"), conflict
