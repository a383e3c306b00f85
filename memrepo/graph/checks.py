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
    known = parsed_by_index(view)
    for folder in (FRAMES_FOLDER, DECISIONS_FOLDER):
        for path, blob in snap.walk(folder):
            if not path.endswith(".ttl"):
                yield Problem(path, "not a Turtle file (graph files end in .ttl)")
                continue
            if (path, blob) in known:  # this very blob was parsed when the graph index was built
                failure = known[(path, blob)]
                if failure is not None:
                    line, message = failure
                    yield Problem(path, f"{f'line {line}: ' if line else ''}not valid Turtle: {message}")
                    continue
            else:
                try:
                    graph = parse_turtle(snap.read_blob(blob), path)
                except TurtleError as exc:
                    where = f"line {exc.line}: " if exc.line else ""
                    yield Problem(path, f"{where}not valid Turtle: {exc}")
                    continue
                del graph
            if folder == FRAMES_FOLDER:
                memory_id = path.rsplit("/", 1)[-1][:-4]
                if graph_path(memory_id) != path:
                    yield Problem(path, f"graph file of {memory_id} belongs at {graph_path(memory_id)}")


def parsed_by_index(view: "MemoryView") -> dict[tuple[str, str], tuple[int | None, str] | None]:
    """(path, blob) -> None (parsed) or (line, message) for every graph file the graph index parsed.

    Only a published generation built for this very commit and intact on disk is used (doctor
    builds nothing: a damaged index is check_indexes' to report); otherwise nothing is known and
    every file is parsed again. With the index current this turns 10,000 rdflib parses into one query.
    """
    import sqlite3

    from memrepo.graph.index import DB_FILE, INDEX_NAME, GraphIndex
    from memrepo.index.base import index_root, open_sqlite_readonly, read_state, verify_generation

    root = index_root(view.store, INDEX_NAME)
    try:
        state = read_state(root)
    except ValueError:
        return {}
    if state is None or state.commit != view.commit or state.schema != GraphIndex.schema:
        return {}
    folder = root / state.generation
    if not (folder / DB_FILE).is_file() or verify_generation(folder) is not None:
        return {}
    try:
        db = open_sqlite_readonly(folder / DB_FILE)
        try:
            failures = {path: (line, message) for path, line, message in db.execute("SELECT path, line, message FROM problems")}
            return {(path, blob): failures.get(path) for path, blob in db.execute("SELECT path, blob FROM files")}
        finally:
            db.close()
    except sqlite3.Error:
        return {}
