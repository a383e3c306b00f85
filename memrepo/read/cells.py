"""Reading a table row record offline: the value of the header a question asks for (issue 32).

A document's table row is written as one record per row and column, after the table's name:
``"Systems — System: reef; Where it runs: AWS eu-west-1 (Ireland)"`` (memrepo/write/documents.py). The
first cell names the row (its key); the others are "Header: value" pairs. A question answers from a row when
it names the row's key ("Where does reef run?") and asks what one header holds: a header whose words the
question uses, or whose words say the asked kind (a place for where, a person for who, a cost for how much,
a size for how big, a day or time for when), and says little the row does not. A "which <thing>" question
that describes the row by another cell's value ("Which system feeds Herald?") is answered by the row's key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memrepo.nlp import lexicon as lx
from memrepo.nlp.literals import MONEY_RE
from memrepo.read.phrases import PARTICLES
from memrepo.read.turns import norm, terms_of

if TYPE_CHECKING:
    from memrepo.read.evidence import Evidence
    from memrepo.read.span import Kind

_ROW_RE = re.compile(r"^(?P<table>[^:;—–\n]{1,80})\s[—–]\s(?P<cells>[^:;\n]{1,60}:\s.+)$")

#: Words of a header that say it holds the asked kind (normalised with ``norm`` when compared).
HEADER_CUES: dict[str, tuple[str, ...]] = {
    "place": ("where", "run", "region", "location", "host", "site", "place", "city", "country", "zone", "live",
              "located", "address"),
    "person": ("who", "owner", "own", "lead", "person", "name", "contact", "chair",
               "author", "assignee", "member", "responsible"),
    "price": ("cost", "price", "fee", "budget", "charge", "spend", "rate"),
    "amount": ("size", "big", "capacity", "amount", "volume", "storage", "disk", "nodes", "total", "quota"),
    "count": ("count", "number", "size", "total", "nodes", "replicas"),
    "date": ("when", "date", "day", "week", "time", "schedule", "start", "due", "deadline", "starting"),
    "time": ("when", "time", "hour", "schedule", "day", "start", "starting"),
    "duration": ("duration", "long", "period", "retention", "time", "window"),
}


#: Kinds whose answer is a quantity: a cell without a number (a digit or a number word) cannot give one.
_NUMERIC_KINDS = frozenset(("count", "amount", "price", "duration"))
_DIGITS_RE = re.compile(r"\d+(?:[.,]\d+)*")
#: Heads of a question that ask for a number to dial or quote ("What number do I call?"), not a quantity.
_NUMBER_HEADS = frozenset(("number", "phone", "telephone", "extension"))
_PARTICLES = frozenset(norm(w) for w in PARTICLES)
_ALIAS_RE = re.compile(r"^(?P<outer>[^()]+?)\s*\((?P<inner>[^()]+)\)\s*$")
_COUNTED_RE = re.compile(r"^\d+(?:[.,]\d+)?\s+[^\W\d_]{3,}")  # "6 pods": a number and what it counts
_NUMBER_RE = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                        r"fifty|hundred|thousand|million|billion|dozen|half|single|none)\b", re.I)


@dataclass(frozen=True)
class Row:
    """A table row record: the table's name and its cells as (header, value) pairs, the key first."""

    evidence: "Evidence"
    table: str
    cells: tuple[tuple[str, str], ...]

    def quote(self) -> str:
        return f'{self.evidence.id} ({self.evidence.said or self.evidence.date}): "{self.evidence.text}"'


def row_of(evidence: "Evidence") -> Row | None:
    """The row ``evidence`` writes, or None when its text is not a "Table — Header: value; ..." row. A label
    line of a document ("Status: Accepted", a list item or line of its own) is a row of one cell keyed by the
    part of the document it stands in: the document's and sections' names its citation gives
    ("#adr-0007:1": adr 0007), so that "What is the status of ADR 0007?" names it."""
    m = _ROW_RE.match(evidence.text.strip())
    if not m:
        return _label_row(evidence)
    cells: list[tuple[str, str]] = []
    for part in m.group("cells").split("; "):
        header, sep, value = part.partition(": ")
        if not sep or not value.strip() or not header.strip() or len(header) > 60:
            return None
        cells.append((header.strip(), value.strip()))
    return Row(evidence, m.group("table").strip(), tuple(cells)) if len(cells) >= 2 else None


_LABEL_RE = re.compile(r"^(?P<label>[A-Z][\w'’/ -]{0,40}):\s+(?P<value>[^\n]{1,200})$")
_DOCUMENT_ANCHOR_RE = re.compile(r"#(?P<path>[^#]*/[^#]*|[^#/]*[a-z][^#/]*):\d+$")


def _label_row(evidence: "Evidence") -> Row | None:
    m = _LABEL_RE.match(evidence.text.strip())
    if not m or len(m.group("label").split()) > 4 or ";" in m.group("value"):
        return None
    places = [a.group("path") for s in evidence.sources if (a := _DOCUMENT_ANCHOR_RE.search(s))]
    if not places:
        return None  # a label line said in a conversation has no document to be a property of
    parts = [" ".join(re.findall(r"[^\W\d_]+|(?<!\d)\d+(?!-?\d)", p.replace("-", " "))) for p in places[0].split("/")]
    return Row(evidence, "", (("document", " / ".join(parts)), (m.group("label").strip(),
                                                               m.group("value").strip().rstrip("."))))


@dataclass(frozen=True)
class Cell:
    """The value a row gives for a question, the row it comes from, and how well it fits."""

    answer: str
    row: Row
    score: float
    unexplained: int = 0  # words of the question that neither the row nor the asked kind says

    @property
    def whole(self) -> bool:
        """Whether the question names the row and every other word of it is said by the row or names the asked
        kind: then the cell answers before a sentence that covers the question (a question that says more than the
        row, "the monthly infrastructure budget" of a "Monthly" plan's price, is the sentence's)."""
        return self.score >= 2.0 and not self.unexplained


def is_label(answer: str, evidence: "Evidence") -> bool:
    """Whether ``answer`` is a header or the table's name in the row ``evidence`` writes ("Room" of "Equipment —
    Analyser: Centrifuge; Room: Lab 2"): a word that says what a cell holds, never an answer itself."""
    row = row_of(evidence)
    said = answer.strip().rstrip(".").lower()
    return row is not None and bool(said) and (said == row.table.lower()
                                               or any(said == header.lower() for header, _ in row.cells))


def _said_by(term: str, words: set[str]) -> bool:
    """Whether ``words`` say ``term``, as it is or in another form of its stem ("month" in "Monthly cost")."""
    return term in words or len(term) >= 4 and any(len(w) >= 4 and (w.startswith(term) or term.startswith(w))
                                                   for w in words)


def _verb(term: str) -> bool:
    return term in lx.VERBS or term + "e" in lx.VERBS


def _cues(kind: "Kind") -> set[str]:
    names = [kind.name] + (["place"] if kind.place else [])
    return {norm(w) for n in names for w in HEADER_CUES.get(n, ())}


def named(key: str, asked: set[str], document: bool = False) -> set[str]:
    """The words of a row's key that the question names it by (empty: it does not name the row). A key with an
    alias in brackets is named by either ("Blood gas analyser (Vetra BG)": "the blood gas analyser", "the
    Vetra BG"); the key of a label line (``document``: the names of the document and sections it stands in,
    joined by " / ") by all the words of one of them ("the status of ADR 0007": adr-0007)."""
    if document:  # the document or one of its sections, by all its words
        return next((t for part in key.split(" / ") if (t := terms_of(part)) and t <= asked), set())
    for form in (key, *((m.group("outer"), m.group("inner")) if (m := _ALIAS_RE.match(key)) else ())):
        terms = terms_of(form)
        if terms and all(_said_by(t, asked) for t in terms):  # "Certificate expiry": "a certificate expires"
            return terms | {a for a in asked if _said_by(a, terms)}
    return set()


def part_asked(value: str, kind: "Kind", echoed: set[str]) -> str:
    """The part of a value of several comma-separated parts that holds what the question asks: the one part that
    says a word the question asks with ("£6 per hour, minimum 2 hours" for "the minimum"), or the one part with
    a digit when the question asks for a number to call ("Vetra, 0161 555 0148"); else the whole value."""
    parts = [p.strip() for p in value.split(", ") if p.strip()]
    if len(parts) < 2:
        return value
    chosen = [p for p in parts if terms_of(p) & echoed] if echoed else []
    if not chosen and norm(kind.head) in {norm(h) for h in _NUMBER_HEADS}:
        chosen = [p for p in parts if re.search(r"\d", p)]
    return chosen[0] if len(chosen) == 1 else value


def read(question: str, kind: "Kind", ledger: list["Evidence"]) -> Cell | None:
    """The value of the header ``question`` asks for, in a row it names; None when no row answers it."""
    asked = terms_of(question)
    cues = _cues(kind)
    head = norm(kind.head) if kind.head else ""
    best: Cell | None = None
    rows = [r for r in (row_of(e) for e in ledger if e.kind == "record") if r is not None]
    for order, row in enumerate(rows):
        (key_header, key), rest = row.cells[0], row.cells[1:]
        key_terms = named(key, asked, key_header == "document")
        table_terms = terms_of(row.table)
        if key_terms:  # the question names the row: the asked header's value
            for header, value in rest:
                header_terms = terms_of(header)
                said = len(header_terms & (asked - key_terms))
                fits = bool(header_terms & cues) or bool(head and head in header_terms) or (
                    kind.name == "price" and bool(MONEY_RE.search(value)))  # a price, whatever its column's name
                value_terms = terms_of(value)
                echoed = value_terms & (asked - key_terms - header_terms - table_terms - _PARTICLES)
                if not said and not fits and not (echoed and not cues and not head):
                    continue  # a value that says a word of the question answers a question no header's kind does
                if value_terms and value_terms <= asked and not set(_DIGITS_RE.findall(value)) - set(
                        _DIGITS_RE.findall(question)):
                    continue  # the question already says it: not what it asks ("3 replicas" says a new number)
                if kind.name in _NUMERIC_KINDS and not _NUMBER_RE.search(value):
                    continue  # "how many" is answered by a number, not by "reef, namespace herald"
                row_words = key_terms | terms_of(key_header) | header_terms | table_terms | value_terms
                extra = {w for w in asked - cues - _PARTICLES - {head} if not _said_by(w, row_words)}
                if len(extra) > 1:
                    continue  # the question asks about more than the row says ("how much should it be grown")
                if kind.name == "count" and head and head not in value_terms and _COUNTED_RE.match(value):
                    continue  # "how many connections": "6 pods" counts something else
                # a verb the row may say by its header ("run" for "Size"); a noun it does not say is more asked
                unexplained = sum(not _verb(w) for w in extra)
                # a value that says a word the question asks with ("how many replicas": "3 replicas") is the one
                # asked, whatever its header says
                score = (2.0 + said + (1.0 if fits else 0.0) + 0.5 * len(table_terms & asked) + len(echoed)
                         - 0.01 * order)
                if best is None or score > best.score:
                    best = Cell(part_asked(value, kind, echoed), row, score, unexplained)
        elif key_header == "document" and kind.name == "which" and head:
            # a label line of a document the question describes rather than names ("Which ADR does the search
            # decision supersede?": "Supersedes: ADR 0003"): the question says the label and the value is a thing
            # of the kind asked, named by its noun
            label, value = rest[0]
            value_terms = terms_of(value)
            if terms_of(label) and terms_of(label) <= asked and head in value_terms and value_terms - asked:
                score = 2.0 + len(terms_of(label)) - 0.01 * order
                if best is None or score > best.score:
                    best = Cell(value, row, score)
        elif kind.name == "which" and head and (head in terms_of(key_header) or head in table_terms):
            # "Which system feeds Herald?": the row whose other cell the question describes, by its key
            for header, value in rest:
                value_terms = terms_of(value)
                shared = value_terms & asked - {head}
                if len(shared) >= 2 or (shared and shared == value_terms):
                    score = 1.0 + len(shared) / max(1, len(asked - {head})) - 0.01 * order
                    if best is None or score > best.score:
                        best = Cell(key, row, score)
    return best


def _fits(header: str, kind: "Kind", asked: set[str]) -> bool:
    """Whether a header holds what the question asks: its words say the asked kind or the question's noun."""
    header_terms = {norm(w) for w in re.findall(r"[^\W_]+", header.lower())}  # "When": no stop word here
    return bool(header_terms & _cues(kind)) or bool(kind.head and norm(kind.head) in header_terms)


def described_row(question: str, kind: "Kind", ledger: list["Evidence"]) -> Row | None:
    """A row the question names by its key ("Where does reef run?": 'Systems — System: reef; What it does: ...')
    or describes by the value of one of its cells ("When do all users move?": 'Rollout — Step: 4; What: Move all
    users'), whose record lacks the header the question asks for (the table's other columns are records of their
    own): the first row named, else the row whose described cell the question holds best, or None. Only a
    question whose kind a header can say (a place, a person, a date, ...) asks for a column."""
    if not _cues(kind) and not kind.head:
        return None
    asked = terms_of(question) - _PARTICLES
    head = norm(kind.head) if kind.head else ""
    best: tuple[float, Row] | None = None
    for row in (r for r in (row_of(e) for e in ledger if e.kind == "record") if r is not None and r.table):
        if any(_fits(header, kind, asked) for header, _ in row.cells[1:]):
            continue  # the record holds the asked column: read() reads it
        if named(row.cells[0][1], asked) and (best is None or best[0] < 2.0):
            best = (2.0, row)  # the question names the row by its key: before a row it only describes
            continue
        for _, value in row.cells[1:]:
            value_terms = terms_of(value) - _PARTICLES
            shared = value_terms & asked - {head}
            if len(shared) >= 2 or (shared and shared == value_terms):
                held = len(shared) / len(value_terms)
                if best is None or held > best[0]:
                    best = (held, row)
    return best[1] if best else None


def row_query(row: Row, kind: "Kind", ledger: list["Evidence"], question: str = "") -> str:
    """The recall that finds the asked column of ``row``: the row's record as it would begin, its table and key,
    and the header of that table that says the asked kind, as another row of the ledger names it ("Systems —
    System: reef; Where it runs"); without one, the table and key alone."""
    (key_header, key) = row.cells[0]
    asked = terms_of(question)
    headers = [h for r in (row_of(e) for e in ledger if e.kind == "record") if r is not None and r.table == row.table
               and r.cells[0][0] == key_header for h, _ in r.cells[1:] if _fits(h, kind, asked)]
    return f"{row.table} — {key_header}: {key}" + (f"; {headers[0]}" if headers else "")


def sibling(question: str, kind: "Kind", ledger: list["Evidence"], row: Row) -> Cell | None:
    """The asked column of ``row`` in another record of the same row (same table, key and cited part)."""
    asked = terms_of(question)
    for evidence in ledger:
        other = row_of(evidence) if evidence.kind == "record" and evidence.id != row.evidence.id else None
        if (other is None or other.table != row.table or other.cells[0] != row.cells[0]
                or set(evidence.sources) != set(row.evidence.sources)):
            continue
        for header, value in other.cells[1:]:
            if _fits(header, kind, asked) and not (kind.name in _NUMERIC_KINDS and not _NUMBER_RE.search(value)):
                return Cell(value, other, 2.0)
    return None


_COPULA_ASK_RE = re.compile(r"^\s*(?:what|who|which|where)\s+(?:is|are|was|were)\s+", re.I)


def _words_re(text: str) -> str:
    """A pattern of ``text``'s words in order, whatever the case and the spaces between them."""
    return r"\s+".join(re.escape(w) for w in re.findall(r"[^\W_][\w.'’-]*", text))


def described_cell(question: str, ledger: list["Evidence"]) -> tuple[str, str, Row] | None:
    """A phrase of ``question`` that names one cell of a table row by its header and the row's key ("What does the
    service contact for the centrifuge order?": 'Equipment — Analyser: Centrifuge; Service contact: Gareth
    Pryce'), when the question asks something else of that cell's value: (the phrase, the value, the row). English
    names a thing's attribute as "the <attribute> of/for <thing>"; a question that only asks for it ("Who is the
    service contact for the centrifuge?") is read by :func:`read`, not here. None when no row's cell is named so."""
    if _COPULA_ASK_RE.match(question):
        return None
    for row in (r for r in (row_of(e) for e in ledger if e.kind == "record") if r is not None and r.table):
        key = row.cells[0][1]
        forms = [key, *((m.group("outer"), m.group("inner")) if (m := _ALIAS_RE.match(key)) else ())]
        for header, value in row.cells[1:]:
            if not terms_of(header):
                continue
            for form in forms:
                m = re.search(r"\bthe\s+" + _words_re(header) + r"\s+(?:for|of)\s+(?:the\s+|a\s+|an\s+)?"
                              + _words_re(form) + r"\b", question, re.I)
                if m:
                    named = value.split(", ")[0].strip().rstrip(".")
                    if named and named.lower() not in question.lower():
                        return m.group(0), named, row
    return None
