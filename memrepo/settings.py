"""Settings of a memory repository: `memrepo.toml` plus what the caller passes in.

Only the edges (the CLI and the viewer) read environment variables; they hand the
mapping to :func:`load_settings`, so library code never peeks at ``os.environ``.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

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
    model: str = "all-minilm-l6-v2-int8-dq"
    base_url: str | None = None
    api_key: str | None = None
    model_cache: str | None = None  # folder of the offline model's one-time rewrite (None: ~/.cache/memrepo/models)


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


class SettingsError(RepositoryError):
    """``memrepo.toml`` (or an environment variable) holds a value memrepo cannot use.

    The message has one line per problem, each naming the file, the key and what was expected.
    """


@dataclass(frozen=True)
class _Field:
    expected: str  # completes "expected ..."
    valid: Callable[[object], bool]


def _is_whole(value: object, minimum: int, maximum: int | None = None) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= minimum
            and (maximum is None or value <= maximum))


def _is_url(value: object) -> bool:
    return isinstance(value, str) and (not value.strip() or value.startswith(("http://", "https://")))


_URL = _Field("an http:// or https:// URL (or \"\" for none)", _is_url)
_TEXT = _Field("a string", lambda v: isinstance(v, str))
# Every setting memrepo.toml may hold, by section: what is not here is a typo or a setting of another tool.
FIELDS: dict[str, dict[str, _Field]] = {
    "memrepo": {
        "namespace": _Field("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip())),
        "format": _Field(f"a whole number from 1 to {FORMAT_VERSION} (the newest format this memrepo reads)",
                         lambda v: _is_whole(v, 1, FORMAT_VERSION)),
    },
    "llm": {
        "base_url": _URL,
        "model": _TEXT,
        "timeout": _Field("a number of seconds above 0", lambda v: isinstance(v, (int, float))
                          and not isinstance(v, bool) and 0 < v < math.inf),
        "max_retries": _Field("a whole number, 0 or more", lambda v: _is_whole(v, 0)),
        "max_tokens": _Field("a whole number, 1 or more", lambda v: _is_whole(v, 1)),
    },
    "embedding": {"model": _TEXT, "base_url": _URL},
}
# Keys refused with a reason of their own: memrepo.toml is committed and shared with every clone.
_SECRETS = {"api_key": "OPENAI_API_KEY", "vault_key": "MEMREPO_VAULT_KEY or MEMREPO_VAULT_KEY_FILE"}


# Dotted keys of memrepo.toml that decide where data goes: the endpoints and keys the models are reached
# with, and the folder the offline model's rewrite is written to. A committed file never sets them for a clone
# on its own (DESIGN.md section 9); the user's environment, user config or local approval does.
ENDPOINT_KEYS = ("llm.base_url", "llm.api_key", "embedding.base_url", "embedding.api_key",
                 "embedding.model_cache")
# A key of any section whose last part says it names a place or a credential is counted too, so a setting
# added later (or a typo the hook has not been told about) is refused rather than followed.
# (The last word of the key: ``max_tokens`` is a budget, ``api_token`` a credential.)
_PLACE_WORDS = re.compile(r"(ur[li]s?|(^|_)(hosts?|endpoints?|proxy|server|port|socket|key|keyfile|token|secret"
                          r"|password|cache|dirs?|directory|folders?|paths?|file))$", re.IGNORECASE)
# A string value that is a URL (any scheme) or a path outside the repository, whatever its key is called.
_PLACE_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*://|/|~|\\\\|[A-Za-z]:[\\/]|\.\.[\\/])")


def _place_keys(value: object, dotted: str) -> list[str]:
    if isinstance(value, dict):
        return [key for name, inner in value.items() for key in _place_keys(inner, f"{dotted}.{name}" if dotted
                                                                             else str(name))]
    if isinstance(value, list):
        return [dotted] if any(_place_keys(item, dotted) for item in value) else []
    if isinstance(value, str) and not value.strip():
        return []  # "" is "none" (the shipped template's base_url = ""): it sends nothing anywhere
    last = dotted.rsplit(".", 1)[-1]
    if (dotted in ENDPOINT_KEYS or _PLACE_WORDS.search(last.replace("-", "_"))
            or (isinstance(value, str) and _PLACE_VALUE.match(value))):
        return [dotted]
    return []


def network_keys(text: str) -> list[str]:
    """The dotted keys of a ``memrepo.toml`` text that decide where data goes, sorted, each once.

    Those are the model and embedding endpoints and keys (``llm.base_url``, ``embedding.api_key``, ...), the
    model cache folder, any key whose name says it is a URL, host, port, proxy, key, token, folder or path,
    and any key whose value is a URL or a path that leaves the repository; a key set to ``""`` (none) is not
    counted. The pre-receive hook refuses a pushed file that names one; a clone ignores them until its user
    approves them (see :func:`load_settings`).

    Args:
        text: the file's text, as committed.

    Returns:
        The keys, e.g. ``["embedding.base_url", "llm.base_url"]``; empty when the file sets none.

    Raises:
        SettingsError: the text is not valid TOML.
    """
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{CONFIG_FILE}: not valid TOML: {exc}") from exc
    return sorted(set(_place_keys(config, "")))


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


def _bare(key: str) -> str:
    """A TOML key as written bare, or quoted when it holds anything else (a newline must not start a line)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def config_problems(config: Mapping[str, object]) -> list[str]:
    """Every problem of the parsed ``memrepo.toml``, one ``[section] key: ...`` line each (empty if none)."""
    problems: list[str] = []
    known_sections = ", ".join(f"[{name}]" for name in FIELDS)
    for section_key, table in config.items():
        fields = FIELDS.get(section_key)
        section = _bare(section_key)
        if fields is None:
            where = f"[{section}]" if isinstance(table, dict) else section
            problems.append(f"{where}: unknown {'section' if isinstance(table, dict) else 'setting'} "
                            f"(memrepo.toml has {known_sections})")
            continue
        if not isinstance(table, dict):
            problems.append(f"{section}: expected a table [{section}], got {_describe(table)}")
            continue
        for name, value in table.items():
            field_, key = fields.get(name), _bare(name)
            if key in _SECRETS:
                problems.append(f"[{section}] {key}: not read from memrepo.toml, which is committed and shared; "
                                f"set {_SECRETS[key]} in the environment")
            elif field_ is None:
                problems.append(f"[{section}] {key}: unknown setting ([{section}] has {', '.join(fields)})")
            elif not field_.valid(value):
                problems.append(f"[{section}] {key}: expected {field_.expected}, got {_describe(value)}")
    return problems


def _table(config: Mapping[str, object], name: str) -> dict[str, Any]:
    table = config.get(name)
    return dict(table) if isinstance(table, dict) else {}


def config_from_text(text: str, source: str) -> dict:
    """Parse and check the text of ``memrepo.toml``; ``source`` names it in errors.

    Raises:
        SettingsError: the text is not TOML, or a setting is unknown or of the wrong type (all listed at once).
    """
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{source}: not valid TOML: {exc}") from exc
    problems = config_problems(config)
    if problems:
        raise SettingsError("\n".join(f"{source}: {p}" for p in problems))
    return config


def read_config(root: Path) -> dict:
    """Parse and check ``memrepo.toml`` at the repository root (an empty dict if it is absent).

    Raises:
        SettingsError: the file is not UTF-8 TOML, or holds a setting memrepo cannot use.
    """
    path = root / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc
    return config_from_text(text, str(path))


def parse_config(config: Mapping[str, object]) -> Settings:
    """Build settings from the parsed contents of ``memrepo.toml``.

    Raises:
        SettingsError: a setting is unknown or of the wrong type.
    """
    problems = config_problems(config)
    if problems:
        raise SettingsError("\n".join(f"{CONFIG_FILE}: {p}" for p in problems))
    repo, llm, emb = (_table(config, name) for name in ("memrepo", "llm", "embedding"))
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
    ``MEMREPO_EMBEDDING_MODEL``, ``MEMREPO_EMBEDDING_BASE_URL``, ``XDG_CACHE_HOME`` (where the offline
    model's rewrite is kept), and the vault key from ``MEMREPO_VAULT_KEY`` or the file named by
    ``MEMREPO_VAULT_KEY_FILE``.
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
        model_cache=(str(Path(environ["XDG_CACHE_HOME"]) / "memrepo" / "models") if environ.get("XDG_CACHE_HOME")
                     else settings.embedding.model_cache),
    )
    for name in ("OPENAI_BASE_URL", "MEMREPO_EMBEDDING_BASE_URL"):
        if environ.get(name) and not _is_url(environ[name]):
            raise SettingsError(f"{name}: expected an http:// or https:// URL, got {environ[name]!r}")
    key = settings.vault_key
    if environ.get("MEMREPO_VAULT_KEY"):
        key = environ["MEMREPO_VAULT_KEY"].strip().encode()
    elif environ.get("MEMREPO_VAULT_KEY_FILE"):
        key_path = Path(environ["MEMREPO_VAULT_KEY_FILE"]).expanduser()
        try:
            key = key_path.read_bytes().strip()
        except OSError as exc:
            raise SettingsError(f"MEMREPO_VAULT_KEY_FILE: cannot read {key_path}: {exc.strerror}") from exc
    return replace(settings, llm=llm, embedding=emb, vault_key=key)


def load_settings(root: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings of the repository at ``root``; ``environ`` (if given) overrides the file."""
    settings = parse_config(read_config(root))
    if environ is not None:
        settings = apply_environment(settings, environ)
    return settings
