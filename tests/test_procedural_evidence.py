"""Instructions are evidence (issue 31): a document's instruction is one procedural record, which the graph
extracts and recall returns among its fused records with its citations and the passage they name; skills and a
task session's records keep recall's typed path. The documents are written for these tests."""

from __future__ import annotations

from pathlib import Path

from conftest import make_record
from memrepo.api import MemoryRepo
from memrepo.graph.model import graph_path, holds_frames, indexed_id, indexed_path
from memrepo.write import documents

RUNBOOK = """# Billing runbook

## Restore

1. Stop the ingest workers before a restore.
2. Restore the latest snapshot with `pgrestore --clean`.
3. Page the database lead if the restore takes longer than 40 minutes.

## Contacts

Marek Nowak is the database lead.
Ilona Berg joined the billing team in March and now owns the invoice exporter.
"""


def ingested(repo: MemoryRepo, tmp_path: Path) -> MemoryRepo:
    doc = tmp_path / "runbook.md"
    doc.write_text(RUNBOOK, encoding="utf-8")
    repo.ingest([doc], mention_time="2026-05-04")
    return repo


def texts(repo: MemoryRepo, type_: str) -> set[str]:
    return {r.text for r in repo.records(type_)}


def window(*items: str) -> dict:
    parts = [{"anchor": f"runbook/Restore:{n}", "text": f"{n}. {t}", "block": "item", "section": "Restore"}
             for n, t in enumerate(items, 1)]
    return {"parts": parts, "allowed": ["episodic", "semantic", "procedural"]}


def test_an_instruction_is_a_procedural_record_and_no_semantic_one(repo, tmp_path):
    ingested(repo, tmp_path)
    steps = {"Stop the ingest workers before a restore.", "Restore the latest snapshot with pgrestore --clean.",
             "Page the database lead if the restore takes longer than 40 minutes."}
    assert texts(repo, "procedural") == steps
    assert not steps & texts(repo, "semantic")
    # The router files a window of steps as what it is, procedural only.
    only_steps = window("Stop the ingest workers before a restore.", "Page the on-call lead after 20 minutes.")
    assert documents.document_route_offline(only_steps)["types"] == ["procedural"]
    assert documents.facts_offline(only_steps)["facts"] == []


def test_an_event_that_says_what_someone_does_now_is_an_event_and_a_fact(repo, tmp_path):
    ingested(repo, tmp_path)
    said = "Ilona Berg joined the billing team in March and now owns the invoice exporter."
    assert said in texts(repo, "episodic") and said in texts(repo, "semantic")
    (statement,) = documents.statements({"text": said, "block": "paragraph", "section": "Contacts"})
    assert statement.types == ("episodic", "semantic") and statement.type == "episodic"
    # An event that states nothing more stays an event only.
    (event,) = documents.statements({"text": "The exporter was moved to a new host in April.", "block": "paragraph"})
    assert event.types == ("episodic",)


def test_recall_returns_an_instruction_with_its_citation_and_passage(repo, tmp_path):
    ingested(repo, tmp_path)
    (step,) = [r for r in repo.records("procedural") if r.text.startswith("Stop the ingest workers")]
    result = repo.recall("What should be stopped before a restore?")
    row = result.records[0]
    assert row.id == step.id and row.type == "procedural" and row.lane != "procedural"
    assert row.sources == list(step.sources) and row.sources[0].endswith("#runbook/Restore:1")
    assert row.parts == [{"citation": row.sources[0], "text": "1. Stop the ingest workers before a restore."}]
    assert step.id not in [t.id for t in result.typed]  # once, among the records
    answer = repo.ask("Which command restores the latest snapshot?")
    assert "pgrestore --clean" in answer.answer
    assert any(i.startswith("pr-") for i in answer.record_ids)


def test_the_graph_extracts_instructions_and_not_skills_or_task_sessions(repo, tmp_path):
    ingested(repo, tmp_path)
    snap = repo.store.snapshot()
    files = [snap.read(graph_path(step.id)) for step in repo.records("procedural")]
    assert files and all(b"mr:mentionedIn" in f for f in files)  # extracted like facts: their anchors lead to them
    instruction = make_record("procedural", "Always lock the screen before leaving.", kind="instruction")
    session = make_record("procedural", "Task: book a table\nOutcome: success", kind="task-session")
    said_in_it = make_record("procedural", "Always ask about allergies.", kind="instruction", session=session.id)
    assert holds_frames(instruction) and not holds_frames(session) and not holds_frames(said_in_it)
    assert indexed_id(instruction.id) and not indexed_id("skill-online-shopping")
    assert indexed_path(instruction.path) and not indexed_path("procedural/skills/online-shopping/SKILL.md")


def test_a_full_scan_finds_an_instruction_without_a_graph_file(repo, tmp_path):
    from memrepo.graph.work import graph_work

    ingested(repo, tmp_path)
    step = repo.records("procedural")[0]
    repo.store.commit({graph_path(step.id): None}, "A graph file lost")
    work = graph_work(repo.store.snapshot())
    assert [path for path, _blob in work.extract] == [step.path]  # what a clone caught up before extracts once


SKILL = """---
name: restore-drill
description: How to run a restore drill of the billing database
---
Stop the ingest workers, restore the latest snapshot, and time the restore.
"""


def test_a_skill_stays_typed_and_the_fallback_read_returns_instructions(repo, tmp_path):
    from memrepo.read.recall import recall

    ingested(repo, tmp_path)
    repo.store.commit({"procedural/skills/restore-drill/SKILL.md": SKILL.encode()}, "A hand-written skill")
    question = "How do I restore the latest snapshot?"
    result = repo.recall(question)
    assert "skill-restore-drill" in [t.id for t in result.typed]
    assert "skill-restore-drill" not in [r.id for r in result.records]

    def broken(*_args: object) -> object:
        raise OSError("the graph index is unreadable")

    fallen = recall(repo.store, repo.settings, question, graph_opener=broken)
    assert fallen.fallback and any(r.type == "procedural" and r.sources for r in fallen.records)
    assert "skill-restore-drill" not in [r.id for r in fallen.records]
    assert "skill-restore-drill" in [t.id for t in fallen.typed]
