"""`memrepo doctor` checks for graph files: valid Turtle (with the line at fault), no blank nodes, right place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER, graph_path
from memrepo.graph.rdf import TurtleError, parse_turtle

if TYPE_CHECKING:
    from memrepo.api import MemoryView
    from memrepo.doctor import Problem


def check_graph_files(view: "MemoryView") -> Iterable["Problem"]:
    """Every ``graph/**/*.ttl`` parses; a frames file sits at the path its memory id gives and cites that memory."""
    from memrepo.doctor import Problem

    snap = view.snapshot
    for folder in (FRAMES_FOLDER, DECISIONS_FOLDER):
        for path, blob in snap.walk(folder):
            if not path.endswith(".ttl"):
                yield Problem(path, "not a Turtle file (graph files end in .ttl)")
                continue
            try:
                graph = parse_turtle(snap.read_blob(blob), path)
            except TurtleError as exc:
                where = f"line {exc.line}: " if exc.line else ""
                yield Problem(path, f"{where}not valid Turtle: {exc}")
                continue
            if folder == FRAMES_FOLDER:
                memory_id = path.rsplit("/", 1)[-1][:-4]
                if graph_path(memory_id) != path:
                    yield Problem(path, f"graph file of {memory_id} belongs at {graph_path(memory_id)}")
                del graph
