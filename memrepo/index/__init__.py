"""Derived indexes (DESIGN.md §5): Tantivy full text, usearch vectors, the embedding cache.

Nothing here is tracked in Git; everything is rebuilt from the tracked files.
Importing this package is cheap: tantivy, usearch and onnxruntime load on first use.
"""

from memrepo.index.base import (
    Change,
    DerivedIndex,
    Indexes,
    IndexState,
    UpdateContext,
    UpdateReport,
    registered,
    update_indexes,
)

__all__ = [
    "Change",
    "DerivedIndex",
    "Indexes",
    "IndexState",
    "UpdateContext",
    "UpdateReport",
    "registered",
    "update_indexes",
]
