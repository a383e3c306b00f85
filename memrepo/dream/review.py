"""Review branches: list the open ones, show one with evidence, approve (merge) or reject it.

Approving is a Git merge of the branch into HEAD's branch (a merge commit, so
``git revert -m 1`` undoes it); merging the branch with plain ``git merge`` or on
a Git host has the same effect, because the branch only adds a decision file.
Rejecting writes, on HEAD's branch, a small decision file that turns every
proposed merge into an explicit rejection (and keeps the run's frontier and
judge rejections), so the pairs are not asked again; then the branch is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memrepo import records as rec
from memrepo.dream.constants import BRANCH_PREFIX
from memrepo.dream.decisions import Decision, DreamRun, run_turtle, runs_in
from memrepo.errors import MemrepoError, NotFoundError

if TYPE_CHECKING:
    from memrepo.context import Context

EVIDENCE = 3
SKILLS_FOLDER = "procedural/skills"
SKILLS_PREFIX = "dream/skills-"  # a dream/skills-... branch edits skills here (DESIGN.md §1)
NOT_REVIEWABLE = "carries no Dream decision file and changes nothing under procedural/skills/"


class ReviewError(MemrepoError):
    """A review branch cannot be shown, approved or rejected (the message says why)."""


@dataclass
class Evidence:
    """A few records behind one anchor of a proposed merge."""

    anchor: str
    name: str
    records: list[tuple[str, str]] = field(default_factory=list)  # (record id, summary)
    total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "name": self.name, "total": self.total,
                "records": [{"id": i, "summary": s} for i, s in self.records]}


@dataclass
class Review:
    """One open review branch: its run(s), commit message, and (for ``show``) evidence per merge."""

    branch: str
    tip: str
    time: int
    message: str
    runs: list[DreamRun] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)  # files under procedural/skills/ the branch changes
    skill_runs: list[dict[str, Any]] = field(default_factory=list)  # procedural Dream run files (dream/skills.py)
    evidence: dict[str, tuple[Evidence, Evidence]] = field(default_factory=dict)  # cache key -> (alias, rep)
    remote: str | None = None  # a teammate's branch seen on this remote (no local branch of that name)
    decided: str | None = None  # already settled on the current branch (a rejection recorded anywhere)

    @property
    def merges(self) -> list[Decision]:
        return [d for r in self.runs for d in r.merges]

    @property
    def rejections(self) -> list[Decision]:
        return [d for r in self.runs for d in r.rejections]

    @property
    def reviewable(self) -> bool:
        """A branch can be reviewed if it carries a Dream decision file or changes skills."""
        return bool(self.runs or self.skills or self.skill_runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch, "tip": self.tip, "time": self.time, "message": self.message,
            "runs": [r.to_dict() for r in self.runs],
            "merges": [{**d.to_dict(), "evidence": [e.to_dict() for e in self.evidence.get(d.key, ())]}
                       for d in self.merges],
            "rejections": [d.to_dict() for d in self.rejections],
            "skills": self.skills, "reviewable": self.reviewable, "remote": self.remote, "decided": self.decided,
            "skill_changes": [c for r in self.skill_runs for c in r.get("changes", ())
                              if c["action"] == "deleted" or c["added"] or c["removed"] or c["kept"]],
            **({} if self.reviewable else {"reason": NOT_REVIEWABLE}),
        }


def branch_ref(name: str) -> str:
    """``dream/2026-...`` or ``refs/heads/dream/...`` -> the full ref; anything else is refused."""
    short = name.removeprefix("refs/heads/")
    if not short.startswith(BRANCH_PREFIX) or len(short) <= len(BRANCH_PREFIX):
        raise ReviewError(f"{name!r} is not a review branch (review branches are named {BRANCH_PREFIX}...)")
    return "refs/heads/" + short


def _resolve_ref(ctx: "Context", name: str) -> str:
    """A review branch's ref: the local ``dream/...``, else a teammate's ``REMOTE/dream/...`` from the last fetch."""
    store = ctx.store
    if name.startswith("refs/remotes/") or ("/" + BRANCH_PREFIX in name and not name.startswith(BRANCH_PREFIX)):
        full = name if name.startswith("refs/remotes/") else "refs/remotes/" + name
        if store.ref(full) is None:
            raise NotFoundError(f"review branch {name} not found (`memrepo review list` shows the open ones)")
        return full
    ref = branch_ref(name)
    if store.ref(ref) is None:
        short = ref.removeprefix("refs/heads/")
        for remote_ref in store.refs_under("refs/remotes/"):
            if remote_ref.endswith("/" + short):
                return remote_ref
    return ref


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")


def _local_name(short: str) -> str:
    """``origin/dream/skills-...`` -> ``dream/skills-...`` (a local short name is returned as it is)."""
    return short if short.startswith(BRANCH_PREFIX) else short.split("/", 1)[-1]


def _remote_of(ref: str) -> str | None:
    return ref.removeprefix("refs/remotes/").split("/", 1)[0] if ref.startswith("refs/remotes/") else None


def rejection_on_main(ctx: "Context", runs: list[DreamRun]) -> str | None:
    """Why the current branch already settles these runs: a rejection recorded on it (by anyone, in any
    clone), or None."""
    ids = {r.run_id for r in runs}
    if not ids:
        return None
    for run in runs_in(ctx.store.snapshot()):
        if run.review_of in ids:
            return f"rejected on {ctx.store.branch_ref().decode().removeprefix('refs/heads/')} ({run.path}, {run.time})"
    return None


def _review(ctx: "Context", ref: str, *, evidence: bool = False) -> Review:
    from memrepo.dream.run import branch_decisions
    from memrepo.store.merge import branch_changes

    tip = ctx.store.ref(ref)
    if tip is None:
        raise NotFoundError(f"review branch {_short(ref)} not found "
                            "(`memrepo review list` shows the open ones)")
    info = ctx.store.commit_of(tip)
    main = ctx.store.snapshot()
    runs = runs_in(ctx.store.snapshot(tip.encode()), branch_decisions(ctx.store, ref, main))
    skill_files = sorted(branch_changes(ctx.store, ref.encode(), SKILLS_FOLDER))
    review = Review(_short(ref), info.id, info.time, info.message, runs, skill_files, remote=_remote_of(ref),
                    decided=rejection_on_main(ctx, runs))
    if _local_name(review.branch).startswith(SKILLS_PREFIX):  # a skills branch, here or a teammate's
        from memrepo.dream import skills as skill_branches

        review.skill_runs = skill_branches.branch_runs(ctx.store, ref, main)
        where = ctx.store.branch_ref().decode().removeprefix("refs/heads/")
        review.decided = review.decided or skill_branches.rejection_on_main(review.skill_runs, main, where)
    if evidence and review.merges:
        review.evidence = _evidence(ctx, review.merges)
    return review


def _evidence(ctx: "Context", merges: list[Decision]) -> dict[str, tuple[Evidence, Evidence]]:
    from memrepo.graph.reader import open_reader

    snap = ctx.store.snapshot()
    out = {}
    with open_reader(ctx.store, ctx.settings) as reader:
        for d in merges:
            sides = []
            for iri, name in ((d.alias, d.alias_name), (d.representative, d.representative_name)):
                info = reader.anchor(iri or "")
                rows = info.semantic + info.episodic
                ev = Evidence(iri or "", name, total=len(rows))
                for record_id in rows[:EVIDENCE]:
                    data = snap.read(rec.record_path(record_id))
                    if data is not None:
                        r = rec.parse(data, rec.record_path(record_id))
                        ev.records.append((record_id, r.summary or r.text[:160]))
                sides.append(ev)
            out[d.key] = (sides[0], sides[1])
    return out


def list_reviews(ctx: "Context", *, unreviewable: bool = False) -> list[Review]:
    """Open review branches (``dream/...`` not yet merged into HEAD's branch), oldest first.

    Args:
        unreviewable: also return the ``dream/...`` branches that carry neither a decision file
            nor a skill change (``reviewable`` is False on them; approving them is refused).
    """
    from memrepo.dream.run import open_branches
    from memrepo.store.merge import is_merged

    local = open_branches(ctx.store)
    names = {_short(r) for r in local} | {_short(r) for r in ctx.store.refs_under("refs/heads/" + BRANCH_PREFIX)}
    remote = []  # teammates' review branches (fetched by `memrepo sync` or `git fetch`) with no local branch
    for ref in ctx.store.refs_under("refs/remotes/"):
        parts = ref.removeprefix("refs/remotes/").split("/", 1)
        if len(parts) == 2 and parts[1].startswith(BRANCH_PREFIX) and parts[1] not in names:
            if not is_merged(ctx.store, ref.encode()):
                remote.append(ref)
    reviews = [_review(ctx, ref) for ref in local + remote]
    return sorted((r for r in reviews if unreviewable or (r.reviewable and not r.decided)),
                  key=lambda r: (r.time, r.branch))


def show_review(ctx: "Context", branch: str) -> Review:
    """One review branch with a few records of evidence from each side of every proposed merge."""
    return _review(ctx, _resolve_ref(ctx, branch), evidence=True)


def rejected_branch(ctx: "Context", name: str) -> bool:
    """True if the local review branch ``name`` was rejected on the current branch (here or in another clone)."""
    try:
        return _review(ctx, branch_ref(name)).decided is not None
    except MemrepoError:
        return False


def delete_remote_branch(ctx: "Context", review: Review, remote: str | None) -> str:
    """Delete the review branch on ``remote`` (default: the one it was seen on, else origin). Returns the remote.

    Raises:
        ReviewError: if the remote refuses (the decision itself stands).
    """
    from memrepo.team.gitcli import git, last_line

    name = review.branch.split("/", 1)[1] if review.remote else review.branch
    remote = remote or review.remote or "origin"
    done = git(ctx.root, "push", "-q", remote, "--delete", f"refs/heads/{name}", check=False)
    if done.returncode != 0 and "remote ref does not exist" not in done.stderr.decode("utf-8", "replace"):
        raise ReviewError(f"the decision on {name} is recorded, but deleting it on {remote} failed: "
                          f"{last_line(done.stderr)}")
    ctx.store.delete_ref(f"refs/remotes/{remote}/{name}")
    return remote


def approve(ctx: "Context", branch: str, *, force: bool = False, delete_remote: bool = False) -> str:
    """Merge the review branch into HEAD's branch (a merge commit) and delete it. Returns the merge commit id.

    ``branch`` may be a teammate's (``origin/dream/...``, or ``dream/...`` seen only on a remote).

    Args:
        force: approve even though a rejection of the branch is recorded on HEAD's branch.
        delete_remote: also delete the branch on its remote.

    Raises:
        NotFoundError: if there is no such branch.
        ReviewError: if it is already merged, was rejected (without ``force``), or carries neither a
            decision file nor a skill change.
    """
    from memrepo.store.merge import delete_branch, merge_branch

    ref = _resolve_ref(ctx, branch)
    review = _review(ctx, ref)
    if not review.reviewable:
        raise ReviewError(f"{review.branch} {NOT_REVIEWABLE}; nothing to approve")
    if review.decided and not force:
        raise ReviewError(f"{review.branch} was {review.decided}: approving it would overrule that decision "
                          "(`--force` approves it anyway)")
    n, r = len(review.merges), len(review.rejections)
    lines = [f"- \"{d.alias_name}\" -> \"{d.representative_name}\" ({d.type})" for d in review.merges]
    message = (f"Merge review branch {review.branch}: {n} anchor merge{'s' if n != 1 else ''}, "
               f"{r} rejection{'s' if r != 1 else ''}"
               + (f", {len(review.skills)} skill file{'s' if len(review.skills) != 1 else ''}" if review.skills else "")
               + "\n\n" + ("\n".join(lines) + "\n\n" if lines else "")
               + "Approved with memrepo review approve.\n")
    if review.skill_runs:
        changed = [c for run in review.skill_runs for c in run.get("changes", ())
                   if c["action"] == "deleted" or c["added"] or c["removed"] or c.get("touched")]
        message = (f"Merge review branch {review.branch}: {len(changed)} skill change(s)\n\n"
                   + "".join(f"- {c['skill']}: {c['action']}, +{len(c['added'])} -{len(c['removed'])} steps\n"
                             for c in changed)
                   + "\nApproved with memrepo review approve.\n")
    if review.decided:  # --force: a later decision on main reverses the rejection (the hook honours it)
        files = reinstatement_files(review, now=iso_time_now())
        if files:
            ctx.store.commit(files, f"Reinstate review branch {review.branch}: a rejection recorded on main is "
                                    f"overruled\n\nApproved with memrepo review approve --force.\n",
                             author=ctx.commit_author)
    try:
        commit = merge_branch(ctx.store, ref.encode(), message, author=ctx.commit_author)
    except MemrepoError as exc:
        raise ReviewError(str(exc)) from exc
    if review.remote is None:
        delete_branch(ctx.store, ref.encode())
    if delete_remote:
        delete_remote_branch(ctx, review, None)
    return commit.decode()


def iso_time_now() -> str:
    from memrepo.dream.run import iso_time

    return iso_time(None)


def reinstatement_files(review: Review, *, now: str) -> dict[str, bytes]:
    """Decision files that reverse the rejections of ``review``'s runs: ``<run>-reinstated`` beside each
    run's own file (the pre-receive hook lets a rejected run onto main only with one)."""
    from memrepo.dream.skills import dump_run, run_path

    files: dict[str, bytes] = {}
    for run in review.runs:
        reinstated = DreamRun(run_id=f"{run.run_id}-reinstated", round="review", frontier_commit=run.frontier_commit,
                              model="review", time=now, sources=run.sources, counts=run.counts)
        files[reinstated.path] = run_turtle(reinstated)
    for skills_run in review.skill_runs:
        if skills_run.get("run"):
            record = {"run": f"{skills_run['run']}-reinstated", "reinstates": skills_run["run"], "time": now,
                      "model": "review", "frontier": skills_run.get("frontier"),
                      "carried": skills_run.get("carried", [])}
            files[run_path(str(record["run"]), now)] = dump_run(record)
    return files


def reject(ctx: "Context", branch: str, *, now: str | None = None, reason: str | None = None,
           delete_remote: bool = False) -> str:
    """Record the branch's proposed merges as explicit rejections on HEAD's branch, then delete the branch.

    Returns:
        The commit on HEAD's branch that records the rejections ("" if there were none to record).

    Raises:
        ReviewError: if the branch carries neither a decision file nor a skill change.
    """
    from memrepo.dream.run import iso_time
    from memrepo.store.merge import delete_branch

    ref = _resolve_ref(ctx, branch)
    review = _review(ctx, ref)
    if not review.reviewable:  # someone's own dream/... branch: not ours to delete
        raise ReviewError(f"{review.branch} {NOT_REVIEWABLE}; nothing to reject (delete it with git if unwanted)")
    now = iso_time(now)
    why = reason or f"rejected in review of {review.branch}"
    files: dict[str, bytes] = {}
    for run in review.runs:
        decisions = list(run.rejections)
        for d in run.merges:
            decisions.append(Decision(
                kind="reject", first=d.first, first_name=d.first_name, second=d.second, second_name=d.second_name,
                type=d.type, cosine=d.cosine, verdict="rejected in review",
                rationale=f"{why} (the judge had said: {d.rationale})", model="review", time=now,
                first_records=d.first_records, second_records=d.second_records))
        rejected = DreamRun(run_id=f"{run.run_id}-rejected", round="review", frontier_commit=run.frontier_commit,
                            model="review", time=now, sources=run.sources, counts=run.counts, decisions=decisions,
                            review_of=run.run_id)
        files[rejected.path] = run_turtle(rejected)
    n = len(review.merges)
    if review.skill_runs:
        from memrepo.dream.skills import reject_files

        files.update(reject_files(ctx.store, ref, ctx.store.snapshot(), now=now, reason=why))
        steps = [f"- {c['skill']}: {c['action']}" + "".join(f"\n  + {a['text']}" for a in c["added"])
                 + "".join(f"\n  - {r['text']}" for r in c["removed"])
                 for run in review.skill_runs for c in run.get("changes", ())
                 if c["action"] == "deleted" or c["added"] or c["removed"]]
        message = (f"Reject review branch {review.branch}: {len(steps)} skill change(s) recorded as rejected "
                   f"(not proposed again); its sessions return to pending\n\n" + "\n".join(steps) + f"\n\n{why}.\n")
        commit = (ctx.store.commit(files, message, author=ctx.commit_author)
                  if files and not review.decided else None)
        if review.remote is None:
            delete_branch(ctx.store, ref.encode())
        if delete_remote:
            delete_remote_branch(ctx, review, None)
        return commit.decode() if commit else ""
    message = (f"Reject review branch {review.branch}: {n} merge{'s' if n != 1 else ''} recorded as rejected\n\n"
               + "\n".join(f"- \"{d.alias_name}\" / \"{d.representative_name}\" ({d.type})" for d in review.merges)
               + f"\n\n{why}.\n")
    commit = ctx.store.commit(files, message, author=ctx.commit_author) if files and not review.decided else None
    if review.remote is None:
        delete_branch(ctx.store, ref.encode())
    if delete_remote:
        delete_remote_branch(ctx, review, None)
    return commit.decode() if commit else ""


def review_commits(ctx: "Context", branch: str, *, limit: int = 20) -> list[tuple[Any, list[Any]]]:
    """What approving ``branch`` would merge: its commits not on HEAD's branch, newest first (at most
    ``limit``), each with the unified diffs of the files it changed.

    Raises:
        ReviewError: if ``branch`` is not a review branch.
        NotFoundError: if there is no such branch.
    """
    from memrepo.store.textdiff import file_changes

    ref = _resolve_ref(ctx, branch)  # a teammate's origin/dream/... too
    tip = ctx.store.ref(ref)
    if tip is None:
        raise NotFoundError(f"review branch {_short(ref)} not found")
    ours = ctx.store.ref(ctx.store.branch_ref().decode())
    return [(info, file_changes(ctx.store, info.id)) for info in ctx.store.commits_between(tip, ours, limit=limit)]
