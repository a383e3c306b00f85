"""Procedural AutoDream on real agent runs (tau-bench airline, development split): how many skills, steps and
cautions the offline distiller and curator draw from them, and whether the skills say what the runs did.

    .venv/bin/python benchmarks/skills.py [--data ../shared/data/tau-bench/airline-dev.json] [--json]

The runs are read by the ingester's parser (``memrepo.write.parsers.parse_file``: the task is the first user
message, the outcome the reward; a run's ``info``, the answer key, is never read), distilled offline
(``memrepo.dream.distill``: tool calls, tool errors, outcome, a failure's stated cause, every quote checked
against the run), grouped by kind of task and built into procedures (``memrepo.dream.curate``) in one pass over
all of them, as one ``dream --skills`` run without caps would. No repository is written.

Per skill:

- ``in_order``: over the successful runs of the tasks its runs belong to, the mean share of its steps that
  appear in that run's tool calls in the skill's order (the longest common subsequence over the step count);
- ``failures_caught``: the share of the failed runs of those tasks that break one of its cautions (leave out a
  step, take a step before the one the caution names, call a tool no successful run called; a caution from a
  failure's own stated cause or tool error counts for that run only);
- ``successes_breaking``: the same for the successful runs, which a caution should not flag.

These are measured on the runs the skills were learned from (in-sample); the held-out tasks 35-49 are not in
this file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "tau-bench" / "airline-dev.json"


def lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def distil(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The sessions of the file (id, task, outcome, actions, cause, experiences, task_id) and their experiences."""
    from memrepo.dream import distill
    from memrepo.write.parsers import parse_file

    raw = json.loads(path.read_text())
    ids = [(int(r["task_id"]), int(r["trial"])) for r in raw]  # only the run's keys, never its info
    del raw
    sources = parse_file(path).sources
    sessions, experiences = [], {}
    for (task_id, trial), source in zip(ids, sources, strict=True):
        task = next(p.text for p in source.parts if p.anchor == "task")
        stated = next((str(p.meta.get("status")) for p in source.parts if p.anchor == "outcome"), "")
        reply = distill.offline(distill.variables(source, task, stated))
        checked = distill.check(reply, source)
        sid = f"run-{task_id:02d}-{trial}"
        exp_ids = []
        for n, e in enumerate(checked.experiences):
            exp_id = f"{sid}-e{n}"
            experiences[exp_id] = {"id": exp_id, "advice": e.advice, "lesson": e.lesson,
                                   "text": f"{e.lesson.capitalize()}: {e.advice}.\n" + "\n".join(
                                       f"> {q}" for _, q in e.quotes)}
            exp_ids.append(exp_id)
        actions = [{"tool": a["tool"], "arguments": sorted(a.get("arguments") or {}), "error": a.get("error")}
                   for a in checked.actions]
        cause = {"part": checked.cause[0], "text": checked.cause[1]} if checked.cause else None
        sessions.append({"id": sid, "task": task, "outcome": checked.outcome, "actions": actions, "cause": cause,
                         "experiences": exp_ids, "time": f"{task_id:02d}-{trial}", "task_id": task_id})
    return sessions, experiences


def measure(path: Path) -> dict[str, Any]:
    from memrepo.dream import curate

    started = time.perf_counter()
    sessions, experiences = distil(path)
    distilled = time.perf_counter() - started
    by_task: dict[int, list[dict[str, Any]]] = {}
    for s in sessions:
        by_task.setdefault(s["task_id"], []).append(s)
    skills = []
    for group in curate.group_sessions([s for s in sessions if s["actions"]]):
        procedure = curate.build_procedure(group, experiences)
        if procedure is None:
            continue
        steps = [st.tool for st in procedure.steps]
        cautions = [c for st in procedure.steps for c in st.cautions]
        tasks = sorted({s["task_id"] for s in group})
        runs = [r for t in tasks for r in by_task[t]]
        ok = [r for r in runs if r["outcome"] == "success"]
        failed = [r for r in runs if r["outcome"] == "failure"]
        order = [lcs(steps, curate._tools(r)) / len(steps) for r in ok]

        def breaks(run: dict[str, Any]) -> bool:
            tools = list(dict.fromkeys(curate._tools(run)))
            return any(c.broken_by(tools, steps) or (c.kind in ("cause", "error") and run["id"] in c.runs)
                       for c in cautions)

        caught = [breaks(r) for r in failed]
        false_alarms = [breaks(r) for r in ok]  # a caution a successful run also breaks tells the two apart less
        skills.append({"tasks": tasks, "runs": len(group), "steps": steps, "cautions": len(cautions),
                       "caution_kinds": sorted(c.kind for c in cautions),
                       "unexplained_failures": len(procedure.unexplained),
                       "description": procedure.description,
                       "in_order": round(sum(order) / len(order), 3) if order else None,
                       "successful_runs": len(ok), "failed_runs": len(failed),
                       "failures_caught": round(sum(caught) / len(caught), 3) if caught else None,
                       "successes_breaking": round(sum(false_alarms) / len(false_alarms), 3) if ok else None})
    weighted = [(s["in_order"], s["successful_runs"]) for s in skills if s["in_order"] is not None]
    caught_total = sum((s["failures_caught"] or 0) * s["failed_runs"] for s in skills)
    failed_total = sum(s["failed_runs"] for s in skills)
    ok_total = sum(s["successful_runs"] for s in skills)
    alarms = sum((s["successes_breaking"] or 0) * s["successful_runs"] for s in skills)
    return {"data": path.name, "runs": len(sessions),
            "successes_breaking_mean": round(alarms / ok_total, 3) if ok_total else None,
            "success": sum(s["outcome"] == "success" for s in sessions),
            "failure": sum(s["outcome"] == "failure" for s in sessions),
            "with_stated_cause": sum(bool(s["cause"]) for s in sessions),
            "experiences": len(experiences), "skills": len(skills),
            "steps": sum(len(s["steps"]) for s in skills), "cautions": sum(s["cautions"] for s in skills),
            "in_order_mean": round(sum(v * n for v, n in weighted) / max(1, sum(n for _, n in weighted)), 3),
            "failures_caught_mean": round(caught_total / failed_total, 3) if failed_total else None,
            "seconds": {"distil": round(distilled, 2), "total": round(time.perf_counter() - started, 2)},
            "per_skill": skills}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} is not there (the tau-bench airline runs; see its README)")
        return 0
    result = measure(args.data)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['runs']} runs ({result['success']} success, {result['failure']} failure, "
          f"{result['with_stated_cause']} failures stating a cause), {result['experiences']} experiences")
    print(f"{result['skills']} skills, {result['steps']} steps, {result['cautions']} cautions; steps in order in "
          f"successful runs {result['in_order_mean']:.1%}, failed runs breaking a caution "
          f"{(result['failures_caught_mean'] or 0):.1%} (successful runs breaking one: "
          f"{(result['successes_breaking_mean'] or 0):.1%})  ({result['seconds']['total']} s)")
    for s in result["per_skill"]:
        caught = "-" if s["failures_caught"] is None else f"{s['failures_caught']:.0%}"
        print(f"- tasks {s['tasks']}: {s['runs']} runs, {len(s['steps'])} steps, {s['cautions']} cautions; "
              f"in order {s['in_order']:.0%} of {s['successful_runs']} successful; caught {caught} of "
              f"{s['failed_runs']} failed (successful breaking one: {s['successes_breaking']:.0%})  "
              f"[{' > '.join(s['steps'])}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
