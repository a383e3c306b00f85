"""Small correctness edges of everyday commands (issue 13): core labels, log of an unknown id,
empty --at, the commit count of ingest, the date of a hand-written skill, search warnings."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    assert invoke("init", "memory").exit_code == 0
    monkeypatch.chdir(tmp_path / "memory")
    return invoke


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def test_core_without_label_is_a_usage_error_listing_the_labels(run):
    assert run("remember", "Mia's partner", "--type", "core", "--label", "persona").exit_code == 0
    head = git("rev-parse", "HEAD")
    result = run("remember", "Likes hiking", "--type", "core")
    assert result.exit_code == 2
    assert "--label" in result.output and "existing: persona" in result.output
    assert git("rev-parse", "HEAD") == head and not Path("core/human.md").exists()


def test_api_refuses_a_core_block_without_label(tmp_path):
    from memrepo.errors import RecordError

    with MemoryRepo.init(tmp_path / "m") as repo, pytest.raises(RecordError, match="label"):
        repo.remember("Likes hiking", type="core")


def test_replacing_a_core_block_says_so(run):
    first = run("remember", "Likes hiking", "--type", "core", "--label", "human")
    assert first.exit_code == 0 and "replaced" not in first.output
    second = run("remember", "Likes tea", "--type", "core", "--label", "human")
    assert second.exit_code == 0
    assert "core block 'human' replaced (was 12 chars)" in second.output
    third = json.loads(run("remember", "Likes coffee", "--type", "core", "--label", "human", "--json").output)
    assert third["replaced"] == {"core-human": 9}
    assert json.loads(run("show", "core-human", "--json").output)["text"] == "Likes coffee"


def test_log_of_an_unknown_id_names_it_and_exits_1(run):
    result = run("log", "ep-2023-05-02-deadbeef")
    assert result.exit_code == 1 and "ep-2023-05-02-deadbeef" in result.output and "not found" in result.output


def test_log_of_a_deleted_record_still_shows_its_history(run):
    record_id = json.loads(run("remember", "Mia bought a Suica card", "--type", "episodic",
                               "--mention-time", "2023-05-02", "--json").output)["written"][0]
    git("rm", "-q", f"episodic/2023/05/{record_id}.md")
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "drop it")
    result = run("log", record_id, "--json")
    assert result.exit_code == 0 and len(json.loads(result.output)) == 2


@pytest.mark.parametrize("command", [
    ["show", "core-human"], ["list"], ["log"], ["search", "tea"], ["recall", "tea?"], ["ask", "tea?"],
    ["graph", "anchor", "Mia"], ["graph", "frames"], ["graph", "export"], ["graph", "sparql", "ASK {}"],
])
def test_every_at_option_refuses_an_empty_revision(run, command):
    run("remember", "Likes tea", "--type", "core", "--label", "human")
    result = run(*command, "--at", "")
    assert result.exit_code == 2, result.output
    assert "'--at'" in result.output and "empty revision" in result.output


@pytest.mark.parametrize("read", [
    lambda repo: repo.at(""), lambda repo: repo.graph_export(rev=""), lambda repo: repo.graph_frames(rev=""),
    lambda repo: repo.log(rev=""),
])
def test_the_library_refuses_an_empty_revision_too(tmp_path, read):
    """The viewer and the MCP server call the library, not the CLI: an empty revision never means HEAD."""
    from memrepo.errors import NotFoundError

    repo = MemoryRepo.init(tmp_path / "memory")
    with pytest.raises(NotFoundError, match="empty revision"):
        read(repo)


def test_ingest_counts_every_commit_it_made(run):
    before = int(git("rev-list", "--count", "HEAD"))
    result = run("ingest", str(EXAMPLES / "conversation.txt"), "--json")
    assert result.exit_code == 0, result.output
    made = int(git("rev-list", "--count", "HEAD")) - before
    data = json.loads(result.stdout)
    assert len(data["commits"]) == made and made > data["sources_written"]  # source commits + graph commits
    assert data["commits"][-1] == git("rev-parse", "HEAD").strip()
    text = run("ingest", str(EXAMPLES / "conversation.txt"))
    assert "in 0 commit(s)" in text.output  # nothing new, nothing committed


SKILL = "---\nname: brew-tea\ndescription: How to brew green tea.\n---\nUse water at 70 C.\n"


def test_a_hand_written_skill_is_dated_by_its_commit_not_the_epoch(run):
    Path("procedural/skills/brew-tea").mkdir(parents=True)
    Path("procedural/skills/brew-tea/SKILL.md").write_text(SKILL)
    git("add", "-A")
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "a skill by hand")
    seconds = int(git("log", "-1", "--format=%ct", "--", "procedural/skills/brew-tea/SKILL.md"))
    committed = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d")
    listed = run("list", "--type", "procedural")
    assert "1970" not in listed.output and f"skill-brew-tea  procedural {committed}" in listed.output
    shown = json.loads(run("show", "skill-brew-tea", "--json").output)
    assert shown["mention_time"].startswith(committed)
    assert [r["id"] for r in json.loads(run("list", "--since", committed, "--json").output)] == ["skill-brew-tea"]


def _in_a_terminal(root: Path, *args: str) -> str:
    """What `memrepo ARGS` writes to a terminal (a pseudo-terminal: progress bars draw as for a user)."""
    import os
    import pty
    import sys

    main, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memrepo", *args], stdin=follower, stdout=follower,
                            stderr=follower, cwd=root)
    os.close(follower)
    out = b""
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the process closed the terminal
            break
        if not data:
            break
        out += data
    os.close(main)
    assert proc.wait(timeout=300) == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


def test_a_message_during_an_index_build_starts_its_own_line_in_a_terminal(tmp_path):
    """An unreadable embedding cache is said while the embeddings bar is drawn: not glued onto the bar."""
    import shutil

    with MemoryRepo.init(tmp_path / "memory") as repo:
        repo.ingest([EXAMPLES / "conversation.txt"])
        repo.reindex()
        state = repo.store.state_dir
    shutil.rmtree(state / "indexes" / "vectors")  # rebuilt on the next search: more than 50 records, a bar
    with open(state / "embeddings.sqlite3", "r+b") as cache:
        cache.write(b"\xa5" * 100)
    out = _in_a_terminal(tmp_path / "memory", "search", "pottery course", "-k", "1")
    line = next(line for line in out.split("\n") if "embedding cache" in line)
    assert line.lstrip("\r").startswith("embedding cache"), repr(line)
