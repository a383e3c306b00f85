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
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.capabilities import DERIVED_INDEXES

ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture
def memory(example_memory) -> Path:
    """A private copy of the example repository with every derived index built (tests/conftest.py)."""
    return example_memory


def memrepo(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m memrepo --repo ROOT ARGS...` in a fresh process (nothing imported beforehand)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", str(root), *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def first_record(root: Path) -> tuple[str, str]:
    """(record id, path) of the first episodic record file."""
    path = next(p for p in git(root, "ls-files", "episodic").splitlines() if p.endswith(".md"))
    return Path(path).stem, path


def loose_object(root: Path, sha: str) -> Path:
    path = root / ".git" / "objects" / sha[:2] / sha[2:]
    assert path.exists(), f"object {sha} is not loose"
    path.chmod(0o644)
    return path


def garble(path: Path, offset: int | None = None, length: int = 64) -> None:
    """Overwrite ``length`` bytes at ``offset`` (default: the middle) with 0xA5, in place."""
    size = path.stat().st_size
    offset = size // 2 if offset is None else offset
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"\xa5" * max(1, min(length, size - offset)))


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """The command failed with exit 1 and one explained line on stderr that has every word."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


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


# --- Git objects ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "alter", "delete"])
def test_a_damaged_record_object_is_reported_by_doctor_and_named_by_every_command(memory, damage):
    record_id, path = first_record(memory)
    blob = git(memory, "rev-parse", f"HEAD:{path}")
    head = git(memory, "rev-parse", "HEAD")
    obj = loose_object(memory, blob)
    if damage == "truncate":
        os.truncate(obj, 10)
    elif damage == "alter":
        garble(obj, 12, 1)
    else:
        obj.unlink()
    problems = doctor(memory)
    about = [p for p in problems if blob in p]
    assert len(about) == 1, problems
    assert about[0].startswith(f"{path}: ") and f"commit {head[:12]}" in about[0]
    assert ("missing" if damage == "delete" else "corrupt") in about[0]
    for args in (["show", record_id], ["list"]):
        one_line_error(memrepo(memory, *args), blob, "memrepo doctor")
    # `list` still lists every record it can read, and names the one it cannot (with its exit status 1).
    listed = memrepo(memory, "list", "--json")
    others = [r["id"] for r in json.loads(listed.stdout)]
    assert listed.returncode == 1 and record_id not in others and len(others) >= 1
    assert f"Error: {path}: Git object {blob}" in listed.stderr


def test_an_object_altered_under_a_valid_compression_is_found_by_its_hash(memory):
    import zlib

    _record_id, path = first_record(memory)
    blob = git(memory, "rev-parse", f"HEAD:{path}")
    obj = loose_object(memory, blob)
    raw = zlib.decompress(obj.read_bytes())
    obj.write_bytes(zlib.compress(raw[:-2] + bytes([raw[-2] ^ 1]) + raw[-1:]))  # one bit of the text flipped
    problems = [p for p in doctor(memory) if blob in p]
    assert len(problems) == 1 and "altered" in problems[0] and problems[0].startswith(path), problems


def test_a_missing_folder_and_a_missing_parent_commit_are_reported_with_where_they_are_referred_to(memory):
    folder = git(memory, "rev-parse", "HEAD:episodic")
    parent = git(memory, "rev-parse", "HEAD~1")
    loose_object(memory, folder).unlink()
    loose_object(memory, parent).unlink()
    problems = doctor(memory)
    assert any(p.startswith("episodic/: ") and folder in p and "missing" in p for p in problems), problems
    assert any(p.startswith(".git: ") and parent in p and "parent of commit" in p for p in problems), problems
    one_line_error(memrepo(memory, "log"), parent, "missing", "memrepo doctor")
    one_line_error(memrepo(memory, "list", "--type", "episodic"), folder, "missing")


def test_doctor_survives_a_missing_head_commit(memory):
    head = git(memory, "rev-parse", "HEAD")
    loose_object(memory, head).unlink()
    problems = doctor(memory)
    assert any(head in p and "missing" in p for p in problems), problems
    one_line_error(memrepo(memory, "list"), head)


# --- derived indexes and the embedding cache -------------------------------------------------------------------


def generation(root: Path, name: str) -> Path:
    index = root / ".git" / "memrepo" / "indexes" / name
    return index / json.loads((index / "CURRENT").read_text(encoding="utf-8"))["generation"]


def largest_file(folder: Path) -> Path:
    return max((p for p in folder.iterdir() if p.is_file() and p.name != "MANIFEST.json"), key=lambda p: p.stat().st_size)


def test_every_garbled_index_is_reported_by_doctor_and_rebuilt_by_reindex_full(memory):
    live = {"graph", "provenance"}  # SQLite databases updated in place: no published checksum to compare with
    for name in DERIVED_INDEXES:
        # SQLite notices damage to its structure, not to bytes inside a row: those databases get a damaged header.
        garble(largest_file(generation(memory, name)), 0 if name in live else None)
    problems = doctor(memory)
    for name in DERIVED_INDEXES:
        assert any(f"index {name}: " in p for p in problems), (name, problems)
        # A published generation is checked against its checksums; a live database (updated in place) by SQLite.
        assert any(f"index {name}: " in p and ("checksum" in p or "_check" in p or "readable database" in p)
                   for p in problems), (name, problems)
    result = memrepo(memory, "reindex", "--full")
    assert result.returncode == 0, result.stderr
    assert doctor(memory) == []


@pytest.mark.parametrize("name, pick", [
    ("fulltext", lambda folder: next(folder.glob("*.store"))),  # stored documents: a traceback before
    ("vectors", lambda folder: folder / "main.usearch"),         # vectors: silently other results before
])
def test_search_over_a_garbled_index_rebuilds_it_with_a_message_and_finds_what_it_found_before(memory, name, pick):
    query = ["search", "Where did Mia buy the Suica card?", "--json"]
    before = memrepo(memory, *query)
    assert before.returncode == 0, before.stderr
    garble(pick(generation(memory, name)), 0, 4096)
    after = memrepo(memory, *query)
    assert after.returncode == 0 and "Traceback" not in after.stderr, after.stderr
    assert f"index {name}: generation" in after.stderr and "rebuilding it" in after.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)
    assert doctor(memory) == []


def test_an_unreadable_embedding_cache_is_reported_and_replaced_by_reindex_full(memory):
    cache = memory / ".git" / "memrepo" / "embeddings.sqlite3"
    garble(cache, 0, 100)  # the SQLite header: "file is not a database"
    assert any(p.startswith(".git/memrepo/embeddings.sqlite3: ") and "damaged" in p for p in doctor(memory))
    result = memrepo(memory, "reindex", "--full")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "embedding cache embeddings.sqlite3 is unreadable" in result.stderr
    assert doctor(memory) == []


def test_a_write_and_search_over_an_unreadable_embedding_cache_work_and_say_so(memory):
    garble(memory / ".git" / "memrepo" / "embeddings.sqlite3", 0, 100)
    wrote = memrepo(memory, "remember", "Jonas sold his red bicycle", "--type", "episodic")
    assert wrote.returncode == 0 and "Traceback" not in wrote.stderr, wrote.stderr
    assert "starting an empty one" in wrote.stderr  # the write's graph step met the cache first
    result = memrepo(memory, "search", "red bicycle", "--json")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert json.loads(result.stdout)[0]["summary"] == "Jonas sold his red bicycle"


def test_a_damaged_vector_in_the_cache_is_embedded_again_not_used(memory):
    import sqlite3

    query = ["search", "Where did Mia buy the Suica card?", "--json"]
    before = json.loads(memrepo(memory, *query).stdout)
    db = sqlite3.connect(memory / ".git" / "memrepo" / "embeddings.sqlite3")
    with db:
        db.execute("UPDATE vectors SET vec = CAST(substr(vec, 1, length(vec) - 4) || x'0000c07f' AS BLOB)")  # a NaN each
    db.close()
    result = memrepo(memory, "reindex", "--full")
    assert result.returncode == 0, result.stderr
    assert "damaged vector(s) ignored; embedding them again" in result.stderr
    assert json.loads(memrepo(memory, *query).stdout) == before


# --- vault records and graph files --------------------------------------------------------------------------------


def test_doctor_checks_vault_records_with_the_key_given_and_only_notes_them_without_one(memory):
    from memrepo.vault import generate_key

    key = generate_key().decode()
    with MemoryRepo.open(memory, environ={"MEMREPO_VAULT_KEY": key}) as repo:
        sealed = [repo.remember(f"PIN {n}", type="vault").written[0] for n in (4321, 8765)]
        assert repo.doctor() == []
    without = doctor(memory)  # the CLI, no key in the environment: exit 0
    result = memrepo(memory, "doctor", "--json")
    notes = json.loads(result.stdout)["notes"]
    assert without == [] and any("2 encrypted record(s)" in n["message"] and "encrypted, no key" in n["message"]
                                 for n in notes), notes
    with MemoryRepo.open(memory, environ={"MEMREPO_VAULT_KEY": generate_key().decode()}) as repo:
        problems = [str(p) for p in repo.doctor()]
    assert any("decrypts none of the 2 encrypted records" in p for p in problems), problems
    with MemoryRepo.open(memory, environ={"MEMREPO_VAULT_KEY": key}) as repo:  # one ciphertext damaged
        path = repo.at(None).find_path(sealed[0])
        data = repo.snapshot.read(path).decode()
        head, _, body = data.rpartition("---\n")
        repo.store.commit({path: (head + "---\n" + body[:20] + "A" + body[21:]).encode()}, "damage one ciphertext")
        problems = [str(p) for p in repo.doctor() if not p.note]
    assert len(problems) == 1 and problems[0].startswith(f"{path}: undecryptable"), problems


def test_doctor_reports_records_without_graph_files(memory):
    with MemoryRepo.open(memory, environ={}) as repo:
        graph_files = [path for path, _blob in repo.snapshot.walk("graph/frames")][:2]
        repo.store.commit({path: None for path in graph_files}, "lose two graph files")
        problems = [str(p) for p in repo.doctor()]
    # The graph catch-up had seen these records: a missing graph file is a fault, named per record.
    lost = [p for p in problems if "has no graph file" in p and "memrepo index" in p]
    assert len(lost) == 2, problems


def test_doctor_notes_records_a_fresh_clone_has_not_indexed_yet(memory):
    import shutil as sh

    with MemoryRepo.open(memory, environ={}) as repo:
        sh.rmtree(repo.store.state_dir)  # as in a fresh clone: no graph catch-up has run here
        graph_files = [path for path, _blob in repo.snapshot.walk("graph/frames")][:2]
        repo.store.commit({path: None for path in graph_files}, "lose two graph files", sync_worktree=False)
        found = repo.doctor(notes=True)
    notes = [str(p) for p in found if p.note]
    assert any("2 record(s) have no graph file yet" in n and "memrepo index" in n for n in notes), notes
    assert not [p for p in found if not p.note and "graph file" in str(p)]


def test_damage_that_keeps_size_and_mtime_is_one_line_on_search_and_found_by_doctor(memory):
    """Bit rot keeps a file's size and mtime: the cheap check on open passes it, the read fails, doctor finds it."""
    store = next(generation(memory, "fulltext").glob("*.store"))
    info = store.stat()
    garble(store, 0, 64)
    os.utime(store, ns=(info.st_atime_ns, info.st_mtime_ns))
    one_line_error(memrepo(memory, "search", "Suica card"), "index fulltext", "memrepo reindex")
    assert any("index fulltext: " in p and "checksum" in p for p in doctor(memory))
    assert memrepo(memory, "reindex").returncode == 0  # not only --full: reindex checks every file first
    assert memrepo(memory, "search", "Suica card").returncode == 0
