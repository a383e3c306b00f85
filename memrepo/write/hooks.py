"""Steps that run after every write that commits records (graph indexing registers here).

Each function in :data:`AFTER_INGEST` takes the repository and the ids of the
records just committed. :meth:`memrepo.api.MemoryRepo.add` runs them after its
commit, so every writer goes through them: ingestion, a typed or routed
``remember``, the CLI and the Python API alike. The records are already in Git
when a step runs (M Alg. 1 line 3, A.1 "write ordering"): a failure is logged
and reported as a warning and never undoes them; the next write (or
``memrepo index``) catches up on what was missed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo

log = logging.getLogger("memrepo.write")

#: The after-write steps (the name is older than the rule that every write runs them).
AFTER_INGEST: list[Callable[["MemoryRepo", list[str]], None]] = []


def run_after_write(repo: "MemoryRepo", record_ids: list[str]) -> list[str]:
    """Run every registered step after a write of ``record_ids``; returns the warnings of those that failed.

    The steps run even when the write added nothing new: a rerun after a crash between a record
    commit and its graph commit must still catch the graph up.
    """
    warnings: list[str] = []
    for step in list(AFTER_INGEST):
        try:
            step(repo, list(record_ids))
        except Exception as exc:  # fail-soft by design: the records stay committed
            name = getattr(step, "__qualname__", repr(step))
            message = f"after-write step {name} failed ({type(exc).__name__}: {exc}); records are committed"
            log.warning(message)
            warnings.append(message)
    return warnings


run_after_ingest = run_after_write  # the name ingestion used
