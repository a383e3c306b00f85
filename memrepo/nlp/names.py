"""Names compared as names: folded spellings, their words, and geographic titles.

The canonicalization judge (``graph/canon.py``) and the dream's same-entity judge
(``dream/judge.py``) both ask whether two names are one: the same name written
differently (case, accents, spacing, punctuation) or a place named with and without
its geographic title ("Mount Vesuvius" / "Vesuvius"). They ask it here, through the
analyzer, so that both read a name the same way.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Iterable

from memrepo.nlp.lexicon import GEOGRAPHIC_TITLES


@functools.lru_cache(maxsize=1 << 16)  # pure; the registry folds the same names on every write
def name_words(name: str) -> tuple[str, ...]:
    """The words of a name, lowercase, accents and punctuation dropped: "Café-Lumière" -> ("cafe", "lumiere")."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return tuple(re.findall(r"[a-z0-9]+", plain))


def fold(name: str) -> str:
    """One string per way of writing a name: "Menya-Kaiko" and "menya kaiko" fold alike ("menyakaiko")."""
    return "".join(name_words(name))


def geographic_title(name: str) -> tuple[str, str] | None:
    """``(title, bare name)`` of a name that opens with a geographic title and has more ("Mount Fuji":
    ``("mount", "Fuji")``); None for any other name."""
    parts = name.split(None, 1)
    if len(parts) < 2:
        return None
    title = parts[0].lower().rstrip(".")
    return (title, parts[1]) if title in GEOGRAPHIC_TITLES else None


def says_title(title: str, texts: Iterable[str]) -> bool:
    """Whether ``texts`` use a word of what ``title`` names ("climbed", "summit" for a mount; "swam",
    "shore" for a lake): the evidence that a bare name is the titled place."""
    words = GEOGRAPHIC_TITLES.get(title, frozenset())
    return any(word in words for text in texts for word in name_words(str(text)))
