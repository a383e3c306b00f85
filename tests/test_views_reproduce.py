"""Views that reproduce anywhere (issue 34): a profile rebuilt byte for byte in a second clone of the project from
the memory remote alone, status that looks at the remote, upgrades that follow the lock, reads that never commit,
and .memory/ and the profile file that change together."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.views import profile as pv
from memrepo.views import quest as qv
from test_views_profile import doc, team  # noqa: F401 (the team memory both files bind)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def run(project: Path, *args: str):
    return CliRunner().invoke(cli, [*args[:2], "--project", str(project), *args[2:]], catch_exceptions=False)


def files(project: Path) -> dict[str, bytes]:
    root = project / ".memory"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags")


@pytest.fixture
def remote(team, tmp_path) -> Path:
    bare = tmp_path / "team.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(team.store.root), str(bare)], check=True)
    return bare


def publish(team: MemoryRepo, remote: Path) -> None:
    subprocess.run(["git", "-C", str(team.store.root), "push", "-q", str(remote), "HEAD:main"], check=True)


def new_project(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / ".gitignore").write_text(".memory\n.memory-trees/\n.memory-repos/\n")
    (path / "requirements.txt").write_text("vllm>=0.5,<0.6\n")
    return path


def test_a_second_clone_of_the_project_activates_the_same_memory_byte_for_byte(team, remote, tmp_path):
    project = new_project(tmp_path / "app")
    published = refs(remote)
    assert run(project, "profile", "bind", "--memory", remote.as_uri(), "serve-models").exit_code == 0
    assert run(project, "profile", "activate").exit_code == 0
    # The team moves on; the project upgrades (the new Environment is composed in the project, not the memory).
    team.place("rules/python/vllm.md", b"# vLLM\n\nPin the version. Use --max-model-len.\n")
    publish(team, remote)
    published = refs(remote)
    result = run(project, "profile", "upgrade")
    assert result.exit_code == 0, result.output
    first = files(project)
    assert sorted(first) == ["0.5.md", "skills/serve/SKILL.md", "vllm.md"] and b"max-model-len" in first["vllm.md"]
    clone = next(p for p in (project / pv.REPOS_DIR).iterdir() if p.is_dir())
    assert git(clone, "rev-list", "--count", "origin/main..HEAD").strip() == "0"  # the memory's clone is not ahead
    assert refs(remote) == published  # and nothing was pushed
    git(project, "add", "-A")
    git(project, "commit", "-qm", "bind team memory")
    assert pv.VIEWS_DIR + "/" in git(project, "ls-files")

    second = tmp_path / "app2"
    subprocess.run(["git", "clone", "-q", str(project), str(second)], check=True)
    result = run(second, "profile", "activate")
    assert result.exit_code == 0, result.output
    assert files(second) == first
    assert pv.status(second)["active_tree"] == pv.status(project)["active_tree"]
    # The first binding rebuilds there too, byte for byte the first tree.
    assert run(second, "profile", "rollback").exit_code == 0
    assert run(project, "profile", "rollback").exit_code == 0
    assert files(second) == files(project) and b"max-model-len" not in files(second)["vllm.md"]


@pytest.mark.parametrize("how", ["file-url", "bare-path"])
def test_status_fetches_the_remote_and_says_when_it_cannot(team, remote, tmp_path, how):
    project = new_project(tmp_path / "app")
    memory = remote.as_uri() if how == "file-url" else "../team.git"
    run(project, "profile", "bind", "--memory", memory, "serve-models")
    run(project, "profile", "activate")
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["stale"] is False and status["fetch"]["fetched"] is True and status["quest_stale_since"] is None
    team.place("rules/python/vllm.md", b"# vLLM\n\nPin the version. Use --max-model-len.\n")
    publish(team, remote)
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["stale"] is True and status["stale_since"] == team.store.head().decode()
    assert status["quest_stale_since"] == team.store.head().decode()  # what `quest list` says in the team memory
    text = run(project, "profile", "status").output
    assert "stale: the memory changed files it uses" in text and "is stale in the memory since" in text
    remote.rename(tmp_path / "gone.git")
    result = run(project, "profile", "status")
    assert result.exit_code == 0 and f"could not fetch {memory}" in result.output, result.output
    assert "as of the last fetch" in result.output
    assert json.loads(run(project, "profile", "status", "--json").output)["fetch"]["ok"] is False


def test_upgrade_follows_a_lock_file_change(team, tmp_path):
    project = new_project(tmp_path / "app")
    (project / "requirements.txt").write_text("vllm==0.5.0\n")
    run(project, "profile", "bind", "--memory", "../team", "serve-models")
    run(project, "profile", "activate")
    assert "0.5.md" in files(project)
    (project / "requirements.txt").write_text("vllm==0.6.1\n")
    status = json.loads(run(project, "profile", "status", "--json").output)
    assert status["active"] is False and status["relocked"] is True
    result = run(project, "profile", "upgrade")
    assert result.exit_code == 0 and "+ 0.6.md" in result.output and ".memory ->" in result.output, result.output
    assert sorted(files(project)) == ["0.6.md", "skills/serve/SKILL.md", "vllm.md"]
    assert json.loads(run(project, "profile", "status", "--json").output)["active"] is True
    assert "Already up to date" in run(project, "profile", "upgrade").output


def test_no_profile_command_commits_to_the_memory(team, tmp_path):
    project = new_project(tmp_path / "app")
    head, before = team.store.head(), refs(team.store.root)
    assert run(project, "profile", "bind", "--memory", "../team", "serve-models").exit_code == 0
    assert run(project, "profile", "activate").exit_code == 0
    team.place("rules/python/vllm.md", b"# vLLM\n\nv2\n")
    head, before = team.store.head(), refs(team.store.root)
    for args in (("profile", "status"), ("profile", "upgrade", "--dry-run"), ("profile", "upgrade"),
                 ("profile", "rollback"), ("profile", "activate"), ("profile", "status")):
        assert run(project, *args).exit_code == 0, args
    assert team.store.head() == head and refs(team.store.root) == before
    assert git(team.store.root, "status", "--porcelain") == ""
    # The reads are counted, out of history: shown by `quest list`, folded by an explicit write.
    quest = team.quest("serve-models")
    assert quest.reads == 4 and qv.get(team.store, "serve-models").reads == 0
    team.derive(["rules/python/", "resource/vllm/"], intent="serve models")  # a new resolve: committed
    head = team.store.head()
    again = team.derive(["rules/python/", "resource/vllm/"], intent="serve models")[1]  # the same one again
    assert team.store.head() == head and again.resolves == 3 and qv.get(team.store, "serve-models").resolves == 2
    team.quest_refresh("serve-models")
    folded = qv.get(team.store, "serve-models")
    assert folded.reads == 4 and folded.resolves == 4 and qv.pending_counts(team.store) == {}


def test_leftover_builds_are_removed_by_the_next_command_and_reported_by_doctor(team, remote, tmp_path):
    project = new_project(tmp_path / "app")
    run(project, "profile", "bind", "--memory", remote.as_uri(), "serve-models")
    run(project, "profile", "activate")
    left = project / pv.TREES_DIR / ".building-abc-99999999"
    (left / "sub").mkdir(parents=True)
    (left / "sub" / "big.md").write_bytes(b"x" * 2_000_000)
    clone = next(p for p in (project / pv.REPOS_DIR).iterdir() if p.is_dir())
    doctor = CliRunner().invoke(cli, ["--repo", str(clone), "doctor", "--json"])
    assert any(".building-abc-99999999" in p["path"] for p in json.loads(doctor.output)["problems"])
    result = run(project, "profile", "status")
    assert result.exit_code == 0 and "removed .memory-trees/.building-abc-99999999 (2.0 MB)" in result.output
    assert not left.exists()
    doctor = CliRunner().invoke(cli, ["--repo", str(clone), "doctor", "--json"])
    assert not any(".building-" in p["path"] for p in json.loads(doctor.output)["problems"])


def test_a_switch_killed_between_the_swap_and_the_profile_file_is_finished(team, tmp_path, monkeypatch):
    project = new_project(tmp_path / "app")
    pv.bind(project, "../team", "serve-models")
    pv.activate(project)
    team.place("rules/python/vllm.md", b"# vLLM\n\nv2\n")

    def killed(profile):  # the process dies right after .memory was swapped
        raise KeyboardInterrupt

    monkeypatch.setattr(pv, "save_profile", killed)
    with pytest.raises(KeyboardInterrupt):
        pv.upgrade(project)
    monkeypatch.undo()
    assert pv.load_profile(project).current == 1  # the file lags .memory ...
    status = pv.status(project)  # ... until the next profile command finishes the switch
    assert status["current"] == 2 and status["active"] is True and "finished an interrupted switch" in \
        status["notes"][0]
    assert pv.rollback(project).binding == 1 and pv.status(project)["active"] is True


# --- kill -9 at any point of upgrade and rollback ---------------------------------------------------------------------

CHILD = """
import sys, time
from memrepo.views import profile as pv
print("ready", flush=True)
started = time.perf_counter()
getattr(pv, sys.argv[2])(sys.argv[1])
print(time.perf_counter() - started, flush=True)
"""


def test_kill_9_during_upgrade_and_rollback_leaves_status_true_and_one_rollback_back(tmp_path):
    import os
    import random
    import signal
    import sys
    import time

    rng = random.Random(34)
    repo = MemoryRepo.init(tmp_path / "team")
    project = new_project(tmp_path / "app")
    try:
        repo.store.commit({f"rules/r{i:03d}.md": f"rule {i}\n".encode() for i in range(100)}, "rules")
        repo.derive(["rules/"], intent="all rules")
        pv.bind(project, "../team", "all-rules")
        pv.activate(project)
        trees = {1: pv.status(project)["active_tree"]}  # binding -> the tree it mounts (when it was active)

        def child(op: str) -> subprocess.Popen:
            return subprocess.Popen([sys.executable, "-c", CHILD, str(project), op], stdout=subprocess.PIPE,
                                    text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})

        version = 0

        def change() -> None:
            nonlocal version
            version += 1
            repo.store.commit({f"rules/r{version % 100:03d}.md": f"rule, version {version}\n".encode()}, "edit")

        change()
        probe = child("upgrade")  # how long an upgrade takes, not killed
        assert probe.stdout is not None and probe.stdout.readline() == "ready\n"
        window = float(probe.stdout.readline())
        probe.wait()
        trees[pv.status(project)["current"]] = pv.status(project)["active_tree"]
        started, kills, outcomes = time.time(), 0, set()
        while kills < 28:
            op = "upgrade" if kills < 22 or pv.load_profile(project).current < 2 else "rollback"
            if op == "upgrade":
                change()
            before = pv.load_profile(project).current
            proc = child(op)
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
            time.sleep(rng.uniform(0, window * 1.3))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            status = pv.status(project)
            current = status["current"]
            expected = {before, before + 1} if op == "upgrade" else {before, before - 1}
            assert current in expected, (op, before, status)
            assert status["active"] is True, status  # the profile file names what .memory shows
            assert not pv.leftovers(project)
            kept = {p.stem for p in (project / pv.VIEWS_DIR / "environments").glob("*.json")}
            assert kept == {b.environment for b in pv.load_profile(project).bindings}  # no orphan manifest
            outcomes.add(current == before)
            if current in trees and current != before + 1:
                assert status["active_tree"] == trees[current]
            trees[current] = status["active_tree"]
            if current > 1:  # one rollback returns to the binding active before this one
                back = pv.rollback(project)
                assert back.binding == current - 1 and back.tree == trees[current - 1]
                assert pv.status(project)["active"] is True
                pv.upgrade(project)  # forward again: the memory moved on, so a new current binding
                trees[pv.load_profile(project).current] = pv.status(project)["active_tree"]
        assert outcomes == {True, False}  # kills landed both before and after the switch
        print(f"{kills} kills in {time.time() - started:.1f} s")  # about 40 s on a 2-core machine under load
    finally:
        repo.close()


def test_upgrade_takes_the_quest_selection_the_memory_has_now(team, tmp_path):
    project = new_project(tmp_path / "app")
    pv.bind(project, "../team", "serve-models")
    pv.activate(project)
    assert "0.5.md" in files(project)
    team.derive(["rules/python/"], intent="serve models")  # the team narrows the Quest: no docs any more
    assert pv.status(project)["stale"] is True
    plan, result = pv.upgrade(project)
    assert result is not None and plan.changes["removed"] == ["0.5.md"]
    assert sorted(files(project)) == ["skills/serve/SKILL.md", "vllm.md"]
