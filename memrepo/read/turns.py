"""The evidence an offline answer is chosen from, record by record (see :mod:`memrepo.read.span`).

Each record of the ledger is read into a :class:`Turn`: its speaker (a conversation's turn only: a
document's "DBA: Priya Raman" names a role), its sentences, and the candidate answers in them
(:class:`Span`): the literals of the analyzer's literal stage, the entities and frames of its
extractor and the graph facts citing the record, street addresses and names with digits
("db-stage-04", "eu-west-1"). The analyzer is the default of
:data:`memrepo.capabilities.ANALYZERS`; this module never imports the rules themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from memrepo.nlp import Analyzer, analyzer
from memrepo.nlp import lexicon as lx
from memrepo.nlp.questions import content_terms
from memrepo.text.dates import parse_iso_date

if TYPE_CHECKING:
    from memrepo.read.answer import Evidence

CONTEXT_TURNS = 2  # earlier turns of the same source whose words count for a reply's coverage
_CITATION_RE = re.compile(r"^(.*\D)(\d+)$")
_TURN_CITATION_RE = re.compile(r"#(?:D\d+:\d+|t\d+|outcome)$")  # a conversation turn or a task session's step
# A street address: "Kestrel Lane 14", "221B Baker Street", "Hafenstraße 9"; the words that end a street's name.
STREET_WORDS = ("Street", "St", "Road", "Rd", "Lane", "Avenue", "Ave", "Boulevard", "Blvd", "Way", "Drive", "Square",
                "Terrace", "Court", "Quay", "Embankment", "Row", "Crescent", "Alley", "Plaza")
STREET_PREFIXES = ("Rua", "Avenida", "Av.", "Calle", "Carrer", "Via", "Viale", "Rue", "Boulevard", "Praça", "Largo",
                   "Plaza", "Ulica")
STREET_ENDINGS = ("straße", "strasse", "str.", "weg", "gasse", "gracht", "laan", "plein", "straat", "allee", "vej",
                  "gatan", "gata", "vägen")
ADDRESS_RE = re.compile(
    r"(?:\b\d+[A-Za-z]?,?\s+)?(?:\b(?:[A-Z][\w'’-]*\s+){1,3}(?:" + "|".join(STREET_WORDS) + r")\b\.?"
    r"|\b(?:" + "|".join(re.escape(p) for p in STREET_PREFIXES) + r")\s+(?:(?:de|da|do|dos|das|del|de la|di|della|du|des)"
    r"\s+)?(?:[A-Z][\w'’-]*)(?:\s+[A-Z][\w'’-]*){0,2}"
    r"|\b[A-Z][\w'’-]*(?:" + "|".join(re.escape(e) for e in STREET_ENDINGS) + r"))(?:\s+\d+[A-Za-z]?\b)?")
# A name of digits and dashes that names a machine, a region, a cluster, a branch: "db-stage-04", "eu-west-1",
# "pay-prod-eu" (a digit and a letter, or three parts), "#platform-oncall", "invoice/render.py", "2.8.1".
IDENTIFIER_RE = re.compile(r"(?<![\w./-])(?:#[\w-]*\w|[\w-]+(?:/[\w-]+)*/[\w-]+\.[A-Za-z]\w{0,4}|[\w-]+(?:/[\w-]+){2,}|v?\d+(?:\.\d+){2,}|(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+"
                           r"|[a-z0-9]+(?:-[a-z0-9]+){2,})(?![\w-])")


def rules() -> Analyzer:
    """The analyzer that reads the evidence (the default of memrepo.capabilities.ANALYZERS)."""
    return analyzer()


def norm(word: str) -> str:
    """One key per word for matching: verbs to their lemma, plurals to the singular, then the spellings a lemma
    may keep apart folded ("quote"/"quoted", "cache"/"caching": a final e; "shelf"/"shelves": f and v)."""
    key = rules().lemma(re.sub(r"['’]s$", "", word.lower()))
    if len(key) >= 5 and key.endswith("e"):  # not "time": it would be the name "Tim"
        key = key[:-1]
    return key[:-1] + "v" if len(key) > 3 and key.endswith("f") else key


def terms_of(text: str) -> set[str]:
    return {norm(w) for w in content_terms(text)}


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


def speaker_of(evidence: "Evidence") -> tuple[str, str]:
    """``(speaker, text)`` of a conversation turn; ``("", text)`` for a record that is no turn: a document's
    "DBA: Priya Raman" names a role, not someone speaking (a label in capitals or with a word in lower
    case, a record of several lines, or one citing a document's part)."""
    speaker, body = rules().split_speaker(evidence.text.strip())
    if not speaker:
        return "", evidence.text
    turn = any(_TURN_CITATION_RE.search(c) for c in evidence.sources)
    if not turn and (evidence.sources or "\n" in body.strip() or speaker.isupper()
                     or any(w[:1].islower() for w in re.split(r"[\s-]+", speaker))):
        return "", evidence.text
    return speaker, body


@lru_cache(maxsize=512)
def _extract(text: str, speaker: str, participants: tuple[str, ...], mention: str, status: str) -> dict[str, Any]:
    return rules().extract({"text": text, "actor": speaker, "participants": list(participants),
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
    speaker, body = speaker_of(evidence)
    mention = parse_iso_date(evidence.said or evidence.date)
    sentences = [s for line in body.splitlines() for s in rules().sentences(line)]
    spans: list[Span] = []
    for i, sentence in enumerate(sentences):
        _, literals = rules().literals(sentence, mention)
        for lit in literals:
            spans.append(Span(lit.surface, lit.key, i, sentence.find(lit.surface), lit.value))
        for pattern, kind in ((ADDRESS_RE, "address"), (IDENTIFIER_RE, "identifier")):
            spans += [Span(m.group(0).strip(" ,."), kind, i, m.start()) for m in pattern.finditer(sentence)]
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


def context_of(turns: list[Turn]) -> dict[str, set[str]]:
    """Record id -> words of the (up to two) earlier turns of the same source that the ledger holds, and of the
    document and section its citation names ("#meeting_coop/Garden:1": meeting, coop, garden)."""
    by_citation: dict[str, Turn] = {}
    for turn in turns:
        for citation in turn.evidence.sources:
            by_citation.setdefault(citation, turn)
    out: dict[str, set[str]] = {}
    for turn in turns:
        words: set[str] = set()
        for citation in turn.evidence.sources:
            if not _TURN_CITATION_RE.search(citation):
                words |= terms_of(" ".join(re.findall(r"[^\W\d_]{3,}", citation.partition("#")[2])))
            m = _CITATION_RE.match(citation)
            if not m:
                continue
            for back in range(1, CONTEXT_TURNS + 1):
                earlier = by_citation.get(f"{m.group(1)}{int(m.group(2)) - back}")
                if earlier is not None:
                    words |= earlier.terms
        out[turn.evidence.id] = words
    return out
