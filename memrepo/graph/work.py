"""What the graph files need at a commit (:class:`GraphWork`), and the catch-up's state per clone.

A record without a graph file, or whose graph file follows other content (``mr:recordBlob``), is to
be extracted; the graph file of a record that is gone is to be removed. :func:`work_since` finds it
from the tree diff since the last commit at which every graph file followed its record
(:data:`SYNCED_FILE`), or by a full scan when that is not known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from memrepo import records as rec
from memrepo.graph.model import FRAMES_FOLDER, INDEXED_FOLDERS, graph_path, indexed_id, indexed_path
from memrepo.graph.rdf import recorded_blob

if TYPE_CHECKING:
    from memrepo.store.git import GitStore

#: State files (per clone, untracked, disposable): a commit at which every graph file followed its record,
#: and the last commit a catch-up run looked at (``memrepo doctor`` expects graph files for its records). Their
#: names change with what the graph extracts (2: procedural records too), so that a clone caught up before walks
#: its trees once and extracts the records it did not.
SYNCED_FILE = "graph-synced-2"
CHECKED_FILE = "graph-checked-2"
_GRAPH_PREFIX = FRAMES_FOLDER + "/"


@dataclass
class GraphWork:
    """What the graph needs at one commit: records to (re-)extract and graph files to remove."""

    extract: list[tuple[str, str]] = field(default_factory=list)  # (record path, blob)
    stale: list[str] = field(default_factory=list)  # ids among ``extract`` whose graph file is out of date
    remove: list[str] = field(default_factory=list)  # graph file paths whose record is gone

    def __bool__(self) -> bool:
        return bool(self.extract or self.remove)


def memory_id_of_path(path: str) -> str:
    """``episodic/2023/05/ep-....md`` or ``graph/frames/2023/05/ep-....ttl`` -> ``ep-...``."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _indexed_record(path: str) -> bool:
    return indexed_path(path) and rec.is_record_path(path)


def graph_work(snapshot: Any, ids: Iterable[str] | None = None, changed: set[str] | None = None, *,
               read_graphs: bool = True) -> GraphWork:
    """The work that brings the graph files of ``snapshot`` in line with its records.

    Args:
        ids: the memories to look at (None: every record and graph file, a full scan).
        changed: ids whose record file changed since the graph was last in line; a graph file
            that does not say which content it follows (written before memrepo recorded it)
            is stale when its record is among them.
        read_graphs: read each graph file to compare the content it follows with its record's
            (False: presence only, a walk of the trees without reading a file).
    """
    records: dict[str, tuple[str, str]] = {}
    graphs: dict[str, tuple[str, str]] = {}
    if ids is None:
        for folder in INDEXED_FOLDERS:
            for path, blob in snapshot.walk(folder):
                if rec.is_record_path(path):
                    records[memory_id_of_path(path)] = (path, blob)
        for path, blob in snapshot.walk(FRAMES_FOLDER):
            if path.endswith(".ttl"):
                graphs[memory_id_of_path(path)] = (path, blob)
        wanted = sorted(set(records) | set(graphs))
    else:
        wanted = sorted(set(ids))
        for memory_id in wanted:
            found = record_entry(snapshot, memory_id)
            if found:
                records[memory_id] = found
            gpath = graph_path(memory_id)
            gblob = snapshot.blob_id(gpath)
            if gblob:
                graphs[memory_id] = (gpath, gblob)
    work = GraphWork()
    for memory_id in wanted:
        record, graph = records.get(memory_id), graphs.get(memory_id)
        if record is None:
            if graph is not None and graph[0] == graph_path(memory_id):
                work.remove.append(graph[0])
            continue
        if graph is None:
            work.extract.append(record)
            continue
        if not read_graphs:
            continue
        recorded = recorded_blob(snapshot.read_blob(graph[1]))
        if recorded != record[1] and (recorded is not None or (changed is not None and memory_id in changed)):
            work.extract.append(record)
            work.stale.append(memory_id)
    return work


def record_entry(snapshot: Any, memory_id: str) -> tuple[str, str] | None:
    """(path, blob) of a record the graph extracts (episodic, semantic, procedural but no skill) by id, or None."""
    type_ = rec.type_of_id(memory_id)
    if not indexed_id(memory_id):
        return None
    try:
        path = rec.record_path(memory_id, type_)
    except rec.RecordError:
        return None
    blob = snapshot.blob_id(path)
    return (path, blob) if blob else None


def pending_records(snapshot: Any) -> list[tuple[str, str]]:
    """(path, blob) of every record the graph extracts whose graph file is missing or stale at ``snapshot``."""
    return graph_work(snapshot).extract


def synced_commit(store: Any, name: str = SYNCED_FILE) -> str | None:
    """The last commit at which every graph file followed its record (None: unknown, scan everything).

    ``name`` = :data:`CHECKED_FILE`: the last commit a catch-up run looked at.
    """
    try:
        commit = (store.state_dir / name).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(commit) != 40 or not store.has_object(commit):
        return None  # gone (history rewritten) or garbled: a full scan finds everything again
    return commit


def set_state(store: "GitStore", name: str, commit: str) -> None:
    import os

    folder = store.state_dir
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{name}.{os.getpid()}.tmp"
    tmp.write_text(commit + "\n", encoding="ascii")
    os.replace(tmp, folder / name)


def work_since(store: "GitStore", snapshot: Any, since: str | None, *, read_graphs: bool = True) -> GraphWork:
    """The graph work at ``snapshot``: from the tree diff since ``since`` (cheap), or a full scan without it
    (``read_graphs``: see :func:`graph_work`)."""
    if since is None or snapshot.commit is None:
        return graph_work(snapshot, read_graphs=read_graphs)
    if since == snapshot.commit:
        return GraphWork()
    from memrepo.index.base import tree_diff

    ids: set[str] = set()
    changed: set[str] = set()
    for change in tree_diff(store, since, snapshot.commit):
        if _indexed_record(change.path):
            memory_id = memory_id_of_path(change.path)
            ids.add(memory_id)
            if change.old and change.new:
                changed.add(memory_id)
        elif change.path.startswith(_GRAPH_PREFIX) and change.path.endswith(".ttl"):
            ids.add(memory_id_of_path(change.path))
    return graph_work(snapshot, ids, changed)

