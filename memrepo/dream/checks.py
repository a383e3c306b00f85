"""`memrepo doctor` check for AutoDream decision files: every merge carries its provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from memrepo.graph.model import DECISIONS_FOLDER, NS
from memrepo.graph.rdf import OWL, TurtleError, parse_turtle

if TYPE_CHECKING:
    from memrepo.problem import Problem
    from memrepo.problem import CheckedCommit


def check_decisions(view: "CheckedCommit") -> Iterable["Problem"]:
    """Each ``owl:sameAs`` in ``graph/decisions/`` has a merge decision (model, verdict, time) naming the same pair."""
    from memrepo.problem import Problem

    snap = view.snapshot
    for path, blob in snap.walk(DECISIONS_FOLDER):
        if not path.endswith(".ttl"):
            continue  # reported by the graph check
        try:
            graph = parse_turtle(snap.read_blob(blob), path)
        except TurtleError:
            continue  # reported by the graph check
        for message in decision_problems(graph):
            yield Problem(path, message)


def decision_problems(graph: Any) -> Iterable[str]:
    """What is wrong in one parsed decision file: an ``owl:sameAs`` without its merge decision."""
    from memrepo.graph.rdf import RDF_TYPE, node

    decided = set()
    for decision in graph.subjects(node(RDF_TYPE), node(NS + "MergeDecision")):
        for alias in graph.objects(decision, node(NS + "alias")):
            for rep in graph.objects(decision, node(NS + "representative")):
                decided.add((str(alias), str(rep)))
    for alias, rep in graph.subject_objects(node(OWL + "sameAs")):
        if str(alias) == str(rep):
            yield f"<{alias}> owl:sameAs itself"
        elif (str(alias), str(rep)) not in decided:
            yield f"<{alias}> owl:sameAs <{rep}> has no mr:MergeDecision (model, verdict, time)"
