"""Model usage per role: calls, input/output tokens and seconds, kept per repository.

The file lives in the repository's state directory (derived, never tracked) and is
updated under a lock with an atomic rename, so concurrent writers add up.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STATS_FILE = "llm-stats.json"
FIELDS = ("calls", "offline_calls", "failed_calls", "repairs", "input_tokens", "output_tokens", "seconds")


@dataclass
class RoleStats:
    """Totals for one role."""

    calls: int = 0
    offline_calls: int = 0
    failed_calls: int = 0
    repairs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def add(self, other: "RoleStats") -> None:
        for name in FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 4)
        return data


def merge(totals: dict[str, RoleStats], more: dict[str, RoleStats]) -> None:
    for role, stats in more.items():
        totals.setdefault(role, RoleStats()).add(stats)


def as_dict(totals: dict[str, RoleStats]) -> dict[str, dict[str, Any]]:
    return {role: totals[role].to_dict() for role in sorted(totals)}


def read_stats(path: Path) -> dict[str, RoleStats]:
    """Totals per role stored at ``path`` (empty if the file does not exist or is unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, RoleStats] = {}
    for role, values in (data.get("roles") or {}).items():
        if isinstance(values, dict):
            out[role] = RoleStats(**{k: values[k] for k in FIELDS if isinstance(values.get(k), (int, float))})
    return out


def add_stats(path: Path, delta: dict[str, RoleStats]) -> None:
    """Add ``delta`` to the totals at ``path`` (created if needed), under a lock."""
    if not delta:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            totals = read_stats(path)
            merge(totals, delta)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps({"roles": as_dict(totals)}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
