"""The second hop inside ``recall`` (issue 32): a question about a thing it only describes ("the object store that
Wilhelmina Crouse owns") gets the passage that names the thing and the one that gives what is asked of it, within
the plan's capacity, each hop row citing the row that named the thing; a question with no described thing, or one
whose description names nothing in memory, gets exactly the rows it got before."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from memrepo.api import MemoryRepo
from memrepo.read import hops, recall_hop

# sixteen systems, each with a place it runs: a recall of "where does ... run" finds all their rows alike, and
# only the thing's name tells the one asked about apart
_SYSTEMS = [("Quarry", "Object store for build artefacts", "Frankfurt rack 4"),
            ("Beacon", "Status dashboard", "Dublin rack 1"), ("Cinder", "Log shipper", "Paris rack 2"),
            ("Dapple", "Image resizer", "Madrid rack 3"), ("Ember", "Search indexer", "Oslo rack 5"),
            ("Fathom", "Metrics store", "Vienna rack 6"), ("Garnet", "Mail relay", "Lisbon rack 7"),
            ("Harrow", "Job scheduler", "Prague rack 8"), ("Inkwell", "Document renderer", "Warsaw rack 9"),
            ("Juniper", "Feature flag service", "Zurich rack 10"), ("Kelp", "Cache cluster", "Milan rack 11"),
            ("Lantern", "Tracing collector", "Riga rack 12"), ("Mortar", "Schema registry", "Sofia rack 13"),
            ("Nettle", "Webhook sender", "Tallinn rack 14"), ("Oriel", "Audit trail", "Vilnius rack 15"),
            ("Pumice", "Backup verifier", "Athens rack 16")]
_OWNERS = ["Wilhelmina Crouse is the storage engineer and owns the object store Quarry.",
           "Bartholomew Idris is the observability lead and owns Beacon, the status dashboard, and Fathom.",
           "Cordelia Vance looks after the mail relay Garnet and the webhook sender Nettle.",
           "Desmond Achterberg is the platform engineer and owns Harrow, the job scheduler."]
HANDBOOK = ("# Larkspur infrastructure handbook\n\n## People\n\n" + "".join(f"- {line}\n" for line in _OWNERS)
            + "\n## Systems\n\n| System | What it does | Where it runs |\n| --- | --- | --- |\n"
            + "".join(f"| {n} | {what} | {where} |\n" for n, what, where in _SYSTEMS))

DESCRIBED = "Where does the object store that Wilhelmina Crouse owns run?"


def _ingested(root: Path, name: str, text: str) -> MemoryRepo:
    """A memory repository holding one Markdown document, ingested offline."""
    doc = root / name
    doc.write_text(text, encoding="utf-8")
    repo = MemoryRepo.init(root / "memory")
    repo.ingest([doc], mention_time="2026-06-01T09:00:00+00:00")
    return repo


@pytest.fixture(scope="module")
def handbook(tmp_path_factory) -> Iterator[MemoryRepo]:
    repo = _ingested(tmp_path_factory.mktemp("recall-hop"), "handbook.md", HANDBOOK)
    yield repo
    repo.close()


def _without_hop(repo: MemoryRepo, question: str):
    """The recall as it was before the hop: the same recall, run where a hop's sub-recall runs (it never hops)."""
    token = recall_hop._HOPPING.set(True)
    try:
        return repo.recall(question)
    finally:
        recall_hop._HOPPING.reset(token)


def _index(rows, needle: str) -> int | None:
    return next((i for i, r in enumerate(rows) if needle in r.text), None)


def test_a_described_thing_brings_its_passage_into_the_top_ten(handbook: MemoryRepo):
    result = handbook.recall(DESCRIBED)
    rows = result.records[:10]
    where = _index(rows, "Frankfurt rack 4")
    assert _index(rows, "Wilhelmina Crouse") is not None  # the passage that names the thing
    assert where is not None, [r.text for r in rows]  # the passage that says where it runs
    assert result.inspected["hop recalls"] == recall_hop.HOP_RECALLS


def test_the_hop_rows_have_their_own_lane_and_cite_the_row_that_named_the_thing(handbook: MemoryRepo):
    result = handbook.recall(DESCRIBED)
    namer = next(r for r in result.records if "Wilhelmina Crouse" in r.text)
    hop_rows = [r for r in result.records if r.lane == "hop"]
    assert hop_rows and len(hop_rows) <= recall_hop.HOP_ROWS
    assert any("Frankfurt rack 4" in r.text for r in hop_rows)
    steps = {e["id"]: e for e in result.fusion if e.get("step") == "hop" and e["outcome"] == "kept"}
    assert {r.id for r in hop_rows} == set(steps)
    for entry in steps.values():
        assert entry["named_by"] == namer.id
        assert entry["name"] == "Quarry" and entry["follow_up"] == "Where does Quarry run?"


def test_the_hop_stays_within_the_plans_capacity_and_is_deterministic(handbook: MemoryRepo):
    first, again = handbook.recall(DESCRIBED), handbook.recall(DESCRIBED)
    assert len(first.records) <= first.plan.capacity
    assert [r.id for r in first.records] == [r.id for r in again.records]
    assert len({r.id for r in first.records}) == len(first.records)  # no row twice


def test_without_the_hop_the_passage_is_missed(handbook: MemoryRepo):
    """The rows this recall returned before the hop: the place the thing runs is not in them (the test above is
    no accident of a small document)."""
    assert _index(_without_hop(handbook, DESCRIBED).records[:10], "Frankfurt rack 4") is None


@pytest.mark.parametrize("question", ["Where does Beacon run?", "Who owns Harrow?", "What does Kelp do?"])
def test_a_question_without_a_described_thing_gets_the_rows_it_got_before(handbook: MemoryRepo, question: str):
    assert hops.described(question) is None
    result = handbook.recall(question)
    assert [(r.id, r.lane) for r in result.records] == [(r.id, r.lane) for r in _without_hop(handbook, question).records]
    assert "hop recalls" not in result.inspected
    assert not any(e.get("step") == "hop" for e in result.fusion)


def test_a_description_that_names_nothing_in_memory_changes_no_row(handbook: MemoryRepo):
    question = "Where does the telescope that Ottoline Fairweather owns run?"
    assert hops.described(question) is not None
    result = handbook.recall(question)
    assert [r.id for r in result.records] == [r.id for r in _without_hop(handbook, question).records]
    assert result.inspected["hop recalls"] == 1  # the naming recall only: no name, no follow-up


# --- the readings the hop rests on (memrepo/read/hops.py) ---------------------------------------------------


def test_an_apposition_does_not_reach_across_a_conjunction():
    sentence = "Rosalind owns the main queue q-main, its replicas and the alerting server Watchtower."
    assert hops.name_in("alerting server", sentence) == "Watchtower"
    assert hops.name_in("billing service", "Rosalind owns Tally, our billing service, and more.") == "Tally"


def test_a_verbs_subject_is_read_in_its_own_clause():
    sentence = "Nothing with card data leaves Paymaster; Vault stores only Paymaster's tokens."
    assert hops.subject("stores only Paymaster's tokens", sentence) == "Vault"


def test_a_plural_after_a_cardinal_is_the_noun_it_counts_not_the_questions_verb():
    thing = hops.described("Who owns the system that keeps audit logs for 18 months?")
    assert thing is not None and thing.clause == "keeps audit logs for 18 months"
    assert thing.follow_up("Ledgerline") == "Who owns Ledgerline?"


# --- the role hop: a rule names a role, another passage names who holds it -------------------------------------

_HEADS = [("Ignatius Morrow", "maintenance"), ("Perpetua Lund", "glazing"), ("Osric Delacroix", "packing"),
          ("Henrietta Vale", "dispatch"), ("Lucian Thorne", "purchasing"), ("Marisol Quint", "quality"),
          ("Evander Holt", "design"), ("Clementine Rusk", "sales"), ("Tobias Wren", "finance"),
          ("Isolde Farrow", "training"), ("Caspian Moss", "security"), ("Beatrix Sable", "facilities"),
          ("Rupert Ashdown", "logistics"), ("Winifred Crane", "research"), ("Alaric Penn", "marketing"),
          ("Seraphina Doyle", "support"), ("Barnaby Kell", "planning"), ("Philippa Stroud", "compliance"),
          ("Leopold Marsh", "recruiting"), ("Ottilie Grey", "events"), ("Cedric Fane", "archives")]
POTTERY = ("# Kilnworks pottery handbook\n\n## People\n\n" + "".join(f"- {who} is head of {what}.\n" for who, what in _HEADS)
           + "\n## Rules\n\n- If the big kiln overheats, switch it off and call the head of maintenance.\n"
           + "- Glaze orders above 40 kg need a second signature.\n- Clay is stored below 20 degrees.\n"
           + "- The small kiln is fired on Tuesdays and is switched off by 18:00.\n"
           + "- Anyone who sees a crack in a kiln shelf takes the shelf out of use.\n")
ROLE_QUESTION = "Who is called if the big kiln overheats?"


@pytest.fixture(scope="module")
def pottery(tmp_path_factory) -> Iterator[MemoryRepo]:
    repo = _ingested(tmp_path_factory.mktemp("recall-role-hop"), "pottery.md", POTTERY)
    yield repo
    repo.close()


def test_a_rule_that_names_a_role_brings_the_holders_passage(pottery: MemoryRepo):
    result = pottery.recall(ROLE_QUESTION)
    rows = result.records[:10]
    assert _index(rows, "call the head of maintenance") is not None
    assert _index(rows, "Ignatius Morrow") is not None, [r.text for r in rows]
    rule = next(r for r in rows if "call the head of maintenance" in r.text)
    kept = [e for e in result.fusion if e.get("step") == "hop" and e["outcome"] == "kept"]
    assert kept and all(e["named_by"] == rule.id and e["follow_up"] == "Who is the head of maintenance?" for e in kept)
    assert result.inspected["hop recalls"] == 1 and len(result.records) <= result.plan.capacity


def test_without_the_role_hop_the_holder_is_missed(pottery: MemoryRepo):
    assert _index(_without_hop(pottery, ROLE_QUESTION).records[:10], "Ignatius Morrow") is None
