"""The constants of semantic AutoDream (DESIGN.md §3 "AutoDream, semantic"; M§2.5, A.5)."""

from __future__ import annotations

#: Identity-stable types: only anchors of these types are ever paired (events, dates, ... never are).
ELIGIBLE_TYPES = ("person", "organization", "location", "object", "concept")
#: NN_4: the nearest entries of the name index, the anchor itself included.
NEIGHBOURS = 4
#: Cosine of two anchor names needed to form a pair (the index score 0.93 on the (1+cos)/2 scale).
MIN_COSINE = 0.86
#: Pairs verified at most per round.
CAP_INTERMEDIATE = 80
CAP_FINAL = 120
CAP_REPAIR = 60
#: How many earlier runs' frontier commits are compared with HEAD to find the new frontier.
FRONTIER_RUNS = 8
BRANCH_PREFIX = "dream/"
JUDGE_ROLE = "judge"
