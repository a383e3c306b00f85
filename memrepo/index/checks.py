"""`memrepo doctor` check of the derived indexes and the embedding cache: readable and as published, or absent."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from memrepo.index.base import DAMAGED_MARK, EMBEDDING_CACHE, Indexes, index_root, read_state, verify_generation

if TYPE_CHECKING:
    from memrepo.problem import CheckedView, Problem


def check_indexes(view: "CheckedView") -> Iterable["Problem"]:
    """A derived index that exists but is damaged or cannot be opened is a problem (`memrepo reindex` and
    `memrepo doctor --fix` rebuild it).

    Every file of the published generation is checked against the CRC-32 it was published
    with, then the generation is opened. An index behind HEAD is not a problem: every read
    catches it up first. Nor is a missing one: the first read builds it. The indexes checked are
    the view's table (``view.capabilities.indexes``: every one memrepo has, and plugins').
    """
    from memrepo.problem import Problem

    indexes = Indexes(view.store, view.settings, table=view.capabilities.indexes)
    try:
        for name in indexes.names:
            root = index_root(view.store, name)
            where = os.path.relpath(root, view.store.root)
            try:
                state = read_state(root)
            except ValueError as exc:
                yield Problem(where, f"index {name}: {exc}; run `memrepo reindex` to rebuild it")
                continue
            if state is None:
                aside = root / DAMAGED_MARK
                if aside.exists():  # a read found it damaged and set it aside (an earlier check may have been it)
                    why = aside.read_text(encoding="utf-8", errors="replace").strip()
                    yield Problem(where, f"index {name}: {why}; `memrepo reindex` (or `memrepo doctor --fix`) rebuilds it")
                continue
            folder = root / state.generation
            if not folder.is_dir():
                yield Problem(where, f"index {name}: generation {state.generation} is missing; run `memrepo reindex`")
                continue
            damage = verify_generation(folder, full=True)
            if damage is None and indexes.index(name).in_place:
                damage = _sqlite_damage(folder)  # live databases carry no manifest: SQLite checks its own pages
            if damage is not None:
                yield Problem(f"{where}/{state.generation}", f"index {name}: {damage}; `memrepo reindex` (or `memrepo doctor "
                              "--fix`) rebuilds it")
                continue
            try:
                indexes.index(name).verify(folder)
            except Exception as exc:  # any failure to open is the problem being reported
                yield Problem(f"{where}/{state.generation}", f"index {name}: cannot be opened ({exc}); run `memrepo reindex`")
    finally:
        indexes.close()
    yield from check_embedding_cache(view)


def _sqlite_damage(folder) -> str | None:
    from memrepo.index.live import sqlite_damage

    return sqlite_damage(folder)


def check_embedding_cache(view: "CheckedView") -> Iterable["Problem"]:
    """The embedding cache, if there is one, passes SQLite's quick_check (`memrepo reindex --full` replaces it)."""
    import sqlite3

    from memrepo.problem import Problem

    path = view.store.state_dir / EMBEDDING_CACHE
    if not path.exists():
        return
    where = os.path.relpath(path, view.store.root)
    try:
        db = sqlite3.connect(str(path), timeout=60)  # quick_check only reads
    except sqlite3.Error as exc:
        yield Problem(where, f"embedding cache cannot be opened ({exc}); run `memrepo reindex --full`")
        return
    try:
        rows = [str(r[0]) for r in db.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as exc:
        rows = [str(exc)]
    finally:
        db.close()
    if rows != ["ok"]:
        yield Problem(where, f"embedding cache is damaged ({'; '.join(rows)}); `memrepo reindex` (or `memrepo doctor "
                      "--fix`) replaces it")
