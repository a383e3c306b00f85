"""Environments: Derivations mounted at paths, with the rules that settle which file wins (Memorix §4.2).

An Environment binds mount paths to Derivations (``/python=D1 /cpp=D2``) and may
override single files (``python/vllm.md=D3``). Its id is the hash of those
bindings; its manifest is ``views/environments/<id>.json``. A binding may name
another memory repository (``/team=D1@../team-memory``): it is then pinned by that
repository and its commit when bound, so a project composes
several memories instead of growing one.

Each selected file lands at ``<mount>/<name>``. When several land on one name,
or several versions of one package's docs are selected, one wins, in this order:

1. an explicit override names the Derivation to take it from;
2. docs of a package: the newest documented version the project's lock pins or its
   manifest's range allows (:mod:`memrepo.views.versions`), else the latest version;
   docs of other versions of that package are not mounted, and with no documented
   version inside the range none is;
3. the deeper, more specific mount;
4. across kinds, rules over resource (docs) over sources (chat) over the rest;
5. the latest: the generation that descends from the others (else the newest commit time).

:func:`table` reports, for every mounted file, the rule that picked it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from memrepo.errors import RecordError
from memrepo.store.git import GitStore, Snapshot, commit_time, is_ancestor
from memrepo.views.derive import DERIVATIONS, Derivation, Mounted, _full_id, load

ENVIRONMENTS = "views/environments"
KIND_RANK = {"rules": 0, "resource": 1, "sources": 2}
RULES = ("only candidate", "override", "lock pin", "latest version", "deeper path", "rules > resource > sources",
         "latest", "same content")


@dataclass(frozen=True)
class Binding:
    mount: str  # "/python"
    derivation: str
    repository: str | None = None  # another memory repository (path or URL); None: this one
    commit: str | None = None  # that repository's commit when the binding was made (it pins it)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mount": self.mount, "derivation": self.derivation}
        if self.repository:
            out.update(repository=self.repository, commit=self.commit)
        return out


@dataclass
class Environment:
    id: str
    bindings: list[Binding]
    overrides: dict[str, str] = field(default_factory=dict)  # mounted name -> derivation id

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "bindings": [b.to_dict() for b in self.bindings], "overrides": self.overrides}


@dataclass(frozen=True)
class Placed:
    """One mounted file: its name under ``.memory/``, where it comes from and the rule that picked it."""

    name: str
    derivation: str
    path: str
    blob: str
    rule: str
    repository: str | None = None
    candidates: int = 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "derivation": self.derivation, "path": self.path,
                               "blob": self.blob, "rule": self.rule, "candidates": self.candidates}
        if self.repository:
            out["repository"] = self.repository
        return out


def parse_mount(text: str) -> tuple[str, str, str | None]:
    """``/python=D1`` or ``/team=D1@../team-memory`` -> (mount, derivation, repository).

    Raises:
        RecordError: not of that shape, or the mount could escape ``.memory/``.
    """
    mount, eq, rest = text.partition("=")
    derivation, _, repository = rest.partition("@")
    mount = "/" + mount.strip().strip("/")
    parts = [p for p in mount.split("/") if p]
    if not eq or not derivation or any(p in (".", "..") or p.startswith(".") for p in parts):
        raise RecordError(f"binding {text!r}: expected /MOUNT=DERIVATION (e.g. /python=3fa9c2d1) "
                          "or /MOUNT=DERIVATION@REPOSITORY")
    return mount, derivation.strip(), repository.strip() or None


def environment_id(bindings: list[Binding], overrides: dict[str, str]) -> str:
    canonical = json.dumps({"bindings": sorted([b.to_dict() for b in bindings], key=lambda b: b["mount"]),
                            "overrides": dict(sorted(overrides.items()))}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def compose(store: GitStore, mounts: list[str], overrides: Sequence[str] = (), *, author: bytes | None = None,
            open_store: Any = None) -> Environment:
    """Record the Environment of ``mounts`` (``/python=D1``) and ``overrides`` (``python/vllm.md=D3``).

    Derivation ids may be unique prefixes; they are stored in full. ``open_store`` opens another memory
    repository for a binding that names one (the caller owns it).

    Raises:
        RecordError: a malformed binding, a mount given twice, or an override naming an unbound Derivation.
        NotFoundError: a Derivation that does not exist.
    """
    bindings: list[Binding] = []
    for text in mounts:
        mount, derivation, repository = parse_mount(text)
        if any(b.mount == mount for b in bindings):
            raise RecordError(f"mount {mount} is given twice")
        source = store if repository is None else open_store(repository)
        full = _full_id(source.snapshot(), derivation, DERIVATIONS, "derivation")
        head = source.head() if repository is not None else None
        bindings.append(Binding(mount, full, repository, head.decode() if head else None))
    if not bindings:
        raise RecordError("give at least one binding /MOUNT=DERIVATION")
    chosen: dict[str, str] = {}
    for text in overrides:
        name, eq, derivation = text.partition("=")
        name = name.strip().strip("/")
        match = [b.derivation for b in bindings if derivation and b.derivation.startswith(derivation.strip())]
        if not eq or not name or len(match) != 1:
            raise RecordError(f"--override {text!r}: expected FILE=DERIVATION naming one bound Derivation")
        chosen[name] = match[0]
    env = Environment(environment_id(bindings, chosen), bindings, chosen)
    path = f"{ENVIRONMENTS}/{env.id}.json"
    data = (json.dumps(env.to_dict(), indent=2, sort_keys=True) + "\n").encode("utf-8")

    def change(snap: Snapshot) -> dict[str, bytes]:
        return {} if snap.exists(path) else {path: data}

    store.commit(change, f"env {env.id}: " + " ".join(f"{b.mount}={b.derivation[:12]}" for b in bindings),
                 author=author)
    return env


def load_env(store: GitStore, env_id: str, rev: str | None = None) -> Environment:
    snap = store.snapshot(rev)
    full = _full_id(snap, env_id, ENVIRONMENTS, "environment")
    data = json.loads(snap.read(f"{ENVIRONMENTS}/{full}.json") or b"{}")
    return Environment(full, [Binding(**b) for b in data["bindings"]], data.get("overrides", {}))


@dataclass
class Candidate:
    name: str
    binding: Binding
    item: Mounted

    @property
    def depth(self) -> int:
        return len([p for p in self.binding.mount.split("/") if p])


def table(store: GitStore, env: Environment, pins: dict[str, Any] | None = None, *,
          open_store: Any = None, known: dict[str, Derivation] | None = None,
          choices: list[dict[str, Any]] | None = None) -> tuple[list[Placed], list[dict[str, str]]]:
    """The files ``env`` mounts, each with the rule that picked it, and the files left out (with why).

    ``pins`` maps a package name (normalized as in :func:`normalize_package`) to what the project asks of it:
    a :class:`memrepo.views.versions.Requirement` (a lock's pin, a manifest's range) or a bare version.
    ``known`` holds Derivations not recorded in ``store``, by id (an upgrade's plan, a project's copies).
    ``choices``, if given, gets the version picked for each package whose docs are selected.
    """
    groups: dict[str, list[Candidate]] = {}
    for binding in env.bindings:
        source = store if binding.repository is None else open_store(binding.repository)
        derivation: Derivation = (known or {}).get(binding.derivation) or load(source, binding.derivation)
        prefix = binding.mount.strip("/") + "/" if binding.mount.strip("/") else ""
        for item in derivation.inputs:
            name = prefix + item.name
            group = groups.get(name)
            if group is None:
                groups[name] = [Candidate(name, binding, item)]
            else:
                group.append(Candidate(name, binding, item))
    left_out: list[dict[str, str]] = []
    _pick_versions(groups, pins or {}, left_out, choices)
    times: dict[str, int] = {}

    def when(c: Candidate) -> int:
        if c.item.generation not in times:
            source = store if c.binding.repository is None else open_store(c.binding.repository)
            times[c.item.generation] = commit_time(source, c.item.generation)
        return times[c.item.generation]

    def later(c: Candidate, other: Candidate) -> bool:
        if c.binding.repository != other.binding.repository:
            return False
        source = store if c.binding.repository is None else open_store(c.binding.repository)
        return is_ancestor(source, other.item.generation, c.item.generation)

    placed = []
    for name in sorted(groups):
        group = groups[name]
        if len(group) == 1:  # the common case, without the rules' machinery
            only = group[0]
            placed.append(Placed(name, only.binding.derivation, only.item.path, only.item.blob, "only candidate",
                                 only.binding.repository))
            continue
        if not group:
            continue
        winner, rule = _settle(name, group, env.overrides, when, later)
        for other in group:
            if other is not winner:
                left_out.append({"name": name, "path": other.item.path, "derivation": other.binding.derivation,
                                 "reason": f"{rule}: {winner.item.path} from {winner.binding.derivation[:12]} wins"})
        placed.append(Placed(name, winner.binding.derivation, winner.item.path, winner.item.blob, rule,
                             winner.binding.repository, len(group)))
    return placed, sorted(left_out, key=lambda d: (d["name"], d["path"]))


def _settle(name: str, group: list[Candidate], overrides: dict[str, str], when: Any,
            is_later: Any) -> tuple[Candidate, str]:
    if len(group) == 1:
        return group[0], "only candidate"
    if name in overrides:
        chosen = [c for c in group if c.binding.derivation == overrides[name]]
        if chosen:
            return chosen[0], "override"
    if len({c.item.blob for c in group}) == 1:
        return min(group, key=lambda c: (-c.depth, c.binding.mount)), "same content"
    steps = (
        ("deeper path", lambda c: -c.depth),
        ("rules > resource > sources", lambda c: KIND_RANK.get(c.item.path.split("/", 1)[0], 9)),
    )
    remaining = group
    for rule, key in steps:
        best = min(key(c) for c in remaining)
        kept = [c for c in remaining if key(c) == best]
        if len(kept) == 1:
            return kept[0], rule
        remaining = kept
    # The latest: a generation that descends from all the others, else the newest commit time.
    for c in remaining:
        if all(o.item.generation == c.item.generation or is_later(c, o) for o in remaining):
            return c, "latest"
    return min(remaining, key=lambda c: (-when(c), c.binding.mount, c.item.path)), "latest"


def _pick_versions(groups: dict[str, list[Candidate]], pins: dict[str, Any], left_out: list[dict[str, str]],
                   choices: list[dict[str, Any]] | None = None) -> None:
    """Keep one version of each package's docs, drop the others everywhere.

    The version kept is the newest documented one the project's requirement allows (a lock's pin, a
    manifest's range; :mod:`memrepo.views.versions`), else, with no requirement, the latest documented.
    When memory documents no version inside the requirement, none of that package's docs is mounted (docs
    of another version would mislead) and ``choices`` says so: the package, its range and the versions there.
    """
    from memrepo.views.versions import PEP440, Requirement, choose, version_order

    versions: dict[str, set[str]] = {}
    for group in groups.values():
        for c in group:
            if c.item.package:
                versions.setdefault(normalize_package(c.item.package), set()).add(str(c.item.version))
    if not versions:
        return
    keep: dict[str, tuple[str | None, str]] = {}
    package: str | None
    for package, found in versions.items():
        wanted = pins.get(package)
        if isinstance(wanted, str):  # a bare version: an exact pin
            wanted = Requirement(package, f"=={wanted}", PEP440, "pin")
        if wanted is None:
            keep[package] = (max(found, key=lambda v: version_order(v, PEP440)), "latest version")
            chosen: dict[str, Any] = {"package": package, "requirement": None, "source": None}
        else:
            picked = choose(wanted, found)
            keep[package] = (picked, "lock pin" if wanted.pinned else "version range")
            chosen = {"package": package, "requirement": wanted.spec or "any version", "source": wanted.source}
        if choices is not None:
            choices.append({**chosen, "mounted": keep[package][0], "rule": keep[package][1],
                            "documented": sorted(found, key=lambda v: version_order(v, PEP440))})
    for name, group in groups.items():
        kept = []
        for c in group:
            package = normalize_package(c.item.package) if c.item.package else None
            if package is None or str(c.item.version) == keep[package][0]:
                kept.append(c)
                continue
            picked, rule = keep[package]
            asked = pins[package].describe() if hasattr(pins.get(package), "describe") else pins.get(package)
            reason = (f"{rule}: {package} {picked}, not {c.item.version}" if picked is not None else
                      f"no documented version inside {asked}: {package} {c.item.version} is not mounted")
            left_out.append({"name": name, "path": c.item.path, "derivation": c.binding.derivation, "reason": reason})
        groups[name] = kept


def normalize_package(name: str) -> str:
    """Package names compare as PEP 503 normalizes them (``Foo_Bar`` = ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple:
    """Order versions by their numbers (``0.10.1`` after ``0.9``); letters order after numbers at the same place."""
    parts = re.findall(r"\d+|[a-z]+", version.lower())
    return tuple((0, int(p), "") if p.isdigit() else (-1, 0, p) for p in parts)
