"""Start-up time of `memrepo --help` and `memrepo show ID` (goal: well under half a second).

Heavy libraries are imported where they are used, so neither command loads the
index, graph, model or viewer stacks. Each command is run --runs times as a fresh
process; the median wall time is printed.

    python benchmarks/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMREPO = [sys.executable, "-m", "memrepo"]


def median_seconds(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = str(Path(tmp) / "m")
        subprocess.run([*MEMREPO, "init", repo], check=True, capture_output=True)
        out = subprocess.run(
            [*MEMREPO, "--repo", repo, "remember", "Mia bought a Suica card", "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        record_id = json.loads(out)["written"][0]
        baseline = median_seconds([sys.executable, "-c", "pass"], args.runs)
        help_s = median_seconds([*MEMREPO, "--help"], args.runs)
        show_s = median_seconds([*MEMREPO, "--repo", repo, "show", record_id], args.runs)
    print(f"python -c pass      {baseline * 1000:6.0f} ms (interpreter alone)")
    print(f"memrepo --help      {help_s * 1000:6.0f} ms")
    print(f"memrepo show ID     {show_s * 1000:6.0f} ms   (goal: well under 500 ms)")


if __name__ == "__main__":
    main()
