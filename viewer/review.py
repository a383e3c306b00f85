"""Review: open review branches (AutoDream's anchor merges, and skill branches), each proposed merge
with its full evidence from both anchors, what approving would merge (the branch's commits and
their diffs, a SKILL.md side by side), and approve/reject - the viewer's only writing, behind
``memrepo view --allow-review``. Approving asks for confirmation and says what it merges;
rejecting asks for the reason that is recorded with the rejection."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from viewer import common

RESULT_KEY = "review_result"  # session state: the message of the last approve/reject
CONFIRM_KEY = "review_confirm"  # session state: the branch whose approval waits for confirmation
BRANCH_COMMITS = 20  # commits of a review branch shown at most
SIDE_BY_SIDE = re.compile(r"(^|/)SKILL\.md$")  # files shown side by side (a skill's steps)


def evidence_record(view, record_id: str) -> None:
    """One record behind an anchor: a link, then its whole text (never cut: the sentence that decides is in it)."""
    try:
        record = view.get(record_id)
    except common.MemrepoError as exc:
        st.error(common.md(f"{record_id}: {exc}"))
        return
    common.record_link(record_id, record.summary)
    if record.encrypted:
        st.caption("(encrypted vault entry)")
    else:
        common.show_text(record.text)


def merge_section(view, review, decision) -> None:
    """One proposed merge: the verdict, then the records behind each anchor in two columns."""
    st.markdown(f"**{common.md(decision.alias_name)}** → **{common.md(decision.representative_name)}** "
                f"· {common.md(decision.type)} · cosine {decision.cosine:.3f}")
    st.caption(f"Verdict of {common.md(decision.model)}:")
    common.show_text(decision.rationale)
    sides = review.evidence.get(decision.key, ())
    for column, side, label in zip(st.columns(2), sides, ("merged into the other", "kept representative")):
        with column:
            st.markdown(f"*{common.md(side.name)}* ({label}): {side.total} record(s)"
                        + (f", the first {len(side.records)} shown" if side.total > len(side.records) else ""))
            for record_id, _summary in side.records:
                evidence_record(view, record_id)
            if side.total > len(side.records):
                st.page_link("graph.py", label=f"All {side.total} records of {common.md(side.name)}",
                             query_params={"anchor": side.name}, icon=":material/label:")


def side_by_side(diff: str) -> list[dict[str, Any]]:
    """A unified diff as rows (line, before, after, change), removed and added lines paired up."""
    rows: list[dict[str, Any]] = []
    old = new = 0
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []

    def flush() -> None:
        for i in range(max(len(removed), len(added))):
            left = removed[i] if i < len(removed) else (None, "")
            right = added[i] if i < len(added) else (None, "")
            change = "changed" if left[0] and right[0] else "removed" if left[0] else "added"
            rows.append({"old line": left[0], "before": left[1], "new line": right[0], "after": right[1],
                         "change": change})
        removed.clear()
        added.clear()

    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            continue
        hunk = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
        if hunk:
            flush()
            old, new = int(hunk.group(1)), int(hunk.group(2))
            continue
        if line.startswith("-"):
            removed.append((old, line[1:]))
            old += 1
        elif line.startswith("+"):
            added.append((new, line[1:]))
            new += 1
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            rows.append({"old line": old, "before": text, "new line": new, "after": text, "change": ""})
            old += 1
            new += 1
    flush()
    return rows


def skill_steps_section(repo, review) -> None:
    """Each step a skill branch adds, with the experiences it cites (the quote each citation checked) and,
    for each experience, the session turns it quotes, read from the session's source as of the branch."""
    branch_view = repo.at(review.tip)
    for run in review.skill_runs:
        experiences = {e["id"]: e for e in run.get("experiences", ())}
        sessions = {s["id"]: s for s in run.get("sessions", ())}
        for change in run.get("changes", ()):
            if not (change["added"] or change["removed"] or change["action"] == "deleted"):
                continue
            before, after = change["version"]
            st.markdown(f"**Skill {common.md(change['skill'])}**: {common.md(change['action'])}, "
                        f"version {before} → {after}, {len(change['added'])} step(s) added, "
                        f"{len(change['removed'])} removed")
            for n, step in enumerate(change["added"]):
                with st.container(border=True):
                    st.caption("added step")
                    common.show_text(step["text"])
                    for i, cite in enumerate(step["cites"]):
                        experience_evidence(branch_view, cite, experiences, sessions,
                                            key=f"{run.get('run')}-{change['skill']}-{n}-{i}")
            for step in change["removed"]:
                st.caption("removed step")
                common.show_text(step["text"])


def experience_evidence(branch_view, cite: dict[str, Any], experiences: dict[str, Any],
                        sessions: dict[str, Any], key: str) -> None:
    """One citation of an added step: the experience and its checked quote, then the session turns behind it."""
    experience_id = cite["experience"]
    entry = experiences.get(experience_id, {})
    st.caption(f"cites experience {common.code(experience_id)} ({common.md(entry.get('lesson', '?'))}), quoting:")
    common.show_text(cite["quote"])
    try:
        record = branch_view.get(experience_id)
    except common.MemrepoError as exc:
        st.error(common.md(f"{experience_id}: {exc}"))
        return
    with st.expander(f"Experience {common.md(experience_id)}: {common.md(record.summary)}"):
        common.show_text(record.text)
    session = sessions.get(str(record.extra.get("session") or entry.get("session") or ""))
    if session:
        common.record_link(session["id"], f"task session, {session['outcome']}")
    for j, (citation, title, text) in enumerate(branch_view.cited_parts(record)):
        common.show_cited(citation, title, text, key=f"{key}-{j}")


def changes_section(repo, branch: str) -> list[Any]:
    """What approving merges: the branch's own commits and the files they change. Returns the commits."""
    commits = repo.review_commits(branch, limit=BRANCH_COMMITS)
    files = sorted({c.path for _, changes in commits for c in changes})
    st.markdown(f"**What approving merges**: {len(commits)} commit(s) changing {len(files)} file(s)")
    for commit, changes in commits:
        with st.expander(f"{common.short(commit.id)} · {common.md(commit.author)} · {common.md(commit.summary)}"):
            st.code(commit.message.rstrip("\n"), language=None)
            for change in changes:
                st.caption(f"{change.status}: {common.code(change.path)}")
                if not change.diff:
                    st.caption(common.md(change.note))
                elif SIDE_BY_SIDE.search(change.path):
                    st.dataframe(side_by_side(change.diff), hide_index=True, width="stretch")
                else:
                    st.code(change.diff, language="diff")
    return commits


def approve_box(repo, review, commits: list[Any]) -> None:
    """The confirmation that says what the approval merges, with Merge and Cancel."""
    into = repo.current_branch() or "HEAD"
    files = sorted({c.path for _, changes in commits for c in changes})
    with st.container(border=True):
        st.warning(f"Approving merges {common.code(review.branch)} into {common.code(into)} with a merge commit "
                   f"({common.code('git revert -m 1')} undoes it): {len(review.merges)} anchor merge(s), "
                   f"{len(commits)} commit(s), {len(files)} file(s).")
        for d in review.merges:
            st.markdown(f"- {common.md(d.alias_name)} → {common.md(d.representative_name)} ({common.md(d.type)})")
        for path in files[:20]:
            st.caption(common.code(path))
        if len(files) > 20:
            st.caption(f"… and {len(files) - 20} more file(s)")
        left, right = st.columns(2)
        if left.button("Merge now", type="primary", key=f"merge-{review.branch}"):
            commit = repo.review_approve(review.branch)
            st.session_state.pop(CONFIRM_KEY, None)
            st.session_state[RESULT_KEY] = f"Approved {review.branch}: merge commit {common.short(commit)}."
            st.rerun()
        if right.button("Cancel", key=f"cancel-{review.branch}"):
            st.session_state.pop(CONFIRM_KEY, None)
            st.rerun()


def actions(repo, review, commits: list[Any]) -> None:
    if not common.allow_review():
        st.caption(f"Read-only: start the viewer with {common.code('memrepo view --allow-review')} "
                   "to approve or reject.")
        return
    branch = review.branch
    left, right = st.columns(2)
    with left:
        if st.session_state.get(CONFIRM_KEY) == branch:
            approve_box(repo, review, commits)
        elif st.button("Approve…", type="primary", key=f"approve-{branch}",
                       help="Shows what the approval merges and asks for confirmation."):
            st.session_state[CONFIRM_KEY] = branch
            st.rerun()
    with right:
        reason = st.text_area("Reason for rejecting", key=f"reason-{branch}",
                              placeholder="e.g. two different people who share a first name",
                              help="Recorded with the rejection (as `memrepo review reject --reason`).")
        if st.button("Reject", key=f"reject-{branch}", disabled=not reason.strip(),
                     help="Records every proposed merge as rejected, with this reason, and deletes the branch."):
            commit = repo.review_reject(branch, reason=reason.strip())
            st.session_state[RESULT_KEY] = f"Rejected {branch}: rejections recorded in {common.short(commit)}."
            st.rerun()


@common.page
def review_page() -> None:
    repo = common.repo()
    st.title("Review")
    done = st.session_state.pop(RESULT_KEY, None)
    if done:
        st.success(common.md(done))
    reviews = repo.review_list()
    if not reviews:
        st.info("No open review branches. `memrepo dream` proposes anchor merges on a new one.")
        return
    st.dataframe(
        [{"branch": r.branch, "created": common.when(r.time), "merges": len(r.merges),
          "rejections": len(r.rejections)} for r in reviews],
        hide_index=True,
        width="stretch",
    )
    branch = st.selectbox("Review branch", [r.branch for r in reviews], key="review-branch")
    review = repo.review_show(branch)
    view = common.repo().at(None)
    st.subheader(f"{len(review.merges)} proposed merge(s)")
    for decision in review.merges:
        with st.container(border=True):
            merge_section(view, review, decision)
    if review.rejections:
        with st.expander(f"{len(review.rejections)} pair(s) the judge rejected"):
            for d in review.rejections:
                st.markdown(f"**{common.md(d.first_name)}** / **{common.md(d.second_name)}** "
                            f"({common.md(d.type)}, cosine {d.cosine:.3f})")
                common.show_text(d.rationale)
    if review.skill_runs:
        st.subheader("Skill steps and their evidence")
        common.cited_style()
        skill_steps_section(repo, review)
    commits = changes_section(repo, branch)
    actions(repo, review, commits)


if __name__ == "__main__":
    review_page()
