"""Profiles (DESIGN.md §4): a project binds memory, .memory/ is swapped atomically, docs follow the lock file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import RecordError, RepositoryError
from memrepo.views import profile as pv


def doc(package: str, version: str) -> bytes:
    return f'---\npackage: {package}\nversion: "{version}"\n---\n# {package} {version}\n'.encode()


@pytest.fixture
def team(tmp_path) -> MemoryRepo:
    repo = MemoryRepo.init(tmp_path / "team")
    repo.place("rules/python/vllm.md", b"# vLLM\n\nPin the version.\n")
    repo.place("resource/vllm/0.5.md", doc("vllm", "0.5.0"))
    repo.place("resource/vllm/0.6.md", doc("vllm", "0.6.1"))
    repo.place("procedural/skills/serve/SKILL.md", b"---\nname: serve\ndescription: Serve a model\n---\nvllm serve\n")
    repo.derive(["rules/python/", "resource/vllm/"], intent="serve models")
    yield repo
    repo.close()


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def run(project: Path, *args: str):
    return CliRunner().invoke(cli, [*args[:2], "--project", str(project), *args[2:]], catch_exceptions=False)


def files(project: Path) -> dict[str, bytes]:
    root = project / ".memory"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_bind_activate_upgrade_rollback_status(team, project):
    assert run(project, "profile", "bind", "--memory", "../team", "serve-models").exit_code == 0
    profile = (project / pv.PROFILE_FILE).read_text()
    assert 'target = "quest:serve-models"' in profile and "current = 1" in profile
    assert run(project, "profile", "activate").exit_code == 0
    assert sorted(files(project)) == ["0.6.md", "skills/serve/SKILL.md", "vllm.md"]  # latest docs, skills mounted
    assert (project / ".memory").is_symlink()
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["active"] is True and status["stale"] is False and status["target"] == "quest:serve-models"

    team.place("rules/python/vllm.md", b"# vLLM\n\nPin the version. Use --max-model-len.\n")
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["stale"] is True and status["stale_since"] == team.store.head().decode()
    assert b"max-model-len" not in files(project)["vllm.md"]  # nothing moves until upgrade

    head = team.store.head()
    dry = run(project, "profile", "upgrade", "--dry-run")
    assert "~ vllm.md" in dry.output and b"max-model-len" not in files(project)["vllm.md"]
    assert team.store.head() == head and team.quest("serve-models").resolves == 1  # a dry run writes nothing
    upgraded = run(project, "profile", "upgrade")
    assert upgraded.exit_code == 0 and upgraded.output.index("~ vllm.md") < upgraded.output.index(".memory ->")
    assert b"max-model-len" in files(project)["vllm.md"]
    assert pv.load_profile(project).current == 2 and len(pv.load_profile(project).bindings) == 2
    assert json.loads(run(project, "profile", "status", "--json").output)["stale"] is False
    assert "Already up to date" in run(project, "profile", "upgrade").output

    assert run(project, "profile", "rollback").exit_code == 0
    assert b"max-model-len" not in files(project)["vllm.md"] and pv.load_profile(project).current == 1
    assert json.loads(run(project, "profile", "status", "--json").output)["stale"] is True  # the Quest moved on
    result = run(project, "profile", "rollback")
    assert result.exit_code == 1 and "nothing to roll back to" in result.output
    assert team.quest("serve-models").reads >= 3  # every activation of the Quest is a read


def test_nothing_under_memory_points_outside_the_exported_tree(team, project):
    pv.bind(project, "../team", "serve-models")
    result = pv.activate(project)
    tree = (project / pv.TREES_DIR / result.tree).resolve()
    assert Path(os.path.realpath(project / ".memory")) == tree
    for path in (project / ".memory").rglob("*"):
        assert not path.is_symlink()
        assert path.is_dir() or path.stat().st_mode & 0o222 == 0  # read-only files
        assert Path(os.path.realpath(path)).is_relative_to(tree)
    # A hostile name in a memory repository's tree is refused, not followed.
    with pytest.raises(RepositoryError, match="would escape"):
        pv._check_name("../../etc/passwd")


def test_a_real_folder_at_memory_is_never_clobbered(team, project):
    (project / ".memory").mkdir()
    (project / ".memory" / "mine.txt").write_text("keep")
    pv.bind(project, "../team", "serve-models")
    result = run(project, "profile", "activate")
    assert result.exit_code == 1 and "is not a link memrepo made" in result.output
    assert (project / ".memory" / "mine.txt").read_text() == "keep"


def test_profile_errors_are_one_line(team, project):
    for args, message in ((("profile", "activate"), "no binding yet"),
                          (("profile", "bind", "--memory", "../team", "nope"), "quest 'nope' not found"),
                          (("profile", "bind", "--memory", "../missing", "x"), "not a Git repository"),
                          (("profile", "bind", "--memory", "file:///nonexistent/m.git", "x"), "cannot clone")):
        result = run(project, *args)
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    (project / pv.PROFILE_FILE).write_text("current = [\n")
    assert "not valid TOML" in run(project, "profile", "status").output


@pytest.mark.parametrize("name,text", [
    ("uv.lock", 'version = 1\n[[package]]\nname = "vLLM"\nversion = "0.5.0"\n'),
    ("poetry.lock", '[[package]]\nname = "vllm"\nversion = "0.5.0"\ndescription = ""\n'),
    ("requirements.txt", "# pinned\nnumpy>=1.0\nvllm[all]==0.5.0 ; python_version >= '3.9'\n"),
    ("requirements-dev.txt", "vllm===0.5.0\n"),
    ("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "": {"name": "app"}, "node_modules/vllm": {"version": "0.5.0"},
        "node_modules/x/node_modules/vllm": {"version": "0.6.1"}}})),
])
def test_lock_file_pins_the_docs_version(team, project, name, text):
    (project / name).write_text(text)
    assert pv.read_locks(project)["vllm"] == "0.5.0"
    pv.bind(project, "../team", "serve-models")
    pv.activate(project)
    assert sorted(files(project)) == ["0.5.md", "skills/serve/SKILL.md", "vllm.md"]


def test_unparsable_lock_file_is_named(project):
    (project / "uv.lock").write_text("[[package]\n")
    with pytest.raises(RecordError, match="uv.lock: not valid TOML"):
        pv.read_locks(project)


def test_environment_from_two_repositories(team, tmp_path, project):
    personal = MemoryRepo.init(tmp_path / "personal")
    try:
        personal.place("rules/mine.md", b"# my rule\n")
        mine = personal.derive(["rules/"], intent="mine")[0]
        ours = team.derive(["rules/python/"], intent="ours")[0]
        env = team.env_compose([f"/={ours.id}", f"/me={mine.id}@../personal"])
        assert env.bindings[1].repository == "../personal"
        assert env.bindings[1].commit == personal.store.head().decode()  # pinned by repository and commit
        _, placed, _ = team.env_show(env.id)
        assert {p.name: p.repository for p in placed} == {"vllm.md": None, "me/mine.md": "../personal"}
        pv.bind(project, "../team", env.id[:10])
        pv.activate(project)
        assert files(project) == {"me/mine.md": b"# my rule\n", "vllm.md": b"# vLLM\n\nPin the version.\n"}
        personal.place("rules/mine.md", b"# my rule, v2\n")
        plan = pv.plan_upgrade(project)
        assert plan.changes["changed"] == ["me/mine.md"] and plan.environment is not None
        pv.upgrade(project)
        assert files(project)["me/mine.md"] == b"# my rule, v2\n"
        personal.place("resource/other.md", b"# not selected\n")  # the other repository moves on
        personal.remember("Mia moved to Lisbon", type="semantic")
        plan = pv.plan_upgrade(project)
        assert plan.environment is None
    finally:
        personal.close()


READER = textwrap.dedent("""
    import os, sys, time
    project, deadline = sys.argv[1], time.time() + float(sys.argv[2])
    reads = 0
    while time.time() < deadline:
        tree = os.path.realpath(os.path.join(project, ".memory"))  # one tree per read session
        names = sorted(os.listdir(tree))
        marks = {open(os.path.join(tree, n)).read() for n in names}
        if len(names) != 50 or len(marks) != 1:
            print(f"MIXED {len(names)} {sorted(marks)[:3]}", flush=True)
            sys.exit(1)
        with open(os.path.join(project, ".memory", "f00.md")) as handle:  # through the link itself
            handle.read()
        reads += 1
    print(reads)
""")


def test_activate_upgrade_rollback_under_a_reader(tmp_path, project):
    repo = MemoryRepo.init(tmp_path / "team")
    try:
        def version(n: int) -> None:
            repo.store.commit({f"rules/f{i:02d}.md": f"version {n}\n".encode() for i in range(50)}, f"version {n}")

        version(1)
        d = repo.derive(["rules/"], intent="all rules")[0]
        env = repo.env_compose([f"/={d.id}"])
        pv.bind(project, "../team", env.id)
        pv.activate(project)
        reader = subprocess.Popen([sys.executable, "-c", READER, str(project), "4"], stdout=subprocess.PIPE, text=True)
        swaps = 0
        started = time.time()
        n = 1
        while time.time() - started < 3:
            n += 1
            version(n)
            pv.upgrade(project)
            pv.rollback(project)
            pv.activate(project)
            swaps += 3
        out, _ = reader.communicate(timeout=30)
        assert reader.returncode == 0, out
        assert int(out) > 100 and swaps >= 6
        kept = [p for p in (project / pv.TREES_DIR).iterdir() if not p.name.startswith(".")]
        assert len(kept) <= pv.KEEP_TREES
    finally:
        repo.close()


# --- a run records the Environment it read --------------------------------------------------------------------------


def test_ask_and_recall_json_record_the_active_environment(team, project, monkeypatch):
    assert run(project, "profile", "bind", "--memory", "../team", "serve-models").exit_code == 0
    env_id = pv.load_profile(project).active.environment
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")  # inside the project: its profile is found in a parent folder
    for command in ("ask", "recall"):
        out = CliRunner().invoke(cli, ["--repo", str(team.store.root), command, "vllm version", "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["environment"] == env_id
    # Another memory than the one the project mounts: nothing to record.
    other = MemoryRepo.init(project.parent / "other")
    other.close()
    out = CliRunner().invoke(cli, ["--repo", str(project.parent / "other"), "recall", "vllm", "--json"])
    assert out.exit_code == 0 and "environment" not in json.loads(out.output)
    # --env ID (or a unique prefix): an Environment the project keeps in memrepo-profile.d/ ...
    out = CliRunner().invoke(cli, ["--repo", str(team.store.root), "ask", "vllm version", "--json", "--env",
                                   env_id[:8]])
    assert out.exit_code == 0 and json.loads(out.output)["environment"] == env_id
    # ... or, outside any project, one composed in the memory.
    composed = team.env_compose([f"/={team.quest('serve-models').current}"]).id
    monkeypatch.chdir(project.parent)
    out = CliRunner().invoke(cli, ["--repo", str(team.store.root), "ask", "vllm version", "--json", "--env",
                                   composed[:8]])
    assert out.exit_code == 0 and json.loads(out.output)["environment"] == composed
    out = CliRunner().invoke(cli, ["--repo", str(team.store.root), "recall", "vllm", "--json", "--env", "abcdef"])
    assert out.exit_code == 1 and "abcdef" in out.output and "Traceback" not in out.output


# --- a memory bound by URL ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["file-url", "bare-path"])
def test_bind_a_remote_memory_clones_it_into_memory_repos_and_upgrade_fetches(team, project, tmp_path, how):
    remote = tmp_path / "team.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(team.store.root), str(remote)], check=True)
    memory = remote.as_uri() if how == "file-url" else "../team.git"
    result = run(project, "profile", "bind", "--memory", memory, "serve-models")
    assert result.exit_code == 0, result.output
    assert pv.load_profile(project).active.memory == memory  # the URL, as given, is what the profile keeps
    clones = [p for p in (project / pv.REPOS_DIR).iterdir() if p.is_dir()]
    assert len(clones) == 1 and (clones[0] / ".git").is_dir()
    assert (project / pv.REPOS_DIR / ".gitignore").read_text().splitlines()[-1] == "*"  # never committed
    assert run(project, "profile", "activate").exit_code == 0
    assert b"max-model-len" not in files(project)["vllm.md"]
    # The team moves on and publishes; upgrade fetches it into the clone and mounts it.
    team.place("rules/python/vllm.md", b"# vLLM\n\nPin the version. Use --max-model-len.\n")
    subprocess.run(["git", "-C", str(team.store.root), "push", "-q", str(remote), "HEAD:main"], check=True)
    result = run(project, "profile", "upgrade")
    assert result.exit_code == 0, result.output
    assert b"max-model-len" in files(project)["vllm.md"]
    # Runs inside the project record the Environment they read from the clone.
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["environment"] == pv.active_environment(project, clones[0]) and status["stale"] is False
