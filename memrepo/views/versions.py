"""Which version of a package a project uses: its lock files' pins and its manifests' ranges.

Read, in this order (the first file to name a package decides it): the locks
``uv.lock``, ``poetry.lock``, ``package-lock.json``, ``Cargo.lock`` (exact pins: what is
installed), then the manifests ``requirements*.txt`` (PEP 440 specifiers, read by
``packaging``), ``pyproject.toml`` (``[project] dependencies``,
``[project.optional-dependencies]``, ``[dependency-groups]``) and ``package.json``
(``dependencies``, ``devDependencies``, ``optionalDependencies``, ``peerDependencies``:
npm semver ranges, :mod:`memrepo.views.semver`). Names compare as PEP 503 normalizes
them. A Profile mounts, for each package whose docs memory holds in several versions,
the newest documented version the requirement allows (:func:`choose`).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from packaging.requirements import InvalidRequirement, Requirement as Pep508
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from memrepo.errors import RecordError
from memrepo.views import semver

LOCKS = ("uv.lock", "poetry.lock", "package-lock.json", "Cargo.lock")
PEP440 = "pep440"
SEMVER = "semver"


def normalize_package(name: str) -> str:
    """Package names compare as PEP 503 normalizes them (``Foo_Bar`` = ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """What a project asks of one package: ``spec`` in ``scheme`` (``pep440`` or ``semver``), from ``source``."""

    package: str  # normalized
    spec: str  # "==0.5.0", ">=2.31,<2.32", "^1.2.0", "" (any version)
    scheme: str
    source: str  # the file that said it: "uv.lock", "requirements.txt", "package.json"

    @property
    def pinned(self) -> bool:
        """An exact pin from a lock file (what is installed), or given as a bare version."""
        return self.source in LOCKS or self.source == "pin"

    def allows(self, version: str) -> bool:
        """``version`` is inside the requirement (PEP 440: a pre-release counts as inside its range; which
        version :func:`choose` picks is where pre-releases are weighed)."""
        if self.scheme == SEMVER:
            return semver.satisfies(version, self.spec or "*", f"{self.source}: {self.package}")
        try:
            parsed = Version(version)
        except InvalidVersion:
            return False
        return SpecifierSet(self.spec).contains(parsed, prereleases=True)

    def describe(self) -> str:
        return f"{self.spec or 'any version'} ({self.source})"

    def to_dict(self) -> dict[str, str]:
        return {"package": self.package, "spec": self.spec, "scheme": self.scheme, "source": self.source}


def version_order(version: str, scheme: str) -> tuple:
    """A sort key: PEP 440 or semver order, versions neither can read first (by their numbers)."""
    if scheme == SEMVER:
        parsed = semver.parse_version(version)
        if parsed is not None:
            return (1, parsed.key())
    else:
        try:
            return (1, Version(version))
        except InvalidVersion:
            pass
    parts = re.findall(r"\d+", version)
    return (0, tuple(int(p) for p in parts))


def choose(requirement: Requirement, versions: Iterable[str]) -> str | None:
    """The newest of ``versions`` that ``requirement`` allows (None: memory documents none inside it)."""
    if requirement.scheme == PEP440:  # as pip chooses: a pre-release only if named or nothing else is inside
        readable = [v for v in versions if version_order(v, PEP440)[0] == 1]
        inside = [str(v) for v in SpecifierSet(requirement.spec).filter(readable)]
    else:
        inside = [v for v in versions if requirement.allows(v)]
    if not inside:
        return None
    if requirement.scheme == SEMVER:
        return max(inside, key=lambda v: version_order(v, SEMVER))
    return max(inside, key=lambda v: version_order(v, PEP440))


# --- reading the project's files -------------------------------------------------------------------------------------


def read_requirements(project: str | Path) -> dict[str, Requirement]:
    """Package -> what the project's locks and manifests ask of it (the first file to name it wins).

    Raises:
        RecordError: a lock or manifest that exists but does not parse, naming the file (and the line).
    """
    project = Path(project)
    found: dict[str, Requirement] = {}

    def add(name: str, spec: str, scheme: str, source: str) -> None:
        package = normalize_package(name)
        if package not in found:
            found[package] = Requirement(package, spec, scheme, source)

    for name in ("uv.lock", "poetry.lock"):
        data = _toml(project / name)
        for package in data.get("package", []) if data else []:
            if isinstance(package, dict) and package.get("name") and package.get("version"):
                add(str(package["name"]), f"=={package['version']}", PEP440, name)
    data = _json(project / "package-lock.json")
    if data:
        for key, info in (data.get("packages") or {}).items():
            m = re.fullmatch(r"node_modules/((?:@[^/]+/)?[^/]+)", key)
            if m and isinstance(info, dict) and info.get("version"):
                add(m.group(1), str(info["version"]), SEMVER, "package-lock.json")
        for dep, info in (data.get("dependencies") or {}).items():  # lockfileVersion 1
            if isinstance(info, dict) and info.get("version"):
                add(dep, str(info["version"]), SEMVER, "package-lock.json")
    data = _toml(project / "Cargo.lock")
    for package in data.get("package", []) if data else []:
        if isinstance(package, dict) and package.get("name") and package.get("version"):
            add(str(package["name"]), f"={package['version']}", SEMVER, "Cargo.lock")
    for path in sorted(project.glob("requirements*.txt")):
        for lineno, line in _logical_lines(path):
            req = _pep508(line, f"{path}:{lineno}")
            if req is not None:
                add(req.name, str(req.specifier), PEP440, path.name)
    data = _toml(project / "pyproject.toml")
    if data:
        lists: list[Any] = [(data.get("project") or {}).get("dependencies") or []]
        lists += list(((data.get("project") or {}).get("optional-dependencies") or {}).values())
        lists += list((data.get("dependency-groups") or {}).values())
        for items in lists:
            for item in items if isinstance(items, list) else []:
                if isinstance(item, str):  # a {include-group = ...} table names no package
                    req = _pep508(item, f"{project / 'pyproject.toml'}")
                    if req is not None:
                        add(req.name, str(req.specifier), PEP440, "pyproject.toml")
    data = _json(project / "package.json")
    if data:
        for field_name in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
            deps = data.get(field_name) or {}
            for dep, spec in deps.items() if isinstance(deps, dict) else ():
                spec = str(spec).strip()
                if re.match(r"^(?:[a-z+]+:|\.{0,2}/|[\w.-]+/[\w.-]+(?:#.*)?$)", spec) and not spec.startswith("npm:"):
                    continue  # a file:, git, URL, workspace: or user/repo dependency names no version
                if spec.startswith("npm:"):  # an alias: "npm:other@^1.2" is other's range
                    alias, _, spec = spec[4:].rpartition("@")
                    dep = alias or dep
                if spec in ("latest", "next") or re.fullmatch(r"[A-Za-z][\w-]*", spec):
                    spec = "*"  # a dist-tag: any version
                semver.parse_range(spec, f"{project / 'package.json'}: {field_name}.{dep}")  # refuse a bad one
                add(dep, spec, SEMVER, "package.json")
    return found


def _toml(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not valid TOML ({exc})") from exc


def _json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not a JSON object")
    return data


def _logical_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of a requirements file: comments dropped, ``\\`` continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for n, raw in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            out.append((start, line))
    return out


def _pep508(line: str, where: str) -> Pep508 | None:
    """A requirement line read by ``packaging``; None for options (``-r``, ``-e``, ``--hash``) and URLs alone."""
    if line.startswith("-") or "://" in line.split("@", 1)[0] or line.startswith((".", "/")):
        return None
    line = re.sub(r"\s--hash[= ]\S+", "", line)
    try:
        return Pep508(line)
    except (InvalidRequirement, InvalidSpecifier) as exc:
        raise RecordError(f"{where}: not a requirement ({str(exc).splitlines()[0]})") from exc
