"""Tokens and sentences: the first stage of every reading.

Rules, not a model. A sentence ends at ``.``, ``!`` or ``?`` followed by space and a
capital; a title or abbreviation ("Mrs.", "Mt.", "e.g.", "p.m.") does not end one
(:func:`split_sentences`, the one splitter of the writers, the extractor, span answers
and views). A token is a word, a mark or a literal's placeholder (:func:`tokenize`):
contractions become two words ("I'm" -> "I", "am"), a possessive "'s" its own token, an identifier one
token ("scripts/backfill_currency.py", "api.example.com", "max_connections": :func:`is_identifier`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memrepo.nlp import lexicon as lx

# --- sentences --------------------------------------------------------------------------------

# Extractor boundary: also after a closing quote (which it drops) and before a digit, for short clauses.
_CLAUSE_END_RE = re.compile(r"(?<=[.!?])[\"”']?\s+(?=[\"“'(]?[A-Z0-9])")
# Writer boundary: a closing quote stays with its sentence and a digit does not start a new one.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_ABBREV_RE = re.compile(r"\b(Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e|a\.m|p\.m)\.", re.I)
_HIDDEN_DOT = "∯"  # stands for an abbreviation's dot while splitting (turned back into "." after)


def split_sentences(text: str, *, keep_quotes: bool = False) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out.

    Args:
        keep_quotes: split as the writers do, who store a sentence as record text: a
            closing quote stays with its sentence ('called "Finding Home." It is...' is
            one sentence) and a sentence never starts with a digit. False splits as the
            extractor does, into shorter pieces for its clause parser: after a closing
            quote too (the quote mark is dropped) and before a digit ("... parts. 25
            minutes on" is two).
    """
    protected = _ABBREV_RE.sub(lambda m: m.group(0)[:-1] + _HIDDEN_DOT, text)
    boundary = _SENTENCE_END_RE if keep_quotes else _CLAUSE_END_RE
    return [s.replace(_HIDDEN_DOT, ".").strip() for s in boundary.split(protected) if s.strip()]


# --- tokens -----------------------------------------------------------------------------------

PLACEHOLDER_BASE = 0xE000  # private-use characters stand for cut-out literals: no pattern matches them
PLACEHOLDER_RE = re.compile("[\ue000-\uefff]")
_PLACEHOLDER_FIRST, _PLACEHOLDER_LAST = "\ue000", "\uefff"
_LETTER = r"[^\W\d_\ue000-\uefff]"  # a letter of any script ("Charité", "Zoë"); not a literal placeholder
# A word starts with a letter: letters, digits, apostrophes, hyphens, "&", a dot before a digit ("db-stage-2",
# "runner-7b", "p4.24xlarge": one name each); an ordinal is one word ("3rd").
_TOKEN_RE = re.compile("[\ue000-\uefff]|"
                       r"[A-Za-z0-9][A-Za-z0-9'’\-&\u00a0]*\u00a0[A-Za-z0-9'’\-&\u00a0]*|"
                       r"\d+(?:st|nd|rd|th)\b|"
                       rf"{_LETTER}(?:{_LETTER}|['’\-&]|\d|\.(?=\d))*\.?|[.,!?;:()\"“”]|\S")


@dataclass(slots=True)
class Tok:
    """One token: its text, lowercased form, and the index of the literal it stands for (if a placeholder)."""

    text: str
    low: str
    lit: int | None = None  # index of a literal placeholder
    cap: bool = field(init=False, compare=False, repr=False)  # a capitalized word (not a placeholder)

    def __post_init__(self) -> None:
        self.cap = self.lit is None and self.text[:1].isupper()


def placeholder(index: int) -> str:
    """The character that stands for the literal ``index`` of a sentence."""
    return chr(PLACEHOLDER_BASE + index)


# An identifier is one token: a path, a file or host name, a snake_case name ("scripts/backfill_currency.py",
# "data/rates", "api.example.com", "max_connections"); is_identifier decides among these candidates.
_IDENTIFIER_CANDIDATE_RE = re.compile(r"(?<![\w/~.\-])(?:~/|\./|/)?[^\W_][\w\-]*(?:[/.][\w\-]+)*/?")
_MAYBE_IDENTIFIER_RE = re.compile(r"\w[/_.]\w|(?<!\S)~?\.?/\w")  # a quick test: most sentences have none
_PATH_ROOTS = ("/", "~/", "./")


def is_identifier(word: str) -> bool:
    """Whether ``word`` is a name written as one identifier: a path ("data/rates", "/etc/hosts"), a file or
    host name ("config.yaml", "api.example.com"), a snake_case name ("max_connections").

    Not an abbreviation ("e.g", "U.S", "Ph.D": one letter after a dot), a number or measure ("3.5kg", "2.8.1":
    no letter first), nor a pair of short words ("and/or", "km/h", "he/she").
    """
    rooted = word.startswith(_PATH_ROOTS)
    core = word.lstrip("~./").rstrip("/")
    if not core or not (core[0].isalpha() or rooted) or not any(ch.isalpha() for ch in core):
        return False
    if "_" in core.strip("_"):
        return True
    parts = core.split("/")
    if len(parts) > 1 and all(parts) and (rooted or len(parts) > 2 or any(len(p) >= 4 or "." in p for p in parts)):
        return True
    dotted = core.split(".")
    return len(dotted) > 1 and all(dotted) and all(len(p) >= 2 for p in dotted[1:])


def tokenize(text: str) -> list[Tok]:
    """The tokens of one sentence (whose literals may already be placeholders, :func:`placeholder`)."""
    text = text.replace("’", "'")
    out: list[Tok] = []
    start = 0
    if _MAYBE_IDENTIFIER_RE.search(text):
        for m in _IDENTIFIER_CANDIDATE_RE.finditer(text):
            if is_identifier(m.group(0)):
                _words(text[start:m.start()], out)
                out.append(Tok(m.group(0), m.group(0).lower()))
                start = m.end() + (text[m.end():m.end() + 2].rstrip() == ".")  # a word's own final dot, as below
    _words(text[start:], out)
    _has_been(out)
    return out


def _words(text: str, out: list[Tok]) -> None:
    """Append the tokens of ``text`` (no identifier in it) to ``out``."""
    for raw in _TOKEN_RE.findall(text):
        if "'" in raw:  # every contraction and possessive has one: the other words are read at once
            out.extend(_word_tokens(raw))
        elif len(raw) == 1 and _PLACEHOLDER_FIRST <= raw <= _PLACEHOLDER_LAST:
            out.append(Tok(raw, raw, ord(raw) - PLACEHOLDER_BASE))
        else:
            word = raw[:-1] if raw.endswith(".") and len(raw) > 1 else raw
            out.append(Tok(word, word.lower()))


def _word_tokens(raw: str) -> list[Tok]:
    """The tokens one matched word becomes: itself, or a stem and its contraction or possessive."""
    if PLACEHOLDER_RE.fullmatch(raw):
        return [Tok(raw, raw, ord(raw) - PLACEHOLDER_BASE)]
    if raw.endswith(".") and len(raw) > 1:
        raw = raw[:-1]
    low = raw.lower()
    if low in lx.SPECIAL_NEGATIONS:
        return [Tok(w, w) for w in lx.SPECIAL_NEGATIONS[low]]
    for suffix, word in lx.CONTRACTIONS.items():
        if low.endswith(suffix) and len(low) > len(suffix):
            stem = raw[: -len(suffix)]
            return [Tok(stem, stem.lower()), Tok(word, word)]
    if low.endswith("'s") and len(low) > 2:
        stem = raw[:-2]
        return [Tok(stem, stem.lower()), Tok("is", "is") if stem.lower() in lx.PRONOUN_IS else Tok("'s", "'s")]
    if low.endswith("'") and len(low) > 1:
        return [Tok(raw[:-1], low[:-1]), Tok("'s", "'s")]
    return [Tok(raw, low)]


def _has_been(toks: list[Tok]) -> None:
    """An "'s" before "been" is "has", not a possessive or "is" ("the garden's been", "it's been a year")."""
    for k in range(1, len(toks) - 1):
        after = toks[k + 2] if toks[k + 1].low in lx.ADVERBS and k + 2 < len(toks) else toks[k + 1]
        if after.low == "been" and (toks[k].text == "'s" or toks[k].text == "is" and toks[k - 1].low in lx.PRONOUN_IS):
            toks[k] = Tok("has", "has")
