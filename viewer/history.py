"""History: branches (review branches included), commits with their diffs, and reading
the repository as of any commit."""

from __future__ import annotations

import streamlit as st

from viewer import common

REVIEW_PREFIX = "dream/"  # AutoDream proposes its changes on branches named dream/...
FILES_SHOWN = 100  # diffs rendered for one commit at most


def branches_section(repo) -> str:
    """The branch table; returns the branch the user picked."""
    branches = repo.branches()
    current = repo.current_branch()
    st.subheader("Branches")
    st.dataframe(
        [
            {"branch": name, "tip": common.short(sha), "kind": "review" if name.startswith(REVIEW_PREFIX) else "branch",
             "checked out": name == current}
            for name, sha in branches.items()
        ],
        hide_index=True,
        width="stretch",
    )
    names = list(branches) or ["main"]
    return st.selectbox("Branch", names, index=names.index(current) if current in names else 0)


def reviews_section(repo) -> None:
    """Open review branches (AutoDream's proposals) with their merges and evidence; approve/reject if allowed."""
    if not hasattr(repo, "review_list"):
        st.caption(f"Review branches are {common.NOT_YET}.")
        return
    reviews = repo.review_list()
    st.subheader(f"Open reviews ({len(reviews)})")
    outcome = st.session_state.pop("review_outcome", None)
    if outcome:
        (st.success if outcome[0] == "ok" else st.error)(outcome[1])
    if not reviews:
        st.caption("No review branch is waiting (`memrepo dream` proposes merges on dream/... branches).")
        return
    for review in reviews:
        shown = common.review(str(repo.root), review.tip, review.branch)
        title = f"{review.branch} · {common.when(review.time)} · {len(shown.merges)} merge(s), " \
                f"{len(shown.rejections)} rejection(s)"
        with st.expander(title, expanded=True):
            st.code(review.message.rstrip("\n"), language=None)
            decisions = [*shown.merges, *shown.rejections]
            if decisions:
                st.dataframe(
                    [{"kind": d.kind, "alias": d.alias_name if d.kind == "merge" else d.first_name,
                      "representative": d.representative_name if d.kind == "merge" else d.second_name,
                      "type": d.type, "cosine": round(d.cosine, 3), "verdict": d.verdict, "rationale": d.rationale,
                      "model": d.model} for d in decisions],
                    hide_index=True, width="stretch",
                )
            for decision in shown.merges:
                for side in shown.evidence.get(decision.key, ()):
                    st.markdown(f"**{common.md_escape(side.name)}** ({side.total} record(s))")
                    for record_id, summary in side.records:
                        common.record_link(record_id, f"{record_id} · {summary}")
            review_actions(repo, review.branch)


def _decide(action: str, branch: str) -> None:
    """Approve or reject ``branch`` (a button callback); the outcome is shown on the next run."""
    repo = common.repo()
    try:
        if action == "approve":
            commit = repo.review_approve(branch)
            st.session_state["review_outcome"] = ("ok", f"Merged {branch} (commit {common.short(commit)}).")
        else:
            reason = st.session_state.get(f"reason-{branch}") or None
            commit = repo.review_reject(branch, reason=reason)
            st.session_state["review_outcome"] = ("ok", f"Rejected {branch} (commit {common.short(commit)}).")
    except common.MemrepoError as exc:
        st.session_state["review_outcome"] = ("error", f"{branch}: {exc}")


def review_actions(repo, branch: str) -> None:
    if not common.allow_review():
        st.caption("Read-only: start the viewer with `memrepo view --allow-review` to approve or reject.")
        return
    left, middle, right = st.columns([1, 1, 3])
    left.button("Approve (merge)", key=f"approve-{branch}", type="primary", on_click=_decide, args=("approve", branch))
    middle.button("Reject", key=f"reject-{branch}", on_click=_decide, args=("reject", branch))
    right.text_input("Reason for a rejection", key=f"reason-{branch}", label_visibility="collapsed",
                     placeholder="reason for a rejection (optional)")


def commit_label(commit) -> str:
    return f"{common.short(commit.id)} · {common.when(commit.time)} · {commit.summary}"


@common.page
def history_page() -> None:
    repo = common.repo()
    st.title("History")
    branch = branches_section(repo)
    reviews_section(repo)
    limit = st.number_input("Commits to list", min_value=10, max_value=5000, value=50, step=50)
    commits = repo.log(rev=branch, limit=int(limit)) if repo.branches() else []
    st.subheader(f"Commits on {branch}")
    if not commits:
        st.info("No commits yet.")
        return
    st.dataframe(
        [{"commit": common.short(c.id), "time": common.when(c.time), "author": c.author, "message": c.summary,
          "parents": len(c.parents)} for c in commits],
        hide_index=True,
        width="stretch",
    )
    by_label = {commit_label(c): c for c in commits}
    chosen = by_label[st.selectbox("Commit", list(by_label))]
    commit_section(repo, chosen)


def commit_section(repo, commit) -> None:
    st.subheader(f"Commit {common.short(commit.id)}")
    st.caption(f"{commit.author} · {common.when(commit.time)}")
    st.code(commit.message.rstrip("\n"), language=None)
    if common.rev() and common.view().commit == commit.id:
        st.success("The other pages read the repository as of this commit.")
    else:
        st.button(
            "Read the repository as of this commit",
            on_click=common.set_rev,
            args=(commit.id,),
            help="Overview, Memories, Graph and Recall then show the memory exactly as it was at this commit.",
        )
    changes = repo.changes(commit.id, limit=FILES_SHOWN + 1)
    if len(changes) > FILES_SHOWN:
        st.caption(f"More than {FILES_SHOWN} files changed; the first {FILES_SHOWN} are shown.")
        changes = changes[:FILES_SHOWN]
    st.caption(f"{len(changes)} file(s) changed")
    for i, change in enumerate(changes):
        with st.expander(f"{change.status}: {change.path}", expanded=i < 3):
            if change.diff:
                st.code(change.diff, language="diff")
            else:
                st.caption(change.note)


if __name__ == "__main__":
    history_page()
