"""What memrepo's Git hooks add to a plain `git commit` of one record.

Goal (issue 21): at most 100 ms added, and never a wait for an index build. The
same repository is timed with the hooks installed and with them moved away,
commits interleaved; after each commit with hooks the script waits for the
background catch-up to finish (outside the timing), so every commit starts
from the same state.

    python benchmarks/hook_cost.py [--records 1000] [--commits 15] [--json]
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

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.index.base import index_root, read_state


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def commit_one(root: Path, i: int, tag: str) -> float:
    record = rec.new_record("episodic", f"Hand-written memory {tag} {i}", mention_time="2023-05-02",
                            source="hook-bench", position=f"{tag}{i}")
    path = root / record.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(rec.serialize(record))
    git(root, "add", record.path)
    t = time.perf_counter()
    git(root, "commit", "-q", "-m", f"hand {tag} {i}")
    return time.perf_counter() - t


def wait_for_indexes(repo: MemoryRepo, timeout: float = 300.0) -> float:
    """Seconds until the full-text index reflects HEAD (the background catch-up is done)."""
    t = time.perf_counter()
    head = repo.store.head().decode()
    while time.perf_counter() - t < timeout:
        try:
            state = read_state(index_root(repo.store, "fulltext"))
        except ValueError:
            state = None
        if state is not None and state.commit == head:
            return time.perf_counter() - t
        time.sleep(0.05)
    raise SystemExit("the background catch-up did not finish")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env_keep = {k: v for k, v in os.environ.items()}
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@example.com")
    os.environ.setdefault("GIT_COMMITTER_NAME", "bench")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "bench@example.com")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        repo = MemoryRepo.init(root)
        files = {}
        for i in range(args.records):
            record = rec.new_record("episodic", f"Synthetic memory {i}", mention_time=f"2022-{i % 12 + 1:02d}-01",
                                    source="bench", position=str(i))
            files[record.path] = rec.serialize(record)
        repo.store.commit(files, "synthetic records", sync_worktree=False)
        git(root, "reset", "-q", "--hard")
        repo.reindex()
        hooks = root / ".git" / "hooks"
        parked = Path(tmp) / "parked"
        parked.mkdir()
        with_hooks, without, catch_up = [], [], []
        for i in range(args.commits):
            with_hooks.append(commit_one(root, i, "h"))
            catch_up.append(wait_for_indexes(repo))
            for name in ("post-commit", "post-merge", "post-checkout"):
                os.replace(hooks / name, parked / name)
            without.append(commit_one(root, i, "n"))
            for name in ("post-commit", "post-merge", "post-checkout"):
                os.replace(parked / name, hooks / name)
            repo.reindex()
        repo.close()
    os.environ.clear()
    os.environ.update(env_keep)
    result = {
        "records": args.records,
        "commits": args.commits,
        "with_hooks_ms": round(statistics.median(with_hooks) * 1000, 1),
        "without_hooks_ms": round(statistics.median(without) * 1000, 1),
        "added_ms": round((statistics.median(with_hooks) - statistics.median(without)) * 1000, 1),
        "background_catch_up_s": round(statistics.median(catch_up), 2),
    }
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return
    print(f"plain git commit of one record, {args.records:,} records, median of {args.commits}:")
    print(f"  with hooks    {result['with_hooks_ms']:7.1f} ms")
    print(f"  without hooks {result['without_hooks_ms']:7.1f} ms")
    print(f"  added         {result['added_ms']:7.1f} ms (goal <= 100)")
    print(f"  background catch-up finished {result['background_catch_up_s']:.2f} s after the commit (median)")


if __name__ == "__main__":
    sys.exit(main())
