"""memrepo never reads, writes or deletes outside the repository (DESIGN.md section 9, issue 37).

A teammate's push and the state files under .git/memrepo/ are untrusted: a committed symbolic link, a pending
file naming a path outside, a placement path that climbs out. Each test makes the outside file or folder
for real and checks it is untouched afterwards. Real bare remotes, real `git`, the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.store.paths import OutsideRepositoryError, PathChecker, tree_path_problem

PROJECT = Path(__file__).resolve().parents[1]
WHEN = "2026-05-02T10:00:00Z"


def memrepo(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMREPO_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "memrepo", *args], cwd=root, capture_output=True, text=True,
                          env=env, timeout=120)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def snapshot_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (and the folder's own entries), to compare before/after."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder of the user's outside every repository, with a file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.txt").write_text("the user's own notes\n")
    return folder


@pytest.fixture
def team(tmp_path) -> tuple[Path, Path]:
    """(attacker's clone, teammate's clone) of one bare remote holding a memory repository."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    first = tmp_path / "attacker"
    with MemoryRepo.init(first) as repo:
        repo.remember("Hiroshi works at Sony", type="semantic", mention_time=WHEN)
    git(first, "remote", "add", "origin", str(remote))
    git(first, "push", "-q", "origin", "main")
    second = tmp_path / "teammate"
    assert memrepo(tmp_path, "clone", str(remote), str(second)).returncode == 0
    return first, second


def push_symlink(attacker: Path, link: str, target: Path) -> None:
    (attacker / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, attacker / link)
    git(attacker, "add", link)
    git(attacker, "-c", "user.name=Eve", "-c", "user.email=eve@example.com", "commit", "-q", "-m", "a link")
    git(attacker, "push", "-q", "origin", "main")


def test_a_pushed_folder_link_is_refused_and_the_outside_folder_is_untouched(team, outside):
    attacker, teammate = team
    push_symlink(attacker, "episodic/2026", outside)
    git(teammate, "pull", "-q", "--no-rebase", "origin", "main")  # the teammate's clone now has the link
    assert (teammate / "episodic" / "2026").is_symlink()
    before, head = snapshot_of(outside), git(teammate, "rev-parse", "HEAD")

    result = memrepo(teammate, "remember", "Mia bought a Suica card", "--type", "episodic",
                     "--mention-time", WHEN)

    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert "episodic/2026 is a symbolic link" in result.stderr and str(outside) in result.stderr
    assert snapshot_of(outside) == before
    assert git(teammate, "rev-parse", "HEAD") == head  # nothing committed: the write is refused before it lands
    assert not list((teammate / ".git" / "memrepo" / "pending").glob("*.json"))


def test_a_pushed_link_at_a_record_path_is_neither_read_nor_written_through(team, outside):
    attacker, teammate = team
    with MemoryRepo.open(teammate) as repo:
        record = repo.new_record("semantic", "Mia likes trains", mention_time=WHEN)
    push_symlink(attacker, record.path, outside / "notes.txt")
    git(teammate, "pull", "-q", "--no-rebase", "origin", "main")
    before = snapshot_of(outside)

    with MemoryRepo.open(teammate) as repo:
        with pytest.raises(OutsideRepositoryError, match=f"{record.path} is a symbolic link"):
            repo.add([record])
    assert snapshot_of(outside) == before


def test_a_pending_file_naming_paths_outside_is_ignored_and_reported(tmp_path, outside):
    root = tmp_path / "memory"
    with MemoryRepo.init(root) as repo:
        repo.remember("Hiroshi works at Sony", type="semantic", mention_time=WHEN)
    os.symlink(outside, root / "linked")  # an untracked link in the work tree, as a pending path's way out
    pending = root / ".git" / "memrepo" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    named = [str(outside / "notes.txt"), os.path.relpath(outside / "notes.txt", root), "linked/notes.txt",
             ".git/config", "semantic/../../outside/notes.txt"]
    (pending / "999999-deadbeef.json").write_text(json.dumps({"paths": named, "index_lock": None}))
    before, config = snapshot_of(outside), (root / ".git" / "config").read_bytes()

    result = memrepo(root, "list")

    assert result.returncode == 0, result.stderr
    assert snapshot_of(outside) == before
    assert (root / ".git" / "config").read_bytes() == config
    assert result.stderr.count("ignored a path named by .git/memrepo/pending/999999-deadbeef.json") == len(named)
    assert "linked is a symbolic link" in result.stderr
    assert not (pending / "999999-deadbeef.json").exists()  # reported once, not at every command
    assert memrepo(root, "list").stderr == ""


def test_a_pending_file_still_syncs_its_paths_inside_the_repository(tmp_path, outside):
    root = tmp_path / "memory"
    with MemoryRepo.init(root) as repo:
        record_id = repo.remember("Hiroshi works at Sony", type="semantic", mention_time=WHEN).written[0]
        path = repo.get(record_id).path
    (root / path).unlink()  # what a write killed before its sync leaves
    pending = root / ".git" / "memrepo" / "pending"
    (pending / "999999-deadbeef.json").write_text(json.dumps({"paths": [path, "../outside/notes.txt"]}))

    result = memrepo(root, "list")

    assert result.returncode == 0, result.stderr
    assert (root / path).is_file()
    assert "brought 1 file(s) of an interrupted write" in result.stderr
    assert "'../outside/notes.txt': not a plain relative path" in result.stderr
    assert snapshot_of(outside) == {"notes.txt": b"the user's own notes\n"}


@pytest.mark.parametrize("to", ["../x.md", "rules/../../x.md", "/tmp/x.md", "rules/.git/x.md"])
def test_ingest_to_a_path_outside_the_repository_is_refused(tmp_path, to):
    root = tmp_path / "memory"
    with MemoryRepo.init(root):
        pass
    source = tmp_path / "rules.md"
    source.write_text("# Rules\n\nAlways pin the versions.\n")
    head = git(root, "rev-parse", "HEAD")

    result = memrepo(root, "ingest", "--to", to, str(source))

    assert result.returncode in (1, 2), result.stdout
    assert "Traceback" not in result.stderr and result.stderr.strip()
    assert git(root, "rev-parse", "HEAD") == head
    assert not (tmp_path / "x.md").exists() and not Path("/tmp/x.md").exists()


def test_ingest_to_through_a_linked_folder_is_refused(tmp_path, outside):
    root = tmp_path / "memory"
    with MemoryRepo.init(root):
        pass
    os.symlink(outside, root / "rules")
    source = tmp_path / "rules.md"
    source.write_text("# Rules\n\nAlways pin the versions.\n")
    before = snapshot_of(outside)

    result = memrepo(root, "ingest", "--to", "rules/python/x.md", str(source))

    assert result.returncode == 1, result.stdout
    assert "rules is a symbolic link" in result.stderr
    assert snapshot_of(outside) == before


def test_a_linked_memrepo_toml_is_not_read(tmp_path, outside):
    root = tmp_path / "memory"
    with MemoryRepo.init(root):
        pass
    (outside / "settings.toml").write_text('[memrepo]\nnamespace = "elsewhere"\n')
    (root / "memrepo.toml").unlink()
    os.symlink(outside / "settings.toml", root / "memrepo.toml")

    result = memrepo(root, "list")

    assert result.returncode == 1
    assert "memrepo.toml is a symbolic link" in result.stderr


@pytest.mark.parametrize("path, problem", [
    ("/etc/passwd", "an absolute path"), ("../x", "'..' parts"), ("a//b", "empty"), ("a/./b", "'.'"),
    (".git/config", "Git directory"), ("a/.GIT/x", "Git directory"), ("a\\..\\b", "not a relative path"),
    ("", "not a relative path"),
])
def test_tree_paths_that_leave_the_repository(path, problem):
    assert problem in (tree_path_problem(path) or "")


def test_the_checker_allows_a_linked_root_and_plain_paths(tmp_path):
    real = tmp_path / "real"
    (real / "episodic" / "2026").mkdir(parents=True)
    os.symlink(real, tmp_path / "root-link")
    checker = PathChecker(tmp_path / "root-link")
    assert checker.check("episodic/2026/05/x.md") == tmp_path / "root-link" / "episodic/2026/05/x.md"
    assert tree_path_problem("episodic/2026/05/ep-2026-05-02-1.md") is None


def test_a_linked_memory_trees_folder_is_refused_and_nothing_outside_is_built_or_pruned(tmp_path, outside):
    from click.testing import CliRunner

    from memrepo.cli import cli

    with MemoryRepo.init(tmp_path / "team") as team:
        team.place("rules/python/vllm.md", b"# vLLM\n\nPin the version.\n")
        team.derive(["rules/python/"], intent="serve models")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("a", "b", "c", "d"):  # folders the pruning of old trees would remove
        (outside / name).mkdir()
        (outside / name / "keep.txt").write_text(name)
    os.symlink(outside, project / ".memory-trees")  # as a project's own repository could carry it
    before = snapshot_of(outside)

    def profile(*args: str):
        return CliRunner().invoke(cli, ["profile", args[0], "--project", str(project), *args[1:]])

    assert profile("bind", "--memory", "../team", "serve-models").exit_code == 0
    result = profile("activate")

    assert result.exit_code == 1, result.output
    assert f"{project / '.memory-trees'} is a symbolic link (to {outside})" in result.output
    assert snapshot_of(outside) == before
    assert not (project / ".memory").exists()


@pytest.mark.parametrize("link", ["serve", "serve/SKILL.md"])
def test_skills_export_never_writes_through_a_link_in_the_export_folder(tmp_path, outside, link):
    root = tmp_path / "memory"
    with MemoryRepo.init(root) as repo:
        repo.place("procedural/skills/serve/SKILL.md", b"---\nname: serve\ndescription: Serve a model\n---\nvllm serve\n")
    agent = tmp_path / "agent"
    (agent / "serve").mkdir(parents=True)
    if link == "serve":
        (agent / "serve").rmdir()
    os.symlink(outside if link == "serve" else outside / "notes.txt", agent / link)
    before = snapshot_of(outside)

    result = memrepo(root, "skills", "export", str(agent))

    assert result.returncode == 1, result.stdout
    assert f"{agent / link}: a symbolic link" in result.stderr
    assert snapshot_of(outside) == before


def test_an_index_pointer_naming_a_folder_outside_is_not_followed(tmp_path, outside):
    root = tmp_path / "memory"
    with MemoryRepo.init(root) as repo:
        repo.remember("Mia bought a Suica card at Tokyo Station", type="episodic", mention_time=WHEN)
    assert memrepo(root, "search", "Suica").returncode == 0  # every index built once
    pointers = sorted((root / ".git" / "memrepo" / "indexes").glob("*/CURRENT"))
    assert pointers
    for pointer in pointers:
        state = json.loads(pointer.read_text())
        state["generation"] = os.path.relpath(outside, pointer.parent)
        pointer.write_text(json.dumps(state))
    before = snapshot_of(outside)

    wrote = memrepo(root, "remember", "Mia lost her Suica card", "--type", "episodic", "--mention-time", WHEN)
    result = memrepo(root, "search", "Suica")

    assert wrote.returncode == 0, wrote.stderr
    assert result.returncode == 0, result.stderr
    assert snapshot_of(outside) == before
    assert "Suica" in result.stdout
    assert "which is not a folder of the index" in result.stderr
