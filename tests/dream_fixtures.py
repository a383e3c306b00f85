"""Builders for the AutoDream tests: semantic records with the graph files the offline extractor
writes, or graph files stated exactly (anchor names and types chosen by the test)."""

from __future__ import annotations

import json
from pathlib import Path

from memrepo.api import MemoryRepo
from memrepo.graph.model import AnchorRef, Arm, Frame, MemoryGraph, frame_iri, graph_path
from memrepo.graph.rdf import memory_turtle

#: The pair the offline judge merges: one volcano, named with and without its title; the record behind the
#: bare name says what the title says (a crater), the extractor types both a location. Written bare name
#: first: a bare name written after its titled one is canonicalized into it at write time (graph/canon.py),
#: a titled name after its bare one is the judge's to merge, from the bare name's records.
BARE = "Mia hiked up Vesuvius to see the crater."
MOUNT = "Mia saw Mount Vesuvius from the ferry."
#: A pair the offline judge never merges: "stainless" is a modifier, and a modifier tells two things apart.
STEEL = "Mia owns a steel bottle that she takes hiking."
STAINLESS = "Mia carries a stainless steel bottle to the gym."


def yes(representative: str, reason: str = "the same entity") -> str:
    return json.dumps({"same": True, "representative": representative, "reason": reason})


def no(reason: str = "different things") -> str:
    return json.dumps({"same": False, "representative": None, "reason": reason})


def volcano_repo(path: Path) -> MemoryRepo:
    """"Mount Vesuvius" and "Vesuvius" (two anchors, both locations), through the real write path and the
    offline extractor: the pair the offline judge merges."""
    repo = MemoryRepo.init(path)
    add_semantic(repo, BARE, "2023-05-02T10:00:00")
    add_semantic(repo, MOUNT, "2023-05-03T10:00:00")
    repo.index_graph()
    return repo


def bottle_repo(path: Path) -> MemoryRepo:
    """The paper's bottle pair, through the real write path and the offline extractor: the offline judge
    keeps the two apart ("stainless" is a modifier); a model judge may still merge them."""
    repo = MemoryRepo.init(path)
    add_semantic(repo, STEEL, "2023-05-02T10:00:00")
    add_semantic(repo, STAINLESS, "2023-05-03T10:00:00")
    repo.index_graph()
    return repo


def add_semantic(repo: MemoryRepo, text: str, when: str) -> str:
    record = repo.new_record("semantic", text, mention_time=when)
    repo.add([record])
    return record.id


def add_stated(repo: MemoryRepo, text: str, when: str, anchors: list[tuple[str, str]], kind: str = "semantic") -> str:
    """A record of ``kind`` and a graph file whose anchors are exactly ``anchors`` (name, type), in one frame."""
    record = repo.new_record(kind, text, mention_time=when)
    repo.add([record])
    ns = repo.settings.namespace
    refs = [AnchorRef.make(ns, name, type_) for name, type_ in anchors]
    arms = tuple(Arm(f"arg{i}", ref) for i, ref in enumerate(refs))
    frames = []
    if len(refs) >= 2:
        frames.append(Frame(frame_iri(ns, "related", arms, kind, record.id), "related", arms, (), kind, when,
                            citations=(record.id,)))
    graph = MemoryGraph(record.id, kind, anchors=refs, frames=frames)
    repo.store.commit({graph_path(record.id): memory_turtle(graph)}, f"graph for {record.id}")
    return record.id


def cosine(repo: MemoryRepo, a: str, b: str) -> str:
    """The cosine of two anchor names under the repository's embedder, as review messages print it."""
    from memrepo.index.embed import get_embedder

    va, vb = get_embedder(repo.settings.embedding).embed([a, b])
    return f"{va @ vb:.3f}"


def bottle_cosine(repo: MemoryRepo) -> str:
    """The cosine of the two bottle names, as review messages print it."""
    return cosine(repo, "steel bottle", "stainless steel bottle")


def volcano_cosine(repo: MemoryRepo) -> str:
    """The cosine of "Vesuvius" and "Mount Vesuvius" as the open review branch's merge records it and review
    messages print it (the name index's vectors: within 0.002 of the embedder's own cosine)."""
    [merge] = [d for review in repo.review_list() for d in review.merges]
    assert abs(merge.cosine - float(cosine(repo, "Vesuvius", "Mount Vesuvius"))) < 0.002
    return f"{merge.cosine:.3f}"


def dream_branch(root: Path) -> str:
    """The volcano pair remembered in the clone at ``root``, then `memrepo dream`: its review branch (one merge)."""
    from click.testing import CliRunner

    from memrepo.cli import cli

    with MemoryRepo.open(root) as repo:
        add_semantic(repo, BARE, "2023-05-02T10:00:00")
        add_semantic(repo, MOUNT, "2023-05-03T10:00:00")
        repo.index_graph()
    result = CliRunner().invoke(cli, ["--repo", str(root), "dream", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["branch"]
