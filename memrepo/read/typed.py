"""Typed paths (MIRIX-2.0 A.1): core blocks, resource documents, procedural skills and vault entries,
each read its own way beside the graph read.

A procedural record that cites what it was said in (an instruction from a document, a chat or a task session;
an experience) is read by the graph read, with its citations (read/lanes.py graph_record); the procedural typed
path reads the others: skills (``procedural/skills/<slug>/SKILL.md``) and task sessions' records.
"""

from __future__ import annotations

from memrepo import records as rec
from memrepo.errors import RecordError
from memrepo.read.lanes import graph_record
from memrepo.read.plan import Plan, content_terms
from memrepo.read.reading import Reading
from memrepo.read.results import RecallResult, Row

TYPED_HITS = 3  # resource documents / skills returned by their own typed path


def typed_paths(ctx: Reading, plan: Plan, result: RecallResult, types: list[str]) -> None:
    if "core" in types:
        for path, blob in ctx.snapshot.walk("core"):
            if rec.is_record_path(path):
                try:
                    record = rec.parse(ctx.snapshot.read_blob(blob), path)
                except RecordError:
                    continue
                result.core.append(_plain_row(record, "core"))
    for type_ in ("resource", "procedural"):
        if type_ in types and _has_records(ctx, type_):
            from memrepo.index.search import _search

            depth = TYPED_HITS if type_ == "resource" else TYPED_HITS * 4  # the typed ones among procedural hits
            hits = [h for h in _search(ctx.indexes, ctx.commit, plan.question, type_, depth, False)
                    if type_ == "resource" or not graph_record(ctx, h.id)]
            for hit in hits[:TYPED_HITS]:
                result.typed.append(Row(id=hit.id, type=hit.type, summary=hit.summary, text=hit.snippet,
                                        mention_time=hit.mention_time or "", event_time=hit.event_time, status=None,
                                        sources=[], lane=type_, score=hit.score))
    if "vault" in types:
        _vault(ctx, plan, result)


def _has_records(ctx: Reading, type_: str) -> bool:
    folders = (type_, rec.RULES_FOLDER) if type_ == "resource" else (type_,)  # rules are resource records
    return any(rec.is_record_path(p) for folder in folders for p, _ in ctx.snapshot.walk(folder))


def _vault(ctx: Reading, plan: Plan, result: RecallResult) -> None:
    """Vault entries only when the question names their label, and only with the key."""
    from memrepo import vault

    if not ctx.settings.vault_key:
        return
    asked = set(content_terms(plan.question))
    for path, blob in ctx.snapshot.walk("vault"):
        if not rec.is_record_path(path):
            continue
        try:
            record = rec.parse(ctx.snapshot.read_blob(blob), path)
        except RecordError:
            continue
        label = record.summary.split(":", 1)[-1].strip().lower()
        if label and set(content_terms(label)) <= asked:
            result.typed.append(_plain_row(vault.unseal(record, ctx.settings.vault_key), "vault"))


def _plain_row(record: rec.Record, lane: str) -> Row:
    return Row(id=record.id, type=record.type, summary=record.summary, text=record.text,
               mention_time=record.mention_time, event_time=record.event_time, status=record.status,
               sources=list(record.sources), lane=lane)
