"""Offline answers that rest on a reading of English in memrepo.read.readings (issue 31).

A club's chat and a warehouse's notes, written for these tests (not taken from any evaluation set), are ingested
into a real repository; ``ask`` answers "who" with the one who replies, not the one who asks; "what colour" with a
colour word; "when" with the day and the hour said together; the value of the clause that says "new", not
"old"; a range whole; the subject of "X is the loading gate"; a URI for "where"; the name after the question's
own opening preposition; and the name a relative clause ("who became shift lead") is about. A document's line
is read with the occasion its document is about, a verb or a modifier no text says may be said otherwise, and a
code after another noun ("order K-7781") is that noun's; a session is one occasion too, a name written as a
person's is one even where the extractor missed it, money is read in a currency's name or after its sign, and
"the housewarming" in a conversation that names Jana and Milo is theirs.
"""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.read.readings import (NOW_WORDS, URI_RE, bound_only, clause_end, contrasted, leading_preposition,
                                   modifiers, person_like, possessor, setting)

CHAT = """\
# Session 1: 2026-04-02 18:00
Oskar: so who's organising the quiz night?
Lina: Maren is, she booked the back room at the harbour pub.
Oskar: What colour are the team shirts this year?
Lina: dark blue, with white numbers on the back.
Oskar: When does the coach arrive?
Lina: The coach arrives on 14 May at 09:45.
Lina: oh and Jana and Milo finally picked a date for their housewarming, 8 August.

# Session 2: 2026-05-20 19:30
Lina: the summer party is booked for 13 June at the boathouse.
Oskar: who fixed the trailer in the end?
Lina: Henrike van Dalen, on Sunday morning.
Oskar: great, she's a star.
Lina: Bruno the tortoise slept through the whole party, unlike our dog Pip.
Lina: Tomasz is baking the cake and I'm doing the lanterns.
Oskar: and the hall in Malmö for the autumn dinner?
Lina: it costs 2,400 kronor for the evening. The boat hire in Durban was R1,200 for the day.
Lina: also the housewarming moved, it is now on 22 August.
"""

NOTES = """\
# Warehouse notes

## Floor

- The old conveyor moves 40 crates an hour and the new one moves 65.
- Pallet racks cost 1,200 to 1,500 euros each.
- dock-north is the loading gate for refrigerated trucks.
- Nightly stock exports are written to sftp://files.example.net/exports.
- Paper invoices are optional for Austria.
- The new banner must cost no more than 300 euros, and the banner from the print shop costs 240 euros.
- The label printer prints a label in 2.5 seconds, and we would like it under 2.
- The stock list is checked by the front office team, never by a driver on shift.
- We expect about 40 drivers at the open day; the canteen seats 120.
- A sack of packing chips is 18.50 euros at Mehlhaus and 16.90 euros at Kornkammer.

## People

Deliveries are checked by Ruth Adeyemi, who became shift lead in May when Paul Novak retired.
"""

MINUTES = """\
# Harbour rowing club: spring general meeting

Date: 3 March 2026
Chair: Ilse Marten
Minutes: Joris Bakker

## Boats

The club sold the old coxed four for 2,300 euros.
The next club meeting is on 2 June 2026 in the boathouse.
"""

SHOP = """\
# Session 1: 2026-05-06 10:00
Mara: The blender arrived with a cracked jug, so I sent it back.
Ben: Did the shop give the money back?
Mara: Yes, they refunded 64 euros to my Maestro card for order K-7781.
Ben: Where's that clinic you told me about?
Mara: The clinic is at Lindenweg 5, next to the bakery.
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("readings")
    (root / "club.txt").write_text(CHAT, encoding="utf-8")
    (root / "warehouse.md").write_text(NOTES, encoding="utf-8")
    (root / "spring.md").write_text(MINUTES, encoding="utf-8")
    (root / "shop.txt").write_text(SHOP, encoding="utf-8")
    MemoryRepo.init(root / "repo").close()
    r = MemoryRepo.open(root / "repo", environ={})
    r.ingest([root / "club.txt", root / "warehouse.md", root / "spring.md", root / "shop.txt"],
             mention_time="2026-12-01")
    yield r
    r.close()


@pytest.mark.parametrize("question, expected", [
    ("Who is organising the quiz night?", "Maren"),  # Oskar asks it, so Oskar is not the answer
    ("What colour are the team shirts?", "dark blue"),
    ("When does the coach arrive?", "14 May at 09:45"),
    ("How many crates an hour does the new conveyor move?", "65"),  # the old one's clause says "old"
    ("How much does a pallet rack cost?", "1,200 to 1,500 euros"),
    ("Which gate is the loading gate for refrigerated trucks?", "dock-north"),  # the subject of "is the ... gate"
    ("Where are the nightly stock exports written?", "sftp://files.example.net/exports"),
    ("For which country are paper invoices optional?", "Austria"),
    ("Who is the shift lead now?", "Ruth Adeyemi"),  # who became shift lead: not the one who retired
    # the occasion is the document's: "Minutes: Joris Bakker" says no rowing club, its document does
    ("Who took the minutes of the rowing club meeting?", "Joris Bakker"),
    ("Which card was the refund paid to?", "Maestro"),  # "paid" said as "refunded"; "order K-7781" is no card
    ("Where is the dental clinic?", "Lindenweg 5"),  # no text says "dental": the clinic is the one named
    ("What was wrong with the blender?", "cracked jug"),  # the fault is said, not that something is wrong
    ("Who is baking the cake for the summer party?", "Tomasz"),  # the party is the session's, not the line's
    ("Who fixed the trailer?", "Henrike van Dalen"),  # written as a person's name
    ("How much does the hall in Malmö cost?", "2,400 kronor"),  # money in a currency's name
    ("How much was the boat hire in Durban?", "R1,200"),  # money after a currency's sign
    ("How many people does the canteen seat?", "120"),  # the 40 are said in a clause without the canteen
    ("How much is a sack of packing chips at Kornkammer?", "16.90 euros"),  # 18.50 is Mehlhaus's
    ("When is Jana and Milo's housewarming now?", "22 August"),  # "the housewarming", in their conversation
    ("What is the name of Lina's tortoise?", "Bruno"),  # "Bruno the tortoise"; Pip is a dog
    ("How much does the new banner cost?", "240 euros"),  # "no more than 300 euros" is a bound
    ("What is the most the new banner may cost?", "300 euros"),  # ... which this one asks
    ("How fast does the label printer print a label?", "2.5 seconds"),  # a time says how fast
    ("Who checks the stock list?", "front office team"),  # the passive's agent, not the one never by
])
def test_an_answer_that_rests_on_a_reading_of_english(repo: MemoryRepo, question: str, expected: str) -> None:
    assert expected.lower() in repo.ask(question).answer.lower()


def test_a_relative_clause_goes_on_the_clause_of_its_name() -> None:
    sentence = "Final calls go to Ruth Adeyemi, who became shift lead in May, and then to HR."
    assert sentence[:clause_end(sentence, sentence.index(", who"))].endswith("in May")
    assert sentence[:clause_end(sentence, 0)] == "Final calls go to Ruth Adeyemi, who became shift lead in May"
    assert clause_end("It costs 5 euros, or 6 at the door.", 0) == len("It costs 5 euros")


def test_opposite_words_part_two_clauses() -> None:
    assert contrasted("The current flow has five steps", {"how", "many", "steps", "does", "the", "new", "flow"})
    assert not contrasted("the new one has three", {"new", "flow"})
    assert not contrasted("The flow has five steps", {"new", "flow"})  # no opposite said: no contrast
    assert contrasted("the minimum order is 20 units", {"maximum", "order"})


def test_what_a_question_opens_with_and_the_words_of_now() -> None:
    assert leading_preposition("For which country is it optional?") == "for"
    assert leading_preposition("In what region does it run?") == "in"
    assert leading_preposition("Which country is it?") == "" and leading_preposition("Who is it for?") == ""
    assert "now" in NOW_WORDS and "currently" in NOW_WORDS


def test_a_uri_is_read_whole_without_the_full_stop_after_it() -> None:
    m = URI_RE.search("Snapshots go to s3://team-backups/daily.")
    assert m is not None and m.group(0) == "s3://team-backups/daily"
    assert URI_RE.search("see the page at example.org") is None


def test_the_occasion_a_question_ends_with_and_the_words_that_narrow_a_noun() -> None:
    assert setting("Who took the minutes of the rowing club meeting?") == {"row", "club", "meet"}
    assert setting("Who took the minutes?") == frozenset()
    assert setting("What time does the bus leave on match day?") == {"match", "day"}
    assert setting("What does Ana do in Lisbon?") == frozenset()  # a place named, no occasion
    assert modifiers("Where is the dental clinic?") == {"dental"}
    assert modifiers("Where does Lena's sister live?") == set()  # a name is never a modifier left out
    assert possessor("When is Jana and Milo's housewarming?") == ({"jana", "milo"}, "housewarming")
    assert possessor("When is the housewarming?") is None


def test_a_name_written_as_a_persons() -> None:
    assert person_like("Sanne de Wit") and person_like("Olga Petrenko") and person_like("Henrike van Dalen")
    assert not person_like("Olga") and not person_like("The Clinic") and not person_like("Monday Morning")


def test_a_bound_is_no_value_unless_the_question_asks_for_one() -> None:
    assert bound_only("we should never pay more than ", "How much does it cost?")
    assert not bound_only("we should never pay more than ", "What is the most we will pay?")
    assert not bound_only("each trolley carries up to ", "How many racks does a trolley carry?")  # a capacity
    assert bound_only("we want it under ", "How fast does the page load?")
    assert not bound_only("the printer quoted ", "How much does it cost?")
