"""Derived indexes (issue 5): per-commit updates by tree diff, atomic generations, the embedding cache.

Every test uses a real Git repository, real Tantivy and usearch indexes and the
real offline embedder (or a real HTTP server speaking the OpenAI protocol).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from conftest import make_record
from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.index import Indexes, update_indexes
from memrepo.index.base import index_root, read_state, tree_diff
from memrepo.index.embed import get_embedder
from memrepo.index.fulltext import FullTextReader
from memrepo.index import vectors as vectors_module
from memrepo.index.vectors import RECORD_FILE, AnchorVectors, VectorReader
from memrepo.settings import EmbeddingSettings

ROOT = Path(__file__).resolve().parents[1]


def mine(report) -> dict[str, str]:
    """The actions of this issue's indexes (other issues register theirs too)."""
    return {name: report.actions[name] for name in ("fulltext", "vectors")}


def records_at(repo: MemoryRepo, rev: str | None = None) -> set[str]:
    return {r.id for r in repo.at(rev).records()}


def index_contents(repo: MemoryRepo) -> tuple[list[dict], dict[int, np.ndarray]]:
    """Everything the full-text and vector indexes hold at their current generation."""
    indexes = Indexes(repo.store, repo.settings)
    docs = FullTextReader(indexes.folder("fulltext")).all_docs()
    return docs, VectorReader(indexes.folder("vectors")).items()


def build_history(repo: MemoryRepo) -> list[str]:
    """A history with adds, an in-place edit, a deletion, sources and a vault entry; indexes updated after each commit."""
    commits = []

    def step() -> None:
        commits.append(repo.store.head().decode())
        update_indexes(repo.ctx)

    source = rec.Source(
        id="src-2023-05-02-aaaa1111",
        kind="conversation",
        mention_time="2023-05-02T14:00:00+09:00",
        parts=(rec.SourcePart("D1:1", "I bought a Suica card today", {"speaker": "Mia"}),
               rec.SourcePart("D1:2", "Nice, the blue one?", {"speaker": "Jonas"})),
        title="Session 1",
    )
    a = make_record("episodic", "Mia bought a Suica card at Tokyo Station", sources=["src-2023-05-02-aaaa1111#D1:1"])
    repo.add([a], sources=[source])
    step()
    b = make_record("semantic", "Jonas lives in Lisbon and rides a red bike", mention_time="2023-05-03")
    c = make_record("core", "Mia likes hiking", label="human")
    repo.add([b, c])
    step()
    repo.add([make_record("core", "Mia likes hiking and is vegetarian", label="human")])
    step()
    repo.store.commit({b.path: None}, "Forget where Jonas lives")
    step()
    d = repo.new_record("procedural", "Always check the train timetable before leaving", mention_time="2023-05-04")
    repo.add([d])
    step()
    return commits


def test_incremental_equals_full_rebuild(repo):
    commits = build_history(repo)
    assert read_state(index_root(repo.store, "fulltext")).commit == commits[-1]
    incremental = index_contents(repo)
    report = update_indexes(repo.ctx, full=True)
    assert mine(report) == {"fulltext": "rebuilt 4", "vectors": "rebuilt 3"}  # 3 records + 1 source file
    full = index_contents(repo)
    assert incremental[0] == full[0]
    assert sorted(incremental[1]) == sorted(full[1])
    for key in full[1]:
        np.testing.assert_array_equal(incremental[1][key], full[1][key])
    ids = {d["id"] for d in full[0]}
    assert records_at(repo) <= ids  # every record at the tip is indexed...
    assert "src-2023-05-02-aaaa1111#D1:2" in ids  # ...and every source part
    assert not any(d["id"].startswith("se-") for d in full[0])  # the deleted record is gone
    core = [d for d in full[0] if d["id"] == "core-human"]
    assert core and "vegetarian" in core[0]["text"]  # the edited block has its new text, once


def test_one_record_commit_costs_one_record(repo, no_after_write):
    repo.add([make_record("semantic", f"Fact number {i} about the garden", mention_time="2023-05-02") for i in range(40)])
    first = update_indexes(repo.ctx)
    assert first.embedded == 40
    repo.add([make_record("semantic", "The garden has a new apple tree", mention_time="2023-05-05")])
    report = update_indexes(repo.ctx)
    assert mine(report) == {"fulltext": "updated 1", "vectors": "updated 1"}
    assert report.embedded == 1
    assert tree_diff(repo.store, first.commit, report.commit)[0].path.startswith("semantic/2023/05/")


def test_embedding_cache_hit_on_unchanged_content(repo, no_after_write):
    repo.add([make_record("semantic", f"Jonas owns {i} bicycles", mention_time="2023-05-02") for i in range(5)])
    assert update_indexes(repo.ctx).embedded == 5
    report = update_indexes(repo.ctx, full=True)  # throw the indexes away: the cache stays
    assert report.embedded == 0 and report.cached == 5
    # Deleting the whole state folder rebuilds from the tracked files alone.
    import shutil

    shutil.rmtree(repo.store.state_dir)
    report = update_indexes(repo.ctx)
    assert mine(report) == {"fulltext": "rebuilt 5", "vectors": "rebuilt 5"}
    assert report.embedded == 5


def test_indexes_record_commit_and_schema(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    state = json.loads((index_root(repo.store, "vectors") / "CURRENT").read_text())
    assert state["commit"] == repo.store.head().decode()
    assert state["schema"] == vectors_module.SCHEMA_VERSION
    assert state["identity"] == {"model": "all-minilm-l6-v2-int8-dq"}
    assert (index_root(repo.store, "vectors") / state["generation"] / RECORD_FILE).exists()


def test_commit_outside_records_moves_only_the_pointer(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    gen = read_state(index_root(repo.store, "fulltext")).generation
    repo.store.commit({"views/quests/style.md": b"# Be brief\n"}, "Add a quest")  # rules/ are records (issue 15)
    report = update_indexes(repo.ctx)
    assert mine(report) == {"fulltext": "current", "vectors": "current"}
    state = read_state(index_root(repo.store, "fulltext"))
    assert state.commit == repo.store.head().decode() and state.generation == gen


# --- corruption -----------------------------------------------------------------------


def test_corrupt_pointer_is_rebuilt_with_a_message(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    (index_root(repo.store, "fulltext") / "CURRENT").write_text("{not json")
    messages: list[str] = []
    report = update_indexes(repo.ctx, notify=messages.append)
    assert report.actions["fulltext"] == "rebuilt 1"
    assert any("fulltext" in m and "unreadable" in m for m in messages)


def test_corrupt_index_files_are_rebuilt_when_read(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    folder = index_root(repo.store, "fulltext") / read_state(index_root(repo.store, "fulltext")).generation
    (folder / "meta.json").write_text("garbage")
    vec_folder = index_root(repo.store, "vectors") / read_state(index_root(repo.store, "vectors")).generation
    (vec_folder / RECORD_FILE).write_bytes(b"\0" * 10)
    messages: list[str] = []
    hits = repo.search("Suica", notify=messages.append)
    assert [h.id for h in hits] == [make_record().id]
    # Found by the checksums the generation was published with, before anything opens it (issue 21).
    assert any(m.startswith("index fulltext: generation") and "damaged" in m for m in messages), messages
    assert any(m.startswith("index vectors: generation") and "damaged" in m for m in messages), messages


def test_missing_generation_folder_is_rebuilt(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    root = index_root(repo.store, "vectors")
    import shutil

    shutil.rmtree(root / read_state(root).generation)
    messages: list[str] = []
    update_indexes(repo.ctx, notify=messages.append)
    assert any("missing" in m for m in messages)
    assert repo.search("Suica card")


def test_corrupt_index_via_cli_gives_a_message_not_a_traceback(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    folder = index_root(repo.store, "fulltext") / read_state(index_root(repo.store, "fulltext")).generation
    for path in folder.rglob("*"):
        if path.is_file():
            path.write_bytes(b"broken")
    result = subprocess.run(
        [sys.executable, "-m", "memrepo", "--repo", str(repo.root), "search", "Suica"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "rebuilding it" in result.stderr
    assert make_record().id in result.stdout


# --- concurrency ------------------------------------------------------------------------

READER = textwrap.dedent(
    """
    import sys, time
    from memrepo.api import MemoryRepo
    from memrepo.index.base import index_root, read_state
    from memrepo.index.fulltext import FullTextReader

    repo = MemoryRepo.open(sys.argv[1])
    root = index_root(repo.store, "fulltext")
    seen, errors, reads = set(), [], 0
    deadline = time.time() + float(sys.argv[2])
    while time.time() < deadline:
        state = read_state(root)
        try:
            reader = FullTextReader(root / state.generation)
        except Exception as exc:  # the generation was pruned after we read CURRENT: read CURRENT again
            if read_state(root).generation != state.generation:
                continue
            errors.append(repr(exc)); continue
        expected = sum(1 for p, _ in repo.store.snapshot(state.commit.encode()).walk("episodic"))
        if reader.num_docs != expected:
            errors.append(f"{state.commit[:8]}: {reader.num_docs} docs, {expected} records")
        seen.add(state.commit); reads += 1
    print(len(seen), reads, len(errors), errors[:3])
    """
)


@pytest.mark.slow
def test_reader_sees_old_or_new_state_while_a_writer_updates(repo, tmp_path):
    repo.add([make_record(text="first memory")])
    update_indexes(repo.ctx)
    script = tmp_path / "reader.py"
    script.write_text(READER)
    reader = subprocess.Popen([sys.executable, str(script), str(repo.root), "6"], stdout=subprocess.PIPE, text=True)
    for i in range(15):
        repo.add([make_record(text=f"memory number {i} about trains", mention_time=f"2023-05-{i + 3:02d}")])
        update_indexes(repo.ctx)
    out, _ = reader.communicate(timeout=120)
    commits, reads, errors, sample = out.split(" ", 3)
    assert int(errors) == 0, sample
    assert int(commits) >= 2 and int(reads) > 10


def test_concurrent_updaters_serialise(repo):
    repo.add([make_record(text=f"note {i} on the weather", mention_time="2023-05-02") for i in range(10)])
    errors: list[BaseException] = []

    def run() -> None:
        try:
            update_indexes(MemoryRepo.open(repo.root).ctx)
        except BaseException as exc:  # pragma: no cover - the failure we look for
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(index_contents(repo)[1]) == 10


# --- the OpenAI-compatible embedder and model changes ------------------------------------


def _fake_vector(text: str, dim: int = 32) -> list[float]:
    vec = [0.0] * dim
    for word in text.lower().split():
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    return vec


class _EmbeddingHandler(BaseHTTPRequestHandler):
    calls: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        reply = {
            "object": "list",
            "model": body["model"],
            "data": [{"object": "embedding", "index": i, "embedding": _fake_vector(t)} for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def embedding_server():
    _EmbeddingHandler.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _EmbeddingHandler.calls
    server.shutdown()
    server.server_close()


def test_changing_the_embedding_model_re_embeds_and_says_so(repo, no_after_write, embedding_server):
    url, calls = embedding_server
    repo.add([make_record("semantic", f"Jonas plays {sport}", mention_time="2023-05-02") for sport in ("chess", "tennis", "golf")])
    older = repo.store.head().decode()
    repo.add([make_record("semantic", "Jonas plays squash", mention_time="2023-05-03")])
    update_indexes(repo.ctx)
    assert repo.search("tennis", at=older)  # an index for the older commit, built with the offline model
    repo.settings = replace(repo.settings, embedding=EmbeddingSettings(model="hash-embed", base_url=url))
    messages: list[str] = []
    report = update_indexes(repo.ctx, notify=messages.append)
    assert any(m.startswith("embedding model changed from all-minilm-l6-v2-int8-dq to hash-embed@") and "re-embedding 4 records" in m for m in messages)
    assert report.embedded == 4
    assert not (index_root(repo.store, "vectors") / "at").exists()  # vectors of the old model are not reused
    assert repo.search("tennis", at=older, type="semantic")[0].summary == "Jonas plays tennis"
    assert calls and calls[0]["model"] == "hash-embed"
    hits = repo.search("tennis", type="semantic", k=1)
    assert hits[0].summary == "Jonas plays tennis" and hits[0].cosine is not None
    # The endpoint's vectors are cached too: a full rebuild asks it for nothing but the query.
    before = len(calls)
    assert update_indexes(repo.ctx, full=True).embedded == 0
    assert len(calls) == before


def test_embedding_endpoint_errors_are_explained(repo):
    from memrepo.errors import MemrepoError

    repo.add([make_record()])
    repo.settings = replace(repo.settings, embedding=EmbeddingSettings(model="x", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(MemrepoError, match="embedding endpoint http://127.0.0.1:9/v1"):
        update_indexes(repo.ctx, names=["vectors"])


def test_unknown_offline_model_is_explained():
    from memrepo.errors import MemrepoError

    with pytest.raises(MemrepoError, match="embedding.model: 'nope' is not an offline model"):
        get_embedder(EmbeddingSettings(model="nope"))


# --- the offline embedder and anchor vectors ------------------------------------------------


def test_offline_embedder_vectors_are_normalised_and_meaningful():
    embedder = get_embedder(EmbeddingSettings())
    vectors = embedder.embed(["Mia bought a Suica card", "Mia purchased a transit card", "The stock market fell today"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.6 > vectors[0] @ vectors[2]
    # Batching and order do not change a text's vector.
    again = embedder.embed(["The stock market fell today", "Mia bought a Suica card"])
    np.testing.assert_allclose(again[1], vectors[0], atol=1e-5)


def test_many_texts_embedded_in_parallel_batches_get_the_vectors_each_gets_alone():
    from memrepo.index.embed import BATCH, MAX_TOKENS, MiniLMEmbedder

    texts = [f"Note {i}: " + "Mia bought a lantern at Harbor Market. " * (i % 7) for i in range(3 * BATCH + 5)]
    texts += ["", "   ", "word " * (2 * MAX_TOKENS)]  # empty, blank, and cut at the model's 256 tokens
    parallel = MiniLMEmbedder(threads=2).embed(texts)
    alone = get_embedder(EmbeddingSettings())
    one_by_one = np.stack([alone.embed([t])[0] for t in texts])
    np.testing.assert_allclose(parallel, one_by_one, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(parallel, axis=1), 1.0, atol=1e-5)
    # Truncation: anything past the 256th token does not change the vector.
    longer = alone.embed(["word " * (3 * MAX_TOKENS)])[0]
    np.testing.assert_allclose(longer, parallel[-1], atol=1e-5)


def test_anchor_vectors_candidates_above_threshold(tmp_path, repo):
    from memrepo.index.base import open_embedding_cache

    cache = open_embedding_cache(repo.store)
    embedder = get_embedder(EmbeddingSettings())
    anchors = AnchorVectors(embedder, cache)
    anchors.add_many([
        ("urn:memrepo:anchor:1", "Tokyo Station"),
        ("urn:memrepo:anchor:2", "Tokyo station"),
        ("urn:memrepo:anchor:3", "Mia"),
        ("urn:memrepo:anchor:4", "blue Brompton bike"),
    ])
    found = anchors.search("Tokyo Station", k=4, min_cosine=0.72)
    assert [a for a, _ in found][:2] in (["urn:memrepo:anchor:1", "urn:memrepo:anchor:2"], ["urn:memrepo:anchor:2", "urn:memrepo:anchor:1"])
    assert all(c >= 0.72 for _, c in found) and "urn:memrepo:anchor:3" not in [a for a, _ in found]
    assert found[0][1] == pytest.approx(1.0, abs=1e-3)
    anchors.save(tmp_path / "gen")
    loaded = AnchorVectors.load(tmp_path / "gen", embedder, cache)
    assert len(loaded) == 4 and loaded.search("Mia", k=1) == anchors.search("Mia", k=1)
    loaded.remove("urn:memrepo:anchor:3")
    assert "urn:memrepo:anchor:3" not in [a for a, _ in loaded.search("Mia", k=4)]
    misses = cache.misses
    loaded.add("urn:memrepo:anchor:5", "Tokyo Station")  # a name seen before: read from the cache
    assert cache.misses == misses
    # Recall reads a named anchor's stored vector instead of embedding its name again: the same vector,
    # and none for a name the set does not hold under that anchor (renamed since, or unknown).
    view = AnchorVectors.load(tmp_path / "gen", embedder, cache, view=True)
    stored = view.stored([("urn:memrepo:anchor:4", "blue Brompton bike"), ("urn:memrepo:anchor:3", "Mika"),
                          ("urn:memrepo:anchor:9", "Lisbon")])
    assert list(stored) == ["urn:memrepo:anchor:4"]
    np.testing.assert_allclose(stored["urn:memrepo:anchor:4"], embedder.embed(["blue Brompton bike"])[0], atol=1e-6)
    cache.close()


def test_tree_diff_between_any_two_commits(repo, no_after_write):
    a = make_record(text="one")
    repo.add([a])
    first = repo.store.head().decode()
    b = make_record(text="two")
    repo.add([b])
    repo.store.commit({a.path: None}, "drop one")
    last = repo.store.head().decode()
    changes = {c.path: (c.old is None, c.new is None) for c in tree_diff(repo.store, first, last)}
    assert changes == {a.path: (False, True), b.path: (True, False)}
    back = {c.path: (c.old is None, c.new is None) for c in tree_diff(repo.store, last, first)}
    assert back == {a.path: (True, False), b.path: (False, True)}


def test_state_dir_is_not_tracked(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    assert not any(p.split("/")[0] == ".git" or "indexes" in p for p, _ in repo.store.snapshot().walk())
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo.root, capture_output=True, text=True)
    assert status.stdout.strip() == ""


def test_update_on_an_empty_repository(tmp_path):
    from memrepo.store.git import GitStore

    store = GitStore.init(tmp_path / "empty")
    report = update_indexes(store)
    assert report.commit is None
    assert {"fulltext", "vectors"} <= set(report.actions)


def test_a_file_where_the_index_folder_belongs_is_replaced(repo, no_after_write):
    repo.add([make_record()])
    (repo.store.state_dir / "indexes").mkdir(parents=True)
    (repo.store.state_dir / "indexes" / "fulltext").write_text("not a folder")
    messages: list[str] = []
    assert [h.id for h in repo.search("Suica", notify=messages.append)] == [make_record().id]
    assert any("a file where the index folder belongs" in m for m in messages)


def test_doctor_reports_a_corrupt_index_and_reindex_repairs_it(repo):
    repo.add([make_record()])
    update_indexes(repo.ctx)
    assert not [p for p in repo.doctor() if "index" in p.message]
    (index_root(repo.store, "fulltext") / "CURRENT").write_text("{")
    problems = [p for p in repo.doctor() if "index fulltext" in p.message]
    assert problems and "memrepo reindex" in problems[0].message
    messages: list[str] = []
    repo.reindex(notify=messages.append)
    assert messages and not [p for p in repo.doctor() if "index" in p.message]


def test_vector_delta_is_folded_into_main_and_stays_equal_to_a_full_build(repo, monkeypatch):
    monkeypatch.setattr(vectors_module, "COMPACT_MIN", 3)
    monkeypatch.setattr(vectors_module, "MAX_REMOVED", 2)
    base = [make_record("semantic", f"Base fact {i} about rivers", mention_time="2023-05-02") for i in range(5)]
    repo.add(base)
    update_indexes(repo.ctx)
    root = index_root(repo.store, "vectors")
    main_inode = lambda: (root / read_state(root).generation / "main.usearch").stat().st_ino  # noqa: E731
    first = main_inode()
    repo.add([make_record("semantic", "One more fact about lakes", mention_time="2023-05-03")])
    update_indexes(repo.ctx)
    assert main_inode() == first  # a one-record commit links main and writes only the delta
    assert len(VectorReader(root / read_state(root).generation).delta) == 1
    repo.store.commit({base[0].path: None, base[1].path: None, base[2].path: None}, "Forget three")
    update_indexes(repo.ctx)  # three removals > MAX_REMOVED: folded into a new main
    folder = root / read_state(root).generation
    assert main_inode() != first
    assert len(VectorReader(folder).delta) == 0 and not VectorReader(folder).removed
    for i in range(4):
        repo.add([make_record("semantic", f"Later fact {i} about seas", mention_time="2023-05-04")])
        update_indexes(repo.ctx)
    incremental = index_contents(repo)[1]
    assert len(VectorReader(root / read_state(root).generation)) == 7
    update_indexes(repo.ctx, full=True)
    full = index_contents(repo)[1]
    assert sorted(incremental) == sorted(full)
    for key in full:
        np.testing.assert_array_equal(incremental[key], full[key])
    hits = repo.search("seas", type="semantic", k=3)
    assert all("seas" in h.summary for h in hits)


def test_a_reader_is_not_blocked_by_a_writer_holding_the_lock(repo):
    first = make_record(text="an older memory about ferries")
    repo.add([first])
    update_indexes(repo.ctx)
    old_commit = repo.store.head().decode()
    repo.add([make_record(text="a newer memory about ferries", mention_time="2023-06-01")])
    messages: list[str] = []
    with repo.store.lock("index-fulltext"):  # another writer is busy with this index
        hits = repo.search("ferries", notify=messages.append)
    assert first.id in [h.id for h in hits]
    assert any(m == f"index fulltext: another process is updating it; reading it as of {old_commit[:12]}" for m in messages)
    assert len(repo.search("ferries")) == 2  # once the writer is done, reads catch up again


def test_forward_index_bm25_scores_as_tantivy_does(tmp_path):
    """Rerank scores candidates with BM25 over their stored words; with the same collection statistics the
    scores are Tantivy's own, for both fields and the summary's boost."""
    import tantivy

    from memrepo.index.fulltext import SOURCES, analyzer, bm25, open_index

    docs = {
        "a": ("Trip to Lisbon", "Mia rode a red bike across Lisbon and bought a red scarf"),
        "b": ("Groceries", "Jonas bought bread, cheese and a red apple at the market"),
        "c": ("Bikes", "The bike shop near the station repairs every bike in town"),
        "d": ("Weather", "It rained all day in Porto, nobody went out"),
    }
    index = open_index(tmp_path, create=True)
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for doc_id, (summary, text) in docs.items():
        writer.add_document(tantivy.Document(id=doc_id, summary=summary, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    (tmp_path / SOURCES).mkdir()
    open_index(tmp_path / SOURCES, create=True)  # the generation's (here empty) index of source parts
    reader = FullTextReader(tmp_path)
    words = {i: (list(analyzer().analyze(s)), list(analyzer().analyze(t))) for i, (s, t) in docs.items()}
    avg = {"summary": sum(len(s) for s, _ in words.values()) / len(words),
           "text": sum(len(t) for _, t in words.values()) / len(words)}
    for question in ["red bike in Lisbon", "bought", "bike shop", "snow in Oslo"]:
        expected = {}
        for score, address in reader.searcher.search(reader.parse(question), limit=10).hits:
            expected[reader.searcher.doc(address).get_first("id")] = score
        got = bm25(list(analyzer().analyze(question)), words, reader.idf, avg)
        assert got.keys() == expected.keys(), question
        for doc_id, score in expected.items():
            assert got[doc_id] == pytest.approx(score, rel=1e-4), (question, doc_id)


def test_a_catch_up_parses_each_changed_file_once_for_all_the_indexes(repo, no_after_write, monkeypatch):
    """Full text, vectors and provenance all read the records a pull brought: each is parsed once, not per index."""
    import memrepo.read  # noqa: F401  (registers the provenance index)

    records = [make_record("episodic", f"Mia bought {n} red lanterns at Harbor Market") for n in range(1, 13)]
    repo.add(records)
    parsed: list[str] = []
    real = rec.parse
    monkeypatch.setattr(rec, "parse", lambda data, path: parsed.append(path) or real(data, path))
    update_indexes(repo.ctx)
    assert sorted(parsed) == sorted(r.path for r in records)
    assert {d["id"] for d in FullTextReader(Indexes(repo.store, repo.settings).folder("fulltext")).all_docs()} >= {
        r.id for r in records}


def test_provenance_index_incremental_equals_full_rebuild(repo):
    """The provenance index (cited parts, each record's words, the word totals) after a history of adds,
    an edit and a deletion is the one a full rebuild makes."""
    import memrepo.read  # noqa: F401  (registers the provenance index)
    import sqlite3

    def dump() -> dict[str, list[tuple]]:
        folder = Indexes(repo.store, repo.settings).folder("provenance")
        db = sqlite3.connect(folder / "provenance.sqlite3")
        try:
            return {t: sorted(db.execute(f"SELECT * FROM {t}")) for t in ("parts", "cites", "records", "totals")}
        finally:
            db.close()

    build_history(repo)
    extra = make_record("episodic", "Jonas repaired the red bike at the station", sources=["src-2023-05-02-aaaa1111#D1:2"])
    repo.add([extra])
    update_indexes(repo.ctx)
    edited = replace(extra, text="Jonas repaired the blue bike at the station after work")
    repo.store.commit({edited.path: rec.serialize(edited)}, "Edit a record by hand")
    update_indexes(repo.ctx)
    incremental = dump()
    update_indexes(repo.ctx, full=True)
    assert incremental == dump()
    records = {r[0]: r for r in incremental["records"]}
    assert records[extra.id][2].startswith("jonas repaired the blue bike")
    assert "blue" in records[extra.id][4].split() and "red" not in records[extra.id][4].split()
    from memrepo.index.fulltext import vector_key

    assert records[extra.id][5] == vector_key(extra.path)  # the key rerank reads the record's vector by
    totals = dict((name, value) for name, value in incremental["totals"])
    assert totals["records"] == len(records) == 3  # the episodic ones and the procedural one (the graph read's types)
    assert totals["text"] == sum(len(r[4].split()) for r in records.values())
    assert records[extra.id][6] == "src-2023-05-02-aaaa1111\t1"  # the cited part's position, kept in the row
    # A part inserted into the source by hand renumbers the part the record cites: its row follows.
    (source,) = [s for s in repo.sources() if s.id == "src-2023-05-02-aaaa1111"]
    inserted = replace(source, parts=(source.parts[0], rec.SourcePart("D1:1b", "Which one?", {"speaker": "Jonas"}),
                                      *source.parts[1:]))
    repo.store.commit({rec.source_path(source.id): rec.serialize_source(inserted)}, "Insert a turn by hand")
    update_indexes(repo.ctx)
    renumbered = dump()
    update_indexes(repo.ctx, full=True)
    assert renumbered == dump()
    assert {r[0]: r for r in renumbered["records"]}[extra.id][6] == "src-2023-05-02-aaaa1111\t2"


def test_vector_search_returns_the_exact_nearest_records_however_the_index_was_built(tmp_path):
    """Search results must not depend on insertion order or threads (HNSW is approximate):
    a rebuilt index has to find what the incremental one found (seen on CI)."""
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    main = vectors_module.usearch_index(384, vectors_module.RECORD_DTYPE)
    for key in rng.permutation(len(vectors)):  # one at a time, in random order, as commits add them
        main.add(np.array([key], dtype=np.uint64), vectors[key:key + 1], threads=1)
    main.save(str(tmp_path / vectors_module.MAIN_FILE))
    vectors_module._write_delta(tmp_path, vectors_module.usearch_index(384, vectors_module.RECORD_DTYPE), set())
    reader = VectorReader(tmp_path)
    for query in rng.normal(size=(100, 384)).astype(np.float32):
        query /= np.linalg.norm(query)
        cosines = vectors @ query
        kth = np.sort(cosines)[-15]
        clear = {int(k) for k in np.flatnonzero(cosines > kth + 2e-3)}  # beyond f16 rounding of the 15th
        found = [key for key, _ in reader.search(query, 15)]
        assert clear <= set(found), f"missed {sorted(clear - set(found))}"


def test_a_commit_naming_new_anchors_writes_them_not_every_name_and_reads_like_a_rebuild(tmp_path, repo, monkeypatch):
    """The anchor-name index keeps its main files between commits (hard links) and writes the new names
    to a delta; loaded for search (memory-mapped) or in memory, it answers as a full rebuild does,
    and a delta past its size limit is folded into new main files."""
    from memrepo.index.base import open_embedding_cache

    monkeypatch.setattr(vectors_module, "NAMES_FOLD_MIN", 4)
    monkeypatch.setattr(vectors_module, "NAMES_FOLD_FRACTION", 0.0)
    cache = open_embedding_cache(repo.store)
    embedder = get_embedder(EmbeddingSettings())
    first = [(f"urn:memrepo:anchor:{i}", name) for i, name in
             enumerate(["Tokyo Station", "Mia", "blue Brompton bike", "Harbor Market", "Lena", "Hamburg"])]
    base = AnchorVectors(embedder, cache)
    base.add_many(first)
    base.save(tmp_path / "g1")
    batches = [[("urn:memrepo:anchor:1", "mia"), ("urn:memrepo:anchor:10", "Osaka Castle")],  # anchor 1 keeps "Mia"
               [("urn:memrepo:anchor:11", "red kite"), ("urn:memrepo:anchor:12", "Jonas")],
               [("urn:memrepo:anchor:13", "Pixel"), ("urn:memrepo:anchor:14", "Cedar Harbor")]]
    previous = tmp_path / "g1"
    for n, batch in enumerate(batches, 2):
        folder = tmp_path / f"g{n}"
        folder.mkdir()
        vectors_module.add_to_generation(previous, folder, embedder, cache, batch)
        previous = folder
    g2, g3 = tmp_path / "g2", tmp_path / "g3"
    # Two commits wrote only their delta: the main index is the first generation's file.
    assert (g2 / AnchorVectors.INDEX_FILE).stat().st_ino == (tmp_path / "g1" / AnchorVectors.INDEX_FILE).stat().st_ino
    assert (g3 / AnchorVectors.INDEX_FILE).stat().st_ino == (tmp_path / "g1" / AnchorVectors.INDEX_FILE).stat().st_ino
    assert json.loads((g3 / AnchorVectors.DELTA_NAMES_FILE).read_text())["names"] == {
        "urn:memrepo:anchor:10": "Osaka Castle", "urn:memrepo:anchor:11": "red kite", "urn:memrepo:anchor:12": "Jonas"}
    # The third went past the limit (4 names): one new main, no delta.
    g4 = tmp_path / "g4"
    assert not (g4 / AnchorVectors.DELTA_NAMES_FILE).exists()
    assert (g4 / AnchorVectors.INDEX_FILE).stat().st_ino != (tmp_path / "g1" / AnchorVectors.INDEX_FILE).stat().st_ino

    rebuilt = AnchorVectors(embedder, cache)
    rebuilt.add_many(first + [a for batch in batches for a in batch if a[0] != "urn:memrepo:anchor:1"])
    for folder in (g3, g4):
        for view in (False, True):
            loaded = AnchorVectors.load(folder, embedder, cache, view=view)
            expected = 9 if folder == g3 else 11
            assert len(loaded) == expected and loaded.name("urn:memrepo:anchor:1") == "Mia"
            for query in ("Osaka Castle", "Mia", "Jonas", "red kite", "Hamburg"):
                found = loaded.search(query, k=3)
                want = [hit for hit in rebuilt.search(query, k=12) if hit[0] in loaded][:3]
                assert [a for a, _ in found] == [a for a, _ in want], (folder.name, view, query)
    cache.close()


@pytest.mark.parametrize("compact", [False, True])
def test_a_record_removed_and_written_again_has_its_new_vector_only(repo, no_after_write, monkeypatch, compact):
    """A commit that only adds files does not read the main vector file; a path removed and written
    again (its old vector in main, or only in the delta) still ends with its new vector alone."""
    if compact:  # fold the delta into main on every commit: the removed vector is then in main
        monkeypatch.setattr(vectors_module, "COMPACT_MIN", 0)
        monkeypatch.setattr(vectors_module, "COMPACT_FRACTION", 0.0)
    a = make_record("episodic", "Mia bought a Suica card at Tokyo Station")
    b = make_record("semantic", "Jonas lives in Lisbon and rides a red bike", mention_time="2023-05-03")
    repo.add([a, b])
    update_indexes(repo.ctx)
    repo.store.commit({b.path: None}, "Forget Jonas")
    update_indexes(repo.ctx)
    again = replace(b, text="Jonas moved to Porto and sold the red bike")
    repo.store.commit({again.path: rec.serialize(again)}, "Jonas again")
    update_indexes(repo.ctx)
    incremental = index_contents(repo)
    update_indexes(repo.ctx, full=True)
    full = index_contents(repo)
    assert sorted(incremental[1]) == sorted(full[1]) and len(full[1]) == 2
    for key in full[1]:
        np.testing.assert_array_equal(incremental[1][key], full[1][key])
