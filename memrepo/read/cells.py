"""Reading a table row record offline: the value of the header a question asks for (issue 32).

A document's table row is written as one record per row and column, after the table's name:
``"Systems — System: reef; Where it runs: AWS eu-west-1 (Ireland)"`` (memrepo/write/documents.py). The
first cell names the row (its key); the others are "Header: value" pairs. A question answers from a row when
it names the row's key ("Where does reef run?") and asks what one header holds: a header whose words the
question uses, or whose words say the asked kind (a place for where, a person for who, a cost for how much,
a size for how big, a day or time for when), and says little the row does not. A "which <thing>" question that describes the row by another
cell's value ("Which system feeds Herald?") is answered by the row's key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memrepo.read.turns import norm, terms_of

if TYPE_CHECKING:
    from memrepo.read.answer import Evidence
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
    """The row ``evidence`` writes, or None when its text is not a "Table — Header: value; ..." row."""
    m = _ROW_RE.match(evidence.text.strip())
    if not m:
        return None
    cells: list[tuple[str, str]] = []
    for part in m.group("cells").split("; "):
        header, sep, value = part.partition(": ")
        if not sep or not value.strip() or not header.strip() or len(header) > 60:
            return None
        cells.append((header.strip(), value.strip()))
    return Row(evidence, m.group("table").strip(), tuple(cells)) if len(cells) >= 2 else None


@dataclass(frozen=True)
class Cell:
    """The value a row gives for a question, the row it comes from, and how well it fits."""

    answer: str
    row: Row
    score: float


def _cues(kind: "Kind") -> set[str]:
    names = [kind.name] + (["place"] if kind.place else [])
    return {norm(w) for n in names for w in HEADER_CUES.get(n, ())}


def read(question: str, kind: "Kind", ledger: list["Evidence"]) -> Cell | None:
    """The value of the header ``question`` asks for, in a row it names; None when no row answers it."""
    asked = terms_of(question)
    cues = _cues(kind)
    head = norm(kind.head) if kind.head else ""
    best: Cell | None = None
    rows = [r for r in (row_of(e) for e in ledger if e.kind == "record") if r is not None]
    for order, row in enumerate(rows):
        (key_header, key), rest = row.cells[0], row.cells[1:]
        key_terms = terms_of(key)
        table_terms = terms_of(row.table)
        if key_terms and key_terms <= asked:  # the question names the row: the asked header's value
            for header, value in rest:
                header_terms = terms_of(header)
                said = len(header_terms & (asked - key_terms))
                fits = bool(header_terms & cues) or (head and head in header_terms)
                if not said and not fits:
                    continue
                value_terms = terms_of(value)
                if value_terms and value_terms <= asked and not set(_DIGITS_RE.findall(value)) - set(
                        _DIGITS_RE.findall(question)):
                    continue  # the question already says it: not what it asks ("3 replicas" says a new number)
                if kind.name in _NUMERIC_KINDS and not _NUMBER_RE.search(value):
                    continue  # "how many" is answered by a number, not by "reef, namespace herald"
                if len(asked - key_terms - cues - header_terms - table_terms - value_terms - {head}) > 1:
                    continue  # the question asks about more than the row says ("how much should it be grown")
                # a value that says a word the question asks with ("how many replicas": "3 replicas") is the one
                # asked, whatever its header says
                echoes = len(value_terms & (asked - key_terms - header_terms - table_terms))
                score = (2.0 + said + (1.0 if fits else 0.0) + 0.5 * len(table_terms & asked) + echoes
                         - 0.01 * order)
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
