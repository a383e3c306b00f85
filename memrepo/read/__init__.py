"""The read path (MIRIX-2.0 §2.4, A.3, A.4): plan, anchor entry, two bounded lanes, fusion, answering.

Importing this package registers the provenance index (source parts and the
records citing them), which the base lane reads for same-chunk and
adjacent-turn neighbours.
"""

from memrepo.index.base import register_index

register_index("provenance", "memrepo.read.provenance:ProvenanceIndex")
