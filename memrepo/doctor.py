"""`memrepo doctor`: find every problem in a memory repository, each with its file.

Checks are small functions ``(view) -> Iterable[Problem]`` listed in :data:`CHECKS`;
later capabilities (graph files, indexes) add theirs to that list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from dulwich.objects import S_ISGITLINK

from memrepo import records as rec
from memrepo.errors import MemrepoError, RecordError

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo, MemoryView


@dataclass(frozen=True)
class Problem:
    """One thing wrong, with the file it is in."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


def check_config(repo: "MemoryView") -> Iterable[Problem]:
    import tomllib

    data = repo.snapshot.read("memrepo.toml")
    if data is None:
        yield Problem("memrepo.toml", "missing: this is not a memory repository")
        return
    try:
        tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        yield Problem("memrepo.toml", f"not valid TOML: {exc}")


def check_records(repo: "MemoryView") -> Iterable[Problem]:
    """Every record parses, its id matches its path, ids are unique, cited sources exist."""
    snap = repo.snapshot
    seen: dict[str, str] = {}
    sources: dict[str, rec.Source | None] = {}
    for path, blob in repo.record_files():
        try:
            record = rec.parse(snap.read_blob(blob), path)
        except RecordError as exc:
            yield Problem(path, str(exc).removeprefix(f"{path}: "))
            continue
        if record.id in seen:
            yield Problem(path, f"id {record.id} is also used by {seen[record.id]}")
        seen[record.id] = path
        if not path.startswith(rec.SKILLS_FOLDER + "/"):
            try:
                expected = rec.record_path(record.id, record.type, record.extra)
            except RecordError as exc:
                yield Problem(path, str(exc))
                continue
            if expected != path and not (record.type == "resource" and path.startswith("resource/")):
                yield Problem(path, f"id {record.id} belongs at {expected}")
            if rec.type_of_id(record.id) != record.type:
                yield Problem(path, f"id {record.id} does not match type {record.type}")
        for citation in record.sources:
            yield from _check_citation(repo, path, citation, sources)


def _check_citation(repo: "MemoryView", path: str, citation: str, cache: dict) -> Iterable[Problem]:
    source_id, anchor = rec.split_citation(citation)
    if source_id not in cache:
        try:
            cache[source_id] = repo.source(source_id)
        except MemrepoError:
            cache[source_id] = None
    source = cache[source_id]
    if source is None:
        yield Problem(path, f"cites source {source_id}, which does not exist")
    elif anchor and source.part(anchor) is None:
        yield Problem(path, f"cites {citation}, but source {source_id} has no part {anchor}")


def check_sources(repo: "MemoryView") -> Iterable[Problem]:
    snap = repo.snapshot
    for path, blob in snap.walk("sources"):
        if not path.endswith(".md"):
            continue
        try:
            source = rec.parse_source(snap.read_blob(blob), path)
        except RecordError as exc:
            yield Problem(path, str(exc).removeprefix(f"{path}: "))
            continue
        try:
            expected = rec.source_path(source.id)
        except RecordError as exc:
            yield Problem(path, str(exc))
            continue
        if expected != path:
            yield Problem(path, f"source id {source.id} belongs at {expected}")


def check_git_objects(repo: "MemoryView") -> Iterable[Problem]:
    """Every object reachable from a ref exists and is well formed."""
    store = repo.store.repo.object_store
    seen: set[bytes] = set()
    todo: list[tuple[bytes, str]] = []
    for ref, sha in repo.store.repo.get_refs().items():
        if ref != b"HEAD":
            todo.append((sha, ref.decode()))
    while todo:
        sha, where = todo.pop()
        if sha in seen:
            continue
        seen.add(sha)
        try:
            obj = store[sha]
            obj.check()
        except KeyError:
            yield Problem(".git", f"object {sha.decode()} ({where}) is missing")
            continue
        except Exception as exc:  # dulwich raises several types for corrupt objects
            yield Problem(".git", f"object {sha.decode()} ({where}) is corrupt: {exc}")
            continue
        kind = obj.type_name
        if kind == b"commit":
            todo.append((obj.tree, f"tree of {sha.decode()[:12]}"))
            todo.extend((p, f"parent of {sha.decode()[:12]}") for p in obj.parents)
        elif kind == b"tree":
            for item in obj.iteritems():
                if not S_ISGITLINK(item.mode):
                    todo.append((item.sha, item.path.decode("utf-8", "replace")))
        elif kind == b"tag":
            todo.append((obj.object[1], f"tag {sha.decode()[:12]}"))


def check_graph(repo: "MemoryView") -> Iterable[Problem]:
    """Graph files parse as Turtle (file and line reported) and sit where their memory id puts them."""
    from memrepo.graph.checks import check_graph_files

    yield from check_graph_files(repo)


def check_graph_citations(repo: "MemoryView") -> Iterable[Problem]:
    """Graph files that cite a record that is gone, or follow an older version of their record."""
    from memrepo.graph.checks import check_graph_citations as check

    yield from check(repo)


def check_graph_coverage(repo: "MemoryView") -> Iterable[Problem]:
    """Episodic/semantic records without a graph file although the graph catch-up ran after them."""
    from memrepo.graph.checks import check_records_have_graph_files as check

    yield from check(repo)


def check_decisions(repo: "MemoryView") -> Iterable[Problem]:
    """AutoDream decision files: every owl:sameAs comes with its merge decision (memrepo/dream/checks.py)."""
    from memrepo.dream.checks import check_decisions as check

    yield from check(repo)


def check_indexes(repo: "MemoryView") -> Iterable[Problem]:
    """Derived indexes that exist can be opened (a missing or behind index is rebuilt on the next read)."""
    from memrepo.index.checks import check_indexes as check

    yield from check(repo)


def check_interrupted_writes(repo: "MemoryView") -> Iterable[Problem]:
    """Work tree / index differs from HEAD, stale locks, temporary files: what killed writes leave
    (memrepo/store/recovery.py; `memrepo doctor --fix` repairs them)."""
    from memrepo.store.recovery import write_problems

    for path, message in write_problems(repo.store):
        yield Problem(path, message)
    from memrepo.hooks import outdated_hooks
    from memrepo.resources import data_dir

    for name in outdated_hooks(repo.store, data_dir("hooks")):
        yield Problem(f".git/hooks/{name}", "differs from the hook this memrepo ships (`memrepo doctor --fix` "
                      "reinstalls it)")


def check_merge(repo: "MemoryView") -> Iterable[Problem]:
    """An unresolved Git merge (MERGE_HEAD), and conflict markers left in any record or graph file."""
    from memrepo.team.validate import conflict_marker_line

    if repo.store.merge_in_progress():
        yield Problem(".git/MERGE_HEAD", "a Git merge is unresolved: resolve the conflicted files (`git status`), "
                      "`git add` them and `git commit`, or `git merge --abort`")
    snap = repo.snapshot
    for folder in (*rec.TYPES, "graph", "sources"):
        for path, blob in snap.walk(folder):
            line = conflict_marker_line(snap.read_blob(blob))
            if line:
                yield Problem(path, f"holds a Git conflict marker on line {line}: resolve the conflict and remove it")


CHECKS: list[Callable[["MemoryView"], Iterable[Problem]]] = [
    check_config,
    check_records,
    check_sources,
    check_git_objects,
    check_graph,
    check_graph_citations,
    check_graph_coverage,
    check_decisions,
    check_indexes,
    check_interrupted_writes,
    check_merge,
]


def check_repository(repo: "MemoryRepo") -> list[Problem]:
    view = repo.at(None)  # one fixed commit for every check
    problems: list[Problem] = []
    for check in CHECKS:
        problems.extend(check(view))
    return problems
