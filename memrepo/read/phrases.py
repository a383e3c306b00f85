"""The answer's phrase in its sentence, where one literal is only part of it (see :mod:`memrepo.read.span`).

Three kinds of phrase the literal and entity stages do not give whole:

- a **command** written in prose: a program and its arguments, at least one of them an option (``-n``,
  ``--resume``), a path, an assignment or a snake_case word ("roll it back with kubectl -n tide rollout undo
  deployment/web"); it starts after the English word that introduces it ("with", "run") and ends at the
  clause's punctuation or the next English function word ("... list_queues name on the broker");
- a **code name**: a word a person would not write in prose, with an underscore, a dot between letters, or a
  placeholder in capitals ("DB_HOST", "app.outbound", "restore-YYYYMMDD");
- a **time phrase**: dates and times of day joined by "and", "to", "between", "at", commas ("Monday to
  Thursday between 09:00 and 16:00", "every Tuesday and Friday at 11:00"), with the ordinal period it is of
  ("the first week of January, April and July"), and the zone after it ("Europe/Berlin").

How a number or a duration is bound to the question: a number ending its clause counts the noun said before
it (:func:`elided`), one after "batches of" is what a batch is (:func:`of_asked`), a scale word and the noun
counted stay with it (:func:`scale_and_noun`), "after 8 hours" is a time said from an event (:func:`relative`);
and the noun before the one asked says which one ("the orders table", :func:`modifier_spans`).

A name right after the question's verb, or before its words as their subject, is the one asked
(:func:`bound`: "I booked Osteria Nonna Pia", whatever type the name was given); a place after "a" or "an"
is a kind of place, no answer to "which" (:func:`described`).

A third-person pronoun in a conversation's turn stands for the name said last before it (:func:`antecedents`):
that name counts as the turn's context when the turn is asked about.

And the words of a question a text may write otherwise (:func:`compounds`, :func:`participles`): a
hyphenated word apart ("sign-off": "signs off"), a period's adjective as its noun ("weekly": "per week"), a
passive verb in other words ("must leave be requested": "Ask for leave").
"""

from __future__ import annotations

import re

from memrepo.nlp import lexicon as lx
from memrepo.nlp.questions import content_terms
from memrepo.read.turns import Span, Turn, norm, rules

PARTICLES = (lx.PREPOSITIONS - {"like"}) | {"up", "down", "out", "off", "away", "back"}

_TOKEN_RE = re.compile(r"\S+")
# An argument that only code has: an option, a path, an assignment, a snake_case or dotted word, a placeholder.
_OPTION_RE = re.compile(r"^--?[A-Za-z][\w-]*(?:=\S+)?$")
_CODE_RE = re.compile(r"^[\w.-]*(?:[a-z0-9]_[a-z0-9]|\w/\w|\w=\S)")
_PROGRAM_RE = re.compile(r"^[a-z][\w.-]*$")
_PUNCT = ".,;:!?)"
# English words that end a command or open it: function words, and "if"/"when" clauses after it.
_ENGLISH = lx.PREPOSITIONS | lx.DETERMINERS | lx.CONJUNCTIONS | lx.PRONOUNS | {"and", "or", "if", "when", "then",
                                                                             "so", "until", "unless", "is", "are"}
# A code name: snake_case ("silo_reader"), SCREAMING_SNAKE with an optional value ("APP_MODE=safe"), dotted
# lowercase words ("app.outbound"), or a hyphenated name with a placeholder in capitals ("restore-YYYYMMDD").
CODE_NAME_RE = re.compile(
    r"(?<![\w./#-])(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?:=[\w.-]+)?|[a-z][a-z0-9]+(?:\.[a-z][a-z0-9]+)+"
    r"|#?[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[A-Z]{2,}[A-Za-z]*(?:-[\w]+)*)(?![\w-])")


def code_spans(sentence: str, index: int) -> list[Span]:
    """The commands (kind ``command``) and code names (kind ``identifier``) of the ``index``-th sentence."""
    out = [Span(text, "command", index, start) for start, text in commands(sentence)]
    out += [Span(m.group(0), "identifier", index, m.start()) for m in CODE_NAME_RE.finditer(sentence)]
    return out


def commands(sentence: str) -> list[tuple[int, str]]:
    """``(offset, text)`` of each command written in ``sentence``: program words, then arguments."""
    tokens = [(m.start(), m.group(0)) for m in _TOKEN_RE.finditer(sentence)]
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        if not _is_code(tokens[i][1]):
            i += 1
            continue
        first = i
        while first > 0 and _is_program(tokens[first - 1][1]):
            first -= 1
        while first < i and _english_verb(tokens[first][1]):  # "by setting X=1": no program; "run" after one is
            first += 1
        last = _argument_end(tokens, i)
        if first < i:  # a program before the code: "with kubectl -n ...", never "errors in app/main.py"
            start = tokens[first][0]
            text = sentence[start:tokens[last][0] + len(tokens[last][1])].rstrip(_PUNCT)
            out.append((start, text))
        i = last + 1
    return out


def _is_code(token: str) -> bool:
    word = token.rstrip(_PUNCT)
    return bool(_OPTION_RE.match(word) or _CODE_RE.match(word))


def _is_program(token: str) -> bool:
    """A program's name or subcommand: a lowercase word, not a function word of the English around it."""
    return bool(_PROGRAM_RE.match(token)) and token.lower() not in _ENGLISH


def _english_verb(token: str) -> bool:
    """A verb of the prose ("restart", "setting"): never a command's first word, though a subcommand may be one."""
    return token in lx.VERBS or len(token) > 4 and token.endswith(("ing", "ed"))


def _argument_end(tokens: list[tuple[int, str]], i: int) -> int:
    """The index of the command's last token: arguments run on until punctuation or an English word."""
    last = i
    bracket = False
    while last < len(tokens):
        token = tokens[last][1]
        bracket = bracket or token.startswith("<")
        if bracket:
            bracket = not token.rstrip(_PUNCT).endswith(">")
        elif token[-1] in _PUNCT and last > i or token.lower() in _ENGLISH and last > i:
            return last if token[-1] in _PUNCT and token.lower() not in _ENGLISH else last - 1
        last += 1
    return len(tokens) - 1


# --- time phrases ------------------------------------------------------------------------------------------

TIME_KINDS = ("date", "time", "frequency")
# What may stand between two parts of one time phrase (a month "May", which the literals leave to the verb).
_JOIN_RE = re.compile(r"(?:\s|,|-|–|\b(?:and|or|to|through|until|till|at|between|from|on|the|May)\b)*")
# The ordinal period a date is of: "the first week of", "the last working day of".
_PERIOD_RE = re.compile(r"\b((?:first|second|third|fourth|last)\s+(?:working\s+)?(?:day|week|weekend|month))\s+$",
                        re.I)
_ZONE_RE = re.compile(r"\s+(?:[A-Z]{2,5}(?:[+-]\d{1,2})?\b|[A-Z][a-z]+/[A-Z][A-Za-z_]+)")


def time_phrase(span: Span, turn: Turn) -> str:
    """The time phrase ``span`` is part of (two or more dates and times joined), or "" when it stands alone."""
    if span.sentence < 0 or span.start < 0:
        return ""
    sentence = turn.sentences[span.sentence]
    parts = sorted((s for s in turn.spans if s.kind in TIME_KINDS and s.sentence == span.sentence and s.start >= 0),
                   key=lambda s: s.start)
    chain = _chain(parts, span, sentence)
    if len(chain) < 2:
        return ""
    start, end = chain[0].start, chain[-1].start + len(chain[-1].text)
    period = _PERIOD_RE.search(sentence[:start])
    text = sentence[start:end]
    if period and re.match(r"of\b", text):
        text = f"{period.group(1)} {text}"
    else:
        text = re.sub(r"^(?:on|in|of|at|from|during)\s+", "", text)
    if re.search(r"\bevery\s+$", sentence[:start]):
        text = f"every {text}"
    zone = _ZONE_RE.match(sentence[end:])
    return text + (zone.group(0) if zone else "")


def _chain(parts: list[Span], span: Span, sentence: str) -> list[Span]:
    """The run of ``parts`` around ``span`` with only joining words between neighbours."""
    if span not in parts:
        return [span]
    at = parts.index(span)
    first = last = at
    while first > 0 and _joined(parts[first - 1], parts[first], sentence):
        first -= 1
    while last + 1 < len(parts) and _joined(parts[last], parts[last + 1], sentence):
        last += 1
    return parts[first:last + 1]


def _joined(a: Span, b: Span, sentence: str) -> bool:
    end = a.start + len(a.text)
    return end <= b.start and bool(_JOIN_RE.fullmatch(sentence[end:b.start]))


# --- words written otherwise -------------------------------------------------------------------------------

# An adjective of a period ("weekly") says the period's noun ("per week").
_PERIOD_ADJECTIVE_RE = re.compile(r"\b(hour|day|week|month|quarter|year)ly\b|\b(da)ily\b", re.I)


def compounds(question: str) -> dict[str, frozenset[str]]:
    """Words of ``question`` the text may write otherwise, normalised, -> the words it would write: a
    hyphenated word's parts ("sign-off": sign; "on-call": call; "signs off", "the on call rota"), a period's
    noun for its adjective ("weekly": week)."""
    out = {norm(w): parts for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", question) if (parts := _parts(w))}
    for m in _PERIOD_ADJECTIVE_RE.finditer(question):
        out[norm(m.group(0))] = frozenset({norm(m.group(1) or "day")})
    return out


def _parts(word: str) -> frozenset[str]:
    """The content words a hyphenated word joins, without its particles."""
    return frozenset(norm(p) for p in content_terms(word.replace("-", " ")) if p.lower() not in PARTICLES)


def participles(question: str) -> set[str]:
    """The question's passive participles ("must leave be requested": request): verbs the text may say in
    other words ("Ask for leave ...")."""
    return {norm(m.group(1)) for m in re.finditer(r"\b(?:be|been|being|is|are|was|were|get|gets|got)\s+"
                                                  r"(?:\w+ly\s+)?([a-z]+(?:ed|en))\b", question, re.I)}


def with_code(turn: Turn, head: str = "") -> Turn:
    """``turn`` with the commands and code names of its sentences as spans too (kept once: the identifier
    stage may have found a code name already), the nouns that say which ``head`` it means (:func:`modifier_spans`),
    and the words its compounds join among its words."""
    seen = {(s.sentence, s.start) for s in turn.spans if s.kind == "identifier"}
    for i, sentence in enumerate(turn.sentences):
        turn.spans += [s for s in code_spans(sentence, i) if (s.sentence, s.start) not in seen]
        turn.terms |= {p for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", sentence) for p in _parts(w)}
        turn.terms |= {norm(m.group(1) or "day") for m in _PERIOD_ADJECTIVE_RE.finditer(sentence)}
    turn.spans += modifier_spans(turn, head) if head else []
    return turn


def modifier_spans(turn: Turn, head: str) -> list[Span]:
    """The nouns that say which ``head`` a sentence means: "the orders table", "the billing service" (kind
    ``modifier``); an adjective ("the new table") or a word ending like one ("the central table") names none."""
    out: list[Span] = []
    pattern = re.compile(rf"\bthe\s+([a-z][\w-]*)\s+{re.escape(head)}(?:s|es)?\b")
    for i, sentence in enumerate(turn.sentences):
        for m in pattern.finditer(sentence):
            word = m.group(1)
            if word not in lx.ADJECTIVES and word not in _ENGLISH and not word.endswith(_ADJECTIVE_ENDINGS):
                out.append(Span(word, "modifier", i, m.start(1)))
    return out


_ADJECTIVE_ENDINGS = tuple(lx.ADJECTIVE_SUFFIXES) + ("al", "ary", "ly", "ed", "ish", "less", "est", "er")


# --- numbers and durations bound to the question ----------------------------------------------------------


def elided(span: Span, turn: Turn, head: str) -> bool:
    """A number ending its clause counts the noun its sentence said before it ("400 connections, and each pod
    opens up to 30": 30 connections)."""
    if span.sentence < 0 or span.start < 0:
        return False
    sentence = turn.sentences[span.sentence]
    if not re.match(r"\s*(?:[,;.:!?)]|$)", sentence[span.start + len(span.text):]):
        return False
    return head in {rules().singular(w) for w in re.findall(r"[a-z]+", sentence[:span.start].lower())}


def of_asked(span: Span, turn: Turn, question_terms: set[str]) -> bool:
    """A number after "X of" where X is a word of the question: "batches of 50,000 rows" is what a batch is."""
    if span.sentence < 0 or span.start < 0:
        return False
    m = re.search(r"([A-Za-z]+)\s+of\s+(?:about\s+|up to\s+|around\s+)?$", turn.sentences[span.sentence][:span.start])
    return m is not None and norm(m.group(1)) in question_terms


# A number's scale word ("1.4 million"), and a plural noun counted after it ("50,000 rows").
_SCALE_RE = re.compile(r"\s+(hundred|thousand|million|billion|trillion)\b")
_COUNTED_RE = re.compile(r"\s+([a-z]{3,}s)\b")


def scale_and_noun(rest: str, noun: bool) -> str:
    """What the words after a number add to it: its scale word always; for an amount, the noun it counts."""
    scale = _SCALE_RE.match(rest)
    out = f" {scale.group(1)}" if scale else ""
    counted = _COUNTED_RE.match(rest[scale.end():] if scale else rest) if noun else None
    if counted is None or counted.group(1) in lx.PREPOSITIONS:
        return out
    return f"{out} {counted.group(1)}"


def relative(span: Span, turn: Turn) -> str:
    """The word that makes a duration a time said from an event ("after 8 hours", "within 5 days"), or ""."""
    if span.sentence < 0 or span.start < 0:
        return ""
    m = re.search(r"\b(after|within)\s+$", turn.sentences[span.sentence][:span.start], re.I)
    return m.group(1).lower() if m else ""


# --- who a pronoun stands for ---------------------------------------------------------------------------------

_PRONOUN_RE = re.compile(r"\b(?:she|her|he|him|his)\b", re.I)
_NUMBERED_RE = re.compile(r"^(.*\D)(\d+)$")


def antecedents(turns: list[Turn], context: dict[str, set[str]]) -> dict[str, set[str]]:
    """``context`` (record id -> words) with the words of the name a third-person pronoun in the record stands
    for: the one last named before it in the same conversation (a person or an animal, never one who speaks
    in it), among the turns the ledger holds ("Pimenta's check-up ..." then "She chewed through 3 balls")."""
    speakers = {t.speaker.lower() for t in turns if t.speaker}
    named: dict[str, list[tuple[int, str]]] = {}
    for turn in turns:
        for source, n in _numbered(turn):
            named.setdefault(source, []).extend((n, s.text) for s in turn.spans if s.kind in ("person", "animal")
                                                 and s.text.lower() not in speakers and s.text[:1].isupper())
    out = {record: set(words) for record, words in context.items()}
    for turn in turns:
        if not turn.speaker or not any(_PRONOUN_RE.search(s) for s in turn.sentences):
            continue
        for source, n in _numbered(turn):
            before = [(m, name) for m, name in named.get(source, []) if m < n]
            if before:
                out.setdefault(turn.evidence.id, set()).update(norm(w) for w in content_terms(max(before)[1]))
    return out


def _numbered(turn: Turn) -> list[tuple[str, int]]:
    """(source and dialogue, turn number) of each conversation turn the record cites."""
    out = []
    for citation in turn.evidence.sources:
        m = _NUMBERED_RE.match(citation)
        if m and "#" in citation and "/" not in citation.partition("#")[2]:
            out.append((m.group(1), int(m.group(2))))
    return out


# --- names bound to the question's words ------------------------------------------------------------------------


def bound(span: Span, turn: Turn, terms: set[str]) -> bool:
    """A name right after a word of the question or just before them, in its clause: the object of the verb
    asked ("I booked Osteria Nonna Pia" for "Which restaurant was booked?"), or its subject ("Trattoria Lupo
    had no table" for "Which restaurant had no table?")."""
    if span.sentence < 0 or span.start < 0:
        return False
    sentence = turn.sentences[span.sentence]
    before = re.findall(r"[A-Za-z]+", sentence[:span.start])[-1:]
    after = re.findall(r"[a-z]+", re.split(r"[,;:.'’]", sentence[span.start + len(span.text):])[0])[:3]  # no name
    if any(norm(w) in terms for w in before):
        return True
    governed = bool(before) and before[0].lower() in lx.PREPOSITIONS  # "the flight from Lisbon took": no subject
    return not governed and any(norm(w) in terms for w in after)


def described(span: Span, turn: Turn) -> bool:
    """A place after an indefinite article describes a kind of place, it names no one of them: "an Italian
    restaurant" answers no "which restaurant" (though "a Pasmo card" says what card)."""
    if span.sentence < 0 or span.start < 0:
        return False
    return bool(re.search(r"\b(?:a|an|any|some)\s+$", turn.sentences[span.sentence][:span.start], re.I))

