"""The graph's data: anchors, frames with role arms and literals, their IRIs and identities (M eq. 4-8).

Identity rules (DESIGN.md §3): σ(f) is the sorted set ``role:κ(anchor)``; a
semantic frame is H(u, p, σ), an episodic one H(u, p, σ, χ) with χ the explicit
event time when there is one and the memory id otherwise. Planned/done status
never enters an identity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from memrepo.graph.kappa import kappa
from memrepo.nlp.lexicon import ADDRESSEE_ROLE, DIALOGUE_ACTS
from memrepo.records import FOLDER, content_hash, type_of_id as _type_of_id

NS = "urn:memrepo:ns#"
ANCHOR_PREFIX = "urn:memrepo:anchor:"
FRAME_PREFIX = "urn:memrepo:frame:"
MEMORY_PREFIX = "urn:memrepo:memory:"
XSD = "http://www.w3.org/2001/XMLSchema#"
ENTITY_TYPES = ("person", "organization", "location", "object", "concept", "event", "animal", "work")
FRAMES_FOLDER = "graph/frames"
DECISIONS_FOLDER = "graph/decisions"
# The record types the graph extracts: what happened, what is known, and what is to be done (an instruction that
# cites the passage or chat turn it was said in). A skill (procedural/skills/<slug>/SKILL.md, an AutoDream
# distillation or a hand-written one) has no graph file, and a task session's records have empty ones: its own
# (kind ``task-session``: the task, its outcome and its steps in short, citing every turn) and those that name it
# in ``session`` (a standing instruction said in it, an experience AutoDream learnt from it); the turns' own
# episodic records are their evidence. Both are read by recall's typed path.
INDEXED_TYPES = ("episodic", "semantic", "procedural")
INDEXED_FOLDERS = tuple(FOLDER[t] for t in INDEXED_TYPES)  # "procedural/experiences", not "procedural/skills"
TYPED_KINDS = ("task-session",)  # procedural records of INDEXED_FOLDERS that the graph holds no frames of


def indexed_path(path: str) -> bool:
    """Whether the record file at ``path`` is one the graph extracts (its folder is one of INDEXED_FOLDERS)."""
    return path.startswith(tuple(f + "/" for f in INDEXED_FOLDERS))


def indexed_id(memory_id: str) -> bool:
    """Whether the record ``memory_id`` is one the graph extracts (a skill, ``skill-<slug>``, is not)."""
    return not memory_id.startswith("skill-") and _type_of_id(memory_id) in INDEXED_TYPES


def holds_frames(record: Any) -> bool:
    """Whether the graph extracts frames of ``record`` (a record of INDEXED_FOLDERS): all but a task session's
    records (TYPED_KINDS, and the records that name their ``session``)."""
    return not (record.type == "procedural" and (record.extra.get("kind") in TYPED_KINDS
                                                 or bool(record.extra.get("session"))))


_PRED_RE = re.compile(r"[^a-z0-9_]+")
_ROLE_RE = re.compile(r"[^a-z0-9_]+")


def digest(*parts: str, length: int = 20) -> str:
    """H(...): a stable hex digest of length-delimited parts (the same hash as record ids)."""
    return content_hash(*parts, length=length)


def canonical_predicate(text: str) -> str:
    """``"Works At"`` -> ``works_at``: lowercase, one underscore between words."""
    return _PRED_RE.sub("_", text.strip().lower()).strip("_")[:60] or "related"


def canonical_role(text: str) -> str:
    return _ROLE_RE.sub("_", text.strip().lower()).strip("_")[:40] or "arg"


def anchor_iri(namespace: str, key: str) -> str:
    """The anchor of key κ in namespace u: the same in every file that mentions it."""
    return ANCHOR_PREFIX + digest(namespace, "anchor", key, length=16)


def memory_iri(memory_id: str) -> str:
    return MEMORY_PREFIX + memory_id


def memory_id_of(iri: str) -> str | None:
    return iri[len(MEMORY_PREFIX):] if iri.startswith(MEMORY_PREFIX) else None


def sigma(arms: Iterable["Arm"]) -> tuple[str, ...]:
    """σ(f): the sorted set of ``role:κ(anchor name)``."""
    return tuple(sorted({f"{a.role}:{a.anchor.key}" for a in arms}))


def frame_iri(namespace: str, predicate: str, arms: Iterable["Arm"], kind: str, chi: str | None) -> str:
    """id_S = H(u, p, σ) for semantic frames; id_E = H(u, p, σ, χ) for episodic ones (M eq. 6-8)."""
    sig = "|".join(sigma(arms))
    if kind == "episodic":
        return FRAME_PREFIX + digest(namespace, predicate, sig, chi or "")
    return FRAME_PREFIX + digest(namespace, predicate, sig)


def graph_path(memory_id: str) -> str:
    """``graph/frames/<YYYY>/<MM>/<memory-id>.ttl``: sharded by the memory's mention month, like its record."""
    m = re.match(r"^[a-z]{2,5}-(\d{4})-(\d{2})-\d{2}-", memory_id)
    if not m:
        return f"{FRAMES_FOLDER}/undated/{memory_id}.ttl"
    return f"{FRAMES_FOLDER}/{m.group(1)}/{m.group(2)}/{memory_id}.ttl"


def literal_datatype(key: str, value: str) -> str | None:
    """The XSD datatype a literal value is written with (None: a plain string)."""
    v = value.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        return "date"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?", v):
        return "dateTime"
    if re.fullmatch(r"\d{4}-\d{2}", v):
        return "gYearMonth"
    if key in ("date", "year") and re.fullmatch(r"\d{4}", v):
        return "gYear"
    if re.fullmatch(r"-?\d+", v):
        return "integer"
    if re.fullmatch(r"-?\d+\.\d+", v):
        return "decimal"
    return None


@dataclass(frozen=True)
class AnchorRef:
    """An admitted anchor as one memory mentions it."""

    iri: str
    name: str
    key: str
    type: str

    @classmethod
    def make(cls, namespace: str, name: str, type_: str) -> "AnchorRef":
        key = kappa(name)
        return cls(anchor_iri(namespace, key), name, key, type_ if type_ in ENTITY_TYPES else "concept")


@dataclass(frozen=True)
class Arm:
    role: str
    anchor: AnchorRef


@dataclass(frozen=True)
class FrameLiteral:
    key: str
    value: str

    @property
    def datatype(self) -> str | None:
        return literal_datatype(self.key, self.value)


@dataclass
class Frame:
    """One n-ary frame extracted from one memory (M eq. 5)."""

    iri: str
    predicate: str
    arms: tuple[Arm, ...]
    literals: tuple[FrameLiteral, ...]
    kind: str
    mention_time: str
    event_time: str | None = None
    status: str | None = None
    citations: tuple[str, ...] = ()

    def render(self) -> str:
        """The frame as words (what the audit compares with the source)."""
        parts = [self.predicate.replace("_", " ")]
        parts += [a.anchor.name for a in self.arms]
        parts += [lit.value for lit in self.literals]
        if self.event_time:
            parts.append(self.event_time)
        return " ".join(parts)


@dataclass
class MemoryGraph:
    """What indexing one memory produced: its anchors and frames, and how extraction went."""

    memory_id: str
    kind: str
    anchors: list[AnchorRef] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    repaired: bool = False
    record_blob: str | None = None  # Git blob id of the record file the graph was extracted from
    listed: set[str] = field(default_factory=set)  # κ of the entities the extractor listed (named in the text)

    def mentioned(self) -> list[AnchorRef]:
        """The anchors the memory mentions: all but those it only speaks to.

        The person a dialogue act is addressed to ("Thanks!" to the other speaker) takes part in the
        act but is not mentioned by the turn: unless the text names her (the extractor lists her), she
        gets no ``mr:mentionedIn`` from it, so a turn of thanks does not count as a row about her
        (lexicon.DIALOGUE_ACTS).
        """
        spoken_to = {a.anchor.key for f in self.frames if f.predicate in DIALOGUE_ACTS
                     for a in f.arms if a.role == ADDRESSEE_ROLE}
        spoken_to -= {a.anchor.key for f in self.frames for a in f.arms
                      if f.predicate not in DIALOGUE_ACTS or a.role != ADDRESSEE_ROLE} | self.listed
        return [a for a in self.anchors if a.key not in spoken_to]

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "kind": self.kind,
            "anchors": [{"iri": a.iri, "name": a.name, "key": a.key, "type": a.type} for a in self.anchors],
            "frames": len(self.frames),
            "rejected": self.rejected,
            "renamed": self.renamed,
            "missing": self.missing,
            "repaired": self.repaired,
        }
