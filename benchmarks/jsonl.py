"""The one reader of the evaluation sets' JSONL files (``offline_eval.py``, ``documents.py``).

A bad line ends the run with the file, the line number and what is wrong with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator


def rows(path: Path, fields: tuple[str, ...], help_file: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-empty line of ``path``, each checked to be an object with ``fields``.

    Raises:
        SystemExit: the file is missing (``help_file`` says where the format is described), a line is not JSON,
            not an object or lacks a field.
    """
    if not path.is_file():
        see = f" (see {help_file} for the data's format)" if help_file else ""
        raise SystemExit(f"{path}: no such file{see}")
    for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}: line {lineno} is not valid JSON ({exc.msg})") from exc
        missing = [f for f in fields if f not in row] if isinstance(row, dict) else list(fields)
        if missing:
            raise SystemExit(f"{path}: line {lineno} lacks {', '.join(missing)}")
        yield lineno, row
