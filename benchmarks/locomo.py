"""LoCoMo evidence recall: memrepo recall against BM25 and dense retrieval over single turns.

    .venv/bin/python benchmarks/locomo.py --data ../shared/data/locomo/locomo-dev.json [--json] [--limit N]
        [--conversations conv-26,conv-30] [--corrections FILE]

Each conversation is ingested into its own fresh repository (the offline
backend unless an endpoint is configured in the environment) and its graph is
indexed; every question of categories 1-4 is recalled. Evidence recall is the
share of a question's gold ``dia_id``s cited by the returned records (records
map to turns through their source citations), at 5 and 10 returned records and
at the operator budget (all records memrepo returns). The pool is every record
the recall ranked (the base lane's rows and the rendered facts' cited rows):
per category, the mean share of a question's gold turns in it, and how many
gold turns end in the top 10, in the pool below 10, or not in the pool. The baselines rank the
conversation's single turns written as "<session date> <speaker>: <text>":
BM25 (k1 1.5, b 0.75, the rank-bm25 defaults, lowercase, stopwords removed,
one index per conversation) and cosine over the same embedder memrepo uses.

With ``--answer`` every question is also answered by ``ask`` and scored with
LoCoMo's own token F1 (task_eval/evaluation.py of the LoCoMo repository: the
answer normalised - commas dropped, lowercase, punctuation and the words a, an,
the, and removed - then Porter-stemmed tokens; category 1 answers are split on
commas and each gold part takes its best predicted part; category 3 golds keep
the part before the first ';'). Next to it a baseline answers with the text of
the best BM25 turn. Category 5 (adversarial) follows LoCoMo's convention: an
answer scores 1 when it declines ("no information available", "not mentioned",
or memrepo's "not in memory"), else 0; it is reported apart, not in the overall
F1. Without a model endpoint the answer is memrepo's offline extractive one;
with one, each answer is also graded by an LLM judge (majority of three).

Label noise (../shared/data/locomo/README.md): evidence ids are split on ';'
and spaces, an extra colon and leading zeros are removed, and ids that match
no turn are dropped; a question left with no gold id is not scored.

Corrected labels: with ``--corrections FILE`` (by default ``<data>-corrections.json``
beside the data file, when there is one: rows of ``sample_id``, ``qa_index``,
``question``, ``correct_evidence``, ``correct_answer``) every figure is also
computed against the corrected evidence and answers, and reported next to the
original figures (``corrected``), never instead of them. A row whose question is
not the one at its ``qa_index`` is an error naming the file and the row.

Each R@10 comes with a 95 % Wilson interval over the questions (``R@10_ci95``):
the mean recall taken as the proportion, the number of questions as n.

Any LoCoMo-shaped file runs as a user's data would: a conversation whose turns hold
a credential (a signed image URL with a JSON web token, say) is refused by
ingestion without a vault key, so the benchmark makes a temporary one for that
conversation's repository and ingests again, which seals the secret; the report
names those conversations (``sealed``). The key lives in memory only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
STOPWORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before being below between both "
    "but by can did do does doing down during each few for from further had has have having he her here hers herself "
    "him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only "
    "or other our ours ourselves out over own same she should so some such than that the their theirs them themselves "
    "then there these they this those through to too under until up very was we were what when where which while who "
    "whom why will with you your yours yourself yourselves".split()
)
_TOKEN_RE = re.compile(r"[a-z0-9]+")


# --- gold evidence ------------------------------------------------------------------------


def normalise_evidence(evidence: list[Any], turns: set[str]) -> list[str]:
    """Gold dia_ids cleaned as the dataset README says; ids matching no turn are dropped."""
    out: list[str] = []
    for item in evidence:
        for piece in re.split(r"[;\s]+", str(item)):
            piece = piece.strip()
            if not piece:
                continue
            m = re.fullmatch(r"D:?(\d+):+(\d+)", piece)
            if not m:
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia in turns and dia not in out:
                out.append(dia)
    return out


def conversation_turns(conv: dict[str, Any]) -> list[dict[str, Any]]:
    body = conv["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in body if re.fullmatch(r"session_\d+", k))
    out = []
    for n in numbers:
        date = str(body.get(f"session_{n}_date_time") or "")
        for turn in body[f"session_{n}"]:
            text = turn["text"]  # as the reference figures were made: the turn's text, no image caption
            out.append({"dia_id": turn["dia_id"].strip().replace(" ", ""), "date": date, "speaker": turn["speaker"],
                        "text": text})
    return out


def questions(conv: dict[str, Any], turns: set[str],
              fixes: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The scored questions of ``conv``; ``fixes`` (qa index -> correction row) gives each its corrected labels.

    ``gold_corrected`` is the corrected evidence where a row exists (None when none of it matches a turn:
    the question is left out of the corrected figures), else the original gold.
    """
    out = []
    for index, qa in enumerate(conv["qa"]):
        if qa.get("category") not in CATEGORIES:
            continue
        gold = normalise_evidence(qa.get("evidence") or [], turns)
        if gold:
            fix = (fixes or {}).get(index)
            corrected = normalise_evidence(fix.get("correct_evidence") or [], turns) if fix else gold
            # The reference answer is read only by the judge of --answer, never by recall or the answerer.
            out.append({"question": qa["question"], "category": qa["category"], "gold": gold,
                        "answer": qa.get("answer"), "qa_index": index, "gold_corrected": corrected or None,
                        "answer_corrected": fix.get("correct_answer", qa.get("answer")) if fix else qa.get("answer"),
                        "corrected": fix is not None})
    return out


def load_corrections(path: Path, convs: list[dict[str, Any]]) -> dict[str, dict[int, dict[str, Any]]]:
    """Correction rows by sample id and qa index, each checked against the question it names.

    Rows of conversations not in ``convs`` are ignored (a run over some of the conversations).

    Raises:
        SystemExit: the file does not parse, a row lacks a field, or names a question that is not there.
    """
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a JSON list of corrections ({exc})") from exc
    if not isinstance(rows, list):
        raise SystemExit(f"{path}: not a JSON list of corrections")
    by_id = {conv["sample_id"]: conv for conv in convs}
    out: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or not {"sample_id", "qa_index", "question"} <= set(row):
            raise SystemExit(f"{path}: row {n} needs sample_id, qa_index and question")
        conv = by_id.get(row["sample_id"])
        if conv is None:
            continue
        index = row["qa_index"]
        qa = conv["qa"][index] if isinstance(index, int) and 0 <= index < len(conv["qa"]) else None
        if qa is None or " ".join(str(qa.get("question")).split()) != " ".join(str(row["question"]).split()):
            raise SystemExit(f"{path}: row {n} ({row['sample_id']} qa_index {index}) does not name the question "
                             "at that index of the data")
        out[row["sample_id"]][index] = row
    return dict(out)


def wilson(p: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` over ``n`` trials (95 % by default), as fractions."""
    if n <= 0:
        return 0.0, 0.0
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def adversarial(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Category 5 questions: the conversation does not answer them (scored only with --answer)."""
    return [{"question": qa["question"], "category": 5} for qa in conv["qa"] if qa.get("category") == 5]


def recall_at(retrieved: list[list[str]], gold: list[str], k: int | None) -> float:
    """Share of ``gold`` cited by the first ``k`` retrieved items (each item: the dia_ids it cites)."""
    seen: set[str] = set()
    for item in retrieved[:k] if k is not None else retrieved:
        seen.update(item)
    return len(seen & set(gold)) / len(gold)


# --- baselines --------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOPWORDS]


class BM25:
    """Okapi BM25 with the rank-bm25 defaults (k1 1.5, b 0.75, epsilon 0.25 floor on negative idf)."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b = k1, b
        self.docs = [Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.avg = sum(self.lengths) / max(1, len(docs))
        df: Counter = Counter()
        for d in docs:
            df.update(set(d))
        n = len(docs)
        idf = {t: math.log(n - f + 0.5) - math.log(f + 0.5) for t, f in df.items()}
        floor = epsilon * (sum(idf.values()) / max(1, len(idf)))
        self.idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for doc, length in zip(self.docs, self.lengths):
            s = 0.0
            for t in query:
                f = doc.get(t, 0)
                if f:
                    s += self.idf.get(t, 0.0) * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / self.avg))
            out.append(s)
        return out


# --- LoCoMo's answer F1 (task_eval/evaluation.py) --------------------------------------------


DECLINED = ("no information available", "not mentioned", "not in memory")


def normalize_answer(text: str) -> str:
    """LoCoMo's normalisation: commas dropped, lowercase, punctuation and a/an/the/and removed."""
    import string

    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def f1_score(prediction: str, gold: str) -> float:
    """Token F1 of Porter-stemmed normalised tokens (LoCoMo's ``f1_score``)."""
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    pred = [stem(w) for w in normalize_answer(prediction).split()]
    ref = [stem(w) for w in normalize_answer(gold).split()]
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def answer_f1(prediction: str, gold: Any, category: int) -> float:
    """LoCoMo's score of one answer: multi-answer F1 for category 1, plain F1 for 2-4, declining for 5."""
    if category == 5:
        return float(any(phrase in prediction.lower() for phrase in DECLINED))
    gold = str(gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)
    return f1_score(prediction, gold)


def turn_text(turn: dict[str, Any]) -> str:
    return f"{turn['date']} {turn['speaker']}: {turn['text']}"


def rank(scores: list[float], ids: list[str], k: int) -> list[list[str]]:
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[:k]
    return [[ids[i]] for i in order]


def best_bm25_turn(bm25: BM25, question: str, turns: list[dict[str, Any]]) -> str:
    """The baseline answer: the text of the turn BM25 ranks first (ties: the earlier turn)."""
    scores = bm25.scores(tokens(question))
    return str(turns[max(range(len(turns)), key=lambda i: (scores[i], -i))]["text"])


# --- memrepo ---------------------------------------------------------------------------------


def ingest_conversation(conv: dict[str, Any], folder: Path, environ: dict[str, str]) -> tuple[Any, bool]:
    """The conversation's repository, ingested (or reused from ``--workdir``), and whether a temporary vault key
    sealed secrets its turns hold (ingestion refuses them without a key, as it would a user's file)."""
    from memrepo.api import MemoryRepo
    from memrepo.errors import VaultKeyError

    path = folder / conv["sample_id"]
    if (path / "memrepo.toml").exists():  # --workdir: reuse a repository built before, if it holds the turns
        repo = MemoryRepo.open(path, environ=environ)
        if repo.records("episodic"):
            return repo, False
    else:
        repo = MemoryRepo.init(path)
    repo.close()
    repo = MemoryRepo.open(path, environ=environ)
    data = folder / f"{conv['sample_id']}.json"
    data.write_text(json.dumps([{k: conv[k] for k in ("sample_id", "conversation")}]), encoding="utf-8")
    sealed = False
    try:
        repo.ingest([data])
    except VaultKeyError:
        if environ.get("MEMREPO_VAULT_KEY") or environ.get("MEMREPO_VAULT_KEY_FILE"):
            raise  # the user's own key was refused: that is theirs to see
        from memrepo.vault import generate_key

        repo.close()  # nothing was written: ingest refuses before it commits; again, with a key to seal them
        repo = MemoryRepo.open(path, environ={**environ, "MEMREPO_VAULT_KEY": generate_key().decode("ascii")})
        repo.ingest([data])
        sealed = True
    from memrepo.graph.build import index_graph

    index_graph(repo.ctx)  # catch-up: a no-op when ingestion already indexed every record
    return repo, sealed


def cited_turns(record: Any) -> list[str]:
    out = []
    for citation in record.sources:
        _, _, anchor = citation.partition("#")
        if anchor:
            out.append(anchor)
    return out


def select(convs: list[dict[str, Any]], conversations: list[str] | None) -> list[dict[str, Any]]:
    """The conversations named (in the data's order), all when ``conversations`` is None.

    Raises:
        SystemExit: a name is not a sample id of the data.
    """
    if not conversations:
        return convs
    known = [conv["sample_id"] for conv in convs]
    unknown = [c for c in conversations if c not in known]
    if unknown:
        raise SystemExit(f"--conversations: {', '.join(unknown)} not in the data (it holds {', '.join(known)})")
    return [conv for conv in convs if conv["sample_id"] in conversations]


def default_corrections(data: Path) -> Path | None:
    """``<data stem>-corrections.json`` beside the data file, if there is one."""
    path = data.with_name(f"{data.stem}-corrections.json")
    return path if path.exists() else None


def run(data: Path, limit: int | None, environ: dict[str, str], progress: bool, workdir: Path | None = None,
        dump: Path | None = None, answer: bool = False, per_conversation: int | None = None,
        conversations: list[str] | None = None, corrections: Path | None = None) -> dict[str, Any]:
    from memrepo.index.embed import get_embedder

    convs = select(json.loads(data.read_text(encoding="utf-8")), conversations)
    if limit:
        convs = convs[:limit]
    fixes = load_corrections(corrections, convs) if corrections is not None else {}
    scores: dict[str, dict[Any, list[dict[str, float]]]] = {s: defaultdict(list) for s in ("memrepo", "bm25", "dense")}
    corrected: dict[str, dict[Any, list[dict[str, float]]]] = {s: defaultdict(list) for s in scores}
    corrected_f1: dict[str, dict[Any, list[float]]] = {"memrepo": defaultdict(list), "bm25-turn": defaultdict(list)}
    sealed: list[str] = []
    changed = 0
    records_returned: dict[Any, list[int]] = defaultdict(list)
    pooled: dict[Any, list[float]] = defaultdict(list)  # per question: share of its gold turns in the pool
    losses: dict[Any, Counter] = defaultdict(Counter)  # gold turns: in the top 10 / in the pool below / not in the pool
    answered: dict[Any, list[dict[str, float]]] = defaultdict(list)
    f1s: dict[str, dict[Any, list[float]]] = {"memrepo": defaultdict(list), "bm25-turn": defaultdict(list)}
    judged = answer and bool(environ.get("OPENAI_BASE_URL"))
    timing: list[float] = []
    fallbacks = 0
    embedder = None
    per_question = []
    with tempfile.TemporaryDirectory(prefix="memrepo-locomo-") as tmp:
        if workdir is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            tmp = str(workdir)
        for conv in convs:
            turns = conversation_turns(conv)
            ids = [t["dia_id"] for t in turns]
            qs = questions(conv, set(ids), fixes.get(conv["sample_id"]))
            if per_conversation:
                qs = qs[:per_conversation]
            t0 = time.perf_counter()
            repo, was_sealed = ingest_conversation(conv, Path(tmp), environ)
            if was_sealed:
                sealed.append(conv["sample_id"])
            if progress:
                print(f"{conv['sample_id']}: ingested {len(turns)} turns in {time.perf_counter() - t0:.0f} s; "
                      f"{len(qs)} questions", file=sys.stderr)
            if embedder is None:
                embedder = get_embedder(repo.settings.embedding)
            turns_of = {r.id: cited_turns(r) for t in ("episodic", "semantic") for r in repo.records(t)}
            bm25 = BM25([tokens(turn_text(t)) for t in turns])
            turn_vecs = embedder.embed([turn_text(t) for t in turns])
            for q in qs:
                cat = q["category"]
                start = time.perf_counter()
                result = repo.recall(q["question"], types=["episodic", "semantic"])
                timing.append(time.perf_counter() - start)
                fallbacks += bool(result.fallback)
                retrieved = [cited_turns(r) for r in result.records]
                systems = {
                    "memrepo": retrieved,
                    "bm25": rank(bm25.scores(tokens(q["question"])), ids, 10),
                    "dense": rank(list(turn_vecs @ embedder.embed([q["question"]])[0]), ids, 10),
                }
                changed += q["gold_corrected"] != q["gold"]
                for name, got in systems.items():
                    scores[name][cat].append(score_row(got, q["gold"], name == "memrepo"))
                    if q["gold_corrected"]:
                        corrected[name][cat].append(score_row(got, q["gold_corrected"], name == "memrepo"))
                records_returned[cat].append(len(retrieved))
                in_pool = pool_turns(result, turns_of)
                top = {turn for turns in retrieved[:10] for turn in turns}
                pooled[cat].append(sum(g in in_pool for g in q["gold"]) / len(q["gold"]))
                losses[cat].update("top 10" if g in top else "pool" if g in in_pool else "lost" for g in q["gold"])
                if answer:
                    best_turn = best_bm25_turn(bm25, q["question"], turns)
                    row = answer_and_judge(repo, q, judged)
                    answered[cat].append(row)
                    f1s["memrepo"][cat].append(answer_f1(str(row["answer"]), q["answer"], cat))
                    f1s["bm25-turn"][cat].append(answer_f1(best_turn, q["answer"], cat))
                    corrected_f1["memrepo"][cat].append(answer_f1(str(row["answer"]), q["answer_corrected"], cat))
                    corrected_f1["bm25-turn"][cat].append(answer_f1(best_turn, q["answer_corrected"], cat))
                    q["prediction"], q["bm25_turn"] = row["answer"], best_turn
                per_question.append({"conv": conv["sample_id"], "question": q["question"], "category": cat,
                                     "gold": q["gold"], "gold_corrected": q["gold_corrected"], "memrepo": retrieved, "bm25": systems["bm25"],
                                     "operator": result.plan.operator, "answer": q.get("prediction"),
                                     "reference": q["answer"] if answer else None})
            if answer:
                for q in adversarial(conv)[:per_conversation or None]:
                    row = answer_and_judge(repo, q, judged=False)
                    for table in (f1s, corrected_f1):
                        table["memrepo"][5].append(answer_f1(str(row["answer"]), "", 5))
                        table["bm25-turn"][5].append(answer_f1(best_bm25_turn(bm25, q["question"], turns), "", 5))
            repo.close()
    report: dict[str, Any] = {"questions": sum(len(v) for v in scores["memrepo"].values()),
                              "systems": summarise_systems(scores), "conversations": [c["sample_id"] for c in convs],
                              "sealed": sealed}
    if corrections is not None:
        report["corrected"] = {"labels": str(corrections), "questions_changed": changed,
                               "questions": sum(len(v) for v in corrected["memrepo"].values()),
                               "systems": summarise_systems(corrected)}
        if answer:
            report["corrected"]["answer_f1"] = summarise_f1(corrected_f1)
    report["recall_seconds"] = {"mean": round(sum(timing) / max(1, len(timing)), 4),
                                "p95": round(sorted(timing)[int(0.95 * (len(timing) - 1))], 4) if timing else 0.0}
    report["fallbacks"] = fallbacks
    report["pool"] = summarise_pool(pooled, losses)
    if answer:
        report["answer_f1"] = summarise_f1(f1s)
        if judged:
            report["answers"] = summarise_answers(answered)
    if dump is not None:
        dump.write_text(json.dumps(per_question, indent=1), encoding="utf-8")
    return report


JUDGE_SCHEMA = {"type": "object", "required": ["correct"], "properties": {"correct": {"type": "boolean"}}}
JUDGE_VOTES = 3


def answer_and_judge(repo: Any, q: dict[str, Any], judged: bool = True) -> dict[str, Any]:
    """Answer one question with the answering agent and, when ``judged``, grade it: majority of three judge calls.

    Returns the answer, correctness, and the model tokens and seconds the answer and its grading took.
    """
    from memrepo.errors import ModelError
    from memrepo.read.answer import ask

    backend = repo.model_backend()
    start = time.perf_counter()
    votes: list[bool] = []
    error = 0.0
    text = ""
    try:
        reply = ask(lambda question: repo.recall(question), q["question"], backend=backend)
        answer_seconds = time.perf_counter() - start
        text = reply.answer
        if not judged:
            return {"answer": text, "error": 0.0, "correct": 0.0, "input_tokens": 0.0, "output_tokens": 0.0,
                    "seconds": answer_seconds}

        def no_offline_judge(variables: dict[str, Any]) -> dict[str, Any]:
            raise SystemExit("--answer needs a model endpoint: the judge has no offline form")

        votes = [
            backend.run("answer-judge", {"question": q["question"], "reference": str(q["answer"]),
                                         "answer": reply.answer}, JUDGE_SCHEMA, no_offline_judge)["correct"]
            for _ in range(JUDGE_VOTES)
        ]
    except ModelError as exc:  # counted as wrong, and reported as an error, so one bad reply does not end the run
        print(f"  {q['question']!r}: {exc}", file=sys.stderr)
        answer_seconds, error = time.perf_counter() - start, 1.0
    finally:
        usage = backend.summary()
        backend.close()
    answer_usage = {k: v for k, v in usage.items() if k != "answer-judge"}
    return {
        "answer": text,
        "error": error,
        "correct": float(sum(votes) * 2 > len(votes)) if votes else 0.0,
        "input_tokens": float(sum(u.get("input_tokens", 0) for u in answer_usage.values())),
        "output_tokens": float(sum(u.get("output_tokens", 0) for u in answer_usage.values())),
        "seconds": answer_seconds,
    }


def summarise_answers(by_cat: dict[Any, list[dict[str, float]]]) -> dict[str, Any]:
    def block(rows: list[dict[str, float]]) -> dict[str, float]:
        n = max(1, len(rows))
        return {"accuracy": round(100 * sum(r["correct"] for r in rows) / n, 1),
                "input_tokens": round(sum(r["input_tokens"] for r in rows) / n, 1),
                "output_tokens": round(sum(r["output_tokens"] for r in rows) / n, 1),
                "seconds": round(sum(r["seconds"] for r in rows) / n, 3), "n": len(rows),
                "errors": int(sum(r["error"] for r in rows))}

    out = {"overall": block([r for rows in by_cat.values() for r in rows])}
    for cat in sorted(CATEGORIES):
        out[str(cat)] = block(by_cat.get(cat, []))
    return out


def summarise_f1(f1s: dict[str, dict[Any, list[float]]]) -> dict[str, Any]:
    """Mean F1 in percent per system and category; "overall" is categories 1-4, "5" the share declined."""
    out: dict[str, Any] = {}
    for name, by_cat in f1s.items():
        rows = [v for cat in CATEGORIES for v in by_cat.get(cat, [])]
        system = {"overall": {"f1": round(100 * sum(rows) / max(1, len(rows)), 1), "n": len(rows)}}
        for cat in (*sorted(CATEGORIES), 5):
            vals = by_cat.get(cat, [])
            system[str(cat)] = {"f1": round(100 * sum(vals) / max(1, len(vals)), 1), "n": len(vals)}
        out[name] = system
    return out


def pool_turns(result: Any, turns_of: dict[str, list[str]]) -> set[str]:
    """The turns cited by every record the recall ranked (its pool: the base lane's rows and the facts' cited rows)."""
    ids = {row["id"] for row in result.base_lane} | {i for fact in result.facts for i in fact.cites}
    return {turn for i in ids for turn in turns_of.get(i, [])}


def summarise_pool(pooled: dict[Any, list[float]], losses: dict[Any, Counter]) -> dict[str, Any]:
    """Per category: the mean share of a question's gold turns in the pool, and where its gold turns went."""
    out: dict[str, Any] = {}
    for cat in ("overall", *sorted(CATEGORIES)):
        shares = [v for c in CATEGORIES for v in pooled.get(c, [])] if cat == "overall" else pooled.get(cat, [])
        counts = sum((losses[c] for c in CATEGORIES), Counter()) if cat == "overall" else losses.get(cat, Counter())
        total = sum(counts.values()) or 1
        out[str(cat)] = {"pool": round(100 * sum(shares) / max(1, len(shares)), 1),
                         "gold_turns": sum(counts.values()), "in_pool_turns": round(100 * (total - counts["lost"]) / total, 1),
                         "top10": counts["top 10"], "pool_below_10": counts["pool"], "not_in_pool": counts["lost"]}
    return out


def score_row(retrieved: list[list[str]], gold: list[str], operator_budget: bool) -> dict[str, float]:
    """One question's recall at 5, 10 and the budget (all records for memrepo; 10 for the baselines)."""
    row = {f"R@{k}": recall_at(retrieved, gold, k) for k in KS}
    row["R@budget"] = recall_at(retrieved, gold, None if operator_budget else 10)
    row["records"] = len(retrieved)
    return row


def summarise_systems(scores: dict[str, dict[Any, list[dict[str, float]]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, by_cat in scores.items():
        everything = [row for cat in sorted(CATEGORIES) for row in by_cat.get(cat, [])]
        system = {"overall": summarise(everything)}
        for cat in sorted(CATEGORIES):
            system[str(cat)] = summarise(by_cat.get(cat, []))
        out[name] = system
    return out


def summarise(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Mean recall in percent, with the 95 % Wilson interval of R@10 over the questions."""
    if not rows:
        return {"R@5": 0.0, "R@10": 0.0, "R@10_ci95": [0.0, 0.0], "R@budget": 0.0, "records": 0.0, "n": 0}
    out: dict[str, Any] = {key: round(100 * sum(r[key] for r in rows) / len(rows), 1)
                           for key in ("R@5", "R@10", "R@budget")}
    lo, hi = wilson(sum(r["R@10"] for r in rows) / len(rows), len(rows))
    out["R@10_ci95"] = [round(100 * lo, 1), round(100 * hi, 1)]
    out["records"] = round(sum(r["records"] for r in rows) / len(rows), 2)
    out["n"] = len(rows)
    return out


def print_systems(systems: dict[str, Any]) -> None:
    print(f"{'system':<9} {'category':<12} {'n':>4} {'R@5':>6} {'R@10':>6} {'95% CI':>13} {'R@budget':>9} "
          f"{'records':>8}")
    for name, system in systems.items():
        for cat in ("overall", "1", "2", "3", "4"):
            row = system[cat]
            label = "overall" if cat == "overall" else CATEGORIES[int(cat)]
            ci = f"{row['R@10_ci95'][0]}-{row['R@10_ci95'][1]}"
            print(f"{name:<9} {label:<12} {row['n']:>4} {row['R@5']:>6} {row['R@10']:>6} {ci:>13} "
                  f"{row['R@budget']:>9} {row['records']:>8}")


def print_table(report: dict[str, Any]) -> None:
    print(f"LoCoMo evidence recall, {report['questions']} questions (categories 1-4) of "
          f"{', '.join(report['conversations'])}, recall in percent (95% CI: Wilson interval of R@10)")
    print_systems(report["systems"])
    if "corrected" in report:
        fixed = report["corrected"]
        print(f"against the corrected labels ({fixed['labels']}; {fixed['questions_changed']} questions' evidence "
              f"changed, {fixed['questions']} scored):")
        print_systems(fixed["systems"])
    if report["sealed"]:
        print(f"secrets sealed with a temporary vault key in: {', '.join(report['sealed'])}")
    print(f"memrepo recall: mean {report['recall_seconds']['mean']} s, p95 {report['recall_seconds']['p95']} s; "
          f"graph fallbacks: {report['fallbacks']}")
    print("(baselines rank single turns; their R@budget is R@10)")
    print("memrepo pool: mean share of a question's gold turns among the records ranked; gold turns in the top 10 / "
          "in the pool below 10 / not in the pool")
    for cat, row in report["pool"].items():
        label = "overall" if cat == "overall" else CATEGORIES[int(cat)]
        print(f"  {label:<12} pool {row['pool']:>5} %  ({row['in_pool_turns']} % of {row['gold_turns']} gold turns)  "
              f"{row['top10']:>4} / {row['pool_below_10']:>4} / {row['not_in_pool']:>4}")
    if "answer_f1" in report:
        print("answers: LoCoMo token F1 in percent (category 5: share declined, not in overall)")
        print(f"{'system':<10} {'overall':>8} " + " ".join(f"{CATEGORIES.get(c, 'adversarial'):>12}" for c in (1, 2, 3, 4, 5)))
        for name, system in report["answer_f1"].items():
            print(f"{name:<10} {system['overall']['f1']:>8} "
                  + " ".join(f"{system[str(c)]['f1']:>12}" for c in (1, 2, 3, 4, 5)))
        for name, system in report.get("corrected", {}).get("answer_f1", {}).items():
            print(f"{name + ' (corrected)':<10} {system['overall']['f1']:>8} "
                  + " ".join(f"{system[str(c)]['f1']:>12}" for c in (1, 2, 3, 4, 5)))
    if "answers" in report:
        print("answers (LLM judge, majority of 3): accuracy %, tokens and seconds per question")
        for cat, row in report["answers"].items():
            label = "overall" if cat == "overall" else CATEGORIES[int(cat)]
            print(f"  {label:<12} n={row['n']:>4} accuracy {row['accuracy']:>5}  in {row['input_tokens']:>8} "
                  f"out {row['output_tokens']:>7} tokens  {row['seconds']:>6} s  model errors {row['errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="locomo-dev.json (a list of conversations)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the ingested repositories in this folder")
    parser.add_argument("--dump", type=Path, help="write every question's retrieved turns to this JSON file")
    parser.add_argument("--answer", action="store_true",
                        help="also answer each question and score it with LoCoMo's F1 next to the best BM25 turn "
                             "(offline extractive answers without an endpoint; with one, also an LLM judge)")
    parser.add_argument("--questions", type=int, help="only the first N questions of each conversation (quick runs)")
    parser.add_argument("--conversations", type=lambda v: [c.strip() for c in v.split(",") if c.strip()],
                        help="only these conversations, by sample id, comma-separated (conv-26,conv-30)")
    parser.add_argument("--corrections", type=Path,
                        help="corrected labels, reported next to the original figures (default: "
                             "<data>-corrections.json beside the data file, if there is one)")
    args = parser.parse_args()
    if not args.data.exists():
        parser.error(f"{args.data}: no such file")
    if args.corrections is not None and not args.corrections.exists():
        parser.error(f"{args.corrections}: no such file")
    environ = {k: v for k, v in os.environ.items() if k.startswith(("MEMREPO_", "OPENAI_"))}
    report = run(args.data, args.limit, environ, progress=not args.json, workdir=args.workdir, dump=args.dump,
                 answer=args.answer, per_conversation=args.questions, conversations=args.conversations,
                 corrections=args.corrections or default_corrections(args.data))
    if args.json:
        keys = ("questions", "conversations", "systems", "corrected", "sealed", "recall_seconds", "fallbacks", "pool",
                "answer_f1", "answers")
        print(json.dumps({k: report[k] for k in keys if k in report}, indent=2, sort_keys=True))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
