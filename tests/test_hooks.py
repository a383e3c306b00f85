"""The Git hooks `memrepo init` installs keep the derived indexes current after plain Git commands."""

from __future__ import annotations

import subprocess
import time

from conftest import make_record
from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.index.base import index_root, read_state
from memrepo.index.fulltext import FullTextReader


def git(cwd, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def indexed_ids(repo_root) -> tuple[str, set[str]]:
    """(commit, ids) the published full-text index reflects once the hook's background catch-up reached
    HEAD, read without catching it up."""
    store = MemoryRepo.open(repo_root).store
    root = index_root(store, "fulltext")
    deadline = time.monotonic() + 120

    def at_head(name: str) -> bool:  # HEAD read again each time: the catch-up may commit graph files on top
        state = read_state(index_root(store, name))
        return state is not None and state.commit == git(repo_root, "rev-parse", "HEAD")

    while not (at_head("fulltext") and at_head("vectors")) and time.monotonic() < deadline:
        time.sleep(0.05)
    state = read_state(root)
    assert state is not None, "no index was built"
    assert read_state(index_root(store, "vectors")).commit == state.commit
    return state.commit, {d["id"] for d in FullTextReader(root / state.generation).all_docs()}


def write_by_hand(root, record: rec.Record) -> None:
    path = root / record.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(rec.serialize(record))
    git(root, "add", record.path)


def test_plain_git_commit_updates_the_indexes(repo):
    record = make_record("semantic", "Jonas keeps bees on his roof in Lisbon", mention_time="2023-06-01")
    write_by_hand(repo.root, record)
    git(repo.root, "commit", "-q", "-m", "A fact, committed by hand")
    commit, ids = indexed_ids(repo.root)
    assert commit == git(repo.root, "rev-parse", "HEAD")
    assert record.id in ids


def test_git_pull_from_a_second_clone_updates_the_indexes(tmp_path):
    a = MemoryRepo.init(tmp_path / "a")
    a.add([make_record(text="Mia bought a Suica card")])
    a.close()
    git(tmp_path, "clone", "-q", str(tmp_path / "a"), str(tmp_path / "b"))
    with MemoryRepo.open(tmp_path / "b") as b:
        theirs = b.add([make_record("semantic", "Jonas moved to Porto", mention_time="2023-07-01")]).written[0]
    # A commits too, so the pull is a real merge (post-merge), not only a fast-forward.
    ours = make_record("semantic", "Mia's bike is a blue Brompton", mention_time="2023-07-02")
    write_by_hand(tmp_path / "a", ours)
    git(tmp_path / "a", "commit", "-q", "-m", "Ours")
    git(tmp_path / "a", "pull", "-q", "--no-rebase", "--no-edit", str(tmp_path / "b"), "main")
    merge = git(tmp_path / "a", "rev-parse", "HEAD")
    assert len(git(tmp_path / "a", "rev-list", "--parents", "-n", "1", merge).split()) == 3  # a merge commit
    commit, ids = indexed_ids(tmp_path / "a")
    # the post-merge hook's catch-up may also have committed the merged records' graph files on top
    assert commit == git(tmp_path / "a", "rev-parse", "HEAD")
    assert commit == merge or git(tmp_path / "a", "rev-parse", f"{commit}^") == merge
    assert {theirs, ours.id} <= ids


def test_git_checkout_moves_the_indexes_with_head(repo, no_after_write):  # HEAD~1: the first record commit
    first = make_record(text="first memory about trains")
    repo.add([first])
    second = make_record(text="second memory about boats")
    repo.add([second])
    git(repo.root, "checkout", "-q", "-b", "older", "HEAD~1")
    commit, ids = indexed_ids(repo.root)
    assert commit == git(repo.root, "rev-parse", "HEAD")
    assert first.id in ids and second.id not in ids


def test_a_failing_hook_never_fails_git_and_says_so_on_stderr(repo):
    with open(repo.root / "memrepo.toml", "a") as config:
        config.write("\nnamespace = [broken\n")  # a hand edit gone wrong: every memrepo command fails
    write_by_hand(repo.root, make_record(text="committed anyway"))
    git(repo.root, "commit", "-q", "-m", "still works")  # git() asserts exit status 0
    failed = repo.store.state_dir / "hook-failed"
    deadline = time.monotonic() + 120
    while not failed.exists() and time.monotonic() < deadline:  # the catch-up runs in the background
        time.sleep(0.05)
    write_by_hand(repo.root, make_record(text="committed again"))
    second = subprocess.run(["git", "commit", "-q", "-m", "again"], cwd=repo.root, capture_output=True, text=True)
    assert second.returncode == 0
    assert "memrepo: the index catch-up after an earlier Git command failed" in second.stderr
    assert "memrepo.toml: not valid TOML" in second.stderr  # the reason, not only that it failed


def test_a_plain_git_commit_never_waits_for_an_index_build(repo):
    repo.reindex()
    write_by_hand(repo.root, make_record(text="written while an index build runs"))
    with repo.store.lock("index-fulltext"):  # what a long index build holds
        t = time.monotonic()
        git(repo.root, "commit", "-q", "-m", "by hand")
        assert time.monotonic() - t < 5  # the old synchronous hook waited here until the lock was released
    commit, _ = indexed_ids(repo.root)  # and the background catch-up still gets there
    assert commit == git(repo.root, "rev-parse", "HEAD")


def test_a_burst_of_commits_runs_at_most_one_waiting_catch_up(repo):
    from memrepo.hooks import run_hook

    repo.reindex()
    with open(repo.store.state_dir / "hook-waiting.lock", "a+") as waiting:
        import fcntl

        fcntl.flock(waiting, fcntl.LOCK_EX)  # another catch-up is waiting to run
        assert run_hook(repo.ctx, "post-commit", ()) is False  # so this one leaves at once
    assert run_hook(repo.ctx, "post-commit", ()) is True


def test_doctor_fix_reinstalls_hooks_of_an_older_memrepo(repo):
    import sys

    old = ('#!/bin/sh\n"' + sys.executable + '" -m memrepo --repo "$(git rev-parse --show-toplevel)" hook post-commit "$@"'
           ' >/dev/null 2>&1 || true\n')
    hook = repo.root / ".git" / "hooks" / "post-commit"
    hook.write_text(old)
    assert any(p.path == ".git/hooks/post-commit" for p in repo.doctor())
    assert any("reinstalled the Git hooks post-commit" in m for m in repo.repair())
    assert hook.read_text() != old and f'python="{sys.executable}"' in hook.read_text()
    assert repo.doctor() == []
