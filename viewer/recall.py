"""Recall: ask a question and see the plan, entry anchors, both lanes, the fused records
and facts; every fact expands into the chain fact -> cited records -> source turns."""

from __future__ import annotations

from typing import Any

import streamlit as st

from viewer import common
from viewer.graph import cited_record


def fact_label(fact: Any) -> str:
    arms = ", ".join(f"{a.role}={a.label}" for a in fact.arms)
    lits = "".join(f", {k}={v}" for k, v in sorted(fact.literals.items()))
    when = f" @{fact.event_time}" if fact.event_time else ""
    state = f" [{fact.status}]" if fact.status else ""
    return f"{fact.predicate}({arms}{lits}){when}{state}"


def fact_chain(view, fact: Any) -> None:
    """A fact, then each record it cites, then the source turns that record cites."""
    st.page_link("graph.py", label=f"Frame {common.md(fact.id)}", query_params={"frame": fact.id},
                 icon=":material/hub:")
    st.caption(f"score {fact.score:.2f} = " + " + ".join(f"{common.md(k)} {v:.2f}" for k, v in fact.terms.items()))
    for record_id in fact.cites:
        cited_record(view, record_id)


def plan_section(result: Any) -> None:
    plan = result.plan.to_dict() if hasattr(result.plan, "to_dict") else dict(vars(result.plan))
    families = common.md(", ".join(plan.get("families") or []) or "—")
    answer_types = common.md(", ".join(plan.get("answer_types") or []) or "—")
    st.markdown(
        f"operator **{common.md(plan.get('operator'))}** · relation families {families} · "
        f"answer types {answer_types} · budgets: "
        f"{common.md(plan.get('base_budget'))} base rows, {common.md(plan.get('cited_budget'))} cited rows"
    )
    with st.expander("The whole plan"):
        st.json(plan)


@common.page
def recall_page() -> None:
    st.title("Recall")
    repo = common.repo()
    if not hasattr(repo, "recall"):
        st.info(f"Recall (repo.recall) is {common.NOT_YET}.")
        return
    question = st.text_input("Question", value=st.query_params.get("q", ""),
                             placeholder="e.g. Where did Mia buy her Suica card?")
    if not question.strip():
        st.caption("Recall returns bounded evidence: graph facts with the records they cite, and fused records.")
        return
    view = common.view()
    result = common.recall(str(repo.root), view.commit, question.strip())
    if result.fallback:
        st.warning("The graph read failed, so direct full-text and vector retrieval was used: "
                   + common.md(result.fallback))
    plan_section(result)
    if result.inspected:
        st.caption("Inspected: " + common.md(", ".join(f"{v} {k}" for k, v in result.inspected.items())))

    st.subheader(f"Facts ({len(result.facts)})")
    if not result.facts:
        st.caption("No graph fact matched.")
    for i, fact in enumerate(result.facts):
        with st.expander(common.md(f"{fact_label(fact)} — cites {', '.join(fact.cites)}"), expanded=i == 0):
            fact_chain(view, fact)

    st.subheader(f"Records ({len(result.records)})")
    for row in result.records:
        common.record_link(row.id, f"{row.lane} · {row.summary}")
    if result.core:
        st.markdown("**Core blocks**")
        for row in result.core:
            common.record_link(row.id, row.summary)
    if result.typed:
        st.markdown("**Other types**")
        for row in result.typed:
            common.record_link(row.id, f"{row.type} · {row.summary}")

    st.subheader("How it was found")
    with st.expander(f"Entry anchors ({sum(a.kept for a in result.anchors)} kept of {len(result.anchors)})"):
        st.dataframe(
            [{"anchor": a.name, "type": a.type, "kept": a.kept, "score": round(a.score, 3), "degree": a.degree,
              "routes": ", ".join(a.routes), **{k: round(v, 3) for k, v in a.terms.items()}} for a in result.anchors],
            hide_index=True, width="stretch",
        )
    left, right = st.columns(2)
    with left.expander(f"Base lane ({len(result.base_lane)} candidates)"):
        st.dataframe([flat(r) for r in result.base_lane], hide_index=True, width="stretch")
    with right.expander(f"Relation lane ({len(result.relation_lane)} frames)"):
        st.dataframe([flat(r) for r in result.relation_lane], hide_index=True, width="stretch")
    with st.expander("Fusion order"):
        st.dataframe([flat(r) for r in result.fusion], hide_index=True, width="stretch")


def flat(row: dict[str, Any]) -> dict[str, Any]:
    """A lane row with lists and score terms flattened for a table."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        elif isinstance(value, (list, tuple)):
            out[key] = ", ".join(map(str, value))
        else:
            out[key] = value
    return out


if __name__ == "__main__":
    recall_page()
