"""Quests: the intent behind a view, the history of its resolves, and its freshness (Memorix §4.3).

A Quest is ``views/quests/<slug>.md``: YAML front matter (intent, selection IR,
current Derivation, the commit it was resolved at, read and resolve counts, the
history of resolves with what each one changed) and a plain-text body repeating it
for ``grep``. ``memrepo derive --intent`` writes or updates one.

A Quest is stale from the first commit after its resolve that changes a file its
current resolve uses (or adds one under a folder it selects at ``@latest``; a file
pinned to a generation never goes stale). The check is a reverse index from paths
to Quests matched against the tree diff of each commit since the resolve, so it
costs the commits walked, not the size of the memory; its result is cached under
the Git directory and extended one commit at a time.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError
from memrepo.store.git import GitStore, Snapshot, commit_parent
from memrepo.views.derive import Derivation, Mounted, derive, load, resolve_selection, derivation_id
from memrepo.views.locators import LATEST, parse_locator

QUESTS = "views/quests"
STALE_CACHE = "views-stale.json"


@dataclass
class Quest:
    slug: str
    intent: str
    ir: list[str]
    current: str
    resolved_at: str | None
    resolves: int = 1
    reads: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    stale_since: str | None = None  # filled by :func:`staleness`

    @property
    def path(self) -> str:
        return f"{QUESTS}/{self.slug}.md"

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "intent": self.intent, "ir": self.ir, "current": self.current,
                "resolved_at": self.resolved_at, "resolves": self.resolves, "reads": self.reads,
                "history": self.history, "stale": self.stale_since is not None, "stale_since": self.stale_since}

    def render(self) -> str:
        meta = {k: v for k, v in self.to_dict().items() if k not in ("stale", "stale_since", "slug")}
        head = yaml.safe_dump(meta, sort_keys=True, allow_unicode=True, width=1000)
        lines = [f"# Quest: {self.intent}", "", "Selection: " + ", ".join(self.ir),
                 f"Current derivation: {self.current} (resolved at {(self.resolved_at or '-')[:12]})",
                 f"Resolves: {self.resolves}; reads: {self.reads}", "", "## Resolves", ""]
        for n, entry in enumerate(self.history, 1):
            lines.append(f"{n}. derivation {entry['derivation']} at {(entry.get('at') or '-')[:12]}: "
                         f"{entry['files']} file(s)")
            for kind in ("added", "removed", "changed"):
                for path in entry.get(kind, []):
                    lines.append(f"   {kind[0].upper() if kind != 'changed' else '~'} {path}")
        return f"---\n{head}---\n" + "\n".join(lines) + "\n"


def slug_of(intent: str) -> str:
    """The file name of a Quest: its intent as lower-case words joined by ``-`` (at most 60 characters)."""
    words = re.findall(r"[0-9a-z]+", intent.lower())
    slug = "-".join(words)[:60].strip("-")
    if not slug:
        raise RecordError(f"--intent {intent!r}: say in words what the view is for")
    return slug


def parse(data: bytes, path: str) -> Quest:
    meta, _ = rec.split_front_matter(data, path)
    try:
        return Quest(slug=path.rsplit("/", 1)[-1][:-3], intent=str(meta["intent"]), ir=list(meta["ir"]),
                     current=str(meta["current"]), resolved_at=meta.get("resolved_at"),
                     resolves=int(meta.get("resolves", 1)), reads=int(meta.get("reads", 0)),
                     history=list(meta.get("history") or []))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"{path}: not a Quest ({exc})") from exc


def _changes(old: list[Mounted], new: list[Mounted]) -> dict[str, list[str]]:
    before = {i.path: i.blob for i in old}
    after = {i.path: i.blob for i in new}
    return {"added": sorted(set(after) - set(before)), "removed": sorted(set(before) - set(after)),
            "changed": sorted(p for p in set(before) & set(after) if before[p] != after[p])}


def build(store: GitStore, locators: list[str], intent: str, *, summarize: bool = False,
          author: bytes | None = None, resolved: tuple[list[str], list[Mounted]] | None = None,
          fold: bool = False) -> tuple[Derivation, Quest]:
    """Derive ``locators`` and record the resolve in the Quest of ``intent``, in one commit.

    A resolve that changes nothing (same files, selection and intent) is counted in the local log
    (:func:`log_count`), not committed. With ``fold`` (``quest refresh``), the counts the log holds for every
    Quest are written into their files in the same commit.
    """
    slug = slug_of(intent)
    head = store.head()
    quest_box: list[Quest] = []

    def quest_file(snap: Snapshot, derivation: Derivation) -> dict[str, bytes]:
        path = f"{QUESTS}/{slug}.md"
        data = snap.read(path)
        quest = parse(data, path) if data is not None else None
        entry: dict[str, Any] = {"derivation": derivation.id, "at": head.decode() if head else None,
                                 "files": len(derivation.inputs)}
        if quest is None:
            quest = Quest(slug, intent, derivation.ir, derivation.id, entry["at"], history=[entry])
        elif quest.current == derivation.id and quest.ir == derivation.ir and quest.intent == intent and not fold:
            unchanged[:] = [True]  # the same resolve again: counted in the local log, not in history
            return {}
        else:
            quest.resolves += 1
            if quest.current != derivation.id or quest.ir != derivation.ir:
                try:
                    old = load(store, quest.current, snap.commit).inputs
                except NotFoundError:
                    old = []
                entry.update(_changes(old, derivation.inputs))
                quest.history.append(entry)
            quest.current, quest.ir, quest.intent, quest.resolved_at = derivation.id, derivation.ir, intent, entry["at"]
        out = _folded(snap, taken, skip=slug)
        quest.reads += taken.get(slug, {}).get("reads", 0)
        quest.resolves += taken.get(slug, {}).get("resolves", 0)
        quest_box[:] = [quest]
        out[path] = quest.render().encode("utf-8")
        return out

    unchanged: list[bool] = []
    with _taking(store, fold) as taken:
        derivation = derive(store, locators, summarize=summarize, author=author, extra_files=quest_file,
                            resolved=resolved)
    if unchanged:
        log_count(store, slug, resolves=1)
        quest = get(store, slug)
        counted = pending_counts(store).get(slug, {})
        quest.reads += counted.get("reads", 0)
        quest.resolves += counted.get("resolves", 0)
        return derivation, quest
    return derivation, quest_box[0]


def quests(store: GitStore, rev: str | None = None) -> list[Quest]:
    snap = store.snapshot(rev)
    out = [parse(snap.read_blob(blob), path) for path, blob in snap.walk(QUESTS) if path.endswith(".md")]
    return sorted(out, key=lambda q: q.slug)


def get(store: GitStore, slug: str) -> Quest:
    snap = store.snapshot()
    data = snap.read(f"{QUESTS}/{slug}.md")
    if data is None:
        raise NotFoundError(f"quest {slug!r} not found (see `memrepo quest list`)")
    return parse(data, f"{QUESTS}/{slug}.md")


def search(store: GitStore, text: str) -> list[tuple[Quest, list[str]]]:
    """Quests whose file mentions ``text`` (case-insensitive), with the matching lines."""
    needle = text.lower()
    snap = store.snapshot()
    out = []
    for path, blob in snap.walk(QUESTS):
        lines = snap.read_blob(blob).decode("utf-8", "replace").splitlines()
        hits = [line.strip() for line in lines if needle in line.lower()]
        if hits and path.endswith(".md"):
            out.append((parse(snap.read_blob(blob), path), hits))
    return sorted(out, key=lambda item: item[0].slug)


# --- staleness ---------------------------------------------------------------------------------------------------


def staleness(store: GitStore, found: list[Quest], loaded: dict[str, Derivation] | None = None) -> dict[str, str]:
    """slug -> the first commit after its resolve that touches an input, for each stale Quest in ``found``.

    Walks the first-parent chain from HEAD back to the oldest resolve, matching each commit's changed paths
    against a reverse index (input path -> Quests; folder selected at @latest -> Quests). The answer at each
    HEAD is cached, so the next call walks only the commits since.
    """
    head = store.head()
    if head is None or not found:
        return {}
    paths: dict[str, set[str]] = {}
    folders: dict[str, set[str]] = {}
    pending: dict[str, str | None] = {}
    for quest in found:
        try:
            derivation = (loaded or {}).get(quest.current) or load(store, quest.current)
        except NotFoundError:
            continue
        latest = [parse_locator(text) for text in quest.ir]
        for item in derivation.inputs:
            if any(_selects(loc, item.path) and loc.generation == LATEST for loc in latest):
                paths.setdefault(item.path, set()).add(quest.slug)
        for loc in latest:
            if loc.generation == LATEST:
                folders.setdefault(loc.path if loc.is_folder else loc.path + "/", set()).add(quest.slug)
        pending[quest.slug] = quest.resolved_at
    key = json.dumps(sorted(pending.items()))
    cache_file = store.state_dir / STALE_CACHE
    cached: dict[str, Any] = {}
    try:
        cached = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        pass
    stop = cached.get("head") if cached.get("key") == key else None
    known: dict[str, str] = dict(cached.get("stale", {})) if stop else {}  # older, so earlier than any found now
    stale = dict(known)
    active = set(pending)
    commit: str | None = head.decode()
    while commit is not None and commit != stop and active:
        active -= {slug for slug, at in pending.items() if at == commit}
        if not active:
            break
        for path, _old, _new in store.diff(commit):
            hit = set(paths.get(path, ()))
            for folder, slugs in folders.items():
                if path.startswith(folder):
                    hit |= slugs
            for slug in hit & active:
                if slug not in known:  # walking backwards: the last one set is the first commit
                    stale[slug] = commit
        commit = commit_parent(store, commit)
    try:
        store.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"head": head.decode(), "key": key, "stale": stale}, sort_keys=True))
        tmp.replace(cache_file)
    except OSError:
        pass  # a cache we cannot write costs a walk next time, nothing else
    return stale


def _selects(locator: Any, path: str) -> bool:
    return path.startswith(locator.path) if locator.is_folder else (path == locator.path
                                                                     or path.startswith(locator.path + "/"))


def with_staleness(store: GitStore, found: list[Quest]) -> list[Quest]:
    """``found`` with their staleness, and their counts with what the local log holds (shown, not committed)."""
    stale = staleness(store, found)
    pending = pending_counts(store)
    for quest in found:
        quest.stale_since = stale.get(quest.slug)
        quest.reads += pending.get(quest.slug, {}).get("reads", 0)
        quest.resolves += pending.get(quest.slug, {}).get("resolves", 0)
    return found


def plan_refresh(store: GitStore, slug: str) -> tuple[Quest, str, dict[str, list[str]]]:
    """What refreshing a Quest would change: (quest, new derivation id, added/removed/changed paths)."""
    quest = get(store, slug)
    _, inputs = resolve_selection(store, quest.ir)
    try:
        old = load(store, quest.current).inputs
    except NotFoundError:
        old = []
    return quest, derivation_id(inputs), _changes(old, inputs)


def refresh(store: GitStore, slug: str, *, author: bytes | None = None,
            resolved: tuple[list[str], list[Mounted]] | None = None) -> tuple[Derivation, Quest]:
    """Re-resolve a Quest's selection at the latest generations; the old resolve stays in its history.

    An explicit write: the read and resolve counts the local log holds are folded into the Quest files.
    """
    quest = get(store, slug)
    return build(store, quest.ir, quest.intent, author=author, resolved=resolved, fold=True)


# --- read and resolve counts: a local log, folded by an explicit write ------------------------------------------------

COUNT_LOG = "quest-counts.jsonl"


def count_read(store: GitStore, slug: str, *, author: bytes | None = None) -> None:
    """Count one read of a Quest (a Profile mounted it): in the clone's local log, never a commit."""
    log_count(store, slug, reads=1)


def log_count(store: GitStore, slug: str, *, reads: int = 0, resolves: int = 0) -> None:
    """Append a count to ``.git/memrepo/quest-counts.jsonl`` (untracked; one line, appended in one write)."""
    line = json.dumps({"slug": slug, "reads": reads, "resolves": resolves}, sort_keys=True) + "\n"
    try:
        store.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(store.state_dir / COUNT_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only clone: the count is lost, the read is not refused


def _read_log(paths: list[Any]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                item = json.loads(line)
                slot = counts.setdefault(str(item["slug"]), {"reads": 0, "resolves": 0})
                slot["reads"] += int(item.get("reads", 0))
                slot["resolves"] += int(item.get("resolves", 0))
            except (ValueError, KeyError, TypeError):
                continue  # a line a killed write cut short
    return counts


def _log_files(store: GitStore) -> list[Any]:
    folder = store.state_dir
    if not folder.is_dir():
        return []
    return [folder / COUNT_LOG, *sorted(folder.glob(COUNT_LOG + ".folding-*"))]


def pending_counts(store: GitStore) -> dict[str, dict[str, int]]:
    """slug -> the reads and resolves counted in the local log and not yet folded into its Quest file."""
    return _read_log(_log_files(store))


class _taking:
    """Takes the local log for a fold (renamed aside first, so counts logged meanwhile start a new log); removed
    once the commit that folds it is made, put back if it was not (a kill leaves it to the next fold)."""

    def __init__(self, store: GitStore, active: bool):
        self.store, self.active = store, active
        self.taken: list[Any] = []

    def __enter__(self) -> dict[str, dict[str, int]]:
        if not self.active:
            return {}
        log = self.store.state_dir / COUNT_LOG
        files = _log_files(self.store)[1:]
        if log.exists():
            aside = log.with_name(f"{COUNT_LOG}.folding-{os.getpid()}")
            os.replace(log, aside)
            files.append(aside)
        self.taken = files
        return _read_log(files)

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            for path in self.taken:
                path.unlink(missing_ok=True)


def _folded(snap: Snapshot, taken: dict[str, dict[str, int]], skip: str | None = None) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for slug, counts in taken.items():
        path = f"{QUESTS}/{slug}.md"
        data = snap.read(path) if slug != skip else None
        if data is None:
            continue
        quest = parse(data, path)
        quest.reads += counts["reads"]
        quest.resolves += counts["resolves"]
        out[path] = quest.render().encode("utf-8")
    return out


def fold(store: GitStore, *, author: bytes | None = None) -> int:
    """Write the local log's counts into the Quest files in one commit (``memrepo sync`` runs it before it
    pushes); the number of Quests changed."""
    with _taking(store, True) as taken:
        if not taken:
            return 0
        changed: list[int] = []

        def change(snap: Snapshot) -> dict[str, bytes]:
            out = _folded(snap, taken)
            changed[:] = [len(out)]
            return out

        store.commit(change, f"quest: fold the counts of {len(taken)} quest(s)", author=author)
    return changed[0] if changed else 0


# --- merging two clones' copies -------------------------------------------------------------------------------------


def merge(base: bytes | None, ours: bytes, theirs: bytes, path: str) -> bytes | None:
    """The merge of a Quest file two clones both changed (the ``memrepo`` merge driver, ``memrepo sync``).

    The resolve histories are unioned: the entries of ``base`` in their order, then the entries only one side
    added, deduplicated and in a canonical order, so the result is the same whichever clone merges. Counts
    add up what each side added since ``base``. The current resolve is the side whose current Derivation
    the last history entry names (else the one that sorts first). None if a side is not a Quest.
    """
    try:
        mine, other = parse(ours, path), parse(theirs, path)
        old = parse(base, path) if base else None
    except RecordError:
        return None

    def key(entry: dict[str, Any]) -> str:
        return json.dumps(entry, sort_keys=True, ensure_ascii=False)

    start = list(old.history) if old else []
    seen = {key(e) for e in start}
    added = {key(e): e for e in mine.history + other.history if key(e) not in seen}
    history = start + [added[k] for k in sorted(added)]

    def grown(attr: str) -> int:
        was = getattr(old, attr) if old else 0
        return was + (getattr(mine, attr) - was) + (getattr(other, attr) - was)

    def state(q: Quest) -> tuple[str, str, list[str], str]:
        return q.current, q.resolved_at or "", q.ir, q.intent

    if old is not None and state(mine) == state(old):
        winner = other
    elif old is not None and state(other) == state(old):
        winner = mine
    else:
        last = history[-1]["derivation"] if history else None
        sides = [q for q in (mine, other) if q.current == last] or [mine, other]
        winner = min(sides, key=lambda q: json.dumps(state(q)))
    merged = Quest(mine.slug, winner.intent, winner.ir, winner.current, winner.resolved_at,
                   resolves=max(grown("resolves"), 1), reads=max(grown("reads"), 0), history=history)
    return merged.render().encode("utf-8")


def is_quest_path(path: str) -> bool:
    return path.startswith(QUESTS + "/") and path.endswith(".md") and "/" not in path[len(QUESTS) + 1:]
