"""memrepo: a memory repository for LLM agents, kept as plain files in Git."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["MemoryRepo", "Record", "Source", "MemrepoError", "__version__"]

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo
    from memrepo.errors import MemrepoError
    from memrepo.records import Record, Source


def __getattr__(name: str) -> Any:
    # Imported lazily so that `memrepo --help` does not pay for dulwich and PyYAML.
    if name == "MemoryRepo":
        from memrepo.api import MemoryRepo

        return MemoryRepo
    if name in ("Record", "Source"):
        from memrepo import records

        return getattr(records, name)
    if name == "MemrepoError":
        from memrepo.errors import MemrepoError

        return MemrepoError
    raise AttributeError(name)
