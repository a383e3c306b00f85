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
