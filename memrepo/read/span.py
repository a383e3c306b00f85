"""Offline answers: the evidence span of the kind the question asks for.

Without a model, ``ask`` answers extractively. What a question asks for is read
by the one question classifier (the analyzer's ``question``, :func:`memrepo.nlp.questions.classify`): a person
(who), a place as specific as asked (a street for "which street", a city for
"which city"), a date (when did), a time of day (what time, when does), a price,
an amount, a count (how many), a duration, a name (what is X called), one of a
class (which X), or a thing, a current state, a reason (answered by the sentence
that holds them). The answer is the span of that kind in the evidence that best
fits the question: the literal keys and entity types that answer each kind come
from the one table (:data:`memrepo.nlp.answers.ANSWER_TYPES`), the spans from the
records as :mod:`memrepo.read.turns` reads them (the analyzer's sentences,
literals, entities and frames, the graph facts the recall rendered), so that a
frame's roles pick the span where a frame exists (``teach(theme=pottery course,
agent=Hiroshi Tanabe)`` answers "Who teaches the pottery course?"). A question
about now ("What is the rent now?", "How much is the rent?") takes the newest of
the values that answer it about as well; a document's "DBA: Priya Raman" answers
"Who is the DBA?".

A record may answer only if it covers the question: every content word of the
question (other than the words that only name the kind, such as "called" or
"cost") is in the record, its speaker, or the two turns before it in the same
source (a reply answers the question asked just before it); a question of four
or more such words may miss one. When no record covers the question, or none
holds a span of the kind, the answer is "not in memory" instead of an unrelated
sentence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from memrepo.nlp import lexicon as lx
from memrepo.nlp.answers import LITERAL_KEYS, cues
from memrepo.nlp.questions import MONEY_WORDS, content_terms
from memrepo.read.fit import Kind, fit, question_kind, unit_after
from memrepo.read.phrases import (PARTICLES, TIME_KINDS, antecedents, compounds, participles, relative, scale_and_noun,
                                  time_phrase, with_code)
from memrepo.read.readings import (NOW_WORDS, agent_spans, appositive_spans, asks, bound_only, clause_end,
                                   colour_spans, contrasted, day_and_hour, modifiers, name_spans,
                                   occasion_words, other_name, possessor, range_start, setting, speaks_of_self,
                                   subject_spans, uri_spans)
from memrepo.read.turns import Span, Turn, context_of, norm, read_turn, rules, speaker_of, terms_of
from memrepo.text.dates import human_date

if TYPE_CHECKING:
    from memrepo.read.answer import Evidence
    from memrepo.read.plan import Plan

__all__ = ["NOT_IN_MEMORY", "Choice", "Kind", "choose", "question_kind", "read_turn", "speaker_of"]

NOT_IN_MEMORY = "Not in memory."
GENERIC = {"kind", "type", "sort", "thing", "stuff", "something", "anything", "recently", "ever", "anyone", "anybody",
           "someone", "somebody", "everyone", "everybody", "done",  # "what should be done": no word of the record
           "wrong"}  # "what was wrong with the kettle": the fault is said, not that it is wrong
# Words the evidence says by its order or its date: "first" on a rota, a "new" column.
ORDINALS = frozenset({"first", "second", "third", "last", "latest", "earliest", "new"})
SENTENCE_KINDS = ("thing", "state", "reason", "yesno")  # answered by the sentence that holds the answer
# What follows a time of day and belongs to it: its zone, and how often ("02:30 UTC", "7:15 pm every Tuesday").
_TIME_TAIL_RE = re.compile(r"(?:\s+(?:[A-Z]{2,5}(?:[+-]\d{1,2})?|local time))?(?:\s+(?:every|each|on)\s+(?:day|night|"
                           r"week|weekday|morning|evening|[A-Z][a-z]+day)s?)?")




# --- choosing the span ------------------------------------------------------------------------


@dataclass
class Choice:
    """The offline answer: its text, the record it rests on, and the sentence quoted."""

    answer: str
    evidence: "Evidence | None" = None
    sentence: str = ""
    score: float = 0.0

    def quote(self) -> str:
        if self.evidence is None:
            return ""
        speaker, _ = speaker_of(self.evidence)
        who = f"{speaker}, " if speaker else ""
        return f'{self.evidence.id} ({who}{self.evidence.said or self.evidence.date}): "{self.sentence}"'


def key_terms(question: str, kind: Kind) -> list[str]:
    """The question's content words, normalised, without the words that only name the kind, particles, and the
    words of its dates ("on 8 May, 2023": a time constraint the recall applies, not words of the record)."""
    naming = cues(kind.name) | ({kind.head} if kind.name in ("which", "place", "person") else set())
    _, literals = rules().literals(question, None)
    dated = {norm(w) for lit in literals if lit.key in ("date", "time") for w in content_terms(lit.surface)}
    dated |= {norm(w) for w in re.findall(r"\b(?:19|20)\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b", question)}
    dated |= {m for m in lx.MONTHS if re.search(rf"\b{m}\b", question, re.I)}
    skip = {norm(w) for w in naming | PARTICLES | GENERIC | dated} | dated
    return [t for t in dict.fromkeys(norm(w) for w in content_terms(question)) if t not in skip]


@dataclass(frozen=True)
class Unit:
    """A part of the question the evidence must hold: one word, or the words of one name ("Mount Fuji")."""

    terms: frozenset[str]
    person: bool = False  # a person's name: never left out
    known: bool = True  # some evidence holds it (a part no evidence holds is never left out, unless a verb)
    verb: bool = False  # a verb (or an ordinal) the evidence may say otherwise ("keep" the piano: it "stays")
    money: bool = False  # what a price is of ("budgeted", "the travel budget"): a record with the price may not say it


def units_of(keys: list[str], names: list[str], turns: list[Turn], joined: dict[str, frozenset[str]] | None = None,
             verbs: set[str] | None = None, around: set[str] | None = None) -> list[Unit]:
    """The parts of the question the evidence must hold; a part is known when a record holds it, or the words
    around the records do (``around``: the document and section a record cites, the turns before it)."""
    everything = set().union(*(t.terms for t in turns), around or set())
    joined = joined or {}
    speakers = {norm(w) for t in turns for w in t.speaker.split()}
    typed: dict[str, set[str]] = {}
    for t in turns:
        for sp in t.spans:
            if sp.text[:1].isupper() and sp.kind not in LITERAL_KEYS:
                typed.setdefault(sp.text.lower(), set()).add(sp.kind)
    out: list[Unit] = []
    left = list(keys)
    for name in names:
        terms = frozenset(norm(w) for w in content_terms(name)) & set(left)
        if terms:
            person = terms <= speakers or typed.get(name.lower()) == {"person"}
            out.append(Unit(terms, person, terms <= everything))
            left = [k for k in left if k not in terms]
    out += [Unit(joined[k], False, joined[k] <= everything) if k in joined else
            Unit(frozenset([k]), False, k in everything,
                 k in lx.VERBS or k + "e" in lx.VERBS or k in ORDINALS or k in (verbs or set()))
            for k in left]
    return out


def covers(turn: Turn, units: list[Unit], context: set[str], strict: bool = False,
           document: frozenset[str] = frozenset()) -> float | None:
    """The record's coverage of the question (None: it does not cover the question).

    Every unit must be in the record (its speaker included) or in the turns just before it; one unit in three
    may be left out if it is not a person and other evidence holds it ("Lena climbed it in 2021": "it" stands
    for Mount Fuji) or it is a verb the record may say in other words; the money word of a price question ("the
    travel budget": "Travel is 12,500 euros") may be left out besides (with ``strict``, for an answer that is a sentence, a verb no evidence holds only
    where every other unit is the record's own). A reply that holds none of the question's
    words itself covers it at half weight when the turns just before it hold them all, two or more ("And Jan's
    new job?" - "He started at the port authority ...").

    A line of a document that holds a unit itself has the document's other lines the ledger holds around it
    (``document``): the occasion a question names ("the library committee meeting") is the document's, not
    each line's ("Minutes: Beth Kowalski"). And the words no evidence holds that the record may say otherwise
    (a verb, a modifier: "paid" where it says "refunded", "the dental practice" where it says "the practice")
    may all be left out where every other unit is the record's own, as many of them as it holds besides names
    ("When did Jonas get married?" is not covered by every line Jonas says).
    """
    if not units:
        return 1.0
    own = [u for u in units if u.terms <= turn.terms]
    near = [u for u in units if u not in own and u.terms <= turn.terms | context]
    occasion = [u for u in units if own and u not in own and u not in near and u.terms <= document]
    missing = [u for u in units if u not in own and u not in near + occasion and not u.money]
    if not own:
        return 0.5 if len(near) >= 2 and not missing else None
    otherwise = bool(missing) and all(u.verb and not u.known for u in missing) and not near \
        and len([u for u in own if not u.person]) + len(occasion) >= len(missing)  # a name only finds the record
    near += occasion
    if not otherwise and (len(missing) > len(units) // 3 or any(u.person or not (u.known or u.verb) for u in missing)):
        return None
    if strict and near and any(u.verb and not u.known for u in missing):
        return None  # a sentence answers a verb it does not say only when it holds every other word itself
    return (len(own) + 0.5 * len(near)) / len(units)


def _sentence_hits(sentence: str, keys: list[str]) -> list[int]:
    """Word positions in ``sentence`` of the question's key words."""
    out = []
    for i, w in enumerate(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’\-]*", sentence)):
        if norm(w) in keys:
            out.append(i)
    return out


def _word_index(sentence: str, offset: int) -> int:
    return len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’\-]*", sentence[:max(0, offset)]))


def _frame_bonus(span: Span, turn: Turn, keys: list[str], plan: "Plan") -> float:
    """A frame that holds the span and also a word of the question: its roles tie the span to the question."""
    best = 0.0
    families = set(plan.families)
    for n in span.frames:
        frame = turn.frames[n]
        others = [label for role, label, _ in frame.arms if label.lower() != span.text.lower()]
        words = {norm(w) for label in others for w in content_terms(label)}
        words |= {norm(w) for _, v in frame.literals for w in content_terms(v)}
        hit = len(words & set(keys))
        if hit:
            best = max(best, 0.6 + 0.3 * min(hit, 3) + (0.5 if frame.predicate in families else 0.0))
    return best


def _proximity(span: Span, turn: Turn, keys: list[str]) -> float:
    """Near the question's words: the nearest, and those of the span's own clause, after it most ("120 pods
    during the Black Friday window" over "40 pods during normal traffic"); a span in a clause without them,
    beside one with them, is about something else ("ships on 27 October, with the code freeze at 17:00")."""
    if span.sentence < 0:
        return 0.0
    sentence = turn.sentences[span.sentence]
    hits = _sentence_hits(sentence, keys)
    if not hits:
        return 0.0
    at = _word_index(sentence, span.start)
    start, end = _clause(sentence, span)
    first, last = _word_index(sentence, start), _word_index(sentence, end)
    before = sum(1 for h in hits if first <= h < at)
    after = sum(1 for h in hits if at <= h < last)
    opener = re.match(r"\W*([A-Za-z]+)", sentence[start:])
    continued = start > 0 and opener is not None and opener.group(1).lower() in lx.PRONOUNS  # "the rent, it is ..."
    alone = -1.0 if not before + after and not continued else 0.0
    return 0.6 / (1 + min(abs(at - h) for h in hits) / 3) + 0.1 * before + 0.3 * after + alone


_CLAUSE_RE = re.compile(r"[,;:]\s+|\s+(?:and|but|while|whereas|with|or)\s+", re.I)


def _clause(sentence: str, span: Span) -> tuple[int, int]:
    """Where the clause of ``span`` starts and ends in ``sentence``; a relative clause after it (", who became
    head of engineering") is its own."""
    start = max((m.end() for m in _CLAUSE_RE.finditer(sentence, 0, max(0, span.start))), default=0)
    return start, clause_end(sentence, span.start + len(span.text))


def _date_text(value: str, surface: str, mention: date | None) -> str:
    """A resolved date in words: "1 May 2023", "July 2023", "the week before 9 May 2023"."""
    if "/" in value:
        m = re.match(r"(last|next|this)\s+(.+)", surface.lower())
        if m and mention:
            rel = {"last": "before", "next": "after", "this": "of"}[m.group(1)]
            return f"the {m.group(2)} {rel} {human_date(mention.isoformat())}"
        a, b = value.split("/", 1)
        return f"between {human_date(a)} and {human_date(b)}"
    return human_date(value)


def _siblings(best: Span, turn: Turn, kind: Kind, question_terms: set[str]) -> list[Span]:
    """Other proper names in the same role of the same frame ("companion=Yuki, companion=Tom")."""
    if not best.frames or kind.name not in ("person", "place", "name", "which"):
        return []
    out: list[Span] = []
    role = best.roles[0]
    for span in turn.spans:
        if span is best or not span.text[:1].isupper() or role not in span.roles or best.frames[0] not in span.frames:
            continue
        if fit(span, turn, kind, question_terms) is not None and span.text not in (s.text for s in out):
            out.append(span)
    return out


def choose(question: str, plan: "Plan", ledger: list["Evidence"]) -> Choice:
    """The offline answer to ``question`` from ``ledger``: a span of the asked kind, or "not in memory"."""
    kind = question_kind(question)
    keys = key_terms(question, kind)
    question_terms = terms_of(question)
    records = [e for e in ledger if e.kind == "record"]
    facts = [e for e in ledger if e.kind == "fact"]
    speakers = tuple(dict.fromkeys(s for s in (speaker_of(e)[0] for e in records) if s))
    head = kind.head if kind.name == "which" else ""  # "which table": "the orders table" names one
    turns = [_with_readings(with_code(read_turn(e, i, speakers, [f for f in facts if e.id in f.cites]), head),
                            kind, keys) for i, e in enumerate(records)]
    context = antecedents(turns, context_of(turns))  # "She chewed through 3 balls": the dog named before
    occasion = setting(question)  # "... of the library committee meeting?": the document's words may say it
    documents = {record: words & occasion for record, words in occasion_words(turns).items()}
    owners, owned = possessor(question) or (frozenset(), "")  # "Maya's wedding": "the wedding", among her words
    named = owners & set().union(*(t.terms for t in turns)) if owners else frozenset()
    for turn in turns if named else []:
        if any(re.search(rf"\bthe\s+{re.escape(owned)}\b", s, re.I) for s in turn.sentences):
            documents[turn.evidence.id] = documents.get(turn.evidence.id, frozenset()) | named
    required = [k for k in keys if not (kind.current and k in NOW_WORDS)]  # "now" is the kind's; near it, the newest
    units = units_of(required, plan.names, turns, compounds(question), participles(question) | modifiers(question),
                     set().union(*context.values()))
    if kind.name == "price":
        money = {norm(w) for w in MONEY_WORDS}
        units = [Unit(u.terms, u.person, u.known, u.verb, u.terms <= money) for u in units]
    covered: list[tuple[float, Turn]] = []
    for turn in turns:
        coverage = covers(turn, units, context.get(turn.evidence.id, set()), strict=kind.name in SENTENCE_KINDS,
                          document=documents.get(turn.evidence.id, frozenset()))
        if coverage is not None:
            covered.append((coverage, turn))
    if not covered:
        return Choice(NOT_IN_MEMORY)
    if kind.name not in SENTENCE_KINDS:
        scored = [(score, span, turn) for coverage, turn in covered for span in turn.spans
                  if (score := _score(span, turn, coverage, kind, keys, question_terms, plan)) is not None]
        if scored:
            score, span, turn = _newest(scored, kind, [k for k in keys if k not in named])  # owners said once
            sentence = turn.sentences[span.sentence] if span.sentence >= 0 else _best_sentence(turn, keys, plan.names)
            return Choice(_span_text(span, turn, kind, question_terms), turn.evidence, sentence, score)
    answering = [(c, t) for c, t in covered if not _best_sentence(t, keys, plan.names).rstrip().endswith("?")]
    covered = answering or covered  # "And Jan's new job?" asks; the reply after it answers
    top = max(c for c, _ in covered)
    coverage, turn = max(((c, t) for c, t in covered if c == top),
                         key=lambda c: (_said(c[1]), -c[1].order) if kind.current else (0, -c[1].order))
    if kind.name == "date" and turn.mention:
        return Choice(human_date(turn.mention.isoformat()), turn.evidence, _best_sentence(turn, keys, plan.names))
    if kind.name in SENTENCE_KINDS or kind.name == "time":
        sentence = _best_sentence(turn, keys, plan.names)
        return Choice(sentence, turn.evidence, sentence, coverage)
    return Choice(NOT_IN_MEMORY)


def _with_readings(turn: Turn, kind: Kind, keys: list[str]) -> Turn:
    """``turn`` with the spans of :mod:`memrepo.read.readings` the question may want: the subject of "X is the
    <head>" for "which", colour words for "what colour", URIs (kept once)."""
    seen = {(s.sentence, s.start) for s in turn.spans if s.kind == "identifier"}
    turn.spans += [s for s in uri_spans(turn) if (s.sentence, s.start) not in seen]
    turn.spans += name_spans(turn) if kind.name == "person" else []
    turn.spans += appositive_spans(turn, kind.head) if kind.name in ("name", "which", "person") else []
    turn.spans += agent_spans(turn, keys) if kind.name == "person" else []
    if kind.name == "which":
        turn.spans += subject_spans(turn, kind.head, keys)
        turn.spans += colour_spans(turn) if kind.head in ("colour", "color") else []
    return turn


def _score(span: Span, turn: Turn, coverage: float, kind: Kind, keys: list[str], question_terms: set[str],
           plan: "Plan") -> float | None:
    """How well ``span`` answers: the record's coverage, the span's fit to the kind, the question's words in its
    sentence and near it, a frame tying it to them; earlier evidence and sentences first."""
    fitness = fit(span, turn, kind, question_terms)
    if fitness is None or span.kind in ("count", "number") and span.text in re.findall(r"\d[\d,.]*\d|\d",
                                                                                      plan.question):
        return None  # no answer, or the question's own number ("4.2" of "How many 4.2 tickets are open?")
    sentence = turn.sentences[span.sentence] if span.sentence >= 0 else ""
    if kind.name == "person" and span.sentence < 0 and turn.speaker and span.text.lower() == turn.speaker.lower() \
            and asks(turn, {i: len(_sentence_hits(s, keys)) for i, s in enumerate(turn.sentences)}):
        return None  # who asks "who's best man?" does not know
    aside = 1.0 if kind.name == "person" and span.sentence < 0 and turn.speaker \
        and span.text.lower() == turn.speaker.lower() and not speaks_of_self(turn) else 0.0  # "Femi is, ..."
    hits = len(_sentence_hits(sentence, keys))
    asked = 1.0 if sentence.rstrip().endswith("?") else 0.0  # a question asked in the evidence answers nothing
    if sentence:
        start, end = _clause(sentence, span)
        clause = sentence[start:end]
        asked += 1.0 if contrasted(clause, set(re.findall(r"[a-z]+", plan.question.lower()))) \
            or other_name(sentence, clause, plan.names) else 0.0
        asked += 1.0 if span.kind in LITERAL_KEYS and bound_only(sentence[:span.start], plan.question) else 0.0
    heads = {norm(kind.head)} | {norm(w) for w in re.findall(r"[A-Za-z]+", plan.question)
                                 if kind.head and rules().singular(w.lower()) == kind.head}  # "people": person
    near = [k for k in keys if k not in heads] or keys  # the head is rewarded by the fit already
    return (3.0 * coverage + fitness + (hits / max(1, len(keys))) + _frame_bonus(span, turn, keys, plan)
            + _proximity(span, turn, near) + _label_bonus(span, turn, keys) + _direction(span, turn, plan)
            - asked - aside - 0.02 * turn.order - 0.01 * max(0, span.sentence))


def _direction(span: Span, turn: Turn, plan: "Plan") -> float:
    """"Which city are they moving to?": the place after "to" ("from Bochum to Münster"); "... come from?": the
    one after "from"; of a change "from A to B", B, unless the question asks what it was before."""
    if span.sentence < 0:
        return 0.0
    before = turn.sentences[span.sentence][:span.start]
    m = (re.search(r"\b(to|from|into)\s*\?\s*$", plan.question, re.I)
         or re.match(r"\s*(for|in|at|from|to|on)\s+(?:which|what)\b", plan.question, re.I))  # "For which country"
    if m:
        return 0.8 if re.search(rf"\b{m.group(1)}\s+(?:the\s+)?$", before, re.I) else 0.0
    if re.search(r"\bfrom\s+\S+(?:\s+\S+)?\s+to\s+$", before) and not _PAST_VALUE_RE.search(plan.question):
        return 0.6  # "rises from 215 euros to 229 euros": the value it changes to
    return 0.0


_PAST_VALUE_RE = re.compile(r"\b(before|previous|previously|used to|old|former|originally)\b", re.I)


# A document's "Label: value" line, after an optional heading ("People — DBA: Priya Raman").
_LABEL_RE = re.compile(r"^(?:[^:—–]{1,60}\s[—–]\s)?([^:]{1,40}):\s+\S")


def _label_bonus(span: Span, turn: Turn, keys: list[str]) -> float:
    """In a "Label: value" line whose label holds the question's words, the value answers ("Who is the DBA?":
    the name after "DBA:"); the heading and the label themselves never do ("Attendees"). A role in brackets after
    a name says the name holds it ("Grace Liu (chair)" for "Who chaired ...?")."""
    if span.sentence < 0:
        return 0.0
    sentence = turn.sentences[span.sentence]
    role = re.match(r"\s*\(([^)]{1,40})\)", sentence[span.start + len(span.text):])
    bonus = 1.5 if role and _sentence_hits(role.group(1), keys) else 0.0
    m = _LABEL_RE.match(sentence)
    if not m:
        return bonus
    if span.start < m.end(1):
        return -1.5
    return bonus + (1.5 if _sentence_hits(m.group(1), keys) else 0.0)


# How far below the best a newer value may score and still answer a question about now: a question that says
# "now" takes the newest value that answers at all; one in the present tense only among near equals.
CURRENT_MARGIN = {"now": 2.5, "present": 1.0}
CHANGING_KINDS = ("price", "amount", "count", "state")  # values a present-tense question asks as they are now


def _newest(scored: list[tuple[float, Span, Turn]], kind: Kind, keys: list[str]) -> tuple[float, Span, Turn]:
    """The best span; for a question about now, the newest of those near the best in a sentence that holds as
    many of the question's words ("it is 1,520 euros a month now" over the rent a month before)."""
    best = max(scored, key=lambda s: s[0])
    margin = CURRENT_MARGIN.get(kind.current)
    if margin is None or kind.current == "present" and kind.name not in CHANGING_KINDS:
        return best

    def hits(s: tuple[float, Span, Turn]) -> int:
        return len(_sentence_hits(s[2].sentences[s[1].sentence], keys)) if s[1].sentence >= 0 else 0

    near = [s for s in scored if s[0] >= best[0] - margin and s[1].kind == best[1].kind and hits(s) >= hits(best)]
    return max(near, key=lambda s: (_said(s[2]), s[0]))


def _street_and_city(span: Span, turn: Turn) -> str:
    """A bare "where" is answered as specifically as the sentence says: "Kestrel Lane 14 in Utrecht" gives
    "Kestrel Lane 14, Utrecht" whichever of the two scored best."""
    sentence = turn.sentences[span.sentence] if span.sentence >= 0 else ""
    others = [s for s in turn.spans if s.sentence == span.sentence and s.start >= 0 and s is not span]
    for street, city in ([(span, s) for s in others if s.kind == "location" and span.kind == "address"]
                         + [(s, span) for s in others if s.kind == "address" and span.kind == "location"]):
        if re.fullmatch(r"\s*(?:,|in)\s*", sentence[street.start + len(street.text):max(0, city.start)]):
            return f"{street.text}, {city.text}"
    return span.text


def _said(turn: Turn) -> str:
    return turn.evidence.said or turn.evidence.date or ""


def _span_text(span: Span, turn: Turn, kind: Kind, question_terms: set[str]) -> str:
    """The answer's words: a date in words, a time with its zone and recurrence, an amount with its unit, a
    street with its city for a bare "where", names with their siblings in the same role."""
    sentence = turn.sentences[span.sentence] if span.sentence >= 0 else ""
    rest = sentence[span.start + len(span.text):] if sentence else ""
    if span.kind == "duration" and kind.name in ("date", "time") and relative(span, turn):
        return f"{relative(span, turn)} {span.text}"
    phrase = time_phrase(span, turn) if span.kind in TIME_KINDS and not kind.past else ""
    if phrase and not any(s.kind == "date" and re.search(r"\d", s.text) for s in turn.spans
                          if s.sentence == span.sentence):
        return phrase  # a schedule's days and hours said together; a dated day is answered as a date
    if kind.when and span.kind in ("date", "time") and day_and_hour(span, turn):
        return day_and_hour(span, turn)  # "When does she land?": "24 September at 14:20"
    if span.kind in ("price", "duration", "measurement", "count", "number") and range_start(span, turn):
        return range_start(span, turn) + span.text + (scale_and_noun(rest, kind.name == "amount")
                                                      if span.kind in ("count", "number") else "")
    if span.kind == "date":
        before = sentence[:span.start] if sentence else ""
        if re.search(r"\bevery\s+$", before) or re.match(r"s\b", rest):
            habit = f"every {span.text.removeprefix('on ').rstrip('s')}"  # "every Tuesday": a habit, not a day
            clock = next((o for o in turn.spans if o.kind == "time" and o.sentence == span.sentence
                          and re.fullmatch(r"\s*(?:at\s+)?", sentence[span.start + len(span.text):max(0, o.start)])), None)
            return f"{habit} at {_span_text(clock, turn, kind, question_terms)}" if clock else habit
        return _date_text(span.value, span.text, turn.mention)
    if span.kind == "time":
        m = _TIME_TAIL_RE.match(rest)
        every = re.search(r"\b(every\s+[A-Z][a-z]+day)\s+at\s+$", sentence[:span.start])
        return (f"{every.group(1)} at " if every else "") + span.text + (m.group(0).rstrip(" ,.") if m else "")
    if span.kind in ("count", "number") and kind.name == "amount" and unit_after(span, turn):
        return f"{span.text} {unit_after(span, turn)}"
    if kind.name == "place" and not kind.place and span.kind in ("address", "location"):
        return _street_and_city(span, turn)
    if span.kind in ("count", "number") and kind.name == "which":
        named = re.search(r"([A-Z][\w-]*)\s+$", sentence[:span.start])
        return f"{named.group(1)} {span.text}" if named else span.text  # "Android 9", "version 4.3": 4.3
    if span.kind in ("count", "number"):
        return span.text + scale_and_noun(rest, kind.name == "amount")
    names = [span] + _siblings(span, turn, kind, question_terms)
    pair = re.search(rf"\b([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?) and {re.escape(span.text)}\b|"
                     rf"\b{re.escape(span.text)} and ([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\b", sentence)
    if len(names) == 1 and pair and kind.name == "person":
        other = pair.group(1) or pair.group(2)
        if not any(o.text == other and o.kind not in ("person", "concept") for o in turn.spans):  # typed no other way
            pal = Span(other, "person", span.sentence)
            names = [pal, span] if pair.group(1) else [span, pal]  # "Wen and Marco go to Lisbon"
    return " and ".join(s.text for s in names)


def _best_sentence(turn: Turn, keys: list[str], names: list[str] | tuple[str, ...] = ()) -> str:
    """The sentence of ``turn`` that holds most of the question's words, those that do not name
    someone or something first: a name finds the record, the rest says which of its sentences
    answers ("Lena lives in Hamburg. She works as an architect." for "What does Lena work as?")."""
    if not turn.sentences:
        return ""
    named = {norm(w) for name in names for w in content_terms(name)}
    asked = [k for k in keys if k not in named]
    return max(turn.sentences, key=lambda s: (len(_sentence_hits(s, asked)), len(_sentence_hits(s, keys)),
                                              -turn.sentences.index(s)))
