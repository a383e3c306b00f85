"""The memory repository on Git: records round-trip, writes are atomic, idempotent and clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_record

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.errors import NotFoundError, RecordError, RepositoryError, VaultKeyError
from memrepo.settings import Settings
from memrepo.vault import generate_key


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_init_creates_layout_config_readme_and_hooks(repo):
    root = repo.root
    assert (root / "memrepo.toml").read_text().startswith("# Settings")
    assert "episodic/YYYY/MM" in (root / "README.md").read_text()
    for hook in ("post-commit", "post-merge", "post-checkout"):
        text = (root / ".git" / "hooks" / hook).read_text()
        assert sys.executable in text and "@PYTHON@" not in text
    assert git(root, "status", "--porcelain") == ""
    assert len(repo.log()) == 1


def test_init_on_existing_repository_changes_nothing(repo):
    head = repo.store.head()
    with pytest.raises(RepositoryError, match="already a memory repository"):
        MemoryRepo.init(repo.root)
    assert repo.store.head() == head


@pytest.mark.parametrize("type_", rec.TYPES)
def test_round_trip_of_every_type(tmp_path, type_):
    settings = Settings(vault_key=generate_key())
    MemoryRepo.init(tmp_path / "m").close()
    repo = MemoryRepo.open(tmp_path / "m", settings=settings)
    fields = {"event_time": "2023-05-01/2023-05-07", "actor": "Mia"} if type_ in ("episodic", "semantic") else {}
    fields.update({"label": "human"} if type_ == "core" else {})
    record = repo.new_record(type_, "Mia's bike: a blue Brompton, 2 gears — 1,250 €", mention_time="2023-05-02", **fields)
    result = repo.add([record])
    assert result.written == [record.id]
    got = repo.get(record.id)
    assert got.text == record.text
    assert got.type == type_ and got.mention_time == "2023-05-02"
    assert got.event_time == record.event_time
    on_disk = (repo.root / record.path).read_text()
    if type_ == "vault":
        assert "Brompton" not in on_disk and "cipher: fernet" in on_disk
    else:
        assert on_disk == rec.serialize(record).decode()
    assert [r.id for r in repo.records(type=type_)] == [record.id]


def test_ids_are_deterministic_and_paths_sharded_by_mention_month():
    a = make_record(source="src-a", position="D1:3")
    b = make_record(source="src-a", position="D1:3")
    c = make_record(source="src-a", position="D1:4")
    assert a.id == b.id != c.id
    assert a.id.startswith("ep-2023-05-02-")
    assert a.path == f"episodic/2023/05/{a.id}.md"
    assert rec.serialize(a) == rec.serialize(b)


def test_writing_the_same_record_twice_is_a_no_op(repo, no_after_write):  # the record commits alone
    record = make_record()
    first = repo.add([record])
    second = repo.add([record])
    assert first.commit and second.commit is None
    assert second.unchanged == [record.id]
    assert len(repo.log()) == 2


def test_a_batch_is_one_commit(repo, no_after_write):  # the record commits alone
    batch = [make_record(text=f"turn {i}", position=str(i)) for i in range(20)]
    repo.add(batch)
    assert len(repo.log()) == 2
    assert len(repo.records()) == 20


def test_core_blocks_are_edited_in_place_and_the_commit_shows_the_diff(repo):
    repo.add([make_record("core", "Name: Mia. Lives in Lisbon.")])
    result = repo.add([make_record("core", "Name: Mia. Lives in Kyoto.")])
    assert repo.get("core-human").text == "Name: Mia. Lives in Kyoto."
    changed = repo.store.diff(result.commit)
    assert [path for path, _, _ in changed] == ["core/human.md"]
    assert len(repo.log("core-human")) == 2


def test_work_tree_is_clean_after_writes_and_files_are_on_disk(repo):
    records = [make_record(text=f"note {i}", position=str(i)) for i in range(3)]
    repo.add(records)
    assert git(repo.root, "status", "--porcelain") == ""
    for r in records:
        assert (repo.root / r.path).read_bytes() == rec.serialize(r)
    assert git(repo.root, "fsck", "--strict").strip() == ""


def test_at_reads_exactly_that_commit(repo, no_after_write):  # the record commits alone
    first = repo.add([make_record(text="one")]).commit
    repo.add([make_record(text="two")])
    assert len(repo.records()) == 2
    old = repo.at(first)
    assert [r.text for r in old.records()] == ["one"]
    assert len(repo.at("HEAD~1").records()) == 1
    with pytest.raises(NotFoundError):
        repo.at("no-such-branch")


def test_record_edited_by_hand_and_committed_with_git_is_read_back(repo):
    record = make_record()
    repo.add([record])
    path = repo.root / record.path
    path.write_text(path.read_text().replace("Suica card", "Pasmo card"))
    git(repo.root, "commit", "-qam", "fix card name")
    assert repo.get(record.id).text == "Mia bought a Pasmo card at Tokyo Station"


def test_hand_written_record_in_the_documented_format(repo):
    path = repo.root / "semantic/2024/01/se-2024-01-15-handmade.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\nid: se-2024-01-15-handmade\ntype: semantic\nmention_time: 2024-01-15\n---\nJonas's dog is called Pixel.\n"
    )
    git(repo.root, "add", ".")
    git(repo.root, "commit", "-qm", "by hand")
    assert repo.get("se-2024-01-15-handmade").text == "Jonas's dog is called Pixel."
    assert repo.doctor() == []


@pytest.mark.parametrize(
    "type_, text, fields, field",
    [
        ("diary", "x", {}, "type"),
        ("episodic", "   ", {}, "text"),
        ("episodic", b"\xff\xfe bad", {}, "text"),
        ("episodic", "ok", {"event_time": "2023-13-45"}, "event_time"),
        ("episodic", "ok", {"mention_time": "yesterday"}, "mention_time"),
        ("semantic", "ok", {"status": "planned"}, "status"),
        ("core", "ok", {"label": "../../etc"}, "label"),
        ("episodic", "ok", {"sources": ["../../etc/passwd"]}, "source"),
    ],
)
def test_bad_input_names_the_field_and_commits_nothing(repo, type_, text, fields, field):
    head = repo.store.head()
    with pytest.raises(RecordError, match=field):
        repo.add([repo.new_record(type_, text, **fields)])
    assert repo.store.head() == head


def test_ids_that_would_escape_the_repository_are_refused(repo):
    for bad in ("../../etc/passwd", "ep-../../x", "core-../x", "ep-2023-05-02-a/b"):
        with pytest.raises(RecordError, match="id"):
            repo.get(bad)


def test_uncommitted_edit_of_a_file_being_written_is_not_overwritten(repo):
    repo.add([make_record("core", "v1")])
    (repo.root / "core/human.md").write_text("my local edit")
    with pytest.raises(RepositoryError, match="uncommitted"):
        repo.add([make_record("core", "v2")])
    assert (repo.root / "core/human.md").read_text() == "my local edit"


def test_vault_plaintext_never_enters_a_git_object(tmp_path):
    key = generate_key()
    MemoryRepo.init(tmp_path / "m").close()
    repo = MemoryRepo.open(tmp_path / "m", settings=Settings(vault_key=key))
    secret = "passport number X9981723"
    record = repo.new_record("vault", secret, mention_time="2023-05-02")
    repo.add([record])
    objects = subprocess.run(
        "git cat-file --batch-all-objects --batch", shell=True, cwd=repo.root, capture_output=True
    ).stdout
    assert b"X9981723" not in objects
    assert repo.get(record.id).text == secret
    locked = MemoryRepo.open(tmp_path / "m", settings=Settings())
    got = locked.get(record.id)
    assert got.encrypted and secret not in got.text
    with pytest.raises(VaultKeyError, match="MEMREPO_VAULT_KEY"):
        locked.new_record("vault", "another secret")
    wrong = MemoryRepo.open(tmp_path / "m", settings=Settings(vault_key=generate_key()))
    with pytest.raises(VaultKeyError, match="does not decrypt"):
        wrong.get(record.id)


def test_bare_repository_accepts_writes(tmp_path):
    repo = MemoryRepo.init(tmp_path / "bare.git", bare=True)
    repo.add([make_record()])
    assert len(repo.records()) == 1
    assert git(tmp_path / "bare.git", "fsck", "--strict").strip() == ""


def test_log_of_one_record(repo, no_after_write):  # the record commits alone
    a, b = make_record(text="a"), make_record(text="b")
    repo.add([a])
    repo.add([b])
    assert [c.summary for c in repo.log(a.id)] == [f"Remember episodic {a.id}: a"]
    assert len(repo.log()) == 3


def test_trees_edited_entry_by_entry_are_byte_identical_to_git_trees():
    """RawTree (the commit path's tree) keeps Git's entry order through inserts, type changes and deletes."""
    import random

    from dulwich.objects import Blob, Tree

    from memrepo.store.objects import RawTree

    rng = random.Random(3)
    blob, sub = Blob.from_string(b"x").id, Tree().id
    names = [b"a", b"a.b", b"a-b", b"a0", b"ab", b"b", b"a_b", b"ep-2024-05-01-0a1b2c3d.md", b"2024", b"2024.md"]
    raw = RawTree()
    for _ in range(300):
        name = rng.choice(names)
        if name in raw and rng.random() < 0.3:
            raw.delete(name)
        else:
            raw.set(name, rng.choice([0o100644, 0o040000]), rng.choice([blob, sub]))
        expected = Tree()
        for entry in raw.iteritems():
            expected.add(entry.path, entry.mode, entry.sha)
        obj = raw.to_object()
        assert obj.raw == expected.as_raw_string() and obj.id == expected.id
        assert RawTree.from_raw(obj.raw).keys == raw.keys


def test_commits_write_objects_git_reads(repo):
    """Loose objects written by memrepo pass git fsck --strict, and git agrees on the tree and file."""
    record = make_record(text="Mia bought a lantern.")
    repo.add([record])
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo.root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    shown = subprocess.run(["git", "show", f"HEAD:{record.path}"], cwd=repo.root, capture_output=True, check=True)
    assert shown.stdout == rec.serialize(record)


def test_the_git_index_stays_exact_through_many_writes_and_git_commands(repo):
    """New files go straight into the split index; git sees exactly HEAD, through a rewrite of the shared
    index (more than SPLIT_MAX writes), `git status` rewriting the index, and a hand edit committed with git."""
    from memrepo.store.splitindex import SPLIT_MAX

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo.root, capture_output=True, text=True)

    records = [make_record(text=f"Mia wrote memory number {i}.", position=str(i)) for i in range(SPLIT_MAX + 40)]
    for i, record in enumerate(records):
        repo.add([record])
        if i % 97 == 5:
            assert git("status", "--porcelain").stdout == ""  # git refreshes and may rewrite the index here
        if i == 150:
            path = repo.root / records[3].path
            path.write_text(path.read_text().replace("memory number 3", "memory number three"))
            assert git("commit", "-qam", "hand edit").returncode == 0
    assert git("status", "--porcelain").stdout == ""
    assert git("diff", "--cached", "--quiet", "HEAD").returncode == 0
    assert git("ls-files").stdout == git("ls-tree", "-r", "--name-only", "HEAD").stdout
    assert all(r.path in git("ls-files").stdout for r in records)
    fsck = git("fsck", "--strict", "--no-dangling")
    assert fsck.returncode == 0, fsck.stderr


def test_gc_packs_every_object_into_one_pack_and_loses_nothing(repo):
    """Bulk commits each write a pack; `memrepo gc` leaves one pack and no loose objects, every record reads
    back the same, Git accepts the result, and a second run has nothing to do."""
    import json

    from click.testing import CliRunner

    from memrepo.cli import cli
    from memrepo.store.git import PACK_THRESHOLD

    for batch in range(3):  # each commit adds more than PACK_THRESHOLD objects: one pack each
        records = [make_record("episodic", f"Mia bought postcard {batch}-{i} at the market")
                   for i in range(PACK_THRESHOLD + 1)]
        repo.store.commit({r.path: rec.serialize(r) for r in records}, f"bulk {batch}")
    repo.add([make_record("semantic", "Jonas lives in Lisbon")])  # and a few loose objects
    before = {r.id: r.text for r in repo.records()}
    packs = sorted((Path(repo.store.repo.object_store.path) / "pack").glob("*.pack"))
    assert len(packs) >= 3

    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "gc", "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.output)
    assert stats["packs_before"] == len(packs) and stats["loose_before"] > 0
    assert stats["packs_after"] == 1 and stats["loose_after"] == 0
    assert len(list((Path(repo.store.repo.object_store.path) / "pack").glob("*.pack"))) == 1
    assert {r.id: r.text for r in repo.records()} == before
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo.root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    repo.add([make_record("semantic", "Jonas rides a red bike")])  # writing goes on as before
    again = json.loads(CliRunner().invoke(cli, ["--repo", str(repo.root), "gc", "--json"]).output)
    assert again["packs_before"] == 1 and again["loose_before"] > 0 and again["loose_after"] == 0


def test_changed_files_between_any_two_commits_are_what_git_diff_tree_lists(tmp_path):
    """Every index and the graph step follow the commits through ``GitStore.changed_files``: it must list
    exactly the files Git does, whatever changed (additions, edits, removals, a file that became a
    folder, an executable bit, whole folders added and removed)."""
    import os

    from memrepo.store.git import GitStore

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    steps = [
        {"a.txt": "1", "docs/b.md": "b", "docs/deep/c.md": "c"},
        {"a.txt": "2", "docs/new.md": "n"},                        # edit, add
        {"docs/b.md": None, "e/f/g.md": "g"},                      # remove, new nested folders
        {"docs/deep/c.md": None, "a.txt": None, "a.txt/x.md": "x"},  # a folder emptied; a file becomes a folder
        {"e/f/g.md": "g", "run.sh": "#!/bin/sh\n", "chmod": "run.sh"},  # unchanged content; a new file
        {"chmod": "run.sh"},                                       # only the executable bit
    ]
    commits = []
    for i, step in enumerate(steps):
        for path, text in step.items():
            if path == "chmod":
                (root / text).chmod(0o755 if i == len(steps) - 1 else 0o644)
                continue
            target = root / path
            if text is None:
                target.unlink()
                continue
            if target.parent.exists() and not target.parent.is_dir():
                target.parent.unlink()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", f"step {i}")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    store = GitStore.open(root)
    zero = "0" * 40
    pairs = [(None, c) for c in commits] + [(a, b) for a in commits for b in commits if a != b]
    for old, new in pairs:
        listed = git(root, "diff-tree", "-r", "--no-renames", old or "4b825dc642cb6eb9a060e54bf8d69288fbee4904", new)
        expected = []
        for line in listed.splitlines():
            meta, path = line.split("\t", 1)
            _old_mode, _new_mode, old_blob, new_blob, _status = meta[1:].split()
            expected.append((path, None if old_blob == zero else old_blob, None if new_blob == zero else new_blob))
        assert store.changed_files(old, new) == sorted(expected), (old, new)
    store.close()
    assert os.path.isdir(root)
