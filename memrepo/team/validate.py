"""`memrepo validate` and the server's ``pre-receive`` hook: every commit a push brings, against one policy.

A push is untrusted input (DESIGN.md §9). The hook walks *every* commit the push adds, not
the net diff: a secret added in one commit and removed in the next is still in history, and
a file a later commit fixes was still checked out by whoever fetched the one before. Each
commit's changes (against its first parent) are read through one ``git diff-tree --stdin``
and its files through one ``git cat-file --batch``, so a push of 1,000 records reads those
records and the sources they cite, not the whole repository; a blob seen in two commits is
checked once. The rules and their messages are :data:`memrepo.team.policy.RULES`
(docs/team.md §5 lists them). Each problem names the commit, the file and the rule, never a
secret's value. Through ``git``, so a ``pre-receive`` hook sees the pushed objects Git still
holds in quarantine.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any, Iterable

from memrepo import records as rec
from memrepo import tombstones as tomb
from memrepo.errors import MemrepoError, RepositoryError
from memrepo.team import policy
from memrepo.team.gitcli import git, out
from memrepo.team.policy import Problem

ZERO = "0" * 40
PROTECTED = ("refs/heads/main", "refs/heads/master")  # history that is never rewritten (DESIGN.md §8)
_MARKER_RE = re.compile(rb"^(<<<<<<< |>>>>>>> |=======$|\|\|\|\|\|\|\| )", re.M)
TEXT_SUFFIXES = (".md", ".ttl", ".toml", ".json", ".yaml", ".yml", ".txt")
_REJECT_SUBJECT_RE = re.compile(r"^Reject review branch (\S+?):")
_MEMORY_IRI_RE = re.compile(rb"<urn:memrepo:memory:([A-Za-z0-9._-]+)>")


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

    checked: int = 0  # files read
    commits: int = 0  # commits walked
    problems: list[Problem] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked": self.checked, "commits": self.commits, "refs": self.refs,
                "problems": [p.to_dict() for p in self.problems]}


@dataclass(frozen=True)
class Change:
    """One entry of a commit's diff against its first parent."""

    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    status: str  # A, M, T, D
    path: str


@dataclass(frozen=True)
class CommitInfo:
    id: str
    parents: tuple[str, ...]
    author: str
    subject: str


class _Objects:
    """Reads Git objects through one ``git cat-file --batch`` and one ``--batch-check`` process."""

    def __init__(self, root: str):
        self.batch = subprocess.Popen(["git", "-C", root, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE)
        self.check = subprocess.Popen(["git", "-C", root, "cat-file", "--batch-check"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE)

    def info(self, name: str) -> tuple[str, str, int] | None:
        """(id, type, size) of an object name (``sha`` or ``commit:path``), or None if there is none."""
        assert self.check.stdin and self.check.stdout
        self.check.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self.check.stdin.flush()
        header = self.check.stdout.readline().split()
        if len(header) < 3:
            return None
        return header[0].decode(), header[1].decode(), int(header[2])

    def read(self, name: str) -> bytes | None:
        """A blob's bytes by ``sha`` or ``commit:path`` (None: not a blob)."""
        assert self.batch.stdin and self.batch.stdout
        self.batch.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self.batch.stdin.flush()
        header = self.batch.stdout.readline().split()
        if len(header) < 3:
            return None
        data = self.batch.stdout.read(int(header[2]) + 1)[:-1]
        return data if header[1] == b"blob" else None

    def close(self) -> None:
        for proc in (self.batch, self.check):
            if proc.stdin:
                proc.stdin.close()
            proc.wait()


# --- walking commits ----------------------------------------------------------------


def _commits(root: str, include: Iterable[str], exclude: Iterable[str]) -> list[CommitInfo]:
    """The commits reachable from ``include`` and not from ``exclude``, parents before children."""
    args = ["log", "--reverse", "--topo-order", "--format=%H%x00%P%x00%an <%ae>%x00%s%x00", *include]
    exclude = list(exclude)
    if exclude:
        args += ["--not", *exclude]
    text = git(root, *args).stdout.decode("utf-8", "replace")
    fields = text.split("\0")
    commits = []
    for i in range(0, len(fields) - 4, 4):
        sha = fields[i].strip()
        commits.append(CommitInfo(sha, tuple(fields[i + 1].split()), fields[i + 2], fields[i + 3]))
    return commits


def _changes(root: str, commits: list[CommitInfo]) -> dict[str, list[Change]]:
    """Each commit's changes against its first parent (a root commit: every file), in one ``git diff-tree``."""
    if not commits:
        return {}
    lines = "".join(f"{c.id} {c.parents[0]}\n" if c.parents else f"{c.id}\n" for c in commits)
    done = git(root, "diff-tree", "--stdin", "--root", "-r", "-z", "--no-renames", "--raw", input=lines.encode())
    result: dict[str, list[Change]] = {c.id: [] for c in commits}
    tokens = done.stdout.split(b"\0")
    current: str | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i].decode("utf-8", "surrogateescape")
        if token.startswith(":"):
            old_mode, new_mode, old_blob, new_blob, status = token[1:].split()
            path = tokens[i + 1].decode("utf-8", "surrogateescape")
            if current is not None:
                result[current].append(Change(old_mode, new_mode, old_blob, new_blob, status[:1], path))
            i += 2
            continue
        if token.strip():
            current = token.strip()
        i += 1
    return result


# --- the checker ---------------------------------------------------------------------


class _Checker:
    """Checks commits one by one, remembering what it read (a blob is checked once per path)."""

    def __init__(self, root: str, *, max_file: int = policy.MAX_FILE_BYTES, max_push: int = policy.MAX_PUSH_BYTES):
        self.root = root
        self.objects = _Objects(root)
        self.max_file, self.max_push = max_file, max_push
        self.content: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.sources: dict[str, rec.Source | None] = {}  # blob id -> parsed source
        self.sizes: dict[str, int] = {}
        self.merges: set[str] = set()  # merge commits among those checked (their problems say how to redo them)
        self.report = Report()

    def close(self) -> None:
        self.objects.close()

    def problem(self, commit: str | None, path: str, rule: str, message: str) -> None:
        self.report.problems.append(Problem(path, message, rule, commit))

    # one commit
    def check_commit(self, commit: CommitInfo, changes: list[Change]) -> None:
        self.report.commits += 1
        if len(commit.parents) > 1:
            self.merges.add(commit.id)
        deleted_sources: list[str] = []
        for change in changes:
            if change.status == "D":
                self._deleted(commit.id, change, deleted_sources)
                continue
            if (change.status == "M" and len(commit.parents) > 1 and policy.is_decision_path(change.path)
                    and self._from_other_parent(commit, change)):
                continue  # a merge kept the decision another parent had written: no new decision, no edit
            self._changed(commit.id, change)
        if deleted_sources:
            self._cited_after_deletion(commit.id, deleted_sources)
        if len(commit.parents) > 1:
            self._merge_drops(commit, changes)

    def _from_other_parent(self, commit: CommitInfo, change: Change) -> bool:
        """Whether a merge's version of ``change.path`` is the blob one of its other parents holds there."""
        for parent in commit.parents[1:]:
            found = self.objects.info(f"{parent}:{change.path}")
            if found is not None and found[0] == change.new_blob:
                return True
        return False

    def check_files(self, commit: str, entries: Iterable[tuple[str, str, str]]) -> None:
        """Every file of one revision: (path, mode, blob) as ``ls-tree`` lists them."""
        for path, mode, blob in entries:
            self._changed(commit, Change("000000", mode, ZERO, blob, "A", path))

    def _deleted(self, commit: str, change: Change, deleted_sources: list[str]) -> None:
        path = change.path
        if policy.is_decision_path(path):
            self.problem(commit, path, "decision", "deletes a decision file (decision files are written once and "
                                                    "never deleted; a later decision reverses an earlier one)")
        elif tomb.is_tombstone_path(path):
            self.problem(commit, path, "tombstone", "deletes a tombstone: the forget would be undone silently "
                                                     "(`memrepo forget --undo ID` records an undo instead)")
        elif path.startswith(rec.SOURCES_FOLDER + "/") and path.endswith(".md"):
            deleted_sources.append(path.rsplit("/", 1)[-1][:-3])

    def _changed(self, commit: str, change: Change) -> None:
        path = change.path
        kind = list(policy.entry_problems(path, change.new_mode))
        for rule, message in kind:
            self.problem(commit, path, rule, message)
        if kind:
            return
        size = self._size(change.new_blob)
        limit = policy.size_limit(path, self.max_file)
        if size > limit:
            self.problem(commit, path, "size", f"{size:,} bytes, over the limit of {limit:,} per file "
                                               "(`git config memrepo.maxFileBytes` on the server changes it)")
            return
        if change.status == "M" and policy.is_decision_path(path):
            self.problem(commit, path, "decision", "edits a decision file (decision files are written once and never "
                                                    "edited; a later decision reverses an earlier one)")
            return
        data = self.objects.read(change.new_blob)
        if data is None:
            return
        self.report.checked += 1
        key = (change.new_blob, path)
        if key not in self.content:
            self.content[key] = list(self._content_problems(path, data))
        for rule, message in self.content[key]:
            self.problem(commit, path, rule, message)
        if self.content[key]:
            return
        self._context(commit, change, data)

    def _size(self, blob: str) -> int:
        if blob not in self.sizes:
            info = self.objects.info(blob)
            self.sizes[blob] = info[2] if info else 0
            total = sum(self.sizes.values())
            if total > self.max_push >= total - self.sizes[blob]:
                self.problem(None, "(push)", "size", f"the push adds {total:,} bytes of files, over the limit of "
                                                      f"{self.max_push:,} (`git config memrepo.maxPushBytes`)")
        return self.sizes[blob]

    # what a file's bytes say alone
    def _content_problems(self, path: str, data: bytes) -> Iterable[tuple[str, str]]:
        if path.endswith(TEXT_SUFFIXES):
            line = conflict_marker_line(data)
            if line:
                yield "conflict-marker", f"holds a Git conflict marker on line {line} (an unresolved merge was committed)"
                return
        text = data.decode("utf-8", "replace")
        if path == "memrepo.toml":
            yield from (("settings", m) for m in policy.settings_problems(text))
        elif path == ".gitattributes":
            yield from (("attributes", m) for m in policy.attributes_problems(text))
        elif tomb.is_tombstone_path(path):
            try:
                tomb.parse_tombstone(data, path)
            except MemrepoError as exc:
                yield "tombstone", str(exc).removeprefix(f"{path}: ")
        elif rec.is_record_path(path):
            yield from self._record_problems(path, data)
        elif path.startswith("sources/") and path.endswith(".md"):
            try:
                source = rec.parse_source(data, path)
                if rec.source_path(source.id) != path:
                    yield "record", f"source id {source.id} belongs at {rec.source_path(source.id)}"
            except MemrepoError as exc:
                yield "record", str(exc).removeprefix(f"{path}: ")
        elif path.startswith("graph/"):
            yield from (("decision" if path.startswith("graph/decisions/") else "graph", m)
                        for m in _graph_file_problems(path, data))
        if not path.startswith("vault/"):
            yield from (("secret", m) for m in policy.secret_problems(path, text))

    def _record_problems(self, path: str, data: bytes) -> Iterable[tuple[str, str]]:
        try:
            record = rec.parse(data, path)
        except MemrepoError as exc:
            yield "record", str(exc).removeprefix(f"{path}: ")
            return
        if not path.startswith(rec.SKILLS_FOLDER + "/"):
            try:
                expected = rec.record_path(record.id, record.type, record.extra)
            except MemrepoError as exc:
                yield "record", str(exc)
                return
            if expected != path and not (record.type == "resource" and path.startswith("resource/")):
                yield "record", f"id {record.id} belongs at {expected}"
            if rec.type_of_id(record.id) != record.type:
                yield "record", f"id {record.id} does not match type {record.type}"
        if record.type == "vault":
            problem = policy.vault_problem(record)
            if problem:
                yield "vault", problem

    # what a file needs from the rest of its commit
    def _context(self, commit: str, change: Change, data: bytes) -> None:
        path = change.path
        if rec.is_record_path(path):
            try:
                record = rec.parse(data, path)
            except MemrepoError:
                return
            self._citations(commit, path, record.sources)
            self._not_forgotten(commit, path, record.id)
        elif path.startswith("sources/") and path.endswith(".md"):
            self._not_forgotten(commit, path, path.rsplit("/", 1)[-1][:-3])
        elif path.startswith("graph/frames/"):
            self._graph_records(commit, path, data)
        elif tomb.is_tombstone_path(path):
            self._tombstone(commit, change, data)

    def _citations(self, commit: str, path: str, citations: Iterable[str]) -> None:
        for citation in citations:
            source_id, anchor = rec.split_citation(citation)
            source = self._source(commit, source_id)
            if source is None:
                self.problem(commit, path, "citation", f"cites source {source_id}, which does not exist")
            elif anchor and source.part(anchor) is None:
                self.problem(commit, path, "citation", f"cites {citation}, but source {source_id} has no part {anchor}")

    def _source(self, commit: str, source_id: str) -> rec.Source | None:
        try:
            path = rec.source_path(source_id)
        except MemrepoError:
            return None
        info = self.objects.info(f"{commit}:{path}")
        if info is None or info[1] != "blob":
            return None
        if info[0] not in self.sources:
            data = self.objects.read(info[0])
            try:
                self.sources[info[0]] = rec.parse_source(data, path) if data is not None else None
            except MemrepoError:
                self.sources[info[0]] = None  # reported on the source file itself
        return self.sources[info[0]]

    def _tombstone_at(self, commit: str, record_id: str) -> tomb.Tombstone | None:
        try:
            path = tomb.tombstone_path(record_id)
        except MemrepoError:
            return None
        data = self.objects.read(f"{commit}:{path}")
        if data is None:
            return None
        try:
            return tomb.parse_tombstone(data, path)
        except MemrepoError:
            return None  # reported on the tombstone itself

    def _not_forgotten(self, commit: str, path: str, record_id: str) -> None:
        stone = self._tombstone_at(commit, record_id)
        if stone is not None and stone.active:
            redo = (f"; this merge brought it back and is not published: undo it (`git reset --keep {commit[:12]}^1`) "
                    "and run `memrepo sync`, which keeps it forgotten") if commit in self.merges else ""
            self.problem(commit, path, "tombstone",
                         f"{record_id} was forgotten by {stone.forgotten_by} on {stone.forgotten_at} "
                         f"({stone.path}); it stays forgotten unless `memrepo forget --undo {record_id}` is committed"
                         + redo)

    def _tombstone(self, commit: str, change: Change, data: bytes) -> None:
        stone = tomb.parse_tombstone(data, change.path)
        if change.status == "M":
            old = self.objects.read(change.old_blob)
            try:
                before = tomb.parse_tombstone(old, change.path) if old is not None else None
            except MemrepoError:
                before = None
            same = before is not None and (before.id, before.forgotten_by, before.forgotten_at, before.reason) == (
                stone.id, stone.forgotten_by, stone.forgotten_at, stone.reason)
            undo = same and before is not None and before.active and not stone.active
            forgotten_again = before is not None and not before.active and stone.active and before.id == stone.id
            if not (undo or forgotten_again):
                self.problem(commit, change.path, "tombstone",
                             "edits a tombstone other than by recording an undo (undone_by, undone_at) "
                             "or forgetting an undone id again")
        if stone.active:
            for where in _record_paths(stone.id):
                if self.objects.info(f"{commit}:{where}") is not None:
                    self.problem(commit, where, "tombstone",
                                 f"{stone.id} is forgotten ({change.path}) but its file is still here: "
                                 "a forget removes the file in the same commit")

    def _graph_records(self, commit: str, path: str, data: bytes) -> None:
        memory_ids = {path.rsplit("/", 1)[-1][:-4]} | {m.decode() for m in _MEMORY_IRI_RE.findall(data)}
        for memory_id in sorted(memory_ids):
            if not self._record_exists(commit, memory_id):
                self.problem(commit, path, "graph", f"describes record {memory_id}, which does not exist in this commit")

    def _record_exists(self, commit: str, record_id: str) -> bool:
        for where in _record_paths(record_id):
            if self.objects.info(f"{commit}:{where}") is not None:
                return True
        if record_id.startswith(("re-", "rule-")) or rec.type_of_id(record_id) == "resource":
            folder = "rules" if record_id.startswith("rule-") else "resource"
            done = git(self.root, "grep", "-q", "-F", "-e", f"id: {record_id}", commit, "--", folder, check=False)
            return done.returncode == 0
        return False

    def _cited_after_deletion(self, commit: str, source_ids: list[str]) -> None:
        for source_id in source_ids:
            done = git(self.root, "grep", "-l", "-F", "-e", source_id, commit, "--", *rec.RECORD_ROOTS, check=False)
            citing = [line.split(":", 1)[-1] for line in done.stdout.decode("utf-8", "replace").splitlines()]
            if citing:
                more = f" and {len(citing) - 3} more" if len(citing) > 3 else ""
                self.problem(commit, rec.source_path(source_id), "source-deleted",
                             f"deletes a source that {', '.join(citing[:3])}{more} still cite "
                             "(`memrepo forget` removes a source with the records made from it)")

    def _merge_drops(self, commit: CommitInfo, changes: list[Change]) -> None:
        """A merge may drop what one side deleted; never what one side added or both sides still had."""
        parents = commit.parents
        base = git(self.root, "merge-base", *parents, check=False).stdout.decode().split()
        base_id = base[0] if base else None
        reported: set[str] = set()
        for i, parent in enumerate(parents):
            listing = out(self.root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=D",
                          parent, commit.id)
            for path in filter(None, listing.split("\0")):
                if path in reported or not _kept_kind(path):
                    continue
                others = [p for j, p in enumerate(parents) if j != i]
                both = any(self.objects.info(f"{p}:{path}") is not None for p in others)
                in_base = base_id is not None and self.objects.info(f"{base_id}:{path}") is not None
                if both or not in_base:
                    reported.add(path)
                    self.problem(commit.id, path, "merge-drop",
                                 "the merge drops this file, which " + ("both sides had" if both else
                                 "one side added and the other never had")
                                 + ": a merge keeps every record either side kept (`memrepo doctor --fix` "
                                   "redoes a half-finished merge without losing a side)")

    # what the tip of a ref says as a whole
    def check_rejections(self, tip: str) -> None:
        """Refuse a tree that holds a Dream run that a decision in the same tree rejected."""
        listing = out(self.root, "ls-tree", "-r", "-z", "--name-only", tip, "--", *policy.DECISION_FOLDERS)
        runs: dict[str, str] = {}
        rejected: dict[str, str] = {}
        reinstated: set[str] = set()
        for path in filter(None, listing.split("\0")):
            run = policy.run_id_of(path)
            if run is None:
                continue
            if run.endswith(policy.REJECTED):
                rejected[run[: -len(policy.REJECTED)]] = path
            elif run.endswith(policy.REINSTATED):
                reinstated.add(run[: -len(policy.REINSTATED)])
            else:
                runs[run] = path
        for run in sorted(set(runs) & set(rejected) - reinstated):
            if not self._merged_after(tip, runs[run], rejected[run]):
                continue  # approved and rejected concurrently in two clones: a review race, not a bypass
            fields = out(self.root, "log", "-1", "--diff-filter=A", "--format=%H%x00%an <%ae>%x00%s", tip, "--",
                         rejected[run]).split("\0")
            reviewer = fields[1] if len(fields) > 1 and fields[1] else "a reviewer"
            m = _REJECT_SUBJECT_RE.match(fields[2] if len(fields) > 2 else "")
            branch = m.group(1) if m else f"the review branch of run {run}"
            self.problem(None, runs[run], "rejected",
                         f"brings in Dream run {run} of {branch}, which {reviewer} rejected ({rejected[run]}); "
                         f"only a later decision reinstates it (`memrepo review approve --force {branch}`)")

    def _merged_after(self, tip: str, run_path: str, rejection_path: str) -> bool:
        """True if every merge that brought the run into a line without it came after the rejection (or the
        run arrived without a merge at all): the rejection was there to see when it was merged."""
        rejection = out(self.root, "log", "-1", "--diff-filter=A", "--format=%H", tip, "--", rejection_path)
        dreamed = out(self.root, "log", "-1", "--no-merges", "--diff-filter=A", "--format=%H", tip, "--", run_path)
        if not rejection or not dreamed:
            return True
        merges = out(self.root, "rev-list", "--merges", "--ancestry-path", f"{dreamed}..{tip}").split()
        bringing = [m for m in merges if self.objects.info(f"{m}^1:{run_path}") is None]
        return all(git(self.root, "merge-base", "--is-ancestor", rejection, m, check=False).returncode == 0
                   for m in bringing)

    def check_reviews(self, commits: list[CommitInfo], changes: dict[str, list[Change]], old: str | None,
                      new: str, *, self_approval: bool) -> None:
        """A Dream run reaches main only through a merge of its branch by someone other than its author."""
        first_parent = set(out(self.root, "rev-list", "--first-parent", new, *(["--not", old] if old else []))
                           .split())
        for commit in commits:
            if commit.id not in first_parent:
                continue
            for change in changes.get(commit.id, ()):
                run = policy.run_id_of(change.path) if change.status == "A" else None
                if run is None or run.endswith((policy.REJECTED, policy.REINSTATED)):
                    continue
                data = self.objects.read(change.new_blob)
                if data is None or not policy.run_needs_review(change.path, data):
                    continue  # a run that found nothing to review records its frontier on main
                side = [p for p in commit.parents[1:] if self.objects.info(f"{p}:{change.path}") is not None]
                if not side:
                    self.problem(commit.id, change.path, "review",
                                 f"adds Dream run {run} directly to main: Dream runs reach main by a reviewed merge "
                                 "of their review branch (`memrepo review approve` by a teammate)")
                    continue
                if old and any(git(self.root, "merge-base", "--is-ancestor", p, old, check=False).returncode == 0
                               for p in side):
                    continue  # already on main before this push (a sync merge brings it again)
                author = out(self.root, "log", "-1", "--diff-filter=A", "--format=%an <%ae>", side[0], "--",
                             change.path)
                if author and author == commit.author and not self_approval:
                    self.problem(commit.id, change.path, "review",
                                 f"{commit.author} approves their own Dream run {run}: a teammate reviews it "
                                 "(a server allows self-approval with `git config memrepo.selfApproval true`)")


def _record_paths(record_id: str) -> list[str]:
    """Where the record or source ``record_id`` can live (nothing for an id whose path its front matter says)."""
    try:
        if record_id.startswith(rec.SOURCE_PREFIX + "-"):
            return [rec.source_path(record_id)]
        return [rec.record_path(record_id)]
    except MemrepoError:
        return []


def _kept_kind(path: str) -> bool:
    return (rec.is_record_path(path) or path.startswith(rec.SOURCES_FOLDER + "/")
            or tomb.is_tombstone_path(path) or policy.is_decision_path(path))


def _graph_file_problems(path: str, data: bytes) -> Iterable[str]:
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


def _limits(root: str) -> dict[str, int]:
    limits = {}
    for key, name in (("memrepo.maxFileBytes", "max_file"), ("memrepo.maxPushBytes", "max_push")):
        value = git(root, "config", "--int", "--get", key, check=False).stdout.decode().strip()
        if value.isdigit():
            limits[name] = int(value)
    return limits


def validate(root: str | os.PathLike, rev_range: str | None = None) -> Report:
    """Check ``A..B`` (every commit B has that A has not, and B's tree as a whole), or every file of one
    revision (default: HEAD).

    Raises:
        RepositoryError: if a revision does not exist.
    """
    root = str(root)
    checker = _Checker(root, **_limits(root))
    checker.report.refs = [rev_range or "HEAD"]
    try:
        if rev_range and ".." in rev_range:
            left, right = (part or "HEAD" for part in rev_range.replace("...", "..").split("..", 1))
            commit, other = _commit(root, right), _commit(root, left)
            commits = _commits(root, [commit], [other])
            changes = _changes(root, commits)
            for info in commits:
                checker.check_commit(info, changes[info.id])
        else:
            commit = _commit(root, rev_range or "HEAD")
            listing = out(root, "ls-tree", "-r", "-z", commit)
            entries = []
            for line in filter(None, listing.split("\0")):
                meta, path = line.split("\t", 1)
                mode, _type, blob = meta.split()
                entries.append((path, mode, blob))
            checker.check_files(commit, entries)
        checker.check_rejections(commit)
    finally:
        checker.close()
    return checker.report


def _commit(root: str, rev: str) -> str:
    done = git(root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
    if done.returncode != 0:
        raise RepositoryError(f"revision {rev!r} not found")
    return done.stdout.decode().strip()


def check_push(root: str | os.PathLike, updates: Iterable[tuple[str, str, str]]) -> Report:
    """What a ``pre-receive`` hook checks: each (old, new, ref) line Git gives it, every new commit of each."""
    root = str(root)
    self_approval = git(root, "config", "--bool", "--get", "memrepo.selfApproval", check=False).stdout.strip() == b"true"
    checker = _Checker(root, **_limits(root))
    report = checker.report
    seen: set[str] = set()
    try:
        for old, new, ref in updates:
            report.refs.append(ref)
            if new == ZERO:
                if ref in PROTECTED:
                    checker.problem(None, ref, "history", "deleting the main branch is refused")
                continue
            if old != ZERO and ref in PROTECTED:
                if git(root, "merge-base", "--is-ancestor", old, new, check=False).returncode != 0:
                    checker.problem(None, ref, "history",
                                    f"the push rewrites {ref.removeprefix('refs/heads/')}'s history "
                                    "(not a fast-forward): memrepo never rewrites published history; "
                                    "fetch, merge and push again (`memrepo sync`)")
                    continue
            commits = [c for c in _commits(root, [new], ["--all"]) if c.id not in seen]
            seen.update(c.id for c in commits)
            changes = _changes(root, commits)
            for info in commits:
                checker.check_commit(info, changes[info.id])
            checker.check_rejections(new)
            if ref in PROTECTED:
                checker.check_reviews(commits, changes, old if old != ZERO else None, new, self_approval=self_approval)
    finally:
        checker.close()
    return report


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
