"""The second hop of ``ask``: a question that asks something of a thing it only describes (issue 32).

"Who owns the system that feeds Herald?" asks an attribute (the owner) of a thing named nowhere in the question:
"the system that feeds Herald". Its answer needs two passages: one that names the thing ("burrow ... feeds
Herald"), one that gives its attribute ("Samir ... owns burrow"). :func:`described` finds the described phrase
(a noun after "the" with a relative clause: "the system that feeds Herald", "the cluster which runs X",
"the database Ilse Brandvold owns"), the question that names the thing ("Which system feeds Herald?") and
:meth:`Described.follow_up` the question with the thing's name in its place ("Who owns burrow?"), which ``ask``
recalls within its budget of recalls (MIRIX-2.0 §2.4, A.4) and answers from the merged ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RELATIVE_RE = re.compile(
    r"\bthe\s+(?P<head>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?P<rel>that|which|whose|who)\s+(?P<clause>[^?]+?)\s*\??$",
    re.I)
# "the database Ilse Brandvold owns": a noun, a name, a verb (a relative clause without "that")
_NAME = r"[A-Z][\w'’-]*(?:\s+(?:(?:de|van|von|der|da|di|du|le|la)\s+)?[A-Z][\w'’-]*){0,2}"
_REDUCED_RE = re.compile(
    r"\bthe\s+(?P<head>(?:[\w-]+\s+)?(?:[a-z][\w-]*|[A-Z]{2,}s?))\s+(?P<clause>" + _NAME + r"\s+[a-z][\w-]*s)\b")
# "the database holding the Herald v2 outbox": a noun and a participle
_NOT_THINGS = frozenset(("one", "way", "thing", "time", "day", "week", "month", "year", "hour", "minute", "night",
                         "morning", "evening", "weekend", "quarter"))
_PARTICIPLE_RE = re.compile(r"\bthe\s+(?P<head>[a-z][\w-]*)\s+(?P<clause>[a-z]+ing\s+(?:the|a|an|its|their|our|[A-Z\d])"
                            r"[^?]*?)\s*\??$")  # "the database holding the outbox", not "the release planning meeting"
# "that Priya Raman owns run?": a clause whose subject is a name ends at its verb
_OBJECT_CLAUSE_RE = re.compile(r"^(" + _NAME + r"\s+[a-z][\w-]*s)\b")
_INVERTED_RE = re.compile(r"\b(?:do|does|did|will|would|can|could|should|must|may)\s+$", re.I)


@dataclass(frozen=True)
class Described:
    """A described thing in a question: its phrase, the noun, the clause, and what is asked of it."""

    question: str
    phrase: str  # "the system that feeds Herald"
    head: str  # "system"
    clause: str  # "feeds Herald"

    @property
    def naming(self) -> str:
        """The question that names the thing: "Which system feeds Herald?"."""
        return f"Which {self.head} {self.clause}?"

    def follow_up(self, name: str) -> str:
        """The question with the thing's name in place of its description: "Who owns burrow?"."""
        return self.question.replace(self.phrase, name, 1)


def after_head(name: str, head: str) -> str:
    """The name after the noun that describes it: "primary database pg-main" for the database: pg-main."""
    words, last = name.split(), head.split()[-1].lower() if head.split() else ""
    for i, w in enumerate(words[:-1]):
        if w.lower() == last:
            return " ".join(words[i + 1:])
    return name


def name_in(description: str, sentence: str) -> str:
    """The name a description stands beside in ``sentence`` ("owns Ledger, our billing service": Ledger), or the
    description itself when the sentence names nothing beside it."""
    m = re.search(r"((?:[A-Z][\w.-]*\s+)*[\w][\w.-]*),\s+(?:our|the|a|an|its|their)\s+(?:[\w-]+\s+){0,2}?" + re.escape(description)
                  + r"\b", sentence)
    return m.group(1) if m else description


def described(question: str) -> Described | None:
    """The thing ``question`` describes by a relative clause, or None when it names what it asks about."""
    q = question.strip()
    m = _RELATIVE_RE.search(q)
    if m:
        clause = m.group("clause").strip()
        before = q[:m.start()]
        words = clause.split()
        subject = _OBJECT_CLAUSE_RE.match(clause)
        if subject:
            clause = subject.group(1)
        elif _INVERTED_RE.search(before) and len(words) >= 3:
            # "In which region does the cluster that runs the Herald dispatcher live?": the last word is the
            # question's own verb, not the clause's
            clause = " ".join(words[:-1])
        if m.group("rel").lower() == "whose":
            clause = "whose " + clause
        phrase = q[m.start():m.start() + len(m.group(0))].rstrip("?").rstrip()
        phrase = phrase[:phrase.rindex(clause.split()[-1]) + len(clause.split()[-1])]
        return Described(q, phrase, m.group("head"), clause)
    m = _REDUCED_RE.search(q)
    if m:
        phrase = f"the {m.group('head')} {m.group('clause')}"
        return Described(q, phrase, m.group("head"), m.group("clause"))
    m = _PARTICIPLE_RE.search(q)
    if m and m.group("head").lower() not in _NOT_THINGS:  # "the week starting 2026-03-16" names a time
        clause = m.group("clause").strip()
        words = clause.split()
        if _INVERTED_RE.search(q[:m.start()]) and len(words) >= 3:
            clause = " ".join(words[:-1])
        return Described(q, f"the {m.group('head')} {clause}", m.group("head"), clause)
    return None
