"""Team memory that loses nothing (issue 29): ingest --to never replaces silently, forgets stay
forgotten across clones, syncs serialized with writes, core blocks merged by line, the graph caught
up after any merge.

Real bare remotes and clones in tmp_path, driven by the real `git` and the CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from test_team import PROJECT, git, run, two_clones


@pytest.fixture(autouse=True)
def _memrepo_importable(monkeypatch):
    """Hooks run `python -m memrepo` in other processes: they must import this checkout."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))


# --- ingest --to -----------------------------------------------------------------------------------------------------


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_ingest_to_refuses_to_replace_a_teammates_different_file_without_replace(tmp_path):
    remote, a, b = two_clones(tmp_path)
    theirs = write(tmp_path / "in-a" / "notes.md", "# Notes\n\nThe boiler is serviced every March.\n")
    assert run("--repo", str(a), "ingest", "--to", "resource/notes.md", str(theirs))[0] == 0
    assert run("--repo", str(a), "sync")[0] == 0
    assert run("--repo", str(b), "sync")[0] == 0
    head = git(b, "rev-parse", "HEAD")
    mine = write(tmp_path / "in-b" / "notes.md", "# Notes\n\nThe car needs new tyres before winter.\n")
    code, out = run("--repo", str(b), "ingest", "--to", "resource/notes.md", str(mine))
    assert code == 1 and "Traceback" not in out
    assert "resource/notes.md: already holds a different file" in out and "--replace" in out and "Notes" in out
    assert git(b, "rev-parse", "HEAD") == head and "boiler" in (b / "resource" / "notes.md").read_text()
    code, out = run("--repo", str(b), "ingest", "--to", "resource/notes.md", "--replace", str(mine))
    assert code == 0, out
    old_blob = git(b, "rev-parse", f"{head}:resource/notes.md")
    assert "replacing the file there" in out and old_blob[:12] in out
    assert "tyres" in (b / "resource" / "notes.md").read_text()
    code, out = run("--repo", str(b), "ingest", "--to", "resource/notes.md", "--replace", str(mine), "--json")
    assert code == 0 and json.loads(out) == {"path": "resource/notes.md", "commit": None, "replaced": None}


def test_ingest_to_the_same_file_again_is_a_no_op_for_rules_and_resources(repo, tmp_path):
    doc = write(tmp_path / "api.md", "---\npackage: api\n---\n# API\n\nCall it with a token.\n")
    rule = write(tmp_path / "rule.md", "# vLLM\n\nPin the version.\n")
    for target, src in (("resource/api.md", doc), ("rules/python/vllm.md", rule)):
        code, out = run("--repo", str(repo.root), "ingest", "--to", target, str(src))
        assert code == 0 and "Stored" in out, out
        head = repo.store.head()
        code, out = run("--repo", str(repo.root), "ingest", "--to", target, str(src))  # a later mention time
        assert code == 0 and "already holds this file; nothing to commit" in out, out
        assert repo.store.head() == head
    other = write(tmp_path / "rule2.md", "# vLLM\n\nPin the version. Use --max-model-len.\n")
    code, out = run("--repo", str(repo.root), "ingest", "--to", "rules/python/vllm.md", str(other))
    assert code == 1 and "rules/python/vllm.md: already holds a different file" in out and "'vLLM'" in out


@pytest.mark.parametrize("data, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file (a NUL byte at offset 8)"),
    (b"# Notes\n\ncaf\xe9 au lait\n", "is not UTF-8 text"),
])
def test_ingest_to_refuses_binary_input_naming_the_file(repo, tmp_path, data, message):
    src = write(tmp_path / "picture.md", data)
    for target in ("resource/picture.md", "rules/picture.md"):
        code, out = run("--repo", str(repo.root), "ingest", "--to", target, str(src))
        assert code == 1 and f"{src}: {message}" in out and "Traceback" not in out, out
    assert repo.store.head() is None or not repo.tree_files("resource/")


def test_ingest_to_a_missing_file_is_one_clear_line(repo, tmp_path):
    code, out = run("--repo", str(repo.root), "ingest", "--to", "rules/a.md", str(tmp_path / "nope.md"))
    assert code == 1 and out.strip() == f"Error: {tmp_path / 'nope.md'}: no such file; nothing was stored"
    code, out = run("--repo", str(repo.root), "ingest", "--replace", str(tmp_path / "nope.md"))
    assert code == 2 and "--replace goes with --to" in out
