"""What the read path needs from the graph index, as one small read-only interface.

The graph engineer's SQLite index (memrepo/graph) holds anchors, frames, arms,
citations and the owl:sameAs closure. The lanes talk to it only through
:class:`GraphReader`, so they stay bounded and testable; :func:`open_graph`
opens it at a commit. Any exception raised by opening or reading the graph is
caught by :func:`memrepo.read.recall.recall`, which then falls back to direct
full-text + vector retrieval and says so (M A.6 invariant 4).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore


class GraphUnavailable(RuntimeError):
    """The graph index cannot be read (missing, corrupt, or the graph package has no index yet)."""


@dataclass
class AnchorInfo:
    iri: str
    name: str
    key: str
    type: str = "concept"
    degree: int = 0  # memories that mention it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FrameInfo:
    """One frame as the relation lane sees it; ``cites`` are record ids (its citation union)."""

    iri: str
    predicate: str
    arms: list[tuple[str, str, str, str]] = field(default_factory=list)  # (role, anchor iri, name, type)
    literals: dict[str, str] = field(default_factory=dict)
    event_time: str | None = None
    mention_time: str | None = None
    status: str | None = None
    kind: str = "episodic"
    cites: list[str] = field(default_factory=list)


class GraphReader(Protocol):
    """Bounded, indexed lookups; every list comes back in a deterministic order."""

    def anchors_by_keys(self, keys: Sequence[str]) -> list[AnchorInfo]:
        """Anchors whose κ key is one of ``keys`` (canonical representatives after owl:sameAs)."""

    def search_anchor_names(self, vector: Any, k: int) -> list[tuple[AnchorInfo, float]]:
        """The ``k`` anchors whose name embedding is nearest to the question's vector: (anchor, cosine)."""

    def predicates_of(self, iri: str) -> set[str]:
        """Predicates of the frames the anchor takes part in (bounded: distinct values)."""

    def rows_of_weighted(self, weights: Sequence[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
        """(memory id, sum of the weights of the anchors it mentions), strongest first, then id; at most ``limit``."""

    def frames_of(self, iris: Sequence[str], predicates: Sequence[str] | None, limit: int) -> list[FrameInfo]:
        """Frames incident to ``iris`` whose predicate is in ``predicates`` (all if None), filtered in
        the index before the cap, the first ``limit`` in frame-id order."""

    def close(self) -> None: ...


def open_graph(store: "GitStore", settings: "Settings", commit: str | None) -> GraphReader:
    """The graph index at ``commit``.

    Raises:
        GraphUnavailable: if there is no graph index to read.
    """
    try:
        from memrepo.read.graphsql import open_sqlite_graph
    except ImportError as exc:  # pragma: no cover - the adapter ships with this package
        raise GraphUnavailable(f"graph reader missing: {exc}") from exc
    return open_sqlite_graph(store, settings, commit)
