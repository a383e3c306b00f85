"""Knowledge Vault encryption: sensitive values are encrypted before they become Git objects.

The key is a Fernet key (32 random bytes, URL-safe base64). It comes from the
caller (the CLI reads ``MEMREPO_VAULT_KEY`` or ``MEMREPO_VAULT_KEY_FILE``) and is
never written into the repository or an index.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping

from memrepo import sensitive
from memrepo.errors import RecordError, VaultKeyError
from memrepo.records import Record, Source, parse
from memrepo.sensitive import Finding

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


def id_content(key: bytes | None, text: str, values: Iterable[str] = ()) -> str:
    """What an id is hashed from: ``text`` with each secret in it replaced by its HMAC under ``key``.

    Without a key a secret is refused (or committed in plaintext when the user opted in), so
    there is nothing to hide and the text is returned as it is.

    Args:
        values: secrets the text holds that detection cannot find in it alone (a value its source
            gives in reply to a question: "hunter2x!"), blinded wherever they stand.
    """
    if not key:
        return text
    return sensitive.blind_values(text, values, lambda value: keyed_digest(key, value)[:16])


def id_content_turns(key: bytes | None, turns: list[str]) -> list[str]:
    """:func:`id_content` of consecutive turns, a value given in reply to the turn before included."""
    if not key:
        return turns
    return sensitive.blind_turns(turns, lambda value: keyed_digest(key, value)[:16])


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


# --- the key check: a wrong key is refused before it seals anything ---------------------

KEY_CHECK_PATH = "vault/key-check"
MIN_KNOWN_VALUE = 6  # a value vaulted earlier is replaced in later writes only from this length ("2023" is no PIN to hunt)
_KEY_CHECK_INPUT = b"memrepo vault key check v1"
_KEY_CHECK_HEADER = (
    "# memrepo vault key check: an HMAC-SHA256, under the vault key, of a fixed string.\n"
    "# It tells the repository's key from any other; it reveals nothing of the key.\n"
)


def key_check(key: bytes | None) -> bytes:
    """The contents of :data:`KEY_CHECK_PATH` for ``key`` (never the key itself)."""
    _fernet(key)  # a malformed key is refused here, with its own message
    digest = hmac.new(key or b"", _KEY_CHECK_INPUT, hashlib.sha256).hexdigest()
    return f"{_KEY_CHECK_HEADER}hmac-sha256:{digest}\n".encode("ascii")


def _stored_check(data: bytes) -> str | None:
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("hmac-sha256:"):
            return line.strip()
    return None


def key_check_changes(read: Callable[[str], bytes | None], sealed_records: Iterable[tuple[str, bytes]],
                      key: bytes | None) -> dict[str, bytes]:
    """The files a vault write adds for its key check; raises if ``key`` is not the repository's.

    Args:
        read: reads a tracked file at the commit being written on (None if absent).
        sealed_records: (path, file bytes) of vault records already in the repository,
            used when it has no key check yet (made before there was one): the key must
            decrypt them before its check is written.

    Raises:
        VaultKeyError: the key differs from the one the repository's vault is sealed with.
    """
    ours = key_check(key)
    stored = read(KEY_CHECK_PATH)
    if stored is not None:
        if _stored_check(stored) != _stored_check(ours):
            raise VaultKeyError(
                f"vault: this is not the repository's vault key (it does not match {KEY_CHECK_PATH}); "
                "nothing was written. Use the key the vault was created with"
            )
        return {}
    for path, data in sealed_records:
        record = parse(data, path)
        if record.encrypted:
            try:
                unseal(record, key)
            except VaultKeyError:
                raise VaultKeyError(
                    f"vault: this is not the repository's vault key (it does not decrypt {record.id}); nothing was "
                    "written. Use the key the vault was created with"
                ) from None
            break  # one record sealed under the same key is proof enough
    return {KEY_CHECK_PATH: ours}


# --- sealing a write: every secret to the vault, a pointer wherever it stood --------------


@dataclass
class SealedBatch:
    """What a write commits once its secrets are sealed, and what was found in it."""

    records: list[Record]
    sources: list[Source]
    message: str | None
    found: list[tuple[str, Finding]] = field(default_factory=list)  # (where, finding) in the input, in plaintext
    vaulted: int = 0  # vault records this step added


def vaulted_values(text: str) -> list[str]:
    """The secret values a vault record's plaintext holds: what detection finds in it, else the whole text."""
    return [f.value for f in sensitive.find(text)] or [text.strip()]


def _strings(mapping: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for k, v in mapping.items():
        if isinstance(v, str):
            yield k, v
        elif isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, str):
                    yield k, item


def _scrub_mapping(mapping: Mapping[str, Any], scrub: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        if isinstance(v, str):
            out[k] = scrub(v)
        elif isinstance(v, (list, tuple)):
            out[k] = type(v)(scrub(x) if isinstance(x, str) else x for x in v)
        else:
            out[k] = v
    return out


@dataclass(frozen=True)
class _Place:
    where: str
    text: str
    mention_time: str
    source: str
    position: str
    sources: tuple[str, ...]
    asked: str = ""  # the turn before, when the secret was given in reply to it


def _places(records: list[Record], sources: list[Source]) -> Iterator[_Place]:
    """Every text of a write that would be committed in plaintext, with what a vault entry from it cites."""
    for s in sources:
        where = str(s.extra.get("file") or s.origin or s.id)
        for p in s.parts:
            cite = (f"{s.id}#{p.anchor}",)
            yield _Place(f"{where} {p.anchor}", p.text, s.mention_time, s.id, p.anchor, cite)
            for k, v in _strings(p.meta):
                yield _Place(f"{where} {p.anchor} {k}", v, s.mention_time, s.id, f"{p.anchor}:{k}", cite)
        for k, v in [("title", s.title), ("origin", s.origin), *_strings(s.extra)]:
            yield _Place(f"{where} {k}", v, s.mention_time, s.id, k, ())
    for r in records:
        texts = [("summary", r.summary), *_strings(r.extra)]
        if r.type != "vault":
            texts = [("text", r.text), ("actor", r.actor or ""), *texts]
        for k, v in texts:
            yield _Place(f"{r.id} {k}", v, r.mention_time, r.id, k, tuple(r.sources))


def entry_text(text: str, f: Finding) -> str:
    """What a vault entry keeps of a secret found in ``text``: its line, or for a long one the secret with its kind."""
    return _entry_text(_Place("", text, "", "", "", ()), f)


def _entry_text(place: _Place, f: Finding) -> str:
    """What a vault entry keeps: the line the secret stands in (after the question it answers), or for a
    long one the secret with its kind. Detection finds the value in it again (:func:`vaulted_values`)."""
    text = place.text
    start = text.rfind("\n", 0, f.start) + 1
    end = text.find("\n", f.end)
    line = text[start : end if end >= 0 else len(text)].strip()
    if place.asked and len(line) <= 300:
        question = place.asked.strip().rsplit("\n", 1)[-1].strip()
        entry = f"{question}\n{line}"
        if len(question) <= 300 and f.value in [x.value for x in sensitive.find(entry)]:
            return entry
    if len(line) <= 300 and f.value in [x.value for x in sensitive.find(line)]:
        return line
    return f"{f.kind}: {f.value}"


def _replies(sources: list[Source]) -> Iterator[tuple[_Place, Finding]]:
    """Secrets given in one part in reply to a question in the part before (:func:`memrepo.sensitive.find_replies`)."""
    for s in sources:
        if len(s.parts) < 2:
            continue
        where = str(s.extra.get("file") or s.origin or s.id)
        for i, f in sensitive.find_replies([p.text for p in s.parts]):
            p = s.parts[i]
            yield _Place(f"{where} {p.anchor}", p.text, s.mention_time, s.id, p.anchor, (f"{s.id}#{p.anchor}",),
                         asked=s.parts[i - 1].text), f


def _found(records: list[Record], sources: list[Source], message: str | None) -> list[tuple[_Place, Finding]]:
    """Every secret of a write, where it stands: in each text, and given in a reply across turns."""
    found = [(p, f) for p in _places(records, sources) for f in sensitive.find(p.text)]
    for place, f in _replies(sources):
        if not any(p.where == place.where and f.start < g.end and g.start < f.end for p, g in found):
            found.append((place, f))
    for f in sensitive.find(message or ""):
        found.append((_Place("the commit message", message or "", "", "", "", ()), f))
    return found


def _left_in_plaintext(batch: "SealedBatch", values: Iterable[str]) -> list[str]:
    """Where a value sealed by this write, or any secret, still stands in what it would commit."""
    texts = [(p.where, p.text) for p in _places(batch.records, batch.sources)]
    texts.append(("the commit message", batch.message or ""))
    left = [where for where, text in texts for v in values if sensitive.occurrences(text, v)]
    left += [place.where for place, _ in _found(batch.records, batch.sources, batch.message)]
    return sorted(set(left))


def seal_batch(records: Iterable[Record], sources: Iterable[Source], message: str | None, *,
               key: bytes | None, new_record: Callable[..., Record],
               known: Mapping[str, str] | None = None) -> SealedBatch:
    """Send every secret of one write to the vault and leave a pointer wherever it was written.

    Values come from the vault records the writers made (wherever else they occur,
    labelled or not) and from :func:`memrepo.sensitive.find` over every text the write
    commits in plaintext: source parts and their metadata, titles, record texts,
    summaries and other fields, and the commit message. A secret no vault record holds
    yet gets one, citing the part it came from.

    Without a key nothing changes; :attr:`SealedBatch.found` tells the caller what
    would be committed in plaintext.

    Args:
        known: values vaulted by earlier writes, each with the pointer that replaces it.
    """
    records, sources = list(records), list(sources)
    found = _found(records, sources, message)
    plain_vault = [r for r in records if r.type == "vault" and not r.encrypted]
    result = SealedBatch(records, sources, message, found=[(p.where, f) for p, f in found])
    if not key:
        return result
    known = known or {}
    if not found and not plain_vault and not any(v in p.text for v in known for p in _places(records, sources)):
        return result
    pointers: dict[str, str] = {}  # this write's own vault entries first, then earlier ones
    for r in plain_vault:
        for value in vaulted_values(r.text):
            pointers.setdefault(value, sensitive.pointer(r.id))
    for value, where in known.items():
        pointers.setdefault(value, where)
    added: dict[str, Record] = {}
    for place, f in found:
        if f.value in pointers or not place.source:
            continue
        entry = new_record("vault", _entry_text(place, f), mention_time=place.mention_time, source=place.source,
                           position=place.position, sources=list(place.sources), summary=f"vault entry: {f.kind}"[:120])
        added.setdefault(entry.id, entry)
        pointers[f.value] = sensitive.pointer(entry.id)

    def scrub(text: str) -> str:
        return sensitive.redact(text, pointers)

    sealed_sources = [
        replace(s, title=scrub(s.title), origin=scrub(s.origin), extra=_scrub_mapping(s.extra, scrub),
                parts=tuple(replace(p, text=scrub(p.text), meta=_scrub_mapping(p.meta, scrub)) for p in s.parts))
        for s in sources
    ]
    sealed = []
    for r in records:
        fields: dict[str, Any] = dict(summary=scrub(r.summary), extra=_scrub_mapping(r.extra, scrub))
        if r.type != "vault":
            fields.update(text=scrub(r.text), actor=scrub(r.actor) if r.actor else r.actor)
        sealed.append(replace(r, **fields))
    sealed += [r for r in added.values() if r.id not in {x.id for x in records}]
    batch = SealedBatch(sealed, sealed_sources, scrub(message) if message else message, found=result.found,
                        vaulted=len(added))
    left = _left_in_plaintext(batch, [f.value for _, f in found])
    if left:  # never report a value sealed while it is still written somewhere
        raise RecordError(f"vault: a secret could not be sealed in {', '.join(left[:5])}; nothing was written")
    return batch


def refuse_plaintext(found: list[tuple[str, Finding]]) -> VaultKeyError:
    """The error for a write that would commit secrets in plaintext (no key, no opt-in)."""
    seen: set[str] = set()
    first = [(where, f) for where, f in found if not (f.value in seen or seen.add(f.value))]  # type: ignore[func-returns-value]
    return VaultKeyError(
        f"secrets found, and no vault key is set to seal them: {sensitive.describe(first)}. Nothing was written. "
        f"To keep them in the vault, {KEY_HELP}; to commit them in plaintext anyway, pass "
        "--allow-plaintext-secrets (allow_plaintext_secrets=True in the Python API)"
    )
