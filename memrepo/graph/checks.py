"""`memrepo doctor` checks for graph files: valid Turtle (with the line at fault), no blank nodes, right place;
citations of records that are gone, graph files that follow an older version of their record, and
records that have no graph file although the catch-up ran after they were written."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Iterable

from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER, graph_path
from memrepo.graph.model import INDEXED_FOLDERS
from memrepo.graph.rdf import TurtleError, parse_turtle, recorded_blob

if TYPE_CHECKING:
    from memrepo.problem import CheckedCommit, Problem


def check_graph_files(view: "CheckedCommit") -> Iterable["Problem"]:
    """Every ``graph/**/*.ttl`` parses; a frames file sits at the path its memory id gives and cites that memory."""
    from memrepo.problem import Problem

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


_CITED_RE = re.compile(rb"<urn:memrepo:memory:([A-Za-z0-9._-]+)>")


def _record_blob(snap: object, memory_id: str) -> str | None:
    from memrepo import records as rec

    try:
        return snap.blob_id(rec.record_path(memory_id))  # type: ignore[attr-defined]
    except rec.RecordError:
        return None


def check_graph_citations(view: "CheckedCommit") -> Iterable["Problem"]:
    """Graph file -> record: every record a graph file cites exists, and the file follows its record's content."""
    from memrepo.problem import Problem

    snap = view.snapshot
    for path, blob in snap.walk(FRAMES_FOLDER):
        if not path.endswith(".ttl"):
            continue
        data = snap.read_blob(blob)
        own = path.rsplit("/", 1)[-1][:-4]
        for memory_id in sorted({m.decode() for m in _CITED_RE.findall(data)}):
            if _record_blob(snap, memory_id) is None:
                yield Problem(path, f"cites record {memory_id}, which is not in the repository "
                                    "(run `memrepo index` to drop the graph file of a removed record)")
        followed = recorded_blob(data)
        current = _record_blob(snap, own)
        if followed and current and followed != current:
            yield Problem(path, f"was extracted from an older version of {own} (the record was edited since); "
                                "run `memrepo index` to extract it again")


def check_records_have_graph_files(view: "CheckedCommit") -> Iterable["Problem"]:
    """Record -> graph file: every record of INDEXED_FOLDERS the graph catch-up has seen has a graph file."""
    from memrepo import records as rec
    from memrepo.problem import Problem
    from memrepo.graph.build import CHECKED_FILE, synced_commit

    checked = synced_commit(view.store, CHECKED_FILE)
    snap = view.snapshot
    if checked is None:  # no catch-up ran in this clone yet (a fresh clone): said once, as a note
        missing = [path for folder in INDEXED_FOLDERS for path, _blob in snap.walk(folder)
                   if rec.is_record_path(path) and not snap.exists(graph_path(path.rsplit("/", 1)[-1][:-3]))]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            yield Problem(FRAMES_FOLDER + "/", f"{len(missing)} record(s) have no graph file yet ({shown}); "
                          "`memrepo index` extracts them", note=True)
        return
    seen = view.store.snapshot(checked)
    for folder in INDEXED_FOLDERS:
        for path, _blob in snap.walk(folder):
            if not rec.is_record_path(path):
                continue
            memory_id = path.rsplit("/", 1)[-1][:-3]
            if not snap.exists(graph_path(memory_id)) and seen.exists(path):
                yield Problem(path, "has no graph file although the graph catch-up ran after it was written "
                                    "(its extraction failed?); run `memrepo index`")


def parsed_by_index(view: "CheckedCommit") -> dict[tuple[str, str], tuple[int | None, str] | None]:
    """(path, blob) -> None (parsed) or (line, message) for every graph file the graph index parsed.

    Only a published generation built for this very commit and intact on disk is used (doctor
    builds nothing: a damaged index is check_indexes' to report); otherwise nothing is known and
    every file is parsed again. With the index current this turns 10,000 rdflib parses into one query.
    """
    from memrepo.graph.index import DB_FILE, INDEX_NAME, GraphIndex
    from memrepo.graph.reader import GraphReader, GraphUnavailable
    from memrepo.index.base import index_root, read_state, verify_generation

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
        with GraphReader(folder / DB_FILE) as reader:
            return reader.parse_results()
    except (GraphUnavailable, sqlite3.Error):
        return {}
