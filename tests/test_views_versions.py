"""The docs version a profile mounts follows the project's manifests and locks (issue 34): PEP 440 ranges, npm semver
ranges, pins in every lock, and a plain warning when memory documents no version inside the range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import RecordError
from memrepo.views import profile as pv
from memrepo.views import semver
from memrepo.views.versions import choose, read_requirements


@pytest.mark.parametrize("version,spec,inside", [
    ("1.2.3", "^1.2.0", True), ("2.0.0", "^1.2.0", False), ("0.2.9", "^0.2.3", True), ("0.3.0", "^0.2.3", False),
    ("0.0.3", "^0.0.3", True), ("0.0.4", "^0.0.3", False), ("0.9.0", "^0.x", True), ("1.9.0", "^1.2.x", True),
    ("1.2.9", "~1.2.3", True), ("1.3.0", "~1.2.3", False), ("1.9.9", "~1", True), ("1.2.0", "~1.2", True),
    ("1.9.0", "1.x", True), ("2.0.0", "1.x", False), ("1.2.7", "1.2.*", True), ("3.0.0", "*", True),
    ("3.0.0", "", True), ("1.5.0", ">=1.2 <2", True), ("2.0.0", ">=1.2 <2", False), ("1.2.0", "> 1.1", True),
    ("1.1.5", ">1.1", False), ("1.2.9", "<=1.2", True), ("1.3.0", "<=1.2", False), ("1.1.9", "<1.2", True),
    ("1.2.0", "<1.2", False), ("2.3.9", "1.2 - 2.3", True), ("2.4.0", "1.2 - 2.3", False),
    ("2.3.4", "1.2.3 - 2.3.4", True), ("2.3.5", "1.2.3 - 2.3.4", False), ("0.9.5", "^1 || ~0.9.1", True),
    ("0.8.0", "^1 || ~0.9.1", False), ("1.2.3", "=1.2.3", True), ("1.2.4", "1.2.3", False),
    ("2.0.0-rc.1", "^1.0.0", False), ("2.0.0-rc.2", ">=2.0.0-rc.1", True), ("2.1.0-rc.1", ">=2.0.0-rc.1", False),
    ("1.2.4-beta", "^1.2.3", False), ("1.2.3-beta.2", "^1.2.3-beta.1", True), ("v1.4.0", "^1.2", True),
])
def test_semver_ranges_as_npm_reads_them(version, spec, inside):
    assert semver.satisfies(version, spec) is inside


def test_a_bad_semver_range_is_named():
    with pytest.raises(RecordError, match="package.json: dependencies.left-pad: 'one.two' is not a version"):
        semver.parse_range("one.two", "package.json: dependencies.left-pad")


def test_every_manifest_and_lock_is_read(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "# ranges\nrequests>=2.31,<2.32  # inline comment\nnumpy~=1.26\n-r other.txt\n"
        "flask[async]==3.0.2 ; python_version >= '3.9' \\\n    --hash=sha256:0000\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\ndependencies = ["pydantic>=2,<3", "requests>=1"]\n'
        '[project.optional-dependencies]\nml = ["torch~=2.2"]\n[dependency-groups]\ndev = ["pytest>=8", '
        '{include-group = "ml"}]\n')
    (tmp_path / "package.json").write_text(json.dumps({
        "dependencies": {"react": "^18.2.0", "lodash": "~4.17.0", "local": "file:../local", "gh": "user/repo"},
        "devDependencies": {"typescript": "5.x", "vite": "latest"}}))
    (tmp_path / "Cargo.lock").write_text('version = 3\n[[package]]\nname = "serde"\nversion = "1.0.197"\n')
    found = read_requirements(tmp_path)
    assert {k: (r.spec, r.source) for k, r in found.items()} == {
        "requests": ("<2.32,>=2.31", "requirements.txt"), "numpy": ("~=1.26", "requirements.txt"),
        "flask": ("==3.0.2", "requirements.txt"), "pydantic": ("<3,>=2", "pyproject.toml"),
        "torch": ("~=2.2", "pyproject.toml"), "pytest": (">=8", "pyproject.toml"),
        "react": ("^18.2.0", "package.json"), "lodash": ("~4.17.0", "package.json"),
        "typescript": ("5.x", "package.json"), "vite": ("*", "package.json"), "serde": ("=1.0.197", "Cargo.lock")}
    # A lock's pin wins over a manifest's range: it is what is installed.
    (tmp_path / "uv.lock").write_text('version = 1\n[[package]]\nname = "requests"\nversion = "2.31.0"\n')
    assert read_requirements(tmp_path)["requests"].spec == "==2.31.0"


def test_newest_documented_version_inside_the_range(tmp_path):
    (tmp_path / "requirements.txt").write_text("requests>=2.31,<2.32\nnumpy~=1.26\n")
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"react": "^17.0.1"}}))
    found = read_requirements(tmp_path)
    assert choose(found["requests"], ["2.30.0", "2.31.0", "2.31.5", "2.32.0"]) == "2.31.5"
    assert choose(found["numpy"], ["1.25.2", "1.26.0", "1.26.4", "2.0.0"]) == "1.26.4"
    assert choose(found["react"], ["16.14.0", "17.0.2", "18.2.0"]) == "17.0.2"
    assert choose(found["react"], ["16.14.0", "18.2.0"]) is None
    # PEP 440: a pre-release only where nothing else is inside (as pip chooses); npm: only where named.
    assert choose(found["numpy"], ["1.26.4", "1.27.0rc1"]) == "1.26.4"
    assert choose(found["numpy"], ["1.25.0", "1.27.0rc1"]) == "1.27.0rc1"
    assert choose(found["react"], ["17.1.0-rc.1"]) is None


@pytest.mark.parametrize("name,text", [
    ("requirements.txt", "requests @ https://example.com/x.whl\nbad line (\n"),
    ("pyproject.toml", '[project]\ndependencies = ["ok>=1", "not a requirement!"]\n'),
    ("package.json", '{"dependencies": {"x": "^1.2.3 || >>2"}}'),
    ("package.json", "[1, 2]"),
    ("Cargo.lock", "[[package]\n"),
])
def test_a_manifest_that_does_not_parse_is_named(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    with pytest.raises(RecordError, match=name.replace(".", r"\.")):
        read_requirements(tmp_path)


def doc(package: str, version: str) -> bytes:
    return f'---\npackage: {package}\nversion: "{version}"\n---\n# {package} {version}\n'.encode()


@pytest.fixture
def memory(tmp_path) -> MemoryRepo:
    repo = MemoryRepo.init(tmp_path / "team")
    for package, versions in (("requests", ("2.30.0", "2.31.0", "2.31.5", "2.32.0")),
                              ("react", ("16.14.0", "17.0.2", "18.2.0"))):
        for version in versions:
            repo.place(f"resource/{package}/{version}.md", doc(package, version))
    repo.derive(["resource/"], intent="library docs")
    yield repo
    repo.close()


def mounted(project: Path) -> list[str]:
    return sorted(p.relative_to(project / ".memory").as_posix() for p in (project / ".memory").rglob("*.md"))


def test_a_profile_mounts_the_newest_version_inside_each_range_and_warns_of_none(memory, tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    (project / "requirements.txt").write_text("requests>=2.31,<2.32\n")
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^15.0.0"}}))
    runner = CliRunner()
    assert runner.invoke(cli, ["profile", "bind", "--project", str(project), "--memory", "../team",
                               "library-docs"]).exit_code == 0
    result = runner.invoke(cli, ["profile", "activate", "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert mounted(project) == ["requests/2.31.5.md"]  # react: no documented version inside ^15.0.0, none mounted
    assert ("warning: react: memory documents no version inside ^15.0.0 (package.json); it documents "
            "16.14.0, 17.0.2, 18.2.0; none of its docs is mounted") in result.output
    status = pv.status(project)
    chosen = {c["package"]: (c["mounted"], c["rule"]) for c in status["versions"]}
    assert chosen == {"requests": ("2.31.5", "version range"), "react": (None, "version range")}
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^17.0.1"}}))
    result = runner.invoke(cli, ["profile", "upgrade", "--project", str(project)])
    assert result.exit_code == 0 and "+ react/17.0.2.md" in result.output, result.output
    assert mounted(project) == ["react/17.0.2.md", "requests/2.31.5.md"]


def test_search_and_recall_in_a_bound_project_rank_the_used_version_first(tmp_path, monkeypatch):
    repo = MemoryRepo.init(tmp_path / "team")
    try:
        repo.place("resource/requests/2.31.md", b'---\npackage: requests\nversion: "2.31.5"\n---\n'
                   b"# requests 2.31\n\nSession objects keep connection pools.\n")
        repo.place("resource/requests/2.32.md", b'---\npackage: requests\nversion: "2.32.0"\n---\n'
                   b"# requests 2.32 session retries\n\nSession retries: a Session retries, Session "
                   b"retries again, session retries.\n")
        repo.derive(["resource/requests/"], intent="requests docs")
        project = tmp_path / "app"
        project.mkdir()
        (project / "requirements.txt").write_text("requests>=2.31,<2.32\n")
        pv.bind(project, "../team", "requests-docs")

        def first(where: Path, command: str) -> str:
            monkeypatch.chdir(where)
            out = CliRunner().invoke(cli, ["--repo", str(repo.store.root), command, "session retries", "--json"])
            assert out.exit_code == 0, out.output
            data = json.loads(out.output)
            if command == "search":
                return data[0]["path"]
            rows = data["typed"] + data["records"]
            return next(r["summary"] + r["text"] for r in rows if "# requests" in r["summary"] + r["text"])

        assert first(tmp_path, "search") == "resource/requests/2.32.md"  # outside: the better match
        assert first(project, "search") == "resource/requests/2.31.md"  # inside: the version the project uses
        outside, inside = first(tmp_path, "recall"), first(project, "recall")
        assert "requests 2.32" in outside and "requests 2.31" in inside, (outside, inside)
    finally:
        repo.close()
