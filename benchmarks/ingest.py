"""Offline ingestion speed: turns per second on the LoCoMo development conversations.

    .venv/bin/python benchmarks/ingest.py [--data ../shared/data/locomo/locomo-dev.json] [--keep DIR] [--with-graph]
                                          [--same-as DIR] [--against CHECKOUT [--rounds N]]

Ingests the file into a fresh memory repository with the offline backend (no
model), one commit per session, and prints turns/s with the counts behind it.
Run twice on the same repository to see the cost of a no-op re-ingest. With
``--with-graph`` it also times the first graph read after the ingest, which brings
the graph index up to date with every graph file the ingest wrote (in one transaction).
``--same-as DIR`` checks that the repository has the same tree at every commit
as one an earlier run kept (``--keep``), e.g. with an older checkout: a faster
ingest must write the same repository.

``--against CHECKOUT`` compares this checkout with another (e.g. a ``git worktree`` of an older commit) on a
loaded machine: it runs the other checkout's benchmark and this one alternately, ``--rounds`` times each, each
in its own process, and prints the median turns/s, roles seconds and CPU seconds of each side (CPU time varies
less than wall time when other work shares the cores).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-shaped JSON file")
    parser.add_argument("--keep", type=Path, help="keep the memory repository here instead of a temporary folder")
    parser.add_argument("--with-graph", action="store_true",
                        help="also run the after-commit steps (graph indexing) of memrepo.capabilities.AFTER_COMMIT")
    parser.add_argument("--same-as", type=Path,
                        help="a repository an earlier run kept: check that this run wrote the same trees, commit by commit")
    parser.add_argument("--against", type=Path,
                        help="another checkout to compare with: both run alternately, each in its own process")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side with --against (default 3)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the shared data folder is not in this checkout)")
        return 0
    if args.against:
        return compare(args.against.resolve(), args.data.resolve(), args.rounds)

    from memrepo.api import MemoryRepo
    from memrepo.write.ingest import parse_all

    workdir = Path(tempfile.mkdtemp(prefix="memrepo-bench-"))
    target = args.keep or workdir / "memory"
    try:
        repo = MemoryRepo.init(target)
        if not args.with_graph:  # the write path alone: records and sources committed
            repo.ctx = repo.ctx.with_capabilities(after_commit={})
        start = time.perf_counter()
        parsed = parse_all([args.data], namespace=repo.settings.namespace)
        parse_s = time.perf_counter() - start
        turns = sum(p.parts for p in parsed)

        start = time.perf_counter()
        result = repo.ingest([args.data])
        first_s = time.perf_counter() - start

        caught_s = None
        if args.with_graph:  # the ingest leaves the graph index to catch up on its next read: time that read
            from memrepo.graph.reader import open_reader

            start = time.perf_counter()
            open_reader(repo.store, repo.settings).close()
            caught_s = time.perf_counter() - start

        start = time.perf_counter()
        again = repo.ingest([args.data])
        second_s = time.perf_counter() - start
        repo.close()

        records = sum(result.records.values())
        steps = "with after-ingest steps (graph)" if args.with_graph else "write path only (no graph step)"
        print(f"data: {args.data.name}: {len(parsed[0].sources)} sessions, {turns} turns; {steps}")
        print(f"parse only: {parse_s:.2f} s ({turns / parse_s:,.0f} turns/s)")
        print(f"offline ingest: {first_s:.2f} s, {turns / first_s:,.0f} turns/s, "
              f"{records} records ({', '.join(f'{n} {t}' for t, n in sorted(result.records.items()))}), "
              f"{len(result.commits)} commits, {records / first_s:,.0f} records/s")
        print(f"model roles: {result.model['total']['offline_calls']} offline calls, "
              f"{result.model['total']['seconds']:.2f} s inside the roles")
        if caught_s is not None:
            print(f"graph index caught up by the first read after it: {caught_s:.2f} s "
                  f"(ingest + catch-up: {turns / (first_s + caught_s):,.0f} turns/s)")
        print(f"re-ingest (no-op): {second_s:.2f} s, {len(again.commits)} commits, "
              f"{len(again.sources_unchanged)} sources already present")
        if args.same_as:
            ours, theirs = _trees(target), _trees(args.same_as)
            same = ours == theirs
            print(f"same repository as {args.same_as}: {'yes' if same else 'NO'} "
                  f"({len(ours)} commits here, {len(theirs)} there, tree compared at each)")
            if not same:
                return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


_INGEST_RE = re.compile(r"offline ingest: ([\d.]+) s, ([\d,]+) turns/s, (\d+) records")
_ROLES_RE = re.compile(r"([\d.]+) s inside the roles")


def _run(checkout: Path, data: Path) -> dict[str, float]:
    """One run of ``checkout``'s own benchmark in a new process: its figures and the CPU seconds it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, str(checkout / "benchmarks" / "ingest.py"), "--data", str(data)],
                         cwd=checkout, env=env, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ingest, roles = _INGEST_RE.search(out), _ROLES_RE.search(out)
    if not ingest or not roles:
        raise SystemExit(f"{checkout}: no figures in its output:\n{out}")
    return {"turns/s": float(ingest.group(2).replace(",", "")), "records": float(ingest.group(3)),
            "roles s": float(roles.group(1)),
            "cpu s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


def compare(other: Path, data: Path, rounds: int) -> int:
    """Alternate runs of ``other`` and this checkout; print each run and the medians of both."""
    sides = {str(other): other, str(ROOT): ROOT}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    for n in range(1, rounds + 1):
        for name, checkout in sides.items():
            figures = _run(checkout, data)
            runs[name].append(figures)
            print(f"round {n} {name}: " + ", ".join(f"{v:,.2f} {k}" for k, v in figures.items()), flush=True)
    for name, figures in runs.items():
        medians = {key: statistics.median(f[key] for f in figures) for key in figures[0]}
        print(f"median of {rounds} {name}: " + ", ".join(f"{v:,.2f} {k}" for k, v in medians.items()))
    return 0


def _trees(path: Path) -> list[str]:
    """The tree id of every commit on HEAD, oldest first (commit ids differ: they hold the time of the run)."""
    out = subprocess.run(["git", "-C", str(path), "log", "--reverse", "--format=%T"], check=True,
                         capture_output=True, text=True)
    return out.stdout.split()


if __name__ == "__main__":
    sys.exit(main())
