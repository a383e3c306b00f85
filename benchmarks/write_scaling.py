"""Cost of one `remember` as the history grows (issue 18): the write and everything after it, per size.

    .venv/bin/python benchmarks/write_scaling.py [--sizes 1000,10000,100000] [--writes 15] [--cli 3] [--json]
                                                 [--workdir DIR]

Each size gets the synthetic history of benchmarks/recall_scaling.py (sources,
episodic records and their graph files, every derived index built; reused from
--workdir when an earlier run left it there). Then, in one long-lived process,
one `remember` is timed per size in turn (so that the machine's noise falls on
all sizes alike): the record commit, the graph step (extraction and its commit)
and every registered index brought up to date. The first write per size is a
warm-up (it loads the embedder and opens the files). Also timed: the same
`remember` from the CLI (a fresh process each time; its index catch-up runs
detached, so this is what the user waits for), and the index files' size on disk
per 1,000 records.

Goal: p50 at 100,000 records <= 100 ms, and 100,000 / 1,000 <= 1.5.

With ``--catchup 1000,10000``: a copy of the smallest repository receives N new
records in one commit (as a pull of a teammate's work brings them), then each
derived index is brought up to date on its own, and the graph step extracts the
new records' graph files (``--graph-max``: at most this many, it is the slow
part); printed as seconds per 1,000 records per stage.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scaling import build  # noqa: E402  (the same synthetic history)

ROOT = Path(__file__).resolve().parents[1]


def open_or_build(path: Path, n: int) -> Any:
    from memrepo.api import MemoryRepo

    if (path / ".git" / "questions.json").exists():
        repo = MemoryRepo.open(path, environ={})
        repo.reindex()  # a no-op unless an index format changed since
        return repo
    repo, questions = build(path, n)
    (path / ".git" / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    return repo


RUN = f"{time.time_ns() % 10**9:x}"  # new texts on every run: a text already remembered is not written again


def one_write(repo: Any, i: int, parts: dict[str, list[float]] | None = None) -> float:
    """Seconds for one `remember` and every index brought up to date; ``parts`` gets the two halves."""
    from memrepo.index import update_indexes

    t0 = time.perf_counter()
    repo.remember(f"Okada repaired the brass telescope number {i} ({RUN}) at Cedar Harbor.", type="episodic",
                  mention_time="2024-02-03")
    t1 = time.perf_counter()
    update_indexes(repo.ctx)
    t2 = time.perf_counter()
    if parts is not None:
        parts.setdefault("commits", []).append(t1 - t0)  # the record commit and the graph step (its commit too)
        parts.setdefault("indexes", []).append(t2 - t1)
    return t2 - t0


def cli_write(path: Path, i: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(path), "remember",
                    f"Yuki painted the paper kite number {i} ({RUN}) at Moon Garden.", "--type", "episodic",
                    "--mention-time", "2024-02-04"], check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def catchup(src: Path, n: int, graph_max: int) -> dict[str, float]:
    """Seconds per 1,000 records for each index and for the graph step after ``n`` new records arrive."""
    import shutil

    from index_scaling import make_records

    from memrepo import records as rec
    from memrepo.api import MemoryRepo
    from memrepo.graph.build import index_graph
    from memrepo.index.base import Indexes, registered

    dst = src.parent / f"{src.name}-catchup-{n}"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    repo = MemoryRepo.open(dst, environ={})
    records = make_records(n, seed=11, offset=500_000)
    repo.store.commit({r.path: rec.serialize(r) for r in records}, f"pulled: {n} records")
    out: dict[str, float] = {}
    indexes = Indexes(repo.store, repo.settings)
    try:
        for name in registered():
            t0 = time.perf_counter()
            indexes.update(names=[name])
            out[name] = round((time.perf_counter() - t0) * 1000 / n, 3)
    finally:
        indexes.close()
    if graph_max:
        only = [r.id for r in records if r.type in ("episodic", "semantic")][:graph_max]
        t0 = time.perf_counter()
        result = index_graph(repo.ctx, only=only, full=False)
        out["graph step (extraction + commit)"] = round((time.perf_counter() - t0) * 1000 / max(len(result.indexed), 1), 3)
        indexes = Indexes(repo.store, repo.settings)
        try:
            for name in ("graph", "anchornames"):
                t0 = time.perf_counter()
                indexes.update(names=[name])
                out[f"{name} (after the graph step)"] = round((time.perf_counter() - t0) * 1000 / max(len(result.indexed), 1), 3)
        finally:
            indexes.close()
    repo.close()
    shutil.rmtree(dst, ignore_errors=True)
    return out


def disk_bytes(path: Path) -> int:
    """Bytes of the published generation of every index (older generations and --at copies left out)."""
    from memrepo.index.base import read_state

    total = 0
    for root in (path / ".git" / "memrepo" / "indexes").iterdir():
        state = read_state(root)
        if state is not None:
            total += sum(p.stat().st_size for p in (root / state.generation).rglob("*") if p.is_file())
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated record counts")
    parser.add_argument("--writes", type=int, default=15, help="writes timed per size (after one warm-up)")
    parser.add_argument("--cli", type=int, default=3, help="CLI writes timed per size (0: none)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--workdir", type=Path, help="keep the built repositories here and reuse them on later runs")
    parser.add_argument("--catchup", default="", help="comma-separated counts of pulled records to catch up on")
    parser.add_argument("--graph-max", type=int, default=300, help="records the timed graph step extracts (0: skip)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    out: dict[str, Any] = {"sizes": {}}
    with tempfile.TemporaryDirectory(prefix="memrepo-write-scaling-") as tmp:
        base = args.workdir or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        repos = {}
        for n in sizes:
            t0 = time.perf_counter()
            repos[n] = open_or_build(base / f"n{n}", n)
            os.sync()
            if not args.json:
                print(f"{n:>7} records ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        for n, repo in repos.items():
            one_write(repo, -1)  # warm-up: the embedder, the index files
        timed: dict[int, list[float]] = {n: [] for n in sizes}
        parts: dict[int, dict[str, list[float]]] = {n: {} for n in sizes}
        for i in range(args.writes):
            for n, repo in repos.items():
                timed[n].append(one_write(repo, i, parts[n]))
        cli: dict[int, list[float]] = {n: [] for n in sizes}
        for i in range(args.cli):
            for n in sizes:
                cli[n].append(cli_write(base / f"n{n}", i))
        for n, repo in repos.items():
            repo.close()
        for count in [int(c) for c in args.catchup.split(",") if c.strip()]:
            figures = catchup(base / f"n{sizes[0]}", count, args.graph_max)
            out.setdefault("catchup_s_per_1000", {})[str(count)] = figures
            if not args.json:
                print(f"catch-up of {count} pulled records, s per 1,000: "
                      + ", ".join(f"{k} {v}" for k, v in figures.items()), flush=True)
        for n in sizes:
            size = disk_bytes(base / f"n{n}")
            figures: dict[str, Any] = {
                "p50_ms": round(1000 * statistics.median(timed[n]), 1),
                "p95_ms": round(1000 * percentile(timed[n], 0.95), 1),
                "writes": len(timed[n]),
                "commits_p50_ms": round(1000 * statistics.median(parts[n]["commits"]), 1),
                "indexes_p50_ms": round(1000 * statistics.median(parts[n]["indexes"]), 1),
                "index_bytes_per_1000_records": round(size * 1000 / n),
            }
            if cli[n]:
                figures["cli_p50_ms"] = round(1000 * statistics.median(cli[n]), 1)
            out["sizes"][str(n)] = figures
            if not args.json:
                print(f"{n:>7} records: remember p50 {figures['p50_ms']:>7} ms  p95 {figures['p95_ms']:>7} ms  "
                      f"(commits {figures['commits_p50_ms']} ms, indexes {figures['indexes_p50_ms']} ms)  "
                      f"CLI p50 {figures.get('cli_p50_ms')} ms  indexes {size / 1e6:,.1f} MB "
                      f"({figures['index_bytes_per_1000_records'] / 1e6:.2f} MB per 1,000 records)", flush=True)
    first, last = out["sizes"][str(sizes[0])], out["sizes"][str(sizes[-1])]
    out["p50_ratio"] = round(last["p50_ms"] / first["p50_ms"], 2) if first["p50_ms"] else None
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(f"p50 ratio {sizes[-1]}/{sizes[0]}: {out['p50_ratio']} (goal: at most 1.5; p50 at 100,000 <= 100 ms)")


if __name__ == "__main__":
    main()
