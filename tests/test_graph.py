"""The provenance hypergraph: extraction, identities, RDF files, the graph index, fail-soft indexing (M A.6)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from click.testing import CliRunner
from rdflib.compare import isomorphic

from conftest import EXAMPLES
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.graph.reader import open_reader
from memrepo.graph.extract import audit, extract_memory
from memrepo.graph.model import FRAME_PREFIX, graph_path
from memrepo.nlp.literals import DIGIT_PATTERNS, LITERAL_PATTERNS
from memrepo.nlp.rules import extract_offline
from memrepo.graph.query import index_view, union_graph
from memrepo.graph.rdf import memory_turtle, parse_turtle
from memrepo.llm.backend import OfflineBackend
from memrepo.settings import Settings


def episodic(repo: MemoryRepo, text: str, *, when: str = "2023-05-02T14:03:00+09:00", actor: str = "Mia",
             position: str = "1", **fields):
    return repo.new_record("episodic", text, mention_time=when, actor=actor, source="test", position=position,
                           **fields)


def frames_of(reply: dict, predicate: str) -> list[dict]:
    return [f for f in reply["frames"] if f["predicate"] == predicate]


def arms(frame: dict) -> dict[str, str]:
    return {a["role"]: a["entity"] for a in frame["arms"]}


def lits(frame: dict) -> dict[str, str]:
    return {x["key"]: x["value"] for x in frame["literals"]}


# --- the offline extractor ----------------------------------------------------------


def run(text: str, actor: str = "Mia", when: str = "2023-05-02", participants=("Mia", "Jonas")) -> dict:
    return extract_offline({"text": text, "actor": actor, "mention_time": when, "participants": list(participants)})


def test_subject_verb_object_with_prepositional_roles_and_speaker_resolution():
    reply = run("But I bought a Suica card at Tokyo Station this morning.")
    (buy,) = frames_of(reply, "buy")
    assert arms(buy) == {"buyer": "Mia", "item": "Suica card", "location": "Tokyo Station"}
    assert buy["event_time"] == "2023-05-02" and buy["status"] == "done"
    types = {e["name"]: e["type"] for e in reply["entities"]}
    assert types["Tokyo Station"] == "location" and types["Mia"] == "person"


def test_values_stay_literals():
    reply = run("I bought a down jacket for 12,800 yen at a shop in Shinjuku.")
    (buy,) = frames_of(reply, "buy")
    assert lits(buy)["price"] == "12,800 yen"
    assert "12,800 yen" not in {e["name"] for e in reply["entities"]}
    reply = run("I made 2 bowls and a very crooked cup.")
    (make,) = frames_of(reply, "make")
    assert lits(make)["count"] == "2" and {a["entity"] for a in make["arms"]} >= {"Mia", "bowls", "crooked cup"}
    reply = run("The flight from Lisbon took 17 hours with the stop in Frankfurt.")
    assert any(lits(f).get("duration") == "17 hours" for f in reply["frames"])


def test_a_sentence_without_a_digit_skips_only_the_patterns_that_need_one():
    digitless = ["We met in early March and again last Tuesday.", "She is three years old.",
                 "I run twice a week, a few days ago even two times a day.", "It took a couple of hours.",
                 "See you tomorrow at noon!", "I paid a hundred dollars for seven plates.", "Back in May of this year.",
                 "Half of us, fifty percent, wrote to help@example.org after reading www.example.org."]
    for index, (key, pattern) in enumerate(LITERAL_PATTERNS):
        matched = [s for s in digitless if pattern.search(s)]
        if index in DIGIT_PATTERNS:
            assert not matched, f"pattern {index} ({key}) matches text without a digit: {matched}"
    skipped = {index for index, (_, p) in enumerate(LITERAL_PATTERNS) if not any(p.search(s) for s in digitless)}
    assert DIGIT_PATTERNS <= skipped and len(skipped - DIGIT_PATTERNS) <= 1  # the samples reach the others
    (meet,) = frames_of(run("I met Jonas last Tuesday."), "meet")  # a date without a digit is still cut out
    assert lits(meet)["date"] == "2023-04-25"


def test_relative_dates_resolve_against_the_mention_time_and_plans_are_planned():
    (arrive,) = frames_of(run("I finally landed in Tokyo yesterday."), "arrive")
    assert arrive["event_time"] == "2023-05-01" and arms(arrive)["location"] == "Tokyo"
    reply = run("I am planning to climb Mount Fuji on August 12 with two friends from the pottery course, Yuki and Tom.",
                when="2023-06-14")
    (climb,) = frames_of(reply, "climb")
    assert climb["status"] == "planned" and climb["event_time"] == "2023-08-12"
    roles = [(a["role"], a["entity"]) for a in climb["arms"]]
    assert ("companion", "Yuki") in roles and ("companion", "Tom") in roles and ("place", "Mount Fuji") in roles


def test_appositives_and_named_things_become_their_own_frames():
    reply = run("My sister Lena took me there in 2019.", actor="Jonas")
    (rel,) = frames_of(reply, "relative")
    assert arms(rel) == {"person": "Jonas", "relative": "Lena"} and lits(rel) == {"relation": "sister"}
    reply = run("It is 4 sessions, taught by a potter called Hiroshi Tanabe.")
    assert any(arms(f).get("instance") == "Hiroshi Tanabe" for f in frames_of(reply, "is_a"))


def test_questions_are_not_assertions_and_you_is_the_other_participant():
    # A question asserts no purchase: its one frame says who asked about what (the person asked is no arm).
    (asked,) = run("Did you buy the tickets for Kyoto?")["frames"]
    assert asked["predicate"] == "ask" and {(a["role"], a["entity"]) for a in asked["arms"]} == {
        ("agent", "Mia"), ("topic", "tickets"), ("topic", "Kyoto")}
    # About nothing it names: the question is a dialogue act, the speaker asks the person spoken to.
    (bare,) = run("How are you?")["frames"]
    assert bare["predicate"] == "ask" and arms(bare) == {"agent": "Mia", "recipient": "Jonas"}
    (visit,) = frames_of(run("You visited Kyoto last month.", actor="Jonas"), "visit")
    assert arms(visit)["visitor"] == "Mia"


def test_audit_lists_uncovered_numbers_and_quotes_but_a_date_alone_is_no_repair():
    missing, trigger = audit('She read "Becoming Nicole" twice and paid 25 dollars.', [])
    assert '"Becoming Nicole"' in missing and "25" in missing and trigger
    for dated in ("It happened in 2019.", "I will climb Fuji on August 12."):
        missing, trigger = audit(dated, [])
        assert len(missing) == 1 and not trigger  # listed, but a missing date alone is no repair
    missing, trigger = audit("I paid 25 dollars on August 12.", [])
    assert missing == ["25", "August 12"] and trigger
    _, trigger = audit("[shares a photo] A red kite above the beach at Porto", [], visual=True)
    assert trigger


# --- identities (M eq. 6-8) and the A.6 invariants ----------------------------------------


def test_undated_occurrences_worded_alike_in_different_records_get_different_frames(repo):
    a = episodic(repo, "I ran with Pixel in the park.", position="1")
    b = episodic(repo, "I ran with Pixel in the park.", position="2", when="2023-05-09T08:00:00+09:00")
    repo.add([a, b])
    repo.index_graph()
    frames = repo.graph_frames(anchor="Pixel", predicate="run")
    assert len(frames) == 2
    assert {tuple(f.citations) for f in frames} == {(a.id,), (b.id,)}


def test_the_same_dated_event_mentioned_twice_shares_one_frame(repo):
    a = episodic(repo, "I bought a Suica card at Tokyo Station.", event_time="2023-05-02", position="1")
    b = episodic(repo, "I bought a Suica card at Tokyo Station.", event_time="2023-05-02", position="2",
                 when="2023-05-03T10:00:00+09:00")
    repo.add([a, b])
    repo.index_graph()
    (frame,) = repo.graph_frames(predicate="buy")
    assert frame.citations == sorted([a.id, b.id])
    assert frame.event_times == ["2023-05-02"] and frame.event_time == "2023-05-02"
    # Both files carry the frame under the same IRI; the union is the citation union.
    snap = repo.store.snapshot()
    iris = [set(re.findall(rf"<({FRAME_PREFIX}[0-9a-f]+)>", snap.read(graph_path(r.id)).decode())) for r in (a, b)]
    assert frame.iri in iris[0] & iris[1]


def test_a_durable_claim_has_one_frame_across_semantic_records_and_status_does_not_change_identity(repo):
    s1 = repo.new_record("semantic", "Mia works at Corvo Design.", mention_time="2023-05-23", source="t", position="1")
    s2 = repo.new_record("semantic", "Mia works at Corvo Design.", mention_time="2023-06-23", source="t", position="2")
    e1 = episodic(repo, "I will climb Mount Fuji on August 12.", position="3", status="planned")
    e2 = episodic(repo, "I climbed Mount Fuji on August 12.", position="4", when="2023-08-13T09:00:00+09:00")
    repo.add([s1, s2, e1, e2])
    repo.index_graph()
    (work,) = repo.graph_frames(predicate="work")
    assert work.citations == sorted([s1.id, s2.id]) and work.kind == "semantic"
    (climb,) = repo.graph_frames(predicate="climb")
    assert climb.citations == sorted([e1.id, e2.id]) and climb.statuses == ["done", "planned"]
    assert climb.status == "done"  # planned, then done: the frame happened (memrepo.graph.reader.frame_status)


def test_every_frame_exposes_the_records_it_cites(repo):
    repo.ingest([EXAMPLES / "conversation.txt"])
    frames = repo.graph_frames(limit=None)
    assert len(frames) > 40
    ids = {r.id for r in repo.records()}
    for frame in frames:
        assert frame.citations and set(frame.citations) <= ids
        assert len({a.anchor for a in frame.arms}) >= 2


class FailingExtractor(OfflineBackend):
    """The offline backend, except that extracting a record whose text holds ``victim`` fails."""

    def __init__(self, victim: str):
        super().__init__(Settings())
        self.victim = victim

    def run(self, role, variables, schema, offline):
        if role == "extractor" and self.victim in str(variables):
            raise RuntimeError("injected extraction failure")
        return super().run(role, variables, schema, offline)


def test_a_failed_graph_step_destroys_no_record_and_the_next_index_completes(repo):
    records = [episodic(repo, f"I visited Kyoto with Tom on day {i}.", position=str(i)) for i in range(3)]
    victim = records[1].id
    healthy = repo.ctx
    repo.ctx = replace(healthy, backends=lambda: FailingExtractor("day 1."))
    repo.add(records)  # the write's own graph step fails for the victim
    result = repo.index_graph()
    assert list(result.failed) == [victim] and result.indexed == []
    snap = repo.store.snapshot()
    assert all(snap.exists(r.path) for r in records)
    assert not snap.exists(graph_path(victim))
    assert [(p.path, "no graph file" in p.message) for p in repo.doctor()] == [(records[1].path, True)]
    repo.ctx = healthy
    result = repo.index_graph()
    assert result.indexed == [victim] and not result.failed
    assert repo.store.snapshot().exists(graph_path(victim))
    assert repo.index_graph().pending == 0


def test_ingestion_survives_a_failing_graph_step_and_catch_up_indexes_it(repo):
    healthy = repo.ctx
    repo.ctx = replace(healthy, backends=lambda: FailingExtractor(""))  # every extraction fails
    result = repo.ingest([EXAMPLES / "conversation.txt"])
    records = repo.records()
    assert records and sorted(result.record_ids) == sorted(r.id for r in records)
    assert not list(repo.store.snapshot().walk("graph/frames"))
    assert {"no graph file" in p.message for p in repo.doctor()} == {True}  # reported, nothing else wrong
    repo.ctx = healthy
    again = repo.index_graph()
    indexed = [r for r in records if r.type in ("episodic", "semantic")]
    assert sorted(again.indexed) == sorted(r.id for r in indexed)


# --- RDF files --------------------------------------------------------------------------


def test_files_are_deterministic_and_have_no_blank_nodes(tmp_path):
    outputs = []
    for name in ("a", "b"):
        with MemoryRepo.init(tmp_path / name) as repo:
            repo.add([episodic(repo, "I bought a Suica card at Tokyo Station for 2,000 yen yesterday.")])
            repo.index_graph()
            snap = repo.store.snapshot()
            outputs.append({p: snap.read_blob(b) for p, b in snap.walk("graph")})
    assert outputs[0] == outputs[1] and outputs[0]
    data = next(iter(outputs[0].values()))
    assert b"_:" not in data and b"[" not in data
    assert b"prov:wasDerivedFrom <urn:memrepo:memory:ep-" in data


def test_turtle_round_trip_is_isomorphic(repo):
    record = episodic(repo, "I adopted a dog named Pixel from the shelter in Braga last week.", actor="Jonas")
    graph = extract_memory(record, namespace="default")
    data = memory_turtle(graph)
    assert memory_turtle(graph) == data
    parsed = parse_turtle(data, "x.ttl")
    again = parse_turtle(parsed.serialize(format="turtle").encode(), "y.ttl")
    assert isomorphic(parsed, again) and len(parsed) > 10


def test_union_graph_equals_the_graph_index_view_with_decisions_and_a_broken_file(repo):
    repo.ingest([EXAMPLES / "conversation.txt"])
    assert isomorphic(union_graph(repo), index_view(repo))
    pixel = repo.graph_anchor("Pixel").anchor
    dog = repo.graph_anchor("greyhound").anchor
    decision = (
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
        "@prefix mr: <urn:memrepo:ns#> .\n"
        f"<{dog.iri}> owl:sameAs <{pixel.iri}> .\n"
        '<urn:memrepo:dream:run-1> a prov:Activity ; mr:verdict "same" ; mr:cosine 0.91 .\n'
    )
    repo.store.commit({"graph/decisions/2023/07/run-1.ttl": decision.encode(),
                       "graph/frames/2023/07/ep-2023-07-03-deadbeef.ttl": b"@prefix mr: <urn:memrepo:ns#> .\n<urn:x:a> mr:b \"unterminated .\n"}, "test")
    assert isomorphic(union_graph(repo), index_view(repo))
    merged = repo.graph_anchor("greyhound").anchor
    assert merged.iri == pixel.iri and "greyhound" in merged.aliases and dog.iri in merged.members
    assert merged.frame_count >= pixel.frame_count
    problems = [p for p in repo.doctor() if p.path.endswith("deadbeef.ttl")]
    assert len(problems) == 1 and problems[0].message.startswith("line 2: not valid Turtle")


def test_lookups_by_anchor_predicate_and_citation(repo):
    repo.ingest([EXAMPLES / "conversation.txt"])
    view = repo.graph_anchor("mount fuji")
    assert view.anchor.name == "Mount Fuji" and view.anchor.type == "location"
    assert view.frames and all(any(a.anchor == view.anchor.iri for a in f.arms) for f in view.frames)
    buys = repo.graph_frames(anchor="Mia", predicate="buy")
    assert {a.name for f in buys for a in f.arms} >= {"Suica card", "Tokyo Station"}
    cited = buys[0].citations[0]
    assert buys[0].iri in {f.iri for f in repo.graph_frames(cited=cited)}
    with pytest.raises(Exception, match="no anchor named"):
        repo.graph_anchor("Atlantis")


def test_the_index_follows_commits_by_diff(repo):
    repo.add([episodic(repo, "I visited Kyoto with Tom.", position="1")])
    repo.index_graph()
    assert len(repo.graph_frames(anchor="Tom")) == 1
    repo.add([episodic(repo, "Tom moved to Osaka with Yuki.", position="2", actor="Jonas")])
    repo.index_graph()
    assert repo.reindex().actions["graph"] == "updated 1"  # one new graph file: one file's work
    assert repo.reindex().actions["graph"] == "current"
    assert len(repo.graph_frames(anchor="Tom")) == 2
    old = repo.graph_frames(anchor="Tom", rev="HEAD~2")
    assert len(old) == 1


def test_mentions_follow_the_graph_files_newest_last(repo):
    """The base lane reads an anchor's memories newest first from the mentions table: it holds exactly the
    mentionedIn statements of the graph files through adds and deletions, numbered in the order indexed."""
    import sqlite3

    from memrepo.index.base import Indexes

    def table(sql: str) -> list[tuple]:
        db = sqlite3.connect(Indexes(repo.store, repo.settings).folder("graph") / "graph.sqlite3")
        try:
            return sorted(db.execute(sql))
        finally:
            db.close()

    first = episodic(repo, "I visited Kyoto with Tom.", position="1")
    second = episodic(repo, "Tom moved to Osaka with Yuki.", position="2", actor="Jonas")
    third = episodic(repo, "Tom cooked ramen for Mia.", position="3")
    for record in (first, second, third):
        repo.add([record])
        repo.index_graph()
    repo.store.commit({second.path: None, graph_path(second.id): None}, "forget one memory")
    repo.reindex()
    mentions = table("SELECT anchor, memory, file FROM mentions")
    assert mentions == table("SELECT anchor, value, file FROM anchor_facts WHERE prop = 'mentionedIn'")
    assert not any(second.id in memory for _a, memory, _p in mentions)
    tom = repo.graph_anchor("Tom").anchor.iri
    newest_first = [m.rsplit(":", 1)[-1] for _s, m in
                    table(f"SELECT -seq, memory FROM mentions WHERE anchor = '{tom}'")]
    assert newest_first == [third.id, first.id]


def test_cli_index_and_graph_commands(repo, no_after_write):
    runner = CliRunner()
    base = ["--repo", str(repo.root)]
    repo.add([episodic(repo, "I bought a Suica card at Tokyo Station for 2,000 yen.", event_time="2023-05-02")])
    out = runner.invoke(cli, [*base, "index"])
    assert out.exit_code == 0, out.output
    assert "indexed 1 of 1 records" in out.output
    out = runner.invoke(cli, [*base, "index"])
    assert "up to date" in out.output
    out = runner.invoke(cli, [*base, "graph", "anchor", "suica cards", "--json"])
    data = json.loads(out.output)
    assert data["name"] == "Suica card" and data["frames"][0]["literals"]["price"] == ["2,000 yen"]
    out = runner.invoke(cli, [*base, "graph", "frames", "--predicate", "buy"])
    assert out.exit_code == 0 and "buyer=Mia" in out.output and "cites ep-" in out.output
    out = runner.invoke(cli, [*base, "graph", "export", "--format", "nt"])
    assert out.exit_code == 0 and "<http://www.w3.org/ns/prov#wasDerivedFrom>" in out.output
    out = runner.invoke(cli, [*base, "graph", "export", "--format", "jsonld"])
    assert out.exit_code == 0 and json.loads(out.output)
    out = runner.invoke(cli, [*base, "graph", "sparql",
                              "SELECT ?name WHERE { ?a a mr:Anchor ; rdfs:label ?name } ORDER BY ?name"])
    assert out.exit_code == 0 and out.output.splitlines()[0] == "name" and "Tokyo Station" in out.output
    out = runner.invoke(cli, [*base, "graph", "sparql", "SELECT WHERE {"])
    assert out.exit_code == 1 and "SPARQL" in out.output
    out = runner.invoke(cli, [*base, "graph", "anchor", "Atlantis"])
    assert out.exit_code == 1 and "no anchor named 'Atlantis'" in out.output


def test_lookups_by_anchor_predicate_and_citation_use_indexes_not_scans(repo):
    repo.add([episodic(repo, "I visited Kyoto with Tom.", position="1"),
              episodic(repo, "I bought a bike in Kyoto.", position="2")])
    repo.index_graph()
    with open_reader(repo.store, repo.settings) as reader:
        anchor = reader.find_anchors("Kyoto")[0]
        cited = reader.frame_ids()[0]
        memory = reader.frame(cited).citations[0]
        for filters in ({"anchor": anchor}, {"predicate": "buy"}, {"cited": memory},
                        {"anchor": anchor, "predicate": "visit,travel"}):
            sql, params = reader.frame_query(**filters, limit=240)
            plan = " | ".join(row[-1] for row in reader.db.execute("EXPLAIN QUERY PLAN " + sql, params))
            assert "SCAN" not in plan.replace("USING COVERING INDEX", ""), (filters, plan)
            assert reader.frame_ids(**filters, limit=240)


def test_question_verbs_map_to_the_predicates_frames_carry():
    from memrepo.nlp.morphology import predicate_for

    assert [predicate_for(w) for w in ("bought", "went", "painted", "adopted", "loves")] == \
        ["buy", "travel", "paint", "adopt", "like"]
    (frame,) = frames_of(run("I bought a bike."), predicate_for("bought"))
    assert arms(frame)["item"] == "bike"


def test_motion_to_a_place_is_travel_and_going_to_is_a_plan():
    (went,) = frames_of(run("I went to a RPG board game night yesterday.", actor="Priya"), "travel")
    assert [a["entity"] for a in went["arms"]] == ["Priya", "RPG board game night"] and went["status"] == "done"
    (going,) = frames_of(run("I am going to a jazz festival next month with some friends.", actor="Priya"), "travel")
    assert going["status"] == "planned" and going["event_time"] == "2023-06"


def test_quoted_titles_are_single_works():
    reply = run('I have been reading "The Fox\'s Lantern" to my nephews.', actor="Dan", participants=("Dan",))
    (read,) = frames_of(reply, "read")
    assert arms(read)["work"] == "The Fox's Lantern"
    assert {e["name"]: e["type"] for e in reply["entities"]}["The Fox's Lantern"] == "work"


def test_likes_and_topics():
    reply = run("I love knitting scarves.", actor="Priya")
    assert arms(frames_of(reply, "like")[0]) == {"experiencer": "Priya", "theme": "knitting"}
    assert arms(frames_of(reply, "knit")[0])["work"] == "scarves"
    (about,) = frames_of(run("The book is about a girl in Paris."), "about")
    assert arms(about)["topic"] == "girl"


def test_a_long_document_record_fits_the_extractor_schema(repo, no_after_write):
    sentences = [f"Tom{chr(65 + i % 26)} visited Kyoto{chr(65 + i % 26)} with Yuki, Ana, Lena, Mia, Jonas, Hiroshi, "
                 f"Okada, Mori, Pixel, Tanabe, Ueno, Kasama and Braga on day {i}." for i in range(80)]
    record = repo.new_record("semantic", " ".join(sentences), mention_time="2023-05-02", source="doc", position="c0")
    repo.add([record])
    result = repo.index_graph()
    assert result.indexed == [record.id] and not result.failed
    assert len(repo.graph_anchor("Yuki").anchor.semantic) == 1


def test_turns_that_assert_no_event_still_get_the_frame_they_say():
    # A shared photo shows what its caption depicts; a judgement evaluates the thing it names.
    (shared,) = run("[image: a photo of a pottery bowl on a table]")["frames"]
    assert shared["predicate"] == "give" and arms(shared) == {"giver": "Mia", "item": "pottery bowl"}
    (judged,) = run("Wow, Jonas, that painting's amazing!")["frames"]
    assert judged["predicate"] == "evaluate" and arms(judged) == {"agent": "Mia", "theme": "painting"}
    assert lits(judged) == {"quality": "amazing"}
    # Nothing named, but two dialogue acts to the person spoken to (tests/test_graph_acts.py).
    assert [(f["predicate"], arms(f)) for f in run("Thanks, Jonas! Talk soon.")["frames"]] == [
        ("thank", {"agent": "Mia", "recipient": "Jonas"}), ("farewell", {"agent": "Mia", "recipient": "Jonas"})]
