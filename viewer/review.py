"""Review: open AutoDream branches, each proposed merge with both anchors' evidence side by side,
and approve/reject buttons (the viewer's only writing, behind ``memrepo view --allow-review``)."""

from __future__ import annotations

import streamlit as st

from viewer import common

RESULT_KEY = "review_result"  # session state: the message of the last approve/reject


def merge_section(review, decision) -> None:
    """One proposed merge: the verdict, then the records behind each anchor in two columns."""
    st.markdown(f"**{common.md_escape(decision.alias_name)}** → **{common.md_escape(decision.representative_name)}** "
                f"· {decision.type} · cosine {decision.cosine:.3f}")
    st.caption(f"Verdict ({decision.model}): {decision.rationale}")
    sides = review.evidence.get(decision.key, ())
    for column, side, label in zip(st.columns(2), sides, ("merged into the other", "kept representative")):
        with column:
            st.markdown(f"*{common.md_escape(side.name)}* ({label}): {side.total} records")
            for record_id, summary in side.records:
                common.record_link(record_id, label=f"{record_id} · {summary[:80]}")


def actions(repo, branch: str) -> None:
    if not common.allow_review():
        st.caption("Read-only: start the viewer with `memrepo view --allow-review` to approve or reject.")
        return
    left, right = st.columns(2)
    if left.button("Approve (merge into the current branch)", type="primary", key=f"approve-{branch}"):
        commit = repo.review_approve(branch)
        st.session_state[RESULT_KEY] = f"Approved {branch}: merge commit {common.short(commit)}."
        st.rerun()
    if right.button("Reject (record as not the same)", key=f"reject-{branch}"):
        commit = repo.review_reject(branch)
        st.session_state[RESULT_KEY] = f"Rejected {branch}: rejections recorded in {common.short(commit)}."
        st.rerun()


@common.page
def review_page() -> None:
    repo = common.repo()
    st.title("Review")
    done = st.session_state.pop(RESULT_KEY, None)
    if done:
        st.success(done)
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
    branch = st.selectbox("Review branch", [r.branch for r in reviews])
    review = repo.review_show(branch)
    st.subheader(f"{len(review.merges)} proposed merge(s)")
    for decision in review.merges:
        with st.container(border=True):
            merge_section(review, decision)
    if review.rejections:
        with st.expander(f"{len(review.rejections)} pair(s) the judge rejected"):
            for d in review.rejections:
                st.markdown(f"- {common.md_escape(d.first_name)} / {common.md_escape(d.second_name)} "
                            f"({d.type}, cosine {d.cosine:.3f}): {common.md_escape(d.rationale)}")
    with st.expander("Commit message"):
        st.code(review.message, language=None)
    actions(repo, branch)


if __name__ == "__main__":
    review_page()
