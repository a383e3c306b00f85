"""The second hop inside ``recall``: a question about a thing it only describes (issue 32).

"How many replicas does the worker that Samir owns run?" asks an attribute of a thing the question never names.
One recall of it finds the passage that says the description ("Samir owns notify-worker") but not the one that
gives the attribute ("notify-worker runs 6 replicas"), which shares no word with the question but the noun. So,
when the question's plan describes a thing by a clause (:func:`memrepo.read.hops.described`), ``recall`` spends
part of its budget on the hop itself:

1. a sub-recall of the question that names the thing ("Which worker does Samir own?": ``Described.naming``);
2. the thing's name read from the best row that says the clause (:func:`memrepo.read.hops.thing_in`);
3. a sub-recall of the question with the name in place of the description ("How many replicas does
   notify-worker run?");
4. the follow-up's best rows, and the row that named the thing, fused with the first hop's rows by reciprocal
   rank (a row both recalls return rises), within the plan's capacity (B_B + B_R, M§2.4): at most
   :data:`HOP_ROWS` rows come from the hop alone (``lane`` "hop"), in the places of the first hop's last ones.

A "who" question whose leading row names a role, not its holder ("If the kiln overheats, call the head of
maintenance"), takes the role hop the same way (:func:`memrepo.read.hops.role_asked`): one sub-recall of who holds
the role ("Who is the head of maintenance?"), its rows fused as above, the row that names the role as the bridge.

Each hop row's fusion entry cites the row that named the thing and the follow-up it came from. The sub-recalls
read the same commit, and neither hops again, so the result stays deterministic and bounded: two recalls more
for a question that describes a thing, one for a role. A question with neither, or one whose description
names nothing in memory, gets exactly the rows it got without the hop.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from memrepo.read import hops
from memrepo.read.evidence import ledger_of

if TYPE_CHECKING:
    from memrepo.read.results import RecallResult, Row

#: Rows of the result the hop may take at most: the row that names the thing and the follow-up's best.
HOP_ROWS = 4
#: The rank offset of reciprocal-rank fusion (a row at rank r of a list earns 1 / (RRF_K + r)).
RRF_K = 5
#: The recalls a hop costs: the naming question's, the follow-up's.
HOP_RECALLS = 2

# set while a hop's sub-recalls run: a sub-recall never hops again (the recursion is one level, by construction)
_HOPPING: ContextVar[bool] = ContextVar("memrepo_recall_hopping", default=False)


def naming_row(thing: hops.Described, question: str, rows: list["Row"]) -> tuple[str, "Row"] | None:
    """(the thing's name, the row that names it): the first of ``rows`` that says the thing's clause (and, first,
    its noun) and gives it a name (:func:`hops.thing_in`) the question does not already say; None when none does."""
    noun = thing.head.split()[-1].lower()
    saying = [r for r in rows if hops.says(thing.clause, r.text)]
    # a row that says the thing's noun too names it beside that noun ("owns ... the monitoring server Lookout"):
    # it goes before one that names only what the clause's subject owns
    for row in [r for r in saying if noun in r.text.lower()] + [r for r in saying if noun not in r.text.lower()]:
        name = hops.thing_in(thing, row.text)
        if name != thing.head and name.lower() not in question.lower():
            return name, row
    return None


def hop(result: "RecallResult", sub_recall: Callable[[str], "RecallResult"]) -> None:
    """The second hop of ``result``'s question, fused into ``result`` in place (see the module's docstring).

    Args:
        sub_recall: question -> RecallResult at the same commit and types (``recall`` itself, bound).
    """
    if _HOPPING.get() or result.commit is None or not result.records:
        return
    thing = hops.described(result.question)
    if thing is None:
        _role_hop(result, sub_recall)
        return
    token = _HOPPING.set(True)
    try:
        named = sub_recall(thing.naming)
        found = naming_row(thing, result.question, named.records + result.records)
        if found is None:
            result.inspected["hop recalls"] = 1
            return
        name, source = found
        follow_up = thing.follow_up(name)
        second = sub_recall(follow_up)
    finally:
        _HOPPING.reset(token)
    result.inspected["hop recalls"] = HOP_RECALLS
    _fuse(result, source, second.records, name, follow_up)


def _role_hop(result: "RecallResult", sub_recall: Callable[[str], "RecallResult"]) -> None:
    """The role hop of a "who" question whose best rows name a role, not a person ("call the Head of
    Engineering"): one sub-recall of the question that asks who holds it (:func:`hops.role_asked`,
    ``Role.question``), fused like a described thing's follow-up, the bridge being the row that names the role
    (or the event that dates it)."""
    if not hops.asks_who(result.question):
        return  # checked before the ledger is built: most questions ask for no person
    found = hops.role_asked(result.question, ledger_of(result))
    if found is None:
        return
    role, day, event_id = found
    source = next((r for r in result.records if r.id in (role.record_id, event_id)), None)
    if source is None:
        return
    follow_up = role.question(day)
    token = _HOPPING.set(True)
    try:
        second = sub_recall(follow_up)
    finally:
        _HOPPING.reset(token)
    result.inspected["hop recalls"] = 1
    _fuse(result, source, second.records, role.phrase, follow_up)


def _fuse(result: "RecallResult", source: "Row", follow: list["Row"], name: str, follow_up: str) -> None:
    """Reciprocal-rank fusion of the first hop's rows with the hop's lane (the follow-up's best rows, and the row
    that named the thing), within the plan's capacity: a row both recalls return rises, a row only the hop returns
    takes the place its rank earns among the first hop's, and at most :data:`HOP_ROWS` rows come from the hop
    alone. Ties go to the first hop's row, then to the id: a question whose hop finds nothing new keeps its rows."""
    first = list(result.records)
    have = {r.id for r in first}
    # the hop's lane: the bridge first, then the follow-up's rows in their order; every row of it ranks, and at
    # most HOP_ROWS of those the first hop lacks join the result
    lane = [source] + [r for r in follow if r.id != source.id]
    own = [r for r in lane if r.id not in have][:HOP_ROWS]
    rank_first = {r.id: i for i, r in enumerate(first)}
    rank_hop = {r.id: i for i, r in enumerate(lane)}

    def fused(row: "Row") -> tuple[float, int, str]:
        score = sum(1.0 / (RRF_K + 1 + ranks[row.id]) for ranks in (rank_first, rank_hop) if row.id in ranks)
        return (-score, 0 if row.id in rank_first else 1, row.id)

    capacity = max(result.plan.capacity, len(first))
    pool = first + [replace(r, lane="hop") for r in own]
    merged = sorted(pool, key=fused)[:capacity]
    kept = {r.id for r in merged}
    result.records = merged
    for row in own:
        if row.id in kept:
            result.fusion.append({"id": row.id, "step": "hop", "outcome": "kept", "score": row.score,
                                  "named_by": source.id, "name": name, "follow_up": follow_up})
    for row in first:
        if row.id not in kept:
            result.fusion.append({"id": row.id, "step": "hop", "outcome": "left for the hop's rows"})
