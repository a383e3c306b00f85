"""One reader of the graph index: the CLI, recall, AutoDream and the viewer see the same name and status.

memrepo had two readers of the graph index (``graph/index.py`` for the CLI and the viewer,
``read/graphsql.py`` for recall) that named a merged anchor and stated a frame's status
differently; these tests ask both surfaces and compare.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from memrepo.cli import cli
from memrepo.graph.kappa import kappa
from memrepo.graph.model import anchor_iri


def _said(repo, actor: str, text: str, position: str, when: str, **fields):
    return repo.new_record("episodic", text, actor=actor, mention_time=when, source="t", position=position, **fields)


def merged_repo(repo):
    """"Mia Tanaka" (2 records) kept as the representative of "Mimi" (3 records), merged by owl:sameAs; one
    climb frame that one record planned and a later one says was done."""
    repo.add([
        _said(repo, "Mia Tanaka", "I will climb Mount Fuji on August 12.", "1", "2023-06-14T21:02:00", status="planned"),
        _said(repo, "Mia Tanaka", "I climbed Mount Fuji on August 12.", "2", "2023-08-13T09:00:00"),
        _said(repo, "Mimi", "I bought a bike in Kyoto.", "3", "2023-05-01T10:00:00"),
        _said(repo, "Mimi", "I painted a lake.", "4", "2023-05-02T10:00:00"),
        _said(repo, "Mimi", "I visited Osaka.", "5", "2023-05-03T10:00:00"),
    ])
    ns = repo.settings.namespace
    rep, alias = anchor_iri(ns, kappa("Mia Tanaka")), anchor_iri(ns, kappa("Mimi"))
    decision = f"<{alias}> <http://www.w3.org/2002/07/owl#sameAs> <{rep}> .\n".encode()
    repo.store.commit({"graph/decisions/2023/08/merge.ttl": decision}, "Mimi is Mia Tanaka")
    return rep


def test_a_merged_anchor_has_one_name_in_the_cli_and_in_recall(repo):
    rep = merged_repo(repo)
    shown = repo.graph_anchor("Mimi").anchor
    assert (shown.iri, shown.name, shown.aliases) == (rep, "Mia Tanaka", ["Mimi"])  # the kept representative's name
    result = repo.recall("When did Mia Tanaka climb Mount Fuji?")
    [hit] = [a for a in result.anchors if a.iri == rep]
    assert hit.name == shown.name
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "graph", "anchor", "Mia Tanaka", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["name"] == "Mia Tanaka"


def test_a_frame_planned_then_done_has_one_status_in_the_cli_and_in_recall(repo):
    merged_repo(repo)
    [climb] = repo.graph_frames(predicate="climb")
    assert climb.statuses == ["done", "planned"] and climb.status == "done"
    assert climb.to_dict()["status"] == "done"
    result = repo.recall("When did Mia Tanaka climb Mount Fuji?")
    [fact] = [f for f in result.facts if f.id == climb.iri]
    assert fact.status == climb.status
    [arm] = [a for a in fact.arms if a.role == "agent"]
    assert arm.label == "Mia Tanaka"


def test_a_hub_is_named_by_all_its_labels_not_by_the_first_ones_indexed(repo):
    """The recall path named an anchor by its first 48 label rows; 50 later files that say "Mia" now win."""
    from memrepo.graph.reader import open_graph

    iri = anchor_iri(repo.settings.namespace, "mia")

    def graph_file(n: int, label: str) -> bytes:
        return (f'<{iri}> a <urn:memrepo:ns#Anchor> ; <http://www.w3.org/2000/01/rdf-schema#label> "{label}" ; '
                f'<urn:memrepo:ns#entityType> "person" ; <urn:memrepo:ns#key> "mia" ; '
                f'<urn:memrepo:ns#mentionedIn> <urn:memrepo:memory:ep-2023-05-01-{n:08x}> .\n').encode()

    files = {f"graph/frames/2023/05/ep-2023-05-01-{n:08x}.ttl": graph_file(n, "mia" if n < 48 else "Mia")
             for n in range(98)}
    repo.store.commit(files, "graph files by hand")
    graph = open_graph(repo.store, repo.settings, None)
    try:
        [info] = graph.anchors_by_keys(["mia"])
    finally:
        graph.close()
    assert info.name == "Mia" == repo.graph_anchor("mia").anchor.name


def test_one_anchor_name_index_and_an_old_second_one_is_removed_quietly(repo):
    from memrepo.capabilities import DERIVED_INDEXES
    from memrepo.index.base import index_root

    assert [n for n, target in DERIVED_INDEXES.items() if "AnchorName" in target or "names" in n] == ["anchornames"]
    repo.add([_said(repo, "Mia", "I bought a bike in Kyoto.", "1", "2023-05-01T10:00:00")])
    old = index_root(repo.store, "dreamnames")
    (old / "g000001").mkdir(parents=True)
    (old / "g000001" / "anchors.json").write_text("{}", encoding="utf-8")
    (old / "CURRENT").write_text("g000001\n", encoding="utf-8")
    assert [p for p in repo.doctor() if "dreamnames" in p.path or "dreamnames" in p.message] == []
    repo.reindex(full=True)
    assert not old.exists()
    assert repo.doctor() == []
