"""Text diffs of commits: what a person reads in a review or in the viewer's history.

Built on :meth:`GitStore.diff` (which files a commit changed, as blob ids); this
module reads both sides and renders a unified diff per file. Binary or huge
files are reported without their content.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from memrepo.store.git import GitStore

MAX_DIFF_BYTES = 200_000  # a side larger than this is summarised, not diffed


@dataclass(frozen=True)
class FileChange:
    """One file changed by a commit, against the commit's first parent."""

    path: str
    status: str  # added | modified | deleted
    old_blob: str | None
    new_blob: str | None
    diff: str  # unified diff text ("" when not shown: binary or too large)
    note: str = ""  # why the diff is not shown, if it is not

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "old_blob": self.old_blob,
            "new_blob": self.new_blob,
            "diff": self.diff,
            "note": self.note,
        }


def _text(store: GitStore, blob: str | None) -> tuple[list[str] | None, str]:
    if blob is None:
        return [], ""
    data = store.repo.object_store[blob.encode()].as_raw_string()
    if len(data) > MAX_DIFF_BYTES:
        return None, f"file larger than {MAX_DIFF_BYTES} bytes; diff not shown"
    if b"\x00" in data:
        return None, "binary file; diff not shown"
    try:
        return data.decode("utf-8").splitlines(keepends=True), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text; diff not shown"


def file_changes(
    store: GitStore, commit: str, *, paths: set[str] | None = None, context: int = 3, limit: int | None = None
) -> list[FileChange]:
    """Unified diffs of the files ``commit`` changed (only ``paths`` if given), in path order.

    Args:
        limit: render at most this many files (the rest are omitted).
    """
    out: list[FileChange] = []
    for path, old, new in sorted(store.diff(commit)):
        if paths is not None and path not in paths:
            continue
        if limit is not None and len(out) >= limit:
            break
        status = "added" if old is None else "deleted" if new is None else "modified"
        before, note_a = _text(store, old)
        after, note_b = _text(store, new)
        if before is None or after is None:
            out.append(FileChange(path, status, old, new, "", note_a or note_b))
            continue
        lines = difflib.unified_diff(
            before,
            after,
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile="/dev/null" if new is None else f"b/{path}",
            n=context,
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        out.append(FileChange(path, status, old, new, text))
    return out


def count_changes(store: GitStore, commit: str) -> int:
    """How many files ``commit`` changed."""
    return len(store.diff(commit))
