"""The model backend with the real `openai` client against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_server import ScriptedOpenAI

from conftest import EXAMPLES
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import ModelError
from memrepo.llm import STATS_FILE, get_backend, read_stats
from memrepo.llm.prompts import render
from memrepo.llm.schema import validate
from memrepo.settings import LLMSettings, Settings

ROUTER_SCHEMA = {
    "type": "object",
    "required": ["types"],
    "properties": {"types": {"type": "array", "items": {"type": "string", "enum": ["episodic", "semantic"]}}},
}
ROUTER_VARS = {"kind": "note", "title": "t", "date": "2023-05-02", "transcript": "n1 Mia moved to Lisbon",
               "allowed": ["episodic", "semantic"]}


def never(_: dict) -> dict:
    raise AssertionError("the offline implementation must not run when an endpoint is configured")


@pytest.fixture
def server():
    with ScriptedOpenAI() as s:
        yield s


def test_normal_run_sends_schema_and_prompt_and_records_usage(server, tmp_path):
    server.enqueue({"types": ["episodic", "semantic"]}, usage=(120, 9))
    stats = tmp_path / STATS_FILE
    backend = get_backend(server.settings(), stats)
    assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": ["episodic", "semantic"]}
    backend.close()
    (request,) = server.requests
    assert request["model"] == "scripted" and request["max_tokens"] == 2048 and request["temperature"] == 0
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == ROUTER_SCHEMA
    system, user = request["messages"]
    assert "Meta Memory Manager" in system["content"] and '"enum"' in system["content"]
    assert "n1 Mia moved to Lisbon" in user["content"]
    row = read_stats(stats)["router"]
    assert (row.calls, row.input_tokens, row.output_tokens, row.repairs, row.failed_calls) == (1, 120, 9, 0, 0)
    assert row.seconds > 0


def test_malformed_json_then_a_good_reply_is_repaired(server):
    server.enqueue('{"types": ["episodic"')
    server.enqueue('```json\n{"types": ["semantic"]}\n```')
    backend = get_backend(server.settings())
    assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": ["semantic"]}
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"types": ["episodic"'}
    assert "not JSON" in repair[-1]["content"]
    assert backend.summary()["router"]["repairs"] == 1


def test_schema_violation_then_a_good_reply_is_repaired(server):
    server.enqueue({"types": ["diary"]})
    server.enqueue({"types": ["episodic"]})
    backend = get_backend(server.settings())
    assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": ["episodic"]}
    assert "'diary' is not one of" in server.requests[1]["messages"][-1]["content"]


ENTRY_SCHEMA = {
    "type": "object",
    "required": ["entries"],
    "$defs": {"entry": {"type": "object", "required": ["anchor"],
                        "properties": {"anchor": {"type": "string"},
                                       "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}}}},
    "properties": {"entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}}},
}


def test_every_schema_problem_is_sent_back_with_its_path(server):
    # Problems the old hand-written subset never saw ($ref, uniqueItems) are repaired, each naming its field.
    server.enqueue({"entries": [{"anchor": "a1"}, {"anchor": 7, "tags": ["x", "x"]}, {}]})
    server.enqueue({"entries": [{"anchor": "a1", "tags": ["x"]}]})
    backend = get_backend(server.settings())
    assert backend.run("router", ROUTER_VARS, ENTRY_SCHEMA, never) == {"entries": [{"anchor": "a1", "tags": ["x"]}]}
    repair = server.requests[1]["messages"][-1]["content"]
    assert "- $.entries[1].anchor: expected string, got int" in repair
    assert "- $.entries[1].tags: ['x', 'x'] has non-unique elements" in repair
    assert "- $.entries[2]: missing required field 'anchor'" in repair


def test_a_reply_still_invalid_after_repair_names_the_field_path(server):
    server.enqueue({"entries": [{"anchor": "a1", "tags": ["x", "x"]}]})
    server.enqueue({"entries": [{"anchor": "a1", "tags": ["y", "y"]}]})
    backend = get_backend(server.settings())
    with pytest.raises(ModelError, match=r"role 'router'.*still invalid.*\$\.entries\[0\]\.tags: .* non-unique"):
        backend.run("router", ROUTER_VARS, ENTRY_SCHEMA, never)


def test_rate_limit_then_success_is_retried(server):
    server.enqueue(status=429)
    server.enqueue(status=503)
    server.enqueue({"types": []})
    backend = get_backend(server.settings(max_retries=3))
    assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": []}
    assert len(server.requests) == 3


def test_rate_limit_that_never_ends_names_the_role(server):
    for _ in range(3):
        server.enqueue(status=429)
    backend = get_backend(server.settings(max_retries=2))
    with pytest.raises(ModelError, match=r"role 'router'.*429"):
        backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never)
    assert backend.summary()["router"]["failed_calls"] == 1


def test_timeout_is_a_clear_error(server):
    server.enqueue({"types": []}, delay=1.5)
    backend = get_backend(server.settings(timeout=0.3, max_retries=0))
    with pytest.raises(ModelError, match=r"role 'router'.*did not answer within 0.3 s"):
        backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never)


def test_endpoint_without_json_schema_falls_back_to_json_object():
    with ScriptedOpenAI(reject_json_schema=True) as server:
        server.enqueue({"types": ["episodic"]})
        server.enqueue({"types": ["semantic"]})
        backend = get_backend(server.settings())
        assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": ["episodic"]}
        assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never) == {"types": ["semantic"]}
        formats = [r.get("response_format", {}).get("type") for r in server.requests]
        # json_schema is refused once; the backend remembers and asks for json_object after that,
        # with the schema as llama.cpp's server takes it.
        assert formats == ["json_schema", "json_object", "json_object"]
        assert server.requests[1]["response_format"]["schema"] == ROUTER_SCHEMA


def test_reply_that_never_becomes_valid_names_role_and_problem(server):
    server.enqueue("I think you should remember this.")
    server.enqueue({"kinds": ["episodic"]})
    backend = get_backend(server.settings())
    with pytest.raises(ModelError) as err:
        backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, never)
    assert "role 'router'" in str(err.value) and "missing required field 'types'" in str(err.value)
    assert len(server.requests) == 2  # exactly one repair retry


def test_unknown_role_and_missing_variable_are_named(server):
    backend = get_backend(server.settings())
    with pytest.raises(ModelError, match="no prompt file templates/prompts/nosuchrole.md"):
        backend.run("nosuchrole", {}, ROUTER_SCHEMA, never)
    with pytest.raises(ModelError, match=r"router.md uses \{\{allowed\}\}"):
        backend.run("router", {"kind": "note"}, ROUTER_SCHEMA, never)
    assert server.requests == []


def test_endpoint_without_model_is_refused():
    with pytest.raises(ModelError, match="MEMREPO_LLM_MODEL"):
        get_backend(Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1")))


def test_offline_backend_runs_the_offline_function_and_checks_it(tmp_path):
    backend = get_backend(Settings(), tmp_path / STATS_FILE)
    assert backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, lambda v: {"types": ["episodic"]}) == {"types": ["episodic"]}
    with pytest.raises(ModelError, match="offline implementation returned an invalid reply"):
        backend.run("router", ROUTER_VARS, ROUTER_SCHEMA, lambda v: {"types": "episodic"})
    backend.close()
    assert read_stats(tmp_path / STATS_FILE)["router"].offline_calls == 1


def test_schema_validator_names_paths():
    schema = {"type": "object", "required": ["a"], "additionalProperties": False,
              "properties": {"a": {"type": "array", "maxItems": 1, "items": {"type": "integer", "minimum": 0}}}}
    assert validate({"a": [1]}, schema) == []
    assert validate({"a": [True, -1], "b": 1}, schema) == [
        "$: unexpected field 'b'", "$.a: at most 1 items allowed, got 2", "$.a[0]: expected integer, got bool",
        "$.a[1]: -1 is below the minimum 0"]


def test_prompt_without_user_part_sends_variables_as_json():
    system, user = render("x", "Be brief. {{schema}}", {"q": 1}, {"type": "object"})
    assert system["content"] == 'Be brief. {\n "type": "object"\n}'
    assert json.loads(user["content"]) == {"q": 1}


# --- the write path through the model -------------------------------------------


def _anchors(request: dict, key: str) -> list[str]:
    schema = request["response_format"]["json_schema"]["schema"]
    return schema["properties"][key]["items"]["properties"]["anchors"]["items"]["enum"]


def writer_responder(request: dict) -> str:
    """A well-behaved model: routes to episodic+semantic and writes one record per part."""
    role = request["response_format"]["json_schema"]["name"]
    if role == "router":
        return json.dumps({"types": ["episodic", "semantic"]})
    if role == "episodic_writer":
        return json.dumps({"events": [{"anchors": [a], "text": f"event of {a}", "event_time": "2023-05-02",
                                       "status": "done", "actor": "Mia"} for a in _anchors(request, "events")]})
    if role == "semantic_writer":
        first = _anchors(request, "facts")[0]
        return json.dumps({"facts": [{"anchors": [first], "text": f"fact from {first}", "subject": "Mia"}]})
    raise AssertionError(f"unexpected role {role}")


def test_ingest_through_the_model_commits_validated_records(server, repo):
    server.responder = writer_responder
    llm_repo = MemoryRepo.open(repo.root, settings=server.settings())
    llm_repo.ctx = llm_repo.ctx.with_capabilities(after_commit={})  # the scripted model only knows the write-path roles
    result = llm_repo.ingest([EXAMPLES / "conversation.txt"])
    assert result.records == {"episodic": 46, "semantic": 5}
    assert result.model["backend"] == "scripted"
    assert result.model["roles"]["router"]["calls"] == 5
    assert result.model["total"]["input_tokens"] == 11 * 15
    record = next(r for r in llm_repo.records("episodic") if r.text == "event of D2:9")
    assert record.sources[0].endswith("#D2:9") and record.event_time == "2023-05-02"
    assert llm_repo.cited_parts(record)[0][2] == "[shares a photo] Here he is on the sofa."

    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "stats", "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.output)
    assert stats["roles"]["episodic-writer"]["calls"] == 5
    assert stats["total"]["output_tokens"] == 7 * 15


def test_reply_never_valid_during_ingest_commits_nothing(server, repo, tmp_path):
    head = repo.store.head()
    server.responder = lambda request: '{"types": "everything"}'
    note = tmp_path / "note.txt"
    note.write_text("# Session 1: 2023-05-02 10:00\nMia: I am moving to Lisbon.\n")
    llm_repo = MemoryRepo.open(repo.root, settings=server.settings())
    with pytest.raises(ModelError, match=r"role 'router'.*\$\.types: expected array"):
        llm_repo.ingest([note])
    assert repo.store.head() == head
    assert llm_repo.records() == [] and llm_repo.sources() == []
    assert read_stats(Path(repo.store.state_dir) / STATS_FILE)["router"].failed_calls == 1
