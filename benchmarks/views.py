"""Derive, compose, activate and upgrade for selections of 100, 1,000 and 10,000 files.

Goal (issue 15): activate and upgrade at 10,000 files well under a second, and a
file under ``.memory/`` read as fast as any file. Each size gets its own memory
repository (rules spread over 100 folders) and project folder. Measured, per size:
derive (resolve + tree + manifest + Quest commit), compose, a first activation
(builds the tree), an upgrade after one file changed (its dry run alone, then the
whole upgrade: re-derive, compose, build the new tree by hard links, swap), a rollback to the tree still on disk (swap only), and the
median time to read one file through ``.memory/`` against the same file read from
the tree folder directly.

    python benchmarks/views.py [--sizes 100,1000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memrepo.api import MemoryRepo
from memrepo.views import profile as pv


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def read_cost(project: Path, name: str, tree: Path, n: int = 2000) -> tuple[float, float]:
    via_link, direct = [], []
    for _ in range(n):
        t = time.perf_counter()
        (project / ".memory" / name).read_bytes()
        via_link.append(time.perf_counter() - t)
        t = time.perf_counter()
        (tree / name).read_bytes()
        direct.append(time.perf_counter() - t)
    return statistics.median(via_link) * 1e6, statistics.median(direct) * 1e6


def measure(tmp: Path, size: int) -> dict[str, float]:
    memory = MemoryRepo.init(tmp / f"memory-{size}", bare=False)
    files = {f"rules/topic{i % 100:03d}/rule{i:05d}.md": f"# Rule {i}\n\nAlways do thing {i}.\n".encode()
             for i in range(size)}
    memory.store.commit(files, f"{size} rules", sync_worktree=False)
    project = tmp / f"project-{size}"
    project.mkdir()
    try:
        (derivation, _), t_derive = timed(memory.derive, ["rules/"], intent=f"all rules {size}")
        env, t_compose = timed(memory.env_compose, [f"/={derivation.id}"])
        pv.bind(project, str(memory.store.root), env.id)
        first, t_activate = timed(pv.activate, project)
        memory.store.commit({"rules/topic000/rule00000.md": b"# Rule 0\n\nChanged.\n"}, "change one rule",
                            sync_worktree=False)
        plan, t_plan = timed(pv.plan_upgrade, project)
        (_, upgraded), t_upgrade = timed(pv.upgrade, project)
        _, t_rollback = timed(pv.rollback, project)
        link_us, direct_us = read_cost(project, "topic001/rule00001.md", project / pv.TREES_DIR / first.tree)
        return {"files": size, "derive_s": t_derive, "compose_s": t_compose, "activate_s": t_activate,
                "upgrade_s": t_upgrade, "upgrade_plan_s": t_plan,
                "rollback_s": t_rollback, "read_via_memory_us": link_us, "read_direct_us": direct_us,
                "changed": len(plan.changes["changed"])}
    finally:
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(Path(tmp), size))
            print(f"  measured {size:,} files", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'files':>7} {'derive':>8} {'compose':>8} {'activate':>9} {'dry run':>8} {'upgrade':>8} "
          f"{'rollback':>9} {'read .memory':>13} {'read direct':>12}")
    for r in rows:
        print(f"{r['files']:>7,} {r['derive_s']:>7.3f}s {r['compose_s']:>7.3f}s {r['activate_s']:>8.3f}s "
              f"{r['upgrade_plan_s']:>7.3f}s {r['upgrade_s']:>7.3f}s "
              f"{r['rollback_s']:>8.3f}s {r['read_via_memory_us']:>11.1f}us {r['read_direct_us']:>10.1f}us")


if __name__ == "__main__":
    main()
