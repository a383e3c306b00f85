"""How the derived indexes scale (issue 5): one-record update vs full rebuild, search latency.

For each size it builds a bare memory repository of N synthetic records, then prints:

- cold build: every index from nothing, every text embedded (empty embedding cache);
- full rebuild: `reindex --full` (indexes thrown away, embeddings read from the cache);
- one-record update: the time to bring all indexes up to date after a commit adding
  one record (median of --updates commits), and its ratio to both builds (goal < 1%);
- search latency p50/p95 over a fixed set of queries (each a full `repo.search`:
  find the published generations, embed the query, BM25 + vectors, fuse), the
  sizes interleaved query by query so that all see the same machine load; and the
  ratio of the largest size's p50/p95 to the smallest's (goal <= 1.5).

Usage:
    python benchmarks/index_scaling.py                       # 10,000 and 100,000 records
    python benchmarks/index_scaling.py --sizes 1000,10000    # quicker
    python benchmarks/index_scaling.py --keep /tmp/bench     # keep the repositories
    python benchmarks/index_scaling.py --keep /tmp/bench --reuse   # measure again without rebuilding them

Building 100,000 records embeds 100,000 texts once (about 4-10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.index import update_indexes

PEOPLE = ["Mia", "Jonas", "Aiko", "Luis", "Priya", "Tomas", "Sara", "Kenji", "Ana", "Omar", "Lea", "Ravi"]
VERBS = ["bought", "sold", "lost", "found", "repaired", "borrowed", "painted", "photographed", "ordered", "returned"]
THINGS = ["a blue bicycle", "a Suica card", "a tent", "a camera", "a guitar", "a kettle", "a map of Kyoto",
          "running shoes", "a sourdough starter", "a laptop", "a kayak", "a wool coat", "a chess set", "a drone"]
PLACES = ["Tokyo Station", "Lisbon", "the market", "Porto", "the office", "Kyoto", "a flea market", "the harbour",
          "the library", "Osaka", "the garden centre", "Berlin"]
EXTRAS = ["It was raining.", "It cost {n} euros.", "They paid {n} yen.", "A friend came along.",
          "It took {n} minutes.", "The shop closed at {n}.", "Nobody else was there.", ""]
QUERIES = [
    "Suica card", "where did Mia buy a bicycle", "kayak in Porto", "camera photographed Kyoto", "who lost a tent",
    "guitar repaired", "sourdough", "wool coat Berlin", "chess set at the library", "drone", "raining at the harbour",
    "Jonas bought running shoes", "laptop ordered", "kettle returned", "map of Kyoto", "Priya painted",
    "how much did it cost", "flea market finds", "Aiko borrowed", "garden centre Osaka",
]


def make_records(n: int, seed: int = 7, offset: int = 0) -> list[rec.Record]:
    rnd = random.Random(seed + offset)
    out = []
    for i in range(offset, offset + n):
        who, verb, thing, place = rnd.choice(PEOPLE), rnd.choice(VERBS), rnd.choice(THINGS), rnd.choice(PLACES)
        extra = rnd.choice(EXTRAS).format(n=rnd.randint(2, 900))
        day = f"20{20 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}"
        text = f"{who} {verb} {thing} at {place} (note {i}). {extra}".strip()
        out.append(rec.new_record("episodic" if i % 3 else "semantic", text, mention_time=day, source="bench",
                                  position=str(i), status=None))
    return out


def build_repo(path: Path, n: int) -> MemoryRepo:
    repo = MemoryRepo.init(path, bare=True)
    batch = 10_000
    for start in range(0, n, batch):
        repo.add(make_records(min(batch, n - start), offset=start), message=f"bench records {start}..")
    return repo


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(path: Path, n: int, updates: int, rounds: int, reuse: bool = False) -> dict:
    if reuse and path.exists():
        repo = MemoryRepo.open(path)
        cold_s = float("nan")
        print(f"[{n:,}] reusing {path} (its embedding cache is warm: no cold build)", file=sys.stderr)
    else:
        shutil.rmtree(path, ignore_errors=True)
        t = time.perf_counter()
        repo = build_repo(path, n)
        print(f"[{n:,}] repository written in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        t = time.perf_counter()
        cold = update_indexes(repo.ctx)
        cold_s = time.perf_counter() - t
        print(f"[{n:,}] cold build {cold_s:.1f} s ({cold.embedded:,} texts embedded)", file=sys.stderr)

    t = time.perf_counter()
    full = update_indexes(repo.ctx, full=True)
    full_s = time.perf_counter() - t
    print(f"[{n:,}] full rebuild {full_s:.1f} s ({full.embedded} embedded, {full.cached:,} from cache)", file=sys.stderr)

    times = []
    for i in range(updates):
        repo.add([make_records(1, offset=10_000_000 + time.time_ns() % 10**12 + i)[0]])  # new text each run
        t = time.perf_counter()
        report = update_indexes(repo.ctx)
        times.append(time.perf_counter() - t)
        assert report.actions["fulltext"] == "updated 1", report.actions
    update_s = statistics.median(times)
    print(f"[{n:,}] one-record updates: {', '.join(f'{x:.3f}' for x in times)} s", file=sys.stderr)

    repo.close()
    return {"n": n, "path": path, "cold_s": cold_s, "full_s": full_s, "update_s": update_s}


def measure_search(rows: list[dict], rounds: int) -> None:
    """Search latency of every size, interleaved query by query so that all sizes see the same machine load."""
    repos = [MemoryRepo.open(r["path"]) for r in rows]
    latencies: list[list[float]] = [[] for _ in rows]
    for repo in repos:
        repo.search("warm up")
    for _ in range(rounds):
        for q in QUERIES:
            for repo, out in zip(repos, latencies):
                t = time.perf_counter()
                hits = repo.search(q, k=10)
                out.append(time.perf_counter() - t)
                assert hits, q
    for repo, row, xs in zip(repos, rows, latencies):
        repo.close()
        row["p50_ms"] = percentile(xs, 0.5) * 1000
        row["p95_ms"] = percentile(xs, 0.95) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated record counts (default: 10000,100000)")
    parser.add_argument("--updates", type=int, default=5, help="one-record commits measured per size (median)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the query set per size")
    parser.add_argument("--keep", help="build the repositories under this folder and keep them")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: reuse repositories built by an earlier run (no cold build)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memrepo-bench-"))
    rows = []
    try:
        for n in sizes:
            rows.append(measure(base / f"repo-{n}", n, args.updates, args.rounds, reuse=args.reuse and bool(args.keep)))
        measure_search(rows, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{'records':>9} {'cold build s':>12} {'full rebuild s':>14} {'1-record update s':>17} "
          f"{'update/full':>11} {'update/cold':>11} {'search p50 ms':>13} {'p95 ms':>8}")
    for r in rows:
        print(f"{r['n']:>9,} {r['cold_s']:>12.1f} {r['full_s']:>14.1f} {r['update_s']:>17.3f} "
              f"{100 * r['update_s'] / r['full_s']:>10.2f}% {100 * r['update_s'] / r['cold_s']:>10.2f}% "
              f"{r['p50_ms']:>13.1f} {r['p95_ms']:>8.1f}")
    if len(rows) > 1:
        small, large = rows[0], rows[-1]
        print(f"search latency ratio {large['n']:,} / {small['n']:,} records: "
              f"p50 {large['p50_ms'] / small['p50_ms']:.2f}, p95 {large['p95_ms'] / small['p95_ms']:.2f} (goal <= 1.5)")
    print("goal: one-record update under 1% of the full rebuild at the largest size")


if __name__ == "__main__":
    main()
