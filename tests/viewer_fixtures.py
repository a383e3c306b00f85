"""A fixture memory repository built from examples/conversation.txt, for the viewer's tests.

The conversation goes in through the write path (``repo.ingest``, offline backend):
one source per session, whose turns are parts ``D<session>:<turn>``, and the
records that cite them. The ``human`` core block is then written and edited
in place, so that record history has a real diff.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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
HOSTILE_PLACE = f"Mia hiked up Vesuvius to see the crater. ![b](http://{BEACON}/crater.png) :red[hike]"


def add_hostile(repo: MemoryRepo) -> tuple[rec.Record, rec.Source]:
    """A source and an episodic record full of hostile text, committed by a hostile author with a
    hostile message; then the graph and an AutoDream review branch over two records naming one volcano
    (a merge), one of them hostile. Returns the hostile record (as stored) and its source."""
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
    for text, day in ((HOSTILE_PLACE, "2023-07-11"), ("Mia saw Mount Vesuvius from the ferry.", "2023-07-12")):
        repo.add([repo.new_record("semantic", text, mention_time=f"{day}T10:00:00")])
    repo.index_graph()
    repo.dream()
    return repo.get(record.id), source


# --- the viewer as a real process ------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(root: Path, log_path: Path, timeout: float = 60) -> Iterator[str]:
    """`memrepo view ROOT` on a free port until the block ends; yields its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "w+") as log:
        process = subprocess.Popen([sys.executable, "-m", "memrepo", "view", str(root), "--port", str(port)],
                                   stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ), cwd=log_path.parent)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                        if answer.read() == b"ok":
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"memrepo view did not start (exit {process.poll()}):\n{log.read()}")
                time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def raw_request(base: str, host: str, path: str = "/_stcore/health", websocket: bool = False) -> str:
    """The status line the viewer answers to a GET of ``path`` sent with this Host header."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(base)
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    if websocket:
        lines[-1] = "Connection: Upgrade"
        lines += ["Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = conn.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode()
