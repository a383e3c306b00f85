"""The one frozen context :meth:`memrepo.api.MemoryRepo.open` builds (issue 22).

Every layer below the porcelain (``write/``, ``index/``, ``graph/``, ``read/``,
``dream/``, ``doctor.py``) takes this context, or a narrower part of it (a
``GitStore``, the ``Settings``), never ``MemoryRepo``::

    ctx = Context(store, settings)
    ctx.snapshot()                 # the branch tip now
    with ctx.model() as backend:   # the model backend the settings ask for, closed after use
        ...
    ctx.with_author("agent <a@x>") # a copy whose writes are committed as that author

What exists (indexes, after-commit steps, doctor checks) is read from
:mod:`memrepo.capabilities`, one table for everyone; the context carries it
(``ctx.capabilities``), so a test that needs another set passes its own::

    ctx.with_capabilities(after_commit={})   # writes without their after-commit steps

The offline roles read text with the context's analyzer (``ctx.analyzer``, memrepo/nlp): the one
:data:`memrepo.capabilities.ANALYZERS` lists under ``ctx.analyzer_name`` ("rules" unless a caller
chooses another with ``ctx.with_analyzer(name)``).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from memrepo.capabilities import Capabilities, Entry, installed
from memrepo.settings import Settings
from memrepo.store.git import GitStore, Snapshot

if TYPE_CHECKING:
    from memrepo.llm import Backend
    from memrepo.nlp import Analyzer


@dataclass(frozen=True)
class Context:
    """A repository's store, its settings and who its writes are committed as."""

    store: GitStore
    settings: Settings
    # Who this repository's writes are committed as ("Name <email>"); None: the Git identity.
    author: str | None = None
    # The derived indexes, after-commit steps and doctor checks (memrepo/capabilities.py, with plugins).
    capabilities: Capabilities = field(default_factory=installed)
    # What is worth keeping between writes of this repository (the vault's known values, say), by name.
    caches: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    # Makes the model backend every step uses (None: the one the settings ask for); an embedding
    # application or a test passes its own here instead of patching a module.
    backends: "Callable[[], Backend] | None" = field(default=None, compare=False, repr=False)
    # Which analyzer of memrepo.capabilities.ANALYZERS the offline roles read text with.
    analyzer_name: str = "rules"

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def commit_author(self) -> bytes | None:
        """The author (and committer) of commits; None lets the store use the Git identity."""
        return self.author.encode("utf-8") if self.author else None

    def snapshot(self) -> Snapshot:
        """The branch tip now."""
        return self.store.snapshot()

    def with_author(self, author: str | None) -> "Context":
        return replace(self, author=author)

    def with_capabilities(self, **tables: Mapping[str, Entry]) -> "Context":
        """A copy with some capability tables replaced (``indexes=``, ``after_commit=``, ``doctor_checks=``)."""
        return replace(self, capabilities=self.capabilities.replace(**tables))

    def with_analyzer(self, name: str) -> "Context":
        """A copy whose offline roles read text with the analyzer ``name`` of ``ANALYZERS``."""
        return replace(self, analyzer_name=name)

    @property
    def analyzer(self) -> "Analyzer":
        """The analyzer the offline roles read text with (made once per process).

        Raises:
            RepositoryError: ``analyzer_name`` names no analyzer of ``ANALYZERS``.
        """
        from memrepo.nlp import analyzer

        return analyzer(self.analyzer_name)

    def backend(self) -> "Backend":
        """A new model backend the settings ask for (offline without an endpoint); the caller closes it."""
        if self.backends is not None:
            return self.backends()
        from memrepo.llm import STATS_FILE, get_backend

        return get_backend(self.settings, self.store.state_dir / STATS_FILE)

    @contextmanager
    def model(self, backend: "Backend | None" = None) -> Iterator["Backend"]:
        """``backend`` if given (left open), else a new one closed on exit."""
        if backend is not None:
            yield backend
            return
        own = self.backend()
        try:
            yield own
        finally:
            own.close()
