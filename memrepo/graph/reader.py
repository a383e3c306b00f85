"""The one reader of the graph index (:mod:`memrepo.graph.index`): :class:`GraphReader` and its opening.

The CLI (``graph anchor``, ``graph frames``, ``graph export``), recall's lanes
(:mod:`memrepo.read.recall`), AutoDream and the viewer all read the graph
through :class:`GraphReader`, so an anchor has one name and a frame one status
wherever it is shown:

- an anchor's **name** is the most frequent label of its owl:sameAs
  representative (ties: the least label), else the most frequent label of its
  class; its **type** the most frequent type of its class; its **key** the
  least κ key of the representative. Counts are exact (the index keeps them per
  anchor in ``anchor_labels``), so a hub's name does not depend on which of its
  files were indexed first.
- a frame's **status** is ``planned`` only while every record that cites it
  says planned; once one says it was done (or any other status) the frame has
  that status. ``statuses`` keeps every status its citations give.

Every lookup runs on an index of the SQLite file and is bounded; lists come
back in a deterministic order. :func:`open_graph` opens the index at a commit
(caught up first); any error opening it is :class:`GraphUnavailable`.

The reader is in parts: its data classes and error (:mod:`memrepo.graph.infos`), its anchor
lookups with the anchors it has named kept (:mod:`memrepo.graph.anchor_reads`), its frame lookups
(:mod:`memrepo.graph.frame_reads`); rows, beliefs, files and the RDF view are here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from memrepo.graph.anchor_reads import DEGREE_CAP, LABEL_MEMBERS, PREDICATE_SCAN, AnchorReads
from memrepo.graph.frame_reads import FrameReads
from memrepo.graph.infos import AnchorInfo, ArmInfo, FrameInfo, GraphUnavailable, frame_status
from memrepo.graph.model import FRAMES_FOLDER, MEMORY_PREFIX
from memrepo.graph.rdf import ANCHOR_PROPS, FRAME_PROPS, NS, OWL, PROV
from memrepo.index import live

if TYPE_CHECKING:
    from memrepo.graph.beliefs import Belief, Occurrence
    from memrepo.settings import EmbeddingSettings, Settings
    from memrepo.store.git import GitStore

__all__ = [
    "DEGREE_CAP", "LABEL_MEMBERS", "PREDICATE_SCAN", "ROW_SCAN_CAP", "AnchorInfo", "AnchorReads", "ArmInfo",
    "FrameInfo", "FrameReads", "GraphReader", "GraphUnavailable", "frame_status", "open_graph", "open_reader",
]

#: Mentions of one anchor that :meth:`GraphReader.rows_of_weighted` looks at (newest first) when it sums many.
ROW_SCAN_CAP = 512

_PROP_IRI = {v: k for k, v in ANCHOR_PROPS.items()}
_FRAME_PROP_IRI = {v: k for k, v in FRAME_PROPS.items()}


# --- opening ------------------------------------------------------------------------------


def open_graph(store: "GitStore", settings: "Settings", commit: str | None) -> "GraphReader":
    """The graph index (and the anchor-name vectors) at ``commit`` (None: the branch tip), caught up first.

    Raises:
        GraphUnavailable: if there is no graph index to read.
    """
    from memrepo.graph.index import DB_FILE, INDEX_NAME
    from memrepo.graph.names import INDEX_NAME as NAMES_INDEX
    from memrepo.index.base import Indexes

    indexes = Indexes(store, settings)
    try:
        folder = indexes.folder(INDEX_NAME, commit)
    finally:
        indexes.close()
    path = folder / DB_FILE
    if not path.exists():
        raise GraphUnavailable(f"graph index file {path.name} is missing")

    def names_folder() -> Path:  # the anchor-name index is caught up only when a read searches names
        indexes = Indexes(store, settings)
        try:
            return indexes.folder(NAMES_INDEX, commit)
        finally:
            indexes.close()

    return GraphReader(path, settings.embedding, names_folder)


def open_reader(store: "GitStore", settings: "Settings", rev: str | None = None) -> "GraphReader":
    """The graph index at revision ``rev`` (a commit, branch or tag; None: the branch tip), caught up first.

    Raises:
        NotFoundError: if ``rev`` names no commit.
        GraphUnavailable: if there is no graph index to read.
    """
    resolved = store.resolve(rev) if rev is not None else None
    return open_graph(store, settings, resolved.decode() if resolved else None)


# --- the reader ---------------------------------------------------------------------------


class GraphReader(FrameReads):
    """Read-only, bounded lookups over one generation of the graph index (one snapshot per reader).

    Its anchor lookups are :class:`~memrepo.graph.anchor_reads.AnchorReads`', its frame lookups
    :class:`~memrepo.graph.frame_reads.FrameReads`'; rows, beliefs, files and the RDF view are here.
    """

    def __init__(self, path: Path, embedding: "EmbeddingSettings | None" = None, names_folder: Any = None):
        self.path = path
        try:
            self.db = live.open_snapshot(path)  # one read transaction: every lookup sees one commit
            self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone()  # a corrupt file raises here, not later
        except Exception as exc:
            raise GraphUnavailable(f"graph index {path.name} cannot be read ({exc}); run `memrepo reindex`") from exc
        self.embedding = embedding
        self._names_folder = names_folder  # a Path, or a callable giving it (caught up on first use)
        self._vectors: Any = None
        self._info: dict[str, AnchorInfo] = {}
        self._members: dict[str, list[str]] = {}
        self._looked_up: set[str] = set()  # anchors infos() has looked up
        self._plain: set[str] = set()  # ... of which not merged by owl:sameAs

    def close(self) -> None:
        """Ends the read: its snapshot is released (the connection is kept for this thread's next read)."""
        live.end_snapshot(self.path, self.db)

    def __enter__(self) -> "GraphReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- rows --

    def rows_of_weighted(self, weights: Sequence[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
        """(memory id, sum of the weights of the anchors it mentions), strongest first, then id; at most ``limit``."""
        pairs = [(m, w) for iri, w in weights for m in self.members(iri)]
        if not pairs:
            return []
        # Each anchor contributes at most ROW_SCAN_CAP mentions, newest first (a reverse scan of its index
        # entries), so a hub named in every memory costs the same however long the history is.
        # One anchor alone ranks its rows by recency: its newest ``limit`` mentions are the answer.
        scan = ROW_SCAN_CAP if len(pairs) > 1 else limit
        parts, params = [], []
        for member, weight in pairs:
            parts.append("SELECT * FROM (SELECT memory, ? AS weight FROM mentions WHERE anchor = ? "
                         "ORDER BY seq DESC LIMIT ?)")
            params += [weight, member, scan]
        sql = (f"SELECT memory, SUM(weight) AS s FROM ({' UNION ALL '.join(parts)}) "
               "GROUP BY memory ORDER BY s DESC, memory LIMIT ?")
        out = []
        for value, strength in self.db.execute(sql, (*params, limit)):
            memory = value[len(MEMORY_PREFIX):] if value.startswith(MEMORY_PREFIX) else value
            out.append((memory, float(strength)))
        return out

    def record_blobs(self, memory_ids: Iterable[str]) -> dict[str, set[str]]:
        """Memory id -> the record blob ids its frames were extracted from (``mr:recordBlob`` of its graph file).

        A memory absent from the answer has no graph file that names its blob (written before memrepo kept it).
        """
        ids = sorted(set(memory_ids))
        out: dict[str, set[str]] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            marks = ",".join("?" * len(chunk))
            for memory, blob in self.db.execute(
                    f"SELECT memory, blob FROM record_blobs WHERE memory IN ({marks})", chunk):
                out.setdefault(memory, set()).add(blob)
        return out

    # -- beliefs (memrepo.graph.beliefs) --

    def beliefs_of(self, anchor: str, slots: Iterable[str] | None = None) -> list["Belief"]:
        """The derived beliefs of ``anchor``'s owl:sameAs class (as holder), of ``slots`` if given, in time order."""
        from memrepo.graph.beliefs import Belief

        rep = self.representative(anchor)
        wanted = set(slots) if slots is not None else None
        out = []
        for slot, holder, subkey, frame, value, start, until, by, conflicts, memories in self.db.execute(
                "SELECT slot, holder, subkey, frame, value, valid_from, valid_until, superseded_by, conflicts, memories "
                "FROM beliefs WHERE holder = ? ORDER BY slot, subkey, valid_from, value, frame", (rep,)):
            if wanted is None or slot in wanted:
                out.append(Belief(slot, holder, subkey, frame, value, start, until, by.split(), conflicts.split(),
                                  memories.split()))
        return out

    def belief_occurrences(self, anchor: str) -> list["Occurrence"]:
        """Every statement of a one-value relation whose holder is in ``anchor``'s owl:sameAs class."""
        from memrepo.graph.beliefs import Occurrence

        members = self.members(anchor)
        marks = ",".join("?" * len(members))
        return [Occurrence(*r) for r in self.db.execute(
            f"SELECT slot, holder, subkey, frame, value, time, memory FROM belief_occurrences WHERE holder IN ({marks}) "
            "ORDER BY slot, time, frame, memory", members)]

    def beliefs_of_frames(self, frames: Iterable[str]) -> dict[str, list["Belief"]]:
        """Frame IRI -> the beliefs it holds (one per slot, holder and interval)."""
        from memrepo.graph.beliefs import Belief

        ids = sorted(set(frames))
        out: dict[str, list[Belief]] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            for slot, holder, subkey, frame, value, since, until, by, conflicts, memories in self.db.execute(
                    "SELECT slot, holder, subkey, frame, value, valid_from, valid_until, superseded_by, conflicts, "
                    f"memories FROM beliefs WHERE frame IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY frame, valid_from, slot", chunk):
                out.setdefault(frame, []).append(Belief(slot, holder, subkey, frame, value, since, until, by.split(),
                                                        conflicts.split(), memories.split()))
        return out

    def indexed_memories(self) -> set[str]:
        """Memory ids that have a graph file (from the file names)."""
        return {p.rsplit("/", 1)[-1][:-4] for (p,) in self.db.execute(
            "SELECT path FROM files WHERE path LIKE ?", (FRAMES_FOLDER + "/%",))}

    # -- files, problems, statistics --

    def parse_results(self) -> dict[tuple[str, str], tuple[int | None, str] | None]:
        """(path, blob) -> None (parsed) or (line, message) for every graph file the index read."""
        failures = {path: (line, message) for path, line, message in self.db.execute(
            "SELECT path, line, message FROM problems")}
        return {(path, blob): failures.get(path) for path, blob in self.db.execute("SELECT path, blob FROM files")}

    def problems(self) -> list[tuple[str, int | None, str]]:
        return list(self.db.execute("SELECT path, line, message FROM problems ORDER BY path"))

    def counts(self) -> dict[str, int]:
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "files": one("SELECT count(*) FROM files"),
            "anchors": len(self.anchors()),
            "frames": one("SELECT count(DISTINCT frame) FROM frame_facts WHERE prop = 'predicate'"),
            "arms": one("SELECT count(*) FROM (SELECT DISTINCT frame, arm FROM arms)"),
            "citations": one("SELECT count(*) FROM (SELECT DISTINCT frame, memory FROM citations)"),
            "merged": one("SELECT count(*) FROM closure WHERE anchor != rep"),
            "problems": one("SELECT count(*) FROM problems"),
        }

    # -- RDF view --

    def triples(self) -> Iterable[tuple[str, str, str]]:
        """Every triple of the indexed files, rebuilt from the index's rows (N3 terms)."""
        for anchor, prop, n3 in self.db.execute("SELECT DISTINCT anchor, prop, n3 FROM anchor_facts"):
            yield f"<{anchor}>", f"<{_PROP_IRI[prop]}>", n3
        for frame, prop, n3 in self.db.execute("SELECT DISTINCT frame, prop, n3 FROM frame_facts"):
            yield f"<{frame}>", f"<{_FRAME_PROP_IRI[prop]}>", n3
        for frame, arm, role, anchor in self.db.execute("SELECT DISTINCT frame, arm, role, anchor FROM arms"):
            yield f"<{frame}>", f"<{NS}arm>", f"<{arm}>"
            yield f"<{arm}>", f"<{NS}role>", _n3_string(role)
            yield f"<{arm}>", f"<{NS}anchor>", f"<{anchor}>"
        for frame, lit, key, n3 in self.db.execute("SELECT DISTINCT frame, lit, key, n3 FROM literals"):
            yield f"<{frame}>", f"<{NS}literal>", f"<{lit}>"
            yield f"<{lit}>", f"<{NS}key>", _n3_string(key)
            yield f"<{lit}>", f"<{NS}value>", n3
        for frame, memory in self.db.execute("SELECT DISTINCT frame, memory FROM citations"):
            yield f"<{frame}>", f"<{PROV}wasDerivedFrom>", f"<urn:memrepo:memory:{memory}>"
        for alias, rep in self.db.execute("SELECT DISTINCT alias, rep FROM same_as"):
            yield f"<{alias}>", f"<{OWL}sameAs>", f"<{rep}>"
        yield from self.db.execute("SELECT DISTINCT s, p, o FROM other")


def _n3_string(text: str) -> str:
    from rdflib import Literal

    return Literal(text).n3()
