"""The offline evaluation set (benchmarks/data/offline_eval/, issue 31) is well-formed, and its harness
(benchmarks/offline_eval.py) measures what it says on a small slice: every evidence sentence is in its input,
every input is one memrepo ingests, the splits are by input file, and the scoring counts "2 shelves" apart from
"12 shelves"."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "offline_eval"
HARNESS = ROOT / "benchmarks" / "offline_eval.py"
KINDS = ("chat", "notes", "meetings", "tasks")


def _harness() -> Any:
    spec = importlib.util.spec_from_file_location("offline_eval_bench", HARNESS)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _input_text(name: str) -> str:
    """The words of an input as a person reads them: a JSON input's message contents, else the file."""
    path = DATA / "inputs" / name
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        items = [json.loads(raw)]
    elif path.suffix == ".jsonl":
        items = [json.loads(line) for line in raw.splitlines() if line.strip()]
    else:
        return " ".join(raw.split())
    texts: list[str] = []
    for item in items:
        texts.append(str(item.get("task") or ""))
        texts += [str(m.get("content") or "") for m in item.get("messages", [item]) if isinstance(m, dict)]
    return " ".join(" ".join(texts).split())


def test_questions_are_well_formed_and_their_evidence_is_in_the_input() -> None:
    questions = _rows("questions.jsonl")
    bench = _harness()
    assert len(questions) >= 200
    per_kind = Counter(q["kind"] for q in questions)
    assert set(per_kind) == set(KINDS) and min(per_kind.values()) >= 45, per_kind
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert set(q) == {"id", "kind", "input", "question", "answers", "evidence", "split"}, q["id"]
        assert q["answers"] and all(isinstance(a, str) and a.strip() for a in q["answers"]), q["id"]
        assert " ".join(q["evidence"].split()) in _input_text(q["input"]), f"{q['id']}: evidence not in {q['input']}"
        assert q["input"].startswith({"chat": "chat_", "notes": "notes_", "meetings": "meeting_", "tasks": "task_"}[q["kind"]])
        assert not re.match(r"(is|are|does|do|did|was|were|can|has|have)\b", q["question"], re.I), q["id"]  # no yes/no
    # Split by input file: one split per file, and both splits in every kind.
    split_of: dict[str, set[str]] = {}
    for q in questions:
        split_of.setdefault(q["input"], set()).add(q["split"])
    assert all(len(s) == 1 for s in split_of.values())
    for kind in KINDS:
        assert {q["split"] for q in questions if q["kind"] == kind} == {"dev", "test"}
    # Where the answer is a number or a name written in the sentence, the sentence holds an acceptable answer.
    unheld = [q["id"] for q in questions
              if not any(bench.normalise_answer(a) in bench.normalise_answer(q["evidence"]) for a in q["answers"])]
    assert len(unheld) <= 3, unheld  # "who" answered by the speaker of the sentence


def test_router_and_extraction_labels_are_well_formed() -> None:
    router = _rows("router.jsonl")
    assert len(router) >= 100
    for row in router:
        assert row["kind"] in KINDS and row["split"] in ("dev", "test") and row["source"] in ("conversation", "document", "task")
        assert row["types"] and set(row["types"]) <= {"episodic", "semantic", "procedural"}, row["id"]
    assert {t for row in router for t in row["types"]} == {"episodic", "semantic", "procedural"}
    extraction = _rows("extraction.jsonl")
    assert len(extraction) >= 60
    for row in extraction:
        assert row["entities"], row["id"]
        for name in row["entities"]:  # each gold name is written in its sentence as it is, modifiers and all
            assert name.lower() in row["sentence"].lower(), (row["id"], name)


def test_every_input_is_one_memrepo_ingests_in_the_format_of_its_kind() -> None:
    from memrepo.write.parsers import parse_file

    formats: dict[str, set[str]] = {}
    for path in sorted((DATA / "inputs").iterdir()):
        parsed = parse_file(path, mention_time="2026-12-01")
        assert parsed.parts, path.name
        formats.setdefault(path.name.split("_")[0], set()).add(parsed.format)
    assert formats == {"chat": {"text-conversation", "messages"}, "notes": {"document"},
                       "meeting": {"document", "text-conversation"}, "task": {"task"}}


def test_answers_are_scored_as_whole_words_after_normalising() -> None:
    bench = _harness()
    assert bench.answer_right("You need to buy two shelves.", ["2 shelves"])
    assert not bench.answer_right("They cost 12 shelves' worth", ["2 shelves"])
    assert not bench.answer_right("12", ["2"])
    assert bench.answer_right("The rent is 1,140 euros a month.", ["1,140 euros"])
    assert bench.answer_right("at 02:30 UTC", ["02:30 UTC"]) and not bench.answer_right("1 December 2026", ["02:30 UTC"])
    assert bench.answer_right("It was Twenty-seven adults", ["27 adults"])
    assert bench.declined("Not in memory.") and not bench.declined("Münster")
    assert bench.normalise_name("The stainless steel bottles") == bench.normalise_name("stainless steel bottle")
    assert bench.normalise_name("steel bottle") != bench.normalise_name("stainless steel bottle")
    assert bench.normalise_name("db-stage-") != bench.normalise_name("db-stage-2")


def test_the_harness_runs_on_a_tiny_slice_and_reports_every_figure(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(HARNESS), "--kind", "notes", "--split", "dev", "--limit", "2", "--json"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["skipped"] == {}
    assert [q["id"] for q in report["questions"]] == ["notes-q001", "notes-q002"]
    assert "notes_platform.md: ingested" in out.stderr
    figures = report["figures"]
    assert set(figures) == {"notes/dev", "notes", "dev", "overall"}
    overall = figures["overall"]
    assert overall["questions"] == 2 and overall["router"]["n"] == 2 and overall["extraction"]["n"] == 2
    for key in ("evidence_r10", "answer_accuracy", "not_in_memory"):
        assert 0.0 <= overall[key] <= 100.0
    # The DBA's sentence is in the document memrepo keeps: a recall of "Who is the DBA?" returns it in its top 10.
    assert report["questions"][0]["question"] == "Who is the DBA?" and report["questions"][0]["found"]
    text = subprocess.run([sys.executable, str(HARNESS), "--kind", "tasks", "--limit", "1", "--quiet"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stderr == "" and re.search(r"^tasks/dev\s+1\s", text.stdout, re.M)


def test_a_malformed_label_file_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    for name in ("questions.jsonl", "router.jsonl", "extraction.jsonl"):
        (tmp_path / name).write_text((DATA / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "inputs").symlink_to(DATA / "inputs")
    with (tmp_path / "router.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "x", "kind": "chat"}\n')
    out = subprocess.run([sys.executable, str(HARNESS), "--data", str(tmp_path), "--limit", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    line = len((DATA / "router.jsonl").read_text(encoding="utf-8").splitlines()) + 1
    assert f"router.jsonl: line {line} lacks source, text, types, split" in out.stderr


def test_an_entry_point_that_moved_is_reported_not_a_traceback() -> None:
    bench = _harness()
    assert bench.entry(["memrepo.nowhere:route", "memrepo.write.writers:route"], "the router").__name__ == "route"
    with pytest.raises(bench.Unavailable, match="the router: not found at memrepo.write.nowhere:route"):
        bench.entry(["memrepo.write.nowhere:route"], "the router")


def test_an_input_memrepo_refuses_counts_its_questions_missed_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "chat_broken.json").write_text("[]", encoding="utf-8")
    question = {"id": "chat-q001", "kind": "chat", "input": "chat_broken.json", "question": "Where does Ada live?",
                "answers": ["Leeds"], "evidence": "Ada lives in Leeds.", "split": "dev"}
    (tmp_path / "questions.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    for name in ("router.jsonl", "extraction.jsonl"):
        (tmp_path / name).write_text((DATA / name).read_text(encoding="utf-8"), encoding="utf-8")
    out = subprocess.run([sys.executable, str(HARNESS), "--data", str(tmp_path), "--kind", "chat", "--limit", "1",
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "chat_broken.json: not ingested: " in out.stderr and "empty JSON list" in out.stderr
    (row,) = json.loads(out.stdout)["questions"]
    assert row["error"].startswith("not ingested") and not row["found"] and not row["right"]
