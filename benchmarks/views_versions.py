"""Which documented version a profile mounts for each project (issue 34): every one must satisfy the project's pin.

One memory repository holds the docs of several versions of each library
(``resource/<package>/<version>.md`` with ``package`` and ``version`` front matter)
and a Quest selecting them all. Each project below names its dependencies another
way (requirements ranges, pyproject.toml, uv.lock, package.json caret ranges,
Cargo.lock, and one asking for a version memory does not document); it binds the
Quest and activates it. For every package the project names, the table prints what
it asks, the versions memory documents, the version mounted under ``.memory/`` (read
back from the mounted file's front matter) and whether it satisfies the requirement
(checked with ``packaging`` for PEP 440, with the semver matcher for npm and Cargo).
With no documented version inside a range nothing is mounted, and the profile warns.
Exit status 1 if any row fails.

    python benchmarks/views_versions.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from memrepo.api import MemoryRepo
from memrepo.views import profile as pv
from memrepo.views.versions import read_requirements

DOCS = {
    "requests": ["2.30.0", "2.31.0", "2.31.5", "2.32.0", "2.32.3"],
    "numpy": ["1.25.2", "1.26.0", "1.26.4", "2.0.0", "2.1.1"],
    "pydantic": ["1.10.13", "2.5.3", "2.6.0", "2.7.1"],
    "torch": ["2.0.1", "2.1.2", "2.2.0"],
    "react": ["16.14.0", "17.0.2", "18.2.0", "18.3.1"],
    "lodash": ["4.16.6", "4.17.15", "4.17.21"],
    "serde": ["1.0.190", "1.0.197", "1.0.210"],
}

PROJECTS: dict[str, dict[str, str]] = {
    "requirements ranges": {"requirements.txt": "requests>=2.31,<2.32\nnumpy~=1.26\n"},
    "pyproject": {"pyproject.toml": '[project]\nname = "app"\ndependencies = ["pydantic>=2,<2.6"]\n'
                                    '[project.optional-dependencies]\nml = ["torch~=2.1.0"]\n'},
    "uv.lock": {"uv.lock": 'version = 1\n[[package]]\nname = "requests"\nversion = "2.30.0"\n'
                           '[[package]]\nname = "numpy"\nversion = "1.26.4"\n',
                "pyproject.toml": '[project]\nname = "app"\ndependencies = ["requests>=2.30", "numpy"]\n'},
    "package.json caret": {"package.json": json.dumps({"dependencies": {"react": "^17.0.1", "lodash": "^4.17.0"}})},
    "Cargo.lock": {"Cargo.lock": 'version = 3\n[[package]]\nname = "serde"\nversion = "1.0.197"\n'},
    "missing version": {"requirements.txt": "requests>=3\n",
                        "package.json": json.dumps({"dependencies": {"react": "~15.6.0"}})},
}


def doc(package: str, version: str) -> bytes:
    return (f'---\npackage: {package}\nversion: "{version}"\n---\n# {package} {version}\n\n'
            f"How to use {package} {version}.\n").encode()


def mounted_version(project: Path, package: str) -> str | None:
    """The version of ``package`` whose docs are under .memory/ (read from the mounted file), None if none."""
    found = [p for p in (project / ".memory" / package).glob("*.md")] if (project / ".memory" / package).is_dir() \
        else []
    if len(found) > 1:
        raise AssertionError(f"{project.name}: {len(found)} versions of {package} mounted")
    if not found:
        return None
    for line in found[0].read_text().splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip().strip('"')
    return None


def measure(tmp: Path) -> list[dict]:
    memory = MemoryRepo.init(tmp / "memory")
    try:
        for package, versions in DOCS.items():
            for version in versions:
                memory.place(f"resource/{package}/{version}.md", doc(package, version))
        memory.derive(["resource/"], intent="library docs")
        rows = []
        for name, manifests in PROJECTS.items():
            project = tmp / name.replace(" ", "-").replace(".", "-")
            project.mkdir()
            for file, text in manifests.items():
                (project / file).write_text(text)
            pv.bind(project, str(memory.store.root), "library-docs")
            result = pv.activate(project)
            asked = read_requirements(project)
            for package, requirement in sorted(asked.items()):
                if package not in DOCS:
                    continue
                mounted = mounted_version(project, package)
                inside = [v for v in DOCS[package] if requirement.allows(v)]
                warned = any(w.startswith(f"{package}:") for w in result.warnings)
                ok = (mounted is not None and requirement.allows(mounted) and mounted == inside[-1]) if inside \
                    else (mounted is None and warned)
                rows.append({"project": name, "package": package, "requirement": requirement.describe(),
                             "documented": DOCS[package], "mounted": mounted, "warned": warned, "ok": ok})
        return rows
    finally:
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'project':<20} {'package':<9} {'requirement':<32} {'mounted':<18} satisfies")
        for r in rows:
            mounted = r["mounted"] or ("none (warned)" if r["warned"] else "none")
            verdict = "yes" if r["ok"] else "NO"
            if r["ok"] and r["mounted"] is None:
                verdict = "yes (no documented version inside; none mounted)"
            print(f"{r['project']:<20} {r['package']:<9} {r['requirement']:<32} {mounted:<18} {verdict}")
        print(f"{sum(r['ok'] for r in rows)}/{len(rows)} rows satisfy their project's requirement")
    sys.exit(0 if all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
