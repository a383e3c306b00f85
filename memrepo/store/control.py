"""The files Git keeps beside the objects: ``HEAD``, the branch ref, ``packed-refs``, ``config``, ``index``.

Garbage in one of them used to crash every command (a ``KeyError`` from dulwich
for a ref that holds no commit id), and a missing branch read as a new, empty
repository: the next write started an unrelated root commit and buried the
history. Here each file is checked, and each fault is named with its file and
the command that fixes it:

* ``HEAD``, the branch ref and ``packed-refs`` are checked before a read or a
  write uses HEAD (:meth:`memrepo.store.git.GitStore.head`); a fault raises
  :class:`DamagedRepositoryError`. The check reads two small files and, when its
  stat changed, ``packed-refs`` (a few microseconds on the usual path).
* A branch that is missing while the repository has history (a reflog, other
  refs or any object) is damage, not a new repository: memrepo writes nothing
  until it is restored, and says from where (the last reflog entry).
* ``config`` is read when the repository is opened; dulwich cannot open the
  repository without it, so the error names the line Git reports.
* The Git index is only the work tree's: memrepo's reads do not use it, so a
  damaged index is a notice on open (its header and checksum) and a problem for
  ``memrepo doctor``, which ``memrepo doctor --fix`` rebuilds from HEAD.

What :func:`repair` does (``memrepo doctor --fix``) is only what cannot lose
anything: HEAD pointing nowhere is pointed at ``main`` when that branch is
intact, unreadable lines of ``packed-refs`` are dropped (kept in a copy under
``.git/memrepo/damaged/``), and a damaged index is rebuilt from HEAD (also kept).
A branch ref that holds garbage or is missing, and a damaged config, are reported
with the command that fixes them: memrepo never guesses a branch tip.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memrepo.errors import RepositoryError

if TYPE_CHECKING:
    from memrepo.store.git import GitStore

HEX40 = re.compile(rb"[0-9a-f]{40}")
INDEX_QUICK_LIMIT = 4 << 20  # bytes: an index this small has its checksum verified on every open
DAMAGED_DIR = "damaged"  # under <gitdir>/memrepo: copies of the files doctor --fix replaced
_BAD_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


class DamagedRepositoryError(RepositoryError):
    """A Git control file (HEAD, a branch ref, packed-refs, config) is damaged; the message names the file and the fix."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.problem = message


def valid_ref_name(name: bytes) -> bool:
    """True if ``name`` is a ref name Git accepts (``git check-ref-format``, the rules memrepo meets)."""
    try:
        text = name.decode("ascii")
    except UnicodeDecodeError:
        return False
    if not text.startswith("refs/") or text.endswith(("/", ".", ".lock")) or _BAD_REF_CHARS.search(text):
        return False
    return ".." not in text and "//" not in text and "@{" not in text and \
        not any(part.startswith(".") for part in text.split("/"))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _shown(data: bytes) -> str:
    """A damaged file's first bytes, printable."""
    text = data[:40].decode("ascii", "backslashreplace").replace("\n", "\\n")
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    return f'"{text}{"..." if len(data) > 40 else ""}"'


# --- HEAD, refs, packed-refs ---------------------------------------------------------------------


def head_target(git_dir: Path) -> tuple[bytes | None, str | None]:
    """(the branch ref HEAD names, or None when detached) and what is wrong with HEAD (None: nothing)."""
    data = _read(git_dir / "HEAD")
    if data is None:
        return None, "missing"
    line = data.strip()
    if line.startswith(b"ref:"):
        target = line[4:].strip()
        if valid_ref_name(target) and target.startswith(b"refs/heads/"):
            return target, None
        return None, f"names {_shown(target)}, which is not a branch name"
    if HEX40.fullmatch(line):
        return None, None  # detached: reads work, writes say so
    return None, f"holds neither `ref: refs/heads/<branch>` nor a commit id ({_shown(data)})"


def packed_refs_damage(git_dir: Path) -> list[int]:
    """Line numbers (from 1) of the lines of ``packed-refs`` that are not `<sha> <ref>` (or `^<sha>`, a comment)."""
    data = _read(git_dir / "packed-refs")
    if data is None:
        return []
    if not data.strip():
        return [1]  # empty: Git accepts it, dulwich stops on it (StopIteration)
    bad = []
    for number, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b"^"):
            if not HEX40.fullmatch(line[1:]):
                bad.append(number)
            continue
        sha, _, name = line.partition(b" ")
        if not HEX40.fullmatch(sha) or not valid_ref_name(name):
            bad.append(number)
    return bad


def packed_ref(git_dir: Path, ref: bytes) -> bytes | None:
    """The commit id ``packed-refs`` holds for ``ref`` (only well-formed lines), or None."""
    data = _read(git_dir / "packed-refs") or b""
    for line in data.split(b"\n"):
        sha, _, name = line.rstrip(b"\r").partition(b" ")
        if name == ref and HEX40.fullmatch(sha):
            return sha
    return None


def reflog_tip(git_dir: Path, ref: bytes) -> str | None:
    """The commit id the last well-formed entry of ``ref``'s reflog moved it to (None: no reflog)."""
    data = _read(git_dir / "logs" / ref.decode("ascii", "replace"))
    for line in reversed((data or b"").splitlines()):
        fields = line.split(b" ", 2)
        if len(fields) >= 2 and HEX40.fullmatch(fields[1]) and set(fields[1]) != {ord("0")}:
            return fields[1].decode()
    return None


def has_history(git_dir: Path, ref: bytes) -> bool:
    """True if the repository shows it had commits: a reflog entry, another branch, or any stored object."""
    if reflog_tip(git_dir, ref) or reflog_tip(git_dir, b"HEAD"):
        return True
    heads = git_dir / "refs" / "heads"
    if heads.is_dir() and any(p.is_file() for p in heads.rglob("*")):
        return True
    if (_read(git_dir / "packed-refs") or b"").strip(b"\n").replace(b"#", b"").strip():
        return True
    objects = git_dir / "objects"
    try:
        with os.scandir(objects) as entries:
            for entry in entries:
                if len(entry.name) == 2 and entry.is_dir() and any(os.scandir(entry.path)):
                    return True
    except FileNotFoundError:
        return False
    pack = objects / "pack"
    return pack.is_dir() and any(p.suffix == ".pack" for p in pack.iterdir())


def restore_command(git_dir: Path, ref: bytes, *, broken: bool = False) -> str:
    """How to put ``ref`` back: `git update-ref` with the reflog's last commit, else how to find one.

    ``broken``: the loose ref file holds garbage, which Git refuses to update: it is removed first.
    """
    name = ref.decode("ascii", "replace")
    tip = reflog_tip(git_dir, ref)
    first = f"rm .git/{name} && " if broken else ""
    if tip:
        return (f"restore it from its reflog with `{first}git update-ref {name} {tip}` (the last commit the reflog "
                "names)")
    remote = next((p for p in sorted((git_dir / "refs" / "remotes").glob(f"*/{name.removeprefix('refs/heads/')}"))
                   if p.is_file()), None)
    if remote is not None:
        tracking = remote.relative_to(git_dir).as_posix()
        return f"restore it from the remote-tracking branch with `{first}git update-ref {name} {tracking}`"
    return (f"find the last commit with `git fsck --lost-found` (or `git log --all`) and restore it with "
            f"`{first}git update-ref {name} <commit id>`")


def ref_damage(git_dir: Path, *, bare: bool = False) -> tuple[str, str] | None:
    """(file, problem and fix) of the first damage to HEAD, its branch ref or packed-refs; None if they are sound.

    A branch that does not exist in a repository without history is a new repository, not damage; nor
    in a bare repository (a remote made by ``git init --bare`` names ``master`` whatever was pushed).
    """
    target, problem = head_target(git_dir)
    if problem is not None:
        branch = b"refs/heads/main"
        if (git_dir / "refs" / "heads" / "main").is_file() or packed_ref(git_dir, branch):
            fix = "point it at main with `git symbolic-ref HEAD refs/heads/main` (or `memrepo doctor --fix`)"
        else:
            fix = "point it at your branch with `git symbolic-ref HEAD refs/heads/<branch>` (`git branch` lists them)"
        return ".git/HEAD", f"{problem}: {fix}"
    bad = packed_refs_damage(git_dir)
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        return ".git/packed-refs", (f"line {lines} is not `<commit id> <ref name>`: `memrepo doctor --fix` removes the "
                                    "unreadable lines (keeping a copy), or edit the file by hand")
    if target is None:
        return None
    name = target.decode("ascii")
    data = _read(git_dir / name)
    if data is not None:
        value = data.strip()
        if HEX40.fullmatch(value):
            return None
        if value.startswith(b"ref:") and valid_ref_name(value[4:].strip()):
            return None
        return f".git/{name}", (f"holds no commit id ({_shown(data)}), so {name.removeprefix('refs/heads/')} points "
                                f"nowhere: {restore_command(git_dir, target, broken=True)}")
    if packed_ref(git_dir, target) is not None:
        return None
    if not bare and has_history(git_dir, target):
        return f".git/{name}", (f"is missing, but this repository has history: memrepo writes nothing (a write would "
                                f"start a new root commit and hide every memory); {restore_command(git_dir, target)}")
    return None


# --- config --------------------------------------------------------------------------------------


def config_damage(git_dir: Path, *, full: bool = False) -> str | None:
    """What is wrong with ``config`` (with the line, as Git reports it), or None if it reads.

    ``full`` also asks Git itself (stricter than dulwich), when git is installed.
    """
    from dulwich.config import ConfigFile

    path = git_dir / "config"
    if not path.exists():
        return None
    try:
        ConfigFile.from_path(str(path))
        problem = None
    except Exception as exc:  # dulwich's parse errors are ValueError, UnicodeDecodeError, KeyError...
        problem = str(exc) or type(exc).__name__
    unopenable = problem is not None
    if problem is None and not full:
        return None
    if shutil.which("git"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        for command in (["git", "config", "--file", str(path), "--list"],  # the syntax, with its line
                        ["git", "--git-dir", str(git_dir), "rev-parse", "--git-dir"]):  # values Git needs (core.bare)
            proc = subprocess.run(command, capture_output=True, env=env)
            if proc.returncode != 0:
                said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                problem = said[0].removeprefix("fatal: ").replace(str(path), ".git/config") if said else problem
                break
        else:
            if problem is None:
                return None
    then = "memrepo cannot open the repository" if unopenable else "Git commands (and memrepo's work-tree syncs) fail"
    return (f"not a readable Git config ({problem}): correct it by hand (`git config --file .git/config --list` "
            f"shows the next syntax error); {then} until then")


# --- the Git index -------------------------------------------------------------------------------


def index_damage(git_dir: Path, root: Path, *, full: bool = False) -> str | None:
    """What is wrong with the Git index (``.git/index``, and with ``full`` its shared index), or None.

    Without ``full`` only the header and, for an index up to :data:`INDEX_QUICK_LIMIT`, the checksum are read;
    ``full`` lets Git read every entry (``git ls-files``), shared index included.
    """
    path = git_dir / "index"
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    with open(path, "rb") as handle:
        header = handle.read(12)
        if header[:4] != b"DIRC" or int.from_bytes(header[4:8], "big") not in (2, 3, 4):
            return f"not a Git index (it starts with {_shown(header)})"
        if size <= INDEX_QUICK_LIMIT:
            handle.seek(0)
            data = handle.read()
            if len(data) < 32 or (hashlib.sha1(data[:-20]).digest() != data[-20:] and data[-20:] != bytes(20)):
                return "its checksum does not match its content"
    if full and shutil.which("git"):
        proc = subprocess.run(["git", "ls-files", "--stage"], cwd=root, capture_output=True,
                              env={**os.environ, "GIT_INDEX_FILE": str(path)})
        if proc.returncode != 0:
            said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return said[-1].removeprefix("fatal: ") if said else "git cannot read it"
    return None


INDEX_FIX = "`memrepo doctor --fix` rebuilds it from HEAD (staged changes in it are lost; the work tree is kept)"


def rebuild_index(store: "GitStore") -> str:
    """Replace a damaged Git index (and its shared index files) by one read from HEAD; what was done."""
    git_dir = store.git_dir
    keep = _damaged_dir(store)
    moved = []
    for path in [git_dir / "index", *sorted(git_dir.glob("sharedindex.*"))]:
        if path.exists():
            os.replace(path, keep / path.name)
            moved.append(path.name)
    env = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}
    proc = subprocess.run(["git", "read-tree", "HEAD"], cwd=store.root, capture_output=True, env=env)
    if proc.returncode != 0:
        raise RepositoryError(f"could not rebuild .git/index from HEAD: {proc.stderr.decode(errors='replace').strip()}")
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=store.root, capture_output=True, env=env)
    where = keep.relative_to(git_dir).as_posix()
    return f"rebuilt the damaged .git/index from HEAD (the damaged {', '.join(moved)} kept in .git/{where}/)"


# --- everything, for `memrepo doctor` and `memrepo doctor --fix` --------------------------------------


def control_problems(store: "GitStore") -> list[tuple[str, str]]:
    """(file, problem and fix) of every damaged control file: HEAD, the branch ref, packed-refs, config, index."""
    git_dir = store.git_dir
    out: list[tuple[str, str]] = []
    config = config_damage(git_dir, full=True)
    if config:
        out.append((".git/config", config))
    found = ref_damage(git_dir, bare=store.bare)
    if found:
        out.append(found)
        if found[0] != ".git/packed-refs" and packed_refs_damage(git_dir):
            out.append(ref_damage_packed(git_dir))
    if not store.bare and not config:  # Git reads the config first: its error is not the index's
        index = index_damage(git_dir, store.root, full=True)
        if index:
            out.append((".git/index", f"{index}: {INDEX_FIX}"))
    return out


def ref_damage_packed(git_dir: Path) -> tuple[str, str]:
    bad = packed_refs_damage(git_dir)
    return ".git/packed-refs", (f"line {', '.join(map(str, bad[:5]))} is not `<commit id> <ref name>`: "
                                "`memrepo doctor --fix` removes the unreadable lines (keeping a copy)")


def repair(store: "GitStore") -> list[str]:
    """Repair what can be repaired without a guess (see the module docstring); messages of what was done."""
    git_dir = store.git_dir
    messages: list[str] = []
    bad = set(packed_refs_damage(git_dir))
    if bad:
        path = git_dir / "packed-refs"
        data = path.read_bytes()
        shutil.copy2(path, _damaged_dir(store) / f"packed-refs.{int(time.time())}")
        kept, dropping = [], False
        for number, line in enumerate(data.split(b"\n"), 1):
            if line.startswith(b"^") and dropping:
                continue  # the peeled value of a dropped line
            dropping = number in bad
            if not dropping:
                kept.append(line)
        if any(line.strip() and not line.startswith(b"#") for line in kept):
            tmp = path.with_name(f"packed-refs.{os.getpid()}.tmp")
            tmp.write_bytes(b"\n".join(kept))
            os.replace(tmp, path)
        else:
            path.unlink()  # no ref left in it (an empty file is one dulwich cannot read)
        messages.append(f"removed {len(bad)} unreadable line(s) from .git/packed-refs (a copy is in .git/memrepo/"
                        f"{DAMAGED_DIR}/)")
    target, problem = head_target(git_dir)
    main = b"refs/heads/main"
    if problem is not None and (HEX40.fullmatch((_read(git_dir / "refs" / "heads" / "main") or b"").strip())
                                or packed_ref(git_dir, main)):
        (git_dir / "HEAD").write_bytes(b"ref: refs/heads/main\n")
        messages.append(f"HEAD {problem}: pointed it at refs/heads/main")
    if not store.bare and ref_damage(git_dir, bare=False) is None and index_damage(git_dir, store.root, full=True):
        if shutil.which("git"):
            messages.append(rebuild_index(store))
    return messages


def _damaged_dir(store: "GitStore") -> Path:
    folder = store.state_dir / DAMAGED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder
