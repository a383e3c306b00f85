"""Beliefs over time: relations that hold one value at a time, and the interval each value held.

Some relations hold one value at a time: a person's job, home and partner, the owner of a thing, a
status, an updated count. When the records state such a relation twice with different values, the
newer statement closes the older one (supersession): the older frame's belief is valid from its own
time until the newer one's, the newer one's from then on. "Newer" is by event time (MIRIX-2.0 §2.2,
eq. 2: when it happened), by mention time (when it was said) for a frame with no event time.

:data:`SLOTS` is the one table of those relations, keyed on what the offline extractor
(:class:`memrepo.nlp.rules.RulesAnalyzer`) actually emits for such sentences::

    "Jonas works as a nurse in Braga"                         work(worker=Jonas, capacity=nurse, location=Braga)
    "Jonas quit the hospital and now works as a baker in Porto"  leave(agent=Jonas, place=hospital, theme=baker,
                                                                    location=Porto)
    "Kai left his job at the bakery"                          leave(agent=Kai, place=job, location=bakery)
    "Lena moved to Ghent" / "Lena now lives in Leuven"        move(mover=Lena, destination=Ghent) /
                                                              live(resident=Lena, location=Leuven)
    "Mia married Tom" / "Ana is engaged to Leo"               marry(spouse=Mia, companion=Tom) /
                                                              marry(spouse=Ana, destination=Leo)
    "Tom owns a red car" / "Tom gave the red car to Ana"      own(owner=Tom, item=red car) /
                                                              give(giver=Tom, item=red car, destination=Ana)
    "Ana has 3 cats" / "Ana now has 4 cats"                   own(owner=Ana, item=cats; count=3) / (...; count=4)
    "Tom owns the green canoe"                                have(owner=Tom, item=green canoe)
    "Project Atlas is on hold" / "... is on track"            about(subject=Project Atlas, topic=hold|track)
    "Project Atlas is at risk"                                located(subject=Project Atlas, location=risk)

A rule names the predicate, the role(s) of the anchor that holds the slot (the *holder*: Jonas,
Lena, the red car), the roles and literals whose values make the value ("baker in Porto"), and
when a frame of that predicate counts at all (``requires``, ``unless``, ``names``). Add a rule to
:data:`SLOTS` to teach memrepo another one-value relation; :data:`SLOT_QUESTIONS` says how a question
asks for each slot (read by :mod:`memrepo.read.recall`).

Everything here is derived: the graph index stores each file's occurrences (``belief_occurrences``)
and the intervals :func:`derive` gives them (``beliefs``), recomputed for the holders a changed file
touches. No tracked file is rewritten, so reverting a record restores the old belief. Two values of
one slot at the same time from different records are a *conflict*: both are kept, each naming the
other, and nothing is resolved silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence


@dataclass(frozen=True)
class SlotRule:
    """One predicate that states a one-value relation (a *slot*) of the anchor in a holder role.

    Attributes:
        slot: the relation's name ("job", "home", "partner", "owner", "count", "status").
        predicate: the frame predicate the rule reads (as the offline extractor writes it).
        holders: roles whose anchor holds the slot (the first such arm of the frame).
        values: (role, or ``lit:KEY`` for a literal, and the word written before it) in the order the
            value is written: ``(("capacity", ""), ("location", "in"))`` gives "nurse in Braga".
        keyed_by: further roles that are part of the slot (the thing counted: "Ana's cats").
        requires: roles or ``lit:KEY`` the frame must have; ``unless``: ... must not have.
        names: if given, the frame counts only when an arm's name (lower case) is one of these.
        ends: a frame that names one of ``ends`` and gives no value ends the slot (left the job).
        symmetric: every holder arm holds the slot, and the other holders are its value (marry).
        say: (value, as written) pairs: the extractor's word for a value and the phrase shown ("hold", "on hold").
    """

    slot: str
    predicate: str
    holders: tuple[str, ...]
    values: tuple[tuple[str, str], ...] = ()
    keyed_by: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    ends: frozenset[str] = frozenset()
    symmetric: bool = False
    say: tuple[tuple[str, str], ...] = ()


_JOB_WORDS = frozenset({"job", "work", "position", "post", "career", "company", "employer"})
_STATUS_SAY = (("hold", "on hold"), ("track", "on track"), ("risk", "at risk"))
_STATUS_WORDS = frozenset({
    "hold", "track", "risk", "paused", "active", "open", "closed", "done", "finished", "complete", "completed",
    "cancelled", "canceled", "delayed", "approved", "rejected", "launched", "planned", "started", "stopped",
    "blocked", "shipped", "pending", "draft", "archived"})

#: The one table of one-value relations (see the module docstring). Order only matters for rules of one
#: slot and predicate (the first that matches a frame gives its occurrence).
SLOTS: tuple[SlotRule, ...] = (
    SlotRule("job", "work", ("worker",),
             (("capacity", ""), ("employer", "at"), ("beneficiary", "for"), ("location", "in"))),
    SlotRule("job", "leave", ("agent",), (("theme", ""), ("location", "in")), requires=("theme",)),
    SlotRule("job", "leave", ("agent",), (), unless=("theme",), ends=_JOB_WORDS, names=_JOB_WORDS),
    SlotRule("job", "become", ("agent",), (("theme", ""),)),
    SlotRule("home", "live", ("resident",), (("location", ""),)),
    SlotRule("home", "move", ("mover",), (("destination", ""),), requires=("destination",)),
    SlotRule("partner", "marry", ("spouse", "companion", "destination"), symmetric=True),
    SlotRule("owner", "own", ("item", "place"), (("owner", ""),), unless=("lit:count",)),
    SlotRule("owner", "have", ("item",), (("owner", ""),), unless=("lit:count",)),
    SlotRule("owner", "buy", ("item", "place"), (("buyer", ""),)),
    SlotRule("owner", "sell", ("item", "place"), (("destination", ""), ("recipient", ""), ("buyer", ""))),
    SlotRule("owner", "give", ("item",), (("destination", ""), ("recipient", "")), requires=("giver",)),
    SlotRule("count", "own", ("owner",), (("lit:count", ""),), keyed_by=("item",), requires=("lit:count",)),
    SlotRule("status", "about", ("subject",), (("topic", ""),), names=_STATUS_WORDS, say=_STATUS_SAY),
    SlotRule("status", "located", ("subject",), (("location", ""),), names=frozenset({"risk"}), say=_STATUS_SAY),
)

#: How a question asks for a slot (case-insensitive patterns over the question): "What is Jonas's job?",
#: "Where does Lena live?", "Who owns the green canoe?", "How many goats does Marta have?". Narrow on purpose:
#: a question that only uses the word ("What did Priya work on?") does not ask for the job.
SLOT_QUESTIONS: Mapping[str, str] = {
    "job": r"\b(jobs?|occupation|profession|employer|employed|career|for a living)\b|^where (do|does|did|has|have) .*\bwork"
           r"|\bworks? (as|for|at)\b|\bworking (as|for|at)\b",
    "home": r"^where (do|does|did|is|was|has|have) .*\b(live|lives|living|lived|stay|stays|based)\b|\b(home|address)\b"
            r"|\breside[sd]?\b",
    "partner": r"\b(partner|spouse|husband|wife|boyfriend|girlfriend|fianc[eé]e?)\b|\b(married|engaged) to\b"
               r"|^who (did|does|will) .*\bmarry\b",
    "owner": r"^who (owns|owned|has|had|have) the\b|\bowner of\b|\bbelongs? to\b|^whose\b",
    "count": r"^how many\b.*\b(have|has|had|own|owns|owned|keep|keeps|kept)\b",
    "status": r"\bstatus\b|\bstate of\b",
}

SLOT_PREDICATES = frozenset(r.predicate for r in SLOTS)


@dataclass(frozen=True)
class Occurrence:
    """One statement of a slot: a frame, as one record (``memory``) states it at ``time``."""

    slot: str
    holder: str  # anchor IRI (as written; the reader maps it through owl:sameAs)
    subkey: str  # anchor IRI of the keyed_by role, or ""
    frame: str
    value: str  # "" for an ending (left the job)
    time: str  # event time, else mention time (ISO text)
    memory: str


@dataclass
class Belief:
    """A frame's value of one slot and the interval it held: [valid_from, valid_until); None: still holds."""

    slot: str
    holder: str
    subkey: str
    frame: str
    value: str
    valid_from: str
    valid_until: str | None = None
    superseded_by: list[str] = field(default_factory=list)  # frames of the value that closed it
    conflicts: list[str] = field(default_factory=list)  # frames of other values stated for the same time
    memories: list[str] = field(default_factory=list)  # records that state it in this interval

    @property
    def current(self) -> bool:
        return self.valid_until is None

    def holds_at(self, start: str, end: str) -> bool:
        """Whether the interval meets [start, end] (ISO dates; compared on their first 10 characters)."""
        return self.valid_from[:10] <= end[:10] and (self.valid_until is None or self.valid_until[:10] > start[:10])

    def to_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "holder": self.holder, "subkey": self.subkey, "frame": self.frame,
                "value": self.value, "valid_from": self.valid_from, "valid_until": self.valid_until,
                "superseded_by": self.superseded_by, "conflicts": self.conflicts, "memories": self.memories}


def _has(rule_term: str, arms: Sequence[tuple[str, str, str]], literals: Mapping[str, Sequence[str]]) -> bool:
    if rule_term.startswith("lit:"):
        return bool(literals.get(rule_term[4:]))
    return any(role == rule_term for role, _a, _n in arms)


def frame_occurrences(frame: str, predicate: str, arms: Sequence[tuple[str, str, str]],
                      literals: Mapping[str, Sequence[str]], time: str, memory: str) -> list[Occurrence]:
    """The slot statements one frame makes (one per holder arm and matching rule).

    Args:
        arms: (role, anchor IRI, name) of the frame.
        literals: literal key -> values.
        time: the frame's event time, else its mention time.
    """
    if predicate not in SLOT_PREDICATES or not time:
        return []
    out: list[Occurrence] = []
    seen_slots: set[str] = set()
    for rule in SLOTS:
        if rule.predicate != predicate or rule.slot in seen_slots:
            continue
        if not all(_has(t, arms, literals) for t in rule.requires) or any(_has(t, arms, literals) for t in rule.unless):
            continue
        names = {n.lower() for _r, _a, n in arms}
        if rule.names and not names & rule.names:
            continue
        holders = [(r, a, n) for r, a, n in arms if r in rule.holders]
        if not holders:
            continue
        subkey = next((a for r, a, _n in arms if r in rule.keyed_by), "") if rule.keyed_by else ""
        if rule.keyed_by and not subkey:
            continue
        chosen = holders if rule.symmetric else holders[:1]
        for _role, holder, _name in chosen:
            if rule.symmetric:
                value = " and ".join(sorted({n for _r, a, n in holders if a != holder}))
            else:
                value = _value_text(rule, arms, literals)
            if not value and not (rule.ends and names & rule.ends):
                continue
            out.append(Occurrence(rule.slot, holder, subkey, frame, value, time, memory))
        seen_slots.add(rule.slot)
    return out


def _value_text(rule: SlotRule, arms: Sequence[tuple[str, str, str]], literals: Mapping[str, Sequence[str]]) -> str:
    parts: list[str] = []
    for term, word in rule.values:
        if term.startswith("lit:"):
            found = list(literals.get(term[4:], ()))
        else:
            found = [n for r, _a, n in arms if r == term]
        for value in found:
            value = dict(rule.say).get(value.lower(), value)
            parts.append(f"{word} {value}" if word and parts else value)
    return " ".join(parts)


def time_of(event_times: Sequence[str], mention_times: Sequence[str]) -> str:
    """The time a frame's statement counts from: its event time (an interval's start), else its mention time."""
    for value in sorted(event_times) or sorted(mention_times):
        return value.split("/", 1)[0]
    return ""


def derive(occurrences: Iterable[Occurrence], rep: Mapping[str, str] | None = None) -> list[Belief]:
    """The intervals of every slot of every holder the occurrences state (the supersession rule).

    Per (slot, holder, subkey), statements are taken in time order; a statement of the value that holds
    already continues it, another value closes it (``valid_until``, ``superseded_by``). Several values
    at one time from one slot are a conflict: each is a belief of its own naming the others.

    Args:
        rep: anchor IRI -> its owl:sameAs representative (holders and subkeys are grouped by it).
    """
    rep = rep or {}
    chains: dict[tuple[str, str, str], list[Occurrence]] = {}
    for o in occurrences:
        key = (o.slot, rep.get(o.holder, o.holder), rep.get(o.subkey, o.subkey) if o.subkey else "")
        chains.setdefault(key, []).append(o)
    out: list[Belief] = []
    for (slot, holder, subkey), found in sorted(chains.items()):
        out += _chain(slot, holder, subkey, found)
    return out


def _chain(slot: str, holder: str, subkey: str, found: list[Occurrence]) -> list[Belief]:
    by_time: dict[str, dict[str, list[Occurrence]]] = {}
    for o in found:
        by_time.setdefault(o.time, {}).setdefault(o.value.lower(), []).append(o)
    out: list[Belief] = []
    open_runs: list[Belief] = []
    for time in sorted(by_time):
        values = by_time[time]
        if len(open_runs) == 1 and len(values) == 1 and open_runs[0].value.lower() in values:
            run = open_runs[0]  # the value that holds is stated again: the belief continues
            for o in values[run.value.lower()]:
                _add(run, o)
            continue
        new_runs: list[Belief] = []
        for _value, stated in sorted(values.items()):
            frames = sorted({o.frame for o in stated})
            for frame in frames:
                belief = Belief(slot, holder, subkey, frame, stated[0].value, time)
                for o in stated:
                    if o.frame == frame:
                        _add(belief, o)
                new_runs.append(belief)
        if len(values) > 1:
            for belief in new_runs:
                belief.conflicts = sorted({b.frame for b in new_runs if b.value.lower() != belief.value.lower()})
        for run in open_runs:
            run.valid_until = time
            run.superseded_by = sorted({b.frame for b in new_runs})
        out += new_runs
        open_runs = new_runs
    return out


def _add(belief: Belief, o: Occurrence) -> None:
    if o.memory not in belief.memories:
        belief.memories.append(o.memory)
        belief.memories.sort()


def text_of(belief: Belief) -> str:
    """The value as shown: "baker in Porto", "no longer (ended)" for an ending."""
    return belief.value or "none (ended)"


def describe(chain: Sequence[Belief], at: tuple[str, str] | None = None) -> str:
    """One line for a holder's slot: the belief that holds (now, or during ``at`` = (start, end)) and what
    came before, e.g. "baker in Porto since 2023-07-20; before: nurse in Braga from 2023-05-10"; a conflict
    names both values and their records."""
    if not chain:
        return ""
    ordered = sorted(chain, key=lambda b: (b.valid_from, b.value))
    if at is None:
        held = [b for b in ordered if b.current]
    else:
        held = [b for b in ordered if b.holds_at(*at)]
    if not held:
        return ""
    start = min(b.valid_from for b in held)
    parts = []
    if len({b.value.lower() for b in held}) > 1:
        parts.append("conflict: " + " / ".join(
            f"{text_of(b)} from {b.valid_from[:10]} ({', '.join(b.memories)})" for b in held))
    else:
        b = held[0]
        until = f" until {b.valid_until[:10]}" if b.valid_until else ""
        parts.append(f"{text_of(b)} {'since' if not until else 'from'} {b.valid_from[:10]}{until}")
    before = [b for b in ordered if b.valid_until is not None and b.valid_until <= start and b not in held]
    if before:
        last = before[-1]
        parts.append(f"before: {text_of(last)} from {last.valid_from[:10]}")
    return "; ".join(parts)


def stale_records(reader: Any, snapshot: Any, memories: Iterable[str]) -> dict[str, str]:
    """Record id -> "gone" (not in ``snapshot``) or "changed" (its blob is not the one its frames came from),
    for the records of ``memories`` whose graph statements no longer hold."""
    from memrepo import records as rec
    from memrepo.errors import RecordError

    ids = sorted(set(memories))
    followed = reader.record_blobs(ids)
    out: dict[str, str] = {}
    for memory in ids:
        try:
            blob = snapshot.blob_id(rec.record_path(memory))
        except RecordError:
            blob = None
        if blob is None:
            out[memory] = "gone"
        elif followed.get(memory) and blob not in followed[memory]:
            out[memory] = "changed"
    return out


def reextracted(snapshot: Any, memory_id: str, namespace: str, reader: Any = None) -> list[Occurrence]:
    """The slot statements of one record as ``snapshot`` has it now, extracted in memory by the offline rules
    of ``reader`` (a :class:`memrepo.nlp.Analyzer`; None: the default) with no model call on a read and
    nothing written. None for a record that is gone or does not parse."""
    from memrepo import records as rec
    from memrepo.errors import RecordError
    from memrepo.graph.extract import extract_memory

    try:
        path = rec.record_path(memory_id)
        data = snapshot.read(path)
        if data is None:
            return []
        graph = extract_memory(rec.parse(data, path), namespace=namespace, reader=reader)
    except RecordError:
        return []
    out: list[Occurrence] = []
    for f in graph.frames:
        literals: dict[str, list[str]] = {}
        for lit in f.literals:
            literals.setdefault(lit.key, []).append(lit.value)
        out += frame_occurrences(f.iri, f.predicate, [(a.role, a.anchor.iri, a.anchor.name) for a in f.arms],
                                 literals, time_of([f.event_time] if f.event_time else [], [f.mention_time]),
                                 memory_id)
    return out


def current_chain(reader: Any, anchor: str, snapshot: Any, slots: Iterable[str] | None = None,
                  stale: Mapping[str, str] | None = None,
                  namespace: str | None = None) -> tuple[list[Belief], list[Occurrence], dict[str, str]]:
    """The beliefs of ``anchor`` (as holder) that the records of ``snapshot`` still support.

    The index's derived intervals when every record they rest on is the one indexed; else derived again,
    in memory, from the statements of the records that still say so (a plain ``git commit`` of a hand edit,
    a ``git rm``, a pull, before the graph catch-up). With ``namespace``, a record edited since is extracted
    again in memory (:func:`reextracted`) and what it says now takes part in the chain.

    Returns:
        (beliefs, the statements left out, record id -> why: "changed" | "gone").
    """
    wanted = list(slots) if slots is not None else None
    chain = reader.beliefs_of(anchor, wanted)
    memories = {m for b in chain for m in b.memories}
    found = dict(stale) if stale is not None else stale_records(reader, snapshot, memories)
    found = {m: r for m, r in found.items() if m in memories}
    if not found:
        return chain, [], {}
    occurrences = [o for o in reader.belief_occurrences(anchor) if wanted is None or o.slot in wanted]
    rep = {o.holder: reader.representative(o.holder) for o in occurrences}
    rep.update({o.subkey: reader.representative(o.subkey) for o in occurrences if o.subkey})
    dropped = [o for o in occurrences if o.memory in found]
    kept = [o for o in occurrences if o.memory not in found]
    if namespace is not None:
        own = reader.representative(anchor)
        for memory in sorted(m for m, why in found.items() if why == "changed"):
            for o in reextracted(snapshot, memory, namespace):
                if (wanted is None or o.slot in wanted) and reader.representative(o.holder) == own:
                    rep.setdefault(o.holder, own)
                    if o.subkey:
                        rep.setdefault(o.subkey, reader.representative(o.subkey))
                    kept.append(o)
    return derive(kept, rep), dropped, found


def timeline(reader: Any, anchor: str, snapshot: Any, namespace: str | None = None) -> list[dict[str, Any]]:
    """An anchor's beliefs as a timeline: per slot (and thing counted), each value's frame with its validity
    interval, what closed it, its conflicts and the records it rests on, oldest first.

    Statements of records changed or removed since they were indexed are left out and the intervals derived
    without them (each entry's ``stale_dropped`` lists the records left out of its slot); with ``namespace``,
    what a changed record says now is extracted again in memory and takes their place.
    """
    chain, dropped, why = current_chain(reader, anchor, snapshot, namespace=namespace)
    frames = {f.iri: f for f in reader.load_frames(sorted({b.frame for b in chain}))}
    left_out: dict[str, list[dict[str, str]]] = {}
    for o in dropped:
        left_out.setdefault(o.slot, []).append({"frame": o.frame, "record": o.memory, "reason": why[o.memory]})
    out = []
    for b in sorted(chain, key=lambda b: (b.slot, b.subkey, b.valid_from, b.value, b.frame)):
        frame = frames.get(b.frame)
        out.append({**b.to_dict(), "text": text_of(b), "of": reader.label(b.subkey) if b.subkey else "",
                    "frame_text": frame.render() if frame else f"{b.frame} (extracted again from the record as it is now)", "citations": list(b.memories),
                    "stale_dropped": left_out.get(b.slot, [])})
    return out


def render_timeline(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Lines for a terminal: "job: nurse in Braga  2023-05-10 .. 2023-07-20  work(...)  cites ep-..."."""
    lines = []
    for e in entries:
        until = e["valid_until"][:10] if e["valid_until"] else "now"
        of = f" ({e['of']})" if e["of"] else ""
        notes = " [conflict]" if e["conflicts"] else ""
        lines.append(f"{e['slot']}{of}: {e['text']}  {e['valid_from'][:10]} .. {until}{notes}  {e['frame_text']}  "
                     f"cites {', '.join(e['citations'])}")
    return lines
