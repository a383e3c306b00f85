"""memrepo.text: the one home of month names, date parsing, sentence splitting and stop words (issue 22)."""

from __future__ import annotations

import ast
from datetime import date
from pathlib import Path

import pytest

from memrepo.text.dates import (MONTHS, find_date, find_month_day, human_date, month_alternation, month_number,
                                parse_clock_date, parse_iso_date)
from memrepo.nlp.tokens import split_sentences
from memrepo.write.parsers import parse_session_time

PACKAGE = Path(__file__).parents[1] / "memrepo"


@pytest.mark.parametrize("written, iso", [
    ("3 March 2026", "2026-03-03"),  # a date with no time of day stays a date
    ("March 3, 2026 6:30 pm", "2026-03-03T18:30:00"),
    ("Tue, 3 Mar 2026 18:30", "2026-03-03T18:30:00"),
    ("3 March", None),  # no year: not guessed
    ("March 2026", None),  # no day
    ("3/4/2026", None),  # day-first or month-first: ambiguous, so only ISO is read for digits
    ("32 March 2026", None),
    ("Mayday", None),
])
def test_session_headers_as_people_write_them(written, iso):
    assert parse_session_time(written) == iso


def test_a_transcript_with_a_written_session_date_is_ingested(tmp_path):
    from memrepo.write.parsers import parse_file

    chat = tmp_path / "chat.txt"
    chat.write_text("# Session 1: 3 March 2026, 18:30\nAda: We moved the boat to the north pier.\n"
                    "Ben: Good, the old berth leaked.\n", encoding="utf-8")
    parsed = parse_file(chat)
    assert [s.mention_time for s in parsed.sources] == ["2026-03-03T18:30:00"]


@pytest.mark.parametrize("word, number", [("August", 8), ("aug", 8), ("Sept", 9), ("may", 5), ("MARCH", 3),
                                          ("Mayday", 5), ("xyz", None)])
def test_month_number_reads_names_and_abbreviations(word, number):
    assert month_number(word) == number


def test_dates_people_write_and_answers_say():
    assert parse_session_time("4:27 pm on 3 June, 2024") == "2024-06-03T16:27:00"
    assert parse_session_time("10:04 am on 19 Sept, 2022") == "2022-09-19T10:04:00"
    assert parse_clock_date("12:05 am on 31 Feb, 2023") is None  # no such day
    assert find_month_day("we met on the 12th of Aug. and again on August 20") == (8, 20)  # month first wins
    assert find_month_day("see you 3rd of sep") == (9, 3) and find_month_day("in May") is None
    assert find_date("bought on 2026-11-20 at noon") == (2026, 11, 20)  # ISO first
    assert find_date("visited Kyoto on 20 November 2026") == (2026, 11, 20)
    assert find_date("painted it on Nov. 3rd, 2026") == (2026, 11, 3)
    assert find_date("we met on the 12th of Aug. and again") == (None, 8, 12)
    assert find_date("order 2026-11-20-77 shipped") is None and find_date("in May 2026") is None
    assert parse_iso_date("2023-05-08T13:56:00") == date(2023, 5, 8)
    assert parse_iso_date("8 May") is None
    assert human_date("2023-05-08") == "8 May 2023" and human_date("2023-05") == "May 2023"
    assert human_date("sometime") == "sometime"
    assert "Aug(?:ust)?" in month_alternation(capitalized=True) and "aug(?:ust)?" in month_alternation()


def test_abbreviations_never_end_a_sentence_in_either_mode():
    text = "We climbed Mt. Fuji with Dr. Lee, e.g. at dawn. Then we ate."
    for keep_quotes in (False, True):
        assert split_sentences(text, keep_quotes=keep_quotes) == [
            "We climbed Mt. Fuji with Dr. Lee, e.g. at dawn.", "Then we ate."]


def test_writers_keep_a_closing_quote_with_its_sentence_and_the_extractor_splits_there():
    text = 'We did a piece called "Finding Home." It was moving. 25 people came.'
    assert split_sentences(text, keep_quotes=True) == [text]  # a record quotes it with its closing mark
    assert split_sentences('It was "good." Then we left.', keep_quotes=True) == ['It was "good." Then we left.']
    assert split_sentences("I came. We left! Why?", keep_quotes=True) == ["I came.", "We left!", "Why?"]
    assert split_sentences(text) == ['We did a piece called "Finding Home.', "It was moving.", "25 people came."]


def _module_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = list(node.targets) if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def test_month_tables_sentence_splitters_and_stop_lists_live_in_one_place_each():
    own = {"MONTHS", "_MONTHS", "WEEKDAYS", "STOPWORDS", "_STOP", "_ENTRY_STOP", "_month", "_to_date", "human_date"}
    found = {f"{path.relative_to(PACKAGE)}: {name}" for path in PACKAGE.rglob("*.py")
             if "text" not in path.relative_to(PACKAGE).parts[:1]
             for name in _module_level_names(path) & own}
    assert found == set()
    # The one sentence splitter is the language layer's first stage (memrepo/nlp/tokens.py).
    splitters = {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                 if _module_level_names(path) & {"split_sentences", "sentences"}}
    assert splitters == {"nlp/tokens.py"}
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name != "text":
            assert '"january", "february"' not in path.read_text(encoding="utf-8"), path


def test_memrepo_text_imports_nothing_of_memrepo():
    for path in (PACKAGE / "text").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("memrepo")], path
    assert MONTHS[4] == "may"
