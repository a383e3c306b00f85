"""Documents as memory: do `recall` and offline `ask` answer a team's handbook, runbook, design note and meeting notes,
and four documents of other kinds (a lab's procedures manual, a product's help centre, an architecture decision record,
a makerspace's members' guide)?

    .venv/bin/python benchmarks/documents.py [--data benchmarks/data/documents] [--html] [--split dev|test]
        [--limit N] [--only DOC,DOC] [--json] [--show]

The data (``benchmarks/data/documents/``, written for this benchmark about an invented company; see its
README.md) holds eight Markdown documents (the runbook also as hand-written HTML) and questions in
``questions.jsonl``, each with acceptable answers and the evidence passages (section and exact sentence, list
item or table row) that answer it; a two-hop question needs two passages, often from two documents.

Every document is ingested into one fresh repository through the porcelain (``MemoryRepo.ingest``, offline,
one fixed mention time); with ``--html`` the runbook is ingested from ``runbook.html`` instead. Then for each
question ``recall`` and offline ``ask`` run.

Evidence recall@k: a question's share of gold passages found in the first k records ``recall`` returns (its
fused ``records``, what ``ask`` reads). A passage is found by a record when the record's text holds it, or
when a source part the record cites holds it (the part a citation ``src-...#anchor`` names, read from the
source; a citation without an anchor stands for the whole source). Holding is compared on words: case,
accents, punctuation, Markdown and HTML markup are ignored, and a table row is held when each of its cells is
(a writer may render a row as "System: pg-main, Region: ..."). So the matching works for a document kept as one
record and for one split into parts with positions (``src-...#handbook/People:2``) alike. Beside it, the same
figure over the typed resource rows ``recall`` returns apart from its records (``typed``): a resource record
keeps a whole document, so it holds every passage of its document; this shows the resource path, not whether
the right passage was found. And ``cited``: the share of gold passages held by the records ``ask``'s answer cites
(matched the same way), whichever of its recalls found them: a two-hop answer that rests on both passages cites
both. It is no recall figure (an answer cites one or two records, not ten) and does not stand in for R@k.

Answer accuracy: ``ask``'s answer holds one of the acceptable answers, after normalising both (case, accents,
punctuation, thousands separators, leading zeros, number words such as "five" or "twenty-one" as digits),
compared as whole words in order; a terse answer that is part of an acceptable one counts when it keeps all
its numbers ("5" for "5 nodes", not "1.4" for "1.4 million") or, without numbers, half its words ("Samir" for
"Samir Haddad"). Figures are printed for one-hop and two-hop questions apart, overall and per
document. Offline: no model endpoint is read, nothing goes to the network.

Dev and test halves, split by document: dev is the handbook, the runbook, the lab manual, the help centre and the
decision record (the last three written later so that rules are learnt on more than one team's two documents),
test the design note and the meeting notes. A question whose passages span both halves counts with the document of its first passage. Rules are tuned
by looking at dev misses only; the test rows are the honest figure. ``--split dev|test`` asks one half's questions
only (every document is still ingested, so a question sees the same repository either way). ``--only
handbook,runbook`` ingests and asks only the documents named (a question goes when one of its passages is elsewhere).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import jsonl  # noqa: E402  (the one reader of the evaluation sets' JSONL files)

DATA = HERE / "data" / "documents"
DOCUMENTS = {"handbook": "handbook.md", "runbook": "runbook.md", "design-herald-v2": "design-herald-v2.md",
             "meetings": "meetings.md", "lab-manual": "lab-manual.md", "cargo-faq": "cargo-faq.md",
             "adr-0007": "adr-0007.md", "makerspace": "makerspace.md"}
HTML_DOCUMENTS = {"runbook": "runbook.html"}
#: The half each document's questions belong to (a question goes with the document of its first passage).
HALVES = {"handbook": "dev", "runbook": "dev", "design-herald-v2": "test", "meetings": "test", "lab-manual": "dev",
          "cargo-faq": "dev", "adr-0007": "dev", "makerspace": "test"}
MENTION_TIME = "2026-03-20T12:00:00+00:00"
KS = (5, 10)
FIELDS = ("id", "doc", "question", "answers", "evidence", "hops")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS = {**{w: n for n, w in enumerate(_UNITS)}, **_TENS}
_MAGNITUDES = frozenset({"hundred", "thousand", "million", "billion"})
_TAG_RE = re.compile(r"<[^>]+>")
_WORD_RE = re.compile(r"[a-z0-9]+")


# --- normalising and matching ----------------------------------------------------------------


def words(text: str) -> list[str]:
    """The words of ``text``: HTML entities and tags dropped, accents stripped, lowercase, split at anything
    that is not a letter or digit; "9,500" is one number, "02" is "2" and "%" is "percent"."""
    text = _TAG_RE.sub(" ", html.unescape(text))
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = text.replace("%", " percent ")
    return [w.lstrip("0") or "0" if w.isdigit() else w for w in _WORD_RE.findall(text)]


def number_words(tokens: list[str]) -> list[str]:
    """Number words as digits: "five" -> "5", "twenty one" -> "21" (a hyphen splits words before this)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in _TENS and i + 1 < len(tokens) and tokens[i + 1] in NUMBER_WORDS and NUMBER_WORDS[tokens[i + 1]] < 10:
            out.append(str(_TENS[t] + NUMBER_WORDS[tokens[i + 1]]))
            i += 2
            continue
        out.append(str(NUMBER_WORDS[t]) if t in NUMBER_WORDS else t)
        i += 1
    return out


def holds(hay: list[str], needle: list[str]) -> bool:
    """Whether ``needle`` occurs in ``hay`` as consecutive whole words."""
    if not needle:
        return False
    n = len(needle)
    first = needle[0]
    return any(hay[i:i + n] == needle for i, w in enumerate(hay) if w == first)


def passage_held(text: str, passage: str) -> bool:
    """Whether ``text`` holds the gold ``passage`` (a table row ``a | b | c``: each of its cells)."""
    hay = words(text)
    if " | " in passage:
        return all(holds(hay, words(cell)) for cell in passage.split(" | ") if words(cell))
    return holds(hay, words(passage))


def answer_correct(answer: str, acceptable: Iterable[str]) -> bool:
    """Whether ``answer`` holds one of the ``acceptable`` answers once both are normalised, or is a terse form
    of one: a run of its words that keeps every number of it ("5" for "5 nodes", "5 minutes" for "within 5
    minutes", but not "once" for "once every 6 hours" nor "1.4" for "1.4 million") and, when it has none, at
    least half of its words ("Samir" for "Samir Haddad", not "Monday" for "Monday to Thursday")."""
    got = number_words(words(answer))
    for a in acceptable:
        want = number_words(words(a))
        if holds(got, want):
            return True
        if holds(want, got):
            numbers = [w for w in want if w.isdigit() or w in _MAGNITUDES]
            if numbers and all(w in got for w in numbers) or not numbers and 2 * len(got) >= len(want):
                return True
    return False


# --- the data --------------------------------------------------------------------------------


def sections(markdown: str) -> dict[str, list[str]]:
    """The blocks of a Markdown document by heading path (headings below the title joined with " > "; text
    under the title itself is under the title): paragraphs (their lines joined), list items without their
    marker, and table rows as their cells joined with " | " (the separator row left out)."""
    out: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    title = ""
    path = ""
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.setdefault(path, []).append(" ".join(paragraph))
            paragraph.clear()

    for line in markdown.split("\n"):
        stripped = line.strip()
        heading = re.match(r"(#+)\s+(.*)", stripped)
        if heading:
            flush()
            level, name = len(heading.group(1)), heading.group(2).strip()
            if level == 1:
                title, stack = name, []
                path = title
                continue
            stack = [(lvl, n) for lvl, n in stack if lvl < level] + [(level, name)]
            path = " > ".join(n for _, n in stack)
            continue
        if not stripped:
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                out.setdefault(path, []).append(" | ".join(cells))
            continue
        item = re.match(r"(?:[-*+]|\d+\.)\s+(.*)", stripped)
        if item:
            flush()
            out.setdefault(path, []).append(item.group(1))
            continue
        if paragraph or not out.get(path) or not line.startswith(" "):
            paragraph.append(stripped)
        else:  # a list item's continuation line
            out[path][-1] += " " + stripped
    flush()
    return out


def load_questions(path: Path, documents: dict[str, str]) -> list[dict[str, Any]]:
    """The questions of ``path`` (JSONL), each checked for its fields.

    Raises:
        SystemExit: a line is not JSON or lacks a field, a question names an unknown document.
    """
    out = []
    for lineno, item in jsonl.rows(path, FIELDS):
        for doc in [item["doc"], *(e.get("doc", item["doc"]) for e in item["evidence"])]:
            if doc not in documents:
                raise SystemExit(f"{path}: line {lineno} names document {doc!r}, not one of {', '.join(documents)}")
        out.append(item)
    return out


def half_of(q: dict[str, Any]) -> str:
    """The half ("dev" or "test") of a question: that of the document of its first evidence passage."""
    first = q["evidence"][0].get("doc", q["doc"]) if q["evidence"] else q["doc"]
    return HALVES.get(first, "test")


# --- memrepo ---------------------------------------------------------------------------------


def build(root: Path, files: list[Path]) -> Any:
    """A fresh repository at ``root`` holding every file, ingested through the porcelain (offline)."""
    from memrepo.api import MemoryRepo

    repo = MemoryRepo.init(root)
    repo.ingest(files, mention_time=MENTION_TIME)
    repo.index_graph()  # catch-up: a no-op when ingestion already indexed every record
    return repo


class Passages:
    """The texts a returned row stands for: its own text, and the text of each source part it cites."""

    def __init__(self, repo: Any):
        self.repo = repo
        self.sources: dict[str, Any] = {}

    def _source(self, source_id: str) -> Any:
        if source_id not in self.sources:
            try:
                self.sources[source_id] = self.repo.source(source_id)
            except Exception:  # a citation naming no readable source holds nothing
                self.sources[source_id] = None
        return self.sources[source_id]

    def cited(self, citations: Iterable[str]) -> list[str]:
        out = []
        for citation in citations:
            source_id, _, anchor = citation.partition("#")
            source = self._source(source_id)
            if source is None:
                continue
            if not anchor:
                out.append("\n".join(p.text for p in source.parts))
                continue
            part = source.part(anchor)
            if part is not None:
                out.append(part.text)
        return out

    def of_row(self, row: Any) -> tuple[list[str], list[str]]:
        """(the row's own texts, the texts of the parts it cites)."""
        citations = list(row.sources)
        own = [row.text, row.summary]
        if not citations and row.lane in ("resource", "procedural"):  # a typed row carries a snippet only
            try:
                record = self.repo.get(row.id)
            except Exception:
                record = None
            if record is not None:
                own.append(record.text)
                citations = list(record.sources)
        return own, self.cited(citations)


    def of_ids(self, ids: Iterable[str]) -> list[tuple[list[str], list[str]]]:
        """The texts of the records ``ids`` (an answer's citations) and of the parts they cite."""
        out = []
        for record_id in ids:
            try:
                record = self.repo.get(record_id)
            except Exception:  # an id that names no record holds nothing
                continue
            out.append(([record.text], self.cited(record.sources)))
        return out


def found_by(rows: list[tuple[list[str], list[str]]], passage: str) -> str | None:
    """How the first of ``rows`` that holds ``passage`` holds it ("text" or "citation"), or None."""
    for own, cited in rows:
        if any(passage_held(t, passage) for t in own if t):
            return "text"
        if any(passage_held(t, passage) for t in cited):
            return "citation"
    return None


def score(q: dict[str, Any], rows: list[tuple[list[str], list[str]]], typed: list[tuple[list[str], list[str]]],
          answer: str, cited: list[tuple[list[str], list[str]]] | None = None) -> dict[str, Any]:
    """One question's evidence recall at each k (records, and typed rows), how passages were found, and the answer."""
    row: dict[str, Any] = {"id": q["id"], "doc": q["doc"], "half": half_of(q), "hops": q["hops"], "question": q["question"],
                           "answers": q["answers"], "answer": answer, "right": answer_correct(answer, q["answers"])}
    evidence = [e["text"] for e in q["evidence"]]
    for k in KS:
        hits = [found_by(rows[:k], p) for p in evidence]
        row[f"R@{k}"] = sum(h is not None for h in hits) / len(evidence)
        row[f"found@{k}"] = hits
        row[f"typed R@{k}"] = sum(found_by(typed[:k], p) is not None for p in evidence) / len(evidence)
    row["cited"] = sum(found_by(cited or [], p) is not None for p in evidence) / len(evidence)
    return row


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {"questions": n}
    if not n:
        return out
    for k in KS:
        out[f"R@{k}"] = round(100 * sum(r[f"R@{k}"] for r in rows) / n, 1)
        out[f"typed R@{k}"] = round(100 * sum(r[f"typed R@{k}"] for r in rows) / n, 1)
    out["all@10"] = round(100 * sum(r["R@10"] == 1 for r in rows) / n, 1)  # every passage of the question found
    out["cited"] = round(100 * sum(r["cited"] for r in rows) / n, 1)  # passages held by the records ask cites
    out["answer accuracy"] = round(100 * sum(r["right"] for r in rows) / n, 1)
    out["not in memory"] = sum("not in memory" in r["answer"].lower() for r in rows)
    return out


def run(data: Path = DATA, *, documents: dict[str, str] | None = None, html_runbook: bool = False,
        limit: int | None = None, split: str | None = None, progress: bool = False) -> dict[str, Any]:
    """Ingest the documents of ``data`` into a fresh repository, ask every question, and score it.

    Args:
        documents: document id -> file name in ``data`` (default :data:`DOCUMENTS`); only the questions whose
            passages are all in these documents are asked.
        html_runbook: ingest the runbook from its HTML file instead.
        limit: only the first questions.
        split: only the questions of one half, "dev" or "test" (see :func:`half_of`).
        progress: report on stderr.
    """
    documents = dict(documents or DOCUMENTS)
    if html_runbook:
        documents.update({doc: name for doc, name in HTML_DOCUMENTS.items() if doc in documents})
    questions = [q for q in load_questions(data / "questions.jsonl", {**DOCUMENTS, **documents})
                 if all(doc in documents for doc in [q["doc"], *(e.get("doc", q["doc"]) for e in q["evidence"])])]
    if split:
        questions = [q for q in questions if half_of(q) == split]
    if limit:
        questions = questions[:limit]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memrepo-documents-") as tmp:
        start = time.perf_counter()
        repo = build(Path(tmp) / "memory", [data / name for name in documents.values()])
        built = time.perf_counter() - start
        counts = {t: len(repo.records(t)) for t in ("semantic", "episodic", "procedural", "resource")}
        if progress:
            print(f"ingested {len(documents)} documents in {built:.1f} s: "
                  f"{', '.join(f'{n} {t}' for t, n in counts.items())}", file=sys.stderr)
        passages = Passages(repo)
        start = time.perf_counter()
        for i, q in enumerate(questions, 1):
            result = repo.recall(q["question"])
            asked = repo.ask(q["question"])
            rows.append(score(q, [passages.of_row(r) for r in result.records],
                              [passages.of_row(r) for r in result.typed], asked.answer,
                              passages.of_ids(asked.record_ids)))
            rows[-1]["records"] = len(result.records)
            if progress and (i % 10 == 0 or i == len(questions)):
                print(f"{i}/{len(questions)} questions", file=sys.stderr)
        asked = time.perf_counter() - start
        repo.close()
    found = [h for r in rows for h in r["found@10"] if h]
    out: dict[str, Any] = {
        "documents": {doc: name for doc, name in documents.items()},
        "records": counts,
        "overall": summarise(rows),
        "one-hop": summarise([r for r in rows if r["hops"] == 1]),
        "two-hop": summarise([r for r in rows if r["hops"] == 2]),
        "by half": {f"{half} {hops}": summarise([r for r in rows if r["half"] == half
                                                  and (hops == "all" or r["hops"] == int(hops[0]))])
                    for half in ("dev", "test") for hops in ("1-hop", "2-hop", "all")},
        "by document": {doc: summarise([r for r in rows if r["doc"] == doc]) for doc in documents},
        "found@10 by": {how: found.count(how) for how in ("text", "citation")},
        "records returned": round(sum(r["records"] for r in rows) / max(1, len(rows)), 1),
        "seconds": {"ingest": round(built, 1), "questions": round(asked, 1)},
        "rows": rows,
    }
    return out


def render(out: dict[str, Any], show: bool) -> str:
    lines = [f"{out['overall']['questions']} questions over {len(out['documents'])} documents "
             f"({', '.join(out['documents'].values())}), offline"]
    lines.append("records written: " + ", ".join(f"{n} {t}" for t, n in out["records"].items()))
    lines.append(f"{'':18} {'questions':>9} {'R@5':>6} {'R@10':>6} {'all@10':>7} {'cited':>6} {'answer':>7} "
                 f"{'not in memory':>14} "
                 f"{'typed R@5':>10} {'typed R@10':>11}")
    groups = [("one-hop", out["one-hop"]), ("two-hop", out["two-hop"]), ("overall", out["overall"])]
    groups += [(f"  {name}", s) for name, s in out["by half"].items()]
    groups += [(f"  {doc}", s) for doc, s in out["by document"].items()]
    for name, s in groups:
        if not s["questions"]:
            continue
        lines.append(f"{name:18} {s['questions']:>9} {s['R@5']:>6} {s['R@10']:>6} {s['all@10']:>7} {s['cited']:>6} "
                     f"{s['answer accuracy']:>7} "
                     f"{s['not in memory']:>14} {s['typed R@5']:>10} {s['typed R@10']:>11}")
    lines.append(f"(percentages; R@k over the records recall returns, {out['records returned']} per question on "
                 f"average, all@10 the questions with every passage in the top 10; cited the passages held by the "
                 f"records ask's answer cites, over all its recalls; passages found in the top 10 by "
                 f"the record's text {out['found@10 by']['text']}, "
                 f"by a cited part {out['found@10 by']['citation']}; typed R@k over resource rows, a whole "
                 f"document each)")
    lines.append(f"seconds: ingest {out['seconds']['ingest']}, questions {out['seconds']['questions']}")
    for r in out["rows"]:
        if show or not r["right"] and r["answer"] and "not in memory" not in r["answer"].lower():
            mark = "ok " if r["right"] else "no "
            lines.append(f"  {mark}{r['id']} ({r['half']}, {r['hops']}-hop) {r['question']} -> {r['answer']!r} "
                         f"(expected {r['answers'][0]!r})")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of documents and questions.jsonl")
    parser.add_argument("--html", action="store_true", help="ingest the runbook from runbook.html instead of Markdown")
    parser.add_argument("--split", choices=("dev", "test"), help="only the questions of one half (by document)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--only", help="ingest and ask only these documents (ids joined with commas)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--show", action="store_true", help="list every question with its answer")
    args = parser.parse_args()
    only = args.only.split(",") if args.only else list(DOCUMENTS)
    unknown = [doc for doc in only if doc not in DOCUMENTS]
    if unknown:
        parser.error(f"--only: unknown documents {', '.join(unknown)} (known: {', '.join(DOCUMENTS)})")
    out = run(args.data, documents={doc: DOCUMENTS[doc] for doc in only}, html_runbook=args.html, limit=args.limit,
              split=args.split, progress=True)
    if args.json:
        if not args.show:
            out.pop("rows")
        print(json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False))
        return 0
    print(render(out, args.show))
    return 0


if __name__ == "__main__":
    sys.exit(main())
