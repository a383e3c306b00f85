"""Deterministic rules the offline backend uses for the router and the six writers.

They read only the window they are given (and, for core, the current block), so
the same input always yields the same records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from memrepo import sensitive
from memrepo.text.dates import find_date
from memrepo.nlp import lexicon
from memrepo.nlp.tokens import split_sentences

# The router and every writer read the same parts of a window: each reading of a text is made once and kept
# (by text; the rules are pure functions of it), for about as many texts as a few sessions hold.
_READINGS = 4096

SELF_STATEMENT_RE = re.compile(
    r"\b(I am|I'm|I have|I've|I like|I love|I enjoy|I prefer|I hate|I dislike|I work|I live|I own|"
    r"my [\w'’ -]{1,30}? (?:is|are|was|were))\b",
    re.I,
)
NAME_RE = re.compile(r"\b(?:[Mm]y name is|[Cc]all me)\s+([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)")
_PLAN_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to|will|scheduled|booked)\b", re.I)
_PLAN_STRONG_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to)\b", re.I)


def secrets(text: str) -> list[tuple[str, str]]:
    """(kind, value) of sensitive values in ``text``: labelled ("my PIN is 4321") or token-shaped."""
    return list(_secrets(text))


@lru_cache(maxsize=_READINGS)
def _secrets(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((f.kind, f.value) for f in sensitive.find(text))


def redact(text: str) -> str:
    """``text`` with every sensitive value replaced by a pointer to the vault (twice is the same as once)."""
    return sensitive.redact(text)


# The date a text names, read once for the router's event test and the episodic writer's timing.
_find_date = lru_cache(maxsize=_READINGS)(find_date)


def mentioned_date(text: str, session_day: str | None) -> str | None:
    """A calendar date named in ``text`` ("2023-08-12", "12 August 2023", "August 12"): in its own year if it
    names one, else in the session's; None without a session day or a valid date."""
    if not session_day:
        return None
    named = _find_date(text)
    if named is None:
        return None
    year, month, day = named
    try:
        return date(year or int(session_day[:4]), month, day).isoformat()
    except ValueError:
        return None


def reported_date(text: str, session_day: str) -> str | None:
    """The day a reported (done) event happened, when ``text`` names it: a named date not after the session's
    day. A date named without a year that would fall after it is last year's ("on December 20", said on
    1 December); a later date with a year is not the day of something already done, so None."""
    named = _find_date(text)
    if named is None:
        return None
    year, month, day = named
    session_year = int(session_day[:4])
    for candidate in ([year] if year else [session_year, session_year - 1]):
        try:
            found = date(candidate, month, day).isoformat()
        except ValueError:  # 31 April, 29 February
            return None
        if found <= session_day:
            return found
    return None


def event_timing(text: str, session_day: str | None) -> tuple[str | None, str]:
    """(event time, status) of what a turn reports: planned events keep their planned date, done events the
    date the text names (else yesterday's for "yesterday", else the session's day)."""
    named = mentioned_date(text, session_day)
    if _PLAN_RE.search(text) and named and session_day and named >= session_day:
        return named, "planned"
    if _PLAN_STRONG_RE.search(text):
        return None, "planned"
    if session_day and (reported := reported_date(text, session_day)):
        return reported, "done"
    if session_day and re.search(r"\byesterday\b", text, re.I):
        return (date.fromisoformat(session_day) - timedelta(days=1)).isoformat(), "done"
    return session_day, "done"


# --- durable facts, instructions and attributes (the router's and writers' offline reading) -----------
#
# MIRIX files what stays true (who someone is to someone, what they do, like, have or are, where a system
# runs and when a job starts) as semantic memory, what happened as episodic and how to do something as
# procedural. These patterns read one sentence at a time; each is a named table so a rule is read, not
# hunted for in conditions.

_RELATIONS = (
    "sister", "brother", "sibling", "mother", "mom", "mum", "father", "dad", "parent", "son", "daughter", "child",
    "wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fiancé", "fiancée", "fiance", "fiancee",
    "cousin", "aunt", "uncle", "niece", "nephew", "grandmother", "grandfather", "grandma", "grandpa", "grandson",
    "granddaughter", "stepmother", "stepfather", "twin", "boss", "manager", "colleague", "coworker", "roommate",
    "flatmate", "housemate", "neighbor", "neighbour", "friend", "mentor", "landlord", "landlady", "tenant",
    "teammate", "godmother", "godfather", "in-law",
)
_JOBS = (
    "nurse", "vet", "chef", "cook", "doctor", "lawyer", "engineer", "pilot", "baker", "dentist", "teacher",
    "developer", "designer", "manager", "architect", "accountant", "consultant", "barista", "student", "intern",
    "dba", "sre", "admin", "administrator", "scientist", "analyst", "plumber", "electrician", "carpenter",
    "journalist", "editor", "writer", "artist", "musician", "photographer", "surgeon", "pharmacist", "paramedic",
    "firefighter", "officer", "librarian", "professor", "lecturer", "researcher", "mechanic", "farmer", "tailor",
    "butcher", "waiter", "waitress", "cashier", "driver", "courier", "translator", "therapist", "counselor",
    "coach", "trainer", "lead", "owner", "maintainer", "contact", "head", "director", "on-call", "pm", "cto",
    "ceo", "cfo", "founder", "programmer", "tester", "recruiter", "receptionist", "secretary", "clerk",
)
_POSSESSOR = r"(?:my|our|your|his|her|their|[A-Z][\w'’-]*['’]s)"
_ROLE_NOUN = rf"(?:{'|'.join(sorted(_JOBS, key=len, reverse=True))})"
_RELATION_NOUN = rf"(?:{'|'.join(sorted(_RELATIONS, key=len, reverse=True))})"

#: Sentence patterns of a durable fact, by what they state.
FACT_PATTERNS: dict[str, re.Pattern[str]] = {
    "relation": re.compile(
        rf"\b(?:is|are|was|'s|’s)\s+{_POSSESSOR}\s+(?:[\w-]+\s+)?{_RELATION_NOUN}s?\b"
        rf"|\b{_POSSESSOR}\s+(?:[\w-]+\s+)?{_RELATION_NOUN}s?(?:['’]s)?\s+(?:is|are)\s+(?:called|named)\b"
        r"|\b(?:married|engaged)\s+to\b|\bare\s+(?:siblings|cousins|twins|married|engaged)\b"
        rf"|\b(?:my|our|his|her|their)\s+(?:[\w-]+\s+)?{_RELATION_NOUN}s?\s+(?:[A-Z][\w'’-]+|is|are)\b", re.I),
    "job": re.compile(
        rf"\b(?:works?|worked|working)\s+(?:as|at|for|from|in|on)\b|\bthe\s+(?:[\w-]+\s+)?{_ROLE_NOUN}\s+is\b|\b(?:job|profession|occupation)\b"
        rf"|\b(?:is|am|are|was)\s+(?:an?|the|our|their|his|her|my)\s+(?:[\w-]+\s+){{0,2}}{_ROLE_NOUN}s?\b"
        r"|\b(?:owns|maintains|leads|manages)\b|\b(?:is|are)\s+(?:responsible|in charge)\s+(?:for|of)\b", re.I),
    "preference": re.compile(
        r"(?:\b(?:i|we|you|they|also|really|still|do|don't|don’t)\s+like\b|\blikes\b)|\b(?:loves?|prefers?|hates?|enjoys?|dislikes?|adores?|favou?rite|can(?:'|’|no)t stand"
        r"|(?:is|am|are) (?:really |big )?into|(?:a|huge|big) fan of|allergic|vegetarian|vegan|pescatarian"
        r"|gluten[- ]free|lactose)\b", re.I),
    "attribute": re.compile(
        r"\b(?:lives?|living|lived)\s+(?:in|at|on|near|with)\b|\b(?:is|am|are)\s+(?:originally\s+)?from\b"
        r"|\bcomes?\s+from\b|\bborn\s+(?:in|on)\b|\bbirthday\b|\byears?\s+old\b|\bspeaks?\b"
        r"|\b(?:is|are)\s+(?:called|named)\b|\bname\s+is\b"
        r"|\b(?:has|have|had)\s+(?:an?|one|two|three|four|five|\d+)\s+(?:[\w-]+\s+)?"
        r"(?:kids?|children|sons?|daughters?|dogs?|cats?|pets?|siblings?|sisters?|brothers?|cars?|bikes?)\b", re.I),
    "setup": re.compile(
        r"\b(?:runs?|is\s+hosted|hosted|deployed|located|stored|lives|sits)\s+(?:on|in|at)\b"
        r"|\b(?:costs?|priced at)\b|\b\d+(?:[.,]\d+)?\s*(?:GB|TB|MB|GiB|TiB|MiB|vCPUs?|cores?|nodes?|replicas?)\b"
        r"|\b(?:every|each)\s+(?:day|night|week|month|morning|evening|monday|tuesday|wednesday|thursday|friday"
        r"|saturday|sunday|weekday|weekend|hour)\b|\b(?:nightly|daily|weekly|monthly|hourly)\b", re.I),
}

# A labelled line of notes ("DBA: Priya Raman", "Region: eu-west-1"): the label is a noun phrase, not a speaker.
_LABEL_LINE_RE = re.compile(r"^\s*(?:[-*•]\s+)?\**([A-Z][\w /&().-]{0,40}?)\**\s*[:=–—-]\s+\S")


def _label_line(text: str) -> re.Match[str] | None:
    """``text`` as a labelled line, if its label is a noun phrase: no pronoun in it and no imperative opening it
    ("Keep going - you're doing great", "I bet it tastes great - ..." are sentences with a dash, not labels)."""
    m = _LABEL_LINE_RE.match(text)
    words = _words(m.group(1)) if m else []
    if m is None or lexicon.PRONOUNS.intersection(words) or (len(words) > 1 and lexicon.opens_with_imperative(m.group(1))):
        return None  # a one-word label may be a verb's form ("Update: ...", "Note: ...")
    return m

# Who an instruction is addressed to, which decides what counts as one: the reader of a document or note (an
# imperative is a step), a person in a conversation (a bare imperative is usually a social one: "take care",
# "check it out"; only a standing frame makes it a rule), or the agent a task session's user speaks to (an
# imperative about things in general, "compress attachments over 10 MB", is a rule beyond this task).
READER, PERSON, AGENT = "reader", "person", "agent"

# Markers of an instruction in a document wherever it stands: "you should", a named rule, a numbered step, a
# how-to (in a document a "how to" anywhere names a procedure, "the runbook says how to restore"; in speech it is
# as often a thing someone learns, "I'm learning how to dance").
_MARKED_RE = re.compile(
    r"\b(?:you|we|everyone|one)\s+(?:should|need to|have to|ought to)\b|\bhow to\b"
    r"|\bthe (?:rule|policy|procedure|process|trick) is\b|^step\s+\d+\b", re.I)
# In speech: what someone should always do ("you should always", "we have to always"), a how-to announced as one
# ("here's how to ..."), a named rule, a numbered step.
_CHAT_MARKED_RE = re.compile(
    r"\b(?:you|we|everyone)\s+(?:should always|need to always|have to always)\b|^how to\b"
    r"|\b(?:here['’]?s|here is|this is) how to\b|\bthe (?:rule|policy|procedure|process|trick) is\b|^step\s+\d+\b",
    re.I)
_MARKED_CUES = ("always", "how to", "step", "rule", "policy", "procedure", "process", "trick")  # one is in each match
# A purpose clause and its main clause: "To descale the kettle, fill it ...". The main clause is an instruction
# unless a subject other than "you" opens it ("To save time, we batch the orders").
_PURPOSE_RE = re.compile(r"^to\s+\w+[^,]{0,80},\s+(\w+)", re.I)
# A condition or time clause before a main clause: "If the printer jams, open tray 2", "Next time it rains, bring
# the chairs in".
_CONDITION_RE = re.compile(r"^(?:if|when|whenever|before|after|once|every time|each time|next time|the next time)\b"
                           r"[^,]{3,80},\s*(.+)", re.I)
# What makes an imperative a standing one in speech: it says when it holds (to a person also "when you ...").
_HABITUAL_RE = re.compile(
    r"\b(?:always|never|every time|each time|whenever|from now on|next time|in (?:the )?future|going forward)\b",
    re.I)
_STANDING_FRAME_RE = re.compile(_HABITUAL_RE.pattern + r"|\b(?:when|before|after|if|once) you\b", re.I)
# Said to the agent, a condition that points back ("after that, ...") or the user's own case ("my card") makes
# a step of this task, not a rule.
_ANAPHORIC_CONDITION_RE = re.compile(r"^(?:after|before|once|when|if)\s+(?:that|this|it|so)\b", re.I)
_FIRST_PERSON_WORDS = frozenset({"i", "me", "my", "mine", "i'm", "i'll", "i've", "i'd"})
# A subject opening a clause: after it the clause is a statement, not an imperative.
_SUBJECTS = frozenset({"i", "we", "he", "she", "they", "it", "this", "that", "there", "my", "our", "his", "her",
                       "their", "its", "i'm", "i've", "i'd", "i'll", "we're", "it's", "that's", "there's"})
_SEQUENCE_ADVERBS = frozenset({"first", "then", "next", "finally", "second", "lastly"})
_SPEAKER_OBJECTS = frozenset({"me", "you", "us"})  # "tell me", "let us know": about the talk, not a task
# A bare plural after a verb or preposition: a generic object ("attachments", "in tests"), which makes an
# imperative a rule about a kind of thing rather than a request about one thing.
_BARE_PLURAL_AFTER = lexicon.PREPOSITIONS | lexicon.IMPERATIVE_VERBS
_PHRASE_BREAKS = lexicon.DETERMINERS | lexicon.PREPOSITIONS | lexicon.PRONOUNS | lexicon.CONJUNCTIONS


def _words(text: str) -> list[str]:
    return [w.strip(",.;:!?\"()") for w in text.lower().replace("’", "'").split()]


def _first_words(text: str) -> list[str]:
    return _words(text[:80])


def _imperative(text: str) -> bool:
    """An imperative not aimed at the speaker or the person spoken to ("restart it"; not "tell me", "thank you")."""
    if not lexicon.opens_with_imperative(text):
        return False
    words = _first_words(text)
    return not (len(words) > 1 and words[1] in _SPEAKER_OBJECTS)


def _purpose_instruction(text: str) -> bool:
    m = _PURPOSE_RE.match(text)
    return m is not None and m.group(1).lower().replace("’", "'") not in _SUBJECTS


def _conditional_instruction(text: str) -> bool:
    m = _CONDITION_RE.match(text)
    return m is not None and _imperative(m.group(1))


def _plural(word: str) -> bool:
    return len(word) > 3 and word.isalpha() and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _generic_object(text: str) -> bool:
    """Whether a noun phrase after the verb or a preposition is a bare plural (no determiner before it, modifiers
    allowed: "use staging databases", "for load tests")."""
    words = _words(text)
    for i, word in enumerate(words):
        if word not in _BARE_PLURAL_AFTER:
            continue
        for following in words[i + 1 : i + 4]:
            if following in _PHRASE_BREAKS:
                break
            if _plural(following):
                return True
    return False


def is_instruction(sentence: str, *, addressee: str = READER) -> bool:
    """Whether ``sentence`` tells how to do something or what always to do.

    Args:
        addressee: who it is said to. :data:`READER` (a document or note): an imperative, "you should ...",
            a how-to, "to rotate the key, open ...". :data:`PERSON` (a chat): only an imperative with a standing
            frame ("always lock the gate", "if it beeps, press reset", "make sure ...", "remember to ..."), a
            purpose frame or a named rule; a bare imperative is a social one ("take care", "let me know").
            :data:`AGENT` (a task session's user): those, and an imperative about a kind of thing (its object a
            bare plural: "compress attachments over 10 MB").
    """
    text = sentence.strip()
    if len(text.split()) < 3 or text.endswith("!"):
        return False
    lower = text.lower()
    if addressee == AGENT:
        return _agent_rule(text, lower)
    if _purpose_instruction(text) or _conditional_instruction(text):
        return True
    if addressee == READER:
        return _imperative(text) or bool(_MARKED_RE.search(text))
    if any(cue in lower for cue in _MARKED_CUES) and _CHAT_MARKED_RE.search(text):
        return True
    if not _imperative(text):
        return False
    words = _first_words(text)
    if words[0] in lexicon.FREQUENCY_OPENERS or " ".join(words[:2]) in lexicon.DIRECTIVE_OPENERS[:4]:
        return True  # "always lock ...", "make sure ...", "remember to ..."
    if words[0] in _SEQUENCE_ADVERBS:
        return True  # "First, fill the kettle": a step of a sequence
    return bool(_STANDING_FRAME_RE.search(text))


def _agent_rule(text: str, lower: str) -> bool:
    """An instruction a task session's user gives the agent for more than this task: one that says when it
    holds ("always ...", "whenever ...", "next time, ..."), or one about a kind of thing ("compress attachments
    over 10 MB", "to deploy, tag the release first") that names neither the user's own case ("use my gift card",
    "let me know") nor the step before ("after that, cancel it"): those are steps of this task."""
    if any(cue in lower for cue in _MARKED_CUES) and _CHAT_MARKED_RE.search(text):
        return True
    imperative = _imperative(text)
    if imperative and _first_words(text)[0] in lexicon.FREQUENCY_OPENERS or (
            (imperative or _conditional_instruction(text)) and _HABITUAL_RE.search(text)):
        return True
    if _FIRST_PERSON_WORDS.intersection(_words(text)) or _ANAPHORIC_CONDITION_RE.match(text):
        return False
    return _purpose_instruction(text) or _conditional_instruction(text) or (imperative and _generic_object(text))


#: First-person attributes a core block keeps, by key: (pattern, group holding the value).
CORE_ATTRIBUTES: dict[str, re.Pattern[str]] = {
    "diet": re.compile(r"\bI(?:'m|’m| am)\s+(?:a\s+|now\s+|strictly\s+)?(vegetarian|vegan|pescatarian|"
                       r"gluten[- ]free|lactose[- ]intolerant|kosher|halal)\b", re.I),
    "allergic to": re.compile(r"\bI(?:'m|’m| am)\s+(?:severely\s+|very\s+)?allergic to\s+([^.,;!?]{2,40})", re.I),
    "lives in": re.compile(r"\bI\s+(?:now\s+|currently\s+)?(?:live|moved)\s+(?:in|to)\s+([A-Z][^.,;!?]{1,40})"),
    "from": re.compile(r"\bI(?:'m|’m| am)\s+(?:originally\s+)?from\s+([A-Z][^.,;!?]{1,40})"),
    "works as": re.compile(r"\bI\s+work\s+as\s+(an?\s+[^.,;!?]{2,40}|[^.,;!?]{2,40})", re.I),
    "age": re.compile(r"\bI(?:'m|’m| am)\s+(\d{1,3})\s+(?:years?\s+old|yo)\b", re.I),
    "speaks": re.compile(r"\bI\s+speak\s+([A-Z][^.;!?]{1,40})"),
    "prefers": re.compile(r"\bI\s+(?:always\s+)?prefer\s+([^.;!?]{2,40})", re.I),
}


#: For each fact pattern, strings of which every match holds one (lower case; a digit for "setup"'s sizes): a
#: sentence holding none of them is not read with the pattern, which is slower than looking for the strings.
#: Each tuple is the pattern's own alternatives. "job" has none: its cues (every role noun, "is") are as slow.
FACT_CUES: dict[str, tuple[str, ...]] = {
    "relation": (*_RELATIONS, "married", "engaged"),
    "preference": ("like", "love", "prefer", "hate", "enjoy", "ador", "favo", "stand", "into", "fan of",
                   "allergic", "vegetarian", "vegan", "pescatarian", "gluten", "lactose"),
    "attribute": ("liv", "from", "born", "birthday", "year", "speak", "called", "name", "has", "have", "had"),
    "setup": ("run", "host", "deployed", "located", "stored", "lives", "sits", "cost", "priced", "every", "each",
              "nightly", "daily", "weekly", "monthly", "hourly", *"0123456789"),
}
_CUE_RES = {kind: re.compile("|".join(map(re.escape, sorted(cues, key=len, reverse=True))))
            for kind, cues in FACT_CUES.items()}
_SELF_CUES = ("i ", "i'", "i’", "my ")


def _states(kind: str, sentence: str, lower: str) -> bool:
    cue = _CUE_RES.get(kind)
    return (cue is None or bool(cue.search(lower))) and bool(FACT_PATTERNS[kind].search(sentence))


def fact_kinds(sentence: str) -> list[str]:
    """What durable facts ``sentence`` states ("relation", "job", "preference", "attribute", "setup")."""
    lower = sentence.lower()
    return [kind for kind in FACT_PATTERNS if _states(kind, sentence, lower)]


_FIRST_PERSON_RE = re.compile(r"\bi\b")


def core_attributes(text: str) -> list[tuple[str, str]]:
    """(key, value) of the first-person attributes ``text`` states, the name first ("name", "diet", ...)."""
    return list(_core_attributes(text))


@lru_cache(maxsize=_READINGS)
def _core_attributes(text: str) -> tuple[tuple[str, str], ...]:
    lower = text.lower()
    found = [("name", m.group(1)) for m in NAME_RE.finditer(text)] if "name is" in lower or "call me" in lower else []
    if not _FIRST_PERSON_RE.search(lower):
        return tuple(found)  # every attribute pattern opens with "I"
    for key, pattern in CORE_ATTRIBUTES.items():
        for m in pattern.finditer(text):
            value = _CLAUSE_TAIL_RE.sub("", m.group(1).strip())
            found.append((key, _TRAILING_RE.sub("", value).rstrip(" -")))
    return tuple(found)


# Where an attribute's value ends: a time phrase or a new clause after it ("York last month", "Leeds because").
# A coordinated clause with its own subject ends it too ("Leeds and I am allergic to ..."; not "Trinidad and Tobago").
_CLAUSE_TAIL_RE = re.compile(r"\s+(?:last|this|next|since|ago|yesterday|today|tomorrow|recently|because|but|so|"
                             r"when|while|after|before|until|in (?:19|20)\d\d|a (?:few|couple)"
                             r"|(?:and|or),? (?:i|we|he|she|they|you|my|our|his|her|their))\b.*$", re.I)
_TRAILING_RE = re.compile(r"(?:\s+(?:now|too|as well|these days|currently|anymore|by the way|though))+$", re.I)


# --- what kind of statement a sentence is: an instruction, an event, a durable fact ---------------------

# Rules and standing orders, wherever they stand in the sentence ("only the release manager may merge", "from
# now on, config changes need a canary"); a frame of time opens the sentence or a clause and a subject other than
# the speaker's follows it ("next time I bake, ..." says what the speaker will do).
_RULE_RE = re.compile(
    r"\b(?:may only|only (?:the )?[\w-]+(?: [\w-]+)? (?:may|can)|are required to|is required|is not allowed"
    r"|are not allowed)\b|(?:^|[,;]\s*|\b(?:and|so)\s+)(?:from now on|next time|in (?:the )?future|going forward),?\s+"
    r"(?!(?:i|i'm|i'll|i’m|i’ll|we|we'll|we’ll|he|she|they|it)\b)",
    re.I)
_RULE_WORDS = ("may", "can", "required", "allowed", "from now on", "next time", "future", "going forward")
# "needs a review", "need to be signed": a requirement, unless a person is its subject ("we need a break").
_NEED_RE = re.compile(r"\b(?:need|needs) (?:a|an|to be)\b", re.I)
_SUBORDINATORS = frozenset({"if", "when", "whenever", "where", "what", "once", "until", "unless", "case", "because"})
_PERSONS = frozenset({"i", "we", "you", "he", "she", "they", "both", "all", "really", "just", "also", "still"})
# After "must be": a judgement ("must be so rewarding", "must be exciting") says what the speaker infers.
_JUDGEMENT = lexicon.ADJECTIVES | lexicon.EVALUATIVE | lexicon.INTENSIFIERS | {"quite", "really", "such", "pretty"}
_ADJECTIVE_ENDINGS = ("y", "ful", "ous", "ive", "ible", "able", "ic", "ing")
_INFERRING_SUBJECTS = frozenset({"it", "that", "this", "those", "these", "there", "your", "his", "her", "their", "my",
                                 "our", "he", "she", "they", "i", "you", "that's"})


def _deontic_must(text: str) -> bool:
    """Whether a "must" of ``text`` states an obligation ("visitors must sign in") rather than an inference ("that
    must have been fun", "you must be so proud", "it must feel great") or a noun ("a must", "a must-see")."""
    words = _words(text)
    for i, word in enumerate(words):
        if word != "must" or (i and words[i - 1] in ("a", "the")):
            continue
        rest = [w for w in words[i + 1 : i + 5] if w not in ("not", "also", "really", "always", "never", "still")]
        if not rest:
            continue
        verb, after = rest[0], (rest[1] if len(rest) > 1 else "")
        if verb in ("have", "'ve"):  # a perfect is an inference about the past; possession may be a requirement
            if after in lexicon.DETERMINERS and words[0] not in _INFERRING_SUBJECTS:
                return True
            continue
        if verb == "be":
            if not after:
                continue  # "how tough it must be"
            if after in ("a", "an") and len(rest) > 2:
                after = rest[2]
            if after in _JUDGEMENT or after in _STATE_ED or after.endswith(_ADJECTIVE_ENDINGS):
                continue
            return True
        if verb in lexicon.STATIVE_VERBS or verb in ("seem", "feel", "look", "sound"):
            continue
        return True
    return False


def _need_rule(text: str) -> bool:
    for m in _NEED_RE.finditer(text):
        before = _words(text[: m.start()])[-2:]
        if not any(w in _PERSONS for w in before):
            return True
        if before[-1:] == ["you"] and not m.group().lower().endswith("to be") and not (
                len(before) > 1 and before[0] in _SUBORDINATORS):
            return True  # "you need a permit": a generic "you" and what it must have (not "whenever you need a")
    return False


def is_rule(sentence: str) -> bool:
    """Whether ``sentence`` states a rule or a standing order: an obligation ("must", "may only", "is required",
    "needs a review"), or a frame of time for what follows ("from now on, ...", "next time, ...")."""
    lower = sentence.lower()  # each test needs a word of its own: look for it before reading the sentence
    return (("must" in lower and _deontic_must(sentence)) or ("need" in lower and _need_rule(sentence))
            or (any(w in lower for w in _RULE_WORDS) and bool(_RULE_RE.search(sentence))))


_IRREGULAR_PAST = frozenset((
    "went", "got", "came", "saw", "made", "took", "bought", "brought", "met", "left", "found", "gave", "told",
    "ran", "won", "lost", "ate", "drank", "wrote", "flew", "drove", "rode", "sold", "sent", "spent", "caught",
    "began", "broke", "chose", "fell", "forgot", "grew", "heard", "held", "kept", "knew", "led", "paid", "sat",
    "slept", "spoke", "stood", "swam", "taught", "thought", "threw", "woke", "wore", "quit", "did", "hit", "shut",
    "became", "built", "felt", "fought", "hid", "hung", "lent", "lit", "meant", "rang", "rose", "sang", "shot",
    "sank", "slid", "stole", "struck", "swore", "tore", "understood", "won", "dug", "fed", "froze", "bit",
))
# -ed words that are adjectives or states, not a past event ("excited", "based in", "located").
_STATE_ED = frozenset((
    "interested", "excited", "married", "tired", "bored", "scared", "worried", "supposed", "used", "based",
    "located", "hosted", "named", "called", "related", "engaged", "retired", "divorced", "advanced", "detailed",
    "limited", "red", "bed", "need", "speed", "feed", "seed", "indeed", "hundred", "shred", "wed", "obsessed",
    "owned", "allowed", "required", "needed", "dedicated", "managed", "shared", "distributed", "scheduled",
    "promoted", "skilled", "qualified", "certified", "licensed", "experienced", "talented", "pleased", "proud",
    "attached", "included", "expected", "planned", "embed", "shed", "sled", "bred", "fled", "led", "unlimited",
))
# Lower-case words only: a name ending in -ed ("Ahmed") is no verb.
_PAST_ED_RE = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )\b([a-z]{3,}ed)\b")
_ED_WORD_RE = re.compile(r"\b[a-z]{3,}ed\b")  # what _PAST_ED_RE needs, found faster (no look-behinds)
_TIME_PHRASE_RE = re.compile(
    r"\b(?:yesterday|tonight|last (?:night|week|weekend|month|year|quarter|time|summer|winter|spring|autumn|fall)"
    r"|this (?:morning|afternoon|evening|month|week|weekend)|(?:a|two|three|few) (?:days|weeks|months|years) ago"
    r"|next (?:week|weekend|month|year|meeting|time)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|in (?:january|february|march|april|may|june|july|august|september|october|november|december)\b)", re.I)
_EVENT_LABELS = frozenset(("attendees", "participants", "attendance", "present", "absent", "decision", "decisions",
                           "action", "action item", "actions", "date", "agenda", "outcome", "result", "minutes",
                           "apologies"))


def is_event(sentence: str) -> bool:
    """Whether ``sentence`` tells of something that happened or is planned for a day: a past-tense verb, a time
    phrase ("last week", "on Sunday"), a calendar date, or a meeting's labelled line ("Attendees: ...")."""
    label = _label_line(sentence)
    if label and label.group(1).strip().lower() in _EVENT_LABELS:
        return True
    # The cheapest tests first (the answer is the same in any order).
    if not _IRREGULAR_PAST.isdisjoint(re.findall(r"[a-z]+", sentence.lower())):
        return True
    if _ED_WORD_RE.search(sentence) and any(m.group(1) not in _STATE_ED for m in _PAST_ED_RE.finditer(sentence)):
        return True
    return bool(_TIME_PHRASE_RE.search(sentence) or _find_date(sentence))


def statement_types(sentence: str, *, addressee: str = READER, default: str = "semantic") -> set[str]:
    """The memory types one sentence belongs to: ``{"procedural"}`` for an instruction or rule, else
    ``episodic`` for an event (with ``semantic`` when it also states who someone is to someone or what they
    do), else ``semantic`` for a durable fact, else ``{default}`` (what a sentence stating nothing special is
    where it stands: an event in a chat, a statement in a document). ``addressee``: see :func:`is_instruction`."""
    text = sentence.strip()
    if not text or text.endswith("?"):
        return set()
    if is_instruction(text, addressee=addressee) or is_rule(text):
        return {"procedural"}
    # Whether it is an event is asked last: a sentence stating no fact is an event where the default is one.
    lower = text.lower()
    if _states("relation", text, lower) or _states("job", text, lower):
        return {"episodic", "semantic"} if is_event(text) else {"semantic"}
    if (_label_line(text) or (any(cue in lower for cue in _SELF_CUES) and SELF_STATEMENT_RE.search(text))
            or any(_states(kind, text, lower) for kind in ("preference", "attribute", "setup"))):
        return {"episodic"} if is_event(text) else {"semantic"}
    return {default} if default == "episodic" or not is_event(text) else {"episodic"}


@dataclass(frozen=True)
class Statement:
    """One sentence of a text (or one labelled line of notes, whole) and the memory types it belongs to."""

    text: str
    types: frozenset[str]


@lru_cache(maxsize=_READINGS)
def read(text: str, addressee: str = READER, default: str = "semantic") -> tuple[Statement, ...]:
    """The statements of ``text``, each typed by :func:`statement_types`: the one reading of a part that the
    router and every writer share (made once per text, ``addressee`` and ``default``)."""
    out: list[Statement] = []
    for line in text.split("\n"):
        if _label_line(line):
            pieces = [line.strip().lstrip("-*• ").strip()]  # "DBA: Priya Raman" is one statement
        else:
            pieces = [sentence.strip() for sentence in split_sentences(line, keep_quotes=True)]
        out.extend(Statement(piece, frozenset(statement_types(piece, addressee=addressee, default=default)))
                   for piece in pieces if piece)
    return tuple(out)


def text_types(text: str, *, addressee: str = READER, default: str = "semantic") -> set[str]:
    """The union of the types of the statements of ``text`` (:func:`read`)."""
    return set().union(*(s.types for s in read(text, addressee, default)))


def statements_of_type(text: str, type_: str, *, addressee: str = READER, default: str = "semantic") -> list[str]:
    """The statements of ``text`` (:func:`read`) that belong to memory type ``type_``, in order, once each."""
    return list(dict.fromkeys(s.text for s in read(text, addressee, default) if type_ in s.types))


def durable_facts(text: str, *, addressee: str = READER, default: str = "semantic") -> list[str]:
    """The statements of ``text`` that state something that stays true (the semantic ones): relations, jobs and
    roles, preferences, attributes, where a system runs, what it costs, when a job runs; labelled note lines."""
    return statements_of_type(text, "semantic", addressee=addressee, default=default)
