"""The one reader of the graph index (:mod:`memrepo.graph.index`) and its data classes.

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
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

from memrepo.errors import MemrepoError
from memrepo.graph.kappa import kappa
from memrepo.graph.model import ANCHOR_PREFIX, FRAMES_FOLDER, MEMORY_PREFIX
from memrepo.graph.rdf import ANCHOR_PROPS, FRAME_PROPS, NS, OWL, PROV
from memrepo.index import live

if TYPE_CHECKING:
    from memrepo.graph.beliefs import Belief, Occurrence
    from memrepo.graph.index import LabelCounts
    from memrepo.settings import EmbeddingSettings, Settings
    from memrepo.store.git import GitStore

#: Members of one owl:sameAs class read for its name, key, type and degree.
LABEL_MEMBERS = 16
#: An anchor's degree (memories that mention it, counted when the index is built) is capped here.
DEGREE_CAP = 4096
#: Mentions of one anchor that :meth:`GraphReader.rows_of_weighted` looks at (newest first) when it sums many.
ROW_SCAN_CAP = 512
#: Arms of one anchor :meth:`GraphReader.predicates_of` looks at (index order): bounded for hubs.
PREDICATE_SCAN = 240

_PROP_IRI = {v: k for k, v in ANCHOR_PROPS.items()}
_FRAME_PROP_IRI = {v: k for k, v in FRAME_PROPS.items()}


class GraphUnavailable(MemrepoError):
    """The graph index cannot be read (missing or corrupt)."""


# --- data classes -------------------------------------------------------------------------


@dataclass
class AnchorInfo:
    """An anchor (its owl:sameAs representative) as the graph index sees it.

    ``name``, ``key``, ``type`` and ``degree`` are always filled; ``aliases``, ``members``,
    ``episodic``, ``semantic`` and ``frame_count`` only by :meth:`GraphReader.anchor` (the full view).
    """

    iri: str
    name: str
    key: str
    type: str = "concept"
    degree: int = 0  # memories that mention it (capped at DEGREE_CAP)
    aliases: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # anchor IRIs merged into it (owl:sameAs)
    episodic: list[str] = field(default_factory=list)
    semantic: list[str] = field(default_factory=list)
    frame_count: int = 0

    @property
    def rows(self) -> list[str]:
        return sorted(self.episodic + self.semantic)

    def to_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri, "name": self.name, "type": self.type, "key": self.key, "degree": self.degree,
            "aliases": self.aliases, "members": self.members, "episodic": self.episodic,
            "semantic": self.semantic, "frame_count": self.frame_count,
        }


class ArmInfo(NamedTuple):
    """One role arm of a frame: the role, the anchor's representative, its name and type."""

    role: str
    anchor: str
    name: str
    type: str = "concept"

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "anchor": self.anchor, "name": self.name, "type": self.type}


def frame_status(statuses: Sequence[str]) -> str | None:
    """The one status of a frame its citations give ``statuses``: planned only while all say planned."""
    if not statuses:
        return None
    if all(s == "planned" for s in statuses):
        return "planned"
    return sorted(s for s in statuses if s != "planned")[0]


@dataclass
class FrameInfo:
    """A frame with every citation the union of graph files gives it (M eq. 6)."""

    iri: str
    predicate: str
    kind: str = "episodic"
    arms: list[ArmInfo] = field(default_factory=list)
    literals: dict[str, list[str]] = field(default_factory=dict)
    event_times: list[str] = field(default_factory=list)
    mention_times: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)  # record ids

    @property
    def status(self) -> str | None:
        return frame_status(self.statuses)

    @property
    def event_time(self) -> str | None:
        return self.event_times[0] if self.event_times else None

    @property
    def mention_time(self) -> str | None:
        return self.mention_times[0] if self.mention_times else None

    @property
    def cites(self) -> list[str]:
        return self.citations

    def literal_text(self) -> dict[str, str]:
        """Each literal's values joined with ``|``."""
        return {k: "|".join(v) for k, v in self.literals.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri, "predicate": self.predicate, "kind": self.kind,
            "arms": [a.to_dict() for a in self.arms], "literals": self.literals, "event_time": self.event_times,
            "mention_time": self.mention_times, "status": self.status, "statuses": self.statuses,
            "citations": self.citations,
        }

    def render(self) -> str:
        args = ", ".join(f"{a.role}={a.name}" for a in self.arms)
        lits = "".join(f", {k}={'|'.join(v)}" for k, v in sorted(self.literals.items()))
        when = f" @{'|'.join(self.event_times)}" if self.event_times else ""
        state = f" [{self.status}]" if self.status else ""
        return f"{self.predicate}({args}{lits}){when}{state}"


def _most(counts: Counter) -> str | None:
    """The most frequent value (ties: the least); None when there is none."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if counts else None


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


class GraphReader:
    """Read-only, bounded lookups over one generation of the graph index (one snapshot per reader)."""

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

    # -- the sameAs closure --

    def representative(self, anchor: str) -> str:
        row = self.db.execute("SELECT rep FROM closure WHERE anchor = ?", (anchor,)).fetchone()
        return row[0] if row else anchor

    def members(self, anchor: str) -> list[str]:
        """Every anchor IRI of ``anchor``'s owl:sameAs class (itself alone when not merged)."""
        if anchor not in self._members:
            rep = self.representative(anchor)
            found = [r[0] for r in self.db.execute("SELECT anchor FROM closure WHERE rep = ? ORDER BY anchor", (rep,))]
            self._members[anchor] = found or [anchor]
        return self._members[anchor]

    def closure(self) -> dict[str, str]:
        """alias -> representative of every merged anchor."""
        return dict(self.db.execute("SELECT anchor, rep FROM closure WHERE anchor != rep"))

    # -- anchors: name, key, type, degree --

    def _label_counts(self, anchors: list[str], prop: str) -> Counter:
        counts: Counter = Counter()
        for start in range(0, len(anchors), 400):
            chunk = anchors[start : start + 400]
            marks = ",".join("?" * len(chunk))
            for value, n in self.db.execute(
                    f"SELECT value, n FROM anchor_labels WHERE prop = ? AND anchor IN ({marks})", (prop, *chunk)):
                counts[value] += n
        return counts

    def _class_info(self, rep: str, members: list[str]) -> AnchorInfo | None:
        """Name, key, type and degree of an owl:sameAs class (the rule in the module docstring)."""
        from memrepo.graph.index import LABEL_SAMPLE

        sample = members[:LABEL_MEMBERS] if rep in members[:LABEL_MEMBERS] else [rep] + members[:LABEL_MEMBERS - 1]
        own = self._label_counts([rep], "label")
        labels = own or self._label_counts(sample, "label")
        types = self._label_counts(sample, "entityType")
        keys = [r[0] for r in self.db.execute(
            "SELECT value FROM anchor_facts WHERE anchor = ? AND prop = 'key' LIMIT ?", (rep, LABEL_SAMPLE))]
        if not keys:
            for member in sample:
                keys += [r[0] for r in self.db.execute(
                    "SELECT value FROM anchor_facts WHERE anchor = ? AND prop = 'key' LIMIT ?", (member, LABEL_SAMPLE))]
        if not (labels or types or keys):
            return None
        marks = ",".join("?" * len(sample))
        degree = self.db.execute(f"SELECT coalesce(sum(degree), 0) FROM anchor_info WHERE anchor IN ({marks})",
                                 sample).fetchone()[0]
        return AnchorInfo(rep, _most(labels) or rep, min(keys) if keys else "", _most(types) or "concept",
                          min(degree, DEGREE_CAP))

    def info(self, anchor: str) -> AnchorInfo | None:
        """Name, key, type and degree of ``anchor``'s representative; None for an IRI the graph does not describe."""
        if anchor not in self._info and anchor not in self._looked_up:
            self.infos([anchor])  # one row of anchor_info unless the anchor is in an owl:sameAs class
        if anchor in self._info:
            return self._info[anchor]
        if anchor in self._plain:
            return None  # not merged and without facts
        rep = self.representative(anchor)
        if rep not in self._info:
            info = self._class_info(rep, self.members(rep))
            if info is None:
                return None
            self._info[rep] = info
        return self._info[rep]

    def infos(self, anchors: Iterable[str]) -> None:
        """Load (and cache) the name, key, type and degree of many anchors with a few batched queries."""
        todo = sorted({a for a in anchors if a not in self._info and a not in self._looked_up})
        for start in range(0, len(todo), 400):
            chunk = todo[start : start + 400]
            self._looked_up.update(chunk)
            marks = ",".join("?" * len(chunk))
            reps = dict(self.db.execute(f"SELECT anchor, rep FROM closure WHERE anchor IN ({marks})", chunk).fetchall())
            plain = [a for a in chunk if a not in reps]  # not merged: its own representative, its only member
            if not plain:
                continue
            marks = ",".join("?" * len(plain))
            found = {a: rest for a, *rest in self.db.execute(
                f"SELECT anchor, name, key, type, degree FROM anchor_info WHERE anchor IN ({marks})", plain)}
            for anchor in plain:
                self._plain.add(anchor)
                self._members[anchor] = [anchor]
                if anchor in found:
                    name, key, type_, degree = found[anchor]
                    self._info[anchor] = AnchorInfo(anchor, name or anchor, key, type_, min(degree, DEGREE_CAP))

    def label(self, anchor: str) -> str:
        info = self.info(anchor)
        return info.name if info else anchor

    def find_anchors(self, name: str) -> list[str]:
        """Representatives of the anchors whose key is κ(name) or whose label is ``name`` (case-folded)."""
        key = kappa(name)
        found = [r[0] for r in self.db.execute(
            "SELECT DISTINCT anchor FROM anchor_facts WHERE prop = 'key' AND value = ?", (key,))]
        if not found and name.startswith(ANCHOR_PREFIX):
            found = [name]
        if not found:
            found = [r[0] for r in self.db.execute(
                "SELECT DISTINCT anchor FROM anchor_facts WHERE prop = 'label' AND value = ? COLLATE NOCASE", (name,))]
        return sorted({self.representative(a) for a in found})

    def anchors_by_keys(self, keys: Sequence[str]) -> list[AnchorInfo]:
        """Anchors whose κ key is one of ``keys`` (representatives), in the order of ``keys``."""
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
                        out.append(info)
        return out

    def anchor(self, anchor: str) -> AnchorInfo:
        """The full view of an anchor: name, key, type, aliases, merged members, every row that names it."""
        rep = self.representative(anchor)
        members = self.members(anchor)
        info = self.info(rep) or AnchorInfo(rep, rep, kappa(rep))
        labels = self._label_counts(members, "label")
        marks = ",".join("?" * len(members))
        mentioned = {v[len(MEMORY_PREFIX):] for (v,) in self.db.execute(
            f"SELECT memory FROM mentions WHERE anchor IN ({marks})", members)}
        cited = {r[0] for r in self.db.execute(
            f"SELECT DISTINCT c.memory FROM arms a JOIN citations c ON c.frame = a.frame WHERE a.anchor IN ({marks})",
            members)}
        all_rows = sorted(mentioned | cited)
        frames = self.db.execute(f"SELECT count(DISTINCT frame) FROM arms WHERE anchor IN ({marks})", members).fetchone()[0]
        return AnchorInfo(
            iri=rep, name=info.name, key=info.key or kappa(info.name), type=info.type, degree=info.degree,
            aliases=sorted(set(labels) - {info.name}), members=[m for m in members if m != rep],
            episodic=[r for r in all_rows if r.startswith("ep-")],
            semantic=[r for r in all_rows if not r.startswith("ep-")],
            frame_count=frames,
        )

    def anchors(self) -> list[str]:
        """Every anchor representative (for exports and statistics, not for lookups)."""
        found = {r[0] for r in self.db.execute("SELECT DISTINCT anchor FROM anchor_facts")}
        return sorted({self.representative(a) for a in found})

    def anchors_in_files(self, paths: Sequence[str], types: Sequence[str]) -> list[str]:
        """Anchor IRIs (as written, not resolved) of type ``types`` that the graph files ``paths`` describe."""
        out: set[str] = set()
        tmarks = ",".join("?" * len(types))
        for start in range(0, len(paths), 400):
            chunk = list(paths[start : start + 400])
            marks = ",".join("?" * len(chunk))
            out |= {r[0] for r in self.db.execute(
                f"SELECT DISTINCT anchor FROM anchor_facts WHERE prop = 'entityType' AND value IN ({tmarks}) "
                f"AND file IN (SELECT id FROM files WHERE path IN ({marks}))", (*types, *chunk))}
        return sorted(out)

    def anchors_mentioned_by(self, id_prefix: str, types: Sequence[str]) -> list[str]:
        """Anchor IRIs (as written) of type ``types`` that a memory whose id starts with ``id_prefix`` mentions."""
        return sorted({r[0] for r in self.db.execute(
            "SELECT DISTINCT f.anchor FROM anchor_facts f JOIN anchor_facts m ON m.anchor = f.anchor "
            "AND m.prop = 'mentionedIn' AND m.value LIKE ? "
            f"WHERE f.prop = 'entityType' AND f.value IN ({','.join('?' * len(types))})",
            (MEMORY_PREFIX + id_prefix + "%", *types))})

    def anchor_names(self) -> list[tuple[str, str]]:
        """(name, type) of every anchor representative, by the one naming rule (the canonicalization registry).

        Reads the label and type counts the index keeps per anchor (one row per distinct label), not the files.
        """
        return self.label_counts().names()

    def label_counts(self) -> "LabelCounts":
        """The label and type counts of every anchor, through the owl:sameAs closure."""
        from memrepo.graph.index import LabelCounts

        counts = LabelCounts(self.closure())
        for anchor, prop, value, n in self.db.execute("SELECT anchor, prop, value, n FROM anchor_labels"):
            counts.add(anchor, prop, value, n)
        return counts

    def _name_vectors(self) -> Any:
        if self._vectors is None:
            from memrepo.graph.names import open_cached_names

            folder = self._names_folder() if callable(self._names_folder) else self._names_folder
            if folder is None or self.embedding is None:
                raise GraphUnavailable("this graph reader was opened without the anchor-name index")
            self._vectors = open_cached_names(folder, self.embedding)
        return self._vectors

    def search_anchor_names(self, vector: Any, k: int) -> list[tuple[AnchorInfo, float]]:
        """The ``k`` anchors whose name embedding is nearest to ``vector``: (anchor, cosine)."""
        out: list[tuple[AnchorInfo, float]] = []
        seen: set[str] = set()
        hits = self._name_vectors().search_vector(vector, k=2 * k)
        self.infos(anchor for anchor, _cosine in hits)  # one batched lookup, not one per hit
        for anchor, cosine in hits:
            info = self.info(anchor)
            if info is None or info.iri in seen:
                continue
            seen.add(info.iri)
            out.append((info, cosine))
            if len(out) >= k:
                break
        return out

    def stored_name_vectors(self, anchors: Iterable[AnchorInfo]) -> dict[str, Any]:
        """The anchor-name index's vector of each anchor's name, by IRI, for the anchors it holds under that name."""
        return self._name_vectors().stored((a.iri, a.name) for a in anchors)

    def predicates_of(self, iri: str) -> set[str]:
        """Predicates among PREDICATE_SCAN of the anchor's incident frames (index order): bounded for hubs."""
        members = self.members(iri)
        marks = ",".join("?" * len(members))
        return {r[0] for r in self.db.execute(
            f"SELECT DISTINCT predicate FROM (SELECT predicate FROM arms WHERE anchor IN ({marks}) LIMIT ?) "
            "WHERE predicate IS NOT NULL", (*members, PREDICATE_SCAN))}

    def most_mentioned(self, n: int) -> list[str]:
        """The ``n`` anchor IRIs (as written) that the most memories mention, then by IRI."""
        return [r[0] for r in self.db.execute("SELECT anchor FROM anchor_info ORDER BY degree DESC, anchor LIMIT ?",
                                              (n,))]

    def class_counts(self, anchor: str) -> tuple[int, int]:
        """(memories that mention it, frames that bind it) over ``anchor``'s owl:sameAs class (not capped)."""
        members = self.members(anchor)
        marks = ",".join("?" * len(members))
        records = self.db.execute(f"SELECT coalesce(sum(degree), 0) FROM anchor_info WHERE anchor IN ({marks})",
                                  members).fetchone()[0]
        frames = self.db.execute(f"SELECT count(DISTINCT frame) FROM arms WHERE anchor IN ({marks})",
                                 members).fetchone()[0]
        return records, frames

    def shared_frames(self, anchor: str) -> dict[str, set[str]]:
        """Representative of every other anchor that shares a frame with ``anchor``'s class -> those frames."""
        members = self.members(anchor)
        own = set(members)
        marks = ",".join("?" * len(members))
        shared: dict[str, set[str]] = {}
        for frame, other in self.db.execute(
                f"SELECT DISTINCT a.frame, b.anchor FROM arms a JOIN arms b ON b.frame = a.frame "
                f"WHERE a.anchor IN ({marks})", members):
            if other not in own:
                shared.setdefault(self.representative(other), set()).add(frame)
        return shared

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

    # -- frames --

    def frame_ids(self, *, anchor: str | None = None, predicate: str | None = None, cited: str | None = None,
                  limit: int | None = None) -> list[str]:
        """Frame IRIs by incident anchor (through its sameAs class), predicate family and/or cited memory id.

        Every filter runs on an index; frames are returned in frame-id order (DESIGN.md §3), at most ``limit``.
        """
        sql, params = self.frame_query(anchor=anchor, predicate=predicate, cited=cited, limit=limit)
        return [r[0] for r in self.db.execute(sql, params)]

    def frame_query(self, *, anchor: str | None = None, predicate: str | None = None, cited: str | None = None,
                    limit: int | None = None) -> tuple[str, list[Any]]:
        """The SQL (and parameters) of :meth:`frame_ids`; exposed so that its query plan can be checked."""
        clauses: list[str] = []
        params: list[Any] = []
        sql = "SELECT DISTINCT f.frame FROM frame_facts f"
        if anchor is not None:
            members = self.members(anchor)
            sql += f" JOIN arms a ON a.frame = f.frame AND a.anchor IN ({','.join('?' * len(members))})"
            params += members
        if cited is not None:
            sql += " JOIN citations c ON c.frame = f.frame AND c.memory = ?"
            params.append(cited)
        clauses.append("f.prop = 'predicate'")
        if predicate is not None:
            preds = [p.strip() for p in predicate.split(",") if p.strip()]
            clauses.append(f"f.value IN ({','.join('?' * len(preds))})")
            params += preds
        sql += " WHERE " + " AND ".join(clauses) + " ORDER BY f.frame"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return sql, params

    def frames(self, *, anchor: str | None = None, predicate: str | None = None, cited: str | None = None,
               limit: int | None = None) -> list[FrameInfo]:
        """The frames :meth:`frame_ids` finds, loaded."""
        return self.load_frames(self.frame_ids(anchor=anchor, predicate=predicate, cited=cited, limit=limit))

    def frames_citing(self, memory_id: str) -> list[str]:
        return self.frame_ids(cited=memory_id)

    def frames_of(self, iris: Sequence[str], predicates: Sequence[str] | None, limit: int,
                  exclude: Iterable[str] = ()) -> list[FrameInfo]:
        """The first ``limit`` frames (in frame-IRI order) with an arm on one of ``iris``, of ``predicates`` if given.

        ``exclude`` (with ``predicates`` None): predicates left out in the index, before the limit.

        Each (anchor, predicate) pair is read from its own index range, at most ``limit`` entries, and the
        ranges are merged: the same frames as one global ``ORDER BY frame LIMIT``, at a cost bounded by
        the number of pairs times ``limit`` however many frames a hub has.
        """
        members = sorted({m for iri in iris for m in self.members(iri)})
        if not members:
            return []
        parts: list[tuple[str, tuple[Any, ...]]]
        if predicates is None:
            skip = sorted(set(exclude))
            # A chain of != rather than NOT IN (...): SQLite builds NOT IN's list again for every part of the
            # union below, which at a dozen anchors tripled the query (0.46 ms against 0.24 ms).
            not_in = "".join(" AND predicate != ?" for _ in skip)
            part = ("SELECT * FROM (SELECT frame FROM arms INDEXED BY arms_anchor WHERE anchor = ? "
                    f"AND predicate IS NOT NULL{not_in} ORDER BY frame LIMIT ?)")
            parts = [(part, (member, *skip, limit)) for member in members]
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
        return self.load_frames(sorted(found)[:limit])

    def frame(self, frame: str) -> FrameInfo:
        return self.load_frames([frame])[0]

    def load_frames(self, ids: Sequence[str]) -> list[FrameInfo]:
        """Frames by IRI, loaded with one query per table (batched), in the order given."""
        if not ids:
            return []
        facts: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        arms: dict[str, list[tuple[str, str]]] = {i: [] for i in ids}
        literals: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        cites: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 400):
            chunk = list(ids[start : start + 400])
            marks = ",".join("?" * len(chunk))
            for frame, prop, value in self.db.execute(
                    f"SELECT frame, prop, value FROM frame_facts WHERE frame IN ({marks}) ORDER BY frame, prop, value", chunk):
                values = facts[frame].setdefault(prop, [])
                if value not in values:
                    values.append(value)
            for frame, role, anchor in self.db.execute(
                    f"SELECT frame, role, anchor FROM arms WHERE frame IN ({marks}) ORDER BY frame, arm, role, anchor", chunk):
                arms[frame].append((role, anchor))
            for frame, key, value in self.db.execute(
                    f"SELECT frame, key, value FROM literals WHERE frame IN ({marks}) ORDER BY frame, key, value", chunk):
                values = literals[frame].setdefault(key, [])
                if value not in values:
                    values.append(value)
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
            frame_arms: list[ArmInfo] = []
            for role, anchor in arms[frame]:
                info = self.info(anchor)
                rep = info.iri if info else self.representative(anchor)
                if (role, rep) in seen:
                    continue
                seen.add((role, rep))
                frame_arms.append(ArmInfo(role, rep, info.name if info else rep, info.type if info else "concept"))
            out.append(FrameInfo(
                iri=frame, predicate=(f.get("predicate") or ["related"])[0], kind=(f.get("kind") or ["episodic"])[0],
                arms=frame_arms, literals=literals[frame], event_times=f.get("eventTime", []),
                mention_times=f.get("mentionTime", []), statuses=f.get("status", []), citations=cites[frame],
            ))
        return out

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
