"""History: who wrote what (commit authors, agents and people, and what their commits added),
branches (review branches included), commits with their diffs, and reading the repository as
of any commit."""

from __future__ import annotations

import streamlit as st

from memrepo import records as rec
from viewer import common

REVIEW_PREFIX = "dream/"  # AutoDream proposes its changes on branches named dream/...
FILES_SHOWN = 25  # diffs rendered for one commit at most (every one is sent to the browser)
AUTHOR_COMMITS = 40  # an author's newest commits whose files are counted (about 7 ms each at 10,000 records)


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
    return st.selectbox("Branch", names, index=names.index(current) if current in names else 0, key="branch")


def reviews_note(repo) -> None:
    """How many review branches are open, with a link to the Review page (which shows and decides them)."""
    if not hasattr(repo, "review_list"):
        return
    reviews = repo.review_list()
    if reviews:
        st.page_link("review.py", label=f"{len(reviews)} open review branch(es): review them",
                     icon=":material/rate_review:")


def commit_label(commit) -> str:
    return f"{common.short(commit.id)} · {common.when(commit.time)} · {commit.author} · {commit.summary}"


def kind_of(path: str) -> str:
    """What a file is, for counting: a record type, source, graph file or other."""
    top = path.split("/", 1)[0]
    if path.startswith("sources/"):
        return "source"
    if path.startswith("graph/"):
        return "graph file"
    for type_ in rec.TYPES:
        if top == rec.FOLDER[type_].split("/")[0]:
            return type_
    return "other"


@st.cache_resource(max_entries=4096, show_spinner=False)
def commit_counts(root: str, commit: str) -> dict[str, int]:
    """``"<kind> <status>"`` -> files, for one commit (a commit never changes, so cached by its id)."""
    counts: dict[str, int] = {}
    for path, status in common._open(root).commit_paths(commit):
        key = f"{kind_of(path)} {status}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def who_wrote_what(repo, commit: str | None) -> None:
    """Commit authors (people and agents, by their Git identity), what their commits wrote, and who the
    records are about or who said them (the records' actor)."""
    st.subheader("Who wrote what")
    root = str(repo.root)
    log = common.commit_log(root, commit)
    if log.empty:
        st.info("No commits yet.")
        return
    people = common.authors(log)
    st.caption(f"{len(people):,} author(s) of {len(log):,} commit(s): each Git identity that wrote to the "
               "repository, a person or an agent.")
    st.dataframe(people, hide_index=True, width="stretch")
    author = st.selectbox("Author", list(people["author"]), help="What this author's newest commits wrote.",
                          key="author")
    mine = log[log["author"] == author].head(AUTHOR_COMMITS)
    rows = []
    for _, c in mine.iterrows():
        counts = commit_counts(root, c["id"])
        added = sum(n for k, n in counts.items() if k.endswith(" added") and k.split(" ")[0] in rec.TYPES)
        changed = sum(n for k, n in counts.items() if k.split(" ")[0] in rec.TYPES and not k.endswith(" added"))
        rows.append({"commit": common.short(c["id"]), "time": common.when(c["time"]), "message": c["summary"],
                     "records added": added, "records changed or deleted": changed,
                     "sources added": counts.get("source added", 0),
                     "files": ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))})
    shown = f"the newest {len(mine)} of" if len(mine) < int((log["author"] == author).sum()) else "all"
    st.caption(f"{shown} {int((log['author'] == author).sum()):,} commit(s) by this author")
    st.dataframe(rows, hide_index=True, width="stretch")

    table = common.records_table(root, commit)
    if not table.empty:
        st.markdown("**Who the records are about or who said them** (the records' actor)")
        actors = table.assign(actor=table["actor"].replace("", "(none)")).groupby(["actor", "type"]).size()
        st.dataframe(actors.unstack(fill_value=0).reset_index().sort_values("actor"), hide_index=True,
                     width="stretch")


@common.page
def history_page() -> None:
    repo = common.repo()
    st.title("History")
    branch = branches_section(repo)
    reviews_note(repo)
    tip = repo.branches().get(branch)
    who_wrote_what(repo, tip)
    limit = st.number_input("Commits to list", min_value=10, max_value=5000, value=50, step=50)
    commits = repo.log(rev=branch, limit=int(limit)) if repo.branches() else []
    st.subheader(f"Commits on {common.md(branch)}")
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
    chosen = by_label[st.selectbox("Commit", list(by_label), key="commit")]
    commit_section(repo, chosen)


def commit_section(repo, commit) -> None:
    st.subheader(f"Commit {common.short(commit.id)}")
    st.caption(f"{common.md(commit.author)} · {common.when(commit.time)}")
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
        with st.expander(f"{change.status}: {common.md(change.path)}", expanded=i < 3):
            if change.diff:
                st.code(change.diff, language="diff")
            else:
                st.caption(common.md(change.note))


if __name__ == "__main__":
    history_page()
