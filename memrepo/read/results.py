"""What a recall returns: its entry anchors, the facts it rendered, the records it chose (:mod:`memrepo.read.recall`).

Plain dataclasses, each with ``to_dict()`` for ``recall --json``, the MCP tools and the viewer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memrepo.read.plan import Plan


@dataclass
class AnchorHit:
    """An entry anchor with each term of its score s_A (eq. 10)."""

    iri: str
    name: str
    key: str
    type: str
    degree: int
    routes: list[str] = field(default_factory=list)  # "vector", "exact"
    terms: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Arm:
    role: str
    anchor: str
    label: str
    type: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fact:
    """A graph fact rendered by the relation lane; ``cites`` are the record ids that justify it."""

    id: str
    predicate: str
    arms: list[Arm]
    literals: dict[str, str]
    event_time: str | None
    status: str | None
    kind: str
    cites: list[str]
    score: float = 0.0
    terms: dict[str, float] = field(default_factory=dict)
    # a one-value relation (memrepo.graph.beliefs): the interval this frame's value held, the frames that closed it
    valid_from: str | None = None
    valid_until: str | None = None
    superseded_by: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["arms"] = [a.to_dict() for a in self.arms]
        return data


@dataclass
class Row:
    """A returned record with its place in the fusion and the source parts it cites."""

    id: str
    type: str
    summary: str
    text: str
    mention_time: str
    event_time: str | None
    status: str | None
    sources: list[str]
    lane: str  # cited | base | fill | fallback
    score: float = 0.0
    terms: dict[str, float] = field(default_factory=dict)
    parts: list[dict[str, Any]] = field(default_factory=list)  # {citation, title, text}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RecallResult:
    """Everything a recall did: plan, entry anchors, both lanes, fusion, facts and records."""

    question: str
    commit: str | None
    plan: Plan
    types: list[str]
    anchors: list[AnchorHit] = field(default_factory=list)
    base_lane: list[dict[str, Any]] = field(default_factory=list)  # candidates with score and "kept"
    relation_lane: list[dict[str, Any]] = field(default_factory=list)  # frames before/after the cap, scored
    facts: list[Fact] = field(default_factory=list)
    records: list[Row] = field(default_factory=list)
    fusion: list[dict[str, Any]] = field(default_factory=list)  # the fusion order with each step's reason
    core: list[Row] = field(default_factory=list)
    typed: list[Row] = field(default_factory=list)  # resource documents, skills, vault entries
    fallback: str | None = None
    inspected: dict[str, int] = field(default_factory=dict)
    dangling: list[str] = field(default_factory=list)  # ids the graph cites that are not in the repository (dropped)
    # frames left out because a record they cite changed or is gone since they were extracted:
    # {"frame", "predicate", "record", "reason": "changed" | "gone"}
    stale_dropped: list[dict[str, str]] = field(default_factory=list)
    # what the question asks of a one-value relation: {"slot", "holder", "at", "answer", "cites", "beliefs"}
    beliefs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def record_ids(self) -> list[str]:
        return [r.id for r in self.records]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "commit": self.commit,
            "types": self.types,
            "plan": self.plan.to_dict(),
            "anchors": [a.to_dict() for a in self.anchors],
            "base_lane": self.base_lane,
            "relation_lane": self.relation_lane,
            "facts": [f.to_dict() for f in self.facts],
            "records": [r.to_dict() for r in self.records],
            "fusion": self.fusion,
            "core": [r.to_dict() for r in self.core],
            "typed": [r.to_dict() for r in self.typed],
            "fallback": self.fallback,
            "inspected": self.inspected,
            "dangling": self.dangling,
            "stale_dropped": self.stale_dropped,
            "beliefs": self.beliefs,
        }
