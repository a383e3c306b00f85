"""How well a span of the evidence is of the kind a question asks for (see :mod:`memrepo.read.span`).

:class:`Kind` is what a question asks for (the analyzer's reading of it); :func:`fit` scores one candidate span of a
record against it: a literal of the asked key, an entity of the asked type, a place as specific as asked, an
identifier the question's noun names, or None when the span is of another kind.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from memrepo.nlp import analyzer
from memrepo.nlp import lexicon as lx
from memrepo.nlp.answers import LITERAL_KEYS, answer_type, literal_keys
from memrepo.nlp.questions import MEASURE_NOUNS, PAST_RE, content_terms
from memrepo.read.phrases import bound, described, elided, of_asked, relative
from memrepo.read.readings import URI_RE, after_word, leading_preposition, person_like
from memrepo.read.turns import ADDRESS_RE, Span, Turn, norm, rules

PLACE_ROLES = {"location", "destination", "origin", "place"}

_NAMED_RE = re.compile(r"\b(?:named|called)\s+$", re.I)
_UNIT_RE = re.compile(r"\s?([A-Z]{2,4}|[KMGT]i?B|vCPUs?|cores?|ms)\b")


@dataclass(frozen=True)
class Kind:
    """What a question asks for (a view on the analyzer's reading of it, ``Analyzer.question``): an answer type, the noun
    that names it ("which trail": trail), how specific a place, and whether it asks for the value now."""

    name: str
    head: str = ""
    place: str = ""
    current: str = ""
    past: bool = False  # it asks about the past ("When did ..."): a day, not a schedule's phrase
    when: bool = False  # it opens with "when": a day and an hour said together answer it together
    prep: str = ""  # the preposition it opens with ("For which country ...": for)
    speed: bool = False  # "How fast does the page load?": a duration says how fast


def question_kind(question: str) -> Kind:
    """The kind of value ``question`` asks for."""
    q = analyzer().question(question)
    return Kind(q.asks, q.head, q.place, q.current, bool(PAST_RE.search(question)),
                bool(re.match(r"\s*when\b", question, re.I)), leading_preposition(question),
                bool(re.match(r"\s*how\s+(?:fast|quickly|slow|slowly)\b", question, re.I)))


def fit(span: Span, turn: Turn, kind: Kind, question_terms: set[str]) -> float | None:
    """How well ``span`` is of the asked kind (None: not of that kind)."""
    words = {norm(w) for w in content_terms(span.text)} if span.kind != "identifier" else set()
    if words and words <= question_terms and (span.kind not in LITERAL_KEYS or not re.search(r"\d", span.text)):
        return None  # the span restates the question (a month "Jan" that is the question's Jan too)
    proper = span.text[:1].isupper()
    if span.kind == "command":  # "What command rolls it back?": the command written in the sentence
        return 4.5 if kind.head == "command" else None
    if span.kind == "appositive":  # "Rui the parrot" for "the name of the parrot"
        return 4.0 if kind.name in ("name", "which", "person") else None
    if span.kind == "agent":  # "updated by the incident commander" for "who updates"
        return 3.0 if kind.name == "person" else None
    keys = literal_keys(kind.name)
    if kind.name in ("date", "time") and span.kind == "duration" and not kind.past and relative(span, turn):
        return 0.6  # "expire after 8 hours": a "when" of a rule or a schedule, said from the event before it
    if kind.speed and (span.kind == "duration" or span.kind in ("count", "number") and span.sentence >= 0 and re.match(
            r"\s*(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?)\b",
            turn.sentences[span.sentence][span.start + len(span.text):])):
        return 2.0  # "loads in 1.8 seconds" for "how fast does it load"
    if kind.name == "amount" and kind.head in MEASURE_NOUNS and span.kind not in LITERAL_KEYS \
            and re.search(rf"\b{re.escape(kind.head)}\b", span.text.lower()):
        return 0.3  # "room temperature" for "at what temperature", where no value with a unit says it
    if keys:
        if span.kind not in keys or span.kind == "date" and _beside_a_fuller_date(span, turn):
            return None
        # best first; a date answers "what time" / "when does" only where no time of day does
        score = 1.0 - (0.5 if kind.name == "time" else 0.2) * keys.index(span.kind)
        after = _words_after(span, turn)
        named = bool(kind.head) and (kind.head in span.text.lower() or kind.head in after or {"of", "them"} <= after
                                     or elided(span, turn, kind.head))
        of_x = of_asked(span, turn, question_terms)  # "in batches of 50,000 rows" for "how big were the batches"
        if kind.name == "amount" and span.kind in ("count", "number") and not (named or of_x or unit_after(span, turn)):
            return None  # a bare number is an amount only of the thing the question names ("how much money")
        part = kind.name == "percent" and span.kind in ("count", "number")
        if part and not _PARTITIVE_RE.match(_rest(span, turn)):
            return None  # a share said as a number is a part "of" a whole ("Figma alone is 9,600 of that")
        score += 1.0 if of_x or part else 0.0  # the part, not the whole it is of
        if kind.name == "count" and span.kind in ("measurement", "duration", "price") and kind.head and not named:
            return None  # "within 1 km" counts no restaurants
        return score + (1.5 if named else 0.0)  # "11 students" for "how many students"
    if kind.name == "place":
        return _place_fit(span, turn, kind, proper, question_terms)
    if span.kind == "identifier":  # "the cluster called pay-prod-eu" for "which cluster", "what is it called"
        if _headed(span, turn, kind.head):
            return 4.5
        if kind.name == "name" and span.sentence >= 0 and _NAMED_RE.search(turn.sentences[span.sentence][:span.start]):
            return 4.5  # "A spare controller is named ctl-spare-NNNN"
        if kind.name != "which" or _named_otherwise(span, turn, question_terms):
            return None  # "order W-55102" is an order's name, no card's
        return 1.0  # "errors in invoice/render.py" for "which file"
    entities = answer_type(kind.name).entities
    if entities:
        weight = entities.get(span.kind)
        if weight is None and kind.name == "person" and span.kind == "concept" and person_like(span.text):
            weight = 0.8  # "Sanne de Wit", read as no one's name by the extractor, is written as a person's
        if weight is None or span.kind == "person" and span.text.isupper():
            return None  # "UTC" is nobody
        score = weight + (0.5 if proper else -0.5)
        if kind.name == "name" and span.sentence >= 0 and _NAMED_RE.search(turn.sentences[span.sentence][:span.start]):
            score += 2.5  # "a greyhound named Pixel"
        if kind.name == "name" and not proper:
            return None
        if kind.name == "name" and kind.head and _category(kind.head):
            score += 1.0 if span.kind in _ALIKE.get(_category(kind.head), ()) else -1.5  # a dog's name: no town
        if kind.head and re.search(rf"\b{re.escape(kind.head)}s?\b", span.text.lower()):
            score += 2.5  # "the Yoshida trail" for "which trail"
        return score
    if kind.name == "which":
        if span.kind == "colour":
            return 4.0 if kind.head in ("colour", "color") else None  # "sage green" for "what colour"
        if span.kind == "subject":
            return 3.0  # "search-a is the coordinating node" for "which node"
        if span.kind == "modifier":
            return 2.0  # "the orders table" for "which table"
        if span.kind in ("count", "number") and kind.head in _words_before(span, turn, 1):
            return 3.0  # "version 4.3" for "which version"
        if span.kind in LITERAL_KEYS or span.text.isupper() and " " in span.text:
            return None  # no literal, no "ALTER TABLE" for "which table"
        if re.search(r"\d", span.text) and _named_otherwise(span, turn, question_terms):
            return None  # "order W-55102", typed a name, is still an order's
        low = span.text.lower()
        score = 0.0
        if kind.head and re.search(rf"\b{re.escape(kind.head)}s?\b", low):
            score += 1.5
        if _category(kind.head) == span.kind:
            score += 1.0
        score += 1.0 if proper and bound(span, turn, question_terms - {kind.head}) else 0.0  # "I chose Nordlicht"
        return None if score == 0.0 else score + (0.5 if proper else 0.0)  # "a Pasmo card" for "what card"
    return None


# Entity types a name of a category may have been typed as ("Pimenta" the beagle typed a person).
_ALIKE = {"animal": ("animal", "person"), "person": ("person",), "location": ("location", "organization"),
          "organization": ("organization", "location"), "work": ("work",), "event": ("event",), "object": ("object",)}


def _beside_a_fuller_date(span: Span, turn: Turn) -> bool:
    """"Saturday" in "on Saturday 28 March": the date beside it says the day."""
    if span.sentence < 0 or re.search(r"\d", span.text):
        return False
    end = span.start + len(span.text)
    return any(o.kind == "date" and o.sentence == span.sentence and re.search(r"\d", o.text)
               and (0 <= o.start - end <= 2 or 0 <= span.start - (o.start + len(o.text)) <= 2) for o in turn.spans)


def _place_fit(span: Span, turn: Turn, kind: Kind, proper: bool, terms: set[str]) -> float | None:
    """A place of the level asked: a street address for "which street" (and first for a bare "where"), no
    street for "which city"; a place named in a place role or after "in", "near", ... is a place too."""
    if span.kind == "address":
        return {"address": 4.0, "": 3.0}.get(kind.place)
    if span.kind == "identifier":  # "in region eu-west-1", "in the eu-west-1 region"
        if not kind.place and URI_RE.fullmatch(span.text):
            return 4.0  # a bare "where" of data: the bucket's or the page's address
        return 4.5 if _headed(span, turn, kind.head) else None
    if span.kind in LITERAL_KEYS:
        return None
    weight = answer_type("place").entities.get(span.kind)
    placed = any(r in PLACE_ROLES for r in span.roles)
    if weight is None and (placed or _after_place_preposition(span, turn) or after_word(span, turn, kind.prep)):
        weight = 0.6 if placed or proper else 0.4  # "on the windowsill above the canal"
    tied = proper and bound(span, turn, terms - {kind.head})  # "I booked Osteria Nonna Pia", whatever its type
    weight = 0.8 if weight is None and tied else weight
    if weight is None or described(span, turn) or kind.place not in ("", "address") and ADDRESS_RE.search(span.text):
        return None  # a description, or a street ("Kestrel Lane") for a city
    score = weight + (0.5 if proper else -0.5) + (0.5 if placed else 0.0) + (1.0 if tied else 0.0)
    if kind.head and re.search(rf"\b{re.escape(kind.head)}s?\b", span.text.lower()):
        score += 2.5  # "the Yoshida trail" for "which trail"
    return score - (1.0 if kind.place == "address" else 0.0)


def _headed(span: Span, turn: Turn, head: str) -> bool:
    """The question's noun names the span: just before it, or before "called", "named", "is" or a colon ("region
    eu-west-1", "a cluster called pay-prod-eu", "host: db-2"), or just after it ("the eu-west-1 region"); not
    across a preposition ("the orders table on db-stage-2": where the table is, not the table)."""
    if not head or span.sentence < 0:
        return False
    before = turn.sentences[span.sentence][:max(0, span.start)]
    return bool(re.search(rf"\b{re.escape(head)}(?:s|es)?\s*(?::|=|\s(?:called|named|is|was))?\s*$", before, re.I)) \
        or head in _words_after(span, turn, 1)


_PARTITIVE_RE = re.compile(r"\s+of\s+(?:that|this|it|them|those|these|the|our|their|its|all)\b", re.I)


def _rest(span: Span, turn: Turn) -> str:
    """The words of the sentence after ``span``."""
    return turn.sentences[span.sentence][span.start + len(span.text):] if span.sentence >= 0 else ""


def _words_after(span: Span, turn: Turn, n: int = 3) -> set[str]:
    """The singular forms of the ``n`` words after ``span`` in its sentence, up to the next number ("2 shelves
    in": shelf, in; "800 to 2,500 testers": to)."""
    if span.sentence < 0:
        return set()
    rest = re.split(r"\d", turn.sentences[span.sentence][span.start + len(span.text):], maxsplit=1)[0]
    return {rules().singular(w) for w in re.findall(r"[a-z]+", rest.lower())[:n]}


def _words_before(span: Span, turn: Turn, n: int = 2) -> set[str]:
    """The singular forms of the ``n`` words before ``span``, back to a comma or a number ("version: 2.8.1,
    cluster: stg-eu-1": cluster)."""
    if span.sentence < 0:
        return set()
    before = re.split(r"[,;\d]", turn.sentences[span.sentence][:span.start])[-1]
    return {rules().singular(w) for w in re.findall(r"[a-z]+", before.lower())[-n:]}


def unit_after(span: Span, turn: Turn) -> str:
    """The unit written after a bare number ("64 GB", "3 vCPUs"), or ""."""
    if span.sentence < 0 or span.kind not in ("count", "number"):
        return ""
    m = _UNIT_RE.match(turn.sentences[span.sentence][span.start + len(span.text):])
    return m.group(1) if m else ""


def _named_otherwise(span: Span, turn: Turn, question_terms: set[str]) -> bool:
    """A name right after a common noun the question does not say is a name of that noun's kind ("order
    W-55102" names no card); after a preposition, a verb, an article or a possessive it is of no kind said."""
    if span.sentence < 0:
        return False
    m = re.search(r"(?:([A-Za-z]+)\s+)?([A-Za-z]+)(['’]s)?\s+$", turn.sentences[span.sentence][:max(0, span.start)])
    if m is None or m.group(3):
        return False
    word, previous = m.group(2).lower(), (m.group(1) or "").lower()
    function = lx.PREPOSITIONS | lx.DETERMINERS | lx.CONJUNCTIONS | lx.PRONOUNS
    if word in function or norm(word) in question_terms or word.endswith(("ed", "ing")) \
            or word in ("is", "are", "was", "were", "be", "called", "named"):
        return False
    # a word that may be a verb is a noun after an article or a preposition ("for order W-55102")
    return rules().lemma(word) not in lx.VERBS or previous in lx.PREPOSITIONS | lx.DETERMINERS


def _after_place_preposition(span: Span, turn: Turn) -> bool:
    """"near Ueno", "in Porto": a name after a preposition of place."""
    if span.sentence < 0:
        return False
    before = turn.sentences[span.sentence][:span.start]
    return bool(re.search(r"\b(?:in|at|on|near|from|to|around|outside|inside|beside|under|above|behind)\s+(?:the\s+)?$",
                          before, re.I))


def _category(head: str) -> str:
    if head in lx.ORG_SUFFIXES:
        return "organization"
    for nouns, type_ in ((lx.PERSON_NOUNS, "person"), (lx.ANIMALS, "animal"), (lx.PLACE_NOUNS, "location"),
                         (lx.EVENT_NOUNS, "event"), (lx.WORK_NOUNS, "work"), (lx.OBJECT_NOUNS, "object")):
        if head in nouns:
            return type_
    return ""
