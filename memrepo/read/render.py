"""Plain-text rendering of a recall for the terminal (`memrepo recall [--explain]`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memrepo.read.recall import RecallResult, Row


def _when(row: "Row") -> str:
    return (row.event_time or row.mention_time or "")[:10]


def render_recall(result: "RecallResult", *, explain: bool = False) -> str:
    lines: list[str] = []
    if result.fallback:
        lines.append(f"note: {result.fallback}")
    if result.dangling:
        lines.append(f"note: the graph cites {', '.join(result.dangling)}, not in the repository (left out; "
                     "`memrepo index` removes their graph files)")
    changed = sorted({d["record"] for d in result.stale_dropped if d["reason"] == "changed"})
    if changed:
        lines.append(f"note: {', '.join(changed)} changed since the graph extracted {'it' if len(changed) == 1 else 'them'}: "
                     f"{len([d for d in result.stale_dropped if d['reason'] == 'changed'])} stale fact(s) left out "
                     "(the graph catch-up of the next write or `memrepo index` extracts them again)")
    plan = result.plan
    if explain:
        for d in result.stale_dropped:
            lines.append(f"stale dropped: {d['predicate']} {d['frame']} cites {d['record']} ({d['reason']})")
        lines.append(f"plan: operator={plan.operator} budgets B_B={plan.base_budget} B_R={plan.cited_budget} "
                     f"families={','.join(plan.families) or '-'} constraints={','.join(plan.constraints) or '-'} "
                     f"answer_types={','.join(plan.answer_types)} time={plan.time or '-'}")
        lines.append("entry anchors (score = " + " + ".join(("vec", "exact", "lex", "pred", "spec", "hub")) + "):")
        for a in result.anchors:
            terms = " ".join(f"{k}={v:+.3f}" for k, v in a.terms.items())
            lines.append(f"  {'*' if a.kept else ' '} {a.score:+.3f} {a.name} [{a.type}, degree {a.degree}, "
                         f"{'/'.join(a.routes)}] {terms}")
        kept_frames = sum(1 for f in result.relation_lane if f["kept"])
        lines.append(f"relation lane: {len(result.relation_lane)} frames after the predicate filter and the cap, "
                     f"{kept_frames} rendered")
        for frame in result.relation_lane[:20]:
            lines.append(f"  {'*' if frame['kept'] else ' '} {frame['score']:+.3f} {frame['predicate']} "
                         f"{frame['frame']} cites {', '.join(frame['cites'])}")
        kept_rows = sum(1 for r in result.base_lane if r["kept"])
        lines.append(f"base lane: {len(result.base_lane)} candidate rows, {kept_rows} kept")
        for cand in result.base_lane[:20]:
            lines.append(f"  {'*' if cand['kept'] else ' '} {cand['score']:+.3f} {cand['id']} via {','.join(cand['via'])}")
        lines.append("fusion:")
        for step in result.fusion:
            lines.append(f"  {step['step']:<6} {step['id']} {step['outcome']}")
        lines.append(f"inspected: {result.inspected}")
    for belief in result.beliefs:
        at = f" in {belief['at'][0]}..{belief['at'][1]}" if belief["at"] else " now"
        lines.append(f"belief ({belief['slot']} of {belief['holder']}{at}): {belief['answer']}  "
                     f"cites {', '.join(belief['cites'])}")
    if result.facts:
        lines.append(f"facts ({len(result.facts)}):")
        for f in result.facts:
            args = ", ".join(f"{a.role}={a.label}" for a in f.arms)
            lits = "".join(f", {k}={v}" for k, v in sorted(f.literals.items()))
            when = f" @{f.event_time}" if f.event_time else ""
            if f.valid_from:
                when += f" valid {f.valid_from[:10]}.." + (f"{f.valid_until[:10]} (superseded)" if f.valid_until else "now")
                when += " (conflict)" if f.conflicts else ""
            lines.append(f"  {f.predicate}({args}{lits}){when}  cites {', '.join(f.cites)}")
    lines.append(f"records ({len(result.records)} of at most {plan.capacity}):")
    for r in result.records:
        text = " ".join(r.text.split())
        lines.append(f"  {r.id}  {r.type:<9} {_when(r):<10} [{r.lane}] {text[:160]}")
        for part in r.parts:
            lines.append(f"      {part['citation']}")
    for block in result.core:
        lines.append(f"core {block.id}: {' '.join(block.text.split())[:160]}")
    for typed in result.typed:
        lines.append(f"{typed.lane} {typed.id}: {typed.summary}")
    return "\n".join(lines)
