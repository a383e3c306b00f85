"""`memrepo serve` as a real server process on 127.0.0.1, driven by the MCP SDK's own streamable HTTP client.

Real repositories and a real bare remote in tmp_path; tokens made by the CLI into a configuration
folder of the test's own (XDG_CONFIG_HOME).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from test_mcp import call, refused  # one way to call a tool, over stdio or HTTP

PROJECT = Path(__file__).resolve().parents[1]
READ_TOOLS = {"recall", "ask", "search", "show", "list", "log", "review_list", "review_show"}
WRITE_TOOLS = READ_TOOLS | {"remember", "forget"}
REVIEW_TOOLS = WRITE_TOOLS | {"review_approve", "review_reject"}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """This test's user configuration folder (where `serve token add` keeps the tokens); the server inherits it."""
    folder = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))
    return folder / "memrepo"


def token(name: str, scope: str, *extra: str) -> str:
    """`memrepo serve token add NAME --scope SCOPE`: the secret it prints."""
    result = CliRunner().invoke(cli, ["serve", "token", "add", name, "--scope", scope, *extra])
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


class Server:
    """A `memrepo serve` process; its stderr (the ready message and the log lines) collected as it comes."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "memrepo", "serve", "--port", "0", *args],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(60) or self.proc.poll() is not None:
            self.proc.kill()
            raise AssertionError("the server did not start:\n" + "\n".join(self.lines))
        self.base = re.search(r"at (http://127\.0\.0\.1:\d+)", self.lines[0]).group(1)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if " at http://" in line:
                self._ready.set()
        self._ready.set()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def log(self) -> str:
        return "\n".join(self.lines)


@contextmanager
def serving(*args: str) -> Iterator[Server]:
    server = Server(*args)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.stop()


@asynccontextmanager
async def connect(url: str, secret: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client




def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def wait_until(check, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.2)


def health(base: str, secret: str) -> dict[str, Any]:
    reply = httpx2.get(f"{base}/healthz", headers={"Authorization": f"Bearer {secret}"})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_tools_per_scope_writes_authored_by_the_token_and_read_scope_refusing_writes(repo, config):
    reader, writer, reviewer = token("ci-reader", "read"), token("alice", "write"), token("lead", "review")

    async def main(url: str) -> None:
        seen = {}
        for secret in (reader, writer, reviewer):
            async with connect(url, secret) as client:
                seen[secret] = {t.name: t for t in (await client.list_tools()).tools}
        assert set(seen[reader]) == READ_TOOLS and set(seen[writer]) == WRITE_TOOLS
        assert set(seen[reviewer]) == REVIEW_TOOLS  # ingest never: it names a file on the server's disk
        assert seen[reader]["recall"].input_schema["properties"]["pull"]["type"] == "boolean"

        async with connect(url, writer, mode="legacy") as client:  # the initialize handshake works as well
            written = await call(client, "remember", text="Mia moved to Lisbon in May 2023", type="semantic")
            assert written["author"] == "alice <alice@localhost>"
            hits = await call(client, "search", query="Lisbon")
            assert [h["id"] for h in hits["hits"]] == written["written"]
        async with connect(url, reader) as client:
            commits = git(repo.root, "rev-list", "--count", "HEAD")
            message = await refused(client, "remember", text="Jonas plays the cello")
            assert "scope read" in message and "needs scope write" in message
            assert "needs scope review" in await refused(client, "review_approve", branch="dream/x")
            assert "not offered over HTTP" in await refused(client, "ingest", path="/etc/passwd")
            assert git(repo.root, "rev-list", "--count", "HEAD") == commits  # nothing was written
            shown = await call(client, "show", id=written["written"][0])
            assert shown["text"].startswith("Mia moved to Lisbon")

    with serving("--repo", str(repo.root)) as server:
        anyio.run(main, f"{server.base}/mcp")
    authors = git(repo.root, "log", "--format=%an <%ae>|%s").splitlines()
    assert any(line.startswith("alice <alice@localhost>|Remember semantic") for line in authors)
    assert not any(line.startswith(("ci-reader", "lead")) for line in authors)
    log = server.log()
    assert "token=alice POST /mcp call=tools/call:remember status=200 outcome=ok" in log
    assert "token=ci-reader POST /mcp call=tools/call:remember status=200 outcome=refused" in log
    assert "Lisbon" not in log  # never the memory text


def test_missing_wrong_and_revoked_tokens_are_the_same_401_and_a_revoke_needs_no_restart(repo, config):
    alice, other = token("alice", "write"), token("ops-only", "write", "--namespace", "ops")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

    with serving("--repo", str(repo.root)) as server:
        url = f"{server.base}/mcp"

        def post(**headers: str) -> httpx2.Response:
            return httpx2.post(url, json=initialize, headers={**HEADERS, **headers})

        refusals = [post(), post(Authorization=f"Bearer {alice}x"), post(Authorization="Bearer"),
                    post(Authorization=f"Basic {alice}"), post(Authorization=f"Bearer {other}"),
                    httpx2.get(f"{server.base}/healthz")]
        assert {r.status_code for r in refusals} == {401}
        assert {r.text for r in refusals} == {'{"error": "unauthorized"}'}  # never which of them it was
        assert all(r.headers["www-authenticate"] == "Bearer" for r in refusals)

        async def works() -> None:
            async with connect(url, alice) as client:
                assert "remember" in {t.name for t in (await client.list_tools()).tools}

        anyio.run(works)
        result = CliRunner().invoke(cli, ["serve", "token", "revoke", "alice"])
        assert result.exit_code == 0, result.output
        assert post(Authorization=f"Bearer {alice}").status_code == 401
        with pytest.raises(Exception):
            anyio.run(works)
    assert alice not in server.log() and "Bearer" not in server.log()


def test_hostile_requests_get_clear_errors_and_the_server_keeps_serving_another_client(repo, config):
    alice, flood = token("alice", "write"), token("flood", "read")

    async def main(url: str) -> None:
        async with connect(url, alice) as client:
            await call(client, "remember", text="Mia moved to Lisbon in May 2023", type="semantic")
            auth = {"Authorization": f"Bearer {flood}"}
            async with httpx2.AsyncClient(headers={**HEADERS, **auth}) as raw:
                bad = await raw.post(url, content=b'{"jsonrpc": "2.0", "id": 1, "method": ')
                assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700  # a parse error
                not_rpc = await raw.post(url, content=b'[1, 2, 3]')
                assert not_rpc.status_code == 400 and "error" in not_rpc.json()
                huge = await raw.post(url, content=b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
                                      b'"params": {"name": "search", "arguments": {"query": "' + b"x" * 70_000 + b'"}}}')
                assert huge.status_code == 413
                # --rate-limit 5: a burst of 10, then 429 with when to retry; alice is not slowed by it. The
                # flood asks for a path that is answered at once (404 once admitted), so a loaded machine's slow
                # replies do not spread it out below the rate.
                flood_url = url.replace("/mcp", "/no-such-path")
                responses = [await raw.get(flood_url) for _ in range(40)]
                limited = [r for r in responses if r.status_code == 429]
                assert limited and all(int(r.headers["retry-after"]) >= 1 for r in limited)
                assert {r.status_code for r in responses} <= {404, 429}
            assert "Unknown tool" in await refused(client, "no_such_tool")
            assert "is not a memrepo id" in await refused(client, "show", id="../../../etc/passwd")
            assert "pull: expected true or false" in await refused(client, "search", query="Lisbon", pull="yes")
            assert await refused(client, "search", query="Lisbon", k=10**9)  # bounds checked by the schema
            hits = await call(client, "search", query="Lisbon")
            assert hits["hits"] and "Lisbon" in hits["hits"][0]["summary"]

    with serving("--repo", str(repo.root), "--rate-limit", "5", "--max-request-bytes", "65536") as server:
        anyio.run(main, f"{server.base}/mcp")
        assert server.proc.poll() is None
    assert "token=flood POST /mcp call=- status=400" in server.log()
    assert "status=413" in server.log() and "status=429" in server.log()


def test_two_repositories_in_one_process_converge_through_their_remote_and_a_failed_push_loses_nothing(
        tmp_path, config):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    for name in ("a", "b"):
        MemoryRepo.clone(str(remote), tmp_path / name)[0].close()
        if name == "a":
            with MemoryRepo.open(tmp_path / "a") as repo:
                repo.sync()
    alice, bob = token("alice", "write", "--namespace", "a"), token("bob", "write", "--namespace", "b")

    async def write(url: str, secret: str, text: str) -> str:
        async with connect(url, secret) as client:
            return (await call(client, "remember", text=text, type="semantic"))["written"][0]

    async def find(url: str, secret: str, text: str, pull: bool) -> list[str]:
        async with connect(url, secret) as client:
            return [h["id"] for h in (await call(client, "search", query=text, pull=pull))["hits"]]

    with serving("--repo", f"a={tmp_path / 'a'}", "--repo", f"b={tmp_path / 'b'}", "--pull-interval", "0",
                 "--push-delay", "0.2") as server:
        a, b = f"{server.base}/a/mcp", f"{server.base}/b/mcp"
        assert httpx2.post(b, json={}, headers={**HEADERS, "Authorization": f"Bearer {alice}"}).status_code == 401
        first = anyio.run(write, a, alice, "Mia moved to Lisbon in May 2023")
        wait_until(lambda: first in git(remote, "log", "--format=%s", "main"))  # pushed after the write
        assert first in anyio.run(find, b, bob, "Lisbon Mia", True)  # a read that asks for a pull
        assert any(line.startswith("alice <alice@localhost>") for line in
                   git(tmp_path / "b", "log", "--format=%an <%ae>").splitlines())

        broken = tmp_path / "moved.git"
        remote.rename(broken)  # the remote is gone: writes still commit here, and say so in health
        second = anyio.run(write, a, alice, "Jonas plays the cello in an orchestra")
        wait_until(lambda: health(server.base, alice)["namespaces"][0]["sync"]["ok"] is False)
        report = health(server.base, alice)
        assert report["status"] == "degraded" and [n["namespace"] for n in report["namespaces"]] == ["a"]
        assert report["namespaces"][0]["sync"]["unpushed_writes"] >= 1 and report["namespaces"][0]["sync"]["error"]
        assert second in git(tmp_path / "a", "log", "--format=%s")

        async def pull_fails() -> str:
            async with connect(b, bob) as client:
                return await refused(client, "search", query="cello", pull=True)

        assert "the pull from the team's remote failed" in anyio.run(pull_fails)
        broken.rename(remote)  # back: the next write's push carries both
        third = anyio.run(write, a, alice, "Ana runs the Lisbon half marathon every March")
        wait_until(lambda: health(server.base, alice)["namespaces"][0]["sync"]["unpushed_writes"] == 0)
        pushed = git(remote, "log", "--format=%s", "main")
        assert second in pushed and third in pushed
        assert second in anyio.run(find, b, bob, "cello orchestra", True)
        report = health(server.base, bob)
        assert report["status"] == "ok" and report["namespaces"][0]["namespace"] == "b"
        assert report["namespaces"][0]["commit"] == git(tmp_path / "b", "rev-parse", "HEAD")
        assert report["namespaces"][0]["index_lag"] == 0 and report["namespaces"][0]["sync"]["ok"] is True
        assert server.stop() == 0
    assert git(tmp_path / "a", "rev-parse", "HEAD^{tree}") == git(remote, "rev-parse", "main^{tree}")


def test_sigterm_answers_the_write_in_flight_and_pushes_it_before_exiting(tmp_path, config):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo, _ = MemoryRepo.clone(str(remote), tmp_path / "a")
    repo.close()
    alice = token("alice", "write")
    server = Server("--repo", str(tmp_path / "a"), "--pull-interval", "0", "--push-delay", "30")
    outcome: dict[str, Any] = {}

    async def sent(request: httpx2.Request) -> None:  # SIGTERM once the remember is on its way
        if b'"remember"' in request.content:
            threading.Timer(0.2, server.proc.send_signal, [signal.SIGTERM]).start()

    async def write() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice}"}, timeout=60,
                                      event_hooks={"request": [sent]}) as http:
            async with Client(streamable_http_client(f"{server.base}/mcp", http_client=http)) as client:
                await client.list_tools()  # the client checks results against the tools' schemas: known now
                outcome["result"] = await call(client, "remember", text="Mia moved to Lisbon in May 2023",
                                               type="semantic")

    anyio.run(write)  # answered although the server was told to stop while the write ran
    assert server.proc.wait(60) == 0
    record = outcome["result"]["written"][0]
    assert record in git(remote, "log", "--format=%s", "main")  # committed, and pushed on the way out


def test_another_address_than_loopback_is_refused_without_a_token(repo, config):
    result = CliRunner().invoke(cli, ["serve", "--repo", str(repo.root), "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "refusing to listen on 0.0.0.0 with no token defined" in result.output


def test_token_add_list_revoke_keep_only_a_hash_outside_the_repository(repo, config):
    secret = token("claude-code", "write")
    assert secret.startswith("mrs_") and len(secret) > 40
    stored = (config / "tokens.json").read_text()
    assert secret not in stored and json.loads(stored)["tokens"][0]["name"] == "claude-code"
    assert (config / "tokens.json").stat().st_mode & 0o777 == 0o600
    listed = CliRunner().invoke(cli, ["serve", "token", "list", "--json"])
    assert json.loads(listed.stdout) == [{"name": "claude-code", "scope": "write", "created": json.loads(
        listed.stdout)[0]["created"], "namespaces": []}]
    again = CliRunner().invoke(cli, ["serve", "token", "add", "claude-code", "--scope", "read"])
    assert again.exit_code == 1 and "exists" in again.output
    bad = CliRunner().invoke(cli, ["serve", "token", "add", "../evil", "--scope", "read"])
    assert bad.exit_code == 1 and "token name '../evil'" in bad.output
    gone = CliRunner().invoke(cli, ["serve", "token", "revoke", "nobody"])
    assert gone.exit_code == 1 and "no token named 'nobody'" in gone.output
    assert CliRunner().invoke(cli, ["serve", "token", "revoke", "claude-code"]).exit_code == 0
    assert json.loads(CliRunner().invoke(cli, ["serve", "token", "list", "--json"]).stdout) == []
    assert not list(Path(repo.root).rglob("tokens.json"))
