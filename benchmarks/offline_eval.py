"""Offline evaluation (issue 31): recall, answers, router and extractor on text written for it, by kind of input.

    .venv/bin/python benchmarks/offline_eval.py [--data benchmarks/data/offline_eval] [--kind chat] [--split dev]
        [--limit N] [--json] [--show]

The data (``benchmarks/data/offline_eval/``, its README describes the format) holds twenty inputs of four kinds
(personal chat, team notes, meeting notes, agent task sessions) with questions, router passages and extraction
sentences labelled for them. Without a model: ``environ`` is empty, so the offline backend runs every role.

- Evidence recall@10: each input is ingested once into a fresh repository (``MemoryRepo.init`` and ``ingest``, undated
  input dated 2026-12-01); each of its questions is recalled. A question's evidence sentence is found when one of the
  first 10 returned rows (the fused records, then the typed rows: resource documents and skills, then core blocks)
  holds it in its text or in a source passage it cites, compared lower-cased with runs of white space as one space.
- Answer accuracy: ``MemoryRepo.ask`` with the offline answerer. Right when one acceptable answer occurs in the answer
  as whole words after normalising both (case, NFKC, thousands separators, punctuation, number words to digits);
  answers that are "Not in memory." are counted apart too.
- Router accuracy: ``memrepo.write.writers.route`` with the offline backend on each labelled passage, built as one
  window of a source of the passage's kind; its types restricted to episodic, semantic and procedural (core, vault
  and resource are not labelled) against the gold set: exact set match, and precision and recall per type.
- Extraction precision and recall: the anchors ``memrepo.graph.extract.extract_memory`` gives each sentence as an
  episodic record (offline rules, no registry) against the gold entity names, both normalised (case, punctuation,
  a leading article, a plural s).

Each figure is given per kind, per split (dev and test: split by input file for questions, by id for the
labelled passages) and overall. The entry points are imported inside the functions that use them; when one has
moved, that part is reported as skipped with the reason and the others still run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import jsonl  # noqa: E402  (the one reader of the evaluation sets' JSONL files)

DATA = HERE / "data" / "offline_eval"
KINDS = ("chat", "notes", "meetings", "tasks")
SPLITS = ("dev", "test")
TOP_K = 10
ROUTED_TYPES = ("episodic", "semantic", "procedural")
MENTION_TIME = "2026-12-01"  # for undated inputs (documents), so that runs do not depend on file times
NOT_IN_MEMORY = "not in memory"
FIELDS = {
    "questions": ("id", "kind", "input", "question", "answers", "evidence", "split"),
    "router": ("id", "kind", "source", "text", "types", "split"),
    "extraction": ("id", "kind", "sentence", "entities", "split"),
}
FILES = {"questions": "questions.jsonl", "router": "router.jsonl", "extraction": "extraction.jsonl"}
SOURCE_KINDS = ("conversation", "document", "task")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {w: str(i) for i, w in enumerate(_UNITS)} | {w: str(20 + 10 * i) for i, w in enumerate(_TENS)}
_NUMBER_WORD_RE = re.compile(r"\b(?:(%s)[- ](%s)|(%s))\b" % ("|".join(_TENS), "|".join(_UNITS[1:10]),
                                                            "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))))
_SPEAKER_LINE_RE = re.compile(r"^([^:\n]{1,40}):\s+(.+)$")


class Unavailable(Exception):
    """An entry point of memrepo this evaluation calls is not where it was (the code moved under it)."""


# --- data ------------------------------------------------------------------------------------


def load_jsonl(path: Path, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """The objects of a JSONL file, each checked to have ``fields``; a bad line ends the run naming file and line."""
    out = []
    for lineno, row in jsonl.rows(path, fields, DATA / "README.md"):
        if row["kind"] not in KINDS or row["split"] not in SPLITS:
            raise SystemExit(f"{path}: line {lineno}: kind must be one of {', '.join(KINDS)} and split dev or test")
        out.append(row)
    return out


def load(data: Path) -> dict[str, list[dict[str, Any]]]:
    """Questions, router passages and extraction sentences of the set in ``data``."""
    out = {name: load_jsonl(data / FILES[name], FIELDS[name]) for name in FILES}
    for q in out["questions"]:
        if not (data / "inputs" / q["input"]).is_file():
            raise SystemExit(f"{data / FILES['questions']}: {q['id']}: input {q['input']!r} is not in {data / 'inputs'}")
    for r in out["router"]:
        if r["source"] not in SOURCE_KINDS or not set(r["types"]) <= set(ROUTED_TYPES):
            raise SystemExit(f"{data / FILES['router']}: {r['id']}: source must be one of {', '.join(SOURCE_KINDS)}, "
                             f"types among {', '.join(ROUTED_TYPES)}")
    return out


def select(rows: list[dict[str, Any]], kind: str | None, split: str | None, limit: int | None) -> list[dict[str, Any]]:
    """Rows of ``kind`` and ``split`` (None: all), at most ``limit`` of each kind, in file order."""
    out: list[dict[str, Any]] = []
    per_kind: dict[str, int] = defaultdict(int)
    for row in rows:
        if (kind and row["kind"] != kind) or (split and row["split"] != split):
            continue
        if limit is not None and per_kind[row["kind"]] >= limit:
            continue
        per_kind[row["kind"]] += 1
        out.append(row)
    return out


# --- normalisation -----------------------------------------------------------------------------


def squash(text: str) -> str:
    """Lower-cased, with curly quotes straightened and runs of white space as one space (evidence matching)."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.lower().split())


def normalise_answer(text: str) -> str:
    """Case, NFKC, number words as digits, thousands separators and punctuation gone; padded with spaces so that a
    whole-word test is a substring test ("2 shelves" is not in "12 shelves")."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")

    def digits(m: re.Match[str]) -> str:
        if m.group(3):
            return NUMBER_WORDS[m.group(3)]
        return str(int(NUMBER_WORDS[m.group(1)]) + int(NUMBER_WORDS[m.group(2)]))

    text = _NUMBER_WORD_RE.sub(digits, text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"[^\w:.%€$£]+", " ", text)
    text = re.sub(r"(?<!\d)[.:]|[.:](?!\d)", " ", text)  # keep 02:30 and 1.0642, drop sentence punctuation
    text = re.sub(r"([%€$£])", r" \1 ", text)
    return " " + " ".join(text.split()) + " "


def answer_right(answer: str, acceptable: Iterable[str]) -> bool:
    said = normalise_answer(answer)
    return any(normalise_answer(a).strip() and normalise_answer(a) in said for a in acceptable)


def declined(answer: str) -> bool:
    return squash(answer).rstrip(".").startswith(NOT_IN_MEMORY)


def normalise_name(name: str) -> str:
    """An entity name compared: case, punctuation, a leading article and a plural s on the last word do not count."""
    words = re.sub(r"[^\w/#.-]+", " ", unicodedata.normalize("NFKC", name).lower().replace("’", "'")).split()
    words = [w.strip(".-") for w in words if w.strip(".-")]
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


# --- entry points (imported late: the code under them is being restructured) ---------------------


def entry(candidates: Iterable[str], what: str) -> Any:
    """The first importable ``module:attr`` of ``candidates``.

    Raises:
        Unavailable: naming what was looked for and why each place failed.
    """
    import importlib

    reasons = []
    for spec in candidates:
        module, _, attr = spec.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            reasons.append(f"{spec} ({exc})")
    raise Unavailable(f"{what}: not found at {'; '.join(reasons)}")


def memory_repo() -> Any:
    try:
        return entry(["memrepo.api:MemoryRepo"], "the porcelain")
    except Unavailable as exc:
        raise SystemExit(f"offline_eval: {exc}") from exc


# --- recall and answers ----------------------------------------------------------------------------


def ingest_input(path: Path, folder: Path) -> Any:
    """A fresh memory repository in ``folder`` holding the one input at ``path``, open, offline."""
    MemoryRepo = memory_repo()
    MemoryRepo.init(folder).close()
    repo = MemoryRepo.open(folder, environ={})
    repo.ingest([path], mention_time=MENTION_TIME)
    return repo


def returned_rows(result: Any) -> list[Any]:
    """What a recall returned, best first: the fused records, then the typed rows, then core blocks; no repeats."""
    out, seen = [], set()
    for lane in ("records", "typed", "core"):
        for row in getattr(result, lane, None) or []:
            if row.id not in seen:
                seen.add(row.id)
                out.append(row)
    return out


def row_texts(repo: Any, row: Any) -> list[str]:
    """The texts a returned row holds: its text (a typed row's is a snippet with the terms in ``**``), the whole
    record as the repository has it, and every source passage the row or the record cites."""
    texts = [str(getattr(row, "text", "") or "").replace("**", "")]
    for part in getattr(row, "parts", None) or []:
        if isinstance(part, dict) and part.get("text"):
            texts.append(str(part["text"]))
    from memrepo.errors import MemrepoError

    try:
        record = repo.get(row.id)
    except MemrepoError:  # a row the view cannot load (gone since, say): its own text stands
        return texts
    texts.append(record.text)
    texts += [text for _, _, text in repo.cited_parts(record) if text]
    return texts


def evidence_rank(repo: Any, rows: list[Any], evidence: str) -> int | None:
    """1-based rank of the first of ``rows`` holding ``evidence`` (in its text or a cited passage), or None."""
    want = squash(evidence)
    for rank, row in enumerate(rows, 1):
        if any(want in squash(t) for t in row_texts(repo, row)):
            return rank
    return None


def missed(q: dict[str, Any], error: str) -> dict[str, Any]:
    """A question's row with nothing found and nothing answered (``error``: why, if something failed)."""
    return {"id": q["id"], "kind": q["kind"], "split": q["split"], "input": q["input"], "question": q["question"],
            "answers": q["answers"], "error": error, "rank": None, "found": False, "answer": "", "right": False,
            "declined": False}


def called(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; a call the entry point no longer accepts (its signature changed) is Unavailable."""
    try:
        return fn(*args, **kwargs)
    except TypeError as exc:
        if "argument" not in str(exc):
            raise
        raise Unavailable(f"{what}: {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)} "
                          f"no longer takes this call ({exc})") from exc


def run_questions(data: Path, questions: list[dict[str, Any]], progress: bool) -> list[dict[str, Any]]:
    """Each question recalled and asked; one repository per input, ingested once."""
    from memrepo.errors import MemrepoError

    by_input: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_input[q["input"]].append(q)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memrepo-offline-eval-") as tmp:
        for n, (name, qs) in enumerate(by_input.items(), 1):
            start = time.perf_counter()
            try:
                repo = ingest_input(data / "inputs" / name, Path(tmp) / f"r{n}")
            except MemrepoError as exc:  # an input the code under test refuses: its questions count as missed
                print(f"{name}: not ingested: {exc}", file=sys.stderr)
                out += [missed(q, f"not ingested: {exc}") for q in qs]
                continue
            if progress:
                print(f"{name}: ingested in {time.perf_counter() - start:.1f} s; {len(qs)} questions", file=sys.stderr)
            try:
                for q in qs:
                    row = missed(q, "")
                    try:
                        rank = evidence_rank(repo, returned_rows(repo.recall(q["question"]))[:TOP_K], q["evidence"])
                        answer = repo.ask(q["question"]).answer
                    except MemrepoError as exc:  # counted wrong and reported, so one failure does not end the run
                        print(f"  {q['id']} {q['question']!r}: {exc}", file=sys.stderr)
                        out.append(missed(q, str(exc)))
                        continue
                    row.update(rank=rank, found=rank is not None, answer=answer,
                               right=answer_right(answer, q["answers"]), declined=declined(answer))
                    out.append(row)
            finally:
                repo.close()
    return out


# --- the router -------------------------------------------------------------------------------------


def passage_parts(text: str, source: str) -> list[Any]:
    """The source parts a labelled passage becomes: one turn per ``Name: text`` line, one chunk, or one user
    message of a task session."""
    from memrepo.records import SourcePart

    if source == "conversation":
        parts: list[Any] = []
        for line in (ln for ln in text.split("\n") if ln.strip()):
            m = _SPEAKER_LINE_RE.match(line)
            speaker, said = (m.group(1).strip(), m.group(2)) if m else ("", line)
            parts.append(SourcePart(f"D1:{len(parts) + 1}", said, {"speaker": speaker} if speaker else {}))
        return parts
    if source == "document":
        return [SourcePart("c0", text, {"start": 0, "end": len(text)})]
    return [SourcePart("t1", text, {"role": "user", "speaker": "user"})]


def run_router(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The offline router's types for each labelled passage."""
    route = entry(["memrepo.write.writers:route", "memrepo.write.route:route", "memrepo.write.router:route"],
                  "the router")
    Window = entry(["memrepo.write.writers:Window", "memrepo.write.windows:Window"], "the router's Window")
    order = entry(["memrepo.write.writers:WRITER_ORDER"], "the writer types")
    Source = entry(["memrepo.records:Source"], "Source")
    backend = offline_backend()
    allowed = tuple(t for t in order if t != "resource")
    out: list[dict[str, Any]] = []
    try:
        for item in items:
            digest = hashlib.sha256(item["id"].encode()).hexdigest()[:8]
            source = Source(id=f"src-2026-12-01-{digest}", kind=item["source"],
                            mention_time=MENTION_TIME, parts=tuple(passage_parts(item["text"], item["source"])),
                            title=f"{item['kind']} passage", origin=item["id"])
            window = called("the router's Window", Window, source, list(source.parts))
            got = [t for t in called("the router", route, backend, window, allowed) if t in ROUTED_TYPES]
            out.append({"id": item["id"], "kind": item["kind"], "split": item["split"], "text": item["text"],
                        "gold": sorted(item["types"]), "got": sorted(set(got)),
                        "right": set(got) == set(item["types"])})
    finally:
        backend.close()
    return out


def offline_backend() -> Any:
    OfflineBackend = entry(["memrepo.llm:OfflineBackend", "memrepo.llm.backend:OfflineBackend"], "the offline backend")
    Settings = entry(["memrepo.settings:Settings"], "Settings")
    return OfflineBackend(Settings(), None)


# --- the extractor -----------------------------------------------------------------------------------


def run_extraction(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The anchors the offline extractor gives each labelled sentence, matched against the gold names."""
    extract = entry(["memrepo.graph.extract:extract_memory"], "the extractor")
    Record = entry(["memrepo.records:Record"], "Record")
    out: list[dict[str, Any]] = []
    for n, item in enumerate(items, 1):
        record = Record(id=f"ep-2026-12-01-{n:08x}", type="episodic", text=item["sentence"], mention_time=MENTION_TIME)
        graph = called("the extractor", extract, record, namespace="default")
        names = list(dict.fromkeys(str(a.name) for a in graph.anchors))
        gold = {normalise_name(e) for e in item["entities"]}
        got = {normalise_name(n) for n in names}
        out.append({"id": item["id"], "kind": item["kind"], "split": item["split"], "sentence": item["sentence"],
                    "gold": item["entities"], "got": names, "matched": len(got & gold), "n_got": len(got),
                    "n_gold": len(gold)})
    return out


# --- figures -------------------------------------------------------------------------------------


def pct(part: float, whole: float) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def groups(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows by "kind/split", "kind", "split" and "overall"."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for key in (f"{row['kind']}/{row['split']}", row["kind"], row["split"], "overall"):
            out[key].append(row)
    return out


def summarise(questions: list[dict[str, Any]], router: list[dict[str, Any]] | None,
              extraction: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Per group: questions, evidence R@10, answer accuracy, declined share, router accuracy, extraction P/R."""
    keys = [*(key for k in KINDS for key in (k, *(f"{k}/{s}" for s in SPLITS))), *SPLITS, "overall"]
    q, r, x = groups(questions), groups(router or []), groups(extraction or [])
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        qs, rs, xs = q.get(key, []), r.get(key, []), x.get(key, [])
        if not (qs or rs or xs):
            continue
        row: dict[str, Any] = {
            "questions": len(qs),
            "evidence_r10": pct(sum(v["found"] for v in qs), len(qs)),
            "answer_accuracy": pct(sum(v["right"] for v in qs), len(qs)),
            "not_in_memory": pct(sum(v["declined"] for v in qs), len(qs)),
            "errors": sum(bool(v["error"]) for v in qs),
        }
        if router is not None:
            row["router"] = {"n": len(rs), "accuracy": pct(sum(v["right"] for v in rs), len(rs)),
                             "per_type": per_type(rs)}
        if extraction is not None:
            row["extraction"] = {"n": len(xs), "precision": pct(sum(v["matched"] for v in xs), sum(v["n_got"] for v in xs)),
                                 "recall": pct(sum(v["matched"] for v in xs), sum(v["n_gold"] for v in xs))}
        out[key] = row
    return out


def per_type(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for t in ROUTED_TYPES:
        tp = sum(t in v["got"] and t in v["gold"] for v in rows)
        got = sum(t in v["got"] for v in rows)
        gold = sum(t in v["gold"] for v in rows)
        out[t] = {"precision": pct(tp, got), "recall": pct(tp, gold), "gold": gold}
    return out


def run(data: Path, kind: str | None = None, split: str | None = None, limit: int | None = None,
        progress: bool = True) -> dict[str, Any]:
    """Every figure of the set in ``data``, filtered by ``kind``, ``split`` and ``limit`` (per kind)."""
    sets = load(data)
    questions = select(sets["questions"], kind, split, limit)
    report: dict[str, Any] = {"data": str(data), "filters": {"kind": kind, "split": split, "limit": limit},
                              "skipped": {}}
    start = time.perf_counter()
    rows = run_questions(data, questions, progress)
    report["seconds"] = {"questions": round(time.perf_counter() - start, 1)}
    router = extraction = None
    for name, fn in (("router", run_router), ("extraction", run_extraction)):
        items = select(sets[name], kind, split, limit)
        start = time.perf_counter()
        try:
            result = fn(items)
        except Unavailable as exc:
            report["skipped"][name] = str(exc)
            if progress:
                print(f"{name}: skipped: {exc}", file=sys.stderr)
            continue
        report["seconds"][name] = round(time.perf_counter() - start, 1)
        if name == "router":
            router = result
        else:
            extraction = result
    report["figures"] = summarise(rows, router, extraction)
    report["questions"] = rows
    report["router"] = router or []
    report["extraction"] = extraction or []
    return report


# --- output ---------------------------------------------------------------------------------------


def fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)


def table(figures: dict[str, dict[str, Any]]) -> list[str]:
    head = f"{'':16} {'qs':>4} {'R@10':>6} {'answer':>7} {'NiM':>6} {'router':>7} {'(n)':>4} {'ext P':>6} {'ext R':>6} {'(n)':>4}"
    lines = [head, "-" * len(head)]
    for key, row in figures.items():
        router, ext = row.get("router") or {}, row.get("extraction") or {}
        lines.append(f"{key:16} {row['questions']:>4} {fmt(row['evidence_r10']):>6} {fmt(row['answer_accuracy']):>7} "
                     f"{fmt(row['not_in_memory']):>6} {fmt(router.get('accuracy')):>7} {fmt(router.get('n')):>4} "
                     f"{fmt(ext.get('precision')):>6} {fmt(ext.get('recall')):>6} {fmt(ext.get('n')):>4}")
    return lines


def render(report: dict[str, Any], show: bool, write: Callable[[str], None] = print) -> None:
    figures = report["figures"]
    write("offline evaluation (no model): R@10 = evidence recall at 10 rows, answer = answer accuracy, "
          "NiM = answers 'Not in memory.', router = exact type set, ext = extraction precision/recall; all in %")
    for line in table(figures):
        write(line)
    overall = (figures.get("overall") or {}).get("router")
    if overall:
        write("router per type (overall): " + ", ".join(
            f"{t} P {fmt(v['precision'])} R {fmt(v['recall'])} (gold {v['gold']})" for t, v in overall["per_type"].items()))
    for name, reason in report["skipped"].items():
        write(f"{name}: skipped: {reason}")
    write(f"seconds: {', '.join(f'{k} {v}' for k, v in report['seconds'].items())}")
    if not show:
        return
    for q in report["questions"]:
        if not (q["right"] and q["found"]):
            write(f"  {q['id']} [{'R' if q['found'] else '-'}{'A' if q['right'] else '-'}] {q['question']} -> "
                  f"{q['answer']!r} (want {q['answers'][0]!r}; evidence rank {q['rank']})")
    for r in report["router"]:
        if not r["right"]:
            write(f"  {r['id']} router {r['got']} (want {r['gold']}): {r['text']}")
    for x in report["extraction"]:
        if x["matched"] < max(x["n_got"], x["n_gold"]):
            write(f"  {x['id']} anchors {x['got']} (want {x['gold']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the set's folder (questions.jsonl, inputs/, ...)")
    parser.add_argument("--kind", choices=KINDS, help="only this kind of input")
    parser.add_argument("--split", choices=SPLITS, help="only the dev or the test split")
    parser.add_argument("--limit", type=int, help="at most N questions, router passages and sentences per kind")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--show", action="store_true", help="also list each miss (question, router, extraction)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args()
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    report = run(args.data, args.kind, args.split, args.limit, progress=not args.quiet)
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        render(report, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
