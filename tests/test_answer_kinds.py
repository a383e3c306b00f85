"""The offline answer of each kind, from the sentence that holds it, in chats and in documents.

A chat about a flat, a team's notes and a club's minutes, written for these tests (not taken from any evaluation
set), are ingested into real repositories; ``ask`` answers amounts, quoted prices, counts, times
of day, places as specific as asked, current values and roles named in a notes line, and quotes
the sentence it rests on.
"""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.read.span import NOT_IN_MEMORY

CHAT = """\
# Session 1: 2026-03-04 18:20
Noor: I signed the lease for the flat on Kestrel Lane 14 in Utrecht today!
Tomas: Congratulations! How much is it?
Noor: The rent is 1,450 euros a month, heating included.
Tomas: Not bad for Utrecht. Did you get furniture yet?
Noor: I ordered a sofa for 699 euros and put up 2 shelves in the hallway.
Tomas: I bought 12 plants for my balcony last week, you should get some.
Noor: My yoga class starts at 7:15 pm every Tuesday.

# Session 2: 2026-04-11 10:05
Noor: The landlord raised the rent, it is 1,520 euros a month now.
Tomas: Ouch. Is the bike still in the shed?
Noor: Yes. The repair shop quoted "185 euros" for the new gears.
"""

NOTES = """\
# Platform team notes

## People

- DBA: Priya Raman
- On-call lead: Marco Bianchi

Sofia Lindqvist is our release manager.

## Operations

The nightly backup runs at 02:30 UTC and is kept for 30 days.

The staging database lives on db-stage-04 in region eu-west-1.

The build server has 3 runners and 64 GB of memory.

Rota pay is 300 euros a month, plus 25 euros for each call taken on a weekend.

Nobody works more than 3 nights in a row.
"""

MINUTES = """\
# Garden club meeting

Chair: Hanne Lund. Minutes: Oskar Brandt.

## Plans

The club's yearly fee rises from 40 euros to 55 euros from March.
The greenhouse opens on Saturday 14 March at 09:30, with the seed swap on 21 March at 15:00.
Birgit and Oskar go to the flower fair in Ghent.
The shed holds 12 tools, and 5 of them need new handles.
"""


def _repo(tmp_path_factory, name: str, text: str, suffix: str):
    root = tmp_path_factory.mktemp(name)
    path = root / f"{name}{suffix}"
    path.write_text(text, encoding="utf-8")
    MemoryRepo.init(root / "memory").close()
    repo = MemoryRepo.open(root / "memory", environ={})
    repo.ingest([path])
    return repo


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    repo = _repo(tmp_path_factory, "flat", CHAT, ".txt")
    yield repo
    repo.close()


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    repo = _repo(tmp_path_factory, "platform", NOTES, ".md")
    yield repo
    repo.close()


def _check(repo, question: str, expected: str, sentence: str) -> None:
    answer = repo.ask(question)
    assert answer.answer == expected, (question, answer.answer, answer.quote)
    assert answer.record_ids, answer
    assert sentence in answer.quote and answer.record_ids[0] in answer.quote, answer.quote


@pytest.mark.parametrize("question,expected,sentence", [
    # an amount, and the newest one when the question asks about now
    ("What is Noor's rent now?", "1,520 euros a month", "The landlord raised the rent, it is 1,520 euros a month now."),
    ("How much is Noor's rent?", "1,520 euros a month", "The landlord raised the rent"),
    ("How much did the sofa cost?", "699 euros", "I ordered a sofa for 699 euros"),
    # a quoted price
    ("What did the repair shop quote for the gears?", "185 euros", "The repair shop quoted"),
    # a count of the thing asked, not another number of the chat
    ("How many shelves did Noor put up?", "2", "I ordered a sofa for 699 euros and put up 2 shelves"),
    # a time of day with what belongs to it, not the day the record was written
    ("When does Noor's yoga class start?", "7:15 pm every Tuesday", "My yoga class starts at 7:15 pm"),
    # the place as specific as asked
    ("Which street is Noor's flat on?", "Kestrel Lane 14", "I signed the lease for the flat on Kestrel Lane 14"),
    ("Where is Noor's flat?", "Kestrel Lane 14, Utrecht", "I signed the lease"),
])
def test_chat_answers_of_each_kind(chat, question, expected, sentence):
    _check(chat, question, expected, sentence)


@pytest.mark.parametrize("question,expected,sentence", [
    ("Who is the DBA?", "Priya Raman", "DBA: Priya Raman"),
    ("Who is the on-call lead?", "Marco Bianchi", "On-call lead: Marco Bianchi"),
    ("Who is the release manager?", "Sofia Lindqvist", "Sofia Lindqvist is our release manager."),
    ("When does the nightly backup run?", "02:30 UTC", "The nightly backup runs at 02:30 UTC"),
    ("How long are the nightly backups kept?", "30 days", "The nightly backup runs at 02:30 UTC"),
    ("Which region is the staging database in?", "eu-west-1", "The staging database lives on db-stage-04"),
    ("How many runners does the build server have?", "3", "The build server has 3 runners"),
    ("How much memory does the build server have?", "64 GB", "The build server has 3 runners and 64 GB"),
    ("How much extra is paid for a call taken on a weekend?", "25 euros", "plus 25 euros for each call taken"),
    ("What is the most nights in a row anyone works?", "3 nights", "Nobody works more than 3 nights in a row."),
])
def test_document_answers_of_each_kind(notes, question, expected, sentence):
    _check(notes, question, expected, sentence)


@pytest.fixture(scope="module")
def minutes(tmp_path_factory):
    repo = _repo(tmp_path_factory, "garden_club", MINUTES, ".md")
    yield repo
    repo.close()


@pytest.mark.parametrize("question,expected,sentence", [
    # the document's name is context of its lines: "Chair: Hanne Lund." is the garden club's chair
    ("Who is the chair of the garden club?", "Hanne Lund", "Chair: Hanne Lund."),
    # a change "from A to B" answers with B
    ("What will the yearly fee be from March?", "55 euros", "The club's yearly fee rises from 40 euros to 55 euros"),
    # a time of the clause the question is about, not of the clause beside it
    ("What time does the greenhouse open?", "09:30", "The greenhouse opens on Saturday 14 March at 09:30"),
    ("What time is the seed swap?", "15:00", "with the seed swap on 21 March at 15:00"),
    # two people in one role
    ("Who goes to the flower fair?", "Birgit and Oskar", "Birgit and Oskar go to the flower fair in Ghent."),
    # the count of the clause the question asks about
    ("How many tools need new handles?", "5", "The shed holds 12 tools, and 5 of them need new handles."),
    ("How many tools does the shed hold?", "12", "The shed holds 12 tools"),
])
def test_meeting_minutes_answers_of_each_kind(minutes, question, expected, sentence):
    _check(minutes, question, expected, sentence)


def test_a_weekday_beside_a_date_gives_way_to_the_date(minutes):
    answer = minutes.ask("On what date does the greenhouse open?")
    assert answer.answer.startswith("14 March"), (answer.answer, answer.quote)


def test_a_label_line_of_a_document_names_no_speaker(notes):
    """"DBA: Priya Raman" in a document is a role and its holder, not a turn said by someone called DBA."""
    answer = notes.ask("Who is the DBA?")
    assert "(DBA," not in answer.quote, answer.quote


def test_what_neither_text_says_is_not_in_memory(chat, notes):
    for repo, question in ((chat, "How much did the bike cost?"), (notes, "Who is the security officer?")):
        answer = repo.ask(question)
        assert answer.answer == NOT_IN_MEMORY and answer.record_ids == [], (question, answer.answer, answer.quote)
