"""Median time of a one-record commit in a repository of 1,000 and of 100,000 records.

Goal (issue 2): the 100,000/1,000 ratio at most 1.5, because a commit rewrites only
the trees on its path. Both sizes are measured in one run, their commits
interleaved so that noise on the machine falls on both alike. Records are spread
over eight years of mention months, as a long-lived memory would be.

    python benchmarks/commit_scaling.py [--sizes 1000,100000] [--commits 30] [--worktree]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memrepo import records as rec
from memrepo.api import MemoryRepo


def build(path: Path, size: int, bare: bool) -> MemoryRepo:
    repo = MemoryRepo.init(path, bare=bare)
    files = {}
    for i in range(size):
        month = i % 96
        mention = f"{2016 + month // 12}-{month % 12 + 1:02d}-{i % 28 + 1:02d}"
        record = rec.new_record("episodic", f"Synthetic memory {i}: Mia met Jonas in Kyoto.", mention_time=mention,
                                source="bench", position=str(i))
        files[record.path] = rec.serialize(record)
    t = time.perf_counter()
    repo.store.commit(files, f"Add {size} synthetic records", sync_worktree=False)
    if not bare:  # check the files out once, as a clone would
        import subprocess

        subprocess.run(["git", "reset", "-q", "--hard"], cwd=path, check=True)
    print(f"  built {size:>7,} records in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return repo


def one_record_commit(repo: MemoryRepo, i: int) -> float:
    record = repo.new_record("episodic", f"New memory {i}", mention_time="2023-05-02", source="new", position=str(i))
    t = time.perf_counter()
    repo.add([record])
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--worktree", action="store_true", help="also measure repositories with a work tree")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = [("bare", True)] + ([("work tree", False)] if args.worktree else [])
    with tempfile.TemporaryDirectory() as tmp:
        for kind, bare in kinds:
            repos = {size: build(Path(tmp) / f"{kind}-{size}", size, bare) for size in sizes}
            for repo in repos.values():
                one_record_commit(repo, -1)  # warm: the first commit reads the trees on its path
            times: dict[int, list[float]] = {size: [] for size in sizes}
            for i in range(args.commits):  # interleaved, so that machine noise falls on every size alike
                for size in sizes:
                    times[size].append(one_record_commit(repos[size], i))
            medians = {size: statistics.median(t) for size, t in times.items()}
            for size in sizes:
                repos[size].close()
                print(f"{kind:>9}  {size:>7,} records: median one-record commit {medians[size] * 1000:7.2f} ms")
            lo, hi = sizes[0], sizes[-1]
            print(f"{kind:>9}  ratio {hi:,}/{lo:,}: {medians[hi] / medians[lo]:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
