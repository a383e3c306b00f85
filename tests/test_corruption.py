"""Corruption is reported, never a traceback (issue 21), and every derived index is known to every command (issue 22).

Each test plants one fault in a copy of a real memory repository (a conversation
ingested with its graph files, every derived index built): a truncated, altered or
missing Git object, a garbled Tantivy, usearch or SQLite index file, a garbled
embedding cache. `memrepo doctor` must report it by name, other commands must
fail with one line (or repair a derived file with a message), and
`memrepo reindex --full` must repair whatever is derived.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.capabilities import DERIVED_INDEXES

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "conversation.txt"
RECORD = "ep-2023-05-02-01cd8fb0"  # one of the records the example conversation yields
_BUILT: dict[str, Path] = {}


def _pristine(tmp_path_factory) -> Path:
    """A memory repository with sources, records, graph files and every derived index built (made once)."""
    if "root" not in _BUILT:
        root = tmp_path_factory.mktemp("pristine") / "memory"
        with MemoryRepo.init(root) as repo:
            repo.ingest([EXAMPLE])
            repo.reindex()
        _BUILT["root"] = root
    return _BUILT["root"]


@pytest.fixture
def memory(tmp_path, tmp_path_factory) -> Path:
    """A private copy of the pristine repository (file times kept, as `cp -a` does)."""
    target = tmp_path / "memory"
    shutil.copytree(_pristine(tmp_path_factory), target, symlinks=True)
    return target


def memrepo(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m memrepo --repo ROOT ARGS...` in a fresh process (nothing imported beforehand)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(root), *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def doctor(root: Path) -> list[str]:
    result = memrepo(root, "doctor", "--json")
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert result.returncode == (0 if report["ok"] else 1)
    return [f"{p['path']}: {p['message']}" for p in report["problems"]]


# --- one table of derived indexes -------------------------------------------------------------------------------


def test_reindex_full_in_a_fresh_process_rebuilds_every_derived_index(memory):
    result = memrepo(memory, "reindex", "--full", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert sorted(actions) == sorted(DERIVED_INDEXES)
    assert all(action.startswith("rebuilt") for action in actions.values())


def test_doctor_in_a_fresh_process_checks_every_derived_index(memory):
    for name in DERIVED_INDEXES:
        (memory / ".git" / "memrepo" / "indexes" / name / "CURRENT").write_text("{not json", encoding="utf-8")
    problems = doctor(memory)
    for name in DERIVED_INDEXES:
        assert any(f"index {name}:" in p for p in problems), (name, problems)


def test_index_status_lists_every_derived_index(memory):
    result = subprocess.run(
        [sys.executable, "-c", "import sys, json; from memrepo.api import MemoryRepo; "
         "r = MemoryRepo.open(sys.argv[1]); print(json.dumps([s['index'] for s in r.index_status()]))", str(memory)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == list(DERIVED_INDEXES)
