"""Word forms: the one singularizer, the one number-word table, verb lemmas and the anchor key.

Rules, not a model: a lemma comes from the lexicon's irregular forms and verbs, then from
suffix and spelling rules (:func:`lemma`); a plural from its ending (:func:`singular`). The
anchor key κ (:func:`kappa`, DESIGN.md §3) is built from them here so that the graph's
admission gate (``memrepo/graph/kappa.py``) and the rules key a name the same way.
"""

from __future__ import annotations

import functools
import re

from memrepo.nlp import lexicon as lx
from memrepo.nlp.tokens import Tok

# --- numbers ----------------------------------------------------------------------------------

#: The one number-word table: word -> value.
NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "thousand": 1000, "dozen": 12, "couple": 2,
}
# Quantities said in words that no table entry holds: "a", "half a", "a couple of", "a few".
_VAGUE_QUANTITIES = {"a": 1.0, "an": 1.0, "a couple of": 2.0, "a few": 3.0, "several": 3.0}


def number(text: str | None) -> float | None:
    """The value of a quantity in digits or words (``"12"``, ``"1,200"``, ``"seven"``, ``"half an"``), or None."""
    if text is None:
        return None
    low = text.lower().strip()
    if low in NUMBER_WORDS:
        return float(NUMBER_WORDS[low])
    if low in _VAGUE_QUANTITIES:
        return _VAGUE_QUANTITIES[low]
    if low.startswith("half"):
        return 0.5
    try:
        return float(low.replace(",", ""))
    except ValueError:
        return None


def format_number(n: float | None) -> str:
    """``3.0`` -> ``"3"``, ``2.5`` -> ``"2.5"``, None -> ``""``."""
    if n is None:
        return ""
    return str(int(n)) if float(n).is_integer() else str(n)


# --- plurals and the anchor key -----------------------------------------------------------------

FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for"})
_PUNCT_RE = re.compile(r"[^\w]+", re.UNICODE)
# Endings that are never plural markers on their own.
_KEEP_S = ("ss", "us", "is", "ous", "ics", "ness")
_IRREGULAR_PLURALS = {
    "children": "child", "people": "person", "women": "woman", "men": "man", "feet": "foot",
    "teeth": "tooth", "mice": "mouse", "geese": "goose",
    # The nouns whose -f/-fe becomes -ves; every other -ves plural only drops its s (moves, gloves,
    # drives, olives, archives, valves). "lives" and "leaves" are left out: far more often the verb.
    "shelves": "shelf", "knives": "knife", "wives": "wife",
    "wolves": "wolf", "halves": "half", "calves": "calf", "loaves": "loaf", "thieves": "thief",
    "selves": "self", "elves": "elf", "scarves": "scarf", "hooves": "hoof", "sheaves": "sheaf",
}


def singular(token: str) -> str:
    """Conservative singular of one lowercase token: only plural endings change, short tokens never do.

    ``apps`` -> ``app``, ``cities`` -> ``city``, ``boxes`` -> ``box``; ``trains`` -> ``train``
    but ``training`` stays, ``glass`` and ``status`` stay.
    """
    if len(token) < 4 or not token.isalpha():
        return token
    if token in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[token]
    if token.endswith(_KEEP_S) or not token.endswith("s"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return token[:-2]
    return token[:-1]


def key_tokens(name: str) -> list[str]:
    """The unsorted key tokens of ``name`` (lowercased, function words dropped, singularized)."""
    words = _PUNCT_RE.sub(" ", name.lower().replace("_", " ")).split()
    out = []
    for word in words:
        if word in FUNCTION_WORDS:
            continue
        single = singular(word)
        if single not in FUNCTION_WORDS:  # "ands" -> "and" must not survive as a token
            out.append(single)
    return out


@functools.lru_cache(maxsize=1 << 16)  # pure; the canonicalization registry asks it for every anchor name per write
def kappa(name: str) -> str:
    """The anchor key κ(n): lowercase, no punctuation or function words, singular, sorted tokens.

    >>> kappa("Mobile Apps") == kappa("the mobile app")
    True
    >>> kappa("10 Gallons") == kappa("20 Gallons")
    False
    """
    return " ".join(sorted(key_tokens(name)))


# --- verbs ------------------------------------------------------------------------------------


def _known_verb(word: str) -> bool:
    return word in lx.VERBS or word in lx.REPORTING or word in lx.CONTROL


@functools.lru_cache(maxsize=16384)
def lemma(word: str) -> str:
    """The lemma of a verb form (``bought`` -> ``buy``, ``stopped`` -> ``stop``), by table and suffix rules."""
    w = word.lower()
    if w in lx.IRREGULAR:
        return lx.IRREGULAR[w]
    if w in lx.VERBS or w in lx.REPORTING:
        return w
    for suffix in ("ied", "ies"):
        if w.endswith(suffix) and len(w) > 4:
            return w[:-2] if w[:-2] in lx.VERBS and w[:-3] + "y" not in lx.VERBS else w[:-3] + "y"  # skied: ski
    if w.endswith("eed") and w[:-1] not in lx.VERBS:  # succeed, indeed, need: not an -ed form
        return w
    for suffix in ("ed", "ing", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            found = _strip_suffix(w, suffix)
            if found is not None:
                return found
    return w


def _strip_suffix(w: str, suffix: str) -> str | None:
    """The lemma of ``w`` without its inflection ``suffix`` (``-ed``, ``-ing``, ``-es``, ``-s``); None: an
    ``-es`` that is no inflection of its own ("tunes"), read as ``-s`` next."""
    stem = w[: -len(suffix)]
    if suffix in ("ed", "ing") and not re.search("[aeiouy]", stem):
        return w  # thing, bring, shed: no vowel is left for a stem
    doubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None
    for cand in (stem, stem + "e", doubled):
        if cand and _known_verb(cand):
            return cand
    if suffix == "ed" and len(stem) == 2:
        return stem + "e"  # dyed, owed, eyed, aged: a two-letter stem kept its e (shed, need: above)
    if suffix in ("ed", "ing"):
        if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":  # stopped; not added
            return stem[:-1]
        return stem + "e" if lost_e(stem) else stem
    if suffix == "es" and stem.endswith(("sh", "ch", "x", "ss", "o")):
        return stem
    if suffix == "s":
        return w if w.endswith(("ss", "us", "is")) else stem  # "dress", "focus" are not plurals
    return None


_VOWELS = "aeiou"


def lost_e(stem: str) -> bool:
    """True if an -ed/-ing stem of a verb the lexicon does not know dropped a final e: spelling rules, not a
    word list ("sourc" -> source, "recharg" -> recharge, "achiev" -> achieve, "handl" -> handle, "hik" -> hike)."""
    stem = stem.rsplit("-", 1)[-1]  # color-coded: the last part
    if len(stem) < 2:
        return False
    last, before = stem[-1], stem[-2]
    if last in "vu" or last == "c":  # English verbs do not end in v, u or c (panic -> panicked)
        return True
    if last == "g":  # charge, judge, arrange; not sing, bring, long
        return before not in _VOWELS and before != "n" or stem.endswith(("ang", "eng", "ung")) and len(stem) > 4
    if last == "z":  # realize, organize; not buzz
        return before in _VOWELS
    if last == "l":  # handle, struggle, settle; not curl, travel
        return before not in _VOWELS + "lrw"
    if last == "r" and before in "iu" and len(stem) > 2 and stem[-3] not in "ao":  # inspire, acquire, figure;
        return True  # not repair, pour
    if last == "s":  # rehearse, collapse, revise, promise, refuse; not kiss, pass
        return before != "s"
    if last == "n" and before == "i" and len(stem) > 4 and stem[-3] not in _VOWELS:  # combine, examine; not join
        return True
    if stem.endswith(("com", "cit")):  # overcome, welcome, excite, invite (visit, edit keep theirs)
        return True
    if stem.endswith("at") and len(stem) > 4 and stem[-3] not in _VOWELS:  # celebrate, motivate; not treat
        return True
    # One syllable, a single vowel before a single consonant: had the verb ended there, its consonant would
    # have doubled (shop -> shopping), so the base has a silent e (hike, share, vote, use). The u of "qu"
    # spells a consonant (quote, square).
    groups = re.findall(f"[{_VOWELS}]+", stem.replace("qu", "qw"))
    return (len(groups) == 1 and len(groups[0]) == 1 and stem.endswith(groups[0] + last)
            and last not in _VOWELS + "wxy")


def predicate_for(word: str) -> str:
    """The canonical predicate the rules give a verb form (``bought`` -> ``buy``, ``went`` -> ``travel``).

    The read path maps the verbs of a question to predicate families with it.
    """
    return lx.predicate_of(lemma(word.lower()))


def common_word(w: str) -> bool:
    """A word of a closed class, a verb or an evaluative word: capitalized only because it opens a sentence."""
    return (w in lx.PRONOUNS or w in lx.DETERMINERS or w in lx.PREPOSITIONS or w in lx.CONJUNCTIONS
            or w in lx.AUXILIARIES or w in lx.ADVERBS or w in lx.INTERJECTIONS or w in lx.EVALUATIVE
            or w in lx.VERBS or w in lx.IRREGULAR or lemma(w) in lx.VERBS or lemma(w) in lx.REPORTING
            or w.endswith("ly")
            or w in lx.QUESTION_WORDS or w in lx.NEGATIONS)


# --- word-form tests on tokens ------------------------------------------------------------------

# Word classes the hot paths test against, united once (the lexicon's sets never change at run time).
_NOT_VERBS = lx.PRONOUNS | lx.DETERMINERS | (lx.PREPOSITIONS - {"like"}) | lx.CONJUNCTIONS


def is_verb_form(tok: Tok) -> bool:
    """True if ``tok`` looks like an inflected or known verb (not a closed-class word)."""
    if tok.lit is not None or tok.cap and tok.low not in lx.IRREGULAR:
        return False
    w = tok.low
    if w in _NOT_VERBS:
        return False
    if w in lx.IRREGULAR or w in lx.VERBS or w in lx.REPORTING or lemma(w) in lx.REPORTING:
        return True
    if w.endswith(("ed", "ing")) and len(w) > 4 or w.endswith("ed") and len(w) == 4:
        return lemma(w) != w  # not "thing", "indeed", "need", "shed"
    return lemma(w) in lx.VERBS and w != lemma(w)


def third_singular(tok: Tok) -> bool:
    """"takes", "makes", "helps": the verb of a singular subject ("Fixing old clocks takes patience")."""
    w = tok.low
    return (tok.lit is None and w.endswith("s") and not w.endswith("ss") and len(w) > 3
            and (lemma(w) in lx.VERBS or w[:-1] in lx.VERBS) and lemma(w) != w)


def is_past(tok: Tok) -> bool:
    """A past form: listed as irregular, or ending in -ed."""
    return tok.low in lx.PAST_FORMS or (tok.low.endswith("ed") and tok.low not in lx.IRREGULAR)
