"""The provenance hypergraph (MIRIX-2.0 §2.3): anchors, n-ary frames as RDF files, and their index.

Light on import: rdflib, numpy and the extractor load only when used. Importing
this package registers the graph index with :mod:`memrepo.index.base`.
"""

from __future__ import annotations

from memrepo.index.base import register_index

register_index("graph", "memrepo.graph.index:GraphIndex")
