"""Graph size per LoCoMo development conversation with the offline backend.

    .venv/bin/python benchmarks/graph_stats.py [--data ../shared/data/locomo/locomo-dev.json] [--only conv-26] [--workdir DIR]

For each conversation: a fresh memory repository, offline ingestion (which runs
graph indexing after every session commit), then the figures of the graph
index: anchors, frames, role arms, citations, and the share of episodic and
semantic records that have at least one frame ("evid": share of the gold
evidence turns of questions 1-4 whose records have a frame); the last line gives the same
share counting only frames other than dialogue acts (memrepo.nlp.lexicon.DIALOGUE_ACTS),
and only frames other than the acts addressed to someone (thanks, greetings, farewells, ...). The paper's conv-26 graph
(LLM extraction, A.7) has 792 anchors, 1,379 frames and 3,303 role edges.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def conversation_stats(conv: dict, workdir: Path) -> dict:
    from memrepo.api import MemoryRepo
    from memrepo.nlp.lexicon import ADDRESSEE_ROLE, DIALOGUE_ACTS
    from memrepo.graph.reader import open_reader

    sample = conv["sample_id"]
    data = workdir / f"{sample}.json"
    built = (workdir / sample / "memrepo.toml").exists()  # --workdir: a repository built before (locomo.py's too)
    if not built:
        data.write_text(json.dumps([conv]), encoding="utf-8")
        MemoryRepo.init(workdir / sample).close()
    repo = MemoryRepo.open(workdir / sample, environ={})
    try:
        start = time.perf_counter()
        if not built:
            repo.ingest([data])
        catch_up = repo.index_graph()  # anything an ingestion step missed
        seconds = time.perf_counter() - start
        records = [r for r in repo.records() if r.type in ("episodic", "semantic")]
        with open_reader(repo.store, repo.settings) as reader:
            counts = reader.counts()
            with_frames = {m for (m,) in reader.db.execute("SELECT DISTINCT memory FROM citations")}
            # Where the coverage comes from: frames other than dialogue acts (lexicon.DIALOGUE_ACTS), and
            # frames other than the acts addressed to someone (the fifth pass's: thanks, greetings, ...).
            acts = sorted(DIALOGUE_ACTS)
            marks = ",".join("?" * len(acts))
            with_events = {m for (m,) in reader.db.execute(
                "SELECT DISTINCT c.memory FROM citations c JOIN frame_facts f ON f.frame = c.frame "
                f"AND f.prop = 'predicate' WHERE f.value NOT IN ({marks})", acts)}
            with_unaddressed = {m for (m,) in reader.db.execute(
                "SELECT DISTINCT c.memory FROM citations c JOIN frame_facts f ON f.frame = c.frame "
                f"AND f.prop = 'predicate' WHERE f.value NOT IN ({marks}) OR NOT EXISTS (SELECT 1 FROM arms a "
                "WHERE a.frame = c.frame AND a.role = ?)", (*acts, ADDRESSEE_ROLE))}
            predicates = Counter(v for (v,) in reader.db.execute(
                "SELECT value FROM frame_facts WHERE prop = 'predicate'"))
        evidence = _evidence_turns(conv)
        turn_records: dict[str, set[str]] = {}
        for r in records:
            for citation in r.sources:
                turn_records.setdefault(citation.partition("#")[2], set()).add(r.id)
        covered = [t for t in evidence if t in turn_records]
        framed_turns = [t for t in covered if turn_records[t] & with_frames]
        by_type = Counter(r.type for r in records)
        framed = Counter(r.type for r in records if r.id in with_frames)
        return {
            "conversation": sample,
            "records": len(records),
            "episodic": by_type["episodic"],
            "semantic": by_type["semantic"],
            "anchors": counts["anchors"],
            "frames": counts["frames"],
            "arms": counts["arms"],
            "citations": counts["citations"],
            "with_frame": len(with_frames & {r.id for r in records}),
            "with_event_frame": len(with_events & {r.id for r in records}),
            "with_unaddressed_frame": len(with_unaddressed & {r.id for r in records}),
            "share_episodic": framed["episodic"] / max(1, by_type["episodic"]),
            "share_semantic": framed["semantic"] / max(1, by_type["semantic"]),
            "evidence": len(covered),
            "evidence_framed": len(framed_turns),
            "failed": len(catch_up.failed),
            "seconds": seconds,
            "top_predicates": predicates.most_common(8),
        }
    finally:
        repo.close()


def _evidence_turns(conv: dict) -> set[str]:
    """Gold evidence turns of the retrieval questions (categories 1-4), label noise normalised (README)."""
    import re

    out = set()
    for qa in conv.get("qa", []):
        if qa.get("category") == 5:
            continue
        for item in qa.get("evidence", []):
            for part in re.split(r"[;\s]+", str(item)):
                m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
                if m:
                    out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-shaped JSON file")
    parser.add_argument("--only", action="append", help="sample_id to run (repeatable; default: all)")
    parser.add_argument("--workdir", type=Path,
                        help="keep (and reuse) the repositories in this folder; benchmarks/locomo.py --workdir "
                             "builds the same layout")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the shared data folder is not in this checkout)")
        return 0
    conversations = json.loads(args.data.read_text(encoding="utf-8"))
    if args.only:
        conversations = [c for c in conversations if c["sample_id"] in set(args.only)]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="memrepo-graph-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        header = (f"{'conversation':<12} {'records':>7} {'anchors':>7} {'frames':>7} {'arms':>7} {'cites':>7} "
                  f"{'>=1 frame':>9} {'ep':>6} {'se':>6} {'evid':>6} {'fail':>4} {'sec':>6}")
        print(header)
        for conv in conversations:
            s = conversation_stats(conv, workdir)
            rows.append(s)
            print(f"{s['conversation']:<12} {s['records']:>7} {s['anchors']:>7} {s['frames']:>7} {s['arms']:>7} "
                  f"{s['citations']:>7} {s['with_frame'] / max(1, s['records']):>9.1%} {s['share_episodic']:>6.1%} "
                  f"{s['share_semantic']:>6.1%} {s['evidence_framed'] / max(1, s['evidence']):>6.1%} "
                  f"{s['failed']:>4} {s['seconds']:>6.1f}", flush=True)
            print(f"{'':<12} top predicates: " + ", ".join(f"{p} {n}" for p, n in s["top_predicates"]))
        total_records = sum(s["records"] for s in rows)
        total_framed = sum(s["with_frame"] for s in rows)
        print(f"{'all':<12} {total_records:>7} {sum(s['anchors'] for s in rows):>7} {sum(s['frames'] for s in rows):>7} "
              f"{sum(s['arms'] for s in rows):>7} {sum(s['citations'] for s in rows):>7} "
              f"{total_framed / max(1, total_records):>9.1%}   evidence turns whose records have a frame: "
              f"{sum(s['evidence_framed'] for s in rows) / max(1, sum(s['evidence'] for s in rows)):.1%}")
        print(f"{'':<12} records with a frame other than a dialogue act: "
              f"{sum(s['with_event_frame'] for s in rows) / max(1, total_records):.1%}; other than an act "
              f"addressed to someone (thanks, greetings, ...): "
              f"{sum(s['with_unaddressed_frame'] for s in rows) / max(1, total_records):.1%}")
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
