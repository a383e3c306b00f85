"""The `memrepo` command line: each command parses, makes one library call, renders.

Only this module (and the viewer) reads environment variables. Errors the library
explains (MemrepoError) become a message on stderr and exit status 1; usage
errors exit 2. Heavy libraries are imported inside commands so that
`memrepo --help` starts fast.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from functools import wraps
from typing import Any, Callable

import click

TYPES = ("core", "episodic", "semantic", "procedural", "resource", "vault")


def _fail(message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(1)


def explained(func: Callable) -> Callable:
    """Turn library errors into a message and exit status 1 (the one place that does it)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from memrepo.errors import MemrepoError

        try:
            return func(*args, **kwargs)
        except MemrepoError as exc:
            _fail(str(exc))
        except Exception as exc:  # a damaged object read below the store's own checks (dulwich's walker, say)
            from memrepo.api import damaged_repository

            error = damaged_repository(exc)
            if error is None:
                raise
            _fail(str(error))

    return wrapper


def open_repo(ctx: click.Context):
    from memrepo.api import MemoryRepo

    obj = ctx.ensure_object(dict)
    if obj.get("repo") is None:
        repo = obj["repo"] = MemoryRepo.open(obj.get("path"), environ=os.environ)
        # Fault injection for tests/test_faults.py and benchmarks/crash.py: kill this process at these points.
        repo.store.kill_at = frozenset(filter(None, os.environ.get("MEMREPO_KILL_AT", "").split(",")))
        _print_notices(repo)  # what opening repaired (the work tree of an interrupted write)

        def close() -> None:
            _print_notices(repo)
            repo.close()

        ctx.call_on_close(close)
    return obj["repo"]


def _print_notices(repo) -> None:
    """Work done besides what was asked, or a later step that failed after a commit landed: on stderr."""
    while repo.store.notices:
        click.echo(f"memrepo: {repo.store.notices.pop(0)}", err=True)


def _revision(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--at: an empty revision is refused (it would otherwise read HEAD, which no one asked for)."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty revision names no commit (give a commit, branch, tag or main~3)")
    return value


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--repo",
    "path",
    envvar="MEMREPO_REPO",
    type=click.Path(file_okay=False),
    help="Memory repository to use (default: the one containing the current directory).",
)
@click.version_option(package_name="memrepo")
@click.pass_context
def cli(ctx: click.Context, path: str | None) -> None:
    """memrepo: a memory repository for LLM agents, kept as plain files in Git.

    \b
    Examples:
      memrepo init memory && cd memory
      memrepo remember "Mia moved to Lisbon" --type semantic --event-time 2023-05-02
      memrepo list --type semantic
      memrepo show se-2023-05-02-1a2b3c4d
      memrepo log
      memrepo doctor
    """
    ctx.ensure_object(dict)
    ctx.obj["path"] = path


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--namespace", default="default", show_default=True, help="The user/agent this memory belongs to.")
@click.option("--bare", is_flag=True, help="Create a bare repository (for a shared remote).")
@explained
def init(path: str | None, namespace: str, bare: bool) -> None:
    """Create a memory repository at PATH (default: the --repo folder, else here).

    Writes the layout, memrepo.toml and a README in one commit and installs the
    Git hooks that keep indexes current. On an existing memory repository it
    says so and changes nothing.
    """
    from memrepo.api import MemoryRepo
    from memrepo.errors import RepositoryError

    path = path or click.get_current_context().find_root().ensure_object(dict).get("path") or "."
    try:
        repo = MemoryRepo.init(path, bare=bare, namespace=namespace)
    except RepositoryError as exc:
        if "already a memory repository" in str(exc):
            done = [] if bare else MemoryRepo.join(path)  # a clone: its hooks
            click.echo("\n".join(done) if done else str(exc))
            return
        raise
    with repo:
        joined = any("checked out" in n for n in repo.store.notices)
        _print_notices(repo)
        if joined:
            click.echo(f"Memory repository ready in {os.path.abspath(path)} (the remote's branch; hooks installed)")
        else:
            click.echo(f"Created memory repository in {os.path.abspath(path)}")


@cli.command()
@click.argument("text")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Memory type (default: the Meta Memory Manager picks).")
@click.option("--event-time", help="When it happened: ISO date, datetime or start/end interval.")
@click.option("--mention-time", help="When it was said (default: now).")
@click.option("--source", help="Where it came from (an origin string; part of the id).")
@click.option("--actor", help="Who did or said it.")
@click.option("--status", type=click.Choice(["done", "planned"]), help="Episodic only: planned or done.")
@click.option("--label", help="Core blocks (and required for them): the block's label (persona, human, ...).")
@click.option("--allow-plaintext-secrets", is_flag=True,
              help="With no vault key, commit secrets found in the input in plaintext instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
@explained
def remember(ctx: click.Context, text: str, type_: str | None, event_time: str | None, mention_time: str | None,
             source: str | None, actor: str | None, status: str | None, label: str | None,
             allow_plaintext_secrets: bool, as_json: bool) -> None:
    """Write TEXT as memory and commit it.

    Without --type the Meta Memory Manager routes TEXT to the memory types it
    updates (the model endpoint's, or the offline rules without one); TEXT is
    kept as a source that the records cite. With --type it becomes one record.
    A core block is edited in place: TEXT replaces the block's text, and the
    output says so with the length of the text replaced.

    Secrets (passwords, PINs, API keys and tokens, private keys, card numbers)
    go to the Knowledge Vault, encrypted, and a pointer stands where they were.
    With no vault key the write is refused unless --allow-plaintext-secrets.

    \b
    Examples:
      memrepo remember "Mia bought a Suica card" --event-time 2023-05-02
      memrepo remember "Likes hiking; vegetarian" --type core --label human
      echo -n "PIN 4321" | memrepo remember - --type vault
    """
    if text == "-":
        data = sys.stdin.buffer.read()
        from memrepo.records import check_text

        text = check_text(data)
    repo = open_repo(ctx)
    if type_ == "core" and not label:
        labels = sorted(path.rsplit("/", 1)[-1].removesuffix(".md") for path, _ in repo.record_files("core"))
        raise click.UsageError("--type core needs --label: the block to write (existing: "
                               f"{', '.join(labels) or 'none yet'}; a new label starts a new block)")
    fields = {k: v for k, v in dict(event_time=event_time, source=source, actor=actor, status=status,
                                     label=label, mention_time=mention_time).items() if v is not None}
    result = repo.remember(text, type=type_, allow_plaintext_secrets=allow_plaintext_secrets, **fields)
    if as_json:
        emit_json(result.to_dict())
    elif result.written:
        for record_id in result.written:
            click.echo(f"{record_id}  (commit {result.commit[:12]})")
            if record_id in result.replaced:
                what = f"core block {record_id.removeprefix('core-')!r}" if type_ == "core" else record_id
                click.echo(f"{what} replaced (was {result.replaced[record_id]} chars)")
    else:
        click.echo(f"{result.unchanged[0] if result.unchanged else 'input'}  (already remembered; nothing changed)")


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("-m", "--message", help="Commit message (default: Forget <ids>).")
@click.option("--reason", help="Why (one line), kept in the tombstones; never the forgotten text.")
@click.option("--undo", is_flag=True,
              help="Record an undo of the forget of each ID in its tombstone (the record is not restored).")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.pass_context
@explained
def forget(ctx: click.Context, ids: tuple[str, ...], message: str | None, reason: str | None, undo: bool,
           as_json: bool) -> None:
    """Remove records (and the graph statements only they support) in one commit.

    Each record's graph file goes with it; a frame that other records support
    keeps their citations. A `remember` note that no other record cites goes too;
    other sources stay (name a src-... id to forget one). Every id is checked
    first: an unknown id changes nothing. Each id removed leaves a tombstone,
    tombstones/<id>.md (who, when, --reason; never the text): `memrepo sync`
    keeps it forgotten when a teammate edited it meanwhile, and the server hook
    refuses a push that brings it back. `--undo ID` records an undo in the
    tombstone (which stays); it restores nothing: add the record again after.
    Git history still holds what was forgotten; docs/store.md says how to purge
    a value from history.

    \b
    Examples:
      memrepo forget se-2023-05-02-1a2b3c4d --reason "asked to forget her address"
      memrepo forget ep-2023-05-02-7f3a9c1e ep-2023-05-02-0b1c2d3e --json
      memrepo forget --undo se-2023-05-02-1a2b3c4d
    """
    if undo:
        if reason or message:
            raise click.UsageError("--undo takes only the ids (the undo is recorded in each tombstone)")
        repo = open_repo(ctx)
        commits = {record_id: repo.forget_undo(record_id) for record_id in ids}
        if as_json:
            emit_json({"undone": list(commits), "commits": list(commits.values())})
            return
        for record_id, commit in commits.items():
            click.echo(f"undid the forget of {record_id} (commit {commit[:12]}); it is not restored: "
                       "add it again to bring it back")
        return
    result = open_repo(ctx).forget(ids, message=message, reason=reason)
    if as_json:
        emit_json(result.to_dict())
        return
    if result.commit is None:
        click.echo("nothing to forget: already gone")
        return
    extra = f", {len(result.sources)} note source(s)" if result.sources else ""
    click.echo(f"forgot {len(result.removed)} id(s){extra} and {len(result.graph_files)} graph file(s) "
               f"(commit {result.commit[:12]})")
    for source_id in result.kept_sources:
        click.echo(f"note: source {source_id} still holds the text it was made from "
                   f"(`memrepo forget {source_id}` removes it)", err=True)
    click.echo("note: Git history still holds the removed files; see docs/store.md to purge them", err=True)


def _render_record(record, cited=None) -> str:
    from memrepo.records import dump_front_matter, front_matter

    lines = ["---", dump_front_matter(front_matter(record)).rstrip("\n"), "---"]
    if record.encrypted:
        from memrepo.vault import KEY_HELP

        lines.append(f"(encrypted: {KEY_HELP})")
    else:
        lines.append(record.text)
    for citation, title, text in cited or []:
        where = f" ({title})" if title else ""
        lines.append(f"\n> {citation}{where}\n> " + ("\n> ".join((text or "[missing]").splitlines())))
    return "\n".join(lines)


@cli.command()
@click.argument("record_id")
@click.option("--at", "rev", callback=_revision, help="Read as of this revision (commit, branch, tag, main~3).")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.option("--sources/--no-sources", default=True, help="Show the source parts the record cites.")
@click.pass_context
@explained
def show(ctx: click.Context, record_id: str, rev: str | None, as_json: bool, sources: bool) -> None:
    """Show one record: its front matter, text and the source parts it cites."""
    view = open_repo(ctx).at(rev)
    record = view.get(record_id)
    cited = view.cited_parts(record) if sources else []
    if as_json:
        data = record.to_dict()
        data["encrypted"] = record.encrypted
        data["cited"] = [{"citation": c, "source_title": t, "text": x} for c, t, x in cited]
        emit_json(data)
    else:
        click.echo(_render_record(record, cited))


@cli.command("list")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Only records of this type.")
@click.option("--since", help="Only records mentioned on or after this date.")
@click.option("--at", "rev", callback=_revision, help="Read as of this revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@click.pass_context
@explained
def list_(ctx: click.Context, type_: str | None, since: str | None, rev: str | None, as_json: bool) -> None:
    """List records, oldest first.

    A record whose Git object cannot be read does not hide the others: they are
    listed, each unreadable one is named on stderr, and the exit status is 1.
    """
    view = open_repo(ctx).at(rev)
    records = view.records(type=type_, since=since)
    for problem in view.skipped:
        click.echo(f"warning: skipped {problem}", err=True)
    if as_json:
        emit_json([r.to_dict() for r in records])
    else:
        _print_records(records)
    if view.unreadable:
        for problem in view.unreadable:
            click.echo(f"Error: {problem}", err=True)
        ctx.exit(1)


def _print_records(records: list) -> None:
    for r in records:
        when = r.event_time or r.mention_time[:10] or "unknown"
        summary = "(encrypted)" if r.encrypted and r.type == "vault" and not r.summary else r.summary
        click.echo(f"{r.id}  {r.type:<10} {when:<10}  {summary}")


@cli.command()
@click.argument("record_id", required=False)
@click.option("--at", "rev", callback=_revision, help="Start from this revision.")
@click.option("-n", "--limit", type=click.IntRange(1, 1_000_000), help="At most this many commits.")
@click.option("--json", "as_json", is_flag=True, help="Print the commits as JSON.")
@click.pass_context
@explained
def log(ctx: click.Context, record_id: str | None, rev: str | None, limit: int | None, as_json: bool) -> None:
    """History of one record, or of the whole repository, from Git."""
    commits = open_repo(ctx).log(record_id, rev=rev, limit=limit)
    if as_json:
        emit_json([c.to_dict() for c in commits])
        return
    for c in commits:
        when = datetime.fromtimestamp(c.time, timezone.utc).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{c.id[:12]}  {when}  {c.summary}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@click.option("--fix", is_flag=True, help="First repair what interrupted writes left: work tree and index behind "
              "HEAD, stale locks, temporary files.")
@click.pass_context
@explained
def doctor(ctx: click.Context, as_json: bool, fix: bool) -> None:
    """Check every file, citation, Git object and derived index; exit 1 if anything is wrong.

    Notes (encrypted records with no key to check them, records waiting for graph
    extraction) are shown but are not faults. --fix first repairs what interrupted
    writes left behind.
    """
    from memrepo.store.control import DamagedRepositoryError

    try:
        repo = open_repo(ctx)
    except DamagedRepositoryError as exc:  # a config Git cannot read: the repository cannot be opened to check more
        if as_json:
            emit_json({"ok": False, "problems": [{"path": exc.path, "message": exc.problem}], "notes": [], "fixed": []})
        else:
            click.echo(str(exc))
            click.echo("1 problem(s) found", err=True)
        sys.exit(1)
    repaired = repo.repair() if fix else []
    if not as_json:
        for message in repaired:
            click.echo(f"fixed: {message}")
    found = repo.doctor(notes=True)
    problems = [p for p in found if not p.note]
    notes = [p for p in found if p.note]
    if as_json:
        emit_json({"ok": not problems, "problems": [p.to_dict() for p in problems],
                   "notes": [p.to_dict() for p in notes], "fixed": repaired})
    else:
        for p in problems:
            click.echo(str(p))
        for p in notes:
            click.echo(f"note: {p}")
        click.echo("ok: no problems found" if not problems else f"{len(problems)} problem(s) found", err=bool(problems))
    if problems:
        sys.exit(1)


@cli.group()
def vault() -> None:
    """The Knowledge Vault's key."""


@vault.command()
@click.option("--file", "key_file", type=click.Path(dir_okay=False), help="Write the key to this file (mode 600).")
@explained
def keygen(key_file: str | None) -> None:
    """Create a new vault key. Keep it outside the repository; never commit it."""
    from memrepo.vault import generate_key

    key = generate_key()
    if key_file:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key + b"\n")
        click.echo(f"Wrote a new vault key to {key_file}; use it with: export MEMREPO_VAULT_KEY_FILE={key_file}")
    else:
        click.echo(key.decode())


@cli.group("settings")
def settings_group() -> None:
    """Where each setting comes from, and approving the endpoints memrepo.toml names.

    Endpoints and keys (base_url, api_key, the model cache) come from the
    environment or your user config ($XDG_CONFIG_HOME/memrepo/config.toml,
    default ~/.config/memrepo/config.toml). memrepo.toml is committed, so any
    teammate can change it: its endpoints are ignored, with a warning, until
    you approve them in this clone.
    """


@settings_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@click.pass_context
@explained
def settings_show(ctx: click.Context, as_json: bool) -> None:
    """Each effective setting, its value (keys shown as "(set)") and where it came from."""
    from memrepo.settings import describe_settings

    report = describe_settings(open_repo(ctx).settings)
    if as_json:
        emit_json(report)
        return
    for row in report["settings"]:
        value = "(none)" if row["value"] is None else row["value"]
        click.echo(f"{row['key']:<22} {value!s:<40} {row['source']}")
    for item in report["ignored"]:
        click.echo(f"ignored: {item['file']}: {item['key']} = {json.dumps(item['value'])} ({item['reason']}; "
                   "`memrepo settings approve` uses it)")


@settings_group.command("approve")
@click.option("--json", "as_json", is_flag=True, help="Print what was approved as JSON.")
@click.pass_context
@explained
def settings_approve(ctx: click.Context, as_json: bool) -> None:
    """Use in this clone the endpoints memrepo.toml names now.

    Records their values' hashes in .git/memrepo/approved-settings.json (never
    committed), replacing earlier approvals. A value a teammate changes later
    is ignored again until you approve it again. Check the values first
    (`memrepo settings show`): your API key is sent to them.
    """
    approved = open_repo(ctx).approve_settings()
    if as_json:
        emit_json({"approved": [{"key": key, "value": value} for key, value in approved]})
    elif not approved:
        click.echo("memrepo.toml names no endpoint: nothing to approve (earlier approvals are withdrawn)")
    for key, value in approved if not as_json else ():
        click.echo(f"approved {key} = {json.dumps(value)} for this clone")


@cli.command(hidden=True)
@click.argument("name")
@click.argument("args", nargs=-1)
@click.pass_context
def hook(ctx: click.Context, name: str, args: tuple[str, ...]) -> None:
    """Entry point of the installed Git hooks (post-commit, post-merge, post-checkout in the background;
    pre-commit in the foreground, its exit status letting the commit go on or not)."""
    from memrepo.hooks import pre_commit, run_hook

    if name == "pre-commit":  # opens the store without the repair MemoryRepo.open does: it decides whether it may
        from memrepo.errors import MemrepoError

        try:
            go_on, messages = pre_commit(ctx.obj.get("path") or ".", args[0] if args and args[0] else None)
        except MemrepoError as exc:
            go_on, messages = False, [f"memrepo pre-commit: {exc}"]
        for message in messages:
            click.echo(message, err=True)
        sys.exit(0 if go_on else 1)
    try:
        run_hook(open_repo(ctx).ctx, name, args)
    except Exception as exc:  # the hook script keeps this message and the next Git command shows it
        click.echo(f"memrepo hook {name}: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)


@cli.command("merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path")
@explained
def merge_driver(base: str, ours: str, theirs: str, path: str) -> None:
    """Git's merge driver for graph files (.gitattributes `graph/** merge=memrepo`): merges THEIRS into OURS
    in place as `memrepo sync` would; exit 0 merged, 1 left in conflict."""
    from memrepo.team.mergedriver import merge_files

    if merge_files(base, ours, theirs, path):
        click.echo(f"memrepo merge-driver: {path} could not be merged automatically; conflict markers left", err=True)
        sys.exit(1)


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="Port to serve on.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--allow-review", is_flag=True, help="Let the viewer approve or reject review branches.")
@click.pass_context
@explained
def view(ctx: click.Context, path: str | None, port: int, host: str, allow_review: bool) -> None:
    """Open the Streamlit viewer on the memory repository at PATH (default: here).

    Serves until interrupted and prints its address. Read-only unless
    --allow-review is given.

    \b
    Examples:
      memrepo view
      memrepo view ~/memory --port 8600
    """
    from memrepo.api import MemoryRepo
    from viewer.launch import viewer_command

    with MemoryRepo.open(path or (ctx.find_object(dict) or {}).get("path")) as repo:  # fails clearly if not one
        root = str(repo.root)
    command, env = viewer_command(root, host=host, port=port, allow_review=allow_review, environ=os.environ)
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    click.echo(f"memrepo viewer for {root}\n  http://{shown}:{port}\n(press Ctrl+C to stop)")
    sys.stdout.flush()
    sys.stderr.flush()
    # Become the Streamlit server, so that signals (Ctrl+C, kill) reach it directly.
    os.execve(command[0], command, env)


_OPEN_BARS: list[Any] = []  # progress bars drawn on stderr right now (a message must not run into one)


def _index_progress(label: str, total: int):
    """A progress bar on stderr for index builds (silent for small updates)."""
    from contextlib import contextmanager, nullcontext

    class _Quiet:
        def update(self, n: int) -> None:
            pass

    if total < 50:
        return nullcontext(_Quiet())

    @contextmanager
    def drawn():
        with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True) as bar:
            _OPEN_BARS.append(bar)
            try:
                yield bar
            finally:
                _OPEN_BARS.remove(bar)

    return drawn()


class _StepBar:
    """A progress bar on stderr drawn once the work says how much there is (``step(done, total)``)."""

    def __init__(self, label: str):
        self.label = label
        self.bar: Any = None

    def step(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr, show_pos=True)
            self.bar.__enter__()
        self.bar.update(1)

    def __enter__(self) -> "_StepBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)



def _index_notify(message: str) -> None:
    """A message during index work, on its own line even while a progress bar is drawn (the bar redraws below)."""
    if _OPEN_BARS and sys.stderr.isatty():
        click.echo("", err=True)  # the bar's line has no newline yet
    click.echo(message, err=True)


@cli.command()
@click.argument("query")
@click.option("--type", "type_", type=click.Choice((*TYPES, "source")), help="Only records of this type (or source parts).")
@click.option("-k", "k", default=10, show_default=True, type=click.IntRange(1, 1000), help="Number of results.")
@click.option("--at", "rev", callback=_revision, help="Search as of this revision (commit, branch, tag, main~3).")
@click.option("--sources", is_flag=True, help="Also search the raw source parts (conversation turns, chunks).")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@click.pass_context
@explained
def search(ctx: click.Context, query: str, type_: str | None, k: int, rev: str | None, sources: bool, as_json: bool) -> None:
    """Hybrid search: full text (Tantivy) and record vectors, scores fused.

    Indexes behind the commit searched are brought up to date first.

    \b
    Examples:
      memrepo search "Suica card"
      memrepo search "where does Jonas live" --type semantic -k 3
      memrepo search bike --at main~3 --json
      memrepo search "photo of the beach" --sources
    """
    repo = open_repo(ctx)
    hits = repo.search(query, type_, k, rev, sources, progress=_index_progress, notify=_index_notify)
    from memrepo.views.profile import pinned_first

    hits = pinned_first(os.getcwd(), repo.store, hits)  # in a bound project: other versions' docs last
    if as_json:
        emit_json([h.to_dict() for h in hits])
        return
    if not hits:
        click.echo("no matches", err=True)
        return
    for h in hits:
        when = h.event_time or (h.mention_time or "")[:10]
        click.echo(f"{h.score:.4f}  {h.id}  {h.type:<10} {when:<10}  {h.summary}")
        if h.snippet and h.snippet != h.summary:
            click.echo(f"        {h.snippet}")


@cli.command()
@click.option("--full", is_flag=True, help="Throw the indexes away and rebuild them (cached embeddings are reused).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
@explained
def reindex(ctx: click.Context, full: bool, as_json: bool) -> None:
    """Bring every derived index (full text, vectors, graph) to the current commit.

    Each index applies only the tree diff since the commit it reflects; --full
    rebuilds from the tracked files alone. The installed Git hooks run this
    after commit, merge and checkout, and every read catches up on its own.
    """
    report = open_repo(ctx).reindex(full=full, progress=_index_progress, notify=_index_notify)
    if as_json:
        emit_json(report.to_dict())
        return
    for name, action in report.actions.items():
        click.echo(f"{name:<10} {action}")
    click.echo(f"indexes at {report.commit[:12] if report.commit else '(empty repository)'}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.pass_context
@explained
def gc(ctx: click.Context, as_json: bool) -> None:
    """Pack the repository's objects into one pack file (Git's own `git gc` does the same).

    Each large commit (a bulk ingest, say) writes a pack of its own, and reading a record probes the
    packs one by one; one pack keeps reads as fast as the history is long. Reads and commits may run
    meanwhile.
    """
    store = open_repo(ctx).store
    if not as_json:
        click.echo("packing objects...", err=True)
    stats = store.gc()
    if as_json:
        emit_json(stats)
        return
    click.echo(f"{stats['objects']} objects; packs {stats['packs_before']} -> {stats['packs_after']}, "
               f"loose objects {stats['loose_before']} -> {stats['loose_after']}")


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--mention-time", help="When undated input was said (default: each file's modification time).")
@click.option("--allow-plaintext-secrets", is_flag=True,
              help="With no vault key, commit secrets found in the input in plaintext instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print a summary as JSON.")
@click.option("--to", "to", metavar="TREE/PATH",
              help="Store the one FILE at this path of a typed tree (rules/python/vllm.md, resource/api.md, "
                   "procedural/skills/NAME/SKILL.md) instead of routing it.")
@click.option("--replace", is_flag=True,
              help="With --to: replace a different file already at that path (without it, that is refused).")
@click.pass_context
@explained
def ingest(ctx: click.Context, files: tuple[str, ...], mention_time: str | None, allow_plaintext_secrets: bool,
           as_json: bool, to: str | None, replace: bool) -> None:
    """Ingest conversations, documents and agent task sessions.

    Each input is kept verbatim under sources/ (turns anchored as D3:14, document
    parts by section and position, handbook/People:2), routed by the Meta Memory
    Manager and written by the typed writers: one commit per source with all its
    records. Every file is checked before anything is committed; sources already
    present are skipped, so running it again changes nothing. Formats: OpenAI
    messages (.json/.jsonl), LoCoMo conversations (.json), plain-text
    conversations ("# Session N: 2026-03-03 18:30" or "# Session N: 3 March 2026"
    and "Speaker: text" lines; a line that is only a date in brackets, "[3 March
    2026 18:30]", starts a session too), task sessions ({task, messages,
    outcome}), and documents: Markdown, plain text, HTML and PDF
    (at most 1 MB of text; any file at most 16 MiB), each statement a record
    citing its part. A new version of a document (same file, or same title)
    replaces the old version's records in the same commit; an unchanged one is
    left as it is (docs/documents.md).
    Secrets go to the Knowledge Vault as with `remember`; with no vault key,
    input holding one is refused before anything is committed unless
    --allow-plaintext-secrets.

    \b
    Examples:
      memrepo ingest examples/conversation.txt
      memrepo ingest chat.jsonl notes.md --json
      memrepo ingest handbook.pdf runbook.html
      memrepo ingest --to rules/python/vllm.md vllm-rules.md
    """
    from memrepo.write.ingest import parse_all

    repo = open_repo(ctx)
    if to is not None:
        _ingest_to(repo, files, to, mention_time, as_json, replace, allow_plaintext_secrets)
        return
    if replace:
        raise click.UsageError("--replace goes with --to (routed ingest never replaces a file)")
    parsed = parse_all(files, namespace=repo.settings.namespace, mention_time=mention_time,
                       vault_key=repo.settings.vault_key)
    with click.progressbar(length=sum(p.parts for p in parsed), label="Ingesting", file=sys.stderr) as bar:
        result = repo.ingest(files, mention_time=mention_time, progress=bar.update,
                             allow_plaintext_secrets=allow_plaintext_secrets, parsed=parsed)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        emit_json(result.to_dict())
        return
    for doc in result.documents:
        if doc["status"] == "unchanged":
            where = f" (as {doc['version']['path']})" if doc.get("version") else ""
            click.echo(f"{doc['file']}: unchanged since it was ingested{where}; nothing written")
        elif doc["status"] == "new version":
            click.echo(f"{doc['file']}: a new version of {doc['version']['path']}; {doc.get('removed', 0)} file(s) "
                       "of the old version removed in the same commit (`memrepo log` and `show --at` keep them)")
    kinds = ", ".join(f"{n} {t}" for t, n in sorted(result.records.items())) or "no new"
    model = result.model["total"]
    click.echo(
        f"Ingested {len(result.sources_written)} source(s) ({len(result.sources_unchanged)} already present) "
        f"from {len(files)} file(s): {kinds} record(s) in {len(result.commits)} commit(s); "
        f"{model['calls']} model call(s) ({result.model['backend']}), "
        f"{model['input_tokens']}+{model['output_tokens']} tokens, {result.seconds:.1f} s"
    )


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
@explained
def stats(ctx: click.Context, as_json: bool) -> None:
    """Model calls, input/output tokens and seconds per role, accumulated in this repository.

    Offline calls (no endpoint configured) are counted apart; figures live in the
    repository's state directory and are not tracked.
    """
    roles = open_repo(ctx).model_stats()
    fields = ("calls", "offline_calls", "failed_calls", "repairs", "input_tokens", "output_tokens", "seconds")
    total = {f: round(sum(r[f] for r in roles.values()), 4) for f in fields}
    if as_json:
        emit_json({"roles": roles, "total": total})
        return
    if not roles:
        click.echo("no model calls recorded yet")
        return
    click.echo(f"{'role':<20} {'calls':>7} {'offline':>8} {'failed':>7} {'repairs':>8} {'in tok':>9} {'out tok':>9} {'seconds':>9}")
    for name, r in [*roles.items(), ("total", total)]:
        click.echo(f"{name:<20} {r['calls']:>7} {r['offline_calls']:>8} {r['failed_calls']:>7} {r['repairs']:>8} "
                   f"{r['input_tokens']:>9} {r['output_tokens']:>9} {r['seconds']:>9.2f}")


@cli.command("index")
@click.option("--json", "as_json", is_flag=True, help="Print what was indexed as JSON.")
@click.pass_context
@explained
def index_cmd(ctx: click.Context, as_json: bool) -> None:
    """Bring the graph files in line with the records, and commit them.

    Extracts frames for every episodic/semantic record without a graph file or
    edited since its graph file was made, and removes the graph file of a record
    that is gone (a plain `git rm`). Every memrepo write runs the same catch-up
    for what changed; this command looks at every record. A record that fails is
    reported and left for the next run; records are never changed.

    \b
    Examples:
      memrepo index
      memrepo index --json
    """
    repo = open_repo(ctx)
    with _StepBar("Indexing graph") as bar:
        result = repo.index_graph(progress=bar.step)
    if as_json:
        emit_json(result.to_dict())
    elif not result.pending and not result.removed:
        click.echo("graph is up to date: every episodic and semantic record has a graph file that follows it")
    else:
        commit = f" (commit {result.commit[:12]})" if result.commit else ""
        stale = f" ({len(result.stale)} edited since)" if result.stale else ""
        removed = f"; removed {len(result.removed)} graph file(s) of records that are gone" if result.removed else ""
        click.echo(f"indexed {len(result.indexed)} of {result.pending} records{stale}: {result.frames} frames, "
                   f"{result.anchors} anchor mentions, {result.repaired} repaired{removed}{commit}")
    for record_id, message in sorted(result.failed.items()):
        click.echo(f"warning: {record_id}: {message} (run `memrepo index` again to retry)", err=True)
    if result.failed and not result.indexed:
        sys.exit(1)  # nothing could be indexed: say so with the exit status too


@cli.group()
def graph() -> None:
    """Read the provenance hypergraph: anchors, frames, RDF export, SPARQL.

    \b
    Examples:
      memrepo graph anchor Mia
      memrepo graph frames --anchor "Mount Fuji" --predicate climb
      memrepo graph export --format nt > memory.nt
      memrepo graph sparql 'SELECT ?f WHERE { ?f a mr:Frame } LIMIT 5'
    """


def _render_frame(frame) -> str:
    when = f"  event {'|'.join(frame.event_times)}" if frame.event_times else ""
    said = f"  said {'|'.join(t[:10] for t in frame.mention_times)}" if frame.mention_times else ""
    state = f"  [{frame.status}]" if frame.status else ""
    args = ", ".join(f"{a.role}={a.name}" for a in frame.arms)
    lits = "".join(f", {k}={'|'.join(v)}" for k, v in sorted(frame.literals.items()))
    return f"{frame.predicate}({args}{lits}){when}{said}{state}\n    cites {', '.join(frame.citations)}"


@graph.command("anchor")
@click.argument("name")
@click.option("--at", "rev", callback=_revision, help="Read as of this revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the anchor as JSON.")
@click.pass_context
@explained
def graph_anchor(ctx: click.Context, name: str, rev: str | None, as_json: bool) -> None:
    """Show an anchor: canonical name, type, aliases, the rows that mention it, its frames, its beliefs over time."""
    repo = open_repo(ctx)
    view = repo.graph_anchor(name, rev=rev)
    beliefs = repo.graph_beliefs(view.anchor.iri, rev=rev)
    if as_json:
        emit_json({**view.to_dict(), "beliefs": beliefs})
        return
    a = view.anchor
    click.echo(f"{a.name}  ({a.type}, key {a.key!r}, {a.iri})")
    if a.aliases:
        click.echo(f"aliases: {', '.join(a.aliases)}")
    click.echo(f"episodic rows: {', '.join(a.episodic) or '-'}")
    click.echo(f"semantic rows: {', '.join(a.semantic) or '-'}")
    click.echo(f"frames: {a.frame_count}")
    for frame in view.frames:
        click.echo("  " + _render_frame(frame))
    if beliefs:  # one-value relations over time (memrepo.graph.beliefs)
        from memrepo.graph.beliefs import render_timeline

        click.echo(f"beliefs over time: {len(beliefs)}")
        for line in render_timeline(beliefs):
            click.echo("  " + line)


@graph.command("frames")
@click.option("--anchor", help="Only frames with an arm on this anchor (by name).")
@click.option("--predicate", help="Only frames with this predicate (comma-separated for a family).")
@click.option("--cites", "cited", help="Only frames that cite this record id.")
@click.option("--limit", default=240, show_default=True, type=click.IntRange(1, 100_000), help="At most this many frames.")
@click.option("--at", "rev", callback=_revision, help="Read as of this revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the frames as JSON.")
@click.pass_context
@explained
def graph_frames(ctx: click.Context, anchor: str | None, predicate: str | None, cited: str | None, limit: int,
                 rev: str | None, as_json: bool) -> None:
    """List frames with roles, literals, event/mention time, status and cited record ids."""
    frames = open_repo(ctx).graph_frames(anchor, predicate, cited=cited, rev=rev, limit=limit)
    if as_json:
        emit_json([f.to_dict() for f in frames])
        return
    for frame in frames:
        click.echo(_render_frame(frame))
    if not frames:
        click.echo("no frames match", err=True)


@graph.command("export")
@click.option("--format", "format_", type=click.Choice(["ttl", "nt", "jsonld"]), default="ttl", show_default=True,
              help="RDF syntax of the output.")
@click.option("--at", "rev", callback=_revision, help="Export as of this revision.")
@click.pass_context
@explained
def graph_export(ctx: click.Context, format_: str, rev: str | None) -> None:
    """Write the union of all graph files (frames with all their citations) to stdout."""
    click.echo(open_repo(ctx).graph_export(format_, rev=rev), nl=False)


@graph.command("sparql")
@click.argument("query")
@click.option("--at", "rev", callback=_revision, help="Query as of this revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="Stop the query after this many seconds.")
@click.option("--max-rows", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Refuse a result of more rows (or CONSTRUCT triples) than this.")
@click.pass_context
@explained
def graph_sparql(ctx: click.Context, query: str, rev: str | None, as_json: bool, timeout: float,
                 max_rows: int) -> None:
    """Run a SPARQL query over the union graph (prefixes mr:, rdf:, rdfs:, owl:, prov:, xsd: are bound).

    The query stops after --timeout seconds and a result larger than --max-rows is
    refused, each with an error (exit 1).

    \b
    Example:
      memrepo graph sparql 'SELECT ?name WHERE { ?a a mr:Anchor ; rdfs:label ?name } ORDER BY ?name'
      memrepo graph sparql --timeout 60 --max-rows 100000 'SELECT * WHERE { ?s ?p ?o }'
    """
    result = open_repo(ctx).graph_sparql(query, rev=rev, timeout=timeout, max_rows=max_rows)
    if as_json:
        emit_json(result.to_dict())
    elif result.kind == "ask":
        click.echo("yes" if result.boolean else "no")
    elif result.kind == "graph":
        click.echo(result.graph or "", nl=False)
    else:
        click.echo("\t".join(result.variables))
        for row in result.rows:
            click.echo("\t".join("" if row[v] is None else row[v] for v in result.variables))


@cli.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("--explain", is_flag=True, help="Also show the plan, entry anchors, both lanes and the fusion order.")
@click.option("--at", "rev", callback=_revision, help="Recall as of this revision (commit, branch, tag, main~3).")
@click.option("--types", help="Comma-separated record types the recall may return (default: all but vault).")
@click.option("--env", "env_id", metavar="ID",
              help="Record this Environment id in --json (default: the one a project profile here has active).")
@click.pass_context
@explained
def recall(ctx: click.Context, question: str, as_json: bool, explain: bool, rev: str | None, types: str | None,
           env_id: str | None) -> None:
    """Bounded evidence for QUESTION: graph facts with the record ids they cite, and the fused records.

    The query plan sets the operator's budgets; episodic and semantic records
    enter through the graph (a failing graph read falls back to full text plus
    vectors, and says so); core blocks come with every result.

    \b
    Examples:
      memrepo recall "Where did Mia buy her Suica card?"
      memrepo recall "How many pets does Jonas have?" --explain
      memrepo recall "When did Mia move?" --types episodic,semantic --json
    """
    chosen = [t.strip() for t in types.split(",") if t.strip()] if types else None
    repo = open_repo(ctx)
    environment = repo.run_environment(env_id, os.getcwd())
    result = repo.recall(question, rev=rev, types=chosen)
    from memrepo.views.profile import pinned_first

    result.records = pinned_first(os.getcwd(), repo.store, result.records)  # in a bound project: other
    result.typed = pinned_first(os.getcwd(), repo.store, result.typed)  # versions' docs last
    if as_json:
        emit_json(_with_environment(result.to_dict(), environment))
        return
    from memrepo.read.render import render_recall

    click.echo(render_recall(result, explain=explain))


@cli.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and how it was reached as JSON.")
@click.option("--at", "rev", callback=_revision, help="Answer as of this revision.")
@click.option("--env", "env_id", metavar="ID",
              help="Record this Environment id in --json (default: the one a project profile here has active).")
@click.pass_context
@explained
def ask(ctx: click.Context, question: str, as_json: bool, rev: str | None, env_id: str | None) -> None:
    """Answer QUESTION from recalled evidence, with the rule-based check and at most one rewrite.

    Without a model endpoint the answer is extractive, marked as such: the
    span of the evidence that answers the question's kind (a name for who, a
    place for where, a date for when, an amount for how much, a number for how
    many), the sentence it comes from, or "Not in memory." The answer lists the
    record ids it rests on.

    \b
    Examples:
      memrepo ask "When did Mia buy her Suica card?"
      memrepo ask "How many pets does Jonas have?" --json
    """
    repo = open_repo(ctx)
    environment = repo.run_environment(env_id, os.getcwd())
    answer = repo.ask(question, rev=rev)
    if as_json:
        emit_json(_with_environment(answer.to_dict(), environment))
        return
    click.echo(answer.answer)
    if answer.quote:
        click.echo(f"from: {answer.quote}")
    if answer.record_ids:
        click.echo(f"rests on: {', '.join(answer.record_ids)}")
    if answer.triggers:
        click.echo(f"check: {', '.join(answer.triggers)} -> one more search and a rewrite", err=True)
    if answer.fallback:
        click.echo(f"note: {answer.fallback}", err=True)
    if answer.note:
        click.echo(answer.note, err=True)


def _with_environment(data: dict, environment: str | None) -> dict:
    """A run's JSON with the Environment id it read (``"environment"``), when there is one."""
    return {**data, "environment": environment} if environment else data


@cli.command("dream")
@click.option("--final", is_flag=True, help="Final round: cap 120, also anchors never used as a source, then a repair round of 60.")
@click.option("--apply", "apply_", is_flag=True, help="Merge the review branch into the current branch at once.")
@click.option("--skills", is_flag=True,
              help="Procedural AutoDream: distill pending task sessions into skill edits on a dream/skills-... branch.")
@click.option("--json", "as_json", is_flag=True, help="Print the run (counts, caps, merges, rejections) as JSON.")
@click.pass_context
@explained
def dream_cmd(ctx: click.Context, final: bool, apply_: bool, skills: bool, as_json: bool) -> None:
    """Semantic AutoDream: propose merges of duplicate anchors as a commit on a review branch.

    Pairs anchors of the semantic records written since the last run with their
    nearest names (cosine >= 0.86, same type: person, organization, location,
    object, concept), asks the judge about each pair under a cap (80; --final
    120 plus a repair round of 60), and commits one decision file on a new
    branch dream/<date>-<id>. The current branch does not move unless --apply
    is given. No record or frame file is ever changed.

    \b
    Examples:
      memrepo dream
      memrepo dream --final --json
      memrepo review show dream/2026-05-02-1a2b3c4d
      memrepo dream --apply
      memrepo dream --skills

    With --skills: each pending task session (at most 20 per run, and no more
    once 40 experiences are written) gets an outcome judged from quotes of it
    and experiences to reuse or avoid (procedural/experiences/); the curator
    creates, edits or deletes skills (procedural/skills/<slug>/SKILL.md), each
    added step citing the experiences whose text it quotes. One commit on a
    new branch dream/skills-<date>-<id>, whose message is the review.
    """
    repo = open_repo(ctx)
    if skills:
        if final or apply_:
            raise click.UsageError("--skills cannot be combined with --final or --apply (approve the branch instead)")
        _dream_skills(repo, as_json)
        return
    with _StepBar("Judging pairs") as bar:
        result = repo.dream(final=final, apply=apply_, progress=bar.step)
    if as_json:
        emit_json(result.to_dict())
        return
    c = result.counts
    caps = ", ".join(f"{k} {v}" for k, v in result.caps.items())
    click.echo(f"{result.round} round over {result.frontier_records} new semantic records, "
               f"{result.sources} source anchors (caps: {caps})")
    click.echo(f"pairs: considered {c['considered']}, verified {c['verified']}, merged {c['merged']}, "
               f"rejected {c['rejected']}, skipped by cap {c['skipped_by_cap']}, cached {c['cached']}"
               + (f", pending review {c['pending']}" if c["pending"] else "")
               + (f", invalid {c['invalid']}" if c["invalid"] else ""))
    if result.branch is None:
        click.echo(result.message or "nothing to propose")
        if result.commit:
            click.echo(f"recorded: commit {result.commit[:12]} on the current branch")
        return
    for d in result.run.merges if result.run else []:
        click.echo(f"  merge \"{d.alias_name}\" -> \"{d.representative_name}\" ({d.type}, cosine {d.cosine:.3f})")
    click.echo(f"review branch: {result.branch} (commit {result.commit[:12] if result.commit else '-'})")
    if result.message:
        click.echo(f"warning: {result.message}", err=True)
    if result.applied:
        click.echo(f"applied: merged into the current branch (commit {result.applied[:12]})")
    else:
        click.echo(f"next: memrepo review show {result.branch}")


def _dream_skills(repo: Any, as_json: bool) -> None:
    with _StepBar("Distilling sessions") as bar:
        result = repo.dream_skills(progress=bar.step)
    if as_json:
        emit_json(result.to_dict())
        return
    c, k = result.counts, result.curator
    caps = ", ".join(f"{name} {v}" for name, v in result.caps.items())
    click.echo(f"skills round over {c['sessions']} pending task sessions (caps: {caps})")
    click.echo(f"sessions: {c['success']} success, {c['failure']} failure, {c['unclear']} unclear, "
               f"downgraded {c['downgraded']}, skipped by cap {c['skipped_by_cap']}; experiences: "
               f"{c['experiences']} ({c['reuse']} reuse, {c['avoid']} avoid), dropped {c['experiences_dropped']}")
    click.echo(f"curator: steps added {k['steps_added']}, removed {k['steps_removed']}, covered {k['covered']}, "
               f"not worth {k['not_worth']}, deferred {k['deferred']}, refused {k['refused']}, "
               f"rejected before {k['rejected_before']}" + (f", invalid {k['invalid']}" if k["invalid"] else ""))
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    if result.branch is None:
        click.echo(result.message or "nothing to propose")
        return
    for ch in result.changes:
        if ch.action == "deleted" or ch.added or ch.removed:
            click.echo(f"  {ch.action} {ch.slug}: +{len(ch.added)} -{len(ch.removed)} steps")
    click.echo(f"review branch: {result.branch} (commit {result.commit[:12] if result.commit else '-'})")
    click.echo(f"next: memrepo review show {result.branch}")


@cli.group()
def review() -> None:
    """Review branches proposed by `memrepo dream`: list, show, approve, reject.

    \b
    Examples:
      memrepo review list
      memrepo review show dream/2026-05-02-1a2b3c4d
      memrepo review approve dream/2026-05-02-1a2b3c4d
      memrepo review reject dream/2026-05-02-1a2b3c4d
    """


@review.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the open review branches as JSON.")
@click.option("--all", "show_all", is_flag=True,
              help="Also list dream/ branches that cannot be reviewed (marked; \"reviewable\": false in --json).")
@click.pass_context
@explained
def review_list(ctx: click.Context, as_json: bool, show_all: bool) -> None:
    """List open review branches (not yet merged into the current branch).

    A dream/ branch can be reviewed if it carries a Dream decision file or changes
    skills under procedural/skills/; the others are counted on stderr (--all lists them).
    """
    found = open_repo(ctx).review_list(unreviewable=True)
    reviews = [r for r in found if show_all or (r.reviewable and not r.decided)]  # decided: rejected anywhere
    skipped = [r.branch for r in found if not r.reviewable]
    if skipped and not show_all:
        from memrepo.dream.review import NOT_REVIEWABLE

        click.echo(f"note: {len(skipped)} other dream/ branch(es) not listed: each {NOT_REVIEWABLE} "
                   f"({', '.join(skipped)}; --all lists them)", err=True)
    if as_json:
        emit_json([r.to_dict() for r in reviews])
        return
    if not reviews:
        click.echo("no open review branches")
    for r in reviews:
        when = datetime.fromtimestamp(r.time, timezone.utc).strftime("%Y-%m-%d %H:%M")
        what = f"{len(r.merges)} merges, {len(r.rejections)} rejections" + (f", {len(r.skills)} skill files" if r.skills else "")
        if r.skill_runs:
            changed = [c for run in r.skill_runs for c in run.get("changes", ())
                       if c["action"] == "deleted" or c["added"] or c["removed"]]
            what = (f"skills: {', '.join(c['skill'] + ' ' + c['action'] for c in changed) or 'no change'}; "
                    f"{sum(len(c['added']) for c in changed)} steps added, "
                    f"{sum(len(c['removed']) for c in changed)} removed")
        if not r.reviewable:
            what = "not reviewable: no Dream decision file, no skill change"
        elif r.decided:
            what = f"already {r.decided}"
        click.echo(f"{r.branch}  {when}  {what}")


@review.command("show")
@click.argument("branch")
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.pass_context
@explained
def review_show(ctx: click.Context, branch: str, as_json: bool) -> None:
    """Show BRANCH: each proposed merge with records of evidence from both anchors, and the rejections."""
    r = open_repo(ctx).review_show(branch)
    if as_json:
        emit_json(r.to_dict())
        return
    click.echo(r.message.rstrip())
    if r.skill_runs:
        for _, changes in open_repo(ctx).review_commits(branch, limit=1):
            for change in changes:
                if change.path.endswith("/SKILL.md"):
                    click.echo(f"\n{change.path} ({change.status})")
                    click.echo(change.diff.rstrip() or f"  ({change.note})")
    for d in r.merges:
        click.echo(f"\nmerge \"{d.alias_name}\" -> \"{d.representative_name}\" ({d.type}, cosine {d.cosine:.3f})")
        for side in r.evidence.get(d.key, ()):
            click.echo(f"  {side.name}: {side.total} records")
            for record_id, summary in side.records:
                click.echo(f"    {record_id}  {summary}")


@review.command("approve")
@click.argument("branch")
@click.option("--force", is_flag=True, help="Approve even though a rejection of BRANCH is recorded on the current branch.")
@click.option("--delete-remote", is_flag=True, help="Also delete BRANCH on its remote (origin by default).")
@click.pass_context
@explained
def review_approve(ctx: click.Context, branch: str, force: bool, delete_remote: bool) -> None:
    """Merge BRANCH into the current branch (a merge commit; `git revert -m 1` undoes it).

    BRANCH may be a teammate's (origin/dream/...). A branch rejected by anyone (the
    rejection is on the current branch) is refused with the reason, unless --force.
    """
    commit = open_repo(ctx).review_approve(branch, force=force, delete_remote=delete_remote)
    click.echo(f"approved {branch}: merge commit {commit[:12]}" + ("; deleted on the remote" if delete_remote else ""))


@review.command("reject")
@click.argument("branch")
@click.option("--reason", help="Why (recorded with each rejection).")
@click.option("--delete-remote", is_flag=True, help="Also delete BRANCH on its remote (origin by default).")
@click.pass_context
@explained
def review_reject(ctx: click.Context, branch: str, reason: str | None, delete_remote: bool) -> None:
    """Record BRANCH's merges as rejections on the current branch (not asked again) and delete BRANCH.

    The rejection travels with the branch's history (`memrepo sync`): every clone then
    refuses to approve BRANCH.
    """
    commit = open_repo(ctx).review_reject(branch, reason=reason, delete_remote=delete_remote)
    recorded = f"rejections recorded in commit {commit[:12]}" if commit else "no merges to record"
    click.echo(f"rejected {branch}: {recorded}; branch deleted" + (" here and on the remote" if delete_remote else ""))


def _check_author(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from memrepo.errors import MemrepoError
    from memrepo.mcp import agent_identity

    try:
        return agent_identity(value) if value is not None else None
    except MemrepoError as exc:
        raise click.BadParameter(str(exc)) from exc


@cli.command("mcp")
@click.option("--repo", "path", type=click.Path(file_okay=False),
              help="Memory repository to serve (default: the one containing the current directory).")
@click.option("--read-only", is_flag=True, help="Refuse every write (remember, ingest, forget, reviews).")
@click.option("--author", callback=_check_author,
              help='Git author of every write: "Name <email>" or a name (default: the name the client '
                   "declares, else the Git identity).")
@click.option("--allow-review", is_flag=True, help="Also offer review_approve and review_reject.")
@click.pass_context
@explained
def mcp_cmd(ctx: click.Context, path: str | None, read_only: bool, author: str | None, allow_review: bool) -> None:
    """Serve the memory repository to agents over stdio (Model Context Protocol).

    Tools: remember, ingest, recall, ask, search, show, list, log, forget,
    review_list, review_show (and review_approve, review_reject with
    --allow-review). Records are resources: memrepo://<id> and
    memrepo://<id>@<rev>. Every write is a commit authored by the agent.
    Register the command with an MCP client (docs/agents.md); stdout carries
    the protocol, messages go to stderr.

    \b
    Examples:
      memrepo mcp --repo ~/memory
      memrepo mcp --repo ~/memory --read-only
      memrepo mcp --author "Coding agent <agent@example.com>"
    """
    from memrepo.mcp import serve

    if path:
        ctx.ensure_object(dict)["path"] = path
    serve(open_repo(ctx), read_only=read_only, allow_review=allow_review, author=author)


def _serve_tokens():
    """The tokens file of this user's configuration folder ($XDG_CONFIG_HOME/memrepo, else ~/.config/memrepo)."""
    from memrepo.serve import TokenStore
    from memrepo.settings import user_config_path

    path = user_config_path(os.environ)
    if path is None:
        raise click.ClickException("neither XDG_CONFIG_HOME nor HOME is set: memrepo serve has nowhere to keep "
                                   "its tokens")
    return TokenStore(path.parent)


def _serve_repos(values: tuple[str, ...]) -> dict[str, str]:
    if not values:
        return {"": "."}
    if len(values) == 1 and "=" not in values[0]:
        return {"": os.path.expanduser(values[0])}
    repos: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{value!r}: several repositories are given as NAME=PATH (served at /NAME/mcp)",
                                     param_hint="--repo")
        if name in repos:
            raise click.BadParameter(f"{name!r} is given twice", param_hint="--repo")
        repos[name] = os.path.expanduser(path)
    return repos


@cli.group("serve", invoke_without_command=True)
@click.option("--repo", "repos", multiple=True, metavar="PATH|NAME=PATH",
              help="Repository to serve at /mcp; repeat as NAME=PATH to serve several, each at /NAME/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any but loopback needs at least one token.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free one).")
@click.option("--pull-interval", default=30.0, show_default=True, type=click.FloatRange(0),
              help="Seconds between pulls from each repository's remote (0: only when asked and after writes).")
@click.option("--push-delay", default=1.0, show_default=True, type=click.FloatRange(0),
              help="Seconds writes gather before they are pushed as one batch.")
@click.option("--remote", help="Remote to sync with (default: the branch's, else origin).")
@click.option("--max-request-bytes", default=1 << 20, show_default=True, type=click.IntRange(1024),
              help="Largest request body; larger ones are refused with 413.")
@click.option("--rate-limit", default=50.0, show_default=True, type=click.FloatRange(0),
              help="Requests per second each token may make, sustained (0: no limit); a burst of twice as many.")
@click.pass_context
@explained
def serve_group(ctx: click.Context, repos: tuple[str, ...], host: str, port: int, pull_interval: float,
                push_delay: float, remote: str | None, max_request_bytes: int, rate_limit: float) -> None:
    """Serve memory repositories to a team's agents over MCP's streamable HTTP transport.

    The same tools, resources and prompts as `memrepo mcp` (ingest aside: it
    reads a path on the server), at http://HOST:PORT/mcp, or /NAME/mcp for
    each of several repositories. Every request needs a bearer token
    (`memrepo serve token add`); its scope decides the tools a client sees
    and its name is the Git author of its writes. The server pulls from each
    repository's remote every --pull-interval seconds and when a read asks
    (pull: true), pushes after writes (never force), and reports a sync it
    could not finish in GET /healthz. One log line per request on stderr.
    SIGTERM answers the requests in flight and pushes before exiting.

    \b
    Examples:
      memrepo serve token add claude-code --scope write
      memrepo serve --repo ~/memory
      memrepo serve --repo team=~/team-memory --repo ops=~/ops-memory --host 0.0.0.0
    """
    if ctx.invoked_subcommand is not None:
        return
    import logging

    from memrepo.serve import Limits, ServeOptions, serve

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])  # before the SDK configures logging its way
    logging.getLogger("memrepo.serve").setLevel(logging.INFO)
    options = ServeOptions(host=host, port=port, pull_interval=pull_interval, push_delay=push_delay, remote=remote,
                           limits=Limits(max_request_bytes=max_request_bytes, rate=rate_limit,
                                         burst=max(1, int(rate_limit * 2))))

    def open_one(path: str):
        from memrepo.api import MemoryRepo

        repo = MemoryRepo.open(path, environ=os.environ)
        _print_notices(repo)
        return repo

    serve(_serve_repos(repos), _serve_tokens(), options, open_repo=open_one,
          notify=lambda message: click.echo(f"memrepo serve: {message}", err=True))


@serve_group.group("token")
def serve_token() -> None:
    """The bearer tokens of `memrepo serve`, kept (as hashes) in $XDG_CONFIG_HOME/memrepo/tokens.json.

    Scopes: read (recall, ask, search, show, list, log, review_list,
    review_show), write (also remember, forget), review (also
    review_approve, review_reject). A running server sees a change at its
    next request.
    """


@serve_token.command("add")
@click.argument("name")
@click.option("--scope", type=click.Choice(["read", "write", "review"]), required=True, help="What the token may do.")
@click.option("--namespace", "namespaces", multiple=True,
              help="Only these served repositories (/NAME/mcp); repeatable (default: all).")
@explained
def serve_token_add(name: str, scope: str, namespaces: tuple[str, ...]) -> None:
    """Create token NAME and print its secret once (only its hash is kept).

    NAME is the Git author of the token's writes (NAME <NAME@localhost>).

    \b
    Examples:
      memrepo serve token add claude-code --scope write
      memrepo serve token add ci-reader --scope read --namespace team
    """
    store = _serve_tokens()
    secret = store.add(name, scope, namespaces)
    click.echo(secret)
    click.echo(f"token {name} ({scope}) added to {store.path}; the secret above is shown only now", err=True)


@serve_token.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
@explained
def serve_token_list(as_json: bool) -> None:
    """Each token: name, scope, namespaces, creation time (never a secret)."""
    tokens = _serve_tokens().tokens()
    if as_json:
        emit_json([t.to_dict() for t in tokens])
        return
    for t in tokens:
        click.echo(f"{t.name}\t{t.scope}\t{','.join(t.namespaces) or '*'}\t{t.created}")


@serve_token.command("revoke")
@click.argument("name")
@explained
def serve_token_revoke(name: str) -> None:
    """Remove token NAME: a running server refuses it (401) from its next request."""
    store = _serve_tokens()
    store.revoke(name)
    click.echo(f"token {name} revoked in {store.path}")


def command_manual() -> str:
    """Every command's --help as one Markdown manual (the Agent Skill's reference.md)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("memrepo")
    except PackageNotFoundError:
        release = "(source checkout)"
    parts = [f"# memrepo command manual\n\nThe `--help` of every command of memrepo {release}.\n"]

    def walk(command: click.Command, parent: click.Context | None, name: str) -> None:
        # The command's own context settings (-h as well as --help), as when it runs: click caches the help
        # option per command, so a manual built otherwise would depend on what ran before it in this process.
        settings = {"terminal_width": 100, "max_content_width": 100, **command.context_settings}
        ctx = click.Context(command, info_name=name, parent=parent, **settings)
        parts.append(f"## {ctx.command_path}\n\n```text\n{command.get_help(ctx)}\n```\n")
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                child = command.get_command(ctx, sub)
                if child is not None and not child.hidden:
                    walk(child, ctx, sub)

    walk(cli, None, "memrepo")
    return "\n".join(parts)


@cli.group()
def skill() -> None:
    """The Agent Skill that teaches an agent this command line."""


@skill.command("install")
@click.argument("directory", type=click.Path(file_okay=False))
@explained
def skill_install(directory: str) -> None:
    """Write the Agent Skill to DIRECTORY/memrepo/: SKILL.md and reference.md.

    SKILL.md (front matter: name, description) is short: when to recall,
    remember and cite. reference.md is this manual, every command's --help,
    which the agent reads only when it needs it. Installing again replaces both.

    \b
    Examples:
      memrepo skill install ~/.claude/skills
      memrepo skill install .github/skills
    """
    from memrepo.skill import install_skill

    for path in install_skill(directory, command_manual()):
        click.echo(f"wrote {path}")


@cli.group()
def skills() -> None:
    """Skills the memory learned (procedural/skills/), in the Agent Skills format."""


@skills.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--at", "rev", callback=_revision, help="Export the skills as of this commit-ish (default: the current branch).")
@click.pass_context
@explained
def skills_export(ctx: click.Context, directory: str, rev: str | None) -> None:
    """Write the approved skills to DIRECTORY/<slug>/SKILL.md (a folder agents load as it is).

    Only the current branch's skills are written: proposals on dream/skills-...
    branches are not approved yet. Names must be unique.

    \b
    Examples:
      memrepo skills export ~/.claude/skills
    """
    for path in open_repo(ctx).skills_export(directory, rev=rev):
        click.echo(f"wrote {path}")


@skills.command("show")
@click.argument("slug")
@click.option("--at", "rev", callback=_revision, help="Show the skill as of this commit-ish (default: the current branch).")
@click.option("--json", "as_json", is_flag=True, help="Print the skill and its runs as JSON.")
@click.pass_context
@explained
def skills_show(ctx: click.Context, slug: str, rev: str | None, as_json: bool) -> None:
    """Print skill SLUG, then each run its steps cite ([runs 1, 2]) with the session's quotes.

    \b
    Examples:
      memrepo skills show release-version-acme
    """
    skill, runs = open_repo(ctx).skill_show(slug, rev=rev)
    if as_json:
        emit_json({"skill": slug, "path": skill.path, "text": skill.render().decode("utf-8"), "runs": runs})
        return
    click.echo(skill.render().decode("utf-8").rstrip("\n"))
    if runs:
        click.echo("\nRuns cited by the steps:")
    for run in runs:
        click.echo(f"{run['number']}. {run['session']} ({run['outcome']}): {run['task']}")
        for q in run["quotes"]:
            click.echo(f"     \"{q['text']}\" ({run['source']}#{q['part']})")


@cli.command()
@click.argument("url")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@explained
def clone(url: str, directory: str | None) -> None:
    """Join a team's memory: clone URL into DIRECTORY, check out its branch, install the hooks.

    A remote with no branch yet gets the repository layout here (`memrepo sync`
    publishes it); a remote whose HEAD names a missing branch (a `git init --bare`
    naming master when main was pushed) gets its existing branch checked out.

    \b
    Examples:
      memrepo clone git@example.com:team/memory.git
      memrepo clone /srv/git/memory.git memory && cd memory && memrepo sync
    """
    from memrepo.api import MemoryRepo

    repo, messages = MemoryRepo.clone(url, directory)
    with repo:
        for line in messages:
            click.echo(f"memrepo: {line}", err=True)
        records = sum(1 for _ in repo.snapshot.walk()) if repo.store.head() else 0
        click.echo(f"Cloned {url} into {repo.root} ({records} files; hooks installed; "
                   "the indexes are built by the first search or `memrepo reindex`)")


@cli.command()
@click.argument("rev_range", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the files checked and the problems as JSON.")
@click.option("--pre-receive", "pre_receive", is_flag=True, hidden=True,
              help="Read Git's pre-receive lines (old new ref) on stdin and check each pushed ref.")
@click.pass_context
@explained
def validate(ctx: click.Context, rev_range: str | None, as_json: bool, pre_receive: bool) -> None:
    """Run the server hook's checks on REV_RANGE (A..B: what B changes since it left A; one revision:
    every file of it; default: HEAD). Exits 1 if a file does not validate.

    A range is checked commit by commit (a file added and removed again is still
    checked); every problem names the file, the rule and the commit. The rules
    (docs/team.md, section 5): file kinds and layout, sizes, records and safe YAML,
    citations, graph files, decision files, Dream reviews and rejections, vault
    ciphertext, secrets, memrepo.toml, .gitattributes, tombstones, merges that drop
    records, history of main.

    \b
    Examples:
      memrepo validate                      # every file of HEAD
      memrepo validate origin/main..HEAD    # what a pull request adds (the CI workflow runs this)
    """
    from memrepo.team.validate import check_push, validate as run

    root = ctx.obj.get("path") or "."
    if pre_receive:
        updates = []
        for line in sys.stdin.read().splitlines():
            parts = line.split()
            if len(parts) == 3:
                updates.append((parts[0], parts[1], parts[2]))
        report = check_push(root, updates)
        for problem in report.problems[:50]:
            click.echo(f"memrepo: refused: {problem.line()}", err=True)
        if len(report.problems) > 50:
            click.echo(f"memrepo: refused: ... and {len(report.problems) - 50} more problems", err=True)
        if not report.ok:
            click.echo("memrepo: the push was refused; fix the files named (`memrepo validate origin/main..HEAD` "
                       "runs these checks in your clone) and push again", err=True)
            sys.exit(1)
        return
    report = run(root, rev_range)
    if as_json:
        emit_json(report.to_dict())
    else:
        for problem in report.problems:
            click.echo(problem.line())
        click.echo(f"{report.commits} commits, {report.checked} files checked, {len(report.problems)} problems", err=True)
    if not report.ok:
        sys.exit(1)


@cli.group("serve-hooks")
def serve_hooks() -> None:
    """Server-side Git hooks for the repository a team pushes to."""


@serve_hooks.command("install")
@click.argument("bare_repo", type=click.Path(file_okay=False, exists=True))
@explained
def serve_hooks_install(bare_repo: str) -> None:
    """Install hooks/pre-receive in BARE_REPO: pushes that do not validate are refused, naming the file.

    The hook runs this Python's memrepo (else a memrepo on the server's PATH).
    """
    from memrepo.resources import data_dir
    from memrepo.team.validate import install_server_hook

    text = (data_dir("hooks") / "pre-receive").read_text(encoding="utf-8").replace("@PYTHON@", sys.executable)
    path = install_server_hook(bare_repo, text)
    click.echo(f"installed {path}: pushes are checked as `memrepo validate` checks them")


@cli.command()
@click.argument("remote", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print what was fetched, merged, resolved and pushed as JSON.")
@click.pass_context
@explained
def sync(ctx: click.Context, remote: str | None, as_json: bool) -> None:
    """Fetch REMOTE (default: the branch's remote, else origin), merge, push; never force.

    A push that raced another is retried after merging again. Files memrepo writes
    itself (graph files, decision files, ingested documents of the same name) never
    stay in conflict; a text conflict (a core block, a skill, a hand-edited record)
    stops with the files named and how to finish. The indexes are then brought up to
    what was merged, and local review branches are published for teammates.

    \b
    Examples:
      memrepo sync
      memrepo sync upstream --json
    """
    result = open_repo(ctx).sync(remote, progress=_index_progress, notify=_index_notify)
    if as_json:
        emit_json(result.to_dict())
        return
    for item in result.resolved:
        click.echo(f"resolved {item['path']}: {item['how']}", err=True)
    merged = ("fast-forward" if result.fast_forward else f"merge commit {result.merge[:12]}" if result.merge else "")
    got = f"got {result.fetched} commit(s) ({merged})" if result.fetched else "nothing new"
    sent = f"pushed {result.pushed} commit(s)" if result.pushed else "nothing to push"
    extra = f"; published review branches {', '.join(result.review_branches)}" if result.review_branches else ""
    click.echo(f"synced {result.branch} with {result.remote}: {got}, {sent}{extra}")


# --- views: typed trees, Derivations, Environments, Quests, Profiles (docs/views.md) ------------------------------


def _ingest_to(repo, files: tuple[str, ...], to: str, mention_time: str | None, as_json: bool,
               replace: bool, allow_plaintext_secrets: bool = False) -> None:
    if len(files) != 1:
        raise click.UsageError("--to places one FILE; give exactly one")
    placed = repo.ingest_to(files[0], to, replace=replace, mention_time=mention_time,
                            allow_plaintext_secrets=allow_plaintext_secrets)
    path, commit = placed.path, placed.commit
    if as_json:
        emit_json({"path": path, "commit": commit, "replaced": placed.replaced.blob if placed.replaced else None})
    elif commit and placed.replaced:
        click.echo(f"Stored {files[0]} at {path} (commit {commit[:12]}), replacing the file there ({placed.replaced})")
    elif commit:
        click.echo(f"Stored {files[0]} at {path} (commit {commit[:12]})")
    else:
        click.echo(f"{path} already holds this file; nothing to commit")


def _project(value: str | None) -> str:
    return value or os.getcwd()


@cli.command("ls")
@click.argument("locator")
@click.option("--at", "at", callback=_revision, metavar="GEN",
              help="Generation to list (any commit-ish); default: the tree's latest.")
@click.option("--json", "as_json", is_flag=True, help="Print (path, generation, blob) as JSON.")
@click.pass_context
@explained
def ls_cmd(ctx: click.Context, locator: str, at: str | None, as_json: bool) -> None:
    """List the files of a typed tree (rules/, resource/, sources/, procedural/).

    \b
    Examples:
      memrepo ls rules/
      memrepo ls rules/python/ --at main~3
      memrepo ls resource/@v1.0 --json
    """
    repo = open_repo(ctx)
    if at is not None:
        locator = f"{locator.rpartition('@')[0] if '@' in locator else locator}@{at}"
    files = repo.tree_files(locator)
    if as_json:
        emit_json([f.to_dict() for f in files])
        return
    for item in files:
        click.echo(f"{item.blob[:12]}  {item.path}")
    if files:
        click.echo(f"{len(files)} file(s) at {files[0].generation[:12]}", err=True)


@cli.command("cat")
@click.argument("locator")
@click.option("--json", "as_json", is_flag=True, help="Print path, generation, blob and text as JSON.")
@click.pass_context
@explained
def cat_cmd(ctx: click.Context, locator: str, as_json: bool) -> None:
    """Print one file of a typed tree by locator (PATH[@latest|@GEN]).

    \b
    Examples:
      memrepo cat rules/python/vllm.md
      memrepo cat resource/api.md@main~2
    """
    repo = open_repo(ctx)
    item, data = repo.cat(locator)
    if as_json:
        emit_json({**item.to_dict(), "text": data.decode("utf-8", "replace")})
        return
    click.echo(data.decode("utf-8", "replace"), nl=False)


@cli.command("derive")
@click.argument("locators", nargs=-1, required=True)
@click.option("--intent", required=True, help="What the view is for (names its Quest).")
@click.option("--summarize", is_flag=True, help="Also store an extractive summary of the selected files.")
@click.option("--json", "as_json", is_flag=True, help="Print the Derivation as JSON.")
@click.pass_context
@explained
def derive_cmd(ctx: click.Context, locators: tuple[str, ...], intent: str, summarize: bool, as_json: bool) -> None:
    """Build a Derivation: the selection resolved to exact files; its id is the hash of them.

    Writes views/derivations/<id>.json, keeps its tree under refs/memrepo/derivations/<id>
    and records the resolve in the Quest views/quests/<slug>.md.

    \b
    Examples:
      memrepo derive rules/python/ resource/vllm/ --intent "serve models with vLLM"
      memrepo derive resource/api.md@v1.0 --intent "api v1 docs" --summarize --json
    """
    repo = open_repo(ctx)
    derivation, quest = repo.derive(list(locators), intent=intent, summarize=summarize)
    if as_json:
        emit_json({**derivation.to_dict(), "quest": quest.slug, "created": derivation.created})
        return
    state = "new" if derivation.created else "unchanged"
    click.echo(f"Derivation {derivation.id} ({state}): {len(derivation.inputs)} file(s); quest {quest.slug}")
    for name, path in derivation.artifacts.items():
        click.echo(f"  {name}: {path}")


@cli.group("env")
def env_group() -> None:
    """Environments: Derivations mounted at paths, with rules for which file wins."""


@env_group.command("compose")
@click.argument("bindings", nargs=-1, required=True)
@click.option("--override", "overrides", multiple=True, metavar="FILE=DERIVATION",
              help="Take this mounted file from this Derivation, whatever the other rules say.")
@click.option("--json", "as_json", is_flag=True, help="Print the Environment as JSON.")
@click.pass_context
@explained
def env_compose(ctx: click.Context, bindings: tuple[str, ...], overrides: tuple[str, ...], as_json: bool) -> None:
    """Record an Environment from /MOUNT=DERIVATION bindings (id = hash of the bindings).

    A binding may name another memory repository: /MOUNT=DERIVATION@PATH.

    \b
    Examples:
      memrepo env compose /python=3fa9c2d1 /cpp=7be01a44
      memrepo env compose /=3fa9c2d1 /team=90ab12cd@../team-memory --override python/vllm.md=3fa9c2d1
    """
    env = open_repo(ctx).env_compose(list(bindings), list(overrides))
    if as_json:
        emit_json(env.to_dict())
        return
    click.echo(f"Environment {env.id}: " + " ".join(f"{b.mount}={b.derivation[:12]}" for b in env.bindings))


@env_group.command("show")
@click.argument("env_id")
@click.option("--json", "as_json", is_flag=True, help="Print the mounted files as JSON.")
@click.pass_context
@explained
def env_show(ctx: click.Context, env_id: str, as_json: bool) -> None:
    """List the files an Environment mounts and the rule that picked each one."""
    env, placed, left_out = open_repo(ctx).env_show(env_id)
    if as_json:
        emit_json({**env.to_dict(), "files": [p.to_dict() for p in placed], "left_out": left_out})
        return
    click.echo(f"Environment {env.id}")
    for p in placed:
        click.echo(f"  {p.name}  <- {p.path} ({p.derivation[:12]}; {p.rule})")
    for item in left_out:
        click.echo(f"  left out {item['path']} as {item['name']}: {item['reason']}")


@cli.group("quest")
def quest_group() -> None:
    """Quests: the intent behind each view, its resolves and whether it is stale."""


def _quest_line(q) -> str:
    stale = f"stale since {q.stale_since[:12]}" if q.stale_since else "fresh"
    return f"{q.slug}  {q.current}  {stale}  resolves {q.resolves}, reads {q.reads}  {q.intent}"


@quest_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the Quests as JSON.")
@click.pass_context
@explained
def quest_list(ctx: click.Context, as_json: bool) -> None:
    """Every Quest with its current Derivation and freshness."""
    found = open_repo(ctx).quests()
    if as_json:
        emit_json([q.to_dict() for q in found])
        return
    for q in found:
        click.echo(_quest_line(q))


@quest_group.command("search")
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
@click.pass_context
@explained
def quest_search(ctx: click.Context, text: str, as_json: bool) -> None:
    """Quests whose file mentions TEXT (intent, selection, paths of their resolves)."""
    found = open_repo(ctx).quest_search(text)
    if as_json:
        emit_json([{"slug": q.slug, "intent": q.intent, "lines": lines} for q, lines in found])
        return
    for q, lines in found:
        click.echo(f"{q.slug}: {q.intent}")
        for line in lines[:5]:
            click.echo(f"    {line}")


@quest_group.command("show")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print the Quest as JSON.")
@click.pass_context
@explained
def quest_show(ctx: click.Context, slug: str, as_json: bool) -> None:
    """One Quest: intent, selection, resolves (with what each changed), freshness."""
    q = open_repo(ctx).quest(slug)
    if as_json:
        emit_json(q.to_dict())
        return
    click.echo(_quest_line(q))
    click.echo("selection: " + ", ".join(q.ir))
    for n, entry in enumerate(q.history, 1):
        changed = ", ".join(f"{k} {len(entry.get(k, []))}" for k in ("added", "removed", "changed") if entry.get(k))
        click.echo(f"  {n}. {entry['derivation']} at {(entry.get('at') or '-')[:12]}: {entry['files']} file(s)"
                   + (f" ({changed})" if changed else ""))


@quest_group.command("refresh")
@click.argument("slug")
@click.option("--yes", is_flag=True, help="Refresh without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the new resolve as JSON.")
@click.pass_context
@explained
def quest_refresh(ctx: click.Context, slug: str, yes: bool, as_json: bool) -> None:
    """Re-resolve a Quest at the latest generations, after showing what changes."""
    repo = open_repo(ctx)
    quest, new_id, changes = repo.quest_plan_refresh(slug)
    if new_id == quest.current:
        from memrepo.views.quest import fold

        folded = fold(repo.store, author=repo.commit_author)  # an explicit write: the local log's counts
        click.echo(f"{slug} is up to date ({new_id})" + (f"; folded the read counts of {folded} quest(s)"
                                                          if folded else ""), err=as_json)
        if as_json:
            emit_json({"slug": slug, "derivation": new_id, "changes": changes, "refreshed": False})
        return
    if not as_json:
        _echo_changes(changes)
    if not yes and not click.confirm(f"Refresh {slug} to {new_id}?", err=True):
        raise SystemExit(1)
    derivation, quest = repo.quest_refresh(slug)
    if as_json:
        emit_json({"slug": slug, "derivation": derivation.id, "changes": changes, "refreshed": True})
        return
    click.echo(f"{slug}: {quest.current} (resolve {quest.resolves}; the old one stays in its history)")


def _echo_changes(changes: dict[str, list[str]]) -> None:
    for mark, key in (("+", "added"), ("-", "removed"), ("~", "changed")):
        for name in changes.get(key, []):
            click.echo(f"  {mark} {name}")
    if not any(changes.values()):
        click.echo("  (no file changes)")


@cli.group("profile")
def profile_group() -> None:
    """Profiles: bind a project folder to memory and mount it under .memory/ (memrepo-profile.toml)."""


_project_option = click.option("--project", type=click.Path(file_okay=False, exists=True),
                               help="The project folder (default: the current directory).")


def _activation(result, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_dict())
        return
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    _echo_warnings(result.warnings)
    click.echo(f".memory -> {result.tree} ({result.files} file(s), environment {result.environment[:12]}, "
               f"binding {result.binding})")


@profile_group.command("bind")
@click.argument("target")
@click.option("--memory", required=True,
              help="The memory repository: a path (relative to the project) or a URL; a URL or a bare repository "
                   "is cloned into the project's .memory-repos/ (ignored) and fetched again by `profile upgrade`.")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print the binding as JSON.")
@explained
def profile_bind(target: str, memory: str, project: str | None, as_json: bool) -> None:
    """Bind the project to an Environment id or a Quest slug (then run `profile activate`).

    \b
    Examples:
      memrepo profile bind --memory ../team-memory serve-models-with-vllm
      memrepo profile bind --memory ../team-memory environment:3fa9c2d1
      memrepo profile bind --memory https://git.example.com/team/memory.git serve-models-with-vllm
    """
    from memrepo.api import profile_bind as bind

    entry = bind(_project(project), memory, target)
    if as_json:
        emit_json(entry.to_dict())
        return
    click.echo(f"Bound {entry.target} (environment {entry.environment[:12]}) in memrepo-profile.toml "
               "(commit it and memrepo-profile.d/ with the project)")


@profile_group.command("activate")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print what was activated as JSON.")
@explained
def profile_activate(project: str | None, as_json: bool) -> None:
    """Materialize the current binding under .memory/ (built aside, swapped in with one rename)."""
    from memrepo.api import profile_activate as activate

    _activation(activate(_project(project)), as_json)


@profile_group.command("upgrade")
@_project_option
@click.option("--dry-run", is_flag=True, help="Only print what would change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the changes and the activation as JSON.")
@explained
def profile_upgrade(project: str | None, dry_run: bool, as_json: bool) -> None:
    """Re-resolve the bound Quest or Environment at the memory's latest, print what changes, then swap.

    The new binding is added to memrepo-profile.toml; `profile rollback` returns to the one before.
    """
    from memrepo.api import profile_plan_upgrade, profile_upgrade as upgrade

    if dry_run:
        plan = profile_plan_upgrade(_project(project))
        if as_json:
            emit_json({**plan.to_dict(), "upgraded": False})
            return
        _echo_changes(plan.changes)
        _echo_warnings(plan.to_dict()["warnings"])
        click.echo("Already up to date" if plan.up_to_date else
                   f"Would bind environment {plan.environment[:12]}" if plan.environment else
                   "Would mount the same environment again (the project's locks or manifests changed)")
        return
    plan, result = upgrade(_project(project))
    if as_json:
        emit_json({**plan.to_dict(), "upgraded": result is not None, **(result.to_dict() if result else {})})
        return
    _echo_changes(plan.changes)
    if result is None:
        click.echo("Already up to date")
    else:
        _activation(result, False)


def _echo_warnings(warnings: list[str]) -> None:
    for line in warnings:
        click.echo(f"warning: {line}", err=True)


@profile_group.command("rollback")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print the activation as JSON.")
@explained
def profile_rollback(project: str | None, as_json: bool) -> None:
    """Make the previous binding current and swap .memory/ back to it."""
    from memrepo.api import profile_rollback as rollback

    _activation(rollback(_project(project)), as_json)


@profile_group.command("status")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@explained
def profile_status(project: str | None, as_json: bool) -> None:
    """Which Environment is bound and active, and whether its Quest or selections are stale."""
    from memrepo.api import profile_status as status

    info = status(_project(project))
    if as_json:
        emit_json(info)
        return
    for note in info["notes"]:
        click.echo(f"note: {note}", err=True)
    click.echo(info["fetch"]["message"] if not info["fetch"]["ok"] or info["fetch"]["fetched"] else
               f"memory: {info['fetch']['message']}")
    active = ("active" if info["active"] else
              "NOT active: the project's locks or manifests changed (run `memrepo profile upgrade`)"
              if info["relocked"] else "NOT active (run `memrepo profile activate`)")
    stale = ("stale: the memory changed files it uses" +
             (f" since {info['stale_since'][:12]}" if info["stale_since"] else "") +
             " (run `memrepo profile upgrade`)" if info["stale"] else "fresh")
    click.echo(f"binding {info['current']}/{info['bindings']}: {info['target']} -> environment "
               f"{info['environment'][:12]}, {active}; {stale}")
    if info["quest_stale_since"]:
        click.echo(f"the Quest {info['target'][6:]} is stale in the memory since {info['quest_stale_since'][:12]} "
                   "(`memrepo quest refresh` there updates it for everyone)")
    for choice in info["versions"]:
        if choice["mounted"] is not None:
            asked = f"{choice['requirement']} ({choice['source']})" if choice["source"] else "no requirement"
            click.echo(f"  {choice['package']} {choice['mounted']}: {choice['rule']}, {asked}")
    _echo_warnings(info["warnings"])


def main() -> None:
    cli(prog_name="memrepo")


if __name__ == "__main__":
    main()
