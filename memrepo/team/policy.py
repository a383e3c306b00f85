"""The push policy: what every commit a teammate pushes may hold (DESIGN.md §9, docs/team.md §5).

Everything in a push is untrusted input: file names, file kinds, sizes, front matter,
settings, decision files. :mod:`memrepo.team.validate` walks every commit a push brings
(not only the net diff) and asks the functions here about each changed entry; each
problem names its rule from :data:`RULES`, so a refusal says which rule it broke and
``docs/team.md`` can list every rule with its message. Pure functions over paths,
modes and bytes: the Git plumbing is in ``validate``.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Iterable

from memrepo import records as rec

# rule -> what it refuses (docs/team.md lists these; a test checks the two agree)
RULES: dict[str, str] = {
    "file-kind": "symbolic links, submodules (gitlinks), `.gitmodules` and any `.git` entry",
    "layout": "paths outside the memory layout (top-level folders and the file kinds each holds)",
    "size": "a file over the per-file limit, or a push whose new files exceed the per-push limit",
    "conflict-marker": "unresolved Git conflict markers in a text file",
    "record": "a record, source or skill that does not parse (safe YAML: no tags, few aliases), "
              "or sits at the wrong path, or whose id has the wrong type",
    "citation": "a record citing a source or part that does not exist in its commit",
    "source-deleted": "deleting a source that records of the same commit still cite",
    "graph": "a graph file that is not Turtle, sits at the wrong path, or describes a record "
             "that does not exist in its commit",
    "decision": "editing or deleting a decision file, or a decision file that does not read",
    "review": "a Dream run (merges or skill edits) reaching main other than by a reviewed merge of its branch",
    "rejected": "main holding a Dream run that a decision on main rejected (no later reinstatement)",
    "vault": "a vault record whose body is not Fernet ciphertext",
    "secret": "a plaintext secret (token, key, password statement) in any file of any commit",
    "settings": "a memrepo.toml that does not parse, or that names where data goes (endpoints, keys, paths)",
    "attributes": "a .gitattributes that drops memrepo's merge driver or adds lines of its own",
    "tombstone": "deleting a tombstone, editing it other than by an undo, or a forgotten id present",
    "merge-drop": "a merge that drops a record or source one side had and the other never deleted",
    "history": "rewriting or deleting main",
}

# Limits (a server changes them with `git config memrepo.maxFileBytes N` / `memrepo.maxPushBytes N`).
MAX_FILE_BYTES = 2 * 1024 * 1024  # ingest caps a document at 1 MB; a source of it with its parts fits in 2
MAX_PUSH_BYTES = 256 * 1024 * 1024
MAX_SETTINGS_BYTES = 64 * 1024

REGULAR = ("100644", "100755")
SYMLINK, GITLINK = "120000", "160000"

# Top-level entries of a memory repository (DESIGN.md §2) and the file suffixes each folder holds.
TOP_FILES = ("memrepo.toml", "README.md", ".gitattributes")
FOLDERS: dict[str, tuple[str, ...]] = {
    "core": (".md",),
    "episodic": (".md",),
    "semantic": (".md",),
    "procedural": (".md", ".json"),  # skills and experiences (.md), skills run files (.json)
    "resource": (),  # documents and artifacts of any kind, by path
    "vault": (".md",),
    "rules": (),
    "sources": (".md",),
    "graph": (".ttl",),
    "views": (".md", ".json"),
    "tombstones": (".md",),
}
DECISION_FOLDERS = ("graph/decisions/", "procedural/decisions/")


@dataclass(frozen=True)
class Problem:
    """One refusal: which commit, which file, which rule, and why (never a secret's value)."""

    path: str
    message: str
    rule: str
    commit: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "message": self.message, "rule": self.rule, "commit": self.commit}

    def line(self) -> str:
        where = f" (rule {self.rule}" + (f", commit {self.commit[:12]})" if self.commit else ")")
        return f"{self.path}: {self.message}{where}"


def entry_problems(path: str, mode: str) -> Iterable[tuple[str, str]]:
    """(rule, message) for a path and file mode a commit adds, whatever its content."""
    parts = path.split("/")
    if any(p.casefold().rstrip(". ") == ".git" for p in parts):
        yield "file-kind", "a `.git` entry in the tree (Git refuses to check it out; every clone would break)"
        return
    if mode == SYMLINK:
        yield "file-kind", "a symbolic link (memory files are plain files; a link could point outside the repository)"
        return
    if mode == GITLINK:
        yield "file-kind", "a submodule (memory files are plain files)"
        return
    if mode not in REGULAR:
        yield "file-kind", f"an entry of mode {mode} (only plain files are allowed)"
        return
    if path == ".gitmodules":
        yield "file-kind", "a .gitmodules file (submodules are not allowed)"
        return
    if len(parts) == 1:
        if path not in TOP_FILES:
            yield "layout", (f"a file outside the memory layout (top-level files: {', '.join(TOP_FILES)}; "
                             f"folders: {', '.join(f + '/' for f in FOLDERS)})")
        return
    suffixes = FOLDERS.get(parts[0])
    if suffixes is None:
        yield "layout", f"{parts[0]}/ is not a folder of the memory layout ({', '.join(f + '/' for f in FOLDERS)})"
    elif suffixes and not path.endswith(suffixes) and not path.endswith("/README.md"):
        yield "layout", f"{parts[0]}/ holds only {' and '.join(suffixes)} files"


def size_limit(path: str, max_file: int) -> int:
    return MAX_SETTINGS_BYTES if path == "memrepo.toml" else max_file


# --- content ---------------------------------------------------------------------


_FERNET_RE = re.compile(r"^[A-Za-z0-9_-]+={0,2}$")


def is_fernet_token(text: str) -> bool:
    """True if ``text`` is shaped like a Fernet token: version 0x80, timestamp, IV, whole AES blocks, HMAC.

    The hook has no key; this is what it can check without one (a plaintext body or a forged
    ``cipher: fernet`` over plaintext fails it).
    """
    token = text.strip()
    if not _FERNET_RE.match(token):
        return False
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return False
    return len(raw) >= 73 and raw[0] == 0x80 and (len(raw) - 57) % 16 == 0


def vault_problem(record: rec.Record) -> str | None:
    if not record.extra.get("cipher"):
        return "a vault value in plaintext (vault records are sealed with the vault key before they are committed)"
    if record.extra.get("cipher") != "fernet" or not is_fernet_token(record.text):
        return "a vault record whose body is not Fernet ciphertext (`cipher: fernet` over a plaintext body)"
    return None


def secret_problems(path: str, text: str) -> Iterable[str]:
    """A message per secret in ``text``: its kind and line, never its value."""
    from memrepo import sensitive

    seen: set[tuple[str, int]] = set()
    for finding in sensitive.find(text):
        line = text.count("\n", 0, finding.start) + 1
        if (finding.kind, line) in seen:
            continue
        seen.add((finding.kind, line))
        yield (f"a plaintext secret ({finding.kind}) on line {line}: secrets go to the vault "
               "(set MEMREPO_VAULT_KEY and write it through memrepo), never into history")


def settings_problems(text: str) -> Iterable[str]:
    """What a pushed ``memrepo.toml`` may not hold: invalid TOML, or keys that decide where data goes."""
    from memrepo.settings import SettingsError, config_from_text, network_keys

    try:
        config_from_text(text, "memrepo.toml")
        keys = network_keys(text)
    except SettingsError as exc:
        yield from (line.removeprefix("memrepo.toml: ") for line in str(exc).splitlines())
        return
    for key in keys:
        yield (f"names {key}, which decides where data goes: endpoints and keys come from each user's own "
               "environment or ~/.config/memrepo/config.toml, never from a pushed file")


def attributes_problems(text: str) -> Iterable[str]:
    from memrepo.team.mergedriver import ATTRIBUTES_LINE, LINES

    ours = set(LINES)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#") and line not in ours:
            yield f"line {number} is not memrepo's ({line[:80]!r}): .gitattributes holds memrepo's merge driver lines only"
    if ATTRIBUTES_LINE not in {raw.strip() for raw in text.splitlines()}:
        yield f"drops {ATTRIBUTES_LINE!r}: graph files would conflict in every merge"


def is_decision_path(path: str) -> bool:
    return path.startswith(DECISION_FOLDERS)


def run_id_of(path: str) -> str | None:
    """The Dream run a decision or skills run file records (its file name), or None."""
    if not is_decision_path(path):
        return None
    name = path.rsplit("/", 1)[-1]
    for suffix in (".ttl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


REJECTED, REINSTATED = "-rejected", "-reinstated"


def run_needs_review(path: str, data: bytes) -> bool:
    """True if a Dream run file proposes something (anchor merges, judge rejections, skill edits): such a
    run waits on a review branch. A run with nothing to review only records its frontier on main."""
    if path.endswith(".ttl"):
        return any(word in data for word in (b"sameAs", b"MergeDecision", b"Rejection"))
    import json

    try:
        run = json.loads(data)
    except ValueError:
        return True
    changes = run.get("changes") if isinstance(run, dict) else None
    return not isinstance(run, dict) or bool(changes)
