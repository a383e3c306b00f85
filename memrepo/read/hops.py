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
from typing import TYPE_CHECKING, Any, Callable

from memrepo.nlp import lexicon as lx
from memrepo.nlp.morphology import lemma
from memrepo.read.evidence import Evidence, ledger_of, merge_ledgers

if TYPE_CHECKING:
    from memrepo.llm import Backend
    from memrepo.read.recall import RecallResult

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
        """The question that names the thing: "Which system feeds Herald?"; of a clause whose subject is a name,
        English asks with "does" and the verb's base form ("the API Teodor owns": "Which API does Teodor own?")."""
        if self.clause.lower().startswith("whose "):  # "the tube whose blood is used": which tube's blood is used
            return f"Which {self.head}'s {self.clause.split(' ', 1)[1]}?"
        m = _OBJECT_CLAUSE_RE.match(self.clause)
        if m and m.group(1) == self.clause:
            *name, verb = self.clause.split()
            return f"Which {self.head} does {' '.join(name)} {lemma(verb)}?"
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


# English function words: never a name standing beside a description ("the notification worker, and its ...")
_FUNCTION_WORDS = frozenset(("and", "or", "but", "nor", "with", "that", "which", "who", "whose", "is", "are", "was",
                             "were", "in", "on", "at", "for", "to", "of", "from", "by", "the", "a", "an", "its", "their",
                             "our", "his", "her", "as", "so", "together", "also", "too", "then", "when", "where"))


# a table row's record, as write/documents writes it: "Table — Key header: key; Header: value"
_ROW_TEXT_RE = re.compile(r"^[^:;—–\n]{1,80}\s[—–]\s[^:;\n]{1,60}:\s(?P<key>[^;\n]+);\s(?P<rest>.+)$")


def name_in(description: str, sentence: str) -> str:
    """The name a description stands beside in ``sentence``, or the description itself when the sentence names
    nothing beside it. English puts a name in apposition before its description ("owns Ledger, our billing
    service": Ledger) or after it, with or without a comma ("the public API, tide-api"; "the Kubernetes cluster
    reef"): a word that is no function word. In a table row's record ("Systems — System: burrow; What it does:
    RabbitMQ broker that feeds Herald") the row's first cell names what its other cells describe."""
    row = _ROW_TEXT_RE.match(sentence)
    if row and description.lower() in row.group("rest").lower():
        return row.group("key").strip()
    # the apposition's modifiers are adjectives and nouns: no conjunction or article starts a second phrase
    # ("pg-main, its backups and the monitoring server Lookout": the server is not pg-main)
    m = re.search(r"((?:[A-Z][\w.-]*\s+)*[\w][\w.-]*),\s+(?:our|the|a|an|its|their)\s+"
                  r"(?:(?!(?:and|or|but|nor|the|a|an)\b)[\w-]+\s+){0,3}?" + re.escape(description)
                  + r"\b", sentence)
    if m:
        return m.group(1)
    for m in re.finditer(r"\b(?:the|our|its|their)\s+(?:[\w-]+\s+){0,2}?" + re.escape(description)
                         + r",?\s+(?P<name>[\w][\w.-]*[\w]|[\w])", sentence, re.I):
        if m.group("name").lower() not in _FUNCTION_WORDS and not m.group("name")[0].isdigit():
            return m.group("name")
    return description


_AUXILIARIES = frozenset(("is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "can", "could",
                          "must", "may", "will", "would", "should", "gets", "get"))


def possessor(clause: str, sentence: str) -> str:
    """The thing a "whose" clause describes, named in ``sentence``: English says "the system whose late import
    pages" of what it writes as "Silo import late" or "Silo's late import", the possessor's name just before the
    possessed noun. "" when ``clause`` is no "whose" clause or the sentence names no possessor."""
    words = clause.split()
    if not words or words[0].lower() != "whose":
        return ""
    # the possessed noun phrase ends at the clause's auxiliary ("whose blood is used for ...": blood)
    aux = next((i for i, w in enumerate(words[1:4], 1) if w.lower() in _AUXILIARIES), 4)
    possessed = {w.lower() for w in words[1:aux]} - _FUNCTION_WORDS
    said = {w.lower() for w in words}
    tokens = re.findall(r"[\w][\w.-]*[\w]|[\w]", re.sub(r"['’]s\b", "", sentence))
    wanted = min(2, len(possessed))  # the possessed phrase follows the name: two of its words, when it has two
    for i, before in enumerate(tokens[:-1]):
        run = 0
        while i + 1 + run < len(tokens) and tokens[i + 1 + run].lower() in possessed:
            run += 1
        if (run and run >= wanted and before.lower() not in said and before.lower() not in _FUNCTION_WORDS
                and not before[0].isdigit()):
            return before
    return ""


def subject(clause: str, sentence: str) -> str:
    """The thing a clause opening with its verb describes ("the pager that pages the secondary"), named in
    ``sentence`` as that verb's subject: the name just before the same verb ("Klaxon pages the secondary on call"):
    capitalised words, or one code-like word (a digit, hyphen or dot in it). "" when the sentence has none."""
    words = clause.split()
    if not words or not re.fullmatch(r"[a-z]{3,}", words[0]) or words[0] in _FUNCTION_WORDS:
        return ""
    # the subject stands in the verb's own clause: no name across a semicolon, colon or sentence end
    # ("nothing leaves Paywell; Ledger stores only tokens": Ledger)
    tokens = [t for part in re.split(r"[;:!?]|\.(?=\s|$)", sentence)
              for t in ["\n", *re.findall(r"[\w#][\w.#-]*[\w]|[\w]", part)]]
    for i, token in enumerate(tokens[1:], 1):
        if token != words[0]:
            continue
        name: list[str] = []
        for before in reversed(tokens[max(0, i - 3):i]):
            if before == "\n" or before.lower() in _FUNCTION_WORDS or not (before[0].isupper()
                                                                             or re.search(r"[\d.-]", before)):
                break
            name.insert(0, before)
            if not before[0].isupper():
                break  # a code-like name is one word
        if name:
            return " ".join(name)
    return ""


def object_of(clause: str, sentence: str) -> str:
    """The thing a clause with a named subject describes ("the system Priya Raman owns"), named in ``sentence``
    as the object right after that subject's verb ("Priya Raman ... owns Ledger, our billing service": Ledger):
    capitalised words, or one code-like word. "" when the clause has no named subject or the sentence, not both."""
    m = _OBJECT_CLAUSE_RE.match(clause)
    if not m:
        return ""
    *who, verb = m.group(1).split()
    if " ".join(who) not in sentence:
        return ""
    after = re.search(r"\b" + re.escape(verb) + r"\s+(?P<name>(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*|[\w]+[\d.-][\w.-]*[\w])",
                      sentence[sentence.index(" ".join(who)):])
    return after.group("name") if after else ""


_PART_PATH_RE = re.compile(r"#[^/#:]+/(?P<path>[^#]+):\d+$")


def section_of(sources: list[str] | tuple[str, ...]) -> str:
    """The headings above the document part a citation names, as words ("src-...#manual/Procedures/Blood-smear:1":
    "Procedures Blood smear"), or "": a part says what its section is about as much as what its own text says
    ("Put a drop of EDTA blood on a slide", under "Blood smear", says the blood is used for a blood smear)."""
    for source in sources:
        m = _PART_PATH_RE.search(source)
        if m:
            return " ".join(m.group("path").replace("~", " ").replace("-", " ").split("/"))
    return ""


def says(clause: str, text: str) -> bool:
    """Whether ``text`` says the clause that describes a thing: two thirds of the clause's content words in it
    ("Samir owns notify-worker" says "Samir owns"); then the text names the thing, not what is asked of it."""
    from memrepo.read.turns import terms_of

    wanted = terms_of(clause)
    return bool(wanted) and len(wanted & terms_of(text)) * 3 >= len(wanted) * 2


def thing_in(thing: Described, sentence: str) -> str:
    """The name ``sentence`` gives the described thing: the possessor of a "whose" clause, else the name beside
    the thing's noun (:func:`name_in`), else the subject of the clause's verb (:func:`subject`) or the object of
    its named subject's verb (:func:`object_of`); the noun itself when the sentence names none."""
    named = possessor(thing.clause, sentence) or name_in(thing.head, sentence)
    if named != thing.head:
        return named
    return subject(thing.clause, sentence) or object_of(thing.clause, sentence) or thing.head


_SUBORDINATORS = frozenset(("when", "if", "while", "because", "after", "before", "until", "once", "unless"))


def _main_verb_cut(clause: str) -> str:
    """A relative clause without the question's own verb after it: in "the broker that feeds Herald gives a
    warning" a second -s verb right after the clause's object (a name or a number) starts the main clause; not
    after a cardinal, whose -s word is the noun it counts, nor after a subordinator ("is switched to Semaphore when Textwell fails" is one clause)."""
    words = clause.split()
    for i in range(2, len(words)):
        if words[i - 1].lower() in _SUBORDINATORS or any(w.lower() in _SUBORDINATORS for w in words[:i]):
            return clause
        if re.fullmatch(r"\d[\d,.]*", words[i - 1]):
            continue  # after a cardinal an -s word is the noun it counts ("keeps events for 25 months")
        if (re.fullmatch(r"[a-z]+[^s\W]s", words[i]) and (words[i - 1][0].isupper() or words[i - 1][0].isdigit())
                and words[i - 2].lower() not in ("the", "a", "an")):
            return " ".join(words[:i])
    return clause


_DETERMINERS = frozenset(lx.DETERMINERS | lx.POSSESSIVES.keys())


def _question_verb(words: list[str]) -> int:
    """Where the question's own verb starts in the words after a relative pronoun of an inverted question: the
    first base-form verb after the clause's verb and its object (no determiner or preposition just before it, which
    would make it a noun: "writes the charge sheets", "pages whoever is on call"); the last word when there is
    none."""
    for i in range(2, len(words)):
        if (words[i].lower() in lx.VERBS and words[i - 1].lower() not in _DETERMINERS
                and words[i - 1].lower() not in lx.PREPOSITIONS):
            return i
    return len(words) - 1


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
            # "In which region does the cluster that runs the Herald dispatcher live?": after "does" or "can" the
            # question's own verb is in its base form, the clause's is not ("the bike that carries children go
            # on one charge": go); else the last word is the question's verb
            clause = " ".join(words[:_question_verb(words)])
        else:
            clause = _main_verb_cut(clause)
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


# --- the role hop: a rule names a role, another passage names who holds it ------------------------------------
#
# "If a SEV1 is still open after 30 minutes, call the Head of Engineering." answers "Who is called ...?" with a role,
# not a person; "Marta Lindqvist is Head of Engineering" (or a role line "DBA: Priya Raman", or a rota's row) names
# who holds it. In English a person's name takes no article and a role does ("call the owner of Silo", "approved by
# the primary on call"), so a "the" before a noun that names a person by what they do marks a role to resolve.

#: Nouns that name a person by what they do (English agent and office nouns), the head of a role phrase.
ROLE_NOUNS = ("owner", "owners", "lead", "leader", "head", "manager", "chair", "chairperson", "author", "reviewer",
              "maintainer", "approver", "contact", "director", "officer", "administrator", "admin", "coordinator",
              "secretary", "treasurer", "president", "captain", "supervisor", "buddy", "assignee", "sponsor",
              "responder", "engineer", "primary", "secondary", "deputy", "steward", "warden", "organiser",
              "organizer", "custodian", "dba")
_ROLE_HEAD = r"(?:" + "|".join(ROLE_NOUNS) + r")"
_OF_WHAT = r"(?:\s+of\s+(?:the\s+|a\s+|an\s+)?[\w][\w.-]*(?:\s+(?!and\b|or\b|but\b|because\b)[a-z][\w-]*)?)?"
_ROLE_RE = re.compile(
    r"\b(?:the|The)\s+(?P<role>[A-Z][\w-]*\s+of\s+(?:the\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?"  # "the Head of Engineering"
    r"|(?:[A-Za-z][\w-]*\s+){0,2}(?i:" + _ROLE_HEAD + r")(?:\s+on\s+call)?" + _OF_WHAT + r")(?=[\s,.;:!?)]|$)")
# "Who was primary on call when ...": a role the question itself asks the holder of
_ASKED_ROLE_RE = re.compile(
    r"^who\s+(?:is|was|will\s+be|are|were)\s+(?:the\s+)?(?P<role>(?:[a-z][\w-]*\s+){0,2}?" + _ROLE_HEAD
    + r"(?:\s+on\s+call)?)\s+(?P<when>when|while|during|in\s+the\s+week|on|at\s+the\s+time)\b", re.I)
_ISO_DAY_RE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
_EVENT_LINK_RE = re.compile(r"^(?:of|that|when|in\s+which|where)\s+", re.I)
# a row's key that starts an interval: "Week starting: 2026-02-09", "Week of: ...", "From: ..."
_INTERVAL_KEY_RE = re.compile(r"\b(?:week|weeks|starting|beginning|commencing|from|since|of)\b", re.I)
_GENERIC_THING_RE = re.compile(r"^(?:the|a|an)\s+[a-z][\w\s-]*$")
_NAME_WORD_RE = re.compile(r"[A-Z][\w'’-]+")


@dataclass(frozen=True)
class Role:
    """A role a passage (or the question) names in place of a person: "Head of Engineering", "owner of Silo"."""

    phrase: str  # "owner of Silo", "primary on call"
    record_id: str = ""  # the record that names it ("" when the question does)

    def question(self, day: str = "") -> str:
        """The question that asks who holds the role: "Who owns Silo?", "Who is the Head of Engineering?"."""
        m = re.match(r"(?:[\w-]+\s+)*?owners?\s+of\s+(.+)$", self.phrase)
        if m:
            return f"Who owns {m.group(1)}?"
        m = re.match(r"(?P<what>(?:[a-z][\w-]*\s+){1,2})lead$", self.phrase)
        if m and not set(m.group("what").split()) & set(ROLE_NOUNS):  # "the support lead": who leads support
            # ("the deputy lab lead" is a role of its own, not who leads a "deputy lab")
            return f"Who leads {m.group('what').strip()}?"
        when = f" in the week starting {day}" if day else ""
        article = "" if self.phrase[:1].isupper() else "the "  # a title goes without one: "Head of Engineering"
        return f"Who is {article}{self.phrase}{when}?"


def role_in(text: str, draft: str = "") -> str:
    """The role phrase of ``text`` that holds ``draft`` (any role phrase when the draft is empty), or ""."""
    for m in _ROLE_RE.finditer(text):
        role = m.group("role").rstrip(".,;")
        if not draft or draft.lower() in role.lower():
            return role
    return ""


def asked_role(question: str) -> str:
    """The role ``question`` asks the holder of at a time ("Who was primary on call when ...": primary on call)."""
    m = _ASKED_ROLE_RE.match(question.strip())
    return m.group("role") if m else ""


def event_clause(question: str) -> str:
    """The event a "who was <role> when ..." question dates by, as a clause of its own ("Who was primary on call
    when the disk filled?", "... in the week of the disk failure?": the disk filled, the disk failure), or "" when
    the question asks a role at no event (or names its day).
    Recalled alone it finds the passage that tells the event: the role's words, in the whole question, draw the
    rota's rows instead."""
    m = _ASKED_ROLE_RE.match(question.strip())
    if not m or m.group("when").lower() in ("on", "at the time") or day_of(question):
        return ""
    # "in the week of the migration", "in the week (that) the disk filled": the event after its link word
    clause = _EVENT_LINK_RE.sub("", question.strip()[m.end():].strip(" ?"))
    return clause if len(clause.split()) >= 2 else ""


def is_person_name(answer: str) -> bool:
    """Whether ``answer`` reads as a person's name: one to four words, each capitalised, no role noun."""
    words = answer.strip().rstrip(".").split()
    if len(words) == 1 and words[0].lower().endswith("ing"):
        return False  # a verb form opening a sentence ("Restoring needs ..."), not a name
    return (0 < len(words) <= 4 and all(_NAME_WORD_RE.fullmatch(w) for w in words)
            and not any(w.lower() in ROLE_NOUNS or w.lower() == "of" for w in words))


def named_thing(role: str, question: str, sentence: str) -> str:
    """A role of an unnamed thing ("owner of the affected system") as the role of the thing the question names
    and the sentence does not ("a tide-api failure": owner of tide-api); the role itself otherwise."""
    m = re.match(r"(?P<role>.*?\bof)\s+(?P<thing>.+)$", role)
    if not m or not _GENERIC_THING_RE.match(m.group("thing")):
        return role
    said = sentence.lower()
    names = [w for w in re.findall(r"[\w][\w.-]*[\w]", question)[1:]
             if (re.search(r"[A-Z\d-]", w)) and w.lower() not in said and not _ISO_DAY_RE.fullmatch(w)]
    return f"{m.group('role')} {names[0]}" if names else role


def holder_line(role: str, texts: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(record id, holder) of a role line that names ``role`` ("DBA: Priya Raman", "Contacts — Chair: Lea Berg")
    among ``texts`` (record id, text), or None: the line's label is the role, its value a person's name."""
    wanted = role.lower().split()
    for record_id, text in texts:
        line = re.split(r"\s[—–]\s", text, maxsplit=1)[-1]
        label, sep, value = line.partition(": ")
        if sep and label.lower().split() == wanted and is_person_name(value.split(",")[0]):
            return record_id, value.split(",")[0].strip().rstrip(".")
    return None


def day_of(question: str) -> str:
    """The ISO day the question names ("in the week starting 2026-03-02"), or ""."""
    m = _ISO_DAY_RE.search(question)
    return m.group(1) if m else ""


def interval_holds(key_header: str, start: str, day: str) -> bool:
    """Whether a row keyed by ``start`` under ``key_header`` covers ``day``: a week row ("Week starting:
    2026-02-09") covers its seven days, any other dated row its own day."""
    from datetime import date, timedelta

    try:
        first, asked = date.fromisoformat(start), date.fromisoformat(day)
    except ValueError:
        return False
    last = first + timedelta(days=6 if re.search(r"\bweeks?\b", key_header, re.I) else 0)
    return first <= asked <= last


def row_for(role: str, day: str, rows: list[tuple[str, str, str, str, str]]) -> tuple[str, str] | None:
    """The holder of ``role`` on ``day`` from table rows ``(record id, key header, key, header, value)``: the row
    whose interval key covers the day and whose header is the role's head ("Primary" for primary on call)."""
    role_words = {w.lower() for w in role.split()} - {"on", "call", "the", "of"}
    for record_id, key_header, key, header, value in rows:
        if not _INTERVAL_KEY_RE.search(key_header) or not _ISO_DAY_RE.fullmatch(key.strip()):
            continue
        if {w.lower() for w in header.split()} & role_words and interval_holds(key_header, key.strip(), day):
            return record_id, value
    return None


def _first_role(question: str, draft: str, ledger: list["Evidence"], ids: list[str]) -> Role | None:
    """The role the first hop found: the one the question asks at a time, else the role phrase of the record the
    draft rests on that holds the draft, else one of a leading record that says most of the question."""
    from memrepo.read.turns import terms_of

    asked = asked_role(question)
    if asked:
        return Role(asked)
    records = [e for e in ledger if e.kind == "record"]
    if draft:
        for e in records:
            if e.id in ids and (role := role_in(e.text, draft)):
                return Role(named_thing(role, question, e.text), e.id)
    wanted = terms_of(question)
    best: tuple[int, Role | None] = (0, None)
    for e in records:
        role = role_in(e.text)
        shared = len(wanted & terms_of(e.text))
        if role and shared >= 2 and shared * 3 >= len(wanted) and shared > best[0]:
            best = (shared, Role(named_thing(role, question, e.text), e.id))
    return best[1]


def _event_day(question: str, ledger: list["Evidence"]) -> tuple[str, str]:
    """(the day, the record) of the event a "who was X when ..." question dates by: the leading record that says
    most of the question and is dated apart from when it was written, or the ISO day its text names."""
    from memrepo.read.cells import row_of
    from memrepo.read.turns import terms_of

    wanted = terms_of(question)
    best: tuple[int, str, str] = (1, "", "")
    for e in (e for e in ledger if e.kind == "record"):
        if row_of(e) is not None:
            continue
        in_text = _ISO_DAY_RE.search(e.text)
        day = in_text.group(1) if in_text else (e.date if e.date and e.date != e.said else "")
        shared = len(wanted & terms_of(e.text))
        if day and shared > best[0]:
            best = (shared, day, e.id)
    return best[1], best[2]


def holder_in(text: str, role: str) -> str:
    """The person ``text`` names as the holder of ``role`` itself, or "": a person's name as the subject of "is"
    or "was" before the role ("Desmond Achterberg is the platform engineer"), also as the second of two predicates
    ("Nkechi Adeyemi is the senior nurse and is the deputy lab lead"), or a role line's value ("DBA: Priya
    Raman")."""
    line = holder_line(role, [("", text)])
    if line is not None:
        return line[1]
    m = re.search(r"((?:[A-Z][\w'’-]+\s+){0,3}[A-Z][\w'’-]+)\s+(?:is|was|are|were)\s+(?:[^.;:!?]*?\band\s+(?:is|was)\s+)?"
                  r"(?:the\s+|our\s+|their\s+)?" + re.escape(role) + r"\b", text)
    return m.group(1) if m is not None and is_person_name(m.group(1)) else ""


def names_holder(text: str, role: str) -> bool:
    """Whether ``text`` names who holds ``role`` itself (:func:`holder_in`)."""
    return bool(holder_in(text, role))


_WHO_RE = re.compile(r"\s*who(?:se|m)?\b", re.I)


def asks_who(question: str) -> bool:
    """Whether ``question`` asks for a person ("Who ...", "Whom ...", "Whose ..."): only those take the role hop."""
    return bool(_WHO_RE.match(question))


def role_asked(question: str, ledger: list["Evidence"]) -> tuple[Role, str, str] | None:
    """(the role, the day, the event record) of a "who" question whose first hop names a role and no draft yet:
    the role the question asks at a time, else the role phrase of a leading record that says most of the
    question (:func:`_first_role`); the day the question names, else, for a role no record names, the date of
    the event it names (:func:`_event_day`). None when the question is no "who" question or names no role."""
    if not asks_who(question):
        return None
    role = _first_role(question, "", ledger, [])
    if role is None or (role.record_id and any(e.id == role.record_id and names_holder(e.text, role.phrase)
                                                 for e in ledger)):
        return None  # no role, or the record that names it names its holder too ("Desmond is the platform lead")
    day, event_id = day_of(question), ""
    if not day and not role.record_id:
        day, event_id = _event_day(question, ledger)
        if not day:
            return None
    return role, day, event_id


def follow_role(recall: Callable[[str], "RecallResult"], question: str, ledger: list["Evidence"],
                reply: dict[str, Any], recalls: int, backend: "Backend",
                ) -> tuple[str, list["Evidence"], dict[str, Any]] | None:
    """The role hop of a "who" question whose first hop names a role, not a person: one more recall, of the
    question that asks who holds the role ("Who is the Head of Engineering?", "Who owns Silo?", or, at a day,
    "Who is the primary on call in the week starting 2026-03-02?"), within the recall budget. At a day (the
    question's, or the date of the event it names, recalled by its own clause first: :func:`event_clause`) the
    holder is read from a table row whose interval holds the day; else a role line names the holder ("DBA: Priya Raman"); else the answerer answers the follow-up, with
    the follow-up's own plan. The answer cites the record naming the role (or the event) and the one naming its
    holder.

    Returns:
        (the question answered, the merged ledger, the reply), or None when there is no role to resolve.
    """
    from memrepo.read import answer as A  # answer imports this module
    from memrepo.read import constants as C
    from memrepo.read.cells import row_of

    if recalls >= C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES or not asks_who(question):
        return None
    draft = str(reply.get("answer") or "").strip().rstrip(".")
    uncertain = not draft or bool(A.UNCERTAIN_RE.search(draft))
    ids = list(reply.get("record_ids") or [])
    in_role = not uncertain and any(e.id in ids and draft.lower() in role_in(e.text, draft).lower() != ""
                                    for e in ledger if e.kind == "record")
    if not uncertain and not in_role and is_person_name(draft) and not asked_role(question):
        return None  # a person's name, not one inside a role ("the owner of Ledger"); a role asked at a time is
        # read from the row that holds the time, whatever the draft
    role = _first_role(question, "" if uncertain else draft, ledger, ids)
    if role is None:
        return None
    source = next((e for e in ledger if e.id == role.record_id), None)
    holder = holder_in(source.text, role.phrase) if source is not None and not day_of(question) else ""
    if source is not None and holder:
        # the record that names the role names its holder too ("Nkechi is ... and is the deputy lab lead when
        # Gareth is away"): no second passage to read
        return question, ledger, {"answer": holder, "record_ids": [source.id], "quote": f'{source.id}: "{source.text}"',
                                  "recalls": 0}
    day, event_id, used = day_of(question), "", 1
    if not day and not role.record_id:
        clause = event_clause(question)
        if clause and recalls + 1 < C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
            # the event recalled by its own clause, dated by the passage that tells it best
            ledger = merge_ledgers(ledger_of(recall(clause)), ledger)
            used += 1
            day, event_id = _event_day(clause, ledger)
        else:
            day, event_id = _event_day(question, ledger)
        if not day:
            return None
    follow_up = role.question(day)
    more = recall(follow_up)
    merged = merge_ledgers(ledger_of(more), ledger)
    first = [i for i in (role.record_id, event_id) if i]
    if day:
        rows = [(e.id, r.cells[0][0], r.cells[0][1], h, v) for e in merged if (r := row_of(e)) is not None
                for h, v in r.cells[1:]]
        found = row_for(role.phrase, day, rows)
        if found is None:
            return None
        row_id, holder = found
        quote = " ".join(f'{e.id}: "{e.text}"' for i in (*first, row_id) for e in merged if e.id == i)
        return follow_up, merged, {"answer": holder, "record_ids": [*first, row_id], "quote": quote, "recalls": used}
    line = holder_line(role.phrase, [(e.id, e.text) for e in merged if e.kind == "record"])
    if line is not None:
        quote = " ".join(f'{e.id}: "{e.text}"' for i in (*first, line[0]) for e in merged if e.id == i)
        return follow_up, merged, {"answer": line[1], "record_ids": [*first, line[0]], "quote": quote,
                                   "recalls": used}
    second = backend.run("answerer", A._variables(follow_up, more.plan, merged), A.ANSWER_SCHEMA, A.answer_offline)
    holder = str(second.get("answer") or "").strip().rstrip(".")
    if not is_person_name(holder) or holder.lower() in role.phrase.lower():
        return None
    ids = list(dict.fromkeys(first + list(second.get("record_ids") or [])))
    quote = " ".join(q for q in (next((f'{e.id}: "{e.text}"' for e in merged if e.id == role.record_id), ""),
                                 str(second.get("quote") or "")) if q)
    return follow_up, merged, {**second, "answer": holder, "record_ids": ids, "quote": quote, "recalls": used}
