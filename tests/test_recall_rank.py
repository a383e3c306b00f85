"""The ranking stage over the recall pool (memrepo/read/rank.py) on a real repository: evidence gathers in a session."""

from __future__ import annotations

import json

import pytest

from memrepo.api import MemoryRepo
from memrepo.read import constants as C
from memrepo.read.fuse import Candidate
from memrepo.read.rank import asks, said_words, says_when, session_support

CAMP = [
    ("Ana", "On our camping trip we pitched the tent right next to the river."),
    ("Ana", "The camping trip ended with a campfire, and the kids toasted marshmallows."),
    ("Ana", "On the last morning of the camping trip my son found a tiny green frog."),
    ("Ben", "That sounds lovely, the kids must have liked it."),
    ("Ben", "Marshmallows are the best part."),
]
OFFICE = [
    ("Ben", "A colleague told me about her camping trip, she wants to go again in the autumn."),
    ("Ana", "I am busy with the quarterly report this week."),
    ("Ben", "The printer on our floor is broken again."),
]


def _talk(root, first: list[tuple[str, str]], first_date: str, second: list[tuple[str, str]], second_date: str):
    """A memory repository holding a two-session conversation between Ana and Ben, ingested offline."""
    data = root / "talk.json"

    def session(n: int, lines: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [{"speaker": who, "dia_id": f"D{n}:{i}", "text": text} for i, (who, text) in enumerate(lines, 1)]

    data.write_text(json.dumps([{"sample_id": "talk", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1": session(1, first), "session_1_date_time": first_date,
        "session_2": session(2, second), "session_2_date_time": second_date,
    }}]), encoding="utf-8")
    MemoryRepo.init(root / "memory").close()
    memory = MemoryRepo.open(root / "memory", environ={})
    memory.ingest([data])
    return memory


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    memory = _talk(tmp_path_factory.mktemp("rank"), CAMP, "9:00 am on 3 June, 2023", OFFICE, "5:00 pm on 20 June, 2023")
    yield memory
    memory.close()


def _turn(row) -> str:
    return next(citation.partition("#")[2] for citation in row.sources if "#" in citation)


def test_turns_of_the_session_the_best_matches_are_in_rank_above_a_lone_match(repo):
    """The three camping turns of one session, a turn or two apart, support each other; the other session's passing
    mention of a camping trip gets no such term and ranks below all three."""
    result = repo.recall("What happened on Ana's camping trip?", types=["episodic"])
    order = [_turn(row) for row in result.records]
    terms = {_turn(row): row.terms for row in result.records}
    for turn in ("D1:1", "D1:2", "D1:3"):
        assert terms[turn].get("session") == pytest.approx(C.K_SESSION)
        assert order.index(turn) < order.index("D2:1")
    assert "session" not in terms["D2:1"]


def test_without_the_session_term_the_order_is_reranks(repo, monkeypatch):
    monkeypatch.setattr(C, "K_SESSION", 0.0)
    result = repo.recall("What happened on Ana's camping trip?", types=["episodic"])
    assert all("session" not in row.terms for row in result.records)


def test_session_support_counts_other_strong_candidates_near_in_the_same_source():
    ranked = [Candidate("a", 3.0), Candidate("b", 2.9), Candidate("c", 2.5), Candidate("d", 2.4), Candidate("e", 1.0)]
    positions = {"a": [("s1", 0)], "b": [("s1", 2)], "c": [("s2", 0)], "d": [("s1", 4)], "e": [("s1", 20)]}
    # the best three: a and b in s1, c in s2; d is 2 positions from b and 4 from a; e is far from both
    assert session_support(ranked, positions, depth=3, span=3) == {"a": 1, "b": 1, "c": 0, "d": 1, "e": 0}
    assert session_support(ranked, positions, depth=3) == {"a": 1, "b": 1, "c": 0, "d": 2, "e": 2}


ASKED = [
    ("Ben", "Hi Ana! How was the pottery class last Thursday?"),
    ("Ana", "Honestly wonderful. The teacher at the community centre showed me how to shape a small blue bowl."),
    ("Ben", "That sounds like a lot of fun."),
    ("Ana", "It was, and I glazed the bowl myself."),
]
LATER = [
    ("Ben", "My sister wants to sign up for a cooking course in the autumn."),
    ("Ana", "The weather has been so grey all week."),
]


@pytest.fixture(scope="module")
def asked_repo(tmp_path_factory):
    memory = _talk(tmp_path_factory.mktemp("asked"), ASKED, "8:00 pm on 14 March, 2024", LATER,
                   "6:00 pm on 2 April, 2024")
    yield memory
    memory.close()


QUESTION = "How did the evening pottery class at the community centre go?"


def test_the_reply_to_a_turn_that_asks_ranks_above_the_turn_that_asks(asked_repo):
    """Ben's turn matches the question best and only asks it; Ana's reply, the turn after it, says how it went.
    The reply is ranked above the turn that asks, with the terms that say why (the next test: without them,
    the order is the other way round)."""
    result = asked_repo.recall(QUESTION, types=["episodic"])
    order = [_turn(row) for row in result.records]
    terms = {_turn(row): row.terms for row in result.records}
    assert order.index("D1:2") < order.index("D1:1")
    assert terms["D1:1"].get("asks") == pytest.approx(-C.K_ASKS)
    assert 0 < terms["D1:2"]["reply"] <= C.K_REPLY
    assert "reply" not in terms.get("D1:3", {}) and "asks" not in terms["D1:2"]


def test_without_the_asking_terms_the_turn_that_asks_ranks_first(asked_repo, monkeypatch):
    monkeypatch.setattr(C, "K_ASKS", 0.0)
    monkeypatch.setattr(C, "K_REPLY", 0.0)
    result = asked_repo.recall(QUESTION, types=["episodic"])
    order = [_turn(row) for row in result.records]
    assert order.index("D1:1") < order.index("D1:2")
    assert all("asks" not in row.terms and "reply" not in row.terms for row in result.records)


def test_a_text_asks_when_its_last_sentence_is_a_question():
    assert asks("Did you go? ") and asks("Great news! Where was it?")
    assert not asks("Where was it? In Lisbon, by the river.") and not asks("")


TRIP = [
    ("Ana", "The old lighthouse on the cliff is my favourite place on the coast."),
    ("Ben", "I have never been up there."),
    ("Ana", "We climbed the lighthouse stairs two weekends ago, all two hundred of them."),
    ("Ben", "Did you play tennis this week?"),
    ("Ana", "Yes, tennis on Monday with my cousin, and I won both sets."),
]
GAMES = [
    ("Ana", "On Saturday I joined a chess club that meets at the library."),
    ("Ben", "Chess sounds hard."),
    ("Ana", "I also swim at the public pool before work."),
]


@pytest.fixture(scope="module")
def trip_repo(tmp_path_factory):
    memory = _talk(tmp_path_factory.mktemp("trip"), TRIP, "10:00 am on 5 May, 2024", GAMES, "7:00 pm on 21 May, 2024")
    yield memory
    memory.close()


def test_a_question_asking_when_favours_the_row_that_dates_it(trip_repo):
    """Both of Ana's lighthouse turns match the question; the one that says when ("two weekends ago") gets the
    ``when`` term and the one that does not, none."""
    result = trip_repo.recall("When did Ana climb the lighthouse?", types=["episodic"])
    terms = {_turn(row): row.terms for row in result.records}
    assert terms["D1:3"].get("when") == pytest.approx(C.K_WHEN)
    assert "when" not in terms["D1:1"]
    other = trip_repo.recall("What did Ana climb?", types=["episodic"])  # asks for no date: no such term
    assert all("when" not in row.terms for row in other.records)


def test_without_the_when_term_no_row_has_it(trip_repo, monkeypatch):
    monkeypatch.setattr(C, "K_WHEN", 0.0)
    result = trip_repo.recall("When did Ana climb the lighthouse?", types=["episodic"])
    assert all("when" not in row.terms for row in result.records)


def test_in_a_gathering_question_the_best_row_of_each_session_gets_the_new_session_term(trip_repo):
    """"What sports does Ana play?" gathers a list: the best row of each session gets ``session+``, and a row
    of a session a better row already cites does not."""
    result = trip_repo.recall("What sports does Ana play?", types=["episodic"])
    assert result.plan.operator in C.GATHERING
    marked = [_turn(row).split(":")[0] for row in sorted(result.records, key=lambda r: -r.score)
              if "session+" in row.terms]
    assert sorted(marked) == ["D1", "D2"]
    single = trip_repo.recall("What did Ana climb?", types=["episodic"])
    assert all("session+" not in row.terms for row in single.records)


def test_a_text_says_when_with_a_date_a_duration_or_a_dating_word():
    assert says_when("We met on 3 March.") and says_when("I moved here four years ago.")
    assert says_when("I have known her for six years.") and says_when("Last Friday it rained.")
    assert says_when("I have painted since I was a child.") and says_when("I went there in 2019.")
    assert not says_when("The lighthouse is my favourite place.") and not says_when("")


PARTY = [
    ("Ana", "For the garden party on Sunday I baked a lemon cake with blueberries and a honey glaze on top."),
    ("Ben", "A lemon cake for the party, lovely!"),
    ("Ana", "The neighbours brought folding chairs and a big bowl of cherries."),
]
CHORES = [
    ("Ben", "I repaired the kitchen shelf that fell down last month."),
    ("Ana", "Good, the shelf was a mess."),
]


@pytest.fixture(scope="module")
def party_repo(tmp_path_factory):
    memory = _talk(tmp_path_factory.mktemp("party"), PARTY, "4:00 pm on 9 June, 2024", CHORES,
                   "11:00 am on 15 June, 2024")
    yield memory
    memory.close()


def test_a_row_that_says_few_words_gets_the_brief_term_and_ranks_below_the_ones_that_tell(party_repo):
    """Ben's reaction repeats the question's words in six; Ana's turns tell what she baked and who brought what.
    The reaction gets ``brief`` and ranks below both of Ana's turns (the next test: without the term, it ranks
    above the second)."""
    result = party_repo.recall("What cake did Ana bake for the garden party?", types=["episodic"])
    order = [_turn(row) for row in result.records]
    terms = {_turn(row): row.terms for row in result.records}
    assert terms["D1:2"].get("brief") == pytest.approx(-C.K_BRIEF)
    assert "brief" not in terms["D1:1"] and "brief" not in terms["D1:3"]
    assert order.index("D1:1") < order.index("D1:3") < order.index("D1:2")


def test_without_the_brief_term_the_reaction_ranks_above_the_turn_that_tells_more(party_repo, monkeypatch):
    monkeypatch.setattr(C, "K_BRIEF", 0.0)
    result = party_repo.recall("What cake did Ana bake for the garden party?", types=["episodic"])
    order = [_turn(row) for row in result.records]
    assert order.index("D1:2") < order.index("D1:3")
    assert all("brief" not in row.terms for row in result.records)


def test_a_turn_says_the_words_after_its_speaker_and_a_passage_is_no_turn():
    assert said_words("Ben: A lemon cake for the party, lovely!", "Ben") == 7
    assert said_words("Ben: Thanks!", "Ben") == 1 and said_words("Ben:", "Ben") == 0
    assert said_words("Ana: Thanks!", "Ben") is None  # not Ben's turn
    assert said_words("Room: Lab 2", None) is None  # a document's line: no one's turn
