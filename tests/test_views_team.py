"""Views across clones (issue 15): Derivation manifests and Quests merge cleanly with `memrepo sync` and `git pull`.

Real bare remotes and clones in tmp_path, the real `git` (and its merge driver running `python -m memrepo`).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.team import mergedriver
from memrepo.views import quest as qv

PROJECT = Path(__file__).resolve().parents[1]
WHEN = "2024-03-01T10:00:00Z"
RULE = b"# vLLM rules\n\nAlways pin the vLLM version.\n"


@pytest.fixture(autouse=True)
def _memrepo_importable(monkeypatch):
    """The merge driver runs `python -m memrepo` in another process: it must import this checkout."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert run("clone", str(remote), str(tmp_path / "a"))[0] == 0
    a = tmp_path / "a"
    with MemoryRepo.open(a) as repo:
        repo.place("rules/python/vllm.md", RULE, mention_time=WHEN)
        repo.derive(["rules/python/"], intent="python rules")
    assert run("--repo", str(a), "sync")[0] == 0
    assert run("clone", str(remote), str(tmp_path / "b"))[0] == 0
    return a, tmp_path / "b"


def diverge_and_derive(a: Path, b: Path) -> list[str]:
    """Both clones commit something different, then derive the same (changed) selection and count a read."""
    ids = []
    for root, other in ((a, "rules/cpp/a.md"), (b, "rules/go/b.md")):
        with MemoryRepo.open(root) as repo:
            repo.place(other, f"# {other}\n".encode(), mention_time=WHEN)
            repo.place("rules/python/vllm.md", RULE + b"Use --max-model-len.\n", mention_time=WHEN)
            ids.append(repo.derive(["rules/python/"], intent="python rules")[0].id)
            qv.count_read(repo.store, "python-rules")
    return ids


def quest_of(root: Path) -> qv.Quest:
    with MemoryRepo.open(root) as repo:
        return qv.get(repo.store, "python-rules")


def test_two_clones_derive_the_same_selection_and_sync_without_conflict(tmp_path):
    a, b = two_clones(tmp_path)
    ids = diverge_and_derive(a, b)
    assert ids[0] == ids[1]
    manifest = f"views/derivations/{ids[0]}.json"
    assert (a / manifest).read_bytes() == (b / manifest).read_bytes()  # a pure function of the id's inputs
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 0, out
    assert git(b, "status", "--porcelain").stdout == ""
    merged = quest_of(b)
    assert merged.current == ids[0]
    assert merged.reads == 2 and merged.resolves == 3  # 1 shared + 1 per clone; a read in each clone
    assert [e["derivation"] for e in merged.history][-1] == ids[0]
    assert len(merged.history) == 3  # the first resolve once, then each clone's resolve at its own commit
    assert run("--repo", str(a), "sync")[0] == 0
    assert quest_of(a).to_dict() == merged.to_dict()
    with MemoryRepo.open(b) as repo:  # each clone still knows the generation it read at
        from memrepo.views import derive as dv
        assert dv.load(repo.store, ids[0]).inputs[0].generation


def test_a_plain_git_pull_merges_derivations_and_quests_with_the_driver(tmp_path):
    a, b = two_clones(tmp_path)
    assert "views/quests/*.md merge=memrepo" in (b / ".gitattributes").read_text()
    ids = diverge_and_derive(a, b)
    assert run("--repo", str(a), "sync")[0] == 0
    done = git(b, "-c", "pull.rebase=false", "pull", "-q", "--no-edit", "origin", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "<<<<<<<" not in (b / "views/quests/python-rules.md").read_text()
    merged = quest_of(b)
    # b's read is still in b's local log (a plain git pull folds nothing); a's came with a's sync.
    assert merged.current == ids[0] and merged.reads == 1 and merged.resolves == 3
    with MemoryRepo.open(b) as repo:
        assert qv.pending_counts(repo.store) == {"python-rules": {"reads": 1, "resolves": 0}}
        assert repo.quest("python-rules").reads == 2


def test_the_quest_merge_is_the_same_whichever_side_merges():
    def quest(resolves, reads, history, current="d1"):
        return qv.Quest("q", "q", ["rules/@latest"], current, history[-1]["at"], resolves, reads,
                        history).render().encode()

    first = {"derivation": "d1", "at": "c1", "files": 1}
    base = quest(1, 0, [first])
    ours = quest(2, 3, [first, {"derivation": "d2", "at": "c2", "files": 2}], "d2")
    theirs = quest(2, 1, [first, {"derivation": "d3", "at": "c3", "files": 2}], "d3")
    one = qv.merge(base, ours, theirs, "views/quests/q.md")
    assert one == qv.merge(base, theirs, ours, "views/quests/q.md")
    merged = qv.parse(one, "views/quests/q.md")
    assert merged.reads == 4 and merged.resolves == 3
    assert [e["derivation"] for e in merged.history] == ["d1", "d2", "d3"] and merged.current == "d3"
    assert qv.merge(base, b"not a quest", theirs, "views/quests/q.md") is None


def test_the_same_files_selected_by_different_locators_in_two_clones_merge(tmp_path):
    a, b = two_clones(tmp_path)
    ids = []
    for root, locator in ((a, "rules/python/"), (b, "rules/python/vllm.md")):
        with MemoryRepo.open(root) as repo:
            repo.place("rules/python/vllm.md", RULE + b"Use --max-model-len.\n", mention_time=WHEN)
            ids.append(repo.derive([locator], intent=f"vllm via {locator}")[0].id)
    assert ids[0] == ids[1]
    assert run("--repo", str(a), "sync")[0] == 0
    done = git(b, "-c", "pull.rebase=false", "pull", "-q", "--no-edit", "origin", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((b / f"views/derivations/{ids[0]}.json").read_text())
    assert manifest["id"] == ids[0] and len(manifest["ir"]) == 1
    assert run("--repo", str(b), "sync")[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    assert (a / f"views/derivations/{ids[0]}.json").read_bytes() == (b / f"views/derivations/{ids[0]}.json").read_bytes()


def test_init_in_an_older_clone_adds_the_quest_attribute(tmp_path):
    a, _ = two_clones(tmp_path)
    old = "# Installed by memrepo\ngraph/** merge=memrepo\n"
    (a / ".gitattributes").write_text(old)
    git(a, "commit", "-qam", "an older memrepo's attributes")
    assert mergedriver.attributes_missing(old)
    code, out = run("--repo", str(a), "doctor", "--fix")
    assert code == 0, out
    text = (a / ".gitattributes").read_text()
    assert text.startswith(old + "views/quests/*.md merge=memrepo\nviews/derivations/*.json merge=memrepo\n")
