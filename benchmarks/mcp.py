"""Tool-call latency through `memrepo mcp` next to the same calls in-process.

    .venv/bin/python benchmarks/mcp.py [--sizes 1000,10000] [--calls 30] [--json] [--workdir DIR]

For each size a repository gets the synthetic history of benchmarks/recall_scaling.py
(episodic records with their sources and graph files, every index built). Then the
same calls are timed two ways:

- in-process: :class:`memrepo.mcp.MemoryService`, the code behind each tool, on a
  repository opened in this process;
- through the protocol: the MCP SDK's own client talking over stdio to
  `memrepo mcp --repo ROOT` started as a subprocess (the time is the client's
  `call_tool`, JSON-RPC framing, argument validation and result serialisation included).

Calls: `recall` with the history's questions (warmed up first with other questions,
so that both sides have loaded the embedder and opened the indexes); `log` of the last
commit (a call that does almost nothing: what remains is the protocol's own cost); then
`remember` of one typed semantic record per call (each a commit, whose time is mostly
the file system's: fsync and renames, noisy on a shared disk). The two sides take turns
call by call. The figures are p50 and p95 in milliseconds and the protocol's overhead
(p50 through the client minus p50 in-process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
# This file is called mcp.py: drop its folder from the path so that `import mcp` finds the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def recall_scaling() -> Any:
    """benchmarks/recall_scaling.py, whose synthetic history this benchmark reuses."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("recall_scaling", HERE / "recall_scaling.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


TOOLS = ("recall", "log", "remember")


def stats(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {"p50_ms": round(1000 * statistics.median(ordered), 1),
            "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1)}


def texts(tag: str, n: int) -> list[str]:
    """``n`` new texts: the run's time is in them, so a rerun on a kept repository still writes (not a no-op)."""
    tag = f"{tag} {time.time_ns()}"
    return [f"{tag}: Mia's neighbour number {i} keeps {i % 7 + 2} chickens in a garden on Cedar Hill" for i in range(n)]


def build(root: Path, n: int, keep: bool) -> list[str]:
    """The synthetic history in ``root`` (reused if ``keep`` and already built); its questions."""
    module = recall_scaling()
    built = module.reuse(root) if keep else None
    if built is None:
        built = module.build(root, n)
        (root / ".git" / "questions.json").write_text(json.dumps(built[1]), encoding="utf-8")
    built[0].close()
    return built[1]


def _build_child(root: str, n: int, keep: bool) -> None:
    build(Path(root), n, keep)


def compare(root: Path, questions: list[str], calls: int) -> dict[str, Any]:
    """The same calls in-process and through the client, taking turns call by call (noise falls on both)."""
    import anyio
    from mcp import Client, StdioServerParameters

    from memrepo.api import MemoryRepo
    from memrepo.mcp import MemoryService

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")])))
    params = StdioServerParameters(command=sys.executable, args=["-m", "memrepo", "mcp", "--repo", str(root)], env=env,
                                   cwd=str(root))
    service = MemoryService(MemoryRepo.open(root, environ={}))

    async def remote(client: Any, tool: str, **arguments: Any) -> float:
        t0 = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        took = time.perf_counter() - t0
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.content[0].text}")
        return took

    def local(call: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        call()
        return time.perf_counter() - t0

    async def main() -> dict[str, Any]:
        times: dict[str, dict[str, list[float]]] = {side: {t: [] for t in TOOLS} for side in ("in_process", "mcp")}
        async with Client(params) as client:
            for q in questions[calls : 2 * calls]:  # warm-up with other questions than the timed ones
                service.recall(q)
                await remote(client, "recall", question=q)
            for q in questions[:calls]:
                times["in_process"]["recall"].append(local(lambda: service.recall(q)))
                times["mcp"]["recall"].append(await remote(client, "recall", question=q))
            for _ in range(calls):
                times["in_process"]["log"].append(local(lambda: service.log(limit=1)))
                times["mcp"]["log"].append(await remote(client, "log", limit=1))
            for mine, theirs in zip(texts("in-process", calls), texts("through MCP", calls)):
                times["in_process"]["remember"].append(local(lambda: service.remember(mine, type="semantic")))
                times["mcp"]["remember"].append(await remote(client, "remember", text=theirs, type="semantic"))
        return {side: {tool: stats(v) for tool, v in tools.items()} for side, tools in times.items()}

    try:
        return anyio.run(main)
    finally:
        service.repo.close()


def measure(root: Path, n: int, calls: int, keep: bool) -> dict[str, Any]:
    import multiprocessing

    t0 = time.perf_counter()
    # Built in a child process, so that the measuring process does not carry the build's heap.
    child = multiprocessing.get_context("spawn").Process(target=_build_child, args=(str(root), n, keep))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"building the {n}-record repository failed")
    build_s = time.perf_counter() - t0
    questions = json.loads((root / ".git" / "questions.json").read_text(encoding="utf-8"))
    figures = compare(root, questions, calls)
    local, remote = figures["in_process"], figures["mcp"]
    return {
        "records": n, "calls": calls, "build_seconds": round(build_s, 1), **figures,
        "overhead_p50_ms": {tool: round(remote[tool]["p50_ms"] - local[tool]["p50_ms"], 1) for tool in local},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts")
    parser.add_argument("--calls", type=int, default=30, help="calls timed per tool and size (as many recalls warm up)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--workdir", type=Path, help="keep the built repositories here and reuse them on later runs")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        base = args.workdir or Path(tmp)
        results = []
        for n in sizes:
            print(f"{n} records: building and timing...", file=sys.stderr, flush=True)
            results.append(measure(base / f"mcp-{n}", n, args.calls, args.workdir is not None))
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return
    print(f"{'records':>8} {'tool':<9} {'in-process p50/p95 ms':>22} {'through MCP p50/p95 ms':>23} {'overhead p50':>13}")
    for r in results:
        for tool in TOOLS:
            a, b = r["in_process"][tool], r["mcp"][tool]
            print(f"{r['records']:>8} {tool:<9} {a['p50_ms']:>10.1f} / {a['p95_ms']:<9.1f} {b['p50_ms']:>11.1f} / "
                  f"{b['p95_ms']:<9.1f} {r['overhead_p50_ms'][tool]:>10.1f} ms")


if __name__ == "__main__":
    main()
