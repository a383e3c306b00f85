"""A plain `pip install .` (a built wheel, not the source tree) carries everything memrepo reads."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(PROJECT)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{proc.stderr[-2000:]}")
    return next(out.glob("memrepo-*.whl"))


def test_wheel_holds_templates_hooks_and_viewer(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for hook in ("post-commit", "post-merge", "post-checkout"):
        assert f"memrepo/_data/hooks/{hook}" in names
    assert "memrepo/_data/templates/repo/memrepo.toml" in names
    assert "viewer/__init__.py" in names
    assert "memrepo/index/data/minilm-l6-v2-tokenizer.json" in names  # the embedder's tokenizer
    assert "memrepo/index/data/NOTICE" in names
    assert any(n.startswith("memrepo-") and n.endswith("entry_points.txt") for n in names)


def test_installed_copy_initialises_a_repository(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    # Run from an empty folder so the source tree cannot be imported by accident.
    code = (
        "import memrepo, sys; assert memrepo.__file__.startswith(sys.argv[1]), memrepo.__file__;"
        "from memrepo.cli import main; sys.argv = ['memrepo', 'init', 'memory']; main()"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(site)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "memory/memrepo.toml").exists()
    assert (tmp_path / "memory/.git/hooks/post-commit").exists()


def test_the_cli_reference_in_docs_is_every_commands_help():
    """docs/cli.md is generated from the commands (`make cli-reference`); it must not drift from them."""
    from memrepo.cli import command_manual

    written = (PROJECT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == command_manual(), "docs/cli.md is out of date: run `make cli-reference`"


def test_every_command_has_help():
    import click

    from memrepo.cli import cli

    def walk(command: click.Command, path: str):
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                if not sub.hidden:
                    yield from walk(sub, f"{path} {name}")
        else:
            yield path, command

    missing = [path for path, command in walk(cli, "memrepo") if not (command.help or "").strip()]
    assert missing == []
