"""Team memory that loses nothing (issue 29): ingest --to never replaces silently, forgets stay
forgotten across clones, syncs serialized with writes, core blocks merged by line, the graph caught
up after any merge.

Real bare remotes and clones in tmp_path, driven by the real `git` and the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from test_team import PROJECT, git, remember, run, tree, two_clones


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


# --- forgets that stay forgotten --------------------------------------------------------------------------------------


def identify(root: Path, name: str) -> str:
    git(root, "config", "user.name", name)
    git(root, "config", "user.email", f"{name.lower()}@example.org")
    return f"{name} <{name.lower()}@example.org>"


def hooked_clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote that validates every push (`serve-hooks install`) and two clones, Mia's and Jonas's."""
    remote, a, b = two_clones(tmp_path)
    assert run("serve-hooks", "install", str(remote))[0] == 0
    identify(a, "Mia")
    identify(b, "Jonas")
    return remote, a, b


def record_path(root: Path, record_id: str) -> str:
    with MemoryRepo.open(root) as repo:
        return repo.get(record_id).path


def test_a_teammates_concurrent_edit_of_a_forgotten_record_resolves_to_forgotten(tmp_path):
    remote, a, b = hooked_clones(tmp_path)
    record_id = remember(a, "Mia's home address is 12 Example Lane, Springfield")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    path = record_path(b, record_id)
    edited = (b / path).read_text().replace("12 Example Lane", "14 Example Lane")
    (b / path).write_text(edited)
    git(b, "commit", "-qam", "fix the house number")  # a hand edit, committed with plain git
    code, out = run("--repo", str(a), "forget", record_id, "--reason", "asked to forget her address")
    assert code == 0, out
    assert run("--repo", str(a), "sync")[0] == 0
    forget_commit = git(a, "log", "-1", "--format=%h", "--abbrev=12", "--", f"tombstones/{record_id}.md")

    code, out = run("--repo", str(b), "sync", "--json")
    assert code == 0, out
    result = json.loads(out)
    (how,) = [r["how"] for r in result["resolved"] if r["path"] == path]
    assert "forgotten by Mia <mia@example.org>" in how and forget_commit in how and "asked to forget" in how
    assert result["pushed"] >= 1  # the server hook accepted the merge
    assert not (b / path).exists() and not (b / ".git" / "MERGE_HEAD").exists()
    assert "<<<<<<<" not in out
    assert run("--repo", str(a), "sync")[0] == 0
    assert tree(a) == tree(b) == git(remote, "rev-parse", "main^{tree}")
    for root in (a, b):
        assert "Example Lane" not in git(root, "grep", "-I", "Example Lane", "HEAD", check=False)
        with MemoryRepo.open(root) as repo:
            assert repo.doctor() == []


def test_forgetting_a_source_drops_a_teammates_new_citations_of_it_so_both_can_push(tmp_path):
    remote, a, b = hooked_clones(tmp_path)
    chat = tmp_path / "chat.txt"
    chat.write_text("# Session 1: 2023-05-02\nMia: My passport number is on the card in the drawer.\n"
                    "Jonas: I will not tell anyone.\n")
    assert run("--repo", str(a), "ingest", str(chat))[0] == 0
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    with MemoryRepo.open(b) as repo:
        (source,) = repo.sources()
        anchor = source.parts[0].anchor
        cited = repo.new_record("semantic", "Mia keeps her passport card in a drawer",
                                mention_time="2023-05-03T10:00:00Z", sources=[f"{source.id}#{anchor}"])
        repo.add([cited])
        kept = repo.new_record("semantic", "Jonas keeps secrets", mention_time="2023-05-03T11:00:00Z")
        repo.add([kept])
    with MemoryRepo.open(a) as repo:
        citing = [r.id for r in repo.records() if any(c.startswith(source.id) for c in r.sources)]
        repo.forget([source.id, *citing], reason="passport details")
    assert run("--repo", str(a), "sync")[0] == 0

    code, out = run("--repo", str(b), "sync", "--json")
    assert code == 0, out  # not locked out: the server hook accepted the merge
    result = json.loads(out)
    hows = {r["path"]: r["how"] for r in result["resolved"]}
    assert any(source.id in h and "dropped its citations" in h and "Mia <mia@example.org>" in h for h in hows.values())
    with MemoryRepo.open(b) as repo:
        assert repo.get(cited.id).sources == () and repo.get(kept.id)
        assert not repo.sources() and repo.doctor() == []
    assert run("--repo", str(a), "sync")[0] == 0
    assert tree(a) == tree(b)


def test_a_plain_git_pull_that_brings_a_forgotten_record_back_is_flagged_by_doctor(tmp_path):
    remote, a, b = hooked_clones(tmp_path)
    record_id = remember(a, "Mia's home address is 12 Example Lane, Springfield")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    path = record_path(b, record_id)
    (b / path).write_text((b / path).read_text().replace("12 Example", "14 Example"))
    git(b, "commit", "-qam", "fix the house number")
    assert run("--repo", str(a), "forget", record_id)[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    git(b, "pull", "-q", "--no-rebase", "origin", "main", check=False)  # modify/delete: Git stops
    assert "deleted in" in git(b, "status") or (b / ".git" / "MERGE_HEAD").exists()
    git(b, "add", path)
    git(b, "commit", "-qm", "merge, keeping my edit")
    with MemoryRepo.open(b) as repo:
        (problem,) = [p for p in repo.doctor() if p.path == path and "forgotten" in p.message]
        assert "forgotten by Mia <mia@example.org>" in problem.message and "back at HEAD" in problem.message
        assert f"memrepo forget {record_id}" in problem.message
    assert run("--repo", str(b), "forget", record_id)[0] == 0
    with MemoryRepo.open(b) as repo:
        assert repo.doctor() == []


def test_a_forgotten_record_is_refused_when_written_again_until_an_explicit_undo(tmp_path):
    from memrepo.errors import RecordError

    remote, a, b = hooked_clones(tmp_path)
    text = "Mia's home address is 12 Example Lane, Springfield"
    record_id = remember(a, text)
    assert run("--repo", str(a), "forget", record_id)[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    head = git(a, "rev-parse", "HEAD")
    with pytest.raises(RecordError, match=rf"{record_id} was forgotten by Mia <mia@example.org> at .*forget --undo"):
        remember(a, text)
    code, out = run("--repo", str(a), "remember", text, "--type", "semantic", "--mention-time", "2024-03-01T10:00:00Z")
    assert code == 1 and "was forgotten by Mia" in out and "Traceback" not in out
    assert git(a, "rev-parse", "HEAD") == head
    # An explicit undo, then the record added again: allowed, and it reaches the teammate through the hook.
    assert run("--repo", str(a), "forget", "--undo", record_id)[0] == 0
    assert remember(a, text) == record_id
    code, out = run("--repo", str(a), "sync")
    assert code == 0, out
    assert run("--repo", str(b), "sync")[0] == 0
    with MemoryRepo.open(b) as repo:
        assert repo.get(record_id) and repo.doctor() == []


def test_sync_refuses_to_push_a_forgotten_record_a_plain_git_merge_kept(tmp_path):
    remote, a, b = hooked_clones(tmp_path)
    record_id = remember(a, "Mia's home address is 12 Example Lane, Springfield")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    hand_edit(b, record_id, "12 Example", "14 Example")
    assert run("--repo", str(a), "forget", record_id)[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    git(b, "pull", "-q", "--no-rebase", "origin", "main", check=False)
    git(b, "add", _path_in_merge(b, record_id))
    git(b, "commit", "-qm", "merge, keeping my edit")
    head = git(remote, "rev-parse", "main")
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "forgotten by Mia <mia@example.org>" in out and "nothing was synced" in out
    assert git(remote, "rev-parse", "main") == head


def _path_in_merge(root: Path, record_id: str) -> str:
    return next(p for p in git(root, "diff", "--name-only", "--diff-filter=U").split() if record_id in p)


def test_a_modify_delete_conflict_without_a_tombstone_is_named_as_one(tmp_path):
    remote, a, b = two_clones(tmp_path)
    record_id = remember(a, "The boiler is serviced every March")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    path = record_path(b, record_id)
    (b / path).write_text((b / path).read_text().replace("March", "April"))
    git(b, "commit", "-qam", "April")
    git(a, "rm", "-q", path)
    git(a, "commit", "-qm", "remove by hand")
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and path in out and "deleted on one side and changed on the other" in out
    assert "<<<<<<<" not in out and "git rm" in out and "git add" in out


# --- one lock for a clone's writes and syncs; no half-merge left behind -------------------------------------------


def memrepo_process(root: Path, *args: str) -> "subprocess.Popen[str]":
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    return subprocess.Popen([sys.executable, "-m", "memrepo", "--repo", str(root), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_a_write_and_a_sync_in_another_process_wait_for_the_clones_write_lock(tmp_path):
    remote, a, b = two_clones(tmp_path)
    remember(a, "Mia moved to Lisbon in May")
    assert run("--repo", str(a), "sync")[0] == 0
    with MemoryRepo.open(b) as repo:
        head = repo.store.head()
        with repo.store.write_lock():  # what a sync holds through its fetch, merge and push
            writer = memrepo_process(b, "remember", "Jonas plays the cello", "--type", "semantic")
            syncer = memrepo_process(b, "sync")
            time.sleep(2.0)
            assert writer.poll() is None and syncer.poll() is None  # both wait
            assert repo.store.head() == head
        assert writer.wait(60) == 0 and syncer.wait(60) == 0, (writer.stdout.read(), syncer.stdout.read())
    assert not (b / ".git" / "MERGE_HEAD").exists()
    with MemoryRepo.open(b) as repo:
        texts = {r.text for r in repo.records()}
        assert {"Mia moved to Lisbon in May", "Jonas plays the cello"} <= texts


def half_merge(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """Clone b in the middle of a plain `git merge` of a's new record (nothing in conflict)."""
    remote, a, b = two_clones(tmp_path)
    theirs = remember(a, "Mia moved to Lisbon in May")
    ours = remember(b, "Jonas plays the cello in an orchestra")
    assert run("--repo", str(a), "sync")[0] == 0
    git(b, "fetch", "-q", "origin")
    git(b, "merge", "-q", "--no-ff", "--no-commit", "origin/main")
    assert (b / ".git" / "MERGE_HEAD").exists()
    return a, b, theirs, ours


def test_a_half_merge_that_would_drop_a_teammates_record_is_reported_refused_and_aborted_by_doctor_fix(tmp_path):
    a, b, theirs, ours = half_merge(tmp_path)
    head = git(b, "rev-parse", "HEAD")
    path = record_path(a, theirs)
    git(b, "rm", "-q", "--cached", path)  # what an interrupted merge ("Unable to write index") leaves
    (b / path).unlink()
    with MemoryRepo.open(b) as repo:
        (problem,) = [p for p in repo.doctor() if p.path == ".git/MERGE_HEAD"]
        assert "would lose data" in problem.message and path in problem.message and "doctor --fix" in problem.message
    code, out = run("--repo", str(b), "remember", "Anything else", "--type", "semantic")
    assert code == 1 and "merge is in progress" in out and "memrepo doctor --fix" in out
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "memrepo doctor --fix" in out
    code, out = run("--repo", str(b), "doctor", "--fix")
    assert "aborted the Git merge" in out and path in out, out
    assert not (b / ".git" / "MERGE_HEAD").exists() and git(b, "rev-parse", "HEAD") == head
    code, out = run("--repo", str(b), "sync")
    assert code == 0, out
    with MemoryRepo.open(b) as repo:
        assert repo.get(theirs) and repo.get(ours) and repo.doctor() == []


def test_doctor_fix_finishes_a_clean_half_merge_keeping_both_sides(tmp_path):
    a, b, theirs, ours = half_merge(tmp_path)
    with MemoryRepo.open(b) as repo:
        (problem,) = [p for p in repo.doctor() if p.path == ".git/MERGE_HEAD"]
        assert "drops nothing" in problem.message and "finishes it" in problem.message
    code, out = run("--repo", str(b), "doctor", "--fix")
    assert "finished the Git merge" in out, out
    assert not (b / ".git" / "MERGE_HEAD").exists()
    assert len(git(b, "log", "-1", "--format=%P").split()) == 2  # a merge commit, both sides its parents
    assert run("--repo", str(b), "doctor")[0] == 0
    with MemoryRepo.open(b) as repo:
        assert repo.get(theirs) and repo.get(ours)


def test_doctor_fix_aborts_a_half_merge_still_in_conflict_and_says_so(tmp_path):
    remote, a, b = two_clones(tmp_path)
    for root, text in ((a, "Prefers tea."), (b, "Prefers coffee.")):
        assert run("--repo", str(root), "remember", text, "--type", "core", "--label", "human")[0] == 0
    assert run("--repo", str(a), "sync")[0] == 0
    head = git(b, "rev-parse", "HEAD")
    git(b, "pull", "-q", "--no-rebase", "origin", "main", check=False)
    assert (b / ".git" / "MERGE_HEAD").exists()
    code, out = run("--repo", str(b), "doctor", "--fix")
    assert "aborted the Git merge" in out and "still in conflict (core/human.md)" in out, out
    assert not (b / ".git" / "MERGE_HEAD").exists() and git(b, "rev-parse", "HEAD") == head
    assert "Prefers coffee." in (b / "core" / "human.md").read_text()


def test_the_merged_tree_is_checked_against_both_parents_before_memrepo_commits_it(tmp_path):
    from memrepo.errors import RepositoryError
    from memrepo.team.sync import check_merged

    a, b, theirs, ours = half_merge(tmp_path)
    theirs_commit = git(b, "rev-parse", "MERGE_HEAD")
    check_merged(str(b), theirs_commit)  # the whole merge: nothing dropped
    git(b, "rm", "-q", "--cached", record_path(b, ours))
    with pytest.raises(RepositoryError, match=r"drop 1 record file\(s\) one side had: .*this clone had it"):
        check_merged(str(b), theirs_commit)


def test_a_sync_whose_merge_would_drop_a_record_aborts_it_and_leaves_the_clone_as_it_was(tmp_path):
    remote, a, b = two_clones(tmp_path)
    record_id = remember(a, "The boiler is serviced every March")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    path = record_path(b, record_id)
    git(a, "mv", path, path.replace(".md", "-moved.md"))  # Git follows the rename: b's edit would land there
    git(a, "commit", "-qm", "move a record by hand")
    assert run("--repo", str(a), "sync")[0] == 0
    hand_edit(b, record_id, "March", "April")
    assert run("--repo", str(b), "index")[0] == 0  # its graph file now, not in the sync's catch-up
    head = git(b, "rev-parse", "HEAD")
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "Traceback" not in out
    assert f"the merge would drop 1 record file(s) one side had: {path} (this clone had it)" in out
    assert "the merge was aborted and this clone is as it was" in out
    assert git(b, "rev-parse", "HEAD") == head and not (b / ".git" / "MERGE_HEAD").exists()
    assert not git(b, "status", "--porcelain", "--untracked-files=no") and "April" in (b / path).read_text()


# --- core blocks merge line by line ---------------------------------------------------------------------------------

BLOCK = "Name: Mia\nLives in Lisbon.\nPrefers tea.\nWorks at the pottery studio.\n"


def set_core(root: Path, text: str) -> None:
    code, out = run("--repo", str(root), "remember", text, "--type", "core", "--label", "human")
    assert code == 0, out


def core_clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote, a, b = two_clones(tmp_path)
    set_core(a, BLOCK)
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    return remote, a, b


def test_edits_to_different_lines_of_one_core_block_merge_by_themselves(tmp_path):
    remote, a, b = core_clones(tmp_path)
    set_core(a, BLOCK.replace("Lives in Lisbon.", "Lives in Porto."))
    set_core(b, BLOCK.replace("Prefers tea.", "Prefers green tea.") + "Plays the cello.\n")  # the next line, and one more
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 0, out
    text = (b / "core" / "human.md").read_text()
    assert text.endswith("---\nName: Mia\nLives in Porto.\nPrefers green tea.\nWorks at the pottery studio.\n"
                         "Plays the cello.\n")
    assert "summary: Name: Mia" in text or "summary: \"Name: Mia\"" in text
    assert run("--repo", str(a), "sync")[0] == 0
    assert tree(a) == tree(b)
    for root in (a, b):
        with MemoryRepo.open(root) as repo:
            assert repo.get("core-human").text.startswith("Name: Mia\nLives in Porto.") and repo.doctor() == []


def test_lines_both_sides_added_to_a_core_block_are_all_kept(tmp_path):
    remote, a, b = core_clones(tmp_path)
    set_core(a, BLOCK + "Has a greyhound.\n")
    set_core(b, BLOCK + "Learns Japanese.\n")
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 0, out
    assert (b / "core" / "human.md").read_text().endswith(BLOCK + "Learns Japanese.\nHas a greyhound.\n")


def test_edits_to_the_same_line_conflict_with_both_sides_shown(tmp_path):
    remote, a, b = core_clones(tmp_path)
    set_core(a, BLOCK.replace("Prefers tea.", "Prefers coffee.").replace("Name: Mia", "Name: Mia Example"))
    set_core(b, BLOCK.replace("Prefers tea.", "Prefers mate."))
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "core/human.md" in out and "<<<<<<<" in out  # the message names the markers to remove
    text = (b / "core" / "human.md").read_text()
    assert "<<<<<<< ours\nPrefers mate.\n||||||| base\nPrefers tea.\n=======\nPrefers coffee.\n>>>>>>> theirs\n" in text
    assert "Name: Mia Example\n" in text and "Works at the pottery studio.\n" in text  # the rest merged


def test_a_plain_git_pull_merges_core_blocks_with_the_driver_and_older_clones_get_its_line(tmp_path):
    remote, a, b = core_clones(tmp_path)
    # An older clone: .gitattributes without the core-block line (committed before it existed).
    lines = (b / ".gitattributes").read_text().replace("core/*.md merge=memrepo\n", "")
    (b / ".gitattributes").write_text(lines)
    git(b, "commit", "-qam", "an older memrepo's .gitattributes")
    code, out = run("--repo", str(b), "doctor")
    assert code == 1 and "core/*.md merge=memrepo" in out
    code, out = run("--repo", str(b), "doctor", "--fix")
    assert "core/*.md merge=memrepo" in out, out
    assert (b / ".gitattributes").read_text().count("core/*.md merge=memrepo") == 1
    assert run("--repo", str(b), "sync")[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    set_core(a, BLOCK.replace("Name: Mia", "Name: Mia Example"))
    set_core(b, BLOCK.replace("Works at the pottery studio.", "Works at the bakery."))
    assert run("--repo", str(a), "sync")[0] == 0
    done = subprocess.run(["git", "-C", str(b), "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (b / "core" / "human.md").read_text().endswith("Name: Mia Example\nLives in Lisbon.\nPrefers tea.\n"
                                                          "Works at the bakery.\n")


# --- the graph catches up after any merge ---------------------------------------------------------------------------


def hand_edit(root: Path, record_id: str, old: str, new: str) -> None:
    path = record_path(root, record_id)
    (root / path).write_text((root / path).read_text().replace(old, new))
    git(root, "commit", "-qam", f"hand edit of {record_id}")


def doctor_clean(root: Path) -> list[str]:
    with MemoryRepo.open(root) as repo:
        return [str(p) for p in repo.doctor()]


def test_after_a_synced_hand_edit_doctor_is_green_in_every_clone_without_memrepo_index(tmp_path):
    remote, a, b = two_clones(tmp_path)
    record_id = remember(a, "Mia moved to Lisbon in May")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    hand_edit(a, record_id, "Lisbon", "Porto")
    remember(b, "Jonas plays the cello in an orchestra")  # so that b's sync is a merge
    assert run("--repo", str(a), "sync")[0] == 0
    assert doctor_clean(a) == []
    assert run("--repo", str(b), "sync")[0] == 0
    assert doctor_clean(b) == []
    assert run("--repo", str(a), "sync")[0] == 0
    assert tree(a) == tree(b) and doctor_clean(a) == []
    with MemoryRepo.open(b) as repo:
        assert "Porto" in repo.graph_export("nt") and "Lisbon" not in repo.graph_export("nt")


def test_after_a_plain_git_pull_of_a_hand_edit_the_post_merge_hook_catches_the_graph_up(tmp_path):
    remote, a, b = two_clones(tmp_path)
    record_id = remember(a, "Mia moved to Lisbon in May")
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    hand_edit(a, record_id, "Lisbon", "Porto")
    git(a, "push", "-q", "origin", "main")  # a PR merged on the host, as far as b can tell: a graph file behind
    done = subprocess.run(["git", "-C", str(b), "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 60
    while doctor_clean(b) and time.monotonic() < deadline:  # the hook runs in the background
        time.sleep(0.5)
    assert doctor_clean(b) == []


def forgotten_and_similar_new(tmp_path: Path) -> tuple[Path, Path, Path, str, str, bytes]:
    """Clone b forgets a record and writes a much like it; clone a hand-edits the forgotten one (not synced)."""
    remote, a, b = two_clones(tmp_path)
    assert run("serve-hooks", "install", str(remote))[0] == 0
    gone = remember(a, "Mia told the agent about the telescope in the garden shed (first)")
    with MemoryRepo.open(a) as repo:
        repo.index_graph()
    assert run("--repo", str(a), "sync")[0] == 0 and run("--repo", str(b), "sync")[0] == 0
    code, out = run("--repo", str(b), "forget", gone)
    assert code == 0, out
    new = remember(b, "Mia told the agent about the telescope in the garden shed (second)")
    with MemoryRepo.open(b) as repo:
        repo.index_graph()
        new_graph = repo.snapshot.read(f"graph/frames/2024/03/{new}.ttl")
    assert run("--repo", str(b), "sync")[0] == 0
    with MemoryRepo.open(a) as repo:  # a hand edit of the record the other clone forgot, re-extracted
        path = repo.get(gone).path
    (a / path).write_text((a / path).read_text().replace("(first)", "(first, by the door)"))
    git(a, "commit", "-qam", "hand edit")
    with MemoryRepo.open(a) as repo:
        repo.index_graph()
    return remote, a, b, gone, new, new_graph


def test_a_forgotten_record_edited_on_the_other_side_never_lands_on_a_similar_new_record(tmp_path):
    """Git's rename detection takes the forgotten file and the similar new one for a rename and applies the other
    side's edit to the new record's file; sync's merge never does, and the hook accepts what it merged."""
    remote, a, b, gone, new, new_graph = forgotten_and_similar_new(tmp_path)
    code, out = run("--repo", str(a), "sync")
    assert code == 0, (gone, new, out)  # the hook accepted the merge
    with MemoryRepo.open(a) as repo:
        assert repo.snapshot.read(f"graph/frames/2024/03/{new}.ttl") == new_graph
        assert not repo.snapshot.exists(f"graph/frames/2024/03/{gone}.ttl")
    assert git(a, "config", "merge.renames") == "false"  # a plain git pull in this clone does the same


def test_a_plain_git_pull_in_a_memrepo_clone_takes_no_forgotten_file_for_a_rename(tmp_path):
    remote, a, b, gone, new, new_graph = forgotten_and_similar_new(tmp_path)
    pulled = subprocess.run(["git", "-C", str(a), "pull", "--no-rebase", "-q", "origin", "main"], capture_output=True,
                            text=True)
    status = git(a, "status", "--porcelain")
    assert pulled.returncode != 0 and f"UD semantic/2024/03/{gone}.md" in status, (pulled.stderr, status)
    assert f"{new}.md" not in "".join(line for line in status.splitlines() if line.startswith("UU"))
    assert "by the door" not in (a / "semantic" / "2024" / "03" / f"{new}.md").read_text()
    git(a, "merge", "--abort")
