"""Graph: find an anchor by name and draw its bounded neighbourhood (frames as nodes with
role-labelled arms to anchors); a frame's page with predicate, roles, literals, times,
status and the records it cites, each a link, down to the source turns."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memrepo.errors import NotFoundError
from viewer import common

MAX_FRAMES = 40  # frames drawn around one anchor at most (the table lists up to the API's cap)
MAX_ROWS = 30  # records listed as links under an anchor at most


def frame_rows(frames: list[Any]) -> list[dict[str, Any]]:
    """One table row per frame (FrameInfo from the graph API)."""
    return [
        {
            "predicate": f.predicate,
            "arms": "; ".join(f"{a.role}: {a.name}" for a in f.arms),
            "literals": "; ".join(f"{k}={'|'.join(v)}" for k, v in sorted(f.literals.items())),
            "event time": "|".join(f.event_time),
            "status": "|".join(f.status),
            "cites": ", ".join(f.citations),
            "frame": f.iri,
        }
        for f in frames
    ]


def dot(center: str, frames: list[Any]) -> str:
    """Graphviz DOT: frames as boxes (predicate and literals), anchors as ellipses, arms labelled by role."""

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["digraph neighbourhood {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9, color="#777777"];']
    anchors: dict[str, str] = {}
    for f in frames:
        label = f.predicate
        lits = [f"{k}={'|'.join(v)}" for k, v in sorted(f.literals.items())][:3]
        if lits:
            label += "\n" + "\n".join(lits)
        lines.append(f'  {q(f.iri)} [shape=box, style="rounded,filled", fillcolor="#fdf2d0", label={q(label)}];')
        for arm in f.arms:
            anchors.setdefault(arm.anchor, arm.name)
            lines.append(f"  {q(f.iri)} -> {q(arm.anchor)} [label={q(arm.role)}];")
    for iri, name in sorted(anchors.items()):
        style = ', style=filled, fillcolor="#cfe3ff", penwidth=2' if iri == center else ""
        lines.append(f"  {q(iri)} [shape=ellipse, label={q(name)}{style}];")
    lines.append("}")
    return "\n".join(lines)


def frame_link(frame: Any) -> None:
    arms = ", ".join(f"{a.role}={a.name}" for a in frame.arms)
    st.page_link("graph.py", label=f"{frame.predicate}({arms})", query_params={"frame": frame.iri},
                 icon=":material/hub:")


def anchor_section(name: str, predicate: str) -> None:
    repo, commit = common.repo(), common.view().commit
    try:
        found = common.graph_anchor(str(repo.root), commit, name)
    except NotFoundError as exc:
        st.warning(str(exc))
        suggest(name)
        return
    anchor = found.anchor
    st.subheader(f"{anchor.name}")
    facts = [f"type **{anchor.type}**", f"key `{anchor.key}`", f"{anchor.frame_count} frame(s)",
             f"{len(anchor.rows)} record(s)"]
    if anchor.aliases:
        facts.append("aliases: " + ", ".join(common.md_escape(a) for a in anchor.aliases))
    if anchor.members:
        facts.append(f"{len(anchor.members)} merged anchor(s)")
    st.markdown(" · ".join(facts))
    st.caption(f"`{anchor.iri}`")
    frames = found.frames
    if predicate.strip():
        frames = repo.graph_frames(anchor=name, predicate=predicate.strip(), rev=commit)
    if not frames:
        st.info("No frame binds this anchor" + (f" with predicate {predicate!r}." if predicate.strip() else "."))
    else:
        drawn = frames[:MAX_FRAMES]
        if len(frames) > MAX_FRAMES:
            st.caption(f"{len(frames)} frames; the first {MAX_FRAMES} (in frame-id order) are drawn.")
        st.graphviz_chart(dot(anchor.iri, drawn))
        st.dataframe(frame_rows(frames), hide_index=True, width="stretch")
        st.markdown("**Frames**")
        for f in drawn:
            frame_link(f)
    st.markdown("**Records that mention it**")
    for record_id in anchor.rows[:MAX_ROWS]:
        common.record_link(record_id)
    if len(anchor.rows) > MAX_ROWS:
        st.caption(f"… and {len(anchor.rows) - MAX_ROWS} more.")


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
            st.page_link("graph.py", label=other, query_params={"anchor": other}, icon=":material/label:")


def frame_section(iri: str) -> None:
    repo, view = common.repo(), common.view()
    frame = repo.graph_frame(iri, rev=view.commit)
    st.subheader(f"Frame: {frame.predicate}")
    st.caption(f"`{frame.iri}`")
    st.markdown(
        f"- **predicate**: {common.md_escape(frame.predicate)}\n"
        f"- **kind**: {frame.kind or '—'}\n"
        f"- **event time**: {', '.join(frame.event_time) or '—'}\n"
        f"- **mention time**: {', '.join(frame.mention_time) or '—'}\n"
        f"- **status**: {', '.join(frame.status) or '—'}"
    )
    st.markdown("**Roles**")
    st.dataframe([{"role": a.role, "anchor": a.name, "anchor IRI": a.anchor} for a in frame.arms], hide_index=True)
    for a in frame.arms:
        st.page_link("graph.py", label=f"{a.role}: {a.name}", query_params={"anchor": a.name}, icon=":material/label:")
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
        st.error(f"{record_id}: {exc}")
        return
    common.record_link(record_id, f"{record_id} · {record.summary}")
    for citation, title, text in view.cited_parts(record):
        where = f" ({common.md_escape(title)})" if title else ""
        st.markdown(f"> `{citation}`{where}  \n> " + common.highlight(text or "[missing part]"))


@common.page
def graph_page() -> None:
    st.title("Graph")
    repo = common.repo()
    if not hasattr(repo, "graph_anchor") or not hasattr(repo, "graph_frame"):
        st.info(f"The provenance graph (repo.graph_anchor / repo.graph_frame) is {common.NOT_YET}.")
        return
    iri = st.query_params.get("frame")
    if iri:
        st.button("← Anchor search", on_click=lambda: st.query_params.pop("frame", None))
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


if __name__ == "__main__":
    graph_page()
