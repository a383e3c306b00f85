"""`memrepo forget`: remove records, and the graph statements only they support, in one commit.

A record's graph statements live in its own graph file
(``graph/frames/<YYYY>/<MM>/<id>.ttl``), whose frames cite that record alone: a
frame that other records support has the same IRI in their files too, so
removing the file removes exactly this record's citation and its anchor
mentions, and the frame keeps the others (the union of the files, M eq. 6).

A ``remember`` note (the verbatim input of a routed ``remember``) exists only for
the records made from it: it goes with them once no other record cites it.
Other sources (conversations, documents) hold more than the forgotten records
and stay; they are listed in ``kept_sources``, and naming a source id forgets it
too. Forgetting changes the tip, not history: the removed files stay in earlier
commits until history is rewritten (see docs/store.md, "Forgetting").

Every id removed (records, and note sources going with them) leaves a tombstone,
``tombstones/<id>.md`` (memrepo/tombstones.py): who forgot it, when, why, never
its text. Merges honour it (memrepo/team/sync.py), and the server hook refuses a
push that brings the id back. :func:`undo` records an explicit, reviewable undo in
the same file (it is never deleted) and restores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from memrepo import records as rec
from memrepo import tombstones as tomb
from memrepo.errors import NotFoundError, RecordError, RepositoryError
from memrepo.graph.model import graph_path

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.store.git import Snapshot


@dataclass
class ForgetResult:
    """What one ``forget`` did: the commit (None if nothing changed) and what it removed."""

    commit: str | None
    removed: list[str] = field(default_factory=list)  # the ids named: records and sources
    sources: list[str] = field(default_factory=list)  # remember notes removed with their records
    graph_files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every file removed
    kept_sources: list[str] = field(default_factory=list)  # cited by removed records, still holding their text
    tombstones: list[str] = field(default_factory=list)  # the tombstone files written

    def to_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "removed": self.removed, "sources": self.sources,
                "graph_files": self.graph_files, "paths": self.paths, "kept_sources": self.kept_sources,
                "tombstones": self.tombstones}


def forget(ctx: "Context", ids: Iterable[str], *, message: str | None = None, reason: str | None = None,
           now: str | None = None) -> ForgetResult:
    """Remove the records (or sources) ``ids`` and their graph files in one commit, leaving a tombstone for each.

    Args:
        ids: record ids (``ep-...``, ``se-...``, ``core-human``, ...) and/or source ids (``src-...``).
        message: the commit message (default: ``Forget <ids>``).
        reason: why, one line, kept in the tombstones (never the forgotten text).
        now: the tombstones' ``forgotten_at`` (default: the current time, UTC).

    Returns:
        The commit and what was removed; ``commit`` is None only if another writer removed them first.

    Raises:
        RecordError: an id is malformed, or none was given.
        NotFoundError: an id names nothing at the tip; nothing is written.
        RepositoryError: a file to remove has uncommitted edits in the work tree, or a named
            source is still cited by a record that is not forgotten with it.
    """
    wanted = list(dict.fromkeys(i.strip() for i in ids if i and i.strip()))
    if not wanted:
        raise RecordError("ids: name at least one record or source id to forget")
    reason = " ".join((reason or "").split())
    author = _author(ctx)
    when = now or _now()
    first = _plan(ctx.store.snapshot(), wanted, strict=True)
    if not ctx.store.bare:
        dirty = ctx.store.dirty_paths(first.paths)
        if dirty:
            raise RepositoryError(f"{dirty[0]}: has uncommitted changes in the work tree; commit or discard them first")
    result = ForgetResult(commit=None)

    def change(snap: "Snapshot") -> dict[str, bytes | None]:
        planned = _plan(snap, wanted, strict=False)  # re-run on a new tip: another writer may have moved it
        result.removed, result.sources, result.graph_files = planned.removed, planned.sources, planned.graph_files
        result.paths, result.kept_sources = planned.paths, planned.kept_sources
        out: dict[str, bytes | None] = {path: None for path in planned.paths}
        result.tombstones = []
        for gone in planned.removed + planned.sources:
            path = tomb.tombstone_path(gone)
            held = _read_tombstone(snap, path)
            if held is not None and held.active:
                continue  # forgotten already (a record brought back by hand): the first forget stands
            out[path] = tomb.serialize_tombstone(tomb.Tombstone(gone, author, when, reason))
            result.tombstones.append(path)
        return out

    shown = ", ".join(wanted[:5]) + (f" and {len(wanted) - 5} more" if len(wanted) > 5 else "")
    msg = message or f"Forget {shown}\n\nmemrepo forget: {len(wanted)} id(s)"
    commit = ctx.store.commit(change, msg, author=ctx.commit_author)
    result.commit = commit.decode() if commit else None
    return result


def undo(ctx: "Context", record_id: str, *, now: str | None = None) -> str:
    """Record an undo of the forget of ``record_id`` in its tombstone; returns the commit id.

    The tombstone stays (with ``undone_by`` and ``undone_at``); the record is not restored: whoever wants
    it back adds it again, which the undo now allows.

    Raises:
        RecordError: ``record_id`` is not an id, or its tombstone does not parse.
        NotFoundError: nothing was forgotten under ``record_id``.
        RepositoryError: the forget was undone already (naming by whom).
    """
    path = tomb.tombstone_path(record_id.strip())
    author, when = _author(ctx), now or _now()

    def change(snap: "Snapshot") -> dict[str, bytes | None]:
        held = _read_tombstone(snap, path)
        if held is None:
            raise NotFoundError(f"{record_id}: nothing was forgotten under this id (no {path})")
        if not held.active:
            raise RepositoryError(f"{record_id}: the forget was undone already, by {held.undone_by} at {held.undone_at}")
        return {path: tomb.serialize_tombstone(tomb.undo(held, by=author, at=when))}

    msg = f"Undo the forget of {record_id}\n\nmemrepo forget --undo: the record is not restored; add it again to bring it back"
    commit = ctx.store.commit(change, msg, author=ctx.commit_author)
    if commit is None:  # the change function always changes the file; None means nothing landed
        raise RepositoryError(f"{record_id}: the undo changed nothing")
    return commit.decode()


def _read_tombstone(snap: "Snapshot", path: str) -> tomb.Tombstone | None:
    data = snap.read(path)
    return tomb.parse_tombstone(data, path) if data is not None else None


def _author(ctx: "Context") -> str:
    return (ctx.commit_author or ctx.store.identity()).decode("utf-8", "replace")


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _plan(snap: "Snapshot", wanted: list[str], *, strict: bool) -> ForgetResult:
    """The files removing ``wanted`` at ``snap`` means; ``strict`` raises on ids that name nothing."""
    out = ForgetResult(commit=None)
    records: list[rec.Record] = []
    named_sources: list[str] = []
    for item in wanted:
        rec.check_id(item)
        if item.startswith(rec.SOURCE_PREFIX + "-"):
            path = rec.source_path(item)
            if not snap.exists(path):
                if strict:
                    raise NotFoundError(f"source {item!r} not found; nothing was forgotten")
                continue
            named_sources.append(item)
        else:
            if rec.type_of_id(item) is None:
                raise RecordError(f"id: {item!r} does not name a record type or a source")
            found = rec.find_record_path(snap, item)
            if found is None or not snap.exists(found):
                if strict:
                    raise NotFoundError(f"record {item!r} not found; nothing was forgotten")
                continue
            path = found
            data = snap.read(path)
            try:
                records.append(rec.parse(data or b"", path))
            except RecordError:
                pass  # a hand-broken file can still be forgotten; it cites nothing we can read
            gpath = graph_path(item)
            if snap.exists(gpath):
                out.graph_files.append(gpath)
        out.removed.append(item)
        out.paths.append(path)
    cited = {rec.split_citation(c)[0] for r in records for c in r.sources if c.startswith(rec.SOURCE_PREFIX + "-")}
    candidates = sorted((cited | set(named_sources)))
    if candidates:
        citing = _citing_records(snap, candidates, skip=set(out.paths))
        for source_id in named_sources:
            if citing.get(source_id):
                others = sorted(citing[source_id])
                shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
                raise RepositoryError(f"source {source_id} is still cited by {shown}; forget those records with it")
        for source_id in sorted(cited - set(named_sources)):
            path = rec.source_path(source_id)
            data = snap.read(path)
            if data is None:
                continue
            if not citing.get(source_id) and _is_note(data, path):
                out.sources.append(source_id)
                out.paths.append(path)
            else:
                out.kept_sources.append(source_id)
    out.paths += out.graph_files
    return out


def _is_note(data: bytes, path: str) -> bool:
    try:
        return rec.parse_source(data, path).kind == "note"
    except RecordError:
        return False


def _citing_records(snap: "Snapshot", source_ids: list[str], skip: set[str]) -> dict[str, set[str]]:
    """For each source id, the paths of the record files (outside ``skip``) that name it: one read of each."""
    needles = [(s, s.encode()) for s in source_ids]
    out: dict[str, set[str]] = {}
    for root in rec.RECORD_ROOTS:
        for path, blob in snap.walk(root.rstrip("/")):
            if path in skip or not rec.is_record_path(path):
                continue
            data = snap.read_blob(blob)
            for source_id, needle in needles:
                if needle in data:
                    out.setdefault(source_id, set()).add(path)
    return out


def forgotten_present(snap: "Snapshot") -> list[tuple[str, str]]:
    """(path, message) for each file at ``snap`` whose id an active tombstone says was forgotten (a plain
    ``git merge`` of a teammate's edit brings it back: Git hands modify/delete conflicts to no merge driver)."""
    found: list[tuple[str, str]] = []
    for path, blob in snap.walk(tomb.FOLDER):
        if not tomb.is_tombstone_path(path):
            continue
        try:
            held = tomb.parse_tombstone(snap.read_blob(blob), path)
            if not held.active:
                continue
            if held.id.startswith(rec.SOURCE_PREFIX + "-"):
                where: str | None = rec.source_path(held.id)
            else:
                where = rec.find_record_path(snap, held.id)
        except RecordError:
            continue  # a broken tombstone is validate's to name
        if where is not None and snap.exists(where):
            found.append((where, f"{held.id} was forgotten by {held.forgotten_by} at {held.forgotten_at} ({path}) "
                                 f"but is back at HEAD (a merge brought in an edit of it): `memrepo forget {held.id}` "
                                 f"removes it again, or `memrepo forget --undo {held.id}` keeps it"))
    return found
