"""The answering agent with answer-time verification (MIRIX-2.0 Alg. 1 Answer, §2.4, A.4).

The agent recalls evidence (at most five recalls in all), drafts an answer
from the evidence ledger with the ``answerer`` role, and runs a rule-based
check on the draft. When a trigger fires it makes one extra search (a query
derived from Π(q), or the question itself for a relation query) and one
rewrite with the ``rewriter`` role. The check reads the question, its plan,
the draft and the ledger: never a reference answer. Offline the answer is
extractive: the span of the evidence that answers the question's kind (a name
for who, a place for where, a date for when, ...; see :mod:`memrepo.read.span`),
the record it rests on and the sentence it comes from, or "not in memory"; and
it says so.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from memrepo.nlp.morphology import NUMBER_WORDS
from memrepo.read import cells, hops, span
from memrepo.read import constants as C
from memrepo.read.evidence import Evidence, ledger_of, merge_ledgers
from memrepo.read.plan import Plan, Relation
from memrepo.text.dates import MONTHS, WEEKDAYS, human_date

if TYPE_CHECKING:
    from memrepo.llm import Backend
    from memrepo.read.recall import RecallResult

__all__ = ["Answer", "Evidence", "answer_offline", "ask", "check", "ledger_of", "merge_ledgers"]

EXTRACTIVE_NOTE = ("Extractive answer (no model configured): the span of the evidence that answers the question's "
                   "kind, or 'not in memory'.")
UNCERTAIN_RE = re.compile(
    r"\b(not sure|unsure|don't know|do not know|unknown|cannot (?:be )?determine|can't (?:be )?determine|"
    r"no (?:information|evidence|mention|record)|not (?:mentioned|specified|stated|clear)|unclear|"
    r"maybe|perhaps|possibly|might be|it seems|i think|i guess|cannot answer|can't answer|insufficient|"
    r"not in memory)\b", re.I)
# Words that say how many without a number of the one number-word table (memrepo.nlp.morphology.NUMBER_WORDS).
COUNT_WORDS = ("once", "twice", "none", "several", "a few")
_NUMBER_WORD_ALT = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_NUMBER_RE = re.compile(r"\b(\d+(?:\.\d+)?|" + _NUMBER_WORD_ALT + "|" + "|".join(COUNT_WORDS) + r")\b", re.I)
_DIGITS_RE = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_TIME_RE = re.compile(
    r"\b(\d{4}|\d{1,2}(?:st|nd|rd|th)?|" + "|".join(MONTHS) + r"|" + "|".join(m[:3] for m in MONTHS) +
    r"|" + "|".join(WEEKDAYS) + r"|yesterday|today|tomorrow|week|weekend|month|year|"
    r"day|days|weeks|months|years|ago|last|next|before|after|since|morning|evening|night|summer|winter|spring|"
    r"fall|autumn)\b", re.I)
_LIST_SPLIT_RE = re.compile(r"\s*(?:,|;|\band\b|\n)\s*")
TRIGGERS = ("uncertainty", "count-without-number", "count-disagrees", "temporal-without-time",
            "value-not-in-evidence", "role-mismatch", "planned-in-count", "intersection")


@dataclass
class Answer:
    """What ``ask`` returns: the answer, the record ids it rests on, and how it was reached."""

    question: str
    answer: str
    record_ids: list[str]
    extractive: bool
    draft: str
    triggers: list[str] = field(default_factory=list)
    recalls: int = 0
    extra_search: str | None = None
    rewritten: bool = False
    fallback: str | None = None
    note: str = ""
    quote: str = ""  # offline: the record id, speaker, date and the sentence the answer comes from

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- the rule-based check (A.4) ---------------------------------------------------------------


def check(question: str, plan: Plan, draft: str, ledger: list[Evidence], used: list[str] | None = None) -> list[str]:
    """The triggers a draft fires (empty: the draft stands). Reads no reference answer.

    Args:
        used: ids of the ledger entries the draft rests on (default: the whole ledger).
    """
    fired: list[str] = []
    text = draft.strip()
    if not text or UNCERTAIN_RE.search(text):
        fired.append("uncertainty")
    if plan.operator == "count":
        numbers = _NUMBER_RE.findall(text)
        if not numbers:
            fired.append("count-without-number")
        elif _count_disagrees(text):
            fired.append("count-disagrees")
    if (plan.operator == "temporal" or "date" in plan.answer_types) and not _TIME_RE.search(text):
        fired.append("temporal-without-time")
    if _value_not_in_evidence(question, text, ledger):
        fired.append("value-not-in-evidence")
    chosen = [e for e in ledger if used is None or e.id in used]
    if _role_mismatch(plan, chosen):
        fired.append("role-mismatch")
    if plan.operator == "count" and any(e.status == "planned" for e in chosen):
        fired.append("planned-in-count")
    if plan.operator == "intersection":
        fired.append("intersection")
    return fired


def _count_disagrees(text: str) -> bool:
    """A stated count that differs from the number of items the answer lists ("3: hiking and biking")."""
    m = re.search(r"\b(\d+|" + _NUMBER_WORD_ALT + r")\b\s*(?:[a-z]+\s*)?[:(—-]\s*(.+)$", text, re.I)
    if not m:
        return False
    stated = m.group(1).lower()
    value = int(stated) if stated.isdigit() else NUMBER_WORDS[stated]
    items = [i for i in _LIST_SPLIT_RE.split(m.group(2).strip(" .)")) if i.strip()]
    return len(items) >= 2 and len(items) != value


def _value_not_in_evidence(question: str, text: str, ledger: list[Evidence]) -> bool:
    """A number or month in the draft that neither the ledger nor the question contains."""
    known = (question + " " + " ".join(f"{e.date} {e.text}" for e in ledger)).lower()
    known_numbers = {n.replace(",", "") for n in _DIGITS_RE.findall(known)}
    known_numbers |= {str(int(n)) for n in re.findall(r"\b0\d\b", known)}  # "05" in a date is month 5
    for n in _DIGITS_RE.findall(text):
        if n.replace(",", "") not in known_numbers:
            return True
    for i, month in enumerate(MONTHS, 1):
        if re.search(rf"\b{month}\b", text, re.I):
            if not re.search(rf"\b{month[:3]}", known) and f"-{i:02d}-" not in known:
                return True
    return False


def _role_mismatch(plan: Plan, ledger: list[Evidence]) -> bool:
    """A fact of a planned relation in which a person the question names holds the other role."""
    named = {n.lower() for n in plan.names}
    for e in ledger:
        if e.kind != "fact":
            continue
        rel = next((r for r in plan.relations if r.family == e.predicate), None)
        if rel is None or rel.subject_role == rel.object_role:
            continue
        wanted = rel.object_role if plan.direction == "object" else rel.subject_role
        other = rel.subject_role if wanted == rel.object_role else rel.object_role
        for role, label in e.roles:
            if label.lower() in named and role == other:
                return True
    return False


def extra_query(plan: Plan) -> str:
    """The extra search: the question itself for a relation query, else a query derived from Π(q)."""
    if plan.relations:
        return plan.question
    parts = plan.names + plan.constraints
    wanted = {"date": "when date", "time": "what time", "place": "where place", "person": "who",
              "count": "how many", "duration": "how long", "price": "price cost"}
    parts += [wanted[t] for t in plan.answer_types if t in wanted]
    return " ".join(dict.fromkeys(parts)) or plan.question


# --- offline roles: extractive ------------------------------------------------------------------


def _belief_adds(belief: Evidence) -> bool:
    """Whether a belief says more than the evidence: the relation changed over time, two sources disagree, or
    the question asked about a date."""
    return bool(belief.date) or "; before: " in belief.text or ": conflict: " in belief.text or " until " in belief.text


def answer_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """The answerer's and rewriter's offline form: the span of the asked kind (memrepo.read.span), or "not in memory"."""
    ledger = [Evidence(**e) for e in variables["ledger"]]
    data = {k: v for k, v in variables["plan"].items() if k not in ("families", "capacity")}
    plan = Plan(**{**data, "relations": [Relation(**r) for r in data.get("relations", [])]})
    belief = next((e for e in ledger if e.kind == "belief"), None)
    choice = span.choose(variables["question"], plan, ledger) if belief is None or not _belief_adds(belief) else None
    if choice is not None and choice.evidence is not None and cells.is_label(choice.answer, choice.evidence):
        choice = span.Choice(span.NOT_IN_MEMORY)  # a table's header or name says what a cell holds, not its value
    if belief is not None and (choice is None or choice.evidence is None):
        # the question asks a one-value relation that changed (or about a date): the belief that holds (then),
        # and the one before; one value that never changed is answered from the evidence when it can be (the
        # place a "where" asks), else by the belief
        value = belief.text.split(": ", 1)[-1]
        return {"answer": value, "record_ids": list(belief.cites),
                "quote": f"{belief.text} (rests on {', '.join(belief.cites)})"}
    assert choice is not None
    kind = span.question_kind(variables["question"])
    cell = cells.read(variables["question"], kind, ledger)
    if cell is not None and (cell.whole or choice.evidence is None):
        # a table row the question names, and the value of the header it asks for (cells.Cell.whole)
        return {"answer": cell.answer, "record_ids": [cell.row.evidence.id], "quote": cell.row.quote()}
    if choice.evidence is None:
        return {"answer": choice.answer, "record_ids": [], "quote": ""}
    answer = choice.answer
    if kind.name in ("date", "time"):
        answer = _document_time(answer, choice.evidence, choice.sentence)
    return {"answer": answer, "record_ids": [choice.evidence.id], "quote": choice.quote()}


_CLOCK = r"\d{1,2}:\d{2}(?:\s?(?:UTC|CET|CEST|[ap]m))?"
_DAY = r"(?:" + "|".join(WEEKDAYS) + r")s?"
_TEXT_TIME_RE = re.compile(
    r"\b(?:(?:every|each|on|from)\s+(?:(?:second|other|first|last)\s+)?)?" + _DAY +
    r"(?:\s+(?:to|and|or)\s+" + _DAY + r")?(?:\s+(?:at|from|between)\s+" + _CLOCK +
    r"(?:\s+(?:and|to)\s+" + _CLOCK + r")?|\s+after\b[^,.;]*)?"
    r"|\b(?:at|by|before|after|from|between|until)\s+" + _CLOCK + r"(?:\s+(?:and|to)\s+" + _CLOCK + r")?"
    r"|\b(?:after|within|in|every)\s+\d+\s+(?:minutes?|hours?|days?|weeks?|months?|working days?)"
    r"|\b(?:next|first|last)\s+(?:working\s+)?(?:day|week|month)\b[^,.;]*"
    r"|\b\d{4}-\d{2}-\d{2}\b", re.I)
_FULL_DATE_RE = re.compile(r"\d{1,2} (?:" + "|".join(MONTHS) + r") \d{4}", re.I)
_ANCHOR_DATE_RE = re.compile(r"#[^:]*?\b(\d{4}-\d{2}-\d{2})\b")


def _document_time(answer: str, evidence: Evidence, sentence: str) -> str:
    """A "when" answered from a document's part (its anchor a section path, "#handbook/Schedules:3"; not a
    conversation's turn, "#D1:4") by a day resolved against the ingestion date: the time its text gives instead
    (a weekday, a time of day, a date in the sentence), else the date of its section ("2026-02-11 Design review")."""
    if not any("/" in s.partition("#")[2] for s in evidence.sources) or not _FULL_DATE_RE.fullmatch(answer.strip()):
        return answer  # not a document's part, or not a day resolved against the mention date
    if answer in sentence or answer.split()[0] in re.findall(r"\d+", sentence):
        return answer  # the text itself gives that day
    found = _TEXT_TIME_RE.search(sentence or evidence.text)
    if found:
        return found.group(0).strip()
    for source in evidence.sources:
        m = _ANCHOR_DATE_RE.search(source)
        if m:
            return human_date(m.group(1))
    return answer


# --- the agent ---------------------------------------------------------------------------------------


ANSWER_SCHEMA = {
    "type": "object",
    "required": ["answer", "record_ids"],
    "properties": {
        "answer": {"type": "string"},
        "record_ids": {"type": "array", "items": {"type": "string"}},
        "search": {"type": ["string", "null"]},
        "quote": {"type": ["string", "null"]},
    },
}


def _variables(question: str, plan: Plan, ledger: list[Evidence], **extra: Any) -> dict[str, Any]:
    return {"question": question, "plan": plan.to_dict(), "ledger": [asdict(e) for e in ledger], **extra}


def ask(recall: Callable[[str], "RecallResult"], question: str, *, backend: "Backend") -> Answer:
    """Answer ``question`` from recalled evidence; at most five recalls, one extra search, one rewrite.

    Args:
        recall: question -> RecallResult (``repo.recall`` bound to a revision and types).
        backend: the model backend (offline: extractive answers).
    """
    result = recall(question)
    plan = result.plan
    recalls = 1
    ledger = ledger_of(result)
    reply = backend.run("answerer", _variables(question, plan, ledger), ANSWER_SCHEMA, answer_offline)
    # A model may ask for more evidence before it commits to a draft (five recalls in all, A.4).
    while reply.get("search") and recalls < C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
        more = recall(str(reply["search"]))
        recalls += 1
        ledger = merge_ledgers(ledger, ledger_of(more))
        reply = backend.run("answerer", _variables(question, plan, ledger), ANSWER_SCHEMA, answer_offline)
    asked = question
    followed = _follow(recall, question, plan, ledger, reply, recalls, backend)
    if followed is None:  # a rule that names a role, not a person: who holds it (issue 32)
        followed = hops.follow_role(recall, question, ledger, reply, recalls, backend)
    if followed is None:  # a table row described by one cell, asked another: that column's record
        followed = _row_hop(recall, question, ledger, reply, recalls)
    if followed is None:  # a table's cell named by its header and row, asked something else: ask it of the value
        followed = _cell_hop(recall, question, plan, ledger, reply, recalls, backend)
    if followed is not None:
        asked, ledger, reply = followed
        recalls += int(reply.pop("recalls", 1))  # the role hop may recall the event it dates by too
    draft, used = reply["answer"], _known_ids(reply.get("record_ids") or [], ledger)
    answer = Answer(question=question, answer=draft, record_ids=used, extractive=backend.offline, draft=draft,
                    recalls=recalls, fallback=result.fallback, quote=str(reply.get("quote") or ""))
    answer.triggers = check(question, plan, draft, ledger, used or None)
    if answer.triggers:
        query = extra_query(plan)
        more = recall(query)
        answer.recalls += 1
        answer.extra_search = query
        ledger = merge_ledgers(ledger, ledger_of(more))
        variables = _variables(asked, plan, ledger, draft=draft, triggers=answer.triggers)
        rewrite = backend.run("rewriter", variables, ANSWER_SCHEMA, answer_offline)
        answer.answer = rewrite["answer"]
        answer.record_ids = _known_ids(rewrite.get("record_ids") or [], ledger) or used
        answer.quote = str(rewrite.get("quote") or "") if rewrite["answer"] != draft else answer.quote
        answer.rewritten = True
    if answer.extractive:
        answer.note = EXTRACTIVE_NOTE
    return answer


def _follow(recall: Callable[[str], "RecallResult"], question: str, plan: Plan, ledger: list[Evidence],
            reply: dict[str, Any], recalls: int, backend: "Backend",
            ) -> tuple[str, list[Evidence], dict[str, Any]] | None:
    """The second hop: ``question`` asks something of a thing it describes ("Who owns the system that feeds
    Herald?"); the ledger names the thing ("burrow") and the draft does not answer, or answers with that name.
    One more recall of the question with the name in place of the description ("Who owns burrow?"), within the
    recall budget, answered from the merged ledger; the answer cites the record that named the thing too.

    Returns:
        (the question answered, the merged ledger, the reply), or None when there is no second hop to make.
    """
    thing = hops.described(question)
    if thing is None or recalls >= C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
        return None
    used = 1
    named = backend.run("answerer", _variables(thing.naming, plan, ledger), ANSWER_SCHEMA, answer_offline)
    draft = str(reply.get("answer") or "").strip().rstrip(".")
    # the thing's name: the answer to "Which system feeds Herald?", else the draft itself ("Silo")
    found = [(n, r) for r in (named, reply) if (n := _name_of(r, ledger, question, thing.head))
             and (r is named or _says(r, ledger, thing.clause))]
    # the possessor a record names before the possessed noun ("fresh EDTA blood") goes before the answerer's span
    whose = thing.clause.lower().startswith("whose ")
    naming: list[tuple[str, dict[str, Any]]] = []
    if not found or whose:  # the record that says the clause and names the thing beside its noun ("owns kestrel, the oven")
        naming = _naming_records(thing, question, ledger)
        found = naming or found
    if (not found or whose and not naming) and recalls + 1 < C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
        # none in the question's evidence: the evidence of the question that names the thing ("Which tube's blood
        # is used for a blood smear?"), recalled within the budget
        ledger = merge_ledgers(ledger, ledger_of(recall(thing.naming)))
        found = _naming_records(thing, question, ledger) or found
        used += 1
    if not found:
        return None
    name, named = found[0]
    if draft and not UNCERTAIN_RE.search(draft) and name.lower() not in draft.lower() and _about(reply, ledger, name,
                                                                                              thing.clause):
        return None  # the draft answers with something else than the thing, from a record about the thing
    follow_up = thing.follow_up(name)
    merged = merge_ledgers(ledger_of(recall(follow_up)), ledger)  # the follow-up's evidence first
    second = backend.run("answerer", _variables(follow_up, plan, merged), ANSWER_SCHEMA, answer_offline)
    said = str(second.get("answer") or "")
    if any(e.text == said.strip() and cells.row_of(e) for e in merged):
        # a whole table row answers nothing asked of it: the row the follow-up describes, and its asked column
        row = _row_hop(recall, follow_up, merged, second, recalls + used)
        if row is None:
            return None
        merged, second = row[1], row[2]
        used += int(second.pop("recalls", 1))
        said = str(second.get("answer") or "")
    if UNCERTAIN_RE.search(said) or not set(re.findall(r"\w+", said.lower())) - set(re.findall(r"\w+", question.lower())):
        return None  # no answer, or one the question itself says
    first_ids = _known_ids(named.get("record_ids") or [], merged)
    ids = list(dict.fromkeys(first_ids + list(second.get("record_ids") or [])))
    quote = " ".join(q for q in (str(named.get("quote") or ""), str(second.get("quote") or "")) if q)
    return follow_up, merged, {**second, "record_ids": ids, "quote": quote, "recalls": used}


def _naming_records(thing: hops.Described, question: str, ledger: list[Evidence]) -> list[tuple[str, dict[str, Any]]]:
    """(name, reply) of each record of ``ledger`` that says the thing's clause (its section heading counting, see
    :func:`hops.section_of`) and names the thing (:func:`hops.thing_in`) by a name the question does not say."""
    return [(n, {"answer": n, "record_ids": [e.id], "quote": ""}) for e in ledger if e.kind == "record"
            and _says({"record_ids": [e.id]}, ledger, thing.clause)
            and (n := hops.thing_in(thing, e.text)) != thing.head and n.lower() not in question.lower()]


def _row_hop(recall: Callable[[str], "RecallResult"], question: str, ledger: list[Evidence], reply: dict[str, Any],
             recalls: int) -> tuple[str, list[Evidence], dict[str, Any]] | None:
    """A question that describes a table row by one of its cells and asks another ("When do all users move?":
    the row "Step: 4; What: Move all users", its "When" a record of its own that shares no word with the
    question): when the draft gives no answer or rests on a table row, one more recall of the row's table and key,
    and the asked column read from that row's other records; the answer cites both.

    Returns:
        (the question, the merged ledger, the reply), or None when no row is described or its column is not found.
    """
    if recalls >= C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
        return None
    draft_ids = set(reply.get("record_ids") or [])
    if not UNCERTAIN_RE.search(str(reply.get("answer") or "")) and not any(
            cells.row_of(e) for e in ledger if e.id in draft_ids):
        return None  # the draft answers from prose
    kind = span.question_kind(question)
    cell = cells.read(question, kind, ledger)
    row = cells.described_row(question, kind, ledger) if cell is None or not cell.whole else None
    if row is None:
        return None  # no row, or the draft's row holds the asked column
    query = cells.row_query(row, kind, ledger, question)
    merged = merge_ledgers(ledger, ledger_of(recall(query)))
    again = cells.row_query(row, kind, merged, question)  # the table's rows found name the asked column's header
    used = 1
    if (cells.sibling(question, kind, merged, row) is None and again != query
            and recalls + 1 < C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES):
        merged = merge_ledgers(merged, ledger_of(recall(again)))
        used += 1
    cell = cells.sibling(question, kind, merged, row)
    if cell is None:
        return None
    return question, merged, {"answer": cell.answer, "record_ids": [row.evidence.id, cell.row.evidence.id],
                              "quote": f"{row.quote()} {cell.row.quote()}", "recalls": used}


def _cell_hop(recall: Callable[[str], "RecallResult"], question: str, plan: Plan, ledger: list[Evidence],
              reply: dict[str, Any], recalls: int, backend: "Backend",
              ) -> tuple[str, list[Evidence], dict[str, Any]] | None:
    """A question that names a table's cell by its header and row and asks something else of the cell's value
    ("What does the service contact for the centrifuge order?": the row's "Service contact: Gareth Pryce"): when
    the draft gives no answer or only the row itself, one more recall of the question with the value in place of
    the phrase ("What does Gareth Pryce order?"), answered from the merged ledger; the answer cites the row too.

    Returns:
        (the question answered, the merged ledger, the reply), or None when no cell is named so or no answer comes.
    """
    if recalls >= C.MAX_RECALLS - C.MAX_EXTRA_SEARCHES:
        return None
    draft = str(reply.get("answer") or "").strip()
    found = cells.described_cell(question, ledger)
    if found is None:
        return None
    phrase, value, row = found
    if not (UNCERTAIN_RE.search(draft) or draft == row.evidence.text or cells.row_of(
            next((e for e in ledger if e.id in (reply.get("record_ids") or [])), row.evidence)) is not None):
        return None  # the draft answers from prose
    follow_up = question.replace(phrase, value, 1)
    merged = merge_ledgers(ledger_of(recall(follow_up)), ledger)
    second = backend.run("answerer", _variables(follow_up, plan, merged), ANSWER_SCHEMA, answer_offline)
    said = str(second.get("answer") or "")
    if UNCERTAIN_RE.search(said) or said.strip() == row.evidence.text or value.lower() == said.strip().lower():
        return None
    ids = list(dict.fromkeys([row.evidence.id, *(second.get("record_ids") or [])]))
    return follow_up, merged, {**second, "record_ids": ids, "quote": f"{row.quote()} {second.get('quote') or ''}"}


def _about(reply: dict[str, Any], ledger: list[Evidence], name: str, clause: str) -> bool:
    """Whether the record a reply rests on is about the described thing: it names the thing or says the clause
    that describes it (a draft from a record about something else, "owns Lido, the web app" for the monitoring
    server Ilse owns, does not answer the question). A reply that cites no record of the ledger is taken as
    about it."""
    cited = [e for e in ledger if e.id in (reply.get("record_ids") or [])]
    return not cited or any(name.lower() in e.text.lower() or hops.says(clause, e.text) for e in cited)


def _says(reply: dict[str, Any], ledger: list[Evidence], clause: str) -> bool:
    """Whether the record a reply rests on says the clause that describes the thing ("Silo keeps raw booking
    events for 25 months"): then the reply names the thing, not what the question asks of it."""
    return any(hops.says(clause, f"{e.text} {hops.section_of(e.sources)}") for e in ledger
               if e.id in (reply.get("record_ids") or []))


def _name_of(reply: dict[str, Any], ledger: list[Evidence], question: str, head: str) -> str:
    """The name a reply gives, when it is one the question does not say ("" otherwise): a few words, no number."""
    name = str(reply.get("answer") or "").split(",")[0].strip().rstrip(".")  # "reef, namespace herald": reef
    name = hops.after_head(name, head)  # "monitoring server Lookout": Lookout
    source = next((e for e in ledger if e.id in (reply.get("record_ids") or [])), None)
    if source is not None and (name.islower() or name.lower().split()[-1:] == head.lower().split()[-1:]):
        name = hops.name_in(name, source.text)  # "billing service" in "owns Ledger, our billing service": Ledger
    if (not name or UNCERTAIN_RE.search(name) or len(name.split()) > 3 or re.search(r"\d", name)
            or name.lower() in question.lower()):
        return ""
    return name


def _known_ids(ids: list[str], ledger: list[Evidence]) -> list[str]:
    """The cited ids that are in the ledger (a model may not invent evidence); facts map to their records."""
    known = {e.id for e in ledger} | {c for e in ledger if e.kind == "belief" for c in e.cites}
    return [i for i in dict.fromkeys(ids) if i in known]
