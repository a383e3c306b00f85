"""What the installed Git hooks do: bring memrepo's derived state up to the new commit.

Each capability that keeps derived state registers an updater in :data:`UPDATERS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo

UPDATERS: list[Callable[["MemoryRepo"], None]] = []


def update_derived_indexes(repo: "MemoryRepo") -> None:
    """Bring every registered derived index (full text, vectors, graph...) to HEAD."""
    from memrepo.index import update_indexes

    update_indexes(repo)


UPDATERS.append(update_derived_indexes)


def run_hook(repo: "MemoryRepo", name: str, args: tuple[str, ...]) -> None:
    """Run every registered updater; called by post-commit, post-merge and post-checkout."""
    for update in UPDATERS:
        update(repo)
