"""The command line as a user runs it: init, remember, show, list, log, doctor, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.cli import cli


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None, env: dict | None = None):
        return runner.invoke(cli, list(args), input=input, env=env, catch_exceptions=False)

    assert invoke("init", "memory").exit_code == 0
    monkeypatch.chdir(tmp_path / "memory")
    return invoke


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def test_remember_show_list_log(run):
    out = run("remember", "Mia bought a Suica card", "--type", "episodic", "--event-time", "2023-05-02",
              "--mention-time", "2023-05-02T14:03:00+09:00", "--actor", "Mia", "--json")
    assert out.exit_code == 0, out.output
    record_id = json.loads(out.output)["written"][0]
    shown = json.loads(run("show", record_id, "--json").output)
    assert shown["text"] == "Mia bought a Suica card" and shown["actor"] == "Mia"
    listed = json.loads(run("list", "--type", "episodic", "--json").output)
    assert [r["id"] for r in listed] == [record_id]
    assert run("list", "--since", "2024-01-01", "--json").output.strip() == "[]"
    log = json.loads(run("log", record_id, "--json").output)
    assert len(log) == 1 and record_id in log[0]["message"]
    assert "Mia bought a Suica card" in run("show", record_id).output
    assert git("status", "--porcelain") == ""


def test_show_at_an_older_revision(run):
    run("remember", "v1", "--type", "core", "--label", "persona")
    run("remember", "v2", "--type", "core", "--label", "persona")
    assert json.loads(run("show", "core-persona", "--json").output)["text"] == "v2"
    assert json.loads(run("show", "core-persona", "--at", "HEAD~1", "--json").output)["text"] == "v1"


def test_init_twice_says_so_and_changes_nothing(run, tmp_path):
    head = git("rev-parse", "HEAD")
    result = run("init", ".")
    assert result.exit_code == 0 and "already a memory repository" in result.output
    assert git("rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    "args, message",
    [
        (["remember", "x", "--event-time", "May 2nd"], "event_time"),
        (["remember", "   "], "text: is empty"),
        (["show", "../../etc/passwd"], "id"),
        (["show", "ep-2023-05-02-00000000"], "not found"),
        (["list", "--since", "last week"], "since"),
        (["remember", "x", "--source", "src-2023-05-02-deadbeef#D1:1"], "not found"),
    ],
)
def test_errors_name_the_problem_exit_1_and_commit_nothing(run, args, message):
    head = git("rev-parse", "HEAD")
    result = run(*args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert git("rev-parse", "HEAD") == head


def test_usage_error_exits_2(run):
    assert run("remember", "x", "--type", "diary").exit_code == 2


def test_invalid_utf8_on_stdin_is_refused(run):
    head = git("rev-parse", "HEAD")
    result = run("remember", "-", input=b"\xff\xfe\x00bad")
    assert result.exit_code == 1 and "UTF-8" in result.output
    assert git("rev-parse", "HEAD") == head


def test_vault_without_key_reads_as_encrypted_with_a_hint(run):
    key = run("vault", "keygen").output.strip()
    out = run("remember", "PIN 4321", "--type", "vault", "--json", env={"MEMREPO_VAULT_KEY": key})
    record_id = json.loads(out.output)["written"][0]
    assert "PIN 4321" in run("show", record_id, env={"MEMREPO_VAULT_KEY": key}).output
    locked = run("show", record_id)
    assert "PIN 4321" not in locked.output and "MEMREPO_VAULT_KEY" in locked.output
    refused = run("remember", "other", "--type", "vault")
    assert refused.exit_code == 1 and "MEMREPO_VAULT_KEY" in refused.output


def test_doctor_finds_planted_faults(run):
    run("remember", "Mia bought a Suica card", "--mention-time", "2023-05-02")
    assert run("doctor").exit_code == 0
    Path("episodic/2023/05/ep-2023-05-02-broken00.md").write_text("---\nid: [unclosed\n---\nx\n")
    Path("episodic/2023/05/ep-2023-05-02-misplace.md").write_text(
        "---\nid: ep-2024-01-01-misplace\ntype: episodic\nmention_time: 2024-01-01\n---\nx\n"
    )
    Path("semantic/2023/05").mkdir(parents=True)
    Path("semantic/2023/05/se-2023-05-02-cites000.md").write_text(
        "---\nid: se-2023-05-02-cites000\ntype: semantic\nmention_time: 2023-05-02\n"
        "sources: [src-2023-05-02-nothere0#D1:1]\n---\nx\n"
    )
    git("add", ".")
    git("commit", "-qm", "planted faults")
    result = run("doctor", "--json")
    assert result.exit_code == 1
    problems = {p["path"]: p["message"] for p in json.loads(result.output)["problems"]}
    assert "not valid YAML" in problems["episodic/2023/05/ep-2023-05-02-broken00.md"]
    assert "belongs at episodic/2024/01" in problems["episodic/2023/05/ep-2023-05-02-misplace.md"]
    assert "does not exist" in problems["semantic/2023/05/se-2023-05-02-cites000.md"]
    # Reads skip a hand-broken record with a warning naming it; the others stay readable.
    listed = run("list")
    assert listed.exit_code == 0 and "warning: skipped episodic/2023/05/ep-2023-05-02-broken00.md" in listed.output
    assert "Mia bought a Suica card" in listed.output


def test_doctor_finds_a_missing_git_object(run):
    run("remember", "Mia bought a Suica card", "--mention-time", "2023-05-02")
    blob = git("rev-parse", "HEAD:README.md").strip()
    Path(".git/objects", blob[:2], blob[2:]).unlink()
    result = run("doctor")
    assert result.exit_code == 1 and f"object {blob}" in result.output


def test_commands_have_help():
    runner = CliRunner()
    for name, command in cli.commands.items():
        if command.hidden:
            continue
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and len(command.help or "") > 20, name


def test_help_runs_as_a_process():
    result = subprocess.run([sys.executable, "-m", "memrepo", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "memory repository" in result.stdout
