"""The porcelain: :class:`MemoryRepo`, the Python API the CLI and the viewer call.

    >>> repo = MemoryRepo.init("memory")
    >>> rec = repo.new_record("semantic", "Mia's bike is a blue Brompton", mention_time="2023-05-02")
    >>> repo.add([rec]).written
    ['se-2023-05-02-...']
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from memrepo import records as rec
from memrepo import vault
from memrepo.capabilities import Capabilities, installed as installed_capabilities
from memrepo.context import Context
from memrepo.errors import MemrepoError, NotFoundError, RecordError, RepositoryError
from memrepo.hooks import HOOKS
from memrepo.records import Record, Source
from memrepo.settings import CONFIG_FILE, Settings, load_settings
from memrepo.store.git import CommitInfo, GitStore, Snapshot
from memrepo.write.commit import AddResult, commit_records, now_iso

if TYPE_CHECKING:
    from memrepo.index import UpdateReport
    from memrepo.llm import Backend
    from memrepo.write.forget import ForgetResult
    from memrepo.write.ingest import IngestResult
    from memrepo.write.parsers import ParsedFile
    from memrepo.index.search import Hit
    from memrepo.read.answer import Answer
    from memrepo.read.recall import RecallResult
    from memrepo.graph.build import IndexGraphResult
    from memrepo.graph.reader import FrameInfo
    from memrepo.graph.query import AnchorBrief, AnchorView, Neighbourhood, SparqlResult
    from memrepo.dream.review import Review
    from memrepo.dream.run import DreamResult
    from memrepo.dream.skills import SkillsResult
    from memrepo.views.derive import Derivation
    from memrepo.views.env import Environment
    from memrepo.views.locators import Input, Placed
    from memrepo.views.profile import Activation, BindingEntry, UpgradePlan
    from memrepo.views.quest import Quest

RETRY_SECONDS = 600  # a retry this soon after midnight UTC finds the input remembered the day before
LAYOUT = ("core", "episodic", "semantic", "procedural", "resource", "vault", "rules", "sources", "graph", "views")


def find_root(start: str | os.PathLike | None = None) -> Path:
    """The memory repository containing ``start`` (default: the current directory), found as Git does."""
    here = Path(start or os.getcwd()).resolve()
    if not here.is_dir():  # as `git -C`: a folder that is not there is an error, not a start for the walk up
        raise RepositoryError(f"{here}: no such folder")
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_FILE).is_file() and (candidate / ".git").exists():
            return candidate
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate  # a bare memory repository
    raise RepositoryError(f"{here}: not inside a memory repository (run `memrepo init` to create one)")


class MemoryView:
    """Read-only access to the memory as of one commit."""

    def __init__(self, store: GitStore, snapshot: Snapshot, settings: Settings,
                 capabilities: "Capabilities | None" = None):
        self.store = store
        self.snapshot = snapshot
        self.settings = settings
        #: The indexes and checks this view's readers (``memrepo doctor``) go over (memrepo/capabilities.py).
        self.capabilities = capabilities or installed_capabilities()

    @property
    def commit(self) -> str | None:
        return self.snapshot.commit

    def get(self, record_id: str) -> Record:
        """The record with ``record_id``.

        Raises:
            NotFoundError: if no such record exists at this commit.
        """
        snapshot = self.snapshot  # one commit for the lookup and the read
        path = self.find_path(record_id, snapshot)
        data = snapshot.read(path) if path else None
        if data is None or path is None:
            raise NotFoundError(f"record {record_id!r} not found" + (f" at {self.commit[:12]}" if self.commit else ""))
        found = [self._load(data, path)]
        self._date_skills(found)
        return found[0]

    def find_path(self, record_id: str, snapshot: Snapshot | None = None) -> str | None:
        """Path of the file holding ``record_id`` in ``snapshot`` (this view's commit by default), or None."""
        return rec.find_record_path(snapshot or self.snapshot, record_id)

    def _load(self, data: bytes, path: str) -> Record:
        record = rec.parse(data, path)
        return vault.unseal(record, self.settings.vault_key)

    def records(self, type: str | None = None, since: str | None = None) -> list[Record]:
        """All records, or those of one ``type``, mentioned on or after ``since``; oldest first.

        Files that do not parse are skipped and described in ``self.skipped``; files
        whose Git object cannot be read (a bad disk, a truncated copy) in
        ``self.unreadable``. ``memrepo doctor`` reports both in full.
        """
        from memrepo.store.objects import CorruptObjectError

        if type is not None and type not in rec.TYPES:
            raise RecordError(f"type: {type!r} is not one of {', '.join(rec.TYPES)}")
        if since is not None:
            since = rec.check_time(since, "since")
        out = []
        self.skipped: list[str] = []
        self.unreadable: list[str] = []
        for path, blob in self.record_files(type):
            try:
                record = self._load(self.snapshot.read_blob(blob), path)
            except RecordError as exc:
                self.skipped.append(str(exc))  # a hand-broken file must not hide the others
                continue
            except CorruptObjectError as exc:  # nor a damaged object
                self.unreadable.append(f"{path}: {exc}")
                continue
            out.append(record)
        self._date_skills(out)
        if since:
            out = [r for r in out if r.mention_time >= since]
        out.sort(key=lambda r: (r.mention_time, r.id))
        return out

    def _date_skills(self, records: list[Record]) -> None:
        """Give hand-written skills without a ``mention_time`` the time of the commit that last changed them."""
        from dataclasses import replace

        from memrepo.store.textdiff import last_changes

        undated = [i for i, r in enumerate(records) if r.type == "procedural" and not r.mention_time]
        if not undated or self.commit is None:
            return
        changed = last_changes(self.store, [records[i].path for i in undated], rev=self.commit)
        for i in undated:
            info = changed.get(records[i].path)
            if info is not None:
                when = datetime.fromtimestamp(info.time, timezone.utc).replace(microsecond=0).isoformat()
                records[i] = replace(records[i], mention_time=when)

    def record_files(self, type: str | None = None) -> Iterator[tuple[str, str]]:
        """(path, blob id) of every record file (of one type)."""
        folders = [type] if type else list(rec.TYPES)
        if type in (None, "resource"):
            folders.append(rec.RULES_FOLDER)  # rules are resource records kept by path
        for folder in folders:
            for path, blob in self.snapshot.walk(folder):
                if rec.is_record_path(path):
                    yield path, blob

    def source(self, source_id: str) -> Source:
        data = self.snapshot.read(rec.source_path(source_id))
        if data is None:
            raise NotFoundError(f"source {source_id!r} not found")
        return rec.parse_source(data, rec.source_path(source_id))

    def sources(self) -> list[Source]:
        return [rec.parse_source(self.snapshot.read_blob(b), p) for p, b in self.snapshot.walk("sources") if p.endswith(".md")]

    def cited_parts(self, record: Record) -> list[tuple[str, str | None, str | None]]:
        """(citation, source title, part text) for each source part ``record`` cites."""
        out: list[tuple[str, str | None, str | None]] = []
        for citation in record.sources:
            source_id, anchor = rec.split_citation(citation)
            try:
                source = self.source(source_id)
            except (NotFoundError, RecordError):
                out.append((citation, None, None))
                continue
            part = source.part(anchor) if anchor else None
            out.append((citation, source.title, part.text if part else None))
        return out

    def stats_overview(self) -> dict[str, Any]:
        """Counts read from the tree alone, without parsing a file (fast on large repositories).

        Returns:
            ``{"commit", "records": {type: n}, "per_day": {(day, type): n}, "sources": n,
            "graph_files": {"frames": n, "decisions": n}}``; ``per_day`` uses the
            mention date in each record's id (undated records such as core blocks are not in it).
        """
        import re

        dated = re.compile(r"^[a-z]{2,5}-(\d{4}-\d{2}-\d{2})-")
        by_type = {t: 0 for t in rec.TYPES}
        per_day: dict[tuple[str, str], int] = {}
        for path, _ in self.record_files():
            type_ = next(t for t in rec.TYPES if path.startswith(rec.FOLDER[t].split("/")[0] + "/"))
            by_type[type_] += 1
            m = dated.match(path.rsplit("/", 1)[-1])
            if m:
                per_day[(m.group(1), type_)] = per_day.get((m.group(1), type_), 0) + 1
        snap = self.snapshot
        return {
            "commit": self.commit,
            "records": by_type,
            "per_day": per_day,
            "sources": sum(1 for p, _ in snap.walk("sources") if p.endswith(".md")),
            "graph_files": {
                "frames": sum(1 for p, _ in snap.walk("graph/frames") if p.endswith(".ttl")),
                "decisions": sum(1 for p, _ in snap.walk("graph/decisions") if p.endswith(".ttl")),
            },
        }


class MemoryRepo(MemoryView):
    """A memory repository: a Git repository of typed memory files.

    Reads see the branch tip at the time of the call; :meth:`at` gives a fixed snapshot.
    """

    def __init__(self, store: GitStore, settings: Settings):
        #: What every layer below this one takes (memrepo/context.py).
        self.ctx = Context(store, settings)
        self.root = store.root

    @classmethod
    def from_context(cls, ctx: Context) -> "MemoryRepo":
        """The porcelain over an existing context (its store is shared, not reopened)."""
        repo = cls(ctx.store, ctx.settings)
        repo.ctx = ctx
        return repo

    @property
    def store(self) -> GitStore:  # type: ignore[override]  # read-only here: a MemoryView's store is the Context's
        return self.ctx.store

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.ctx = replace(self.ctx, settings=value)

    @property
    def author(self) -> str | None:
        """Who this repository's writes are committed as ("Name <email>"); None: the Git identity.

        The MCP server sets it to the agent it serves, so `git log` shows which agent wrote what.
        """
        return self.ctx.author

    @author.setter
    def author(self, value: str | None) -> None:
        self.ctx = self.ctx.with_author(value)

    @property
    def commit_author(self) -> bytes | None:
        """The author (and committer) of this repository's commits; None lets the store use the Git identity."""
        return self.ctx.commit_author

    # --- opening -------------------------------------------------------------

    @classmethod
    def init(
        cls, path: str | os.PathLike, *, bare: bool = False, namespace: str = "default", python: str | None = None
    ) -> "MemoryRepo":
        """Create a memory repository at ``path`` (layout, ``memrepo.toml``, README, hooks).

        Raises:
            RepositoryError: if ``path`` already holds a memory repository.
        """
        from memrepo.resources import data_dir, template

        target = Path(path)
        if (target / CONFIG_FILE).exists() or (bare and (target / "HEAD").exists()):
            raise RepositoryError(f"{target}: already a memory repository; nothing changed")
        if not rec._LABEL_RE.match(namespace):
            raise RecordError(f"namespace: {namespace!r} must be lowercase letters, digits, '-' or '_'")
        if (target / ".git").exists():
            from memrepo.team.join import set_up_branch

            notes = set_up_branch(target)  # a clone with nothing checked out: its remote's branch, not a new root
            if (target / CONFIG_FILE).exists():
                notes += cls.join(target, python)
                repo = cls.open(target)
                repo.store.notices.extend(notes)
                return repo
            store = GitStore.open(target)
            store.notices.extend(notes)
        else:
            store = GitStore.init(target, bare=bare)
        config = template("repo/memrepo.toml").replace('namespace = "default"', f'namespace = "{namespace}"')
        files: dict[str, bytes | None] = {
            CONFIG_FILE: config.encode(),
            "README.md": template("repo/README.md").encode(),
        }
        from memrepo.team import mergedriver

        current = store.snapshot().read(mergedriver.ATTRIBUTES_FILE) if store.head() else None
        files[mergedriver.ATTRIBUTES_FILE] = mergedriver.attributes_text((current or b"").decode("utf-8")).encode()
        store.commit(files, "Create memory repository\n\nmemrepo init")
        if not bare:
            _install_hooks(store, data_dir("hooks"), python)
            mergedriver.configure(store.root, python or __import__("sys").executable)
        return cls(store, load_settings(target) if not bare else Settings())

    @classmethod
    def join(cls, path: str | os.PathLike, python: str | None = None) -> list[str]:
        """In an existing memory repository (a clone): install the Git hooks that are missing or outdated.

        Returns:
            What was done (empty: nothing needed).
        """
        from memrepo.hooks import outdated_hooks
        from memrepo.resources import data_dir

        store = GitStore.open(find_root(path))
        try:
            if store.bare:
                return []
            hooks = store.git_dir / "hooks"
            missing = tuple(n for n in HOOKS if "memrepo" not in _read_text(hooks / n)
                            and not (n == "pre-commit" and (hooks / n).exists()))  # a user's own is kept
            outdated = tuple(outdated_hooks(store, data_dir("hooks")))
            notes = []
            if missing or outdated:
                _install_hooks(store, data_dir("hooks"), python, names=missing + outdated)
                notes.append(f"installed the Git hooks {', '.join(missing + outdated)} (they keep the indexes current)")
            return notes + _install_merge_driver(store, python)
        finally:
            store.close()

    @classmethod
    def clone(cls, url: str, directory: str | os.PathLike | None = None, *, python: str | None = None
              ) -> tuple["MemoryRepo", list[str]]:
        """Join a team's memory: ``git clone``, the remote's branch checked out, hooks installed.

        A remote with no branch yet gets the repository layout here (``memrepo sync`` publishes it).

        Returns:
            The repository and messages explaining what was set up.

        Raises:
            RepositoryError: if the clone fails or the remote is not a memory repository.
        """
        from memrepo.team.join import clone, has_commit

        target, messages = clone(url, directory)
        if has_commit(target):
            messages += cls.join(target, python)
            repo = cls.open(target)
        else:
            repo = cls.init(target, python=python)
            repo.store.notices.clear()  # what set_up_branch said again; ``messages`` has it
        return repo, messages

    @classmethod
    def open(
        cls, path: str | os.PathLike | None = None, *, environ: Mapping[str, str] | None = None, settings: Settings | None = None
    ) -> "MemoryRepo":
        """Open the memory repository at (or above) ``path``.

        Args:
            environ: environment variables (the CLI passes ``os.environ``); they and the user config they
                locate override ``memrepo.toml``, whose endpoints count only once approved in this clone
                (:func:`memrepo.settings.resolve_settings`).
            settings: explicit settings, used instead of reading the file.
        """
        root = find_root(path)
        store = GitStore.open(root)
        if settings is None:
            if store.bare:
                from memrepo.settings import resolve_settings

                config = store.snapshot().read(CONFIG_FILE)
                text = config.decode("utf-8", "replace") if config is not None else None
                settings = resolve_settings(text, CONFIG_FILE, environ, state_dir=store.state_dir)
            else:
                settings = load_settings(root, environ, state_dir=store.state_dir)
            # The committed endpoints this clone does not follow (DESIGN.md section 9): said on stderr.
            store.notices.extend(item.message() for item in settings.ignored)
        store.recover()  # a write killed after its commit left the work tree behind: sync it (see store.notices)
        return cls(store, settings)

    def approve_settings(self) -> list[tuple[str, object]]:
        """Approve in this clone the endpoints ``memrepo.toml`` names now (:func:`memrepo.settings.approve_settings`);
        the (key, value) pairs approved. They are used from the next time the repository is opened."""
        from memrepo.settings import approve_settings

        return approve_settings(self.root, self.store.state_dir)

    def close(self) -> None:
        from memrepo.index import live
        from memrepo.write.hooks import close_session

        close_session(self.ctx)  # the graph step's state kept between this repository's writes
        live.close_writers(under=self.store.state_dir)  # the index databases' writers this process kept open
        self.store.close()

    def __enter__(self) -> "MemoryRepo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading -------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:  # type: ignore[override]
        return self.store.snapshot()

    def at(self, rev: str | None) -> MemoryView:
        """A read-only view of the memory as of ``rev`` (any commit-ish); the tip if None."""
        return MemoryView(self.store, self.store.snapshot(rev), self.settings, self.ctx.capabilities)

    def log(self, record_id: str | None = None, *, rev: str | None = None, limit: int | None = None) -> list[CommitInfo]:
        """History of one record (commits that touched its file) or of the whole repository."""
        if record_id is None:
            return self.store.log(None, rev=rev, limit=limit)
        from memrepo.store.textdiff import path_history

        path = self.at(rev).find_path(record_id)
        if path is None:
            raise NotFoundError(f"record {record_id!r} not found")
        commits = path_history(self.store, path, rev=rev, limit=limit)  # reads only the trees along the path
        if not commits and limit != 0:  # a deleted record still has the commits that wrote it
            raise NotFoundError(f"record {record_id!r} not found in the history" + (f" of {rev}" if rev else ""))
        return commits

    # --- writing -------------------------------------------------------------

    def new_record(self, type_: str, text: str, **fields: Any) -> Record:
        """Build a record in this repository's namespace (see :func:`memrepo.write.commit.new_record`).

        Vault records get an id keyed by the vault key, so the id reveals nothing of the value; the
        id of any other record holding a secret hashes the secret's keyed digest, never the secret.
        """
        from memrepo.write.commit import new_record

        return new_record(self.settings, type_, text, **fields)

    def add(self, records: Iterable[Record], *, sources: Iterable[Source] = (), message: str | None = None,
            merge: Mapping[str, Callable[[Record | None], Record]] | None = None,
            allow_plaintext_secrets: bool = False) -> AddResult:
        """Write ``records`` (and the ``sources`` they cite) in one commit.

        A record whose file already exists with the same id is left alone (writing
        twice is a no-op), except core blocks and resource documents, which are edited in place. Vault
        records are encrypted before they reach the object store, and every secret of the write
        (see :mod:`memrepo.sensitive`) goes to the vault, a pointer standing wherever it was written
        (:func:`memrepo.vault.seal_batch`). The after-commit steps (``ctx.capabilities.after_commit``:
        graph extraction, skills proposal) run after the commit; their failures are in ``warnings`` and never undo the records.

        Args:
            merge: maps a record id to a function of the record as the tip holds it (None if absent)
                that returns the record to write: a read-modify-write (a core block edited by a
                writer) is recomputed on whichever tip the commit lands on, never applied to the
                one it was computed from.
            allow_plaintext_secrets: with no vault key, commit detected secrets as they are
                instead of refusing the write.

        Raises:
            RecordError: if a record is invalid; nothing is committed.
            VaultKeyError: secrets were found and no key is set (unless allowed), or the key is
                not the repository's; nothing is committed.
        """
        return commit_records(self.ctx, records, sources=sources, message=message, merge=merge,
                              allow_plaintext_secrets=allow_plaintext_secrets)

    def remember(self, text: str, *, type: str | None = None, allow_plaintext_secrets: bool = False,
                 **fields: Any) -> AddResult:
        """Write one input and commit it: as one record of ``type``, or, when no type is
        given, routed through the Meta Memory Manager (the input is kept as a source and
        each chosen writer adds its records, all in one commit).

        Secrets in ``text`` go to the vault (see :meth:`add`); with no vault key the write is
        refused unless ``allow_plaintext_secrets``."""
        origin = fields.pop("source", "") or ""
        if origin.startswith(rec.SOURCE_PREFIX + "-"):
            source_id, anchor = rec.split_citation(origin)
            source = self.source(source_id)  # raises NotFoundError naming the source
            if anchor and source.part(anchor) is None:
                raise NotFoundError(f"source: {source_id} has no part {anchor!r}")
            fields["sources"] = [origin]
        if type is None:
            return self._remember_routed(text, fields, allow_plaintext_secrets)
        record = self.new_record(type, text, source=origin, **fields)
        if type != "core" and not fields.get("mention_time"):
            def earlier(when: str) -> Record:
                return self.new_record(type, text, source=origin, **(fields | {"mention_time": when}))

            retried = self._remembered_before_midnight(lambda when: (earlier(when).id, earlier(when).path))
            if retried:
                return AddResult(commit=None, unchanged=[retried])
        return self.add([record], allow_plaintext_secrets=allow_plaintext_secrets)

    def forget(self, ids: Iterable[str], *, message: str | None = None, reason: str | None = None) -> "ForgetResult":
        """Remove records (and the graph statements only they support) in one commit.

        Each record's graph file goes with it; frames other records support keep their
        citations. A ``remember`` note no other record cites goes too. Each id removed leaves
        a tombstone (``tombstones/<id>.md``: who, when, ``reason``; never the text) that merges
        and the server hook honour. Git history keeps the removed files (docs/store.md,
        "Forgetting"). See :func:`memrepo.write.forget.forget`.

        Raises:
            NotFoundError: an id names nothing; nothing is written.
        """
        from memrepo.write.forget import forget

        return forget(self.ctx, ids, message=message, reason=reason)

    def forget_undo(self, record_id: str) -> str:
        """Record an explicit undo of a forget in its tombstone (``memrepo forget --undo ID``); the commit id.

        The record is not restored: add it again to bring it back. See :func:`memrepo.write.forget.undo`.
        """
        from memrepo.write.forget import undo

        return undo(self.ctx, record_id)

    def _remembered_before_midnight(self, at: Callable[[str], tuple[str, str]]) -> str | None:
        """Id of the same input remembered moments ago, on the day before (a retry across midnight UTC).

        Ids are a function of the input and its mention *day*, so retrying a write whose commit landed
        writes nothing new, except when midnight passed in between: for the first
        :data:`RETRY_SECONDS` of a day the id the input had the day before is checked too.
        """
        from datetime import timedelta

        now = datetime.fromisoformat(now_iso())
        before = now - timedelta(seconds=RETRY_SECONDS)
        if before.date() == now.date():
            return None
        item_id, path = at(before.isoformat())
        return item_id if self.snapshot.exists(path) else None

    def _remember_routed(self, text: str, fields: dict[str, Any], allow_plaintext_secrets: bool = False) -> AddResult:
        from memrepo.write.ingest import note_source, remember_routed

        if fields.get("label") is not None:
            raise RecordError("label: only core blocks have a label (give the type core)")
        given = fields.pop("mention_time", None)
        mention_time = rec.check_time(given or now_iso(), "mention_time")
        source = note_source(self.settings, text, mention_time)
        # The same input remembered already (a retry of a write whose commit landed): no model call and
        # no second set of records (a model's second answer need not give the same records).
        if self.snapshot.exists(source.path):
            return self._already_remembered(source.id)
        if not given:
            retried = self._remembered_before_midnight(
                lambda when: ((s := note_source(self.settings, text, rec.check_time(when, "mention_time"))).id, s.path))
            if retried:
                return self._already_remembered(retried)
        if fields.get("event_time") is not None:
            rec.check_time(fields["event_time"], "event_time", interval=True)
        overrides = {k: fields[k] for k in ("event_time", "actor", "status", "sources") if fields.get(k) is not None}
        backend = self.model_backend()
        try:
            return remember_routed(self.ctx, text, backend=backend, mention_time=mention_time, overrides=overrides,
                                   allow_plaintext_secrets=allow_plaintext_secrets)
        finally:
            backend.close()

    def _already_remembered(self, source_id: str) -> AddResult:
        """A retried routed write: nothing to commit, but the graph step of a run killed after its
        commit is caught up, so the rerun converges to what an uninterrupted run leaves."""
        from memrepo.write.hooks import run_after_write

        return AddResult(commit=None, unchanged=[source_id], warnings=run_after_write(self.ctx, []))

    def model_backend(self) -> "Backend":
        """The model backend the settings ask for (offline without an endpoint); usage goes to ``memrepo stats``."""
        return self.ctx.backend()

    def ingest(self, paths: Iterable[str | os.PathLike], *, mention_time: str | None = None,
               progress: Any = None, backend: "Backend | None" = None,
               allow_plaintext_secrets: bool = False, parsed: "list[ParsedFile] | None" = None) -> "IngestResult":
        """Ingest conversations, documents and task sessions: one commit per source with all its records.

        Every file is checked before anything is committed; sources already present are skipped.
        With no vault key, input holding a secret is refused before any commit unless
        ``allow_plaintext_secrets``. ``parsed``: the files as :func:`memrepo.write.ingest.parse_all` read them
        (the CLI reads them first to size its progress bar). See :func:`memrepo.write.ingest.ingest`.
        """
        from memrepo.write.ingest import ingest

        own = backend is None
        backend = backend or self.model_backend()
        start = self.store.head()
        try:
            result = ingest(self.ctx, paths, backend=backend, mention_time=mention_time, progress=progress,
                            allow_plaintext_secrets=allow_plaintext_secrets, parsed=parsed)
        finally:
            if own:
                backend.close()
        # The source commits and the graph commits the after-ingest steps made after each of them.
        result.commits = self._commits_since(start) or result.commits
        return result

    def _commits_since(self, start: bytes | None) -> list[str] | None:
        """Commits on the current branch after ``start`` along first parents, oldest first.

        None if ``start`` is not on that chain (the branch was reset meanwhile). A commit another
        writer landed on the branch meanwhile is counted too.
        """
        out: list[str] = []
        tip = self.store.head()
        while tip is not None and tip != start:
            info = self.store.log(rev=tip.decode(), limit=1)[0]
            out.append(info.id)
            tip = info.parents[0].encode() if info.parents else None
        return out[::-1] if tip == start else None

    def model_stats(self) -> dict[str, Any]:
        """Model calls, input/output tokens and seconds per role, accumulated in this repository."""
        from memrepo.llm import STATS_FILE, read_stats
        from memrepo.llm.stats import as_dict

        return as_dict(read_stats(self.store.state_dir / STATS_FILE))

    def repair(self) -> list[str]:
        """Repair what interrupted writes left behind (``memrepo doctor --fix``); messages of what was done.

        Brings work-tree files and index entries that are stale copies of committed content back to HEAD
        (never an uncommitted edit), completes pending syncs, removes stale Git locks and temporary files,
        repairs the Git control files that need no guess (:mod:`memrepo.store.control`; a missing or garbled
        branch is only reported) and rebuilds every damaged derived index.
        """
        from memrepo.hooks import outdated_hooks
        from memrepo.resources import data_dir
        from memrepo.store import control
        from memrepo.store.recovery import repair

        messages = control.repair(self.store)  # HEAD, packed-refs, the Git index: what needs no guess
        if control.ref_damage(self.store.git_dir, bare=self.store.bare) is not None:
            return messages  # a branch that points nowhere: nothing may commit until it is restored (doctor says how)
        if not self.store.bare:  # before the work tree is brought to HEAD: a half-merge's index is not stale
            from memrepo.team.sync import repair_merge

            with self.store.write_lock():
                finished = repair_merge(self.root)
                if finished:
                    self._graph_catch_up()  # what the finished merge brought in gets its graph files
                messages += finished
        messages += repair(self.store)
        outdated = outdated_hooks(self.store, data_dir("hooks"))
        if outdated:
            for name, python in outdated.items():
                _install_hooks(self.store, data_dir("hooks"), python, names=(name,))
            messages.append(f"reinstalled the Git hooks {', '.join(outdated)} (the shipped ones changed)")
        messages += _install_merge_driver(self.store, None)
        return messages + self._repair_indexes()

    def _repair_indexes(self) -> list[str]:
        """Every derived index checked file by file and what is damaged rebuilt (``reindex``'s check); what was done."""
        from memrepo.index import update_indexes

        try:
            report = update_indexes(self.ctx, check=True)
        except MemrepoError as exc:  # an embedding endpoint down, say: the other repairs stand
            return [f"the derived indexes were not checked ({exc}); `memrepo reindex` retries"]
        return [m for m in report.messages if "rebuilding" in m or "starting an empty one" in m]

    def doctor(self, *, notes: bool = False) -> list["Problem"]:
        """Every problem found in the repository (empty when healthy); with ``notes``, also what is worth saying
        but is not a fault (``Problem.note``: encrypted records with no key to check them, say)."""
        from memrepo.doctor import check_control, check_repository

        problems, blocked = check_control(self.store)
        if blocked:  # HEAD resolves to no commit: every other check would read an empty tree and mislead
            return problems
        try:
            view = self.at(None)  # one fixed commit for every check
        except MemrepoError as exc:  # HEAD's commit cannot be read: check an empty tree (the Git object check walks every ref)
            problems.append(Problem(".git", f"HEAD cannot be read: {exc}"))
            view = MemoryView(self.store, self.store.snapshot(b""), self.settings, self.ctx.capabilities)
        problems += check_repository(view)
        return [p for p in problems if notes or not p.note]

    # --- derived indexes (memrepo/index, DESIGN.md §5) ------------------------

    def search(
        self, query: str, type: str | None = None, k: int = 10, at: str | None = None, sources: bool = False,
        *, progress: Any = None, notify: Any = None,
    ) -> list["Hit"]:
        """Hybrid full-text + vector search over records (and source parts with ``sources``).

        Indexes behind the commit read are caught up first; ``notify`` receives messages
        such as a rebuilt corrupt index, ``progress(label, total)`` drives a progress bar.
        """
        from memrepo.index.search import search

        return search(self.store, self.settings, query, type, k, at, sources, progress=progress, notify=notify)

    def reindex(self, *, full: bool = False, progress: Any = None, notify: Any = None) -> "UpdateReport":
        """Bring every derived index to HEAD; ``full`` throws them away and rebuilds them."""
        from memrepo.index import update_indexes

        return update_indexes(self.ctx, progress=progress, full=full, notify=notify, check=True)

    def index_status(self) -> list[dict[str, Any]]:
        """Each derived index (``ctx.capabilities.indexes``): the commit it reflects and whether that is HEAD.

        Returns:
            One dict per index: ``index``, ``commit`` (None if missing or unreadable),
            ``current`` (it reflects HEAD), ``schema``, ``generation``.
        """
        from memrepo.index import Indexes

        head = self.store.head()
        tip = head.decode() if head else None
        indexes = Indexes(self.store, self.settings, table=self.ctx.capabilities.indexes)
        try:
            out = []
            for name in indexes.names:
                state = indexes.state(name)
                out.append({
                    "index": name,
                    "commit": state.commit if state else None,
                    "current": state is not None and state.commit == tip,
                    "schema": state.schema if state else None,
                    "generation": state.generation if state else None,
                })
            return out
        finally:
            indexes.close()

    # --- the provenance hypergraph (memrepo/graph, DESIGN.md §2-3) --------------

    def index_graph(self, *, progress: Any = None, backend: "Backend | None" = None) -> "IndexGraphResult":
        """Extract and commit graph files for every episodic/semantic record that has none (catch-up).

        Fail-soft: a record that cannot be indexed is reported in ``failed`` and retried next time.
        ``progress(done, total)`` is called after each record.
        """
        from memrepo.graph.build import index_graph

        return index_graph(self.ctx, backend=backend, progress=progress)

    def graph_anchor(self, name: str, *, rev: str | None = None) -> "AnchorView":
        """The anchor called ``name`` (matched by its key κ): canonical name, type, aliases, rows, frames."""
        from memrepo.graph.query import graph_anchor

        return graph_anchor(self.ctx, name, rev=rev)

    def graph_frames(self, anchor: str | None = None, predicate: str | None = None, *, cited: str | None = None,
                     rev: str | None = None, limit: int | None = 240) -> list["FrameInfo"]:
        """Frames by anchor name, predicate (comma-separated) and/or cited record id; each with its citations."""
        from memrepo.graph.query import graph_frames

        return graph_frames(self.ctx, anchor=anchor, predicate=predicate, cited=cited, rev=rev, limit=limit)

    def graph_frame(self, iri: str, *, rev: str | None = None) -> "FrameInfo":
        """One frame by its IRI, with every citation the union of graph files gives it.

        Raises:
            NotFoundError: if the graph has no such frame.
        """
        from memrepo.graph.reader import open_reader

        with open_reader(self.store, self.settings, rev) as reader:
            frame = reader.frame(iri)
        if not frame.arms and not frame.citations:
            raise NotFoundError(f"no frame {iri!r} in the graph")
        return frame

    def graph_stats(self, *, rev: str | None = None) -> dict[str, int]:
        """Size of the graph index: files, anchors, frames, arms, citations, merged anchors, problems."""
        from memrepo.graph.reader import open_reader

        with open_reader(self.store, self.settings, rev) as reader:
            return reader.counts()

    def graph_beliefs(self, anchor: str, *, rev: str | None = None) -> list[dict[str, Any]]:
        """An anchor's (by IRI or name) beliefs over time: each one-value relation's frames with their validity
        interval and citations (:func:`memrepo.graph.beliefs.timeline`)."""
        from memrepo.graph.beliefs import timeline
        from memrepo.graph.reader import open_reader

        with open_reader(self.store, self.settings, rev) as reader:
            found = [anchor] if anchor.startswith("urn:memrepo:anchor:") else reader.find_anchors(anchor)[:1]
            return timeline(reader, found[0], self.store.snapshot(rev), self.settings.namespace) if found else []

    def graph_anchor_names(self, *, rev: str | None = None) -> list[tuple[str, str]]:
        """(canonical name, entity type) of every anchor, in one pass over the graph index."""
        from memrepo.graph.reader import open_reader

        with open_reader(self.store, self.settings, rev) as reader:
            return reader.anchor_names()

    def graph_hubs(self, *, limit: int = 12, rev: str | None = None) -> list["AnchorBrief"]:
        """The ``limit`` most connected anchors (most records mentioning them first), for a first picture."""
        from memrepo.graph.query import graph_hubs

        return graph_hubs(self.ctx, limit=limit, rev=rev)

    def graph_neighbours(self, name: str, *, offset: int = 0, limit: int = 8, frames: int = 2,
                         rev: str | None = None) -> "Neighbourhood":
        """One page of the anchor's neighbours, ranked by shared frames, each with its first ``frames`` of them.

        Raises:
            NotFoundError: if no anchor has that name.
        """
        from memrepo.graph.query import graph_neighbours

        return graph_neighbours(self.ctx, name, offset=offset, limit=limit, frames=frames, rev=rev)

    def graph_export(self, format: str = "ttl", *, rev: str | None = None) -> str:
        """The union of the graph files as Turtle (``ttl``), N-Triples (``nt``) or JSON-LD (``jsonld``)."""
        from memrepo.graph.query import graph_export

        return graph_export(self.ctx, format, rev=rev)

    def graph_sparql(self, query: str, *, rev: str | None = None, timeout: float | None = None,
                     max_rows: int | None = None) -> "SparqlResult":
        """Run a SPARQL query over the union graph (rdflib), under a time and a result-size limit
        (defaults: :data:`memrepo.graph.query.SPARQL_TIMEOUT`, :data:`~memrepo.graph.query.SPARQL_MAX_ROWS`)."""
        from memrepo.graph.query import SPARQL_MAX_ROWS, SPARQL_TIMEOUT, graph_sparql

        return graph_sparql(self.ctx, query, rev=rev, timeout=SPARQL_TIMEOUT if timeout is None else timeout,
                            max_rows=SPARQL_MAX_ROWS if max_rows is None else max_rows)

    # --- the read path (memrepo/read, DESIGN.md §3 "Read path", "Answer") ------

    def recall(self, question: str, *, rev: str | None = None, types: Iterable[str] | None = None) -> "RecallResult":
        """Bounded evidence for ``question``: graph facts with cited ids and fused records (see memrepo.read.recall)."""
        from memrepo.read.recall import recall

        return recall(self.store, self.settings, question, at=rev, types=types)

    def ask(self, question: str, *, rev: str | None = None, types: Iterable[str] | None = None) -> "Answer":
        """Answer ``question`` with the answering agent (recalls, rule-based check, one rewrite at most)."""
        from memrepo.read.answer import ask

        backend = self.model_backend()
        try:
            return ask(lambda q: self.recall(q, rev=rev, types=types), question, backend=backend)
        finally:
            backend.close()

    # --- semantic AutoDream and review branches (memrepo/dream/) ---------------

    def dream(self, *, final: bool = False, apply: bool = False, backend: "Backend | None" = None,
              now: str | None = None, caps: dict[str, int] | None = None, progress: Any = None) -> "DreamResult":
        """Semantic AutoDream over the frontier: merges proposed as one decision file on a ``dream/...`` branch.

        ``final`` runs the final round (cap 120, plus never-used anchors, then a repair round of 60);
        ``apply`` merges the branch into the current branch at once. See :func:`memrepo.dream.run.dream`.
        """
        from memrepo.dream.run import dream

        with self.ctx.model(backend) as model:
            return dream(self.ctx, backend=model, final=final, apply=apply, now=now, caps=caps, progress=progress)

    def dream_skills(self, *, backend: "Backend | None" = None, now: str | None = None,
                     caps: dict[str, int] | None = None, progress: Any = None) -> "SkillsResult":
        """Procedural AutoDream: distill pending task sessions and propose skill edits on a ``dream/skills-...``
        branch (one commit; the current branch does not move). See :func:`memrepo.dream.skills.dream_skills`."""
        from memrepo.dream.run import iso_time
        from memrepo.dream.skills import dream_skills

        own = backend is None
        backend = backend or self.model_backend()
        try:
            return dream_skills(self.store, self.settings, backend=backend, now=iso_time(now), caps=caps,
                                author=self.commit_author, progress=progress)
        finally:
            if own:
                backend.close()

    def skills_export(self, directory: str | os.PathLike, *, rev: str | None = None) -> list[str]:
        """Write the skills of the current branch (or ``rev``) to ``directory`` as an Agent Skills folder."""
        from memrepo.dream.skills import export_skills

        return export_skills(self.at(rev).snapshot if rev else self.snapshot, str(directory))

    def skill_show(self, slug: str, *, rev: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
        """A skill of the current branch (or ``rev``) and the runs its steps rest on, with their quotes."""
        from memrepo.dream.skills import show_skill

        return show_skill(self.store, self.at(rev).snapshot if rev else self.snapshot, slug)

    def review_list(self, *, unreviewable: bool = False) -> list["Review"]:
        """Open review branches (``dream/...`` not merged into the current branch), oldest first.

        Branches with neither a Dream decision file nor a skill change are left out unless ``unreviewable``.
        """
        from memrepo.dream.review import list_reviews

        return list_reviews(self.ctx, unreviewable=unreviewable)

    def review_show(self, branch: str) -> "Review":
        """One review branch: its proposed merges and rejections, with records of evidence from each side."""
        from memrepo.dream.review import show_review

        return show_review(self.ctx, branch)

    def sync(self, remote: str | None = None, *, progress: Any = None, notify: Any = None) -> "SyncResult":
        """Fetch, merge and push (never force), then bring the indexes up to what was merged.

        Raises:
            SyncConflict: a text conflict stopped the merge (the files are named; it is left in progress).
            RepositoryError: no remote, uncommitted changes, a push the remote refused...
        """
        from memrepo.team.sync import sync

        from memrepo.dream.review import rejected_branch
        from memrepo.views.quest import fold

        fold(self.store, author=self.commit_author)  # Quest read/resolve counts of the local log (docs/views.md)
        with self.store.write_lock():  # no memrepo write of this clone runs during the fetch, merge and push
            self.store.refuse_during_merge()
            self._refuse_forgotten_at_head()
            self._graph_catch_up(notify)  # a hand edit committed with plain git: its graph file goes with the push
            result = sync(self.root, remote, notify=notify, settled=lambda name: rejected_branch(self.ctx, name),
                          merged=lambda: self._graph_catch_up(notify))
            if result.fetched:
                result.indexes = self.reindex(progress=progress, notify=notify).to_dict()
        if result.fetched:
            self.store.notices.extend(self._pulled_settings_notices())
        return result

    def _pulled_settings_notices(self) -> list[str]:
        """What a ``memrepo.toml`` just merged asks that this clone does not follow (its endpoints), said by the
        sync that brought it rather than by the next command."""
        from memrepo.settings import SettingsError

        said = {item.message() for item in self.settings.ignored}
        try:
            pulled = load_settings(self.root, state_dir=self.store.state_dir)
        except SettingsError as exc:
            return [f"the merged memrepo.toml cannot be used: {exc}"]
        return [item.message() for item in pulled.ignored if item.message() not in said]

    def _refuse_forgotten_at_head(self) -> None:
        """Raise before a sync if HEAD holds an id an active tombstone forgot (remembered again, or kept by a
        plain `git merge`): the server would refuse the push, so this clone says so first, with the way out."""
        from memrepo.write.forget import forgotten_present

        back = forgotten_present(self.store.snapshot())
        if back:
            path, message = back[0]
            more = f" (and {len(back) - 1} more)" if len(back) > 1 else ""
            raise RepositoryError(f"{path}: {message}{more}; nothing was synced (the server refuses a push that "
                                  "brings a forgotten id back)")

    def _graph_catch_up(self, notify: Any = None) -> None:
        """The graph step after a merge (records a teammate added or edited get their graph files); fail-soft:
        a failure is a notice, the merge stands and the next write catches up."""
        from memrepo.capabilities import resolve

        entry = self.ctx.capabilities.after_commit.get("graph")
        if entry is None:
            return
        try:
            resolve(entry)(self.ctx, [])
        except Exception as exc:  # the graph step is fail-soft everywhere (memrepo/write/hooks.py)
            if notify:
                notify(f"the graph catch-up after the merge failed ({type(exc).__name__}: {exc}); "
                       "`memrepo index` retries it")

    def review_approve(self, branch: str, *, force: bool = False, delete_remote: bool = False) -> str:
        """Merge the review branch into the current branch (a merge commit); returns its id.

        A branch rejected on the current branch (in any clone) is refused unless ``force``;
        ``delete_remote`` also deletes it on its remote.
        """
        from memrepo.dream.review import approve

        return approve(self.ctx, branch, force=force, delete_remote=delete_remote)

    def review_reject(self, branch: str, *, reason: str | None = None, delete_remote: bool = False) -> str:
        """Record the branch's merges as rejections on the current branch and delete it; returns the commit id."""
        from memrepo.dream.review import reject

        return reject(self.ctx, branch, reason=reason, delete_remote=delete_remote)

    def review_commits(self, branch: str, *, limit: int = 20) -> list[tuple[CommitInfo, list["FileChange"]]]:
        """What approving ``branch`` would merge: its commits not on the current branch, newest first,
        each with the unified diffs of the files it changed."""
        from memrepo.dream.review import review_commits

        return review_commits(self.ctx, branch, limit=limit)

    # --- history, for the viewer and reviews ----------------------------------

    def changes(self, commit: str, *, limit: int | None = None) -> list["FileChange"]:
        """The files ``commit`` changed, each with a unified diff against its first parent."""
        from memrepo.store.textdiff import file_changes

        commit_id = self.store.resolve(commit)
        if commit_id is None:
            raise NotFoundError(f"revision {commit!r} not found")
        return file_changes(self.store, commit_id.decode(), limit=limit)

    def commit_paths(self, commit: str) -> list[tuple[str, str]]:
        """(path, status) of each file ``commit`` changed against its first parent; status is added,
        modified or deleted. No file is read, so this is cheap (the viewer's "who wrote what")."""
        return [(path, "added" if old is None else "deleted" if new is None else "modified")
                for path, old, new in sorted(self.store.diff(commit))]

    def history(
        self, record_id: str, *, rev: str | None = None, limit: int | None = None, scan: int | None = None
    ) -> list[tuple[CommitInfo, list["FileChange"]]]:
        """Commits that touched the record's file, newest first, each with that file's diff.

        ``scan`` examines at most that many commits (newest first): about 1 ms each.
        """
        from memrepo.store.textdiff import file_changes, path_history

        path = self.at(rev).find_path(record_id)
        if path is None:
            raise NotFoundError(f"record {record_id!r} not found")
        commits = path_history(self.store, path, rev=rev, limit=limit, scan=scan)
        return [(c, file_changes(self.store, c.id, paths={path})) for c in commits]

    def branches(self) -> dict[str, str]:
        """Branch name (``main``, ``dream/...``) -> tip commit id, sorted by name."""
        heads = {ref.removeprefix("refs/heads/"): sha for ref, sha in self.store.branches().items()}
        return dict(sorted(heads.items()))

    def current_branch(self) -> str | None:
        """The branch HEAD points to, or None when HEAD is detached."""
        try:
            return self.store.branch_ref().decode().removeprefix("refs/heads/")
        except RepositoryError:
            return None

    # --- views: typed trees, Derivations, Environments, Quests (memrepo/views/, DESIGN.md §4) ------------------

    def place(self, target: str, data: bytes, *, mention_time: str | None = None,
              allow_plaintext_secrets: bool = False) -> tuple[str, str | None]:
        """Store a file at ``target`` in a typed tree (``ingest --to``); (path, commit or None if unchanged).

        Secrets in the file go to the vault, a pointer standing in their place (see :meth:`add`)."""
        from memrepo.views.locators import place

        when = mention_time or now_iso()
        data, entries = self._seal_placed(target, data, when, allow_plaintext_secrets)
        path, commit = place(self.store, target, data, mention_time=when, namespace=self.settings.namespace,
                             author=self.commit_author)
        self._vault_placed(path, entries)
        return path, commit

    def _seal_placed(self, target: str, data: bytes, mention_time: str,
                     allow_plaintext_secrets: bool) -> tuple[bytes, list[Record]]:
        from memrepo.write.ingest import seal_placed

        return seal_placed(self.ctx, target, data, mention_time=mention_time,
                           allow_plaintext_secrets=allow_plaintext_secrets)

    def _vault_placed(self, path: str, entries: list[Record]) -> None:
        """Commit the vault entries of a placed file's secrets (after the file: a refused placement adds none)."""
        if entries:
            self.add(entries, message=f"Vault entries for ingest --to {path}")

    def ingest_to(self, file: str | os.PathLike, target: str, *, replace: bool = False,
                  mention_time: str | None = None, allow_plaintext_secrets: bool = False) -> "Placed":
        """``ingest --to``: store the text file ``file`` at ``target``; a different file already there is
        replaced only with ``replace`` (``Placed.replaced`` names it). See :func:`memrepo.views.locators.place_file`.

        Raises:
            NotFoundError: ``file`` does not exist.
            RecordError: ``file`` is binary or not UTF-8, or does not parse at ``target``.
            RepositoryError: ``target`` holds a different file and ``replace`` is false.
        """
        from memrepo.views.locators import place_file, read_input

        data = read_input(os.fspath(file))
        when = mention_time or now_iso()
        # Secrets go to the vault, as on every write path; with no key the file is refused (VaultKeyError).
        data, entries = self._seal_placed(target, data, when, allow_plaintext_secrets)
        placed = place_file(self.store, target, data, mention_time=when, namespace=self.settings.namespace,
                            author=self.commit_author, replace=replace)
        self._vault_placed(placed.path, entries)
        return placed

    def tree_files(self, locator: str) -> list["Input"]:
        """Files under a folder locator (``rules/``, ``rules/python/@main~2``), as (path, generation, blob)."""
        from memrepo.views.locators import list_tree, parse_locator

        return list_tree(self.store, parse_locator(locator))

    def cat(self, locator: str) -> tuple["Input", bytes]:
        """The file a locator names and its bytes."""
        from memrepo.views.locators import parse_locator, read

        return read(self.store, parse_locator(locator))

    def derive(self, locators: list[str], *, intent: str, summarize: bool = False) -> tuple["Derivation", "Quest"]:
        """Resolve a selection into a Derivation and record the resolve in the Quest of ``intent``."""
        from memrepo.views.quest import build

        return build(self.store, locators, intent, summarize=summarize, author=self.commit_author)

    def env_compose(self, mounts: list[str], overrides: Iterable[str] = ()) -> "Environment":
        """Record the Environment binding Derivations at mount paths (``/python=D1``)."""
        from memrepo.views.env import compose

        with _OtherStores(self.store.root) as others:
            return compose(self.store, mounts, list(overrides), author=self.commit_author, open_store=others.get)

    def run_environment(self, env_id: str | None, project: str | os.PathLike) -> str | None:
        """The Environment id a run (``ask``, ``recall``) records: ``env_id`` (an id or unique prefix of an
        Environment of this memory) if given, else the one active in the project around ``project`` when that
        project's profile mounts this memory, else None.

        Raises:
            NotFoundError: ``env_id`` names no Environment of this memory.
            RecordError: the project's profile file is not valid.
        """
        from memrepo.views import profile

        if env_id is not None:
            return profile.find_environment(self.store, env_id, project)
        return profile.active_environment(project, self.store.root)

    def env_show(self, env_id: str, pins: dict[str, str] | None = None) -> tuple["Environment", list, list]:
        """An Environment, the files it mounts (each with the rule that picked it) and the files left out."""
        from memrepo.views.env import load_env, table

        env = load_env(self.store, env_id)
        with _OtherStores(self.store.root) as others:
            placed, left_out = table(self.store, env, pins, open_store=others.get)
        return env, placed, left_out

    def quests(self) -> list["Quest"]:
        """Every Quest, with whether it is stale."""
        from memrepo.views import quest

        return quest.with_staleness(self.store, quest.quests(self.store))

    def quest(self, slug: str) -> "Quest":
        from memrepo.views import quest

        return quest.with_staleness(self.store, [quest.get(self.store, slug)])[0]

    def quest_search(self, text: str) -> list[tuple["Quest", list[str]]]:
        from memrepo.views import quest

        return quest.search(self.store, text)

    def quest_plan_refresh(self, slug: str) -> tuple["Quest", str, dict[str, list[str]]]:
        """What refreshing a Quest would change, before it is done."""
        from memrepo.views import quest

        return quest.plan_refresh(self.store, slug)

    def quest_refresh(self, slug: str) -> tuple["Derivation", "Quest"]:
        from memrepo.views import quest

        return quest.refresh(self.store, slug, author=self.commit_author)


class _OtherStores:
    """Other memory repositories an Environment binds, opened by path relative to this one."""

    def __init__(self, root: Path):
        from memrepo.views.profile import Stores

        self._stores = Stores(root)
        self.get = self._stores.opener(str(root))

    def __enter__(self) -> "_OtherStores":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stores.close()


def profile_bind(project: str | os.PathLike, memory: str, target: str) -> "BindingEntry":
    """Bind a project folder to an Environment or Quest of a memory repository (``memrepo-profile.toml``)."""
    from memrepo.views.profile import bind

    return bind(project, memory, target)


def profile_activate(project: str | os.PathLike) -> "Activation":
    """Materialize the current binding as plain files under ``.memory/`` (swapped in with one rename)."""
    from memrepo.views.profile import activate

    return activate(project)


def profile_plan_upgrade(project: str | os.PathLike) -> "UpgradePlan":
    """What ``profile upgrade`` would change under ``.memory/``, without writing anything."""
    from memrepo.views.profile import plan_upgrade

    return plan_upgrade(project)


def profile_upgrade(project: str | os.PathLike) -> tuple["UpgradePlan", "Activation | None"]:
    """Re-resolve the bound Quest or Environment at the memory's latest, bind it and swap ``.memory/``."""
    from memrepo.views.profile import upgrade

    return upgrade(project)


def profile_rollback(project: str | os.PathLike) -> "Activation":
    from memrepo.views.profile import rollback

    return rollback(project)


def profile_status(project: str | os.PathLike) -> dict[str, Any]:
    from memrepo.views.profile import status

    return status(project)



def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _install_merge_driver(store: GitStore, python: str | None) -> list[str]:
    """The ``memrepo`` merge driver in a clone: its tracked ``.gitattributes`` line (committed when missing)
    and ``merge.memrepo.driver`` in ``.git/config``; messages of what was done."""
    import sys

    from memrepo.team import mergedriver

    if store.bare:
        return []
    notes = []
    current = (store.snapshot().read(mergedriver.ATTRIBUTES_FILE) or b"").decode("utf-8", "replace")
    missing = mergedriver.missing_lines(current)
    if missing:
        store.commit({mergedriver.ATTRIBUTES_FILE: mergedriver.attributes_text(current).encode()},
                     "Merge graph files with memrepo's merge driver\n\n"
                     f"{', '.join(missing)} (memrepo init)")
        notes.append(f"committed {mergedriver.ATTRIBUTES_FILE}: {', '.join(missing)}")
    hooks = _hooks_python(store)
    if mergedriver.configure(store.root, python or hooks or sys.executable):
        notes.append("set git config merge.memrepo.driver (a plain `git pull` merges graph files as "
                     "`memrepo sync` does)")
    return notes


def _hooks_python(store: GitStore) -> str | None:
    """The Python the installed post-merge hook runs, if it still exists."""
    import re

    text = _read_text(store.git_dir / "hooks" / "post-merge")
    found = re.search(r'^python="([^"\n]+)"$', text, re.M)
    return found.group(1) if found and os.access(found.group(1), os.X_OK) else None


def _install_hooks(store: GitStore, hooks_dir: Path, python: str | None, names: tuple[str, ...] = HOOKS) -> None:
    import sys

    target = store.git_dir / "hooks"
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = (hooks_dir / name).read_text(encoding="utf-8").replace("@PYTHON@", python or sys.executable)
        path = target / name
        if name == "pre-commit" and path.exists() and "memrepo" not in _read_text(path):
            continue  # the user's own pre-commit hook (linters, say) is never replaced
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)


from memrepo.doctor import Problem  # noqa: E402  (re-exported for callers)
from memrepo.store.textdiff import FileChange  # noqa: E402  (returned by changes/history)
from memrepo.team.sync import SyncResult  # noqa: E402  (returned by sync)


def damaged_repository(exc: BaseException) -> MemrepoError | None:
    """The explained error a low-level failure stands for (a missing or damaged Git object, a damaged index
    database, set aside to be rebuilt), or None."""
    from memrepo.index.live import damaged_database
    from memrepo.store.objects import object_error

    return object_error(exc) or damaged_database(exc)
