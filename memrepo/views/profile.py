"""Profiles: a project's binding to memory, materialized as plain files under ``.memory/`` (Memorix §4.3).

The profile file is ``memrepo-profile.toml`` at the project's root, committed with
the project like a lock file: the ordered history of bindings (memory repository,
Environment or Quest, the Environment it resolved to, the memory commit) and a
``current`` pointer into it.

``.memory`` is a symbolic link to ``.memory-trees/<environment>-<files hash>``.
Activating builds the new tree beside the old one (under a temporary name, renamed
into place when complete), then points a new link at it and renames the link over
``.memory``: one ``rename(2)``, so a reader that resolves ``.memory`` sees the old
tree or the new one, never a mix, and never nothing. The two trees before the
current one are kept for readers still inside them (and for an instant rollback);
older ones are removed. Every file under a tree is a plain file written from a
blob (read-only: an unchanged file is hard-linked from the previous tree);
nothing in it is a symbolic link, so nothing points outside it.

Docs in ``resource/`` that carry ``package`` and ``version`` front matter are
mounted for the newest documented version the project's locks pin or its
manifests' ranges allow (:mod:`memrepo.views.versions`), never another version's;
with none documented inside the range, none (and a warning says so).

Nothing here commits to the memory repository: the Environments and Derivations
a profile binds are kept in the project's ``memrepo-profile.d/`` (committed with
the profile file), so any clone of the project rebuilds the same tree from the
memory remote alone; a Quest's reads go to the memory clone's untracked count log.
``upgrade`` and ``rollback`` move ``.memory`` and the profile file together (a
journal the next profile command finishes or drops, :func:`_recover`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tomllib
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from memrepo.errors import MemrepoError, NotFoundError, RecordError, RepositoryError
from memrepo.store.git import GitStore
from memrepo.views import derive as dv
from memrepo.views import env as ev
from memrepo.views import quest as qv
from memrepo.views import versions

PROFILE_FILE = "memrepo-profile.toml"
MOUNT = ".memory"
TREES_DIR = ".memory-trees"
REPOS_DIR = ".memory-repos"  # clones of memories bound by URL (or as a bare repository), ignored by Git
KEEP_TREES = 3  # the current tree and the two before it
SKILLS_LOCATOR = "procedural/skills/"


@dataclass
class BindingEntry:
    memory: str  # path (relative to the project) or URL of the memory repository (see :func:`memory_path`)
    target: str  # "environment:<id>" or "quest:<slug>"
    environment: str
    commit: str  # the memory repository's HEAD when bound

    def to_dict(self) -> dict[str, str]:
        return {"memory": self.memory, "target": self.target, "environment": self.environment, "commit": self.commit}


@dataclass
class Profile:
    project: Path
    bindings: list[BindingEntry] = field(default_factory=list)
    current: int = 0  # 1-based index into bindings; 0: none

    @property
    def path(self) -> Path:
        return self.project / PROFILE_FILE

    @property
    def active(self) -> BindingEntry:
        if not self.current:
            raise RecordError(f"{self.path}: no binding yet (run `memrepo profile bind --memory PATH ENV-or-QUEST`)")
        return self.bindings[self.current - 1]

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "bindings": [b.to_dict() for b in self.bindings]}

    def render(self) -> str:
        lines = ["# memrepo profile: the memory this project mounts under .memory/ (`memrepo profile --help`).",
                 "# Bindings are kept in order; `current` is the one in use (1 = the first).",
                 f"current = {self.current}"]
        for entry in self.bindings:
            lines += ["", "[[binding]]"] + [f"{k} = {json.dumps(v)}" for k, v in entry.to_dict().items()]
        return "\n".join(lines) + "\n"


def load_profile(project: str | os.PathLike) -> Profile:
    """The project's profile (an empty one if it has no profile file yet).

    Raises:
        RecordError: the profile file is not valid TOML or not a profile.
    """
    profile = Profile(Path(project))
    try:
        data = tomllib.loads(profile.path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return profile
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{profile.path}: not valid TOML ({exc})") from exc
    try:
        profile.bindings = [BindingEntry(**{k: str(b[k]) for k in ("memory", "target", "environment", "commit")})
                            for b in data.get("binding", [])]
        profile.current = int(data.get("current", len(profile.bindings)))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"{profile.path}: a binding lacks {exc}") from exc
    if not 0 <= profile.current <= len(profile.bindings):
        raise RecordError(f"{profile.path}: current = {profile.current} names no binding")
    return profile


def save_profile(profile: Profile) -> None:
    tmp = profile.path.with_name(f".{PROFILE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(profile.render(), encoding="utf-8")
    os.replace(tmp, profile.path)


def memory_path(project: Path, memory: str) -> Path:
    """Where the memory repository of a binding is: a path relative to the project (or absolute), or a
    ``file://`` URL, of a working memory repository is used in place; any other URL (https, ssh,
    ``user@host:path``), or a bare repository given by path or ``file://`` URL, is cloned into the project's
    ``.memory-repos/`` (see :func:`ensure_memory`) and that clone is read."""
    if needs_clone(project, memory):
        return _clone_dir(project, memory)
    return _local(project, memory)


def _clone_dir(project: Path, memory: str) -> Path:
    name = re.sub(r"[^\w.-]+", "-", memory.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]).removesuffix(".git")
    digest = hashlib.sha256(memory.encode("utf-8")).hexdigest()[:8]
    return project / REPOS_DIR / f"{name.strip('.-') or 'memory'}-{digest}"


def _local(project: Path, memory: str) -> Path:
    if memory.startswith("file://"):
        return Path(memory[7:])
    return (project / memory).resolve() if not Path(memory).is_absolute() else Path(memory)


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def needs_clone(project: Path, memory: str) -> bool:
    """``memory`` is not a working repository on this machine: it is cloned into ``.memory-repos/``."""
    if memory.startswith("file://"):
        return not (_local(project, memory) / ".git").exists()
    if "://" in memory or re.match(r"^[\w.-]+@[\w.-]+:", memory):
        return True
    local = _local(project, memory)
    if not local.exists():  # a bare repository that moved or is unreachable: the clone made of it, if any
        return (_clone_dir(project, memory) / ".git").is_dir()
    return _is_bare(local)


def _clone_url(project: Path, memory: str) -> str:
    if "://" in memory or re.match(r"^[\w.-]+@[\w.-]+:", memory):
        return memory
    return str(_local(project, memory))  # a bare repository by path, relative to the project


def ensure_memory(project: Path, memory: str, *, fetch: bool = False) -> Path:
    """The folder of ``memory`` for this project: a clone in ``.memory-repos/`` is made on first use (with
    ``memrepo clone``'s machinery) and, with ``fetch``, brought up to its remote (fetch and merge, no push).

    Raises:
        RepositoryError: the clone or the fetch failed, or the remote is not a memory repository.
    """
    from memrepo.team.join import clone
    from memrepo.team.sync import pull

    path = memory_path(project, memory)
    if not needs_clone(project, memory):
        return path
    _own_folder(project, REPOS_DIR)
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# memrepo: clones of the memories this project binds by URL\n*\n", encoding="utf-8")
        clone(_clone_url(project, memory), path)
    elif fetch:
        pull(path)
    return path


class Stores:
    """Memory repositories opened by path for one operation (closed together)."""

    def __init__(self, project: Path):
        self.project = project
        self._open: dict[Path, GitStore] = {}
        self._stack = ExitStack()

    def get(self, memory: str) -> GitStore:
        path = ensure_memory(self.project, memory)
        if path not in self._open:
            store = GitStore.open(path)
            self._stack.callback(store.close)
            self._open[path] = store
        return self._open[path]

    def opener(self, base: str) -> Callable[[str], GitStore]:
        """Opens a binding's other repository: relative paths are relative to the memory repository ``base``."""
        root = memory_path(self.project, base)
        return lambda repo: self.get(str(repo) if Path(repo).is_absolute() or repo.startswith("file://")
                                     else str((root / repo).resolve()))

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> "Stores":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the project's copies of what it binds ---------------------------------------------------------------------------

VIEWS_DIR = "memrepo-profile.d"  # manifests of the Environments and Derivations the profile binds (committed)


def _manifest_file(project: Path, kind: str, ident: str) -> Path:
    return project / VIEWS_DIR / kind / f"{ident}.json"


def _keep(project: Path, kind: str, ident: str, data: bytes) -> None:
    """Write a manifest into the project, once (its name is the hash of what it holds)."""
    path = _manifest_file(project, kind, ident)
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _env_bytes(env: ev.Environment) -> bytes:
    return (json.dumps(env.to_dict(), indent=2, sort_keys=True) + "\n").encode("utf-8")


def _keep_env(project: Path, env: ev.Environment, derivations: dict[str, dv.Derivation]) -> None:
    """Keep the manifests of ``env`` and of its Derivations in the project's ``memrepo-profile.d/``: with them
    and the memory remote (which holds every file's blob), any clone of the project rebuilds the same tree."""
    for binding in env.bindings:
        _keep(project, "derivations", binding.derivation, derivations[binding.derivation].manifest())
    _keep(project, "environments", env.id, _env_bytes(env))


def _load_env(project: Path, store: GitStore, env_id: str) -> ev.Environment:
    """The Environment ``env_id``: the project's copy, else the memory repository's.

    Raises:
        RecordError: the project's copy is not the manifest of that Environment.
        NotFoundError: neither has it.
    """
    path = _manifest_file(project, "environments", env_id)
    if not path.is_file():
        try:
            return ev.load_env(store, env_id)
        except NotFoundError as exc:
            raise NotFoundError(f"{exc}: neither {VIEWS_DIR}/environments/ in the project nor the memory "
                                f"repository holds it (commit {VIEWS_DIR}/ with {PROFILE_FILE})") from exc
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        env = ev.Environment(env_id, [ev.Binding(**b) for b in data["bindings"]], dict(data.get("overrides", {})))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not an Environment manifest ({exc})") from exc
    if ev.environment_id(env.bindings, env.overrides) != env_id:
        raise RecordError(f"{path}: its bindings do not hash to {env_id} (edited by hand?); bind again")
    return env


def _load_derivations(project: Path, stores: "Stores", entry: BindingEntry,
                      env: ev.Environment) -> dict[str, dv.Derivation]:
    """id -> Derivation of every binding of ``env``: the project's copy, else the memory repository's."""
    store = stores.get(entry.memory)
    out: dict[str, dv.Derivation] = {}
    for binding in env.bindings:
        source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
        path = _manifest_file(project, "derivations", binding.derivation)
        if path.is_file():
            derivation = dv.from_manifest(source, path.read_bytes(), binding.derivation)
            if dv.derivation_id(derivation.inputs) != binding.derivation:
                raise RecordError(f"{path}: its files do not hash to {binding.derivation} (edited by hand?); "
                                  "bind again")
        else:
            derivation = dv.load(source, binding.derivation)
        out[derivation.id] = derivation
    return out


# --- binding -------------------------------------------------------------------------------------------------------


def bind(project: str | os.PathLike, memory: str, target: str, *, author: bytes | None = None) -> BindingEntry:
    """Bind the project to an Environment id (or prefix) or a Quest slug of ``memory``; it becomes current.

    A Quest is bound through an Environment mounting its current Derivation at the root, plus approved
    skills under ``skills/`` when the memory has any. Nothing is committed to the memory repository: the
    Environment and its Derivations are kept in the project's ``memrepo-profile.d/`` (commit it with the
    profile file). Nothing under ``.memory/`` changes until activated.
    """
    project = Path(project)
    if not project.is_dir():
        raise RecordError(f"{project}: not a folder")
    profile = load_profile(project)  # nothing under .memory-trees/ is touched: a bind changes no tree
    with Stores(project) as stores:
        store = stores.get(memory)
        env, derivations, label = _target_environment(stores, memory, target)
        _keep_env(project, env, derivations)
        head = store.head()
        entry = BindingEntry(memory, label, env.id, head.decode() if head else "")
    profile.bindings.append(entry)
    profile.current = len(profile.bindings)
    save_profile(profile)
    return entry


def _target_environment(stores: "Stores", memory: str, target: str
                        ) -> tuple[ev.Environment, dict[str, dv.Derivation], str]:
    store = stores.get(memory)
    kind, _, name = target.partition(":") if ":" in target else ("", "", target)
    if kind in ("", "environment", "env"):
        try:
            env = ev.load_env(store, name)
        except NotFoundError:
            if kind:
                raise
        else:
            derivations = {}
            for binding in env.bindings:
                source = store if binding.repository is None else stores.opener(memory)(binding.repository)
                derivations[binding.derivation] = dv.load(source, binding.derivation)
            return env, derivations, f"environment:{env.id}"
    if kind in ("", "quest"):
        quest = qv.get(store, name)
        env, derivations = _quest_environment(store, dv.load(store, quest.current))
        return env, derivations, f"quest:{quest.slug}"
    raise RecordError(f"{target!r}: expected an Environment id, a Quest slug, environment:ID or quest:SLUG")


def _quest_environment(store: GitStore, root: dv.Derivation) -> tuple[ev.Environment, dict[str, dv.Derivation]]:
    """The Environment a Quest binding mounts: its Derivation at ``/``, approved skills at ``/skills``."""
    derivations = {root.id: root}
    bindings = [ev.Binding("/", root.id)]
    if not any(dv.parse_locator(text).path.startswith(SKILLS_LOCATOR) for text in root.ir) and \
            store.snapshot().entry(SKILLS_LOCATOR.rstrip("/")):
        skills = dv.uncommitted(store, *dv.resolve_selection(store, [SKILLS_LOCATOR]))
        derivations[skills.id] = skills
        bindings.append(ev.Binding("/skills", skills.id))
    return ev.Environment(ev.environment_id(bindings, {}), bindings, {}), derivations


# --- lock files and manifests ----------------------------------------------------------------------------------------


read_requirements = versions.read_requirements


def read_locks(project: str | os.PathLike) -> dict[str, str]:
    """Package -> the version a lock file (or an ``==`` requirement) pins; ranges are in :func:`read_requirements`."""
    out = {}
    for package, req in versions.read_requirements(Path(project)).items():
        m = re.fullmatch(r"===?\s*([^\s,;]+)|=?\s*(\d[^\s,;|<>=~^]*)", req.spec)
        if m and (req.pinned or req.spec.startswith("==")):
            out[package] = m.group(1) or m.group(2)
    return out


# --- one profile command at a time; what a killed one left -----------------------------------------------------------

LOCK_FILE = ".lock"
JOURNAL = ".switch.json"  # the profile file a switch (upgrade, rollback) writes once .memory points at its tree


@contextmanager
def _locked(project: Path) -> Iterator[None]:
    """Profile commands that change the project run one at a time (an advisory lock in .memory-trees/)."""
    trees = _own_folder(project, TREES_DIR)
    trees.mkdir(exist_ok=True)
    fd = os.open(trees / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # no advisory locks here: one command at a time is then the user's to keep
            pass
        yield
    finally:
        os.close(fd)


def leftovers(project: str | os.PathLike) -> list[Path]:
    """What a killed profile command left in the project: ``.building-*`` trees, temporary links and files,
    an unfinished switch (the next profile command removes or finishes them; ``memrepo doctor`` reports them)."""
    project = Path(project)
    trees = project / TREES_DIR
    found: list[Path] = []
    if trees.is_dir() and not trees.is_symlink():
        found += sorted(p for p in trees.iterdir() if p.name.startswith((".building-", f"{JOURNAL}.")) or
                        p.name == JOURNAL)
    found += sorted(project.glob(f"{MOUNT}.*.tmp")) + sorted(project.glob(f".{PROFILE_FILE}.*.tmp"))
    found += sorted(project.glob(f"{VIEWS_DIR}/*/.*.tmp"))
    return found


def _unreferenced(project: Path, profile: Profile) -> list[Path]:
    """Manifests in ``memrepo-profile.d/`` that no binding of ``profile`` names (an upgrade killed before its
    switch, bindings an upgrade after a rollback replaced)."""
    folder = project / VIEWS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    envs = {b.environment for b in profile.bindings}
    derivations: set[str] = set()
    for env_id in envs:
        try:
            data = json.loads(_manifest_file(project, "environments", env_id).read_text(encoding="utf-8"))
            derivations |= {str(b["derivation"]) for b in data["bindings"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    kept = {"environments": envs, "derivations": derivations}
    return sorted(p for kind, ids in kept.items() for p in (folder / kind).glob("*.json") if p.stem not in ids)


def _recover(project: Path) -> list[str]:
    """Finish or undo what a killed profile command left (under :func:`_locked`); what was done, said plainly.

    A switch writes its journal (the new profile file), swaps ``.memory``, then writes the profile file and
    removes the journal. If ``.memory`` points at the journal's tree the swap happened: the profile file is
    written from it. If not, the switch never happened: the journal is dropped, the profile file is as it was.
    """
    notes: list[str] = []
    trees = project / TREES_DIR
    journal = trees / JOURNAL
    if journal.is_file():
        try:
            data = json.loads(journal.read_text(encoding="utf-8"))
            finished = _current_tree(project) == data["tree"]
            if finished:
                tmp = project / f".{PROFILE_FILE}.{os.getpid()}.tmp"
                tmp.write_text(data["profile"], encoding="utf-8")
                os.replace(tmp, project / PROFILE_FILE)
            notes.append(f"finished an interrupted switch to binding {data['current']}" if finished else
                         f"dropped an interrupted switch to binding {data['current']} (.memory never moved)")
        except (OSError, ValueError, KeyError, TypeError):
            notes.append("dropped an unreadable interrupted switch (.memory never moved)")
        journal.unlink(missing_ok=True)
    for path in leftovers(project):
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() and \
            not path.is_symlink() else 0
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        notes.append(f"removed {path.relative_to(project).as_posix()}" +
                     (f" ({size / 1e6:.1f} MB), left by a killed command" if size else ", left by a killed command"))
    try:
        unused = _unreferenced(project, load_profile(project))
    except RecordError:
        unused = []  # a profile file that does not parse: the command itself says so
    for path in unused:
        path.unlink(missing_ok=True)
    return notes


def _switch(project: Path, profile: Profile, tree: str) -> None:
    """Point ``.memory`` at ``tree`` and make ``profile`` the profile file, as one step for a killed command."""
    trees = project / TREES_DIR
    tmp = trees / f"{JOURNAL}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"tree": tree, "current": profile.current, "profile": profile.render()}),
                   encoding="utf-8")
    os.replace(tmp, trees / JOURNAL)
    _swap(project, tree)
    save_profile(profile)
    (trees / JOURNAL).unlink()


# --- materializing ---------------------------------------------------------------------------------------------------


@dataclass
class Activation:
    environment: str
    tree: str  # the folder under .memory-trees/ that .memory now points to
    files: int
    changes: dict[str, list[str]] = field(default_factory=dict)  # added / removed / changed names
    built: bool = True  # False: the tree was already there (a rollback to a recent tree)
    binding: int = 0
    versions: list[dict[str, Any]] = field(default_factory=list)  # the docs version chosen for each package
    notes: list[str] = field(default_factory=list)  # what a killed command left, finished or removed now

    @property
    def warnings(self) -> list[str]:
        return version_warnings(self.versions)

    def to_dict(self) -> dict[str, Any]:
        return {"environment": self.environment, "tree": self.tree, "files": self.files, "changes": self.changes,
                "built": self.built, "binding": self.binding, "versions": self.versions,
                "warnings": self.warnings, "notes": self.notes}


def version_warnings(choices: list[dict[str, Any]]) -> list[str]:
    """One line for each package whose docs memory holds, but in no version the project's requirement allows."""
    return [f"{c['package']}: memory documents no version inside {c['requirement']} ({c['source']}); it documents "
            f"{', '.join(c['documented'])}; none of its docs is mounted"
            for c in choices if c["mounted"] is None]


Plan = tuple[list[ev.Placed], str, list[dict[str, Any]]]  # the files, the tree's name, the versions chosen


def _plan(project: Path, stores: Stores, entry: BindingEntry) -> Plan:
    store = stores.get(entry.memory)
    env = _load_env(project, store, entry.environment)
    known = _load_derivations(project, stores, entry, env)
    choices: list[dict[str, Any]] = []
    placed, _ = ev.table(store, env, versions.read_requirements(project), open_store=stores.opener(entry.memory),
                         known=known, choices=choices)
    return placed, _tree_name(env.id, placed), choices


def _tree_name(env_id: str, placed: list[ev.Placed]) -> str:
    """The Environment's id and a hash of the files it mounts here (the lock decides among versions)."""
    digest = hashlib.sha256(json.dumps([[p.name, p.blob] for p in placed]).encode()).hexdigest()[:12]
    return f"{env_id}-{digest}"


def _check_name(name: str) -> None:
    padded = f"/{name}/"
    if "//" in padded or "/./" in padded or "/../" in padded or "\x00" in name or "\\" in name:
        raise RepositoryError(f"refusing to mount {name!r}: the name would escape .memory/")


def _own_folder(project: Path, name: str) -> Path:
    """``project/name`` (``.memory-trees``, ``.memory-repos``), refused if it is a symbolic link: memrepo writes,
    clones and prunes there, and a link (one a project's repository can carry) would take that elsewhere.

    Raises:
        OutsideRepositoryError: ``project/name`` is a symbolic link.
    """
    from memrepo.store.paths import OutsideRepositoryError

    path = project / name
    if path.is_symlink():
        raise OutsideRepositoryError(f"{path} is a symbolic link (to {os.readlink(path)}); memrepo builds, clones "
                                     f"and prunes only in a folder of the project's own: remove the link and run "
                                     "the command again")
    return path


def _build(project: Path, stores: Stores, entry: BindingEntry, placed: list[ev.Placed], name: str,
           previous: str | None) -> bool:
    """Write the tree ``name`` under .memory-trees/ unless it is there; True if it was built now.

    A file the ``previous`` tree holds with the same blob is hard-linked from it instead of written again (one
    inode, no data copied), so an upgrade that changes a few files costs a link per file, not a write.
    """
    trees = _own_folder(project, TREES_DIR)
    final = trees / name
    if final.is_dir():
        return False
    trees.mkdir(exist_ok=True)
    tmp = trees / f".building-{name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    old = _table_of(project, previous)
    old_root = str(trees / previous) if previous else None
    root = str(tmp)
    made: set[str] = {""}
    readers: dict[str | None, Any] = {}
    for item in placed:  # plain os.path strings: pathlib costs as much as the link itself at 10,000 files
        _check_name(item.name)
        folder = item.name.rpartition("/")[0]
        if folder not in made:
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            made.add(folder)
        target = f"{root}/{item.name}"
        if old_root is not None and old.get(item.name) == item.blob:
            try:
                os.link(f"{old_root}/{item.name}", target)
                continue
            except OSError:
                pass  # no hard links here (or the old file is gone): write it
        if item.repository not in readers:
            store = stores.get(entry.memory) if item.repository is None else stores.opener(entry.memory)(item.repository)
            readers[item.repository] = store.snapshot().read_blob
        # Read-only: an edit under .memory/ would also change the trees sharing the file by a hard link.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        with os.fdopen(fd, "wb") as handle:
            handle.write(readers[item.repository](item.blob))
    (trees / f".{name}.json").write_text(json.dumps({p.name: p.blob for p in placed}, sort_keys=True))
    os.rename(tmp, final)  # complete or absent: a killed build leaves only a .building-* folder
    return True


def _table_of(project: Path, tree: str | None) -> dict[str, str]:
    """name -> blob of a tree memrepo built (kept beside it, outside what .memory shows)."""
    if tree is None:
        return {}
    try:
        return json.loads((_own_folder(project, TREES_DIR) / f".{tree}.json").read_text())
    except (OSError, ValueError):
        return {}


def _swap(project: Path, tree: str) -> None:
    mount = project / MOUNT
    if mount.exists() and not mount.is_symlink():
        raise RepositoryError(f"{mount}: exists and is not a link memrepo made; move it away to activate a profile")
    link = project / f".memory.{os.getpid()}.tmp"
    if link.is_symlink():
        link.unlink()
    os.symlink(f"{TREES_DIR}/{tree}", link, target_is_directory=True)
    os.replace(link, mount)  # the atomic step: readers see the old tree or the new one


def _current_tree(project: Path) -> str | None:
    mount = project / MOUNT
    if not mount.is_symlink():
        return None
    name = os.readlink(mount).replace("\\", "/").rsplit("/", 1)[-1]
    return name if name and not name.startswith(".") else None  # a link memrepo did not make names no tree


def _prune(project: Path, keep: list[str]) -> None:
    """Remove trees beyond the most recently used :data:`KEEP_TREES` (by modification time)."""
    trees = _own_folder(project, TREES_DIR)
    found = sorted((p for p in trees.iterdir() if p.is_dir() and not p.name.startswith(".")),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    for path in found[KEEP_TREES:]:
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)
            (trees / f".{path.name}.json").unlink(missing_ok=True)


def _changes(before: dict[str, str], placed: list[ev.Placed]) -> dict[str, list[str]]:
    after = {p.name: p.blob for p in placed}
    return {"added": sorted(set(after) - set(before)), "removed": sorted(set(before) - set(after)),
            "changed": sorted(n for n in set(before) & set(after) if before[n] != after[n])}


def activate(project: str | os.PathLike, *, author: bytes | None = None) -> Activation:
    """Materialize the current binding under ``.memory/`` (build aside, swap with one rename)."""
    project = Path(project)
    with _locked(project):
        notes = _recover(project)
        with Stores(project) as stores:
            result = _activate(project, load_profile(project), stores)
    result.notes = notes
    return result


def _activate(project: Path, profile: Profile, stores: Stores, planned: Plan | None = None,
              switch: bool = False) -> Activation:
    """Build the tree of ``profile``'s current binding and point ``.memory`` at it; with ``switch``, the
    profile file is written with it (:func:`_switch`). A Quest's read is counted in the memory's local log."""
    entry = profile.active
    placed, tree, choices = planned or _plan(project, stores, entry)
    previous = _current_tree(project)
    before = _table_of(project, previous)
    built = _build(project, stores, entry, placed, tree, previous)
    os.utime(project / TREES_DIR / tree)  # most recently used: kept by the pruning
    if switch:
        _switch(project, profile, tree)
    else:
        _swap(project, tree)
    _prune(project, [tree])
    if entry.target.startswith("quest:"):
        qv.count_read(stores.get(entry.memory), entry.target[6:])
    return Activation(entry.environment, tree, len(placed), _changes(before, placed), built, profile.current,
                      choices)


@dataclass
class UpgradePlan:
    """What an upgrade does: the Environment it moves to (None: the same) and the files that change."""

    environment: str | None
    changes: dict[str, list[str]]
    derivations: dict[str, dv.Derivation] = field(default_factory=dict)  # mount -> its Derivation re-resolved
    placed: list[ev.Placed] = field(default_factory=list)  # the files the new Environment mounts here
    tree: str = ""
    reactivate: bool = False  # the same Environment, mounted anew: the project's locks or manifests changed
    versions: list[dict[str, Any]] = field(default_factory=list)
    new_env: ev.Environment | None = None

    @property
    def up_to_date(self) -> bool:
        return self.environment is None and not self.reactivate

    def to_dict(self) -> dict[str, Any]:
        return {"environment": self.environment, "changes": self.changes, "reactivate": self.reactivate,
                "versions": self.versions, "warnings": version_warnings(self.versions)}


def plan_upgrade(project: str | os.PathLike) -> UpgradePlan:
    """What :func:`upgrade` would do, without writing anything in the project or the memory repository (a
    memory bound by URL is fetched into its clone first).

    Every Derivation of the bound Environment is resolved again from its selection at the latest
    generations (for a Quest, the Quest's current selection), mounted at the same paths with the same
    overrides, for the versions the project's locks and manifests ask for now.
    """
    project = Path(project)
    entry = load_profile(project).active
    ensure_memory(project, entry.memory, fetch=True)  # a memory bound by URL: its remote's latest
    with Stores(project) as stores:
        return _plan_upgrade(project, stores, entry)


def _plan_upgrade(project: Path, stores: Stores, entry: BindingEntry) -> UpgradePlan:
    store = stores.get(entry.memory)
    env = _load_env(project, store, entry.environment)
    old = _load_derivations(project, stores, entry, env)
    quest = qv.get(store, entry.target[6:]) if entry.target.startswith("quest:") else None
    fresh: dict[str, dv.Derivation] = {}
    for binding in env.bindings:
        source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
        selection = quest.ir if quest is not None and binding.mount == "/" else old[binding.derivation].ir
        ir, inputs = dv.resolve_selection(source, selection)
        fresh[binding.mount] = dv.Derivation(dv.derivation_id(inputs), ir, inputs, tree="")
    bindings = []
    for b in env.bindings:
        remote = None if b.repository is None else stores.opener(entry.memory)(b.repository)
        head = remote.head() if remote is not None and fresh[b.mount].id != b.derivation else None
        bindings.append(ev.Binding(b.mount, fresh[b.mount].id, b.repository, head.decode() if head else b.commit))
    mount_of = {b.derivation: b.mount for b in env.bindings}
    overrides = {name: fresh[mount_of[d]].id for name, d in env.overrides.items()}
    new_env = ev.Environment(ev.environment_id(bindings, overrides), bindings, overrides)
    choices: list[dict[str, Any]] = []
    placed, _ = ev.table(store, new_env, versions.read_requirements(project), open_store=stores.opener(entry.memory),
                         known={**old, **{d.id: d for d in fresh.values()}}, choices=choices)
    current = _current_tree(project)
    changes = _changes(_table_of(project, current), placed)  # against what .memory/ shows now
    unchanged = all(fresh[b.mount].id == b.derivation for b in env.bindings)  # another repository's new
    tree = _tree_name(new_env.id, placed)  # commits alone change nothing
    return UpgradePlan(None if unchanged else new_env.id, changes, fresh, placed, tree,
                       unchanged and tree != current, choices, new_env)


def upgrade(project: str | os.PathLike, *, author: bytes | None = None) -> tuple[UpgradePlan, Activation | None]:
    """Re-resolve the bound Environment (for a Quest, its selection) at the memory's latest, keep the new
    Environment and Derivations in the project, add it as the current binding and activate it; the plan and
    the activation (None if up to date). When only the project's locks or manifests changed, the current
    binding is mounted again for the versions they ask for now. Nothing is committed to the memory."""
    project = Path(project)
    with _locked(project):
        notes = _recover(project)
        profile = load_profile(project)
        entry = profile.active
        ensure_memory(project, entry.memory, fetch=True)
        with Stores(project) as stores:
            plan = _plan_upgrade(project, stores, entry)
            if plan.up_to_date:
                return plan, None
            if plan.environment is None:
                result = _activate(project, profile, stores, (plan.placed, plan.tree, plan.versions))
            else:
                assert plan.new_env is not None
                store = stores.get(entry.memory)
                derivations: dict[str, dv.Derivation] = {}
                for binding in plan.new_env.bindings:
                    source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
                    fresh = plan.derivations[binding.mount]
                    derivations[fresh.id] = dv.uncommitted(source, fresh.ir, fresh.inputs)
                _keep_env(project, plan.new_env, derivations)
                head = store.head()
                del profile.bindings[profile.current:]  # upgrading after a rollback replaces those rolled back
                # (their manifests in memrepo-profile.d/ are removed by the next profile command)
                profile.bindings.append(BindingEntry(entry.memory, entry.target, plan.new_env.id,
                                                     head.decode() if head else ""))
                profile.current = len(profile.bindings)
                result = _activate(project, profile, stores, (plan.placed, plan.tree, plan.versions), switch=True)
    result.notes = notes
    return plan, result


def rollback(project: str | os.PathLike, *, author: bytes | None = None) -> Activation:
    """Make the binding before the current one current and activate it (the profile file and ``.memory``
    move together: a kill leaves both at the old binding or both at the new one).

    Raises:
        RecordError: the current binding is the first.
    """
    project = Path(project)
    with _locked(project):
        notes = _recover(project)
        profile = load_profile(project)
        if profile.current <= 1:
            raise RecordError(f"{profile.path}: nothing to roll back to (the current binding is the first)")
        profile.current -= 1
        with Stores(project) as stores:
            result = _activate(project, profile, stores, switch=True)
    result.notes = notes
    return result


def find_environment(store: GitStore, env_id: str, start: str | os.PathLike) -> str:
    """The full id of Environment ``env_id`` (an id or unique prefix): the memory's own, else one the project
    around ``start`` keeps in its ``memrepo-profile.d/`` (a profile binds Environments it never committed).

    Raises:
        NotFoundError: neither names it.
    """
    try:
        return ev.load_env(store, env_id).id
    except NotFoundError:
        start = Path(start).resolve()
        for folder in (start, *start.parents):
            if (folder / PROFILE_FILE).is_file():
                kept = folder / VIEWS_DIR / "environments"
                found = sorted(p.stem for p in kept.glob(f"{env_id}*.json")) if env_id.isalnum() else []
                if len(found) == 1:
                    return found[0]
                break
        raise


def _bound_project(start: str | os.PathLike, memory_root: str | os.PathLike) -> tuple[Path, BindingEntry] | None:
    """The project around ``start`` (it or a parent holds the profile file) and its current binding, if that
    binding mounts the memory repository at ``memory_root``."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / PROFILE_FILE).is_file():
            profile = load_profile(folder)
            if not profile.current:
                return None
            entry = profile.active
            try:
                bound = memory_path(folder, entry.memory).resolve()
            except RecordError:
                return None
            return (folder, entry) if bound == Path(memory_root).resolve() else None
    return None


def other_versions(start: str | os.PathLike, memory_root: str | os.PathLike) -> set[str]:
    """The paths of docs that the project around ``start`` does not mount because they document another
    version of a package than the one it uses (its locks and manifests); empty outside a bound project.

    ``recall`` and ``search`` inside the project rank these after everything else.
    """
    found = _bound_project(start, memory_root)
    if found is None:
        return set()
    project, entry = found
    try:
        with Stores(project) as stores:
            store = stores.get(entry.memory)
            env = _load_env(project, store, entry.environment)
            known = _load_derivations(project, stores, entry, env)
            choices: list[dict[str, Any]] = []
            _, left_out = ev.table(store, env, versions.read_requirements(project),
                                   open_store=stores.opener(entry.memory), known=known, choices=choices)
    except MemrepoError:
        return set()  # a profile that cannot be read ranks nothing (profile status says why)
    return {d["path"] for d in left_out if d["reason"].startswith(("lock pin", "version range", "latest version",
                                                                   "no documented version"))}


def prefer_pinned(items: list[Any], demote: set[str], path_of: Callable[[Any], str | None]) -> list[Any]:
    """``items`` with those whose path is in ``demote`` moved after the others (each group keeps its order)."""
    if not demote:
        return items
    first = [i for i in items if path_of(i) not in demote]
    return first + [i for i in items if path_of(i) in demote]


def pinned_first(start: str | os.PathLike, store: GitStore, items: list[Any]) -> list[Any]:
    """Search hits or recall rows (anything with ``path`` or a record ``id``) of ``store``, the docs of other
    versions than the project around ``start`` uses ranked last (:func:`other_versions`); as given outside one."""
    demote = other_versions(start, store.root)
    if not demote:
        return items
    from memrepo import records as rec

    snap = store.snapshot()
    return prefer_pinned(items, demote, lambda item: getattr(item, "path", None) or
                         rec.find_record_path(snap, item.id))


def active_environment(start: str | os.PathLike, memory_root: str | os.PathLike) -> str | None:
    """The Environment id active in the project around ``start`` (it or a parent holds the profile file), if
    that project mounts the memory repository at ``memory_root``; None otherwise (a run records what it read).

    Raises:
        RecordError: the profile file is not valid.
    """
    found = _bound_project(start, memory_root)
    return found[1].environment if found else None


def _fetch(project: Path, memory: str) -> dict[str, Any]:
    """Bring a memory bound by URL up to its remote; what happened, said plainly."""
    if not needs_clone(project, memory):
        return {"fetched": False, "ok": True, "remote": None,
                "message": f"{memory} is a working repository on this machine, read as it is"}
    try:
        ensure_memory(project, memory, fetch=True)
        return {"fetched": True, "ok": True, "remote": memory, "message": f"fetched {memory}"}
    except MemrepoError as exc:
        first = " ".join(str(exc).split()) or type(exc).__name__
        if "://" not in memory and not re.match(r"^[\w.-]+@[\w.-]+:", memory) and not _local(project, memory).exists():
            first = f"nothing is at {_local(project, memory)}"
        return {"fetched": False, "ok": False, "remote": memory,
                "message": f"could not fetch {memory} ({first}); what follows is as of the last fetch"}


def status(project: str | os.PathLike) -> dict[str, Any]:
    """Which Environment is bound and active, and whether the memory has moved on since (stale).

    A memory bound by URL is fetched first (``fetch`` says whether that worked). ``stale``: an upgrade would
    change what the binding selects (``stale_since``: the first memory commit since the binding that touched
    a file it uses); ``quest_stale_since``: the bound Quest itself is stale in the memory (what ``memrepo quest
    list`` says there). ``versions``: the docs version mounted for each package, and the rule that chose it.
    """
    project = Path(project)
    with _locked(project):
        notes = _recover(project)
    profile = load_profile(project)
    entry = profile.active
    fetched = _fetch(project, entry.memory)
    current = _current_tree(project)
    out: dict[str, Any] = {"profile": PROFILE_FILE, "current": profile.current, "bindings": len(profile.bindings),
                           **entry.to_dict(), "active_tree": current, "active": False, "fetch": fetched,
                           "notes": notes}
    with Stores(project) as stores:
        placed, tree, choices = _plan(project, stores, entry)
        out["active"] = current == tree
        out["relocked"] = not out["active"] and (current or "").startswith(entry.environment + "-")
        plan = _plan_upgrade(project, stores, entry)
        stale = plan.environment is not None
        stale_since = quest_stale_since = None
        if entry.target.startswith("quest:"):
            store = stores.get(entry.memory)
            quest = qv.get(store, entry.target[6:])
            quest_stale_since = qv.staleness(store, [quest]).get(quest.slug)
            if stale:
                env = _load_env(project, store, entry.environment)
                root = next((b.derivation for b in env.bindings if b.mount == "/"), None)
                if root is not None:
                    probe = qv.Quest(quest.slug, quest.intent, quest.ir, root, entry.commit or None)
                    stale_since = qv.staleness(store, [probe], _load_derivations(project, stores, entry, env)
                                               ).get(quest.slug)
    out.update(stale=stale, stale_since=stale_since, quest_stale_since=quest_stale_since, versions=choices,
               warnings=version_warnings(choices))
    return out
