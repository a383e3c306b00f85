"""Documents are memory (issue 32): Markdown, plain text, HTML and PDF split along their structure into parts with
stable positions (``src-...#handbook/People:2``), their statements written as records citing those parts, recalled
and answered; a new version supersedes the old one's records in one commit; an unchanged one is a no-op."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import RecordError
from memrepo.records import split_citation
from memrepo.write import documents
from memrepo.write.parsers import parse_file
from pdfmaker import build_pdf

HANDBOOK = """# Team handbook

Welcome to the platform group. This page says who does what.

## People

- Priya Raman leads the platform team.
- Tomasz Wójcik is the on-call lead for the billing service.
- Ana Lima owns the data warehouse.

## Systems

The billing service runs in eu-west-1 on 12 m5.large instances.
The data warehouse holds 40 TB and runs in us-east-2.

| System | Region | Nodes |
|--------|--------|-------|
| ledger-db | eu-central-1 | 3 |

## Schedules

The nightly backup starts at 02:30 UTC.

## Runbook

1. Drain the queue before a deploy.
2. Page the on-call lead if the backlog passes 5,000 messages.

## History

On 2026-03-14 the billing database was moved to Postgres 16.
"""


def texts(repo: MemoryRepo, type_: str) -> dict[str, object]:
    return {r.text: r for r in repo.records(type_)}


def citation_anchor(record) -> str:
    (citation,) = record.sources
    return split_citation(citation)[1]


# --- each format --------------------------------------------------------------------------------------------


def test_markdown_parts_follow_headings_lists_and_tables_and_rebuild_the_document(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    result = repo.ingest([doc], mention_time="2026-04-01")
    source = repo.source(result.sources_written[0])
    anchors = [p.anchor for p in source.parts]
    assert anchors[:6] == ["handbook:0", "handbook:1", "handbook/People:0", "handbook/People:1",
                           "handbook/People:2", "handbook/People:3"]
    assert source.part("handbook/People:2").text == "- Tomasz Wójcik is the on-call lead for the billing service."
    assert source.part("handbook/Systems:3").text == "| ledger-db | eu-central-1 | 3 |"
    (resource,) = repo.records("resource")
    assert resource.text == HANDBOOK.rstrip("\n")  # the resource record keeps the document itself
    facts = texts(repo, "semantic")
    fact = facts["Tomasz Wójcik is the on-call lead for the billing service."]
    assert fact.sources == (f"{source.id}#handbook/People:2",)  # names, numbers and units verbatim, cited
    assert "The billing service runs in eu-west-1 on 12 m5.large instances." in facts
    # A table row: one record per column, with the row's first cell, under their headers.
    assert {"Systems — System: ledger-db; Region: eu-central-1", "Systems — System: ledger-db; Nodes: 3"} <= set(facts)
    assert citation_anchor(facts["Systems — System: ledger-db; Nodes: 3"]) == "handbook/Systems:3"
    steps = texts(repo, "procedural")
    assert set(steps) == {"Drain the queue before a deploy.",
                          "Page the on-call lead if the backlog passes 5,000 messages."}
    assert citation_anchor(steps["Drain the queue before a deploy."]) == "handbook/Runbook:1"
    (event,) = repo.records("episodic")
    assert event.text == "On 2026-03-14 the billing database was moved to Postgres 16."
    assert event.event_time == "2026-03-14" and citation_anchor(event) == "handbook/History:1"


def test_plain_text_headings_paragraphs_and_items(repo, tmp_path):
    doc = tmp_path / "oncall.txt"
    doc.write_text("On-call notes\n=============\n\nContacts\n\n- Mara Keller answers pages for the search cluster.\n"
                   "- Backup contact: Idris Baptiste\n\nCosts\n\nThe search cluster costs 2,300 EUR a month.\n")
    result = repo.ingest([doc], mention_time="2026-04-01")
    source = repo.source(result.sources_written[0])
    assert [p.anchor for p in source.parts] == ["oncall:0", "oncall/Contacts:0", "oncall/Contacts:1",
                                                "oncall/Contacts:2", "oncall/Costs:0", "oncall/Costs:1"]
    facts = texts(repo, "semantic")
    assert "Mara Keller answers pages for the search cluster." in facts
    # A list item that does not stand alone keeps its heading as context.
    assert citation_anchor(facts["Contacts — Backup contact: Idris Baptiste"]) == "oncall/Contacts:2"
    assert "The search cluster costs 2,300 EUR a month." in facts


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        _Recorder.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        return


def test_html_is_read_as_text_without_scripts_styles_or_any_request(repo, tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        page = tmp_path / "status.html"
        page.write_text(f"""<!doctype html><html><head><title>Status page</title>
<link rel="stylesheet" href="{base}/style.css"><script src="{base}/app.js"></script>
<style>body {{ color: red }}</style></head><body>
<script>fetch("{base}/beacon"); document.write("Injected sentence from a script.")</script>
<h1>Status page</h1><img src="{base}/logo.png" alt="">
<h2>Contacts</h2><ul><li><p>Noor Haddad runs the status page.</p></li><li>Escalate to Lev Petrov after 20 minutes.</li></ul>
<h2>Hosting</h2><p>The status page is hosted on <b>two</b> VMs in Frankfurt.</p>
<table><tr><th>Probe</th><th>Interval</th></tr><tr><td>api</td><td>30 s</td></tr></table>
<iframe src="{base}/frame"></iframe></body></html>""")
        result = repo.ingest([page], mention_time="2026-04-01")
    finally:
        server.shutdown()
    assert _Recorder.hits == []  # nothing the page references was fetched
    source = repo.source(result.sources_written[0])
    assert source.title == "Status page"
    (resource,) = repo.records("resource")
    assert "Injected" not in resource.text and "color: red" not in resource.text and "fetch(" not in resource.text
    facts = texts(repo, "semantic")
    assert citation_anchor(facts["Noor Haddad runs the status page."]) == "status/Contacts:1"
    assert citation_anchor(facts["The status page is hosted on two VMs in Frankfurt."]) == "status/Hosting:1"
    assert "Hosting — Probe: api; Interval: 30 s" in facts
    assert "Escalate to Lev Petrov after 20 minutes." in texts(repo, "procedural")


def test_pdf_sections_come_from_its_outline_and_pages_without_one(repo, tmp_path):
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(build_pdf(
        [["Owners", "Kenji Sato owns the render farm.", "The render farm has 64 GPUs."],
         ["Budget", "The render farm costs 9,100 USD a month."]],
        title="Studio manual", outline=[("Owners", 0), ("Budget", 1)]))
    result = repo.ingest([pdf], mention_time="2026-04-01")
    source = repo.source(result.sources_written[0])
    assert source.title == "Studio manual" and source.extra["format"] == "pdf"
    facts = texts(repo, "semantic")
    assert citation_anchor(facts["Kenji Sato owns the render farm."]) == "manual/Owners:1"
    assert citation_anchor(facts["The render farm costs 9,100 USD a month."]) == "manual/Budget:1"
    plain = tmp_path / "flyer.pdf"
    plain.write_bytes(build_pdf([["The kiosk opens at 07:45."], ["Parking is free after 18:00."]]))
    result = repo.ingest([plain], mention_time="2026-04-01")
    parts = repo.source(result.sources_written[0]).parts
    assert [p.anchor for p in parts if not p.anchor.endswith(":0")] == ["flyer/p1:1", "flyer/p2:1"]


# --- stable positions ---------------------------------------------------------------------------------------


def test_positions_are_stable_when_another_section_changes(tmp_path):
    before = tmp_path / "handbook.md"
    before.write_text(HANDBOOK)
    edited = HANDBOOK.replace("## Systems\n\n", "## Systems\n\nA new first paragraph about systems.\n\n") \
        .replace("## People\n", "## Onboarding\n\nRead this page first.\n\n## People\n") \
        .replace("## Schedules\n\nThe nightly backup starts at 02:30 UTC.\n", "")
    after = tmp_path / "later" / "handbook.md"
    after.parent.mkdir()
    after.write_text(edited)
    first = {p.anchor: p.text for p in parse_file(before, mention_time="2026-04-01").sources[0].parts}
    second = {p.anchor: p.text for p in parse_file(after, mention_time="2026-04-01").sources[0].parts}
    for anchor in ("handbook/People:1", "handbook/People:2", "handbook/People:3", "handbook/Runbook:1",
                   "handbook/Runbook:2", "handbook/History:1"):
        assert first[anchor] == second[anchor]
    assert first["handbook/Systems:1"] != second["handbook/Systems:1"]  # the edited section moves, and only it


def test_the_citing_resolvers_accept_section_positions(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    assert repo.doctor() == []
    runner = CliRunner()
    validated = runner.invoke(cli, ["--repo", str(repo.root), "validate"])
    assert validated.exit_code == 0, validated.output
    fact = texts(repo, "semantic")["Ana Lima owns the data warehouse."]
    shown = runner.invoke(cli, ["--repo", str(repo.root), "show", fact.id, "--json"])
    assert shown.exit_code == 0
    assert "handbook/People:3" in shown.output and "- Ana Lima owns the data warehouse." in shown.output


def test_a_citation_of_a_position_the_source_lacks_is_refused_by_validate(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    source_id = repo.records("resource")[0].sources[0].split("#")[0]
    repo.add([repo.new_record("semantic", "A fact citing a section that is not there.", mention_time="2026-04-02",
                              sources=[f"{source_id}#handbook/Nowhere:7"])])
    validated = CliRunner().invoke(cli, ["--repo", str(repo.root), "validate"])
    assert validated.exit_code == 1 and "has no part handbook/Nowhere:7" in validated.output
    assert any("handbook/Nowhere:7" in p.message for p in repo.doctor())


# --- recall and ask --------------------------------------------------------------------------------------------


def test_a_question_about_the_document_is_recalled_with_a_citation_of_its_passage(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    result = repo.recall("Who owns the data warehouse?")
    top = [r for r in result.records if "Ana Lima" in r.text]
    assert top, [r.text for r in result.records]
    assert top[0].sources[0].endswith("#handbook/People:3")
    answer = repo.ask("Who owns the data warehouse?")
    assert "Ana Lima" in answer.answer and "Ana Lima owns the data warehouse." in answer.quote



def test_code_and_snake_case_names_are_kept_verbatim_in_the_records(repo, tmp_path):
    doc = tmp_path / "access.md"
    doc.write_text("# Access\n\nReports connect as the `report_reader` role to the audit_log_2026 table.\n\n"
                   "- Run `grant --role=report_reader *.csv` once; _never_ as \\*root\\*.\n")
    repo.ingest([doc], mention_time="2026-04-01")
    texts = " ".join(r.text for r in repo.recall("Which role do reports connect as?").records)
    assert "report_reader" in texts and "audit_log_2026" in texts
    assert documents.inline_text("Run `grant --role=report_reader *.csv` once; _never_ as \\*root\\*.") == \
        "Run grant --role=report_reader *.csv once; never as *root*."


# --- versions ------------------------------------------------------------------------------------------------


def test_a_new_version_supersedes_the_old_facts_in_one_commit_and_history_keeps_them(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    old = texts(repo, "semantic")["Ana Lima owns the data warehouse."]
    old_commit = repo.store.head().decode()
    doc.write_text(HANDBOOK.replace("Ana Lima owns the data warehouse.", "Ben Okafor owns the data warehouse."))
    result = repo.ingest([doc], mention_time="2026-05-01")
    assert [d["status"] for d in result.documents] == ["new version"] and result.documents[0]["removed"] > 0
    facts = texts(repo, "semantic")
    assert "Ana Lima owns the data warehouse." not in facts and "Ben Okafor owns the data warehouse." in facts
    assert len(repo.records("resource")) == 1
    # One commit removed the old version's records and wrote the new ones (the graph commit follows it).
    new = facts["Ben Okafor owns the data warehouse."]
    (commit,) = [c for c in repo.log(new.id)]
    status = subprocess.run(["git", "-C", str(repo.root), "show", "--name-status", "--no-renames", "--format=",
                             commit.id], capture_output=True, text=True, check=True).stdout.split("\n")
    assert f"D\t{old.path}" in status and f"A\t{new.path}" in status
    assert not any("Ana Lima" in r.text for r in repo.recall("Who owns the data warehouse?").records)
    assert repo.doctor() == []  # the old version's graph files went with its records; its source stays, cited by none
    # The old fact is still in history: show --at the earlier commit, and log.
    runner = CliRunner()
    shown = runner.invoke(cli, ["--repo", str(repo.root), "show", old.id, "--at", old_commit])
    assert shown.exit_code == 0 and "Ana Lima owns the data warehouse." in shown.output
    logged = runner.invoke(cli, ["--repo", str(repo.root), "log", old.id])
    assert logged.exit_code == 0 and len(repo.log(old.id)) == 2  # added, then removed by the new version


def test_a_new_version_under_another_file_name_with_the_same_title_replaces_it(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    renamed = tmp_path / "handbook-2026.md"
    renamed.write_text(HANDBOOK.replace("The nightly backup starts at 02:30 UTC.", "The nightly backup starts at 03:15 UTC."))
    repo.ingest([renamed], mention_time="2026-05-01")
    (resource,) = repo.records("resource")
    assert resource.path == "resource/handbook-2026.md"
    facts = texts(repo, "semantic")
    assert "The nightly backup starts at 03:15 UTC." in facts and "The nightly backup starts at 02:30 UTC." not in facts


def test_an_unchanged_document_is_a_no_op_whatever_its_file_time(repo, tmp_path):
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    runner = CliRunner()
    first = runner.invoke(cli, ["--repo", str(repo.root), "ingest", str(doc)])
    assert first.exit_code == 0, first.output
    head = repo.store.head()
    os.utime(doc, (2 * 10**9, 2 * 10**9))  # a new file time: a new mention time, the same document
    again = runner.invoke(cli, ["--repo", str(repo.root), "ingest", str(doc)])
    assert again.exit_code == 0 and "handbook.md: unchanged" in again.output
    assert repo.store.head() == head
    as_json = runner.invoke(cli, ["--repo", str(repo.root), "ingest", str(doc), "--json"])
    assert json.loads(as_json.stdout)["documents"][0]["status"] == "unchanged"


# --- hostile documents ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,data,problem", [
    ("garbage.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40, "not a readable PDF"),
    ("fake.pdf", b"this is not a pdf at all", "not a PDF"),
    ("blob.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "looks binary"),
    ("latin.txt", "caf\xe9 au lait".encode("latin-1"), "not valid UTF-8"),
    ("scripts.html", b"<html><script>var a = 1;</script><style>p{}</style></html>", "no text"),
    ("marker.md", b"# Notes\n\nA first paragraph.\n\n<!-- part handbook/People:1 -->\n\nMore text.\n", "part marker"),
])
def test_hostile_documents_get_a_clear_error_and_nothing_is_written(repo, tmp_path, name, data, problem):
    path = tmp_path / name
    path.write_bytes(data)
    head = repo.store.head()
    result = CliRunner().invoke(cli, ["--repo", str(repo.root), "ingest", str(path)])
    assert result.exit_code == 1 and problem in result.output and name in result.output, result.output
    assert "Traceback" not in result.output and repo.store.head() == head


def test_a_huge_document_is_refused_before_anything_is_written(repo, tmp_path):
    path = tmp_path / "huge.md"
    path.write_text("# Huge\n\n" + "A line of text that repeats.\n\n" * 40_000)
    with pytest.raises(RecordError, match="huge.md: .*split it"):
        repo.ingest([path])
    assert repo.records("resource") == []


def test_a_slug_keeps_anchors_free_of_spaces_and_separators():
    assert documents.slug("On-call / rota: EU & US") == "On-call-rota-EU-US"
    assert documents.slug("Über uns") == "Über-uns"
    assert documents.slug("???") == "section"


def test_the_viewer_shows_the_cited_passage_of_a_document(repo, tmp_path, monkeypatch):
    st_testing = pytest.importorskip("streamlit.testing.v1")
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    repo.ingest([doc], mention_time="2026-04-01")
    fact = texts(repo, "semantic")["Ana Lima owns the data warehouse."]
    monkeypatch.setenv("MEMREPO_VIEW_REPO", str(repo.root))
    app = str(Path(__file__).resolve().parents[1] / "viewer" / "app.py")
    at = st_testing.AppTest.from_file(app, default_timeout=60).run()
    at.switch_page("memories.py")
    at.query_params.update(record=fact.id)
    at.run()
    assert not at.exception and not at.error and not at.warning
    plain = [t.value for t in at.text]
    assert any(v.startswith("handbook/People:3") and "Ana Lima owns the data warehouse." in v for v in plain)
    assert sum(c.value == "cited" for c in at.caption) == 1


def _document_model(request: dict) -> str:
    """A scripted model for a document: routes each window to the semantic and instruction writers, which write
    one record for the first part the window offers that states something."""
    role = request["response_format"]["json_schema"]["name"]
    schema = request["response_format"]["json_schema"]["schema"]
    if role == "router":
        return json.dumps({"types": ["semantic", "procedural"]})
    if role == "resource_writer":
        return json.dumps({"title": "Team handbook", "summary": "Who does what on the platform team."})
    key = {"semantic_writer": "facts", "instruction_writer": "steps"}[role]
    anchors = schema["properties"][key]["items"]["properties"]["anchors"]["items"]["enum"]
    wanted = {"facts": "handbook/People:3", "steps": "handbook/Runbook:1"}[key]
    if wanted not in anchors:
        return json.dumps({key: []})
    text = {"facts": "Ana Lima owns the data warehouse.", "steps": "Drain the queue before a deploy."}[key]
    return json.dumps({key: [{"anchors": [wanted], "text": text}]})


def test_with_a_model_the_writers_cite_the_window_positions(repo, tmp_path):
    from openai_server import ScriptedOpenAI

    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK)
    with ScriptedOpenAI() as server:
        server.responder = _document_model
        model_repo = MemoryRepo.open(repo.root, settings=server.settings())
        model_repo.ctx = model_repo.ctx.with_capabilities(after_commit={})  # the scripted model writes, it does not extract
        result = model_repo.ingest([doc], mention_time="2026-04-01")
        roles = {r["response_format"]["json_schema"]["name"] for r in server.requests}
    assert {"router", "semantic_writer", "instruction_writer", "resource_writer"} <= roles
    assert result.records == {"procedural": 1, "resource": 1, "semantic": 1}
    (fact,) = model_repo.records("semantic")
    (step,) = model_repo.records("procedural")
    assert citation_anchor(fact) == "handbook/People:3" and citation_anchor(step) == "handbook/Runbook:1"
    assert step.extra["kind"] == "instruction"


def test_html_text_that_looks_like_markdown_stays_text_and_ordered_lists_keep_their_numbers():
    doc = documents.read_document(Path("page.html"), "<h1>Lab</h1><p>| Room 3 | is the lab's room on the first floor.</p>"
                                  "<ol><li>Open the door.</li><li>Switch on the lights.</li></ol>")
    kinds = [(b.anchor, b.kind) for b in doc.blocks]
    assert kinds == [("page:0", "heading"), ("page:1", "paragraph"), ("page:2", "item"), ("page:3", "item")]
    assert "2. Switch on the lights." in doc.text
    part = doc.blocks[1]
    (statement,) = documents.statements({"text": doc.text[part.start:part.end], "block": part.kind})
    assert statement.text == "| Room 3 | is the lab's room on the first floor."


def test_meeting_notes_date_what_a_meeting_section_says_by_its_heading(repo, tmp_path):
    notes = tmp_path / "meetings.md"
    notes.write_text("# Platform meetings\n\n## 2026-02-02 Weekly planning\n\nKofi showed the new booking page to the team.\n\n"
                     "## 2026-02-09 Weekly planning\n\nIlse reported that the backup restore test passed yesterday.\n")
    repo.ingest([notes], mention_time="2026-03-20")
    events = {r.text: r for r in repo.records("episodic")}
    assert events["Kofi showed the new booking page to the team."].event_time == "2026-02-02"
    assert events["Ilse reported that the backup restore test passed yesterday."].event_time == "2026-02-08"


def test_a_text_file_without_blank_lines_is_split_at_sentence_ends_and_loses_no_statement(repo, tmp_path):
    doc = tmp_path / "inventory.txt"
    doc.write_text("".join(f"Rack {i} in hall B holds {i + 2} servers.\n" for i in range(60)))
    result = repo.ingest([doc], mention_time="2026-04-01")
    parts = repo.source(result.sources_written[0]).parts
    assert len(parts) == 60 and parts[59].anchor == "inventory:60"
    facts = texts(repo, "semantic")
    assert len(facts) == 60 and citation_anchor(facts["Rack 59 in hall B holds 61 servers."]) == "inventory:60"
