"""The same-entity judge (role ``judge``): does a candidate pair denote one entity, and which name is kept?

The reply is constrained to the pair: ``representative`` must be one of the two
submitted names; anything else (an invented name) is not a merge. The offline
judge is deterministic and conservative: it says "same" only for the same name
written differently, or for a name that only adds a material word before the
same multi-word head ("steel bottle" / "stainless steel bottle"), and never when
numbers differ.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["same", "representative", "reason"],
    "properties": {
        "same": {"type": "boolean"},
        "representative": {"type": ["string", "null"]},
        "reason": {"type": "string"},
    },
}

#: Words that describe what a thing is made of: adding one does not name a different thing.
MATERIALS = frozenset({
    "stainless", "steel", "metal", "metallic", "wooden", "wood", "plastic", "glass", "leather", "ceramic", "cotton",
    "wool", "woolen", "woollen", "silk", "aluminum", "aluminium", "copper", "bamboo", "rubber", "iron", "cast",
    "porcelain", "titanium", "carbon", "denim", "linen", "canvas", "vinyl", "brass", "bronze", "clay", "stone",
    "insulated", "reusable",
})


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
    if (len(short) >= 2 and extra and short[-1] == long_[-1] and all(word in MATERIALS for word in extra)
            and variables.get("type") in ("object", "concept")):
        return {"same": True, "representative": _keep(a, b),
                "reason": f"one name only adds the material word(s) {' '.join(extra)!r} to the other"}
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
