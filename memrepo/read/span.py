"""Offline answers: the evidence span of the kind the question asks for.

Without a model, ``ask`` answers extractively. A question asks for one kind of
value: a person (who), a place (where), a date (when), an amount (how much), a
number (how many), a duration (how long), a name (what is X called), one of a
class (which X), or a thing (what ...). The answer is the span of that kind in
the evidence that best fits the question, found by the offline extractor's own
rules (``graph/offline.py``: its sentence splitter, its literals, its entities
and their types, its frames with roles) and by the graph facts the recall
rendered, so that a frame's roles pick the span where a frame exists
(``teach(theme=pottery course, agent=Hiroshi Tanabe)`` answers "Who teaches the
pottery course?").

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
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from memrepo.nlp import lexicon as lx
from memrepo.graph.offline import extract_offline, find_literals, lemma
from memrepo.read.plan import content_terms
from memrepo.text.dates import human_date, parse_iso_date
from memrepo.text.sentences import split_sentences

if TYPE_CHECKING:
    from memrepo.read.answer import Evidence
    from memrepo.read.plan import Plan

NOT_IN_MEMORY = "Not in memory."
CONTEXT_TURNS = 2  # earlier turns of the same source whose words count for a reply's coverage
_SPEAKER_RE = re.compile(r"^([A-Z][\w.'’ -]{0,39}?):\s+(\S.*)$", re.S)
_CITATION_RE = re.compile(r"^(.*\D)(\d+)$")
_AUX = {"is", "are", "was", "were", "did", "do", "does", "has", "have", "had", "will", "would", "can", "could",
        "should", "kind", "kinds", "type", "types", "sort", "sorts", "of", "the", "a", "an", "to", "in", "on"}
# Words that only name the kind of answer; the evidence need not contain them.
CUES: dict[str, set[str]] = {
    "name": {"name", "call"},
    "amount": {"cost", "pay", "price", "spend", "charge", "worth", "money"},
    "date": {"year", "month", "date", "day", "time", "week"},
    "time": {"time"},
    "duration": {"long", "take", "last"},
    "age": {"old", "age"},
    "frequency": {"often"},
    "place": {"place", "locate", "location", "city", "country", "town"},
    "number": {"number", "time"},
}
# The literal keys (graph/offline.py LITERAL_PATTERNS) that answer each kind, best first.
LITERAL_KINDS: dict[str, tuple[str, ...]] = {
    "date": ("date",),
    "time": ("time",),
    "amount": ("price", "measurement", "count", "number"),
    "number": ("count", "frequency", "number", "measurement", "duration", "price"),
    "duration": ("duration",),
    "age": ("age",),
    "frequency": ("frequency",),
}
# Entity types (graph/offline.py entity_type) that answer each kind, with a weight.
ENTITY_KINDS: dict[str, dict[str, float]] = {
    "person": {"person": 1.0},
    "place": {"location": 1.0, "organization": 0.6},
    "name": {"person": 1.0, "animal": 1.0, "location": 1.0, "organization": 1.0, "work": 1.0, "event": 0.8,
             "object": 0.6},
}
LITERAL_KEYS = {k for keys in LITERAL_KINDS.values() for k in keys}
PARTICLES = (lx.PREPOSITIONS - {"like"}) | {"up", "down", "out", "off", "away", "back"}
GENERIC = {"kind", "type", "sort", "thing", "stuff", "something", "anything", "recently", "ever"}
PLACE_ROLES = {"location", "destination", "origin", "place"}
_NAMED_RE = re.compile(r"\b(?:named|called)\s+$", re.I)


@dataclass(frozen=True)
class Kind:
    """What a question asks for: a kind, and the noun it names ("which trail": trail)."""

    name: str
    head: str = ""


def _next_noun(words: list[str], i: int) -> str:
    for w in words[i:i + 3]:
        if w not in _AUX and w not in lx.DETERMINERS:
            return w
    return ""


def question_kind(question: str) -> Kind:
    """The kind of value ``question`` asks for (first rule that applies)."""
    q = question.lower().replace("’", "'")
    words = re.findall(r"[a-z0-9']+", q)
    m = re.search(r"\bhow (many|much)\b", q)
    if m:
        after = words[words.index(m.group(1)) + 1:] if m.group(1) in words else []
        head = _next_noun(after, 0) if after and after[0] not in _AUX else ""
        if m.group(1) == "much" and head == "time":
            return Kind("duration")
        return Kind("number" if m.group(1) == "many" else "amount", singular(head))
    if re.search(r"\bhow long ago\b", q):
        return Kind("date")
    for pattern, name in ((r"\bhow long\b", "duration"), (r"\bhow old\b", "age"), (r"\bhow often\b", "frequency"),
                          (r"\bwhat time\b", "time"),
                          (r"\bwhen\b|\b(?:what|which) (?:year|month|date|day)\b", "date"),
                          (r"\bwhere\b", "place"), (r"\b(?:who|whom|whose)\b", "person"),
                          (r"\b(?:called|named)\b|\bname of\b|\bnamed?\b", "name")):
        if re.search(pattern, q):
            return Kind(name)
    m = re.search(r"\b(?:which|what) (?:kinds?|types?|sorts?) of ([a-z]+)|\b(?:which|what) ([a-z]+)", q)
    if m:
        head = m.group(1) or m.group(2)
        if head not in _AUX and head not in lx.PRONOUNS and head not in lx.DETERMINERS:
            head = singular(head)
            if head in lx.PLACE_NOUNS and head not in lx.ORG_SUFFIXES:
                return Kind("place", head)
            if head in lx.PERSON_NOUNS:
                return Kind("person", head)
            return Kind("which", head)
    return Kind("thing")


def singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def norm(word: str) -> str:
    """One form per word for matching: verbs to their lemma, plurals to the singular."""
    return lemma(re.sub(r"['’]s$", "", word.lower()))


def terms_of(text: str) -> set[str]:
    return {norm(w) for w in content_terms(text)}


# --- the evidence, record by record ---------------------------------------------------------


@dataclass
class Frame:
    predicate: str
    arms: list[tuple[str, str, str]]  # (role, label, type)
    literals: list[tuple[str, str]]


@dataclass
class Span:
    """One candidate answer in a record."""

    text: str
    kind: str  # an entity type or a literal key
    sentence: int  # index of its sentence in the record (-1: from a frame only)
    start: int = -1  # character offset in that sentence
    value: str = ""  # a literal's resolved value
    frames: list[int] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)


@dataclass
class Turn:
    """A ledger record read for answering: speaker, sentences, frames and spans."""

    evidence: "Evidence"
    order: int
    speaker: str
    sentences: list[str]
    frames: list[Frame]
    spans: list[Span]
    terms: set[str]
    mention: date | None


def split_speaker(text: str) -> tuple[str, str]:
    m = _SPEAKER_RE.match(text.strip())
    if m and len(m.group(1).split()) <= 3:
        return m.group(1).strip(), m.group(2)
    return "", text


@lru_cache(maxsize=512)
def _extract(text: str, speaker: str, participants: tuple[str, ...], mention: str, status: str) -> dict[str, Any]:
    return extract_offline({"text": text, "actor": speaker, "participants": list(participants),
                            "mention_time": mention, "status": status or "done"})


def _locate(name: str, sentences: list[str]) -> tuple[int, int, str]:
    """(sentence index, offset, surface) of ``name`` in the sentences ("Mrs Okada" finds "Mrs. Okada")."""
    parts = [re.escape(p) for p in re.split(r"[\s.]+", name) if p]
    if not parts:
        return -1, -1, name
    pattern = re.compile(r"(?<![\w])" + r"\.?\s+".join(parts) + r"(?![\w])", re.I)
    for i, sentence in enumerate(sentences):
        m = pattern.search(sentence)
        if m:
            return i, m.start(), m.group(0)
    return -1, -1, name


def _addressed(frame: dict[str, Any]) -> bool:
    """A dialogue act addressed to someone (lexicon.DIALOGUE_ACTS with a recipient arm)."""
    return frame["predicate"] in lx.DIALOGUE_ACTS and any(a["role"] == lx.ADDRESSEE_ROLE for a in frame["arms"])


def read_turn(evidence: "Evidence", order: int, participants: tuple[str, ...], facts: list["Evidence"]) -> Turn:
    """Sentences, literal and entity spans, and frames (extracted, plus the ledger facts citing it) of a record."""
    speaker, body = split_speaker(evidence.text)
    mention = parse_iso_date(evidence.said or evidence.date)
    sentences = [s for line in body.splitlines() for s in split_sentences(line)]
    spans: list[Span] = []
    for i, sentence in enumerate(sentences):
        _, literals = find_literals(sentence, mention)
        for lit in literals:
            spans.append(Span(lit.surface, lit.key, i, sentence.find(lit.surface), lit.value))
    reply = _extract(evidence.text, speaker, participants, evidence.said or evidence.date, evidence.status or "")
    types = {e["name"]: e["type"] for e in reply["entities"]}
    frames = [Frame(f["predicate"], [(a["role"], a["entity"], types.get(a["entity"], "")) for a in f["arms"]],
                    [(lit["key"], lit["value"]) for lit in f["literals"]]) for f in reply["frames"]
              if not _addressed(f)]  # "Thanks!", "Bye!": acts to the person spoken to answer no question
    for fact in facts:
        frames.append(Frame(fact.predicate, [(r, label, fact.types.get(label, "")) for r, label in fact.roles],
                            sorted(fact.literals.items())))
    by_name: dict[str, Span] = {}
    for name, type_ in types.items():
        i, start, surface = _locate(name, sentences)
        by_name[name.lower()] = Span(surface, type_, i, start)
    for n, frame in enumerate(frames):
        for role, label, type_ in frame.arms:
            span = by_name.get(label.lower())
            if span is None:
                i, start, surface = _locate(label, sentences)
                span = by_name[label.lower()] = Span(surface, type_ or "concept", i, start)
            span.frames.append(n)
            span.roles.append(role)
    spans.extend(by_name.values())
    terms = terms_of(body) | ({norm(w) for w in speaker.split()} if speaker else set())
    for frame in frames:
        terms |= {norm(w) for _, label, _ in frame.arms for w in content_terms(label)}
    return Turn(evidence, order, speaker, sentences, frames, spans, terms, mention)


def _context(turns: list[Turn]) -> dict[str, set[str]]:
    """Record id -> words of the (up to two) earlier turns of the same source that the ledger holds."""
    by_citation: dict[str, Turn] = {}
    for turn in turns:
        for citation in turn.evidence.sources:
            by_citation.setdefault(citation, turn)
    out: dict[str, set[str]] = {}
    for turn in turns:
        words: set[str] = set()
        for citation in turn.evidence.sources:
            m = _CITATION_RE.match(citation)
            if not m:
                continue
            for back in range(1, CONTEXT_TURNS + 1):
                earlier = by_citation.get(f"{m.group(1)}{int(m.group(2)) - back}")
                if earlier is not None:
                    words |= earlier.terms
        out[turn.evidence.id] = words
    return out


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
        speaker, _ = split_speaker(self.evidence.text)
        who = f"{speaker}, " if speaker else ""
        return f'{self.evidence.id} ({who}{self.evidence.said or self.evidence.date}): "{self.sentence}"'


def key_terms(question: str, kind: Kind) -> list[str]:
    """The question's content words, normalised, without the words that only name the kind, particles, and the
    words of its dates ("on 8 May, 2023": a time constraint the recall applies, not words of the record)."""
    cues = CUES.get(kind.name, set()) | ({kind.head} if kind.name in ("which", "place", "person") else set())
    _, literals = find_literals(question, None)
    dated = {norm(w) for lit in literals if lit.key in ("date", "time") for w in content_terms(lit.surface)}
    dated |= {norm(w) for w in re.findall(r"\b(?:19|20)\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b", question)}
    dated |= {m for m in lx.MONTHS if re.search(rf"\b{m}\b", question, re.I)}
    return [t for t in dict.fromkeys(norm(w) for w in content_terms(question))
            if t not in cues | PARTICLES | GENERIC | dated]


@dataclass(frozen=True)
class Unit:
    """A part of the question the evidence must hold: one word, or the words of one name ("Mount Fuji")."""

    terms: frozenset[str]
    person: bool = False  # a person's name: never left out
    known: bool = True  # some evidence holds it (a part no evidence holds is never left out)


def units_of(keys: list[str], names: list[str], turns: list[Turn]) -> list[Unit]:
    everything = set().union(*(t.terms for t in turns)) if turns else set()
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
    out += [Unit(frozenset([k]), False, k in everything) for k in left]
    return out


def covers(turn: Turn, units: list[Unit], context: set[str]) -> float | None:
    """The record's coverage of the question (None: it does not cover the question).

    Every unit must be in the record (its speaker included) or in the turns just before it; one unit in three
    may be left out if it is not a person and other evidence holds it ("Lena climbed it in 2021": "it" stands
    for Mount Fuji).
    """
    if not units:
        return 1.0
    own = [u for u in units if u.terms <= turn.terms]
    near = [u for u in units if u not in own and u.terms <= turn.terms | context]
    missing = [u for u in units if u not in own and u not in near]
    if not own:
        return None
    if len(missing) > len(units) // 3 or any(u.person or not u.known for u in missing):
        return None
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


def _fit(span: Span, turn: Turn, kind: Kind, question_terms: set[str]) -> float | None:
    """How well ``span`` is of the asked kind (None: not of that kind)."""
    words = {norm(w) for w in content_terms(span.text)}
    if span.kind not in LITERAL_KEYS and words and words <= question_terms:
        return None  # the span restates the question
    proper = span.text[:1].isupper()
    if kind.name in LITERAL_KINDS:
        keys = LITERAL_KINDS[kind.name]
        if span.kind not in keys:
            return None
        score = 1.0 - 0.2 * keys.index(span.kind)
        named = False
        if kind.head and span.sentence >= 0:
            after = turn.sentences[span.sentence][span.start + len(span.text):].lower()
            named = bool(re.match(rf"\W*(?:[a-z]+\s+){{0,2}}?{re.escape(kind.head)}", after)
                         or kind.head in span.text.lower())
        if kind.name == "amount" and span.kind in ("count", "number") and not named:
            return None  # a bare number is an amount only of the thing the question names ("how much money")
        return score + (1.5 if named else 0.0)  # "11 students" for "how many students"
    if kind.name in ENTITY_KINDS:
        weight = ENTITY_KINDS[kind.name].get(span.kind)
        if weight is None and kind.name == "place" and (any(r in PLACE_ROLES for r in span.roles)
                                                         or proper and _after_place_preposition(span, turn)):
            weight = 0.6
        if weight is None:
            return None
        score = weight + (0.5 if proper else -0.5)
        if kind.name == "name" and span.sentence >= 0 and _NAMED_RE.search(turn.sentences[span.sentence][:span.start]):
            score += 1.5  # "a greyhound named Pixel"
        if kind.name == "name" and not proper:
            return None
        if kind.name == "place" and any(r in PLACE_ROLES for r in span.roles):
            score += 0.5
        if kind.head and re.search(rf"\b{re.escape(kind.head)}s?\b", span.text.lower()):
            score += 2.5  # "the Yoshida trail" for "which trail"
        return score
    if kind.name == "which":
        if span.kind in LITERAL_KEYS:
            return None
        low = span.text.lower()
        score = 0.0
        if kind.head and re.search(rf"\b{re.escape(kind.head)}s?\b", low):
            score += 1.5
        if _category(kind.head) == span.kind:
            score += 1.0
        if score == 0.0:
            return None
        return score + (0.5 if proper else 0.0)
    return None


def _after_place_preposition(span: Span, turn: Turn) -> bool:
    """"near Ueno", "in Porto": a name after a preposition of place."""
    if span.sentence < 0:
        return False
    before = turn.sentences[span.sentence][:span.start]
    return bool(re.search(r"\b(?:in|at|near|from|to|around|outside|inside|beside)\s+(?:the\s+)?$", before, re.I))


def _category(head: str) -> str:
    if head in lx.ORG_SUFFIXES:
        return "organization"
    for nouns, type_ in ((lx.PERSON_NOUNS, "person"), (lx.ANIMALS, "animal"), (lx.PLACE_NOUNS, "location"),
                         (lx.EVENT_NOUNS, "event"), (lx.WORK_NOUNS, "work"), (lx.OBJECT_NOUNS, "object")):
        if head in nouns:
            return type_
    return ""


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
    if span.sentence < 0:
        return 0.0
    hits = _sentence_hits(turn.sentences[span.sentence], keys)
    if not hits:
        return 0.0
    at = _word_index(turn.sentences[span.sentence], span.start)
    return 0.6 / (1 + min(abs(at - h) for h in hits) / 3)


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
        if _fit(span, turn, kind, question_terms) is not None and span.text not in (s.text for s in out):
            out.append(span)
    return out


def choose(question: str, plan: "Plan", ledger: list["Evidence"]) -> Choice:
    """The offline answer to ``question`` from ``ledger``: a span of the asked kind, or "not in memory"."""
    kind = question_kind(question)
    keys = key_terms(question, kind)
    question_terms = terms_of(question)
    records = [e for e in ledger if e.kind == "record"]
    facts = [e for e in ledger if e.kind == "fact"]
    speakers = tuple(dict.fromkeys(s for s in (split_speaker(e.text)[0] for e in records) if s))
    turns = [read_turn(e, i, speakers, [f for f in facts if e.id in f.cites]) for i, e in enumerate(records)]
    context = _context(turns)
    units = units_of(keys, plan.names, turns)
    best: tuple[float, Span | None, Turn | None] = (0.0, None, None)
    covered: list[tuple[float, Turn]] = []
    for turn in turns:
        coverage = covers(turn, units, context.get(turn.evidence.id, set()))
        if coverage is None:
            continue
        covered.append((coverage, turn))
        if kind.name == "thing":
            continue
        for span in turn.spans:
            fit = _fit(span, turn, kind, question_terms)
            if fit is None:
                continue
            hits = len(_sentence_hits(turn.sentences[span.sentence], keys)) if span.sentence >= 0 else 0
            score = (3.0 * coverage + fit + (hits / max(1, len(keys))) + _frame_bonus(span, turn, keys, plan)
                     + _proximity(span, turn, keys) - 0.02 * turn.order - 0.01 * max(0, span.sentence))
            if score > best[0]:
                best = (score, span, turn)
    score, found, found_in = best
    if found is not None and found_in is not None:
        span, turn = found, found_in
        if span.kind == "date":
            text = _date_text(span.value, span.text, turn.mention)
        else:
            names = [span] + _siblings(span, turn, kind, question_terms)
            text = " and ".join(s.text for s in names)
        sentence = turn.sentences[span.sentence] if span.sentence >= 0 else _best_sentence(turn, keys, plan.names)
        return Choice(text, turn.evidence, sentence, score)
    if not covered:
        return Choice(NOT_IN_MEMORY)
    coverage, turn = max(covered, key=lambda c: (c[0], -c[1].order))
    if kind.name == "date" and turn.mention:
        return Choice(human_date(turn.mention.isoformat()), turn.evidence, _best_sentence(turn, keys, plan.names))
    if kind.name == "thing":
        sentence = _best_sentence(turn, keys, plan.names)
        return Choice(sentence, turn.evidence, sentence, coverage)
    return Choice(NOT_IN_MEMORY)


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
