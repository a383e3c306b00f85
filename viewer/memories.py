"""Memories: filter records by type, time and text; a record's page with its front matter,
text, source (cited turns highlighted in context), the frames citing it, and its history."""

from __future__ import annotations

from datetime import date

import streamlit as st

from memrepo import records as rec
from viewer import common

CONTEXT_PARTS = 3  # parts shown before and after each cited part of a long source
WHOLE_SOURCE = 40  # sources with at most this many parts are shown whole
HISTORY_SCAN = 1500  # commits searched for a record's history (about 1 ms each; the page stays under 2 s)
TABLE_ROWS = 1000  # rows sent to the browser at most (the count says how many matched)


TIME_COLUMNS = {"when it happened": "happened", "when it was written": "mentioned"}


def filter_table(table, types: list[str], start: date | None, end: date | None, text: str, by: str = "happened"):
    """Rows of ``table`` of the ``types`` (all if empty), with column ``by`` in [start, end], containing ``text``.

    ``happened`` is the event date (the mention date when the event time is unknown);
    ``mentioned`` is the date the record was said or written.
    """
    mask = table["id"].notna()
    if types:
        mask &= table["type"].isin(types)
    if start:
        mask &= table[by] >= start.isoformat()
    if end:
        mask &= table[by] <= end.isoformat()
    if text.strip():
        mask &= table["_search"].str.contains(text.strip().lower(), regex=False)
    return table[mask]


def list_view() -> None:
    table = common.current_table()
    st.title("Memories")
    unreadable = table.attrs.get("unreadable", [])
    if unreadable:
        st.warning(common.md(f"{len(unreadable)} record(s) could not be read and are not listed (run memrepo doctor): "
                             + "; ".join(unreadable)))
    left, middle, right = st.columns([2, 3, 3])
    types = left.multiselect("Type", list(rec.TYPES), placeholder="all types")
    with middle:
        by = TIME_COLUMNS[st.radio("Time", list(TIME_COLUMNS), horizontal=True, label_visibility="collapsed")]
        dates = sorted(d for d in table[by].unique() if d) if not table.empty else []
        span = None
        if dates:
            first, last = date.fromisoformat(dates[0]), date.fromisoformat(dates[-1])
            span = st.date_input("Time range", value=(first, last), min_value=first, max_value=last)
    text = right.text_input("Text", placeholder="words in the summary, text or actor")
    start, end = (span if isinstance(span, tuple) and len(span) == 2 else (None, None))
    rows = filter_table(table, types, start, end, text, by)
    st.caption(f"{len(rows):,} of {len(table):,} records" + (f"; the first {TABLE_ROWS:,} are shown: narrow the filters to see others" if len(rows) > TABLE_ROWS else ""))
    shown = rows.head(TABLE_ROWS).drop(columns=["_search"])
    key = f"records-{st.session_state.get('records_table_generation', 0)}"
    event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=key)
    selected = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if selected:
        st.query_params["record"] = shown.iloc[selected[0]]["id"]
        st.rerun()
    st.caption("Select a row to open the record.")


def back_to_list() -> None:
    st.query_params.pop("record", None)
    st.session_state["records_table_generation"] = st.session_state.get("records_table_generation", 0) + 1


def record_view(record_id: str) -> None:
    view = common.view()
    record = view.get(record_id)
    st.button("← All memories", on_click=back_to_list)
    st.header(common.md(record.summary or record.id))
    st.caption(f"{common.code(record.id)} · {record.type} · {common.code(record.path)} · "
               f"at {common.code(common.short(view.commit))}")
    meta, body = st.columns([2, 3])
    with meta:
        st.subheader("Front matter")
        st.code(rec.dump_front_matter(rec.front_matter(record)), language="yaml")
    with body:
        st.subheader("Text")
        if record.encrypted:
            st.info("Encrypted vault entry: start the viewer with MEMREPO_VAULT_KEY (or _FILE) set to read it.")
        else:
            common.show_text(record.text)
    skill_runs_section(record)
    sources_section(view, record)
    frames_section(record)
    history_section(record)


def skill_runs_section(record) -> None:
    """A skill's ``[runs 1, 2]`` references expanded: each run its steps and cautions rest on, with the
    session's verbatim quotes (what `memrepo skills show` prints)."""
    if not (record.path.startswith(rec.SKILLS_FOLDER + "/") and record.path.endswith("/SKILL.md")):
        return
    try:
        _skill, runs = common.repo().skill_show(record.path.split("/")[2], rev=common.rev() or None)
    except common.MemrepoError as exc:
        st.error(common.md(str(exc)))
        return
    if not runs:
        return
    st.subheader("Runs the steps rest on")
    for run in runs:
        with st.expander(common.md(f"[runs {run['number']}] {run['session']} ({run['outcome']})")):
            common.show_text(run["task"])
            for quote in run["quotes"]:
                common.show_text(f"\u201c{quote['text']}\u201d ({run['source']}#{quote['part']})")


def sources_section(view, record) -> None:
    st.subheader("Source")
    if not record.sources:
        st.caption("This record cites no source.")
        return
    cited: dict[str, set[str]] = {}
    for citation in record.sources:
        source_id, anchor = rec.split_citation(citation)
        cited.setdefault(source_id, set()).update([anchor] if anchor else [])
    for source_id, anchors in cited.items():
        try:
            source = view.source(source_id)
        except common.MemrepoError as exc:
            st.error(common.md(f"Cited source {source_id} cannot be read: {exc}"))
            continue
        st.markdown(f"**{common.md(source.title or source.id)}** · {common.md(source.kind)} · "
                    f"{common.md(source.mention_time)} · {common.code(source.id)}")
        missing = sorted(a for a in anchors if source.part(a) is None)
        if missing:
            st.warning(common.md(f"Cited part(s) not in the source: {', '.join(missing)}"))
        show_parts(source, anchors)


def show_parts(source, anchors: set[str]) -> None:
    """The source's parts, the cited ones highlighted; long sources only around the cited parts."""
    parts = list(source.parts)
    keep = set(range(len(parts)))
    if len(parts) > WHOLE_SOURCE:
        hits = [i for i, p in enumerate(parts) if p.anchor in anchors]
        keep = {j for i in hits for j in range(i - CONTEXT_PARTS, i + CONTEXT_PARTS + 1) if 0 <= j < len(parts)}
    common.cited_style()
    previous = -1
    with st.container(border=True):
        for i, part in enumerate(parts):
            if i not in keep:
                continue
            if previous >= 0 and i != previous + 1:
                st.text("⋯")
            previous = i
            common.show_part(part, cited=part.anchor in anchors, key=f"{source.id}-{i}")


def frames_section(record) -> None:
    st.subheader("Frames citing this record")
    repo = common.repo()
    if not hasattr(repo, "graph_frames"):
        st.info(f"The provenance graph is {common.NOT_YET}.")
        return
    if record.type not in ("episodic", "semantic"):
        st.caption(f"{record.type.capitalize()} records are not indexed in the graph.")
        return
    from viewer.graph import frame_link, frame_rows

    frames = repo.graph_frames(cited=record.id, rev=common.view().commit)
    if not frames:
        st.caption("No frame cites this record (if it is new, `memrepo index` extracts its frames).")
        return
    st.dataframe(frame_rows(frames), hide_index=True, width="stretch")
    for frame in frames:
        frame_link(frame)


def history_section(record) -> None:
    st.subheader("History")
    repo, commit = common.repo(), common.view().commit
    changes = repo.history(record.id, rev=commit, scan=HISTORY_SCAN)
    if commit and len(repo.log(rev=commit, limit=HISTORY_SCAN + 1)) > HISTORY_SCAN:
        st.caption(f"Searched the newest {HISTORY_SCAN:,} commits; {common.code(f'memrepo log {record.id}')} "
                   "shows the whole history.")
    for i, (commit, files) in enumerate(changes):
        with st.expander(f"{common.short(commit.id)} · {common.when(commit.time)} · {common.md(commit.author)} · "
                         f"{common.md(commit.summary)}", expanded=i == 0):
            for change in files:
                if change.diff:
                    st.code(change.diff, language="diff")
                else:
                    st.caption(common.md(f"{change.path}: {change.status}; {change.note}"))


@common.page
def memories_page() -> None:
    record_id = st.query_params.get("record")
    if record_id:
        record_view(record_id)
    else:
        list_view()


if __name__ == "__main__":
    memories_page()
