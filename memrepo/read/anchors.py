"""Anchor entry (MIRIX-2.0 eq. 10): where a recall enters the graph.

The union of name-vector recall (15) and the anchors the question names exactly (16), each scored by
s_A's terms (vector, exact, predicate, hub, lexical, specificity) and the best KEEP_ANCHORS kept.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from memrepo.graph.reader import AnchorInfo, GraphReader
from memrepo.read import constants as C
from memrepo.read.plan import Plan, words
from memrepo.read.reading import Reading
from memrepo.read.results import AnchorHit
from memrepo.text.stopwords import ENTRY_STOPWORDS


def question_keys(question: str, longest: int = C.EXACT_NGRAM) -> list[str]:
    """κ keys of the question's word n-grams (longest first) that could name an anchor exactly."""
    from memrepo.graph.kappa import kappa

    toks = words(question)
    keys: list[str] = []
    for n in range(min(longest, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            gram = toks[i : i + n]
            if n == 1 and gram[0].lower() in ENTRY_STOPWORDS:
                continue
            if gram[0].lower() in ENTRY_STOPWORDS or gram[-1].lower() in ENTRY_STOPWORDS:
                continue
            key = kappa(" ".join(re.sub(r"['’]s$", "", g) for g in gram))
            if key and key not in keys:
                keys.append(key)
    return keys


def anchor_entry(ctx: Reading, graph: GraphReader, plan: Plan) -> list[AnchorHit]:
    """The union of name-vector recall (15) and exactly named anchors (16), scored and capped at 15."""
    hits: dict[str, AnchorHit] = {}
    # Two name-vector probes: the question, and its words without the people it names (whose
    # possessives, "Priya's dad", would otherwise crowd out the anchors the question is about).
    topic = _topic(plan)
    if topic and topic.lower() != plan.question.lower():
        probes = list(ctx.query_vectors(plan.question, topic))
    else:
        probes = [ctx.query_vector(plan.question)]
    per_probe = max(1, C.ANCHOR_RECALL // len(probes)) if len(probes) > 1 else C.ANCHOR_RECALL
    for probe in probes:
        for info, cosine in graph.search_anchor_names(probe, per_probe + (C.ANCHOR_RECALL % len(probes))):
            hit = hits.setdefault(info.iri, _hit(info))
            if "vector" not in hit.routes:
                hit.routes.append("vector")
            hit.terms["vec"] = max(hit.terms.get("vec", 0.0), round(C.W_VEC * cosine, 4))
    exact = graph.anchors_by_keys(question_keys(plan.question))[: C.EXACT_ANCHORS]
    missing = [a for a in exact if a.iri not in hits]
    cosines = _cosines(ctx, graph, plan.question, missing) if missing else []
    for info, cosine in zip(missing, cosines):
        hits[info.iri] = _hit(info)
        hits[info.iri].terms["vec"] = round(C.W_VEC * cosine, 4)
    q_tokens = _key_tokens(plan.question)
    named = {w.lower() for n in plan.names for w in n.split()}
    for info in exact:
        hit = hits[info.iri]
        hit.routes.append("exact")
        hit.terms["exact"] = C.W_EXACT
        # Only exactly named anchors carry degree and predicate information (A.3).
        preds = graph.predicates_of(info.iri) if plan.relations else set()
        if preds & set(plan.families):
            hit.terms["pred"] = C.W_PRED
        person_unnamed = info.type == "person" and not (set(info.key.split()) & named)
        weight = C.W_HUB_PERSON if person_unnamed else C.W_HUB
        hit.terms["hub"] = -round(weight * math.log1p(info.degree), 4)
    for hit in hits.values():
        toks = hit.key.split()
        if toks:
            hit.terms["lex"] = round(C.W_LEX * len(set(toks) & q_tokens) / len(toks), 4)
            hit.terms["spec"] = round(C.W_SPEC * (len(toks) - 1), 4)
        hit.score = round(sum(hit.terms.values()), 4)
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.key, h.iri))
    for hit in ranked[: C.KEEP_ANCHORS]:
        hit.kept = True
    return ranked


def _topic(plan: Plan) -> str:
    """The question's content words without the names of the people it mentions."""
    named = {w.lower() for n in plan.names for w in n.split()}
    return " ".join(t for t in plan.terms if t not in named)


def _hit(info: AnchorInfo) -> AnchorHit:
    return AnchorHit(info.iri, info.name, info.key, info.type, info.degree)


def _key_tokens(text: str) -> set[str]:
    from memrepo.graph.kappa import tokens

    return set(tokens(text))


def _cosines(ctx: Reading, graph: GraphReader, question: str, anchors: Sequence[AnchorInfo]) -> list[float]:
    """Cosine of each anchor's name to the question: the name's vector from the anchor-name index when it
    holds it (a lookup), else through the embedding cache."""
    import numpy as np

    stored = graph.stored_name_vectors(anchors)
    rest = [a.name for a in anchors if a.iri not in stored]
    computed = iter(ctx.name_vectors(rest) if rest else [])
    q = ctx.query_vector(question)
    return [float(np.dot(stored[a.iri] if a.iri in stored else next(computed), q)) for a in anchors]
