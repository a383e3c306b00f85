"""Catch-up after pulling a teammate's records (issue 16): how long `git pull` blocks, and what
`memrepo sync` then spends, split into fetch+merge and each derived index.

A teammate's clone writes N new semantic records (with their graph files, as the write path
makes them) and syncs; a second clone whose indexes were current then

1. runs a plain `git pull` with memrepo's hooks installed (they start the index catch-up
   detached, so the pull returns at once), timed; the background catch-up is then waited for
   and thrown away;
2. is reset to before the pull and runs `memrepo sync`'s steps: fetch+merge, then each index
   brought up to the merged commit, one at a time, each timed.

    python benchmarks/sync.py [--records 1000 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memrepo.api import MemoryRepo

WORDS = ["garden", "violin", "ferry", "pottery", "library", "marathon", "orchid", "kayak", "sourdough", "chess"]


def git(root: Path, *args: str) -> float:
    t = time.perf_counter()
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return time.perf_counter() - t


def teammate_writes(root: Path, n: int) -> None:
    with MemoryRepo.open(root) as repo:
        for start in range(0, n, 500):
            records = [repo.new_record("semantic", f"Teammate fact {i}: Mia keeps a {WORDS[i % 10]} note number {i}",
                                       mention_time=f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z")
                       for i in range(start, min(n, start + 500))]
            repo.add(records)


def wait_idle(root: Path, timeout: float = 1800) -> None:
    """Until the detached hook catch-up has finished (its lock is free)."""
    import fcntl

    lock = root / ".git" / "memrepo" / "hook-running.lock"
    t = time.time()
    while time.time() - t < timeout:
        time.sleep(0.5)
        if not lock.exists():
            if time.time() - t > 20:
                return  # the hook never started (or failed at once): nothing to wait for
            continue
        with open(lock, "a+") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(f, fcntl.LOCK_UN)
                return
            except BlockingIOError:
                continue


def measure(n: int, tmp: Path) -> dict:
    from memrepo.index.base import registered, update_indexes
    from memrepo.team.sync import sync

    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a, _ = MemoryRepo.clone(str(remote), tmp / "a")
    a.sync()
    a.close()
    b, _ = MemoryRepo.clone(str(remote), tmp / "b")
    b.reindex()
    names = registered()
    b.close()
    t = time.perf_counter()
    teammate_writes(tmp / "a", n)
    write_s = time.perf_counter() - t
    with MemoryRepo.open(tmp / "a") as repo:
        repo.sync()
    before = subprocess.run(["git", "-C", str(tmp / "b"), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()

    pull_s = git(tmp / "b", "pull", "-q", "origin", "main")  # with the hooks: detached catch-up
    wait_idle(tmp / "b")
    git(tmp / "b", "reset", "-q", "--hard", before)
    with MemoryRepo.open(tmp / "b") as repo:
        repo.reindex()  # back to current at the old commit
        t = time.perf_counter()
        sync(repo.root)
        merge_s = time.perf_counter() - t
        split = {}
        for name in names:
            t = time.perf_counter()
            update_indexes(repo.ctx, names=[name])
            split[name] = round(time.perf_counter() - t, 2)
    return {"records": n, "teammate_write_s": round(write_s, 1), "git_pull_with_hooks_s": round(pull_s, 2),
            "fetch_merge_s": round(merge_s, 2), "index_s": split, "catch_up_total_s": round(merge_s + sum(split.values()), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@example.com")
    os.environ.setdefault("GIT_COMMITTER_NAME", "bench")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "bench@example.com")
    results = []
    for n in args.records:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(measure(n, Path(tmp)))
        r = results[-1]
        if not args.json:
            split = ", ".join(f"{k} {v:.2f} s" for k, v in r["index_s"].items())
            print(f"{n:>6} records: git pull (hooks installed) returned in {r['git_pull_with_hooks_s']:.2f} s; "
                  f"memrepo sync catch-up {r['catch_up_total_s']:.2f} s = fetch+merge {r['fetch_merge_s']:.2f} s, "
                  f"{split}", file=sys.stdout, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
