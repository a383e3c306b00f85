"""Settings of a memory repository: `memrepo.toml` plus what the caller passes in.

Only the edges (the CLI and the viewer) read environment variables; they hand the
mapping to :func:`load_settings`, so library code never peeks at ``os.environ``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from memrepo.errors import RepositoryError

CONFIG_FILE = "memrepo.toml"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    max_tokens: int = 2048  # cap on one reply's output tokens


@dataclass(frozen=True)
class EmbeddingSettings:
    model: str = "all-minilm-l6-v2-int8"
    base_url: str | None = None
    api_key: str | None = None


@dataclass(frozen=True)
class Settings:
    namespace: str = "default"
    format: int = FORMAT_VERSION
    llm: LLMSettings = field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    vault_key: bytes | None = None
    raw: Mapping[str, object] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        """True when no LLM endpoint is configured: every role uses its offline implementation."""
        return not self.llm.base_url


def read_config(root: Path) -> dict:
    """Parse ``memrepo.toml`` at the repository root (an empty dict if it is absent)."""
    path = root / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RepositoryError(f"{path}: not valid TOML: {exc}") from exc


def parse_config(config: Mapping[str, Any]) -> Settings:
    """Build settings from the parsed contents of ``memrepo.toml``."""
    repo = dict(config.get("memrepo", {}) or {})
    llm = dict(config.get("llm", {}) or {})
    emb = dict(config.get("embedding", {}) or {})
    return Settings(
        namespace=str(repo.get("namespace", "default")),
        format=int(repo.get("format", FORMAT_VERSION)),
        llm=LLMSettings(
            base_url=llm.get("base_url") or None,
            model=llm.get("model") or None,
            timeout=float(llm.get("timeout", 60.0)),
            max_retries=int(llm.get("max_retries", 3)),
            max_tokens=int(llm.get("max_tokens", 2048)),
        ),
        embedding=EmbeddingSettings(
            model=str(emb.get("model") or EmbeddingSettings.model),
            base_url=emb.get("base_url") or None,
        ),
        raw=config,
    )


def apply_environment(settings: Settings, environ: Mapping[str, str]) -> Settings:
    """Overlay the documented environment variables on ``settings``.

    ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``MEMREPO_LLM_MODEL``,
    ``MEMREPO_EMBEDDING_MODEL``, ``MEMREPO_EMBEDDING_BASE_URL``, and the vault key
    from ``MEMREPO_VAULT_KEY`` or the file named by ``MEMREPO_VAULT_KEY_FILE``.
    """
    llm = replace(
        settings.llm,
        base_url=environ.get("OPENAI_BASE_URL") or settings.llm.base_url,
        api_key=environ.get("OPENAI_API_KEY") or settings.llm.api_key,
        model=environ.get("MEMREPO_LLM_MODEL") or settings.llm.model,
    )
    emb = replace(
        settings.embedding,
        model=environ.get("MEMREPO_EMBEDDING_MODEL") or settings.embedding.model,
        base_url=environ.get("MEMREPO_EMBEDDING_BASE_URL") or settings.embedding.base_url,
        api_key=environ.get("OPENAI_API_KEY") or settings.embedding.api_key,
    )
    key = settings.vault_key
    if environ.get("MEMREPO_VAULT_KEY"):
        key = environ["MEMREPO_VAULT_KEY"].strip().encode()
    elif environ.get("MEMREPO_VAULT_KEY_FILE"):
        key_path = Path(environ["MEMREPO_VAULT_KEY_FILE"]).expanduser()
        try:
            key = key_path.read_bytes().strip()
        except OSError as exc:
            raise RepositoryError(f"MEMREPO_VAULT_KEY_FILE: cannot read {key_path}: {exc.strerror}") from exc
    return replace(settings, llm=llm, embedding=emb, vault_key=key)


def load_settings(root: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings of the repository at ``root``; ``environ`` (if given) overrides the file."""
    settings = parse_config(read_config(root))
    if environ is not None:
        settings = apply_environment(settings, environ)
    return settings
