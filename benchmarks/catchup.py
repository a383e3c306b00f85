"""Catch-up after a pull (issue 18): seconds per 1,000 pulled records for each index and for the graph step.

    .venv/bin/python benchmarks/catchup.py [--pulled 1000,10000] [--history 1000] [--graph-max 0] [--json]
                                           [--workdir DIR]

A repository with ``--history`` records (benchmarks/recall_scaling.py's synthetic
history, built once and reused from --workdir; the same builder as
benchmarks/write_scaling.py) is copied, N new records arrive in one commit (as a
pull of a teammate's ingest brings them), then each registered index is brought
up to date on its own, the graph step extracts the new records' graph files and
commits them (``--graph-max``: at most this many records, 0 = all), and the graph
and anchor-name indexes take in those files. Each stage is printed as seconds per
1,000 records, for each N.

    {"history": 1000, "pulled": {"1000": {"fulltext": .., "vectors": .., ..., "graph step (extraction + commit)": ..}}}
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from write_scaling import catchup, open_or_build  # noqa: E402  (the same histories and the same stages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pulled", default="1000,10000", help="comma-separated counts of pulled records")
    parser.add_argument("--history", type=int, default=1000, help="records in the repository before the pull")
    parser.add_argument("--graph-max", type=int, default=0, help="records the timed graph step extracts (0: all)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--workdir", type=Path, help="keep the built history here and reuse it on later runs")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.pulled.split(",") if c.strip()]
    out: dict[str, Any] = {"history": args.history, "pulled": {}}
    with tempfile.TemporaryDirectory(prefix="memrepo-catchup-") as tmp:
        base = args.workdir or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        open_or_build(base / f"n{args.history}", args.history).close()
        if not args.json:
            print(f"{args.history} records ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        for n in counts:
            t0 = time.perf_counter()
            figures = catchup(base / f"n{args.history}", n, args.graph_max or n)
            figures["total (s)"] = round(time.perf_counter() - t0, 1)
            out["pulled"][str(n)] = figures
            if not args.json:
                print(f"catch-up of {n} pulled records, s per 1,000 records:", flush=True)
                for stage, value in figures.items():
                    print(f"  {stage:<40} {value:>8}", flush=True)
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
