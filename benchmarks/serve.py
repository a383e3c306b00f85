"""`memrepo serve` under load: concurrent MCP clients over HTTP, and two servers converging through one remote.

    .venv/bin/python benchmarks/serve.py [--records 10000] [--seconds 60] [--clients 16] [--json] [--workdir DIR]

Part 1, one server: a clone of a bare remote holding ``--records`` semantic records (indexes built
before the server starts) is served by ``memrepo serve`` as a subprocess. ``--clients`` clients, each
the MCP SDK's own streamable HTTP client with a token of its own, call tools for ``--seconds``:
40% ``remember`` (a new sentence each time), 30% ``recall``, 30% ``search``. Printed: requests and
errors (tool errors and failed requests), p50/p95 per tool in milliseconds, and records written (the
ids the remember calls returned) against records present after (in the served clone and, once the
server has stopped and pushed, in the remote).

Part 2, two servers: two clones of one (small) bare remote, each served by its own process; half the
clients write to one, half to the other, for a third of ``--seconds``. Then each server is asked to
pull (a read with ``pull: true``) in turn until neither brings anything new, both are stopped (SIGTERM
pushes what is left), and the record ids of both clones and the remote are compared with every id
written.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
# benchmarks/mcp.py sits next to this file: drop this folder from the path so that `import mcp` finds the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
WORDS = ["garden", "violin", "ferry", "pottery", "library", "marathon", "orchid", "kayak", "sourdough", "chess",
         "lighthouse", "tram", "glacier", "harbour", "quilt", "compass"]
NAMES = ["Mia", "Jonas", "Ana", "Kofi", "Lena", "Ravi", "Sofia", "Tariq"]
QUESTIONS = ["What does Mia keep in the shed?", "Who plays the violin?", "Where did Jonas take the ferry?",
             "What did Ana bake?", "Who owns a kayak?", "What happened at the harbour?"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def record_ids(root: Path, rev: str = "HEAD") -> set[str]:
    """The ids of the semantic records in ``rev`` (by file name: the layout is one file per record)."""
    names = git(root, "ls-tree", "-r", "--name-only", rev, "--", "semantic").splitlines()
    return {Path(n).stem for n in names if n.endswith(".md")}


def env(config: Path) -> dict[str, str]:
    out = dict(os.environ, XDG_CONFIG_HOME=str(config))
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT), out.get("PYTHONPATH", "")) if p)
    out.setdefault("GIT_AUTHOR_NAME", "bench")
    out.setdefault("GIT_AUTHOR_EMAIL", "bench@localhost")
    out.setdefault("GIT_COMMITTER_NAME", "bench")
    out.setdefault("GIT_COMMITTER_EMAIL", "bench@localhost")
    return out


def memrepo(config: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "memrepo", *args], env=env(config), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"memrepo {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def clone_of(remote: Path, root: Path, config: Path, records: int = 0, seed: int = 0) -> Path:
    """A clone of ``remote`` (the first one publishes the layout and ``records`` records), indexes built."""
    from memrepo.api import MemoryRepo

    memrepo(config, "clone", str(remote), str(root))
    with MemoryRepo.open(root) as repo:
        if records:
            rng = random.Random(seed)
            batch = [repo.new_record("semantic", f"{rng.choice(NAMES)} keeps a {rng.choice(WORDS)} number {i} in "
                                                 f"the {rng.choice(WORDS)} shed",
                                     mention_time=f"2024-03-{1 + i % 28:02d}T10:00:00Z") for i in range(records)]
            repo.add(batch)  # with its graph files, as remember writes them (else the first write extracts them all)
        repo.index_graph()
        repo.reindex()
        repo.sync()
    return root


class Server:
    """A `memrepo serve --port 0` process; its base URL from the ready message."""

    def __init__(self, root: Path, config: Path, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "memrepo", "serve", "--repo", str(root), "--port", "0",
                                      *args], env=env(config), stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line.rstrip("\n"))
                if " at http://" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120) or self.proc.poll() is not None:
            raise SystemExit("memrepo serve did not start:\n" + "\n".join(self.lines))
        found = next(re.search(r"at (http://\S+/mcp)", line) for line in self.lines if " at http://" in line)
        assert found is not None
        self.url = found.group(1)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(300)


async def client_loop(url: str, secret: str, number: int, until: float, mix: dict[str, float],
                      out: dict[str, Any]) -> None:
    """One client: tool calls drawn from ``mix`` until ``until``; latencies, errors and written ids into ``out``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(number)
    tools, weights = list(mix), list(mix.values())
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=300) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            await client.list_tools()
            i = 0
            while time.monotonic() < until:
                tool = rng.choices(tools, weights)[0]
                if tool == "remember":
                    args: dict[str, Any] = {"type": "semantic", "text": f"{rng.choice(NAMES)} of client {number} "
                                            f"noted {rng.choice(WORDS)} item {i} near the {rng.choice(WORDS)}"}
                elif tool == "recall":
                    args = {"question": rng.choice(QUESTIONS)}
                else:
                    args = {"query": f"{rng.choice(WORDS)} {rng.choice(NAMES)}"}
                i += 1
                started = time.perf_counter()
                try:
                    result = await client.call_tool(tool, args)
                except Exception as exc:  # a failed request counts as an error, the client goes on
                    out["errors"].append(f"{tool}: {type(exc).__name__}: {exc}"[:300])
                    continue
                out["latency"].setdefault(tool, []).append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    out["errors"].append(f"{tool}: {result.content[0].text}"[:300])
                elif tool == "remember":
                    out["written"].update(result.structured_content["written"])


def run_clients(urls: list[str], secrets: list[str], seconds: float, mix: dict[str, float]) -> dict[str, Any]:
    import anyio

    out: dict[str, Any] = {"latency": {}, "errors": [], "written": set()}

    async def main() -> None:
        until = time.monotonic() + seconds
        async with anyio.create_task_group() as group:
            for n, secret in enumerate(secrets):
                group.start_soon(client_loop, urls[n % len(urls)], secret, n, until, mix, out)

    anyio.run(main)
    return out


async def pull(url: str, secret: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=300) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("search", {"query": "settle", "pull": True})
            if result.is_error:
                raise SystemExit(f"the pull failed: {result.content[0].text}")


def percentiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return {"calls": len(values), "p50_ms": round(statistics.median(values), 1), "p95_ms": round(p95, 1)}


def one_server(work: Path, config: Path, records: int, seconds: float, clients: int) -> dict[str, Any]:
    remote = work / "one.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    started = time.perf_counter()
    root = clone_of(remote, work / "one", config, records)
    built = time.perf_counter() - started
    before = record_ids(root)
    secrets = [memrepo(config, "serve", "token", "add", f"client-{n:02d}", "--scope", "write") for n in range(clients)]
    server = Server(root, config, "--pull-interval", "5")
    try:
        out = run_clients([server.url], secrets, seconds, {"remember": 0.4, "recall": 0.3, "search": 0.3})
    finally:
        status = server.stop()
    present = record_ids(root) - before
    in_remote = record_ids(remote, "main") - before
    calls = sum(len(v) for v in out["latency"].values())
    return {"records": len(before), "build_seconds": round(built, 1), "seconds": seconds, "clients": clients,
            "requests": calls + len(out["errors"]), "errors": len(out["errors"]),
            "error_samples": out["errors"][:5], "tools": {t: percentiles(v) for t, v in sorted(out["latency"].items())},
            "written": len(out["written"]), "present": len(present & out["written"]),
            "present_in_remote": len(in_remote & out["written"]), "extra": len(present - out["written"]),
            "server_exit": status, "requests_per_second": round(calls / seconds, 1)}


def two_servers(work: Path, config: Path, seconds: float, clients: int) -> dict[str, Any]:
    import anyio

    remote = work / "two.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = clone_of(remote, work / "a", config, records=200, seed=1)
    b = clone_of(remote, work / "b", config)
    base = record_ids(a)
    secrets = [memrepo(config, "serve", "token", "add", f"two-{n:02d}", "--scope", "write") for n in range(clients)]
    servers = [Server(a, config, "--pull-interval", "2"), Server(b, config, "--pull-interval", "2")]
    try:
        out = run_clients([s.url for s in servers], secrets, seconds, {"remember": 1.0})
        started = time.perf_counter()
        for _ in range(3):  # A pulls B's, B pulls A's (and its merge), A pulls that merge: nothing new after
            for server in servers:
                anyio.run(pull, server.url, secrets[0])
        settle = time.perf_counter() - started
    finally:
        statuses = [s.stop() for s in servers]
    wanted = base | out["written"]
    return {"seconds": seconds, "clients": clients, "written": len(out["written"]), "errors": len(out["errors"]),
            "error_samples": out["errors"][:5], "missing_in_a": len(wanted - record_ids(a)),
            "missing_in_b": len(wanted - record_ids(b)), "missing_in_remote": len(wanted - record_ids(remote, "main")),
            "same_tree": git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")
            == git(remote, "rev-parse", "main^{tree}"), "settle_seconds": round(settle, 1), "server_exits": statuses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--workdir", type=Path, help="Keep the repositories here (default: a temporary folder).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memrepo-serve-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        config = work / "config"
        one = one_server(work, config, args.records, args.seconds, args.clients)
        two = two_servers(work, config, max(5.0, args.seconds / 3), args.clients)
    report = {"one_server": one, "two_servers": two}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"one server: {one['records']} records (built in {one['build_seconds']} s), {one['clients']} clients, "
          f"{one['seconds']:g} s")
    print(f"  requests {one['requests']} ({one['requests_per_second']}/s), errors {one['errors']}")
    for tool, figures in one["tools"].items():
        print(f"  {tool:9} {figures['calls']:6} calls  p50 {figures['p50_ms']:8.1f} ms  p95 {figures['p95_ms']:8.1f} ms")
    print(f"  records written {one['written']}, present {one['present']} (in the remote {one['present_in_remote']}), "
          f"unexpected {one['extra']}; server exit {one['server_exit']}")
    for sample in one["error_samples"]:
        print(f"  error: {sample}")
    print(f"two servers on one remote: {two['clients']} clients, {two['seconds']:g} s of writes, "
          f"settled in {two['settle_seconds']} s")
    print(f"  written {two['written']}, errors {two['errors']}; missing in A {two['missing_in_a']}, in B "
          f"{two['missing_in_b']}, in the remote {two['missing_in_remote']}; same tree {two['same_tree']}; "
          f"server exits {two['server_exits']}")
    for sample in two["error_samples"]:
        print(f"  error: {sample}")
    failed = one["errors"] or two["errors"] or one["written"] != one["present"] or not two["same_tree"] \
        or two["missing_in_a"] or two["missing_in_b"]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
