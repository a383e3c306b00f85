"""Kill memrepo writers at random points, round after round, and count what survives.

Each round starts a few concurrent ``memrepo remember`` processes (typed records,
and routed ones that also add a name to the shared core block). Each writer is
left alone, killed at a named point of the write path (``MEMREPO_KILL_AT``), or
sent SIGKILL at a random moment late in its run. Then the next memrepo command
runs (``memrepo list``), which repairs what the kills left. Counted:

- kills, and writes acknowledged (exit 0 with the ids printed);
- acknowledged records present in HEAD afterwards, and acknowledged core-block
  names present in the block (both must equal the acknowledged counts);
- repairs needed (rounds whose next command repaired something), and rounds
  whose work tree or Git index still differed from HEAD after it (must be 0).

At the end ``memrepo doctor`` and ``git fsck --strict`` must pass.

    python benchmarks/crash.py [--rounds 20] [--writers 4] [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POINTS = ("before-swap", "after-commit-before-sync", "mid-sync", "holding-index-lock", "mid-object-write",
          "after-source-before-graph")


def memrepo(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memrepo", "--repo", str(root), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def one_round(root: Path, r: int, writers: int, rng: random.Random, duration: float, totals: dict) -> None:
    procs = []
    for w in range(writers):
        routed = rng.random() < 0.5
        name = f"Crash{r}x{w}"
        args = (["remember", f"My name is {name}", "--mention-time", "2023-05-02", "--json"] if routed else
                ["remember", f"crash round {r} writer {w}", "--type", "semantic", "--mention-time", "2023-05-02",
                 "--json"])
        env = dict(os.environ)
        env.pop("MEMREPO_KILL_AT", None)
        mode = rng.random()
        delay = None
        if mode < 0.35:
            env["MEMREPO_KILL_AT"] = rng.choice(POINTS)
        elif mode < 0.7:
            delay = rng.uniform(0.6, 1.1) * duration
        procs.append((memrepo(root, *args, env=env), delay, routed, name, time.monotonic()))
    for proc, delay, routed, name, started in procs:
        if delay is not None:
            left = delay - (time.monotonic() - started)
            try:
                proc.wait(timeout=max(0.0, left))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
        if proc.returncode == -signal.SIGKILL:
            totals["kills"] += 1
            continue
        if proc.returncode != 0:
            totals["failed_writes"] += 1
            totals["problems"].append(f"round {r}: a write failed: {err.strip()[-300:]}")
            continue
        result = json.loads(out)
        totals["acknowledged"] += 1
        totals["records_acknowledged"].update(i for i in result["written"] + result["unchanged"]
                                              if not i.startswith(("src-", "core-")))
        if routed:
            totals["names_acknowledged"].add(name)
    after = memrepo(root, "list", "--json")
    _, err = after.communicate(timeout=600)
    if "interrupted write" in err or "removed" in err:
        totals["repairs_needed"] += 1
    status = git(root, "status", "--porcelain", "--untracked-files=all").stdout
    if status.strip():
        totals["dirty_after_repair"] += 1
        totals["problems"].append(f"round {r}: after the next command: {status.strip()[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4, help="concurrent writers per round")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--workdir", help="build the repository here and keep it (default: a temporary folder)")
    parser.add_argument("--stop", action="store_true", help="stop at the first round that leaves a problem")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    totals: dict = {"kills": 0, "acknowledged": 0, "failed_writes": 0, "repairs_needed": 0, "dirty_after_repair": 0,
                    "records_acknowledged": set(), "names_acknowledged": set(), "problems": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.workdir or tmp) / "memory"
        init = memrepo(root.parent, "init", str(root))
        init.communicate()
        t = time.monotonic()
        probe = memrepo(root, "remember", "timing probe", "--type", "semantic", "--json")
        probe.communicate()
        duration = time.monotonic() - t
        for r in range(args.rounds):
            one_round(root, r, args.writers, rng, duration, totals)
            if args.stop and totals["problems"]:
                break
            if not args.json:
                print(f"  round {r + 1}/{args.rounds}: {totals['kills']} kills, {totals['acknowledged']} writes "
                      "acknowledged", file=sys.stderr)
        listed = memrepo(root, "list", "--json")
        out, _ = listed.communicate()
        present = {r["id"] for r in json.loads(out)}
        core = json.loads(memrepo(root, "show", "core-human", "--json").communicate()[0] or "{}").get("text", "")
        names = {line.removeprefix("- name: ") for line in core.splitlines()}
        doctor = memrepo(root, "doctor")
        doctor_out, _ = doctor.communicate()
        fsck = git(root, "fsck", "--strict", "--no-dangling")
    acknowledged = totals["records_acknowledged"]
    result = {
        "rounds": args.rounds,
        "writers": args.rounds * args.writers,
        "kills": totals["kills"],
        "writes_acknowledged": totals["acknowledged"],
        "writes_failed": totals["failed_writes"],
        "records_acknowledged": len(acknowledged),
        "records_present": len(acknowledged & present),
        "core_names_acknowledged": len(totals["names_acknowledged"]),
        "core_names_present": len(totals["names_acknowledged"] & names),
        "repairs_needed": totals["repairs_needed"],
        "dirty_after_repair": totals["dirty_after_repair"],
        "doctor_ok": doctor.returncode == 0,
        "fsck_ok": fsck.returncode == 0,
        "problems": totals["problems"],
    }
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        for key, value in result.items():
            if key != "problems":
                print(f"{key:>24}: {value}")
        for problem in result["problems"]:
            print(f"  {problem}")
        if doctor.returncode:
            print(doctor_out)
    ok = (result["records_present"] == result["records_acknowledged"]
          and result["core_names_present"] == result["core_names_acknowledged"]
          and not result["dirty_after_repair"] and result["doctor_ok"] and result["fsck_ok"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
