"""One semantic Dream run: frontier, candidate pairs, capped verification, one decision file on a review branch.

Rounds (M A.5): an intermediate run verifies at most 80 unseen pairs whose source
is an eligible anchor of the frontier; a final run (``final=True``) also takes
as sources the eligible anchors that no earlier run used, verifies at most 120,
and, if it merged anything, one repair round verifies at most 60 more pairs
around the touched representatives. Explicit rejections are cached (by
:func:`memrepo.dream.decisions.cache_key`); a pair a round did not reach within
its cap is not rejected, and its source is not marked as used, so the final
round considers it again.

Cost: the frontier is the tree diff between the commit the last runs examined
and HEAD (only semantic graph files added since), sources come from that diff,
and each source costs one ANN search; nothing here scans all records.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from memrepo import records as rec
from memrepo.dream.algebra import AnchorSummary, merge
from memrepo.dream.constants import (
    BRANCH_PREFIX,
    CAP_FINAL,
    CAP_INTERMEDIATE,
    CAP_REPAIR,
    ELIGIBLE_TYPES,
    FRONTIER_RUNS,
    JUDGE_ROLE,
    MIN_COSINE,
    NEIGHBOURS,
)
from memrepo.dream.decisions import COUNTS, Decision, DreamRun, Ledger, cache_key, run_turtle, runs_in
from memrepo.dream.judge import JUDGE_SCHEMA, judge_offline, validate
from memrepo.errors import MemrepoError
from memrepo.graph.model import FRAMES_FOLDER, digest

if TYPE_CHECKING:
    from memrepo.context import Context
    from memrepo.graph.reader import GraphReader
    from memrepo.index.vectors import AnchorVectors
    from memrepo.llm import Backend
    from memrepo.store.git import GitStore, Snapshot

log = logging.getLogger("memrepo.dream")
EVIDENCE = 3  # records of evidence per anchor shown to the judge and in a review


@dataclass
class DreamResult:
    """What a run did: the branch and commit it wrote (if any), its counts and caps, and the run itself."""

    branch: str | None
    commit: str | None
    applied: str | None  # the merge commit on main when --apply was given
    round: str
    caps: dict[str, int]
    counts: dict[str, int]
    frontier_records: int
    sources: int
    run: DreamRun | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch, "commit": self.commit, "applied": self.applied, "round": self.round,
            "caps": self.caps, "counts": self.counts, "frontier_records": self.frontier_records,
            "sources": self.sources, "merges": [d.to_dict() for d in self.run.merges] if self.run else [],
            "rejections": [d.to_dict() for d in self.run.rejections] if self.run else [],
            "decision_file": self.run.path if self.run else None, "message": self.message,
        }


@dataclass
class Pair:
    first: str
    second: str
    cosine: float
    source: str


@dataclass
class _State:
    """The graph as this run sees it: the index's sameAs closure plus the merges made so far in the run."""

    reader: "GraphReader"
    snapshot: "Snapshot"
    parent: dict[str, str] = field(default_factory=dict)
    summaries: dict[str, AnchorSummary] = field(default_factory=dict)
    infos: dict[str, Any] = field(default_factory=dict)

    def rep(self, anchor: str) -> str:
        x = self.reader.representative(anchor)
        while x in self.parent:
            x = self.parent[x]
        return x

    def info(self, anchor: str) -> Any:
        rep = self.rep(anchor)
        if rep not in self.infos:
            self.infos[rep] = self.reader.anchor(rep)
        return self.infos[rep]

    def summary(self, anchor: str) -> AnchorSummary:
        rep = self.rep(anchor)
        if rep not in self.summaries:
            info = self.info(rep)
            self.summaries[rep] = AnchorSummary(
                iris=frozenset([rep, *info.members]), rows=frozenset(info.rows),
                names=frozenset([info.name, *info.aliases]), mentions=len(info.rows))
        return self.summaries[rep]

    def union(self, alias: str, rep: str) -> None:
        merged = merge(self.summary(alias), self.summary(rep))
        a, r = self.rep(alias), self.rep(rep)
        self.parent[a] = r
        self.summaries[r] = merged
        self.summaries.pop(a, None)

    def eligible(self, anchor: str) -> bool:
        info = self.info(anchor)
        return info.type in ELIGIBLE_TYPES and bool(self.summary(anchor).semantic)


def now_utc() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def iso_time(value: str | None) -> str:
    """``value`` (or now) as the xsd:dateTime written in decision files (``Z`` spelled ``+00:00``, as rdflib reads it)."""
    from datetime import datetime

    if not value:
        return now_utc()
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
    except ValueError as exc:
        raise MemrepoError(f"time: {value!r} is not an ISO 8601 date-time") from exc


# --- frontier -------------------------------------------------------------------------------


def _is_semantic_graph(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith(FRAMES_FOLDER + "/") and name.endswith(".ttl") and rec.type_of_id(name[:-4]) == "semantic"


def frontier_paths(store: "GitStore", head: str, ledger: Ledger) -> list[str]:
    """Graph files of semantic records that no earlier run covered: the tree diff since the recorded frontiers."""
    from memrepo.index.base import tree_diff

    known: list[str] = []
    for _, commit in ledger.frontiers:
        if commit not in known and store.has_object(commit):
            known.append(commit)
        if len(known) >= FRONTIER_RUNS:
            break
    if not known:
        return sorted(p for p, _ in store.snapshot(head.encode()).walk(FRAMES_FOLDER) if _is_semantic_graph(p))
    found: set[str] | None = None
    for commit in known:
        added = {c.path for c in tree_diff(store, commit, head) if c.new is not None and _is_semantic_graph(c.path)}
        found = added if found is None else found & added
    return sorted(found or ())


def read_ledger(store: "GitStore", snapshot: "Snapshot") -> Ledger:
    """Decisions on main plus those waiting on open review branches."""
    ledger = Ledger()
    ledger.add(runs_in(snapshot))
    for branch in open_branches(store):
        ledger.add(runs_in(store.snapshot(branch.encode()), branch_decisions(store, branch, snapshot)),
                   open_branch=True)
    return ledger


def open_branches(store: "GitStore") -> list[str]:
    """Full refs of ``dream/...`` branches not merged into HEAD's branch, sorted."""
    from memrepo.store.merge import is_merged

    return [ref for ref in store.refs_under("refs/heads/" + BRANCH_PREFIX) if not is_merged(store, ref.encode())]


def branch_decisions(store: "GitStore", ref: str, main: "Snapshot") -> list[tuple[str, str]]:
    """(path, blob) of the decision files on branch ``ref`` that main does not have."""
    from memrepo.graph.model import DECISIONS_FOLDER

    snap = store.snapshot(ref.encode())
    return [(p, b) for p, b in snap.walk(DECISIONS_FOLDER) if main.blob_id(p) != b]


# --- sources and pairs ----------------------------------------------------------------------


def _anchors_in(reader: "GraphReader", paths: list[str]) -> list[str]:
    return reader.anchors_in_files(paths, sorted(ELIGIBLE_TYPES))


def _unused_anchors(reader: "GraphReader", used: set[str]) -> list[str]:
    return sorted(set(reader.anchors_mentioned_by("se-", sorted(ELIGIBLE_TYPES))) - used)


def candidate_pairs(state: _State, vectors: "AnchorVectors", sources: list[str]) -> list[Pair]:
    """C_Δ (M eq. 13): for each eligible source, NN_4 by name, cosine >= 0.86, same eligible type, both semantic."""
    pairs: dict[tuple[str, str], Pair] = {}
    for source in sources:
        a = state.rep(source)
        if not state.eligible(a):
            continue
        name = vectors.name(source) or state.info(a).name
        for other, cosine in vectors.search(name, k=NEIGHBOURS, min_cosine=MIN_COSINE):
            b = state.rep(other)
            if b == a or state.info(b).type != state.info(a).type or not state.eligible(b):
                continue
            key = (min(a, b), max(a, b))
            if key not in pairs or cosine > pairs[key].cosine:
                pairs[key] = Pair(key[0], key[1], cosine, source)
    return sorted(pairs.values(), key=lambda p: (-p.cosine, p.first, p.second))


# --- the judge ------------------------------------------------------------------------------


def _evidence(snapshot: "Snapshot", summary: AnchorSummary) -> list[str]:
    out = []
    for record_id in (summary.semantic + summary.episodic)[:EVIDENCE]:
        try:
            data = snapshot.read(rec.record_path(record_id))
            if data is not None:
                record = rec.parse(data, rec.record_path(record_id))
                out.append(f"{record_id}: {record.summary or record.text[:160]}")
        except MemrepoError:
            continue
    return out


def _side(state: _State, anchor: str) -> dict[str, Any]:
    info, summary = state.info(anchor), state.summary(anchor)
    return {"name": info.name, "aliases": sorted(summary.names - {info.name}), "records": len(summary.rows),
            "evidence": _evidence(state.snapshot, summary)}


@dataclass
class _Round:
    name: str
    cap: int
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    unreached: set[str] = field(default_factory=set)  # sources with a pair skipped by the cap
    failed: str | None = None  # the judge's error that stopped the round


def _verify(state: _State, pairs: list[Pair], rnd: _Round, ledger: Ledger, backend: "Backend", now: str,
            decided: set[str], decisions: list[Decision], progress: Callable[[int, int], None] | None) -> None:
    for pair in pairs:
        a, b = state.rep(pair.first), state.rep(pair.second)
        if a == b:
            continue  # merged earlier in this run
        ia, ib = state.info(a), state.info(b)
        key = cache_key(ia.name, ib.name, ia.type)
        if key in decided:
            continue
        rnd.counts["considered"] += 1
        if key in ledger.rejected:
            rnd.counts["cached"] += 1
            continue
        if key in ledger.pending:
            rnd.counts["pending"] += 1
            continue
        if rnd.counts["verified"] >= rnd.cap:
            rnd.counts["skipped_by_cap"] += 1
            rnd.unreached.add(pair.source)
            continue
        decided.add(key)
        rnd.counts["verified"] += 1
        side_a, side_b = _side(state, a), _side(state, b)
        variables = {"type": ia.type, "cosine": round(pair.cosine, 4), "a": side_a, "b": side_b}
        try:
            reply = backend.run(JUDGE_ROLE, variables, JUDGE_SCHEMA, offline=judge_offline)
        except MemrepoError as exc:  # the endpoint is down or keeps answering nonsense: stop, keep what was decided
            rnd.counts["verified"] -= 1
            decided.discard(key)
            rnd.failed = f"the judge failed on {ia.name!r} / {ib.name!r}: {exc}"
            log.warning("dream: %s; stopping this round", rnd.failed)
            return
        verdict = validate(reply, ia.name, ib.name)
        if progress:
            progress(rnd.counts["verified"], min(rnd.cap, len(pairs)))
        if not verdict.valid:
            log.warning("dream: %s", verdict.reason)
            rnd.counts["invalid"] += 1
            continue
        common = dict(first=a, first_name=ia.name, second=b, second_name=ib.name, type=ia.type,
                      cosine=round(pair.cosine, 4), rationale=verdict.reason, model=backend.model_id, time=now,
                      first_records=side_a["records"], second_records=side_b["records"])
        if verdict.same:
            rep = a if verdict.representative == ia.name else b
            alias = b if rep == a else a
            decisions.append(Decision(kind="merge", verdict="same", alias=alias, representative=rep, **common))
            state.union(alias, rep)
            rnd.counts["merged"] += 1
        else:
            decisions.append(Decision(kind="reject", verdict="different", **common))
            rnd.counts["rejected"] += 1


# --- the run ----------------------------------------------------------------------------------


def dream(ctx: "Context", *, backend: "Backend", final: bool = False, apply: bool = False,
          now: str | None = None, caps: dict[str, int] | None = None,
          progress: Callable[[int, int], None] | None = None) -> DreamResult:
    """Run semantic AutoDream once over the frontier and propose its merges on a new review branch.

    Args:
        backend: the model backend; its ``judge`` role decides each pair (offline: :func:`judge_offline`).
        final: the final round (cap 120, frontier plus never-used anchors, then a repair round of 60).
        apply: merge the review branch into HEAD's branch at once (and delete it).
        now: the time recorded in the decision file (ISO 8601 UTC; default: now).
        caps: override the round caps (``intermediate``, ``final``, ``repair``), for tests and benchmarks.

    Returns:
        The branch, its commit, the counts (considered, verified, merged, rejected, invalid,
        skipped_by_cap, cached, pending) and the caps. No branch when there was nothing to examine.
    """
    from memrepo.graph.names import open_names
    from memrepo.graph.reader import open_reader

    now = iso_time(now)
    cap = {"intermediate": CAP_INTERMEDIATE, "final": CAP_FINAL, "repair": CAP_REPAIR, **(caps or {})}
    round_name = "final" if final else "intermediate"
    shown_caps = {"final": cap["final"], "repair": cap["repair"]} if final else {"intermediate": cap["intermediate"]}
    store = ctx.store
    head_id = store.head()
    empty = DreamResult(None, None, None, round_name, shown_caps, dict.fromkeys(COUNTS, 0), 0, 0)
    if head_id is None:
        return empty
    head = head_id.decode()
    snapshot = store.snapshot(head_id)
    ledger = read_ledger(store, snapshot)
    paths = frontier_paths(store, head, ledger)
    reader = open_reader(store, ctx.settings, head)
    vectors = None
    try:
        state = _State(reader, snapshot)
        sources = _anchors_in(reader, paths)
        if final:
            sources += [a for a in _unused_anchors(reader, ledger.sources) if a not in set(sources)]
        if not paths and not sources:
            empty.message = "nothing new since the last run"
            return empty
        vectors = open_names(store, ctx.settings, head)
        decided: set[str] = set()
        decisions: list[Decision] = []
        main = _Round(round_name, cap[round_name])
        _verify(state, candidate_pairs(state, vectors, sources), main, ledger, backend, now, decided, decisions,
                progress)
        counts = dict(main.counts)
        unreached = set(main.unreached)
        failed = main.failed
        if final and main.counts["merged"] and not failed:
            touched = sorted({d.representative for d in decisions if d.kind == "merge" and d.representative})
            names = sorted({i for t in touched for i in state.summary(t).iris})
            repair = _Round("repair", cap["repair"])
            _verify(state, candidate_pairs(state, vectors, names), repair, ledger, backend, now, decided, decisions,
                    progress)
            counts = {k: counts[k] + repair.counts[k] for k in COUNTS}
            unreached |= repair.unreached
            failed = repair.failed
        used = sorted(s for s in sources if s not in unreached) if not failed else []
    except sqlite3.Error as exc:
        raise MemrepoError(f"dream: cannot read the graph index ({exc}); run `memrepo reindex`") from exc
    finally:
        reader.close()
        if vectors is not None and vectors.cache is not None:
            vectors.cache.close()
    # The time is part of the id: two clones that dream at the same commit write two files, never one path twice.
    run_id = digest(ctx.settings.namespace, "dream", head, round_name, now,
                    *sorted(f"{d.kind}:{d.key}:{d.alias}:{d.representative}" for d in decisions), length=12)
    if failed and not decisions:
        raise MemrepoError(f"dream: {failed}; nothing was written")
    # A round the judge stopped does not advance the frontier: the next run sees the same records again,
    # and the pairs decided here are answered from the cache (rejections) or wait on this branch (merges).
    run = DreamRun(run_id=run_id, round=round_name, frontier_commit=None if failed else head,
                   model=backend.model_id, time=now, sources=used, counts=counts, decisions=decisions)
    result = DreamResult(None, None, None, round_name, shown_caps, counts, len(paths), len(sources), run)
    if failed:
        result.message = f"stopped early: {failed}"
    if not decisions and not paths and not used:
        result.message = "nothing new since the last run"
        return result
    if not decisions:
        # Nothing to review: the run (its frontier) is recorded on the current branch, not on an empty review.
        commit = store.commit({run.path: run_turtle(run)}, review_message(run, None, len(paths), shown_caps))
        result.commit = commit.decode() if commit else None
        result.message = result.message or "no merge or rejection to review; the run is recorded on the current branch"
        return result
    branch = f"{BRANCH_PREFIX}{now[:10]}-{run_id[:8]}"
    message = review_message(run, branch, len(paths), shown_caps)
    ref = f"refs/heads/{branch}".encode()
    store.add_ref(ref.decode(), head_id)
    commit = store.commit({run.path: run_turtle(run)}, message, ref=ref, sync_worktree=False)
    result.branch, result.commit = branch, commit.decode() if commit else (store.ref(ref.decode()) or "")
    if apply:
        from memrepo.dream.review import approve

        result.applied = approve(ctx, branch)
    return result


def review_message(run: DreamRun, branch: str | None, frontier: int, caps: dict[str, int]) -> str:
    """The commit message of a review branch: a review a person can read in `git log` or on a Git host.

    ``branch`` None: a run with nothing to review, recorded on the current branch.
    """
    c = run.counts
    lines = [f"Dream ({run.round} round): {len(run.merges)} merge{'s' if len(run.merges) != 1 else ''} proposed, "
             f"{len(run.rejections)} rejected", ""]
    if run.frontier_commit:
        lines.append(f"Frontier: {frontier} semantic record{'s' if frontier != 1 else ''} since the last run "
                     f"(graph at {run.frontier_commit[:12]}); {len(run.sources)} source anchors done.")
    else:
        lines.append(f"Frontier: {frontier} semantic records, not advanced: the judge stopped this run early.")
    lines.append(f"Pairs: considered {c['considered']}, verified {c['verified']}, merged {c['merged']}, "
                 f"rejected {c['rejected']}, invalid {c['invalid']}, skipped by cap {c['skipped_by_cap']}, "
                 f"cached {c['cached']}, pending review {c['pending']}.")
    lines.append("Caps: " + ", ".join(f"{k} {v}" for k, v in caps.items()) + f". Judge: {run.model}.")
    if run.merges:
        lines += ["", "Merges (alias -> kept representative):"]
        for d in run.merges:
            alias_records = d.first_records if d.alias == d.first else d.second_records
            rep_records = d.second_records if d.alias == d.first else d.first_records
            lines += [f"- \"{d.alias_name}\" -> \"{d.representative_name}\" ({d.type}, cosine {d.cosine:.3f})",
                      f"  records: {alias_records} behind \"{d.alias_name}\", {rep_records} behind "
                      f"\"{d.representative_name}\"",
                      f"  verdict: same entity: {d.rationale}"]
    if run.rejections:
        lines += ["", "Rejected (cached, not asked again):"]
        for d in run.rejections:
            lines.append(f"- \"{d.first_name}\" / \"{d.second_name}\" ({d.type}, cosine {d.cosine:.3f}; "
                         f"{d.first_records} / {d.second_records} records): {d.rationale}")
    lines += ["", f"Decision file: {run.path}"]
    if branch is not None:
        lines.append(f"Approve: memrepo review approve {branch}   Reject: memrepo review reject {branch}")
    return "\n".join(lines) + "\n"
