"""Graph: find an anchor by name and draw its bounded neighbourhood (frames as nodes with
role-labelled arms to anchors); a frame's page with predicate, roles, literals, times,
status and the records it cites, each a link."""

from __future__ import annotations

from typing import Any

import streamlit as st

from viewer import common

MAX_FRAMES = 40  # frames drawn around one anchor at most
MAX_LISTED = 200  # frames listed in the table at most


def field(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` present on ``obj`` (attribute or mapping key)."""
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def frame_id(frame: Any) -> str:
    return str(field(frame, "id", "iri", default=""))


def arms(frame: Any) -> list[tuple[str, str, str]]:
    """(role, anchor id, anchor label) of each arm of ``frame``."""
    out = []
    for arm in field(frame, "arms", default=()) or ():
        if isinstance(arm, (tuple, list)):
            role, anchor = arm[0], arm[1]
            label = arm[2] if len(arm) > 2 else anchor
        else:
            role = field(arm, "role", default="")
            anchor = field(arm, "anchor", "anchor_id", "key", default="")
            label = field(arm, "label", "name", "anchor_label", default=anchor)
        out.append((str(role), str(anchor), str(label)))
    return out


def literals(frame: Any) -> dict[str, str]:
    value = field(frame, "literals", default={}) or {}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    return {str(field(x, "key", default=x[0] if isinstance(x, (tuple, list)) else "")): str(
        field(x, "value", default=x[1] if isinstance(x, (tuple, list)) else "")) for x in value}


def cited(frame: Any) -> list[str]:
    return [str(x) for x in field(frame, "cites", "citations", "records", "sources", default=()) or ()]


def frame_rows(frames: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "frame": frame_id(f),
            "predicate": str(field(f, "predicate", default="")),
            "arms": "; ".join(f"{role}: {label}" for role, _, label in arms(f)),
            "literals": "; ".join(f"{k}={v}" for k, v in literals(f).items()),
            "event_time": field(f, "event_time", default="") or "",
            "status": field(f, "status", default="") or "",
            "cites": ", ".join(cited(f)),
        }
        for f in frames
    ]


def frames_citing(record_id: str) -> list[Any]:
    """Frames whose citations include ``record_id`` (via the graph API)."""
    repo = common.repo()
    by_record = getattr(repo, "graph_frames_citing", None)
    if by_record is not None:
        return list(by_record(record_id))
    try:
        return list(repo.graph_frames(record=record_id))
    except TypeError:
        return []


def dot(center: str, frames: list[Any]) -> str:
    """Graphviz DOT of ``frames``: frames as boxes, anchors as ellipses, role-labelled arms."""

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph G {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    anchors: dict[str, str] = {}
    for f in frames:
        fid = frame_id(f)
        lits = literals(f)
        label = str(field(f, "predicate", default="?"))
        if lits:
            label += "\\n" + ", ".join(f"{k}={v}" for k, v in list(lits.items())[:3])
        lines.append(f"  {q('f:' + fid)} [shape=box, style=filled, fillcolor=\"#fdf2d0\", label={q(label)}];")
        for role, anchor, name in arms(f):
            anchors.setdefault(anchor, name)
            lines.append(f"  {q('f:' + fid)} -> {q('a:' + anchor)} [label={q(role)}];")
    for anchor, name in anchors.items():
        style = ', style=filled, fillcolor="#cfe3ff", penwidth=2' if anchor == center or name == center else ""
        lines.append(f"  {q('a:' + anchor)} [shape=ellipse, label={q(name)}{style}];")
    lines.append("}")
    return "\n".join(lines)


def anchor_section(name: str) -> None:
    repo = common.repo()
    anchor = repo.graph_anchor(name)
    if not anchor:
        st.warning(f"No anchor named {name!r}.")
        return
    anchor_key = str(field(anchor, "id", "iri", "key", default=name))
    label = str(field(anchor, "label", "name", default=name))
    st.subheader(label)
    aliases = field(anchor, "aliases", default=()) or ()
    st.caption(
        f"`{anchor_key}` · type {field(anchor, 'type', 'entity_type', default='?')}"
        + (f" · aliases: {', '.join(map(str, aliases))}" if aliases else "")
    )
    frames = list(repo.graph_frames(anchor=name))
    if not frames:
        st.info("No frame binds this anchor.")
        return
    if len(frames) > MAX_FRAMES:
        st.caption(f"{len(frames)} frames; the first {MAX_FRAMES} are drawn.")
    st.graphviz_chart(dot(anchor_key, frames[:MAX_FRAMES]))
    st.dataframe(frame_rows(frames[:MAX_LISTED]), hide_index=True, width="stretch")
    for f in frames[:MAX_FRAMES]:
        st.page_link("graph.py", label=f"{field(f, 'predicate', default='frame')} · {frame_id(f)}",
                     query_params={"frame": frame_id(f)}, icon=":material/hub:")
    mentions = [str(x) for x in field(anchor, "mentions", "records", "rows", default=()) or ()]
    if mentions:
        st.subheader("Records that mention it")
        for record_id in mentions[:50]:
            common.record_link(record_id)


def frame_section(wanted: str) -> None:
    repo = common.repo()
    getter = getattr(repo, "graph_frame", None)
    frame = getter(wanted) if getter is not None else next(
        (f for f in repo.graph_frames() if frame_id(f) == wanted), None
    )
    if frame is None:
        st.warning(f"No frame {wanted!r}.")
        return
    st.subheader(f"Frame: {field(frame, 'predicate', default='?')}")
    st.caption(f"`{frame_id(frame)}`")
    st.markdown(
        "\n".join(
            f"- **{k}**: {common.md_escape(str(v))}"
            for k, v in {
                "predicate": field(frame, "predicate", default=""),
                "event time": field(frame, "event_time", default="") or "—",
                "mention time": field(frame, "mention_time", default="") or "—",
                "status": field(frame, "status", default="") or "—",
                "kind": field(frame, "kind", default="") or "—",
            }.items()
        )
    )
    st.markdown("**Roles**")
    st.dataframe([{"role": r, "anchor": label, "anchor id": a} for r, a, label in arms(frame)], hide_index=True)
    lits = literals(frame)
    if lits:
        st.markdown("**Literals**")
        st.dataframe([{"key": k, "value": v} for k, v in lits.items()], hide_index=True)
    st.markdown("**Cited records**")
    view = common.view()
    for record_id in cited(frame):
        try:
            record = view.get(record_id)
        except common.MemrepoError as exc:
            st.error(f"{record_id}: {exc}")
            continue
        common.record_link(record_id, f"{record_id} · {record.summary}")


@common.page
def graph_page() -> None:
    st.title("Graph")
    repo = common.repo()
    if not hasattr(repo, "graph_anchor") or not hasattr(repo, "graph_frames"):
        st.info(f"The provenance graph (repo.graph_anchor / repo.graph_frames) is {common.NOT_YET}.")
        return
    wanted_frame = st.query_params.get("frame")
    if wanted_frame:
        st.button("← Anchor search", on_click=lambda: st.query_params.pop("frame", None))
        frame_section(wanted_frame)
        return
    name = st.text_input("Anchor name", value=st.query_params.get("anchor", ""), placeholder="e.g. Mia, Pixel, Kyoto")
    if name.strip():
        anchor_section(name.strip())


if __name__ == "__main__":
    graph_page()
