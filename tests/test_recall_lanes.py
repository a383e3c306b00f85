"""The text and vector lanes: a turn the graph lanes do not reach (it names no anchor the entry keeps, and the
hub's rows are capped) still joins the pool when its words or its meaning match the question.

The history is the bounded-access test's (here 400 turns in which Mia, a hub, buys things), with one turn added in
its oldest session: the hub's rows are read newest first and capped, so the graph lanes never reach it.
"""

from __future__ import annotations

import pytest

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.read import constants as C

from test_recall_bounds import build_history

TEXT, VECTOR = C.TEXT_LANE, C.VECTOR_LANE  # the shipped depths
LOST_TURN = "Mia: Honestly the funeral of my grandmother left me crying every night, I miss her terribly."


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    repo = build_history(tmp_path_factory.mktemp("lanes") / "memory", 400)
    source_id = rec.make_source_id(namespace="default", origin="synthetic", position="extra", content=LOST_TURN,
                                   mention_time="2021-01-01")
    source = rec.Source(source_id, "conversation", "2021-01-01",
                        (rec.SourcePart("D0:1", LOST_TURN, {"speaker": "Mia"}),))
    record = repo.new_record("episodic", LOST_TURN, mention_time="2021-01-01", source=source_id, position="D0:1",
                             actor="Mia", sources=[f"{source_id}#D0:1"])
    repo.store.commit({source.path: rec.serialize_source(source), record.path: rec.serialize(record)},
                      "a turn no graph lane reaches")
    yield repo, record.id
    repo.close()


def _found(repo: MemoryRepo, question: str, monkeypatch, text: int, vector: int) -> list[str]:
    monkeypatch.setattr(C, "TEXT_LANE", text)
    monkeypatch.setattr(C, "VECTOR_LANE", vector)
    return repo.recall(question, types=["episodic", "semantic"]).record_ids


def test_the_text_lane_finds_a_turn_by_its_words(history, monkeypatch):
    repo, lost = history
    question = "When did Mia go to the funeral of her grandmother?"
    assert lost not in _found(repo, question, monkeypatch, 0, 0)  # the graph lanes alone do not reach it
    assert lost in _found(repo, question, monkeypatch, TEXT, 0)


def test_the_vector_lane_brings_a_turn_said_in_other_words_into_the_pool(history, monkeypatch):
    repo, lost = history
    question = "How is Mia coping with the death of a relative?"  # no content word of the turn but Mia

    def pool(vector: int) -> dict[str, list[str]]:
        monkeypatch.setattr(C, "VECTOR_LANE", vector)
        return {row["id"]: row["via"] for row in repo.recall(question, types=["episodic"]).base_lane}

    assert lost not in pool(0)
    assert "vector" in pool(VECTOR)[lost]


def test_the_lanes_keep_the_pool_bounded(history):
    repo, _lost = history
    result = repo.recall("What did Mia buy at North Market?", types=["episodic", "semantic"])
    assert result.inspected["rows"] <= C.BASE_POOL_CAP + C.TEXT_LANE + C.VECTOR_LANE + 4 * C.NEIGHBOUR_SEEDS
    via = {v for row in result.base_lane for v in row["via"]}
    assert {"text", "vector"} <= via
