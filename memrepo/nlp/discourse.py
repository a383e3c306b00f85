"""Discourse: who speaks each line, what the record has named so far, and whom a pronoun names.

The one speaker pattern (:data:`SPEAKER_RE`: "Name: text") is read here for the
parsers, the rules and span answers alike. :class:`Discourse` is what the rules know
about one record while they read it: its speaker and participants, the date it was
said, the entities and frames so far. "I/my/we" resolve to the speaker of the line,
"you" to the other participant when there are two, a sentence-opening "he/she/his/her"
to the one person the record's earlier sentences named as a subject (else to the last
person named who is no participant).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memrepo.nlp import lexicon as lx
from memrepo.nlp.morphology import common_word, kappa, singular
from memrepo.nlp.tokens import Tok
from memrepo.text.dates import parse_iso_date

#: The one speaker pattern: "Name: text" opening a line (a name of at most 40 characters).
SPEAKER_RE = re.compile(r"^([A-Z][\w.'’ -]{0,39}?):\s+(\S.*)$", re.S)
MAX_SPEAKER_WORDS = 3  # "Dr. Ana Ruiz: ..." is a speaker; "Note to self from today: ..." is not


def split_speaker(line: str) -> tuple[str, str]:
    """``("Ana", "text")`` for ``"Ana: text"``; ``("", line)`` when the line names no speaker."""
    m = SPEAKER_RE.match(line.strip())
    if m and len(m.group(1).split()) <= MAX_SPEAKER_WORDS:
        return m.group(1).strip(), m.group(2)
    return "", line


@dataclass
class ClauseFrame:
    """One frame the rules read: a predicate, its arms (role, entity name) and literals (key, value)."""

    predicate: str
    arms: list[tuple[str, str]] = field(default_factory=list)
    literals: list[tuple[str, str]] = field(default_factory=list)
    event_time: str | None = None
    status: str = "done"


_CAP_WORD_RE = re.compile(r"(?<![\w'’])[A-Z][\w’'-]*")
_CALENDAR_WORDS = {w.capitalize() for w in (*lx.MONTHS, *lx.WEEKDAYS)}


def capitalized(sentence: str) -> list[str]:
    """The capitalized words of a sentence; its first only when it is no common word capitalized to open it
    ("Friends came over" keeps "Friends": it may be a name for all the rules know)."""
    words = _CAP_WORD_RE.findall(sentence)
    if words and sentence.lstrip(" \"“'(").startswith(words[0]) and common_word(words[0].lower()):
        words = words[1:]
    return words


class Discourse:
    """What the rules know about the record: speaker, other participants, dates, entities so far."""

    def __init__(self, variables: dict[str, Any], pronouns: bool = True):
        self.actor = (variables.get("actor") or "").strip() or None
        self.participants = [p for p in variables.get("participants") or [] if p]
        mention = str(variables.get("mention_time") or "")[:10]
        self.mention: date | None = parse_iso_date(mention)
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
        """Register ``name`` as an entity of ``type_`` (a trailing ``?``: a guess a later cue overrides);
        returns the name the record knows it by, None for no name."""
        name = " ".join(name.split()).strip(" ,.'\"")
        key = kappa(name)
        if not key or len(name) > 160:
            return None
        weak = type_.endswith("?")
        type_ = type_.rstrip("?")
        if key in self.entities:
            old_name, old_type = self.entities[key]
            if (old_type in lx.VAGUE_TYPES or key in self.weak) and type_ not in lx.VAGUE_TYPES and not weak:
                self.entities[key] = (old_name, type_)
                self.weak.discard(key)
            name = old_name
        else:
            self.entities[key] = (name, type_)
            self.order.append(key)
            if weak:
                self.weak.add(key)
        self._remember(key, name)
        return name

    def _remember(self, key: str, name: str) -> None:
        """The last person, group and thing named, for the pronouns of later clauses."""
        kind = self.entities[key][1]
        if kind in lx.ANIMATE_TYPES:
            self.saying.setdefault(key, False)
        if kind == "person" and name != self.speaker and name not in self.participants and key not in self.weak:
            if name[:1].isupper() and "'s " not in name:
                self.last_person = name
            elif name.endswith(lx.GROUP_ENDINGS):
                self.last_group = name
        elif kind in lx.THING_TYPES:
            self.last_thing = name

    def person(self, name: str | None) -> str | None:
        return self.entity(name, "person") if name else None

    def other(self) -> str | None:
        """The other participant of a two-person record, else None."""
        others = [p for p in self.participants if p != self.speaker]
        return others[0] if len(others) == 1 else None

    def resolve(self, low: str) -> str | None:
        """The entity a pronoun names, or None."""
        if self.opening is not None and low == self.opening[0]:
            return self.opening[1]
        if low in lx.PRONOUNS_SELF:
            return self.person(self.speaker)
        if low in lx.PRONOUNS_YOU:
            return self.person(self.other())
        if low in lx.PRONOUNS_HE or low in lx.PRONOUNS_SHE:
            return self.last_person
        if low in lx.PRONOUNS_IT:
            return self.last_thing  # the last concrete thing named: "I bought a bike. It cost $200."
        if low in lx.PRONOUNS_THEY:
            return self.last_group or self.last_thing
        return None

    def subject_named(self, name: str | None) -> None:
        """``name`` is the subject of a clause of the sentence being read."""
        key = kappa(name) if name else ""
        self.subjects.add(key)
        if key in self.entities and self.entities[key][1] in lx.ANIMATE_TYPES:
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
        candidates = [key for key in self.said if self._may_be(key, pronoun, people)]
        if len(candidates) != 1 or not self.said[candidates[0]]:
            return None
        if self._unread_capital(candidates[0], people):
            return None
        return self.entities[candidates[0]][0]

    def _may_be(self, key: str, pronoun: str, people: set[str | None]) -> bool:
        """Whether the entity ``key`` may be the one "he"/"she" (``pronoun``) names."""
        name, type_ = self.entities[key]
        if type_ not in lx.ANIMATE_TYPES or name in people or not (name[:1].isupper() or "'s " in name):
            return False
        if type_ == "animal" and not name[:1].isupper() or key in self.weak and key in lx.GENERIC_TERMS:
            return False  # a pet by name only ("Oliver", not "Mia's dog"); "Friends came over": no name
        last = name.split()[-1]
        if not last[:1].isupper() and (singular(last) != last or last in lx.GROUP_NOUNS):
            return False  # "Mia's kids", "my family": no "he" or "she"
        return self.gender.get(key, pronoun) == pronoun

    def _unread_capital(self, candidate: str, people: set[str | None]) -> bool:
        """A capitalized word the rules did not read as a thing may be a second person ("Ivo quietly told
        Petra ...": Ivo is no entity; "... to Ivo. Ivo explained ...": Ivo is read as a place, but he is a
        subject): then the pronoun may name either."""
        things = {w for key, (name, type_) in self.entities.items()
                  if type_ not in lx.ANIMATE_TYPES and key not in self.subjects or key == candidate
                  for w in name.split()}
        return any(w not in things and w not in people and w != "I" and w not in _CALENDAR_WORDS
                   for sentence in self.sentences for w in capitalized(sentence))

    def speaker_lines(self, text: str) -> list[tuple[str | None, str]]:
        """The lines of ``text`` with who says each: a "Name: " line its speaker (added to the participants),
        any other line the record's actor. Headings ("# ...") and blank lines are left out."""
        out: list[tuple[str | None, str]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = SPEAKER_RE.match(line)
            if m and (m.group(1) in self.participants or m.group(1) == self.actor
                      or (len(m.group(1).split()) <= 2 and all(w[:1].isupper() for w in m.group(1).split()))):
                speaker = m.group(1).strip()
                if speaker not in self.participants:
                    self.participants.append(speaker)
                out.append((speaker, m.group(2)))
            else:
                out.append((self.actor, line))
        return out


def dedupe_arms(arms: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The arms with each entity once (by anchor key), the first role kept."""
    out: list[tuple[str, str]] = []
    keys: set[str] = set()
    for role, entity in arms:
        key = kappa(entity)
        if key in keys:
            continue
        keys.add(key)
        out.append((role, entity))
    return out


# Marks a name used to address someone stands between ("Thanks, Ana!", "Right, Ben.").
_VOCATIVE_BEFORE = frozenset({",", "!", "."})
_VOCATIVE_AFTER = frozenset({",", "!", ".", "?", ";", "-"})


def drop_vocatives(ctx: Discourse, toks: list[Tok]) -> list[Tok]:
    """Remove names used to address someone ("Thanks, Ana!", "Agreed, Bruno.", "Hi Ines!")."""
    out: list[Tok] = []
    n = len(toks)
    i = 0
    while i < n:
        tok = toks[i]
        if tok.cap and tok.lit is None and tok.low not in lx.PRONOUNS_SELF:
            j = i
            while j + 1 < n and toks[j + 1].cap and toks[j + 1].lit is None:
                j += 1
            if _vocative(ctx, toks, i, j):
                if i > 0 and toks[i - 1].low == "," and out and out[-1].low == ",":
                    out.pop()
                i = j + 1
                if i < n and toks[i].low == "," and not out:
                    i += 1
                continue
        out.append(tok)
        i += 1
    return out


def _vocative(ctx: Discourse, toks: list[Tok], i: int, j: int) -> bool:
    """Whether the capitalized run ``toks[i:j+1]`` is a participant (or a greeted name) addressed by the line."""
    before = toks[i - 1].low if i > 0 else ","
    after = toks[j + 1].low if j + 1 < len(toks) else "."
    name = " ".join(t.text for t in toks[i:j + 1])
    greeted = (i > 0 and before in lx.GREETINGS) or (i > 1 and before == "," and toks[i - 2].low in lx.GREETINGS)
    known = name in ctx.participants or name.split()[0] in ctx.participants or (j == i and greeted)
    return known and (i == 0 or before in _VOCATIVE_BEFORE or greeted) and after in _VOCATIVE_AFTER
