"""How a served clone keeps in step with its team: pull on an interval, push after writes, never force.

One :class:`Syncer` per served repository runs ``MemoryRepo.sync`` (memrepo/team/sync.py: fetch, merge,
push, retried when the push raced another) in a thread of its own, under the lock the MCP tools hold,
so a sync never runs during a write of this server. Writes are committed locally first (the tool
answers once its commit exists) and pushed in batches: the first write after a sync wakes the thread,
which waits ``push_delay`` seconds for more before it syncs. A sync that fails keeps the commits in the
clone (nothing is lost; the next sync pushes them) and is reported in ``/healthz`` and to a read that
asked for a pull.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from memrepo.errors import MemrepoError

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo
    from memrepo.mcp import MemoryService


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Syncer:
    """The sync state and worker of one served repository.

    Args:
        repo: the served repository (its clone's remote is the team's).
        service: the MCP service whose lock serializes tools and syncs.
        remote: the remote to sync with (default: the branch's, else ``origin``).
        interval: seconds between pulls (0: only after writes and when a read asks).
        push_delay: seconds a batch of writes gathers before it is pushed.
    """

    def __init__(self, repo: MemoryRepo, service: MemoryService, *, remote: str | None = None,
                 interval: float = 30.0, push_delay: float = 1.0):
        from memrepo.team.gitcli import out

        self.repo = repo
        self.service = service
        self.remote = remote
        self.interval = interval
        self.push_delay = push_delay
        self.enabled = bool(remote) or bool(out(repo.root, "remote").split())
        self.pending = 0  # writes committed here since the last sync that pushed them
        self.last: dict[str, Any] = {"at": None, "ok": None, "error": None, "fetched": 0, "pushed": 0}
        self._count = threading.Lock()  # ``pending`` is counted by the event loop and the worker
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what the server calls -----------------------------------------------------

    def start(self) -> None:
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, name=f"memrepo-sync-{self.repo.root.name}",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the worker after a last sync of the writes not pushed yet (the server is shutting down)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def written(self) -> None:
        """A write was committed: push it with the next batch."""
        with self._count:
            self.pending += 1
        self._wake.set()

    def pull(self) -> str | None:
        """Sync now, for a read that asked for the team's latest: None, or the cause it failed."""
        if not self.enabled:
            return "this server's clone has no remote to pull from (add one with `git remote add origin URL`)"
        return self.run()

    def status(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "remote": self.remote, "interval_seconds": self.interval,
                "unpushed_writes": self.pending, **self.last}

    # --- the work ------------------------------------------------------------------

    def run(self) -> str | None:
        """One sync under the tools' lock; its outcome is recorded for ``/healthz``. None, or why it failed."""
        def sync() -> tuple[int, Any]:
            batch = self.pending
            return batch, self.repo.sync(self.remote)

        started = time.monotonic()
        try:
            batch, result = self.service.locked(sync)
        except MemrepoError as exc:
            error = str(exc)
        except Exception as exc:  # a sync must never end the server: say what it was
            error = f"{type(exc).__name__}: {exc}"
        else:
            with self._count:
                self.pending = max(0, self.pending - batch)
            self.last = {"at": _now(), "ok": True, "error": None, "fetched": result.fetched, "pushed": result.pushed,
                         "seconds": round(time.monotonic() - started, 3)}
            return None
        self.last = {**self.last, "at": _now(), "ok": False, "error": error,
                     "seconds": round(time.monotonic() - started, 3)}
        return error

    def _loop(self) -> None:
        while not self._stop.is_set():
            woken = self._wake.wait(timeout=self.interval or None)
            if self._stop.is_set():
                break
            if woken:
                self._stop.wait(self.push_delay)  # let the writes of a burst go out as one push
                self._wake.clear()
            self.run()
        if self.pending:
            self.run()
