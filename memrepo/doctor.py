"""`memrepo doctor`: find every problem in a memory repository, each with its file.

Checks are small functions ``(view) -> Iterable[Problem]`` listed, as lazy
``"module:attr"`` names, in :data:`memrepo.capabilities.DOCTOR_CHECKS`; a capability
adds its check with one entry there (another distribution through the
``memrepo.doctor_checks`` entry points). Doctor survives anything a check meets: a check that
stops (a missing Git object under a folder it walks, say) is reported as a problem
and the other checks still run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from memrepo import records as rec
from memrepo.capabilities import resolve
from memrepo.errors import MemrepoError, RecordError
from memrepo.store.objects import CorruptObjectError

from memrepo.problem import CheckedView, Problem  # Problem re-exported for callers

if TYPE_CHECKING:
    from memrepo.store.git import GitStore


def check_config(repo: CheckedView) -> Iterable[Problem]:
    import tomllib

    data = repo.snapshot.read("memrepo.toml")
    if data is None:
        yield Problem("memrepo.toml", "missing: this is not a memory repository")
        return
    try:
        tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        yield Problem("memrepo.toml", f"not valid TOML: {exc}")


def check_records(repo: CheckedView) -> Iterable[Problem]:
    """Every record parses, its id matches its path, ids are unique, cited sources exist."""
    snap = repo.snapshot
    seen: dict[str, str] = {}
    sources: dict[str, rec.Source | None] = {}
    for path, blob in repo.record_files():
        try:
            record = rec.parse(snap.read_blob(blob), path)
        except CorruptObjectError:
            continue  # reported, with the commit that refers to it, by check_git_objects
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


def _check_citation(repo: CheckedView, path: str, citation: str, cache: dict) -> Iterable[Problem]:
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


def check_sources(repo: CheckedView) -> Iterable[Problem]:
    snap = repo.snapshot
    for path, blob in snap.walk("sources"):
        if not path.endswith(".md"):
            continue
        try:
            source = rec.parse_source(snap.read_blob(blob), path)
        except CorruptObjectError:
            continue  # reported by check_git_objects
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


def check_git_objects(repo: CheckedView) -> Iterable[Problem]:
    """Every object reachable from a ref (or HEAD) exists, reads, matches its id and is well formed.

    A bad object is reported at the path that refers to it (a record file, a folder, ``.git``
    for a commit), with the newest commit whose tree holds it.
    """
    for damage in repo.store.damaged_objects():
        yield Problem(damage.path or ".git", damage.message)


def check_graph(repo: CheckedView) -> Iterable[Problem]:
    """Graph files parse as Turtle (file and line reported) and sit where their memory id puts them."""
    from memrepo.graph.checks import check_graph_files

    yield from check_graph_files(repo)


def check_graph_citations(repo: CheckedView) -> Iterable[Problem]:
    """Graph files that cite a record that is gone, or follow an older version of their record."""
    from memrepo.graph.checks import check_graph_citations as check

    yield from check(repo)


def check_graph_coverage(repo: CheckedView) -> Iterable[Problem]:
    """Episodic/semantic records without a graph file although the graph catch-up ran after them."""
    from memrepo.graph.checks import check_records_have_graph_files as check

    yield from check(repo)


def check_decisions(repo: CheckedView) -> Iterable[Problem]:
    """AutoDream decision files: every owl:sameAs comes with its merge decision (memrepo/dream/checks.py)."""
    from memrepo.dream.checks import check_decisions as check

    yield from check(repo)


def check_vault(repo: CheckedView) -> Iterable[Problem]:
    """Encrypted records decrypt with the key given; without a key that is said once, as a note, not a fault."""
    from memrepo import vault
    from memrepo.errors import VaultKeyError

    snap = repo.snapshot
    encrypted: list[tuple[str, rec.Record]] = []
    for path, blob in repo.record_files("vault"):
        try:
            record = rec.parse(snap.read_blob(blob), path)
        except (CorruptObjectError, RecordError):
            continue  # reported by check_git_objects and check_records
        if record.encrypted:
            encrypted.append((path, record))
    if not encrypted:
        return
    key = repo.settings.vault_key
    if not key:
        yield Problem("vault/", f"{len(encrypted)} encrypted record(s) not checked: encrypted, no key ({vault.KEY_HELP})", note=True)
        return
    failed: list[tuple[str, str]] = []
    for path, record in encrypted:
        try:
            vault.unseal(record, key)
        except VaultKeyError as exc:
            failed.append((path, str(exc)))
    if len(failed) == len(encrypted) > 1:
        yield Problem("vault/", f"the vault key given decrypts none of the {len(encrypted)} encrypted records (wrong key?)")
        return
    for path, message in failed:
        yield Problem(path, f"undecryptable: {message.removeprefix('vault: ')}")


def check_indexes(repo: CheckedView) -> Iterable[Problem]:
    """Derived indexes that exist can be opened (a missing or behind index is rebuilt on the next read)."""
    from memrepo.index.checks import check_indexes as check

    yield from check(repo)


def check_interrupted_writes(repo: CheckedView) -> Iterable[Problem]:
    """Work tree / index differs from HEAD, stale locks, temporary files: what killed writes leave
    (memrepo/store/recovery.py; `memrepo doctor --fix` repairs them)."""
    from memrepo.store.recovery import write_problems

    for path, message in write_problems(repo.store):
        yield Problem(path, message)
    from pathlib import Path

    from memrepo.views.profile import PROFILE_FILE, leftovers

    for folder in Path(repo.store.root).resolve().parents:  # a project's clone of its memory (.memory-repos/)
        if (folder / PROFILE_FILE).is_file():
            for left in leftovers(folder):
                yield Problem(str(left), "left by a killed `memrepo profile` command in that project (its next "
                              "profile command removes or finishes it)")
            break
    from memrepo.hooks import outdated_hooks
    from memrepo.resources import data_dir

    for name in outdated_hooks(repo.store, data_dir("hooks")):
        if not (repo.store.git_dir / "hooks" / name).exists():
            yield Problem(f".git/hooks/{name}", "missing beside memrepo's other hooks (`memrepo doctor --fix` "
                          "installs it)")
            continue
        yield Problem(f".git/hooks/{name}", "differs from the hook this memrepo ships (`memrepo doctor --fix` "
                      "reinstalls it)")


def check_merge(repo: CheckedView) -> Iterable[Problem]:
    """An unresolved Git merge (MERGE_HEAD), conflict markers left in any record or graph file, and a
    forgotten id (an active tombstone) present at HEAD, as a plain ``git merge`` can bring it back."""
    from memrepo.team.sync import merge_state
    from memrepo.write.forget import forgotten_present
    from memrepo.team.validate import conflict_marker_line

    state = merge_state(repo.store.root) if repo.store.merge_in_progress() else None
    if state is not None:
        conflicted, dropped = state
        how = (f"{len(conflicted)} file(s) still in conflict ({', '.join(conflicted[:3])}): resolve them "
               "(`git status`), `git add` them and `git commit`, or `git merge --abort`; `memrepo doctor --fix` "
               "aborts it" if conflicted else
               f"no conflicts left, but committing it would lose data ({dropped[0]}): `memrepo doctor --fix` aborts "
               "it (`memrepo sync` merges again)" if dropped else
               "no conflicts left and it drops nothing: `memrepo doctor --fix` finishes it (or `git commit`)")
        yield Problem(".git/MERGE_HEAD", f"a Git merge is unresolved: {how}")
    snap = repo.snapshot
    for path, message in forgotten_present(snap):
        yield Problem(path, message)
    for folder in (*rec.TYPES, "graph", "sources"):
        for path, blob in snap.walk(folder):
            try:
                data = snap.read_blob(blob)
            except CorruptObjectError:
                continue  # check_git_objects reports it once, with the path and commit
            line = conflict_marker_line(data)
            if line:
                yield Problem(path, f"holds a Git conflict marker on line {line}: resolve the conflict and remove it")


def check_merge_driver(repo: CheckedView) -> Iterable[Problem]:
    """A clone merges graph files with memrepo's merge driver: the tracked ``.gitattributes`` line and
    ``merge.memrepo.driver`` in its Git config (memrepo/team/mergedriver.py)."""
    from memrepo.team import mergedriver

    if repo.store.bare:
        return
    text = (repo.snapshot.read(mergedriver.ATTRIBUTES_FILE) or b"").decode("utf-8", "replace")
    if mergedriver.attributes_missing(text):
        missing = mergedriver.missing_lines(text)
        yield Problem(mergedriver.ATTRIBUTES_FILE, f"lacks `{'`, `'.join(missing)}`, so a plain `git pull` "
                      "can conflict on graph or Quest files (`memrepo doctor --fix` commits it)")
    if mergedriver.configured(repo.store.root) is None:
        yield Problem(".git/config", "no merge.memrepo.driver, so a plain `git pull` can conflict on graph files "
                      "(`memrepo doctor --fix` sets it)")


def check_control(store: "GitStore") -> tuple[list[Problem], bool]:
    """Damaged Git control files (HEAD, the branch ref, packed-refs, config, the Git index), each with its fix
    (:mod:`memrepo.store.control`); and whether HEAD cannot be resolved, so that no other check can read a commit."""
    from memrepo.store.control import control_problems

    problems = [Problem(path, message) for path, message in control_problems(store)]
    return problems, any(p.path != ".git/index" for p in problems)


Check = Callable[[CheckedView], Iterable[Problem]]


def run_check(check: Check | str, view: CheckedView) -> list[Problem]:
    """The problems one check finds; if it stops half-way, those found so far and why it stopped."""
    name = check.rpartition(":")[2] if isinstance(check, str) else getattr(check, "__name__", repr(check))
    found: list[Problem] = []
    try:
        for problem in resolve(check)(view):
            found.append(problem)
    except CorruptObjectError as exc:
        found.append(Problem(exc.path if exc.path and "/" in exc.path else ".git",
                             f"{name} stopped: Git object {exc.sha} is {exc.problem}; what comes after it was not checked"))
    except Exception as exc:  # doctor reports what it meets; it must never die on the damage it is looking for
        found.append(Problem(".", f"{name} stopped: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
    return found


def check_repository(view: CheckedView) -> list[Problem]:
    """Every problem (and note) the checks of ``view.capabilities.doctor_checks`` find in ``view`` (one fixed commit)."""
    problems: list[Problem] = []
    for check in view.capabilities.doctor_checks.values():
        problems.extend(run_check(check, view))
    return problems
