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
mounted for the version the project's lock file pins (``uv.lock``,
``poetry.lock``, pinned ``requirements*.txt``, ``package-lock.json``), never
another version's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tomllib
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memrepo.errors import NotFoundError, RecordError, RepositoryError
from memrepo.store.git import GitStore
from memrepo.views import derive as dv
from memrepo.views import env as ev
from memrepo.views import quest as qv

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
        name = re.sub(r"[^\w.-]+", "-", memory.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]).removesuffix(".git")
        digest = hashlib.sha256(memory.encode("utf-8")).hexdigest()[:8]
        return project / REPOS_DIR / f"{name.strip('.-') or 'memory'}-{digest}"
    return _local(project, memory)


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
    return _is_bare(_local(project, memory))


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


# --- binding -------------------------------------------------------------------------------------------------------


def bind(project: str | os.PathLike, memory: str, target: str, *, author: bytes | None = None) -> BindingEntry:
    """Bind the project to an Environment id (or prefix) or a Quest slug of ``memory``; it becomes current.

    A Quest is bound through an Environment mounting its current Derivation at the root, plus approved
    skills under ``skills/`` when the memory has any. Nothing under ``.memory/`` changes until activated.
    """
    project = Path(project)
    if not project.is_dir():
        raise RecordError(f"{project}: not a folder")
    profile = load_profile(project)
    with Stores(project) as stores:
        store = stores.get(memory)
        env_id, label = _target_environment(store, target, author=author)
        head = store.head()
        entry = BindingEntry(memory, label, env_id, head.decode() if head else "")
    profile.bindings.append(entry)
    profile.current = len(profile.bindings)
    save_profile(profile)
    return entry


def _target_environment(store: GitStore, target: str, *, author: bytes | None = None) -> tuple[str, str]:
    kind, _, name = target.partition(":") if ":" in target else ("", "", target)
    if kind in ("", "environment", "env"):
        try:
            env = ev.load_env(store, name)
            return env.id, f"environment:{env.id}"
        except NotFoundError:
            if kind:
                raise
    if kind in ("", "quest"):
        quest = qv.get(store, name)
        return _quest_environment(store, quest, author=author), f"quest:{quest.slug}"
    raise RecordError(f"{target!r}: expected an Environment id, a Quest slug, environment:ID or quest:SLUG")


def _quest_environment(store: GitStore, quest: qv.Quest, *, author: bytes | None = None) -> str:
    mounts = [f"/={quest.current}"]
    if not any(dv.parse_locator(text).path.startswith(SKILLS_LOCATOR) for text in quest.ir) and \
            store.snapshot().entry(SKILLS_LOCATOR.rstrip("/")):
        skills = dv.derive(store, [SKILLS_LOCATOR], author=author)
        mounts.append(f"/skills={skills.id}")
    return ev.compose(store, mounts, author=author).id


# --- lock files ----------------------------------------------------------------------------------------------------


def read_locks(project: str | os.PathLike) -> dict[str, str]:
    """Package -> pinned version from the project's lock files (the first file to pin a package wins).

    Read: ``uv.lock``, ``poetry.lock``, ``requirements*.txt`` (``name==version`` lines), ``package-lock.json``.

    Raises:
        RecordError: a lock file that exists but does not parse (naming it).
    """
    project = Path(project)
    pins: dict[str, str] = {}

    def pin(name: str, version: str) -> None:
        pins.setdefault(ev.normalize_package(name), version)

    for name in ("uv.lock", "poetry.lock"):
        path = project / name
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise RecordError(f"{path}: not valid TOML ({exc})") from exc
            for package in data.get("package", []):
                if isinstance(package, dict) and package.get("name") and package.get("version"):
                    pin(str(package["name"]), str(package["version"]))
    for path in sorted(project.glob("requirements*.txt")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;#,]+)\s*(?:[;#].*)?$", line)
            if m:
                pin(m.group(1), m.group(2))
    path = project / "package-lock.json"
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise RecordError(f"{path}: not valid JSON ({exc})") from exc
        for key, info in (data.get("packages") or {}).items():
            m = re.fullmatch(r"node_modules/((?:@[^/]+/)?[^/]+)", key)
            if m and isinstance(info, dict) and info.get("version"):
                pin(m.group(1), str(info["version"]))
        for name, info in (data.get("dependencies") or {}).items():  # lockfileVersion 1
            if isinstance(info, dict) and info.get("version"):
                pin(name, str(info["version"]))
    return pins


# --- materializing ---------------------------------------------------------------------------------------------------


@dataclass
class Activation:
    environment: str
    tree: str  # the folder under .memory-trees/ that .memory now points to
    files: int
    changes: dict[str, list[str]] = field(default_factory=dict)  # added / removed / changed names
    built: bool = True  # False: the tree was already there (a rollback to a recent tree)
    binding: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"environment": self.environment, "tree": self.tree, "files": self.files, "changes": self.changes,
                "built": self.built, "binding": self.binding}


def _plan(project: Path, stores: Stores, entry: BindingEntry) -> tuple[list[ev.Placed], str]:
    store = stores.get(entry.memory)
    env = ev.load_env(store, entry.environment)
    placed, _ = ev.table(store, env, read_locks(project), open_store=stores.opener(entry.memory))
    return placed, _tree_name(env.id, placed)


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


def activate(project: str | os.PathLike, *, author: bytes | None = None,
             planned: tuple[list[ev.Placed], str] | None = None) -> Activation:
    """Materialize the current binding under ``.memory/`` (build aside, swap with one rename)."""
    project = Path(project)
    profile = load_profile(project)
    entry = profile.active
    with Stores(project) as stores:
        placed, tree = planned or _plan(project, stores, entry)
        previous = _current_tree(project)
        before = _table_of(project, previous)
        built = _build(project, stores, entry, placed, tree, previous)
        os.utime(project / TREES_DIR / tree)  # most recently used: kept by the pruning
        _swap(project, tree)
        _prune(project, [tree])
        if entry.target.startswith("quest:"):
            qv.count_read(stores.get(entry.memory), entry.target[6:], author=author)
    return Activation(entry.environment, tree, len(placed), _changes(before, placed), built, profile.current)


@dataclass
class UpgradePlan:
    """What an upgrade does: the Environment it moves to (None: already up to date) and the files that change."""

    environment: str | None
    changes: dict[str, list[str]]
    derivations: dict[str, dv.Derivation] = field(default_factory=dict)  # mount -> its Derivation re-resolved
    placed: list[ev.Placed] = field(default_factory=list)  # the files the new Environment mounts here

    def to_dict(self) -> dict[str, Any]:
        return {"environment": self.environment, "changes": self.changes}


def plan_upgrade(project: str | os.PathLike) -> UpgradePlan:
    """What :func:`upgrade` would do, without writing anything anywhere.

    Every Derivation of the bound Environment is resolved again from its selection at the latest
    generations (for a Quest, that is its refresh), mounted at the same paths with the same overrides.
    """
    project = Path(project)
    entry = load_profile(project).active
    ensure_memory(project, entry.memory, fetch=True)  # a memory bound by URL: its remote's latest
    with Stores(project) as stores:
        store = stores.get(entry.memory)
        env = ev.load_env(store, entry.environment)
        fresh: dict[str, dv.Derivation] = {}
        for binding in env.bindings:
            source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
            ir, inputs = dv.resolve_selection(source, dv.load(source, binding.derivation).ir)
            fresh[binding.mount] = dv.Derivation(dv.derivation_id(inputs), ir, inputs, tree="")
        bindings = []
        for b in env.bindings:
            remote = None if b.repository is None else stores.opener(entry.memory)(b.repository)
            head = remote.head() if remote is not None and fresh[b.mount].id != b.derivation else None
            bindings.append(ev.Binding(b.mount, fresh[b.mount].id, b.repository,
                                       head.decode() if head else b.commit))
        mount_of = {b.derivation: b.mount for b in env.bindings}
        overrides = {name: fresh[mount_of[d]].id for name, d in env.overrides.items()}
        new_env = ev.Environment(ev.environment_id(bindings, overrides), bindings, overrides)
        placed, _ = ev.table(store, new_env, read_locks(project), open_store=stores.opener(entry.memory),
                             known={d.id: d for d in fresh.values()})
    changes = _changes(_table_of(project, _current_tree(project)), placed)  # against what .memory/ shows now
    unchanged = all(fresh[b.mount].id == b.derivation for b in env.bindings)  # another repository's new
    return UpgradePlan(None if unchanged else new_env.id, changes, fresh, placed)  # commits alone change nothing


def upgrade(project: str | os.PathLike, *, author: bytes | None = None) -> tuple[UpgradePlan, Activation | None]:
    """Record the re-resolved Derivations (a Quest's refresh) and the new Environment in the memory repository,
    add it as the current binding and activate it; the plan and the activation (None if up to date)."""
    project = Path(project)
    plan = plan_upgrade(project)
    if plan.environment is None:
        return plan, None
    profile = load_profile(project)
    entry = profile.active
    with Stores(project) as stores:
        store = stores.get(entry.memory)
        env = ev.load_env(store, entry.environment)
        quest = entry.target[6:] if entry.target.startswith("quest:") else None
        for binding in env.bindings:
            source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
            fresh = plan.derivations[binding.mount]
            resolved = (fresh.ir, fresh.inputs)
            if quest and binding.mount == "/":  # the Quest keeps the old resolve in its history
                qv.refresh(source, quest, author=author, resolved=resolved)
            else:
                dv.derive(source, fresh.ir, author=author, resolved=resolved)
        mounts = [f"{b.mount}={plan.derivations[b.mount].id}" + (f"@{b.repository}" if b.repository else "")
                  for b in env.bindings]
        mount_of = {b.derivation: b.mount for b in env.bindings}
        overrides = [f"{name}={plan.derivations[mount_of[d]].id}" for name, d in env.overrides.items()]
        env_id = ev.compose(store, mounts, overrides, author=author, open_store=stores.opener(entry.memory)).id
        head = store.head()
    del profile.bindings[profile.current:]  # upgrading after a rollback replaces the bindings rolled back
    profile.bindings.append(BindingEntry(entry.memory, entry.target, env_id, head.decode() if head else ""))
    profile.current = len(profile.bindings)
    save_profile(profile)
    return plan, activate(project, author=author, planned=(plan.placed, _tree_name(env_id, plan.placed)))


def rollback(project: str | os.PathLike, *, author: bytes | None = None) -> Activation:
    """Make the binding before the current one current and activate it.

    Raises:
        RecordError: the current binding is the first.
    """
    profile = load_profile(project)
    if profile.current <= 1:
        raise RecordError(f"{profile.path}: nothing to roll back to (the current binding is the first)")
    profile.current -= 1
    save_profile(profile)
    return activate(project, author=author)


def active_environment(start: str | os.PathLike, memory_root: str | os.PathLike) -> str | None:
    """The Environment id active in the project around ``start`` (it or a parent holds the profile file), if
    that project mounts the memory repository at ``memory_root``; None otherwise (a run records what it read).

    Raises:
        RecordError: the profile file is not valid.
    """
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
            return entry.environment if bound == Path(memory_root).resolve() else None
    return None


def status(project: str | os.PathLike) -> dict[str, Any]:
    """Which Environment is bound and active, and whether the memory has moved on since (stale)."""
    project = Path(project)
    profile = load_profile(project)
    entry = profile.active
    out: dict[str, Any] = {"profile": PROFILE_FILE, "current": profile.current, "bindings": len(profile.bindings),
                           **entry.to_dict(), "active_tree": _current_tree(project), "active": False}
    with Stores(project) as stores:
        _, tree = _plan(project, stores, entry)
        out["active"] = out["active_tree"] == tree
        store = stores.get(entry.memory)
        stale_since = None
        if entry.target.startswith("quest:"):
            quest = qv.get(store, entry.target[6:])
            stale_since = qv.staleness(store, [quest]).get(quest.slug)
            bound = {b.derivation for b in ev.load_env(store, entry.environment).bindings}
            stale = stale_since is not None or quest.current not in bound  # refreshed since this binding
        else:
            env = ev.load_env(store, entry.environment)
            stale = False
            for binding in env.bindings:
                source = store if binding.repository is None else stores.opener(entry.memory)(binding.repository)
                derivation = dv.load(source, binding.derivation)
                try:
                    fresh = dv.derivation_id(dv.resolve_selection(source, derivation.ir)[1])
                except NotFoundError:
                    fresh = ""
                stale = stale or fresh != derivation.id
    out.update(stale=stale, stale_since=stale_since)
    return out
