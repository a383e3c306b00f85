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
import unicodedata
from dataclasses import dataclass
from typing import Any

from memrepo.nlp.lexicon import GEOGRAPHIC_TITLES

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


def _tokens(name: str) -> list[str]:
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain)


def _rows(item: dict[str, Any]) -> int:
    return int(item.get("records") or 0)


def _keep(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The kept name: more records behind it, then the longer (more specific) name, then the first in order."""
    return sorted([a, b], key=lambda x: (-_rows(x), -len(x["name"]), x["name"]))[0]["name"]


def _added(short: list[str], long_: list[str]) -> list[str] | None:
    """The words ``long_`` adds to ``short`` if ``short`` is a subsequence of it, else None."""
    extra, i = [], 0
    for word in long_:
        if i < len(short) and word == short[i]:
            i += 1
        else:
            extra.append(word)
    return extra if i == len(short) else None


def _supports(side: dict[str, Any], words: frozenset[str]) -> bool:
    """Whether the evidence behind ``side`` (its records' texts) uses one of ``words``."""
    return any(word in words for line in side.get("evidence") or () for word in _tokens(str(line)))


def judge_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """The deterministic, conservative offline judge (the ``offline`` function of the ``judge`` role)."""
    a, b = variables["a"], variables["b"]
    ta, tb = _tokens(a["name"]), _tokens(b["name"])
    if re.findall(r"\d+", " ".join(ta)) != re.findall(r"\d+", " ".join(tb)):
        return {"same": False, "representative": None, "reason": "the names carry different numbers"}
    if ta and "".join(ta) == "".join(tb):
        return {"same": True, "representative": _keep(a, b),
                "reason": "the same name written differently (case, accents, spacing or punctuation)"}
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    extra = _added(short, long_)
    if short and len(extra or ()) == 1 and long_[0] in GEOGRAPHIC_TITLES and long_[1:] == short \
            and variables.get("type") == "location":
        bare = a if ta == short else b
        title = long_[0]
        if _supports(bare, GEOGRAPHIC_TITLES[title]):
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
