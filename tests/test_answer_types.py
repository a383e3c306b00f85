"""Kinds of value a question asks for and the literals that answer them: contact values, shares, money in any
currency and in words, ages, durations of "how soon", bounds ("the minimum rental time").

The sentences and the small help page below are written for these tests (not taken from any evaluation set).
"""

from __future__ import annotations

from datetime import date

import pytest

from memrepo.nlp.literals import MONEY_RE, find_literals
from memrepo.nlp.questions import classify

from conftest import document_memory


def literals(sentence: str) -> list[tuple[str, str]]:
    return [(lit.key, lit.surface) for lit in find_literals(sentence, date(2026, 5, 4))[1]]


# --- literals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence,expected", [
    ("Questions go to desk@harbour-lofts.example, not to the caretaker.", ("email", "desk@harbour-lofts.example")),
    ("Ring the night porter on 020 7946 0321 after ten.", ("phone", "020 7946 0321")),
    ("From abroad, dial +44 20 7946 0321 instead.", ("phone", "+44 20 7946 0321")),
    ("The store's line is (415) 555-0172 on weekdays.", ("phone", "(415) 555-0172")),
    ("Our front desk answers at 555-0148.", ("phone", "555-0148")),
    ("The timetable is on https://ferries.example.org/timetable today.", ("url", "https://ferries.example.org/timetable")),
    ("About 12% of the orders come back.", ("percent", "12%")),
    ("Nearly forty percent of the members voted.", ("percent", "forty percent")),
    ("The flat costs 950 pounds a month.", ("price", "950 pounds a month")),
    ("The lamps cost 45 pounds each.", ("price", "45 pounds each")),
    ("The course fee is 1,200 francs.", ("price", "1,200 francs")),
    ("A ticket is 300 kronor at the gate.", ("price", "300 kronor")),
    ("Parking is CHF 20 for the day.", ("price", "CHF 20")),
    ("He paid fifty euros for the frame.", ("price", "fifty euros")),
    ("The hosting costs €610 a month.", ("price", "€610 a month")),
    ("Members aged 18 or over may vote.", ("age", "aged 18 or over")),
    ("Applicants must be 21 years of age.", ("age", "21 years of age")),
    ("The discount is for guests 65 or older.", ("age", "65 or older")),
])
def test_a_literal_of_each_kind(sentence, expected):
    assert expected in literals(sentence), literals(sentence)


def test_pounds_are_money_where_the_sentence_speaks_of_money_and_a_weight_where_it_weighs():
    assert ("price", "12 pounds") in literals("We paid 12 pounds for the tickets.")
    assert ("measurement", "12 pounds") in literals("The dog weighs 12 pounds.")
    assert ("measurement", "5 pounds") in literals("I lost 5 pounds over the summer.")


def test_a_bare_r_is_rand_only_where_the_sentence_speaks_of_money():
    assert ("price", "R310 per head") in literals("The caterer charges R310 per head.")
    assert not any(key == "price" for key, _ in literals("Take the R101 north to the coast."))
    assert ("price", "R85,000") in literals("The hall alone is R85,000 for the day.")


def test_values_that_look_like_phone_numbers_stay_what_they_are():
    assert ("date", "2026-11-24") in literals("The audit runs from 2026-11-24 to 2026-12-02.")
    assert not any(key == "phone" for key, _ in literals("The audit runs from 2026-11-24 to 2026-12-02."))
    assert not any(key == "phone" for key, _ in literals("We counted 120 chairs and 45 tables in 2019."))
    assert not any(key == "price" for key, _ in literals("The run took 1,000 hours on 3 machines."))


def test_a_price_a_month_is_one_value_not_a_frequency():
    found = literals("The old cluster costs €1,150 a month.")
    assert ("price", "€1,150 a month") in found and not any(key == "frequency" for key, _ in found)


def test_the_one_money_test_knows_every_currency_form():
    for text in ("£38", "€1.2 million", "300 kronor", "fifty euros", "CHF 20", "R85,000", "kr 450", "12 dollars"):
        assert MONEY_RE.search(text), text
    for text in ("6 pods", "64 GB", "room 12", "2 hours"):
        assert not MONEY_RE.search(text), text


# --- what a question asks for ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("question,asks", [
    ("What email address do I write to about a lost key?", "email"),
    ("What is the caretaker's email?", "email"),
    ("What number do I ring for the night porter?", "phone"),
    ("What number is the emergency line?", "phone"),
    ("What is the phone number of the surgery?", "phone"),
    ("Which website has the ferry timetable?", "url"),
    ("What share of the orders come back?", "percent"),
    ("What percentage of the members voted?", "percent"),
    ("What discount do members get on Sundays?", "percent"),
    ("How much of the deposit is returned if I leave early?", "percent"),
    ("How soon is a refund paid?", "duration"),
    ("How quickly does the plumber come out?", "duration"),
    ("What is the minimum stay at the cabin?", "duration"),
    ("What is the longest time a guest may book?", "duration"),
    ("What is the maximum price of a ticket?", "price"),
    ("What is the minimum age for the climbing wall?", "age"),
    ("At what age may children swim alone?", "age"),
    ("At what p95 latency does the alarm fire?", "amount"),
    ("How much is the rent?", "price"),
    # what stays as it was
    ("What number is printed on the ticket?", "which"),
    ("What is the status of the migration?", "state"),
    ("What is the address of the surgery?", "place"),
])
def test_what_a_question_asks_for(question, asks):
    assert classify(question).asks == asks


# --- answers from a document ------------------------------------------------------------------------------------

HELP_PAGE = """\
# Harbour Lofts: residents' guide

## Contact

Questions about the building go to desk@harbour-lofts.example. For a burst pipe or a lift fault, ring the night
porter on 020 7946 0321 at any hour.

## Money

The rent is 950 pounds a month, paid on the first day of the month. Storage lockers cost 45 pounds each. Residents
who pay a year ahead get 8% off the rent.

## Rules

Residents aged 18 or over may sign a lease. A refund of the deposit is paid within 10 working days of the move-out.
If you leave before the end of the lease, we keep 25% of the deposit. The minimum lease is 6 months.
"""


@pytest.fixture(scope="module")
def residents(tmp_path_factory):
    repo = document_memory(tmp_path_factory.mktemp("residents"), "residents-guide.md", HELP_PAGE,
                           "2026-05-04T09:00:00+00:00")
    yield repo
    repo.close()


@pytest.mark.parametrize("question,expected", [
    ("What email address do I write to about the building?", "desk@harbour-lofts.example"),
    ("What number do I ring for the night porter?", "020 7946 0321"),
    ("How much is the rent?", "950 pounds a month"),
    ("How much does a storage locker cost?", "45 pounds each"),
    ("What discount do residents get if they pay a year ahead?", "8%"),
    ("How old must a resident be to sign a lease?", "aged 18 or over"),
    ("How soon is the deposit refunded after the move-out?", "10 working days"),
    ("How much of the deposit is kept if I leave before the end of the lease?", "25%"),
])
def test_a_document_answers_each_kind(residents, question, expected):
    answer = residents.ask(question)
    assert answer.answer == expected, (question, answer.answer, answer.quote)
    assert answer.record_ids, answer


def test_a_share_said_as_a_part_of_a_whole(tmp_path):
    repo = document_memory(tmp_path, "budget-notes.md",
                           "# Club budget\n\nThe travel budget is 4,000 euros, and the coach hire alone is 2,600 of that.\n",
                           "2026-05-04T09:00:00+00:00")
    try:
        assert repo.ask("How much of the travel budget is the coach hire?").answer == "2,600"
    finally:
        repo.close()
