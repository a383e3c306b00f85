"""The graph reader's anchor lookups (:class:`AnchorReads`, a part of :class:`memrepo.graph.reader.GraphReader`).

The owl:sameAs closure, and each anchor's name, key, type and degree by the rule in the reader's module
docstring, kept per reader (``_info``, ``_members``) so that an anchor is looked up once per read; the
lookups by key and name, the name-vector search, and the counts of an anchor's class.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from memrepo.graph.infos import AnchorInfo, GraphUnavailable, most_frequent
from memrepo.graph.kappa import kappa
from memrepo.graph.model import ANCHOR_PREFIX, MEMORY_PREFIX

if TYPE_CHECKING:
    from memrepo.graph.index import LabelCounts
    from memrepo.settings import EmbeddingSettings

#: Members of one owl:sameAs class read for its name, key, type and degree.
LABEL_MEMBERS = 16
#: An anchor's degree (memories that mention it, counted when the index is built) is capped here.
DEGREE_CAP = 4096
#: Arms of one anchor :meth:`AnchorReads.predicates_of` looks at (index order): bounded for hubs.
PREDICATE_SCAN = 240


class AnchorReads:
    """Anchor lookups over the reader's snapshot ``db``, with the anchors already looked up kept."""

    path: Path
    db: sqlite3.Connection
    embedding: "EmbeddingSettings | None"
    _names_folder: Any
    _vectors: Any
    _info: dict[str, AnchorInfo]
    _members: dict[str, list[str]]
    _looked_up: set[str]
    _plain: set[str]

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
        return AnchorInfo(rep, most_frequent(labels) or rep, min(keys) if keys else "", most_frequent(types) or "concept",
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
