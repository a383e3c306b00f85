"""`memrepo doctor` check of the derived indexes: each one readable, or absent (built on first read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from memrepo.index.base import Indexes, index_root, read_state, registered

if TYPE_CHECKING:
    from memrepo.api import MemoryView
    from memrepo.doctor import Problem


def check_indexes(view: "MemoryView") -> Iterable["Problem"]:
    """A derived index that exists but cannot be opened is a problem (`memrepo reindex` rebuilds it).

    An index behind HEAD is not: every read catches it up first.
    """
    from memrepo.doctor import Problem

    indexes = Indexes(view.store, view.settings)
    try:
        for name in registered():
            root = index_root(view.store, name)
            where = str(root.relative_to(view.store.state_dir.parent))
            try:
                state = read_state(root)
            except ValueError as exc:
                yield Problem(where, f"index {name}: {exc}; run `memrepo reindex` to rebuild it")
                continue
            if state is None:
                continue
            folder = root / state.generation
            if not folder.is_dir():
                yield Problem(where, f"index {name}: generation {state.generation} is missing; run `memrepo reindex`")
                continue
            try:
                indexes.index(name).verify(folder)
            except Exception as exc:  # any failure to open is the problem being reported
                yield Problem(f"{where}/{state.generation}", f"index {name}: cannot be opened ({exc}); run `memrepo reindex`")
    finally:
        indexes.close()
