"""Settings of a memory repository: `memrepo.toml`, the user's own config, and the environment.

Only the edges (the CLI, the viewer, the MCP server) read environment variables; they hand the
mapping to :func:`load_settings`, so library code never peeks at ``os.environ``. The user config's
path comes from that mapping too (``$XDG_CONFIG_HOME/memrepo/config.toml``).

``memrepo.toml`` is committed: a teammate can change it in any push. So the keys that decide where
data goes (:data:`ENDPOINT_KEYS`: the model endpoints, their keys, the model cache folder) are taken
from it only once this clone's user has approved those very values (``memrepo settings approve``);
until then they are ignored and :attr:`Settings.ignored` says so (DESIGN.md section 9).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
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
    # Where each value came from (dotted key -> "environment OPENAI_BASE_URL", a file's path, "default"),
    # the committed endpoints this clone ignores, and the user config read (see resolve_settings).
    sources: Mapping[str, str] = field(default_factory=dict)
    ignored: tuple["IgnoredSetting", ...] = ()
    user_config: str | None = None

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


def config_problems(config: Mapping[str, object], *, fields: Mapping[str, Mapping[str, _Field]] | None = None,
                    name: str = CONFIG_FILE) -> list[str]:
    """Every problem of the parsed ``memrepo.toml``, one ``[section] key: ...`` line each (empty if none).

    Args:
        config: the parsed file.
        fields: the settings the file may hold (default :data:`FIELDS`; the user config has :data:`USER_FIELDS`).
        name: the file's name in the messages.
    """
    fields = FIELDS if fields is None else fields
    committed = fields is FIELDS
    problems: list[str] = []
    known_sections = ", ".join(f"[{section}]" for section in fields)
    for section_key, table in config.items():
        section_fields = fields.get(section_key)
        section = _bare(section_key)
        if section_fields is None:
            where = f"[{section}]" if isinstance(table, dict) else section
            problems.append(f"{where}: unknown {'section' if isinstance(table, dict) else 'setting'} "
                            f"({name} has {known_sections})")
            continue
        if not isinstance(table, dict):
            problems.append(f"{section}: expected a table [{section}], got {_describe(table)}")
            continue
        for key_name, value in table.items():
            field_, key = section_fields.get(key_name), _bare(key_name)
            if committed and key in _SECRETS:
                problems.append(f"[{section}] {key}: not read from memrepo.toml, which is committed and shared; "
                                f"set {_SECRETS[key]} in the environment")
            elif field_ is None:
                problems.append(f"[{section}] {key}: unknown setting ([{section}] has {', '.join(section_fields)})")
            elif not field_.valid(value):
                problems.append(f"[{section}] {key}: expected {field_.expected}, got {_describe(value)}")
    return problems


def _table(config: Mapping[str, object], name: str) -> dict[str, Any]:
    table = config.get(name)
    return dict(table) if isinstance(table, dict) else {}


def config_from_text(text: str, source: str, *, fields: Mapping[str, Mapping[str, _Field]] | None = None) -> dict:
    """Parse and check the text of ``memrepo.toml`` (or, with ``fields``, of the user config); ``source``
    names it in errors.

    Raises:
        SettingsError: the text is not TOML, or a setting is unknown or of the wrong type (all listed at once).
    """
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{source}: not valid TOML: {exc}") from exc
    problems = config_problems(config, fields=fields, name=Path(source).name)
    if problems:
        raise SettingsError("\n".join(f"{source}: {p}" for p in problems))
    return config


def _read_text(path: Path, *, link_ok: bool) -> str | None:
    """The UTF-8 text of the settings file ``path``, None if absent.

    Raises:
        SettingsError: not UTF-8, not a file, or (unless ``link_ok``) a symbolic link: ``memrepo.toml`` is
            read only from inside the repository, never through a link a teammate committed.
    """
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode) and not link_ok:
        raise SettingsError(f"{path}: {path.name} is a symbolic link (to {os.readlink(path)}); memrepo reads its "
                            f"settings only from a file inside the repository: replace the link with the file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read it: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc


def read_config(root: Path) -> dict:
    """Parse and check ``memrepo.toml`` at the repository root (an empty dict if it is absent).

    Raises:
        SettingsError: the file is a symbolic link, is not UTF-8 TOML, or holds a setting memrepo cannot use.
    """
    path = root / CONFIG_FILE
    text = _read_text(path, link_ok=False)
    return {} if text is None else config_from_text(text, str(path))


def parse_config(config: Mapping[str, object]) -> Settings:
    """Build settings from the parsed contents of ``memrepo.toml``, every key as written (nothing is ignored:
    :func:`load_settings` is what keeps a committed file from choosing where data goes).

    Raises:
        SettingsError: a setting is unknown or of the wrong type.
    """
    problems = config_problems(config)
    if problems:
        raise SettingsError("\n".join(f"{CONFIG_FILE}: {p}" for p in problems))
    values = {key: value for key, value in _flatten(config).items() if value != ""}
    return replace(_build(values), raw=config)


# --- where each value comes from -----------------------------------------------------------------------------

USER_CONFIG = "config.toml"  # under $XDG_CONFIG_HOME/memrepo (default ~/.config/memrepo)
APPROVALS_FILE = "approved-settings.json"  # under <gitdir>/memrepo: this clone's approvals, never tracked
# The user's own file may hold what decides where data goes, the keys included (it is never committed).
USER_FIELDS: dict[str, dict[str, _Field]] = {
    "llm": {**FIELDS["llm"], "api_key": _TEXT},
    "embedding": {**FIELDS["embedding"], "api_key": _TEXT, "model_cache": _TEXT},
}
ENVIRONMENT = {  # dotted key -> the variable that overrides it
    "llm.base_url": "OPENAI_BASE_URL",
    "llm.api_key": "OPENAI_API_KEY",
    "llm.model": "MEMREPO_LLM_MODEL",
    "embedding.model": "MEMREPO_EMBEDDING_MODEL",
    "embedding.base_url": "MEMREPO_EMBEDDING_BASE_URL",
    "embedding.api_key": "OPENAI_API_KEY",
    "embedding.model_cache": "XDG_CACHE_HOME",  # as $XDG_CACHE_HOME/memrepo/models
}
DEFAULTS: dict[str, object] = {
    "memrepo.namespace": "default", "memrepo.format": FORMAT_VERSION,
    "llm.base_url": None, "llm.api_key": None, "llm.model": None, "llm.timeout": 60.0, "llm.max_retries": 3,
    "llm.max_tokens": 2048,
    "embedding.model": EmbeddingSettings.model, "embedding.base_url": None, "embedding.api_key": None,
    "embedding.model_cache": None,
}
SECRET_KEYS = ("llm.api_key", "embedding.api_key")  # shown as "(set)", never their value


@dataclass(frozen=True)
class IgnoredSetting:
    """A key of the committed ``memrepo.toml`` that decides where data goes, not used by this clone."""

    file: str
    key: str  # dotted: llm.base_url
    value: object
    changed: bool  # it was approved in this clone with another value

    def message(self) -> str:
        section, _, name = self.key.partition(".")
        why = ("its value changed since it was approved in this clone" if self.changed
               else "not approved in this clone")
        return (f"{self.file}: [{section}] {name} = {json.dumps(self.value)} ignored ({why}; a committed file does "
                f"not choose where this clone sends data): set {ENVIRONMENT[self.key]} or your user config, or "
                "check the value and run `memrepo settings approve`")

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "key": self.key, "value": self.value,
                "reason": "changed since approved" if self.changed else "not approved"}


def user_config_path(environ: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/memrepo/config.toml``, or ``$HOME/.config/memrepo/config.toml``; None without either."""
    if environ.get("XDG_CONFIG_HOME"):
        return Path(environ["XDG_CONFIG_HOME"]) / "memrepo" / USER_CONFIG
    if environ.get("HOME"):
        return Path(environ["HOME"]) / ".config" / "memrepo" / USER_CONFIG
    return None


def read_user_config(path: Path | None) -> dict:
    """Parse and check the user config at ``path`` (an empty dict if it is absent or ``path`` is None).

    Raises:
        SettingsError: the file is not UTF-8 TOML, or holds a setting memrepo cannot use.
    """
    text = _read_text(path, link_ok=True) if path is not None else None
    return {} if text is None else config_from_text(text, str(path), fields=USER_FIELDS)


def _flatten(config: Mapping[str, object]) -> dict[str, object]:
    return {f"{section}.{name}": value for section, table in config.items() if isinstance(table, dict)
            for name, value in table.items()}


def _digest(key: str, value: object) -> str:
    return "sha256:" + hashlib.sha256(f"{key}\0{json.dumps(value, sort_keys=True)}".encode()).hexdigest()


def read_approvals(state_dir: Path | None) -> dict[str, str]:
    """dotted key -> digest of the value this clone's user approved (empty if none or unreadable)."""
    if state_dir is None:
        return {}
    path = state_dir / APPROVALS_FILE
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    approved = data.get("approved") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in approved.items()} if isinstance(approved, dict) else {}


def approve_settings(root: Path, state_dir: Path) -> list[tuple[str, object]]:
    """Approve, in this clone, the values ``memrepo.toml`` gives now to the keys that decide where data goes.

    The digests of the values are written to ``<state_dir>/approved-settings.json`` (never tracked), replacing
    earlier approvals: a key whose value changes later is ignored again until approved again.

    Returns:
        The (dotted key, value) pairs approved, sorted; empty when the file names no endpoint.

    Raises:
        SettingsError: ``memrepo.toml`` cannot be read or holds a setting memrepo cannot use.
    """
    flat = _flatten(read_config(root))
    approved = sorted((key, value) for key, value in flat.items() if key in ENDPOINT_KEYS and value != "")
    state_dir.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"approved": {key: _digest(key, value) for key, value in approved}, "format": 1},
                      sort_keys=True, indent=2) + "\n"
    tmp = state_dir / f".{APPROVALS_FILE}.{os.getpid()}.tmp"
    tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, state_dir / APPROVALS_FILE)
    return approved


def _environment_values(environ: Mapping[str, str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for key, name in ENVIRONMENT.items():
        raw = environ.get(name)
        if not raw:
            continue
        if key.endswith(".base_url") and not _is_url(raw):
            raise SettingsError(f"{name}: expected an http:// or https:// URL, got {raw!r}")
        values[key] = str(Path(raw) / "memrepo" / "models") if key == "embedding.model_cache" else raw
    return values


def _vault_key(environ: Mapping[str, str], default: bytes | None) -> bytes | None:
    if environ.get("MEMREPO_VAULT_KEY"):
        return environ["MEMREPO_VAULT_KEY"].strip().encode()
    if environ.get("MEMREPO_VAULT_KEY_FILE"):
        key_path = Path(environ["MEMREPO_VAULT_KEY_FILE"]).expanduser()
        try:
            return key_path.read_bytes().strip()
        except OSError as exc:
            raise SettingsError(f"MEMREPO_VAULT_KEY_FILE: cannot read {key_path}: {exc.strerror}") from exc
    return default


def _build(values: Mapping[str, object]) -> Settings:
    """Settings from dotted keys (absent ones take :data:`DEFAULTS`)."""
    v = {**DEFAULTS, **values}
    return Settings(
        namespace=str(v["memrepo.namespace"]),
        format=int(v["memrepo.format"]),  # type: ignore[call-overload]
        llm=LLMSettings(
            base_url=_text_or_none(v["llm.base_url"]), api_key=_text_or_none(v["llm.api_key"]),
            model=_text_or_none(v["llm.model"]), timeout=float(v["llm.timeout"]),  # type: ignore[arg-type]
            max_retries=int(v["llm.max_retries"]), max_tokens=int(v["llm.max_tokens"]),  # type: ignore[call-overload]
        ),
        embedding=EmbeddingSettings(
            model=str(v["embedding.model"] or EmbeddingSettings.model), base_url=_text_or_none(v["embedding.base_url"]),
            api_key=_text_or_none(v["embedding.api_key"]), model_cache=_text_or_none(v["embedding.model_cache"]),
        ),
    )


def _text_or_none(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def apply_environment(settings: Settings, environ: Mapping[str, str]) -> Settings:
    """Overlay the documented environment variables on ``settings``.

    ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``MEMREPO_LLM_MODEL``,
    ``MEMREPO_EMBEDDING_MODEL``, ``MEMREPO_EMBEDDING_BASE_URL``, ``XDG_CACHE_HOME`` (where the offline
    model's rewrite is kept), and the vault key from ``MEMREPO_VAULT_KEY`` or the file named by
    ``MEMREPO_VAULT_KEY_FILE``.
    """
    env = _environment_values(environ)
    llm = replace(settings.llm, base_url=env.get("llm.base_url", settings.llm.base_url),
                  api_key=env.get("llm.api_key", settings.llm.api_key), model=env.get("llm.model", settings.llm.model))
    emb = replace(settings.embedding, model=env.get("embedding.model", settings.embedding.model),
                  base_url=env.get("embedding.base_url", settings.embedding.base_url),
                  api_key=env.get("embedding.api_key", settings.embedding.api_key),
                  model_cache=env.get("embedding.model_cache", settings.embedding.model_cache))
    return replace(settings, llm=llm, embedding=emb, vault_key=_vault_key(environ, settings.vault_key))


def resolve_settings(text: str | None, source: str, environ: Mapping[str, str] | None = None, *,
                     state_dir: Path | None = None) -> Settings:
    """The settings one clone uses: each value from the first place that sets it.

    A key that decides where data goes (:data:`ENDPOINT_KEYS`) comes from the environment, else from
    ``memrepo.toml`` if this clone's user approved that very value (:func:`approve_settings`), else from the
    user config (:func:`user_config_path`); ``memrepo.toml``'s value is otherwise ignored and said so in
    :attr:`Settings.ignored`. Every other key: the environment, ``memrepo.toml``, the user config. A value of
    ``""`` counts as unset. :attr:`Settings.sources` says where each value came from.

    Args:
        text: the text of ``memrepo.toml`` (None: there is none).
        source: its name in messages (its path).
        environ: the environment variables (the edges pass ``os.environ``); None: neither they nor the user
            config are read.
        state_dir: the clone's ``<gitdir>/memrepo`` folder, where its approvals are kept.

    Raises:
        SettingsError: a file or variable holds a value memrepo cannot use.
    """
    repo_config = config_from_text(text, source) if text is not None else {}
    user_path = user_config_path(environ) if environ is not None else None
    user_config = read_user_config(user_path)
    env: dict[str, str] = _environment_values(environ) if environ is not None else {}
    repo = {k: v for k, v in _flatten(repo_config).items() if v != ""}
    user = {k: v for k, v in _flatten(user_config).items() if v != ""}
    if "embedding.api_key" not in user and "llm.api_key" in user:
        user["embedding.api_key"] = user["llm.api_key"]  # one key for both, as OPENAI_API_KEY is
    approvals = read_approvals(state_dir)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    ignored: list[IgnoredSetting] = []
    for key in DEFAULTS:
        in_repo = key in repo
        if in_repo and key in ENDPOINT_KEYS and approvals.get(key) != _digest(key, repo[key]):
            ignored.append(IgnoredSetting(source, key, repo[key], changed=key in approvals))
            in_repo = False
        if key in env:
            values[key], sources[key] = env[key], f"environment {ENVIRONMENT[key]}"
        elif in_repo:
            values[key] = repo[key]
            sources[key] = f"{source} (approved in this clone)" if key in ENDPOINT_KEYS else source
        elif key in user:
            values[key], sources[key] = user[key], str(user_path)
        else:
            sources[key] = "default"
    vault_key = _vault_key(environ, None) if environ is not None else None
    sources["vault_key"] = next((f"environment {n}" for n in ("MEMREPO_VAULT_KEY", "MEMREPO_VAULT_KEY_FILE")
                                 if environ and environ.get(n)), "default")
    return replace(_build(values), vault_key=vault_key, raw=repo_config, sources=sources, ignored=tuple(ignored),
                   user_config=str(user_path) if user_path is not None else None)


def load_settings(root: Path, environ: Mapping[str, str] | None = None, *, state_dir: Path | None = None
                  ) -> Settings:
    """Settings of the repository at ``root`` (see :func:`resolve_settings`).

    Args:
        root: the work tree, holding ``memrepo.toml``.
        environ: the environment variables (the edges pass ``os.environ``); None: only ``memrepo.toml``'s
            harmless keys and this clone's approved endpoints are read.
        state_dir: ``<gitdir>/memrepo``; default ``root/.git/memrepo``.
    """
    path = root / CONFIG_FILE
    return resolve_settings(_read_text(path, link_ok=False), str(path), environ,
                            state_dir=state_dir if state_dir is not None else root / ".git" / "memrepo")


def describe_settings(settings: Settings) -> dict[str, Any]:
    """What `memrepo settings show` prints: each effective value and where it came from, what was ignored.

    Keys are shown as ``(set)``, never their value.
    """
    values = _flatten({"memrepo": {"namespace": settings.namespace, "format": settings.format},
                       "llm": {name: getattr(settings.llm, name) for name in ("base_url", "api_key", "model",
                               "timeout", "max_retries", "max_tokens")},
                       "embedding": {name: getattr(settings.embedding, name) for name in ("model", "base_url",
                                     "api_key", "model_cache")}})
    values["vault_key"] = settings.vault_key
    rows = []
    for key, value in values.items():
        shown = ("(set)" if value else None) if key in SECRET_KEYS or key == "vault_key" else value
        rows.append({"key": key, "value": shown, "source": settings.sources.get(key, "given by the caller")})
    return {"settings": rows, "ignored": [item.to_dict() for item in settings.ignored],
            "user_config": settings.user_config}
