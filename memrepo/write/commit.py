"""The one commit every write makes: records and the sources they cite, then the after-commit steps.

:func:`commit_records` is what the porcelain's ``add`` does (the body moved here so
that ``write/ingest.py`` commits through it without calling back into the porcelain). After
its commit it runs the steps of ``ctx.capabilities.after_commit`` (graph catch-up, skills
proposal; :mod:`memrepo.write.hooks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from memrepo import records as rec
from memrepo import sensitive, vault
from memrepo.errors import RecordError, RepositoryError, VaultKeyError
from memrepo.records import Record, Source

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.settings import Settings
    from memrepo.store.git import Snapshot


@dataclass
class AddResult:
    """What a write did: its commit (None if nothing changed), the ids written and left unchanged."""

    commit: str | None
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # a later step failed; the commit stands
    replaced: dict[str, int] = field(default_factory=dict)  # core block id -> length of the text it replaced
    removed: list[str] = field(default_factory=list)  # paths the commit deleted (``remove``)

    def to_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "written": self.written, "unchanged": self.unchanged, "sources": self.sources,
                "warnings": self.warnings, "replaced": self.replaced, "removed": self.removed}


def now_iso() -> str:
    """The current time as an ISO datetime in UTC, to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def new_record(settings: "Settings", type_: str, text: str, **fields: Any) -> Record:
    """Build a record in the settings' namespace (see :func:`memrepo.records.new_record`).

    Vault records get an id keyed by the vault key, so the id reveals nothing of the value; the
    id of any other record holding a secret hashes the secret's keyed digest, never the secret.
    """
    fields.setdefault("namespace", settings.namespace)
    fields.setdefault("mention_time", now_iso())
    if type_ == "vault":
        rec.check_text(text)
        fields["keyed_content"] = vault.keyed_digest(settings.vault_key, text)
        fields.setdefault("summary", "vault entry")
    elif type_ != "core":
        blinded = vault.id_content(settings.vault_key, text)  # no id hashes a secret in the clear
        if blinded != text:
            fields.setdefault("keyed_content", blinded)
    return rec.new_record(type_, text, **fields)


def commit_records(ctx: "Context", records: Iterable[Record], *, sources: Iterable[Source] = (),
                   message: str | None = None, merge: Mapping[str, Callable[[Record | None], Record]] | None = None,
                   allow_plaintext_secrets: bool = False,
                   remove: Callable[["Snapshot"], Iterable[str]] | None = None) -> AddResult:
    """Write ``records`` (and the ``sources`` they cite) in one commit, then run the after-commit steps.

    The porcelain's ``add`` is this function on the repository's context. ``remove`` gives, from the tip
    the commit is made on, paths the same commit deletes (the records of a document's old version); a
    path being written is never deleted.
    """
    settings, store = ctx.settings, ctx.store
    sealed = vault.seal_batch(records, sources, message, key=settings.vault_key,
                              new_record=lambda *a, **kw: new_record(settings, *a, **kw),
                              known=vaulted_pointers(ctx))
    if sealed.found and not settings.vault_key and not allow_plaintext_secrets:
        raise vault.refuse_plaintext(sealed.found)
    batch, source_list, message = sealed.records, sealed.sources, sealed.message
    files: dict[str, bytes] = {}
    for source in source_list:
        files[source.path] = rec.serialize_source(source)
    prepared: list[Record] = []
    for record in batch:
        if record.type == "vault" and not record.encrypted:
            record = vault.seal(record, settings.vault_key)
        prepared.append(record)
        files[record.path] = rec.serialize(record)
    for record in prepared:
        # Validate what we are about to write by reading it back.
        rec.parse(files[record.path], record.path)
    result = AddResult(commit=None)
    sealing = any(r.type == "vault" for r in batch if not r.encrypted)
    if sealing:
        key_check(settings, store.snapshot())  # refuse a wrong key before anything is written

    def change(snap: "Snapshot") -> dict[str, bytes | None]:
        result.written, result.unchanged, result.sources, result.replaced = [], [], [], {}
        out: dict[str, bytes | None] = {**key_check(settings, snap)} if sealing else {}
        for source in source_list:
            if not snap.exists(source.path):
                refuse_forgotten(snap, source.id, source.path)
                out[source.path] = files[source.path]
                result.sources.append(source.id)
        for record in prepared:
            existing = snap.read(record.path)
            if existing is None:
                refuse_forgotten(snap, record.id, record.path)
            if merge and record.id in merge:
                current = rec.parse(existing, record.path) if existing is not None else None
                files[record.path] = rec.serialize(merge[record.id](current))
            if existing is not None and (record.type not in ("core", "resource") or existing == files[record.path]):
                result.unchanged.append(record.id)
                continue
            out[record.path] = files[record.path]
            result.written.append(record.id)
            if existing is not None and not (merge and record.id in merge):  # replaced in place, not merged
                before = _text_of(existing, record.path)
                if before != record.text:
                    result.replaced[record.id] = len(before)
        result.removed = []
        for path in remove(snap) if remove else ():
            if path not in out and path not in files and snap.exists(path):
                out[path] = None
                result.removed.append(path)
        return out

    if not store.bare:
        dirty = store.dirty_paths(list(files))
        if dirty:
            raise RepositoryError(f"{dirty[0]}: has uncommitted changes in the work tree; commit or discard them first")
    msg = message or _default_message(prepared, source_list)
    notices = len(store.notices)
    commit = store.commit(change, msg, author=ctx.commit_author)
    result.commit = commit.decode() if commit else None
    result.warnings = store.notices[notices:]
    store.checkpoint("after-source-before-graph")
    # Every writer comes through here, so every write reaches the graph the same way (fail-soft).
    from memrepo.write.hooks import run_after_write

    result.warnings += run_after_write(ctx, result.written)
    return result


def refuse_forgotten(snap: "Snapshot", record_id: str, path: str) -> None:
    """Raise if an active tombstone at ``snap`` says ``record_id`` was forgotten (memrepo/tombstones.py).

    Raises:
        RecordError: naming the file, who forgot it and when, and the explicit undo; nothing is written.
    """
    from memrepo import tombstones as tomb

    where = tomb.tombstone_path(record_id)
    data = snap.read(where)
    if data is None:
        return
    try:
        stone = tomb.parse_tombstone(data, where)
    except RecordError:
        return  # a broken tombstone: doctor and validate name it
    if stone.active:
        raise RecordError(f"{path}: {record_id} was forgotten by {stone.forgotten_by} at {stone.forgotten_at} "
                          f"({where}); nothing was written. To bring it back, record the undo first "
                          f"(`memrepo forget --undo {record_id}`), then write it again")


def key_check(settings: "Settings", snap: "Snapshot") -> dict[str, bytes]:
    """The key-check file a vault write adds (none if present); raises if the key is not the repository's."""
    def sealed() -> Iterator[tuple[str, bytes]]:
        for path, blob in snap.walk(rec.FOLDER["vault"]):
            if rec.is_record_path(path):
                yield path, snap.read_blob(blob)

    return vault.key_check_changes(snap.read, sealed(), settings.vault_key)


def vaulted_pointers(ctx: "Context") -> dict[str, str]:
    """Values the vault already holds (long enough not to be mistaken), each with its pointer.

    A later write that repeats one, labelled or not, gets the pointer instead of the value.
    Kept in ``ctx.caches`` while the vault folder and the key are the same.
    """
    key = ctx.settings.vault_key
    if not key:
        return {}
    snap = ctx.snapshot()
    tree = snap.entry(rec.FOLDER["vault"])
    if tree is None:
        return {}
    cached = ctx.caches.get("vaulted_pointers")
    if cached and cached[0] == (tree[1], key):
        return cached[1]
    pointers: dict[str, str] = {}
    for path, blob in snap.walk(rec.FOLDER["vault"]):
        if not rec.is_record_path(path):
            continue
        try:
            record = vault.unseal(rec.parse(snap.read_blob(blob), path), key)
        except (RecordError, VaultKeyError):
            continue  # doctor reports it; a wrong key is refused by the key check
        if not record.encrypted:
            for value in vault.vaulted_values(record.text):
                if len(value) >= vault.MIN_KNOWN_VALUE:
                    pointers.setdefault(value, sensitive.pointer(record.id))
    ctx.caches["vaulted_pointers"] = ((tree[1], key), pointers)
    return pointers


def _text_of(data: bytes, path: str) -> str:
    """The body of a record file, or all of it when it does not parse (a hand-broken file being replaced)."""
    try:
        return rec.parse(data, path).text
    except RecordError:
        return data.decode("utf-8", "replace")


def _default_message(records: list[Record], sources: list[Source]) -> str:
    if len(records) == 1 and not sources:
        r = records[0]
        title = "vault entry" if r.type == "vault" else r.summary
        return f"Remember {r.type} {r.id}: {title}"[:200]
    counts: dict[str, int] = {}
    for r in records:
        counts[r.type] = counts.get(r.type, 0) + 1
    parts = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()))
    origin = f" from {sources[0].title or sources[0].id}" if len(sources) == 1 else ""
    return f"Add {parts or 'sources'}{origin}"
