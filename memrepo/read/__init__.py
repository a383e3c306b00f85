"""The read path (MIRIX-2.0 §2.4, A.3, A.4): plan, anchor entry, two bounded lanes, fusion, answering.

The provenance index (source parts and the records citing them), which the
base lane reads for same-chunk and adjacent-turn neighbours, is listed with the
other derived indexes in :mod:`memrepo.capabilities`.
"""
