"""What exists in memrepo, listed in one place as lazy ``"module:attr"`` entries (STYLE.md rule 11).

This module imports nothing: like RDFLib's ``plugin.py`` it only names the
modules that implement each capability, so any layer may read it and nothing
is imported until it is used. ``reindex``, ``doctor``, the Git hooks, the
viewer's index status and every read iterate over these tables, so a
capability listed here is seen by all of them in a fresh process, whatever
happened to be imported before.
"""

from __future__ import annotations

#: Every derived index (DESIGN.md §5): name -> ``"module:attr"`` of a ``DerivedIndex`` factory
#: (called with the repository's settings). Order is the order ``reindex`` builds them in.
DERIVED_INDEXES: dict[str, str] = {
    "fulltext": "memrepo.index.fulltext:FullTextIndex",
    "vectors": "memrepo.index.vectors:RecordVectorIndex",
    "graph": "memrepo.graph.index:GraphIndex",
    "provenance": "memrepo.read.provenance:ProvenanceIndex",
    "anchornames": "memrepo.graph.names:AnchorNameIndex",
}
