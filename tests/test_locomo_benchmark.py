"""benchmarks/locomo.py on a tiny LoCoMo-shaped file written here (no ../shared data): corrected labels next to
the original ones, Wilson intervals, conversation selection, and a turn holding a credential sealed, not a failure."""

from __future__ import annotations

import base64
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "locomo.py"


def _locomo() -> Any:
    spec = importlib.util.spec_from_file_location("locomo_bench", BENCHMARK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_jwt() -> str:
    """A JSON-web-token-shaped string (not a real token), built here so no literal of one is in the tree."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return ".".join([part({"alg": "HS256", "typ": "JWT"}), part({"sub": "photo-share", "exp": 1999999999}),
                     "c2lnbmF0dXJlLW5vdC1yZWFsLWZha2UtZmFrZS1mYWtl"])


SESSION_1 = [
    ("Noor", "Hi Tomas! I finally bought a kayak last weekend, a bright orange one."),
    ("Tomas", "Nice, where are you going to paddle first?"),
    ("Noor", "On the lake behind my aunt's farm, it is very calm in the mornings."),
    ("Tomas", "I spent Saturday baking sourdough bread with my grandmother."),
    ("Noor", "Look at this photo of the lake at sunrise."),
    ("Tomas", "My sister is training for a marathon in Lisbon next spring."),
]
SESSION_2 = [
    ("Tomas", "I adopted a grey cat from the shelter, her name is Pebble."),
    ("Noor", "Pebble is a lovely name. I started a pottery class on Thursdays."),
    ("Tomas", "My bread came out too dense, I will try a longer rise."),
    ("Noor", "The kayak club invited me to a race on the river in June."),
]


def _conversation() -> list[dict[str, Any]]:
    def turns(session: int, lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [{"speaker": who, "dia_id": f"D{session}:{i}", "text": text} for i, (who, text) in enumerate(lines, 1)]

    first = turns(1, SESSION_1)
    # a shared image behind a signed URL: the JWT in it is a credential ingestion will not commit in plaintext
    first[4]["img_url"] = [f"https://photos.example.org/lake.jpg?token={_fake_jwt()}"]
    first[4]["blip_caption"] = "a photo of a lake at sunrise"
    qa = [
        {"question": "What colour is Noor's kayak?", "answer": "orange", "evidence": ["D1:1"], "category": 4},
        {"question": "What is the name of Tomas's cat?", "answer": "Pebble", "evidence": ["D2:1"], "category": 4},
        {"question": "What did Tomas bake?", "answer": "sourdough bread", "evidence": ["D1:04; D2:3"], "category": 1},
        {"question": "When is Noor's kayak race?", "answer": "June", "evidence": ["D2:4"], "category": 2},
        {"question": "What does Noor's aunt grow?", "adversarial_answer": "apples", "evidence": [], "category": 5},
    ]
    return [{"sample_id": "tiny-1", "qa": qa, "conversation": {
        "speaker_a": "Noor", "speaker_b": "Tomas",
        "session_1": first, "session_1_date_time": "10:00 am on 6 May, 2023",
        "session_2": turns(2, SESSION_2), "session_2_date_time": "4:30 pm on 20 May, 2023",
    }}]


def _corrections(question: str = "What is the name of Tomas's cat?") -> list[dict[str, Any]]:
    # the audit says the cat question cites the wrong turn: the corrected evidence is the turn about the bread
    return [{"sample_id": "tiny-1", "qa_index": 1, "question": question, "category": 4,
             "error_type": "WRONG_CITATION", "golden_answer": "Pebble", "correct_answer": "Pebble",
             "cited_evidence": ["D2:1"], "correct_evidence": ["D2:3"], "reasoning": "written for this test"},
            {"sample_id": "other-9", "qa_index": 0, "question": "Not in this file?", "category": 1,
             "error_type": "HALLUCINATION", "golden_answer": "x", "correct_answer": "y",
             "cited_evidence": [], "correct_evidence": [], "reasoning": "a conversation the run does not hold"}]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The benchmark run twice over one workdir: with the corrections file, then without it."""
    lb = _locomo()
    root = tmp_path_factory.mktemp("locomo")
    data = root / "tiny.json"
    data.write_text(json.dumps(_conversation()), encoding="utf-8")
    fixes = root / "tiny-corrections.json"
    fixes.write_text(json.dumps(_corrections()), encoding="utf-8")
    work, dump = root / "work", root / "dump.json"
    with_fixes = lb.run(data, None, {}, progress=False, workdir=work, dump=dump,
                        corrections=lb.default_corrections(data))
    plain = lb.run(data, None, {}, progress=False, workdir=work)
    return {"with": with_fixes, "plain": plain, "dump": json.loads(dump.read_text()), "work": work, "lb": lb}


def test_a_turn_holding_a_credential_is_sealed_with_a_temporary_key(runs: dict[str, Any]) -> None:
    report = runs["with"]
    assert report["sealed"] == ["tiny-1"]
    assert report["questions"] == 4
    token = _fake_jwt()
    repo_files = [p for p in (runs["work"] / "tiny-1").rglob("*") if p.is_file() and ".git" not in p.parts]
    assert repo_files and not any(token in p.read_text(errors="ignore") for p in repo_files)
    git = subprocess.run(["git", "-C", str(runs["work"] / "tiny-1"), "log", "-p", "--all"], capture_output=True,
                         text=True, check=True).stdout
    assert token not in git
    # the other turns are recalled as usual: the kayak colour is found
    assert report["systems"]["memrepo"]["4"]["R@budget"] > 0


def test_corrected_labels_are_reported_next_to_the_original_ones(runs: dict[str, Any]) -> None:
    report, plain = runs["with"], runs["plain"]
    assert "corrected" not in plain
    assert report["systems"] == plain["systems"]  # the original figures are the same with or without corrections
    fixed = report["corrected"]
    assert fixed["questions_changed"] == 1 and fixed["questions"] == 4
    by_question = {q["question"]: q for q in runs["dump"]}
    cat = by_question["What is the name of Tomas's cat?"]
    assert cat["gold"] == ["D2:1"] and cat["gold_corrected"] == ["D2:3"]
    assert by_question["What did Tomas bake?"]["gold"] == ["D1:4", "D2:3"]  # "D1:04; D2:3" normalised
    lb = runs["lb"]
    retrieved = cat["memrepo"]
    expected = (lb.recall_at(retrieved, ["D2:3"], 10) - lb.recall_at(retrieved, ["D2:1"], 10)) * 100 / 2
    got = fixed["systems"]["memrepo"]["4"]["R@10"] - report["systems"]["memrepo"]["4"]["R@10"]
    assert got == pytest.approx(expected, abs=0.11)


def test_each_r10_has_a_wilson_interval(runs: dict[str, Any]) -> None:
    lb = runs["lb"]
    lo, hi = lb.wilson(0.5, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)
    assert lb.wilson(1.0, 4)[1] == 1.0 and lb.wilson(1.0, 4)[0] == pytest.approx(0.5101, abs=1e-4)
    for system in runs["with"]["systems"].values():
        for row in system.values():
            low, high = row["R@10_ci95"]
            assert low <= row["R@10"] <= high


def test_a_correction_naming_another_question_is_an_error(tmp_path: Path) -> None:
    lb = _locomo()
    fixes = tmp_path / "fixes.json"
    fixes.write_text(json.dumps(_corrections("What is the name of Noor's dog?")), encoding="utf-8")
    with pytest.raises(SystemExit, match=r"fixes\.json: row 0 \(tiny-1 qa_index 1\) does not name the question"):
        lb.load_corrections(fixes, _conversation())


def test_conversations_are_selected_by_sample_id(tmp_path: Path) -> None:
    lb = _locomo()
    convs = _conversation() + [dict(_conversation()[0], sample_id="tiny-2")]
    assert [c["sample_id"] for c in lb.select(convs, ["tiny-2"])] == ["tiny-2"]
    assert lb.select(convs, None) == convs
    data = tmp_path / "two.json"
    data.write_text(json.dumps(convs), encoding="utf-8")
    out = subprocess.run([sys.executable, str(BENCHMARK), "--data", str(data), "--conversations", "tiny-2,conv-99"],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "--conversations: conv-99 not in the data (it holds tiny-1, tiny-2)" in out.stderr
