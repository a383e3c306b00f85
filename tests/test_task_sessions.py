"""A task session answers questions about what happened in it (issue 31).

An agent's session (its request, tool calls, tool replies and failures, the user's standing instructions) is
ingested into a real repository as the parsers read it (an agent run with ``tool_calls`` and ``tool`` replies, and
JSONL of ``{task, messages, outcome}`` sessions); then recall and ask are put questions about a failed tool call
and a standing instruction. The sessions are written for this test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.dream.skills import pending_sessions
from memrepo.errors import VaultKeyError
from memrepo.records import split_citation
from memrepo.settings import Settings
from memrepo.vault import generate_key
from memrepo.write import sessions

POLICY = "You are a studio assistant with shell and portal tools. " * 40  # an agent's policy: no step


def _call(call_id: str, name: str, **arguments: object) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def gallery_run(reply: str = "compressed 214 images from 3.1 GB to 640 MB") -> dict:
    """An agent run: a system policy, a request holding a standing instruction, a tool call that fails, a retry."""
    return {
        "task": "Publish the photo gallery for the Lindholm wedding to the client portal.",
        "date": "2026-09-14T08:30:00Z",
        "messages": [
            {"role": "system", "content": POLICY},
            {"role": "user", "content": "Publish the Lindholm wedding gallery to the client portal. "
                                        "From now on, always compress the images before uploading them."},
            {"role": "assistant", "content": "I will compress the images first and then upload the gallery.",
             "tool_calls": [_call("c1", "compress_images", folder="galleries/lindholm", quality=82)]},
            {"role": "tool", "tool_call_id": "c1", "name": "compress_images", "content": reply},
            {"role": "assistant", "content": None, "tool_calls": [_call("c2", "portal_upload", album="lindholm-2026")]},
            {"role": "tool", "tool_call_id": "c2", "name": "portal_upload",
             "content": "Error: quota exceeded on the portal account (limit 500 MB)"},
            {"role": "assistant", "content": "I archived last year's albums to free space.",
             "tool_calls": [_call("c3", "portal_upload", album="lindholm-2026")]},
            {"role": "tool", "tool_call_id": "c3", "name": "portal_upload",
             "content": "uploaded 214 images to album lindholm-2026"},
        ],
        "outcome": {"status": "success", "text": "Success: the Lindholm gallery is on the client portal."},
    }


def errand_sessions() -> list[dict]:
    """Two task sessions of the ``{task, messages, outcome}`` shape, no tool calls."""
    return [
        {"task": "Book a train to Bremen for the trade fair.", "date": "2026-10-02T07:00:00Z",
         "messages": [
             {"role": "user", "content": "Book a train to Bremen on 12 October. Never book a seat in the quiet zone."},
             {"role": "assistant", "content": "The 09:14 train was sold out, so I booked the 10:14 train in coach 7."},
         ],
         "outcome": {"status": "success", "text": "Success: booked the 10:14 train to Bremen, coach 7."}},
        {"task": "Order printer toner for the office.", "date": "2026-10-05T09:00:00Z",
         "messages": [
             {"role": "user", "content": "Order two black toner cartridges for the office printer."},
             {"role": "assistant", "content": "The supplier's shop rejected the order because the card had expired."},
         ],
         "outcome": {"status": "failure", "text": "Failure: no toner ordered; the card on file has expired."}},
    ]


def ingest(repo: MemoryRepo, folder: Path, name: str, data: dict | list[dict]) -> Path:
    path = folder / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(d) + "\n" for d in data), encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    repo.ingest([path])
    return path


def anchors(record) -> list[str]:
    return [split_citation(c)[1] for c in record.sources]


def session_record(repo: MemoryRepo):
    (record,) = [r for r in repo.records("procedural") if r.extra.get("kind") == "task-session"]
    return record


def test_a_failed_tool_call_is_recalled_with_its_error_and_the_parts_it_rests_on(repo, tmp_path):
    ingest(repo, tmp_path, "run.json", gallery_run())
    first = repo.recall("Which tool failed?").records[0]
    assert first.text == ("assistant called portal_upload with album: lindholm-2026; portal_upload failed: "
                          "Error: quota exceeded on the portal account (limit 500 MB)")
    failed = repo.get(first.id)
    assert failed.type == "episodic" and anchors(failed) == ["t5", "t6"]  # the call and the reply it got
    answer = repo.ask("What was the error of the upload?")
    assert "quota exceeded" in answer.answer and first.id in answer.record_ids
    # Each step is one event: the request, what the agent said, each call with its reply, the outcome.
    steps = sorted(anchors(r) for r in repo.records("episodic"))
    assert steps == [["outcome"], ["t2"], ["t3"], ["t3", "t4"], ["t5", "t6"], ["t7"], ["t7", "t8"]]
    assert not any(POLICY[:40] in r.text for r in repo.records())  # a system policy is no step


def test_a_standing_instruction_is_its_own_procedural_record(repo, tmp_path):
    ingest(repo, tmp_path, "run.json", gallery_run())
    (rule,) = [r for r in repo.records("procedural") if r.extra.get("kind") == "instruction"]
    assert rule.text == "From now on, always compress the images before uploading them."
    assert anchors(rule) == ["t2"] and rule.extra["session"] == session_record(repo).id
    assert rule.id in [row.id for row in repo.recall("What should always be done before uploading images?").typed]
    assert "compress the images" in repo.ask("What should always be done before uploading images?").answer


def test_the_session_record_keeps_the_steps_in_short_and_waits_for_distillation(repo, tmp_path):
    long_reply = "compressed 214 images; " + "image ok; " * 600
    ingest(repo, tmp_path, "run.json", gallery_run(reply=long_reply))
    record = session_record(repo)
    assert record.extra["distillation"] == "pending" and record.extra["outcome"] == "success"
    assert anchors(record) == ["task", *[f"t{i}" for i in range(1, 9)], "outcome"]
    body = record.text.split("\n\nSteps:\n", 1)[1].split("\n")
    assert body[0] == ("1. user: Publish the Lindholm wedding gallery to the client portal. From now on, always "
                       "compress the images before uploading them.")
    assert body[3] == ("4. assistant called portal_upload with album: lindholm-2026; portal_upload failed: "
                       "Error: quota exceeded on the portal account (limit 500 MB)")
    assert len(body) == 6 and all(len(line) <= sessions.MAX_LINE_CHARS for line in body)
    (source,) = repo.sources()
    assert source.part("t4").text == long_reply  # the source keeps the whole reply; the steps keep it in short
    assert [s.id for s in pending_sessions(repo.store, repo.snapshot)] == [record.id]  # rules are not sessions


def test_jsonl_sessions_answer_what_the_user_asked_and_what_went_wrong(repo, tmp_path):
    path = ingest(repo, tmp_path, "errands.jsonl", errand_sessions())
    (rule,) = [r for r in repo.records("procedural") if r.extra.get("kind") == "instruction"]
    assert rule.text == "Never book a seat in the quiet zone."
    said = "assistant: The supplier's shop rejected the order because the card had expired."
    assert repo.recall("Why did the shop reject the order?").records[0].text == said
    assert "the card had expired" in repo.ask("Why was the toner order rejected?").answer
    assert "two black toner cartridges" in repo.ask("What did the user ask to order?").answer
    assert repo.ingest([path]).commits == []  # the same file again writes nothing


def _objects(root: Path) -> bytes:
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True,
                          check=True).stdout


def _with_token_reply() -> tuple[dict, str]:
    token = "ghp_" + "Rk3VqW8nTz5L" * 3  # built here, not a literal a scanner would flag
    run = gallery_run(reply=f"compressed 214 images; upload token {token} for the portal")
    return run, token


def test_a_secret_in_a_tool_reply_is_sealed_with_a_key_and_refused_without_one(tmp_path):
    run, token = _with_token_reply()
    MemoryRepo.init(tmp_path / "plain").close()
    with MemoryRepo.open(tmp_path / "plain") as repo:
        before = repo.store.head()
        with pytest.raises(VaultKeyError, match="no vault key"):
            ingest(repo, tmp_path, "run.json", run)
        assert repo.store.head() == before and token.encode() not in _objects(repo.root)
    MemoryRepo.init(tmp_path / "keyed").close()
    with MemoryRepo.open(tmp_path / "keyed", settings=Settings(vault_key=generate_key())) as repo:
        ingest(repo, tmp_path, "run.json", run)
        assert token.encode() not in _objects(repo.root)
        assert not any(token.encode() in p.read_bytes() for p in repo.root.rglob("*") if p.is_file())
        step = next(r for r in repo.records("episodic") if "compress_images returned" in r.text)
        assert "[kept in the vault" in step.text


def test_the_users_facts_are_semantic_and_the_agents_reports_are_steps_only(repo, tmp_path):
    run = {"task": "Find a flight to Porto.", "date": "2026-08-01T10:00:00Z", "reward": 1, "messages": [
        {"role": "user", "content": "Find me a flight to Porto. My team lead is Ortrud Winkel."},
        {"role": "assistant", "content": "Flight Number: QX210\nPrice: $240"},
    ]}
    ingest(repo, tmp_path, "porto.json", run)
    assert [r.text for r in repo.records("semantic")] == ["user: My team lead is Ortrud Winkel."]
    assert "assistant: Flight Number: QX210\nPrice: $240" in [r.text for r in repo.records("episodic")]


def test_through_a_model_the_steps_are_the_sessions_and_the_instructions_the_models(repo, tmp_path):
    """The model writes the summary and names the instructions; the steps listed are read from the session."""
    from openai_server import ScriptedOpenAI

    sent: dict[str, dict] = {}

    def model(request: dict) -> str:
        role = request["response_format"]["json_schema"]["name"]
        schema = request["response_format"]["json_schema"]["schema"]
        sent[role] = schema
        if role == "router":
            return json.dumps({"types": []})
        anchors = schema["properties"]["events" if role == "episodic_writer" else "instructions"]["items"][
            "properties"]["anchors"]["items"]["enum"]
        if role == "episodic_writer":
            return json.dumps({"events": [{"anchors": ["t5", "t6"], "text": "The first upload hit the quota.",
                                           "status": "done"}]})
        assert role == "procedural_writer" and "t2" in anchors
        return json.dumps({"task": "Publish the Lindholm gallery.", "outcome": "success",
                           "summary": "Compressed, hit the quota, archived old albums, uploaded.",
                           "instructions": [{"anchors": ["t2"], "text": "Always compress the images first."}]})

    with ScriptedOpenAI() as server:
        server.responder = model
        llm = MemoryRepo.open(repo.root, settings=server.settings())
        llm.ctx = llm.ctx.with_capabilities(after_commit={})  # the scripted model only knows the write-path roles
        ingest(llm, tmp_path, "run.json", gallery_run())
        record = session_record(llm)
        assert record.text.startswith("Task: Publish the Lindholm gallery.\nOutcome: success\n\nCompressed, hit")
        assert ("4. assistant called portal_upload with album: lindholm-2026; portal_upload failed: Error: quota "
                "exceeded on the portal account (limit 500 MB)") in record.text.split("\n")
        (rule,) = [r for r in llm.records("procedural") if r.extra.get("kind") == "instruction"]
        assert rule.text == "Always compress the images first." and anchors(rule) == ["t2"]
        assert [r.text for r in llm.records("episodic")] == ["The first upload hit the quota."]
        llm.close()
    assert "instructions" in sent["procedural_writer"]["properties"]
