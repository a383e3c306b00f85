"""A fixture memory repository built from examples/conversation.txt, for the viewer's tests.

The conversation goes in through the write path (``repo.ingest``, offline backend):
one source per session, whose turns are parts ``D<session>:<turn>``, and the
records that cite them. The ``human`` core block is then written and edited
in place, so that record history has a real diff.
"""

from __future__ import annotations

from pathlib import Path

from memrepo import records as rec
from memrepo.api import MemoryRepo

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "conversation.txt"
CORE_BEFORE = "Mia lives in Lisbon and works for Corvo Design."
CORE_AFTER = "Mia lives in Yanaka, Tokyo, and works remotely for Corvo Design."


def build_example_repo(path: Path) -> MemoryRepo:
    """A memory repository at ``path`` holding the example conversation and an edited core block."""
    repo = MemoryRepo.init(path)
    repo.ingest([EXAMPLE])
    repo.add([repo.new_record("core", CORE_BEFORE, label="human", mention_time="2023-05-02T14:03:00")],
             message="Core block: human")
    repo.add([repo.new_record("core", CORE_AFTER, label="human", mention_time="2023-07-03T18:30:00")],
             message="Core block: human moved")
    return repo


def first_record_with(repo: MemoryRepo, needle: str, type: str | None = "episodic") -> rec.Record:
    """The oldest record (of ``type``) whose text contains ``needle``."""
    for record in repo.records(type=type):
        if needle in record.text:
            return record
    raise LookupError(needle)


# --- hostile text: what a stranger can get into memory (an ingested chat, a teammate's push) ----

BEACON = "beacon.invalid"
HOSTILE_LINES = [
    f"Beacon ![x](http://{BEACON}/track.png) and [click me](javascript:alert(1)) here",
    f'<img src="http://{BEACON}/html.png"> <a href="javascript:alert(2)">html link</a> <script>alert(3)</script>',
    ':red[not red] :material/warning: :smile: $x^2$ **not bold** <span style="color:red">styled</span> &amp;',
    f"http://{BEACON}/autolink www.{BEACON} mia@{BEACON} <http://{BEACON}/angle>",
    "# not a heading",
    "W" * 3000 + " the end of a very long line",
]
HOSTILE = "\n".join(HOSTILE_LINES)
HOSTILE_AUTHOR = f"![a](http://{BEACON}/author.png) :red[Mallory]"
HOSTILE_BOTTLE = f"Mia owns a steel bottle that she takes hiking. ![b](http://{BEACON}/bottle.png) :red[hike]"


def add_hostile(repo: MemoryRepo) -> tuple[rec.Record, rec.Source]:
    """A source and an episodic record full of hostile text, committed by a hostile author with a
    hostile message; then the graph and an AutoDream review branch over two bottle records, one of
    them hostile. Returns the hostile record (as stored) and its source."""
    config = repo.store.repo.get_config()
    config.set((b"user",), b"name", HOSTILE_AUTHOR.encode())
    config.set((b"user",), b"email", f"mallory@{BEACON}".encode())
    config.write_to_path()
    when = "2023-07-10T09:00:00"
    parts = (rec.SourcePart("D9:1", HOSTILE_LINES[0] + " Mia bought a kettle in Kyoto.", {"speaker": HOSTILE_AUTHOR}),
             rec.SourcePart("D9:2", HOSTILE, {"speaker": "Jonas"}))
    source = rec.Source(
        id=rec.make_source_id(namespace="default", origin="hostile", position="9",
                              content="\n".join(p.text for p in parts), mention_time=when),
        kind="conversation", mention_time=when, parts=parts, title=f"Session ![t](http://{BEACON}/title.png)",
        origin="hostile",
    )
    record = repo.new_record("episodic", HOSTILE_LINES[0] + " Mia bought a kettle in Kyoto.\n" + HOSTILE,
                             mention_time=when, source=source.id, position="D9:1",
                             sources=[f"{source.id}#D9:1", f"{source.id}#D9:2"], actor=HOSTILE_AUTHOR)
    repo.add([record], sources=[source], message=f"Remember {HOSTILE_LINES[0]}\n\n{HOSTILE}")
    for text, day in ((HOSTILE_BOTTLE, "2023-07-11"), ("Mia carries a stainless steel bottle to the gym.", "2023-07-12")):
        repo.add([repo.new_record("semantic", text, mention_time=f"{day}T10:00:00")])
    repo.index_graph()
    repo.dream()
    return repo.get(record.id), source
