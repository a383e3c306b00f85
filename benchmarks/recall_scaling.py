"""Recall latency and evidence inspected as the history grows (MIRIX-2.0 A.6: bounded access).

    .venv/bin/python benchmarks/recall_scaling.py [--sizes 1000,10000,100000] [--queries 40] [--json] [--workdir DIR]
                                                  [--embedding-model NAME]

For each size a fresh repository gets a synthetic history: conversation
sources of 20 turns, one episodic record per turn ("Mia bought a lantern at
Harbor Market ..."), and each record's graph file (anchors: a few people who
appear everywhere, places and items drawn from vocabularies that grow with the
history; one frame per record citing it), committed in a few large commits and
then packed into one pack file (`memrepo gc`). Every derived index is built
before timing (this is the slow part). Then, for each size, 25 questions warm the
caches, and 25 other questions are timed with the sizes taking turns question
by question (so that the machine's noise falls on all sizes alike); the script
prints recall latency p50/p95 (and the p50 of the warm-up questions, "cold"),
rows and frames inspected (mean and max), and the ratio of the largest size's
p50 to the smallest's (goal: at most 1.5).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PEOPLE = ["Mia", "Jonas", "Lena", "Ana", "Tom", "Yuki", "Hiroshi", "Okada"]
VERBS = [("buy", "bought", "buyer", "item"), ("visit", "visited", "visitor", "place"), ("cook", "cooked", "cook", "dish"),
         ("paint", "painted", "creator", "work")]
ADJ = ["red", "blue", "tiny", "old", "wooden", "silver", "striped", "golden", "green", "paper", "glass", "velvet"]
NOUNS = ["lantern", "teapot", "bicycle", "kimono", "umbrella", "notebook", "ramen", "mural", "vase", "kite", "clock",
         "scarf", "bowl", "camera", "guitar", "postcard"]
PLACES = ["Market", "Station", "Temple", "Park", "Harbor", "Museum", "Garden", "Bridge", "Cafe", "Hill"]
PREFIX = ["North", "South", "Old", "New", "East", "West", "Upper", "Lower", "Little", "Grand", "Silver", "Maple",
          "Cedar", "River", "Lake", "Stone", "Sun", "Moon", "Star", "Iron"]


def vocab(n_records: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """Items and places: their number grows with the history (about one new name per 8 records)."""
    items = [f"{a} {n}" for a in ADJ for n in NOUNS]
    places = [f"{p} {q}" for p in PREFIX for q in PLACES]
    grow = max(1, n_records // 8)
    extra_items = [f"{rng.choice(ADJ)} {rng.choice(NOUNS)} {i}" for i in range(max(0, grow - len(items)))]
    extra_places = [f"{rng.choice(PREFIX)} {rng.choice(PLACES)} {i}" for i in range(max(0, grow // 4 - len(places)))]
    return items + extra_items, places + extra_places


def build(root: Path, n: int, seed: int = 7) -> tuple[Any, list[str]]:
    """A repository with ``n`` synthetic episodic records, their sources and graph files, indexes built."""
    from datetime import date, timedelta

    from memrepo import records as rec
    from memrepo.api import MemoryRepo
    from memrepo.graph.model import AnchorRef, Arm, Frame, FrameLiteral, MemoryGraph, frame_iri, graph_path
    from memrepo.graph.rdf import memory_turtle

    rng = random.Random(seed)
    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    items, places = vocab(n, rng)
    questions: list[str] = []
    files: dict[str, bytes] = {}
    start = date(2020, 1, 1)
    per_source = 20
    for s in range((n + per_source - 1) // per_source):
        day = (start + timedelta(days=s)).isoformat()
        parts, lines = [], []
        for t in range(min(per_source, n - s * per_source)):
            who = PEOPLE[(s + t) % len(PEOPLE)]
            verb, past, subj_role, obj_role = VERBS[rng.randrange(len(VERBS))]
            thing = rng.choice(items) if obj_role != "place" else rng.choice(places)
            where = rng.choice(places)
            price = rng.randrange(100, 9000)
            text = f"{who}: I {past} the {thing} at {where} today, it was {price} yen."
            anchor = f"D{s + 1}:{t + 1}"
            parts.append(rec.SourcePart(anchor, text, {"speaker": who}))
            lines.append((anchor, who, verb, subj_role, obj_role, thing, where, price, text))
            if len(questions) < 400 and rng.random() < 0.05:
                questions.append(rng.choice([f"What did {who} {verb} at {where}?", f"When did {who} {verb} the {thing}?",
                                             f"How many times did {who} go to {where}?", f"Where did {who} {verb} the {thing}?"]))
        source_id = rec.make_source_id(namespace="default", origin="synthetic", position=str(s), content=str(s),
                                       mention_time=day)
        source = rec.Source(source_id, "conversation", day, tuple(parts), title=f"synthetic session {s + 1}",
                            extra={"speakers": PEOPLE[:2]})
        files[source.path] = rec.serialize_source(source)
        for anchor, who, verb, subj_role, obj_role, thing, where, price, text in lines:
            record = repo.new_record("episodic", text, mention_time=day, source=source_id, position=anchor,
                                     event_time=day, actor=who, sources=[f"{source_id}#{anchor}"])
            files[record.path] = rec.serialize(record)
            a_who = AnchorRef.make("default", who, "person")
            a_thing = AnchorRef.make("default", thing, "location" if obj_role == "place" else "object")
            a_where = AnchorRef.make("default", where, "location")
            arms = (Arm(subj_role, a_who), Arm(obj_role, a_thing), Arm("location", a_where))
            frame = Frame(frame_iri("default", verb, arms, "episodic", day), verb, arms,
                          (FrameLiteral("price", f"{price} yen"),), "episodic", day, day, "done", (record.id,))
            graph = MemoryGraph(record.id, "episodic", [a_who, a_thing, a_where], [frame])
            files[graph_path(record.id)] = memory_turtle(graph)
    for start_i in range(0, len(files), 20000):  # a few large commits
        chunk = dict(list(files.items())[start_i : start_i + 20000])
        repo.store.commit(chunk, f"synthetic history ({len(chunk)} files)")
    repo.store.gc()  # `memrepo gc`: one pack, as a maintained repository has (each large commit wrote its own)
    repo.reindex()  # every derived index (memrepo.capabilities), so that none is built while timing
    return repo, questions


def reuse(root: Path, environ: dict[str, str] | None = None) -> tuple[Any, list[str]] | None:
    """A repository an earlier run built with ``--workdir`` (and its questions), or None."""
    saved = root / ".git" / "questions.json"
    if not saved.exists():
        return None
    from memrepo.api import MemoryRepo

    repo = MemoryRepo.open(root, environ=environ or {})
    repo.reindex()  # a no-op unless an index format (or, with --embedding-model, the model) changed since
    return repo, json.loads(saved.read_text(encoding="utf-8"))


def warm(repo: Any, questions: list[str], queries: int) -> list[float]:
    """Run the ``queries`` warm-up questions (not the timed ones); returns their latencies.

    The first recalls after opening a repository pay for loading the embedder and index files and for
    cold caches (parsed trees, SQLite pages, Tantivy's document store); their p50 is reported as "cold".
    """
    warmup = questions[queries : 2 * queries] or questions[:1]
    repo.recall(warmup[0])  # loads the embedder and opens the indexes
    cold = []
    for q in warmup:
        t0 = time.perf_counter()
        repo.recall(q, types=["episodic", "semantic"])
        cold.append(time.perf_counter() - t0)
    return cold


def measure(repos: dict[int, tuple[Any, list[str]]], queries: int) -> dict[int, dict[str, Any]]:
    """Time ``queries`` questions per size after as many *other* questions have warmed the caches.

    The sizes take turns question by question, so a noisy moment of the machine falls on all sizes
    alike instead of on whichever was being timed then.
    """
    cold = {n: warm(repo, questions, queries) for n, (repo, questions) in repos.items()}
    timed: dict[int, list[tuple[float, Any]]] = {n: [] for n in repos}
    for i in range(queries):
        for n, (repo, questions) in repos.items():
            if i < min(queries, len(questions)):
                t0 = time.perf_counter()
                result = repo.recall(questions[i], types=["episodic", "semantic"])
                timed[n].append((time.perf_counter() - t0, result))
    out = {}
    for n, runs in timed.items():
        latencies = sorted(t for t, _ in runs)
        results = [r for _, r in runs]
        rows = [r.inspected.get("rows", 0) for r in results]
        out[n] = {
            "queries": len(runs),
            "warmup_queries": len(cold[n]),
            "cold_p50_ms": round(1000 * statistics.median(cold[n]), 1) if cold[n] else None,
            "p50_ms": round(1000 * statistics.median(latencies), 1),
            "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1),
            "rows_inspected_mean": round(statistics.mean(rows), 1),
            "rows_inspected_max": max(rows),
            "frames_inspected_max": max(r.inspected.get("frames", 0) for r in results),
            "records_returned_max": max(len(r.records) for r in results),
            "fallbacks": sum(bool(r.fallback) for r in results),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated record counts")
    parser.add_argument("--queries", type=int, default=25, help="questions timed per size (as many others warm up)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--workdir", type=Path, help="keep the built repositories here and reuse them on later runs")
    parser.add_argument("--embedding-model", help="open reused histories with this embedding model instead of the one "
                        "their memrepo.toml names (MEMREPO_EMBEDDING_MODEL; their vectors are rebuilt for it)")
    args = parser.parse_args()
    environ = {"MEMREPO_EMBEDDING_MODEL": args.embedding_model} if args.embedding_model else {}
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    out: dict[str, Any] = {"sizes": {}}
    with tempfile.TemporaryDirectory(prefix="memrepo-recall-scaling-") as tmp:
        base = args.workdir or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        repos, built = {}, {}
        for n in sizes:
            t0 = time.perf_counter()
            repos[n] = reuse(base / f"n{n}", environ) or build(base / f"n{n}", n)
            os.sync()  # a fresh build leaves gigabytes to write back: flush them before timing
            (base / f"n{n}" / ".git" / "questions.json").write_text(json.dumps(repos[n][1]), encoding="utf-8")
            built[n] = time.perf_counter() - t0
            if not args.json:
                print(f"{n:>7} records ready in {built[n]:.0f} s", file=sys.stderr, flush=True)
        for n, figures in measure(repos, args.queries).items():
            figures["build_seconds"] = round(built[n], 1)
            out["sizes"][str(n)] = figures
            if not args.json:
                print(f"{n:>7} records: p50 {figures['p50_ms']:>7} ms  p95 {figures['p95_ms']:>7} ms  "
                      f"(cold p50 {figures['cold_p50_ms']} ms)  rows inspected "
                      f"mean {figures['rows_inspected_mean']:>6} max {figures['rows_inspected_max']:>4}  frames max "
                      f"{figures['frames_inspected_max']:>3}  returned max {figures['records_returned_max']:>2}",
                      file=sys.stdout, flush=True)
        for repo, _questions in repos.values():
            repo.close()
    first, last = out["sizes"][str(sizes[0])], out["sizes"][str(sizes[-1])]
    out["latency_ratio"] = round(last["p50_ms"] / first["p50_ms"], 2) if first["p50_ms"] else None
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(f"p50 latency ratio {sizes[-1]}/{sizes[0]}: {out['latency_ratio']} (goal: at most 1.5)")


if __name__ == "__main__":
    main()
