"""Reading a document's table rows and label lines offline (memrepo.read.cells, issue 32): a row named by its key
or by the alias in brackets beside it, the part of a many-part cell that holds what is asked, a question's
particles asking nothing of the row, and a label line ("Status: Draft") read as a property of the document its
citation names."""

from __future__ import annotations

from memrepo.read import cells, span
from memrepo.read.answer import Evidence


def _read(question: str, ledger: list[Evidence]) -> cells.Cell | None:
    return cells.read(question, span.question_kind(question), ledger)


KILNS = [Evidence("se-1", "2026-04-02", "Kilns — Kiln: Top loader (Brenna K4); Room: Studio 3", sources=["src-a#kilns/Kilns:2"]),
         Evidence("se-2", "2026-04-02", "Kilns — Kiln: Top loader (Brenna K4); Repairs: Brenna Ltd, 0131 222 0456",
                  sources=["src-a#kilns/Kilns:2"]),
         Evidence("se-3", "2026-04-02", "Kilns — Kiln: Test kiln; Repairs: Ola Berg", sources=["src-a#kilns/Kilns:3"]),
         Evidence("se-4", "2026-04-02", "Glazes — Glaze: Celadon; Firing: cone 10, at least 9 hours",
                  sources=["src-a#kilns/Glazes:2"]),
         Evidence("se-5", "2026-04-02", "Glazes — Glaze: Tenmoku; Keep for: 30 days", sources=["src-a#kilns/Glazes:3"])]


def test_a_row_is_named_by_its_key_or_by_the_alias_in_brackets():
    cell = _read("In which room is the top loader?", KILNS)
    assert cell is not None and cell.answer == "Studio 3"
    cell = _read("In which room is the Brenna K4?", KILNS)
    assert cell is not None and cell.answer == "Studio 3"
    assert cells.named("Top loader (Brenna K4)", {"top", "loader", "room"}) == {"top", "loader"}
    assert cells.named("Top loader (Brenna K4)", {"loader", "room"}) == set()  # half a key names no row


def test_a_number_to_call_is_the_part_of_the_cell_with_digits():
    cell = _read("What number do I call for repairs of the top loader?", KILNS)
    assert cell is not None and cell.answer == "0131 222 0456"
    cell = _read("Who does repairs on the top loader?", KILNS)
    assert cell is not None and cell.answer == "Brenna Ltd, 0131 222 0456"  # a person asked: the whole cell


def test_the_part_of_a_cell_that_says_the_asked_word_answers():
    cell = _read("To which cone is the celadon glaze fired?", KILNS)
    assert cell is not None and cell.answer == "cone 10"
    assert cells.part_asked("cone 10, at least 9 hours", span.question_kind("How is celadon fired?"), set()) == \
        "cone 10, at least 9 hours"  # nothing echoed: the whole value


def test_a_particle_of_the_question_asks_nothing_of_the_row():
    cell = _read("How long can the tenmoku glaze be kept before it is thrown out?", KILNS)
    assert cell is not None and cell.answer == "30 days"
    assert _read("How long can the tenmoku glaze be kept before the potter sieves it?", KILNS) is None  # more asked


def test_a_label_line_is_a_property_of_the_document_its_citation_names():
    ledger = [Evidence("se-1", "2026-04-02", "Status: Draft", sources=["src-b#rfc-0012:1"]),
              Evidence("se-2", "2026-04-02", "Owner: Ines Caro", sources=["src-b#rfc-0012:2"]),
              Evidence("se-3", "2026-04-02", "Status: Retired", sources=["src-c#rfc-0009:1"])]
    cell = _read("What is the status of RFC 0012?", ledger)
    assert cell is not None and cell.answer == "Draft" and cell.row.evidence.id == "se-1"
    cell = _read("Who owns RFC 0009?", ledger)
    assert cell is None  # RFC 0009 has no owner line
    said = [Evidence("ep-1", "2026-04-02", "Status: fine, thanks", sources=["src-d#D1:3"])]
    assert _read("What is the status of the deal?", said) is None  # a conversation's turn is no document


def test_a_cell_answers_before_a_sentence_only_when_the_row_says_all_the_question_asks():
    ledger = [Evidence("se-1", "2026-04-02", "Plans — Plan: Yearly; Price: £90", sources=["src-a#club/Plans:2"]),
              Evidence("se-2", "2026-04-02", "Kilns — Kiln: Test kiln; Size: 2 shelves", sources=["src-a#club/Kilns:2"])]
    cell = _read("What is the yearly price?", ledger)
    assert cell is not None and cell.answer == "£90" and cell.whole
    cell = _read("What does the yearly plan cost a year?", [Evidence("se-3", "2026-04-02", "Costs — Item: Yearly plan; "
                                                                      "Yearly cost: £90", sources=["src-a#club/Costs:2"])])
    assert cell is not None and cell.whole  # "year" is said by "Yearly cost"
    cell = _read("What is the yearly heating budget?", ledger)
    assert cell is not None and not cell.whole  # "heating" is no word of the row: a sentence may say it
    cell = _read("How many shelves does the test kiln take?", ledger)
    assert cell is not None and cell.whole  # a verb the row says by its header ("take" for "Size")
    assert _read("How many cones does each test kiln shelf take?", ledger) is None  # "2 shelves" counts shelves


def test_a_row_described_by_one_cell_gives_the_asked_column_of_its_other_record():
    ledger = [Evidence("se-1", "2026-04-02", "Moves — Step: 2; What: Pack the glaze room", sources=["src-a#move/Moves:3"]),
              Evidence("se-2", "2026-04-02", "Moves — Step: 3; What: Empty the kilns", sources=["src-a#move/Moves:4"])]
    question = "When is the glaze room packed?"
    kind = span.question_kind(question)
    row = cells.described_row(question, kind, ledger)
    assert row is not None and row.evidence.id == "se-1"
    assert cells.row_query(row, kind, ledger, question) == "Moves — Step: 2"  # no row of the ledger says "When"
    more = [Evidence("se-3", "2026-04-02", "Moves — Step: 3; When: 2026-05-04", sources=["src-a#move/Moves:4"]),
            Evidence("se-4", "2026-04-02", "Moves — Step: 2; When: 2026-05-01", sources=["src-a#move/Moves:3"])]
    cell = cells.sibling(question, kind, ledger + more, row)
    assert cell is not None and cell.answer == "2026-05-01" and cell.row.evidence.id == "se-4"
    assert cells.row_query(row, kind, ledger + more[:1], question) == "Moves — Step: 2; When"  # as step 3 says it
    assert cells.described_row("Who packs the kiln shelves?", span.question_kind("Who packs the kiln shelves?"),
                               ledger) is None  # one shared word of a three-word cell describes no row


def test_a_key_is_named_in_another_form_of_its_words_and_a_price_in_any_column():
    ledger = [Evidence("se-1", "2026-04-02", "Alerts — Alert: Kiln overheating; Page: above 1,300 °C",
                       sources=["src-a#kilns/Alerts:2"]),
              Evidence("se-2", "2026-04-02", "Supplies — Item: Porcelain clay; Notes: £21 per bag, less in bulk",
                       sources=["src-a#kilns/Supplies:2"])]
    cell = _read("At what temperature does it page when the kiln overheats?", ledger)
    assert cell is not None and cell.answer == "above 1,300 °C"  # "Kiln overheating": "the kiln overheats"
    cell = _read("How much does porcelain clay cost per bag?", ledger)
    assert cell is not None and cell.answer == "£21 per bag"  # a price in a "Notes" column, the part asked
    assert _read("How many bags of porcelain clay are left?", ledger) is None  # no count in the row


def test_a_header_or_a_tables_name_is_no_answer():
    row = Evidence("se-1", "2026-04-02", "Kilns — Kiln: Test kiln; Room: Studio 3", sources=["src-a#kilns/Kilns:3"])
    assert cells.is_label("Room", row) and cells.is_label("Kilns", row) and cells.is_label("kiln.", row)
    assert not cells.is_label("Studio 3", row) and not cells.is_label("Test kiln", row)
    said = Evidence("ep-1", "2026-04-02", "Room: the big one upstairs", sources=["src-b#D1:2"])
    assert not cells.is_label("Room", said)  # a line said in a conversation is no table row
