"""Files shipped with memrepo (prompt and repository templates, Git hooks), and the CPUs it may use.

In a source checkout they live in the top-level ``templates/`` and ``hooks/``
folders; an installed wheel carries them as ``memrepo/_data/<name>``.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder of shipped files called ``name`` (``templates`` or ``hooks``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"memrepo is installed without its {name}/ folder")


def template(name: str) -> str:
    """Text of ``templates/<name>``."""
    return (data_dir("templates") / name).read_text(encoding="utf-8")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity, e.g. a container's share), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1
