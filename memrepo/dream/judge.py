"""The same-entity judge (role ``judge``): does a candidate pair denote one entity, and which name is kept?

The reply is constrained to the pair: ``representative`` must be one of the two
submitted names; anything else (an invented name) is not a merge. The offline
judge is deterministic and conservative: it says "same" only for the same name
written differently, or for a location's name with and without its geographic
title ("Vesuvius" / "Mount Vesuvius") when the records behind the bare name say
what the title says (a crater, a summit, a climb: "Mount Kenya" is not Kenya,
"Lake Geneva" not Geneva); never when numbers differ, and never when one name adds
a modifier the other lacks ("steel bottle" / "stainless steel bottle", "Paris" /
"Paris, Texas"): a modifier is what tells two things apart. The pairs it sees
are of one type (``candidate_pairs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memrepo.nlp import Analyzer, analyzer

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["same", "representative", "reason"],
    "properties": {
        "same": {"type": "boolean"},
        "representative": {"type": ["string", "null"]},
        "reason": {"type": "string"},
    },
}



@dataclass(frozen=True)
class Verdict:
    """A validated reply: ``same`` with the kept name, or not; ``valid`` False when the reply broke the rules."""

    same: bool
    representative: str | None
    reason: str
    valid: bool = True


def _rows(item: dict[str, Any]) -> int:
    return int(item.get("records") or 0)


def _keep(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The kept name: more records behind it, then the longer (more specific) name, then the first in order."""
    return sorted([a, b], key=lambda x: (-_rows(x), -len(x["name"]), x["name"]))[0]["name"]


def _added(short: tuple[str, ...], long_: tuple[str, ...]) -> list[str] | None:
    """The words ``long_`` adds to ``short`` if ``short`` is a subsequence of it, else None."""
    extra, i = [], 0
    for word in long_:
        if i < len(short) and word == short[i]:
            i += 1
        else:
            extra.append(word)
    return extra if i == len(short) else None


def judge_offline(variables: dict[str, Any], reader: Analyzer | None = None) -> dict[str, Any]:
    """The deterministic, conservative offline judge (the ``offline`` function of the ``judge`` role).

    ``reader`` compares the names (None: the default analyzer, ``ANALYZERS["rules"]``).
    """
    reader = reader or analyzer()
    a, b = variables["a"], variables["b"]
    ta, tb = reader.name_words(a["name"]), reader.name_words(b["name"])
    if re.findall(r"\d+", " ".join(ta)) != re.findall(r"\d+", " ".join(tb)):
        return {"same": False, "representative": None, "reason": "the names carry different numbers"}
    if ta and "".join(ta) == "".join(tb):
        return {"same": True, "representative": _keep(a, b),
                "reason": "the same name written differently (case, accents, spacing or punctuation)"}
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    extra = _added(short, long_)
    bare, titled = (a, b) if short is ta else (b, a)
    found = reader.geographic_title(titled["name"])
    if short and found and reader.name_words(found[1]) == short and variables.get("type") == "location":
        title = found[0]
        if reader.says_title(title, (str(line) for line in bare.get("evidence") or ())):
            return {"same": True, "representative": _keep(a, b),
                    "reason": f"the same place with and without its title {title!r} (the records of "
                              f"{bare['name']!r} call it one)"}
        return {"same": False, "representative": None,
                "reason": f"one name adds the title {title!r} and nothing behind {bare['name']!r} says it is "
                          f"one: maybe a different place"}
    if extra:
        longer, shorter = (b, a) if long_ is tb else (a, b)
        return {"same": False, "representative": None,
                "reason": f"{longer['name']!r} adds the modifier {' '.join(extra)!r} to {shorter['name']!r}: "
                          f"a modifier tells two things apart"}
    return {"same": False, "representative": None,
            "reason": "not shown to be the same entity (the offline judge merges only name variants)"}


def validate(reply: dict[str, Any], name_a: str, name_b: str) -> Verdict:
    """Hold a reply to the pair: a "same" verdict must keep one of the two submitted names exactly."""
    reason = str(reply.get("reason") or "").strip()
    if not reply.get("same"):
        return Verdict(False, None, reason or "not the same entity")
    rep = reply.get("representative")
    if rep not in (name_a, name_b):
        return Verdict(False, None, f"invalid verdict: representative {rep!r} is neither {name_a!r} nor {name_b!r}",
                       valid=False)
    return Verdict(True, rep, reason or "the same entity")
