"""Graph: a picture a person can read. The page opens on the most connected anchors and their
frames; an anchor's page draws one page of its strongest neighbours (with "N more" and paging)
and lists the records that mention it by their text; a frame's page shows predicate, roles,
literals, times, status and the records it cites, down to the source turns. Every anchor and
frame in a picture is a link to its page.

Names and record text are data from strangers: in the pictures they are Graphviz string
labels (quoted, backslashes doubled, ``&`` written as an entity, so they show as written); in
links and headings they pass through :func:`common.md`.
"""

from __future__ import annotations

import textwrap
from typing import Any
from urllib.parse import quote

import streamlit as st

from memrepo.errors import NotFoundError
from viewer import common

HUBS_DRAWN = 6  # anchors in the opening picture
HUB_NEIGHBOURS = 3  # neighbours drawn around each of them
HUBS_LISTED = 30  # anchors in the table under it
NEIGHBOURS_PER_PAGE = 6  # neighbours drawn around one anchor per page
FRAMES_PER_NEIGHBOUR = 2  # shared frames drawn per neighbour (the count says how many there are)
RECORDS_PER_PAGE = 20  # records listed under an anchor per page
PICTURE_SIZE = "11,7"  # inches: Graphviz scales a larger drawing down to this, so it fits a screen
LABEL_WIDTH = 28  # characters per line in a picture's node
MAX_FRAMES = 240  # frames in an anchor's table (the graph API's cap)


# --- pictures ------------------------------------------------------------------------


def dot_string(text: str) -> str:
    """``text`` as a quoted Graphviz string that shows as written.

    Backslashes are doubled (Graphviz reads ``\\N``, ``\\G``, ``\\l``... in labels) and ``&``
    is written ``&amp;`` (Graphviz passes entities such as ``&lt;`` through to the SVG).
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


def wrap(text: str, lines: int = 2) -> str:
    """``text`` in at most ``lines`` lines of LABEL_WIDTH characters, cut with … if longer."""
    return "\n".join(textwrap.wrap(" ".join(text.split()), LABEL_WIDTH, max_lines=lines, placeholder=" …")) or "—"


def anchor_url(name: str) -> str:
    return "graph?anchor=" + quote(name, safe="")


def frame_url(iri: str) -> str:
    return "graph?frame=" + quote(iri, safe="")


class Picture:
    """A Graphviz drawing of anchors (ellipses) and frames (boxes) with arms labelled by role.

    Every node links to its page on this server (a relative URL); its tooltip holds the full text.
    """

    def __init__(self, summaries: dict[str, str]):
        self.summaries = summaries
        self.anchors: dict[str, tuple[str, str, bool]] = {}  # iri -> (label, tooltip, main)
        self.frames: dict[str, Any] = {}
        self.notes: list[tuple[str, str, str]] = []  # (node id, text, attached to)

    def anchor(self, iri: str, name: str, detail: str = "", main: bool = False) -> None:
        label = wrap(name) + (f"\n{detail}" if detail else "")
        if iri not in self.anchors or main:
            self.anchors[iri] = (label, name, main)

    def frame(self, frame: Any) -> None:
        self.frames[frame.iri] = frame

    def note(self, text: str, attached_to: str) -> None:
        self.notes.append((f"note{len(self.notes)}", text, attached_to))

    def frame_label(self, frame: Any) -> tuple[str, str]:
        lits = [f"{k}={'|'.join(v)}" for k, v in sorted(frame.literals.items())][:2]
        hidden = [a for a in frame.arms if a.anchor not in self.anchors]
        lines = [frame.predicate + (f" @{frame.event_times[0][:10]}" if frame.event_times else "")]
        lines += [wrap(lit, 1) for lit in lits]
        if hidden:
            lines.append(wrap(", ".join(f"{a.role}={a.name}" for a in hidden), 1))
        quote_ = next((self.summaries[c] for c in frame.citations if c in self.summaries), "")
        if quote_:
            lines.append("“" + wrap(quote_) + "”")
        tooltip = frame.render() + (f"\n{quote_}" if quote_ else "")
        return "\n".join(lines), tooltip

    def dot(self) -> str:
        lines = ["digraph memory {", "  rankdir=LR;", f'  size="{PICTURE_SIZE}";', "  nodesep=0.15; ranksep=0.5;",
                 '  node [fontname="Helvetica", fontsize=10, target="_self"];',
                 '  edge [fontname="Helvetica", fontsize=9, color="#777777", arrowhead=none];']
        for iri, frame in self.frames.items():
            label, tooltip = self.frame_label(frame)
            lines.append(f"  {dot_string(iri)} [shape=box, style=\"rounded,filled\", fillcolor=\"#fdf2d0\", "
                         f"label={dot_string(label)}, tooltip={dot_string(tooltip)}, URL={dot_string(frame_url(iri))}];")
            for arm in frame.arms:  # main anchors left of their frames, the others right of them
                if arm.anchor in self.anchors:
                    ends = (arm.anchor, iri) if self.anchors[arm.anchor][2] else (iri, arm.anchor)
                    lines.append(f"  {dot_string(ends[0])} -> {dot_string(ends[1])} [label={dot_string(arm.role)}];")
        for iri, (label, name, main) in self.anchors.items():
            style = ', style=filled, fillcolor="#cfe3ff", penwidth=2' if main else ""
            lines.append(f"  {dot_string(iri)} [shape=ellipse, label={dot_string(label)}, tooltip={dot_string(name)}, "
                         f"URL={dot_string(anchor_url(name))}{style}];")
        for node, text, attached in self.notes:
            lines.append(f"  {node} [shape=plaintext, fontcolor=\"#555555\", label={dot_string(text)}];")
            lines.append(f"  {dot_string(attached)} -> {node} [style=dotted, arrowhead=none];")
        lines.append("}")
        return "\n".join(lines)


def draw_neighbourhood(picture: Picture, hood: Any, main: bool = True) -> None:
    """Add an anchor, one page of its neighbours and their shared frames to ``picture``."""
    center = hood.anchor
    picture.anchor(center.iri, center.name, f"{center.type} · {len(center.rows)} records", main=main)
    for n in hood.neighbours:
        picture.anchor(n.anchor.iri, n.anchor.name, f"{n.anchor.type} · {n.shared} shared")
    for n in hood.neighbours:
        for frame in n.frames:
            picture.frame(frame)
        if n.shared > len(n.frames):
            picture.note(f"+{n.shared - len(n.frames)} more", n.anchor.iri)
    for frame in hood.alone:
        picture.frame(frame)
    if hood.alone_total > len(hood.alone):
        picture.note(f"+{hood.alone_total - len(hood.alone)} more of its own", center.iri)


# --- cached per commit ---------------------------------------------------------------------


@st.cache_resource(max_entries=8, show_spinner="Reading record summaries…")
def summaries(root: str, commit: str | None) -> dict[str, str]:
    """Record id -> summary at ``commit`` (from the cached record table)."""
    table = common.records_table(root, commit)
    return dict(zip(table["id"], table["summary"]))


@st.cache_resource(max_entries=8, show_spinner="Finding the most connected anchors…")
def hubs(root: str, commit: str | None, limit: int) -> list[Any]:
    return common._open(root).graph_hubs(limit=limit, rev=commit)


@st.cache_resource(max_entries=256, show_spinner=False)
def neighbourhood(root: str, commit: str | None, name: str, offset: int, limit: int, frames: int) -> Any:
    return common._open(root).graph_neighbours(name, offset=offset, limit=limit, frames=frames, rev=commit)


@st.cache_resource(max_entries=64, show_spinner=False)
def anchor_beliefs(root: str, commit: str | None, iri: str) -> list[dict[str, Any]]:
    return common._open(root).graph_beliefs(iri, rev=commit)


@st.cache_resource(max_entries=64, show_spinner=False)
def anchor_frames(root: str, commit: str | None, name: str, predicate: str) -> list[Any]:
    return common._open(root).graph_frames(anchor=name, predicate=predicate or None, rev=commit, limit=MAX_FRAMES)


# --- tables and links ------------------------------------------------------------------


def frame_rows(frames: list[Any]) -> list[dict[str, Any]]:
    """One table row per frame (FrameInfo from the graph API)."""
    return [
        {
            "predicate": f.predicate,
            "arms": "; ".join(f"{a.role}: {a.name}" for a in f.arms),
            "literals": "; ".join(f"{k}={'|'.join(v)}" for k, v in sorted(f.literals.items())),
            "event time": "|".join(f.event_times),
            "status": f.status or "",
            "cites": ", ".join(f.citations),
            "frame": f.iri,
        }
        for f in frames
    ]


def frame_link(frame: Any) -> None:
    arms = ", ".join(f"{a.role}={a.name}" for a in frame.arms)
    st.page_link("graph.py", label=common.md(f"{frame.predicate}({arms})"), query_params={"frame": frame.iri},
                 icon=":material/hub:")


def anchor_link(name: str, detail: str = "") -> None:
    st.page_link("graph.py", label=common.md(name) + (f" · {common.md(detail)}" if detail else ""),
                 query_params={"anchor": name}, icon=":material/label:")


def pager(key: str, total: int, size: int, noun: str) -> int:
    """The offset of the page of ``total`` items shown; "a–b of N (k more)" and Previous/Next buttons."""
    pages = max(1, -(-total // size))
    page = min(max(int(st.session_state.get(key, 0)), 0), pages - 1)
    start, end = page * size, min(total, (page + 1) * size)
    if total > size:
        left, middle, right = st.columns([1, 4, 1])
        left.button("← Previous", key=f"{key}-prev", disabled=page == 0,
                    on_click=lambda: st.session_state.__setitem__(key, page - 1))
        middle.caption(f"{noun} {start + 1}–{end} of {total:,} ({total - end:,} more)")
        right.button("Next →", key=f"{key}-next", disabled=page >= pages - 1,
                     on_click=lambda: st.session_state.__setitem__(key, page + 1))
    return start


SELECTION = "graph_selection_generation"  # part of every table's key: a selection is used once


def table_key(name: str) -> str:
    return f"{name}-{st.session_state.get(SELECTION, 0)}"


def open_selected(event: Any, rows: list[dict[str, Any]], param: str, column: str) -> None:
    """Go to the page of the row selected in a table (``?param=row[column]``)."""
    selected = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if selected:
        st.session_state[SELECTION] = st.session_state.get(SELECTION, 0) + 1  # fresh tables on the next page
        st.query_params.clear()
        st.query_params[param] = rows[selected[0]][column]
        st.rerun()


# --- the opening picture ------------------------------------------------------------------


def landing() -> None:
    root, commit = str(common.repo().root), common.view().commit
    top = hubs(root, commit, HUBS_LISTED)
    if not top:
        st.info("The graph has no anchors yet: `memrepo index` extracts frames from the records.")
        return
    st.subheader("The most connected anchors")
    st.caption(f"The {min(HUBS_DRAWN, len(top))} anchors most records mention, each with its "
               f"{HUB_NEIGHBOURS} strongest neighbours and a frame they share. Click an anchor or a frame to open it.")
    picture = Picture(summaries(root, commit))
    for hub in top[:HUBS_DRAWN]:
        picture.anchor(hub.iri, hub.name, f"{hub.type} · {hub.records} records", main=True)
    for hub in top[:HUBS_DRAWN]:
        hood = neighbourhood(root, commit, hub.name, 0, HUB_NEIGHBOURS, 1)
        for n in hood.neighbours:
            picture.anchor(n.anchor.iri, n.anchor.name, f"{n.anchor.type} · {n.anchor.records} records")
            for frame in n.frames:
                picture.frame(frame)
    st.graphviz_chart(picture.dot())
    rows = [{"anchor": h.name, "type": h.type, "records": h.records, "frames": h.frames} for h in top]
    event = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=table_key("hubs"))
    st.caption("Select a row to open the anchor.")
    open_selected(event, rows, "anchor", "anchor")


# --- an anchor -----------------------------------------------------------------------------


def anchor_section(name: str, predicate: str) -> None:
    repo, commit = common.repo(), common.view().commit
    root = str(repo.root)
    try:
        found = common.graph_anchor(root, commit, name)
    except NotFoundError as exc:
        st.warning(common.md(exc))
        suggest(name)
        return
    anchor = found.anchor
    st.subheader(common.md(anchor.name))
    facts = [f"type **{common.md(anchor.type)}**", f"key {common.code(anchor.key)}", f"{anchor.frame_count} frame(s)",
             f"{len(anchor.rows)} record(s)"]
    if anchor.aliases:
        facts.append("aliases: " + ", ".join(common.md(a) for a in anchor.aliases))
    if anchor.members:
        facts.append(f"{len(anchor.members)} merged anchor(s)")
    st.markdown(" · ".join(facts))
    st.caption(common.code(anchor.iri))

    if predicate.strip():
        frames = anchor_frames(root, commit, name, predicate.strip())
        if not frames:
            st.info(common.md(f"No frame binds this anchor with predicate {predicate.strip()!r}."))
        else:
            picture = Picture(summaries(root, commit))
            picture.anchor(anchor.iri, anchor.name, anchor.type, main=True)
            start = pager(f"pred-{anchor.iri}-{predicate}", len(frames), NEIGHBOURS_PER_PAGE * 2, "Frames")
            for frame in frames[start:start + NEIGHBOURS_PER_PAGE * 2]:
                for arm in frame.arms:
                    picture.anchor(arm.anchor, arm.name)
                picture.frame(frame)
            st.graphviz_chart(picture.dot())
    else:
        neighbours_section(root, commit, anchor)
    beliefs_section(root, commit, anchor)
    frames_table(root, commit, name, predicate.strip(), anchor.frame_count)
    records_section(root, commit, anchor)


def beliefs_section(root: str, commit: str | None, anchor: Any) -> None:
    """The anchor's one-value relations (job, home, partner, owner, ...) as a timeline: each frame with the
    interval its value held and the records it rests on (memrepo.graph.beliefs)."""
    beliefs = anchor_beliefs(root, commit, anchor.iri)
    if not beliefs:
        return
    st.markdown(f"**Beliefs over time** ({len(beliefs):,}): a newer statement closes the older one")
    rows = [{"relation": b["slot"] + (f" ({b['of']})" if b["of"] else ""), "value": b["text"],
             "valid from": b["valid_from"][:10], "valid until": (b["valid_until"] or "now")[:10],
             "conflict": "yes" if b["conflicts"] else "", "frame": b["frame_text"],
             "cites": ", ".join(b["citations"])} for b in beliefs]
    st.dataframe(rows, hide_index=True, width="stretch", key=table_key(f"beliefs-{anchor.iri}"))


def neighbours_section(root: str, commit: str | None, anchor: Any) -> None:
    key = f"nb-{anchor.iri}"
    first = neighbourhood(root, commit, anchor.name, 0, NEIGHBOURS_PER_PAGE, FRAMES_PER_NEIGHBOUR)
    if not first.total and not first.alone_total:
        st.info("No frame binds this anchor.")
        return
    st.markdown(f"**Neighbours** ({first.total:,}), strongest first: the anchors that share the most frames with it")
    start = pager(key, first.total, NEIGHBOURS_PER_PAGE, "Neighbours")
    hood = first if start == 0 else neighbourhood(root, commit, anchor.name, start, NEIGHBOURS_PER_PAGE,
                                                  FRAMES_PER_NEIGHBOUR)
    picture = Picture(summaries(root, commit))
    draw_neighbourhood(picture, hood)
    st.graphviz_chart(picture.dot())
    st.caption("Click an anchor or a frame to open it.")
    for n in hood.neighbours:
        anchor_link(n.anchor.name, f"{n.anchor.type}, {n.shared:,} shared frame(s)")


def frames_table(root: str, commit: str | None, name: str, predicate: str, count: int) -> None:
    frames = anchor_frames(root, commit, name, predicate)
    if not frames:
        return
    with st.expander(f"All its frames ({count:,})" if not predicate else f"Its {common.md(predicate)} frames"):
        if len(frames) >= MAX_FRAMES:
            st.caption(f"The first {MAX_FRAMES} in frame-id order.")
        rows = frame_rows(frames)
        event = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun",
                             selection_mode="single-row", key=table_key(f"frames-{name}-{predicate}"))
        st.caption("Select a row to open the frame.")
        open_selected(event, rows, "frame", "frame")


def records_section(root: str, commit: str | None, anchor: Any) -> None:
    rows = anchor.rows
    st.markdown(f"**Records that mention it** ({len(rows):,})")
    text = summaries(root, commit)
    start = pager(f"rec-{anchor.iri}", len(rows), RECORDS_PER_PAGE, "Records")
    for record_id in rows[start:start + RECORDS_PER_PAGE]:
        common.record_link(record_id, text.get(record_id, "(not in this revision)"))


def suggest(name: str, limit: int = 10) -> None:
    """Links to anchors whose names contain ``name`` or come close to it."""
    import difflib

    if not hasattr(common.repo(), "graph_anchor_names"):
        return
    names = common.anchor_names(str(common.repo().root), common.view().commit)
    folded = name.casefold()
    found = [n for n in names if folded in n.casefold()][:limit]
    found += [n for n in difflib.get_close_matches(name, names, n=limit, cutoff=0.6) if n not in found]
    if found:
        st.markdown("Did you mean:")
        for other in found[:limit]:
            anchor_link(other)


# --- a frame ---------------------------------------------------------------------------------


def frame_section(iri: str) -> None:
    repo, view = common.repo(), common.view()
    frame = repo.graph_frame(iri, rev=view.commit)
    st.subheader(f"Frame: {common.md(frame.predicate)}")
    st.caption(common.code(frame.iri))
    picture = Picture(summaries(str(repo.root), view.commit))
    for arm in frame.arms:
        picture.anchor(arm.anchor, arm.name)
    picture.frame(frame)
    st.graphviz_chart(picture.dot())
    st.markdown(
        f"- **predicate**: {common.md(frame.predicate)}\n"
        f"- **kind**: {common.md(frame.kind or '—')}\n"
        f"- **event time**: {common.md(', '.join(frame.event_times) or '—')}\n"
        f"- **mention time**: {common.md(', '.join(frame.mention_times) or '—')}\n"
        f"- **status**: {common.md(frame.status or '—')}"
        + (f" (its records say {common.md(', '.join(frame.statuses))})" if len(frame.statuses) > 1 else "")
    )
    st.markdown("**Roles**")
    st.dataframe([{"role": a.role, "anchor": a.name, "anchor IRI": a.anchor} for a in frame.arms], hide_index=True)
    for a in frame.arms:
        anchor_link(a.name, a.role)
    if frame.literals:
        st.markdown("**Literals**")
        st.dataframe([{"key": k, "value": "|".join(v)} for k, v in sorted(frame.literals.items())], hide_index=True)
    st.markdown(f"**Cited records ({len(frame.citations)})**")
    for record_id in frame.citations:
        cited_record(view, record_id)


def cited_record(view, record_id: str) -> None:
    """A link to a cited record, its text, and the source turns it cites (the provenance chain)."""
    try:
        record = view.get(record_id)
    except common.MemrepoError as exc:
        st.error(common.md(f"{record_id}: {exc}"))
        return
    common.record_link(record_id, record.summary)
    common.cited_style()
    for i, (citation, title, text) in enumerate(view.cited_parts(record)):
        common.show_cited(citation, title, text, key=f"{record_id}-{i}")


# --- the page ----------------------------------------------------------------------------------


@common.page
def graph_page() -> None:
    st.title("Graph")
    repo = common.repo()
    iri = st.query_params.get("frame")
    if iri:
        st.button("← The graph", on_click=lambda: st.query_params.pop("frame", None))
        frame_section(iri)
        return
    stats = common.graph_stats(str(repo.root), common.view().commit)
    st.caption(f"{stats['anchors']:,} anchors · {stats['frames']:,} frames · {stats['arms']:,} role arms · "
               f"{stats['citations']:,} citations · {stats['merged']:,} merged anchors")
    left, right = st.columns([3, 2])
    name = left.text_input("Anchor name", value=st.query_params.get("anchor", ""),
                           placeholder="a person, place or thing, e.g. Pixel")
    predicate = right.text_input("Predicate (optional)", placeholder="e.g. buy, or buy,own")
    if name.strip():
        anchor_section(name.strip(), predicate)
    else:
        landing()


if __name__ == "__main__":
    graph_page()
