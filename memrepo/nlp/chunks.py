"""Chunks: noun phrases, names and their entity types.

A noun phrase is read from its first token (:func:`parse_np`): determiners and
possessives, a count or value before it, the words of the phrase, then an appositive
("my cousin Ines", "a baker called Rui Alves", "the cluster pay-prod-eu") that makes the
name or identifier the entity and the noun its category. A phrase keeps its compound
nouns and a common noun's possessive whole ("the orders table", "the landlord's office").
A phrase's type comes from its head noun or, for a name, from its words
(:func:`entity_type`) and, when they say nothing, from where it stands
(:func:`settle_name_type`: a place after "in" or "the city of", else a person, as a guess
a later cue overrides).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memrepo.nlp import lexicon as lx
from memrepo.nlp.discourse import Discourse
from memrepo.nlp.literals import Literal
from memrepo.nlp.morphology import common_word, is_verb_form, lemma, singular
from memrepo.nlp.tokens import Tok

_NP_DETERMINERS = lx.DETERMINERS - {"what", "which", "whose", "all", "both"}
_NOT_NP_START = (lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | lx.AUXILIARIES | lx.NEGATIONS | lx.ADVERBS
                 | lx.INTERJECTIONS | lx.IRREGULAR.keys())
_NOT_NP_WORD = (lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | lx.AUXILIARIES | lx.NEGATIONS | lx.ADVERBS
                | lx.DETERMINERS | lx.IRREGULAR.keys())
_CLOSED_CLASSES = lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | lx.AUXILIARIES | lx.NEGATIONS
_PERSONS_AND_ANIMALS = lx.PERSON_NOUNS | lx.ANIMALS
_COUNT_KEYS = frozenset({"count", "number"})
_CARRIED_KEYS = frozenset({"age", "duration", "price", "measurement"})  # values a phrase carries ("a 3-hour hike")


def np_start(tok: Tok) -> bool:
    """Whether a noun phrase may start at ``tok``."""
    if tok.lit is not None:
        return False
    w = tok.low
    if tok.cap:
        return w not in lx.PRONOUNS_SELF and w not in lx.AUXILIARIES and w not in lx.CONJUNCTIONS
    if w in lx.POSSESSIVES or w in _NP_DETERMINERS:
        return True
    if not w.isalpha() and "-" not in w and not alnum_name(w):
        return False
    return w not in _NOT_NP_START


_NAME_MARKS = str.maketrans("", "", "-./_~\u00a0")  # what joins the parts of one name: "db-stage-2", "data/rates"
_PLURAL_AGREEING = lx.MODALS | {"are", "were", "have", "do"}  # "reviews are": only a plural noun comes before these


def alnum_name(word: str) -> bool:
    """A word of a name with digits or joining marks in it: "db-stage-2", "p4.24xlarge", "3rd",
    "scripts/backfill_currency.py" (a letter, and only letters, digits, hyphens, dots, slashes, underscores)."""
    return any(c.isalpha() for c in word) and word.translate(_NAME_MARKS).isalnum()


def identifier_word(tok: Tok) -> bool:
    """A lowercase word that is a name by its form, not a word of English: digits in it ("db-stage-2",
    "eu-west-1"), a path or file ("data/rates"), or three hyphenated parts ("pay-prod-eu"); not "co-op",
    "pool-size" or "3rd"."""
    w = tok.text
    if tok.lit is not None or not w[:1].isalpha() or w[:1].isupper() or not alnum_name(w):
        return False
    return any(c.isdigit() for c in w) or w.count("-") >= 2 or w.translate(_NAME_MARKS) != w.replace("-", "")


@dataclass
class NP:
    """A noun phrase: its name (the words), type, head noun, and what its determiners and values said."""

    name: str
    type: str
    head: str
    possessor: str | None = None
    count: str | None = None
    favorite: bool = False
    person_noun: bool = False
    category: str | None = None  # "cousin" of "my cousin Ines", "baker" of "a baker called Rui Alves"
    determined: bool = False  # it had a determiner or a possessive
    indefinite: bool = False  # "a"/"an": a category ("Ines is a designer")


@dataclass
class _Phrase:
    """The words of a noun phrase while they are read, and what came before them."""

    start: int
    i: int
    words: list[Tok] = field(default_factory=list)
    carried: list[tuple[str, str]] = field(default_factory=list)
    possessor: str | None = None
    count: str | None = None
    favorite: bool = False
    determined: bool = False
    indefinite: bool = False
    subject: bool = False  # the clause's subject (before its verb), not an object or a prepositional phrase


def parse_np(ctx: Discourse, toks: list[Tok], i: int, lits: list[Literal],
             gerund: bool = False, subject: bool = False) -> tuple[NP | None, int, list[tuple[str, str]]]:
    """Parse the noun phrase starting at ``toks[i]``; returns it, the next index and literals it carried.

    Args:
        gerund: an ``-ing`` word may head the phrase ("into baking", "love sketching").
        subject: the phrase is the clause's subject: an -s word after its noun is the verb ("the dog sleeps").
    """
    p = _Phrase(start=i, i=i, subject=subject)
    _read_words(ctx, toks, lits, p, gerund)
    n, i, words = len(toks), p.i, p.words
    category: str | None = None
    # Appositive: "my cousin Ines", "a retired nurse named Mrs. Costa", "a baker called Rui Alves".
    cap_tail = 0
    while cap_tail < len(words) and words[len(words) - 1 - cap_tail].cap:
        cap_tail += 1
    if 0 < cap_tail < len(words) and singular(words[len(words) - cap_tail - 1].low) in _PERSONS_AND_ANIMALS:
        category = " ".join(t.low for t in words[: len(words) - cap_tail] if t.low not in lx.EVALUATIVE) or None
        words = words[len(words) - cap_tail:]
    elif p.determined and len(words) > 1 and identifier_word(words[-1]) and not words[-2].cap \
            and not identifier_word(words[-2]):
        # "the cluster pay-prod-eu", "the read replica db-prod-1-replica": the identifier is the entity (the
        # noun has a determiner, as an appositive's has; "aws rds modify-db-instance" is one command).
        category = " ".join(t.low for t in words[:-1] if t.low not in lx.EVALUATIVE) or None
        words = words[-1:]
    elif i + 1 < n and toks[i].low in lx.NAMING_WORDS and toks[i + 1].cap and words:
        named = _named(ctx, toks, lits, p)
        if named is not None:
            return named
    words = _without_judgements(words)
    if not words:
        return None, max(i, p.start + 1), p.carried
    if _gerund_before_phrase(toks, i, words, p.determined):
        inner, j, more = parse_np(ctx, toks, i, lits)
        if inner is not None:
            return inner, j, p.carried + more  # "about restoring my old boat" -> the boat
    if len(words) == 1 and not words[0].cap and not p.determined and p.possessor is None and p.count is None \
            and is_adjective(words[0].low):
        return None, i, p.carried  # "I am ready", "she is young": a quality, not an entity
    return _phrase(ctx, toks, words, category, p), i, p.carried


def _read_words(ctx: Discourse, toks: list[Tok], lits: list[Literal], p: _Phrase, gerund: bool) -> None:
    """Read the phrase's determiners, values and words into ``p``, up to the first token that is none."""
    n = len(toks)
    while p.i < n:
        tok = toks[p.i]
        if tok.lit is not None:
            if not _value(lits[tok.lit], p):
                break
        elif not _determiner(ctx, toks, p) and not _region_comma(ctx, toks, p) and not _word(toks, p, gerund):
            break
        p.i += 1


def _value(lit: Literal, p: _Phrase) -> bool:
    """A count or value before the words ("two tickets", "a 3-hour hike"); False: the phrase ends here."""
    if p.words:
        return False
    if lit.key in _COUNT_KEYS:
        p.count = lit.value
        p.carried.append(("count", lit.value))
        return True
    if lit.key in _CARRIED_KEYS:
        p.carried.append((lit.key, lit.value))
        return True
    return False


def _determiner(ctx: Discourse, toks: list[Tok], p: _Phrase) -> bool:
    """A possessive, determiner or "'s" read into ``p``; False: none of them."""
    tok = toks[p.i]
    w = tok.low
    if not p.words and w in lx.POSSESSIVES:
        p.possessor = ctx.resolve(w)
        p.determined = True
        return True
    if not p.words and w in lx.DETERMINERS:
        p.determined = True
        p.indefinite = p.indefinite or w in lx.INDEFINITE_DETERMINERS
        return True
    if w == "'s" and p.words:
        if not p.words[-1].cap:
            # "the landlord's office", "my sister's dog": a common noun's possession is one phrase (whose the
            # noun says; the owner is not the speaker of "my"); "the kettle's broken" ends at the noun.
            nxt = toks[p.i + 1] if p.i + 1 < len(toks) else None
            if nxt is None or not (nxt.cap or np_word(toks, p.i + 1, True, determiner="'s")):
                return False
            mark = "'" if p.words[-1].low.endswith("s") else "'s"  # "the clubs' reports", "the landlord's office"
            p.words[-1] = Tok(p.words[-1].text + mark, p.words[-1].low + mark)
            p.possessor = None
            return True
        # "Ana's bike", "draining Herald's queue": the name before it is the possessor.
        first = len(p.words)
        while first > 0 and p.words[first - 1].cap:
            first -= 1
        p.possessor = ctx.entity(" ".join(t.text for t in p.words[first:]), "person")
        p.words = []
        return True
    return False


def _region_comma(ctx: Discourse, toks: list[Tok], p: _Phrase) -> bool:
    """"in Paris, Texas": a place after a place preposition, a comma and one name that ends the clause is one
    name (the comma kept on the word before it); not a list ("Lisbon, Porto and Faro"), not the person spoken
    to ("to Paris, Ben!"), not a clause ("In Paris, Ana met ...")."""
    i, words = p.i, p.words
    if toks[i].text != "," or not words or not all(t.cap for t in words) or words[-1].text.endswith(","):
        return False
    if p.start == 0 or toks[p.start - 1].low not in lx.PLACE_PREPOSITIONS or i + 1 >= len(toks):
        return False
    region = toks[i + 1]
    after = toks[i + 2] if i + 2 < len(toks) else None
    if not region.cap or region.text in ctx.participants or region.text == ctx.actor or region.low in lx.PRONOUNS:
        return False
    if after is not None and (after.cap or after.lit is None and after.text not in ".?!,;" and after.low not in
                              lx.PREPOSITIONS or after.low in lx.CONJUNCTIONS):
        return False
    if after is not None and after.text == "," and i + 3 < len(toks) and toks[i + 3].low in lx.CONJUNCTIONS:
        return False  # "Lisbon, Porto, and Faro"
    words[-1] = Tok(words[-1].text + ",", words[-1].low + ",")
    return True


def _word(toks: list[Tok], p: _Phrase, gerund: bool) -> bool:
    """Whether ``toks[p.i]`` is a word of the phrase (appended to ``p.words``; "favorite" is noted instead)."""
    tok, w, words, i, n = toks[p.i], toks[p.i].low, p.words, p.i, len(toks)
    if tok.cap and w not in lx.PRONOUNS_SELF and (w not in lx.AUXILIARIES or i == p.start):
        words.append(tok)
        return True
    if words and words[-1].cap and i + 1 < n and toks[i + 1].cap and (
            w in lx.NAME_JOINERS
            or (w in lx.NAME_AND and any(t.low in lx.ORG_JOINERS or singular(t.low) in lx.ORG_SUFFIXES for t in words))):
        words.append(tok)
        return True
    if w in lx.FAVORITE and (not words or words[-1].low.endswith("'s")):
        p.favorite = True
        return True
    nxt = toks[i + 1] if i + 1 < n else None
    if words and words[-1].cap and not tok.cap and is_verb_form(tok) and (
            w.endswith(("ing", "ed")) or w in lx.IRREGULAR or lemma(w) in lx.REPORTING
            or (w.endswith("s") and lemma(w) != w)) and not _modifies(p, w, nxt):
        return False  # "Porto starting in June", "Rui moved": a verb after a name is not part of it
    before = toks[p.start - 1].low if p.start > 0 else None
    # After its verb ("orders the library books for"), not after a reporting verb ("I think the dog sleeps") or
    # a preposition or conjunction ("before the week starts"): a clause may follow those.
    in_object = p.determined and bool(words) and not p.subject and before is not None and before.isalpha() \
        and before not in _CLOSED_CLASSES and lemma(before) not in lx.REPORTING
    determiner = toks[i - 1].low if p.determined and not words and i > 0 else None
    if not np_word(toks, i, (p.determined or gerund) and not words, in_object, determiner):
        return False
    words.append(tok)
    return True


def _modifies(p: _Phrase, w: str, nxt: Tok | None) -> bool:
    """A verb-like word after a name that is a noun of the phrase: "the Lindenhof housing co-op" (after a
    determiner, an -ing word before a noun), "Security reviews are" (an -s word before a plural verb)."""
    if nxt is None:
        return False
    if w.endswith("s") and nxt.low in _PLURAL_AGREEING:
        return True
    return p.determined and w.endswith("ing") and _noun_next(nxt, lower=True)


def _named(ctx: Discourse, toks: list[Tok], lits: list[Literal], p: _Phrase) -> tuple[NP, int, list[tuple[str, str]]] | None:
    """"a baker called Rui Alves": the name is the entity, typed by the noun before it when that says more."""
    name_np, j, _ = parse_np(ctx, toks, p.i + 1, lits)
    if name_np is None:
        return None
    words = p.words
    category = " ".join(t.text if t.cap else t.low for t in words if t.low not in lx.EVALUATIVE) or None
    head = singular(words[-1].low)
    base = entity_type(words, head, ctx)
    name_type = base if base not in lx.UNSETTLED_TYPES else name_np.type
    return NP(name_np.name, name_type, head, p.possessor, p.count, p.favorite, False, category), j, p.carried


def _without_judgements(words: list[Tok]) -> list[Tok]:
    """Drop evaluative adjectives at the front ("a tiny noodle bar" -> "noodle bar"); one alone is no phrase."""
    while len(words) > 1 and not words[0].cap and words[0].low in lx.EVALUATIVE:
        words = words[1:]
    if len(words) == 1 and not words[0].cap and words[0].low in lx.EVALUATIVE:
        return []
    return words


def _gerund_before_phrase(toks: list[Tok], i: int, words: list[Tok], determined: bool) -> bool:
    """A lone -ing word before another phrase ("restoring my old boat", "protecting the dunes"): the phrase
    after it is the entity (a determiner ends a phrase, so the words after "the" are read as their own)."""
    if len(words) != 1 or not words[0].low.endswith("ing") or determined or i >= len(toks):
        return False
    return np_start(toks[i]) or toks[i].low in lx.POSSESSIVES


def _phrase(ctx: Discourse, toks: list[Tok], words: list[Tok], category: str | None, p: _Phrase) -> NP:
    """The noun phrase of ``words``, typed by its head, its name or its quotes, and its category."""
    head = singular(words[-1].low)
    name = " ".join(t.text if t.cap else t.low for t in words)
    type_ = entity_type(words, head, ctx)
    if type_ == "name" and p.start > 1 and toks[p.start - 1].low == "of" and \
            singular(toks[p.start - 2].low) in lx.PLACE_NOUNS:
        type_ = "location"  # "the city of Porto", "the summit of Fuji": a place, or a part of one, names a place
    quoted = p.start > 0 and toks[p.start - 1].low in lx.QUOTES_OPEN and words[0].cap
    if quoted and type_ in lx.TITLE_TYPES:
        type_ = "work"  # a quoted title: "The Long Winter", "Salt and Stone"
    if category:
        head = singular(category.split()[-1])
        cat_type = "person" if head in lx.PERSON_NOUNS else ("animal" if head in lx.ANIMALS else type_)
        type_ = cat_type if type_ in ("name", "concept") else type_
    return NP(name, type_, head, p.possessor, p.count, p.favorite, head in lx.PERSON_NOUNS and not words[-1].cap,
              category, p.determined, p.indefinite)


def is_adjective(word: str) -> bool:
    """A word that names a quality: listed, or ending like an adjective (and no object noun)."""
    return word in lx.ADJECTIVES or word in lx.EVALUATIVE or word.endswith(
        lx.PREDICATIVE_SUFFIXES) and word not in lx.OBJECT_NOUNS


def np_word(toks: list[Tok], i: int, inside: bool, in_object: bool = False, determiner: str | None = None) -> bool:
    """Whether ``toks[i]`` may be a word of a noun phrase (``inside``: after a determiner or where a gerund
    may stand, where an -ing form is a noun: "the painting"; ``determiner``: the one right before, after
    which an -ly word is no adverb ("the nightly job") and, unless it is singular, an -s word no verb ("the
    orders table"; not "that feeds Herald"); ``in_object``: after the noun of a determined phrase that follows
    its verb, where an -s word is a plural noun: "orders the library books for")."""
    determined = determiner is not None
    plural_det = determined and determiner not in _SINGULAR_DETERMINERS
    tok = toks[i]
    w = tok.low
    if not (w.isalpha() or alnum_name(w)):  # "db-stage-2", "p4.24xlarge" are words of a name
        return False
    if w in _CLOSED_CLASSES or w in lx.DETERMINERS:  # "Café Lumière every Friday": a determiner starts a phrase
        return False
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if nxt is not None and f"{w} {nxt.low}" in lx.COMPOUND_PREPOSITIONS:
        return False  # "a kettle next to the station"
    if w in lx.ADVERBS and w not in lx.EVALUATIVE and w not in lx.NOUN_ADVERBS:
        return False
    if w in lx.INTERJECTIONS and w not in lx.EVALUATIVE:
        return False
    if w in lx.NAMING_WORDS or (nxt is not None and nxt.low == "by" and (is_verb_form(tok) or w in lx.VERBS)):
        return False
    if w in lx.IRREGULAR and w not in lx.NOUN_LIKE_FORMS:
        return False
    if w.endswith("ly") and len(w) > 4 and w not in lx.LY_NOUNS and not (determined and _noun_next(nxt)):
        return False  # "sadly"; but between a determiner and a noun it is an adjective: "the nightly CI job"
    if w in lx.ING_NOUNS:
        return True
    plural = w.endswith("s") and not w.endswith("ss") and len(w) > 3
    if plural and nxt is not None and not determined and nxt.low in _OBJECT_STARTS:
        return False  # "the agent adds the check": an -s word before an object is the verb
    if plural and nxt is not None and nxt.low in _PLURAL_AGREEING:
        return True  # "security reviews are done": only a noun is followed by a plural verb
    if is_verb_form(tok) and w not in lx.VERBS.keys() - lx.STRONG_VERBS:
        # "cooking class", "running shoes": a verb form inside a phrase only before a noun.
        if w.endswith("ing") and _noun_next(nxt, lower=True) or w.endswith("ed") and nxt is not None \
                and nxt.low.isalpha() and np_word_plain(nxt):
            return True
        # "the painting", "my cooking", "the orders table": no verb follows a determiner; after the verb,
        # "orders the library books for": an object's -s word is its plural noun.
        return inside and w.endswith("ing") or plural and (plural_det or in_object and _phrase_ends(nxt))
    if w in lx.STRONG_VERBS and not inside:
        return False
    return True


_OBJECT_STARTS = lx.DETERMINERS | lx.POSSESSIVES.keys() | lx.OBJECT_PRONOUNS
_SINGULAR_DETERMINERS = frozenset({"a", "an", "another", "this", "that", "every", "each", "either", "neither"})
_PHRASE_END_MARKS = frozenset({",", ".", ";", ":", "!", "?", ")"})


def _phrase_ends(nxt: Tok | None) -> bool:
    """The phrase ends after this word: the sentence, a mark or a preposition follow ("books for the school"; not
    "the choir sounds fun", where a verb's complement follows)."""
    return nxt is None or nxt.low in _PHRASE_END_MARKS or nxt.low in lx.PREPOSITIONS


def _noun_next(nxt: Tok | None, lower: bool = False) -> bool:
    """Whether ``nxt`` may be the noun a modifier stands before: with ``lower`` a lowercase word of no closed
    class ("class" of "cooking class", "co-op"), else also a name and no verb or adjective ("CI", "job")."""
    if nxt is None or nxt.lit is not None or (nxt.cap and lower):
        return False
    if nxt.cap:
        return True
    plain = alnum_name(nxt.low) and nxt.low not in _NOT_NP_WORD
    return plain if lower else plain and not is_verb_form(nxt) and not is_adjective(nxt.low)


def np_word_plain(tok: Tok) -> bool:
    """A lowercase word of no closed class."""
    if tok.cap:
        return False
    w = tok.low
    return w.isalpha() and w not in _NOT_NP_WORD


def entity_type(words: list[Tok], head: str, ctx: Discourse) -> str:
    """person | organization | location | animal | event | work | object | concept, by rule."""
    lows = [singular(t.low) for t in words]
    all_caps = all(t.cap or t.low in lx.NAME_WORDS_IN_CAPS for t in words)
    name = " ".join(" ".join(t.text.split()) for t in words)
    if name in ctx.titles:
        return "work"
    if name in ctx.participants or name == ctx.actor:
        return "person"
    if all_caps:
        return _name_type(lows)
    for nouns, type_ in _HEAD_TYPES:
        if head in nouns:
            return type_
    return "concept"


_HEAD_TYPES = ((lx.PERSON_NOUNS, "person"), (lx.ANIMALS, "animal"), (lx.PLACE_NOUNS, "location"),
               (lx.EVENT_NOUNS, "event"), (lx.WORK_NOUNS, "work"), (lx.OBJECT_NOUNS, "object"))


def _name_type(lows: list[str]) -> str:
    """The type a name's own words say (a title, an organization's or a place's word), else "name"."""
    if lows[0] in lx.PERSON_TITLES:
        return "person"
    if lows[-1] in lx.ORG_SUFFIXES or any(t in lx.ORG_WORDS for t in lows):
        return "organization"
    if lows[0] in lx.PLACE_PREFIXES or lows[-1] in lx.PLACE_SUFFIXES:
        return "location"
    return "name"


def settle_name_type(np: NP, prep: str | None, role: str) -> str:
    """Type of a bare proper name from its position: a place after in/at/from/to, else a person."""
    if np.type != "name":
        return np.type
    if prep in lx.PLACE_PREPOSITIONS:
        return "location"
    if any(ch.isdigit() for ch in np.name):
        return "concept"  # "HTTP 200", "Java 21": no one's name has a number in it
    if len(np.name.split()) > 3:
        return "organization"
    return "person?"  # a guess: a later, stronger cue (a place preposition) overrides it


def state_word(tok: Tok, w: str) -> bool:
    """An adjective after "be": listed, or a word the lexicon does not know as a verb (not an -ing form)."""
    if w in lx.ADJECTIVES or w in lx.EVALUATIVE:
        return True
    if w.endswith("ing") or w in lx.IRREGULAR or w in lx.DETERMINERS or w in lx.PREPOSITIONS or w in lx.PRONOUNS:
        return False
    return np_word_plain(tok) and len(w) > 2


def decap(ctx: Discourse, toks: list[Tok], idx: int) -> None:
    """Lowercase a capitalized sentence-initial word unless it looks like a name."""
    tok = toks[idx]
    if not tok.cap or tok.text in ctx.participants or tok.text == ctx.actor or tok.text in ctx.known_caps:
        return
    w = tok.low
    nxt = toks[idx + 1] if idx + 1 < len(toks) else None
    if common_word(w) and w != "i":
        toks[idx] = Tok(w, w)
        return
    if nxt is not None and nxt.cap:
        return
    if nxt is not None and (nxt.low in lx.AUXILIARIES or is_verb_form(nxt) or nxt.low == "'s"):
        if nxt.low in lx.COPULAS and w.endswith(lx.NOUN_SUFFIXES):
            toks[idx] = Tok(w, w)
        return
    toks[idx] = Tok(w, w)


def mentions_only(ctx: Discourse, toks: list[Tok], lits: list[Literal]) -> None:
    """Register the names of a sentence that asserts nothing (a question) as mentions."""
    i = 0
    while i < len(toks):
        if toks[i].cap and i > 0:
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None:
                ctx.entity(np.name, settle_name_type(np, toks[i - 1].low, "object"))
            i = max(j, i + 1)
        else:
            i += 1


def mention_run(ctx: Discourse, toks: list[Tok], i: int, lits: list[Literal]) -> None:
    """Register every noun phrase of ``toks[i:]`` as a mention (a fragment with no clause)."""
    while i < len(toks):
        if np_start(toks[i]):
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None:
                ctx.entity(np.name, settle_name_type(np, toks[i - 1].low if i else None, "object"))
            i = max(j, i + 1)
        else:
            i += 1
