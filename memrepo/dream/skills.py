"""Procedural AutoDream (MIRIX-2.0 §2.5, A.5; Algorithm 1 lines 27-29): skills from task sessions, for review.

A run takes the pending task sessions (``distillation: pending``; at most
:data:`CAP_SESSIONS`, and no more once :data:`CAP_EXPERIENCES` experiences are
written), distills each (:mod:`.distill`), writes the experiences as procedural
records under ``procedural/experiences/<YYYY>/<MM>/``, lets the curator
(:mod:`.curate`) edit the skills, and commits all of it, the sessions marked
``distillation: distilled`` and one run file ``procedural/decisions/<YYYY>/<MM>/<run-id>.json``
(every decision, each added step with its checked citations) as ONE commit on a
new branch ``dream/skills-<date>-<id>``, whose message is the review. The
current branch does not move.

Cost: the sessions to look at are those the tree diff since the last run's
commit touched under ``procedural/experiences/`` (plus those an earlier run left
for a cap), so a run reads the new sessions, the skills and the run files, not
the memory.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from memrepo import records as rec
from memrepo.dream import curate, distill
from memrepo.errors import MemrepoError, RecordError
from memrepo.graph.model import digest

if TYPE_CHECKING:
    from memrepo.llm import Backend
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore, Snapshot

log = logging.getLogger("memrepo.dream")

BRANCH_PREFIX = "dream/skills-"
RUNS_FOLDER = "procedural/decisions"
EXPERIENCES_FOLDER = rec.FOLDER["procedural"]
CAP_SESSIONS = 20
CAP_EXPERIENCES = 40
AUTO_PENDING = 5  # a proposal is made on its own once this many sessions are pending (M A.5)
COUNTS = ("sessions", "success", "failure", "unclear", "downgraded", "skipped_by_cap", "experiences", "reuse",
          "avoid", "experiences_dropped")


@dataclass
class SkillsResult:
    """What a run did: its branch and commit (None when nothing was pending), counts, caps and changes."""

    branch: str | None
    commit: str | None
    caps: dict[str, int]
    counts: dict[str, int]
    curator: dict[str, int]
    changes: list[curate.SkillChange] = field(default_factory=list)
    run: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    message: str = ""
    applied: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"branch": self.branch, "commit": self.commit, "applied": self.applied, "caps": self.caps,
                "counts": self.counts, "curator": self.curator, "changes": [c.to_dict() for c in self.changes],
                "run_file": self.run["path"] if self.run else None,
                "sessions": self.run["sessions"] if self.run else [],
                "experiences": self.run["experiences"] if self.run else [],
                "marks": self.run["marks"] if self.run else [], "problems": self.problems, "message": self.message}


# --- run files ----------------------------------------------------------------------------------------


def blob_id(data: bytes) -> str:
    """The Git blob id of ``data`` (what ``git hash-object`` prints)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def run_path(run_id: str, time: str) -> str:
    return f"{RUNS_FOLDER}/{time[:4]}/{time[5:7]}/{run_id}.json"


def dump_run(run: dict[str, Any]) -> bytes:
    return (json.dumps(run, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def runs_in(snapshot: "Snapshot", only: set[str] | None = None) -> list[dict[str, Any]]:
    """The run files in ``snapshot`` (only the paths in ``only`` if given), oldest first."""
    out = []
    for path, blob in snapshot.walk(RUNS_FOLDER):
        if not path.endswith(".json") or (only is not None and path not in only):
            continue
        try:
            data = json.loads(snapshot.read_blob(blob))
        except ValueError:
            log.warning("dream: %s is not JSON; ignored", path)
            continue
        if isinstance(data, dict):
            data["path"] = path
            out.append(data)
    return sorted(out, key=lambda r: (str(r.get("time", "")), r["path"]))


@dataclass
class Ledger:
    """What earlier runs decided: rejected keys, sessions settled or waiting on a branch, the last frontier."""

    rejected: set[str] = field(default_factory=set)
    claimed: set[str] = field(default_factory=set)  # sessions distilled on an open branch
    carried: set[str] = field(default_factory=set)  # sessions a run left for a cap
    deferred: dict[str, str] = field(default_factory=dict)  # experience id -> task verb
    frontier: str | None = None
    written: dict[str, str] = field(default_factory=dict)  # skill slug -> blob id of the version a run wrote
    written_by_run: set[str] = field(default_factory=set)  # records the last run changed after its frontier
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)  # session id -> its entry in a run file
    experiences: dict[str, dict[str, Any]] = field(default_factory=dict)  # experience id -> its entry


def open_branches(store: "GitStore") -> list[str]:
    """``dream/skills-...`` branches (short names) not merged into HEAD's branch."""
    from memrepo.store.merge import is_merged

    return [name for name in sorted(store.branches())
            if name.startswith(BRANCH_PREFIX) and not is_merged(store, ("refs/heads/" + name).encode())]


def branch_runs(store: "GitStore", branch: str, main: "Snapshot") -> list[dict[str, Any]]:
    """Run files on ``branch`` (a local branch's short name, or a full ref such as a teammate's
    ``refs/remotes/origin/dream/skills-...``) that main does not have."""
    from memrepo.store.merge import branch_changes

    ref = (branch if branch.startswith("refs/") else "refs/heads/" + branch).encode()
    new = {p for p, b in branch_changes(store, ref, RUNS_FOLDER).items() if b}
    return runs_in(store.snapshot(ref), new) if new else []


def rejection_on_main(runs: list[dict[str, Any]], main: "Snapshot", where: str = "main") -> str | None:
    """Why ``main`` already settles these skills runs: a rejected run file reviewing one of them (written by
    ``review reject`` in any clone, then synced), or None."""
    ids = {r.get("run") for r in runs if r.get("run")}
    if not ids:
        return None
    for run in runs_in(main):
        if run.get("review_of") in ids:
            return f"rejected on {where} ({run['path']}, {run.get('time', '')})"
    return None


def read_ledger(store: "GitStore", main: "Snapshot") -> Ledger:
    ledger = Ledger()
    for run in runs_in(main):
        ledger.rejected |= set(run.get("rejected") or ())
        ledger.frontier = run.get("frontier") or ledger.frontier
        ledger.carried = set(run.get("carried") or ())
        # what the run itself wrote after its frontier: known not to be pending, so not read again
        ledger.written_by_run = {s["id"] for s in run.get("sessions") or ()} | {
            e["id"] for e in run.get("experiences") or ()}
        if run.get("review_of"):  # a rejected run: its edits were never on this branch
            continue
        ledger.sessions.update({e["id"]: e for e in run.get("sessions") or () if "id" in e})
        ledger.experiences.update({e["id"]: e for e in run.get("experiences") or () if "id" in e})
        for change in run.get("changes") or ():
            if change.get("blob") or change.get("action") == "deleted":
                ledger.written[change["skill"]] = change.get("blob") or ""
        for mark in run.get("marks") or ():
            if mark.get("action") == "deferred":
                ledger.deferred[mark["experience"]] = mark.get("verb", "")
            else:
                ledger.deferred.pop(mark.get("experience"), None)
    for branch in open_branches(store):
        for run in branch_runs(store, branch, main):
            ledger.claimed |= {s["id"] for s in run.get("sessions") or ()}
    return ledger


# --- pending sessions -----------------------------------------------------------------------------------


def _candidate_paths(store: "GitStore", snapshot: "Snapshot", ledger: Ledger) -> list[str]:
    from memrepo.index.base import tree_diff

    if ledger.frontier and snapshot.commit and store.resolve(ledger.frontier) is not None:
        own = {rec.record_path(i) for i in ledger.written_by_run}
        paths = {c.path for c in tree_diff(store, ledger.frontier, snapshot.commit)
                 if c.new is not None and c.path.startswith(EXPERIENCES_FOLDER + "/") and c.path not in own}
    else:
        paths = {p for p, _ in snapshot.walk(EXPERIENCES_FOLDER)}
    paths |= {rec.record_path(i) for i in ledger.carried}
    return sorted(p for p in paths if rec.is_record_path(p))


def pending_sessions(store: "GitStore", snapshot: "Snapshot", ledger: Ledger | None = None) -> list[rec.Record]:
    """Task-session records still ``distillation: pending`` and not claimed by an open skills branch, oldest first."""
    ledger = ledger or read_ledger(store, snapshot)
    out = []
    for path in _candidate_paths(store, snapshot, ledger):
        data = snapshot.read(path)
        if data is None:
            continue
        try:
            record = rec.parse(data, path)
        except RecordError:
            continue
        if (record.extra.get("kind") == "task-session" and record.extra.get("distillation") == "pending"
                and record.id not in ledger.claimed):
            out.append(record)
    return sorted(out, key=lambda r: (r.mention_time, r.id))


# --- the run ----------------------------------------------------------------------------------------------


def _experience_text(lesson: str, advice: str, session: rec.Record, task: str, outcome: str,
                     quotes: list[tuple[str, str]], source_id: str) -> str:
    lines = [f"{lesson.capitalize()}: {advice}.", "", f"From a task session ({outcome}): {task}",
             f"Session: {session.id}", ""]
    lines += [f"> {q} ({source_id}#{part})" for part, q in quotes]
    return "\n".join(lines)


def read_skills(snapshot: "Snapshot") -> dict[str, curate.Skill]:
    skills = {}
    for path, blob in snapshot.walk(rec.SKILLS_FOLDER):
        parts = path.split("/")
        if len(parts) == 4 and parts[3] == "SKILL.md":
            try:
                skills[parts[2]] = curate.parse_skill(parts[2], snapshot.read_blob(blob))
            except RecordError as exc:
                log.warning("dream: skill %s skipped: %s", path, exc)
    return skills


def _record(snapshot: "Snapshot", record_id: str) -> rec.Record | None:
    try:
        path = rec.record_path(record_id)
        data = snapshot.read(path)
        return rec.parse(data, path) if data is not None else None
    except RecordError:
        return None


def dream_skills(store: "GitStore", settings: "Settings", *, backend: "Backend", now: str,
                 caps: dict[str, int] | None = None, author: bytes | None = None,
                 progress: Callable[[int, int], None] | None = None) -> SkillsResult:
    """Distill the pending task sessions and propose the curator's skill edits as one commit on a review branch.

    Args:
        backend: its ``distiller`` and ``curator`` roles (offline: :func:`distill.offline`, :func:`curate.offline`).
        now: the run's time (ISO 8601 UTC), part of its id and branch name.
        caps: override ``sessions`` / ``experiences`` per run.

    Raises:
        MemrepoError: if the model fails on the curator (nothing is written).
    """
    cap = {"sessions": CAP_SESSIONS, "experiences": CAP_EXPERIENCES, **(caps or {})}
    counts = dict.fromkeys(COUNTS, 0)
    result = SkillsResult(None, None, cap, counts, curate.Curated().counts)
    head = store.head()
    if head is None:
        result.message = "the repository is empty"
        return result
    snapshot = store.snapshot(head)
    ledger = read_ledger(store, snapshot)
    pending = pending_sessions(store, snapshot, ledger)
    if not pending:
        result.message = "no task session is pending"
        return result
    files: dict[str, bytes | None] = {}
    sessions: list[dict[str, Any]] = []
    experiences: dict[str, tuple[rec.Record, str, distill.Experience]] = {}
    carried: list[str] = []
    run_id = digest(settings.namespace, "dream-skills", head.decode(), now,
                    *sorted(s.id for s in pending[:cap["sessions"]]), length=12)
    run_key = f"{BRANCH_PREFIX}{now[:10]}-{run_id[:8]}"
    for i, session in enumerate(pending):
        if len(sessions) >= cap["sessions"] or len(experiences) >= cap["experiences"]:
            carried = [s.id for s in pending[i:]]
            counts["skipped_by_cap"] = len(carried)
            break
        source_id = rec.split_citation(session.sources[0])[0] if session.sources else ""
        try:
            source = rec.parse_source(snapshot.read(rec.source_path(source_id)) or b"", rec.source_path(source_id))
        except RecordError as exc:
            log.warning("dream: session %s skipped: its source cannot be read (%s)", session.id, exc)
            continue
        task = next((p.text for p in source.parts if p.anchor == "task"), source.title).strip()
        stated = str(session.extra.get("outcome") or "")
        reply = backend.run(distill.ROLE, distill.variables(source, task, stated), distill.SCHEMA,
                            offline=distill.offline)
        checked = distill.check(reply, source)
        room = cap["experiences"] - len(experiences)
        counts["experiences_dropped"] += checked.dropped + max(0, len(checked.experiences) - room)
        counts["sessions"] += 1
        counts[checked.outcome] += 1
        counts["downgraded"] += checked.downgraded
        written = []
        for n, e in enumerate(checked.experiences[:room]):
            text = _experience_text(e.lesson, e.advice, session, task, checked.outcome, e.quotes, source_id)
            record = rec.new_record(
                "procedural", text, mention_time=session.mention_time, namespace=settings.namespace,
                source=source_id, position=f"experience:{n}",
                summary=f"{e.lesson}: {rec.default_summary(e.advice, 110)}",
                sources=list(dict.fromkeys(f"{source_id}#{part}" for part, _ in e.quotes)),
                kind="experience", lesson=e.lesson, outcome=checked.outcome, session=session.id, task=task)
            files[record.path] = rec.serialize(record)
            experiences[record.id] = (record, task, e)
            counts["experiences"] += 1
            counts[e.lesson] += 1
            written.append(record.id)
        marked = replace(session, extra={**session.extra, "distillation": "distilled", "distilled_by": run_key})
        files[session.path] = rec.serialize(marked)
        sessions.append({"id": session.id, "source": source_id, "task": task, "stated": stated,
                         "outcome": checked.outcome, "downgraded": checked.downgraded, "time": session.mention_time,
                         "quotes": [{"part": p, "text": q} for p, q in checked.quotes], "experiences": written,
                         **_actions_entry(checked)})
        if progress:
            progress(len(sessions), min(len(pending), cap["sessions"]))
    # Deferred experiences come back when a new experience of the same task verb arrives (new evidence).
    verbs = {curate.task_verb(t) for _, t, _ in experiences.values()}
    for exp_id, verb in sorted(ledger.deferred.items()):
        old = _record(snapshot, exp_id) if verb in verbs else None
        if old is not None and exp_id not in experiences:
            advice = old.text.split("\n", 1)[0].split(": ", 1)[-1].rstrip(".")
            experiences[exp_id] = (old, str(old.extra.get("task") or ""),
                                   distill.Experience(str(old.extra.get("lesson")), advice, []))
    skills = read_skills(snapshot)
    texts = {i: r.text for i, (r, _, _) in experiences.items()}
    exp_rows = [{"id": i, "lesson": e.lesson, "advice": e.advice, "task": t, "outcome": str(r.extra.get("outcome")),
                 "text": r.text} for i, (r, t, e) in experiences.items()]
    candidates = _candidate_skills(skills, exp_rows, sessions, ledger)
    cited = _cited_experiences(snapshot, candidates, ledger)
    texts.update({i: e["text"] for i, e in cited.items()})
    curated = curate.Curated()
    if exp_rows:
        reply = backend.run(curate.ROLE, {"skills": candidates, "experiences": exp_rows, "sessions": sessions,
                                          "cited": cited}, curate.SCHEMA, offline=curate.offline)
        # A skill whose file is not the version a run wrote was edited by hand since: the review says so.
        by_hand = {slug for slug, sk in skills.items()
                   if slug in ledger.written and ledger.written[slug] != snapshot.blob_id(sk.path)}
        curated = curate.apply(reply, skills, texts, ledger.rejected, by_hand=by_hand)
    result.curator = curated.counts
    result.problems = curated.problems
    for p in curated.problems:
        log.warning("dream: %s", p)
    changes = [c for c in curated.changes.values() if c.changed]
    for c in changes:
        files[c.path] = c.skill.render() if c.skill is not None else None
    result.changes = list(curated.changes.values())
    if not changes:
        # Nothing to review: no branch, nothing written. The sessions stay pending (only an approved run that
        # used them settles them), so later sessions of the same task bring them back with new evidence.
        result.message = (f"no skill would change: {counts['sessions']} session(s) read, {counts['experiences']} "
                          "experience(s); the sessions stay pending")
        return result
    for mark in curated.marks:
        if mark["action"] == "deferred" and mark["experience"] in experiences:
            mark["verb"] = curate.task_verb(experiences[mark["experience"]][1])
    run = {"run": run_id, "time": now, "model": backend.model_id, "frontier": head.decode(), "caps": cap,
           "counts": counts, "curator": curated.counts, "sessions": sessions, "carried": carried,
           "experiences": [{"id": r.id, "lesson": e.lesson, "advice": e.advice, "session": r.extra.get("session"),
                            "quotes": [{"part": p, "text": q} for p, q in e.quotes]}
                           for r, _, e in experiences.values() if r.path in files],
           "changes": [{**c.to_dict(), **({"blob": blob_id(c.skill.render())} if c in changes and c.skill else {})}
                       for c in curated.changes.values()], "marks": curated.marks}
    path = run_path(run_id, now)
    files[path] = dump_run(run)
    run["path"] = path
    result.run = run
    branch = run_key
    message = review_message(run, branch)
    ref = f"refs/heads/{branch}".encode()
    store.create_branch(branch, head)
    commit = store.commit(files, message, ref=ref, sync_worktree=False, author=author)
    result.branch, result.commit = branch, (commit or b"").decode() or None
    return result


def _actions_entry(checked: distill.Distilled) -> dict[str, Any]:
    """What the run file keeps of a session's actions (tool, part, argument names, error) and stated cause."""
    if not checked.actions:
        return {}
    actions = [{"tool": a["tool"], "part": a["part"], "arguments": sorted(a.get("arguments") or {}),
                **({"error": {"part": a["error"][0], "text": a["error"][1]}} if a.get("error") else {})}
               for a in checked.actions]
    cause = {"part": checked.cause[0], "text": checked.cause[1]} if checked.cause else None
    return {"actions": actions, "cause": cause}


def _cited_experiences(snapshot: "Snapshot", candidates: list[dict[str, Any]], ledger: Ledger
                       ) -> dict[str, dict[str, Any]]:
    """The experiences of the runs a candidate procedure skill rests on (their text read from their records), so
    a procedure built again over old and new runs cites them as it did."""
    out: dict[str, dict[str, Any]] = {}
    for sk in candidates:
        for run in sk.get("runs") or ():
            for exp_id in run.get("experiences") or ():
                record = _record(snapshot, exp_id)
                if record is not None:
                    entry = ledger.experiences.get(exp_id, {})
                    out[exp_id] = {"id": exp_id, "text": record.text, "advice": entry.get("advice", ""),
                                   "lesson": entry.get("lesson", "")}
    return out


def _candidate_skills(skills: dict[str, curate.Skill], experiences: list[dict[str, Any]],
                      sessions: list[dict[str, Any]] | None = None, ledger: Ledger | None = None
                      ) -> list[dict[str, Any]]:
    """The skills the curator sees: for each experience, the 3 sharing most words with its task; and the
    procedure skills whose tools a session of the run used (with the runs they rest on)."""
    used = {a["tool"] for s in sessions or () for a in s.get("actions") or ()}
    procedures = {slug for slug, sk in skills.items() if used & set(map(str, sk.own.get("tools") or ()))}
    rows = _word_candidates(skills, experiences)
    for row in rows:
        procedures.discard(row["slug"])
    rows += [{"slug": s, "name": skills[s].name, "description": skills[s].description, "steps": skills[s].steps()}
             for s in sorted(procedures)]
    known = ledger.sessions if ledger else {}
    for row in rows:
        own = skills[row["slug"]].own
        if own.get("tools"):
            row["tools"] = list(own["tools"])
            row["runs"] = [known[str(r)] for r in own.get("citations") or () if str(r) in known]
    return sorted(rows, key=lambda r: r["slug"])


def _word_candidates(skills: dict[str, curate.Skill], experiences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    chosen: set[str] = set()
    for e in experiences:
        want = curate.terms(e["task"] + " " + e["advice"])
        ranked = sorted(skills.values(), key=lambda s: (-len(want & curate.terms(
            s.name.replace("-", " ") + " " + s.description + " " + " ".join(s.steps()))), s.slug))
        chosen |= {s.slug for s in ranked[:3]}
    return [{"slug": s, "name": skills[s].name, "description": skills[s].description, "steps": skills[s].steps()}
            for s in sorted(chosen)]


def review_message(run: dict[str, Any], branch: str | None) -> str:
    """The review: skills created/edited/deleted, steps added/removed, and the quoted experiences and
    sessions behind each added step."""
    changes = [c for c in run["changes"] if c["action"] == "deleted" or c["added"] or c["removed"] or c.get("touched")]
    kinds = {a: sum(1 for c in changes if c["action"] == a) for a in ("created", "edited", "deleted")}
    added = sum(len(c["added"]) for c in changes)
    removed = sum(len(c["removed"]) for c in changes)
    c, k = run["counts"], run["curator"]
    lines = [f"Dream skills: {kinds['created']} created, {kinds['edited']} edited, {kinds['deleted']} deleted; "
             f"{added} step{'s' if added != 1 else ''} added, {removed} removed", ""]
    lines.append(f"Sessions: {c['sessions']} distilled ({c['success']} success, {c['failure']} failure, "
                 f"{c['unclear']} unclear; {c['downgraded']} downgraded to unclear: quote not in the session), "
                 f"{c['skipped_by_cap']} skipped by cap.")
    lines.append(f"Experiences: {c['experiences']} written ({c['reuse']} reuse, {c['avoid']} avoid), "
                 f"{c['experiences_dropped']} dropped (no quote found in the session, or over the cap).")
    lines.append(f"Curator: {k['steps_added']} steps added, {k['steps_removed']} removed, {k['covered']} covered, "
                 f"{k['not_worth']} not worth a skill, {k['deferred']} deferred, {k['refused']} refused (quote not "
                 f"in the experience), {k['rejected_before']} rejected in an earlier review, {k['invalid']} invalid.")
    lines.append(f"Caps: sessions {run['caps']['sessions']}, experiences {run['caps']['experiences']}. "
                 f"Model: {run['model']}.")
    experiences = {e["id"]: e for e in run["experiences"]}
    sessions = {s["id"]: s for s in run["sessions"]}
    for ch in run["changes"]:
        if not (ch["action"] == "deleted" or ch["added"] or ch["removed"] or ch["kept"] or ch.get("touched")):
            continue
        v = ch["version"]
        hand = " (a skill written or edited by hand)" if ch["hand_written"] else ""
        what = ch["action"] if (ch["added"] or ch["removed"] or ch.get("touched") or ch["action"] == "deleted") \
            else "unchanged"
        lines += ["", f"Skill {ch['skill']}: {what}{hand}, version {v[0]} -> {v[1]} ({ch['path']})"]
        if ch["action"] == "deleted":
            lines.append("  - the whole skill is deleted")
        for step in ch["added"]:
            lines.append(f"  + {step['text']}")
            for exp_id, quote in ((x["experience"], x["quote"]) for x in step["cites"]):
                e = experiences.get(exp_id, {})
                lines.append(f"      experience {exp_id} ({e.get('lesson', '?')}): \"{quote}\"")
                s = sessions.get(e.get("session", ""))
                if s:
                    quotes = e.get("quotes", [])
                    # the session's words this citation rests on (all of them if none is the cited quote)
                    for q in [q for q in quotes if quote in q["text"] or q["text"] in quote] or quotes:
                        lines.append(f"      session {s['id']} ({s['outcome']}; {s['source']}#{q['part']}): "
                                     f"\"{q['text']}\"")
        for step in ch["removed"]:
            lines.append(f"  - {step['text']}")
        if ch.get("touched") and not (ch["added"] or ch["removed"]):
            lines.append("  ~ the same steps, now resting on the new runs too (their run numbers)")
        for kept in ch["kept"]:
            lines.append(f"  = {kept['step']}  (kept; supported by experience {kept['experience']})")
    marks = [m for m in run["marks"] if m["action"] != "covered"]
    if marks:
        lines += ["", "Experiences not turned into steps:"]
        for m in marks:
            lines.append(f"- {m['experience']}: {m['action'].replace('_', ' ')} ({m['reason']})")
    lines += ["", f"Run file: {run['path']}"]
    if branch:
        lines.append(f"Approve: memrepo review approve {branch}   Reject: memrepo review reject {branch}")
    return "\n".join(lines) + "\n"


def reject_files(store: "GitStore", branch: str, main: "Snapshot", *, now: str, reason: str) -> dict[str, bytes]:
    """Files that record a rejected skills branch on main: a rejected run file per run (its step, removal and
    deletion keys, so the same edit is not proposed again). Its sessions return to pending: main never had the
    branch's ``distillation: distilled`` marks, and the run file carries them, so the next run reads them again."""
    files: dict[str, bytes] = {}
    for run in branch_runs(store, branch, main):
        keys = sorted({s["key"] for c in run.get("changes", ()) for s in c.get("added", ())}
                      | {s["key"] for c in run.get("changes", ()) for s in c.get("removed", ())}
                      | {c["delete_key"] for c in run.get("changes", ()) if c.get("delete_key")})
        rejected = {"run": f"{run['run']}-rejected", "review_of": run["run"], "time": now, "model": "review",
                    "reason": reason, "rejected": keys, "sessions": [{"id": s["id"]} for s in run.get("sessions", ())],
                    "frontier": run.get("frontier"),
                    "carried": sorted({*run.get("carried", []), *(s["id"] for s in run.get("sessions", ()))}),
                    "changes": run.get("changes", [])}
        files[run_path(rejected["run"], now)] = dump_run(rejected)
    return files


def export_skills(snapshot: "Snapshot", directory: str) -> list[str]:
    """Write the skills of ``snapshot`` as an Agent Skills folder: ``DIRECTORY/<slug>/SKILL.md``; returns the paths.

    Raises:
        MemrepoError: if two skills share a ``name``, the folder cannot be written, or a skill's folder or file
            there is a symbolic link (nothing is written through one).
    """
    import os
    from pathlib import Path

    skills = read_skills(snapshot)
    names: dict[str, str] = {}
    for slug, skill in sorted(skills.items()):
        if skill.name in names:
            raise MemrepoError(f"skills {names[skill.name]} and {slug} have the same name {skill.name!r}; "
                               "rename one (front matter 'name') before exporting")
        names[skill.name] = slug
    out = []
    try:
        for slug, skill in sorted(skills.items()):
            folder = Path(directory) / slug
            for path in (folder, folder / "SKILL.md", folder / ".SKILL.md.tmp"):
                # A link already in the folder (one its own repository carries) would take the write elsewhere.
                if path.is_symlink() or slug in ("", ".", "..") or "/" in slug:
                    raise MemrepoError(f"{path}: a symbolic link or a name that leaves {directory}; the skills are "
                                       "written only as plain files under it: remove the link and export again")
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / "SKILL.md"
            tmp = folder / ".SKILL.md.tmp"
            tmp.write_bytes(snapshot.read(skill.path) or skill.render())
            os.replace(tmp, target)
            out.append(str(target))
    except OSError as exc:
        raise MemrepoError(f"{directory}: cannot write the skills: {exc.strerror}") from exc
    return out


def show_skill(store: "GitStore", snapshot: "Snapshot", slug: str) -> tuple[curate.Skill, list[dict[str, Any]]]:
    """A skill and the runs its steps and cautions refer to (``[runs 1, 2]``: its ``metadata.citations``, numbered
    from 1), each with its outcome, task, and the verbatim quotes of the experiences drawn from it.

    Raises:
        MemrepoError: if ``snapshot`` has no skill ``slug``.
    """
    skill = read_skills(snapshot).get(slug)
    if skill is None:
        raise MemrepoError(f"no skill {slug!r} in {rec.SKILLS_FOLDER}/ (memrepo skills export lists them)")
    ledger = read_ledger(store, snapshot)
    runs = []
    for n, session_id in enumerate(map(str, skill.own.get("citations") or ()), 1):
        entry = ledger.sessions.get(session_id, {})
        quotes = [{"experience": exp_id, **q} for exp_id in entry.get("experiences") or ()
                  for q in ledger.experiences.get(exp_id, {}).get("quotes") or ()]
        runs.append({"number": n, "session": session_id, "outcome": entry.get("outcome", "unknown"),
                     "task": entry.get("task", ""), "source": entry.get("source", ""), "quotes": quotes})
    return skill, runs
