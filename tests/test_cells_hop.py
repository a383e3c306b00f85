"""A table's cell named by its header and row ("the service contact for the kiln") in a question that asks
something else of the cell's value (issue 32): the value stands in for the phrase and the question is asked of it,
the answer citing the row and the passage about the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.read import cells
from memrepo.read.evidence import Evidence

STUDIO = """# Kilnhouse studio manual

## People

- Bronwen Ashby is the studio lead; she orders the clay, keeps the firing log and teaches the evening class.
- Ravi Menon runs the shop and handles the glaze deliveries.

## Equipment

| Machine | Room | Service contact |
| --- | --- | --- |
| Big kiln | Yard | Bronwen Ashby |
| Pug mill | Back room | Ravi Menon |
| Slab roller | Front room | Rollco support, 0161 555 0199 |
"""


@pytest.fixture(scope="module")
def studio(tmp_path_factory) -> MemoryRepo:
    root = tmp_path_factory.mktemp("studio")
    (root / "studio.md").write_text(STUDIO, encoding="utf-8")
    repo = MemoryRepo.init(root / "memory")
    repo.ingest([root / "studio.md"], mention_time="2026-03-20T12:00:00+00:00")
    yield repo
    repo.close()


def _row(text: str) -> Evidence:
    return Evidence("se-1", "2026-03-20", text, sources=["src-1#studio/Equipment:3"])


def test_the_header_of_a_row_names_its_cell():
    ledger = [_row("Equipment — Machine: Big kiln; Service contact: Bronwen Ashby")]
    found = cells.described_cell("What does the service contact for the big kiln order?", ledger)
    assert found is not None and found[:2] == ("the service contact for the big kiln", "Bronwen Ashby")
    assert cells.described_cell("Who is the service contact for the big kiln?", ledger) is None  # read() answers it
    assert cells.described_cell("What does the owner of the big kiln order?", ledger) is None  # no such header
    ledger = [_row("Equipment — Machine: Slab roller; Service contact: Rollco support, 0161 555 0199")]
    found = cells.described_cell("When is the service contact for the slab roller open?", ledger)
    assert found is not None and found[1] == "Rollco support"  # the name, not the number after it


def test_a_question_about_a_cells_value_is_asked_of_the_value(studio: MemoryRepo):
    answer = studio.ask("What does the service contact for the big kiln order for the studio?")
    assert "clay" in answer.answer
    texts = {r.id: r.text for r in studio.records("semantic")}
    cited = [texts[i] for i in answer.record_ids if i in texts]
    assert any("Big kiln" in t and "Bronwen Ashby" in t for t in cited)
    assert any("orders the clay" in t for t in cited)


def test_a_label_line_answers_a_which_question_about_the_document_it_describes():
    from memrepo.read import span

    ledger = [Evidence("se-1", "2026-03-20", "Replaces: RFC 0012", sources=["src-1#rfc-0019:3"]),
              Evidence("se-2", "2026-03-20", "Status: Accepted", sources=["src-1#rfc-0019:2"])]
    question = "Which RFC does the billing export proposal replace?"
    cell = cells.read(question, span.question_kind(question), ledger)
    assert cell is not None and cell.answer == "RFC 0012" and cell.whole
    question = "Which team does the billing export proposal replace?"
    assert cells.read(question, span.question_kind(question), ledger) is None  # the value is no team
