"""Recall: ask a question and see the plan, entry anchors, both lanes, the fused records
and facts; every fact expands into the chain fact -> cited records -> source turns."""

from __future__ import annotations

from typing import Any

import streamlit as st

from viewer import common
from viewer.graph import arms, cited, field, frame_id, literals


def table(rows: Any) -> None:
    rows = [r.to_dict() if hasattr(r, "to_dict") else r for r in (rows or [])]
    if rows and not isinstance(rows[0], dict):
        rows = [{"value": str(r)} for r in rows]
    st.dataframe(rows, hide_index=True, width="stretch")


def fact_chain(view, fact: Any) -> None:
    """A fact, then each record it cites, then the source parts that record cites."""
    st.markdown(
        f"**{common.md_escape(str(field(fact, 'predicate', default='fact')))}** · "
        + "; ".join(f"{r}: {common.md_escape(label)}" for r, _, label in arms(fact))
        + ("".join(f" · {k}={common.md_escape(v)}" for k, v in literals(fact).items()))
    )
    for record_id in cited(fact):
        try:
            record = view.get(record_id)
        except common.MemrepoError as exc:
            st.error(f"{record_id}: {exc}")
            continue
        common.record_link(record_id, f"{record_id} · {record.summary}")
        for citation, title, text in view.cited_parts(record):
            st.markdown(f"> `{citation}` {common.md_escape(title or '')}  \n> " + common.highlight(text or "[missing]"))


@common.page
def recall_page() -> None:
    st.title("Recall")
    repo = common.repo()
    if not hasattr(repo, "recall"):
        st.info(f"Recall (repo.recall) is {common.NOT_YET}.")
        return
    question = st.text_input("Question", placeholder="e.g. Where did Mia buy her Suica card?")
    if not question.strip():
        return
    view = common.view()
    try:
        result = repo.recall(question.strip(), rev=view.commit)
    except TypeError:
        result = repo.recall(question.strip())
    if field(result, "fallback", default=None):
        st.warning(f"The graph read failed; direct full-text and vector retrieval was used: {field(result, 'fallback')}")
    with st.expander("Plan", expanded=False):
        plan = field(result, "plan", default=None)
        st.json(plan.to_dict() if hasattr(plan, "to_dict") else plan if isinstance(plan, (dict, list)) else str(plan))
    with st.expander("Entry anchors"):
        table(field(result, "anchors", "entry_anchors", default=[]))
    lanes = st.columns(2)
    with lanes[0]:
        st.markdown("**Base lane**")
        table(field(result, "base_lane", "base", default=[]))
    with lanes[1]:
        st.markdown("**Relation lane**")
        table(field(result, "relation_lane", "relation", default=[]))
    facts = list(field(result, "facts", default=[]) or [])
    st.subheader(f"Facts ({len(facts)})")
    for fact in facts:
        with st.expander(f"{field(fact, 'predicate', default='fact')} · {frame_id(fact)} · cites {', '.join(cited(fact))}"):
            fact_chain(view, fact)
    records = list(field(result, "records", default=[]) or [])
    st.subheader(f"Records ({len(records)})")
    for record in records:
        record_id = str(field(record, "id", default=record))
        common.record_link(record_id, f"{record_id} · {field(record, 'summary', default='')}")


if __name__ == "__main__":
    recall_page()
