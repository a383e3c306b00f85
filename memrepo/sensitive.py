"""Finding secrets in text: labelled values ("my PIN is 4321") and well-known token shapes.

Two kinds of evidence, each kept narrow so that ordinary prose is not flagged:

- a *label* in front of the value: "password is ...", "PIN: ...", ``DB_PASSWORD=...``,
  ``Authorization: Bearer ...``, a password inside a URL (``postgres://u:pw@host``);
  values that are plain English words ("the password is wrong") are not secrets;
- a *shape* no prose has: cloud keys (AWS ``AKIA...``, Google ``AIza...``, Azure
  ``AccountKey=``/``SharedAccessKey=``/SAS ``sig=``), Git host tokens (``ghp_``,
  ``github_pat_``, ``glpat-``), Slack ``xox*`` tokens and webhooks, OpenAI/Anthropic-style
  ``sk-...`` and Stripe ``sk_live_`` keys, PEM private keys (also JSON-escaped, as in a
  GCP service-account file), JSON Web Tokens, and card numbers of a real card brand's
  prefix and length that pass the Luhn check.

A value already replaced by a vault pointer ("[kept in the vault...]") is never found
again, so redacting twice changes nothing. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

POINTER = "[kept in the vault]"
_POINTER_PREFIX = "[kept in the vault"


def pointer(record_id: str | None = None) -> str:
    """The text that stands where a secret was: ``[kept in the vault: va-...]``."""
    return f"[kept in the vault: {record_id}]" if record_id else POINTER


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: what kind it is and where its value is."""

    kind: str
    value: str
    start: int
    end: int

    def masked(self) -> str:
        """The value as a message may show it: a short prefix of a token shape, nothing of a short value."""
        if len(self.value) >= 16 and not self.kind.endswith("private key"):
            return f"{self.value[:4]}…"
        return "…"


# --- labelled values ----------------------------------------------------------------

# Prose labels: "my password is x", "PIN: 4321", "the wifi password was x".
_LABELS = (
    r"password|passcode|passphrase|pin(?: code| number)?|iban|credit card(?: number)?|card number|cvv|cvc|"
    r"security code|social security number|ssn|passport number|api key|api token|access token|auth token|"
    r"secret key|client secret|access code|door code|alarm code|recovery code|seed phrase|private key"
)
_LABELLED = rf"\b({_LABELS})\b\s*(?:is|was|:|=)\s*(?!{re.escape(_POINTER_PREFIX)})([^\s,;!?]+?)(?=[.,;!?]*(?:\s|$))"
LABELLED_RE = re.compile(_LABELLED, re.I)
_LABELLED_LOWER_RE = re.compile(_LABELLED)  # on lowercased text: several times faster than re.I
# Labels whose values are numbers: "the pin is broken" is no secret.
_NUMERIC_LABELS = {"pin", "pin code", "pin number", "cvv", "cvc", "security code", "access code", "door code",
                   "alarm code", "passcode", "card number", "credit card", "credit card number", "ssn",
                   "social security number"}
# Words that follow "password is" in prose about a password rather than in a statement of one.
_NOT_VALUES = set("""
a an the not no too very so still also now just my your his her our their its this that same different new old
wrong right correct incorrect invalid valid expired strong weak long short secure safe saved stored written
required missing empty blank broken changed reset set known unknown easy hard simple complicated complex here
there below above attached encrypted hidden redacted private secret something nothing what which where when
""".split())

# Code and configuration: DB_PASSWORD=..., "api_key": "...", client_secret: ... Found from the
# keyword outwards (a pattern that starts with the setting's name backtracks at every character).
_CONFIG_KEYWORDS = r"password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
_CONFIG_KEYWORD_RE = re.compile(_CONFIG_KEYWORDS, re.I)
_CONFIG_KEYWORD_LOWER_RE = re.compile(_CONFIG_KEYWORDS)
_CONFIG_TAIL_RE = re.compile(
    r"""(?x)
    [A-Za-z0-9_.-]*(?P<close>["']?)\s*[:=]\s*["']?
    (?!\$\{|<|%\(|os\.|env\b|process\.env)
    (?P<value>[A-Za-z0-9+/=_\-.~!@#$%^&*]{8,})
    """
)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_PLACEHOLDER_RE = re.compile(r"^(?:x+|\*+|\.+|changeme|none|null|nil|true|false|example|placeholder|redacted|secret|password|token)$", re.I)


_LABEL_HINTS = ("pass", "pin", "iban", "card", "cvv", "cvc", "code", "ssn", "social security", "api", "token",
                "secret", "seed phrase", "private key")
_CONFIG_HINTS = ("pass", "pwd", "secret", "token", "key")


def _labelled(text: str, lowered: str) -> Iterable[Finding]:
    same = len(lowered) == len(text)  # lowercasing kept every offset (it does for all but a few letters)
    labelled, keywords = (_LABELLED_LOWER_RE, _CONFIG_KEYWORD_LOWER_RE) if same else (LABELLED_RE, _CONFIG_KEYWORD_RE)
    scanned = lowered if same else text
    m: re.Match[str] | None
    for m in labelled.finditer(scanned) if any(h in lowered for h in _LABEL_HINTS) else ():
        label, value = m.group(1).lower(), text[m.start(2) : m.end(2)].rstrip(".,;!?")
        value = value.strip("\"'`")
        if not value or value.lower() in _NOT_VALUES:
            continue
        if label in _NUMERIC_LABELS and not any(c.isdigit() for c in value):
            continue
        start = m.start(2) + text[m.start(2) : m.end(2)].index(value)
        yield Finding(label, value, start, start + len(value))
    for k in keywords.finditer(scanned) if any(h in lowered for h in _CONFIG_HINTS) else ():
        m = _CONFIG_TAIL_RE.match(text, k.end())
        if not m:
            continue
        start = k.start()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name, value = text[start : m.start("close")], m.group("value").rstrip(".,;")
        quoted = start > 0 and text[start - 1] in "\"'"
        if not (quoted or "_" in name or "-" in name or name.isupper()):
            continue  # prose ("the secret: ...") rather than a setting
        if _PLACEHOLDER_RE.match(value) or (value.isalpha() and value.islower()):
            continue
        if value.isdigit() and not re.search(r"pass|pwd", name, re.I):
            continue  # max_tokens = 100000000 is a number, not a token
        yield Finding(f"{name} value", value, m.start("value"), m.start("value") + len(value))


# --- token shapes --------------------------------------------------------------------

# (kind, pattern, group of the value, hints): a pattern runs only on text that holds one of its
# hints (lowercased), which keeps a scan of ordinary prose at a few substring searches.
_SHAPES: tuple[tuple[str, re.Pattern[str], int, tuple[str, ...]], ...] = tuple(
    (kind, re.compile(pattern), group, hints)
    for kind, pattern, group, hints in (
        ("PEM private key",
         r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----", 0,
         ("private key-----",)),
        ("PEM private key",  # cut off before its END line: everything that looks like key material
         r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:\\[nr]|[\sA-Za-z0-9+/=:,-])*", 0, ("private key-----",)),
        ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", 0, ("akia", "asia", "abia", "acca")),
        ("AWS secret access key",
         r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1, ("secret",)),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", 0, ("aiza",)),
        ("Azure storage account key", r"(?i)\bAccountKey=([A-Za-z0-9+/]{80,}={0,2})", 1, ("accountkey=",)),
        ("Azure shared access key", r"(?i)\bSharedAccessKey=([A-Za-z0-9+/]{40,}={0,2})", 1, ("sharedaccesskey=",)),
        ("Azure SAS signature", r"[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})", 1, ("sig=",)),
        ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", 0, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
        ("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0, ("github_pat_",)),
        ("GitLab token", r"\bgl(?:pat|dt|ptt|rt|soat)-[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])", 0,
         ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-")),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9-])", 0, ("xox",)),
        ("Slack webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_]{20,}", 0, ("hooks.slack",)),
        ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b", 0, ("k_live_", "k_test_")),
        ("API key (sk-)", r"\bsk-(?:proj-|ant-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])"
                          r"[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])", 0, ("sk-",)),
        ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", 0, ("eyj",)),
        ("bearer token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)", 1, ("bearer",)),
        ("password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@[A-Za-z0-9.-]", 1, ("://",)),
    )
)

_DIGITS_RE = re.compile(r"\d\d[ -]?\d\d[ -]?\d\d[ -]?\d\d[ -]?\d\d")  # ten digits: cards and IBANs have more
_CARD_RE = re.compile(r"(?<![\d+.,-])\d(?:[ -]?\d){12,18}(?![\d])(?![.,]\d)")
# (brand, accepted prefixes as ranges, accepted lengths)
_CARD_BRANDS: tuple[tuple[tuple[int, int, int], tuple[int, ...]], ...] = (
    ((1, 4, 4), (16,)),                 # Visa (13 and 19 digits are rare and collide with phone numbers)
    ((2, 51, 55), (16,)),               # Mastercard
    ((4, 2221, 2720), (16,)),           # Mastercard 2-series
    ((2, 34, 34), (15,)), ((2, 37, 37), (15,)),   # American Express
    ((4, 6011, 6011), (16, 19)), ((2, 65, 65), (16, 19)), ((3, 644, 649), (16, 19)),  # Discover
    ((4, 3528, 3589), (16, 19)),        # JCB
    ((2, 36, 36), (14,)), ((3, 300, 305), (14,)),  # Diners Club
    ((2, 62, 62), (16, 19)),            # UnionPay
)
_IBAN_RE = re.compile(r"\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)\b")
_IBAN_LENGTHS = {"AD": 24, "AT": 20, "BE": 16, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
                 "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26,
                 "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15,
                 "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27}


def luhn_ok(digits: str) -> bool:
    """True if ``digits`` pass the Luhn check every payment card number carries."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_card_number(digits: str) -> bool:
    """A payment card number: a real brand's prefix and length, and the Luhn check."""
    for (width, low, high), lengths in _CARD_BRANDS:
        if len(digits) in lengths and low <= int(digits[:width]) <= high:
            return luhn_ok(digits)
    return False


def _cards(text: str) -> Iterable[Finding]:
    for m in _CARD_RE.finditer(text):
        raw = m.group(0)
        separators = {c for c in raw if not c.isdigit()}
        if len(separators) > 1:
            continue  # "4111 1111-1111 1111" is not how a card number is written
        if is_card_number(re.sub(r"\D", "", raw)):
            yield Finding("card number", raw, m.start(), m.end())


def _ibans(text: str) -> Iterable[Finding]:
    for m in _IBAN_RE.finditer(text):
        raw = m.group(1)
        iban = raw.replace(" ", "")
        if _IBAN_LENGTHS.get(iban[:2]) != len(iban):
            continue
        moved = iban[4:] + iban[:4]
        if int("".join(str(int(c, 36)) for c in moved)) % 97 == 1:
            yield Finding("IBAN", raw, m.start(1), m.end(1))


def _shapes(text: str, lowered: str) -> Iterable[Finding]:
    for kind, pattern, group, hints in _SHAPES:
        if not any(h in lowered for h in hints):
            continue
        for m in pattern.finditer(text):
            yield Finding(kind, m.group(group), m.start(group), m.end(group))
    if _DIGITS_RE.search(text):
        yield from _cards(text)
        yield from _ibans(text)


def find(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, without overlaps (a token shape wins over a label)."""
    if not text:
        return []
    lowered = text.lower()
    candidates = sorted(_shapes(text, lowered), key=lambda f: (f.start, -(f.end - f.start)))
    candidates += sorted(_labelled(text, lowered), key=lambda f: (f.start, -(f.end - f.start)))
    kept: list[Finding] = []
    for f in candidates:
        if f.end <= f.start or _POINTER_PREFIX in f.value:
            continue
        if any(f.start < k.end and k.start < f.end for k in kept):
            continue
        kept.append(f)
    return sorted(kept, key=lambda f: f.start)


def blind(text: str, digest: "Callable[[str], str]") -> str:
    """``text`` with every secret replaced by ``digest(secret)``: what an id is hashed from.

    A plain hash of text holding a short secret (a four-digit PIN) can be inverted by trying
    every value, so ids hash this instead, with a keyed digest (:func:`memrepo.vault.id_content`).
    Text without secrets comes back unchanged, so its ids stay what they always were.
    """
    out, end = [], 0
    for f in find(text):
        out.append(text[end:f.start])
        out.append(f"[secret:{digest(f.value)}]")
        end = f.end
    return "".join(out) + text[end:] if out else text


# --- redaction ----------------------------------------------------------------------


def _value_pattern(value: str) -> re.Pattern[str]:
    """``value`` as a whole: not the middle of a longer word or number ("4321" is not in "143210")."""
    head = r"(?<![A-Za-z0-9])" if value[:1].isalnum() else ""
    tail = r"(?![A-Za-z0-9])" if value[-1:].isalnum() else ""
    return re.compile(head + re.escape(value) + tail)


def redact(text: str, known: Mapping[str, str] | None = None, *, default: str = POINTER) -> str:
    """``text`` with every secret replaced by a vault pointer.

    Args:
        known: values already sent to the vault, each with the pointer that replaces it
            (wherever it occurs, labelled or not); the longest values are replaced first.
        default: the pointer for a secret found here that is not in ``known``.
    """
    if not text:
        return text
    for value in sorted(known or {}, key=lambda v: (-len(v), v)):
        if value and value in text:
            pointer = (known or {})[value]
            text = _value_pattern(value).sub(lambda _m: pointer, text)
    pieces, last = [], 0
    for f in find(text):
        pieces += [text[last:f.start], (known or {}).get(f.value, default)]
        last = f.end
    return "".join(pieces) + text[last:] if pieces else text


def describe(findings: Iterable[tuple[str, Finding]], limit: int = 5) -> str:
    """A short list of what was found where, never the values: "a GitHub token (ghp_…) in note n1"."""
    items = [f"{f.kind} ({f.masked()}) in {where}" for where, f in findings]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more

