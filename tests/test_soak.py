"""A team's day in rounds (issue 29): writers racing syncs, forgets racing edits, one core block edited by all.

A bare remote with the server hook (`memrepo serve-hooks install`) and three clones. Each round, in an
order drawn from a seeded generator, each clone:

- runs three writers *while* that clone runs `memrepo sync` in the foreground: the Python API in a
  thread (one repository kept open), an agent through the MCP SDK's client and a `memrepo mcp`
  process kept running for the whole soak, and a `memrepo remember` process;
- edits its own line of the shared core block `core/human.md` (the lines are next to each other);
- some rounds: two clones hand-edit different lines of the same record and commit with plain git;
  one clone forgets a teammate's record while another hand-edits that record.

Afterwards every acknowledged record is in every clone, no forgotten record is anywhere, all clones and
the remote are on the same tree, and `git fsck --strict` and `memrepo doctor` are clean.

`SOAK_ROUNDS=30 pytest tests/test_soak.py` runs longer; the default is the issue's 10.
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.tombstones import tombstone_path

PROJECT = Path(__file__).resolve().parents[1]
ROUNDS = int(os.environ.get("SOAK_ROUNDS", "10"))
SEED = int(os.environ.get("SOAK_SEED", "29"))
NAMES = ("Mia", "Jonas", "Lena")
THINGS = ("kayak", "violin", "sourdough starter", "chess set", "orchid", "telescope", "loom")
BLOCK = ["Team: the pottery studio", "Opens at nine.", "Closes at six.", "Kiln day is Friday."]


def cli_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


class Writer(threading.Thread):
    """Remembers ``texts`` through one open repository (an MCP server's way), acknowledging each id."""

    def __init__(self, repo: MemoryRepo, texts: list[str], acknowledged: dict[str, str]):
        super().__init__(daemon=True)
        self.repo, self.texts, self.acknowledged = repo, texts, acknowledged
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for text in self.texts:
                result = self.repo.remember(text, type="semantic")
                for record_id in result.written:
                    self.acknowledged[record_id] = text
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


class McpAgent(threading.Thread):
    """An agent on the clone at ``root``: the MCP SDK's stdio client driving a `memrepo mcp` process for the
    whole soak, remembering each batch it is given and acknowledging each id the server reports."""

    def __init__(self, root: Path, name: str, acknowledged: dict[str, str]):
        super().__init__(daemon=True)
        self.root, self.name, self.acknowledged = root, name, acknowledged
        self.jobs: queue.Queue[list[str] | None] = queue.Queue()
        self.idle = threading.Event()
        self.error: BaseException | None = None

    def write(self, texts: list[str]) -> None:
        self.idle.clear()
        self.jobs.put(texts)

    def wait(self, timeout: float) -> bool:
        return self.idle.wait(timeout) and self.error is None

    def stop(self) -> None:
        self.jobs.put(None)
        self.join(60)

    def run(self) -> None:
        try:
            anyio.run(self._serve)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
            self.idle.set()

    async def _serve(self) -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "memrepo", "mcp", "--repo", str(self.root)],
                                       env=dict(os.environ), cwd=str(self.root))
        async with Client(params, client_info=Implementation(name=f"{self.name} agent", version="1.0")) as client:
            while True:
                texts = await anyio.to_thread.run_sync(self.jobs.get)
                if texts is None:
                    return
                for text in texts:
                    result = await client.call_tool("remember", {"text": text, "type": "semantic"})
                    if result.is_error:
                        raise AssertionError(f"{self.name}: remember over MCP failed: {result.content[0].text}")
                    for record_id in result.structured_content["written"]:
                        self.acknowledged[record_id] = text
                self.idle.set()


def sync(root: Path) -> str:
    code, out = cli_run("--repo", str(root), "sync")
    assert code == 0, f"{root.name}: {out}"
    return out


def hand_edit(root: Path, path: str, line: int, new: str) -> None:
    """Replace body line ``line`` of ``path`` and commit with plain git (a person's edit)."""
    text = (root / path).read_text()
    head, body = text.split("\n---\n", 1)
    lines = body.split("\n")
    lines[line] = new
    (root / path).write_text(head + "\n---\n" + "\n".join(lines))
    git(root, "commit", "-qam", f"hand edit of {path}")


def set_core_line(root: Path, line: int, text: str) -> None:
    with MemoryRepo.open(root) as repo:
        current = repo.get("core-human").text.split("\n")
    current[line] = text
    code, out = cli_run("--repo", str(root), "remember", "\n".join(current), "--type", "core", "--label", "human")
    assert code == 0, out


def rejected_dream_merged_by_plain_git(remote: Path, clones: list[Path], round_: int) -> None:
    """Once, in round 2: a dream branch rejected on main by a teammate, then merged into main with plain
    `git merge` and pushed; the server hook refuses it, and the clone goes back to what the remote has."""
    if round_ != 2:
        return
    from dream_fixtures import dream_branch

    dreamer, reviewer = clones[0], clones[1]
    branch = dream_branch(dreamer)
    sync(dreamer)  # publishes the review branch
    sync(reviewer)
    code, out = cli_run("--repo", str(reviewer), "review", "reject", branch, "--reason", "two places")
    assert code == 0, out
    sync(reviewer)
    sync(dreamer)
    git(dreamer, "merge", "-q", "--no-ff", "--no-edit", f"origin/{branch}")
    done = subprocess.run(["git", "-C", str(dreamer), "push", "origin", "main"], capture_output=True, text=True)
    assert done.returncode != 0 and "rule rejected" in done.stderr, done.stderr
    git(dreamer, "reset", "-q", "--hard", "origin/main")


def record_path(root: Path, record_id: str) -> str | None:
    with MemoryRepo.open(root) as repo:
        try:
            return repo.get(record_id).path
        except Exception:  # noqa: BLE001 - not there
            return None


@pytest.mark.slow
def test_three_clones_with_writers_racing_syncs_forgets_racing_edits_and_one_core_block(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))
    rng = random.Random(SEED)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert cli_run("serve-hooks", "install", str(remote))[0] == 0
    clones: list[Path] = []
    for i, name in enumerate(NAMES):
        root = tmp_path / name.lower()
        code, out = cli_run("clone", str(remote), str(root))
        assert code == 0, out
        git(root, "config", "user.name", name)
        git(root, "config", "user.email", f"{name.lower()}@example.org")
        clones.append(root)
        if i == 0:
            code, out = cli_run("--repo", str(root), "remember", "\n".join(BLOCK), "--type", "core", "--label",
                                "human")
            assert code == 0, out
        sync(root)
    for root in clones:
        sync(root)
    # A shared record of several lines, which two people edit by hand (different lines).
    with MemoryRepo.open(clones[0]) as repo:
        shared = repo.add([repo.new_record("semantic", "Kiln rules\nLoad from the back.\nNever open above 200 C.\n"
                                           "Log every firing.", mention_time="2024-02-01T09:00:00Z")]).written[0]
    for root in (clones[0], clones[1], clones[2], clones[0]):
        sync(root)

    acknowledged: dict[str, str] = {shared: "shared"}
    forgotten: set[str] = set()
    apis = [MemoryRepo.open(root) for root in clones]  # each clone's long-lived writer (an MCP server's repository)
    agents = [McpAgent(root, name, acknowledged) for root, name in zip(clones, NAMES)]  # and a real MCP client
    for agent in agents:
        agent.start()
    try:
        for round_ in range(ROUNDS):
            order = rng.sample(range(3), 3)
            edit_shared = round_ % 3 == 1
            forget_race = round_ % 4 == 2
            if edit_shared:  # two people edit the same record, different lines, before anyone syncs
                first, second = rng.sample(range(3), 2)
                path = record_path(clones[first], shared)
                assert path is not None
                hand_edit(clones[first], path, 1, f"Load from the back (round {round_}).")
                hand_edit(clones[second], path, 3, f"Log every firing (round {round_}).")
            if forget_race:  # one forgets a teammate's record while another edits it
                candidates = sorted(r for r in acknowledged if r != shared and r not in forgotten
                                    and all(record_path(c, r) for c in clones))
                if candidates:
                    victim = rng.choice(candidates)
                    who, editor = rng.sample(range(3), 2)
                    code, out = cli_run("--repo", str(clones[who]), "forget", victim, "--reason", f"round {round_}")
                    assert code == 0, out
                    forgotten.add(victim)
                    path = record_path(clones[editor], victim)
                    assert path is not None
                    hand_edit(clones[editor], path, 0, f"edited in round {round_}")
            rejected_dream_merged_by_plain_git(remote, clones, round_)
            for i in order:
                root = clones[i]
                set_core_line(root, i + 1 if i < 2 else 3, f"{NAMES[i]} noted this in round {round_}.")
                text = f"{NAMES[i]} lent a {rng.choice(THINGS)} (round {round_}, cli)"
                cli_writer = subprocess.Popen([sys.executable, "-m", "memrepo", "--repo", str(root), "remember", text,
                                               "--type", "semantic", "--json"], stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True)
                texts = [f"{NAMES[i]} keeps a {rng.choice(THINGS)} in shed {round_}-{i}-{j}" for j in range(3)]
                writer = Writer(apis[i], texts, acknowledged)
                writer.start()
                agents[i].write([f"{NAMES[i]} told the agent about the {rng.choice(THINGS)} ({round_}-{i}-{j})"
                                 for j in range(2)])
                sync(root)  # while the API writer, the MCP agent and the CLI write
                writer.join(120)
                assert not writer.is_alive() and writer.error is None, writer.error
                assert agents[i].wait(120), agents[i].error
                out, err = cli_writer.communicate(timeout=120)
                assert cli_writer.returncode == 0, err
                acknowledged.update((record_id, text) for record_id in json.loads(out)["written"])
        for _ in range(2):  # everyone syncs until nothing moves
            for root in clones:
                sync(root)
    finally:
        for agent in agents:
            agent.stop()
        for repo in apis:
            repo.close()

    remote_tree = git(remote, "rev-parse", "main^{tree}")
    assert all(git(root, "rev-parse", "HEAD^{tree}") == remote_tree for root in clones)
    kept = set(acknowledged) - forgotten
    assert len(kept) >= ROUNDS * 3 * 3
    assert sum("told the agent" in text for text in acknowledged.values()) >= ROUNDS * 3 * 2  # the MCP agents wrote
    for root in clones:
        with MemoryRepo.open(root) as repo:
            have = {r.id for r in repo.records()}
            assert kept <= have, f"{root.name} lacks {sorted(kept - have)[:5]}"
            assert not forgotten & have, f"{root.name} has forgotten {sorted(forgotten & have)}"
            assert all(repo.snapshot.exists(tombstone_path(f)) for f in forgotten)
            assert repo.doctor() == [], [str(p) for p in repo.doctor()]
            core = repo.get("core-human").text.split("\n")
            assert core[0] == BLOCK[0] and all(f"round {ROUNDS - 1}" in core[line] for line in (1, 2, 3))
            assert "<<<<<<<" not in repo.get(shared).text
        subprocess.run(["git", "fsck", "--strict"], cwd=root, check=True, capture_output=True)
        assert not (root / ".git" / "MERGE_HEAD").exists()
