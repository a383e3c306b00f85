"""How long each viewer page takes on a repository of 10,000 records (goal: under 2 s
after the first load).

Builds a synthetic repository (conversation sessions as sources, episodic and
semantic records citing their turns, spread over a year, 100 commits), then runs
every page under Streamlit's AppTest: once to warm the per-commit caches (the
first load), then ``--repeat`` more times, and prints the first and the median of
the later runs. AppTest times the page's Python side (reading the repository and
building the page); the browser's drawing is not included.

    .venv/bin/python benchmarks/viewer_pages.py [--records 10000] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from memrepo import records as rec
from memrepo.api import MemoryRepo

APP = str(Path(__file__).resolve().parents[1] / "viewer" / "app.py")
PEOPLE = ["Mia", "Jonas", "Lena", "Ana", "Yuki", "Tom", "Hiroshi", "Okada"]
PLACES = ["Tokyo", "Kyoto", "Lisbon", "Braga", "Porto", "Kasama", "Yanaka", "Shinjuku"]
THINGS = ["a Suica card", "a down jacket", "ramen", "a pottery bowl", "a train ticket", "a steel bottle"]


def build(path: Path, n_records: int, per_commit: int = 100) -> MemoryRepo:
    """A repository of ``n_records`` records in commits of ``per_commit``, each commit one session."""
    repo = MemoryRepo.init(path)
    start = date(2023, 1, 1)
    made = 0
    session = 0
    while made < n_records:
        day = start + timedelta(days=(session * 3) % 365)
        when = f"{day.isoformat()}T10:00:00"
        count = min(per_commit, n_records - made)
        turns = []
        for i in range(count):
            who, where, what = PEOPLE[(made + i) % 8], PLACES[(made + i * 3) % 8], THINGS[(made + i * 5) % 6]
            turns.append(rec.SourcePart(f"D{session}:{i + 1}", f"{who}: I got {what} in {where} (note {made + i}).",
                                        {"speaker": who}))
        source = rec.Source(
            id=rec.make_source_id(namespace="default", origin="bench", position=str(session),
                                  content="\n".join(t.text for t in turns), mention_time=when),
            kind="conversation", mention_time=when, parts=tuple(turns), title=f"Session {session}", origin="bench",
        )
        batch = []
        for i, turn in enumerate(turns):
            type_ = "semantic" if i % 10 == 9 else "episodic"
            batch.append(repo.new_record(
                type_, turn.text.split(": ", 1)[1], mention_time=when, source=source.id, position=turn.anchor,
                sources=[f"{source.id}#{turn.anchor}"], actor=turn.meta["speaker"],
                **({"event_time": day.isoformat()} if type_ == "episodic" else {}),
            ))
        repo.add(batch, sources=[source], message=f"Add session {session}")
        made += count
        session += 1
    return repo


def prepare(repo: MemoryRepo) -> None:
    """Graph extraction and the derived indexes, as `memrepo index` and `memrepo reindex` would do them."""
    begin = time.perf_counter()
    repo.index_graph()
    graph = time.perf_counter() - begin
    begin = time.perf_counter()
    repo.reindex()
    print(f"graph extraction {graph:.1f} s, indexes {time.perf_counter() - begin:.1f} s")


def time_page(page: str | None, repeat: int, query: dict[str, str] | None = None,
              widgets=None, vary=None) -> tuple[float, float]:
    """(first load, median of the next ``repeat`` loads) of ``page`` in seconds.

    The first load starts from empty caches: the repository is opened and the
    per-commit tables are built inside it.
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    begin = time.perf_counter()
    at = AppTest.from_file(APP, default_timeout=300).run()  # lands on Overview
    if page != "overview.py":
        st.cache_resource.clear()  # the page under test starts cold too
        begin = time.perf_counter()
    times = []
    for i in range(repeat + 1):
        if i:
            begin = time.perf_counter()
        if page != "overview.py" or i:
            at.switch_page(page)
            at.query_params.clear()
            at.query_params.update(vary(i) if vary else (query or {}))
            at.run()
        if widgets:
            widgets(at)
        times.append(time.perf_counter() - begin)
        if at.exception or at.error:
            raise SystemExit(f"{page}: {at.exception or [e.value for e in at.error]}")
    return times[0], statistics.median(times[1:])


def main() -> None:
    import logging

    # st.cache_resource.clear() outside a script run logs a harmless "missing ScriptRunContext" warning.
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-commit", type=int, default=20, help="records per commit (one session each)")
    parser.add_argument("--keep", help="build (or reuse) the repository in this folder")
    args = parser.parse_args()

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp()) / "memory"
    begin = time.perf_counter()
    if folder.exists():
        repo = MemoryRepo.open(folder)
    else:
        repo = build(folder, args.records, args.per_commit)
    built = time.perf_counter() - begin
    total = sum(repo.stats_overview()["records"].values())
    print(f"repository: {total:,} records, {len(repo.log()):,} commits ({built:.1f} s to build or open)")
    prepare(repo)
    graph = repo.graph_stats()
    print(f"graph: {graph['anchors']:,} anchors, {graph['frames']:,} frames, {graph['citations']:,} citations")
    os.environ["MEMREPO_VIEW_REPO"] = str(folder)
    records = repo.records()
    some = records[len(records) // 2]
    frame = repo.graph_frames(cited=some.id)
    questions = [f"Where did {who} get {what}?" for who in PEOPLE for what in THINGS]

    def search_text(at):
        at.text_input[0].set_value("suica card in kyoto").run()

    def next_neighbours(at):  # the next page of the hub's neighbours (back to the previous at the last)
        button = next(b for b in at.button if b.label == "Next →")
        (button if not button.disabled else next(b for b in at.button if b.label == "← Previous")).click().run()

    hub = repo.graph_hubs(limit=1)[0].name  # the most connected anchor
    print(f"open review branches: {len(repo.review_list())}")

    cases = [
        ("Overview", "overview.py", None, None),
        ("Memories (table)", "memories.py", None, None),
        ("Memories (text filter)", "memories.py", None, search_text),
        ("Memories (record page)", "memories.py", {"record": some.id}, None),
        ("Graph (opening picture)", "graph.py", None, None),
        (f"Graph (hub {hub})", "graph.py", {"anchor": hub}, None),
        (f"Graph (hub {hub}, next page)", "graph.py", {"anchor": hub}, next_neighbours),
        ("Graph (anchor Mia)", "graph.py", {"anchor": "Mia"}, None),
        ("Graph (frame page)", "graph.py", {"frame": frame[0].iri} if frame else {}, None),
        ("Recall (same question)", "recall.py", {"q": questions[0]}, None),
        ("History (who wrote what)", "history.py", None, None),
        ("Review", "review.py", None, None),
    ]
    print(f"{'page':<30}{'first load':>12}{'after (median)':>16}")
    worst = 0.0
    for name, page, query, widgets in cases:
        first, after = time_page(page, args.repeat, query, widgets)
        worst = max(worst, after)
        print(f"{name:<30}{first:>11.2f}s{after:>15.2f}s")
    first, after = time_page("recall.py", args.repeat, vary=lambda i: {"q": questions[1 + i]})
    print(f"{'Recall (a new question)':<30}{first:>11.2f}s{after:>15.2f}s")
    worst = max(worst, after)
    print(f"slowest page after the first load: {worst:.2f} s (goal: under 2 s) -> {'OK' if worst < 2 else 'TOO SLOW'}")
    repo.close()


if __name__ == "__main__":
    sys.exit(main())
