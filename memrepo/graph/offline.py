"""The offline extractor: deterministic, rule-based frames from ordinary English sentences.

No model is available offline, so this is a small shallow parser: sentences are
split into clauses; values (dates, prices, counts, durations, measurements,
times) are cut out as literals first; each clause then yields a subject, a verb
mapped to a canonical predicate, a direct object and prepositional arms with
roles. "I/my/we" resolve to the speaker of the line (the record's actor),
"you" to the other participant when there are two, a sentence-opening
"he/she/his/her" to the one person the record's earlier sentences named as a
subject (else, as before, to the last person named who is no participant).
Appositives ("my sister Lena", "a potter called Hiroshi
Tanabe") become their own frames. The reply has the shape of the extractor
role's schema (:data:`memrepo.graph.extract.EXTRACTION_SCHEMA`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import date, timedelta
from typing import Any

from memrepo.nlp import lexicon as lx
from memrepo.nlp.lexicon import GENERIC_TERMS
from memrepo.nlp.morphology import NUMBER_WORDS, kappa
from memrepo.nlp.morphology import singular as singularize
from memrepo.text.dates import month_alternation, month_number, parse_iso_date
from memrepo.text.sentences import split_sentences

_MONTH_ALT = month_alternation(capitalized=True)
_NUMWORD_ALT = "|".join(sorted((w for w in NUMBER_WORDS if w not in lx.NOT_QUANTITY_WORDS),
                               key=len, reverse=True))
_QTY = rf"(?:\d+(?:\.\d+)?|{_NUMWORD_ALT}|an?|half an?|a couple of|a few|several)"
_UNIT_DUR = r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?|yrs?|decades?)"
_WEEKDAY_ALT = "|".join(d.capitalize() for d in lx.WEEKDAYS)

LITERAL_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("frequency", re.compile(
        rf"\b(?:{_QTY}|once|twice)\s+(?:(?:times?|mornings?|evenings?|nights?|days?|weekends?|sessions?|classes)\s+)?"
        rf"(?:a|per|every|each)\s+(?:day|week|month|year|weekend)\b", re.I)),
    ("age", re.compile(rf"\b({_QTY})[\s-]years?[\s-]old\b", re.I)),
    ("price", re.compile(
        r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|million|billion)\b)?)"
        r"|(?:\b\d[\d,]*(?:\.\d+)?\s?(?:k\s)?(?:yen|dollars?|bucks|euros?|usd|eur|gbp|cents?|pesos?|rupees?)\b)", re.I)),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("date", re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b")),
    ("date", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})(?:,?\s+(\d{{4}}))?\b")),
    ("date", re.compile(rf"\b(?:(?:early|mid|late|in|of|since|until|by|last|next|this|during)\s+)?"
                        rf"(?!May\b(?!\s+\d{{4}}))({_MONTH_ALT})(?:\s+(?:of\s+)?(\d{{4}}))?\b")),
    ("date", re.compile(r"\b(?:in|since|of|from|until|by|back in|around)\s+((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\b")),
    ("date", re.compile(
        rf"\b(yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening)"
        rf"|(?:last|next|this) (?:week|weekend|month|year|summer|winter|spring|fall|autumn|{_WEEKDAY_ALT.lower()}|{_WEEKDAY_ALT})"
        rf"|(?:{_QTY}) (?:days?|weeks?|months?|years?) ago"
        rf"|(?:on |last |this |next )?(?:{_WEEKDAY_ALT})s?)\b", re.I)),
    ("time", re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?=\W|$)|\b\d{1,2}:\d{2}\b", re.I)),
    ("duration", re.compile(rf"\b({_QTY})[\s-]({_UNIT_DUR})(?:[\s-]long)?\b", re.I)),
    ("measurement", re.compile(
        r"\b\d+(?:\.\d+)?\s?(?:km|kilomet(?:er|re)s?|miles?|mi|met(?:er|re)s?|kg|kilos?|kilograms?|lbs?|pounds|"
        r"gallons?|lit(?:er|re)s?|ml|cm|inch(?:es)?|feet|foot|ft|degrees?|°[cf]?|%|percent|mph|kph|calories|"
        r"steps|grams?|oz|ounces?|floors?|acres?|square feet|sq ft)(?=\W|$)", re.I)),
    ("frequency", re.compile(rf"\b(?:\d+|{_NUMWORD_ALT})\s+times\b|\bonce\b(?=\s+(?:a|an|per|every)\b)|\btwice\b", re.I)),
    ("count", re.compile(rf"\b(\d[\d,]*(?:\.\d+)?|{_NUMWORD_ALT})\b(?=\s+[A-Za-z])", re.I)),
    ("number", re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")),
]
# The patterns above that match nothing without a digit (price, the numeric dates, year, time, measurement,
# number): a sentence without one skips them.
DIGIT_PATTERNS = frozenset({2, 3, 4, 5, 7, 9, 11, 14})
_DIGIT_RE = re.compile(r"\d")
# Predicates whose direct object is a place: a bare name there ("climb Fuji", "hiked Takao", "visit Kasama")
# is a location, not the person a lone capitalized word is otherwise taken for.
PLACE_OBJECT_PREDICATES = frozenset({"visit", "travel", "move", "climb", "hike", "trek", "ascend", "summit", "ski"})
MAX_ITEMS = 60  # entities and frames per reply (EXTRACTION_SCHEMA's maxItems)
_PLACEHOLDER_BASE = 0xE000  # private-use characters stand for cut-out literals: no pattern matches them
_PLACEHOLDER_RE = re.compile("[\ue000-\uefff]")
_LETTER = r"[^\W\d_\ue000-\uefff]"  # a letter of any script ("Charité", "Zoë"); not a literal placeholder
_TOKEN_RE = re.compile("[\ue000-\uefff]|"
                       r"[A-Za-z0-9][A-Za-z0-9'’\-&\u00a0]*\u00a0[A-Za-z0-9'’\-&\u00a0]*|"
                       rf"{_LETTER}(?:{_LETTER}|['’\-&])*\.?|[.,!?;:()\"“”]|\S")
_SPEAKER_RE = re.compile(r"^([A-Z][\w.'’ -]{0,39}?):\s+(\S.*)$")
_CONTRACTIONS = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would", "n't": "not"}
_PRONOUN_IS = {"he", "she", "it", "that", "there", "what", "who", "where", "here", "how", "this", "everything",
               "something", "nothing", "everyone", "someone", "let"}
_SPECIAL_NEG = {"can't": ["can", "not"], "won't": ["will", "not"], "shan't": ["shall", "not"], "ain't": ["is", "not"]}
VISUAL_RE = re.compile(r"\[(?:shares?|shared|sends?|sent)\s+(?:a\s+)?(?:photo|picture|image|video)[^\]]*\]|\bphoto of\b|"
                       r"\[image[^\]]*\]", re.I)


@dataclass(slots=True)
class Tok:
    text: str
    low: str
    lit: int | None = None  # index of a literal placeholder
    cap: bool = field(init=False, compare=False, repr=False)  # a capitalized word (not a placeholder)

    def __post_init__(self) -> None:
        self.cap = self.lit is None and self.text[:1].isupper()


@dataclass
class Literal:
    key: str
    value: str
    surface: str


@dataclass
class ClauseFrame:
    predicate: str
    arms: list[tuple[str, str]] = field(default_factory=list)
    literals: list[tuple[str, str]] = field(default_factory=list)
    event_time: str | None = None
    status: str = "done"


class _Context:
    """What the rules know about the record: speaker, other participants, dates, entities so far."""

    def __init__(self, variables: dict[str, Any], pronouns: bool = True):
        self.actor = (variables.get("actor") or "").strip() or None
        self.participants = [p for p in variables.get("participants") or [] if p]
        mention = str(variables.get("mention_time") or "")[:10]
        self.mention = parse_iso_date(mention)
        self.record_status = variables.get("status") or "done"
        self.speaker: str | None = self.actor
        self.entities: dict[str, tuple[str, str]] = {}  # key -> (name, type)
        self.order: list[str] = []
        self.frames: list[ClauseFrame] = []
        self.last_person: str | None = None
        self.known_caps: set[str] = set()
        self.weak: set[str] = set()
        self.titles: set[str] = set()
        self.last_thing: str | None = None
        self.last_group: str | None = None
        # Pronouns within a record (issue 19, sixth pass): the persons each sentence mentions and those it
        # names as a subject; a later sentence's opening "he"/"she"/"his"/"her" names the one of them.
        self.pronouns = pronouns
        self.said: dict[str, bool] = {}  # person key -> named as a subject, over the earlier sentences
        self.saying: dict[str, bool] = {}  # the same for the sentence being read
        self.sentences: list[str] = []  # the earlier sentences
        self.subjects: set[str] = set()  # keys of every entity named as a clause's subject so far
        self.gender: dict[str, str] = {}  # person key -> "he"/"she" when a noun says it ("sister", "Mr")
        self.opening: tuple[str, str] | None = None  # (pronoun, person) while the opening subject is parsed

    def entity(self, name: str, type_: str) -> str | None:
        name = " ".join(name.split()).strip(" ,.'\"")
        key = kappa(name)
        if not key or len(name) > 160:
            return None
        weak = type_.endswith("?")
        type_ = type_.rstrip("?")
        if key in self.entities:
            old_name, old_type = self.entities[key]
            if (old_type in ("concept", "object") or key in self.weak) and type_ not in ("concept", "object") and not weak:
                self.entities[key] = (old_name, type_)
                self.weak.discard(key)
            name = old_name
        else:
            self.entities[key] = (name, type_)
            self.order.append(key)
            if weak:
                self.weak.add(key)
        kind = self.entities[key][1]
        if kind in ("person", "animal"):
            self.saying.setdefault(key, False)
        if kind == "person" and name != self.speaker and name not in self.participants and key not in self.weak:
            if name[:1].isupper() and "'s " not in name:
                self.last_person = name
            elif name.endswith("s") or name.endswith("children") or name.endswith("family"):
                self.last_group = name
        elif kind in ("object", "work", "event", "animal"):
            self.last_thing = name
        return name

    def person(self, name: str | None) -> str | None:
        return self.entity(name, "person") if name else None

    def other(self) -> str | None:
        others = [p for p in self.participants if p != self.speaker]
        return others[0] if len(others) == 1 else None

    def resolve(self, low: str) -> str | None:
        if self.opening is not None and low == self.opening[0]:
            return self.opening[1]
        if low in lx.PRONOUNS_SELF:
            return self.person(self.speaker)
        if low in lx.PRONOUNS_YOU:
            return self.person(self.other())
        if low in lx.PRONOUNS_HE or low in lx.PRONOUNS_SHE:
            return self.last_person
        if low in ("it", "its"):
            return self.last_thing  # the last concrete thing named: "I bought a bike. It cost $200."
        if low in ("they", "them", "their"):
            return self.last_group or self.last_thing
        return None

    def subject_named(self, name: str | None) -> None:
        """``name`` is the subject of a clause of the sentence being read."""
        key = kappa(name) if name else ""
        self.subjects.add(key)
        if key in self.entities and self.entities[key][1] in ("person", "animal"):
            self.saying[key] = True

    def sentence_read(self, sentence: str) -> None:
        self.sentences.append(sentence)
        for key, subject in self.saying.items():
            self.said[key] = self.said.get(key, False) or subject
        self.saying = {}

    def earlier_subject(self, low: str) -> str | None:
        """The person a sentence-opening "he"/"she"/"his"/"her" names: the one singular person (or named pet)
        the record's earlier sentences name (by name or as someone's: "my sister") whose gender the pronoun
        fits, when it was the subject of one of them. Else None: two candidates, none, or the one was never a
        subject."""
        if not self.pronouns:
            return None
        pronoun = "he" if low in lx.PRONOUNS_HE else "she"
        people = set(self.participants) | {self.actor, self.speaker}
        candidates = []
        for key in self.said:
            name, type_ = self.entities[key]
            if type_ not in ("person", "animal") or name in people or not (name[:1].isupper() or "'s " in name):
                continue
            if type_ == "animal" and not name[:1].isupper() or key in self.weak and key in GENERIC_TERMS:
                continue  # a pet by name only ("Oliver", not "Mia's dog"); "Things have been tough": no name
            last = name.split()[-1]
            if not last[:1].isupper() and (singularize(last) != last or last in lx.GROUP_NOUNS):
                continue  # "Mia's kids", "my family": no "he" or "she"
            if self.gender.get(key, pronoun) != pronoun:
                continue
            candidates.append(key)
        if len(candidates) != 1 or not self.said[candidates[0]]:
            return None
        # A capitalized word the rules did not read as a thing may be a second person ("John excitedly told
        # Maria ...": John is no entity; "... to John. John explained ...": John is read as a place, but he
        # is a subject): then the pronoun may name either.
        things = {w for key, (name, type_) in self.entities.items()
                  if type_ not in ("person", "animal") and key not in self.subjects or key == candidates[0]
                  for w in name.split()}
        if any(w not in things and w not in people and w != "I" and w not in _CALENDAR_WORDS
               for sentence in self.sentences for w in _capitalized(sentence)):
            return None
        return self.entities[candidates[0]][0]


_CAP_WORD_RE = re.compile(r"(?<![\w'’])[A-Z][\w’'-]*")


def _capitalized(sentence: str) -> list[str]:
    """The capitalized words of a sentence; its first only when it is no common word capitalized to open it
    ("Things have been tough" keeps "Things": it may be a name for all the rules know)."""
    words = _CAP_WORD_RE.findall(sentence)
    if words and sentence.lstrip(" \"“'(").startswith(words[0]) and _common_word(words[0].lower()):
        words = words[1:]
    return words


_CALENDAR_WORDS = {w.capitalize() for w in (*lx.MONTHS, *lx.WEEKDAYS)}


def extract_offline(variables: dict[str, Any], pronouns: bool = True) -> dict[str, Any]:
    """Entities and frames of one record, by rule; the reply shape of the ``extractor`` role.

    Args:
        variables: ``text``, ``actor``, ``participants``, ``mention_time``, ``status`` (as given to the role).
        pronouns: resolve a sentence-opening third-person pronoun to the earlier sentences' one subject
            person (off only to measure the rule: ``benchmarks/frame_sample.py --new-rule pronouns``).
    """
    ctx = _Context(variables, pronouns)
    text = str(variables.get("text") or "")
    lines = _speaker_lines(text, ctx)
    for speaker, line in lines:
        ctx.known_caps.update(w for w in re.findall(r"(?<=[a-z,;] )[A-Z][a-z]+", line))
    for speaker, line in lines:
        ctx.speaker = speaker
        for sentence in split_sentences(line):
            _sentence(ctx, sentence)
            ctx.sentence_read(sentence)
    # The reply must fit the extractor role's schema (at most 60 of each); long documents keep their first ones.
    return {
        "entities": [{"name": ctx.entities[k][0], "type": ctx.entities[k][1]} for k in ctx.order][:MAX_ITEMS],
        "frames": [
            {
                "predicate": f.predicate[:60],
                "arms": [{"role": r, "entity": e} for r, e in f.arms][:12],
                "literals": [{"key": k, "value": v} for k, v in f.literals][:12],
                "event_time": f.event_time,
                "status": f.status,
            }
            for f in ctx.frames[:MAX_ITEMS]
        ],
    }


def _speaker_lines(text: str, ctx: _Context) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _SPEAKER_RE.match(line)
        if m and (m.group(1) in ctx.participants or m.group(1) == ctx.actor
                  or (len(m.group(1).split()) <= 2 and all(w[:1].isupper() for w in m.group(1).split()))):
            speaker = m.group(1).strip()
            if speaker not in ctx.participants:
                ctx.participants.append(speaker)
            out.append((speaker, m.group(2)))
        else:
            out.append((ctx.actor, line))
    return out


# --- literals ----------------------------------------------------------------------


def find_literals(sentence: str, mention: date | None) -> tuple[str, list[Literal]]:
    """Cut dates, prices, counts, durations, measurements and times out of ``sentence``.

    Returns:
        The sentence with each value replaced by a placeholder character, and the literals.
    """
    literals: list[Literal] = []
    text = sentence
    digits = _DIGIT_RE.search(sentence) is not None
    for n, (key, pattern) in enumerate(LITERAL_PATTERNS):
        if not digits and n in DIGIT_PATTERNS:
            continue  # cannot match: cutting values out only ever removes digits
        def replace(m: re.Match[str], key: str = key) -> str:
            surface = m.group(0)
            if _PLACEHOLDER_RE.search(surface):
                return surface
            value = _literal_value(key, m, mention)
            if value is None:
                return surface
            literals.append(Literal(key, value, surface.strip()))
            return f" {chr(_PLACEHOLDER_BASE + len(literals) - 1)} "
        text = pattern.sub(replace, text)
    return text, literals


def _literal_value(key: str, m: re.Match[str], mention: date | None) -> str | None:
    surface = m.group(0).strip()
    if key == "date":
        return resolve_date(surface, mention)
    if key == "count":
        n = _number(m.group(1))
        return None if n is None or n == 1 else _fmt_number(n)
    if key in ("age", "duration"):
        qty = _number(m.group(1)) if m.lastindex else None
        unit = surface.split()[-1] if " " in surface else surface.split("-")[-1]
        if key == "age":
            return f"{_fmt_number(qty)} years" if qty is not None else surface
        unit = re.sub(r"[\s-]long$", "", surface).split()[-1].split("-")[-1]
        unit = unit if unit.endswith("s") or qty == 1 else unit + "s"
        return f"{_fmt_number(qty)} {unit}" if qty is not None else surface.lower()
    if key == "number":
        n = _number(surface)
        return _fmt_number(n) if n is not None else None
    return surface


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    low = text.lower().strip()
    if low in NUMBER_WORDS:
        return float(NUMBER_WORDS[low])
    if low in ("a", "an"):
        return 1.0
    if low.startswith("half"):
        return 0.5
    if low in ("a couple of",):
        return 2.0
    if low in ("a few", "several"):
        return 3.0
    try:
        return float(low.replace(",", ""))
    except ValueError:
        return None


def _fmt_number(n: float | None) -> str:
    if n is None:
        return ""
    return str(int(n)) if float(n).is_integer() else str(n)


def resolve_date(surface: str, mention: date | None) -> str | None:
    """ISO value of a date expression: a day, ``YYYY-MM``, ``YYYY`` or a ``start/end`` interval."""
    low = surface.lower().strip()
    m = re.fullmatch(r"\d{4}-\d{2}-\d{2}", low)
    if m:
        return low
    year = mention.year if mention else None
    m = re.search(r"((?:19|20)\d{2})", low)
    explicit_year = int(m.group(1)) if m else None
    words = re.findall(r"[a-z]+", low)
    months = [w for w in words if len(w) >= 3 and (n := month_number(w)) and lx.MONTHS[n - 1].startswith(w)]
    day_m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", re.sub(r"(19|20)\d{2}", "", low))
    if months:
        month = month_number(months[0])
        y = explicit_year or year
        if y is None or month is None:
            return None
        if day_m:
            try:
                return date(y, month, int(day_m.group(1))).isoformat()
            except ValueError:
                return None
        if "last" in words and not explicit_year and mention and month >= mention.month:
            y -= 1
        if "next" in words and not explicit_year and mention and month <= mention.month:
            y += 1
        return f"{y:04d}-{month:02d}"
    if explicit_year and not re.search(r"[a-z]{3,}", re.sub(r"\b(in|since|of|from|until|by|back|around)\b", "", low)):
        return f"{explicit_year:04d}"
    if mention is None:
        return None
    if "yesterday" in words or low == "last night":
        return (mention - timedelta(days=1)).isoformat()
    if words and words[0] in ("today", "tonight") or low.startswith("this morning") or low.startswith("this afternoon") \
            or low.startswith("this evening"):
        return mention.isoformat()
    if "tomorrow" in words:
        return (mention + timedelta(days=1)).isoformat()
    if "ago" in words:
        qty = _number(" ".join(low.split()[:-2])) or 1.0
        unit = low.split()[-2]
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit.rstrip("s")]
        when = mention - timedelta(days=int(qty * days))
        return when.isoformat() if unit.startswith(("day", "week")) else (f"{when.year:04d}-{when.month:02d}" if unit.startswith("month") else f"{when.year:04d}")
    for i, wd in enumerate(lx.WEEKDAYS):
        if wd in words or wd + "s" in words:
            delta = (mention.weekday() - i) % 7
            if "next" in words:
                return (mention + timedelta(days=(i - mention.weekday()) % 7 or 7)).isoformat()
            if "this" in words:
                return (mention + timedelta(days=(i - mention.weekday()) % 7)).isoformat()
            return (mention - timedelta(days=delta or 7)).isoformat()
    if "week" in words or "weekend" in words:
        shift = -7 if "last" in words else (7 if "next" in words else 0)
        start = mention + timedelta(days=shift - mention.weekday())
        if "weekend" in words:
            start = start + timedelta(days=5)
            return f"{start.isoformat()}/{(start + timedelta(days=1)).isoformat()}"
        return f"{start.isoformat()}/{(start + timedelta(days=6)).isoformat()}"
    if "month" in words:
        y, mo = mention.year, mention.month + (-1 if "last" in words else (1 if "next" in words else 0))
        if mo == 0:
            y, mo = y - 1, 12
        if mo == 13:
            y, mo = y + 1, 1
        return f"{y:04d}-{mo:02d}"
    if "year" in words:
        return f"{mention.year + (-1 if 'last' in words else (1 if 'next' in words else 0)):04d}"
    seasons = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}
    for name, (a, b) in seasons.items():
        if name in words:
            y = mention.year + (-1 if "last" in words else (1 if "next" in words else 0))
            end_y = y + 1 if b < a else y
            return f"{y:04d}-{a:02d}/{end_y:04d}-{b:02d}"
    return None


# --- tokens and clauses --------------------------------------------------------------


def tokenize(text: str) -> list[Tok]:
    out: list[Tok] = []
    for raw in _TOKEN_RE.findall(text.replace("’", "'")):
        m = _PLACEHOLDER_RE.fullmatch(raw)
        if m:
            out.append(Tok(raw, raw, ord(raw) - _PLACEHOLDER_BASE))
            continue
        if raw.endswith(".") and len(raw) > 1:
            raw = raw[:-1]
        low = raw.lower()
        if low in _SPECIAL_NEG:
            out.extend(Tok(w, w) for w in _SPECIAL_NEG[low])
            continue
        split = False
        for suffix, word in _CONTRACTIONS.items():
            if low.endswith(suffix) and len(low) > len(suffix):
                stem = raw[: -len(suffix)]
                out.append(Tok(stem, stem.lower()))
                out.append(Tok(word, word))
                split = True
                break
        if split:
            continue
        if low.endswith("'s") and len(low) > 2:
            stem = raw[:-2]
            out.append(Tok(stem, stem.lower()))
            out.append(Tok("is", "is") if stem.lower() in _PRONOUN_IS else Tok("'s", "'s"))
            continue
        if low.endswith("'") and len(low) > 1:
            out.append(Tok(raw[:-1], low[:-1]))
            out.append(Tok("'s", "'s"))
            continue
        out.append(Tok(raw, low))
    # "Nature's been my haven", "it's been a year": the 's before "been" is "has", not a possessive or "is".
    for k in range(1, len(out) - 1):
        after = out[k + 2] if out[k + 1].low in lx.ADVERBS and k + 2 < len(out) else out[k + 1]
        if after.low == "been" and (out[k].text == "'s" or out[k].text == "is" and out[k - 1].low in _PRONOUN_IS):
            out[k] = Tok("has", "has")
    return out


@lru_cache(maxsize=16384)
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
            stem = w[: -len(suffix)]
            if suffix in ("ed", "ing") and not re.search("[aeiouy]", stem):
                return w  # thing, bring, shed: no vowel is left for a stem
            for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None):
                if cand and (cand in lx.VERBS or cand in lx.REPORTING or cand in lx.CONTROL):
                    return cand
            if suffix == "ed" and len(stem) == 2:
                return stem + "e"  # dyed, owed, eyed, aged: a two-letter stem kept its e (shed, need: above)
            if suffix in ("ed", "ing"):
                if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":  # stopped; not added
                    return stem[:-1]
                return stem + "e" if _lost_e(stem) else stem
            if suffix == "es" and stem.endswith(("sh", "ch", "x", "ss", "o")):
                return stem
            if suffix == "s":
                return w if w.endswith(("ss", "us", "is")) else stem  # "dress", "focus" are not plurals
    return w


_VOWELS = "aeiou"


def _lost_e(stem: str) -> bool:
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
    # have doubled (shop -> shopping), so the base has a silent e (hike, share, vote, use).
    groups = re.findall(f"[{_VOWELS}]+", stem)
    return (len(groups) == 1 and len(groups[0]) == 1 and stem.endswith(groups[0] + last)
            and last not in _VOWELS + "wxy")


def _is_verb_form(tok: Tok) -> bool:
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


_PLAN_ADJECTIVES = {"excited", "ready", "able", "about", "supposed", "eager", "hoping", "planning", "thinking",
                    "happy", "glad", "proud", "keen"}
_MODALS = {"can", "could", "will", "would", "might", "may", "must", "should"}


def _third_singular(tok: Tok) -> bool:
    """"takes", "makes", "helps": the verb of a singular subject ("Trying new things takes guts")."""
    w = tok.low
    return (tok.lit is None and w.endswith("s") and not w.endswith("ss") and len(w) > 3
            and (lemma(w) in lx.VERBS or w[:-1] in lx.VERBS) and lemma(w) != w)


def _state_word(tok: Tok, w: str) -> bool:
    """An adjective after "be": listed, or a word the lexicon does not know as a verb (not an -ing form)."""
    if w in lx.ADJECTIVES or w in lx.EVALUATIVE:
        return True
    if w.endswith("ing") or w in lx.IRREGULAR or w in lx.DETERMINERS or w in lx.PREPOSITIONS or w in lx.PRONOUNS:
        return False
    return _np_word_plain(tok) and len(w) > 2


def _is_past(tok: Tok) -> bool:
    return tok.low in lx.PAST_FORMS or (tok.low.endswith("ed") and tok.low not in lx.IRREGULAR)


# Word classes the hot paths below test against, united once (the lexicon's sets never change at run time).
_NOT_VERBS = lx.PRONOUNS | lx.DETERMINERS | (lx.PREPOSITIONS - {"like"}) | lx.CONJUNCTIONS
_NP_DETERMINERS = lx.DETERMINERS - {"what", "which", "whose", "all", "both"}
_NOT_NP_START = (lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | lx.AUXILIARIES | lx.NEGATIONS | lx.ADVERBS
                 | lx.INTERJECTIONS | lx.IRREGULAR.keys())
_NOT_NP_WORD = (lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | lx.AUXILIARIES | lx.NEGATIONS | lx.ADVERBS
                | lx.DETERMINERS | lx.IRREGULAR.keys())


def _np_start(tok: Tok) -> bool:
    if tok.lit is not None:
        return False
    w = tok.low
    if tok.cap:
        return w not in lx.PRONOUNS_SELF and w not in lx.AUXILIARIES and w not in lx.CONJUNCTIONS
    if w in lx.POSSESSIVES or w in _NP_DETERMINERS:
        return True
    if not w.isalpha() and "-" not in w:
        return False
    return w not in _NOT_NP_START


_CLAUSE_BREAK = {"and", "but", "so", "because", "while", "although", "though", "when", "if", "since", "cause",
                 "cuz", "whereas", "after", "before", "until", "once", "why"}
_CLAUSE_BREAK_MARKS = _CLAUSE_BREAK | {",", "-", "—", "–"}
_SUBJECTS = {"i", "we", "you", "he", "she", "they", "it", "my", "our", "his", "her", "their", "there", "this",
             "that"}


def split_clauses(toks: list[Tok]) -> list[list[Tok]]:
    """Split a sentence's tokens at conjunctions, commas and dashes that start a new subject, and before a
    mid-sentence "I" ("after finishing my screenplay I got a letter")."""
    clauses: list[list[Tok]] = [[]]
    for i, tok in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        starts_subject = nxt is not None and (nxt.low in _SUBJECTS or (nxt.cap and i + 2 < len(toks)
                                                                       and _is_verb_form(toks[i + 2])))
        if tok.low in (";", ":") or (tok.low in _CLAUSE_BREAK_MARKS and starts_subject
                                     and clauses[-1]):
            clauses.append([])
            continue
        prev = clauses[-1][-1].low if clauses[-1] else None
        if tok.text == "I" and prev is not None and len(clauses[-1]) >= 3 and prev not in lx.PREPOSITIONS \
                and prev not in lx.CONJUNCTIONS and prev not in ("that", "than", "what", "who", "which", "where",
                                                                 "how", "why", "-", "\"", "“"):
            clauses.append([])
        clauses[-1].append(tok)
    return [c for c in clauses if c]


# --- noun phrases ---------------------------------------------------------------------


@dataclass
class NP:
    name: str
    type: str
    head: str
    possessor: str | None = None
    count: str | None = None
    favorite: bool = False
    person_noun: bool = False
    category: str | None = None  # "sister" of "my sister Lena", "potter" of "a potter called Hiroshi Tanabe"
    determined: bool = False  # it had a determiner or a possessive
    indefinite: bool = False  # "a"/"an": a category ("Mia is a designer")


def parse_np(ctx: _Context, toks: list[Tok], i: int, lits: list[Literal],
             gerund: bool = False) -> tuple[NP | None, int, list[tuple[str, str]]]:
    """Parse the noun phrase starting at ``toks[i]``; returns it, the next index and literals it carried.

    Args:
        gerund: an ``-ing`` word may head the phrase ("into counseling", "love painting").
    """
    n = len(toks)
    carried: list[tuple[str, str]] = []
    possessor: str | None = None
    count: str | None = None
    favorite = False
    determined = False
    indefinite = False
    words: list[Tok] = []
    start = i
    while i < n:
        tok = toks[i]
        if tok.lit is not None:
            lit = lits[tok.lit]
            if lit.key in ("count", "number") and not words:
                count = lit.value
                carried.append(("count", lit.value))
                i += 1
                continue
            if lit.key in ("age", "duration", "price", "measurement") and not words:
                carried.append((lit.key, lit.value))
                i += 1
                continue
            break
        w = tok.low
        if not words and w in lx.POSSESSIVES:
            possessor = ctx.resolve(w)
            determined = True
            i += 1
            continue
        if not words and w in lx.DETERMINERS:
            determined = True
            indefinite = indefinite or w in ("a", "an", "another")
            i += 1
            continue
        if w == "'s" and words:
            # "Mia's bike": what came before is the possessor.
            owner = " ".join(t.text for t in words)
            possessor = ctx.entity(owner, "person") if words[0].cap else None
            words = []
            i += 1
            continue
        if tok.cap and w not in lx.PRONOUNS_SELF and (w not in lx.AUXILIARIES or i == start):
            words.append(tok)
            i += 1
            continue
        if words and words[-1].cap and i + 1 < n and toks[i + 1].cap and (
                w in ("of", "the", "de", "for", "on")
                or (w in ("and", "&") and any(t.low in ("of", "for") or singularize(t.low) in lx.ORG_SUFFIXES for t in words))):
            words.append(tok)
            i += 1
            continue
        if w in ("favorite", "favourite") and not words:
            favorite = True
            i += 1
            continue
        if words and words[-1].cap and not tok.cap and _is_verb_form(tok) and (
                w.endswith(("ing", "ed")) or w in lx.IRREGULAR or lemma(w) in lx.REPORTING
                or (w.endswith("s") and lemma(w) != w)):
            break  # "Kyoto starting in July", "Tom moved": a verb after a name is not part of it
        if not _np_word(toks, i, (determined or gerund) and not words):
            break
        words.append(tok)
        i += 1
    category: str | None = None
    # Appositive: "my sister Lena", "a retired teacher named Mrs. Okada", "a potter called Hiroshi Tanabe".
    cap_tail = 0
    while cap_tail < len(words) and words[len(words) - 1 - cap_tail].cap:
        cap_tail += 1
    if 0 < cap_tail < len(words) and singularize(words[len(words) - cap_tail - 1].low) in lx.PERSON_NOUNS | lx.ANIMALS:
        category = " ".join(t.low for t in words[: len(words) - cap_tail] if t.low not in lx.EVALUATIVE) or None
        words = words[len(words) - cap_tail:]
    elif i + 1 < n and toks[i].low in ("named", "called") and toks[i + 1].cap and words:
        name_np, j, _ = parse_np(ctx, toks, i + 1, lits)
        if name_np is not None:
            category = " ".join(t.text if t.cap else t.low for t in words if t.low not in lx.EVALUATIVE) or None
            head = singularize(words[-1].low)
            base = entity_type(words, head, ctx)
            name_type = base if base not in ("concept", "object", "name") else name_np.type
            np = NP(name_np.name, name_type, head, possessor, count, favorite, False, category)
            return np, j, carried
    # Drop evaluative adjectives at the front ("a tiny ramen place" -> "ramen place").
    while len(words) > 1 and not words[0].cap and words[0].low in lx.EVALUATIVE:
        words = words[1:]
    if len(words) == 1 and not words[0].cap and words[0].low in lx.EVALUATIVE:
        words = []
    if not words:
        return None, max(i, start + 1), carried
    if len(words) == 1 and words[0].low.endswith("ing") and not determined and i < n and _np_start(toks[i]) \
            and toks[i].low not in ("a", "an", "the") or (len(words) == 1 and words[0].low.endswith("ing")
                                                          and not determined and i < n and toks[i].low in lx.POSSESSIVES):
        inner, j, more = parse_np(ctx, toks, i, lits)
        if inner is not None:
            return inner, j, carried + more  # "about expressing my trans experience" -> the experience
    if len(words) == 1 and not words[0].cap and not determined and possessor is None and count is None \
            and _adjective(words[0].low):
        return None, i, carried  # "I am ready", "she is young": a quality, not an entity
    head = singularize(words[-1].low)
    name = " ".join(t.text if t.cap else t.low for t in words)
    type_ = entity_type(words, head, ctx)
    quoted = start > 0 and toks[start - 1].low in ('"', "“") and words[0].cap
    if quoted and type_ in ("name", "concept", "location", "organization"):
        type_ = "work"  # a quoted title: "The Santa Clause", "Becoming Nicole"
    if category:
        head = singularize(category.split()[-1])
        cat_type = "person" if head in lx.PERSON_NOUNS else ("animal" if head in lx.ANIMALS else type_)
        type_ = cat_type if type_ in ("name", "concept") else type_
    np = NP(name, type_, head, possessor, count, favorite, head in lx.PERSON_NOUNS and not words[-1].cap, category,
            determined, indefinite)
    return np, i, carried


def _adjective(word: str) -> bool:
    return word in lx.ADJECTIVES or word in lx.EVALUATIVE or word.endswith(
        ("ful", "ous", "ive", "able", "ible", "less", "ish", "ent", "ant", "ary")) and word not in lx.OBJECT_NOUNS


def _np_word(toks: list[Tok], i: int, inside: bool) -> bool:
    tok = toks[i]
    w = tok.low
    if not (w.isalpha() or ("-" in w and w.replace("-", "").isalpha())):
        return False
    if w in lx.PRONOUNS or w in lx.PREPOSITIONS or w in lx.CONJUNCTIONS or w in lx.AUXILIARIES or w in lx.NEGATIONS:
        return False
    if w in lx.ADVERBS and w not in lx.EVALUATIVE and w not in ("home", "run", "back"):
        return False
    if w in lx.INTERJECTIONS and w not in lx.EVALUATIVE:
        return False
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if w in ("named", "called") or (nxt is not None and nxt.low == "by" and (_is_verb_form(tok) or w in lx.VERBS)):
        return False
    if w in lx.IRREGULAR and w not in ("read", "set", "left", "found", "bit", "ground", "record", "born"):
        return False
    if w.endswith("ly") and len(w) > 4 and w not in ("family", "belly", "jelly", "rally", "italy", "lily", "butterfly"):
        return False
    if _is_verb_form(tok) and w not in lx.VERBS.keys() - _STRONG_VERBS:
        # "cooking class", "running shoes": a verb form inside a phrase only before a noun.
        if w.endswith(("ing", "ed")) and nxt is not None and nxt.lit is None and nxt.low.isalpha() \
                and _np_word_plain(nxt):
            return True
        return inside and w.endswith("ing")  # "the painting", "my cooking"
    if w in _STRONG_VERBS and not inside:
        return False
    return True


_STRONG_VERBS = {"love", "like", "want", "need", "go", "get", "buy", "make", "take", "think", "know", "say",
                 "tell", "give", "have", "enjoy", "hate", "hope", "feel", "try", "start", "decide", "adopt",
                 "visit", "meet", "bring", "keep", "leave", "find", "see", "watch", "learn", "join", "miss"}


def _np_word_plain(tok: Tok) -> bool:
    if tok.cap:
        return False
    w = tok.low
    return w.isalpha() and w not in _NOT_NP_WORD


def entity_type(words: list[Tok], head: str, ctx: _Context) -> str:
    """person | organization | location | animal | event | work | object | concept, by rule."""
    lows = [singularize(t.low) for t in words]
    all_caps = all(t.cap or t.low in ("of", "and", "the", "de", "&", "for", "on") for t in words)
    name = " ".join(" ".join(t.text.split()) for t in words)
    if name in ctx.titles:
        return "work"
    if name in ctx.participants or name == ctx.actor:
        return "person"
    if all_caps:
        if lows[0] in ("mr", "mrs", "ms", "dr", "prof", "miss", "aunt", "uncle", "grandma", "grandpa"):
            return "person"
        if lows[-1] in lx.ORG_SUFFIXES or any(t in ("institute", "university", "college", "academy") for t in lows):
            return "organization"
        if lows[0] in ("mount", "mt", "lake", "st", "saint", "port", "fort", "cape", "san", "santa", "los", "las") \
                or lows[-1] in lx.PLACE_SUFFIXES:
            return "location"
        return "name"
    if head in lx.PERSON_NOUNS:
        return "person"
    if head in lx.ANIMALS:
        return "animal"
    if head in lx.PLACE_NOUNS:
        return "location"
    if head in lx.EVENT_NOUNS:
        return "event"
    if head in lx.WORK_NOUNS:
        return "work"
    if head in lx.OBJECT_NOUNS:
        return "object"
    return "concept"


def _settle_name_type(np: NP, prep: str | None, role: str) -> str:
    """Type of a bare proper name from its position: a place after in/at/from/to, else a person."""
    if np.type != "name":
        return np.type
    if prep in ("in", "at", "from", "to", "near", "into", "around", "across", "through", "toward", "towards", "outside",
                "inside", "via", "visit", "place", "destination"):
        return "location"
    if len(np.name.split()) > 3:
        return "organization"
    return "person?"  # a guess: a later, stronger cue (a place preposition) overrides it


# --- clauses --------------------------------------------------------------------------


_TITLE_RE = re.compile(r"[\"“]([A-Z0-9][^\"“”]{0,80}?)[\"”]")


def _join_title(m: re.Match[str], ctx: _Context) -> str:
    """A quoted title becomes one word (its spaces are no-break spaces) and a work."""
    title = m.group(1).strip().replace("’", "'")
    ctx.titles.add(" ".join(title.split()))
    return "\u00a0".join(title.split()) if " " in title else title


def _sentence(ctx: _Context, sentence: str) -> None:
    if VISUAL_RE.fullmatch(sentence.strip()):
        _shared_visual(ctx, sentence.strip())
        return
    acts, only = _acts(ctx, sentence)
    if not only:
        before = len(ctx.frames)
        _sentence_frames(ctx, sentence)
        if len(ctx.frames) == before:
            _judgement(ctx, sentence)
    _add_acts(ctx, acts)


# Set phrases whose words are no clause: "Of course!", "Fingers crossed!" name no course and no fingers.
_SET_PHRASES_RE = re.compile(r"\b(?:of course|fingers crossed|no wonder|no doubt|for sure|at least|after all)\b", re.I)


def _sentence_frames(ctx: _Context, sentence: str) -> None:
    sentence = _SET_PHRASES_RE.sub(",", sentence)
    sentence = _TITLE_RE.sub(lambda m: _join_title(m, ctx), sentence)
    text, lits = find_literals(sentence, ctx.mention)
    toks = tokenize(text)
    toks = _drop_vocatives(ctx, toks)
    for idx, tok in enumerate(toks):
        if idx == 0 or toks[idx - 1].low in (":", ";", "\"", "“", "(", "-"):
            _decap(ctx, toks, idx)
    # A sentence that ends in "." or "!" is no question even if it starts like one ("Have faith in yourself!").
    question = sentence.rstrip().endswith("?") or (toks and toks[0].low in lx.QUESTION_WORDS | {"do", "did", "does",
                                                                                                   "are", "is", "have",
                                                                                                   "can", "could",
                                                                                                   "would", "will"}
                                                   and not sentence.rstrip().endswith((".", "!")))
    if question:
        _mentions_only(ctx, toks, lits)
        _asked(ctx, toks, lits)
        return
    for number, clause in enumerate(split_clauses(toks)):
        _clause(ctx, clause, lits, subject=None, planned=False, first=number == 0)


# --- discourse frames: what a turn does when it asserts no event --------------------------------
#
# A question asks about the things it names; a shared photo shows what its caption depicts; a
# judgement ("that painting looks amazing") evaluates the thing it names. Each is what the turn
# itself says, so the frame is as true as the record. The person spoken to is no arm: naming her on
# every turn would make each turn look about both speakers (and crowd recall's rows of the two); the
# dialogue acts below name her, as a class recall keeps apart.

_CAPTION_RE = re.compile(r"\[(?:image|shares?|shared|sends?|sent)\b[^\]]*?\b(?:photo|picture|image|video|"
                         r"photography|drawing|painting|screenshot)s?\s+of\s+([^\]]+)\]", re.I)
_ADJECTIVE_SUFFIXES = ("ive", "ful", "ous", "able", "ible", "ic", "ing")  # "expressive", "graceful", "rewarding"
_JUDGING_VERBS = {"look", "looks", "looked", "sound", "sounds", "sounded", "seem", "seems", "seemed"}


# "a group of markers", "a stack of books": what the photo shows is what comes after "of".
_COLLECTIVES = {"group", "stack", "pile", "bunch", "couple", "pair", "set", "lot", "row", "variety", "collection",
                "close", "closeup", "view", "number", "crowd", "handful", "line", "assortment"}


def _shared_visual(ctx: _Context, sentence: str) -> None:
    """"[image: a photo of a band on stage]": the speaker shared a photo of the band."""
    speaker = ctx.person(ctx.speaker)
    m = _CAPTION_RE.search(sentence)
    if speaker is None or m is None:
        return
    text, lits = find_literals(m.group(1), ctx.mention)
    toks = tokenize(text)
    depicted: str | None = None
    i = 0
    while i < len(toks) and depicted is None:
        # "a photo of a woman in a tutu": the unnamed person is no anchor, the tutu is what the photo shows.
        if _np_start(toks[i]):
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None and np.head in _COLLECTIVES and j + 1 < len(toks) and toks[j].low == "of":
                after = toks[j + 1]
                nxt_np, _k, _ = parse_np(ctx, toks, j + 1, lits)
                if nxt_np is None and after.low.isalpha() and after.low not in lx.PRONOUNS and not after.cap:
                    depicted = ctx.entity(after.low, "object")  # "a stack of books sitting on ..."
                i = j + 1
                continue
            if np is not None and np.type != "person":
                depicted = ctx.entity(np.name, _settle_name_type(np, None, "object"))
            i = max(j, i + 1)
        else:
            i += 1
    if depicted is None:
        return
    arms = [("giver", speaker), ("item", depicted)]
    ctx.frames.append(ClauseFrame(lx.predicate_of("share"), _dedupe_arms(arms), [("medium", "photo")],
                                  status=ctx.record_status))


def _asked(ctx: _Context, toks: list[Tok], lits: list[Literal]) -> None:
    """A question: the speaker asks the other participant about the things it names."""
    asker = ctx.person(ctx.speaker)
    if asker is None:
        return
    topics: list[str] = []
    i = 1
    while i < len(toks):
        tok = toks[i]
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        prev = toks[i - 1].low
        # "Did anything happen?", "are you gonna cheer": the word after a subject is its verb, not a topic.
        verb_after_subject = not tok.cap and tok.low not in lx.DETERMINERS and tok.low not in lx.POSSESSIVES and (
            prev in lx.PRONOUNS and prev not in lx.POSSESSIVES or prev in lx.AUXILIARIES
            or prev in ("gonna", "wanna", "anything", "something"))
        if _np_start(tok) and not _is_verb_form(tok) and tok.low not in lx.EVALUATIVE and not verb_after_subject \
                and tok.text not in ctx.participants and nxt != "to":  # "did you happen to ...": a verb
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None and kappa(np.name) and np.name != asker:
                name = ctx.entity(np.name, _settle_name_type(np, toks[i - 1].low, "object"))
                if name and name not in topics:
                    topics.append(name)
            i = max(j, i + 1)
        else:
            i += 1
    if not topics:
        # A question that names nothing ("How are you?") still asks the person spoken to: a dialogue act.
        addressee = _addressee(ctx, " ".join(t.text for t in toks))
        if addressee and addressee != asker:
            _add_acts(ctx, [ClauseFrame(lx.predicate_of("ask"), [("agent", asker), (lx.ADDRESSEE_ROLE, addressee)], [],
                                        status="done")])
        return
    # The addressee is not an arm: a question to her is not about her, and naming her on every
    # question would make each turn look about both speakers.
    arms = [("agent", asker)] + [("topic", t) for t in topics[:4]]
    ctx.frames.append(ClauseFrame(lx.predicate_of("ask"), _dedupe_arms(arms), [], status="done"))


def _judgement(ctx: _Context, sentence: str) -> None:
    """A sentence that asserts no event may still judge a thing it names ("That themed tree looks amazing!")."""
    speaker = ctx.person(ctx.speaker)
    if speaker is None:
        return
    text, lits = find_literals(sentence, ctx.mention)
    _judged(ctx, speaker, _drop_vocatives(ctx, tokenize(text)), lits)


_IMPERATIVES = lx.REPORTING | {"remember", "keep", "let", "try", "make", "stay", "never", "always", "don't"}


def _judged(ctx: _Context, speaker: str, toks: list[Tok], lits: list[Literal]) -> None:
    """"<thing> is/looks/sounds <judging adjective>": the speaker evaluates the thing."""
    for k, tok in enumerate(toks):
        if tok.low not in lx.COPULAS and tok.low not in _JUDGING_VERBS and tok.low != "'s":
            continue
        rest = [t.low for t in toks[k + 1:k + 4]
                if t.low not in lx.ADVERBS and t.low not in ("so", "very", "such", "been", "truly", "pretty")]
        quality = next((w for w in rest[:1] if w in lx.ADJECTIVES or w in lx.EVALUATIVE
                        or (w.isalpha() and len(w) > 5 and w.endswith(_ADJECTIVE_SUFFIXES))), None)
        if quality is None:
            return
        thing: str | None = None
        start = next((i for i in range(k) if _np_start(toks[i]) and toks[i].low not in lx.INTERJECTIONS
                      and not (i == 0 and toks[i].low in _IMPERATIVES)  # "Remember that staying positive is ..."
                      and (toks[i].low not in lx.PRONOUNS or toks[i].low in lx.DETERMINERS and i + 1 < k)), None)
        if k > 0 and toks[k - 1].low in ("it", "this"):
            thing = ctx.last_thing  # "I bought a bike. It's awesome."
        elif start is not None:
            np, _j, _ = parse_np(ctx, toks[:k], start, lits)
            if np is not None and np.type != "person" and kappa(np.name):
                thing = ctx.entity(np.name, _settle_name_type(np, None, "subject"))
        if thing and thing != speaker:
            ctx.frames.append(ClauseFrame("evaluate", [("agent", speaker), ("theme", thing)], [("quality", quality)],
                                          status="done"))
        return


# --- dialogue acts: what a turn does to the person spoken to ------------------------------------
#
# "Thanks, Mel!", "Hi!", "Bye!", "Keep it up!", "Congrats on the new job!", "I totally agree": the
# turn states no event, but it does something to the other speaker. Each cue is general English;
# the frame is act(agent=speaker, recipient=the person spoken to[, reason/theme=the thing it names]).
# The person spoken to is the other participant of a two-person record, or the one participant the
# sentence names; when neither is known the arm is left out. lexicon.DIALOGUE_ACTS keeps these frames
# apart from the rest (no mention of the addressee, no recall rows).

_FILLERS_RE = re.compile(r"^(?:(?:wow|oh|ah|aw+|yeah|yes|yep|yup|ok|okay|well|haha|woah|whoa|omg|hmm|sure|so|and)"
                         r"\b[\s,!.]*)+")
_ACT_CUES: list[tuple[str, re.Pattern[str]]] = [
    ("thank", re.compile(r"^(?:thanks|thank (?:you|u)|thx|many thanks)\b|\b(?:thanks|thank you)(?: so much| a lot)? for\b"
                         r"|(?:^|\b(?:i|we) )(?:(?:really|truly|so|do|totally|definitely|much) )*appreciate "
                         r"(?:it|that|this|you|your)\b")),
    ("greet", re.compile(r"^(?:hi|hey|hello|hiya|howdy|good (?:morning|afternoon|evening))\b(?![ ,]+(?:is|are|was)\b)"
                         r"|\blong time no (?:see|talk|chat)\b"
                         r"|^(?:it's |it is |so )?(?:nice|great|good|lovely) to (?:meet|see|hear from) you\b")),
    ("farewell", re.compile(r"\b(?:bye|goodbye|bye-bye|see (?:you|ya)\b(?! (?:at|in|on)\b)|(?:talk|speak|chat)(?: to you)? "
                            r"(?:soon|later)|catch (?:you|ya) later|take care\b(?! of (?!yourself))"
                            r"|have a (?:good|great|nice|lovely) (?:day|night|evening|weekend|one))\b")),
    ("encourage", re.compile(r"^(?:just |please |now )?(?:keep (?:it up|up the \w+(?: \w+)? work|(?:on )?[a-z]+ing\b)"
                             r"|don'?t (?:give up|stop|quit|lose hope|get discouraged)|never give up|hang in there|go for it"
                             r"|go get (?:'?em|them)|stay (?:strong|positive|motivated|focused))"
                             r"|\bbelieve in yourself\b|\byou(?:'ve)? got this\b|\byou can do (?:it|this)\b"
                             r"|\b(?:good|best of) luck\b|\bkeep it up\b")),
    ("congratulate", re.compile(r"^(?:congrats|congratulations)\b|\b(?:congrats|congratulations) (?:on|to)\b")),
    ("praise", re.compile(r"^(?:(?:such|what) an? |really )?(?:great|good|nice|awesome|amazing) (?:job|work)\b|^well done\b"
                          r"|\byou did (?:an? |such an? )?(?:great|good|nice|awesome|amazing) job\b|\bproud of you\b"
                          r"|\byou rock\b|\bgood for you\b|\blucky you\b"
                          r"|\byou(?:'re| are) (?:(?:so|really|truly|incredibly|such|the|an?) )*(?:amazing|awesome|"
                          r"incredible|talented|inspiring|brave|strong|wonderful|star|best|inspiration)\b")),
    ("agree", re.compile(r"^(?:(?:i|we) )?(?:(?:totally|completely|fully|really|definitely|so|absolutely|100%) )?"
                         r"agreed?\b(?! to\b)|^(?:exactly|totally|absolutely|so true|true that|same here|me too)\b[\s.!,]*$"
                         r"|^(?:you're|you are) (?:so |absolutely |totally )?right\b|^i know,? right\b")),
]
# Cues after which the clause rules read the words wrongly ("I agree with you" is no decision,
# "I appreciate your support" no liking): the act is the sentence's only frame.
_ACT_ONLY_RE = re.compile(r"^(?:(?:i|we) )?(?:(?:totally|completely|fully|really|definitely|so|absolutely) )?agreed?\b"
                          r"|^(?:(?:i|we) )?(?:(?:really|truly|so|do|totally|definitely|much) )*appreciate "
                          r"(?:it|that|this|you|your)\b")
# Where the thing thanked for or congratulated on starts.
_ACT_THING_RE = {"thank": re.compile(r"\b(?:thanks|thank you)(?: so much| a lot)? for |\bappreciate (?=your\b)", re.I),
                 "congratulate": re.compile(r"\b(?:congrats|congratulations) on ", re.I)}


def _cue_text(ctx: _Context, sentence: str) -> str:
    """The sentence lowercased, without the names of the participants and the fillers before a cue."""
    text = " ".join(sentence.replace("’", "'").lower().split())
    for name in sorted({w for p in ctx.participants for w in [p, p.split()[0]]}, key=len, reverse=True):
        text = re.sub(rf"(?:^|(?<=[\s,]))[,\s]*{re.escape(name.lower())}\b[,]?", " ", text)
    text = " ".join(text.split()).strip(" ,")
    return _FILLERS_RE.sub("", text).strip(" ,")


def _addressee(ctx: _Context, sentence: str) -> str | None:
    """The person spoken to: the other of two participants, else the one other participant the sentence names."""
    other = ctx.other()
    if other:
        return other
    named = [p for p in ctx.participants if p != ctx.speaker and re.search(rf"\b{re.escape(p.split()[0])}\b", sentence)]
    return named[0] if len(named) == 1 else None


def _acts(ctx: _Context, sentence: str) -> tuple[list[ClauseFrame], bool]:
    """The dialogue acts of a sentence, and whether they are all it says (the clause rules are then skipped)."""
    speaker = ctx.speaker
    if not speaker or sentence.rstrip().endswith("?"):
        return [], False
    cue = _cue_text(ctx, sentence)
    found: list[ClauseFrame] = []
    for predicate, pattern in _ACT_CUES:
        if not pattern.search(cue):
            continue
        arms = [("agent", speaker)]
        addressee = _addressee(ctx, sentence)
        if addressee and addressee != speaker:
            arms.append((lx.ADDRESSEE_ROLE, addressee))
        thing = _act_thing(ctx, predicate, sentence)
        if thing and thing not in (speaker, addressee):
            arms.append(("reason" if predicate == "thank" else "theme", thing))
        found.append(ClauseFrame(predicate, arms, [], status="done"))
    return found, bool(found) and bool(_ACT_ONLY_RE.search(cue))


def _act_thing(ctx: _Context, predicate: str, sentence: str) -> str | None:
    """"Thanks for the tips" -> tips, "Congrats on the new job" -> job: a thing named right after the cue."""
    pattern = _ACT_THING_RE.get(predicate)
    m = pattern.search(sentence.replace("’", "'")) if pattern else None
    if m is None:
        return None
    text, lits = find_literals(sentence.replace("’", "'")[m.end():], ctx.mention)
    toks = tokenize(text)
    if not toks or not _np_start(toks[0]) or _is_verb_form(toks[0]) or toks[0].low.endswith("ing"):
        return None  # "thanks for having my back", "congrats on winning": an act, not a thing
    np, _j, _ = parse_np(ctx, toks, 0, lits)
    if np is None or np.type == "person" or not kappa(np.name) or np.name in ctx.participants:
        return None
    return ctx.entity(np.name, _settle_name_type(np, None, "object"))


def _add_acts(ctx: _Context, acts: list[ClauseFrame]) -> None:
    """Add each act once per record, and only with two named arms (a frame binds two anchors)."""
    for act in acts:
        if len({e for _r, e in act.arms}) < 2:
            continue
        if any(f.predicate == act.predicate and f.arms == act.arms for f in ctx.frames):
            continue
        ctx.person(ctx.speaker)
        ctx.frames.append(act)


_GREETINGS = {"hi", "hey", "hello", "thanks", "thank", "congrats", "congratulations", "bye", "welcome", "dear", "wow",
              "oh", "yes", "yeah", "sorry", "agreed", "sure", "ok", "okay", "aw", "aww", "haha", "cheers", "great",
              "cool", "awesome", "nice", "good", "morning", "evening", "night", "you", "ya"}


def _drop_vocatives(ctx: _Context, toks: list[Tok]) -> list[Tok]:
    """Remove names used to address someone ("Thanks, Mel!", "Agreed, Caroline.", "Hi Melanie!")."""
    out: list[Tok] = []
    n = len(toks)
    i = 0
    while i < n:
        tok = toks[i]
        if tok.cap and tok.lit is None and tok.low not in lx.PRONOUNS_SELF:
            j = i
            while j + 1 < n and toks[j + 1].cap and toks[j + 1].lit is None:
                j += 1
            before = toks[i - 1].low if i > 0 else ","
            after = toks[j + 1].low if j + 1 < n else "."
            name = " ".join(t.text for t in toks[i:j + 1])
            greeted = (i > 0 and before in _GREETINGS) or (i > 1 and before == "," and toks[i - 2].low in _GREETINGS)
            known = name in ctx.participants or name.split()[0] in ctx.participants or (j == i and greeted)
            if known and (i == 0 or before in (",", "!", ".") or greeted) and after in (",", "!", ".", "?", ";", "-"):
                if before in (",",) and out and out[-1].low == ",":
                    out.pop()
                i = j + 1
                if i < n and toks[i].low == "," and not out:
                    i += 1
                continue
        out.append(tok)
        i += 1
    return out


_NOUN_SUFFIXES = ("tion", "ment", "ness", "ity", "ance", "ence", "ship", "ism", "ing", "ure", "ogy")


def _decap(ctx: _Context, toks: list[Tok], idx: int) -> None:
    """Lowercase a capitalized sentence-initial word unless it looks like a name."""
    tok = toks[idx]
    if not tok.cap or tok.text in ctx.participants or tok.text == ctx.actor or tok.text in ctx.known_caps:
        return
    w = tok.low
    nxt = toks[idx + 1] if idx + 1 < len(toks) else None
    if _common_word(w) and w not in ("i",):
        toks[idx] = Tok(w, w)
        return
    if nxt is not None and nxt.cap:
        return
    if nxt is not None and (nxt.low in lx.AUXILIARIES or _is_verb_form(nxt) or nxt.low == "'s"):
        if nxt.low in lx.COPULAS and w.endswith(_NOUN_SUFFIXES):
            toks[idx] = Tok(w, w)
        return
    toks[idx] = Tok(w, w)


def _common_word(w: str) -> bool:
    """A word of a closed class, a verb or an evaluative word: capitalized only because it opens a sentence."""
    return (w in lx.PRONOUNS or w in lx.DETERMINERS or w in lx.PREPOSITIONS or w in lx.CONJUNCTIONS
            or w in lx.AUXILIARIES or w in lx.ADVERBS or w in lx.INTERJECTIONS or w in lx.EVALUATIVE
            or w in lx.VERBS or w in lx.IRREGULAR or lemma(w) in lx.VERBS or lemma(w) in lx.REPORTING
            or w.endswith("ly")
            or w in lx.QUESTION_WORDS or w in lx.NEGATIONS)


def _mentions_only(ctx: _Context, toks: list[Tok], lits: list[Literal]) -> None:
    i = 0
    while i < len(toks):
        if toks[i].cap and i > 0:
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None:
                ctx.entity(np.name, _settle_name_type(np, toks[i - 1].low, "object"))
            i = max(j, i + 1)
        else:
            i += 1


def _register(ctx: _Context, np: NP, prep: str | None, role: str, frames: list[ClauseFrame], status: str) -> str | None:
    """Register a noun phrase as an entity, with the side frames it implies (kinship, ownership, naming)."""
    type_ = _settle_name_type(np, prep, role)
    name = np.name
    if np.possessor and (np.person_noun or np.head in lx.ANIMALS) and not name[:1].isupper():
        name = f"{np.possessor}'s {name}"  # "my kids" -> "Melanie's kids"
    entity = ctx.entity(name, type_)
    if entity is None:
        return None
    title = name.split()[0].lower().rstrip(".")
    gender = lx.GENDER.get(np.head) or lx.GENDER.get(title) if name[:1].isupper() or np.possessor else None
    if gender:
        ctx.gender[kappa(entity)] = gender  # "my sister Lena", "Mrs. Okada": "she"
    if np.possessor and np.possessor != entity and not np.favorite:
        if np.head in lx.KIN or np.head in lx.SOCIAL:
            kin = np.head in lx.KIN
            frames.append(ClauseFrame("relative" if kin else "acquaintance",
                                      [("person", np.possessor), ("relative" if kin else "contact", entity)],
                                      [("relation", np.head)]))
        elif np.head in lx.ANIMALS or np.head in lx.OBJECT_NOUNS:
            frames.append(ClauseFrame("own", [("owner", np.possessor), ("item", entity)], []))
    elif np.category and not np.possessor:
        category = ctx.entity(np.category, "person" if np.head in lx.PERSON_NOUNS else "concept")
        if category and category != entity:
            frames.append(ClauseFrame("is_a", [("instance", entity), ("category", category)], []))
    return entity


_CLAUSE_LEAD = lx.CONJUNCTIONS | lx.INTERJECTIONS | {",", "\"", "“", "”", "(", ")", "-", "'s"}  # skipped before a subject
_LEAD_WORDS = lx.INTERJECTIONS | lx.CONJUNCTIONS | lx.ADVERBS


def _clause(ctx: _Context, toks: list[Tok], lits: list[Literal], subject: str | None, planned: bool,
            depth: int = 0, first: bool = False) -> None:
    if depth > 4 or not toks:
        return
    n = len(toks)
    i = 0
    side: list[ClauseFrame] = []
    while i < n and (toks[i].lit is not None
                     or toks[i].low in _CLAUSE_LEAD
                     or (toks[i].low in lx.ADVERBS and toks[i].low not in ("there", "here"))) \
            and not (toks[i].cap and toks[i].low not in _LEAD_WORDS):
        i += 1
    clause_lits = [lits[t.lit] for t in toks if t.lit is not None]
    subj_np: NP | None = None
    pron_subject = False
    if subject is None and i < n:
        tok = toks[i]
        if tok.low in lx.PRONOUNS and tok.low not in lx.POSSESSIVES or tok.low in ("i", "we", "you", "he", "she"):
            subject = ctx.resolve(tok.low)
            if tok.low in ("he", "she") and first and depth == 0:
                subject = ctx.earlier_subject(tok.low) or subject  # "Jonas moved to Berlin. He works at ..."
            pron_subject = tok.low in ("i", "we", "you", "he", "she", "they")
            if subject is None and tok.low not in ("it", "they", "this", "that", "there", "these", "those"):
                pass
            i += 1
        elif _np_start(tok) and not (_is_verb_form(tok) and not tok.cap):
            owner = ctx.earlier_subject(tok.low) if tok.low in ("his", "her") and first and depth == 0 else None
            ctx.opening = (tok.low, owner) if owner else None  # "His sister Lena lives in Hamburg."
            try:
                subj_np, i, carried = parse_np(ctx, toks, i, lits)
                if subj_np is not None:
                    subject = _register(ctx, subj_np, None, "subject", side, "done")
            finally:
                ctx.opening = None
        elif depth == 0 and first and _is_verb_form(tok) and (_is_past(tok) or tok.low.endswith("ing")):
            be = next((k for k in range(i + 1, n) if toks[k].low == ","
                       or toks[k].low in lx.COPULAS or toks[k].low in _MODALS or _third_singular(toks[k])), None) \
                if tok.low.endswith("ing") else None
            if be is not None and toks[be].low == ",":
                be = None  # "Thinking of it, I ...": the gerund is no subject
            if be is not None:
                # A gerund subject: "Connecting with people is key" says nothing the speaker did; "Sourcing
                # pieces for my store was a hurdle" says she sourced them (the judgement after "was" is no arm).
                if not any(t.low in lx.PRONOUNS_SELF for t in toks[i:be]):
                    _mentions_np_run(ctx, toks, i, lits)
                    return
                toks, n = toks[:be], be
            subject = ctx.person(ctx.speaker)  # "Bought a down jacket today.", "Planning a trip there next month."
    ctx.subject_named(subject)
    # Verb group: auxiliaries, negation, adverbs, control verbs ("planning to", "want to").
    copula = negated = passive = past = False
    verb: str | None = None
    while i < n:
        tok = toks[i]
        w = tok.low
        if tok.lit is not None:
            i += 1
            continue
        if w in lx.FUTURE_MARKERS or w in ("would", "'ll"):
            planned = True
            i += 1
            continue
        if w in lx.NEGATIONS:
            negated = True
            i += 1
            continue
        if w in lx.COPULAS:
            copula = True
            past = past or w in ("was", "were")
            i += 1
            continue
        if w in lx.AUXILIARIES and w not in ("have", "has", "had", "do", "does", "did") or w in ("to",):
            past = past or w in ("did", "had")
            i += 1
            continue
        if w in ("have", "has", "had", "do", "does", "did") and i + 1 < n and (
                toks[i + 1].low in lx.NEGATIONS or toks[i + 1].low in lx.ADVERBS or _is_verb_form(toks[i + 1])
                or toks[i + 1].low in ("been", "got", "to")):
            past = past or w in ("did", "had", "have", "has")
            if i + 1 < n and toks[i + 1].low == "to":
                i += 2  # "have to X"
            else:
                i += 1
            continue
        if w in lx.ADVERBS and w not in ("home", "back", "out", "up", "down", "off", "over", "in", "on", "around",
                                           "about", "through", "along", "like"):
            i += 1
            continue
        lem = lemma(w)
        nxt = toks[i + 1].low if i + 1 < n else ""
        after_ing = toks[i + 2] if i + 2 < n else None
        ing_has_args = after_ing is not None and (_np_start(after_ing) or after_ing.low in lx.PREPOSITIONS
                                                  or after_ing.lit is not None)
        if lem in lx.CONTROL and nxt.endswith("ing") and i + 1 < n and lemma(nxt) in lx.VERBS and (
                ing_has_args or lem not in ("love", "like", "enjoy", "hate", "prefer")):
            past = past or _is_past(tok)
            if lem in ("love", "like", "enjoy", "hate", "prefer") and subject:
                activity = ctx.entity(nxt, "concept")  # "I love painting landscapes" also says she likes painting
                if activity:
                    side.append(ClauseFrame("dislike" if lem == "hate" else "like",
                                            [("experiencer", subject), ("theme", activity)], []))
            i += 1  # "started training" -> train
            continue
        after_to = toks[i + 2] if i + 2 < n else None
        to_verb = after_to is not None and not after_to.cap and after_to.lit is None and (
            lemma(after_to.low) in lx.VERBS or _is_verb_form(after_to)) and after_to.low not in lx.DETERMINERS
        if (lem in lx.CONTROL or w in ("going", "planning", "looking")) and (
                (nxt == "to" and to_verb) or (nxt == "forward")):
            if lx.CONTROL.get(lem, True) or w == "going":
                planned = True
            if nxt == "forward":
                i += 1
            i += 2
            continue
        if w == "going" and nxt == "to":
            planned = True  # "I am going to a pride parade": a planned trip
        if copula and not tok.cap and w.isalpha() and w not in lx.ADVERBS and w not in lx.INTERJECTIONS \
                and lem not in lx.VERBS and _state_word(tok, w) and not (w in ("kind", "sort") and nxt == "of") \
                and (toks[i - 1].low in lx.COPULAS | lx.ADVERBS | lx.NEGATIONS or toks[i - 1].low in ("so", "very")):
            after_prep = toks[i + 2] if i + 2 < n else None
            about_thing = (nxt in lx.PREPOSITIONS and nxt != "by" and after_prep is not None and (
                (_np_start(after_prep) and not _is_verb_form(after_prep))
                # "passionate about improving education" (but "excited about opening ..." is a plan, below)
                or (nxt != "to" and w not in _PLAN_ADJECTIVES and after_prep.low.endswith("ing")
                    and after_prep.low not in ("going", "getting"))))
            if about_thing and subject is not None:
                # "I'm allergic to reptiles", "you're passionate about dance", "I'm thankful for this
                # community": an adjective, not a verb; the state frame names what it is about.
                frame = _build(ctx, toks, i + 1, lits, subject, subj_np, None, False, False, planned, past,
                               negated, clause_lits, side, depth)
                if frame is not None:
                    frame.predicate = "state"
                    first_role = frame.arms[1][0]  # what the preposition after the adjective names: its theme
                    frame.arms = [frame.arms[0]] + [("theme" if r == first_role else r, e) for r, e in frame.arms[1:]]
                    frame.literals.insert(0, ("quality", w))
                    ctx.frames.append(frame)
                ctx.frames.extend(side)
                return
            if not _is_verb_form(tok) and not (nxt == "to" or w in ("about", "able", "supposed")):
                ctx.frames.extend(side)  # "I'm so vulnerable": a state of no relation, no frame
                return
        if copula and w in _PLAN_ADJECTIVES and nxt in ("to", "about", "of"):
            planned = planned or w not in ("able", "happy", "glad", "proud")
            i += 2
            continue
        nxt_tok = toks[i + 1] if i + 1 < n else None
        phrasal = nxt_tok is not None and (lem, nxt_tok.low) in lx.PHRASAL  # "look into": no reporting verb
        if lem in lx.REPORTING and not copula and not phrasal and (lem not in lx.VERBS or (nxt_tok is not None and (
                nxt_tok.low in _SUBJECTS or nxt_tok.low in ("that", "what", "how", "why", "when") or nxt_tok.cap))):
            # "I think (that) ..." - the complement is the clause.
            rest = toks[i + 1:]
            if rest and rest[0].low == "that":
                rest = rest[1:]
            _clause(ctx, rest, lits, None, planned, depth + 1)
            ctx.frames.extend(side)
            return
        if w.endswith("ly") and len(w) > 5 and lem not in lx.VERBS and lem not in lx.REPORTING \
                and w not in lx.IRREGULAR and not tok.cap:
            i += 1  # an adverb the lexicon does not list: "They obviously motivate you", "I highly recommend"
            continue
        unknown_verb = (pron_subject and not tok.cap and w.isalpha() and len(w) > 2 and w not in lx.ADJECTIVES
                        and w not in lx.EVALUATIVE and _np_word_plain(tok) and w not in lx.INTERJECTIONS)
        if _is_verb_form(tok) or (lem in lx.VERBS and not tok.cap) or unknown_verb:
            verb = lem
            past = past or _is_past(tok)
            i += 1
            if i < n and (verb, toks[i].low) in lx.PHRASAL:
                verb = lx.PHRASAL[(verb, toks[i].low)]
                i += 1
            if i < n and toks[i].low == "by" and (copula or depth > 0 or subject is not None and subj_np is not None):
                passive = True
            break
        break
    if verb is None and not copula:
        if subj_np is not None and subject is not None and any(t.low in lx.PREPOSITIONS for t in toks[i:]) \
                and (subj_np.determined or subj_np.name[:1].isupper()):
            frame = _build(ctx, toks, i, lits, subject, subj_np, None, False, False, planned, False, False,
                           [lits[t.lit] for t in toks if t.lit is not None], side, depth)
            # Only a value ("The flight from Lisbon took 17 hours"): without one, a verbless clause relates
            # nothing ("Sounds like a nice encounter on your walk" says no encounter happened on a walk).
            if frame is not None and any(k in _VALUE_KEYS for k, _v in frame.literals):
                frame.predicate = "associated"
                ctx.frames.append(frame)
        ctx.frames.extend(side)
        if subject is None:
            # A fragment: keep its entities as mentions.
            _mentions_np_run(ctx, toks, i, lits)
        return
    frame = _build(ctx, toks, i, lits, subject, subj_np, verb, copula, passive, planned, past, negated, clause_lits,
                   side, depth)
    if frame is not None:
        ctx.frames.append(frame)
    ctx.frames.extend(side)


_VALUE_KEYS = {"price", "duration", "measurement", "age", "time", "count", "frequency"}


def _mentions_np_run(ctx: _Context, toks: list[Tok], i: int, lits: list[Literal]) -> None:
    while i < len(toks):
        if _np_start(toks[i]):
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None:
                ctx.entity(np.name, _settle_name_type(np, toks[i - 1].low if i else None, "object"))
            i = max(j, i + 1)
        else:
            i += 1


def _build(ctx: _Context, toks: list[Tok], i: int, lits: list[Literal], subject: str | None, subj_np: NP | None,
           verb: str | None, copula: bool, passive: bool, planned: bool, past: bool, negated: bool,
           clause_lits: list[Literal], side: list[ClauseFrame], depth: int) -> ClauseFrame | None:
    n = len(toks)
    if verb is None:
        predicate, subj_role, obj_role = "is_a", "subject", "category"
    else:
        _family, subj_role, obj_role = lx.VERBS.get(verb, (verb, "agent", "theme"))
        predicate = lx.predicate_of(verb)
    arms: list[tuple[str, str]] = []
    literals: list[tuple[str, str]] = []
    if subject:
        arms.append(("theme" if passive else subj_role, subject))
    last_role: str | None = None
    last_np_entity: str | None = None
    last_np: NP | None = None
    prep: str | None = None
    has_object = False
    person_role: str | None = None
    while i < n:
        tok = toks[i]
        w = tok.low
        if tok.lit is not None:
            i += 1
            continue
        if w in ("named", "called") and i + 1 < n and toks[i + 1].cap and last_np_entity:
            np, j, _ = parse_np(ctx, toks, i + 1, lits)
            if np is not None:
                base_type = last_np.type if last_np else "concept"
                base_type = {"concept": "name", "object": "name"}.get(base_type, base_type)
                name = ctx.entity(np.name, base_type if base_type != "name" else _settle_name_type(np, None, "object"))
                if name:
                    side.append(ClauseFrame("is_a", [("instance", name), ("category", last_np_entity)], []))
                    arms = [(r, name if e == last_np_entity else e) for r, e in arms]
                    last_np_entity = name
            i = max(j, i + 1)
            continue
        if w in ("who", "that", "which") and i + 1 < n and last_np_entity and (
                _is_verb_form(toks[i + 1]) or toks[i + 1].low in lx.AUXILIARIES):
            _clause(ctx, toks[i + 1:], lits, last_np_entity, False, depth + 1)
            break
        if w in ("and", ",", "or", "then", "but") and i + 1 < n:
            nxt = toks[i + 1]
            after = toks[i + 2] if i + 2 < n else None
            verbish = _is_verb_form(nxt) and not nxt.cap and (
                _is_past(nxt) or nxt.low in lx.IRREGULAR or nxt.low in _STRONG_VERBS or after is None
                or after.lit is not None or after.low in lx.DETERMINERS or after.low in lx.PREPOSITIONS
                or after.low in lx.POSSESSIVES or after.low in lx.PRONOUNS)
            if verbish or (nxt.low in lx.AUXILIARIES and subject):
                # "... and made two bowls": same subject, new predicate; ", taught by X": passive on the last noun.
                passive_next = i + 2 < n and toks[i + 2].low == "by"
                _clause(ctx, toks[i + 1:], lits, last_np_entity if passive_next and last_np_entity else subject,
                        planned, depth + 1)
                break
            i += 1
            if last_role and i < n and (_np_start(toks[i]) or (toks[i].lit is not None and i + 1 < n
                                                                 and _np_start(toks[i + 1]))):
                prep_keep = prep
                np, i2, carried = parse_np(ctx, toks, i, lits)
                if np is not None:
                    role = last_role
                    if np.type == "name" and person_role:
                        # "two friends from the pottery course, Yuki and Tom": the names are the friends.
                        role, np.type = person_role, "person"
                        last_role = role
                    ent = _register(ctx, np, prep_keep, role, side, "done")
                    if ent:
                        arms.append((role, ent))
                        last_np_entity, last_np = ent, np
                    literals.extend(carried)
                i = max(i2, i + 1)
            continue
        if w == "to" and i + 1 < n and (lemma(toks[i + 1].low) in lx.VERBS or _is_verb_form(toks[i + 1])) \
                and not toks[i + 1].cap and toks[i + 1].low not in lx.DETERMINERS:
            _clause(ctx, toks[i + 1:], lits, subject, planned, depth + 1)
            break
        if w == "as" and verb is not None and i + 2 < n and toks[i + 1].low in ("a", "an") \
                and _np_start(toks[i + 2]) and not _is_verb_form(toks[i + 2]):
            # "works as a nurse", "volunteers as a tutor": the capacity, not the verb's object.
            np, i2, carried = parse_np(ctx, toks, i + 1, lits)
            if np is not None and np.person_noun:
                ent = ctx.entity(np.name, np.type)
                if ent:
                    arms.append(("capacity", ent))
                literals.extend(carried)
                i = max(i2, i + 2)
                continue
        if w in lx.PREPOSITIONS and i + 1 < n:
            prep = w
            j = i + 1
            lit_index = toks[j].lit
            if lit_index is not None and not (lits[lit_index].key in ("count", "number") and j + 1 < n
                                              and _np_start(toks[j + 1])):
                i = j + 1
                continue
            if toks[j].low in lx.PRONOUNS and toks[j].low not in lx.POSSESSIVES:
                who = ctx.resolve(toks[j].low)
                if who:
                    arms.append((prep_role(prep, predicate, "person", passive), who))
                i = j + 1
                continue
            if _np_start(toks[j]) or toks[j].lit is not None or (toks[j].low.endswith("ing") and toks[j].low.isalpha()):
                np, i2, carried = parse_np(ctx, toks, j, lits, gerund=True)
                if np is not None:
                    role = prep_role(prep, predicate, _settle_name_type(np, prep, "object"), passive)
                    ent = _register(ctx, np, prep, role, side, "done")
                    if ent:
                        arms.append((role, ent))
                        last_role, last_np_entity, last_np = role, ent, np
                        if np.person_noun:
                            person_role = role
                    literals.extend(carried)
                i = max(i2, j + 1)
                continue
            i += 1
            continue
        if w in lx.PRONOUNS and w not in lx.POSSESSIVES and not has_object:
            who = ctx.resolve(w) if verb is not None else None  # "I'm sure you ...": no category
            after = toks[i + 1] if i + 1 < n else None
            if who and w in ("me", "you", "him", "her", "us", "them") and not copula \
                    and lx.VERBS.get(verb or "", ("",))[0] == "give" and after is not None \
                    and after.low in lx.DETERMINERS | lx.POSSESSIVES.keys() and after.low not in ("that", "this"):
                arms.append(("recipient", who))  # "She showed me the importance of ...", "gave him a book"
                i += 1
                continue
            if who:
                arms.append((obj_role if not copula else "category", who))
                has_object = True
                last_role = obj_role
            i += 1
            continue
        if _np_start(tok) or (w.endswith("ing") and w.isalpha() and not has_object):
            np, i2, carried = parse_np(ctx, toks, i, lits, gerund=not has_object)
            if np is not None:
                role = obj_role if not has_object else "theme"
                favorite = copula and subj_np is not None and subj_np.favorite and subj_np.possessor
                if favorite and subj_np is not None:
                    predicate = "favorite"
                    arms = [("fan", str(subj_np.possessor))]
                    literals.append(("category", subj_np.name))
                    role = "item"
                elif verb is None and (has_object or not (np.indefinite or np.name[:1].isupper())):
                    # "X is a Y" names a category, "My teacher is Sensei Mori" an identity; the rest is talk.
                    ctx.entity(np.name, _settle_name_type(np, None, "object"))
                    i = max(i2, i + 1)
                    continue
                ent = _register(ctx, np, "visit" if predicate in PLACE_OBJECT_PREDICATES else None, role, side, "done")
                if ent:
                    arms.append((role, ent))
                    has_object = True
                    last_role, last_np_entity, last_np = role, ent, np
                literals.extend(carried)
            i = max(i2, i + 1)
            continue
        i += 1
    if copula and verb is None:
        # Only the category and places stay on an is_a/located frame.
        arms = [arms[0]] + [(r, e) for r, e in arms[1:]
                            if r in ("category", "item", "location", "destination", "topic")] if arms else arms
        if not has_object and any(r == "topic" for r, _ in arms[1:]):
            predicate = "about"  # "My art is about expressing my trans experience"
        elif not has_object and any(r in ("location", "destination") for r, _ in arms[1:]):
            predicate = "located"
        arms = [(r, e) for r, e in arms if r != "topic" or predicate == "about"]
    if copula and verb is not None and not passive:
        pass
    literals = [(lit.key, lit.value) for lit in clause_lits] + literals
    literals = list(dict.fromkeys(literals))
    if negated:
        literals.append(("negated", "true"))
    event_time = next((v for k, v in literals if k == "date"), None)
    if event_time and ctx.mention and event_time[:10] > ctx.mention.isoformat() and not past:
        planned = True
    status = "planned" if planned else ("done" if past else ctx.record_status)
    distinct = {kappa(e) for _, e in arms}
    if len(distinct) < 2 or subject is None:
        return None  # a clause whose subject is unresolved ("it", "they") asserts nothing we can anchor
    types = [ctx.entities.get(kappa(e), ("", "concept"))[1] for _, e in arms]
    if predicate == "meet" and len(arms) > 1 and types[1] not in ("person", "animal"):
        predicate = "visit" if types[1] == "location" else "watch"  # "see the sunrise", "saw Kyoto"
        seen_role = arms[1][0]  # "got to see some scenery and historic buildings": both are what was seen
        arms = arms[:1] + [("place" if predicate == "visit" else "work", e) if r == seen_role else (r, e)
                           for r, e in arms[1:]]
    if predicate == "own" and len(types) > 1 and types[1] not in ("object", "animal", "work", "location"):
        predicate = "have"  # "I had a tough exam": an experience, not a possession
    motion = predicate in ("travel", "move", "arrive", "visit")
    arms = [("place" if (k > 0 and t == "location" and r in (obj_role, "theme", "activity") and not motion) else r, e)
            for k, ((r, e), t) in enumerate(zip(arms, types))]
    return ClauseFrame(predicate, _dedupe_arms(arms), literals, event_time, status)


def _dedupe_arms(arms: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    keys: set[str] = set()
    for role, entity in arms:
        key = kappa(entity)
        if key in keys:
            continue
        keys.add(key)
        out.append((role, entity))
    return out


def prep_role(prep: str, predicate: str, type_: str, passive: bool = False) -> str:
    """The role of a prepositional argument, from the preposition, the predicate and the argument's type."""
    motion = predicate in ("travel", "move", "arrive", "visit", "leave", "return", "stay", "live")
    type_ = type_.rstrip("?")
    if prep == "by":
        return "agent" if passive else "by"
    if prep in ("in", "at", "inside", "near", "around", "within", "outside", "across", "throughout"):
        if type_ in ("event",) and prep == "at":
            return "occasion"
        return "location"
    if prep == "on":
        return "location" if type_ == "location" else ("occasion" if type_ == "event" else "topic")
    if prep in ("to", "into", "onto", "toward", "towards"):
        if type_ == "person" and not motion:
            return "recipient"
        if type_ == "event":
            return "event"
        return "destination"
    if prep == "from":
        return "origin" if type_ == "location" or motion else "source"
    if prep == "with":
        return "companion" if type_ in ("person", "animal", "name") else "instrument"
    if prep == "for":
        if type_ == "person":
            return "beneficiary"
        if predicate in ("work", "employ"):
            return "employer"
        return "purpose"
    if prep == "about":
        return "topic"
    if prep in ("through", "via"):
        return "via"
    return prep


def predicate_for(word: str) -> str:
    """The canonical predicate the offline extractor gives a verb form (``bought`` -> ``buy``, ``went`` -> ``travel``).

    The read path can map the verbs of a question to predicate families with it.
    """
    return lx.predicate_of(lemma(word.lower()))
