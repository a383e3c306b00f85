"""Decision files: ``graph/decisions/<YYYY>/<MM>/<run-id>.ttl``, written once, never edited.

One file per Dream run (and one per rejected review). It holds:

- ``<alias> owl:sameAs <representative>`` for each confirmed merge: the only
  statement the graph index acts on (its sameAs closure);
- a ``prov:Activity`` per verdict (``mr:MergeDecision`` or ``mr:Rejection``):
  both anchors and names, type, cosine, records behind each, verdict, rationale,
  model, time and the negative-cache key;
- the run itself (``mr:DreamRun``): round, the commit whose graph it examined
  (``mr:frontierCommit``: every semantic graph file in that commit is covered),
  the anchors it used as sources, and its counts.

Everything a later run needs (the negative cache, the frontier, the anchors
already used as sources) is read back from these files, so a clone continues
where the last run stopped, and two clones never edit the same file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from memrepo.graph.model import DECISIONS_FOLDER, NS
from memrepo.graph.rdf import OWL, PROV, TurtleError, iri, literal, parse_turtle, turtle

if TYPE_CHECKING:
    from memrepo.store.git import Snapshot

RUN_PREFIX = "urn:memrepo:dream:"
COUNTS = ("considered", "verified", "merged", "rejected", "invalid", "skipped_by_cap", "cached", "pending")


def cache_key(name_a: str, name_b: str, type_: str) -> str:
    """The negative-cache key: a hash of the case-folded pair in sorted order, with the type."""
    x, y = sorted([name_a.casefold().strip(), name_b.casefold().strip()])
    return hashlib.sha256(f"{type_}\x00{x}\x00{y}".encode("utf-8")).hexdigest()[:32]


@dataclass
class Decision:
    """One verdict on one pair: a merge (``alias`` -> ``representative``) or an explicit rejection."""

    kind: str  # merge | reject
    first: str
    first_name: str
    second: str
    second_name: str
    type: str
    cosine: float
    verdict: str  # same | different | rejected in review
    rationale: str
    model: str
    time: str
    first_records: int = 0
    second_records: int = 0
    alias: str | None = None
    representative: str | None = None

    @property
    def key(self) -> str:
        return cache_key(self.first_name, self.second_name, self.type)

    @property
    def alias_name(self) -> str:
        return self.first_name if self.alias == self.first else self.second_name

    @property
    def representative_name(self) -> str:
        return self.first_name if self.representative == self.first else self.second_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "first": self.first, "first_name": self.first_name, "second": self.second,
            "second_name": self.second_name, "type": self.type, "cosine": self.cosine, "verdict": self.verdict,
            "rationale": self.rationale, "model": self.model, "time": self.time,
            "first_records": self.first_records, "second_records": self.second_records,
            "alias": self.alias, "representative": self.representative, "key": self.key,
        }


@dataclass
class DreamRun:
    """One run's decision file."""

    run_id: str
    round: str  # intermediate | final | review
    frontier_commit: str | None
    model: str
    time: str
    sources: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    review_of: str | None = None  # for a rejected review: the run it rejected

    @property
    def iri(self) -> str:
        return RUN_PREFIX + self.run_id

    @property
    def path(self) -> str:
        return f"{DECISIONS_FOLDER}/{self.time[:4]}/{self.time[5:7]}/{self.run_id}.ttl"

    @property
    def merges(self) -> list[Decision]:
        return [d for d in self.decisions if d.kind == "merge"]

    @property
    def rejections(self) -> list[Decision]:
        return [d for d in self.decisions if d.kind == "reject"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "round": self.round, "frontier_commit": self.frontier_commit,
            "model": self.model, "time": self.time, "sources": self.sources, "counts": self.counts,
            "decisions": [d.to_dict() for d in self.decisions], "review_of": self.review_of, "path": self.path,
        }


def _mr(local: str) -> str:
    return f"mr:{local}"


def run_triples(run: DreamRun) -> list[tuple[str, str, str]]:
    """The triples of a run's decision file, as Turtle terms."""
    r = iri(run.iri)
    # rdfs:label first in each block (turtle() orders it after "a"): a pull request on a Git host shows the
    # names a reviewer knows before the ids.
    n, j = len(run.merges), len(run.rejections)
    label = (f"rejection in review of Dream run {run.review_of}" if run.review_of else f"Dream run {run.run_id}"
             ) + f" ({run.round}): {n} merge{'s' if n != 1 else ''}, {j} rejection{'s' if j != 1 else ''}"
    t: list[tuple[str, str, str]] = [
        (r, "a", "mr:DreamRun"), (r, "a", "prov:Activity"), (r, "rdfs:label", literal(label)),
        (r, _mr("round"), literal(run.round)), (r, _mr("model"), literal(run.model)),
        (r, "prov:endedAtTime", literal(run.time, "dateTime")),
    ]
    if run.frontier_commit:
        t.append((r, _mr("frontierCommit"), literal(run.frontier_commit)))
    if run.review_of:
        t.append((r, _mr("reviewOf"), iri(RUN_PREFIX + run.review_of)))
    for source in run.sources:
        t.append((r, _mr("source"), iri(source)))
    for name in COUNTS:
        if name in run.counts:
            t.append((r, _mr("pairs" + "".join(w.title() for w in name.split("_"))), literal(str(run.counts[name]), "integer")))
    for d in run.decisions:
        node = iri(f"{run.iri}#{d.key[:16]}")
        said = (f'merge "{d.alias_name}" -> "{d.representative_name}"' if d.kind == "merge"
                else f'reject "{d.first_name}" / "{d.second_name}"')
        t += [
            (node, "a", "mr:MergeDecision" if d.kind == "merge" else "mr:Rejection"), (node, "a", "prov:Activity"),
            (node, "rdfs:label", literal(f"{said} ({d.type}): {d.verdict}")),
            (node, _mr("run"), r), (node, _mr("first"), iri(d.first)), (node, _mr("second"), iri(d.second)),
            (node, _mr("firstName"), literal(d.first_name)), (node, _mr("secondName"), literal(d.second_name)),
            (node, _mr("firstRecords"), literal(str(d.first_records), "integer")),
            (node, _mr("secondRecords"), literal(str(d.second_records), "integer")),
            (node, _mr("pairType"), literal(d.type)), (node, _mr("cosine"), literal(f"{d.cosine:.4f}", "decimal")),
            (node, _mr("verdict"), literal(d.verdict)), (node, _mr("rationale"), literal(d.rationale)),
            (node, _mr("model"), literal(d.model)), (node, "prov:endedAtTime", literal(d.time, "dateTime")),
            (node, _mr("cacheKey"), literal(d.key)),
        ]
        if d.kind == "merge" and d.alias and d.representative:
            t += [(node, _mr("alias"), iri(d.alias)), (node, _mr("representative"), iri(d.representative)),
                  (iri(d.alias), "owl:sameAs", iri(d.representative))]
    return t


def run_turtle(run: DreamRun) -> bytes:
    """The canonical bytes of a run's decision file (same run, same bytes)."""
    return turtle(run_triples(run))


# --- reading ----------------------------------------------------------------------------

_PARSED: dict[str, list[DreamRun]] = {}  # blob id -> runs: a decision file never changes


def parse_runs(data: bytes, path: str) -> list[DreamRun]:
    """The Dream runs (with their decisions) stated in one decision file; [] for files of other writers.

    Raises:
        TurtleError: if the file is not valid Turtle.
    """
    from memrepo.graph.rdf import RDF_TYPE
    from memrepo.graph.rdf import node as URIRef

    graph = parse_turtle(data, path)
    m = lambda local: URIRef(NS + local)  # noqa: E731

    def one(s: Any, p: Any, default: str = "") -> str:
        values = sorted(str(o) for o in graph.objects(s, p))
        return values[0] if values else default

    runs: dict[str, DreamRun] = {}
    for node in sorted(graph.subjects(URIRef(RDF_TYPE), m("DreamRun")), key=str):
        run_id = str(node)[len(RUN_PREFIX):]
        counts = {}
        for name in COUNTS:
            value = one(node, m("pairs" + "".join(w.title() for w in name.split("_"))))
            if value:
                counts[name] = int(value)
        review = one(node, m("reviewOf"))
        runs[str(node)] = DreamRun(
            run_id=run_id, round=one(node, m("round")), frontier_commit=one(node, m("frontierCommit")) or None,
            model=one(node, m("model")), time=one(node, URIRef(PROV + "endedAtTime")),
            sources=sorted(str(o) for o in graph.objects(node, m("source"))), counts=counts,
            review_of=review[len(RUN_PREFIX):] if review else None,
        )
    for kind, cls in (("merge", "MergeDecision"), ("reject", "Rejection")):
        for node in sorted(graph.subjects(URIRef(RDF_TYPE), m(cls)), key=str):
            run = runs.get(one(node, m("run")))
            if run is None:
                continue
            alias, rep = one(node, m("alias")) or None, one(node, m("representative")) or None
            if kind == "merge" and not (alias and rep and (URIRef(alias), URIRef(OWL + "sameAs"), URIRef(rep)) in graph):
                continue  # a merge decision without its sameAs statement merges nothing
            run.decisions.append(Decision(
                kind=kind, first=one(node, m("first")), first_name=one(node, m("firstName")),
                second=one(node, m("second")), second_name=one(node, m("secondName")), type=one(node, m("pairType")),
                cosine=float(one(node, m("cosine"), "0")), verdict=one(node, m("verdict")),
                rationale=one(node, m("rationale")), model=one(node, m("model")),
                time=one(node, URIRef(PROV + "endedAtTime")),
                first_records=int(one(node, m("firstRecords"), "0")), second_records=int(one(node, m("secondRecords"), "0")),
                alias=alias, representative=rep,
            ))
    return [runs[k] for k in sorted(runs)]


def runs_in(snapshot: "Snapshot", paths: Iterable[tuple[str, str]] | None = None) -> list[DreamRun]:
    """Every Dream run recorded in ``snapshot``'s decision files (or in the given (path, blob) pairs)."""
    out: list[DreamRun] = []
    for path, blob in (paths if paths is not None else snapshot.walk(DECISIONS_FOLDER)):
        if not path.endswith(".ttl"):
            continue
        if blob not in _PARSED:
            try:
                _PARSED[blob] = parse_runs(snapshot.read_blob(blob), path)
            except TurtleError:
                _PARSED[blob] = []  # reported by `memrepo doctor`
        out += _PARSED[blob]
    return out


@dataclass
class Ledger:
    """What earlier runs decided: the negative cache, pending pairs, frontier commits, used sources."""

    rejected: set[str] = field(default_factory=set)  # cache keys of explicit rejections
    pending: set[str] = field(default_factory=set)  # cache keys decided on open review branches
    frontiers: list[tuple[str, str]] = field(default_factory=list)  # (time, commit), newest first
    sources: set[str] = field(default_factory=set)

    def add(self, runs: Iterable[DreamRun], *, open_branch: bool = False) -> None:
        for run in runs:
            if run.frontier_commit:
                self.frontiers.append((run.time, run.frontier_commit))
            self.sources |= set(run.sources)
            for d in run.decisions:
                if d.kind == "reject":
                    self.rejected.add(d.key)
                elif open_branch:
                    self.pending.add(d.key)
        self.frontiers.sort(reverse=True)
