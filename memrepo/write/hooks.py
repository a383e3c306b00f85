"""Steps that run after records are committed (graph indexing registers here).

Each function in :data:`AFTER_INGEST` takes the repository and the ids of the
records just committed. The records are already in Git when it runs (M Alg. 1
line 3, A.1 "write ordering"): a failure is logged and reported as a warning and
never undoes them; the next catch-up run indexes what was missed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo

log = logging.getLogger("memrepo.write")

AFTER_INGEST: list[Callable[["MemoryRepo", list[str]], None]] = []


def run_after_ingest(repo: "MemoryRepo", record_ids: list[str]) -> list[str]:
    """Run every registered step on ``record_ids``; returns the warnings of those that failed."""
    warnings: list[str] = []
    if not record_ids:
        return warnings
    for step in list(AFTER_INGEST):
        try:
            step(repo, list(record_ids))
        except Exception as exc:  # fail-soft by design: the records stay committed
            name = getattr(step, "__qualname__", repr(step))
            message = f"after-ingest step {name} failed ({type(exc).__name__}: {exc}); records are committed"
            log.warning(message)
            warnings.append(message)
    return warnings
