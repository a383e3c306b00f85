"""The Agent Skill that teaches an agent the memrepo command line (``memrepo skill install DIR``).

An Agent Skill is a folder with a ``SKILL.md`` whose front matter (``name``,
``description``) an agent reads up front and whose body it reads when the skill
applies. The body stays short; the full command manual is a second file the agent
opens only when it needs it, as the Memorix paper does with its CLI manual.
"""

from __future__ import annotations

import os
from pathlib import Path

from memrepo.errors import RepositoryError
from memrepo.resources import template

SKILL_NAME = "memrepo"
MANUAL_FILE = "reference.md"


def install_skill(directory: str | os.PathLike, manual: str) -> list[Path]:
    """Write ``DIRECTORY/memrepo/SKILL.md`` and the command ``manual`` beside it (replacing older copies).

    Args:
        manual: the full command manual (Markdown); the CLI builds it from each command's help.

    Returns:
        The files written.

    Raises:
        RepositoryError: if the folder cannot be written.
    """
    folder = Path(directory) / SKILL_NAME
    files = {folder / "SKILL.md": template("skill/SKILL.md"), folder / MANUAL_FILE: manual}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)  # an agent reading the skill meanwhile sees the old file or the new one
    except OSError as exc:
        raise RepositoryError(f"{folder}: cannot write the skill: {exc.strerror}") from exc
    return list(files)
