"""What the graph reader (:mod:`memrepo.graph.reader`) returns and raises: anchors, frames and their arms.

An anchor has one name and a frame one status wherever it is shown; the rules are in the reader's
module docstring (:func:`frame_status` is the frame's).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

from memrepo.errors import MemrepoError


class GraphUnavailable(MemrepoError):
    """The graph index cannot be read (missing or corrupt)."""


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


def most_frequent(counts: Counter) -> str | None:
    """The most frequent value (ties: the least); None when there is none."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if counts else None
