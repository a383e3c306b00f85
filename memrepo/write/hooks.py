"""Steps that run after every write that commits records: ``ctx.capabilities.after_commit``.

The steps are listed in :data:`memrepo.capabilities.AFTER_COMMIT` (graph catch-up, skills
proposal); each is ``step(ctx, record_ids) -> None``, taking the repository's context and the
ids of the records just committed. :func:`memrepo.write.commit.commit_records` runs them
after its commit, so every writer goes through them: ingestion, a typed or routed
``remember``, the CLI and the Python API alike. The records are already in Git when a
step runs (M Alg. 1 line 3, A.1 "write ordering"): a failure is logged and reported as a
warning and never undoes them; the next write (or ``memrepo index``) catches up on what
was missed.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from memrepo.capabilities import entry_name, resolve

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.graph.build import GraphSession

log = logging.getLogger("memrepo.write")


def run_after_write(ctx: "Context", record_ids: list[str]) -> list[str]:
    """Run every after-commit step of ``ctx`` after a write of ``record_ids``; the warnings of those that failed.

    The steps run even when the write added nothing new: a rerun after a crash between a record
    commit and its graph commit must still catch the graph up.
    """
    warnings: list[str] = []
    for name, entry in ctx.capabilities.after_commit.items():
        try:
            resolve(entry)(ctx, list(record_ids))
        except Exception as exc:  # fail-soft by design: the records stay committed
            message = (f"after-write step {name} ({entry_name(entry)}) failed ({type(exc).__name__}: {exc}); "
                       "records are committed")
            log.warning(message)
            warnings.append(message)
    return warnings


def graph_catch_up(ctx: "Context", record_ids: list[str]) -> None:
    """Graph extraction after each write (fail-soft, incremental; catches up on anything missed).

    A process that writes more than once with one repository open (an MCP server, a program
    using the API) keeps one :class:`memrepo.graph.build.GraphSession` for it in ``ctx.caches``:
    the anchors' label counts, the embedder and the name vectors carry over from one write to the
    next, so a write no longer reads every anchor of the graph index (the same graph files).
    """
    from memrepo.graph.build import after_write

    # The clone's write lock first, then this process's: a sync holding the write lock runs this step too,
    # so taking them in the other order deadlocks against a writer thread (memrepo/store/git.py, write_lock).
    with ctx.store.write_lock(), _lock:
        session = ctx.caches.get(SESSION_KEY)
        if session is None:
            from memrepo.graph.build import GraphSession

            session = ctx.caches[SESSION_KEY] = GraphSession()
        after_write(ctx, record_ids, session)


#: ``ctx.caches`` key of the graph session of a repository's single writes (closed with the repository).
SESSION_KEY = "graph.session"
_lock = threading.Lock()


def close_session(ctx: "Context") -> None:
    """Close the graph session ``ctx``'s writes kept (its embedding cache connection)."""
    with _lock:
        session = ctx.caches.pop(SESSION_KEY, None)
    if session is not None:
        session.close()


@contextmanager
def batched(ctx: "Context") -> Iterator["Context"]:
    """``ctx`` for a run of writes in one process (an ingest): its graph step keeps its state between them.

    The anchor registry, the embedder and the name vectors carry over from one write to the next
    (:class:`memrepo.graph.build.GraphSession`; the same graph files as without it). Any other
    graph step (a test's, a program's) is left as it is.
    """
    entry = ctx.capabilities.after_commit.get("graph")
    if entry is None or resolve(entry) is not graph_catch_up:
        yield ctx
        return
    from memrepo.graph.build import GraphSession

    session = GraphSession()
    try:
        yield ctx.with_capabilities(after_commit={**ctx.capabilities.after_commit, "graph": session})
    finally:
        session.close()


def graph_session(ctx: "Context") -> "GraphSession | None":
    """The :class:`memrepo.graph.build.GraphSession` that :func:`batched` gave ``ctx``, or None."""
    from memrepo.graph.build import GraphSession

    entry = ctx.capabilities.after_commit.get("graph")
    return entry if isinstance(entry, GraphSession) else None


def propose_skills(ctx: "Context", record_ids: list[str]) -> None:
    """Once five task sessions are pending, propose skills on a review branch (never merged; M A.5)."""
    from memrepo import records as rec
    from memrepo.dream.run import iso_time
    from memrepo.dream.skills import AUTO_PENDING, dream_skills, pending_sessions

    if not any(rec.type_of_id(i) == "procedural" for i in record_ids):
        return
    if len(pending_sessions(ctx.store, ctx.snapshot())) >= AUTO_PENDING:
        with ctx.model() as backend:
            dream_skills(ctx.store, ctx.settings, backend=backend, now=iso_time(None), author=ctx.commit_author)
