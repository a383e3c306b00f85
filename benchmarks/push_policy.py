"""The server hook's time for a push of N records (issue 37): every commit checked, not the net diff.

Two shapes of the same N records, each pushed to a bare remote with memrepo's pre-receive hook:

- ``one commit``: N records written as one batch (``repo.add``), then their graph commit;
- ``N commits``: N records written one by one (each ``remember``-like write is a commit), the
  way an agent writes through a day.

For each, the push is timed with the hook installed and, in the same run, the same push to a
second bare remote without the hook; the difference is what the policy costs.

    python benchmarks/push_policy.py [--records 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memrepo.api import MemoryRepo
from memrepo.resources import data_dir
from memrepo.team.validate import install_server_hook

WORDS = ["garden", "violin", "ferry", "pottery", "library", "marathon", "orchid", "kayak", "sourdough", "chess"]


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True)


def bare(path: Path, hook: bool) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    if hook:
        text = (data_dir("hooks") / "pre-receive").read_text(encoding="utf-8").replace("@PYTHON@", sys.executable)
        install_server_hook(path, text)
    return path


def build(root: Path, n: int, one_commit: bool) -> None:
    with MemoryRepo.init(root) as repo:
        records = [repo.new_record("semantic", f"Teammate {i % 7} keeps a {WORDS[i % len(WORDS)]} number {i} "
                                               "in the shed", mention_time=f"2024-03-{1 + i % 28:02d}T10:00:00Z")
                   for i in range(n)]
        if one_commit:
            repo.add(records)
        else:
            for record in records:
                repo.add([record])
        repo.index_graph()


def timed_push(root: Path, remote: Path) -> float:
    git(root, "remote", "add", remote.name.removesuffix(".git"), str(remote))
    started = time.perf_counter()
    done = subprocess.run(["git", "-C", str(root), "push", "-q", str(remote), "main"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"push refused: {done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for shape, one_commit in (("one commit", True), (f"{args.records} commits", False)):
            root = Path(tmp) / shape.replace(" ", "-")
            print(f"{shape}: writing {args.records} records ...", file=sys.stderr)
            build(root, args.records, one_commit)
            commits = int(git(root, "rev-list", "--count", "HEAD").stdout)
            plain = timed_push(root, bare(Path(tmp) / f"{shape.replace(' ', '-')}-plain.git", hook=False))
            hooked = timed_push(root, bare(Path(tmp) / f"{shape.replace(' ', '-')}-hooked.git", hook=True))
            results[shape] = {"commits": commits, "push_s": round(plain, 2), "push_with_hook_s": round(hooked, 2),
                              "hook_s": round(hooked - plain, 2)}
    if args.json:
        print(json.dumps({"records": args.records, "shapes": results}, indent=2, sort_keys=True))
        return
    for shape, r in results.items():
        print(f"{shape:>14}: {r['commits']:5d} commits, push {r['push_s']:.2f} s, with the hook "
              f"{r['push_with_hook_s']:.2f} s (the hook: {r['hook_s']:.2f} s)")


if __name__ == "__main__":
    main()
