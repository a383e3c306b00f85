"""Beliefs over time (issue 30): no stale fact after a hand edit, `git rm` or pull; supersession of one-value
relations; the current belief, the belief at a past date, conflicts; an anchor's timeline."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.cli import cli

SUICA = "Mia bought a Suica card at Tokyo Station"
PASMO = "Mia bought a Pasmo card at Shinagawa Station"
QUESTION = "What card did Mia buy?"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def no_hooks(root: Path) -> None:
    """A clone whose Git runs no memrepo hook: only the next read can notice a plain Git change."""
    shutil.rmtree(root / ".git" / "hooks", ignore_errors=True)
    (root / ".git" / "hooks").mkdir()


def bought(result) -> list[str]:
    return [a.label for f in result.facts if f.predicate == "buy" for a in f.arms if a.role == "item"]


def hand_edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    file.write_text(file.read_text().replace(old, new))


# --- 1. no stale fact -------------------------------------------------------------------------------


def test_a_hand_edit_committed_with_git_is_followed_by_the_very_next_recall(repo):
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    assert bought(repo.recall(QUESTION)) == ["Suica card"]
    path = rec.record_path(card)
    subprocess.run(["sed", "-i", "s/Suica card at Tokyo Station/Pasmo card at Shinagawa Station/", path],
                   cwd=repo.root, check=True)
    git(repo.root, "commit", "-q", "-am", "by hand")
    result = repo.recall(QUESTION)  # no `memrepo index` in between
    assert "Suica card" not in bought(result)
    assert {"record": card, "reason": "changed", "predicate": "buy"}.items() <= result.stale_dropped[0].items()
    assert card in result.record_ids  # the record itself, as it now reads, is still found
    assert "Pasmo" in repo.ask(QUESTION).answer
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "recall", QUESTION, "--json"])
    assert json.loads(out.stdout)["stale_dropped"][0]["record"] == card
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "recall", QUESTION, "--explain"])
    assert f"changed since the graph extracted it" in out.output and f"cites {card} (changed)" in out.output
    repo.index_graph()  # the catch-up extracts it again: the new fact, nothing dropped
    result = repo.recall(QUESTION)
    assert bought(result) == ["Pasmo card"] and result.stale_dropped == []


def test_a_repository_without_hooks_reads_right_after_a_hand_edit(repo):
    no_hooks(repo.root)
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    hand_edit(repo.root, rec.record_path(card), "Suica card at Tokyo Station", "Pasmo card at Shinagawa Station")
    git(repo.root, "commit", "-q", "-am", "by hand")
    result = repo.recall(QUESTION)
    assert "Suica card" not in bought(result) and result.stale_dropped[0]["record"] == card


def test_git_rm_is_followed_by_the_very_next_recall_and_said(repo):
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    repo.remember("Mia bought a bento box at Kyoto Station", type="episodic", event_time="2023-05-03")
    git(repo.root, "rm", "-q", rec.record_path(card))
    git(repo.root, "commit", "-q", "-m", "forget by hand")
    result = repo.recall(QUESTION)
    assert "Suica card" not in bought(result) and card not in result.record_ids
    assert [(d["record"], d["reason"]) for d in result.stale_dropped] == [(card, "gone")]


def test_a_pulled_hand_edit_is_followed_by_the_very_next_recall(tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = MemoryRepo.init(tmp_path / "a")
    (card,) = a.remember(SUICA, type="episodic", event_time="2023-05-02").written
    path = rec.record_path(card)
    a.close()
    git(tmp_path / "a", "push", "-q", str(bare), "main")
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(tmp_path / "b"))
    no_hooks(tmp_path / "b")
    with MemoryRepo.open(tmp_path / "b") as b:
        assert bought(b.recall(QUESTION)) == ["Suica card"]  # b's graph index is built at the old commit
    hand_edit(tmp_path / "a", path, "Suica card at Tokyo Station", "Pasmo card at Shinagawa Station")
    git(tmp_path / "a", "commit", "-q", "-am", "a teammate's hand edit")
    git(tmp_path / "a", "push", "-q", str(bare), "main")
    git(tmp_path / "b", "pull", "-q", "--ff-only", "origin", "main")
    with MemoryRepo.open(tmp_path / "b") as b:
        result = b.recall(QUESTION)
        assert "Suica card" not in bought(result) and result.stale_dropped[0]["record"] == card
