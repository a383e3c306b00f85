"""Shared fixtures: real Git repositories in temporary folders, and record builders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memrepo import records as rec
from memrepo.api import MemoryRepo

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    """Tests never see the developer's model endpoints, vault key or Git identity."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "MEMREPO_")):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)  # the user config (endpoints, keys) is under HOME then
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")


@pytest.fixture(autouse=True)
def _check_offline_replies(monkeypatch):
    """Every reply of an offline role is checked against the role's schema in tests (not in use: our own code)."""
    from memrepo.llm.backend import OfflineBackend

    monkeypatch.setattr(OfflineBackend, "check_replies", True)


@pytest.fixture
def repo(tmp_path) -> MemoryRepo:
    """A fresh memory repository with a work tree."""
    r = MemoryRepo.init(tmp_path / "memory")
    yield r
    r.close()


def make_record(type_: str = "episodic", text: str = "Mia bought a Suica card at Tokyo Station", **fields) -> rec.Record:
    """A valid record with sensible defaults; override any field."""
    fields.setdefault("mention_time", "2023-05-02T14:03:00+09:00")
    if type_ == "core":
        fields.setdefault("label", "human")
    return rec.new_record(type_, text, **fields)


def shared_data(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test: a user's clone does not have it."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {'/'.join(parts)} from the shared data folder, which this checkout does not have")
    return path


def document_memory(root: Path, name: str, text: str, mention_time: str, *, graph: bool = True) -> MemoryRepo:
    """A fresh memory repository under ``root`` with the document ``name`` (holding ``text``) ingested offline, its
    graph indexed unless ``graph`` is false. The caller closes it."""
    path = root / name
    path.write_text(text, encoding="utf-8")
    repo = MemoryRepo.init(root / "memory")
    repo.ingest([path], mention_time=mention_time)
    if graph:
        repo.index_graph()
    return repo


def without_after_write(repo: MemoryRepo) -> MemoryRepo:
    """``repo``, its writes now without their after-commit steps (graph extraction): as if the records came by a
    plain `git commit`. Passed through its context (memrepo/capabilities.py), nothing is patched."""
    repo.ctx = repo.ctx.with_capabilities(after_commit={})
    return repo


@pytest.fixture
def no_after_write(request):
    """The ``repo`` fixture (if the test uses it) without after-commit steps; returns :func:`without_after_write`
    for the repositories the test opens itself."""
    if "repo" in request.fixturenames:
        without_after_write(request.getfixturevalue("repo"))
    return without_after_write


_PRISTINE: dict[str, Path] = {}


@pytest.fixture
def example_memory(tmp_path, tmp_path_factory) -> Path:
    """A private copy of a repository holding examples/conversation.txt with every derived index built (built
    once per session; copied with its file times kept, as `cp -a` does)."""
    import shutil

    if "root" not in _PRISTINE:
        root = tmp_path_factory.mktemp("pristine") / "memory"
        with MemoryRepo.init(root) as built:
            built.ingest([EXAMPLES / "conversation.txt"])
            built.reindex()
        _PRISTINE["root"] = root
    target = tmp_path / "memory"
    shutil.copytree(_PRISTINE["root"], target, symlinks=True)
    return target
