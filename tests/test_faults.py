"""Fault injection on the write path: kills at chosen points, stale locks, leftovers, concurrent core edits.

A process is killed at a named point of the write path by ``MEMREPO_KILL_AT=<point>``
(read by the CLI only; ``GitStore.checkpoint`` sends SIGKILL to itself there).
After each kill the next memrepo command, or ``memrepo doctor --fix``, must leave
the work tree and the Git index equal to HEAD, with every committed record kept.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memrepo import records as rec
from memrepo.api import MemoryRepo

KILLED = -9


def memrepo(root: Path, *args: str, kill_at: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("MEMREPO_KILL_AT", None)
    if kill_at:
        env["MEMREPO_KILL_AT"] = kill_at
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(root), *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def assert_clean(root: Path) -> None:
    """Work tree and index equal HEAD: nothing staged, nothing missing, nothing left over."""
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (root / ".git" / "index.lock").exists()


def head_paths(root: Path) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", "HEAD").split())


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("point", ["after-commit-before-sync", "mid-sync", "holding-index-lock"])
def test_a_write_killed_after_its_commit_is_completed_by_the_next_command(repo, point):
    killed = memrepo(repo.root, "remember", "Jonas keeps bees on his roof", "--type", "semantic",
                     "--mention-time", "2023-06-01", kill_at=point)
    assert killed.returncode == KILLED
    record_path = next(p for p in head_paths(repo.root) if p.startswith("semantic/"))  # the commit landed
    assert git(repo.root, "diff", "--cached", "--name-status", "HEAD").startswith("D")  # the damage a kill does
    if point == "holding-index-lock":
        assert (repo.root / ".git" / "index.lock").exists()

    after = memrepo(repo.root, "list")
    assert after.returncode == 0, after.stderr
    assert "interrupted write" in after.stderr  # said, not silent
    assert_clean(repo.root)
    assert (repo.root / record_path).read_bytes() == git(repo.root, "show", f"HEAD:{record_path}").encode()
    # The user's next plain commit no longer deletes the record.
    subprocess.run(["git", "commit", "-q", "-m", "by hand"], cwd=repo.root, capture_output=True)
    assert record_path in head_paths(repo.root)


def test_a_new_file_half_written_by_a_killed_writer_is_rewritten_by_the_next_command(repo):
    # A file new in a commit is written straight under its name (memrepo/store/git.py, _create): a kill in the
    # middle of that write leaves part of it, which the pending sync rewrites whole.
    killed = memrepo(repo.root, "remember", "Jonas keeps bees on his roof", "--type", "semantic",
                     "--mention-time", "2023-06-01", kill_at="after-commit-before-sync")
    assert killed.returncode == KILLED
    record_path = next(p for p in head_paths(repo.root) if p.startswith("semantic/"))
    (repo.root / record_path).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / record_path).write_bytes(b"---\nid: half")  # what a kill during the write leaves

    after = memrepo(repo.root, "list")
    assert after.returncode == 0, after.stderr
    assert "interrupted write" in after.stderr
    assert (repo.root / record_path).read_bytes() == git(repo.root, "show", f"HEAD:{record_path}").encode()
    assert_clean(repo.root)


def test_a_write_killed_before_its_commit_leaves_nothing_to_repair(repo):
    killed = memrepo(repo.root, "remember", "never committed", "--type", "semantic", kill_at="before-swap")
    assert killed.returncode == KILLED
    assert not any(p.startswith("semantic/") for p in head_paths(repo.root))
    after = memrepo(repo.root, "doctor")
    assert after.returncode == 0, after.stdout + after.stderr
    assert_clean(repo.root)


def test_temporary_object_files_of_a_killed_writer_are_removed(repo):
    killed = memrepo(repo.root, "remember", "half-written object", "--type", "semantic", kill_at="mid-object-write")
    assert killed.returncode == KILLED
    objects = repo.root / ".git" / "objects"
    assert list(objects.glob("??/tmp_obj_*"))
    after = memrepo(repo.root, "doctor")  # the next command finds the killed writer's pending file and sweeps
    assert after.returncode == 0, after.stdout + after.stderr
    assert not list(objects.glob("??/tmp_obj_*"))


def test_doctor_reports_and_fix_repairs_a_work_tree_behind_head(repo):
    kept = repo.new_record("semantic", "kept record", mention_time="2023-01-01")
    repo.add([kept])
    record = repo.new_record("semantic", "committed but never synced", mention_time="2023-01-02")
    repo.store.commit({record.path: rec.serialize(record)}, "as a kill would leave it", sync_worktree=False)
    (repo.root / "notes.txt").write_text("the user's own untracked file")
    (repo.root / kept.path).write_text("the user's uncommitted edit")

    report = memrepo(repo.root, "doctor", "--json")
    assert report.returncode == 1
    problems = {p["path"]: p["message"] for p in json.loads(report.stdout)["problems"]}
    assert list(problems) == [record.path]  # not the user's edit, not the user's untracked file
    assert problems[record.path].startswith("work tree / index differs from HEAD: deleted in the index")

    fixed = memrepo(repo.root, "doctor", "--fix")
    assert "brought 1 file(s) in the work tree and Git index back to HEAD" in fixed.stdout
    assert "left 1 uncommitted change(s) alone" in fixed.stdout
    assert git(repo.root, "diff", "--cached", "--name-only", "HEAD") == ""
    assert (repo.root / record.path).exists()
    assert (repo.root / kept.path).read_text() == "the user's uncommitted edit"  # never overwritten
    assert (repo.root / "notes.txt").exists()


def test_a_commit_that_landed_exits_0_and_says_the_sync_failed(repo):
    lock = repo.root / ".git" / "index.lock"
    lock.write_bytes(b"")  # a live git command holds the index
    t = time.monotonic()
    result = memrepo(repo.root, "remember", "written while git holds the index", "--type", "semantic", "--json")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - t < 30  # a bounded, stated wait
    assert "landed, but the work tree and Git index were not updated" in result.stderr
    assert ".git/index.lock is held by another process (waited 5 s)" in result.stderr
    assert '"warnings"' in result.stdout
    lock.unlink()  # the git command finishes
    after = memrepo(repo.root, "list")
    assert "interrupted write" in after.stderr
    assert_clean(repo.root)


def test_a_stale_ref_lock_is_cleared_with_a_message(repo):
    lock = repo.root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("0" * 40 + "\n")  # what a writer killed inside the ref update leaves
    old = time.time() - 120
    os.utime(lock, (old, old))
    t = time.monotonic()
    result = memrepo(repo.root, "remember", "after a stale ref lock", "--type", "semantic", timeout=60)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - t < 20
    assert re.search(r"removed a stale refs/heads/main.lock \(12\d s old", result.stderr)
    assert not lock.exists()
    assert_clean(repo.root)


def test_a_fresh_ref_lock_is_waited_on_then_cleared(repo):
    lock = repo.root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    t = time.monotonic()
    result = memrepo(repo.root, "remember", "after a fresh ref lock", "--type", "semantic", timeout=60)
    assert result.returncode == 0, result.stderr
    assert 4 < time.monotonic() - t < 20  # it waited its stated bound (5 s), not minutes
    assert "removed a stale refs/heads/main.lock" in result.stderr


def test_doctor_reports_stale_locks_and_leftovers_and_fix_removes_them(repo):
    git_dir = repo.root / ".git"
    lock = git_dir / "index.lock"
    lock.write_bytes(b"")
    old = time.time() - 300
    os.utime(lock, (old, old))
    pid = dead_pid()
    build = repo.store.state_dir / "indexes" / "fulltext" / f".tmp-g000009-{pid}"
    build.mkdir(parents=True)
    (build / "half.idx").write_bytes(b"x")
    obj = git_dir / "objects" / "ab" / f"tmp_obj_{pid}_x1"
    obj.parent.mkdir(exist_ok=True)
    obj.write_bytes(b"x")
    pack = git_dir / "objects" / "pack" / "tmpzz1.pack"
    pack.parent.mkdir(exist_ok=True)
    pack.write_bytes(b"PACK")
    os.utime(pack, (time.time() - 7200, time.time() - 7200))
    fresh_pack = git_dir / "objects" / "pack" / "tmpzz2.pack"  # maybe a live writer's: kept
    fresh_pack.write_bytes(b"PACK")

    report = memrepo(repo.root, "doctor")
    assert report.returncode == 1
    assert re.search(r"\.git/index.lock: stale lock, 30\d s old", report.stdout)
    for leftover in (build, obj, pack):
        assert f".git/{leftover.relative_to(git_dir)}: temporary file left by a killed writer" in report.stdout
    assert "tmpzz2" not in report.stdout

    fixed = memrepo(repo.root, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "removed stale .git/index.lock" in fixed.stdout
    assert not lock.exists() and not build.exists() and not obj.exists() and not pack.exists()
    assert fresh_pack.exists()


def test_an_old_index_lock_is_cleared_by_the_next_write(repo):
    lock = repo.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    result = memrepo(repo.root, "remember", "after an old index lock", "--type", "semantic")
    assert result.returncode == 0, result.stderr
    assert re.search(r"removed a stale \.git/index.lock \(36\d\d s old\)", result.stderr)
    assert_clean(repo.root)


def test_a_retried_remember_across_midnight_writes_nothing_new(repo, monkeypatch):
    import memrepo.api as api

    now = ["2023-05-01T23:59:58+00:00"]
    monkeypatch.setattr(api, "now_iso", lambda: now[0])
    first = repo.remember("Mia renewed her passport", type="semantic")
    routed = repo.remember("My name is Mia and I renewed my passport")
    now[0] = "2023-05-02T00:00:03+00:00"  # the retries come five seconds later, on another day
    retry = repo.remember("Mia renewed her passport", type="semantic")
    assert first.written and retry.commit is None and retry.unchanged == first.written
    routed_retry = repo.remember("My name is Mia and I renewed my passport")
    assert routed.commit and routed_retry.commit is None
    assert routed_retry.unchanged == routed.sources


def test_a_retried_routed_remember_makes_no_model_call(repo, tmp_path):
    first = repo.remember("Jonas moved to Porto in May", mention_time="2023-05-02")
    stats = repo.model_stats()
    again = repo.remember("Jonas moved to Porto in May", mention_time="2023-05-02")
    assert again.commit is None and again.unchanged == first.sources
    assert repo.model_stats() == stats


def test_a_routed_remember_killed_before_its_graph_step_converges(repo):
    killed = memrepo(repo.root, "remember", "Mia met Jonas in Kyoto at the station", "--mention-time", "2023-05-02",
                     kill_at="after-source-before-graph")
    assert killed.returncode == KILLED
    retry = memrepo(repo.root, "remember", "Mia met Jonas in Kyoto at the station", "--mention-time", "2023-05-02")
    assert retry.returncode == 0 and "already remembered" in retry.stdout
    # The rerun converges by itself: it catches up the graph step the killed run never reached.
    assert any(p.startswith("graph/frames/") for p in head_paths(repo.root))
    assert_clean(repo.root)


CORE_WRITER = textwrap.dedent(
    """
    import sys
    from memrepo.api import MemoryRepo
    path, writer, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    repo = MemoryRepo.open(path)
    for i in range(count):
        repo.remember(f"My name is Name{writer}x{i}", mention_time="2023-05-02")
    repo.close()
    """
)


@pytest.mark.slow
def test_concurrent_routed_remembers_keep_every_name_in_the_core_block(repo):
    writers, each = 5, 3
    procs = [subprocess.Popen([sys.executable, "-c", CORE_WRITER, str(repo.root), str(w), str(each)],
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    fresh = MemoryRepo.open(repo.root)
    block = fresh.get("core-human")
    names = {line.removeprefix("- name: ") for line in block.text.splitlines()}
    assert names == {f"Name{w}x{i}" for w in range(writers) for i in range(each)}
    assert_clean(repo.root)
    fresh.close()


def test_merge_block_keeps_both_sides():
    from memrepo.write.writers import merge_block

    base = "- name: Mia\n- lives in Berlin"
    ours = "- name: Mia\n- lives in Lisbon\n- likes bees"
    theirs = "- name: Mia\n- lives in Berlin\n- works at a bakery"
    assert merge_block(base, ours, theirs) == "- name: Mia\n- lives in Lisbon\n- likes bees\n- works at a bakery"
    assert merge_block(base, ours, base) == ours
    assert merge_block("", "- name: A", "- name: B") == "- name: B\n- name: A"


def test_an_index_build_folder_of_a_killed_writer_goes_with_the_next_index_update(repo):
    repo.add([repo.new_record("semantic", "something to index", mention_time="2023-01-01")])
    repo.reindex()
    root = repo.store.state_dir / "indexes" / "fulltext"
    left = root / f".tmp-g000099-{dead_pid()}"  # what a build killed mid-way leaves (fresh: no age bound helps)
    left.mkdir()
    (left / "segment").write_bytes(b"x")
    repo.add([repo.new_record("semantic", "one more", mention_time="2023-01-02")])
    repo.reindex()  # the update holds the index's lock, so no live build owns that folder
    assert not left.exists()
