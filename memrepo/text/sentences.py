"""Sentence splitting: the one splitter of the writers, the extractor, span answers and views.

Rules, not a model: a sentence ends at ``.``, ``!`` or ``?`` followed by space and a
capital; a title or abbreviation ("Mrs.", "Mt.", "e.g.", "p.m.") does not end one.
"""

from __future__ import annotations

import re

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
