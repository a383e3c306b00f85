"""Semantic AutoDream on the LoCoMo dev conversations: pairs considered, merged, rejected, and evidence recall
before and after.

    .venv/bin/python benchmarks/dream_locomo.py --data ../shared/data/locomo/locomo-dev.json [--json] [--limit N]
        [--workdir DIR] [--judge-url URL --judge-model NAME]

Each conversation is ingested into its own repository (the offline backend
unless an endpoint is configured in the environment), exactly as
``benchmarks/locomo.py`` does, and its questions of categories 1-4 are recalled
(evidence recall at 5, 10 and at the operator budget, as in that benchmark).
Then AutoDream runs as the paper's protocol ends: one intermediate round over
the whole frontier (cap 80) and the final round (cap 120, repair 60), each
applied at once; the questions are recalled again on the merged graph.

AutoDream runs on a copy of each ingested repository, so ``--workdir`` keeps
the ingested repositories, undreamed, for later runs with another judge:
``--judge-url``/``--judge-model`` send the judge role (only) to an
OpenAI-compatible endpoint; ingestion stays offline. ``--judge-url accept-all``
is an ablation that merges every candidate pair, to bound what merging can
change in evidence recall.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # noqa: E402  (the retrieval benchmark: data loading, ingestion, recall measures)

COUNTS = ("considered", "verified", "merged", "rejected", "invalid", "skipped_by_cap", "cached", "pending")


def evidence_recall(repo: Any, qs: list[dict[str, Any]]) -> list[dict[str, float]]:
    rows = []
    for q in qs:
        result = repo.recall(q["question"], types=["episodic", "semantic"])
        got = [locomo.cited_turns(r) for r in result.records]
        row = {f"R@{k}": locomo.recall_at(got, q["gold"], k) for k in locomo.KS}
        row["R@budget"] = locomo.recall_at(got, q["gold"], None)
        row["records"] = len(got)
        rows.append(row)
    return rows


def accept_all_backend() -> Any:
    """An ablation, not a judge: every candidate pair is merged (the one with more records kept).

    It bounds what merging can change in evidence recall when the judge says yes to everything
    that candidate generation proposes (cosine >= 0.86, same eligible type).
    """
    from memrepo.llm.backend import OfflineBackend
    from memrepo.settings import Settings

    class AcceptAll(OfflineBackend):
        model_id = "accept-all (ablation)"

        def run(self, role: str, variables: dict[str, Any], schema: dict[str, Any], offline: Any) -> dict[str, Any]:
            if role != "judge":
                return super().run(role, variables, schema, offline)
            a, b = variables["a"], variables["b"]
            keep = a if (a["records"], a["name"]) >= (b["records"], b["name"]) else b
            return {"same": True, "representative": keep["name"], "reason": "ablation: every candidate pair merged"}

    return AcceptAll(Settings())


def judge_backend(url: str | None, model: str | None) -> Any:
    """The backend the dream step uses: offline (None), the accept-all ablation, or the endpoint given."""
    if url == "accept-all":
        return accept_all_backend()
    if not url:
        return None
    from memrepo.llm import get_backend
    from memrepo.settings import LLMSettings, Settings

    return get_backend(Settings(llm=LLMSettings(base_url=url, model=model or "judge", timeout=300, max_retries=1)))


def run(data: Path, limit: int | None, environ: dict[str, str], progress: bool,
        workdir: Path | None = None, judge_url: str | None = None, judge_model: str | None = None) -> dict[str, Any]:
    import shutil

    from memrepo.api import MemoryRepo

    convs = json.loads(data.read_text(encoding="utf-8"))[:limit] if limit else json.loads(data.read_text("utf-8"))
    before_rows: list[dict[str, float]] = []
    after_rows: list[dict[str, float]] = []
    totals: Counter = Counter()
    per_conv = []
    merged_examples: list[str] = []
    with tempfile.TemporaryDirectory(prefix="memrepo-dream-locomo-") as tmp:
        folder = workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for conv in convs:
            turns = locomo.conversation_turns(conv)
            qs = locomo.questions(conv, {t["dia_id"] for t in turns})
            t0 = time.perf_counter()
            locomo.ingest_conversation(conv, folder, environ).close()
            ingest_s = time.perf_counter() - t0
            copy = Path(tmp) / "dream" / conv["sample_id"]
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(folder / conv["sample_id"], copy, symlinks=True)
            repo = MemoryRepo.open(copy, environ=environ)
            before = evidence_recall(repo, qs)
            graph_before = repo.graph_stats()
            t1 = time.perf_counter()
            backend = judge_backend(judge_url, judge_model)
            rounds = [repo.dream(apply=True, backend=backend), repo.dream(final=True, apply=True, backend=backend)]
            dream_s = time.perf_counter() - t1
            counts = Counter()
            for r in rounds:
                counts.update({k: r.counts[k] for k in COUNTS})
                for d in r.run.merges if r.run else []:
                    merged_examples.append(f"{conv['sample_id']}: \"{d.alias_name}\" -> \"{d.representative_name}\" "
                                           f"({d.type}, {d.cosine:.3f})")
            after = evidence_recall(repo, qs)
            graph_after = repo.graph_stats()
            totals.update(counts)
            before_rows += before
            after_rows += after
            per_conv.append({
                "conv": conv["sample_id"], "questions": len(qs), "ingest_seconds": round(ingest_s, 1),
                "dream_seconds": round(dream_s, 1), "frontier_records": rounds[0].frontier_records,
                "sources": [r.sources for r in rounds], "counts": dict(counts),
                "anchors_before": graph_before["anchors"], "anchors_after": graph_after["anchors"],
                "before": locomo.summarise(before), "after": locomo.summarise(after),
            })
            if progress:
                print(f"{conv['sample_id']}: ingest {ingest_s:.0f} s, dream {dream_s:.1f} s, "
                      f"considered {counts['considered']}, merged {counts['merged']}, rejected {counts['rejected']}, "
                      f"R@10 {per_conv[-1]['before']['R@10']} -> {per_conv[-1]['after']['R@10']}", file=sys.stderr)
            repo.close()
    return {
        "judge": ("accept-all (ablation)" if judge_url == "accept-all" else judge_model) if judge_url else "offline",
        "conversations": len(convs), "questions": len(before_rows), "pairs": {k: totals[k] for k in COUNTS},
        "before": locomo.summarise(before_rows), "after": locomo.summarise(after_rows),
        "per_conversation": per_conv, "merges": merged_examples,
    }


def print_report(report: dict[str, Any]) -> None:
    p = report["pairs"]
    print(f"AutoDream on LoCoMo dev: {report['conversations']} conversations, {report['questions']} questions "
          f"(one intermediate round, cap 80, then the final round, cap 120 + repair 60; judge: {report['judge']})")
    print(f"pairs: considered {p['considered']}, verified {p['verified']}, merged {p['merged']}, "
          f"rejected {p['rejected']}, invalid {p['invalid']}, skipped by cap {p['skipped_by_cap']}, "
          f"cached {p['cached']}")
    print(f"{'conversation':<13} {'considered':>10} {'merged':>7} {'rejected':>9} {'anchors':>15} "
          f"{'R@10 before':>12} {'R@10 after':>11} {'dream s':>8}")
    for c in report["per_conversation"]:
        k = c["counts"]
        print(f"{c['conv']:<13} {k['considered']:>10} {k['merged']:>7} {k['rejected']:>9} "
              f"{str(c['anchors_before']) + ' -> ' + str(c['anchors_after']):>15} {c['before']['R@10']:>12} "
              f"{c['after']['R@10']:>11} {c['dream_seconds']:>8}")
    b, a = report["before"], report["after"]
    print("evidence recall (percent)   R@5    R@10   R@budget  records")
    print(f"  before AutoDream        {b['R@5']:>6} {b['R@10']:>7} {b['R@budget']:>9} {b['records']:>8}")
    print(f"  after AutoDream         {a['R@5']:>6} {a['R@10']:>7} {a['R@budget']:>9} {a['records']:>8}")
    print(f"  change                  {a['R@5'] - b['R@5']:>+6.1f} {a['R@10'] - b['R@10']:>+7.1f} "
          f"{a['R@budget'] - b['R@budget']:>+9.1f}")
    if report["merges"]:
        print("merges:")
        for line in report["merges"][:40]:
            print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="locomo-dev.json (a list of conversations)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the ingested repositories in this folder")
    parser.add_argument("--judge-url", help="OpenAI-compatible endpoint for the judge role (default: the offline "
                        "judge); 'accept-all' merges every candidate pair (an upper-bound ablation)")
    parser.add_argument("--judge-model", help="model name at --judge-url")
    args = parser.parse_args()
    if not args.data.exists():
        parser.error(f"{args.data}: no such file")
    environ = {k: v for k, v in os.environ.items() if k.startswith(("MEMREPO_", "OPENAI_"))}
    report = run(args.data, args.limit, environ, progress=not args.json, workdir=args.workdir,
                 judge_url=args.judge_url, judge_model=args.judge_model)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
