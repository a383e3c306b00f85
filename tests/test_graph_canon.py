"""Registry-guided canonicalization and the model path of the graph roles (real embedder, real HTTP server)."""

from __future__ import annotations

import json

import pytest
from openai_server import ScriptedOpenAI

from memrepo.api import MemoryRepo
from memrepo.graph.canon import AnchorRegistry, decide_offline, validated_renames
from memrepo.index.embed import get_embedder


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()


def test_candidates_are_at_most_four_above_the_threshold_and_the_offline_decision_is_conservative(embedder):
    registry = AnchorRegistry(embedder)
    registry.add([("Menya Kaiko", "location"), ("Tokyo Station", "location"), ("Hiroshi Tanabe", "person"),
                  ("10 gallons tank", "object"), ("Tokyo Tower", "location"), ("Tokyo Bay", "location"),
                  ("Tokyo Dome", "location"), ("Tokyo Skytree", "location")])
    names = ["MenyaKaiko", "Hiroshi", "Tokyo", "20 gallons tank", "banana bread"]
    cands = registry.candidates(names)
    assert all(len(c) <= 4 and all(score >= 0.72 for _, score in c) for c in cands.values())
    assert "banana bread" not in cands
    types = {"MenyaKaiko": "location", "Hiroshi": "person", "Tokyo": "location", "20 gallons tank": "object"}
    items = [{"name": n, "type": types[n], "candidates": [{"name": c, "cosine": s, "type": registry.type_for(c)}
                                                          for c, s in cands[n]]} for n in cands]
    renames = validated_renames(decide_offline({"entities": items}), cands)
    assert renames.get("MenyaKaiko") == "Menya Kaiko"
    assert renames.get("Hiroshi") == "Hiroshi Tanabe"
    assert "Tokyo" not in renames  # a city is not its station
    assert "20 gallons tank" not in renames  # different quantities never merge


def test_a_rename_outside_the_retrieved_candidates_is_ignored():
    cands = {"Suica": [("Suica card", 0.8)]}
    reply = {"decisions": [{"entity": "Suica", "choice": "Pasmo card"}, {"entity": "Other", "choice": "Suica card"}]}
    assert validated_renames(reply, cands) == {}
    assert validated_renames({"decisions": [{"entity": "Suica", "choice": "Suica card"}]}, cands) == {"Suica": "Suica card"}


def test_later_records_reuse_the_canonical_anchor(repo):
    first = repo.new_record("episodic", "I met Hiroshi Tanabe at the pottery course in Kasama.", actor="Mia",
                            mention_time="2023-05-09T10:00:00+09:00", source="t", position="1")
    repo.add([first])
    repo.index_graph()
    second = repo.new_record("episodic", "Hiroshi taught me centering at the studio.", actor="Mia",
                             mention_time="2023-05-16T10:00:00+09:00", source="t", position="2")
    repo.add([second])
    repo.index_graph()
    info = repo.graph_anchor("Hiroshi Tanabe").anchor
    assert info.episodic == sorted([first.id, second.id])


# --- the model path ------------------------------------------------------------------------


def _reply_for(request: dict, replies: dict[str, dict]) -> str:
    system = request["messages"][0]["content"]
    for marker, reply in replies.items():
        if system.startswith(marker):
            return json.dumps(reply)
    raise AssertionError(f"unexpected role prompt: {system[:60]}")


EXTRACTED = {
    "entities": [{"name": "Mia", "type": "person"}, {"name": "Suica card", "type": "object"},
                 {"name": "Tokyo Station", "type": "location"}, {"name": "user", "type": "person"}],
    "frames": [
        {"predicate": "Buy", "arms": [{"role": "buyer", "entity": "Mia"}, {"role": "item", "entity": "Suica card"},
                                      {"role": "location", "entity": "Tokyo Station"}],
         "literals": [{"key": "price", "value": "2,000 yen"}], "event_time": "2023-05-02", "status": "done"},
        {"predicate": "talk_to", "arms": [{"role": "agent", "entity": "Mia"}, {"role": "listener", "entity": "user"}],
         "literals": [], "event_time": None, "status": "done"},
    ],
}
REPAIRED = {
    "entities": [{"name": "Suica card", "type": "object"}, {"name": "Atlantis", "type": "location"}],
    "frames": [
        {"predicate": "top_up", "arms": [{"role": "agent", "entity": "Mia"}, {"role": "item", "entity": "Suica card"}],
         "literals": [{"key": "amount", "value": "5,000 yen"}], "event_time": None, "status": "done"},
        {"predicate": "visit", "arms": [{"role": "agent", "entity": "Mia"}, {"role": "place", "entity": "Atlantis"}],
         "literals": [], "event_time": None, "status": "done"},
    ],
}


def test_model_extraction_goes_through_the_gate_the_audit_and_one_bounded_repair(tmp_path, no_after_write):
    with ScriptedOpenAI() as server:
        MemoryRepo.init(tmp_path / "m").close()
        repo = no_after_write(MemoryRepo.open(tmp_path / "m", settings=server.settings()))
        server.responder = lambda request: _reply_for(request, {
            "You extract": EXTRACTED, "You repair": REPAIRED,
            "You decide": {"decisions": [{"entity": "Suica card", "choice": "Pasmo card"}]},
        })
        record = repo.new_record("episodic", "I bought a Suica card at Tokyo Station for 2,000 yen and put 5,000 yen on it.",
                                 actor="Mia", mention_time="2023-05-02T14:03:00+09:00", source="t", position="1")
        repo.add([record])
        result = repo.index_graph()
        assert result.indexed == [record.id] and result.repaired == 1
        roles = [json.dumps(r["messages"][0]["content"][:12]) for r in server.requests]
        assert sum("You repair" in r for r in roles) == 1  # one bounded repair call
        repair_request = next(r for r in server.requests if r["messages"][0]["content"].startswith("You repair"))
        assert "5,000" in repair_request["messages"][1]["content"]
        frames = {f.predicate: f for f in repo.graph_frames(limit=None)}
        assert set(frames) == {"buy", "top_up"}  # "user" was refused by the gate; "Atlantis" is not in the source
        assert frames["buy"].literals == {"price": ["2,000 yen"]} and frames["buy"].event_times == ["2023-05-02"]
        assert frames["buy"].citations == [record.id]
        with pytest.raises(Exception, match="no anchor"):
            repo.graph_anchor("user")
        repo.close()


def test_a_model_that_fails_leaves_records_in_place_and_index_says_so(tmp_path, no_after_write):
    from click.testing import CliRunner

    from memrepo.cli import cli

    with ScriptedOpenAI() as server:
        MemoryRepo.init(tmp_path / "m").close()
        with no_after_write(MemoryRepo.open(tmp_path / "m")) as repo:
            record = repo.new_record("episodic", "I bought a bike in Kyoto.", actor="Mia",
                                     mention_time="2023-05-02", source="t", position="1")
            repo.add([record])
        server.responder = lambda request: "this is not JSON"
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "k", "MEMREPO_LLM_MODEL": "scripted"}
        out = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "index"], env=env)
        assert out.exit_code == 1
        assert f"warning: {record.id}: ModelError" in out.output and "run `memrepo index` again" in out.output
        with MemoryRepo.open(tmp_path / "m") as repo:
            assert repo.get(record.id).text == "I bought a bike in Kyoto."
            assert not repo.store.snapshot().exists(f"graph/frames/2023/05/{record.id}.ttl")
            result = repo.index_graph()  # offline now: the catch-up completes
            assert result.indexed == [record.id]


def test_the_offline_decision_gets_the_same_renames_without_a_vector_search_for_names_it_cannot_rename(embedder):
    registry = AnchorRegistry(embedder)
    registry.add([("Menya Kaiko", "location"), ("Tokyo Station", "location"), ("Hiroshi Tanabe", "person"),
                  ("10 gallons tank", "object"), ("Tokyo Tower", "location"), ("ramen shop", "location"),
                  ("pottery course", "activity"), ("Kasama", "location")])
    names = ["MenyaKaiko", "Hiroshi", "Tokyo", "20 gallons tank", "ramen shops place", "pottery",
             "Kasama city", "banana bread"]
    types = {n: "person" if n == "Hiroshi" else "concept" for n in names}

    def renames(cands):
        items = [{"name": n, "type": types[n], "candidates": [{"name": c, "cosine": s, "type": registry.type_for(c)}
                                                              for c, s in cands[n]]} for n in cands]
        return validated_renames(decide_offline({"entities": items}), cands)

    full = registry.candidates(names)
    assert len(full) >= 5  # names the offline rules never rename still have candidates
    short = registry.candidates(names, offline_decision=True)
    assert set(short) <= {"MenyaKaiko", "Hiroshi"}
    assert renames(short) == renames(full) == {"MenyaKaiko": "Menya Kaiko", "Hiroshi": "Hiroshi Tanabe"}


def test_a_write_whose_new_names_the_offline_rules_cannot_rename_does_not_load_the_embedder(repo):
    from memrepo.index import embed

    loaded = dict(embed._CACHE)
    embed._CACHE.clear()  # a fresh process: no model loaded yet
    try:
        first = repo.new_record("episodic", "I met Hiroshi Tanabe at the pottery course in Kasama.", actor="Mia",
                                mention_time="2023-05-09T10:00:00+09:00", source="t", position="1")
        repo.add([first])
        repo.index_graph()
        assert repo.graph_anchor("Hiroshi Tanabe").anchor is not None
        assert embed._CACHE == {}  # canonicalization matched keys only: the ONNX model (~1 s to load) stayed unloaded
        second = repo.new_record("episodic", "Hiroshi taught me centering at the studio.", actor="Mia",
                                 mention_time="2023-05-16T10:00:00+09:00", source="t", position="2")
        repo.add([second])
        repo.index_graph()
        assert embed._CACHE  # "Hiroshi" may be "Hiroshi Tanabe": that needs the vector search
        assert repo.graph_anchor("Hiroshi Tanabe").anchor.episodic == sorted([first.id, second.id])
    finally:
        embed._CACHE.update(loaded)
