"""The provenance hypergraph (MIRIX-2.0 §2.3): anchors, n-ary frames as RDF files, and their index.

Light on import: rdflib, numpy and the extractor load only when used. The graph
index is listed with the other derived indexes in :mod:`memrepo.capabilities`.
"""

from __future__ import annotations
