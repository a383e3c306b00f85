"""Frames and anchors as RDF (DESIGN.md §2): deterministic Turtle out, rows for the graph index in.

A frame is an ``rdf:Statement`` (``rdf:subject``/``rdf:predicate``/``rdf:object``
for its two principal arms) extended to n arity with one ``mr:arm`` node per
role; literals hang off the frame; citations are ``prov:wasDerivedFrom``. There
are no blank nodes: arm and literal nodes are ``<frame>#arm-<role>`` and
``<frame>#lit-<key>``. The writer emits canonical Turtle itself (subjects,
predicates and objects sorted) so that the same memory always gives the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from memrepo.graph.model import (
    MEMORY_PREFIX,
    NS,
    XSD,
    Frame,
    MemoryGraph,
    literal_datatype,
    memory_iri,
)

if TYPE_CHECKING:
    import rdflib

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
PROV = "http://www.w3.org/ns/prov#"
PREFIXES = (("mr", NS), ("owl", OWL), ("prov", PROV), ("rdf", RDF), ("rdfs", RDFS), ("xsd", XSD))
PRED_PREFIX = NS + "pred-"
_PREDICATE_ORDER = [RDF + "type", RDFS + "label"]

# Principal-arm preference: the agent-like role is rdf:subject.
AGENT_ROLES = ("agent", "owner", "buyer", "person", "subject", "experiencer", "traveler", "creator", "author",
               "worker", "student", "attendee", "fan", "instance", "speaker", "adopter", "giver", "recipient")


def _escape(text: str) -> str:
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t"))


@lru_cache(maxsize=65536)  # anchors and predicates repeat in every file that mentions them
def iri(value: str) -> str:
    for prefix, base in PREFIXES:
        if value.startswith(base):
            local = value[len(base):]
            if local and all(c.isalnum() or c in "-_" for c in local) and local[0].isalpha():
                return f"{prefix}:{local}"
    return f"<{value}>"


def literal(value: str, datatype: str | None = None) -> str:
    text = f'"{_escape(value)}"'
    return f"{text}^^xsd:{datatype}" if datatype else text


def _time_literal(value: str) -> str:
    dt = literal_datatype("date", value)
    return literal(value, dt if dt in ("date", "dateTime", "gYearMonth", "gYear") else None)


def _numbered_iris(frame_iri: str, kind: str, items: list[tuple[str, str]]) -> list[str]:
    """``<frame>#<kind>-<key>`` for each (key, tie-breaker) item, numbered by sorted tie-breaker when a key repeats."""
    keys = [key for key, _ in items]
    out = []
    for key, tie in items:
        if keys.count(key) == 1:
            out.append(f"{frame_iri}#{kind}-{key}")
        else:
            same = sorted(t for k, t in items if k == key)
            out.append(f"{frame_iri}#{kind}-{key}-{same.index(tie) + 1}")
    return out


def arm_iris(frame: Frame) -> list[str]:
    """IRIs of a frame's arm nodes: ``#arm-<role>``, numbered by anchor key when a role repeats (σ decides)."""
    return _numbered_iris(frame.iri, "arm", [(a.role, a.anchor.key) for a in frame.arms])


def literal_iris(frame: Frame) -> list[str]:
    return _numbered_iris(frame.iri, "lit", [(lit.key, lit.value) for lit in frame.literals])


def principal_arms(frame: Frame) -> tuple[int, int]:
    """Indexes of the arms that become rdf:subject and rdf:object."""
    first = next((i for i, a in enumerate(frame.arms) if a.role in AGENT_ROLES), 0)
    second = next(i for i in range(len(frame.arms)) if i != first)
    return first, second


def memory_triples(graph: MemoryGraph) -> list[tuple[str, str, str]]:
    """The triples of one memory's graph file, as Turtle terms."""
    mem = iri(memory_iri(graph.memory_id))
    t: list[tuple[str, str, str]] = [(mem, "a", "prov:Entity"), (mem, "mr:recordType", literal(graph.kind))]
    if graph.record_blob:  # the content the file follows: a record edited later no longer matches (re-extracted)
        t.append((mem, "mr:recordBlob", literal(graph.record_blob)))
    mentioned = {a.key for a in graph.mentioned()}  # not the person a dialogue act only speaks to
    for anchor in graph.anchors:
        a = iri(anchor.iri)
        t += [(a, "a", "mr:Anchor"), (a, "rdfs:label", literal(anchor.name)), (a, "mr:key", literal(anchor.key)),
              (a, "mr:entityType", literal(anchor.type))]
        if anchor.key in mentioned:
            t.append((a, "mr:mentionedIn", mem))
    for frame in graph.frames:
        f = iri(frame.iri)
        s, o = principal_arms(frame)
        t += [(f, "a", "rdf:Statement"), (f, "a", "mr:Frame"),
              (f, "rdf:subject", iri(frame.arms[s].anchor.iri)),
              (f, "rdf:predicate", iri(PRED_PREFIX + frame.predicate)),
              (f, "rdf:object", iri(frame.arms[o].anchor.iri)),
              (f, "mr:kind", literal(frame.kind)),
              (f, "mr:mentionTime", _time_literal(frame.mention_time))]
        if frame.event_time:
            t.append((f, "mr:eventTime", _time_literal(frame.event_time)))
        if frame.status:
            t.append((f, "mr:status", literal(frame.status)))
        for cited in frame.citations:
            t.append((f, "prov:wasDerivedFrom", iri(memory_iri(cited))))
        for arm, node in zip(frame.arms, arm_iris(frame)):
            n = iri(node)
            t += [(f, "mr:arm", n), (n, "mr:role", literal(arm.role)), (n, "mr:anchor", iri(arm.anchor.iri))]
        for lit, node in zip(frame.literals, literal_iris(frame)):
            n = iri(node)
            t += [(f, "mr:literal", n), (n, "mr:key", literal(lit.key)), (n, "mr:value", literal(lit.value, lit.datatype))]
    return t


def turtle(triples: Iterable[tuple[str, str, str]]) -> bytes:
    """Canonical Turtle for triples given as Turtle terms: prefixes, then subjects, predicates, objects sorted."""
    by_subject: dict[str, dict[str, set[str]]] = {}
    for s, p, o in triples:
        by_subject.setdefault(s, {}).setdefault(p, set()).add(o)
    lines = [f"@prefix {name}: <{base}> ." for name, base in PREFIXES]
    order = {"a": 0, "rdfs:label": 1}
    for s in sorted(by_subject, key=lambda x: x.strip("<>")):
        preds = by_subject[s]
        lines.append("")
        keys = sorted(preds, key=lambda p: (order.get(p, 2), p))
        for i, p in enumerate(keys):
            objs = " , ".join(sorted(preds[p]))
            head = f"{s} " if i == 0 else "    "
            end = " ." if i == len(keys) - 1 else " ;"
            lines.append(f"{head}{p} {objs}{end}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def memory_turtle(graph: MemoryGraph) -> bytes:
    """The bytes of ``graph/frames/<YYYY>/<MM>/<memory-id>.ttl`` for one memory."""
    return turtle(memory_triples(graph))


_RECORD_BLOB_RE = re.compile(rb'mr:recordBlob "([0-9a-f]{40})"')


def recorded_blob(data: bytes) -> str | None:
    """The record blob id a graph file says it was extracted from (None: a file written before memrepo kept it)."""
    m = _RECORD_BLOB_RE.search(data)
    return m.group(1).decode() if m else None


# --- reading ---------------------------------------------------------------------------


class TurtleError(ValueError):
    """A graph file is not valid Turtle; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


_PREFIX_LINES = [f"@prefix {name}: <{base}> ." for name, base in PREFIXES]
_BASES = dict(PREFIXES)
_TERM_RE = re.compile(
    r'<([A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&\'()*+,;=%]*)>'  # an absolute IRI, nothing to unescape
    r'|(mr|owl|prov|rdf|rdfs|xsd):([A-Za-z][A-Za-z0-9_-]*)(?![A-Za-z0-9_.:-])'  # a prefixed name as iri() writes it
    r'|"((?:[^"\\\n\r]|\\["\\nrt])*)"(?:\^\^xsd:([A-Za-z]+))?'  # a literal as literal() writes it
    r'|(a)(?= )'
)
_SEPARATORS = {" , ": ",", " ;": ";", " .": "."}  # the last two end a line
_UNESCAPE_RE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}


def _canonical_triples(text: str) -> "list[tuple] | None":
    """The triples of a file in the canonical layout :func:`turtle` writes, as rdflib terms; None for any other
    layout (the caller then lets rdflib's Turtle parser read it, so the result is the same either way)."""
    from rdflib import Literal, URIRef

    lines = text.split("\n")
    if lines[: len(_PREFIX_LINES)] != _PREFIX_LINES or lines[-1] != "":
        return None
    out: list[tuple] = []
    subject = None
    terms: list[Any]
    for line in lines[len(_PREFIX_LINES): -1]:
        if not line:
            if subject is not None:
                return None  # a blank line inside a subject's block
            continue
        if line.startswith("    "):
            if subject is None:
                return None
            pos, terms = 4, [subject]
        else:
            if subject is not None:
                return None
            pos, terms = 0, []
        end = None
        while end is None:
            m = _TERM_RE.match(line, pos)
            if m is None:
                return None
            if m.group(1) is not None:
                terms.append(URIRef(m.group(1)))
            elif m.group(2) is not None:
                terms.append(URIRef(_BASES[m.group(2)] + m.group(3)))
            elif m.group(4) is not None:
                value = _UNESCAPE_RE.sub(lambda e: _UNESCAPED[e.group(1)], m.group(4))
                terms.append(Literal(value, datatype=URIRef(XSD + m.group(5))) if m.group(5) else Literal(value))
            else:
                if len(terms) != 1:
                    return None  # "a" is only a predicate
                terms.append(URIRef(RDF + "type"))
            pos = m.end()
            if len(terms) == 1:
                if line[pos:pos + 1] != " ":
                    return None
                pos += 1
                continue
            if len(terms) == 2:
                if line[pos:pos + 1] != " ":
                    return None
                pos += 1
                continue
            for sep, kind in _SEPARATORS.items():
                if line.startswith(sep, pos):
                    break
            else:
                return None
            pos += len(sep)
            if isinstance(terms[0], Literal) or isinstance(terms[1], Literal):
                return None
            out.append((terms[0], terms[1], terms[-1]))
            if kind == ",":
                terms.pop()
            else:
                if pos != len(line):
                    return None
                end = kind
        subject = terms[0] if end == ";" else None
    if subject is not None:
        return None
    return out


def node(iri_text: str) -> "rdflib.URIRef":
    """The rdflib node of a full IRI, for queries on a parsed graph outside graph/ (rdflib stays here)."""
    from rdflib import URIRef

    return URIRef(iri_text)


RDF_TYPE = RDF + "type"


def parse_turtle(data: bytes, path: str) -> "rdflib.Graph":
    """Parse one graph file.

    A file in the canonical layout :func:`turtle` writes (what memrepo commits) is read
    directly, about ten times faster than rdflib's Turtle parser; any other file is read
    by rdflib.

    Raises:
        TurtleError: with the line of the problem when rdflib reports it.
    """
    import rdflib

    graph = rdflib.Graph()
    try:
        canonical = _canonical_triples(data.decode("utf-8"))
    except UnicodeDecodeError:
        canonical = None
    if canonical is not None:
        for triple in canonical:
            graph.add(triple)
        return graph
    try:
        graph.parse(data=data.decode("utf-8"), format="turtle", publicID=f"file:///{path}")
    except UnicodeDecodeError as exc:
        raise TurtleError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except Exception as exc:  # rdflib raises BadSyntax and others
        line = getattr(exc, "lines", None)
        message = str(exc).splitlines()
        text = next((m for m in message if "Bad syntax" in m), message[0] if message else type(exc).__name__)
        text = re.sub(r"\s*at \^ in:?\s*$", "", text.strip())
        raise TurtleError(text, (line + 1) if isinstance(line, int) else None) from exc
    for s, p, o in graph:
        if isinstance(s, rdflib.BNode) or isinstance(o, rdflib.BNode):
            raise TurtleError("blank nodes are not allowed in memrepo graph files (give every node an IRI)")
    return graph


@dataclass
class FileRows:
    """One graph file, as rows of the graph index. Every triple lands in exactly one place."""

    anchor_facts: list[tuple[str, str, str, str]] = field(default_factory=list)  # anchor, prop, value, n3
    frame_facts: list[tuple[str, str, str, str]] = field(default_factory=list)  # frame, prop, value, n3
    arms: list[tuple[str, str, str, str]] = field(default_factory=list)  # frame, arm, role, anchor
    literals: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # frame, lit, key, value, n3
    citations: list[tuple[str, str]] = field(default_factory=list)  # frame, memory id
    same_as: list[tuple[str, str]] = field(default_factory=list)  # alias, representative
    other: list[tuple[str, str, str]] = field(default_factory=list)  # s, p, o as N3


ANCHOR_PROPS = {RDFS + "label": "label", NS + "key": "key", NS + "entityType": "entityType",
                NS + "mentionedIn": "mentionedIn", RDF + "type": "type"}
FRAME_PROPS = {RDF + "type": "type", RDF + "subject": "subject", RDF + "predicate": "predicate",
               RDF + "object": "object", NS + "kind": "kind", NS + "eventTime": "eventTime",
               NS + "mentionTime": "mentionTime", NS + "status": "status"}


def _value(term: "rdflib.term.Node", prop: str = "") -> str:
    text = str(term)
    if prop == "predicate" and text.startswith(PRED_PREFIX):
        return text[len(PRED_PREFIX):]
    return text


def _plain(term: "rdflib.term.Node") -> bool:
    from rdflib import Literal

    return isinstance(term, Literal) and term.datatype is None and term.language is None


def rows(graph: "rdflib.Graph") -> FileRows:
    """Sort the triples of one parsed file into index rows (anchors, frames, arms, literals, citations, sameAs)."""
    return _rows_of_triples(list(graph))


def to_graph(triples: Iterable[tuple[str, str, str]]) -> "rdflib.Graph":
    """An rdflib graph from N3 terms (used to rebuild the graph index's view)."""
    import rdflib
    from rdflib.util import from_n3

    graph = rdflib.Graph()
    for prefix, base in PREFIXES:
        graph.bind(prefix, base)
    for s, p, o in triples:
        graph.add((from_n3(s), from_n3(p), from_n3(o)))  # type: ignore[arg-type]
    return graph


def bind_prefixes(graph: "rdflib.Graph") -> "rdflib.Graph":
    for prefix, base in PREFIXES:
        graph.bind(prefix, base, override=True)
    return graph


def file_rows(data: bytes, path: str) -> FileRows:
    """``rows(parse_turtle(data, path))`` (the same rows, in another order), without building an rdflib graph
    for a file in the canonical layout (what memrepo commits): its triples are sorted straight into rows.

    Raises:
        TurtleError: as :func:`parse_turtle`.
    """
    try:
        canonical = _canonical_triples(data.decode("utf-8"))
    except UnicodeDecodeError:
        canonical = None
    if canonical is None:
        return rows(parse_turtle(data, path))
    return _rows_of_triples(list(dict.fromkeys(canonical)))  # a graph holds each triple once


def _rows_of_triples(triples: list[tuple]) -> FileRows:
    """The index rows of a list of distinct rdflib triples (a graph's, or a canonical file's without a graph)."""
    from rdflib import Literal, URIRef

    spo: dict[Any, dict[Any, list[Any]]] = {}
    for s, p, o in triples:
        spo.setdefault(s, {}).setdefault(p, []).append(o)

    def objects(s: Any, p: Any) -> list[Any]:
        return spo.get(s, {}).get(p, [])

    type_, arm_p, role_p, anchor_p = URIRef(RDF_TYPE), URIRef(NS + "arm"), URIRef(NS + "role"), URIRef(NS + "anchor")
    lit_p, key_p, value_p = URIRef(NS + "literal"), URIRef(NS + "key"), URIRef(NS + "value")
    anchor_t, frame_t, same_as = URIRef(NS + "Anchor"), URIRef(NS + "Frame"), URIRef(OWL + "sameAs")
    out = FileRows()
    anchors = {s for s, p, o in triples if p == type_ and o == anchor_t}
    frames = {s for s, p, o in triples if p == type_ and o == frame_t}
    consumed: set[tuple] = set()
    arm_nodes: dict = {}
    lit_nodes: dict = {}
    for f in frames:
        for node in objects(f, arm_p):
            roles, targets = objects(node, role_p), objects(node, anchor_p)
            if len(roles) == 1 and len(targets) == 1 and isinstance(targets[0], URIRef) and node not in arm_nodes \
                    and _plain(roles[0]):
                arm_nodes[node] = f
                out.arms.append((str(f), str(node), str(roles[0]), str(targets[0])))
                consumed |= {(f, arm_p, node), (node, role_p, roles[0]), (node, anchor_p, targets[0])}
        for node in objects(f, lit_p):
            keys, values = objects(node, key_p), objects(node, value_p)
            if len(keys) == 1 and len(values) == 1 and isinstance(values[0], Literal) and node not in lit_nodes \
                    and _plain(keys[0]):
                lit_nodes[node] = f
                out.literals.append((str(f), str(node), str(keys[0]), str(values[0]), values[0].n3()))
                consumed |= {(f, lit_p, node), (node, key_p, keys[0]), (node, value_p, values[0])}
    for triple in triples:
        if triple in consumed:
            continue
        s, p, o = triple
        ps = str(p)
        if s in frames and ps == PROV + "wasDerivedFrom" and isinstance(o, URIRef) and str(o).startswith(MEMORY_PREFIX):
            out.citations.append((str(s), str(o)[len(MEMORY_PREFIX):]))
        elif s in frames and ps in FRAME_PROPS:
            out.frame_facts.append((str(s), FRAME_PROPS[ps], _value(o, FRAME_PROPS[ps]), o.n3()))
        elif s in anchors and ps in ANCHOR_PROPS:
            out.anchor_facts.append((str(s), ANCHOR_PROPS[ps], _value(o), o.n3()))
        elif p == same_as and isinstance(o, URIRef):
            out.same_as.append((str(s), str(o)))
        else:
            out.other.append((s.n3(), p.n3(), o.n3()))
    return out
