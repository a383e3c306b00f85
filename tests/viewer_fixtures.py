"""A fixture memory repository built from examples/conversation.txt, for the viewer's tests.

Each session becomes a conversation source whose turns are parts ``D<session>:<turn>``;
each turn becomes an episodic record citing its turn; a few semantic records
cite the turns they summarise, and the ``human`` core block is edited twice so
that record history has a real diff. When the write path's ``repo.ingest`` is
available it is used to add its records on top (same sources, so nothing is
duplicated); the hand-built records keep the tests independent of its choices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memrepo import records as rec
from memrepo.api import MemoryRepo

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "conversation.txt"
ORIGIN = "examples/conversation.txt"
_SESSION_RE = re.compile(r"^# Session (\d+): (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})$")

# (session, turn, text) of the semantic records: durable facts, each citing its turn.
SEMANTIC = [
    (2, 7, "Jonas adopted Pixel, a three-year-old greyhound, from the shelter in Braga."),
    (3, 3, "Mia enrolled at the Kyoto Institute of Culture and Language; tuition is 420,000 yen for six months."),
    (3, 5, "Mia works remotely for Corvo Design; her manager Ana requires the Monday calls at 9 am Lisbon time."),
]


@dataclass
class Turn:
    anchor: str
    speaker: str
    text: str


@dataclass
class Session:
    number: int
    time: str
    turns: list[Turn]


def parse_conversation(path: Path = EXAMPLE) -> list[Session]:
    """Sessions and turns of the example conversation."""
    sessions: list[Session] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _SESSION_RE.match(line)
        if m:
            sessions.append(Session(int(m.group(1)), f"{m.group(2)}T{m.group(3)}:00", []))
        elif line.strip() and sessions:
            speaker, _, text = line.partition(": ")
            s = sessions[-1]
            s.turns.append(Turn(f"D{s.number}:{len(s.turns) + 1}", speaker.strip(), text.strip()))
    return sessions


def session_source(session: Session, namespace: str = "default") -> rec.Source:
    body = "\n".join(f"{t.speaker}: {t.text}" for t in session.turns)
    source_id = rec.make_source_id(
        namespace=namespace, origin=ORIGIN, position=f"session-{session.number}", content=body,
        mention_time=session.time,
    )
    parts = tuple(rec.SourcePart(t.anchor, f"{t.speaker}: {t.text}", {"speaker": t.speaker}) for t in session.turns)
    return rec.Source(
        id=source_id, kind="conversation", mention_time=session.time, parts=parts, namespace=namespace,
        title=f"Session {session.number}", origin=ORIGIN,
    )


def build_example_repo(path: Path) -> MemoryRepo:
    """A memory repository at ``path`` holding the example conversation (one commit per session)."""
    repo = MemoryRepo.init(path)
    sessions = parse_conversation()
    for session in sessions:
        source = session_source(session, repo.settings.namespace)
        records = [
            repo.new_record(
                "episodic", t.text, mention_time=session.time, event_time=session.time[:10], actor=t.speaker,
                source=source.id, position=t.anchor, sources=[f"{source.id}#{t.anchor}"],
            )
            for t in session.turns
        ]
        for number, turn, text in SEMANTIC:
            if number == session.number:
                records.append(
                    repo.new_record(
                        "semantic", text, mention_time=session.time, source=source.id, position=f"D{number}:{turn}",
                        sources=[f"{source.id}#D{number}:{turn}"],
                    )
                )
        repo.add(records, sources=[source], message=f"Add session {session.number} of the example conversation")
    repo.add([repo.new_record("core", "Mia lives in Lisbon and works for Corvo Design.", label="human",
                              mention_time=sessions[0].time)], message="Core block: human")
    repo.add([repo.new_record("core", "Mia lives in Yanaka, Tokyo, and works remotely for Corvo Design.",
                              label="human", mention_time=sessions[-1].time)], message="Core block: human moved")
    return repo


def first_record_with(repo: MemoryRepo, needle: str) -> rec.Record:
    """The oldest record whose text contains ``needle``."""
    for record in repo.records():
        if needle in record.text:
            return record
    raise LookupError(needle)
