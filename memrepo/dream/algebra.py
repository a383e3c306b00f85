"""The merge algebra of a confirmed merge a -> b (M§2.5 "Lossless structural merge").

Union of the episodic and semantic row ids, union of aliases (names), sum of
mention counts, maximum admission score. Union, sum and max are commutative and
associative, so repeated merges give the same reachable evidence in any order.

In the repository a merge is an ``owl:sameAs`` statement that the graph index
resolves; this module states what the resolved anchor must hold, and the review
uses it to show each merge's result before it is approved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AnchorSummary:
    """What an anchor class carries: the rows behind it, its names, its mention count, its admission score."""

    iris: frozenset[str] = field(default_factory=frozenset)
    rows: frozenset[str] = field(default_factory=frozenset)
    names: frozenset[str] = field(default_factory=frozenset)
    mentions: int = 0
    score: float | None = None

    @property
    def episodic(self) -> list[str]:
        return sorted(r for r in self.rows if r.startswith("ep-"))

    @property
    def semantic(self) -> list[str]:
        return sorted(r for r in self.rows if not r.startswith("ep-"))

    def to_dict(self) -> dict[str, Any]:
        return {"iris": sorted(self.iris), "rows": sorted(self.rows), "names": sorted(self.names),
                "mentions": self.mentions, "score": self.score}


def merge(a: AnchorSummary, b: AnchorSummary) -> AnchorSummary:
    """The anchor a -> b becomes: nothing either side had is lost."""
    scores = [s for s in (a.score, b.score) if s is not None]
    return AnchorSummary(
        iris=a.iris | b.iris,
        rows=a.rows | b.rows,
        names=a.names | b.names,
        mentions=a.mentions + b.mentions,
        score=max(scores) if scores else None,
    )


def lossless(before: list[AnchorSummary], after: AnchorSummary) -> bool:
    """True if every row and name of every merged anchor is still behind the result."""
    return all(x.rows <= after.rows and x.names <= after.names for x in before)
