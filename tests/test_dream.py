"""Semantic AutoDream on real repositories: the paper's pair (merged by a model judge, kept apart by the
offline one), the pair the offline judge merges, eligibility, the negative cache, caps, the frontier across
clones, and the decision file the graph index resolves."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from dream_fixtures import (BARE, MOUNT, STAINLESS, add_semantic, add_stated, bottle_cosine, bottle_repo, no,
                            volcano_repo, yes)
from memrepo.api import MemoryRepo
from memrepo.dream.algebra import AnchorSummary, lossless, merge
from memrepo.dream.constants import CAP_FINAL, CAP_INTERMEDIATE, CAP_REPAIR, ELIGIBLE_TYPES, MIN_COSINE
from memrepo.dream.decisions import cache_key, parse_runs, run_turtle
from memrepo.dream.judge import judge_offline, validate
from memrepo.errors import MemrepoError
from memrepo.llm import get_backend
from openai_server import ScriptedOpenAI

NOW = "2026-05-02T10:00:00Z"


def git(cwd, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def server():
    with ScriptedOpenAI() as s:
        yield s


def test_constants_are_the_papers():
    assert (CAP_INTERMEDIATE, CAP_FINAL, CAP_REPAIR) == (80, 120, 60)
    assert MIN_COSINE == 0.86
    assert set(ELIGIBLE_TYPES) == {"person", "organization", "location", "object", "concept"}


def test_paper_pair_is_proposed_and_merged_when_the_judge_says_yes(tmp_path, server):
    repo = bottle_repo(tmp_path / "m")
    main_before = repo.store.head()
    server.responder = lambda request: yes("stainless steel bottle", "the same bottle")
    result = repo.dream(backend=get_backend(server.settings()), now=NOW)

    assert result.counts["considered"] == 1 and result.counts["verified"] == 1 and result.counts["merged"] == 1
    assert repo.store.head() == main_before  # main does not move
    assert result.branch.startswith("dream/2026-05-02-")
    prompt = json.dumps(server.requests[0]["messages"])
    assert "steel bottle" in prompt and "stainless steel bottle" in prompt and "object" in prompt
    # the commit message is the review: names, type, cosine, records behind each side, the reason
    message = repo.store.repo[result.commit.encode()].message.decode()
    assert f'"steel bottle" -> "stainless steel bottle" (object, cosine {bottle_cosine(repo)})' in message
    assert 'records: 1 behind "steel bottle", 1 behind "stainless steel bottle"' in message
    assert "the same bottle" in message and "considered 1, verified 1, merged 1" in message

    repo.review_approve(result.branch)
    anchor = repo.graph_anchor("steel bottle").anchor
    assert anchor.name == "stainless steel bottle" and anchor.aliases == ["steel bottle"]
    assert len(anchor.semantic) == 2


def _side(name: str, *evidence: str) -> dict:
    return {"name": name, "records": 1, "evidence": [f"se-2023-05-02-0000000{i}: {e}" for i, e in enumerate(evidence)]}


def test_offline_judge_never_merges_names_whose_modifiers_differ():
    pair = {"type": "object", "cosine": 0.87, "a": _side("steel bottle"), "b": _side("stainless steel bottle")}
    assert judge_offline(pair) == {"same": False, "representative": None,
                                   "reason": "'stainless steel bottle' adds the modifier 'stainless' to 'steel bottle': "
                                             "a modifier tells two things apart"}
    texas = judge_offline({"type": "location", "a": _side("Paris, Texas"), "b": _side("Paris")})
    assert texas["same"] is False and "'texas'" in texas["reason"]
    for a, b in [("10 gallons tank", "20 gallons tank"), ("Tokyo", "Tokyo Station"), ("bottle", "steel bottle"),
                 ("pottery class", "pottery workshop"), ("red steel bottle", "red insulated steel bottle")]:
        reply = judge_offline({"type": "object", "a": _side(a), "b": _side(b)})
        assert reply["same"] is False, (a, b)


def test_offline_judge_merges_a_name_written_differently_and_a_place_with_its_title():
    cafe = judge_offline({"type": "location", "a": _side("Café Lumière"), "b": _side("Cafe Lumiere")})
    assert cafe["same"] is True and cafe["representative"] in ("Café Lumière", "Cafe Lumiere")
    volcano = {"type": "location", "a": _side("Vesuvius", BARE), "b": _side("Mount Vesuvius", MOUNT)}
    assert judge_offline(volcano) == {
        "same": True, "representative": "Mount Vesuvius",
        "reason": "the same place with and without its title 'mount' (the records of 'Vesuvius' call it one)"}
    # the title is support only when the records behind the bare name say what it says: Kenya is a country
    kenya = judge_offline({"type": "location", "a": _side("Kenya", "Mia went on a safari in Kenya."),
                           "b": _side("Mount Kenya", "Mia saw Mount Kenya from the plane.")})
    assert kenya["same"] is False and "'mount'" in kenya["reason"]
    # and only between two locations: a title word before a person's or a thing's name is a modifier
    assert judge_offline({**volcano, "type": "concept"})["same"] is False
    assert judge_offline({"type": "location", "a": _side("Geneva", "Mia took a tram across Geneva."),
                          "b": _side("Lake Geneva")})["same"] is False


def test_offline_dream_proposes_the_volcano_pair(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    result = repo.dream(now=NOW)
    [merge_] = result.run.merges
    assert (merge_.alias_name, merge_.representative_name, merge_.type) == ("Vesuvius", "Mount Vesuvius", "location")
    assert merge_.cosine >= MIN_COSINE


def test_offline_dream_keeps_the_paper_pair_apart_and_says_why(tmp_path):
    repo = bottle_repo(tmp_path / "m")
    result = repo.dream(now=NOW)
    assert result.counts["considered"] == 1 and result.counts["merged"] == 0 and result.counts["rejected"] == 1
    [rejection] = result.run.decisions
    assert {rejection.first_name, rejection.second_name} == {"steel bottle", "stainless steel bottle"}
    assert "the modifier 'stainless'" in rejection.rationale
    message = repo.store.repo[result.commit.encode()].message.decode()
    assert "0 merges proposed, 1 rejected" in message and "the modifier 'stainless'" in message
    assert repo.graph_anchor("steel bottle").anchor.name == "steel bottle"


def test_invented_representative_is_rejected_and_not_cached(tmp_path, server):
    repo = bottle_repo(tmp_path / "m")
    server.responder = lambda request: yes("insulated flask")
    result = repo.dream(backend=get_backend(server.settings()), now=NOW)
    assert result.counts["merged"] == 0 and result.counts["invalid"] == 1 and result.counts["rejected"] == 0
    assert not result.run.decisions
    assert validate({"same": True, "representative": "STEEL BOTTLE", "reason": ""}, "steel bottle", "x").valid is False


def test_event_pairs_are_never_considered(tmp_path, server):
    repo = MemoryRepo.init(tmp_path / "m")
    add_stated(repo, "Mia went to a jazz concert.", "2023-05-02T10:00:00", [("Mia", "person"), ("jazz concert", "event")])
    add_stated(repo, "Mia loved the jazz concert night.", "2023-05-03T10:00:00",
               [("Mia", "person"), ("jazz concert night", "event")])
    server.responder = lambda request: yes("jazz concert night")
    result = repo.dream(backend=get_backend(server.settings()), now=NOW)
    assert result.counts["considered"] == 0 and server.requests == []
    # the same names as objects are a pair: the test above can fail
    add_stated(repo, "Mia keeps a jazz concert poster.", "2023-05-04T10:00:00",
               [("Mia", "person"), ("jazz concert", "object")])
    add_stated(repo, "Mia framed the jazz concert night poster.", "2023-05-05T10:00:00",
               [("Mia", "person"), ("jazz concert night", "object")])
    other = MemoryRepo.init(tmp_path / "objects")
    add_stated(other, "a", "2023-05-04T10:00:00", [("Mia", "person"), ("jazz concert", "object")])
    add_stated(other, "b", "2023-05-05T10:00:00", [("Mia", "person"), ("jazz concert night", "object")])
    assert other.dream(backend=get_backend(server.settings()), now=NOW).counts["considered"] == 1


def test_episodic_only_anchors_are_not_paired(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    add_stated(repo, "Mia filled her steel bottle.", "2023-05-02T10:00:00",
               [("Mia", "person"), ("steel bottle", "object")], kind="episodic")
    add_stated(repo, STAINLESS, "2023-05-03T10:00:00", [("Mia", "person"), ("stainless steel bottle", "object")])
    result = repo.dream(now=NOW)
    assert result.counts["considered"] == 0


def test_a_rejected_pair_is_not_asked_again(tmp_path, server):
    repo = bottle_repo(tmp_path / "m")
    server.responder = lambda request: no("one is Mia's, the other her brother's")
    backend = get_backend(server.settings())
    first = repo.dream(backend=backend, now=NOW, apply=True)
    assert first.counts["rejected"] == 1 and first.applied
    assert len(server.requests) == 1
    # a later frontier brings both anchors back: the pair is found, and answered from the cache
    add_semantic(repo, "Mia washed the steel bottle and the stainless steel bottle.", "2023-06-01T10:00:00")
    repo.index_graph()
    second = repo.dream(backend=backend, now="2026-05-03T10:00:00Z")
    assert second.counts["considered"] == 1 and second.counts["cached"] == 1 and second.counts["verified"] == 0
    assert len(server.requests) == 1
    assert cache_key("Steel Bottle", "stainless steel bottle", "object") == cache_key(
        "stainless steel bottle", "steel bottle", "object")
    assert cache_key("steel bottle", "stainless steel bottle", "concept") != cache_key(
        "steel bottle", "stainless steel bottle", "object")


def test_a_pair_on_an_open_review_branch_is_not_asked_again(tmp_path, server):
    repo = bottle_repo(tmp_path / "m")
    server.responder = lambda request: yes("stainless steel bottle")
    backend = get_backend(server.settings())
    repo.dream(backend=backend, now=NOW)
    add_semantic(repo, "Mia's steel bottle is dented.", "2023-06-01T10:00:00")
    repo.index_graph()
    again = repo.dream(backend=backend, now="2026-05-03T10:00:00Z")
    assert again.counts["pending"] == 1 and len(server.requests) == 1
    assert again.frontier_records == 1  # only the new record: the open branch's frontier counts


def _many_pairs(repo: MemoryRepo, words: list[str]) -> None:
    for i, word in enumerate(words):
        add_stated(repo, f"The {word} bottles.", f"2023-05-{1 + i % 28:02d}T10:{i % 60:02d}:00",
                   [(f"{word} steel bottle", "object"), (f"{word} stainless steel bottle", "object"),
                    (f"{word} metal bottle", "object")])


WORDS = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white", "pink", "brown", "grey", "silver",
         "golden", "teal", "navy", "olive", "maroon", "beige", "ivory", "coral", "crimson", "violet", "amber", "cyan",
         "magenta", "lime", "indigo", "turquoise", "lavender", "peach", "mint", "plum", "ruby", "jade", "khaki",
         "scarlet", "azure", "bronze", "copper", "charcoal", "cream", "emerald", "sapphire", "tan", "rose"]


def test_caps_hold_and_unreached_pairs_are_not_rejected(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    _many_pairs(repo, WORDS)
    result = repo.dream(now=NOW)
    c = result.counts
    assert c["verified"] == CAP_INTERMEDIATE and c["skipped_by_cap"] > 0
    assert c["merged"] + c["rejected"] + c["invalid"] == CAP_INTERMEDIATE
    assert len(result.run.decisions) == CAP_INTERMEDIATE  # skipped pairs are not recorded as rejected
    assert "caps" in result.to_dict() and result.caps == {"intermediate": 80}
    message = repo.store.repo[result.commit.encode()].message.decode()
    assert f"skipped by cap {c['skipped_by_cap']}" in message and "Caps: intermediate 80" in message
    repo.review_approve(result.branch)
    # the final round picks up sources whose pairs the cap cut off, under its own cap
    final = repo.dream(final=True, now="2026-05-03T10:00:00Z", caps={"final": 5, "repair": 3})
    assert final.counts["verified"] <= 5 + 3 and final.caps == {"final": 5, "repair": 3}
    assert final.counts["considered"] > 0


def test_lossless_merge_and_revert(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    add_stated(repo, "Mia flew past Mount Everest.", "2023-05-04T10:00:00",
               [("Mia", "person"), ("Mount Everest", "location")])
    add_stated(repo, "Mia dreams of the summit of Everest.", "2023-05-05T10:00:00",
               [("Mia", "person"), ("Everest", "location")])
    before_export = repo.graph_export(format="nt")
    before = {name: set(repo.graph_anchor(name).anchor.rows) for name in
              ("Vesuvius", "Mount Vesuvius", "Everest", "Mount Everest")}
    main_before = repo.store.head().decode()
    result = repo.dream(now=NOW)
    assert result.counts["merged"] == 2
    merge_commit = repo.review_approve(result.branch)
    # merges only add decision files
    changed = {c.path for c in repo.changes(merge_commit)}
    assert changed == {result.run.path} and all(p.startswith("graph/decisions/") for p in changed)
    diff = git(repo.root, "diff", "--name-status", main_before, merge_commit)
    assert diff.strip() == f"A\t{result.run.path}"
    # every record reachable from either anchor is reachable from the representative
    for d in result.run.merges:
        after = set(repo.graph_anchor(d.representative_name).anchor.rows)
        assert before[d.alias_name] | before[d.representative_name] <= after
        assert repo.graph_anchor(d.alias_name).anchor.iri == d.representative
    # git revert -m 1 of the merge restores the earlier graph exactly
    git(repo.root, "-c", "user.name=t", "-c", "user.email=t@t", "revert", "-m", "1", "--no-edit", merge_commit)
    assert repo.graph_export(format="nt") == before_export
    assert set(repo.graph_anchor("Vesuvius").anchor.rows) == before["Vesuvius"]


def test_plain_git_merge_has_the_same_effect_as_approve(tmp_path):
    repo = volcano_repo(tmp_path / "a")
    result = repo.dream(now=NOW)
    repo.close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    git(tmp_path / "b", "-c", "user.name=t", "-c", "user.email=t@t", "merge", "--no-ff", "--no-edit", result.branch)
    a, b = MemoryRepo.open(tmp_path / "a"), MemoryRepo.open(tmp_path / "b")
    a.review_approve(result.branch)
    assert git(tmp_path / "a", "rev-parse", "HEAD^{tree}") == git(tmp_path / "b", "rev-parse", "HEAD^{tree}")
    assert a.graph_export(format="nt") == b.graph_export(format="nt")
    assert b.review_list() == []  # a branch merged by git is no longer open
    assert git(tmp_path / "a", "status", "--porcelain") == ""


def test_frontier_is_tracked_in_the_repository_and_a_clone_continues(tmp_path):
    repo = volcano_repo(tmp_path / "a")
    first = repo.dream(now=NOW, apply=True)
    assert first.frontier_records == 2
    git(tmp_path, "clone", "-q", str(tmp_path / "a"), "b")
    clone = MemoryRepo.open(tmp_path / "b")
    nothing = clone.dream(now="2026-05-03T10:00:00Z")
    assert nothing.branch is None and nothing.frontier_records == 0 and nothing.counts["considered"] == 0
    add_semantic(clone, "Mia lost her steel bottle on the train.", "2023-06-01T10:00:00")
    clone.index_graph()
    later = clone.dream(now="2026-05-04T10:00:00Z")
    assert later.frontier_records == 1
    assert later.sources == 3  # Mia, the steel bottle, the train: the new record only; cost follows the frontier


def test_decision_file_is_canonical_and_resolved_by_the_graph_index(tmp_path):
    repo = volcano_repo(tmp_path / "a")
    result = repo.dream(now=NOW)
    data = repo.store.snapshot(result.branch).read(result.run.path)
    [run] = parse_runs(data, result.run.path)
    assert run_turtle(run) == data  # read back and written again: the same bytes
    assert run.counts == result.counts and run.sources == result.run.sources
    assert b"owl:sameAs" in data and b"prov:Activity" in data and b"mr:cosine" in data
    repo.close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    shutil.rmtree(tmp_path / "b" / ".git" / "refs" / "heads" / "dream")
    again = MemoryRepo.open(tmp_path / "b").dream(now=NOW)
    assert again.branch == result.branch and again.commit is not None
    assert MemoryRepo.open(tmp_path / "b").store.snapshot(again.branch).read(again.run.path) == data


summaries = hs.builds(
    AnchorSummary,
    iris=hs.frozensets(hs.sampled_from("abcdef"), max_size=3),
    rows=hs.frozensets(hs.sampled_from(["ep-1", "ep-2", "se-1", "se-2", "se-3"]), max_size=4),
    names=hs.frozensets(hs.sampled_from(["x", "y", "z"]), max_size=2),
    mentions=hs.integers(0, 50),
    score=hs.none() | hs.floats(0, 1),
)


@given(summaries, summaries, summaries)
def test_merge_algebra_is_commutative_associative_and_lossless(a, b, c):
    assert merge(a, b) == merge(b, a)
    assert merge(merge(a, b), c) == merge(a, merge(b, c))
    assert lossless([a, b], merge(a, b))
    assert merge(a, b).mentions == a.mentions + b.mentions


def test_approve_after_main_moved_is_a_three_way_merge(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    result = repo.dream(now=NOW)
    add_semantic(repo, "Mia climbed Vesuvius again in June.", "2023-06-01T10:00:00")  # main moves on
    repo.index_graph()
    moved = repo.store.head()
    commit = repo.review_approve(result.branch)
    merged = repo.store.repo[commit.encode()]
    assert merged.parents == [moved, result.commit.encode()]
    assert repo.store.snapshot().exists(result.run.path)
    assert "1 anchor merge, 0 rejections" in merged.message.decode()
    assert git(repo.root, "status", "--porcelain") == ""
    rows = repo.graph_anchor("Vesuvius").anchor.semantic
    assert len(rows) == 3  # the new record's mention is reachable from the representative too


def test_final_round_repairs_around_touched_representatives(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    add_stated(repo, "One café, written three ways.", "2023-05-02T10:00:00",
               [("Café Lumière", "location"), ("Cafe Lumiere", "location"), ("Cafe Lumière", "location")])
    result = repo.dream(final=True, now=NOW, caps={"final": 1})
    c = result.counts
    assert c["skipped_by_cap"] >= 1  # the final round's cap cut pairs off...
    assert c["verified"] >= 2 and c["merged"] >= 2  # ...and the repair round took up those around the merge
    repo.review_approve(result.branch)
    names = {repo.graph_anchor(n).anchor.iri for n in ("Café Lumière", "Cafe Lumiere", "Cafe Lumière")}
    assert len(names) == 1


def test_a_failing_judge_writes_nothing_and_keeps_the_frontier(tmp_path, server):
    repo = bottle_repo(tmp_path / "m")
    server.responder = lambda request: "this is not JSON"
    with pytest.raises(MemrepoError, match="the judge failed on .*nothing was written"):
        repo.dream(backend=get_backend(server.settings(max_retries=0)), now=NOW)
    assert repo.review_list() == []
    server.responder = lambda request: yes("stainless steel bottle")
    again = repo.dream(backend=get_backend(server.settings()), now=NOW)
    assert again.frontier_records == 2 and again.counts["merged"] == 1


def test_two_clones_that_both_dreamed_merge_without_conflict(tmp_path):
    repo = volcano_repo(tmp_path / "a")
    repo.close()
    git(tmp_path, "clone", "-q", str(tmp_path / "a"), "b")
    a, b = MemoryRepo.open(tmp_path / "a"), MemoryRepo.open(tmp_path / "b")
    ra = a.dream(now=NOW, apply=True)
    rb = b.dream(now="2026-05-02T10:05:00Z", apply=True)
    assert ra.run.path != rb.run.path
    git(tmp_path / "b", "-c", "user.name=t", "-c", "user.email=t@t", "pull", "-q", "--no-rebase", "--no-edit",
        str(tmp_path / "a"), "main")
    b = MemoryRepo.open(tmp_path / "b")
    assert b.graph_anchor("Vesuvius").anchor.name == "Mount Vesuvius"
    assert b.dream(now="2026-05-03T10:00:00Z").counts["considered"] == 0


def test_doctor_flags_a_same_as_without_its_decision(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    result = repo.dream(now=NOW, apply=True)
    assert [p for p in repo.doctor() if "decisions" in p.path] == []
    [d] = result.run.merges
    bare = f"<{d.alias}> <http://www.w3.org/2002/07/owl#sameAs> <{d.representative}> .\n".encode()
    repo.store.commit({"graph/decisions/2026/05/hand-made.ttl": bare}, "a merge by hand")
    problems = [str(p) for p in repo.doctor() if p.path == "graph/decisions/2026/05/hand-made.ttl"]
    assert len(problems) == 1 and "has no mr:MergeDecision" in problems[0]


def test_anchor_labels_agree_with_rdflib(tmp_path):
    from memrepo.graph.names import anchor_labels
    from memrepo.graph.rdf import parse_turtle, rows

    repo = bottle_repo(tmp_path / "m")
    add_stated(repo, 'Mia\'s "Blue" bottle.', "2023-05-04T10:00:00", [("Mia", "person"), ('the "Blue" bottle', "object")])
    snap = repo.store.snapshot()
    for path, blob in snap.walk("graph/frames"):
        data = snap.read_blob(blob)
        slow = sorted((a, v) for a, p, v, _ in rows(parse_turtle(data, path)).anchor_facts if p == "label")
        assert sorted(anchor_labels(data, path)) == slow and slow
    by_hand = (b"@prefix mr: <urn:memrepo:ns#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
               b"<urn:memrepo:anchor:2> rdfs:label \"B\" ; a mr:Anchor .\n")
    assert anchor_labels(by_hand, "x.ttl") == [("urn:memrepo:anchor:2", "B")]


def test_a_run_with_nothing_to_review_is_recorded_on_the_current_branch(tmp_path):
    """No merge and no rejection: no empty review branch; the run (its frontier) is committed where HEAD is."""

    repo = MemoryRepo.init(tmp_path / "m")
    add_semantic(repo, "Mia owns a red kayak.", "2023-05-02T10:00:00")
    add_semantic(repo, "Jonas plays the cello.", "2023-05-03T10:00:00")
    repo.index_graph()
    head = repo.store.head()
    result = repo.dream(now="2026-05-02T10:00:00Z")
    assert result.branch is None and result.run is not None and not result.run.decisions
    assert result.commit and repo.store.head().decode() == result.commit and repo.store.head() != head
    assert repo.store.snapshot().read(result.run.path) is not None
    assert repo.review_list() == []
    again = repo.dream(now="2026-05-03T10:00:00Z")
    assert again.commit is None and again.frontier_records == 0  # the frontier moved past both records
    repo.close()
