"""The bearer tokens of `memrepo serve`: a name, a scope, and only a hash of the secret.

The file is ``tokens.json`` in the user's configuration folder (``$XDG_CONFIG_HOME/memrepo/``; the
CLI resolves it), never in a memory repository, so a token can never be committed or pushed. A
token is 32 random bytes: its SHA-256 is enough to store (nothing to guess a slow hash would
protect). The running server re-reads the file when it changes, so ``token revoke`` takes effect
on the next request without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memrepo.errors import MemrepoError

TOKENS_FILE = "tokens.json"
PREFIX = "mrs_"  # memrepo serve: lets a secret scanner (and a person) tell what leaked
SCOPES = ("read", "write", "review")  # each includes the ones before it
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class TokenError(MemrepoError):
    """A token name, scope or the tokens file is not usable (the message names which)."""


@dataclass(frozen=True)
class Token:
    """A token as stored: who it is (also the Git author of its writes) and what it may do."""

    name: str
    scope: str
    created: str
    namespaces: tuple[str, ...] = ()  # the served repositories it may use; empty: all

    def allows(self, namespace: str) -> bool:
        return not self.namespaces or namespace in self.namespaces

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "scope": self.scope, "created": self.created, "namespaces": list(self.namespaces)}


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens file of one configuration folder.

    Args:
        config_dir: the folder holding ``tokens.json`` (created, mode 700, on the first ``add``).
    """

    def __init__(self, config_dir: str | os.PathLike):
        self.path = Path(config_dir) / TOKENS_FILE
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, Token] = {}

    # --- managing ------------------------------------------------------------------

    def add(self, name: str, scope: str, namespaces: tuple[str, ...] = ()) -> str:
        """Create token ``name`` with ``scope``; the secret, which is not stored and cannot be shown again.

        Raises:
            TokenError: a name that is not 1-64 letters, digits, ``.``, ``_`` or ``-``; an unknown scope; a
                name already in use (revoke it first).
        """
        if not NAME_RE.match(name):
            raise TokenError(f"token name {name!r}: use 1-64 letters, digits, '.', '_' or '-' (it becomes the Git "
                             "author of the token's writes)")
        if scope not in SCOPES:
            raise TokenError(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
        for ns in namespaces:
            if not NAME_RE.match(ns):
                raise TokenError(f"namespace {ns!r}: use 1-64 letters, digits, '.', '_' or '-'")
        entries = self._read()
        if any(e["name"] == name for e in entries):
            raise TokenError(f"a token named {name!r} exists in {self.path}; revoke it first "
                             f"(memrepo serve token revoke {name})")
        secret = PREFIX + secrets.token_urlsafe(32)
        created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        entries.append({"name": name, "scope": scope, "created": created, "namespaces": sorted(namespaces),
                        "sha256": _digest(secret)})
        self._write(entries)
        return secret

    def tokens(self) -> list[Token]:
        """Every token, by name (never a secret or its hash)."""
        return sorted((self._token(e) for e in self._read()), key=lambda t: t.name)

    def revoke(self, name: str) -> None:
        """Remove token ``name``; a server using this file refuses it from its next request.

        Raises:
            TokenError: no token has that name.
        """
        entries = self._read()
        kept = [e for e in entries if e["name"] != name]
        if len(kept) == len(entries):
            raise TokenError(f"no token named {name!r} in {self.path}")
        self._write(kept)

    # --- checking ------------------------------------------------------------------

    def verify(self, secret: str) -> Token | None:
        """The token whose secret this is, or None (a wrong, revoked or malformed one alike)."""
        self._refresh()
        digest = _digest(secret)
        for known, token in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                return token
        return None

    def any(self) -> bool:
        """Whether at least one token is defined."""
        self._refresh()
        return bool(self._by_digest)

    def _refresh(self) -> None:
        """Re-read the file when its modification time or size changed (a revoke by another process)."""
        try:
            st = self.path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp or stamp is None:
            self._by_digest = {e["sha256"]: self._token(e) for e in self._read()}
            self._stamp = stamp

    # --- the file ------------------------------------------------------------------

    def _token(self, entry: dict[str, Any]) -> Token:
        return Token(entry["name"], entry["scope"], entry.get("created", ""), tuple(entry.get("namespaces") or ()))

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TokenError(f"{self.path}: not a readable tokens file ({exc}); fix or remove it") from exc
        entries = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(
                isinstance(e, dict) and isinstance(e.get("name"), str) and e.get("scope") in SCOPES
                and isinstance(e.get("sha256"), str) for e in entries):
            raise TokenError(f"{self.path}: expected {{\"tokens\": [{{name, scope, sha256}}, ...]}}; fix or remove it")
        return entries

    def _write(self, entries: list[dict[str, Any]]) -> None:
        """Replace the file in one step (a reader sees the old list or the new one), readable by its owner only."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"tokens": sorted(entries, key=lambda e: e["name"])}, indent=2, sort_keys=True) + "\n"
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
