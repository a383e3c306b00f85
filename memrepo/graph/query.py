"""Reading the graph: anchors, frames, the union graph as RDF, SPARQL (what `memrepo graph ...` calls)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memrepo.errors import MemrepoError, NotFoundError
from memrepo.graph.build import open_reader
from memrepo.graph.index import AnchorInfo, FrameInfo
from memrepo.graph.model import DECISIONS_FOLDER, FRAMES_FOLDER

if TYPE_CHECKING:
    import rdflib

    from memrepo.api import MemoryRepo

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


def graph_anchor(repo: "MemoryRepo", name: str, *, rev: str | None = None, limit: int = MAX_FRAMES) -> AnchorView:
    """The anchor named ``name`` (matched by κ, then by label) with its frames.

    Raises:
        NotFoundError: if no anchor has that name.
    """
    with open_reader(repo, rev) as reader:
        found = reader.find_anchors(name)
        if not found:
            raise NotFoundError(f"no anchor named {name!r} in the graph (key {_key(name)!r})")
        info = reader.anchor(found[0])
        frames = reader.frames(anchor=info.iri, limit=limit)
        return AnchorView(info, frames)


def graph_frames(repo: "MemoryRepo", *, anchor: str | None = None, predicate: str | None = None,
                 cited: str | None = None, rev: str | None = None, limit: int | None = MAX_FRAMES) -> list[FrameInfo]:
    """Frames by incident anchor name, predicate (comma-separated family) and/or cited record id, in frame-id order.

    Raises:
        NotFoundError: if ``anchor`` names no anchor.
    """
    with open_reader(repo, rev) as reader:
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


def index_view(repo: "MemoryRepo", rev: str | None = None) -> "rdflib.Graph":
    """The union graph as the graph index holds it."""
    from memrepo.graph.rdf import to_graph

    with open_reader(repo, rev) as reader:
        return to_graph(reader.triples())


def union_graph(repo: "MemoryRepo", rev: str | None = None) -> "rdflib.Graph":
    """The RDF merge of every valid graph file at ``rev``, read from the files themselves."""
    import rdflib

    from memrepo.graph.rdf import TurtleError, bind_prefixes, parse_turtle

    snap = repo.store.snapshot(rev) if rev else repo.store.snapshot()
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


def graph_export(repo: "MemoryRepo", format: str = "ttl", *, rev: str | None = None) -> str:
    """The union graph serialized as Turtle, N-Triples or JSON-LD (triples sorted where the format allows).

    Raises:
        GraphError: for an unknown format.
    """
    fmt = EXPORT_FORMATS.get(format.lower())
    if fmt is None:
        raise GraphError(f"format: {format!r} is not one of ttl, nt, jsonld")
    graph = index_view(repo, rev)
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


def _remote_access(algebra: Any) -> str | None:
    """The first part of a translated query that would make rdflib fetch a URL, or None."""
    from rdflib.plugins.sparql.parserutils import CompValue

    todo = [algebra]
    while todo:
        node = todo.pop()
        if isinstance(node, CompValue):
            if node.name == "ServiceGraphPattern":
                term = dict.get(node, "term")
                return f"SERVICE {term.n3() if hasattr(term, 'n3') else term}"
            clauses = dict.get(node, "datasetClause")
            if clauses:
                return "FROM / FROM NAMED " + " ".join((dict.get(c, "default") or dict.get(c, "named")).n3()
                                                       for c in clauses)
            todo.extend(dict.values(node))
        elif isinstance(node, dict):
            todo.extend(node.values())
        elif isinstance(node, (list, tuple, set)):
            todo.extend(node)
    return None


def graph_sparql(repo: "MemoryRepo", query: str, *, rev: str | None = None) -> SparqlResult:
    """Run a SPARQL query over the union graph (rdflib); prefixes mr:, rdf:, rdfs:, owl:, prov:, xsd: are bound.

    The query never leaves the machine: ``SERVICE`` (which rdflib would send, with
    bindings from this graph, to any URL) and ``FROM`` / ``FROM NAMED`` (which it
    would fetch) are refused before anything runs; updates such as ``LOAD`` are not
    queries and do not parse.

    Raises:
        GraphError: if the query does not parse, asks for a remote fetch, or fails.
    """
    prepared = prepare_sparql(query)
    graph = index_view(repo, rev)
    try:
        result = graph.query(prepared)
    except Exception as exc:  # pyparsing and rdflib raise many types
        raise GraphError(f"SPARQL: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    if result.type == "ASK":
        return SparqlResult("ask", boolean=bool(result.askAnswer))
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        return SparqlResult("graph", graph=result.graph.serialize(format="nt") if result.graph is not None else "")
    variables = [str(v) for v in result.vars or []]
    rows = [{v: (None if row[i] is None else str(row[i])) for i, v in enumerate(variables)}  # type: ignore[index]
            for row in result]
    return SparqlResult("select", variables=variables, rows=rows)
