"""The question stage: what a question asks for, how its evidence is gathered, and what it names.

One classifier serves the planner Π(q) (``memrepo/read/plan.py``) and the offline answerer
(``memrepo/read/span.py``). :func:`classify` reads a question into a :class:`Question`:

- ``asks``: the one type of value the answer is (a key of
  :data:`memrepo.nlp.answers.ANSWER_TYPES`): ``person``, ``place``, ``date``, ``time`` (of day),
  ``price``, ``amount``, ``percent`` (a share: "what share of", "what discount", "how much of the
  price"), ``count``, ``duration`` ("how long", "how soon", "the minimum stay"), ``age``, ``frequency``,
  ``email``, ``phone`` ("what number do I call"), ``url``, ``name``, ``which`` (one of the class
  ``head`` names), ``state`` (a current value), ``reason``, ``yesno`` or ``thing``; with
  ``head``, the noun that names the answer ("which trail": trail; "how many shelves": shelf),
  ``place``, how specific a place it asks for (``address``, ``district``, ``city``, ``region``,
  ``country``), and ``current``, whether it asks for the value that holds now (the newest one):
  ``"now"`` when it says so ("now", "current", "still"), ``"present"`` when it asks in the present
  tense with nothing of the past ("How much is the rent?"), else ``""``;
- ``operator``: how the recall gathers the evidence (``single``, ``count``, ``list-union``,
  ``intersection``, ``temporal``), which sets its budgets;
- ``answer_types``: every type the question's words name, and the literal type it asks for (an age, a
  percent, an email; the recall scores frames by them);
- ``names``, ``terms``, ``quoted``, ``direction`` and ``time`` (months, years, before/after):
  the anchors, the content words and the time constraint.

Rules, not a model: the first rule that applies decides, so that the same question always gets
the same reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memrepo.nlp import lexicon as lx
from memrepo.nlp.answers import literal_keys
from memrepo.nlp.morphology import lemma, singular
from memrepo.text.dates import MONTHS
from memrepo.text.stopwords import QUESTION_WORDS, STOPWORDS

OPERATORS = ("single", "count", "list-union", "intersection", "temporal")

_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
_YEAR_RE = re.compile(r"\b(19|20)\d{2}\b")
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_COUNT_RE = re.compile(r"\b(how many|how much|number of|how often|count of|times)\b", re.I)
_PRICE_RE = re.compile(r"\bhow much\b.*\b(cost|pay|paid|spend|spent|price|worth)\b", re.I)
_TEMPORAL_RE = re.compile(
    r"^\s*when\b|\bwhat (year|month|date|day|time|week)\b|\bhow long\b|\bwhich (year|month|day)\b|"
    r"\b(before|after|since|until|first time|last time|how recently|ago)\b", re.I)
_INTERSECTION_RE = re.compile(r"\b(both|in common|same|together|each other|mutual)\b", re.I)
# "share" names what two people have in common only with a joint subject ("What do Ana and Ben share?") or
# a shared attitude ("share a love of", "their shared interests"); sharing with someone, or sharing news
# on a day, is giving or telling.
_SHARE_COMMON_RE = re.compile(r"\b[A-Z][\w'’-]* and [A-Z][\w'’-]* (?:both )?(?:share|shared)\b|"
                              r"\bshared? (?:a |an |the |their |his |her |my |our )?(?:love|passion|interest|"
                              r"interests|fondness|taste|tastes|enthusiasm|dislike|fear|values?|goals?|hobby|"
                              r"hobbies)\b", re.I)
# Nouns that end in -s but are not plurals (a mass noun, a singular): "what news did ..." asks for one thing.
_NOT_PLURAL_RE = re.compile(r"(?:ss|us|is|ics|news|series|species|means|lens|gas)$")
_PLURAL_HEAD_RE = re.compile(r"\bwhich (\w+s)\b|\bwhat (\w+s) (?:has|have|did|does|do)\b", re.I)
_LIST_RE = re.compile(
    r"\b(what (kinds?|types?|sorts?) of|what (are|were) (some|the)|list|"
    r"what activities|what hobbies|what books|what things|what events|what places|what pets|what items|"
    r"in what ways|what are|what were)\b", re.I)
_ROLE_OBJECT_RE = re.compile(r"^\s*(who|whom)\b.*\b(did|does|do|has|have)\b", re.I)
# Words that only join a question's parts: never the noun that names its answer.
_AUX = frozenset({"is", "are", "was", "were", "did", "do", "does", "has", "have", "had", "will", "would", "can",
                  "could", "should", "kind", "kinds", "type", "types", "sort", "sorts", "of", "the", "a", "an",
                  "to", "in", "on"})
_MODALS = frozenset({"may", "might", "must", "shall", "will", "would", "can", "could", "should"})
_YESNO_START = frozenset({"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could",
                          "will", "would", "should", "shall", "may", "might", "must"})
# How specific a place a question asks for, by the noun it names ("which street": an address).
PLACE_LEVELS: dict[str, str] = {
    **dict.fromkeys(("address", "street", "road", "avenue", "lane", "square"), "address"),
    **dict.fromkeys(("neighbourhood", "neighborhood", "district", "area", "quarter", "borough", "suburb"),
                    "district"),
    **dict.fromkeys(("city", "town", "village"), "city"),
    **dict.fromkeys(("country", "nation"), "country"),
    **dict.fromkeys(("state", "province", "region"), "region"),
}
# Nouns and verbs of money: a question that names one asks for a price ("What is the rent?").
MONEY_WORDS = frozenset({"cost", "costs", "price", "prices", "priced", "pay", "paid", "pays", "spend", "spent",
                         "charge", "charged", "charges", "worth", "rent", "fee", "fees", "fare", "salary",
                         "tuition", "deposit", "budget", "budgeted", "quote", "quoted", "bill", "wage", "wages", "money"})
_CURRENT_RE = re.compile(r"\b(now|current|currently|these days|at the moment|still|latest|nowadays|any more|"
                         r"anymore)\b", re.I)
_STATE_RE = re.compile(r"\b(status|state) of\b|^\s*what is the (status|state)\b", re.I)
# "When does the backup run?", "When do we deploy?": a habit or schedule, answered by a time of day.
_HABIT_RE = re.compile(r"^\s*(?:at )?when (?:does|do)\b", re.I)
#: Words of a question about the past ("When did ...", "a year ago").
PAST_RE = re.compile(r"\b(did|was|were|had|ago|last|yesterday|used to)\b", re.I)
# "the name of the dog Ines adopted", "What is Jonas's dog called?": the noun the name is of.
# The noun is the last word before "called": "What is a restored db-main instance named?": instance.
_NAMED_HEAD_RE = re.compile(r"\bname of (?:the |a |an |his |her |their |its |[a-z]+'s )?([a-z]+)|"
                            r"^\s*what (?:is|was|are|were) (?:[\w'-]+ ){0,4}?([a-z]+) (?:called|named)\b")
# "What is the address of ...", "what was her city": the noun after the copula names the answer.
_WHAT_IS_RE = re.compile(r"\b(?:what|which) (?:is|was|are|were) (?:the |its |their |his |her |[a-z]+'s )?"
                         r"()(address|street|city|town|country|neighbourhood|neighborhood|district)\b")
_PRESENT_RE = re.compile(r"^\s*(?:\w+\s+){0,3}?(is|are|does|do|has|have)\b", re.I)


@dataclass(frozen=True)
class Question:
    """What :func:`classify` reads in a question."""

    text: str
    asks: str
    head: str = ""
    place: str = ""
    current: str = ""
    operator: str = "single"
    answer_types: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    quoted: tuple[str, ...] = ()
    direction: str = ""  # "object": it asks for the object of its relation ("who did X ...")
    time: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def words(text: str) -> list[str]:
    """The words of ``text`` (letters, digits, inner apostrophes and hyphens)."""
    return [w.strip("'’-") for w in _WORD_RE.findall(text) if w.strip("'’-")]


def content_terms(text: str) -> list[str]:
    """Lowercase content words of ``text`` (no stopwords, no question words), possessives cut."""
    out = []
    for w in words(text):
        low = re.sub(r"['’]s$", "", w.lower())
        if low and low not in STOPWORDS and low not in QUESTION_WORDS and len(low) > 1:
            out.append(low)
    return out


def names_of(question: str) -> list[str]:
    """Capitalised word runs that are not the question's first word (unless a name there)."""
    names: list[str] = []
    toks = words(question)
    run: list[str] = []
    for i, w in enumerate(toks + [""]):
        capital = bool(w) and w[0].isupper() and (i > 0 or w.lower() not in QUESTION_WORDS | STOPWORDS
                                                   | lx.PREPOSITIONS | {"up"})  # "Above what amount ...?"
        if capital and w.lower() not in STOPWORDS:
            run.append(re.sub(r"['’]s$", "", w))
            continue
        if run:
            names.append(" ".join(run))
            run = []
    return list(dict.fromkeys(names))


def operator_of(question: str, names: list[str] | tuple[str, ...]) -> str:
    """How the recall gathers evidence for ``question`` (one of :data:`OPERATORS`)."""
    q = question.strip()
    if _COUNT_RE.search(q) and not _PRICE_RE.search(q):
        return "count"
    if ((_INTERSECTION_RE.search(q) and (len(names) >= 2 or re.search(r"\bboth\b|\bin common\b", q, re.I)))
            or _SHARE_COMMON_RE.search(q)):
        return "intersection"
    if _TEMPORAL_RE.search(q):
        return "temporal"
    if _LIST_RE.search(q) or any(not _NOT_PLURAL_RE.search((m.group(1) or m.group(2)).lower())
                                 for m in _PLURAL_HEAD_RE.finditer(q)):
        return "list-union"
    return "single"


def answer_types_of(question: str, operator: str) -> list[str]:
    """Every answer type the question's words name (the recall's frame score reads them all)."""
    q = question.lower().strip()
    types = []
    if operator == "count":
        types.append("count")
    if _PRICE_RE.search(q):
        types.append("price")
    if q.startswith("when") or re.search(r"\bwhat (year|month|date|day|time|week)\b", q):
        types.append("date")
    if re.search(r"\bhow long\b", q):
        types.append("duration")
    if q.startswith("where") or re.search(r"\bwhere\b|\bwhat (city|country|place|town|state)\b", q):
        types.append("place")
    if q.startswith(("who ", "whom ")) or re.search(r"\bwho\b", q):
        types.append("person")
    if q.startswith("why"):
        types.append("reason")
    # The one type it asks for, when a literal answers it ("how old": an age; "what discount": a percent).
    # The dates stay with the words above, which the ranking's date boost reads (adding "by when" as a
    # date moved a document passage out of the top 5, measured).
    kind = asked(question).asks
    if literal_keys(kind) and kind not in ("date", "time") and kind not in types:
        types.append(kind)
    if not types:
        types.append("thing")
    return types


def time_of(question: str) -> dict[str, Any]:
    """The months, years and order words ("before", "since", "last", ...) a question names."""
    low = question.lower()
    out: dict[str, Any] = {}
    months = [m for m in MONTHS if re.search(rf"\b{m}\b", low)
              and not (m == "may" and re.search(r"\bmay\s+(i|we|you|he|she|they)\b", low))]
    if months:
        out["months"] = months
    years = [m.group(0) for m in _YEAR_RE.finditer(question)]
    if years:
        out["years"] = years
    for order in ("before", "after", "since", "until", "first", "last", "recently"):
        if re.search(rf"\b{order}\b", low):
            out.setdefault("order", []).append(order)
    return out


# --- what it asks for -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """The type of value a question asks for, the noun that names it, and the level of place."""

    asks: str
    head: str = ""
    place: str = ""


def _next_noun(ws: list[str]) -> str:
    """The noun a quantity question counts: the last word of the phrase after "how many" ("Italian restaurants
    with ...": restaurants; "tennis balls has ...": balls)."""
    phrase: list[str] = []
    for w in ws[:4]:
        if w in _AUX or w in STOPWORDS or w in lx.PREPOSITIONS or w in lx.DETERMINERS or w in _MODALS:
            if phrase:
                break
            continue
        phrase.append(w)
    return phrase[-1] if phrase else ""


def _how_much(q: str, ws: list[str], which: str) -> Asked:
    """"how many X": a count of X; "how much X": a price, an amount of X, or a duration ("how much time")."""
    after = ws[ws.index(which) + 1:] if which in ws else []
    head = _next_noun([w for w in after if not w[:1].isdigit()]) if after and after[0] not in _AUX else ""
    if which == "many":
        return Asked("count", singular(head) if head else "")
    if after[:1] == ["of"] and len(after) > 1 and (after[1] in lx.DETERMINERS or after[1] in lx.POSSESSIVES
                                                    or after[1] in ("it", "them", "this", "that")):
        return Asked("percent")  # "How much of the price is kept?": a part of a whole
    if head in PERCENT_NOUNS:
        return Asked("percent", head)
    if head == "time":
        return Asked("duration")
    if MONEY_WORDS & set(ws):
        return Asked("price", head if head in MONEY_WORDS and head != "money" else "")
    return Asked("amount", singular(head) if head else "")


# Nouns that name a quantity, not a class of things: "what amount" asks how much ("what sum", "what total").
_QUANTITY_NOUNS = frozenset({"amount", "sum", "total", "quantity"})
# Nouns of a part of a whole, said as a percentage ("what share of", "what discount").
PERCENT_NOUNS = frozenset({"share", "percentage", "proportion", "fraction", "percent", "discount", "markup"})
# Nouns of a way to reach someone: the value is an email address, a telephone number or a web address.
CONTACT_NOUNS: dict[str, str] = {
    **dict.fromkeys(("email", "e-mail"), "email"),
    **dict.fromkeys(("phone", "telephone", "hotline", "helpline", "fax", "mobile"), "phone"),
    **dict.fromkeys(("website", "url", "homepage", "webpage"), "url"),
}
# Words of telephoning: "what number" asks for a telephone number when the question says one ("What number do I
# call?", "What number is the breakdown line?").
_PHONING = frozenset({"call", "ring", "dial", "text", "phone", "telephone", "line", "hotline", "helpline", "fax",
                      "mobile", "reach", "contact"})
# Words that ask for a bound ("the minimum rental time", "the maximum load"), and the nouns of a time they bound.
_BOUNDS = frozenset({"minimum", "maximum", "min", "max", "shortest", "longest", "least", "most", "lowest", "highest"})
_SPANS_OF_TIME = frozenset({"time", "duration", "period", "stay", "notice", "wait", "delay", "term", "length", "second",
                            "minute", "hour", "day", "night", "week", "month", "year"})
# Nouns of a measured quantity: "what p99 latency", "which temperature" are answered by an amount with its unit
# or by a phrase that names the quantity ("room temperature").
MEASURE_NOUNS = frozenset({"latency", "temperature", "speed", "weight", "size", "height", "length", "width", "depth",
                           "distance", "capacity", "volume", "pressure", "voltage", "bandwidth", "throughput",
                           "altitude", "elevation", "mileage", "dose", "dosage"})


def _class_of(head: str, ws: list[str]) -> Asked:
    """"which X" / "what X": a place, a person, a price, an amount or a time when X names one; else one of the
    class X."""
    head = singular(head)
    typed = _typed_noun(head, ws)
    if typed is not None:
        return typed
    if head in PLACE_LEVELS or head in lx.PLACE_NOUNS and head not in lx.ORG_SUFFIXES:
        return Asked("place", head, PLACE_LEVELS.get(head, ""))
    if head in lx.PERSON_NOUNS:
        return Asked("person", head)
    if head in MONEY_WORDS:
        return Asked("price", head)
    if head in _QUANTITY_NOUNS:  # of money when a word of money says so ("what amount of spending")
        return Asked("price" if MONEY_WORDS & {lemma(w) for w in ws} else "amount")
    return Asked("which", head)


def _typed_noun(head: str, ws: list[str]) -> Asked | None:
    """A noun that names a type of value: a share ("what discount": a percent), a way to reach someone ("what
    email", "what number do I call": a telephone number), an age; else None."""
    if head in PERCENT_NOUNS:
        return Asked("percent", head)
    if head in CONTACT_NOUNS:
        return Asked(CONTACT_NOUNS[head], head)
    if head == "address" and ({"email", "e-mail", "web", "website"} & set(ws)):
        return Asked("url" if {"web", "website"} & set(ws) else "email", head)
    if head == "number" and _PHONING & set(ws):
        return Asked("phone", head)
    if head == "age":
        return Asked("age")
    if head in MEASURE_NOUNS:
        return Asked("amount", head)
    return None


# "What is the minimum rental time on the hourly plan?": the noun phrase after the copula, up to a preposition, a
# verb or the end.
_COPULA_NP_RE = re.compile(
    r"^\W*(?:(?:and|so|but)\s+)?what(?:'s|\s+(?:is|was|are|were|will be|would be))\s+(?:(?:the|an?|its|their|his|her|"
    r"our|my|your)\s+)?(?:[a-z]+'s\s+)?((?:[a-z][a-z-]*\s+){0,3}?[a-z][a-z-]*)"
    r"(?=\s+(?:of|for|on|in|at|to|with|from|per|when|if|that|which|who|do|does|did|is|are|can|will|should|must|"
    r"i|we|you|a|an|the|my|our|your|their|his|her)\b|\s*\?|\s*$)")


def _copula_phrase(q: str, ws: list[str]) -> Asked | None:
    """"What is the <noun phrase> ...?": a bound of a quantity ("the minimum rental time": a duration, "the maximum
    price": a price, "the minimum age": an age) or a noun that names a type of value ("the support email"); else
    None."""
    m = _COPULA_NP_RE.search(q)
    if m is None:
        return None
    phrase = m.group(1).split()
    head = singular(phrase[-1])
    if _BOUNDS & set(phrase[:-1]):
        if head in _SPANS_OF_TIME:
            return Asked("duration")
        if head == "age":
            return Asked("age")
        if head in MONEY_WORDS:
            return Asked("price", head)
        if head in ("number", "count"):
            return Asked("count")
        return Asked("amount", head)
    return _typed_noun(head, ws)


_KIND_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), kind) for p, kind in (
    (r"\bhow long ago\b", "date"), (r"\bhow long\b", "duration"), (r"\bhow old\b", "age"),
    (r"\bhow (?:soon|quickly)\b", "duration"),
    (r"\bhow far (?:ahead|in advance|beforehand|back)\b", "duration"),  # a distance in time
    (r"\bhow often\b", "frequency"), (r"\bhow (?:big|large|small|heavy|tall|high|far|fast|wide|deep)\b", "amount"),
    (r"\bwhat time\b", "time"),
    (r"^\W*(?:(?:and|so|but|then|since|until|till|by|from)\s+)?when\b|\b(?:what|which) (?:year|month|date|day)s?\b",
     "date"),
    (r"\bwhere\b", "place"), (r"\b(?:who|whom|whose)\b", "person"),
    (r"\b(?:called|named)\b|\bname of\b|\bnamed?\b", "name"), (r"^\s*why\b", "reason"),
))


def asked(question: str) -> Asked:
    """The type of value ``question`` asks for (the first rule that applies)."""
    q = question.lower().replace("’", "'")
    ws = re.findall(r"[a-z0-9']+", q)
    m = re.search(r"\bhow (many|much)\b", q)
    if m:
        return _how_much(q, ws, m.group(1))
    typed = _copula_phrase(q, ws)
    if typed is not None:
        return typed
    for pattern, kind in _KIND_RULES:
        if pattern.search(q):
            if kind == "date" and _HABIT_RE.search(q) and not PAST_RE.search(q):
                return Asked("time")
            if kind == "place":
                level = next((PLACE_LEVELS[singular(w)] for w in ws if singular(w) in PLACE_LEVELS
                              and singular(w) not in ("state", "area")), "")
                return Asked("place", "", level)
            if kind == "name":
                named = _NAMED_HEAD_RE.search(q)
                return Asked("name", singular(named.group(1) or named.group(2)) if named else "")
            return Asked(kind)
    m = _WHAT_IS_RE.search(q) or re.search(r"\b(?:which|what) (?:kinds?|types?|sorts?) of ([a-z]+)|"
                                             r"\b(?:which|what) (?:[a-z]+\d[\w-]* )?([a-z]+)", q)  # "what p99 latency"
    if m:
        head = m.group(1) or m.group(2)
        if head not in _AUX and head not in lx.PRONOUNS and head not in lx.DETERMINERS and head not in _MODALS:
            return _class_of(head, ws)
    if _STATE_RE.search(q):
        return Asked("state")
    if ws and ws[0] in _YESNO_START:
        return Asked("yesno")
    if MONEY_WORDS & set(ws):
        return Asked("price")
    if _CURRENT_RE.search(q):
        return Asked("state")
    return Asked("thing")


def asks_current(question: str) -> str:
    """Whether ``question`` asks for the value that holds now: ``"now"`` when it says so ("now", "current",
    "still"), ``"present"`` when it asks in the present tense with nothing of the past ("How much is the
    rent?", "Who is the DBA?"), else ``""``."""
    if _CURRENT_RE.search(question):
        return "now"
    if _PRESENT_RE.search(question) and not PAST_RE.search(question) and not _YEAR_RE.search(question):
        return "present"
    return ""


@lru_cache(maxsize=2048)
def classify(question: str) -> Question:
    """Read ``question``: what it asks for, its operator, its names, words and time constraint."""
    names = names_of(question)
    operator = operator_of(question, names)
    what = asked(question)
    return Question(
        text=question,
        asks=what.asks,
        head=what.head,
        place=what.place,
        current=asks_current(question),
        operator=operator,
        answer_types=tuple(answer_types_of(question, operator)),
        names=tuple(names),
        terms=tuple(dict.fromkeys(content_terms(question))),
        quoted=tuple(m.group(1) for m in _QUOTED_RE.finditer(question)),
        direction="object" if _ROLE_OBJECT_RE.search(question) else "",
        time=time_of(question),
    )
