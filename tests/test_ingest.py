"""Ingestion with the offline backend: sources kept verbatim, every turn a record, idempotent, bad input refused."""

from __future__ import annotations

import subprocess

import json
import os
import re

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, shared_data
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import RecordError
from memrepo.records import split_citation
from memrepo.write import parsers

CONVERSATION = EXAMPLES / "conversation.txt"


def turns_of(path) -> list[tuple[int, str, str]]:
    """(session, speaker, text) of every turn of the plain-text example, read independently."""
    session, out = 0, []
    for line in path.read_text().splitlines():
        if line.startswith("# Session"):
            session = int(re.match(r"# Session (\d+)", line).group(1))
        elif line.strip():
            speaker, text = line.split(": ", 1)
            out.append((session, speaker, text))
    return out


def tree(repo: MemoryRepo) -> bytes:
    return repo.store.repo[repo.store.head()].tree


def test_example_conversation_every_turn_is_an_episodic_record_citing_it(repo):
    result = repo.ingest([CONVERSATION])
    turns = turns_of(CONVERSATION)
    episodic = repo.records("episodic")
    assert len(episodic) == len(turns) == 46 and result.records["episodic"] == 46
    assert len(result.sources_written) == 5
    assert len(result.commits) == 10  # one commit per session, each followed by its graph commit
    cited = {}
    for record in episodic:
        (citation,) = record.sources
        source_id, anchor = split_citation(citation)
        cited[anchor] = record
        source = repo.source(source_id)
        assert source.part(anchor) is not None
        assert record.mention_time.startswith(source.mention_time[:10]) and record.actor
    for session, speaker, text in turns:
        counter = sum(1 for s, _, _ in turns[: turns.index((session, speaker, text)) + 1] if s == session)
        record = cited[f"D{session}:{counter}"]
        assert record.text == f"{speaker}: {text}" and record.actor == speaker
    photo = cited["D2:9"]
    assert photo.text == "Jonas: [shares a photo] Here he is on the sofa." and photo.event_time == "2023-05-09"
    fuji = cited["D4:2"]
    assert (fuji.status, fuji.event_time, fuji.mention_time) == ("planned", "2023-08-12", "2023-06-14T21:02:00")
    assert cited["D1:1"].event_time == "2023-05-01"  # "landed in Tokyo yesterday"


def test_self_statements_become_semantic_records_verbatim(repo):
    repo.ingest([CONVERSATION])
    texts = {r.text: r for r in repo.records("semantic")}
    assert "Mia: I like my work at Corvo Design too much to quit." in texts
    stay = texts["Mia: I am staying in Yanaka for three weeks, in a guesthouse run by a retired teacher named Mrs. Okada."]
    assert stay.sources[0].endswith("#D1:7") and stay.actor == "Mia"
    assert all(r.sources for r in texts.values())


def test_ingesting_twice_changes_nothing_and_is_byte_identical_across_repositories(repo, tmp_path):
    repo.ingest([CONVERSATION])
    head = repo.store.head()
    again = repo.ingest([CONVERSATION])
    assert again.commits == [] and len(again.sources_unchanged) == 5 and again.model["total"]["calls"] == 0
    assert repo.store.head() == head
    other = MemoryRepo.init(tmp_path / "other")
    other.ingest([CONVERSATION])
    assert tree(other) == tree(repo)
    other.close()


@pytest.fixture
def without_graph(repo):
    """Only the write path: graph indexing after each commit is the graph's own tests' business (and slow)."""
    repo.ctx = repo.ctx.with_capabilities(after_commit={})


def test_locomo_conversation_every_turn_cites_its_dia_id(repo, tmp_path, without_graph):
    data = json.loads(shared_data("locomo", "locomo-dev.json").read_text())
    conversation = data[0]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(conversation))
    body = conversation["conversation"]
    turns = {t["dia_id"]: t for k, v in body.items() if re.fullmatch(r"session_\d+", k) for t in v}
    result = repo.ingest([path])
    sessions = [k for k in body if re.fullmatch(r"session_\d+", k) and body[k]]
    assert len(result.sources_written) == len(sessions) == len(result.commits)
    by_anchor = {}
    for record in repo.records("episodic"):
        (citation,) = record.sources
        by_anchor[split_citation(citation)[1]] = record
    assert set(by_anchor) == set(turns)
    for dia_id, turn in turns.items():
        record = by_anchor[dia_id]
        assert record.text.startswith(f"{turn['speaker']}: {turn['text']}")
        if turn.get("blip_caption"):
            assert f"[image: {turn['blip_caption']}]" in record.text
    first = by_anchor["D1:1"]
    assert first.mention_time == "2023-05-08T13:56:00" and first.event_time == "2023-05-08"
    source = repo.source(split_citation(first.sources[0])[0])
    assert not any("session_summary" in p.text for p in source.parts)
    head = repo.store.head()
    assert repo.ingest([path]).commits == [] and repo.store.head() == head


def test_documents_become_resource_records_kept_by_path_and_chunked(repo, tmp_path):
    doc = tmp_path / "Trip Notes.md"
    paragraphs = [f"Paragraph {i}: " + "Kyoto temples and gardens. " * 20 for i in range(12)]
    doc.write_text("# Trip notes\n\n" + "\n\n".join(paragraphs) + "\n")
    result = repo.ingest([doc], mention_time="2023-07-01")
    assert result.records["resource"] == 1  # and its statements as records (tests/test_documents.py)
    (resource,) = repo.records("resource")
    assert resource.path == "resource/Trip-Notes.md" and resource.text == doc.read_text().rstrip("\n")
    source = repo.source(split_citation(resource.sources[0])[0])
    assert len(source.parts) > 3 and len(resource.sources) == len(source.parts)
    original = doc.read_text()
    for part in source.parts:
        assert original[part.meta["start"] : part.meta["end"]].rstrip("\n") == part.text
    # A new version replaces the document at the same path; the old one stays in history.
    doc.write_text("# Trip notes\n\nRevised: only Nara this time.\n")
    repo.ingest([doc], mention_time="2023-07-02")
    (current,) = repo.records("resource")
    assert current.path == resource.path and "only Nara" in current.text
    assert len(repo.log(current.id)) == 2


def test_openai_messages_json_and_jsonl(repo, tmp_path):
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "I have a cat called Miso.", "timestamp": "2024-02-01T10:00:00"},
        {"role": "assistant", "content": [{"type": "text", "text": "Miso is a lovely name!"}]},
    ]
    as_json = tmp_path / "chat.json"
    as_json.write_text(json.dumps({"title": "Cat chat", "messages": messages}))
    as_jsonl = tmp_path / "chat.jsonl"
    as_jsonl.write_text("\n".join(json.dumps(m) for m in messages[1:]) + "\n")
    result = repo.ingest([as_json, as_jsonl])
    assert result.records == {"episodic": 4, "semantic": 2}
    source = repo.source(result.sources_written[0])
    assert [p.anchor for p in source.parts] == ["D1:1", "D1:2", "D1:3"]
    assert source.part("D1:1").text == "You are a helpful assistant."  # kept, though not a turn
    texts = sorted(r.text for r in repo.records("episodic"))
    assert texts == ["assistant: Miso is a lovely name!"] * 2 + ["user: I have a cat called Miso."] * 2
    assert {r.mention_time for r in repo.records("episodic")} == {"2024-02-01T10:00:00"}


def test_task_session_becomes_a_procedural_record_waiting_for_distillation(repo, tmp_path):
    task = {
        "task": "Fix the failing date parser test",
        "date": "2024-03-05",
        "messages": [
            {"role": "user", "content": "test_parse_date fails on '2024-02-30'"},
            {"role": "assistant", "content": "Ran pytest -x; added a ValueError check in parse_date."},
        ],
        "outcome": {"status": "success", "text": "All 52 tests pass after the fix."},
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(task))
    repo.ingest([path])
    (record,) = repo.records("procedural")
    assert record.extra["distillation"] == "pending" and record.extra["outcome"] == "success"
    assert record.extra["kind"] == "task-session"
    assert "Fix the failing date parser test" in record.text and "All 52 tests pass" in record.text
    anchors = [split_citation(c)[1] for c in record.sources]
    assert anchors == ["task", "t1", "t2", "outcome"]


BAD_INPUTS = [
    ("broken.json", b'{"messages": [', "not valid JSON"),
    ("shape.json", b'{"hello": "world"}', "JSON of an unknown shape"),
    ("empty.txt", b"  \n\n", "is empty"),
    ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "looks binary"),
    ("latin1.txt", "café au lait".encode("latin-1"), "not valid UTF-8"),
    ("lines.jsonl", b'{"role": "user", "content": "hi"}\n{"nope": 1}\n', "JSONL record 2"),
    ("dates.txt", b"# Session 1: someday\nMia: hi\n", "is not a date"),
]


@pytest.mark.parametrize("name, data, problem", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_refused_naming_the_file_before_any_commit(repo, tmp_path, name, data, problem):
    bad = tmp_path / name
    bad.write_bytes(data)
    head = repo.store.head()
    with pytest.raises(RecordError) as err:
        repo.ingest([CONVERSATION, bad])  # the good file first: still nothing is committed
    assert name in str(err.value) and problem in str(err.value)
    assert repo.store.head() == head


def test_file_over_the_size_limit_is_refused(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(parsers, "MAX_FILE_BYTES", 1000)
    big = tmp_path / "big.md"
    big.write_text("word " * 400)
    with pytest.raises(RecordError, match=r"big.md: 2000 bytes is over the ingest limit of 1000 bytes"):
        repo.ingest([big])


def test_remember_routes_through_the_meta_memory_manager(repo):
    result = repo.remember("Call me Mia. I am vegetarian and I live in Kyoto.", mention_time="2023-07-04T09:00:00")
    types = sorted(repo.get(i).type for i in result.written)
    assert types == ["core", "episodic", "semantic"]
    (source,) = repo.sources()
    assert source.kind == "note" and source.part("n1").text.startswith("Call me Mia.")
    assert all(r.sources == (f"{source.id}#n1",) for r in repo.records() if r.type != "core")
    assert "name: Mia" in repo.get("core-human").text
    plain = repo.remember("Bought oat milk", mention_time="2023-07-05", event_time="2023-07-04")
    (record,) = [repo.get(i) for i in plain.written]
    assert (record.type, record.event_time) == ("episodic", "2023-07-04")


@pytest.mark.parametrize("text, event_time, status", [
    ("Mia bought a red lantern at Harbor Market on 2026-11-20", "2026-11-20", "done"),
    ("Mia visited Kyoto on 20 November 2026", "2026-11-20", "done"),
    ("On November 3rd Mia painted a mural", "2026-11-03", "done"),
    ("Mia flew to Oslo on December 20", "2025-12-20", "done"),  # said on 1 December: last year's
    ("Mia was born on 1990-05-02", "1990-05-02", "done"),
    ("Mia booked a table for 2026-12-24", "2026-12-24", "planned"),
    ("Mia's parcel 2026-11-20-77 arrived", "2026-12-01", "done"),  # no date: a number with dashes
    ("Yesterday Mia cooked ramen", "2026-11-30", "done"),
])
def test_a_remembered_event_keeps_the_date_its_text_names(repo, text, event_time, status):
    """The event time of a reported event is the day it happened, not the day it was told (DESIGN: tau_e)."""
    written = [repo.get(i) for i in repo.remember(text, mention_time="2026-12-01T09:00:00").written]
    (record,) = [r for r in written if r.type == "episodic"]  # a birth date is also a durable (semantic) fact
    assert (record.event_time, record.status) == (event_time, status)


def test_sensitive_values_go_to_the_vault_only_with_a_key(tmp_path):
    from memrepo.settings import Settings
    from memrepo.vault import generate_key

    MemoryRepo.init(tmp_path / "m").close()
    locked = MemoryRepo.open(tmp_path / "m", settings=Settings(vault_key=generate_key()))
    result = locked.remember("My bank PIN is 4321.", mention_time="2023-07-04")
    records = {locked.get(i).type: locked.get(i) for i in result.written}
    assert records["vault"].text == "My bank PIN is 4321."
    assert "4321" not in records["episodic"].text and "[kept in the vault]" in records["episodic"].text
    vault_file = (tmp_path / "m" / records["vault"].path).read_bytes()
    assert b"4321" not in vault_file
    # The plaintext is in no Git object at all: not in the source, its title, or any record.
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=tmp_path / "m",
                             capture_output=True, check=True).stdout
    # The number, not four digits inside a longer word: a hexadecimal object or record id may hold them by chance.
    assert not re.search(rb"(?<![0-9A-Za-z])4321(?![0-9A-Za-z])", objects)
    (source,) = locked.sources()
    assert f"[kept in the vault: {records['vault'].id}]" in source.part("n1").text


def test_after_ingest_steps_get_new_ids_and_their_failures_never_undo_records(repo):
    seen: list[list[str]] = []

    def index(ctx, ids):
        assert ctx.store is repo.store
        seen.append(ids)

    def broken(ctx, ids):
        raise RuntimeError("graph store unavailable")

    repo.ctx = repo.ctx.with_capabilities(after_commit={"index": index, "broken": broken})
    result = repo.ingest([CONVERSATION])
    assert sum(len(ids) for ids in seen) == len(result.record_ids) > 0  # every new id, once
    assert len(result.warnings) == 5 and "graph store unavailable" in result.warnings[0]
    assert sorted(r.id for r in repo.records()) == sorted(result.record_ids)  # none undone


def test_cli_ingest_json_summary_and_stats(repo, monkeypatch):
    monkeypatch.chdir(repo.root)
    runner = CliRunner()
    out = runner.invoke(cli, ["ingest", str(CONVERSATION), "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output[out.output.index("{"):])
    assert summary["sources_written"] == 5 and summary["records"]["episodic"] == 46 and summary["records"]["semantic"] > 0
    assert summary["model"]["backend"] == "offline" and summary["parts"] == 46
    text = runner.invoke(cli, ["ingest", str(CONVERSATION)])
    assert text.exit_code == 0 and "Ingested 0 source(s) (5 already present)" in text.output
    stats = json.loads(runner.invoke(cli, ["stats", "--json"]).output)
    assert stats["roles"]["router"]["offline_calls"] == 5 and stats["total"]["input_tokens"] == 0
    bad = runner.invoke(cli, ["ingest", os.devnull])
    assert bad.exit_code == 1 and "not a file" in bad.output and "Traceback" not in bad.output


def test_document_date_comes_from_front_matter_so_ids_do_not_depend_on_file_times(repo, tmp_path):
    doc = tmp_path / "plan.md"
    doc.write_text("---\ndate: 2024-01-05\n---\n# Plan\n\nVisit Nara on March 3.\n")
    os.utime(doc, (0, 0))
    first = [i for i in repo.ingest([doc]).record_ids if i.startswith("re-")]  # the document's resource record
    os.utime(doc, (10**9, 10**9))
    assert repo.ingest([doc]).commits == []
    assert first and first[0].startswith("re-2024-01-05-")


def test_two_documents_with_the_same_file_name_both_stay(repo, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = tmp_path / "a" / "notes.md", tmp_path / "b" / "notes.md"
    a.write_text("# Kyoto\n\nThe moss garden at Saiho-ji needs a reservation by postcard.\n")
    b.write_text("# Porto\n\nThe Livraria Lello queue is shortest at opening time.\n")
    (first,) = [i for i in repo.ingest([a], mention_time="2023-07-01").record_ids if i.startswith("re-")]
    (second,) = [i for i in repo.ingest([b], mention_time="2023-07-01").record_ids if i.startswith("re-")]
    assert first != second
    paths = {r.id: r.path for r in repo.records("resource")}
    assert set(paths) == {first, second} and paths[first] == "resource/notes.md" and paths[second] != paths[first]
    runner = CliRunner()
    for record_id, word in ((first, "Saiho-ji"), (second, "Livraria")):
        shown = runner.invoke(cli, ["--repo", str(repo.root), "show", record_id])
        assert shown.exit_code == 0 and word in shown.output
        assert record_id in [h.id for h in repo.search(word, type="resource")]
    # A new version of a/notes.md still replaces its own document, and only that one.
    a.write_text("# Kyoto\n\nRevised: Saiho-ji is closed in August.\n")
    repo.ingest([a], mention_time="2023-07-02")
    texts = {r.path: r.text for r in repo.records("resource")}
    assert len(texts) == 2 and "Revised" in texts["resource/notes.md"] and "Livraria" in texts[paths[second]]


def test_a_chat_export_with_bracketed_date_lines_is_one_session_per_date(repo, tmp_path):
    """"[3 March 2026 6:30 pm]" lines, as chat exports write them, start sessions dated by them; a bracketed aside
    in a turn stays text, and a Markdown document whose headings hold dates stays a document."""
    chat = tmp_path / "chat.txt"
    chat.write_text("[3 March 2026 6:30 pm]\nAna: The new flat is on Alder Street in Leeds.\nBen: [shares a photo] Nice!\n"
                    "[2026-03-10 09:00]\nAna: The movers came on Saturday.\n", encoding="utf-8")
    parsed = parsers.parse_file(chat)
    assert parsed.format != "document"
    assert [(s.mention_time, [p.anchor for p in s.parts]) for s in parsed.sources] == [
        ("2026-03-03T18:30:00", ["D1:1", "D1:2"]), ("2026-03-10T09:00:00", ["D2:1"])]
    assert parsed.sources[0].parts[1].text == "[shares a photo] Nice!"
    notes = tmp_path / "notes.md"
    notes.write_text("# Planning\n\n## 2026-02-02 Weekly planning\n\nAttendees: Ana, Ben\n\nDecision: ship it.\n",
                     encoding="utf-8")
    assert parsers.parse_file(notes).sources[0].kind == "document"
    repo.ingest([chat])
    assert repo.ask("Which street is the new flat on?").answer != "Not in memory."
