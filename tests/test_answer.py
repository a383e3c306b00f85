"""The answering agent: every A.4 check trigger, the offline extractive answer, and the model path over HTTP."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.llm import get_backend
from memrepo.read.answer import Evidence, check, extra_query
from memrepo.read.plan import plan

from conftest import EXAMPLES
from openai_server import ScriptedOpenAI

LEDGER = [
    Evidence("ep-2023-05-09-aaaa0001", "2023-05-09", "Mia: I made 2 bowls and a very crooked cup."),
    Evidence("ep-2023-05-09-aaaa0002", "2023-05-09", "Jonas: I adopted a dog last week! A greyhound named Pixel."),
]


def fired(question: str, draft: str, ledger=LEDGER, used=None) -> list[str]:
    return check(question, plan(question), draft, ledger, used)


# --- each trigger of A.4 ---------------------------------------------------------------------------


def test_a_confident_answer_with_evidence_fires_nothing():
    assert fired("What did Mia make in the pottery course?", "2 bowls and a crooked cup") == []


def test_uncertainty_fires():
    assert "uncertainty" in fired("What did Mia make?", "I'm not sure, maybe a cup")
    assert "uncertainty" in fired("What did Mia make?", "")


def test_count_without_a_number_fires():
    assert "count-without-number" in fired("How many bowls did Mia make?", "some bowls")
    assert "count-without-number" not in fired("How many bowls did Mia make?", "2 bowls")


def test_count_that_disagrees_with_its_list_fires():
    assert "count-disagrees" in fired("How many things did Mia make?", "3: bowls and a cup")
    assert "count-disagrees" not in fired("How many things did Mia make?", "2: bowls and a cup")


def test_temporal_answer_without_a_time_fires():
    assert "temporal-without-time" in fired("When did Jonas adopt a dog?", "he adopted Pixel from a shelter")
    assert "temporal-without-time" not in fired("When did Jonas adopt a dog?", "the week before 9 May 2023")


def test_number_or_month_absent_from_evidence_and_question_fires():
    assert "value-not-in-evidence" in fired("How many bowls did Mia make?", "7 bowls")
    assert "value-not-in-evidence" in fired("When did Jonas adopt a dog?", "in March 2023")
    assert "value-not-in-evidence" not in fired("When did Jonas adopt a dog?", "early May 2023")


def test_role_mismatch_fires_on_a_fact_with_the_named_person_in_the_other_role():
    q = "What did Mia buy?"
    wrong = [Evidence("urn:memrepo:frame:1", "2023-06-14", "buy(buyer=Tom, item=Mia)", kind="fact",
                      roles=[("buyer", "Tom"), ("item", "Mia")], predicate="buy")]
    right = [Evidence("urn:memrepo:frame:2", "2023-06-14", "buy(buyer=Mia, item=down jacket)", kind="fact",
                      roles=[("buyer", "Mia"), ("item", "down jacket")], predicate="buy")]
    assert "role-mismatch" in check(q, plan(q), "a down jacket", wrong)
    assert "role-mismatch" not in check(q, plan(q), "a down jacket", right)


def test_planned_event_in_a_count_fires():
    q = "How many mountains did Mia climb?"
    ledger = [Evidence("ep-2023-06-14-aaaa0003", "2023-08-12", "Mia plans to climb Mount Fuji.", status="planned")]
    assert "planned-in-count" in check(q, plan(q), "1", ledger)
    done = [Evidence("ep-2023-06-14-aaaa0003", "2023-08-12", "Mia climbed Mount Fuji.", status="done")]
    assert "planned-in-count" not in check(q, plan(q), "1", done)


def test_every_intersection_question_fires():
    assert "intersection" in fired("What do Mia and Jonas both like?", "ramen")


def test_extra_query_is_the_question_for_relation_queries_else_from_the_plan():
    q = "What did Mia buy in Shinjuku?"
    assert extra_query(plan(q)) == q
    q2 = "Which city is Mia's school in?"
    derived = extra_query(plan(q2))
    assert "Mia" in derived and derived != q2


# --- the agent -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("answer") / "memory"
    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    repo.ingest([EXAMPLES / "conversation.txt"])
    yield repo
    repo.close()


def test_offline_answer_is_extractive_with_record_ids_and_the_quoted_sentence(example_repo):
    answer = example_repo.ask("Where did Mia buy her Suica card?")
    assert answer.extractive and "Extractive" in answer.note
    assert answer.answer == "Tokyo Station"
    assert answer.record_ids and all(example_repo.get(i) for i in answer.record_ids)
    assert answer.record_ids[0] in answer.quote and "2023-05-02" in answer.quote
    assert "I bought a Suica card at Tokyo Station" in answer.quote
    assert answer.recalls <= 5


def test_readme_question_answers_the_dogs_name(example_repo):
    """The README's own example answered "Jonas: I do." although the evidence names the dog."""
    answer = example_repo.ask("What is Jonas's dog called?")
    assert answer.answer == "Pixel"
    assert "greyhound named Pixel" in example_repo.get(answer.record_ids[0]).text


def test_sentences_do_not_end_at_a_title(example_repo):
    answer = example_repo.ask("Who runs the guesthouse in Yanaka?")
    assert answer.answer == "Mrs. Okada"
    assert 'named Mrs. Okada."' in answer.quote


def test_a_trigger_makes_one_extra_search_and_one_rewrite(example_repo):
    answer = example_repo.ask("What do Mia and Jonas both like?")
    assert "intersection" in answer.triggers
    assert answer.rewritten and answer.extra_search
    assert answer.recalls == 2


def test_model_path_drafts_then_rewrites_once_with_ids_from_the_ledger(example_repo, tmp_path):
    with ScriptedOpenAI() as server:
        seen_roles = []

        def responder(request):
            system = request["messages"][0]["content"]
            role = "rewriter" if "revise a draft" in system else "answerer"
            seen_roles.append(role)
            ledger_ids = [line.split('"id": "')[1].split('"')[0]
                          for line in request["messages"][1]["content"].splitlines() if '"id": "' in line]
            if role == "answerer":
                return json.dumps({"answer": "maybe some bowls", "record_ids": ["ep-made-up"] + ledger_ids[:1],
                                   "search": None})
            return json.dumps({"answer": "2 bowls and a crooked cup", "record_ids": ledger_ids[:2], "search": None})

        server.responder = responder
        settings = server.settings()
        from memrepo.read.answer import ask

        backend = get_backend(settings)
        try:
            answer = ask(lambda q: example_repo.recall(q), "How many bowls did Mia make?", backend=backend)
        finally:
            backend.close()
    assert seen_roles == ["answerer", "rewriter"]
    assert "uncertainty" in answer.triggers and answer.rewritten
    assert answer.answer == "2 bowls and a crooked cup" and not answer.extractive
    assert "ep-made-up" not in answer.record_ids and answer.record_ids


def test_cli_ask(example_repo):
    out = CliRunner().invoke(cli, ["--repo", str(example_repo.root), "ask", "Where did Mia buy her Suica card?", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["extractive"] and data["record_ids"]
    assert data["answer"] == "Tokyo Station" and data["record_ids"][0] in data["quote"]
    out = CliRunner().invoke(cli, ["--repo", str(example_repo.root), "ask", "Where did Mia buy her Suica card?"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "Tokyo Station"
    assert any(line.startswith("from: ") and "Tokyo Station this morning" in line for line in lines)


def test_cli_ask_not_in_memory(example_repo):
    out = CliRunner().invoke(cli, ["--repo", str(example_repo.root), "ask", "What is Mia's favourite colour?"])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == "Not in memory."
    assert "rests on" not in out.stdout


# --- benchmarks/locomo.py --answer: LoCoMo's F1, offline ------------------------------------------------


def _locomo():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "locomo.py"
    spec = importlib.util.spec_from_file_location("locomo_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_locomo_f1_is_the_papers_metric():
    lb = _locomo()
    assert lb.normalize_answer("The week before 9 May, 2023!") == "week before 9 may 2023"
    assert lb.f1_score("the week before 9 May 2023", "The week before 9 May, 2023") == 1.0
    assert lb.f1_score("painting sunrises", "painted a sunrise") == 1.0  # Porter stems, articles dropped
    assert lb.f1_score("Pixel", "a greyhound named Pixel") == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert lb.f1_score("Tokyo", "Kyoto") == 0.0
    # category 1: each gold part takes its best predicted part; category 3: the gold before ';'
    assert lb.answer_f1("Yuki, Tom", "Tom, Yuki", 1) == 1.0
    assert lb.answer_f1("Tom", "Tom, Yuki", 1) == 0.5
    assert lb.answer_f1("likely yes", "Likely yes; because she said so", 3) == 1.0
    # category 5 (adversarial): declining scores 1
    assert lb.answer_f1("Not in memory.", "", 5) == 1.0
    assert lb.answer_f1("No information available", "", 5) == 1.0
    assert lb.answer_f1("Pixel", "", 5) == 0.0


def test_locomo_answer_runs_offline_next_to_the_bm25_turn(tmp_path):
    """`--answer` needed a model endpoint; offline it now scores the extractive answer against the best BM25 turn."""
    lb = _locomo()
    conv = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "2:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat last week. She is called Mochi."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Where did you find her?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "At the animal shelter in Porto."},
                {"speaker": "Ben", "dia_id": "D1:4", "text": "I bought a bike for 300 euros yesterday."},
            ],
        },
        "qa": [
            {"question": "What is Ana's cat called?", "answer": "Mochi", "evidence": ["D1:1"], "category": 4},
            {"question": "How much did Ben pay for his bike?", "answer": "300 euros", "evidence": ["D1:4"],
             "category": 4},
            {"question": "When did Ana adopt a cat?", "answer": "The week before 8 May 2023", "evidence": ["D1:1"],
             "category": 2},
            {"question": "What is Ben's favourite colour?", "adversarial_answer": "red", "evidence": [],
             "category": 5},
        ],
    }
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conv]))
    report = lb.run(data, None, {}, progress=False, workdir=tmp_path / "work", answer=True)
    f1 = report["answer_f1"]
    assert set(f1) == {"memrepo", "bm25-turn"}
    assert f1["memrepo"]["overall"]["n"] == 3 and f1["memrepo"]["5"]["n"] == 1
    assert f1["memrepo"]["4"]["f1"] == 100.0  # "Mochi", "300 euros"
    assert f1["memrepo"]["2"]["f1"] == 100.0  # "the week before 8 May 2023"
    assert f1["memrepo"]["5"]["f1"] == 100.0 and f1["bm25-turn"]["5"]["f1"] == 0.0
    assert f1["memrepo"]["overall"]["f1"] > f1["bm25-turn"]["overall"]["f1"]
    assert "answers" not in report  # no endpoint: no LLM judge
    pool = report["pool"]  # where each gold turn went: top 10, in the pool below it, not in the pool
    assert pool["overall"]["gold_turns"] == 3 and pool["2"]["gold_turns"] == 1 and pool["4"]["gold_turns"] == 2
    assert pool["overall"]["top10"] + pool["overall"]["pool_below_10"] + pool["overall"]["not_in_pool"] == 3
    assert pool["overall"]["pool"] == 100.0  # four turns: every one is ranked
