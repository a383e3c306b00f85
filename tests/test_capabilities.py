"""One capability table (memrepo/capabilities.py) is what reindex, doctor, the Git hooks, the viewer's index
status and the after-write catch-up iterate over, in a fresh process, with plugins' entries (issue 22)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memrepo import capabilities
from memrepo.api import MemoryRepo
from memrepo.errors import MemrepoError
from memrepo.graph.model import graph_path

PROJECT = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent(
    '''
    """A plugin as another distribution would ship one: an index, an after-commit step, a doctor check."""
    from memrepo.doctor import Problem
    from memrepo.index.base import DerivedIndex


    class ProbeIndex(DerivedIndex):
        name = "probe"

        def wants(self, path):
            return path.endswith(".md")

        def update(self, ctx, previous, folder, changes):
            (folder / "count").write_text(str(len(changes)))


    def after_commit(ctx, record_ids):
        with open(ctx.store.state_dir / "probe-steps", "a") as handle:
            handle.write(" ".join(record_ids) + "\\n")


    def check(view):
        yield Problem("probe", "the probe check ran", note=True)
    '''
)

ENTRY_POINTS = textwrap.dedent(
    """
    [memrepo.indexes]
    probe = memrepo_probe:ProbeIndex

    [memrepo.after_commit]
    probe = memrepo_probe:after_commit

    [memrepo.doctor_checks]
    probe = memrepo_probe:check
    """
)


def install_probe(folder: Path) -> Path:
    """A distribution on a path entry: ``memrepo_probe.py`` and its dist-info with entry points (nothing pip-installed)."""
    folder.mkdir()
    (folder / "memrepo_probe.py").write_text(PROBE)
    info = folder / "memrepo_probe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memrepo-probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return folder


def test_entry_points_extend_each_table_and_never_replace_memrepos_own(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_probe(tmp_path / "plugins")))
    assert capabilities.plugin_entries("memrepo.indexes") == {"probe": "memrepo_probe:ProbeIndex"}
    found = capabilities.with_plugins()
    assert list(found.indexes) == [*capabilities.DERIVED_INDEXES, "probe"]
    assert list(found.after_commit) == [*capabilities.AFTER_COMMIT, "probe"]
    assert list(found.doctor_checks) == [*capabilities.DOCTOR_CHECKS, "probe"]
    assert capabilities.resolve(found.indexes["probe"]).name == "probe"
    # Every entry memrepo lists names something that exists.
    for table in (capabilities.DERIVED_INDEXES, capabilities.AFTER_COMMIT, capabilities.DOCTOR_CHECKS):
        for entry in table.values():
            assert callable(capabilities.resolve(entry)), entry


def test_an_entry_that_cannot_be_loaded_is_one_explained_error(tmp_path, monkeypatch):
    with pytest.raises(MemrepoError, match=r"capability 'memrepo_gone:Index' cannot be loaded \(ModuleNotFoundError"):
        capabilities.resolve("memrepo_gone:Index")
    memory = tmp_path / "memory"
    MemoryRepo.init(memory).close()
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    info = plugins / "memrepo_gone-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memrepo-gone\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[memrepo.indexes]\ngone = memrepo_gone:Index\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), str(PROJECT)])}
    out = _memrepo(env, memory, "reindex")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "capability 'memrepo_gone:Index' cannot be loaded" in out.stdout + out.stderr


def _run(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _memrepo(env: dict[str, str], memory: Path, *args: str) -> subprocess.CompletedProcess:
    return _run(env, "-m", "memrepo", "--repo", str(memory), *args)


def _index_status(env: dict[str, str], memory: Path) -> list[dict]:
    """What the viewer's index section shows (viewer/overview.py calls MemoryRepo.index_status), in a fresh process."""
    code = "import json, sys; from memrepo.api import MemoryRepo; print(json.dumps(MemoryRepo.open(sys.argv[1]).index_status()))"
    out = _run(env, "-c", code, str(memory))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_entry_is_seen_by_each_caller_in_a_fresh_process(tmp_path):
    memory = tmp_path / "memory"
    MemoryRepo.init(memory).close()
    for name in ("post-commit", "post-merge", "post-checkout"):  # the test runs the catch-up itself, not in the background
        (memory / ".git" / "hooks" / name).unlink()
    plugins = install_probe(tmp_path / "plugins")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), str(PROJECT)])}
    everything = [*capabilities.DERIVED_INDEXES, "probe"]

    # The after-write catch-up: memrepo's steps (the graph file) and the plugin's step both ran.
    out = _memrepo(env, memory, "remember", "Mia bought a Suica card at Tokyo Station", "--type", "episodic", "--json")
    assert out.returncode == 0, out.stderr
    (record_id,) = json.loads(out.stdout)["written"]
    assert (memory / ".git" / "memrepo" / "probe-steps").read_text().split() == [record_id]
    with MemoryRepo.open(memory) as repo:
        assert repo.snapshot.exists(graph_path(record_id))

    # reindex --full builds every index of the table, plugins' too.
    out = _memrepo(env, memory, "reindex", "--full", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert sorted(report["actions"]) == sorted(everything) and all(a.startswith("rebuilt") for a in report["actions"].values())

    # The viewer's index status lists every one.
    assert [s["index"] for s in _index_status(env, memory)] == everything

    # The Git hooks' catch-up brings every one to the new HEAD.
    out = _memrepo(env, memory, "remember", "Jonas lives in Lisbon", "--type", "semantic", "--json")
    assert out.returncode == 0, out.stderr
    assert not any(s["current"] for s in _index_status(env, memory))
    out = _run(env, "-m", "memrepo", "hook", "post-commit", cwd=memory)
    assert out.returncode == 0, out.stderr
    states = _index_status(env, memory)
    assert [s["index"] for s in states] == everything and all(s["current"] for s in states)

    # doctor runs every check (the plugin's note) and checks every index.
    out = _memrepo(env, memory, "doctor", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert {"path": "probe", "message": "the probe check ran"} in json.loads(out.stdout)["notes"]


def test_a_corrupt_provenance_index_is_reported_by_doctor_and_rebuilt_by_reindex_full(tmp_path):
    memory = tmp_path / "memory"
    with MemoryRepo.init(memory) as repo:
        repo.remember("Mia bought a Suica card at Tokyo Station")
        repo.reindex()
        folder = memory / ".git" / "memrepo" / "indexes" / "provenance"
        generation = json.loads((folder / "CURRENT").read_text())["generation"]
    (database,) = (folder / generation).glob("*.sqlite3")
    database.write_bytes(b"not a database" * 512)
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}

    out = _memrepo(env, memory, "doctor", "--json")
    assert out.returncode == 1
    problems = json.loads(out.stdout)["problems"]
    assert any(p["message"].startswith("index provenance:") for p in problems), problems

    out = _memrepo(env, memory, "reindex", "--full", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["actions"]["provenance"].startswith("rebuilt")
    out = _memrepo(env, memory, "doctor", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["ok"], out.stdout
