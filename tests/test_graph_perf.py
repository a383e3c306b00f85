"""Write and catch-up cost of the graph step (issue 18): same outputs, less work."""

from __future__ import annotations

import rdflib
import pytest

from memrepo.graph.model import AnchorRef, Arm, Frame, FrameLiteral, MemoryGraph
from memrepo.graph.rdf import TurtleError, _canonical_triples, memory_turtle, parse_turtle


def _tricky_graph() -> MemoryGraph:
    a = AnchorRef.make("mem", 'Café "Zé"\\ramen', "location")
    b = AnchorRef.make("mem", "Mia", "person")
    c = AnchorRef.make("mem", "日本 trip\twith tabs", "event")
    frame = Frame(iri="urn:memrepo:frame:ep-2023-05-02-aaaa#f1", predicate="visit",
                  arms=(Arm("agent", b), Arm("place", a), Arm("topic", c)),
                  literals=(FrameLiteral("detail", 'said "bye"\nthen left\r\\ ok'), FrameLiteral("date", "2023-05-02"),
                            FrameLiteral("count", "3")),
                  kind="episodic", mention_time="2023-05-02T14:03:00+09:00", event_time="2023-05",
                  status="done", citations=("ep-2023-05-01-bbbb",))
    return MemoryGraph("ep-2023-05-02-aaaa", "episodic", anchors=[a, b, c], frames=[frame],
                       record_blob="5ef4498cfda4ee15b8a51846fb7bb8744ec6c480")


def _rdflib(data: bytes) -> rdflib.Graph:
    graph = rdflib.Graph()
    graph.parse(data=data.decode(), format="turtle", publicID="file:///x.ttl")
    return graph


def test_graph_files_memrepo_writes_read_as_rdflib_reads_them_without_its_parser():
    data = memory_turtle(_tricky_graph())
    fast = _canonical_triples(data.decode())
    assert fast is not None  # the canonical layout is read directly
    expected = sorted(_rdflib(data))
    assert sorted(fast) == expected
    assert [[t.n3() for t in triple] for triple in sorted(fast)] == [[t.n3() for t in triple] for triple in expected]
    assert sorted(parse_turtle(data, "x.ttl")) == expected


@pytest.mark.parametrize("edit", [
    lambda t: t.replace(" ;\n    ", " ;\n  ", 1),  # hand-indented
    lambda t: t + "# a comment\n",
    lambda t: t.replace("@prefix mr:", "@prefix  mr:", 1),
    lambda t: t.replace('"episodic"', "'episodic'", 1),
    lambda t: t.replace('"episodic"', '"épisodic"@fr', 1),
])
def test_any_other_layout_is_read_by_rdflib_with_the_same_result(edit):
    data = edit(memory_turtle(_tricky_graph()).decode()).encode()
    assert _canonical_triples(data.decode()) is None
    assert sorted(parse_turtle(data, "x.ttl")) == sorted(_rdflib(data))


def test_invalid_turtle_is_still_reported_with_its_line():
    data = memory_turtle(_tricky_graph()).replace(b" ;\n", b" ;;\n", 1).replace(b'"Mia"', b'"Mia', 1)
    with pytest.raises(TurtleError) as err:
        parse_turtle(data, "x.ttl")
    assert err.value.line is not None
