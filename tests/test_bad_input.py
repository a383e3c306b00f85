"""Bad input is a one-line error, never a traceback; numbers are bounded; SPARQL never leaves the machine (issue 21)."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_server import ScriptedOpenAI

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.llm import get_backend

DEEP = "[" * 100_000 + "]" * 100_000


_BUILT: dict[str, Path] = {}


@pytest.fixture
def memory(tmp_path, tmp_path_factory) -> MemoryRepo:
    """A repository with one episodic record and its graph file (built once, copied for each test)."""
    if "root" not in _BUILT:
        root = tmp_path_factory.mktemp("pristine") / "memory"
        with MemoryRepo.init(root) as repo:
            repo.remember("Mia bought a Suica card at Tokyo Station", type="episodic", event_time="2023-05-02")
            repo.index_graph()
        _BUILT["root"] = root
    shutil.copytree(_BUILT["root"], tmp_path / "memory", symlinks=True)
    repo = MemoryRepo.open(tmp_path / "memory", environ={})
    yield repo
    repo.close()


def files(tmp_path: Path) -> dict[str, Path]:
    made = {
        "deep.json": DEEP,
        "deep.jsonl": '{"role": "user", "content": ' + DEEP + "}\n",
        "binary.md": "\0\1\2\3 not text",
        "session.json": '{"task": "x", "messages": ' + "[" * 70 + "]" * 70 + ', "outcome": "done"}',
    }
    out = {}
    for name, text in made.items():
        out[name] = tmp_path / name
        out[name].write_text(text, encoding="utf-8")
    return out


# (arguments, exit status, words the one error line must contain); {name} is a file made by files()
BAD = [
    (["search", "Suica", "-k", "1000000000"], 2, ["-k", "1000"]),
    (["search", "Suica", "-k", "0"], 2, ["-k"]),
    (["search", "Suica", "-k", "-5"], 2, ["-k"]),
    (["search", "Suica", "-k", "many"], 2, ["-k"]),
    (["search", ""], 1, ["query"]),
    (["search", "Suica", "--at", "no-such-rev"], 1, ["no-such-rev"]),
    (["log", "-n", "0"], 2, ["--limit"]),
    (["log", "-n", "99999999999999999999"], 2, ["--limit"]),
    (["graph", "frames", "--limit", "1000000000"], 2, ["--limit"]),
    (["graph", "frames", "--limit", "0"], 2, ["--limit"]),
    (["view", "--port", "70000"], 2, ["--port"]),
    (["show", "../../etc/passwd"], 1, ["id"]),
    (["show", "ep-2023-05-02-00000000"], 1, ["not found"]),
    (["list", "--since", "yesterday-ish"], 1, ["since"]),
    (["list", "--type", "diary"], 2, ["--type"]),
    (["remember", "x", "--type", "episodic", "--event-time", "the day after"], 1, ["event_time"]),
    (["ingest", "{deep.json}"], 1, ["deep.json", "nested deeper than"]),
    (["ingest", "{deep.jsonl}"], 1, ["deep.jsonl", "nested deeper than"]),
    (["ingest", "{session.json}"], 1, ["session.json", "nested deeper than"]),
    (["ingest", "{binary.md}"], 1, ["binary.md"]),
    (["ingest", "no-such-file.json"], 1, ["no-such-file.json"]),
    (["graph", "sparql", "SELEC ?x"], 1, ["SPARQL"]),
    (["graph", "sparql", "LOAD <http://127.0.0.1:9/data.ttl>"], 1, ["SPARQL"]),
    (["graph", "sparql", "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"], 1, ["SERVICE", "refused"]),
    (["graph", "anchor", "Nobody At All"], 1, ["no anchor"]),
    (["graph", "export", "--format", "xml"], 2, ["--format"]),
    (["review", "show", "dream/no-such-branch"], 1, ["no-such-branch"]),
]


@pytest.mark.parametrize("args, status, words", BAD, ids=[" ".join(a)[:60] for a, _s, _w in BAD])
def test_bad_input_is_one_line_error_never_a_traceback(memory, tmp_path, args, status, words):
    made = files(tmp_path)
    args = [str(made[a[1:-1]]) if a.startswith("{") and a.endswith("}") and a[1:-1] in made else a for a in args]
    result = CliRunner().invoke(cli, ["--repo", str(memory.root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.exit_code == status, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, result.stderr
    if status == 1:
        assert result.stderr.strip() == errors[0], result.stderr  # an explained error is one line and nothing else
    for word in words:
        assert word in errors[0], (word, errors[0])


def test_search_library_refuses_an_unbounded_k(memory):
    from memrepo.errors import RecordError

    with pytest.raises(RecordError, match="k: must be at most 1000"):
        memory.search("Suica", k=1_000_000_000)


def test_a_deeply_nested_model_reply_is_repaired_not_a_crash():
    schema = {"type": "object", "required": ["types"], "properties": {"types": {"type": "array"}}}
    variables = {"kind": "note", "title": "t", "date": "2023-05-02", "transcript": "n1 Mia moved",
                 "allowed": ["episodic"]}
    with ScriptedOpenAI() as server:
        server.enqueue(DEEP)
        server.enqueue({"types": ["episodic"]})
        backend = get_backend(server.settings())
        try:
            assert backend.run("router", variables, schema, lambda _: {}) == {"types": ["episodic"]}
        finally:
            backend.close()
        assert "nested deeper than" in server.requests[1]["messages"][-1]["content"]


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(65536) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.mark.parametrize("template", [
    "SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT ?s WHERE {{ ?s a mr:Anchor . {{ SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * FROM <{url}data.ttl> WHERE {{ ?s ?p ?o }}",
    "SELECT * FROM NAMED <{url}data.ttl> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
    "ASK {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }}",
    "LOAD <{url}data.ttl>",
])
def test_sparql_never_leaves_the_machine(memory, template):
    listener = Listener()
    try:
        query = template.format(url=f"http://127.0.0.1:{listener.port}/")
        result = CliRunner().invoke(cli, ["--repo", str(memory.root), "graph", "sparql", query])
        assert result.exit_code == 1 and result.stderr.startswith("Error: SPARQL: "), result.output
    finally:
        listener.close()
    assert listener.received == []


def test_local_sparql_still_works(memory):
    result = CliRunner().invoke(cli, ["--repo", str(memory.root), "graph", "sparql",
                                      "SELECT ?name WHERE { ?a a mr:Anchor ; rdfs:label ?name } ORDER BY ?name"])
    assert result.exit_code == 0, result.output
    assert "Mia" in result.stdout.splitlines()


def test_a_repo_folder_that_is_not_there_is_an_error_not_the_repository_above(tmp_path):
    outer = MemoryRepo.init(tmp_path / "outer")
    head = outer.store.head()
    outer.close()
    missing = tmp_path / "outer" / "typo"
    result = CliRunner().invoke(cli, ["--repo", str(missing), "remember", "Mia bought a Suica card"])
    assert result.exit_code != 0 and f"{missing}: no such folder" in result.output
    with MemoryRepo.open(tmp_path / "outer") as again:
        assert again.store.head() == head  # nothing was written to the repository above


def test_init_creates_the_repository_that_repo_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--repo", str(tmp_path / "memory"), "init"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "memory" / "memrepo.toml").is_file() and not (tmp_path / "memrepo.toml").exists()
