"""Finding secrets in text: labelled values ("my PIN is 4321"), well-known token shapes, and a
secret given in the reply to a question asking for it.

Three kinds of evidence, each kept narrow so that ordinary prose is not flagged:

- a *label* in front of the value: "password is ...", "The password for my bank account is ...",
  "PIN: ...", "PIN 7345" (a number straight after a label that takes numbers), "Mein Passwort
  ist ...", "mot de passe : ...", "contraseña es ...", "la password è ...", "senha é ...",
  "wachtwoord is ..." (and Nordic, Polish, Czech, Russian labels), a quoted value with spaces
  (``password is "p@ss w0rd"``), a whole passphrase or seed phrase, ``DB_PASSWORD=...``,
  ``Authorization: Bearer ...``, a password inside a URL (``postgres://u:pw@host``). A value
  that is a plain word of prose ("the password is wrong", "is taped under the desk") is not a
  secret; a plain word that ends the statement ("the password is swordfish.") is;
- a *shape* no prose has: cloud keys (AWS, Google, Azure), Git host tokens (GitHub, GitLab),
  model providers (OpenAI/Anthropic ``sk-``, Hugging Face ``hf_``, Groq, xAI, Perplexity,
  Replicate), Slack, Discord and Telegram bot tokens and webhooks, Stripe, Twilio, SendGrid,
  Mailgun, Mailchimp, Shopify, npm, PyPI, Doppler, DigitalOcean, Linear, Notion, Datadog,
  Heroku, Postman, Databricks, HashiCorp Vault and Terraform Cloud, Grafana, New Relic, Sentry,
  Square, Supabase, Airtable, Dropbox, Atlassian, age keys, PEM and PuTTY private keys (also
  JSON-escaped, as in a GCP service-account file), JSON Web Tokens, and card numbers and IBANs
  that pass their checksums;
- a *reply*: in consecutive turns (:func:`find_replies`, and the lines of one text in
  :func:`find`), a value given right after a question asking for a password or a PIN
  ("what's your password?" -> "hunter2x!").

A value already replaced by a vault pointer ("[kept in the vault...]") is never found again,
so redacting twice changes nothing. Pure functions, no I/O.

Cost: :func:`find` runs on every blob a push brings, so every pattern sits behind a cheap
gate: token shapes only run on a text holding a run of 16 non-space characters and one of the
shape's hints; labels only where a label's hint occurs; replies only in a text holding a
newline, a ``?`` and a label. Ordinary prose costs a few substring searches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

POINTER = "[kept in the vault]"
_POINTER_PREFIX = "[kept in the vault"
_POINTER_RE = re.compile(r"\[kept in the vault(?::[^\]\n]{0,80})?\]")


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
        """The value as a message may show it: a short prefix of a token shape (``ghp_…``), nothing of a value a
        person chose (a password, a passphrase) or of a short one."""
        if len(self.value) >= 16 and self.kind in _TOKEN_KINDS and not self.kind.endswith("private key"):
            return f"{self.value[:4]}…"
        return "…"


# --- labelled values ----------------------------------------------------------------

# Connectors between a label and its value, in the languages whose labels follow; every label also
# takes ":" and "=". The common ones go with every label, since languages borrow "password" and
# "PIN" ("La mia password è ...", "Meine PIN ist ...").
_COMMON_CONNECTORS = ("is", "was", "'s", "’s", "ist", "lautet", "lautete", "war", "heißt", "est", "était", "c'est",
                      "c’est", "es", "era", "è", "e'", "é", "luidt", "är", "var", "jest")
_LABEL_GROUPS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("password", "passwd", "passcode", "pass code", "passphrase", "pin", "pin code", "pin number", "iban",
      "credit card", "credit card number", "card number", "cvv", "cvc", "security code", "social security number",
      "ssn", "passport number", "api key", "api token", "access token", "auth token", "secret key", "client secret",
      "access code", "door code", "gate code", "garage code", "alarm code", "safe code", "safe combination",
      "recovery code", "backup code", "verification code", "seed phrase", "recovery phrase", "mnemonic phrase",
      "private key", "wifi key"), ()),
    (("passwort", "kennwort", "geheimzahl", "pin-code", "pin-nummer", "zugangscode", "türcode", "sicherheitscode",
      "geheimcode"), ()),                                                                   # German
    (("mot de passe", "code secret", "code pin", "code d'accès", "code d’accès", "code confidentiel",
      "code de sécurité", "phrase secrète", "phrase de passe"), ()),                        # French
    (("contraseña", "contrasena", "clave", "clave secreta", "clave de acceso", "código pin", "codigo pin",
      "código de acceso", "código secreto"), ()),                                           # Spanish
    (("parola d'ordine", "parola d’ordine", "codice pin", "codice segreto", "codice di accesso",
      "parola segreta"), ()),                                                               # Italian
    (("senha", "palavra-passe", "palavra passe", "código de acesso"), ()),                  # Portuguese
    (("wachtwoord", "pincode", "toegangscode", "inlogcode", "beveiligingscode"), ()),       # Dutch
    (("lösenord", "pinkod", "adgangskode", "passord", "kodeord", "pinkode", "salasana"),
     ("er", "on", "oli")),                                                                  # Nordic, Finnish
    (("hasło", "haslo", "heslo", "пароль", "пин-код"), ("to", "je", "это", "—")),  # Polish, Czech, Russian
    (("şifre", "şifrem", "şifresi"), ()),                                           # Turkish
)
_LABEL_CONNECTORS = {label: extra for labels, extra in _LABEL_GROUPS for label in labels}
# Labels whose values hold digits: "the pin is broken" is no secret; "PIN 7345" (no connector) is.
_NUMERIC_LABELS = frozenset({
    "pin", "pin code", "pin number", "cvv", "cvc", "security code", "access code", "door code", "gate code",
    "garage code", "alarm code", "safe code", "safe combination", "passcode", "pass code", "card number",
    "credit card", "credit card number", "ssn", "social security number", "verification code", "recovery code",
    "backup code", "geheimzahl", "pin-code", "pin-nummer", "zugangscode", "türcode", "sicherheitscode", "geheimcode",
    "code secret", "code pin", "code d'accès", "code d’accès", "code confidentiel", "code de sécurité",
    "código pin", "codigo pin", "código de acceso", "código secreto", "codice pin", "codice segreto",
    "codice di accesso", "código de acesso", "pincode", "toegangscode", "inlogcode", "beveiligingscode", "pinkod",
    "pinkode", "adgangskode", "пин-код",
})
# Labels a number may follow with no connector at all ("PIN 7345", "CVV 123").
_BARE_NUMERIC = frozenset({"pin", "pin code", "pin number", "cvv", "cvc", "passcode", "door code", "gate code",
                           "garage code", "alarm code", "safe code", "access code", "security code", "ssn",
                           "geheimzahl", "pin-code", "pincode", "pinkod", "pinkode", "code pin", "codice pin",
                           "código pin", "codigo pin", "пин-код"})
# Labels a password-shaped token (letters and digits) may follow with no connector ("password Tr0ub4dor3").
_BARE_SECRET = frozenset({"password", "passwd", "passwort", "kennwort", "mot de passe", "contraseña", "contrasena",
                          "senha", "wachtwoord", "lösenord", "passord", "kodeord", "salasana", "hasło", "haslo",
                          "heslo", "пароль", "şifre", "şifrem", "api key", "api token", "access token", "auth token",
                          "secret key", "client secret"})
# Labels whose value is a phrase of several words, taken to the end of the sentence.
_PHRASE_LABELS = frozenset({"passphrase", "seed phrase", "recovery phrase", "mnemonic phrase", "phrase secrète",
                            "phrase de passe"})

_LABEL_ALTERNATION = "|".join(
    re.escape(label).replace(r"\ ", r"[ \t]+") for label in sorted(_LABEL_CONNECTORS, key=lambda s: (-len(s), s)))
_LABEL_RE = re.compile(rf"(?<![\w-])(?:{_LABEL_ALTERNATION})(?![\w-])")
_LABEL_RE_I = re.compile(_LABEL_RE.pattern, re.I)
_LABEL_REACH = max(map(len, _LABEL_CONNECTORS))  # how far a label reaches from any of its hints
# Substrings of every label, lowercased: a text holding none of them has no labelled value.
_LABEL_HINTS = ("pass", "pin", "iban", "card", "cvv", "cvc", "code", "kode", "ssn", "social security", "api",
                "token", "secret", "phrase", "private key", "wifi key", "kennwort", "geheimzahl", "contrase", "clave",
                "codice", "parola", "senha", "wachtwoord", "lösenord", "salasana", "hasło", "haslo", "heslo",
                "пароль", "пин", "şifre", "código", "codigo", "mnemonic", "combination")

# "The password for my bank account is", "das Passwort für das Konto ist", "le mot de passe de mon compte est".
_PREPOSITIONS = ("for|of|to|on|at|from|für|fürs|von|vom|zum|zur|de|du|des|pour|del|della|dello|dei|di|do|da|dos|"
                 "das|van|voor|bij|för|till|til|af|dla|od|для|от")
_QUALIFIER = (rf"(?:[ \t]+(?:{_PREPOSITIONS})[ \t]+|[ \t]+d['’])[^\s.!?:;=,\"“”«»]+"
              r"(?:[ \t]+[^\s.!?:;=,\"“”«»]+){0,4}?")


@lru_cache(maxsize=None)
def _tail_re(extra: tuple[str, ...]) -> re.Pattern[str]:
    """What follows a label up to its value: a qualifier, then a connector (word, or ':' / '=')."""
    words = "|".join(re.escape(w) for w in sorted(_COMMON_CONNECTORS + extra, key=lambda s: (-len(s), s)))
    return re.compile(
        rf"(?P<qual>{_QUALIFIER})?[ \t]*(?:(?P<word>{words})(?![\w'’])[ \t]*[:=]?[ \t]*|(?P<sign>[:=：])"
        r"(?:[ \t]*\n)?[ \t]*)", re.I)


_BARE_RE = re.compile(r"[ \t]+(?=\S)")
_OPEN_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "„": "“", "«": "»", "‘": "’", "‚": "‘"}
_TRAILING = ".,;:!?)]}>\"'`”’»"
_CLAUSE_WORDS = frozenset("and but so or und aber et mais y pero e ma mas en maar och og — – -".split())
_UNIT_WORDS = frozenset("""characters character chars char digits digit letters letter symbols long zeichen stellen
stellig caractères caracteres caratteri cifre chiffres dígitos digitos cijfers tekens tecken""".split())

# Words that follow "password is" in prose about a password rather than in a statement of one.
_NOT_VALUES = frozenset("""
a an the not no none too very so still also now just my your his her our their its this that same different new old
wrong right correct incorrect invalid valid expired strong weak long short secure safe saved stored written
required missing empty blank broken changed reset set known unknown easy hard simple complicated complex here
there below above attached encrypted hidden redacted private secret something nothing what which where when
in on at under behind with for from of to by inside into like as it mine yours hers ours theirs one two three four
five six seven eight nine ten case-sensitive sensitive mandatory optional needed protected unique personal
same-as usually always never only kept generated random temporary tied linked required. ok fine good bad
sha1 sha256 md5 bcrypt argon2 pbkdf2 2fa mfa utf8 utf-8 null none n/a tbd todo
str int bytes bool string optional any
der die das ein eine einen mein meine dein deine sein seine ihr unser nicht kein keine noch sehr zu auch immer
falsch richtig korrekt ungültig gültig abgelaufen geändert neu alt sicher unsicher geheim vergessen leer lang
kurz weg gesperrt einfach schwer stark schwach hier da
le la les un une mon ma ton ta son sa notre votre pas très trop aussi toujours incorrect faux fausse invalide
expiré expirée changé nouveau nouvelle ancien sûr secret oublié vide court bloqué simple compliqué bon mauvais
fort faible ici
el los las una mi tu su muy demasiado también siempre incorrecta incorrecto correcta correcto inválida inválido
válida válido caducada cambiada nueva nuevo segura seguro secreta olvidada larga corta bloqueada fácil difícil
mala buena débil fuerte aquí
il lo gli mio mia tuo tua suo sua non molto troppo anche sempre sbagliata sbagliato corretta errata scaduta
cambiata nuova sicura segreta lunga bloccata facile difficile debole forte qui
o os um uma meu minha teu tua seu sua não muito também sempre errada errado incorreta correta expirada alterada
segura longa curta fraca forte aqui
de het een mijn jouw zijn haar niet erg te ook altijd fout onjuist juist verlopen gewijzigd nieuw oud veilig
onveilig vergeten leeg kort geblokkeerd makkelijk moeilijk sterk zwak hier
""".split())
# Function words of prose, which no passphrase generator (or BIP39 seed phrase) uses; and words of
# _NOT_VALUES a generated phrase may start with ("correct horse battery staple").
_PROSE_WORDS = frozenset("a an the and or but to of is was are it be for with that this too very not".split())
_PHRASE_WORDS = frozenset("correct right strong long short new old one two three four five six seven eight nine ten"
                          .split())
_CURRENCY = frozenset("$€£¥₹₩₽¢")
_CARD_LABELS = frozenset({"credit card", "credit card number", "card number"})
# One-word replies to "what's your password?" that give none.
_REPLY_WORDS = frozenset("""
yes no nope nah yep yup sure ok okay fine thanks thank sorry later never why what who how hmm hm um uh idk dunno
maybe perhaps nothing none secret private lol haha right exactly correct true false same forgot forgotten unknown
wait busy noted done gone please nein ja doch klar non oui si sí não sim nee geen nie nej nei kyllä
""".split())
_PLACEHOLDER_RE = re.compile(
    r"^(?:x+|\*+|\.+|•+|#+|-+|_+|\?+|changeme|none|null|nil|n/a|tbd|todo|true|false|example|placeholder|redacted|"
    r"secret|password|passwort|token|your[_-]\w*|my[_-]\w*|<[^>]*>|\{[^}]*\}|\$\{?\w+\}?|%\w|\*{3,}\w*)$", re.I)
_PLAIN_WORD_RE = re.compile(r"^[^\W\d_][^\W\d_A-Z]*(?:[-'’][^\W\d_]+)*$")  # "swordfish", "Sunshine", "Mia's"
_ATTRIBUTE_RE = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z_]\w*)+$")
_VERSION_RE = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+.]?\w+)?$|^\d{1,2}:\d{2}(?::\d{2})?$|^\d{4}-\d{2}-\d{2}$", re.I)


def _value_at(text: str, pos: int, label: str) -> tuple[int, int] | None:
    """Where the value that starts at ``pos`` ends: a quoted string, a phrase, or one token."""
    if pos >= len(text):
        return None
    close = _OPEN_QUOTES.get(text[pos])
    if close:
        end = text.find(close, pos + 1, pos + 122)
        newline = text.find("\n", pos + 1, end if end > 0 else pos + 122)
        if end > pos + 1 and newline < 0:
            inner = text[pos + 1 : end]
            lead = len(inner) - len(inner.lstrip())
            return (pos + 1 + lead, pos + 1 + len(inner.rstrip())) if inner.strip() else None
    if label in _PHRASE_LABELS:
        m = re.compile(r"[^\n.;!?]{1,300}").match(text, pos)
        if m and len(m.group(0).split()) >= 2:
            return pos, pos + len(m.group(0).rstrip(" \t,"))
    end = pos
    while end < len(text) and not text[end].isspace() and end - pos < 300:
        end += 1
    while end > pos and text[end - 1] in _TRAILING:
        end -= 1
    return (pos, end) if end > pos else None


def _plain(value: str) -> bool:
    """A word of prose: letters only (one capital at most, first), perhaps with an apostrophe or a hyphen."""
    return bool(_PLAIN_WORD_RE.match(value))


def _ends_statement(text: str, end: int) -> bool:
    """True if nothing but punctuation, the end, or a word joining clauses follows ``end``."""
    rest = text[end : end + 24].lstrip(" \t")
    if not rest or rest[0] in ".,;:!?)\n\"'”’»—–":
        return True
    return rest.split(None, 1)[0].lower() in _CLAUSE_WORDS


def _code(value: str, text: str, end: int) -> bool:
    """A value that is code, not a secret: a call or subscript (``os.environ["PASSWORD"]``, ``config.get(``) or an
    attribute of a lowercase name (``settings.DB_PASSWORD``)."""
    return (text[end : end + 1] in ("(", "[") or "(" in value or "[" in value
            or bool(_ATTRIBUTE_RE.match(value)))


def _acceptable(label: str, value: str, text: str, end: int, *, prose: bool) -> bool:
    """Is ``value`` (ending at ``end`` of ``text``), said after ``label``, a secret rather than prose?"""
    lowered = value.lower()
    if not prose and _code(value, text, end):
        return False
    if len(value) < 3 or not any(c.isalnum() for c in value) or lowered.startswith("[kept"):
        return False
    if lowered in _NOT_VALUES or _PLACEHOLDER_RE.match(value) or value[0] in "<{$%":
        return False  # "<your password>", "${DB_PASSWORD}", "%(password)s"
    if label in _PHRASE_LABELS and " " in value and (
            lowered.split()[0] in _NOT_VALUES - _PHRASE_WORDS or _PROSE_WORDS.intersection(lowered.split())):
        return False  # "is long and hard to remember" (a seed phrase has no "and", "to" or "the")
    digits = any(c.isdigit() for c in value)
    if label in _NUMERIC_LABELS and not digits:
        return False
    if value[0] in _CURRENCY or value[-1] in _CURRENCY:
        return False  # "Credit Card: $410" is what was paid
    if label in _CARD_LABELS and sum(c.isdigit() for c in value) < 12:
        return False
    if digits and value.replace(",", "").replace(".", "").isdigit():
        following = text[end : end + 24].split(None, 1)
        if following and following[0].lower().strip(".,;") in _UNIT_WORDS:
            return False  # "8 characters long"
    if _plain(value):
        if prose and (value[-2:].lower() in ("ed", "ly") or lowered.endswith("ing")):
            return False  # "is compromised", "is changing", "is usually ..."
        return _ends_statement(text, end)  # "is swordfish." but not "is taped under", "Change password: Settings >"
    return True


def _bare_value(label: str, value: str) -> bool:
    """A value straight after its label with no connector: only a number, or a password-shaped token."""
    if label in _BARE_NUMERIC:
        digits = sum(c.isdigit() for c in value)
        return bool(re.fullmatch(r"\d(?:[\d-]*\d)?", value)) and 3 <= digits <= 12 and (digits >= 4 or "cv" in label)
    if label in _BARE_SECRET:
        letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
        return (len(value) >= 6 and letters and digits and not _VERSION_RE.match(value)
                and value.lower() not in _NOT_VALUES and not _PLACEHOLDER_RE.match(value))
    return False


def _label_at(text: str, m: re.Match[str]) -> Finding | None:
    """The value ``m`` (a label) introduces, if it introduces one."""
    label = re.sub(r"[ \t]+", " ", m.group(0).lower())
    tail = _tail_re(_LABEL_CONNECTORS.get(label, ())).match(text, m.end())
    if tail:
        span = _value_at(text, tail.end(), label)
        if span and _acceptable(label, text[span[0] : span[1]], text, span[1], prose=bool(tail.group("word"))):
            return Finding(label, text[span[0] : span[1]], *span)
        return None
    bare = _BARE_RE.match(text, m.end())
    if bare and (label in _BARE_NUMERIC or label in _BARE_SECRET):
        span = _value_at(text, bare.end(), "")
        if span and _bare_value(label, text[span[0] : span[1]]):
            return Finding(label, text[span[0] : span[1]], *span)
    return None


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
_CONFIG_HINTS = ("pass", "pwd", "secret", "token", "key")

# Kept for callers that match labelled values themselves (English connectors only).
LABELLED_RE = re.compile(rf"(?<![\w-])({_LABEL_ALTERNATION})(?![\w-])\s*(?:is|was|:|=)\s*", re.I)


def _label_matches(scanned: str, lowered: str, labels: re.Pattern[str]) -> list[re.Match[str]]:
    """Every label in ``scanned``, looked for only around the places a label's hint occurs.

    The label pattern (an alternation behind a look-behind) tries every position: over 340 KB of
    prose it took 29 ms, against well under 1 ms for the hints' substring searches.
    """
    found: dict[int, re.Match[str]] = {}
    for hint in _LABEL_HINTS:
        at = lowered.find(hint)
        while at >= 0:
            for m in labels.finditer(scanned, max(0, at - _LABEL_REACH), at + len(hint) + _LABEL_REACH):
                found.setdefault(m.start(), m)
            at = lowered.find(hint, at + len(hint))
    return [found[k] for k in sorted(found)]


def _labelled(text: str, lowered: str) -> Iterable[Finding]:
    same = len(lowered) == len(text)  # lowercasing kept every offset (it does for all but a few letters)
    labels, keywords = (_LABEL_RE, _CONFIG_KEYWORD_LOWER_RE) if same else (_LABEL_RE_I, _CONFIG_KEYWORD_RE)
    scanned = lowered if same else text
    for m in _label_matches(scanned, lowered, labels):
        found = _label_at(text, m)
        if found:
            yield found
    for k in keywords.finditer(scanned) if any(h in lowered for h in _CONFIG_HINTS) else ():
        c = _CONFIG_TAIL_RE.match(text, k.end())
        if not c:
            continue
        start = k.start()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name, value = text[start : c.start("close")], c.group("value").rstrip(".,;")
        quoted = start > 0 and text[start - 1] in "\"'"
        if not (quoted or "_" in name or "-" in name or name.isupper()):
            continue  # prose ("the secret: ...") rather than a setting
        if _PLACEHOLDER_RE.match(value) or (value.isalpha() and value.islower()) or _code(value, text, c.end("value")):
            continue
        if value.isdigit() and not re.search(r"pass|pwd", name, re.I):
            continue  # max_tokens = 100000000 is a number, not a token
        yield Finding(f"{name} value", value, c.start("value"), c.start("value") + len(value))


# --- token shapes --------------------------------------------------------------------


def _literal_first(pattern: str) -> str:
    r"""``\bghp_...`` as ``ghp(?<!\wghp)_...``: a pattern that starts with a literal is searched for that
    literal at C speed (9 ms -> 0.1 ms over 340 KB of prose); one that starts with ``\b`` tries every position."""
    m = re.match(r"\\b([A-Za-z0-9_]+)", pattern)
    if not m:
        return pattern
    literal = m.group(1)
    if pattern[m.end() : m.end() + 1] in ("?", "*", "+", "{"):
        literal = literal[:-1]
    if not literal:
        return pattern
    return literal + rf"(?<!\w{literal})" + pattern[2 + len(literal) :]


# (kind, pattern, group of the value, hints): a pattern runs only on text that holds a run of 16
# non-space characters (every shape is at least that long) and one of its hints: a lowercase
# substring (of the long runs, or of the whole text for the kinds in _CONTEXT_HINTED), or a pattern.
# The middle of a Discord bot token (".AbC123."): the token itself has no literal to search for.
_DISCORD_HINT = re.compile(r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}")
_SHAPES: tuple[tuple[str, re.Pattern[str], int, tuple[str | re.Pattern[str], ...]], ...] = tuple(
    (kind, re.compile(_literal_first(pattern)), group, hints)
    for kind, pattern, group, hints in (
        ("PEM private key",
         r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----", 0,
         ("private key-----",)),
        ("PEM private key",  # cut off before its END line: everything that looks like key material
         r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:(?:\\[nr])+|[ \t]*\r?\n|[ \t]*[A-Za-z-]+:[ \t][^\n\\]*"
         r"|[A-Za-z0-9+/=]+)*", 0, ("private key-----",)),  # base64 lines and "Proc-Type: ..." headers, no prose
        ("PuTTY private key", r"PuTTY-User-Key-File-\d:[\s\S]*?Private-Lines:\s*\d+\s*\n(?:[A-Za-z0-9+/=]+\n?)+", 0,
         ("putty-user-key-file",)),
        ("age secret key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", 0, ("age-secret-key-",)),
        ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", 0, ("akia", "asia", "abia", "acca")),
        ("AWS secret access key",
         r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1, ("secret",)),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", 0, ("aiza",)),
        ("Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_\-]{28}(?![A-Za-z0-9_\-])", 0, ("gocspx-",)),
        ("Google OAuth token", r"\bya29\.[A-Za-z0-9_\-]{30,}", 0, ("ya29.",)),
        ("Azure storage account key", r"(?i)\bAccountKey=([A-Za-z0-9+/]{80,}={0,2})", 1, ("accountkey=",)),
        ("Azure shared access key", r"(?i)\bSharedAccessKey=([A-Za-z0-9+/]{40,}={0,2})", 1, ("sharedaccesskey=",)),
        ("Azure SAS signature", r"[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})", 1, ("sig=",)),
        ("Azure client secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.-])",
         0, ("q~",)),
        ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", 0, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
        ("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0, ("github_pat_",)),
        ("GitLab token", r"\bgl(?:pat|dt|ptt|rt|soat|cbt)-[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])", 0,
         ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glcbt-")),
        ("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9-])", 0, ("xox",)),
        ("Slack token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}\b", 0, ("xapp-",)),
        ("Slack webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_]{20,}", 0,
         ("hooks.slack",)),
        ("Discord webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}", 0,
         ("discord",)),
        ("Discord bot token",
         r"(?<![A-Za-z0-9_\-.])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-.])",
         0, (_DISCORD_HINT,)),
        ("Telegram bot token", r"(?<![\d:])\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", 0, (":aa",)),
        ("Stripe key", r"\bsk_(?:live|test)_[A-Za-z0-9]{20,}\b", 0, ("sk_live_", "sk_test_")),
        ("Stripe key", r"\brk_(?:live|test)_[A-Za-z0-9]{20,}\b", 0, ("rk_live_", "rk_test_")),
        ("Stripe webhook secret", r"\bwhsec_[A-Za-z0-9+/=]{32,}", 0, ("whsec_",)),
        ("API key (sk-)", r"\bsk-(?:proj-|ant-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])"
                          r"[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])", 0, ("sk-",)),
        ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b", 0, ("hf_",)),
        ("Hugging Face token", r"\bapi_org_[A-Za-z0-9]{30,}\b", 0, ("api_org_",)),
        ("Groq API key", r"\bgsk_[A-Za-z0-9]{48,}\b", 0, ("gsk_",)),
        ("xAI API key", r"\bxai-[A-Za-z0-9]{70,}\b", 0, ("xai-",)),
        ("Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,}\b", 0, ("pplx-",)),
        ("Replicate token", r"\br8_[A-Za-z0-9]{37}\b", 0, ("r8_",)),
        ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, ("npm_",)),
        ("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", 0, ("pypi-",)),
        ("SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}(?![A-Za-z0-9_\-])", 0, ("sg.",)),
        ("Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", 0, ("sk",)),
        ("Mailgun key", r"\bkey-[0-9a-zA-Z]{32}\b", 0, ("key-",)),
        ("Mailchimp key", r"\b[0-9a-f]{32}-us\d{1,2}\b", 0, ("-us",)),
        ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, ("shp",)),
        ("Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b", 0, ("dp.",)),
        ("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}\b", 0, ("_v1_",)),
        ("Linear API key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", 0, ("lin_",)),
        ("Notion token", r"\bsecret_[A-Za-z0-9]{43}\b", 0, ("secret_",)),
        ("Notion token", r"\bntn_\d{11}[A-Za-z0-9]{35}\b", 0, ("ntn_",)),
        ("Datadog key", r"(?i)\b(?:datadog|dd)[ _-]?(?:api|app|application)[ _-]?key\b[^\n]{0,30}?"
                        r"(?<![0-9a-f])([0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-f])", 1,
         ("datadog", "dd_a", "dd-a", "dd a")),
        ("Heroku API key", r"(?i)\bheroku[ _-]?(?:api[ _-]?)?(?:key|token)\b[^\n]{0,30}?"
                           r"\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b", 1, ("heroku",)),
        ("Heroku API key", r"\bHRKU-[A-Za-z0-9_\-]{30,}", 0, ("hrku-",)),
        ("Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 0, ("pmak-",)),
        ("Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", 0, ("dapi",)),
        ("HashiCorp Vault token", r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}", 0, ("hvs.", "hvb.")),
        ("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}", 0, ("atlasv1",)),
        ("Grafana token", r"\bgl(?:sa|c)_[A-Za-z0-9+/_=\-]{32,}", 0, ("glsa_", "glc_")),
        ("New Relic key", r"\bNR(?:AK|AA|II)-[A-Z0-9]{27}\b", 0, ("nrak-", "nraa-", "nrii-")),
        ("Sentry token", r"\bsntry[us]_[A-Za-z0-9+/=_\-]{40,}", 0, ("sntry",)),
        ("Square token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}\b", 0, ("sq0",)),
        ("Supabase token", r"\bsbp_[a-f0-9]{40}\b", 0, ("sbp_",)),
        ("Airtable token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", 0, ("pat",)),
        ("Dropbox token", r"\bsl\.[A-Za-z0-9_\-]{130,}", 0, ("sl.",)),
        ("Atlassian API token", r"\bATATT3[A-Za-z0-9_\-=]{100,}", 0, ("atatt3",)),
        ("Artifactory key", r"\bAKCp[A-Za-z0-9]{60,}", 0, ("akcp",)),
        ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", 0, ("eyj",)),
        ("bearer token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)", 1, ("bearer",)),
        ("basic credentials", r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{12,}={0,2})", 1, ("authorization",)),
    )
)
_TOKEN_KINDS = frozenset(kind for kind, *_ in _SHAPES) - {"bearer token", "basic credentials"}
_CONTEXT_HINTED = frozenset({"PEM private key", "PuTTY private key", "Datadog key", "Heroku API key", "bearer token",
                             "basic credentials"})
_URL_PASSWORD_RE = re.compile(r"://(?<=[A-Za-z0-9+.\-]://)[^\s:/@]*:([^\s@/]{3,})@[A-Za-z0-9.-]")

_DIGITS_RE = re.compile(r"\d\d[ -]?\d\d[ -]?\d\d[ -]?\d\d[ -]?\d\d")  # ten digits: cards and IBANs have more
# Not inside a word: a run of digits in a hex hash (a frame IRI, a commit id) is no card.
_CARD_RE = re.compile(r"(?<![\w+.,-])\d(?:[ -]?\d){12,18}(?!\w)(?![.,]\d)")
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
    runs = " ".join(w for w in text.split() if len(w) >= 16).lower()  # str.split: 3x faster than a \S{16,} scan
    if runs:
        for kind, pattern, group, hints in _SHAPES:
            # A token's hint is part of the token, so it is looked for in the long runs only (a few bytes
            # of a page of prose); a label's hint ("Bearer", "-----BEGIN") anywhere.
            where = lowered if kind in _CONTEXT_HINTED else runs
            if not any(h in where if isinstance(h, str) else h.search(text) for h in hints):
                continue
            for m in pattern.finditer(text):
                yield Finding(kind, m.group(group), m.start(group), m.end(group))
    if "://" in text:
        for m in _URL_PASSWORD_RE.finditer(text):
            if not _PLACEHOLDER_RE.match(m.group(1)):
                yield Finding("password in a URL", m.group(1), m.start(1), m.end(1))
    if _DIGITS_RE.search(text):
        yield from _cards(text)
        yield from _ibans(text)


# --- a secret given in the reply to a question asking for it --------------------------

# Questions about a password that ask for none: "did you change your password?", "is the PIN safe?".
_STATE_WORDS_RE = re.compile(
    r"\b(?:change[ds]?|changing|reset|resets|manager|strong|weak|safe|secure|forg[eo]t\w*|expire[ds]?|update[ds]?|"
    r"use[ds]?|using|work(?:s|ing)?|rules?|polic(?:y|ies)|length|long|requirements?|recover\w*|lost|stolen|leak\w*|"
    r"hack\w*|enable[ds]?|disable[ds]?|setup|set up|protected|lock\w*|share[ds]? it with|"
    r"geändert|vergessen|ändern|changé|oublié|cambiad\w*|olvidad\w*|cambiat\w*|dimenticat\w*|alterad\w*|esquec\w*|"
    r"gewijzigd|vergeten)\b", re.I)
_QUESTION_END_RE = re.compile(r"[^.!?\n]{0,60}?\?")
_FILLERS_RE = re.compile(
    r"(?:(?:yes|yeah|yep|yup|sure|ok|okay|of course|right|so|well|hmm+|um+|uh+|here you go|here it is|here|"
    r"it's|it is|its|it’s|that's|that is|that’s|mine is|it was|the (?:password|pin|code|passcode) is|"
    r"ja|klar|sicher|es ist|das ist|es lautet|oui|bien sûr|c'est|c’est|sí|si|claro|es|sim|é|certo|het is|"
    r"natuurlijk|zeker)(?![\w'’])[\s,:!.\-–—]*)+", re.I)
_SPEAKER_PREFIX_RE = re.compile(r"^[ \t]*(?:[-*>][ \t]+)?(?:\*\*)?[A-Z][\w.'’ -]{0,39}?(?:\*\*)?:[ \t]+")
_SKIPPED_LINE_RE = re.compile(r"^\s*(?:$|<!--.*-->\s*$|---\s*$|#)")


def _asked_label(turn: str) -> str | None:
    """The label a turn asks for ("what's the wifi password?" -> "password"), or None."""
    lowered = turn.lower()
    if "?" not in turn or not any(h in lowered for h in _LABEL_HINTS):
        return None
    scanned = lowered if len(lowered) == len(turn) else turn
    asked = None
    for m in (_LABEL_RE if scanned is lowered else _LABEL_RE_I).finditer(scanned):
        question = _QUESTION_END_RE.match(scanned, m.end())
        if not question or len(question.group(0).split()) > 6:
            continue
        start = max(scanned.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        if _STATE_WORDS_RE.search(scanned, start, question.end()) or _label_at(turn, m):
            continue
        asked = re.sub(r"[ \t]+", " ", m.group(0).lower())
    return asked


def _reply_value(label: str, reply: str) -> tuple[int, int] | None:
    """Where the value a reply gives is, if it gives one."""
    body = _SPEAKER_PREFIX_RE.match(reply)
    pos = body.end() if body else 0
    filler = _FILLERS_RE.match(reply, pos)
    pos = filler.end() if filler else pos
    while pos < len(reply) and reply[pos] in " \t":
        pos += 1
    span = _value_at(reply, pos, "")
    if not span:
        return None
    value = reply[span[0] : span[1]]
    rest = reply[span[1] :].strip(" \t" + _TRAILING)
    if reply[span[1] : span[1] + 1] in ("?", ":") or value.lower() in _REPLY_WORDS or value.lower() in _NOT_VALUES:
        return None
    digits = sum(c.isdigit() for c in value)
    if label in _NUMERIC_LABELS:
        ok = bool(re.fullmatch(r"\d(?:[\d -]*\d)?", value)) and 4 <= digits <= 12
        return span if ok and len(rest.split()) <= 12 else None
    if len(value) < 4 or _PLACEHOLDER_RE.match(value) or _VERSION_RE.match(value):
        return None
    shaped = (digits and any(c.isalpha() for c in value)) or (
        any(not c.isalnum() and c not in "'’-" for c in value) and any(c.isalpha() for c in value)) or (
        any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))
    if shaped and len(value) >= 6:
        return span if len(rest.split()) <= 12 else None
    return span if not rest and _plain(value) and len(value) >= 4 else None


def find_replies(turns: Sequence[str]) -> list[tuple[int, Finding]]:
    """Secrets given in reply to a question asking for them: (index of the reply turn, finding in it).

    ``turns`` are consecutive turns of one conversation (or lines of one text); a turn that asks
    for a password, PIN or code ("what's your password?", "Wie lautet die PIN?") makes the value
    the next turn gives ("hunter2x!", "Sure, it's 7345") a secret of that kind.
    """
    out = []
    for i in range(1, len(turns)):
        label = _asked_label(turns[i - 1]) if "?" in turns[i - 1] else None
        if label:
            span = _reply_value(label, turns[i])
            if span:
                out.append((i, Finding(f"{label} (a reply)", turns[i][span[0] : span[1]], *span)))
    return out


def _line_replies(text: str) -> Iterable[Finding]:
    """:func:`find_replies` over the lines of one text (blank lines, part markers and headings skipped)."""
    turns: list[tuple[int, str]] = []
    offset = 0
    if text.startswith("---\n"):  # a record's or a source's front matter holds no turns
        offset = text.find("\n---\n", 3) + 5 if "\n---\n" in text else 0
    for line in text[offset:].split("\n"):
        if not _SKIPPED_LINE_RE.match(line):
            turns.append((offset, line))
        offset += len(line) + 1
    for i, f in find_replies([line for _, line in turns]):
        start = turns[i][0]
        yield Finding(f.kind, f.value, start + f.start, start + f.end)


# --- all of them --------------------------------------------------------------------


def find(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, without overlaps (a token shape wins over a label)."""
    if not text:
        return []
    lowered = text.lower()
    candidates = sorted(_shapes(text, lowered), key=lambda f: (f.start, -(f.end - f.start)))
    candidates += sorted(_labelled(text, lowered), key=lambda f: (f.start, -(f.end - f.start)))
    if "\n" in text and "?" in text:
        candidates += _line_replies(text)
    kept = [(m.start(), m.end()) for m in _POINTER_RE.finditer(text)] if _POINTER_PREFIX in text else []
    out: list[Finding] = []
    for f in candidates:
        if f.end <= f.start or _POINTER_PREFIX in f.value:
            continue
        if any(f.start < end and start < f.end for start, end in kept):
            continue
        kept.append((f.start, f.end))
        out.append(f)
    return sorted(out, key=lambda f: f.start)


def blind(text: str, digest: "Callable[[str], str]") -> str:
    """``text`` with every secret replaced by ``digest(secret)``: what an id is hashed from.

    A plain hash of text holding a short secret (a four-digit PIN) can be inverted by trying
    every value, so ids hash this instead, with a keyed digest (:func:`memrepo.vault.id_content`).
    Text without secrets comes back unchanged, so its ids stay what they always were.
    """
    return _splice(text, [(f.start, f.end, f"[secret:{digest(f.value)}]") for f in find(text)])


def blind_values(text: str, values: Iterable[str], digest: "Callable[[str], str]") -> str:
    """:func:`blind`, and each of ``values`` wherever it stands in ``text`` as a whole (a value the text
    gives with nothing around it to find it by: a reply to the turn before)."""
    taken: list[tuple[int, int, str]] = []
    for value in sorted({v for v in values if v and v in text}, key=lambda v: (-len(v), v)):
        taken += [(s, e, f"[secret:{digest(value)}]") for s, e in occurrences(text, value)
                  if not any(s < e2 and s2 < e for s2, e2, _ in taken)]
    return blind(_splice(text, taken), digest)


def blind_turns(turns: Sequence[str], digest: "Callable[[str], str]") -> list[str]:
    """:func:`blind` of each turn, and of each value given in reply to a question in the turn before."""
    replies: dict[int, list[Finding]] = {}
    for i, f in find_replies(turns):
        replies.setdefault(i, []).append(f)
    out = []
    for i, turn in enumerate(turns):
        if i in replies:
            turn = _splice(turn, [(f.start, f.end, f"[secret:{digest(f.value)}]") for f in replies[i]])
        out.append(blind(turn, digest))
    return out


# --- redaction ----------------------------------------------------------------------


def _splice(text: str, pieces: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end) replaced by its text; the spans do not overlap."""
    out, last = [], 0
    for start, end, replacement in sorted(pieces):
        out += [text[last:start], replacement]
        last = end
    return "".join(out) + text[last:] if out else text


@lru_cache(maxsize=4096)
def _value_pattern(value: str) -> re.Pattern[str]:
    """``value`` as a whole: not the middle of a longer word or number ("4321" is not in "143210")."""
    head = r"(?<![A-Za-z0-9])" if value[:1].isalnum() else ""
    tail = r"(?![A-Za-z0-9])" if value[-1:].isalnum() else ""
    return re.compile(head + re.escape(value) + tail)


def occurrences(text: str, value: str) -> list[tuple[int, int]]:
    """Where ``value`` stands in ``text`` as a whole (not inside a longer word, number or vault pointer)."""
    if not value or value not in text:
        return []
    pointers = [(m.start(), m.end()) for m in _POINTER_RE.finditer(text)] if _POINTER_PREFIX in text else []
    return [(m.start(), m.end()) for m in _value_pattern(value).finditer(text)
            if not any(m.start() < e and s < m.end() for s, e in pointers)]


def redact(text: str, known: Mapping[str, str] | None = None, *, default: str = POINTER) -> str:
    """``text`` with every secret replaced by a vault pointer, in one pass (a pointer is never redacted again).

    Args:
        known: values already sent to the vault, each with the pointer that replaces it
            (wherever it occurs, labelled or not); the longest values win where two overlap.
        default: the pointer for a secret found here that is not in ``known``.
    """
    if not text:
        return text
    known = known or {}
    taken: list[tuple[int, int, str]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e, _ in taken)

    for value in sorted((v for v in known if v and v in text), key=lambda v: (-len(v), v)):
        taken += [(s, e, known[value]) for s, e in occurrences(text, value) if free(s, e)]
    taken += [(f.start, f.end, known.get(f.value, default)) for f in find(text) if free(f.start, f.end)]
    return _splice(text, taken)


def describe(findings: Iterable[tuple[str, Finding]], limit: int = 5) -> str:
    """A short list of what was found where, never the values: "a GitHub token (ghp_…) in note n1"."""
    items = [f"{f.kind} ({f.masked()}) in {where}" for where, f in findings]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more
