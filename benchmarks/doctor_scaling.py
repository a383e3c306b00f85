"""Time of `memrepo doctor` on a repository of N records (issue 21: "runs in seconds at 10,000 records").

    .venv/bin/python benchmarks/doctor_scaling.py [--size 10000] [--runs 3] [--workdir DIR] [--json]

The repository is built the way benchmarks/recall_scaling.py builds it: conversation
sources of 20 turns, one episodic record per turn with its graph file, packed into
one pack, every derived index built. Then `memrepo doctor --json` runs in a fresh
process ``--runs`` times (the first run reads the pack cold from the page cache
only if the machine dropped it); the script prints the wall time of each run and,
from one in-process run, the seconds each check takes.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scaling import build  # noqa: E402  (the same synthetic history)


def per_check(root: Path) -> dict[str, float]:
    """Seconds per doctor check, in this process."""
    from memrepo.api import MemoryRepo
    from memrepo.doctor import run_check

    out: dict[str, float] = {}
    with MemoryRepo.open(root, environ={}) as repo:
        view = repo.at(None)
        for name, check in view.capabilities.doctor_checks.items():
            t = time.perf_counter()
            problems = [p for p in run_check(check, view) if not p.note]
            out[name] = round(time.perf_counter() - t, 3)
            if problems:
                print(f"  {name}: {len(problems)} problem(s), first: {problems[0]}", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", help="build (or reuse) the repository here instead of a temporary folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.workdir or tmp) / f"doctor-{args.size}"
        if not (root / ".git").exists():
            t = time.perf_counter()
            repo, _questions = build(root, args.size)
            repo.close()
            print(f"built {args.size:,} records with indexes in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                         os.environ.get("PYTHONPATH")]))}
        runs = []
        for _ in range(args.runs):
            t = time.perf_counter()
            result = subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(root), "doctor", "--json"],
                                    capture_output=True, text=True, env=env)
            runs.append(round(time.perf_counter() - t, 2))
            report = json.loads(result.stdout)
        checks = per_check(root)
    figures = {"records": args.size, "doctor_seconds": runs, "ok": report["ok"], "problems": len(report["problems"]),
               "checks_seconds": checks}
    if args.json:
        print(json.dumps(figures, indent=1, sort_keys=True))
        return
    print(f"{args.size:,} records: memrepo doctor {', '.join(f'{s:.2f}' for s in runs)} s "
          f"(ok: {report['ok']}, {len(report['problems'])} problems)")
    for name, seconds in sorted(checks.items(), key=lambda item: -item[1]):
        print(f"  {name:<24} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
