"""A large graph step runs the offline rules in worker processes (memrepo/graph/parallel.py) and writes
the same graph files as one that runs them all in this process."""

from __future__ import annotations

import logging
import shutil

import pytest

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.graph import parallel
from memrepo.graph.build import index_graph
from memrepo.graph.extract import is_visual, offline_replies, record_variables
from memrepo.llm.backend import OfflineBackend, OpenAIBackend
from memrepo.resources import usable_cpus
from memrepo.settings import LLMSettings, Settings

pytestmark = pytest.mark.skipif(usable_cpus() < 2, reason="extraction workers run only with two CPUs or more")

PEOPLE = ["Mia", "Jonas", "Lena", "Hiroshi", "Priya"]
PLACES = ["Berlin", "Tokyo Station", "the pottery studio", "Kyoto", "the Charité"]
TEMPLATES = [
    "{a}: I bought {n} tickets for the concert in {p} last Friday.",
    "{a}: My sister {b} moved to {p} in May 2022. She works as a nurse there.",
    "{a}: We hiked for {n} hours near {p} yesterday! [shares a photo of a glacier lake]",
    "{a}: Thanks so much, {b}! See you at \"The Long Table\" on Sunday.",
    "{a}: {b} has been taking cello lessons for {n} years.",
    "{a}: Did you finish the painting? I'm going to visit {p} next week.",
    "{a}: It cost ${n}0 and took {n} days to arrive, but I love it.",
]


def records(count: int) -> list[rec.Record]:
    out = []
    for i in range(count):
        a, b = PEOPLE[i % len(PEOPLE)], PEOPLE[(i * 3 + 1) % len(PEOPLE)]
        text = TEMPLATES[i % len(TEMPLATES)].format(a=a, b=b, n=2 + i % 9, p=PLACES[(i * 7) % len(PLACES)])
        out.append(rec.new_record("episodic", text, actor=a, source="test", position=str(i),
                                  mention_time=f"2023-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00+00:00"))
    return out


def test_a_large_graph_step_writes_the_same_graph_files_with_workers_as_without(tmp_path, monkeypatch, no_after_write):
    count = parallel.MIN_RECORDS + 60
    repo = no_after_write(MemoryRepo.init(tmp_path / "a"))
    repo.store.commit({r.path: rec.serialize(r) for r in records(count)}, "pulled: a teammate's ingest")
    repo.close()
    shutil.copytree(tmp_path / "a", tmp_path / "b", symlinks=True)

    pooled = MemoryRepo.open(tmp_path / "a")
    pooled_usage = OfflineBackend(pooled.settings)
    with_workers = index_graph(pooled.ctx, full=False, backend=pooled_usage)
    monkeypatch.setattr(parallel, "MIN_RECORDS", 10**9)  # the same step with every record extracted here
    alone = MemoryRepo.open(tmp_path / "b")
    alone_usage = OfflineBackend(alone.settings)
    in_process = index_graph(alone.ctx, full=False, backend=alone_usage)

    assert with_workers.in_workers == count and in_process.in_workers == 0
    assert len(with_workers.indexed) == len(in_process.indexed) == count and not with_workers.failed
    assert (with_workers.frames, with_workers.anchors, with_workers.repaired) == \
        (in_process.frames, in_process.anchors, in_process.repaired)
    assert with_workers.repaired > 0  # the repair role's replies came from the workers too
    assert pooled.store.snapshot().tree_id == alone.store.snapshot().tree_id  # every graph file, byte for byte
    # `memrepo stats` counts the same calls, and the workers' time spent on the rules (the same work).
    for role in ("extractor", "repair"):
        workers, here = pooled_usage.totals[role], alone_usage.totals[role]
        assert workers.calls == here.calls > 0
        assert workers.seconds > 0.3 * here.seconds
    pooled.close()
    alone.close()


def test_workers_give_the_replies_of_the_rules_run_here():
    items = [(record_variables(r), is_visual(r)) for r in records(40)]
    pool = parallel.ExtractionPool(2)
    try:
        replies = [r for future, size in pool.submit(items) for r in pool.results(future, size)]
    finally:
        pool.close()
    untimed = [r._replace(seconds=0.0, repair_seconds=0.0) for r in replies if r is not None]
    here = [offline_replies(variables, visual)._replace(seconds=0.0, repair_seconds=0.0) for variables, visual in items]
    assert untimed == here


def test_when_the_workers_die_their_records_are_extracted_here(caplog):
    items = [(record_variables(r), is_visual(r)) for r in records(40)]
    pool = parallel.ExtractionPool(2)
    for worker in pool._workers:
        worker.proc.kill()
        worker.proc.wait()
    with caplog.at_level(logging.WARNING, logger="memrepo.graph.parallel"):
        replies = [r for future, size in pool.submit(items) for r in pool.results(future, size)]
    pool.close()
    assert replies == [None] * len(items)  # None: the caller runs the rules for these itself
    assert "extraction worker stopped" in caplog.text


def test_small_steps_and_model_endpoints_do_not_start_workers():
    endpoint = OpenAIBackend(Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")))
    assert parallel.ExtractionPool.open(parallel.MIN_RECORDS - 1, None) is None
    assert parallel.ExtractionPool.open(parallel.MIN_RECORDS, endpoint) is None  # its calls are the model's
    pool = parallel.ExtractionPool.open(parallel.MIN_RECORDS, None)
    assert pool is not None
    pool.close()
