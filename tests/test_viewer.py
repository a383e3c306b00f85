"""The viewer's pages under Streamlit's AppTest, against a repository of the example conversation."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from viewer.common import md
from viewer_fixtures import build_example_repo, first_record_with, raw_request, serving

st_testing = pytest.importorskip("streamlit.testing.v1")
APP = str(Path(__file__).resolve().parents[1] / "viewer" / "app.py")


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> MemoryRepo:
    repo = build_example_repo(tmp_path_factory.mktemp("viewer") / "memory")
    yield repo
    repo.close()


def app(monkeypatch, path: Path | str, page: str | None = None, **query: str):
    """Run the viewer app on ``path``; on ``page`` with ``query`` parameters if given."""
    monkeypatch.setenv("MEMREPO_VIEW_REPO", str(path))
    at = st_testing.AppTest.from_file(APP, default_timeout=60).run()
    if page:
        at.switch_page(page)
        at.query_params.update(query)
        at.run()
    return at


def shown(value: str) -> str:
    """What a Markdown string made inert with md() shows: its backslash escapes undone."""
    return re.sub(r"\\(.)", r"\1", value)


def texts(at) -> str:
    """Everything the page shows as text (plain text, markdown, captions, code, messages), joined."""
    parts = [e.value for kind in ("text", "title", "header", "subheader", "markdown", "caption", "code", "error",
                                  "warning", "info", "success") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def no_failure(at) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_overview_counts_types_and_lists_latest_commits(monkeypatch, example):
    at = app(monkeypatch, example.root)
    no_failure(at)
    metrics = {m.label: m.value for m in at.metric}
    for type_ in ("core", "episodic", "semantic", "procedural"):
        assert metrics[type_] == str(len(example.records(type=type_)))
    assert metrics["episodic"] == "46" and metrics["core"] == "1"
    assert metrics["sources"] == "5"  # one per session
    authors = at.dataframe[0].value  # commits per author
    assert int(authors["commits"].sum()) == len(example.log())
    commits = at.dataframe[1].value
    assert list(commits["message"])[:2] == ["Core block: human moved", "Core block: human"]
    indexes = at.dataframe[2].value.set_index("index")
    for state in example.index_status():
        expected = "current" if state["current"] else "behind HEAD" if state["commit"] else "not built"
        assert indexes.loc[state["index"], "state"] == expected
    graph = example.graph_stats()
    assert metrics["anchors"] == f"{graph['anchors']:,}" and metrics["frames"] == f"{graph['frames']:,}"
    assert int(metrics["frames"]) > 0


def test_overview_shows_indexes_current_after_reindex(monkeypatch, example):
    example.reindex()
    at = app(monkeypatch, example.root)
    no_failure(at)
    indexes = at.dataframe[2].value.set_index("index")
    tip = example.log(limit=1)[0].id[:12]
    for name in ("fulltext", "vectors", "graph"):
        assert indexes.loc[name, "state"] == "current" and indexes.loc[name, "reflects commit"] == tip


def test_memories_filters_by_text_and_type(monkeypatch, example):
    at = app(monkeypatch, example.root, "memories.py")
    no_failure(at)
    assert len(at.dataframe[0].value) == len(example.records())
    at.text_input[0].set_value("suica").run()
    rows = at.dataframe[0].value
    assert len(rows) == 2 and all("Suica" in s for s in rows["summary"])  # turns D1:3 and D1:4
    at.text_input[0].set_value("").run()
    at.multiselect[0].set_value(["semantic"]).run()
    rows = at.dataframe[0].value
    assert sorted(rows["type"].unique()) == ["semantic"] and len(rows) == len(example.records(type="semantic")) > 0


def test_memories_filters_by_time_range_of_event_or_mention(monkeypatch, example):
    from datetime import date

    at = app(monkeypatch, example.root, "memories.py")
    at.radio[0].set_value("when it was written").run()
    at.date_input[0].set_value((date(2023, 6, 1), date(2023, 6, 30))).run()
    no_failure(at)
    rows = at.dataframe[0].value
    session4 = [r for r in example.records() if r.id[3:13] == "2023-06-14"]  # the only session in June
    assert len(rows) == len(session4) >= 10 and set(rows["mentioned"]) == {"2023-06-14"}
    # By when it happened, the climb of Mount Fuji planned in June for August 12 is not in June.
    fuji = first_record_with(example, "climb Mount Fuji on August 12")
    assert fuji.id in set(rows["id"])
    at.radio[0].set_value("when it happened").run()
    at.date_input[0].set_value((date(2023, 6, 1), date(2023, 6, 30))).run()
    no_failure(at)
    rows = at.dataframe[0].value
    if fuji.event_time and fuji.event_time.startswith("2023-08"):
        assert fuji.id not in set(rows["id"])
    assert set(rows["happened"]) <= {f"2023-06-{d:02d}" for d in range(1, 31)} and len(rows) > 0


def test_record_page_shows_text_source_in_context_and_history(monkeypatch, example):
    record = first_record_with(example, "Suica card at Tokyo Station")
    at = app(monkeypatch, example.root, "memories.py", record=record.id)
    no_failure(at)
    shown = texts(at)
    assert record.text in [t.value for t in at.text]  # the Text panel: the stored text, as stored
    assert f"id: {record.id}" in shown and "actor: Mia" in shown
    # The cited turn is highlighted (in a container keyed cited-...); its neighbours are shown plainly around it.
    plain = [t.value for t in at.text]
    assert any(v.startswith("D1:3  Mia: Badly, I was awake at 4 am.") for v in plain)
    assert "D1:4  Jonas: The Suica card is a lifesaver." in "\n".join(plain)
    assert sum(c.value == "cited" for c in at.caption) == 1
    assert f"+++ b/{record.path}" in shown  # the commit that added it, as a diff
    next(b for b in at.button if b.label == "← All memories").click().run()
    no_failure(at)
    assert "record" not in at.query_params and len(at.dataframe[0].value) == len(example.records())


def test_record_history_shows_the_in_place_edit_of_a_core_block(monkeypatch, example):
    at = app(monkeypatch, example.root, "memories.py", record="core-human")
    no_failure(at)
    diffs = [c.value for c in at.code if c.language == "diff"]
    assert len(diffs) == 2
    assert "-Mia lives in Lisbon and works for Corvo Design." in diffs[0]
    assert "+Mia lives in Yanaka, Tokyo, and works remotely for Corvo Design." in diffs[0]


def test_unknown_record_is_a_message_not_a_traceback(monkeypatch, example):
    at = app(monkeypatch, example.root, "memories.py", record="ep-2099-01-01-deadbeef")
    assert not at.exception
    assert "not found" in shown(at.error[0].value)


def test_history_lists_branches_commits_and_diffs_and_reads_as_of_a_commit(monkeypatch, example):
    at = app(monkeypatch, example.root, "history.py")
    no_failure(at)
    assert list(at.dataframe[0].value["branch"]) == ["main"]
    commits = at.dataframe[-1].value
    assert len(commits) == len(example.log()) and commits["message"].iloc[-1] == "Create memory repository"
    assert any("+Mia lives in Yanaka" in c.value for c in at.code)  # newest commit's diff
    session1 = next(o for o in at.selectbox(key="commit").options if "session 1:" in o)
    at.selectbox(key="commit").set_value(session1).run()
    no_failure(at)
    assert any("+Mia: Jonas! I finally landed in Tokyo yesterday." in c.value for c in at.code)
    next(b for b in at.button if b.label == "Read the repository as of this commit").click().run()
    at.switch_page("overview.py").run()
    no_failure(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["episodic"] == "8" and metrics["sources"] == "1"
    assert any("Reading as of" in w.value for w in at.sidebar.warning)


def test_history_lists_review_branches_and_links_to_the_review_page(monkeypatch, tmp_path):
    from dream_fixtures import volcano_repo

    repo = volcano_repo(tmp_path / "memory")  # the offline judge merges "Vesuvius" into "Mount Vesuvius"
    branch = repo.dream(final=True).branch
    at = app(monkeypatch, repo.root, "history.py")
    no_failure(at)
    branches = at.dataframe[0].value.set_index("branch")
    assert branches.loc[branch, "kind"] == "review" and branches.loc["main", "kind"] == "branch"
    assert "1 open review branch(es): review them" in {p.proto.label for p in at.get("page_link")}
    at.selectbox(key="branch").set_value(branch).run()  # the review branch's own commits
    no_failure(at)
    assert at.dataframe[-1].value["message"].iloc[0].startswith("Dream (final round)")
    repo.close()


def test_a_bad_revision_is_a_message(monkeypatch, example):
    monkeypatch.setenv("MEMREPO_VIEW_REPO", str(example.root))
    at = st_testing.AppTest.from_file(APP, default_timeout=60)
    at.session_state["rev"] = "no-such-branch"
    at.run()
    assert not at.exception
    assert any("no-such-branch" in shown(e.value) and "not found" in e.value for e in at.error)


@pytest.mark.parametrize("make", ["missing", "plain-folder"])
def test_a_bad_repository_path_shows_a_clear_message(monkeypatch, tmp_path, make):
    target = tmp_path / "nothing"
    if make == "plain-folder":
        target.mkdir()
    at = app(monkeypatch, target)
    assert not at.exception
    message = shown(at.error[0].value)
    assert message.startswith("Cannot open the memory repository")
    assert ("no such folder" if make == "missing" else "not inside a memory repository") in message


def test_graph_page_draws_an_anchor_neighbourhood(monkeypatch, example):
    at = app(monkeypatch, example.root, "graph.py")
    no_failure(at)
    at.text_input[0].set_value("Pixel").run()
    no_failure(at)
    found = example.graph_anchor("Pixel")
    hood = example.graph_neighbours("Pixel", limit=6)
    assert found.frames and hood.neighbours, "the example conversation gives Pixel frames and neighbours"
    chart = at.get("graphviz_chart")[0].proto.spec
    pixel = found.anchor.iri
    assert f'"{pixel}" [shape=ellipse, label="Pixel\\nanimal · {len(found.anchor.rows)} records"' in chart
    for n in hood.neighbours:
        assert f'URL="graph?anchor={quote(n.anchor.name, safe="")}"' in chart  # each neighbour, a link to it
        for frame in n.frames:
            assert f'URL="graph?frame={quote(frame.iri, safe="")}"' in chart  # each shared frame, a link to it
            for arm in frame.arms:  # role-labelled arms: Pixel left of its frames, the others right
                edge = (pixel, frame.iri) if arm.anchor == pixel else (frame.iri, arm.anchor)
                if arm.anchor == pixel or arm.anchor in {x.anchor.iri for x in hood.neighbours}:
                    assert f'"{edge[0]}" -> "{edge[1]}" [label="{arm.role}"]' in chart
    table = at.dataframe[0].value  # all its frames
    assert sorted(table["frame"]) == sorted(f.iri for f in found.frames)
    links = [shown(p.proto.label) for p in at.get("page_link")]
    for record_id in found.anchor.rows:  # every record that mentions Pixel: a link with its text
        assert f"{record_id} · {example.get(record_id).summary}" in links


def test_graph_page_for_an_unknown_anchor_says_so_and_suggests_names(monkeypatch, example):
    at = app(monkeypatch, example.root, "graph.py", anchor="Nobody At All")
    assert not at.exception and not at.error
    assert "no anchor named 'Nobody At All'" in shown(at.warning[0].value)
    at = app(monkeypatch, example.root, "graph.py", anchor="Suica")  # the anchor is "Suica card"
    assert not at.exception and not at.error
    assert "Suica card" in {shown(p.proto.label) for p in at.get("page_link")}


def test_frame_page_shows_roles_literals_times_and_cited_records_down_to_the_turn(monkeypatch, example):
    record = first_record_with(example, "Suica card at Tokyo Station")
    buy = next(f for f in example.graph_frames(cited=record.id) if f.predicate == "buy")
    at = app(monkeypatch, example.root, "graph.py", frame=buy.iri)
    no_failure(at)
    shown = texts(at)
    assert "- **predicate**: buy" in shown and "- **status**: done" in shown
    assert f"- **event time**: {buy.event_time[0].replace('-', chr(92) + '-').replace(':', chr(92) + ':')}" in shown
    roles = at.dataframe[0].value
    assert dict(zip(roles["role"], roles["anchor"])) == {a.role: a.name for a in buy.arms}
    assert "Suica card" in set(roles["anchor"])
    literals = at.dataframe[1].value
    assert dict(zip(literals["key"], literals["value"])) == {k: "|".join(v) for k, v in buy.literals.items()}
    assert any(p.proto.label.startswith(md(record.id)) for p in at.get("page_link"))  # cited record, a link
    assert any(t.value.startswith("Badly, I was awake at 4 am. But I bought a Suica card") for t in at.text)  # its turn
    assert f"`{record.sources[0]}`" in shown


def test_record_page_lists_the_frames_citing_it(monkeypatch, example):
    record = first_record_with(example, "Suica card at Tokyo Station")
    at = app(monkeypatch, example.root, "memories.py", record=record.id)
    no_failure(at)
    frames = example.graph_frames(cited=record.id)
    assert frames and sorted(at.dataframe[0].value["frame"]) == sorted(f.iri for f in frames)


def test_recall_page_shows_plan_facts_with_their_chain_and_records(monkeypatch, example):
    question = "Where did Mia buy her Suica card?"
    at = app(monkeypatch, example.root, "recall.py", q=question)
    no_failure(at)
    result = example.recall(question)
    shown = texts(at)
    assert f"operator **{result.plan.operator}**" in shown
    fact = next(f for f in result.facts if f.predicate == "buy")
    record = first_record_with(example, "Suica card at Tokyo Station")
    assert record.id in fact.cites
    labels = [e.label for e in at.expander]
    assert any(label.startswith("buy\\(") and md(record.id) in label for label in labels)
    # fact -> cited record (a link) -> its source turn, highlighted
    assert any(p.proto.label.startswith(md(record.id)) for p in at.get("page_link"))
    assert f"`{record.sources[0]}`" in shown
    assert any(t.value.startswith("Badly, I was awake at 4 am. But I bought a Suica card") for t in at.text)
    assert {p.proto.label.split(" · ")[0] for p in at.get("page_link")} >= {md(i) for i in result.record_ids}
    assert any(label.startswith("Entry anchors") for label in labels)
    assert any(label.startswith("Base lane") for label in labels) and any(label.startswith("Relation lane") for label in labels)


# --- the command ------------------------------------------------------------------


def test_view_refuses_a_folder_that_is_not_a_repository(tmp_path):
    result = CliRunner().invoke(cli, ["view", str(tmp_path)])
    assert result.exit_code == 1
    assert "not inside a memory repository" in result.output


def test_view_refuses_a_port_in_use(example):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["view", str(example.root), "--port", str(port)])
    assert result.exit_code == 1
    assert f"port {port} on 127.0.0.1 is already in use" in result.output


def test_view_command_line_runs_the_packaged_app_headless(example):
    import viewer
    from viewer.launch import viewer_command

    command, env = viewer_command(str(example.root), port=8599, allow_review=False, environ={})
    assert command[command.index("run") + 1] == str(Path(viewer.__file__).parent / "serve.py")
    for flag, value in [("--server.headless", "true"), ("--browser.gatherUsageStats", "false"),
                        ("--server.address", "127.0.0.1"), ("--server.port", "8599")]:
        assert command[command.index(flag) + 1] == value
    assert env["MEMREPO_VIEW_REPO"] == str(example.root) and not env["MEMREPO_VIEW_ALLOW_REVIEW"]


def test_record_history_matches_a_path_filtered_git_log(example):
    """repo.history reads only the trees along the path; it must list what `git log -- path` lists."""
    for record in [*example.records()[::7], example.get("core-human")]:
        expected = [c.id for c in example.store.log(record.path)]
        assert [c.id for c, _ in example.history(record.id)] == expected
        assert [c.id for c, _ in example.history(record.id, limit=1)] == expected[:1]
    assert len(example.history("core-human")) == 2
    assert [c.summary for c, _ in example.history("core-human", scan=1)] == ["Core block: human moved"]
    assert example.history(first_record_with(example, "Suica").id, scan=3) == []  # added further back


def test_a_vault_entry_stays_encrypted_without_the_key(monkeypatch, tmp_path):
    import streamlit as st

    from memrepo.vault import generate_key

    key = generate_key().decode()
    MemoryRepo.init(tmp_path / "memory").close()
    with MemoryRepo.open(tmp_path / "memory", environ={"MEMREPO_VAULT_KEY": key}) as writer:
        record_id = writer.remember("Mia's locker PIN is 4321", type="vault").written[0]
    st.cache_resource.clear()  # the viewer opens the repository once per process: start it afresh
    at = app(monkeypatch, tmp_path / "memory", "memories.py", record=record_id)
    no_failure(at)
    assert "4321" not in texts(at)
    assert any("Encrypted vault entry" in i.value for i in at.info)

    st.cache_resource.clear()
    monkeypatch.setenv("MEMREPO_VAULT_KEY", key)
    at = app(monkeypatch, tmp_path / "memory", "memories.py", record=record_id)
    no_failure(at)
    assert "Mia's locker PIN is 4321" in texts(at)
    st.cache_resource.clear()


def test_the_viewer_reads_only_through_the_library_api():
    """No Git, index or RDF code in viewer/: it imports memrepo.api (and records/errors), never lower layers."""
    import ast

    allowed = {"memrepo.api", "memrepo.errors", "memrepo.records", "memrepo"}
    forbidden = ("dulwich", "tantivy", "usearch", "rdflib", "sqlite3", "memrepo.store", "memrepo.index",
                 "memrepo.graph", "memrepo.read", "memrepo.write", "memrepo.dream", "memrepo.llm")
    for path in sorted((Path(__file__).resolve().parents[1] / "viewer").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(forbidden), f"{path.name} imports {name}"
                if name.startswith("memrepo"):
                    assert name in allowed, f"{path.name} imports {name}"
            if isinstance(node, ast.Attribute):  # nor reaches past the API into the Git store
                assert node.attr not in ("store", "snapshot", "object_store"), f"{path.name}:{node.lineno} .{node.attr}"


@pytest.mark.parametrize("page", ["overview.py", "memories.py", "graph.py", "recall.py", "history.py"])
def test_every_page_runs_on_a_fresh_empty_repository(monkeypatch, tmp_path, page):
    MemoryRepo.init(tmp_path / "memory").close()
    at = app(monkeypatch, tmp_path / "memory", page)
    no_failure(at)
    if page == "memories.py":
        at.text_input[0].set_value("anything").run()
        no_failure(at)
        assert len(at.dataframe[0].value) == 0
    if page == "graph.py":
        at.text_input[0].set_value("Mia").run()
        assert not at.exception and "no anchor named 'Mia'" in shown(at.warning[0].value)


def test_a_port_released_a_moment_ago_is_free_again():
    """Restarting the viewer on its port works: connections left in TIME_WAIT do not block it."""
    import socket

    from viewer.launch import check_port

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit's server (Tornado) does
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server's side closes first, so its end of the connection waits in TIME_WAIT
    client.close()
    server.close()
    check_port("127.0.0.1", port)  # raises ViewerError if the port were still taken


# --- the Host-header check (DNS rebinding) -----------------------------------------------------


def test_requests_not_addressed_to_the_viewer_are_refused(example, tmp_path):
    """A DNS-rebinding page reaches 127.0.0.1 with its own domain in Host: HTTP and websocket refused."""
    with serving(example.root, tmp_path / "view.log") as base:
        port = base.rsplit(":", 1)[1]
        assert raw_request(base, f"127.0.0.1:{port}").endswith("200 OK")
        assert raw_request(base, f"localhost:{port}").endswith("200 OK")
        assert raw_request(base, f"rebind.invalid:{port}").endswith("403 Forbidden")
        assert raw_request(base, "rebind.invalid").endswith("403 Forbidden")
        assert raw_request(base, f"127.0.0.1:{int(port) + 1}").endswith("403 Forbidden")
        assert raw_request(base, f"127.0.0.1:{port}", "/_stcore/stream", websocket=True).endswith("101 Switching Protocols")
        refused = raw_request(base, f"rebind.invalid:{port}", "/_stcore/stream", websocket=True)
        assert refused.endswith("403 Forbidden"), refused
        assert raw_request(base, f"rebind.invalid:{port}", "/").endswith("403 Forbidden")


@pytest.mark.parametrize("host, address, allowed", [
    ("127.0.0.1:8501", "127.0.0.1", True),
    ("localhost:8501", "127.0.0.1", True),
    ("LOCALHOST:8501", "127.0.0.1", True),
    ("127.0.0.1", "127.0.0.1", True),
    ("rebind.invalid:8501", "127.0.0.1", False),
    ("127.0.0.1.rebind.invalid:8501", "127.0.0.1", False),
    ("127.0.0.1:8502", "127.0.0.1", False),
    ("", "127.0.0.1", False),
    ("192.168.1.5:8501", "127.0.0.1", False),
    ("[::1]:8501", "::1", True),
    ("localhost:8501", "::1", True),
    ("[::1]:8501", "127.0.0.1", False),
    ("192.168.1.5:8501", "0.0.0.0", True),  # an IP literal cannot be rebound
    ("[fe80::1]:8501", "::", True),
    ("rebind.invalid:8501", "0.0.0.0", False),
    ("myhost.lan:8501", "myhost.lan", True),
    ("other.lan:8501", "myhost.lan", False),
])
def test_host_header_policy(host, address, allowed):
    from viewer.hostcheck import host_allowed

    assert host_allowed(host, address, 8501) is allowed


# --- a graph a person can read, who wrote what, hostile text --------------------------------------


def test_graph_page_opens_on_the_most_connected_anchors_and_their_frames(monkeypatch, example):
    at = app(monkeypatch, example.root, "graph.py")
    no_failure(at)
    hubs = example.graph_hubs(limit=30)
    assert hubs[0].name == "Mia"  # most records mention her
    chart = at.get("graphviz_chart")[0].proto.spec
    for hub in hubs[:6]:  # drawn by name, each a link to its page
        assert f'label="{hub.name}\\n{hub.type} · {hub.records} records"' in chart
        assert f'URL="graph?anchor={quote(hub.name, safe="")}"' in chart
    assert chart.count("shape=box") >= 6 and 'URL="graph?frame=' in chart  # their frames
    assert list(at.dataframe[0].value["anchor"]) == [h.name for h in hubs]
    at.dataframe[0].proto  # selecting a row opens the anchor
    at.query_params["anchor"] = "Jonas"
    at.run()
    no_failure(at)
    assert "Jonas" in [shown(s.value) for s in at.subheader]


def test_a_hub_shows_its_top_neighbours_with_n_more_and_pages(monkeypatch, example):
    hood = example.graph_neighbours("Mia", limit=6)
    assert hood.total > 12
    at = app(monkeypatch, example.root, "graph.py", anchor="Mia")
    no_failure(at)
    assert f"Neighbours 1–6 of {hood.total} ({hood.total - 6} more)" in texts(at)
    chart = at.get("graphviz_chart")[0].proto.spec
    assert chart.count("shape=ellipse") == 7  # Mia and six neighbours, never the whole hairball
    assert chart.count("shape=box") <= 6 * 2 + 4
    first = [n.anchor.name for n in hood.neighbours]
    assert all(f'URL="graph?anchor={quote(name, safe="")}"' in chart for name in first)
    next(b for b in at.button if b.label == "Next →").click().run()
    no_failure(at)
    second = example.graph_neighbours("Mia", offset=6, limit=6)
    assert f"Neighbours 7–12 of {hood.total}" in texts(at)
    chart = at.get("graphviz_chart")[0].proto.spec
    assert all(f'URL="graph?anchor={quote(n.anchor.name, safe="")}"' in chart for n in second.neighbours)
    assert not any(f'URL="graph?anchor={quote(name, safe="")}"' in chart for name in first)
    # The records that mention her: 20 per page, each a link with the record's text.
    links = [shown(p.proto.label) for p in at.get("page_link")]
    found = example.graph_anchor("Mia").anchor
    assert sum(label.startswith(("ep-", "se-")) for label in links) == 20 < len(found.rows)
    record = example.get(found.rows[0])
    assert f"{record.id} · {record.summary}" in links
    assert f"Records 1–20 of {len(found.rows)} ({len(found.rows) - 20} more)" in texts(at)


def test_overview_and_history_show_who_wrote_what(monkeypatch, example):
    at = app(monkeypatch, example.root)
    no_failure(at)
    assert any(s.value == "Commits per author" for s in at.subheader)
    at = app(monkeypatch, example.root, "history.py")
    no_failure(at)
    authors = at.dataframe[1].value
    author = example.log()[0].author
    assert list(authors["author"]) == [author] and int(authors["commits"].iloc[0]) == len(example.log())
    wrote = at.dataframe[2].value  # what the author's newest commits wrote
    session1 = wrote[wrote["message"].str.contains("session 1:")].iloc[0]
    assert session1["records added"] > 0 and session1["sources added"] == 1
    actors = at.dataframe[3].value.set_index("actor")  # who the records are about or who said them
    assert actors.loc["Mia", "episodic"] == sum(1 for r in example.records(type="episodic") if r.actor == "Mia")


def test_no_stored_text_reaches_the_page_as_markdown(monkeypatch, tmp_path):
    """Every Markdown string the pages send has its stored text made inert (the browser test shows it)."""
    from viewer_fixtures import BEACON, HOSTILE, add_hostile

    import streamlit as st

    repo = build_example_repo(tmp_path / "memory")
    record, _source = add_hostile(repo)
    frame = repo.graph_frames(cited=record.id)[0]
    st.cache_resource.clear()
    pages = [("memories.py", {"record": record.id}), ("graph.py", {"frame": frame.iri}),
             ("graph.py", {"anchor": next(a.name for a in frame.arms if BEACON in a.name)}), ("history.py", {}),
             ("review.py", {}), ("recall.py", {"q": "kettle Kyoto beacon"}), ("overview.py", {})]
    for page, query in pages:
        at = app(monkeypatch, repo.root, page, **query)
        no_failure(at)
        markdown = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "error", "warning",
                                         "info", "success") for e in getattr(at, kind)]
        markdown += [e.label for e in at.expander] + [p.proto.label for p in at.get("page_link")]
        for value in markdown:
            bare = re.sub(r"(`+).*?\1", "", value)  # code spans are shown as written
            for syntax in ("![", "](", ":red[", "<img", "<a ", "<script", "<span", "$x", "**not", "# not",
                           "http://", "www.", "@beacon", "&amp;"):
                assert syntax not in bare, (page, syntax, value)
        if page == "memories.py":
            assert record.text in [t.value for t in at.text] and HOSTILE in record.text
    repo.close()
    st.cache_resource.clear()


SKILL_BEFORE = "---\nname: buy-a-ticket\ndescription: Buy a train ticket\n---\n1. Open the app.\n2. Pay.\n"
SKILL_AFTER = ("---\nname: buy-a-ticket\ndescription: Buy a train ticket\n---\n1. Open the app.\n"
               "2. Check the card balance first: the gate refuses a card under the fare.\n3. Pay.\n")


def test_review_page_shows_a_skill_branch_as_a_side_by_side_diff(monkeypatch, tmp_path):
    """A skill branch gets the same page: what approving merges, each SKILL.md before | after."""
    import streamlit as st

    repo = MemoryRepo.init(tmp_path / "memory")
    path = "procedural/skills/buy-a-ticket/SKILL.md"
    repo.store.commit({path: SKILL_BEFORE.encode()}, "Skill: buy a ticket")
    branch = "dream/skills-2023-07-01-0a1b2c3d"
    repo.store.repo.refs[f"refs/heads/{branch}".encode()] = repo.store.repo.refs[b"refs/heads/main"]
    repo.store.commit({path: SKILL_AFTER.encode()}, "Skills: 1 edited", ref=f"refs/heads/{branch}".encode(),
                      sync_worktree=False)
    st.cache_resource.clear()
    monkeypatch.setenv("MEMREPO_VIEW_ALLOW_REVIEW", "1")
    at = app(monkeypatch, repo.root, "review.py")
    no_failure(at)
    assert "**What approving merges**: 1 commit(s) changing 1 file(s)" in texts(at)
    rows = at.dataframe[-1].value
    same = rows[rows["change"] == ""]  # the context: the same line on both sides
    assert "1. Open the app." in set(same["before"]) and list(same["before"]) == list(same["after"])
    changed = rows[rows["change"] == "changed"].iloc[0]  # removed and added lines side by side, in full
    assert (changed["before"], changed["after"]) == (
        "2. Pay.", "2. Check the card balance first: the gate refuses a card under the fare.")
    assert list(rows[rows["change"] == "added"]["after"]) == ["3. Pay."]
    next(b for b in at.button if b.label.startswith("Approve")).click().run()
    assert f"{path}" in texts(at)  # the confirmation lists the files it would merge
    repo.close()
    st.cache_resource.clear()


def test_review_page_links_each_added_skill_step_to_its_experiences_and_session_turns(monkeypatch, tmp_path):
    """Figure 3's skill branch: every added step with the experience it cites, that experience's checked
    quote and the session turn it quotes, each shown as plain text (never Markdown)."""
    import streamlit as st
    from test_skills import NOW, shop_repo

    repo = shop_repo(tmp_path)
    result = repo.dream_skills(now=NOW)
    (change,) = [c for c in result.changes if c.slug == "online-shopping"]
    avoid = change.added[0].cites[0][0]
    st.cache_resource.clear()
    at = app(monkeypatch, repo.root, "review.py")
    no_failure(at)
    assert "Skill steps and their evidence" in texts(at)
    plain = [t.value for t in at.text]  # st.text: shown as written
    for step in change.added:
        assert step.text in plain
        for _, quote in step.cites:
            assert quote in plain
    assert any(f"cites experience `{avoid}` (avoid)" in c.value for c in at.caption)
    turn = ("Sorry, I did not look at the price or the material before paying. Next time, compare the total "
            "with the budget before checkout; confirm the material in the product details. What worked: "
            "searching with the budget as a price filter.")
    assert turn in plain  # the session turn the experience cites, read from the session's source
    session_id = result.run["sessions"][0]["id"]
    assert f"record={session_id}" in {p.proto.query_string for p in at.get("page_link")}  # the session's page
    repo.close()
    st.cache_resource.clear()


def test_memories_names_a_record_whose_git_object_is_damaged_and_lists_the_others(monkeypatch, tmp_path):
    repo = build_example_repo(tmp_path / "memory")
    records = repo.records()
    damaged = records[0]
    blob = repo.store.snapshot().blob_id(damaged.path)
    repo.close()
    loose = tmp_path / "memory" / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"garbage")
    at = app(monkeypatch, tmp_path / "memory", "memories.py")
    no_failure(at)
    assert len(at.dataframe[0].value) == len(records) - 1
    warning = shown(" ".join(str(w.value) for w in at.warning))
    assert "1 record(s) could not be read" in warning and damaged.path in warning and blob in warning


def test_a_skills_page_expands_its_run_references_to_the_sessions_and_their_quotes(monkeypatch, tmp_path):
    """`[runs 1, 2, 3]` after a step: the record page lists each run with its outcome, task and verbatim quotes,
    shown as plain text."""
    import json

    import streamlit as st
    from test_skills_sessions import release_sessions

    repo = MemoryRepo.init(tmp_path / "m")
    (tmp_path / "runs.json").write_text(json.dumps(release_sessions()))
    repo.ingest([tmp_path / "runs.json"])
    (review,) = repo.review_list()
    repo.review_approve(review.branch)
    (path,) = [p for p, _ in repo.snapshot.walk("procedural/skills")]
    skill = next(r for r in repo.records(type="procedural") if r.path == path)
    _, runs = repo.skill_show(path.split("/")[2])
    st.cache_resource.clear()
    at = app(monkeypatch, repo.root, "memories.py", record=skill.id)
    no_failure(at)
    assert "Runs the steps rest on" in texts(at)
    labels = [shown(e.label) for e in at.expander]
    assert [f"[runs {r['number']}] {r['session']} ({r['outcome']})" for r in runs] == [
        label for label in labels if label.startswith("[runs ")]
    plain = [t.value for t in at.text]
    quotes = [f"\u201c{q['text']}\u201d ({r['source']}#{q['part']})" for r in runs for q in r["quotes"]]
    assert quotes and all(q in plain for q in quotes) and '"name": "bump_version"' in " ".join(quotes)
    repo.close()
    st.cache_resource.clear()
