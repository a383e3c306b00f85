"""Reading the graph: anchors, frames, the union graph as RDF, SPARQL (what `memrepo graph ...` calls)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memrepo.errors import MemrepoError, NotFoundError
from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER
from memrepo.graph.reader import AnchorInfo, FrameInfo, GraphReader, open_reader

if TYPE_CHECKING:
    import rdflib

    from memrepo.context import Context

EXPORT_FORMATS = {"ttl": "turtle", "turtle": "turtle", "nt": "nt", "ntriples": "nt", "jsonld": "json-ld",
                  "json-ld": "json-ld"}
MAX_FRAMES = 240  # the relation lane's frame cap (DESIGN.md §3)


class GraphError(MemrepoError):
    """A graph request is invalid (unknown format, bad SPARQL)."""


@dataclass
class AnchorView:
    """``memrepo graph anchor NAME``: the anchor and the frames incident to it."""

    anchor: AnchorInfo
    frames: list[FrameInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.anchor.to_dict(), "frames": [f.to_dict() for f in self.frames]}


@dataclass
class SparqlResult:
    """Rows of a SELECT (variables + bindings), a boolean of an ASK, or the triples of a CONSTRUCT."""

    kind: str  # select | ask | graph
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, str | None]] = field(default_factory=list)
    boolean: bool | None = None
    graph: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "variables": self.variables, "rows": self.rows, "boolean": self.boolean,
                "graph": self.graph}


def _named_anchor(reader: GraphReader, name: str) -> AnchorInfo:
    """The anchor ``name`` names (by κ, then by label).

    Raises:
        NotFoundError: if no anchor has that name.
    """
    found = reader.find_anchors(name)
    if not found:
        raise NotFoundError(f"no anchor named {name!r} in the graph (key {_key(name)!r})")
    return reader.anchor(found[0])


def graph_anchor(ctx: "Context", name: str, *, rev: str | None = None, limit: int = MAX_FRAMES) -> AnchorView:
    """The anchor named ``name`` (matched by κ, then by label) with its frames.

    Raises:
        NotFoundError: if no anchor has that name.
    """
    with open_reader(ctx.store, ctx.settings, rev) as reader:
        info = _named_anchor(reader, name)
        frames = reader.frames(anchor=info.iri, limit=limit)
        return AnchorView(info, frames)


def graph_frames(ctx: "Context", *, anchor: str | None = None, predicate: str | None = None,
                 cited: str | None = None, rev: str | None = None, limit: int | None = MAX_FRAMES) -> list[FrameInfo]:
    """Frames by incident anchor name, predicate (comma-separated family) and/or cited record id, in frame-id order.

    Raises:
        NotFoundError: if ``anchor`` names no anchor.
    """
    with open_reader(ctx.store, ctx.settings, rev) as reader:
        anchor_iri = None
        if anchor is not None:
            found = reader.find_anchors(anchor)
            if not found:
                raise NotFoundError(f"no anchor named {anchor!r} in the graph")
            anchor_iri = found[0]
        return reader.frames(anchor=anchor_iri, predicate=predicate, cited=cited, limit=limit)


def _key(name: str) -> str:
    from memrepo.graph.kappa import kappa

    return kappa(name)


def index_view(ctx: "Context", rev: str | None = None) -> "rdflib.Graph":
    """The union graph as the graph index holds it."""
    from memrepo.graph.rdf import to_graph

    with open_reader(ctx.store, ctx.settings, rev) as reader:
        return to_graph(reader.triples())


def union_graph(ctx: "Context", rev: str | None = None) -> "rdflib.Graph":
    """The RDF merge of every valid graph file at ``rev``, read from the files themselves."""
    import rdflib

    from memrepo.graph.rdf import TurtleError, bind_prefixes, parse_turtle

    snap = ctx.store.snapshot(rev)
    graph = bind_prefixes(rdflib.Graph())
    for folder in (FRAMES_FOLDER, DECISIONS_FOLDER):
        for path, blob in snap.walk(folder):
            if not path.endswith(".ttl"):
                continue
            try:
                graph += parse_turtle(snap.read_blob(blob), path)
            except TurtleError:
                continue  # reported by `memrepo doctor`
    return graph


def graph_export(ctx: "Context", format: str = "ttl", *, rev: str | None = None) -> str:
    """The union graph serialized as Turtle, N-Triples or JSON-LD (triples sorted where the format allows).

    Raises:
        GraphError: for an unknown format.
    """
    fmt = EXPORT_FORMATS.get(format.lower())
    if fmt is None:
        raise GraphError(f"format: {format!r} is not one of ttl, nt, jsonld")
    graph = index_view(ctx, rev)
    if fmt == "nt":
        lines = sorted(line for line in graph.serialize(format="nt").splitlines() if line.strip())
        return "\n".join(lines) + ("\n" if lines else "")
    if fmt == "turtle":
        from memrepo.graph.rdf import turtle

        return turtle((s.n3(graph.namespace_manager), "a" if str(p) == _RDF_TYPE else p.n3(graph.namespace_manager),
                       o.n3(graph.namespace_manager)) for s, p, o in graph).decode("utf-8")
    return graph.serialize(format="json-ld", sort_keys=True, indent=1)


_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def prepare_sparql(query: str) -> Any:
    """``query`` parsed and translated by rdflib, with memrepo's prefixes bound.

    Raises:
        GraphError: if it does not parse, or if it would fetch anything (SERVICE, FROM, FROM NAMED).
    """
    from rdflib.plugins.sparql import prepareQuery

    from memrepo.graph.rdf import PREFIXES

    try:
        prepared = prepareQuery(query, initNs={name: base for name, base in PREFIXES})
    except Exception as exc:  # pyparsing and rdflib raise many types
        raise GraphError(f"SPARQL: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    remote = _remote_access(prepared.algebra)
    if remote is not None:
        raise GraphError(f"SPARQL: {remote} is refused: a query runs over this repository's graph only and "
                         "never fetches anything")
    return prepared


def _clause_iri(clause: Any) -> Any:
    """The IRI of a ``FROM`` / ``FROM NAMED`` clause (``dict.get``: a CompValue's own ``get`` resolves variables)."""
    return dict.get(clause, "default") or dict.get(clause, "named")


def _remote_access(algebra: Any) -> str | None:
    """The first part of a translated query that would make rdflib fetch a URL, or None."""
    from rdflib.plugins.sparql.parserutils import CompValue

    todo = [algebra]
    while todo:
        node = todo.pop()
        if isinstance(node, CompValue):
            if node.name == "ServiceGraphPattern":
                term: Any = dict.get(node, "term")
                return f"SERVICE {term.n3() if hasattr(term, 'n3') else term}"
            clauses = dict.get(node, "datasetClause")
            if clauses:
                return "FROM / FROM NAMED " + " ".join(_clause_iri(c).n3() for c in clauses)
            todo.extend(dict.values(node))
        elif isinstance(node, dict):
            todo.extend(node.values())
        elif isinstance(node, (list, tuple, set)):
            todo.extend(node)
    return None


SPARQL_TIMEOUT = 10.0  # s: a query's evaluation stops after this long (`graph sparql --timeout`)
SPARQL_MAX_ROWS = 10_000  # rows of a SELECT, triples of a CONSTRUCT/DESCRIBE (`graph sparql --max-rows`)
_CHECK_EVERY = 256  # triples a lookup yields between two looks at the clock


class SparqlLimitError(GraphError):
    """A SPARQL query ran past its time limit or its result-size limit."""


def _bounded(graph: "rdflib.Graph", deadline: float, timeout: float) -> "rdflib.Graph":
    """``graph`` (the same store) whose triple lookups raise :class:`SparqlLimitError` once ``deadline`` passed.

    rdflib evaluates a query in this process, in pure Python, and every basic graph pattern and
    property path goes through ``triples()``: checking the clock there bounds a cross product or a
    path search, which never return to the caller until they are done, as well as a long result.
    """
    import time

    import rdflib

    class Bounded(rdflib.Graph):
        def triples(self, triple: Any) -> Any:
            if time.monotonic() > deadline:
                raise SparqlLimitError(_over_time(timeout))
            for n, found in enumerate(super().triples(triple), 1):
                if n % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                    raise SparqlLimitError(_over_time(timeout))
                yield found

    return Bounded(store=graph.store, identifier=graph.identifier, namespace_manager=graph.namespace_manager)


def _over_time(timeout: float) -> str:
    return (f"SPARQL: the query ran past its time limit of {timeout:g} s and was stopped: narrow its patterns, "
            "or give a longer one with --timeout")


def _too_many(max_rows: int, what: str) -> str:
    return (f"SPARQL: the result has more than {max_rows:,} {what} (the result-size limit): add a LIMIT, or give a "
            "larger one with --max-rows")


def graph_sparql(ctx: "Context", query: str, *, rev: str | None = None, timeout: float = SPARQL_TIMEOUT,
                 max_rows: int = SPARQL_MAX_ROWS) -> SparqlResult:
    """Run a SPARQL query over the union graph (rdflib); prefixes mr:, rdf:, rdfs:, owl:, prov:, xsd: are bound.

    The query never leaves the machine: ``SERVICE`` (which rdflib would send, with
    bindings from this graph, to any URL) and ``FROM`` / ``FROM NAMED`` (which it
    would fetch) are refused before anything runs; updates such as ``LOAD`` are not
    queries and do not parse. Its evaluation stops after ``timeout`` seconds (the
    graph's loading is not counted), and a result of more than ``max_rows`` rows (or
    triples) is refused rather than returned.

    Raises:
        SparqlLimitError: the query ran past ``timeout`` or its result passed ``max_rows``.
        GraphError: if the query does not parse, asks for a remote fetch, or fails.
    """
    import itertools
    import time

    if timeout <= 0 or max_rows <= 0:
        raise GraphError("SPARQL: the time limit and the result-size limit must be positive")
    prepared = prepare_sparql(query)
    graph = _bounded(index_view(ctx, rev), time.monotonic() + timeout, timeout)
    try:
        result = graph.query(prepared)
        if result.type == "ASK":
            return SparqlResult("ask", boolean=bool(result.askAnswer))
        if result.type in ("CONSTRUCT", "DESCRIBE"):
            if result.graph is not None and len(result.graph) > max_rows:
                raise SparqlLimitError(_too_many(max_rows, "triples"))
            return SparqlResult("graph", graph=result.graph.serialize(format="nt") if result.graph is not None else "")
        variables = [str(v) for v in result.vars or []]
        found = list(itertools.islice(result, max_rows + 1))  # the bindings are produced as they are taken
    except GraphError:
        raise
    except Exception as exc:  # pyparsing and rdflib raise many types
        raise GraphError(f"SPARQL: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    if len(found) > max_rows:
        raise SparqlLimitError(_too_many(max_rows, "rows"))
    rows = [{v: (None if row[i] is None else str(row[i])) for i, v in enumerate(variables)}  # type: ignore[index]
            for row in found]
    return SparqlResult("select", variables=variables, rows=rows)


# --- a readable picture of the graph (the viewer's Graph page) ----------------------------


@dataclass
class AnchorBrief:
    """An anchor in a listing: canonical name, type, how many records mention it, how many frames bind it."""

    iri: str
    name: str
    type: str
    records: int
    frames: int

    def to_dict(self) -> dict[str, Any]:
        return {"iri": self.iri, "name": self.name, "type": self.type, "records": self.records, "frames": self.frames}


@dataclass
class Neighbour:
    """An anchor that shares frames with another: how many, and the first few of them (frame-id order)."""

    anchor: AnchorBrief
    shared: int
    frames: list[FrameInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.anchor.to_dict(), "shared": self.shared, "frames": [f.to_dict() for f in self.frames]}


@dataclass
class Neighbourhood:
    """One page of an anchor's neighbours, strongest first, and its frames that bind no other anchor."""

    anchor: AnchorInfo
    neighbours: list[Neighbour]
    total: int  # neighbours in all (the page is ``neighbours``)
    offset: int
    alone: list[FrameInfo] = field(default_factory=list)  # first frames binding this anchor only
    alone_total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {**self.anchor.to_dict(), "neighbours": [n.to_dict() for n in self.neighbours], "total": self.total,
                "offset": self.offset, "alone": [f.to_dict() for f in self.alone], "alone_total": self.alone_total}


def _briefs(reader: GraphReader, reps: list[str]) -> dict[str, AnchorBrief]:
    """AnchorBrief of each representative (its one name and type; counts over its sameAs class)."""
    out = {}
    reader.infos(reps)
    for rep in reps:
        info = reader.info(rep)
        records, frames = reader.class_counts(rep)
        out[rep] = AnchorBrief(rep, info.name if info else rep, info.type if info else "concept", records, frames)
    return out


def graph_hubs(ctx: "Context", *, limit: int = 12, rev: str | None = None) -> list[AnchorBrief]:
    """The ``limit`` most connected anchors: most records mentioning them first, then most frames, then name."""
    with open_reader(ctx.store, ctx.settings, rev) as reader:
        reps: list[str] = []
        for anchor in reader.most_mentioned(limit * 4):
            rep = reader.representative(anchor)
            if rep not in reps:
                reps.append(rep)
        briefs = _briefs(reader, reps)
    ranked = sorted(briefs.values(), key=lambda b: (-b.records, -b.frames, b.name.casefold()))
    return ranked[:limit]


def graph_neighbours(ctx: "Context", name: str, *, offset: int = 0, limit: int = 8, frames: int = 2,
                     rev: str | None = None) -> Neighbourhood:
    """The anchor called ``name`` and one page of its neighbours, ranked by the frames they share with it.

    Each neighbour comes with its first ``frames`` shared frames; the anchor's frames that bind
    no other anchor are listed apart (their first ``frames`` * 2).

    Raises:
        NotFoundError: if no anchor has that name.
    """
    with open_reader(ctx.store, ctx.settings, rev) as reader:
        info = _named_anchor(reader, name)
        shared = reader.shared_frames(info.iri)
        reader.infos(shared)
        ranked = sorted(shared, key=lambda rep: (-len(shared[rep]), reader.label(rep).casefold(), rep))
        page = ranked[offset:offset + limit]
        briefs = _briefs(reader, page)
        neighbours = [Neighbour(briefs[rep], len(shared[rep]),
                                [reader.frame(f) for f in sorted(shared[rep])[:frames]]) for rep in page]
        with_others = set().union(*shared.values()) if shared else set()
        alone = [f for f in reader.frame_ids(anchor=info.iri) if f not in with_others]
        return Neighbourhood(info, neighbours, len(ranked), offset,
                             [reader.frame(f) for f in alone[:frames * 2]], len(alone))
