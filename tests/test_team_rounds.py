"""A bare remote and three teammates working on one memory in rounds (issue 16).

Each round, in random order, each clone ingests a conversation of its own, remembers a
fact, sometimes dreams or reviews a teammate's review branch (approve or reject), and
syncs; recall then finds the fact a teammate pushed just before. Afterwards every clone has
every record and the same tree, doctor is clean, `git fsck --strict` is clean, and no file
memrepo wrote holds a conflict marker.

The suite runs 6 rounds; `TEAM_ROUNDS=20 pytest tests/test_team_rounds.py` runs the
issue's 20 (about 3 minutes on 2 cores).
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from dream_fixtures import BARE, MOUNT, add_semantic
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.team.validate import conflict_marker_line

PROJECT = Path(__file__).resolve().parents[1]
ROUNDS = int(os.environ.get("TEAM_ROUNDS", "6"))
PEOPLE = ["Aiko", "Bruno", "Chen", "Dalia", "Emre", "Farah", "Goran", "Hana", "Ines", "Jun"]
PETS = ["a greyhound", "two cats", "a parrot", "a tortoise", "a rabbit"]
CITIES = ["Lisbon", "Osaka", "Tallinn", "Quito", "Dakar", "Hobart", "Bergen"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def cli_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def conversation(path: Path, clone: int, round_: int, rng: random.Random) -> None:
    a, b = rng.sample(PEOPLE, 2)
    day = 1 + (round_ * 3 + clone) % 27
    path.write_text(
        f"# Session 1: 2024-0{1 + clone}-{day:02d} 1{clone}:0{round_ % 10}\n"
        f"{a}: I finally moved to {rng.choice(CITIES)} last week, round {round_} of clone {clone}.\n"
        f"{b}: Congratulations! Did you take {rng.choice(PETS)} with you?\n"
        f"{a}: Yes, and I started a pottery class on Thursdays.\n")


@pytest.mark.slow
def test_three_clones_work_in_rounds_and_converge(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))
    rng = random.Random(16)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert cli_run("serve-hooks", "install", str(remote))[0] == 0  # every push is validated too
    clones = []
    for i in range(3):
        code, out = cli_run("clone", str(remote), str(tmp_path / f"clone{i}"))
        assert code == 0, out
        clones.append(tmp_path / f"clone{i}")
        for key, value in (("user.name", PEOPLE[i]), ("user.email", f"{PEOPLE[i].lower()}@example.org")):
            git(clones[i], "config", key, value)  # teammates: the hook has a teammate review each Dream run
        assert cli_run("--repo", str(clones[i]), "sync")[0] == 0, f"clone{i}"
    facts: dict[str, tuple[int, str]] = {}  # record id -> (clone that wrote it, a question that finds it)
    pushed: list[str] = []  # record ids on the remote, in push order
    reviewed = 0
    for round_ in range(ROUNDS):
        for i in rng.sample(range(3), 3):
            root = clones[i]
            doc = tmp_path / f"conv-{round_}-{i}.txt"
            conversation(doc, i, round_, rng)
            code, out = cli_run("--repo", str(root), "ingest", str(doc))
            assert code == 0, out
            word = f"{rng.choice(['violin', 'kayak', 'sourdough', 'chess', 'orchid'])}{round_}x{i}"
            with MemoryRepo.open(root) as repo:
                record = repo.new_record("semantic", f"{PEOPLE[i]} keeps a {word} in the garden shed",
                                         mention_time=f"2024-05-{1 + round_:02d}T0{i}:00:00Z")
                repo.add([record])
                facts[record.id] = (i, word)
                if round_ == 0 and i == 0:  # a pair that AutoDream proposes to merge
                    add_semantic(repo, BARE, "2023-05-02T10:00:00")
                    add_semantic(repo, MOUNT, "2023-05-03T10:00:00")
                if rng.random() < 0.3 or (round_ == 0 and i == 0):
                    repo.index_graph()
                    repo.dream()
                me = git(root, "config", "user.email").strip()
                open_reviews = [r for r in repo.review_list()
                                if r.remote and git(root, "log", "-1", "--format=%ae", r.tip).strip() != me]
            if open_reviews and rng.random() < 0.7:
                r = open_reviews[0]
                verb = rng.choice(["approve", "reject"])
                code, out = cli_run("--repo", str(root), "review", verb, r.branch, "--delete-remote")
                assert code == 0, out
                reviewed += 1
            code, out = cli_run("--repo", str(root), "sync")
            assert code == 0, out
            assert "resolved" not in out or "<<<<<<<" not in out
            # Right after its sync, recall finds what a teammate pushed last.
            teammates = [rid for rid in pushed if facts[rid][0] != i]
            if teammates:
                rid = teammates[-1]
                with MemoryRepo.open(root) as repo:
                    found = repo.recall(f"Who keeps a {facts[rid][1]} in the garden shed?")
                assert rid in [row.id for row in found.records], (round_, i, rid)
            pushed += [rid for rid, (who, _) in facts.items() if who == i and rid not in pushed]
    for root in clones + clones:  # twice round: everyone ends with everything
        assert cli_run("--repo", str(root), "sync")[0] == 0
    trees = {subprocess.run(["git", "-C", str(r), "rev-parse", "HEAD^{tree}"], capture_output=True, text=True).stdout
             for r in clones}
    assert len(trees) == 1
    assert reviewed >= 1
    for root in clones:
        with MemoryRepo.open(root) as repo:
            have = {p.rsplit("/", 1)[-1][:-3] for p, _ in repo.record_files("semantic")}
            assert set(facts) <= have
            assert [str(p) for p in repo.doctor()] == []
            snap = repo.snapshot
            marked = [p for p, blob in snap.walk() if conflict_marker_line(snap.read_blob(blob))]
            assert marked == []
        fsck = subprocess.run(["git", "-C", str(root), "fsck", "--strict"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
