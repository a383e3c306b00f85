"""Beliefs over time: does `ask` answer what holds now, and what held at a past date, and is no returned fact stale?

    .venv/bin/python benchmarks/beliefs.py [--data benchmarks/data/beliefs/beliefs.json] [--json] [--show]

The data (``benchmarks/data/beliefs/beliefs.json``, written for this benchmark: invented people, places
and things) holds entities whose facts change over time - jobs, homes, partners, owners of a thing,
counts and statuses - each as dated statements, and questions about now and about a past date with the
value expected. Offline: each statement is remembered as one episodic record with its date as event and
mention time, in a fresh repository; then the edits of the data are made with plain Git, as a person
would, with no `memrepo index` after them: a ``git_rm`` of a statement (a mistaken one is taken back) and a
``hand_edit`` (a statement about someone else corrected by hand, ``sed -i`` and ``git commit -am``).

An answer is right when the value expected is in its first clause (before "; before:": the belief that
holds, not the one before it), case-folded. The stale share is the share of the graph facts every recall
returned (``facts``) that cite a record that is gone or whose blob is not the one its graph file says it
was extracted from (``mr:recordBlob``, read from the graph file in the tree, not from the index): it must
be 0. A belief (``beliefs``) of a record edited by hand is extracted again from the record's new text, so
it may cite a changed record rightly; it is checked by content instead: the value it answers must be
written in a record it cites as that record is now (``unsupported_beliefs``, must be 0 too).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "beliefs" / "beliefs.json"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def build(root: Path, entities: list[dict[str, Any]]) -> Any:
    from memrepo import records as rec
    from memrepo.api import MemoryRepo

    repo = MemoryRepo.init(root)
    written: dict[str, str] = {}
    for entity in entities:
        for s in entity["statements"]:
            (written[s["text"]],) = repo.remember(s["text"], type="episodic", event_time=s["date"],
                                                  mention_time=s["date"] + "T12:00:00+00:00").written
    for entity in entities:
        for edit in entity["edits"]:
            if "git_rm" in edit:
                git(root, "rm", "-q", rec.record_path(written[edit["git_rm"]]))
                git(root, "commit", "-q", "-m", "take back a mistaken statement")
            else:
                path = root / rec.record_path(written[edit["hand_edit"]])
                old, new = edit["replace"]
                path.write_text(path.read_text().replace(old, new))
                git(root, "commit", "-q", "-am", "correct a statement by hand")
    return repo


def stale_citations(repo: Any, record_ids: set[str]) -> set[str]:
    """Record ids that are gone, or whose blob is not the one their graph file was extracted from."""
    from memrepo import records as rec
    from memrepo.graph.model import graph_path
    from memrepo.graph.rdf import recorded_blob

    snap = repo.store.snapshot()
    stale = set()
    for record_id in record_ids:
        blob = snap.blob_id(rec.record_path(record_id))
        data = snap.read(graph_path(record_id))
        followed = recorded_blob(data) if data is not None else None
        if blob is None or (followed is not None and followed != blob):
            stale.add(record_id)
    return stale


def belief_supported(repo: Any, belief: dict[str, Any]) -> bool:
    """Whether the value a belief answers is written in a record it cites, as that record is now (a belief
    of a record edited since is extracted again from its new text: it cites the changed record, rightly)."""
    from memrepo import records as rec

    snap = repo.store.snapshot()
    texts = [(snap.read(rec.record_path(i)) or b"").decode("utf-8", "replace").lower() for i in belief["cites"]]
    if belief["answer"].startswith("conflict: "):
        return all(texts)
    value = re.split(r" (?:since|from) \d{4}", belief["answer"], maxsplit=1)[0].lower()
    return all(texts) and any(part in t for t in texts for part in [value.split(" in ")[0].split(" for ")[0]])


def run(data: Path, show: bool) -> dict[str, Any]:
    entities = json.loads(data.read_text())["entities"]
    questions = [(e, q) for e in entities for q in e["questions"]]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        repo = build(Path(tmp) / "memory", entities)
        built = time.perf_counter() - start
        right = {"now": [0, 0], "past": [0, 0]}
        facts = stale_facts = beliefs_returned = stale_beliefs = dropped = 0
        rows = []
        start = time.perf_counter()
        for entity, q in questions:
            result = repo.recall(q["question"])
            answer = repo.ask(q["question"]).answer
            first = answer.split("; before:", 1)[0].lower()
            ok = q["expect"].lower() in first
            right[q["about"]][0] += ok
            right[q["about"]][1] += 1
            cited = {i for f in result.facts for i in f.cites}
            bad = stale_citations(repo, cited)
            facts += len(result.facts)
            stale_facts += sum(1 for f in result.facts if set(f.cites) & bad)
            for belief in getattr(result, "beliefs", []):  # (also runs on a memrepo before them)
                beliefs_returned += 1
                stale_beliefs += not belief_supported(repo, belief)
            dropped += len(getattr(result, "stale_dropped", []))
            rows.append({"entity": entity["entity"], "kind": entity["kind"], "about": q["about"],
                         "question": q["question"], "expect": q["expect"], "answer": answer, "right": ok})
        asked = time.perf_counter() - start
        repo.close()
    total = sum(n for _, n in right.values())
    out = {
        "entities": len(entities), "questions": total,
        "right": round(100 * sum(r for r, _ in right.values()) / total, 1),
        "right_now": round(100 * right["now"][0] / max(1, right["now"][1]), 1),
        "right_past": round(100 * right["past"][0] / max(1, right["past"][1]), 1),
        "returned_facts": facts, "stale_facts": stale_facts,
        "stale_share": round(100 * stale_facts / max(1, facts), 1), "stale_dropped": dropped,
        "returned_beliefs": beliefs_returned, "unsupported_beliefs": stale_beliefs,
        "seconds": {"build": round(built, 1), "questions": round(asked, 1)},
        "by_kind": {}, "wrong": [r for r in rows if not r["right"]],
    }
    for kind in sorted({r["kind"] for r in rows}):
        mine = [r for r in rows if r["kind"] == kind]
        out["by_kind"][kind] = f"{sum(r['right'] for r in mine)}/{len(mine)}"
    if show:
        out["rows"] = rows
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the entities and questions (JSON)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--show", action="store_true", help="also list every question with its answer")
    args = parser.parse_args()
    out = run(args.data, args.show)
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    print(f"{out['entities']} entities, {out['questions']} questions (offline)")
    print(f"answered right: {out['right']} % (now {out['right_now']} %, past date {out['right_past']} %)")
    print(f"by kind: {', '.join(f'{k} {v}' for k, v in out['by_kind'].items())}")
    print(f"returned facts whose record changed: {out['stale_share']} % ({out['stale_facts']} of "
          f"{out['returned_facts']}; {out['stale_dropped']} stale frames dropped by the reads)")
    print(f"beliefs whose value no cited record says now: {out['unsupported_beliefs']} of {out['returned_beliefs']}")
    print(f"seconds: build {out['seconds']['build']}, questions {out['seconds']['questions']}")
    for r in out["wrong"]:
        print(f"  wrong ({r['kind']}, {r['about']}): {r['question']} -> {r['answer']!r} (expected {r['expect']!r})")
    for r in out.get("rows", []):
        print(f"  {'ok ' if r['right'] else 'no '} {r['question']} -> {r['answer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
