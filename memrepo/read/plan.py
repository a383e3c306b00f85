"""The deterministic query planner Π(q) (MIRIX-2.0 eq. 9, §2.4).

Π(q) = (operator, relation families with their surface forms, constraints,
answer types, time constraints, B_B, B_R). Same question, same plan: no model,
no state. What the question asks for, its operator, names and words are read by
the analyzer's one question classifier (``Analyzer.question``); the plan adds
the relation families of its verbs (the extractor's verb lexicon), the calendar
dates it names (the analyzer's literal stage) and the operator's budgets.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from memrepo.nlp import analyzer
from memrepo.nlp import lexicon as lx
from memrepo.nlp.questions import content_terms, names_of, words
from memrepo.read import constants as C

__all__ = ["Plan", "Relation", "content_terms", "names_of", "plan", "relations_of", "time_of", "words"]


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


def _verb_lemmas(low_words: list[str]) -> list[tuple[str, str]]:
    """(surface, lemma) of the words that look like verbs the lexicon knows; a verb followed by its
    particle means what the extractor reads it as ("picked up" -> start, "put together" -> make)."""
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
    found: dict[str, Relation] = {}
    low = [w.lower() for w in words(question)]
    for surface, lemma in _verb_lemmas(low):
        _family, subj, obj = lx.VERBS[lemma]
        family = lx.predicate_of(lemma)  # what the extractor writes for this verb ("make", not "create")
        rel = found.setdefault(family, Relation(family, [], subj, obj))
        if surface not in rel.surface:
            rel.surface.append(surface)
    return list(found.values())


def time_of(question: str) -> dict[str, Any]:
    """The question's time constraint: its months, years and order words, and the calendar dates it names."""
    out = {k: list(v) for k, v in analyzer().question(question).time.items()}  # a copy: the reading is cached
    dates = _dates_named(question)
    if dates:
        out["dates"] = dates
    return out


def _dates_named(question: str) -> list[str]:
    """The calendar dates the question names ("on 9 November, 2022" -> 2022-11-09, "in June 2023" ->
    2023-06, "in 2022" -> 2022), read by the extractor's own date rules; relative ones ("last week")
    have no day to resolve against and are left out."""
    _text, literals = analyzer().literals(question, None)
    return list(dict.fromkeys(lit.value for lit in literals if lit.key == "date" and lit.value
                              and re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", lit.value)))


def plan(question: str) -> Plan:
    """Π(q): the deterministic plan of ``question`` (the analyzer's reading of it, ``Analyzer.question``,
    with the relation families of its verbs, the dates it names and the operator's budgets)."""
    q = analyzer().question(question)
    base, cited = C.budget(q.operator)
    name_words = {w.lower() for n in q.names for w in n.split()}
    constraints = list(q.quoted) + [t for t in q.terms if t not in name_words]
    return Plan(
        question=question,
        operator=q.operator,
        relations=relations_of(question),
        constraints=list(dict.fromkeys(constraints)),
        answer_types=list(q.answer_types),
        time=time_of(question),
        base_budget=base,
        cited_budget=cited,
        names=list(q.names),
        terms=list(q.terms),
        direction=q.direction,
    )
