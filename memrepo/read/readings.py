"""Readings of English that tie a phrase of the evidence to what a question asks (see :mod:`memrepo.read.span`).

- **Who asks is not who answers**: the one who speaks a question in a conversation ("Dev: who's best man?") does
  not know its answer (:func:`asks`).
  Nor is who replies without a word of self ("Rhea: Femi is, he starts on Monday", :func:`speaks_of_self`).
- **A relative clause belongs to the name before it**: "Henrik Solberg, who became head of engineering in
  August" says Henrik is the head of engineering; the comma does not part the name from its clause
  (:func:`clause_end`).
- **Opposite words part two values**: "the current flow has five steps and the new one has three" answers "How
  many steps does the new flow have?" with three: the clause of five says "current", the opposite of the
  question's "new" (:func:`contrasted`); so do two names in one slot: "14.99 euros at Officeplus and 12.49
  euros at Druckerland" (:func:`other_name`).
- **A range is one value**: "78,000 to 92,000 euros" is the band, not its top (:func:`range_start`).
- **A copula names its subject**: "search-a is the coordinating node" answers "Which node is the coordinating
  node?" with its subject, whatever the subject's type (:func:`subject_spans`).
- **A "when" takes the day and the hour said together**: "I land on 24 September at 14:20" (:func:`day_and_hour`).
- **A question's opening preposition is the evidence's**: "For which country ...?" is answered by the name after
  "for" ("optional for Ireland", :func:`leading_preposition`).
- **A colour is a colour word**: "What colour are the dresses?" - "sage green" (:data:`COLOURS`).
- **A URI names a place where data is kept**: "s3://acme-backups", "https://status.example.org" (:data:`URI_RE`).
- **A document, a session of a conversation, a task session is one occasion**: the words of its other lines
  are around each of its lines (:func:`occasion_words`), for the occasion a question ends with (:func:`setting`:
  "... of the library committee meeting?"); **a modifier may be said otherwise**: "the dental practice" is "the
  practice" in a text that never says "dental" (:func:`modifiers`).
- **A bound is not the value**: "never pay more than 600 euros" answers no "How much does it cost?"
  (:func:`bound_only`).
- **A passive's agent does what the question asks**: "is updated by the incident commander" for "Who updates
  ...?" (:func:`agent_spans`).
- **A name beside the question's noun is its name**: "Rui the parrot" (:func:`appositive_spans`).
- **A name written as a person's is one** where the extractor missed it ("Sanne de Wit", :func:`name_spans`).
  (Money in any currency, "300 kronor", "R85,000", is a price literal of :mod:`memrepo.nlp.literals`.)
"""

from __future__ import annotations

import re

from memrepo.nlp import lexicon as lx
from memrepo.nlp.questions import content_terms
from memrepo.read.turns import Span, Turn, norm

# Words a question uses to ask about now; the question's kind says "now" already, the evidence need not.
NOW_WORDS = frozenset({"now", "currently", "nowadays", "presently"})

# Pairs of words that tell two things of one kind apart: the new one and the current one, the old price and
# the new one. Each word's opposites.
_OPPOSED = (({"new", "next", "future", "proposed", "planned"}, {"old", "current", "existing", "previous", "former",
                                                                  "present", "legacy"}),
            ({"minimum", "lowest", "least", "min"}, {"maximum", "highest", "most", "max"}),
            ({"before"}, {"after"}), ({"first"}, {"last", "final"}), ({"weekday", "weekdays"}, {"weekend", "weekends"}),
            ({"inbound", "incoming"}, {"outbound", "outgoing"}), ({"adult", "adults"}, {"child", "children", "kids"}))
OPPOSITES: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSED:
    for _w in _a:
        OPPOSITES[_w] = frozenset(_b)
    for _w in _b:
        OPPOSITES[_w] = frozenset(_a)

# Colour words (the basic ones and common shades); a shade may be modified ("sage green", "dark blue").
COLOURS = frozenset("""red orange yellow green blue purple violet pink brown black white grey gray silver gold beige
cream ivory navy teal turquoise maroon burgundy lilac lavender mint olive khaki coral peach magenta cyan indigo
charcoal tan copper bronze""".split())
_COLOUR_RE = re.compile(r"\b(?:(?:light|dark|pale|bright|deep|sage|bottle|sky|royal|navy|forest|olive|dusty|"
                        r"powder|emerald|lime|mustard|rust|wine|blush)[ -])?(?:" + "|".join(sorted(COLOURS)) + r")\b",
                        re.I)

# A URI: a scheme and "://", then no white space ("s3://acme-search-snapshots", "https://x.example/healthz").
URI_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s,;)\"'<>]+[^\s,;)\"'<>.]")

_RELATIVE_RE = re.compile(r"[,;:]\s+(?:who|whom|whose|which)\b|\s+(?:and|but|while|whereas|with|or)\s+|[,;:]\s+",
                          re.I)
_COPULA_RE = re.compile(r"^\s*(?:is|are|was|were|has been|will be|becomes|became|remains|acts as|serves as)\s+"
                        r"(?:the|our|their|its|a|an)\s+", re.I)
_SUBJECT_RE = re.compile(r"(?:^|[;:]\s+|,\s+(?:and|but)\s+|\s(?:and|but)\s+)((?:[A-Za-z0-9][\w.'’/-]*)"
                         r"(?:\s+[A-Z0-9][\w.'’/-]*){0,3})\s+(?=(?:is|are|was|were|has been|will be|becomes|became|"
                         r"remains|acts as|serves as)\s)", re.I)


def asks(turn: Turn, hits: "dict[int, int]") -> bool:
    """Whether ``turn``'s sentence that holds most of the question's words (``hits``: sentence -> count) is a
    question itself: its speaker asks what the question asks, and is no answer to it."""
    if not turn.speaker or not turn.sentences:
        return False
    best = max(range(len(turn.sentences)), key=lambda i: (hits.get(i, 0), i))
    return turn.sentences[best].rstrip().endswith("?")


def speaks_of_self(turn: Turn) -> bool:
    """Whether ``turn`` says "I", "me", "we" ...: a reply that does not ("Femi is, he starts on Monday") names
    someone else, and its speaker is no answer to "who"."""
    return any(re.search(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|us|our|ours)\b", s, re.I)
               for s in turn.sentences)


def clause_end(sentence: str, start: int) -> int:
    """Where the clause that starts at or after ``start`` ends: at the next comma, semicolon, colon or
    coordinating word, except that a relative clause (", who became ...") goes on the clause before it."""
    for m in _RELATIVE_RE.finditer(sentence, start):
        if re.search(r"\b(?:who|whom|whose|which)$", m.group(0), re.I):
            continue  # the relative clause is the name's own
        return m.start()
    return len(sentence)


def contrasted(clause: str, question_words: set[str]) -> bool:
    """Whether ``clause`` holds a word opposite to one of the question's (``question_words``, lower case) and
    none of the question's own: "the current flow has five steps" for a question about the new flow."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", clause)}
    asked = {w for w in question_words if w in OPPOSITES}
    return bool(asked) and not (words & asked) and any(words & OPPOSITES[w] for w in asked)


def other_name(sentence: str, clause: str, names: list[str]) -> bool:
    """Whether ``clause`` is about another one than the question's name: the sentence says the name in another
    clause after a preposition, and ``clause`` says another name after the same one ("14.99 euros at Officeplus
    and 12.49 euros at Druckerland": the first price is Officeplus's, for a question about Druckerland)."""
    for name in names:
        m = re.search(rf"\b([a-z]+)\s+(?:the\s+)?{re.escape(name)}\b", sentence)
        if m is None or name in clause or m.group(1) not in lx.PREPOSITIONS:
            continue
        if re.search(rf"\b{m.group(1)}\s+(?:the\s+)?[A-Z]", clause):
            return True
    return False


def range_start(span: Span, turn: Turn) -> str:
    """The lower end of a range a value ends, with its joiner ("78,000 to " of "78,000 to 92,000 euros", "3 to "
    of "3 to 5 business days", "8-" of "8-10 people"), or "": a bare number right before "to", "-" or "–";
    "from 215 to 229 euros" is a change and "between 2 and 4" is said whole already."""
    if span.sentence < 0 or span.start < 0:
        return ""
    before = turn.sentences[span.sentence][:span.start]
    m = re.search(r"(?<![\w.,])(\d[\d,.]*)(\s+to\s+|\s*[-–]\s*)$", before)
    if m is None or re.search(r"\b(?:from|between)\s+$", before[:m.start()], re.I):
        return ""
    return m.group(1) + m.group(2)


def subject_spans(turn: Turn, head: str, keys: list[str]) -> list[Span]:
    """The subjects of "X is the ... <head>" sentences whose predicate holds a word of the question besides
    the head (kind ``subject``): "search-a is the coordinating node" for "Which node is the coordinating node?"."""
    if not head:
        return []
    out: list[Span] = []
    for i, sentence in enumerate(turn.sentences):
        for m in _SUBJECT_RE.finditer(sentence):
            rest = sentence[m.end(1):]
            cop = _COPULA_RE.match(rest)
            if cop is None:
                continue
            predicate = re.split(r"[,;:.]", rest[cop.end():], maxsplit=1)[0]
            words = [norm(w) for w in re.findall(r"[A-Za-z][\w-]*", predicate)]
            if norm(head) not in words[:4] or not set(words) & (set(keys) - {norm(head)}):
                continue
            subject = m.group(1)
            if subject.lower() in lx.PRONOUNS or subject.lower() in lx.DETERMINERS or subject.lower() in ("it", "this"):
                continue
            out.append(Span(subject, "subject", i, m.start(1)))
    return out


def day_and_hour(span: Span, turn: Turn) -> str:
    """"24 September at 14:20" for a time of day said right after a date ("on 24 September at 14:20"), or a
    date said right before "at" and a time; "" when the sentence does not say them together."""
    if span.sentence < 0 or span.start < 0:
        return ""
    sentence = turn.sentences[span.sentence]
    for other in turn.spans:
        if other.sentence != span.sentence or other.start < 0 or other is span:
            continue
        date, time = (other, span) if span.kind == "time" else (span, other)
        if date.kind != "date" or time.kind != "time" or not re.search(r"\d", date.text):
            continue
        if re.fullmatch(r",?\s*(?:at|,)?\s*", sentence[date.start + len(date.text):max(0, time.start)]) \
                and time.start > date.start:
            return f"{date.text} at {time.text}"
    return ""


def leading_preposition(question: str) -> str:
    """The preposition a question opens with ("For which country ...": for; "In which region": in), or ""."""
    m = re.match(r"\s*([A-Za-z]+)\s+(?:which|what|whom|where)\b", question)
    word = m.group(1).lower() if m else ""
    return word if word in lx.PREPOSITIONS else ""


def after_word(span: Span, turn: Turn, word: str) -> bool:
    """Whether ``span`` follows ``word`` (and an optional article) in its sentence ("for Ireland")."""
    if not word or span.sentence < 0 or span.start < 0:
        return False
    before = turn.sentences[span.sentence][:span.start]
    return bool(re.search(rf"\b{re.escape(word)}\s+(?:the\s+)?$", before, re.I))


def colour_spans(turn: Turn) -> list[Span]:
    """The colour words of ``turn``'s sentences, with a shade word before them ("sage green"), kind ``colour``."""
    return [Span(m.group(0), "colour", i, m.start())
            for i, s in enumerate(turn.sentences) for m in _COLOUR_RE.finditer(s)]


def uri_spans(turn: Turn) -> list[Span]:
    """The URIs of ``turn``'s sentences, kind ``identifier``."""
    return [Span(m.group(0), "identifier", i, m.start())
            for i, s in enumerate(turn.sentences) for m in URI_RE.finditer(s)]


# A conversation's turn ("#D2:4": session 2) and a task session's step ("#t3", "#outcome").
_SESSION_RE = re.compile(r"#(D\d+):\d+$")


def occasion_words(turns: list[Turn]) -> dict[str, frozenset[str]]:
    """Record id -> the words of the records the ledger holds of the same occasion: the same document, the same
    session of a conversation, the same task session (the words a question's :func:`setting` may find there)."""
    by_source: dict[str, set[str]] = {}
    cited: dict[str, list[str]] = {}
    for turn in turns:
        for citation in turn.evidence.sources:
            if "#" not in citation:
                continue
            session = _SESSION_RE.search(citation)
            source = citation.partition("#")[0] + (f"#{session.group(1)}" if session else "")
            by_source.setdefault(source, set()).update(turn.terms)
            cited.setdefault(turn.evidence.id, []).append(source)
    return {record: frozenset().union(*(by_source[s] for s in sources)) for record, sources in cited.items()}


def modifiers(question: str) -> set[str]:
    """The question's words between an article and another of its content words ("dental" of "the dental
    practice", "home" of "the home office"): they narrow the noun after them, and a text may name that one
    without them ("Lena's sister lives": no article, no modifier)."""
    words = re.findall(r"[A-Za-z][\w'’-]*", question)
    content = {w.lower() for w in content_terms(question)}
    return {norm(a) for before, a, b in zip(words, words[1:], words[2:]) if before.lower() in lx.DETERMINERS
            and a.lower() in content and b.lower() in content and a[:1].islower() and b[:1].islower()}


_SETTING_RE = re.compile(r"\b(?:of|for|at|in|on|during|from)\s+(?:(?:the|this|that|our|their|last|next|today's|"
                         r"yesterday's)\s+)?((?-i:[a-z])[\w'’ -]*?)\s*\?\s*$", re.I)  # "on moving day", no "in Braga"


def setting(question: str) -> frozenset[str]:
    """The words of the occasion a question ends with ("Who took the minutes of the library committee meeting?":
    library, committee, meeting), as :func:`memrepo.read.turns.norm` keys; a document about that occasion says
    them once, in its title or another line, not in each line."""
    m = _SETTING_RE.search(question)
    return frozenset(norm(w) for w in content_terms(m.group(1))) if m else frozenset()


# A person's name: capitalised words, with the particles of family names between them ("Sanne de Wit").
_PARTICLE = r"(?:de|da|di|del|della|der|den|van|von|le|la|du|dos|das|bin|ibn|al|el|ten|ter|zu)"
PERSON_NAME_RE = re.compile(r"[A-Z][a-z'’-]+(?:\s+(?:" + _PARTICLE + r"\s+){0,2}[A-Z][a-z'’-]+){1,3}")
_NOT_NAMES = lx.DETERMINERS | lx.PRONOUNS | lx.PREPOSITIONS | lx.CONJUNCTIONS | set(lx.MONTHS) | set(lx.WEEKDAYS)


def person_like(text: str) -> bool:
    """Whether ``text`` is written as a person's name: two to four capitalised words, family-name particles
    between them, none of them a function word, a month or a weekday ("Sanne de Wit", "Olga Petrenko")."""
    return bool(PERSON_NAME_RE.fullmatch(text)) and not any(w.lower() in _NOT_NAMES for w in text.split())


def name_spans(turn: Turn) -> list[Span]:
    """Names written as a person's (:func:`person_like`) that no span of ``turn`` holds yet, kind ``concept``:
    the extractor may have missed one ("Customer 88213, Olga Petrenko, says ...")."""
    out: list[Span] = []
    for i, sentence in enumerate(turn.sentences):
        taken = [(s.start, s.start + len(s.text)) for s in turn.spans if s.sentence == i and s.start >= 0]
        for m in PERSON_NAME_RE.finditer(sentence):
            if person_like(m.group(0)) and not any(a < m.end() and m.start() < b for a, b in taken):
                out.append(Span(m.group(0), "concept", i, m.start()))
    return out


_POSSESSOR_RE = re.compile(r"\b((?:[A-Z][\w-]*\s+(?:and|&)\s+)?[A-Z][\w-]*)['’]s\s+([a-z][\w-]*)\b")


def possessor(question: str) -> tuple[frozenset[str], str] | None:
    """The names that own the thing a question asks about and the noun of that thing ("When is Arjun and Maya's
    wedding?": arjun, maya; wedding), or None: a line of their conversation that says "the wedding" says theirs."""
    m = _POSSESSOR_RE.search(question)
    if m is None:
        return None
    names = frozenset(norm(w) for w in re.findall(r"[A-Z][\w-]*", m.group(1)))
    return names, m.group(2)


def appositive_spans(turn: Turn, head: str) -> list[Span]:
    """Names said beside the question's noun as the same one (kind ``appositive``): "Rui the parrot", "the
    parrot, Rui,", "our parrot Rui" for "What is the name of the parrot?"."""
    if not head:
        return []
    noun = rf"{re.escape(head)}(?:s|es)?"
    name = r"([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)"
    patterns = (rf"{name},?\s+the\s+{noun}\b", rf"\b(?:the|our|my|his|her|their|your)\s+{noun},?\s+{name}")
    out: list[Span] = []
    for i, sentence in enumerate(turn.sentences):
        for pattern in patterns:
            for m in re.finditer(pattern, sentence):
                if m.group(1).split()[0].lower() not in _NOT_NAMES:
                    out.append(Span(m.group(1), "appositive", i, m.start(1)))
    return out


# A comparison that bounds a value ("more than 600 euros", "under 1.5 seconds"); "up to 4", "at least 6 days" and
# "within 5 days" say the value itself (what a trolley carries, how early to ask).
_BOUND_RE = re.compile(r"\b(?:(?:no\s+)?(?:more|less|fewer|longer|shorter|higher|lower)\s+than|under|over|below|"
                       r"above)\s+(?:about\s+)?$", re.I)
_ASKS_BOUND_RE = re.compile(r"\b(?:most|least|max(?:imum)?|min(?:imum)?|limit|cap|ceiling|target|threshold|budget|"
                            r"allowed|under|over|below|above|(?:more|less|fewer|longer|shorter) than)\b", re.I)


def bound_only(before: str, question: str) -> bool:
    """Whether a value said after ``before`` is a bound ("never pay more than 600 euros", "we want it under 1.5")
    where the question asks for the value itself, not a limit ("How much does it cost?", not "What is the most
    they will pay?")."""
    return bool(_BOUND_RE.search(before)) and not _ASKS_BOUND_RE.search(question)


_PASSIVE_RE = re.compile(
    r"\b(?:is|are|was|were|gets|get|got|be|been|being)\s+(?:\w+ly\s+)?([a-z]+(?:ed|en|wn|ne|t))\s+by\s+"
    r"((?:(?:the|a|an|our|their|its|his|her)\s+)?[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,3}?)"
    r"(?=\s*(?:[,;.:!?]|$)|\s+(?:and|but|or|never|not|unless|if|when|before|after|within|on|at|in)\b)")


def agent_spans(turn: Turn, keys: list[str]) -> list[Span]:
    """The agent of a passive whose verb is the question's ("The status page is updated by the incident
    commander" for "Who updates the status page?"), kind ``agent``; "never by the person debugging" is none."""
    out: list[Span] = []
    for i, sentence in enumerate(turn.sentences):
        for m in _PASSIVE_RE.finditer(sentence):
            if norm(m.group(1)) in keys:
                agent = re.sub(r"^(?:the|a|an|our|their|its|his|her)\s+", "", m.group(2), flags=re.I)
                out.append(Span(agent, "agent", i, m.start(2) + len(m.group(2)) - len(agent)))
    return out
