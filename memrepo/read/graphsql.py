"""The read path's queries over the graph engineer's SQLite index (memrepo/graph/index.py), read-only.

Tables used: ``anchor_info`` (name, key, type, degree per anchor), ``mentions``
(an anchor's memories, newest first), ``frame_facts`` (predicate, kind, eventTime, mentionTime, status per frame),
``arms``, ``literals``, ``citations`` and the ``closure`` of owl:sameAs. Every
query runs on an index and returns a bounded, deterministically ordered list.

Anchor names are embedded into a derived index of their own
(:class:`AnchorNameIndex`, ``anchors.usearch`` through
:class:`memrepo.index.vectors.AnchorVectors`) so that name-vector recall is one
ANN search, whatever the number of anchors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from memrepo.index.base import Change, DerivedIndex, UpdateContext
from memrepo.read import constants as C
from memrepo.read.graphdb import AnchorInfo, FrameInfo, GraphUnavailable

if TYPE_CHECKING:
    from memrepo.settings import EmbeddingSettings, Settings
    from memrepo.store.git import GitStore

MEMORY_PREFIX = "urn:memrepo:memory:"
ANCHOR_INDEX = "anchornames"


class AnchorNameIndex(DerivedIndex):
    """Anchor-name embeddings of every anchor the graph files mention (label -> vector)."""

    name = ANCHOR_INDEX
    schema = 1

    def identity(self) -> dict[str, str]:
        from memrepo.index.vectors import embedder_id

        return {"model": embedder_id(self.settings.embedding)}

    def wants(self, path: str) -> bool:
        return path.startswith("graph/frames/") and path.endswith(".ttl")

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        from memrepo.graph.rdf import TurtleError, parse_turtle, rows
        from memrepo.index.embed import get_embedder
        from memrepo.index.vectors import AnchorVectors

        embedder = get_embedder(self.settings.embedding)
        if previous is not None:
            vectors = AnchorVectors.load(previous, embedder, ctx.embedding_cache)
        else:
            vectors = AnchorVectors(embedder, ctx.embedding_cache)
        names: dict[str, str] = {}
        for change in changes:
            if change.new is None:
                continue  # anchors of deleted files stay; readers drop anchors the graph index no longer has
            try:
                parsed = rows(parse_turtle(ctx.read_blob(change.new), change.path))
            except TurtleError:
                continue
            for anchor, prop, value, _n3 in parsed.anchor_facts:
                if prop == "label" and anchor not in vectors and anchor not in names:
                    names[anchor] = value
        vectors.add_many(sorted(names.items()))
        vectors.save(folder)


def open_sqlite_graph(store: "GitStore", settings: "Settings", commit: str | None) -> "SqliteGraph":
    """The graph index (and the anchor-name vectors) at ``commit``, caught up first.

    Raises:
        GraphUnavailable: if the graph package or its index cannot be opened.
    """
    try:
        from memrepo.graph.index import DB_FILE, INDEX_NAME
    except ImportError as exc:
        raise GraphUnavailable(f"the graph package cannot be imported: {exc}") from exc
    from memrepo.index.base import Indexes

    indexes = Indexes(store, settings)
    try:
        folder = indexes.folder(INDEX_NAME, commit)
        names = indexes.folder(ANCHOR_INDEX, commit)
    finally:
        indexes.close()
    path = folder / DB_FILE
    if not path.exists():
        raise GraphUnavailable(f"graph index file {path.name} is missing")
    return SqliteGraph(path, names, settings)


def _open_graph_file(folder: Path) -> Any:
    from memrepo.graph.index import DB_FILE

    from memrepo.index.live import open_snapshot

    db = open_snapshot(folder / DB_FILE)  # one read transaction: every lookup of this read sees one commit
    db.execute("SELECT 1 FROM files LIMIT 1").fetchone()  # a corrupt file raises here, not later
    return db


class SqliteGraph:
    """:class:`memrepo.read.graphdb.GraphReader` over one generation of the SQLite graph index."""

    def __init__(self, path: Path, names_folder: Path, settings: "Settings"):
        # The graph index is updated in place (memrepo.index.live): each reader holds its own snapshot.
        self.db = _open_graph_file(path.parent)
        self.names_folder = names_folder
        self.settings = settings
        self._vectors: Any = None
        self._info: dict[str, AnchorInfo] = {}
        self._members: dict[str, list[str]] = {}

    def close(self) -> None:
        """Ends the read: its snapshot is released."""
        self.db.close()

    # -- sameAs --

    def representative(self, anchor: str) -> str:
        row = self.db.execute("SELECT rep FROM closure WHERE anchor = ?", (anchor,)).fetchone()
        return row[0] if row else anchor

    def members(self, anchor: str) -> list[str]:
        if anchor not in self._members:
            rep = self.representative(anchor)
            found = [r[0] for r in self.db.execute("SELECT anchor FROM closure WHERE rep = ? ORDER BY anchor", (rep,))]
            self._members[anchor] = found or [anchor]
        return self._members[anchor]

    # -- anchors --

    def info(self, anchor: str) -> AnchorInfo | None:
        if anchor not in self._info and anchor not in self._members:
            self.infos([anchor])  # one row of anchor_info unless the anchor is in an owl:sameAs class
        if anchor in self._info:
            return self._info[anchor]
        if self._members.get(anchor) == [anchor]:
            return None  # loaded by infos(): an anchor without facts
        rep = self.representative(anchor)
        if rep in self._info:
            return self._info[rep]
        members = self.members(rep)
        facts = self._bounded_facts(members)
        if not facts:
            return None
        info = _make_info(rep, facts, -1)
        self._info[rep] = info
        return info

    def with_degree(self, info: AnchorInfo) -> AnchorInfo:
        if info.degree < 0:
            info.degree = self._degree(self.members(info.iri))
        return info

    def _bounded_facts(self, members: list[str]) -> list[tuple[str, str]]:
        """Label, key and type rows of an anchor class: a bounded sample per member."""
        from memrepo.graph.index import bounded_anchor_facts

        out: list[tuple[str, str]] = []
        for member in members[:C.LABEL_MEMBERS]:
            out += bounded_anchor_facts(self.db, member)
        return out

    def _degree(self, members: list[str]) -> int:
        """Memories that mention the anchor (counted when the index was built), up to C.DEGREE_CAP."""
        marks = ",".join("?" * len(members[:C.LABEL_MEMBERS]))
        total = self.db.execute(f"SELECT coalesce(sum(degree), 0) FROM anchor_info WHERE anchor IN ({marks})",
                                members[:C.LABEL_MEMBERS]).fetchone()[0]
        return min(total, C.DEGREE_CAP)

    def infos(self, anchors: Any) -> None:
        """Load (and cache) the anchor info of many anchors with a few batched queries."""
        todo = sorted({a for a in anchors if a not in self._info and a not in self._members})
        for start in range(0, len(todo), 400):
            chunk = todo[start : start + 400]
            marks = ",".join("?" * len(chunk))
            reps = dict(self.db.execute(f"SELECT anchor, rep FROM closure WHERE anchor IN ({marks})", chunk).fetchall())
            plain = [a for a in chunk if a not in reps]  # not merged: its own representative, its only member
            if not plain:
                continue
            marks = ",".join("?" * len(plain))
            found = {a: rest for a, *rest in self.db.execute(
                f"SELECT anchor, name, key, type, degree FROM anchor_info WHERE anchor IN ({marks})", plain)}
            for anchor in plain:
                self._members[anchor] = [anchor]
                if anchor in found:
                    name, key, type_, degree = found[anchor]
                    self._info[anchor] = AnchorInfo(anchor, name or anchor, key, type_, min(degree, C.DEGREE_CAP))

    def anchors_by_keys(self, keys: Sequence[str]) -> list[AnchorInfo]:
        out: list[AnchorInfo] = []
        seen: set[str] = set()
        for start in range(0, len(keys), 200):
            chunk = list(keys[start : start + 200])
            marks = ",".join("?" * len(chunk))
            found = self.db.execute(f"SELECT key, anchor FROM anchor_info WHERE key IN ({marks})", chunk).fetchall()
            by_key: dict[str, set[str]] = {}
            for key, anchor in found:
                by_key.setdefault(key, set()).add(anchor)
            self.infos(anchor for _key, anchor in found)  # one batched lookup, not one per anchor
            for key in chunk:  # the caller's order: longest n-grams first
                for anchor in sorted(by_key.get(key, ())):
                    info = self.info(anchor)
                    if info is not None and info.iri not in seen:
                        seen.add(info.iri)
                        out.append(self.with_degree(info))
        return out

    def search_anchor_names(self, vector: Any, k: int) -> list[tuple[AnchorInfo, float]]:
        if self._vectors is None:
            from memrepo.index.base import open_cached

            # A published generation never changes: it is opened (memory-mapped) once per process.
            self._vectors = open_cached(self.names_folder, _AnchorNamesOpener(self.settings.embedding))
        out: list[tuple[AnchorInfo, float]] = []
        seen: set[str] = set()
        hits = self._vectors.search_vector(vector, k=2 * k)
        self.infos(anchor for anchor, _cosine in hits)  # one batched lookup, not one per hit
        for anchor, cosine in hits:
            info = self.info(anchor)
            if info is None or info.iri in seen:
                continue
            seen.add(info.iri)
            out.append((self.with_degree(info), cosine))
            if len(out) >= k:
                break
        return out

    def predicates_of(self, iri: str) -> set[str]:
        """Predicates among FRAME_CAP of the anchor's incident frames (index order): bounded for hubs."""
        from memrepo.read.constants import FRAME_CAP

        members = self.members(iri)
        marks = ",".join("?" * len(members))
        return {r[0] for r in self.db.execute(
            f"SELECT DISTINCT predicate FROM (SELECT predicate FROM arms WHERE anchor IN ({marks}) LIMIT ?) "
            "WHERE predicate IS NOT NULL", (*members, FRAME_CAP))}

    # -- rows and frames --

    def rows_of_weighted(self, weights: Sequence[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
        pairs = [(m, w) for iri, w in weights for m in self.members(iri)]
        if not pairs:
            return []
        # Each anchor contributes at most C.ROW_SCAN_CAP mentions, newest first (a reverse scan of its index
        # entries), so a hub named in every memory costs the same however long the history is.
        # One anchor alone ranks its rows by recency: its newest ``limit`` mentions are the answer.
        scan = C.ROW_SCAN_CAP if len(pairs) > 1 else limit
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

    def frames_of(self, iris: Sequence[str], predicates: Sequence[str] | None, limit: int) -> list[FrameInfo]:
        """The first ``limit`` frames (in frame-IRI order) with an arm on one of ``iris``, of ``predicates`` if given.

        Each (anchor, predicate) pair is read from its own index range, at most ``limit`` entries, and the
        ranges are merged: the same frames as one global ``ORDER BY frame LIMIT``, at a cost bounded by
        the number of pairs times ``limit`` however many frames a hub has.
        """
        members = sorted({m for iri in iris for m in self.members(iri)})
        if not members:
            return []
        if predicates is None:
            part = ("SELECT * FROM (SELECT frame FROM arms INDEXED BY arms_anchor WHERE anchor = ? "
                    "AND predicate IS NOT NULL ORDER BY frame LIMIT ?)")
            parts: list[tuple[str, tuple[str | int, ...]]] = [(part, (member, limit)) for member in members]
        else:
            preds = list(dict.fromkeys(predicates))
            if not preds:
                return []
            part = ("SELECT * FROM (SELECT frame FROM arms INDEXED BY arms_anchor_predicate "
                    "WHERE anchor = ? AND predicate = ? ORDER BY frame LIMIT ?)")
            parts = [(part, (member, pred, limit)) for member in members for pred in preds]
        found: set[str] = set()
        for start in range(0, len(parts), 400):  # SQLite caps a compound SELECT at 500 terms
            chunk = parts[start : start + 400]
            sql = f"SELECT DISTINCT frame FROM ({' UNION ALL '.join(p for p, _ in chunk)}) ORDER BY frame LIMIT ?"
            found.update(r[0] for r in self.db.execute(sql, (*(x for _, ps in chunk for x in ps), limit)))
        return self.frames(sorted(found)[:limit])

    def frame(self, frame: str) -> FrameInfo:
        return self.frames([frame])[0]

    def frames(self, ids: Sequence[str]) -> list[FrameInfo]:
        """Frames by IRI, loaded with one query per table (batched), in the order given."""
        if not ids:
            return []
        facts: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        arms: dict[str, list[tuple[str, str]]] = {i: [] for i in ids}
        literals: dict[str, dict[str, str]] = {i: {} for i in ids}
        cites: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 400):
            chunk = list(ids[start : start + 400])
            marks = ",".join("?" * len(chunk))
            for frame, prop, value in self.db.execute(
                    f"SELECT frame, prop, value FROM frame_facts WHERE frame IN ({marks}) ORDER BY frame, prop, value", chunk):
                facts[frame].setdefault(prop, []).append(value)
            for frame, role, anchor in self.db.execute(
                    f"SELECT frame, role, anchor FROM arms WHERE frame IN ({marks}) ORDER BY frame, arm, role, anchor", chunk):
                arms[frame].append((role, anchor))
            for frame, key, value in self.db.execute(
                    f"SELECT frame, key, value FROM literals WHERE frame IN ({marks}) ORDER BY frame, key, value", chunk):
                have = literals[frame].get(key)
                literals[frame][key] = value if have is None else have if value in have.split("|") else f"{have}|{value}"
            for frame, memory in self.db.execute(
                    f"SELECT DISTINCT frame, memory FROM citations WHERE frame IN ({marks}) ORDER BY frame, memory", chunk):
                memory = memory[len(MEMORY_PREFIX):] if memory.startswith(MEMORY_PREFIX) else memory
                if memory not in cites[frame]:
                    cites[frame].append(memory)
        self.infos({a for lst in arms.values() for _, a in lst})
        out = []
        for frame in ids:
            f = facts[frame]
            seen: set[tuple[str, str]] = set()
            frame_arms: list[tuple[str, str, str, str]] = []
            for role, anchor in arms[frame]:
                info = self.info(anchor)
                rep = info.iri if info else anchor
                if (role, rep) in seen:
                    continue
                seen.add((role, rep))
                frame_arms.append((role, rep, info.name if info else rep, info.type if info else "concept"))
            status = f.get("status", [])
            out.append(FrameInfo(
                iri=frame, predicate=(f.get("predicate") or ["related"])[0], arms=frame_arms, literals=literals[frame],
                event_time=next(iter(f.get("eventTime") or []), None), mention_time=next(iter(f.get("mentionTime") or []), None),
                status="planned" if status and all(x == "planned" for x in status) else (status[0] if status else None),
                kind=(f.get("kind") or ["episodic"])[0], cites=cites[frame],
            ))
        return out


@dataclass(frozen=True)
class _AnchorNamesOpener:
    """Opens the anchor-name vectors of one generation (equal for equal settings, so it keys the reader cache)."""

    embedding: "EmbeddingSettings"

    def __call__(self, folder: Path) -> Any:
        from memrepo.index.embed import get_embedder
        from memrepo.index.vectors import AnchorVectors

        return AnchorVectors.load(folder, get_embedder(self.embedding), view=True)


def _make_info(rep: str, facts: list[tuple[str, str]], degree: int) -> AnchorInfo:
    from memrepo.graph.index import anchor_summary

    name, key, type_ = anchor_summary(facts) or ("", "", "concept")
    return AnchorInfo(rep, name or rep, key, type_, degree)
