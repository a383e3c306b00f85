"""What ``memrepo doctor``'s checks take and give (the checks are listed in memrepo/capabilities.py).

A check is ``check(view: CheckedView) -> Iterable[Problem]``. It lives in the layer
whose files it checks (``graph/checks.py``, ``index/checks.py``, ...) and imports
only this module to describe its input and output, never the porcelain.
:class:`memrepo.api.MemoryView` is a ``CheckedView``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Protocol

if TYPE_CHECKING:
    from memrepo.capabilities import Capabilities
    from memrepo.records import Source
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore, Snapshot


@dataclass(frozen=True)
class Problem:
    """One thing wrong, with the file it is in (``note``: worth saying, but not a fault)."""

    path: str
    message: str
    note: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class CheckedCommit(Protocol):
    """The store and one commit of it: what the checks of graph/ and dream/ read."""

    @property
    def store(self) -> "GitStore": ...

    @property
    def snapshot(self) -> "Snapshot": ...

    @property
    def commit(self) -> str | None: ...


class CheckedView(CheckedCommit, Protocol):
    """One commit of a repository with its settings and capability table: what every check may read."""

    @property
    def settings(self) -> "Settings": ...

    @property
    def capabilities(self) -> "Capabilities": ...

    def record_files(self, type: str | None = None) -> Iterator[tuple[str, str]]: ...

    def source(self, source_id: str) -> "Source": ...
