"""Overview: counts by memory type, the memory over time (records per type per month, commits per
author), graph size, latest commits, index state."""

from __future__ import annotations

import streamlit as st

from viewer import common


def month_counts(per_day: dict[tuple[str, str], int]):
    """Records per mention month and type, as a long table for a stacked bar chart."""
    import pandas as pd

    months: dict[tuple[str, str], int] = {}
    for (day, type_), n in per_day.items():
        months[(day[:7], type_)] = months.get((day[:7], type_), 0) + n
    rows = [{"month": m, "type": t, "records": n} for (m, t), n in sorted(months.items())]
    return pd.DataFrame(rows, columns=["month", "type", "records"])


@common.page
def overview_page() -> None:
    repo = common.repo()
    view = common.view()
    data = common.stats(str(repo.root), view.commit)
    st.title("Overview")
    st.caption(f"{common.code(repo.root)} at {common.code(common.short(view.commit))}")

    st.subheader("Records by memory type")
    counts = data["records"]
    columns = st.columns(len(counts) + 1)
    for column, (type_, n) in zip(columns, counts.items()):
        column.metric(type_, f"{n:,}")
    columns[-1].metric("sources", f"{data['sources']:,}")

    st.subheader("Records per type per month")
    table = month_counts(data["per_day"])
    if table.empty:
        st.info("No dated records yet.")
    else:
        st.caption("By the date each record was said or written (the mention date in its id).")
        st.bar_chart(table, x="month", y="records", color="type", stack=True)

    st.subheader("Commits per author")
    authors_section(str(repo.root), view.commit)

    st.subheader("Graph")
    graph_section(data)

    st.subheader("Latest commits")
    commits = repo.log(rev=view.commit, limit=10) if view.commit else []
    st.dataframe(
        [{"commit": common.short(c.id), "time": common.when(c.time), "author": c.author, "message": c.summary}
         for c in commits],
        hide_index=True,
        width="stretch",
    )

    st.subheader("Indexes")
    index_section()


def authors_section(root: str, commit: str | None) -> None:
    """Commits per author and month (a stacked bar chart) and the authors' totals."""
    log = common.commit_log(root, commit)
    if log.empty:
        st.info("No commits yet.")
        return
    per_month = log.groupby(["month", "author"]).size().reset_index(name="commits")
    st.bar_chart(per_month, x="month", y="commits", color="author", stack=True)
    st.dataframe(common.authors(log), hide_index=True, width="stretch")


def graph_section(data: dict) -> None:
    files = data["graph_files"]
    repo = common.repo()
    figures: dict[str, int] = {"frame files": files["frames"], "merge decision files": files["decisions"]}
    if hasattr(repo, "graph_stats"):
        try:
            counts = common.graph_stats(str(repo.root), data["commit"])
        except common.MemrepoError as exc:
            st.warning(f"The graph index could not be read: {common.md(exc)}")
        else:
            figures = {"anchors": counts["anchors"], "frames": counts["frames"], "role arms": counts["arms"],
                       "citations": counts["citations"], "merged anchors": counts["merged"], **figures}
            if counts.get("problems"):
                st.warning(f"{counts['problems']} graph file problem(s): run `memrepo doctor`.")
    else:
        st.caption(f"Graph statistics are {common.NOT_YET}.")
    columns = st.columns(len(figures))
    for column, (name, value) in zip(columns, figures.items()):
        column.metric(name, f"{value:,}")


def index_section() -> None:
    status = getattr(common.repo(), "index_status", None)
    if status is None:
        st.info(f"Index status is {common.NOT_YET}.")
        return
    try:
        states = status()
    except common.MemrepoError as exc:
        st.warning(f"The indexes could not be read: {common.md(exc)}")
        return
    st.dataframe(
        [{"index": s["index"], "reflects commit": common.short(s["commit"]) if s["commit"] else "missing",
          "state": "current" if s["current"] else ("behind HEAD" if s["commit"] else "not built"),
          "schema": s["schema"], "generation": s["generation"]} for s in states],
        hide_index=True,
        width="stretch",
    )
    if any(not s["current"] for s in states):
        st.caption("Indexes are derived and rebuilt per commit: `memrepo reindex` brings them to HEAD.")


if __name__ == "__main__":
    overview_page()
