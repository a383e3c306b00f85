"""Deterministic rules the offline backend uses for the router and the six writers.

They read only the window they are given (and, for core, the current block), so
the same input always yields the same records.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memrepo import sensitive
from memrepo.text.dates import find_date
from memrepo.nlp.tokens import split_sentences

SELF_STATEMENT_RE = re.compile(
    r"\b(I am|I'm|I have|I've|I like|I love|I enjoy|I prefer|I hate|I dislike|I work|I live|I own|"
    r"my [\w'’ -]{1,30}? (?:is|are|was|were))\b",
    re.I,
)
SECRET_RE = sensitive.LABELLED_RE  # labelled values; memrepo.sensitive also finds token shapes
NAME_RE = re.compile(r"\b(?:[Mm]y name is|[Cc]all me)\s+([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)")
_PLAN_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to|will|scheduled|booked)\b", re.I)
_PLAN_STRONG_RE = re.compile(r"\b(planning to|plan to|plans to|going to|intend to)\b", re.I)


def self_statements(text: str) -> list[str]:
    """Sentences of ``text`` in which the speaker states something about themselves."""
    return [s for s in split_sentences(text, keep_quotes=True) if SELF_STATEMENT_RE.search(s)]


def secrets(text: str) -> list[tuple[str, str]]:
    """(kind, value) of sensitive values in ``text``: labelled ("my PIN is 4321") or token-shaped."""
    return [(f.kind, f.value) for f in sensitive.find(text)]


def redact(text: str) -> str:
    """``text`` with every sensitive value replaced by a pointer to the vault (twice is the same as once)."""
    return sensitive.redact(text)


def mentioned_date(text: str, session_day: str | None) -> str | None:
    """A calendar date named in ``text`` ("2023-08-12", "12 August 2023", "August 12"): in its own year if it
    names one, else in the session's; None without a session day or a valid date."""
    if not session_day:
        return None
    named = find_date(text)
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
    named = find_date(text)
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

# The first word of an instruction: imperative verbs and the adverbs an instruction opens with.
_IMPERATIVE_VERBS = (
    "add", "ask", "avoid", "back", "book", "bring", "call", "cancel", "change", "check", "choose", "clean", "clear",
    "click", "close", "commit", "confirm", "copy", "create", "delete", "deploy", "disable", "document", "double-check",
    "download", "drain", "edit", "email", "enable", "ensure", "enter", "escalate", "export", "file", "fill", "follow",
    "get", "give", "go", "install", "keep", "label", "lock", "log", "mark", "merge", "message", "move", "note",
    "notify", "open", "page", "paste", "pay", "ping", "post", "press", "pull", "push", "put", "read", "reboot",
    "record", "remove", "rename", "replace", "reply", "report", "request", "reset", "restart", "restore", "review",
    "rotate", "run", "save", "schedule", "select", "send", "set", "share", "sign", "skip", "start", "stop", "store",
    "submit", "switch", "tag", "take", "tell", "test", "turn", "type", "unplug", "update", "upgrade", "upload",
    "use", "verify", "wait", "wipe", "write",
)
_INSTRUCTION_RE = re.compile(
    r"^(?:\d+[.)]\s+|[-*•]\s+|step\s+\d+[:.)]?\s+)?(?:please\s+|first,?\s+|then,?\s+|next,?\s+|finally,?\s+|and\s+)?"
    r"(?:always|never|don['’]t|do not|make sure|be sure|remember to|don['’]t forget|"
    rf"(?:{'|'.join(_IMPERATIVE_VERBS)})\b(?!\s+(?:you|me)\b))"
    r"|\b(?:you|we|everyone|one)\s+(?:should|must|need to|have to|ought to)\b|^to\s+\w+[^,]{0,80},\s+\w+"
    r"|\bhow to\b|\bthe (?:rule|policy|procedure|process) is\b",
    re.I,
)

_CHAT_INSTRUCTION_RE = re.compile(
    r"^(?:please\s+)?(?:always|never|make sure|be sure to|remember to|don['’]t forget to)\b"
    r"|\b(?:you|we|everyone)\s+(?:should always|must|need to always|have to always)\b|^to\s+\w+[^,]{0,80},\s+\w+"
    r"|\bhow to\b|\bthe (?:rule|policy|procedure|process|trick) is\b|^(?:first|step \d+)\b",
    re.I,
)

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


def fact_kinds(sentence: str) -> list[str]:
    """What durable facts ``sentence`` states ("relation", "job", "preference", "attribute", "setup")."""
    return [kind for kind, pattern in FACT_PATTERNS.items() if pattern.search(sentence)]


def durable_facts(text: str) -> list[str]:
    """Sentences of ``text`` that state something that stays true: self statements, relations, jobs and roles,
    preferences, attributes, where a system runs, what it costs, when a job runs; labelled note lines."""
    out = []
    for line in text.split("\n"):
        if _LABEL_LINE_RE.match(line) and not is_instruction(line):
            out.append(line.strip().lstrip("-*• ").strip())
            continue
        for sentence in split_sentences(line, keep_quotes=True):
            if sentence.endswith("?"):
                continue  # a question states nothing
            if SELF_STATEMENT_RE.search(sentence) or fact_kinds(sentence):
                out.append(sentence)
    return list(dict.fromkeys(out))


def is_instruction(sentence: str, *, chat: bool = False) -> bool:
    """Whether ``sentence`` tells how to do something or what always to do (an imperative, "you should ...",
    "to rotate the key, open ...").

    Args:
        chat: the sentence is a turn of a conversation, where a bare imperative is usually a social one
            ("take care", "check this out"): only the marked forms count ("always", "make sure", "you
            should", "how to", "to X, Y").
    """
    text = sentence.strip()
    if len(text.split()) < 3 or text.endswith("!"):
        return False
    if chat:
        return bool(_CHAT_INSTRUCTION_RE.search(text))
    return bool(_INSTRUCTION_RE.search(text))


def instructions(text: str, *, chat: bool = False) -> list[str]:
    """The instruction sentences of ``text`` (one per list item or sentence), in order."""
    out = []
    for line in text.split("\n"):
        for sentence in split_sentences(line, keep_quotes=True):
            if is_instruction(sentence, chat=chat):
                out.append(sentence.strip())
    return list(dict.fromkeys(out))


def core_attributes(text: str) -> list[tuple[str, str]]:
    """(key, value) of the first-person attributes ``text`` states, the name first ("name", "diet", ...)."""
    found = [("name", m.group(1)) for m in NAME_RE.finditer(text)]
    for key, pattern in CORE_ATTRIBUTES.items():
        for m in pattern.finditer(text):
            value = _CLAUSE_TAIL_RE.sub("", m.group(1).strip())
            found.append((key, _TRAILING_RE.sub("", value).rstrip(" -")))
    return found


# Where an attribute's value ends: a time phrase or a new clause after it ("York last month", "Leeds because").
_CLAUSE_TAIL_RE = re.compile(r"\s+(?:last|this|next|since|ago|yesterday|today|tomorrow|recently|because|but|so|"
                             r"when|while|after|before|until|in (?:19|20)\d\d|a (?:few|couple))\b.*$", re.I)
_TRAILING_RE = re.compile(r"(?:\s+(?:now|too|as well|these days|currently|anymore|by the way|though))+$", re.I)


# --- what kind of statement a sentence is: an instruction, an event, a durable fact ---------------------

# Rules and standing orders, wherever they stand in the sentence.
_RULE_RE = re.compile(
    r"\b(?:must(?: not)?|may only|only (?:the )?[\w-]+(?: [\w-]+)? (?:may|can)|are required to|is required|"
    r"whenever you|(?:need|needs) (?:a|an|to be)|is not allowed|are not allowed)\b|\b(?:from now on|next time),?\s"
    r"|^(?:if|when|whenever|before|after)\b[^,]{3,80},\s*(?:please\s+)?"
    rf"(?:{'|'.join(_IMPERATIVE_VERBS)}|always|never|don['’]t|do not|make sure)\b",
    re.I,
)
_MORE_IMPERATIVES_RE = re.compile(
    r"^(?:compress|descale|fill|boil|pour|mix|wash|rinse|feed|water|lock|unlock|charge|plug|leave out|pack|print|"
    r"scan|sort|measure|weigh|heat|cool|pick|drop|hand|walk|drive|park|bring|return|tidy|label)\b", re.I)
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
    label = _LABEL_LINE_RE.match(sentence)
    if label and label.group(1).strip().lower() in _EVENT_LABELS:
        return True
    if find_date(sentence) or _TIME_PHRASE_RE.search(sentence):
        return True
    words = re.findall(r"[a-z]+", sentence.lower())
    if any(w in _IRREGULAR_PAST for w in words):
        return True
    return any(m.group(1) not in _STATE_ED for m in _PAST_ED_RE.finditer(sentence))


def statement_types(sentence: str, *, chat: bool = False, default: str = "semantic") -> set[str]:
    """The memory types one sentence belongs to: ``{"procedural"}`` for an instruction or rule, else
    ``episodic`` for an event (with ``semantic`` when it also states who someone is to someone or what they
    do), else ``semantic`` for a durable fact, else ``{default}`` (what a sentence stating nothing special is
    where it stands: an event in a chat, a statement in a document)."""
    text = sentence.strip()
    if not text or text.endswith("?"):
        return set()
    if is_instruction(text, chat=chat) or _RULE_RE.search(text) or (not chat and _MORE_IMPERATIVES_RE.match(text)):
        return {"procedural"}
    facts = set(fact_kinds(text)) | ({"self"} if SELF_STATEMENT_RE.search(text) else set())
    if _LABEL_LINE_RE.match(text) and not is_event(text):
        return {"semantic"}
    if is_event(text):
        return {"episodic", "semantic"} if facts & {"relation", "job"} else {"episodic"}
    return {"semantic"} if facts else {default}


def text_types(text: str, *, chat: bool = False, default: str = "semantic") -> set[str]:
    """The union of :func:`statement_types` over the sentences (and lines) of ``text``."""
    out: set[str] = set()
    for line in text.split("\n"):
        for sentence in split_sentences(line, keep_quotes=True):
            out |= statement_types(sentence, chat=chat, default=default)
    return out
