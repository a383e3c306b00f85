"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (hosted, vLLM, Ollama, llama.cpp server).

openai is imported in ``llm/`` only (docs/architecture.md), so the endpoint's embedder lives here;
:mod:`memrepo.index.embed` chooses between it and the offline model and caches the vectors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memrepo.errors import MemrepoError
from memrepo.settings import EmbeddingSettings

if TYPE_CHECKING:
    import numpy as np


class EmbeddingError(MemrepoError):
    """The embedder could not be loaded or the embedding endpoint failed."""


def normalize(vectors: "np.ndarray") -> "np.ndarray":
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


def endpoint_model_id(settings: EmbeddingSettings) -> str:
    """The model id of an endpoint's vectors: the model named with the endpoint, so the same name
    served elsewhere is not mistaken for it."""
    return f"{settings.model}@{(settings.base_url or '').rstrip('/')}"


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint (hosted, vLLM, Ollama, llama.cpp server)."""

    def __init__(self, settings: EmbeddingSettings, timeout: float = 60.0):
        from openai import OpenAI

        self.model_id = endpoint_model_id(settings)
        self._base_url = settings.base_url
        self._model = settings.model
        self._client = OpenAI(base_url=settings.base_url, api_key=settings.api_key or "none", timeout=timeout, max_retries=2)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> "np.ndarray":
        import numpy as np
        import openai

        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), 256):
            batch = [t if t.strip() else " " for t in texts[start : start + 256]]
            try:
                reply = self._client.embeddings.create(model=self._model, input=batch)
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"embedding endpoint {self._base_url}: {exc}") from exc
            data = sorted(reply.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbeddingError(
                    f"embedding endpoint {self._base_url}: asked for {len(batch)} vectors, got {len(data)}"
                )
            rows.extend(list(d.embedding) for d in data)
        vectors = normalize(np.array(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(f"embedding endpoint {self._base_url}: vectors changed dimension ({vectors.shape[1]} != {self._dim})")
        return vectors
