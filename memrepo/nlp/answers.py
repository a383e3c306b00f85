"""The one table from an answer type to what answers it.

A question asks for one type of value (:func:`memrepo.nlp.questions.classify` says which). This
table says, for each type, which literal keys (the literal stage's keys: ``date``, ``time``,
``price``, ``measurement``, ``percent``, ``count``, ``duration``, ``age``, ``email``, ``phone``,
``url``, ...) and which entity types (``person``, ``location``, ...) answer it, and the question
words that only name the type (``cost`` in "How much did it cost?": the evidence need not say
"cost"). The recall scores a frame that holds an
answer of an asked type higher (``memrepo/read/facts.py``); the offline answerer picks the span of
the asked type from the evidence (``memrepo/read/span.py``) and the answer check knows what a
count or a date looks like (``memrepo/read/answer.py``).

Literal keys are listed best first: an answer of the first key is preferred to one of the second
("How many hours did the flight take?" takes a count first, then a duration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class AnswerType:
    """What answers one type of question.

    Attributes:
        literals: the literal keys that answer it, best first.
        entities: the entity types that answer it, with a weight (1.0: a full answer).
        cues: question words that only name the type; the evidence need not contain them.
    """

    literals: tuple[str, ...] = ()
    entities: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    cues: frozenset[str] = frozenset()

    @property
    def full_entities(self) -> tuple[str, ...]:
        """The entity types that answer it fully (weight 1.0)."""
        return tuple(t for t, w in self.entities.items() if w >= 1.0)


def _type(literals: tuple[str, ...] = (), entities: dict[str, float] | None = None,
          cues: str = "") -> AnswerType:
    return AnswerType(literals, MappingProxyType(dict(entities or {})), frozenset(cues.split()))


_NAMED = {"person": 1.0, "animal": 1.0, "location": 1.0, "organization": 1.0, "work": 1.0, "event": 0.8,
          "object": 0.6}

#: The one table: answer type -> what answers it.
ANSWER_TYPES: Mapping[str, AnswerType] = MappingProxyType({
    "person": _type(entities={"person": 1.0}),
    "place": _type(entities={"location": 1.0, "organization": 0.6},
                   cues="place locate location city country town street address"),
    "date": _type(("date", "time", "year"), cues="year month date day time week"),
    "time": _type(("time", "date", "year"), cues="time"),
    "price": _type(("price",), cues="cost pay price spend charge worth money quote extra amount sum total"),
    "amount": _type(("price", "measurement", "percent", "count", "number"),
                    cues="cost pay price spend charge worth money extra big large small heavy tall high far fast wide deep "
                         "amount sum total"),
    "count": _type(("count", "frequency", "number", "measurement", "duration", "price"), cues="number time"),
    "duration": _type(("duration",), cues="long take last far soon quickly time period duration"),
    "age": _type(("age",), cues="old age"),
    "percent": _type(("percent", "price", "count", "number"),
                     cues="share percentage proportion fraction percent discount rate"),
    "email": _type(("email",), cues="email e-mail mail address"),
    "phone": _type(("phone",), cues="number phone telephone call ring dial"),
    "url": _type(("url",), cues="website site url link web address page"),
    "frequency": _type(("frequency",), cues="often"),
    "name": _type(entities=_NAMED, cues="name call"),
    "which": _type(),
    "thing": _type(),
    "state": _type(cues="status state current currently now"),
    "reason": _type(),
    "yesno": _type(),
})

#: Every literal key some answer type is answered by.
LITERAL_KEYS: frozenset[str] = frozenset(k for t in ANSWER_TYPES.values() for k in t.literals)


def answer_type(name: str) -> AnswerType:
    """The entry of ``name`` (an unknown type: answered by nothing in particular)."""
    return ANSWER_TYPES.get(name, ANSWER_TYPES["thing"])


def literal_keys(name: str) -> tuple[str, ...]:
    """The literal keys that answer ``name``, best first."""
    return answer_type(name).literals


def cues(name: str) -> frozenset[str]:
    """The question words that only name the type ``name``."""
    return answer_type(name).cues
