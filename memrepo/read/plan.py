"""The deterministic query planner Π(q) (MIRIX-2.0 eq. 9, §2.4).

Π(q) = (operator, relation families with their surface forms, constraints,
answer types, time constraints, B_B, B_R). Same question, same plan: no model,
no state.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from memrepo.read import constants as C
from memrepo.text.dates import MONTHS
from memrepo.text.stopwords import QUESTION_WORDS, STOPWORDS

_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
_YEAR_RE = re.compile(r"\b(19|20)\d{2}\b")
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_COUNT_RE = re.compile(r"\b(how many|how much|number of|how often|count of|times)\b", re.I)
_PRICE_RE = re.compile(r"\bhow much\b.*\b(cost|pay|paid|spend|spent|price|worth)\b", re.I)
_TEMPORAL_RE = re.compile(
    r"^\s*when\b|\bwhat (year|month|date|day|time|week)\b|\bhow long\b|\bwhich (year|month|day)\b|"
    r"\b(before|after|since|until|first time|last time|how recently|ago)\b", re.I)
_INTERSECTION_RE = re.compile(r"\b(both|in common|same|shared?|together|each other|mutual)\b", re.I)
_LIST_RE = re.compile(
    r"\b(what (kinds?|types?|sorts?) of|what (are|were) (some|the)|list|which \w+s\b|what \w+s (has|have|did|does|do)|"
    r"what activities|what hobbies|what books|what things|what events|what places|what pets|what items|"
    r"in what ways|what are|what were)\b", re.I)
_ROLE_OBJECT_RE = re.compile(r"^\s*(who|whom)\b.*\b(did|does|do|has|have)\b", re.I)


@dataclass
class Relation:
    """A relation family of the plan: the canonical predicate and the question's words for it."""

    family: str
    surface: list[str]
    subject_role: str = ""
    object_role: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    """Π(q) of one question."""

    question: str
    operator: str
    relations: list[Relation] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    answer_types: list[str] = field(default_factory=list)
    time: dict[str, Any] = field(default_factory=dict)
    base_budget: int = 0
    cited_budget: int = 0
    names: list[str] = field(default_factory=list)  # capitalised names the question uses
    terms: list[str] = field(default_factory=list)  # content words, lowercase, in question order
    direction: str = ""  # "object" when the question asks for the object of its relation (who did X ...)

    @property
    def families(self) -> list[str]:
        return [r.family for r in self.relations]

    @property
    def capacity(self) -> int:
        return self.base_budget + self.cited_budget

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["families"] = self.families
        data["capacity"] = self.capacity
        return data


def words(text: str) -> list[str]:
    return [w.strip("'’-") for w in _WORD_RE.findall(text) if w.strip("'’-")]


def content_terms(text: str) -> list[str]:
    """Lowercase content words of ``text`` (no stopwords, no question words), possessives cut."""
    out = []
    for w in words(text):
        low = re.sub(r"['’]s$", "", w.lower())
        if low and low not in STOPWORDS and low not in QUESTION_WORDS and len(low) > 1:
            out.append(low)
    return out


def _verb_lemmas(low_words: list[str]) -> list[tuple[str, str]]:
    """(surface, lemma) of the words that look like verbs the lexicon knows; a verb followed by its
    particle means what the extractor reads it as ("picked up" -> start, "put together" -> make)."""
    try:
        from memrepo.graph import lexicon as lx
    except ImportError:  # the graph package is optional for planning
        return []
    out = []
    for i, w in enumerate(low_words):
        nxt = low_words[i + 1] if i + 1 < len(low_words) else ""
        candidates = [lx.IRREGULAR.get(w, w)]
        for suffix, repl in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", ""), ("es", ""), ("s", ""),
                             ("ied", "y"), ("ies", "y")):
            if w.endswith(suffix) and len(w) - len(suffix) >= 2:
                stem = w[: len(w) - len(suffix)] + repl
                candidates.append(stem)
                if len(stem) > 2 and stem[-1] == stem[-2]:
                    candidates.append(stem[:-1])  # "planned" -> "plann" -> "plan"
        phrasal = next((lx.PHRASAL[(c, nxt)] for c in candidates if (c, nxt) in lx.PHRASAL), None)
        if phrasal is not None and phrasal in lx.VERBS:
            out.append((w, phrasal))
            continue
        for lemma in candidates:
            if lemma in lx.VERBS and lemma not in ("be", "do", "have", "get"):
                out.append((w, lemma))
                break
    return out


def relations_of(question: str) -> list[Relation]:
    """Relation families the question's verbs map to (the extractor's own verb lexicon)."""
    try:
        from memrepo.graph import lexicon as lx
    except ImportError:
        return []
    found: dict[str, Relation] = {}
    low = [w.lower() for w in words(question)]
    for surface, lemma in _verb_lemmas(low):
        _family, subj, obj = lx.VERBS[lemma]
        family = lx.predicate_of(lemma)  # what the extractor writes for this verb ("make", not "create")
        rel = found.setdefault(family, Relation(family, [], subj, obj))
        if surface not in rel.surface:
            rel.surface.append(surface)
    return list(found.values())


def operator_of(question: str, names: list[str]) -> str:
    q = question.strip()
    if _COUNT_RE.search(q) and not _PRICE_RE.search(q):
        return "count"
    if _INTERSECTION_RE.search(q) and (len(names) >= 2 or re.search(r"\bboth\b|\bin common\b", q, re.I)):
        return "intersection"
    if _TEMPORAL_RE.search(q):
        return "temporal"
    if _LIST_RE.search(q):
        return "list-union"
    return "single"


def answer_types_of(question: str, operator: str) -> list[str]:
    q = question.lower().strip()
    types = []
    if operator == "count":
        types.append("count")
    if _PRICE_RE.search(q):
        types.append("price")
    if q.startswith("when") or re.search(r"\bwhat (year|month|date|day|time|week)\b", q):
        types.append("date")
    if re.search(r"\bhow long\b", q):
        types.append("duration")
    if q.startswith("where") or re.search(r"\bwhere\b|\bwhat (city|country|place|town|state)\b", q):
        types.append("location")
    if q.startswith(("who ", "whom ")) or re.search(r"\bwho\b", q):
        types.append("person")
    if q.startswith("why"):
        types.append("reason")
    if not types:
        types.append("thing")
    return types


def time_of(question: str) -> dict[str, Any]:
    low = question.lower()
    out: dict[str, Any] = {}
    months = [m for m in MONTHS if re.search(rf"\b{m}\b", low) and not (m == "may" and re.search(r"\bmay\s+(i|we|you|he|she|they)\b", low))]
    if months:
        out["months"] = months
    years = [m.group(0) for m in _YEAR_RE.finditer(question)]
    if years:
        out["years"] = years
    for order in ("before", "after", "since", "until", "first", "last", "recently"):
        if re.search(rf"\b{order}\b", low):
            out.setdefault("order", []).append(order)
    dates = _dates_named(question)
    if dates:
        out["dates"] = dates
    return out


def _dates_named(question: str) -> list[str]:
    """The calendar dates the question names ("on 9 November, 2022" -> 2022-11-09, "in June 2023" ->
    2023-06, "in 2022" -> 2022), read by the extractor's own date rules; relative ones ("last week")
    have no day to resolve against and are left out."""
    try:
        from memrepo.graph.offline import find_literals
    except ImportError:
        return []
    _text, literals = find_literals(question, None)
    return list(dict.fromkeys(lit.value for lit in literals if lit.key == "date" and lit.value
                              and re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", lit.value)))


def names_of(question: str) -> list[str]:
    """Capitalised word runs that are not the question's first word (unless a name there)."""
    names: list[str] = []
    toks = words(question)
    run: list[str] = []
    for i, w in enumerate(toks + [""]):
        capital = bool(w) and w[0].isupper() and (i > 0 or w.lower() not in QUESTION_WORDS | STOPWORDS)
        if capital and w.lower() not in STOPWORDS:
            run.append(re.sub(r"['’]s$", "", w))
            continue
        if run:
            names.append(" ".join(run))
            run = []
    return list(dict.fromkeys(names))


def plan(question: str) -> Plan:
    """Π(q): the deterministic plan of ``question``."""
    names = names_of(question)
    operator = operator_of(question, names)
    base, cited = C.budget(operator)
    relations = relations_of(question)
    terms = content_terms(question)
    constraints = [m.group(1) for m in _QUOTED_RE.finditer(question)]
    name_words = {w.lower() for n in names for w in n.split()}
    constraints += [t for t in terms if t not in name_words]
    return Plan(
        question=question,
        operator=operator,
        relations=relations,
        constraints=list(dict.fromkeys(constraints)),
        answer_types=answer_types_of(question, operator),
        time=time_of(question),
        base_budget=base,
        cited_budget=cited,
        names=names,
        terms=list(dict.fromkeys(terms)),
        direction="object" if _ROLE_OBJECT_RE.search(question) else "",
    )
