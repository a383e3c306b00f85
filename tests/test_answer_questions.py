"""The offline answer on a question set about examples/conversation.txt.

The questions were written from reading the conversation, before the rules
were tuned, one or more per kind: who, where, when, how much, how many, how
long, which, what ... called, and questions the conversation does not answer.
Each expected answer lists words the answer must hold; the cited record must
hold the evidence sentence.
"""

from __future__ import annotations

import pytest

from memrepo.api import MemoryRepo
from memrepo.read.span import NOT_IN_MEMORY, question_kind

from conftest import EXAMPLES

# (question, words the answer must hold, words the cited record must hold)
ANSWERABLE = [
    # who
    ("Who teaches the pottery course?", ["Hiroshi Tanabe"], ["taught"]),
    ("Who runs the guesthouse in Yanaka?", ["Okada"], ["guesthouse"]),
    ("Who is Mia's manager?", ["Ana"], ["manager"]),
    ("Who took Jonas to Menya Kaiko?", ["Lena"], ["took me there"]),
    ("Who is Mia climbing Mount Fuji with?", ["Yuki", "Tom"], ["Mount Fuji"]),
    ("Who is Mia's teacher at the language school?", ["Sensei Mori"], ["Sensei Mori"]),
    # where
    ("Where did Mia buy her Suica card?", ["Tokyo Station"], ["Suica"]),
    ("Where did Mia buy the down jacket?", ["Shinjuku"], ["down jacket"]),
    ("Where is the pottery course?", ["Kasama"], ["pottery course"]),
    ("Where is Mia's new apartment?", ["Demachiyanagi"], ["apartment"]),
    ("Where did Jonas adopt Pixel from?", ["Braga"], ["shelter"]),
    ("Where did Lena do a pottery course?", ["Porto"], ["Lena did a course"]),
    ("Where is the ramen place Menya Kaiko?", ["Ueno"], ["ramen place"]),
    # when
    ("When did Mia land in Tokyo?", ["1 May 2023"], ["landed in Tokyo"]),
    ("When is Mia climbing Mount Fuji?", ["12 August 2023"], ["climb"]),
    ("When does the Japanese language program start?", ["July 2023"], ["language program"]),
    ("When did Lena climb Mount Fuji?", ["2021"], ["Lena climbed"]),
    ("When did Jonas adopt Pixel?", ["week before 9 May 2023"], ["adopted a dog"]),
    ("When did Mia move to Kyoto?", ["weekend before 14 June 2023"], ["moved to Kyoto"]),
    # how much
    ("How much was the shoyu ramen?", ["980 yen"], ["shoyu ramen"]),
    ("How much did the down jacket cost?", ["12,800 yen"], ["down jacket"]),
    ("How much is the tuition at the language school?", ["420,000 yen"], ["Tuition"]),
    ("How much did Mia put on her Suica card?", ["5,000 yen"], ["5,000 yen"]),
    # how many
    ("How many students are in Mia's class?", ["11"], ["students"]),
    ("How many sessions does the pottery course have?", ["4"], ["sessions"]),
    ("How many bowls did Mia make?", ["2"], ["bowls"]),
    ("How many pieces did Mia make in the pottery course?", ["7"], ["pieces"]),
    ("How many times has Mia been back to Menya Kaiko?", ["3"], ["back 3 times"]),
    ("How many hours did the flight from Lisbon take?", ["17"], ["flight"]),
    # how long
    ("How long is Mia staying in Yanaka?", ["three weeks"], ["Yanaka"]),
    ("How long is the Japanese language program?", ["6-month"], ["language program"]),
    # which
    ("Which trail will Mia take up Mount Fuji?", ["Yoshida"], ["trail"]),
    ("Which company does Mia work for?", ["Corvo Design"], ["Corvo Design"]),
    ("Which river is near Mia's new apartment?", ["Kamo"], ["river"]),
    ("Which half marathon is Jonas training for?", ["Porto"], ["marathon"]),
    # what ... called / named
    ("What is Jonas's dog called?", ["Pixel"], ["greyhound"]),
    ("What is the name of the ramen place near Ueno?", ["Menya Kaiko"], ["Ueno"]),
]
UNANSWERABLE = [
    "What is Mia's favourite colour?",
    "Who is Mia's dentist?",
    "How much did Jonas pay for Pixel?",
    "When did Jonas get married?",
    "How many cats does Jonas have?",
    "Where does Ana live?",
]


@pytest.fixture(scope="module")
def example_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("questions") / "memory"
    MemoryRepo.init(root).close()
    repo = MemoryRepo.open(root, environ={})
    repo.ingest([EXAMPLES / "conversation.txt"])
    yield repo
    repo.close()


@pytest.mark.parametrize("question,words,evidence", ANSWERABLE, ids=[q for q, _, _ in ANSWERABLE])
def test_offline_answer_is_the_span_of_the_asked_kind(example_repo, question, words, evidence):
    answer = example_repo.ask(question)
    for word in words:
        assert word.lower() in answer.answer.lower(), (answer.answer, answer.quote)
    assert len(answer.answer) < 60, answer.answer  # a span, not a quoted turn
    assert answer.record_ids, answer
    cited = example_repo.get(answer.record_ids[0])
    assert any(e.lower() in cited.text.lower() for e in evidence), (cited.text, answer.answer)
    assert answer.record_ids[0] in answer.quote


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_offline_answer_says_not_in_memory_instead_of_an_unrelated_sentence(example_repo, question):
    answer = example_repo.ask(question)
    assert answer.answer == NOT_IN_MEMORY, (answer.answer, answer.quote)
    assert answer.record_ids == []


@pytest.mark.parametrize("question,kind", [
    ("Who teaches the pottery course?", "person"), ("Where did Mia buy her Suica card?", "place"),
    ("When did Mia land in Tokyo?", "date"), ("What year did Lena climb Mount Fuji?", "date"),
    ("How much did the down jacket cost?", "price"), ("How many bowls did Mia make?", "count"),
    ("How long is the program?", "duration"), ("Which trail will Mia take?", "place"), ("Which company does Mia work for?", "which"),
    ("Which city did Mia move to?", "place"), ("What is Jonas's dog called?", "name"),
    ("What did Mia buy in Shinjuku?", "thing"),
])
def test_question_kind(question, kind):
    assert question_kind(question).name == kind


def test_a_thing_question_quotes_the_sentence_of_what_it_asks_not_the_one_that_names_the_person(tmp_path):
    """Seen by a new user: "What does Lena work as?" quoted "Jonas's sister Lena lives in Hamburg."."""
    root = tmp_path / "memory"
    MemoryRepo.init(root).close()
    with MemoryRepo.open(root, environ={}) as repo:
        repo.remember("Jonas's sister Lena lives in Hamburg. She works as an architect.", type="semantic")
        answer = repo.ask("What does Lena work as?")
        assert "architect" in answer.answer and "Hamburg" not in answer.answer, answer.answer
        assert "Hamburg" in repo.ask("Where does Lena live?").answer
