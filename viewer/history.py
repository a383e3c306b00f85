"""History: branches (review branches included), commits with their diffs, and reading
the repository as of any commit."""

from __future__ import annotations

import streamlit as st

from viewer import common

REVIEW_PREFIX = "dream/"  # AutoDream proposes its changes on branches named dream/...
FILES_SHOWN = 25  # diffs rendered for one commit at most (every one is sent to the browser)


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


def reviews_note(repo) -> None:
    """How many review branches are open, with a link to the Review page (which shows and decides them)."""
    if not hasattr(repo, "review_list"):
        return
    reviews = repo.review_list()
    if reviews:
        st.page_link("review.py", label=f"{len(reviews)} open review branch(es): review them",
                     icon=":material/rate_review:")


def commit_label(commit) -> str:
    return f"{common.short(commit.id)} · {common.when(commit.time)} · {commit.summary}"


@common.page
def history_page() -> None:
    repo = common.repo()
    st.title("History")
    branch = branches_section(repo)
    reviews_note(repo)
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
