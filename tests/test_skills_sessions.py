"""Procedural AutoDream on sessions as agents write them (issue 33): SKILL.md files the Agent Skills reference
validator accepts, old-format skills still read, agent runs in OpenAI tool-call shape ingested, and a release
procedure learned from six natural sessions (no cue phrases)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.dream.skills import pending_sessions

NOW = "2026-05-10T10:00:00Z"


def agentskills() -> str:
    """The reference validator's command, or skip with the reason."""
    found = shutil.which("agentskills") or str(Path(sys.executable).parent / "agentskills")
    if not Path(found).exists():
        pytest.skip("the skills-ref package (command agentskills) is not installed: pip install -e '.[test]'")
    return found


def validate(folder: Path) -> None:
    """Every skill folder under ``folder`` passes ``agentskills validate``."""
    command = agentskills()
    skills = sorted(p.parent for p in folder.glob("*/SKILL.md"))
    assert skills, f"no skill exported under {folder}"
    for skill in skills:
        done = subprocess.run([command, "validate", str(skill)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def export(repo_dir: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["--repo", str(repo_dir), "skills", "export", str(out)])
    assert result.exit_code == 0, result.output


OLD_FORMAT = """---
name: online-shopping
description: Buy things online for the user within their budget
id: skill-online-shopping
version: 3
experiences: [pr-2026-05-01-aaaaaaaa]
---
# Online shopping

## Steps

1. Search with the budget as the price filter.
"""


def test_an_old_format_skill_is_read_and_rewritten_in_the_format_the_validator_accepts(tmp_path):
    from memrepo.dream.curate import parse_skill

    skill = parse_skill("online-shopping", OLD_FORMAT.encode())
    assert skill.version == 3 and not skill.hand_written and skill.own["experiences"] == ["pr-2026-05-01-aaaaaaaa"]
    skill.set_own(version=4)
    folder = tmp_path / "out" / "online-shopping"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill.render())
    meta = yaml.safe_load((folder / "SKILL.md").read_text().split("---\n")[1])
    assert set(meta) == {"name", "description", "metadata"}
    assert meta["metadata"] == {"experiences": ["pr-2026-05-01-aaaaaaaa"], "id": "skill-online-shopping",
                                "version": 4}
    validate(tmp_path / "out")
    # the file as it was fails the validator: the flow-style list and the top-level fields
    old = tmp_path / "old" / "online-shopping"
    old.mkdir(parents=True)
    (old / "SKILL.md").write_text(OLD_FORMAT)
    done = subprocess.run([agentskills(), "validate", str(old)], capture_output=True, text=True)
    assert done.returncode == 1
