"""What exists in memrepo, listed in one place as lazy ``"module:attr"`` entries (STYLE.md rule 11).

This module imports nothing of memrepo but its errors: like RDFLib's ``plugin.py`` it only names
the modules that implement each capability, so any layer may read it and nothing
is imported until it is used. ``reindex``, ``doctor``, the Git hooks, the
viewer's index status and the after-write catch-up all iterate over these
tables (through :attr:`memrepo.context.Context.capabilities`), so a capability
listed here is seen by all of them in a fresh process, whatever happened to be
imported before. No module global is ever changed to learn what exists.

Another distribution adds entries through Python entry points, as llm does with
its plugins: in its ``pyproject.toml``::

    [project.entry-points."memrepo.indexes"]
    mine = "my_package.index:MyIndex"

The groups are :data:`GROUPS`; an entry named like one of memrepo's own is
ignored (memrepo's wins). A test or an embedding program that needs another set
(a failing after-commit step, no graph step) passes its own :class:`Capabilities`
in the context (``ctx.with_capabilities(after_commit={})``); nothing is patched.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Callable, Mapping

from memrepo.errors import RepositoryError

#: Every derived index (DESIGN.md §5): name -> ``"module:attr"`` of a ``DerivedIndex`` factory
#: (called with the repository's settings). Order is the order ``reindex`` builds them in.
DERIVED_INDEXES: dict[str, str] = {
    "fulltext": "memrepo.index.fulltext:FullTextIndex",
    "vectors": "memrepo.index.vectors:RecordVectorIndex",
    "graph": "memrepo.graph.index:GraphIndex",
    "provenance": "memrepo.read.provenance:ProvenanceIndex",
    "anchornames": "memrepo.graph.names:AnchorNameIndex",
}

#: Steps every write runs after it commits records, in this order: ``step(ctx, record_ids) -> None``.
#: They run even when the write added nothing (a rerun after a crash catches up); a failure is a
#: warning and never undoes the records (memrepo/write/hooks.py).
AFTER_COMMIT: dict[str, str] = {
    "graph": "memrepo.write.hooks:graph_catch_up",
    "skills": "memrepo.write.hooks:propose_skills",
}

#: ``memrepo doctor``'s checks, in the order they run: ``check(view) -> Iterable[Problem]``.
DOCTOR_CHECKS: dict[str, str] = {
    "config": "memrepo.doctor:check_config",
    # before any check that reads the graph index: a read sets a damaged database aside and the next rebuilds it
    "indexes": "memrepo.doctor:check_indexes",
    "records": "memrepo.doctor:check_records",
    "sources": "memrepo.doctor:check_sources",
    "git_objects": "memrepo.doctor:check_git_objects",
    "graph": "memrepo.doctor:check_graph",
    "graph_citations": "memrepo.doctor:check_graph_citations",
    "graph_coverage": "memrepo.doctor:check_graph_coverage",
    "decisions": "memrepo.doctor:check_decisions",
    "vault": "memrepo.doctor:check_vault",
    "interrupted_writes": "memrepo.doctor:check_interrupted_writes",
    "merge": "memrepo.doctor:check_merge",
    "merge_driver": "memrepo.doctor:check_merge_driver",
}

#: The offline language analyzers (memrepo/nlp): name -> ``"module:attr"`` of a class made with no arguments
#: that implements :class:`memrepo.nlp.Analyzer`. The setting ``analyzer`` chooses one ("rules" by default).
ANALYZERS: dict[str, str] = {
    "rules": "memrepo.nlp.rules:RulesAnalyzer",
}

#: Entry-point group of each table: other distributions add entries there.
GROUPS: dict[str, str] = {
    "indexes": "memrepo.indexes",
    "after_commit": "memrepo.after_commit",
    "doctor_checks": "memrepo.doctor_checks",
}

#: A table entry: its ``"module:attr"`` name, or (given by a test or program) the object itself.
Entry = str | Callable[..., Any]


def resolve(entry: Entry) -> Any:
    """The object an entry names, imported now (``"package.module:attr"``; an object is returned as is).

    Raises:
        RepositoryError: the entry names nothing that can be imported (a plugin removed or broken, say).
    """
    if not isinstance(entry, str):
        return entry
    module, _, attr = entry.partition(":")
    try:
        target: Any = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            target = getattr(target, part)
    except Exception as exc:  # whatever importing someone else's module raises: one line naming the entry
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise RepositoryError(f"capability {entry!r} cannot be loaded ({type(exc).__name__}: {first})") from exc
    return target


def entry_name(entry: Entry) -> str:
    """How an entry is named in messages: its ``"module:attr"``, or the object's qualified name."""
    return entry if isinstance(entry, str) else getattr(entry, "__qualname__", repr(entry))


def plugin_entries(group: str) -> dict[str, str]:
    """Entries other installed distributions declare in entry-point ``group``: name -> ``"module:attr"``."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in sorted(entry_points(group=group), key=lambda ep: ep.name)}


def _frozen(table: Mapping[str, Entry]) -> Mapping[str, Entry]:
    return MappingProxyType(dict(table))


@dataclass(frozen=True)
class Capabilities:
    """The derived indexes, after-commit steps and doctor checks one repository runs (name -> entry)."""

    indexes: Mapping[str, Entry] = field(default_factory=lambda: _frozen(DERIVED_INDEXES))
    after_commit: Mapping[str, Entry] = field(default_factory=lambda: _frozen(AFTER_COMMIT))
    doctor_checks: Mapping[str, Entry] = field(default_factory=lambda: _frozen(DOCTOR_CHECKS))

    def replace(self, **tables: Mapping[str, Entry]) -> "Capabilities":
        """A copy with some tables replaced (``indexes=``, ``after_commit=``, ``doctor_checks=``)."""
        return replace(self, **{name: _frozen(table) for name, table in tables.items()})


def with_plugins() -> Capabilities:
    """memrepo's tables, then the entries installed distributions add through :data:`GROUPS` (read now)."""
    tables: dict[str, Mapping[str, Entry]] = {}
    for attr, own in (("indexes", DERIVED_INDEXES), ("after_commit", AFTER_COMMIT), ("doctor_checks", DOCTOR_CHECKS)):
        extra = {name: value for name, value in plugin_entries(GROUPS[attr]).items() if name not in own}
        tables[attr] = {**own, **extra}
    return Capabilities().replace(**tables)


@lru_cache(maxsize=1)
def installed() -> Capabilities:
    """:func:`with_plugins`, read once per process (installed distributions do not change while it runs)."""
    return with_plugins()
