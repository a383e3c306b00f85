"""`memrepo validate` and the server's ``pre-receive`` hook: the checks a pushed change must pass.

Only the files a change adds or modifies are checked (a push of 1,000 records reads those
1,000 files and the sources they cite, not the whole repository), through ``git`` so that a
``pre-receive`` hook sees the pushed objects Git still holds in quarantine. Each problem
names its file. The kinds (``KINDS``): conflict markers, a record or source that does not
parse, a record at the wrong path or with an id of the wrong type, a citation of a missing
source or part, a graph file that is not valid Turtle or sits at the wrong path, a decision
file that does not read, a vault value in plaintext, an invalid ``memrepo.toml``, and (in
the hook) a push that rewrites or deletes ``main``.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any, Iterable

from memrepo import records as rec
from memrepo.errors import MemrepoError, RepositoryError
from memrepo.team.gitcli import git, out

ZERO = "0" * 40
PROTECTED = ("refs/heads/main", "refs/heads/master")  # history that is never rewritten (DESIGN.md §8)
_MARKER_RE = re.compile(rb"^(<<<<<<< |>>>>>>> |=======$|\|\|\|\|\|\|\| )", re.M)
TEXT_SUFFIXES = (".md", ".ttl", ".toml", ".json", ".yaml", ".yml", ".txt")


def conflict_marker_line(data: bytes) -> int | None:
    """1-based line of the first Git conflict marker (``<<<<<<<``, ``=======``, ``>>>>>>>``), or None.

    A lone ``=======`` line is a marker only in a file that also holds ``<<<<<<<`` or ``>>>>>>>``
    (Markdown uses it to underline a heading).
    """
    m = _MARKER_RE.search(data)
    while m:
        if m.group(1) != b"=======" or (b"\n<<<<<<< " in b"\n" + data or b"\n>>>>>>> " in b"\n" + data):
            return data.count(b"\n", 0, m.start()) + 1
        m = _MARKER_RE.search(data, m.end())
    return None


@dataclass
class Report:
    """What ``validate`` checked and found."""

    checked: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    refs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked": self.checked, "refs": self.refs,
                "problems": [{"path": p, "message": m} for p, m in self.problems]}


class _Blobs:
    """Reads files of one commit through one ``git cat-file --batch`` process."""

    def __init__(self, root: str, commit: str):
        self.commit = commit
        self.proc = subprocess.Popen(["git", "-C", root, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def read(self, path: str) -> bytes | None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{self.commit}:{path}\n".encode("utf-8", "surrogateescape"))
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.proc.stdout.read(int(header[2]) + 1)
        return data[:-1]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def changed_files(root: str, base: str | None, commit: str) -> list[str]:
    """Files added or modified from ``base`` (None: the empty tree) to ``commit``."""
    if base is None:
        listing = out(root, "ls-tree", "-r", "-z", "--name-only", commit)
    else:
        listing = out(root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=AMT", base, commit)
    return sorted(p for p in listing.split("\0") if p)


def check_files(root: str, commit: str, paths: Iterable[str]) -> list[tuple[str, str]]:
    """Every problem in ``paths`` as of ``commit``: (file, reason)."""
    blobs = _Blobs(root, commit)
    sources: dict[str, rec.Source | None] = {}
    problems: list[tuple[str, str]] = []
    try:
        for path in paths:
            data = blobs.read(path)
            if data is None:
                continue  # a submodule or symlink: git fsck's business
            for reason in _check_file(path, data, blobs, sources):
                problems.append((path, reason))
    finally:
        blobs.close()
    return problems


def _check_file(path: str, data: bytes, blobs: _Blobs, sources: dict[str, rec.Source | None]) -> Iterable[str]:
    if path.endswith(TEXT_SUFFIXES):
        line = conflict_marker_line(data)
        if line:
            yield f"holds a Git conflict marker on line {line} (an unresolved merge was committed)"
            return
    if path == "memrepo.toml":
        from memrepo.settings import SettingsError, config_from_text

        try:
            config_from_text(data.decode("utf-8"), path)
        except UnicodeDecodeError as exc:
            yield f"not valid TOML: {exc}"
        except SettingsError as exc:
            yield from (line.removeprefix(f"{path}: ") for line in str(exc).splitlines())
    elif rec.is_record_path(path):
        yield from _check_record(path, data, blobs, sources)
    elif path.startswith("sources/") and path.endswith(".md"):
        try:
            source = rec.parse_source(data, path)
            if rec.source_path(source.id) != path:
                yield f"source id {source.id} belongs at {rec.source_path(source.id)}"
        except MemrepoError as exc:
            yield str(exc).removeprefix(f"{path}: ")
    elif path.startswith("graph/"):
        yield from _check_graph_file(path, data)


def _check_record(path: str, data: bytes, blobs: _Blobs, sources: dict[str, rec.Source | None]) -> Iterable[str]:
    try:
        record = rec.parse(data, path)
    except MemrepoError as exc:
        yield str(exc).removeprefix(f"{path}: ")
        return
    if not path.startswith(rec.SKILLS_FOLDER + "/"):
        try:
            expected = rec.record_path(record.id, record.type, record.extra)
        except MemrepoError as exc:
            yield str(exc)
            return
        if expected != path and not (record.type == "resource" and path.startswith("resource/")):
            yield f"id {record.id} belongs at {expected}"
        if rec.type_of_id(record.id) != record.type:
            yield f"id {record.id} does not match type {record.type}"
    if record.type == "vault" and not record.extra.get("cipher"):
        yield "a vault value in plaintext (vault records are sealed with the vault key before they are committed)"
    for citation in record.sources:
        source_id, anchor = rec.split_citation(citation)
        if source_id not in sources:
            sources[source_id] = _read_source(blobs, source_id)
        source = sources[source_id]
        if source is None:
            yield f"cites source {source_id}, which does not exist"
        elif anchor and source.part(anchor) is None:
            yield f"cites {citation}, but source {source_id} has no part {anchor}"


def _read_source(blobs: _Blobs, source_id: str) -> rec.Source | None:
    try:
        path = rec.source_path(source_id)
    except MemrepoError:
        return None
    data = blobs.read(path)
    try:
        return rec.parse_source(data, path) if data is not None else None
    except MemrepoError:
        return None  # reported on the source file itself


def _check_graph_file(path: str, data: bytes) -> Iterable[str]:
    from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER, graph_path
    from memrepo.graph.rdf import TurtleError, parse_turtle

    if not path.endswith(".ttl"):
        yield "not a Turtle file (graph files end in .ttl)"
        return
    try:
        graph = parse_turtle(data, path)
    except TurtleError as exc:
        yield f"{f'line {exc.line}: ' if exc.line else ''}not valid Turtle: {exc}"
        return
    if path.startswith(FRAMES_FOLDER + "/"):
        memory_id = path.rsplit("/", 1)[-1][:-4]
        try:
            expected = graph_path(memory_id)
        except MemrepoError as exc:
            yield str(exc)
            return
        if expected != path:
            yield f"graph file of {memory_id} belongs at {expected}"
    elif path.startswith(DECISIONS_FOLDER + "/"):
        from memrepo.dream.checks import decision_problems

        yield from decision_problems(graph)


# --- ranges, pushes ----------------------------------------------------------------


def validate(root: str | os.PathLike, rev_range: str | None = None) -> Report:
    """Check ``A..B`` (the files B changes since its merge base with A), or every file of one revision
    (default: HEAD).

    Raises:
        RepositoryError: if a revision does not exist.
    """
    root = str(root)
    report = Report(refs=[rev_range or "HEAD"])
    if rev_range and ".." in rev_range:
        left, right = (part or "HEAD" for part in rev_range.replace("...", "..").split("..", 1))
        commit, other = _commit(root, right), _commit(root, left)
        base = git(root, "merge-base", other, commit, check=False).stdout.decode().strip() or None
    else:
        commit, base = _commit(root, rev_range or "HEAD"), None
    paths = changed_files(root, base, commit)
    report.checked = len(paths)
    report.problems = check_files(root, commit, paths)
    return report


def _commit(root: str, rev: str) -> str:
    done = git(root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
    if done.returncode != 0:
        raise RepositoryError(f"revision {rev!r} not found")
    return done.stdout.decode().strip()


def check_push(root: str | os.PathLike, updates: Iterable[tuple[str, str, str]]) -> Report:
    """What a ``pre-receive`` hook checks: each (old, new, ref) line Git gives it."""
    root = str(root)
    report = Report()
    for old, new, ref in updates:
        report.refs.append(ref)
        if new == ZERO:
            if ref in PROTECTED:
                report.problems.append((ref, "deleting the main branch is refused"))
            continue
        if old != ZERO and ref in PROTECTED:
            if git(root, "merge-base", "--is-ancestor", old, new, check=False).returncode != 0:
                report.problems.append((ref, f"the push rewrites {ref.removeprefix('refs/heads/')}'s history "
                                             "(not a fast-forward): memrepo never rewrites published history; "
                                             "fetch, merge and push again (`memrepo sync`)"))
                continue
        base = old if old != ZERO else _base_of_new_branch(root, new)
        paths = changed_files(root, base, new)
        report.checked += len(paths)
        report.problems += check_files(root, new, paths)
    return report


def _base_of_new_branch(root: str, new: str) -> str | None:
    """A new branch (a review branch, say) is checked from where it left main."""
    for ref in PROTECTED:
        done = git(root, "merge-base", ref, new, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.decode().strip()
    return None


def install_server_hook(bare_repo: str | os.PathLike, hook_text: str) -> str:
    """Write ``hooks/pre-receive`` into a (bare) server repository. Returns the hook's path.

    Raises:
        RepositoryError: if the folder is not a Git repository, or it has a pre-receive hook
            that is not memrepo's (it is never overwritten).
    """
    from pathlib import Path

    root = Path(bare_repo)
    done = git(root, "rev-parse", "--git-dir", check=False) if root.is_dir() else None
    if done is None or done.returncode != 0:
        raise RepositoryError(f"{bare_repo}: not a Git repository")
    gitdir = Path(done.stdout.decode().strip())
    gitdir = gitdir if gitdir.is_absolute() else root / gitdir
    path = gitdir / "hooks" / "pre-receive"
    if path.exists() and "memrepo" not in path.read_text(encoding="utf-8", errors="replace"):
        raise RepositoryError(f"{path}: a pre-receive hook that is not memrepo's is installed; nothing changed "
                              "(merge the two by hand: run `memrepo validate --pre-receive` from yours)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hook_text, encoding="utf-8")
    path.chmod(0o755)
    return str(path)
