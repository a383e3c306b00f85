"""The evidence ledger an answer rests on: one entry per recalled record, fact or belief, each with its date
(MIRIX-2.0 Alg. 1 Answer, §2.4). It sits below the answering agent (:mod:`memrepo.read.answer`) and the hops
(:mod:`memrepo.read.hops`, :mod:`memrepo.read.recall_hop`), which all read it; readers of its entries
(:mod:`memrepo.read.span`, :mod:`memrepo.read.cells`) see only :class:`Evidence`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memrepo.read.recall import RecallResult


@dataclass
class Evidence:
    """One ledger entry: a record (or a fact) the answer may rest on."""

    id: str
    date: str
    text: str
    status: str | None = None
    kind: str = "record"  # record | fact | belief (a one-value relation's value now or then, and the one before)
    roles: list[tuple[str, str]] = field(default_factory=list)  # facts: (role, anchor label)
    predicate: str = ""
    types: dict[str, str] = field(default_factory=dict)  # facts: anchor label -> anchor type
    literals: dict[str, str] = field(default_factory=dict)  # facts: literal key -> value
    cites: list[str] = field(default_factory=list)  # facts: the record ids that justify the fact
    sources: list[str] = field(default_factory=list)  # records: the source parts cited ("src-...#D1:4")
    said: str = ""  # records: the mention date, against which "yesterday" in the text resolves


def ledger_of(result: "RecallResult") -> list[Evidence]:
    """The evidence ledger of one recall: its facts, then its records, each with a date."""
    out: list[Evidence] = []
    for belief in result.beliefs:  # what the question asks of a one-value relation, resolved over time
        out.append(Evidence(f"belief:{belief['slot']}:{belief['holder']}", (belief["at"] or [""])[0],
                            f"{belief['slot']} of {belief['holder']}: {belief['answer']}", kind="belief",
                            predicate=belief["slot"], cites=list(belief["cites"])))
    for fact in result.facts:
        args = ", ".join(f"{a.role}={a.label}" for a in fact.arms)
        lits = "".join(f", {k}={v}" for k, v in sorted(fact.literals.items()))
        held = ""
        if fact.valid_from:
            held = f" valid from {fact.valid_from[:10]}" + (f" until {fact.valid_until[:10]}" if fact.valid_until else "")
        out.append(Evidence(fact.id, (fact.event_time or "")[:10], f"{fact.predicate}({args}{lits}){held}", fact.status,
                            "fact", [(a.role, a.label) for a in fact.arms], fact.predicate,
                            {a.label: a.type for a in fact.arms}, dict(fact.literals), list(fact.cites)))
    for row in result.records:
        out.append(Evidence(row.id, (row.event_time or row.mention_time or "")[:10], row.text, row.status,
                            sources=list(row.sources), said=(row.mention_time or "")[:10]))
    return out


def merge_ledgers(first: list[Evidence], second: list[Evidence]) -> list[Evidence]:
    seen = {e.id for e in first}
    return first + [e for e in second if e.id not in seen]
