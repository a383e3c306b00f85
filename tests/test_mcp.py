"""`memrepo mcp` driven as a subprocess by the MCP SDK's own stdio client, on real repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import Implementation

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.vault import generate_key

from conftest import EXAMPLES

PROJECT = Path(__file__).resolve().parents[1]
READ_TOOLS = {"recall", "ask", "search", "show", "list", "log", "review_list", "review_show"}
WRITE_TOOLS = {"remember", "ingest", "forget"}


def server_env(**extra: str) -> dict[str, str]:
    """The test's environment (isolated HOME and Git identity) with this checkout importable."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT), env.get("PYTHONPATH", "")) if p)
    return env


@asynccontextmanager
async def connect(root: Path, *args: str, name: str = "test-agent", env: dict[str, str] | None = None,
                  mode: str = "auto") -> AsyncIterator[Client]:
    """A client session with `memrepo mcp --repo ROOT ARGS...` running as a subprocess."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "memrepo", "mcp", "--repo", str(root), *args],
                                   env=env or server_env(), cwd=str(root))
    async with Client(params, client_info=Implementation(name=name, version="1.0"), mode=mode) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool``; fail the test with the server's message if it reports an error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """Call ``tool`` expecting a tool error; its message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    return result.content[0].text


def authors(root: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "log", "--format=%an <%ae>|%s"], capture_output=True, text=True,
                         check=True)
    return out.stdout.splitlines()


def test_tools_remember_recall_resources_and_commits_of_another_process(repo):
    root = repo.root

    async def main() -> None:
        async with connect(root, name="Claude Code") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == READ_TOOLS | WRITE_TOOLS  # no review decisions without --allow-review
            for tool in tools.values():
                assert tool.description and tool.input_schema["type"] == "object"
            assert tools["recall"].input_schema["required"] == ["question"]
            assert "description" in tools["remember"].input_schema["properties"]["type"]
            assert tools["recall"].annotations.read_only_hint and tools["forget"].annotations.destructive_hint

            added = await call(client, "remember", text="Mia bought a Suica card at Tokyo Station on 2023-05-02")
            record_id = added["written"][0]
            assert added["author"] == "Claude Code <claude-code@localhost>"
            recalled = await call(client, "recall", question="Where did Mia buy her Suica card?")
            assert any(record_id in fact["cites"] for fact in recalled["facts"]), recalled["facts"]
            assert record_id in [r["id"] for r in recalled["records"]]
            assert "base_lane" not in recalled  # the lanes come only with explain
            assert "base_lane" in await call(client, "recall", question="Suica card?", explain=True)
            answer = await call(client, "ask", question="Where did Mia buy her Suica card?")
            assert record_id in answer["record_ids"]

            # A record is a resource, now and at a revision.
            first = await call(client, "remember", text="Likes hiking", type="core", label="human")
            core_id = first["written"][0]
            await call(client, "remember", text="Likes hiking and green tea", type="core", label="human")
            now = await client.read_resource(f"memrepo://{core_id}")
            assert "Likes hiking and green tea" in now.contents[0].text and f"id: {core_id}" in now.contents[0].text
            then = await client.read_resource(f"memrepo://{core_id}@{first['commit']}")
            assert then.contents[0].text.rstrip().endswith("Likes hiking")
            listed = {r.uri for r in (await client.list_resources()).resources}
            assert {f"memrepo://{record_id}", f"memrepo://{core_id}"} <= listed
            with pytest.raises(MCPError, match="not found"):
                await client.read_resource(f"memrepo://{record_id}@{first['commit'][:12]}~5")

            # Another process commits while the server holds the repository open: the next call sees it.
            proc = subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(root), "remember",
                                   "Jonas adopted a greyhound called Pixel", "--type", "semantic", "--json"],
                                  capture_output=True, text=True, env=server_env())
            assert proc.returncode == 0, proc.stderr
            other = json.loads(proc.stdout)["written"][0]
            assert (await call(client, "show", id=other))["text"] == "Jonas adopted a greyhound called Pixel"
            hits = await call(client, "search", query="greyhound Pixel", k=3)
            assert hits["hits"][0]["id"] == other
            log = await call(client, "log", limit=50)
            # The record's commit, then (newest) the graph commit that follows every write.
            assert json.loads(proc.stdout)["commit"] in [c["id"] for c in log["commits"][:2]]
            assert (await call(client, "list", type="semantic"))["total"] == 1

    anyio.run(main)
    lines = authors(root)
    cli_writes, agent_writes = lines[:2], lines[2:-1]  # the CLI's write is a record commit and its graph commit
    assert not any(line.startswith("Claude Code") for line in cli_writes)  # the repository's identity
    assert all(line.startswith("Claude Code <claude-code@localhost>|") for line in agent_writes)  # every agent write
    assert any("Index graph" in line for line in agent_writes)  # the graph commit after a routed remember too


def test_ingest_and_author_flag_with_a_legacy_handshake_client(repo):
    async def main() -> None:
        async with connect(repo.root, "--author", "Nightly importer <ops@example.com>", mode="legacy") as client:
            result = await call(client, "ingest", path=str(EXAMPLES / "conversation.txt"))
            assert result["records_written"] > 0 and result["author"] == "Nightly importer <ops@example.com>"
            again = await call(client, "ingest", path=str(EXAMPLES / "conversation.txt"))
            assert again["records_written"] == 0 and again["sources_unchanged"] == result["sources_written"]
            missing = await refused(client, "ingest", path=str(repo.root / "nope.json"))
            assert "nope.json" in missing

    anyio.run(main)
    assert {line.split("|")[0] for line in authors(repo.root)[:-1]} == {"Nightly importer <ops@example.com>"}


def test_read_only_refuses_every_write_and_nothing_is_written(repo):
    head = repo.store.head()

    async def main() -> None:
        async with connect(repo.root, "--read-only") as client:
            for tool, args in [("remember", {"text": "Mia moved to Lisbon"}),
                               ("ingest", {"path": str(EXAMPLES / "conversation.txt")}),
                               ("forget", {"ids": ["se-2023-05-02-1a2b3c4d"]})]:
                message = await refused(client, tool, **args)
                assert "read-only" in message and tool in message
            assert (await call(client, "list"))["total"] == 0  # reads still work

    anyio.run(main)
    assert repo.store.head() == head


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(repo):
    async def main() -> None:
        async with connect(repo.root) as client:
            cases = [
                ("show", {"id": "nope"}, "is not a memrepo id"),
                ("show", {"id": "se-2023-05-02-1a2b3c4d"}, "not found"),
                ("show", {"id": "se-2023-05-02-1a2b3c4d", "at": "no-such-branch"}, "revision 'no-such-branch' not found"),
                ("log", {"at": "main~99"}, "not found"),
                ("remember", {"text": ""}, "text"),
                ("remember", {"text": "   "}, "text"),
                ("remember", {"text": "x", "type": "diary"}, "type"),
                ("remember", {"text": "x", "event_time": "last tuesday"}, "event_time"),
                ("search", {"query": "x", "k": 0}, "k"),
                ("search", {"query": 42}, "query"),
                ("recall", {}, "question"),
                ("review_show", {"branch": "dream/nope"}, "not found"),
                ("review_approve", {"branch": "dream/nope"}, "Unknown tool"),
                ("no_such_tool", {}, "Unknown tool"),
            ]
            for tool, args, expected in cases:
                message = await refused(client, tool, **args)
                assert expected in message, (tool, args, message)
                assert "Traceback" not in message
            with pytest.raises(MCPError):
                await client.read_resource("memrepo://nope")
            added = await call(client, "remember", text="Mia moved to Lisbon", type="semantic")  # still serving
            assert added["written"]

    anyio.run(main)


def test_a_vault_value_is_never_returned_without_the_key(repo):
    key = generate_key().decode()
    secret = "garage door code 48213"

    async def main() -> None:
        async with connect(repo.root, env=server_env(MEMREPO_VAULT_KEY=key)) as keyed:
            vault_id = (await call(keyed, "remember", text=secret, type="vault"))["written"][0]
            assert (await call(keyed, "show", id=vault_id))["text"] == secret  # the key holder reads it
        async with connect(repo.root) as client:
            message = await refused(client, "remember", text="PIN 1234", type="vault")
            assert "MEMREPO_VAULT_KEY" in message
            outputs = [
                await call(client, "show", id=vault_id),
                await call(client, "list"),
                await call(client, "list", type="vault"),
                await call(client, "search", query="garage door code", type="vault"),
                await call(client, "search", query="48213"),
                await call(client, "recall", question="What is the garage door code?", types=["vault"]),
                await call(client, "ask", question="What is the garage door code?"),
                await call(client, "log", id=vault_id),
            ]
            shown = outputs[0]
            assert shown["encrypted"] is True
            resource = (await client.read_resource(f"memrepo://{vault_id}")).contents[0].text
            assert "encrypted" in resource
            for output in [*outputs, resource]:
                assert "48213" not in json.dumps(output)

    anyio.run(main)


def test_two_servers_on_one_repository_write_concurrently_and_lose_nothing(repo):
    per_server = 8

    async def agent(name: str, written: dict[str, list[str]]) -> None:
        async with connect(repo.root, name=name) as client:
            ids = []
            for i in range(per_server):
                result = await call(client, "remember", text=f"{name} noted fact number {i} about the garden",
                                    type="semantic", mention_time="2023-05-02")
                ids += result["written"]
            result = await call(client, "remember", text=f"{name} met Mia at the Lisbon market on 2023-05-0{len(ids) % 9 + 1}")
            written[name] = ids + result["written"]

    async def main() -> dict[str, list[str]]:
        written: dict[str, list[str]] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, "agent-a", written)
            tg.start_soon(agent, "agent-b", written)
        return written

    written = anyio.run(main)
    everything = {r.id for r in MemoryRepo.open(repo.root).records()}
    for name, ids in written.items():
        assert len(ids) == per_server + 1 and set(ids) <= everything
        for record_id in ids:
            (commit,) = repo.log(record_id)
            assert commit.author == f"{name} <{name}@localhost>"
    if shutil.which("git"):
        fsck = subprocess.run(["git", "-C", str(repo.root), "fsck", "--strict"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        status = subprocess.run(["git", "-C", str(repo.root), "status", "--porcelain"], capture_output=True, text=True)
        assert status.stdout == ""


def test_forget_removes_records_in_one_commit_authored_by_the_agent(repo):
    async def main() -> None:
        async with connect(repo.root, name="cleaner") as client:
            record_id = (await call(client, "remember", text="Mia moved to Lisbon", type="semantic"))["written"][0]
            result = await call(client, "forget", ids=[record_id], message="wrong city")
            assert result["removed"] == [record_id] and result["author"] == "cleaner <cleaner@localhost>"
            assert "not found" in await refused(client, "show", id=record_id)
            assert (await call(client, "show", id=record_id, at=f"{result['commit']}~1"))["text"] == "Mia moved to Lisbon"

    anyio.run(main)
    assert authors(repo.root)[0].startswith("cleaner <cleaner@localhost>|")


def test_allow_review_offers_review_decisions(repo):
    async def main() -> None:
        async with connect(repo.root, "--allow-review") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"review_approve", "review_reject"} <= names
            assert (await call(client, "review_list"))["reviews"] == []
            assert "not found" in await refused(client, "review_approve", branch="dream/nope")

    anyio.run(main)


def test_author_flag_must_be_a_usable_name(repo):
    result = CliRunner().invoke(cli, ["mcp", "--repo", str(repo.root), "--author", "<>"])
    assert result.exit_code == 2 and "author" in result.output


def test_skill_install_writes_a_short_skill_and_the_full_manual(tmp_path):
    result = CliRunner().invoke(cli, ["skill", "install", str(tmp_path / "skills")])
    assert result.exit_code == 0, result.output
    skill = (tmp_path / "skills/memrepo/SKILL.md").read_text()
    front, body = skill.split("---\n", 2)[1:]
    assert "name: memrepo\n" in front and "description: " in front
    assert len(skill) < 5000 and "reference.md" in body
    manual = (tmp_path / "skills/memrepo/reference.md").read_text()
    for command in ("memrepo remember", "memrepo recall", "memrepo review approve", "memrepo mcp",
                    "memrepo graph sparql"):
        assert command in manual
    again = CliRunner().invoke(cli, ["skill", "install", str(tmp_path / "skills")])
    assert again.exit_code == 0 and (tmp_path / "skills/memrepo/SKILL.md").read_text() == skill


def test_agent_names_become_safe_git_authors(repo):
    from memrepo.errors import RecordError
    from memrepo.mcp import MemoryService, agent_identity

    assert agent_identity("Claude Code") == "Claude Code <claude-code@localhost>"
    assert agent_identity("Nightly importer <ops@example.com>") == "Nightly importer <ops@example.com>"
    assert agent_identity("evil\nAuthor: x <y>\x00") == "evil Author: x y <evil-author-x-y@localhost>"
    with pytest.raises(RecordError, match="author"):
        agent_identity(" <> ")
    service = MemoryService(repo)
    added = service.remember("Mia moved to Lisbon", type="semantic", agent="<>")  # nothing usable: the Git identity
    assert added["author"] == repo.store.identity().decode() == repo.log(added["written"][0])[0].author
