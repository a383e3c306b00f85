"""Knowledge Vault encryption: sensitive values are encrypted before they become Git objects.

The key is a Fernet key (32 random bytes, URL-safe base64). It comes from the
caller (the CLI reads ``MEMREPO_VAULT_KEY`` or ``MEMREPO_VAULT_KEY_FILE``) and is
never written into the repository or an index.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace

from memrepo.errors import VaultKeyError
from memrepo.records import Record

CIPHER = "fernet"
KEY_HELP = (
    "set MEMREPO_VAULT_KEY to the vault key, or MEMREPO_VAULT_KEY_FILE to a file outside the "
    "repository that holds it (create one with `memrepo vault keygen`)"
)


def generate_key() -> bytes:
    from cryptography.fernet import Fernet

    return Fernet.generate_key()


def _fernet(key: bytes | None):
    from cryptography.fernet import Fernet

    if not key:
        raise VaultKeyError(f"vault: no key supplied; {KEY_HELP}")
    try:
        return Fernet(key)
    except (ValueError, TypeError) as exc:
        raise VaultKeyError("vault: the key is not a valid Fernet key (32 bytes, URL-safe base64)") from exc


def keyed_digest(key: bytes | None, text: str) -> str:
    """An HMAC of the plaintext: lets ids stay deterministic without leaking a hash of the secret."""
    if not key:
        raise VaultKeyError(f"vault: no key supplied; {KEY_HELP}")
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def seal(record: Record, key: bytes | None) -> Record:
    """The record with its text replaced by ciphertext, ready to be written."""
    token = _fernet(key).encrypt(record.text.encode("utf-8")).decode("ascii")
    extra = dict(record.extra, cipher=CIPHER, sensitive=True)
    return replace(record, text=token, extra=extra)


def unseal(record: Record, key: bytes | None) -> Record:
    """The record with its plaintext, if ``key`` is given; unchanged (still encrypted) otherwise.

    Raises:
        VaultKeyError: if a key is given and it does not decrypt the record.
    """
    if not record.encrypted or not key:
        return record
    from cryptography.fernet import InvalidToken

    try:
        plain = _fernet(key).decrypt(record.text.strip().encode("ascii")).decode("utf-8")
    except (InvalidToken, ValueError) as exc:
        raise VaultKeyError(f"vault: {record.id}: the key does not decrypt this record (wrong key?)") from exc
    extra = {k: v for k, v in record.extra.items() if k != "cipher"}
    return replace(record, text=plain, extra=extra)
