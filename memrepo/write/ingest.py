"""Ingestion: files -> verbatim sources -> routed, typed records -> one commit per source.

Every file is parsed and checked before anything is committed. Each source is
then written with all its records in one commit (M Alg. 1 line 3); a source that
is already in the repository is skipped without any model call, so ingesting
twice changes nothing and a stopped ingest can simply be run again. After each
commit the after-commit steps of ``ctx.capabilities.after_commit`` run (graph indexing,
from :func:`memrepo.write.commit.commit_records`, as for every write; a rerun that commits nothing
runs them once, so it catches up too); their failures are logged and never undo
the records.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memrepo import records as rec
from memrepo import sensitive, vault
from memrepo.errors import NotFoundError, RecordError
from memrepo.llm import Backend
from memrepo.llm import stats as st
from memrepo.records import Record, Source, SourcePart
from memrepo.write import hooks
from memrepo.write.commit import AddResult, commit_records, key_check, new_record, vaulted_pointers
from memrepo.write.parsers import ParsedFile, parse_file
from memrepo.write.writers import WRITER_ORDER, WriteContext, core_merges, current_core_blocks, write_source

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.settings import Settings

log = logging.getLogger("memrepo.write")
Progress = Callable[[int], None]


@dataclass
class IngestResult:
    """What an ingest did."""

    files: list[dict[str, Any]] = field(default_factory=list)
    sources_written: list[str] = field(default_factory=list)
    sources_unchanged: list[str] = field(default_factory=list)
    records: dict[str, int] = field(default_factory=dict)
    record_ids: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    parts: int = 0
    seconds: float = 0.0
    model: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Each document: file, source, status ("new", "new version", "unchanged"), the version it replaced.
    documents: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sources_written": len(self.sources_written),
            "sources_unchanged": len(self.sources_unchanged),
            "source_ids": self.sources_written,
            "records": dict(sorted(self.records.items())),
            "records_written": sum(self.records.values()),
            "record_ids": self.record_ids,
            "commits": self.commits,
            "parts": self.parts,
            "seconds": round(self.seconds, 3),
            "model": self.model,
            "warnings": self.warnings,
            "documents": self.documents,
        }


def parse_all(paths: Iterable[str | os.PathLike], *, namespace: str, mention_time: str | None = None,
              vault_key: bytes | None = None) -> list[ParsedFile]:
    """Parse and check every file first, so bad input is rejected before anything is committed.

    ``vault_key`` keys the digest of any secret a source id is hashed from (:func:`memrepo.vault.id_content`).
    """
    parsed = []
    seen: set[str] = set()
    for path in paths:
        item = parse_file(Path(path), namespace=namespace, mention_time=mention_time,
                          blind=lambda text: vault.id_content(vault_key, text),
                          blind_turns=lambda turns: vault.id_content_turns(vault_key, turns))
        item.sources = [s for s in item.sources if not (s.id in seen or seen.add(s.id))]  # type: ignore[func-returns-value]
        parsed.append(item)
    return parsed


def allowed_types(settings: "Settings") -> tuple[str, ...]:
    """Types the router may choose: the vault only when a vault key is configured."""
    return tuple(t for t in WRITER_ORDER if t != "vault" or settings.vault_key)


def ingest(
    ctx: "Context",
    paths: Iterable[str | os.PathLike],
    *,
    backend: Backend,
    mention_time: str | None = None,
    progress: Progress | None = None,
    parsed: list[ParsedFile] | None = None,
    allow_plaintext_secrets: bool = False,
) -> IngestResult:
    """Ingest files into the repository of ``ctx``: one commit per source with all its records.

    Args:
        backend: the model backend (offline or OpenAI-compatible).
        mention_time: when undated input was said (default: each file's modification time).
        progress: called with the number of parts (turns, blocks) done, after each window of a source.
        parsed: files already parsed by :func:`parse_all` (the CLI parses first to size its progress bar).
        allow_plaintext_secrets: with no vault key, commit secrets found in the input as they are.

    Raises:
        RecordError: a file is unreadable or of the wrong shape (before any commit).
        VaultKeyError: the input holds secrets and no vault key is set (before any commit).
        ModelError: a model call failed; sources before it are committed, rerunning continues.
    """
    start = time.perf_counter()
    before = {role: st.RoleStats(**vars(s)) for role, s in backend.totals.items()}
    files = parsed if parsed is not None else parse_all(paths, namespace=ctx.settings.namespace, mention_time=mention_time,
                                                                   vault_key=ctx.settings.vault_key)
    result = IngestResult()
    allowed = allowed_types(ctx.settings)
    check_secrets(ctx, [s for item in files for s in item.sources], allow_plaintext_secrets)
    try:
        with hooks.batched(ctx) as run_ctx:  # one graph session for all the sources (the same graph files)
            for item in files:
                entry = {"file": item.name, "format": item.format, "sources": len(item.sources), "parts": item.parts}
                result.files.append(entry)
                for source in item.sources:
                    _ingest_source(run_ctx, backend, source, allowed, result, allow_plaintext_secrets, progress)
                    result.parts += len(source.parts)
            if not result.commits:
                # Nothing new to commit (a rerun): a run killed between a record commit and its graph
                # commit still left work for the after-write steps, which catch up incrementally.
                result.warnings.extend(hooks.run_after_write(run_ctx, []))
    finally:
        backend.flush()
        result.seconds = time.perf_counter() - start
        result.model = usage_since(backend, before)
    return result


def _ingest_source(ctx: "Context", backend: Backend, source: Source, allowed: tuple[str, ...], result: IngestResult,
                   allow_plaintext_secrets: bool = False, progress: Progress | None = None) -> None:
    snap = ctx.snapshot()
    previous = previous_version(snap, source, ctx.caches) if source.kind == "document" else None
    if snap.exists(source.path) or (previous is not None and previous.digest == source.extra.get("digest")):
        result.sources_unchanged.append(source.id)
        if source.kind == "document":
            result.documents.append(_document_entry(source, "unchanged", previous))
        if progress:
            progress(len(source.parts))
        return
    wctx = _context(ctx, source)
    records = write_source(backend, source, wctx, allowed, progress)
    result.warnings.extend(wctx.warnings)
    records = place_documents(ctx.snapshot(), records)
    session = hooks.graph_session(ctx)
    if session is not None:  # the ingest's graph step takes these records as they are, not parsed back
        session.expect(records)
    remove = None
    if previous is not None:  # the old version's records go in the same commit (its sources stay, as inputs do)
        kept = {r.path for r in records}

        def remove(tip: Any) -> list[str]:
            return [p for p in version_paths(tip, previous) if p not in kept]

    added = commit_records(ctx, records, sources=[source], message=_message(source, records, previous),
                           merge=core_merges(wctx, records), allow_plaintext_secrets=allow_plaintext_secrets,
                           remove=remove)  # seals every secret (memrepo.vault.seal_batch)
    _collect(result, added, records)
    if added.sources:
        result.sources_written.append(source.id)
    else:
        result.sources_unchanged.append(source.id)
    if source.kind == "document":
        entry = _document_entry(source, "new version" if previous else "new", previous)
        if previous is not None:
            entry["removed"] = len(added.removed)
        result.documents.append(entry)
    result.warnings.extend(added.warnings)  # commit_records ran the after-commit steps (graph extraction)


@dataclass(frozen=True)
class Version:
    """A document's version in the repository: its resource record, the sources it cites, its content digest."""

    path: str
    title: str
    sources: tuple[str, ...]
    digest: str
    mention_time: str


def previous_version(snapshot: Any, source: Source, cache: dict[str, Any] | None = None) -> Version | None:
    """The version of ``source``'s document the repository holds: the resource record read from the same file
    (same ``file_key``), else one with the same title of its own (a heading or the file's metadata, not a
    file name). None for a new document.

    ``cache`` (the context's caches) keeps what each resource blob says by its blob id, so ingesting a
    folder of documents reads each resource record once, not once per document.
    """
    key = str(source.extra.get("file_key") or "")
    title = source.title if source.extra.get("titled") else ""
    known: dict[tuple[str, str], tuple[str, str, Version] | None] = (
        cache if cache is not None else {}).setdefault("document_versions", {})
    found: list[tuple[int, str, Version]] = []
    for path, blob in snapshot.walk(rec.FOLDER["resource"]):
        if not path.endswith(".md"):
            continue
        if (path, blob) not in known:
            known[(path, blob)] = _version_of(path, snapshot.read_blob(blob))
        entry = known[(path, blob)]
        if entry is None:
            continue
        file_key, own_title, version = entry
        rank = 0 if key and file_key == key else 1 if title and own_title == title else None
        if rank is not None:
            found.append((rank, version.mention_time, version))
    if not found:
        return None
    best = min(f[0] for f in found)
    return max((f for f in found if f[0] == best), key=lambda f: f[1])[2]


def _version_of(path: str, data: bytes) -> tuple[str, str, Version] | None:
    """(file key, own title or "", version) of a document's resource record; None for any other file."""
    if b"file_key: " not in data and b"titled: true" not in data:
        return None
    try:
        record = rec.parse(data, path)
    except RecordError:
        return None  # doctor names a broken record; it is no version of anything
    if record.type != "resource":
        return None
    cited = tuple(dict.fromkeys(rec.split_citation(c)[0] for c in record.sources))
    title = str(record.extra.get("title") or "")
    return (str(record.extra.get("file_key") or ""), title if record.extra.get("titled") else "",
            Version(path, title, cited, str(record.extra.get("digest") or ""), record.mention_time))


def version_paths(snapshot: Any, version: Version) -> list[str]:
    """The files of ``version``: its resource record and every record citing one of its sources.

    A document's records are dated by the document (its mention time), so they are looked for in the
    folders of that day only, by the citation in their front matter.
    """
    out = [version.path]
    for source_id in version.sources:
        try:
            rec.source_path(source_id)
        except RecordError:
            continue
        day = source_id[len(rec.SOURCE_PREFIX) + 1:][:10]
        needle = f"{source_id}#".encode()
        for type_ in ("semantic", "episodic", "procedural"):
            prefix = f"{rec.PREFIX[type_]}-{day}-"
            for path, blob in snapshot.walk(f"{rec.FOLDER[type_]}/{day[:4]}/{day[5:7]}"):
                if path.rsplit("/", 1)[-1].startswith(prefix) and needle in snapshot.read_blob(blob)[:65536]:
                    out.append(path)
    return list(dict.fromkeys(out))


def _document_entry(source: Source, status: str, previous: Version | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"file": str(source.extra.get("file") or ""), "title": source.title, "source": source.id,
                             "status": status, "parts": len(source.parts)}
    if previous is not None:
        entry["version"] = {"path": previous.path, "sources": list(previous.sources),
                            "mention_time": previous.mention_time}
    return entry


def place_documents(snapshot: Any, records: list[Record]) -> list[Record]:
    """Keep a document from replacing a different one that has the same file name.

    A document goes to ``resource/<name>.md``; a new version of the same file (same ``file_key``)
    replaces it there, as a new generation. A different file with the same name (``a/notes.md``
    after ``b/notes.md``) goes to ``resource/<name>-<file key>.md`` instead, so that both stay.
    """
    import dataclasses

    out = []
    for r in records:
        key = str(r.extra.get("file_key") or "")
        if r.type != "resource" or not key or not r.extra.get("path"):
            out.append(r)
            continue
        data = snapshot.read(r.path)
        if data is not None and not _same_file(data, r):
            stem = r.path[: -len(".md")]
            r = dataclasses.replace(r, extra={**r.extra, "path": f"{stem}-{key[:8]}.md"})
        out.append(r)
    return out


def _same_file(data: bytes, record: Record) -> bool:
    """True if ``data`` is the resource ``record`` (same id) or an earlier version of the same file."""
    try:
        other = rec.parse(data, record.path)
    except rec.RecordError:
        return False
    return other.id == record.id or other.extra.get("file_key") == record.extra.get("file_key")


def check_secrets(ctx: "Context", sources: list[Source], allow_plaintext_secrets: bool) -> None:
    """Refuse input holding secrets before any model sees it or anything is committed, when no key can seal them."""
    if ctx.settings.vault_key or allow_plaintext_secrets:
        return

    snap = ctx.snapshot()
    fresh = [s for s in sources if not snap.exists(s.path)]  # a source already present is skipped, not written
    found = vault.seal_batch([], fresh, None, key=None, new_record=_new_record(ctx)).found
    if found:
        raise vault.refuse_plaintext(found)


def seal_placed(ctx: "Context", target: str, data: bytes, *, mention_time: str,
                allow_plaintext_secrets: bool = False) -> tuple[bytes, list[Record]]:
    """``ingest --to``: the file with every secret replaced by a vault pointer, and the vault entries to commit.

    The file is kept byte for byte but for the secrets (a rules file is read as it is). Values the
    vault already holds get their pointers, so placing the same file again gives the same bytes.

    Raises:
        VaultKeyError: the file holds secrets and no vault key is set (unless ``allow_plaintext_secrets``),
            or the key is not the repository's; nothing is written.
    """
    text = data.decode("utf-8", "surrogateescape")
    found = sensitive.find(text)
    if not found:
        return data, []
    where = target.strip().lstrip("/")
    if not ctx.settings.vault_key:
        if allow_plaintext_secrets:
            return data, []
        raise vault.refuse_plaintext([(where, f) for f in found])
    key_check(ctx.settings, ctx.snapshot())  # a wrong key is refused before anything is placed
    pointers = dict(vaulted_pointers(ctx))
    entries: dict[str, Record] = {}
    for f in found:
        if f.value in pointers:
            continue
        entry = new_record(ctx.settings, "vault", vault.entry_text(text, f), mention_time=mention_time, source=where,
                           position="placed", summary=f"vault entry: {f.kind}"[:120])
        entries.setdefault(entry.id, entry)
        pointers[f.value] = sensitive.pointer(entry.id)
    sealed = sensitive.redact(text, pointers)
    if sensitive.find(sealed) or any(sensitive.occurrences(sealed, f.value) for f in found):
        raise RecordError(f"vault: a secret in {where} could not be sealed; nothing was written")
    return sealed.encode("utf-8", "surrogateescape"), list(entries.values())


def _new_record(ctx: "Context", source: Source | None = None) -> Callable[..., Record]:
    """``new_record(type, text, **fields)`` in the repository's namespace (:func:`memrepo.write.commit.new_record`).

    With ``source`` and a vault key, a value the source gives in reply to a question ("what's the PIN?"
    -> "6062") is blinded in the content a record id is hashed from, as detected secrets are: the
    record holding only "Sure, it's 6062." would otherwise have an id from which the PIN is found by
    trying all 10,000.
    """
    key = ctx.settings.vault_key
    replies = [f.value for _, f in sensitive.find_replies([p.text for p in source.parts])] \
        if source is not None and key and len(source.parts) > 1 else []

    def make(type_: str, text: str, **fields: Any) -> Record:
        if replies and type_ not in ("vault", "core") and "keyed_content" not in fields:
            blinded = vault.id_content(key, text, replies)
            if blinded != text:
                fields["keyed_content"] = blinded
        return new_record(ctx.settings, type_, text, **fields)

    return make


def _core_block(ctx: "Context") -> Callable[[str], Record]:
    """The core block with an id, as the branch tip holds it (NotFoundError if it has none)."""
    snap = ctx.snapshot()

    def get(record_id: str) -> Record:
        path = rec.record_path(record_id, "core")
        data = snap.read(path)
        if data is None:
            raise NotFoundError(f"record {record_id!r} not found")
        return rec.parse(data, path)

    return get


def _context(repo_ctx: "Context", source: Source) -> WriteContext:
    ctx = WriteContext(new_record=_new_record(repo_ctx, source), vault_enabled=bool(repo_ctx.settings.vault_key))
    if source.kind in ("conversation", "note"):
        ctx.core_blocks = current_core_blocks(_core_block(repo_ctx))
        if not ctx.vault_enabled:
            from memrepo.write.offline import secrets

            for part in source.parts:
                if secrets(part.text):
                    ctx.warnings.append(
                        f"{source.id}#{part.anchor}: looks like a sensitive value; no vault key is set, so it was not sealed"
                    )
    return ctx


def _collect(result: IngestResult, added: "AddResult", records: list) -> None:
    types = {r.id: r.type for r in records}
    for record_id in added.written:
        type_ = types.get(record_id) or rec.type_of_id(record_id) or "vault"  # vault entries the sealing added
        result.records[type_] = result.records.get(type_, 0) + 1
        result.record_ids.append(record_id)
    if added.commit:
        result.commits.append(added.commit)


def _message(source: Source, records: list, previous: Version | None = None) -> str:
    counts: dict[str, int] = {}
    for r in records:
        counts[r.type] = counts.get(r.type, 0) + 1
    listed = ", ".join(f"{n} {t}" for t, n in sorted(counts.items())) or "no records"
    head = f"Ingest {source.kind} {source.title or source.id}: {listed}"[:300]
    replaces = f"\nreplaces: {', '.join(previous.sources)} ({previous.path})" if previous is not None else ""
    return f"{head}\n\nsource: {source.id}{replaces}"


def usage_since(backend: Backend, before: dict[str, st.RoleStats]) -> dict[str, Any]:
    """Model usage of ``backend`` since ``before`` (a copy of its totals): per role and in total."""
    roles: dict[str, dict[str, Any]] = {}
    total = st.RoleStats()
    for role, now in backend.totals.items():
        delta = st.RoleStats(**vars(now))
        if role in before:
            for name in st.FIELDS:
                setattr(delta, name, getattr(delta, name) - getattr(before[role], name))
        if delta.calls or delta.offline_calls or delta.failed_calls:
            roles[role] = delta.to_dict()
            total.add(delta)
    return {"backend": backend.model_id, "roles": dict(sorted(roles.items())), "total": total.to_dict()}


# --- one input through the Meta Memory Manager -------------------------------------


def note_source(settings: "Settings", text: str, mention_time: str) -> Source:
    """The verbatim source of one ``remember`` input (kind ``note``, one part ``n1``)."""
    rec.check_text(text)
    namespace = settings.namespace
    source_id = rec.make_source_id(namespace=namespace, origin="remember", position="n1",
                                   content=vault.id_content(settings.vault_key, text), mention_time=mention_time)
    return Source(id=source_id, kind="note", mention_time=mention_time, parts=(SourcePart("n1", text, {}),),
                  namespace=namespace, title=rec.default_summary(text, 80), origin="remember")


def remember_routed(ctx: "Context", text: str, *, backend: Backend, mention_time: str,
                    overrides: dict[str, Any] | None = None, allow_plaintext_secrets: bool = False) -> "AddResult":
    """Route one input through the Meta Memory Manager and commit its source and records together.

    ``overrides`` (event_time, actor, status, sources) apply to the episodic records written.
    """
    import dataclasses

    source = note_source(ctx.settings, text, mention_time)
    check_secrets(ctx, [source], allow_plaintext_secrets)
    wctx = _context(ctx, source)
    records = write_source(backend, source, wctx, allowed_types(ctx.settings))
    backend.flush()
    if not records:
        records = [new_record(ctx.settings, "episodic", text, mention_time=mention_time, source=source.id, position="n1",
                                   sources=[f"{source.id}#n1"])]
    if overrides:
        changed = []
        for r in records:
            if r.type == "episodic":
                fields = {k: v for k, v in overrides.items() if k in ("event_time", "actor", "status")}
                if "event_time" in fields:
                    fields["event_time"] = rec.check_time(fields["event_time"], "event_time", interval=True)
                extra_sources = tuple(overrides.get("sources") or ())
                r = dataclasses.replace(r, sources=r.sources + extra_sources, **fields)
            changed.append(r)
        records = changed
    added = commit_records(ctx, records, sources=[source], merge=core_merges(wctx, records),
                           allow_plaintext_secrets=allow_plaintext_secrets)
    for warning in wctx.warnings + added.warnings:  # commit_records ran the after-commit steps (graph extraction)
        log.warning(warning)
    return added
