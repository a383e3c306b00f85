"""No evaluation text in the project: the LoCoMo and tau-bench development data stay in ../shared.

The offline rules were once tuned with LoCoMo turns pasted into comments and tests, so they did well on those
turns and nowhere else (issue 31). This guard reads the evaluation data at run time (every string of
../shared/data/locomo/*.json and ../shared/data/tau-bench/*.json: turns, captions, questions, answers, annotations,
agent and user messages, the policy, tool replies) and fails on any file of the project that repeats it, compared
lower-cased with punctuation dropped. What counts as repeating (``RUNS``): 6 words in a row of which 2 are outside
the stop list, or 5 with 3. Measured on the project as the review found it (commit 4b5d287): the 6-word runs found
76 places, the 5-word runs 22 more, all of them quotations (fragments such as a five-word remark about a hair
colour); everyday phrases ("I don't know what to do", "thank you so much, that means a lot") are mostly stop words
and do not count. 4 words with 3 outside the stop list found 11 more quotations but also everyday phrases ("... soon,
take care and ..."), so 4-word runs are looked for only beside a speaker's name (below). A run the data says in ``COMMON_IN`` or more conversations (or
tau-bench tasks) is a common phrase, not a quotation, and does not count either. In tests, a LoCoMo speaker's name
within two lines of 4 words of that speaker's own turns is flagged too: a development turn with its speaker,
shortened.

The data is compared, never printed in full: a failure names the file, the line and the words matched (the words
are the project's own text at that place). Without ../shared/data (a user's clone) the test skips.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

RUNS = ((6, 2), (5, 3))  # (words in a run, of which outside the stop list)
COMMON_IN = 3  # a run found in this many conversations or runs of the data is a common phrase
SPEAKER_NGRAM = 4  # a speaker's name with this many words of that speaker's turns, in tests
SPEAKER_WINDOW = 2  # lines either side of the name

SCANNED_DIRS = ("memrepo", "tests", "docs", "templates", "examples", "viewer")
SCANNED_FILES = ("README.md",)
SCANNED_GLOBS = ("benchmarks/*.py",)
SKIPPED_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", "node_modules"}

# Function words, chat fillers, the words every image caption starts with ("a photo of a ...") and the
# data's field name for captions.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each even ever few for from further get
    gets getting got had has have having he her here hers herself him himself his how i if in into is it its
    itself just let lets like me more most much must my myself no nor not now of off oh ok okay on once only or
    other our ours ourselves out over own really same she should so some such than that thats the their
    theirs them themselves then there theres these they theyre this those through to too under until up upon
    us very was way we well were weve what whats when where which while who whom why will with would yeah yes
    you your youre yours yourself yourselves im ive ill id dont doesnt didnt cant couldnt wont wouldnt isnt
    arent wasnt werent hasnt havent hadnt shouldnt youve youll youd hes shes its were theyve theyll lot lots
    one two go going gonna make made know think thing things something anything everything nothing see say
    said tell told want wanted need needed feel felt good great sure thanks thank hey hi hello wow
    photo picture image blip caption
    """.split()
)

_APOSTROPHE = re.compile(r"(?<=\w)['\u2019\u2018`](?=\w)")
_ESCAPE = re.compile(r"\\[ntr]")
_NON_WORD = re.compile(r"[^0-9a-z]+")


def words(text: str) -> list[str]:
    """Lower-cased words with punctuation dropped ("Don't!" is "dont"); a backslash escape is a space."""
    text = _ESCAPE.sub(" ", text.lower())
    text = _APOSTROPHE.sub("", text)
    return _NON_WORD.sub(" ", text).split()


def content(gram: tuple[str, ...]) -> int:
    """How many words of a run say something: outside the stop list, without digits (a number, an id)."""
    return sum(1 for word in gram if word not in STOP_WORDS and not any(c.isdigit() for c in word))


def grams(tokens: list[str], n: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    for start in range(len(tokens) - n + 1):
        yield start, tuple(tokens[start : start + n])


# ---- the evaluation data ---------------------------------------------------------------------------------------


def strings(value: object) -> Iterator[str]:
    """Every string in a JSON value; a string holding JSON (a tool's reply) is read as its strings."""
    if isinstance(value, str):
        if value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                yield value
            else:
                yield from strings(inner)
        else:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def locomo_sources() -> Iterator[tuple[str, object]]:
    """(conversation id, JSON value) for every LoCoMo file under the data folder (the corrections too)."""
    for path in sorted((DATA / "locomo").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data if isinstance(data, list) else [data]:
            key = item.get("sample_id", path.name) if isinstance(item, dict) else path.name
            yield f"locomo:{key}", item


def tau_sources() -> Iterator[tuple[str, object]]:
    """(run id, JSON value) for every tau-bench file under the data folder."""
    for path in sorted((DATA / "tau-bench").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for index, item in enumerate(data if isinstance(data, list) else [data]):
            key = item.get("task_id", index) if isinstance(item, dict) else index
            yield f"tau:{path.stem}:{key}", item


class Evaluation:
    """The word runs of the evaluation data, and each LoCoMo speaker's shorter runs."""

    def __init__(self, sources: Iterable[tuple[str, object]]) -> None:
        where: dict[tuple[str, ...], set[str]] = defaultdict(set)
        said_in: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.by_speaker: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for source, value in sources:
            for text in set(strings(value)):
                tokens = words(text)
                for n, least in RUNS:
                    for _, gram in grams(tokens, n):
                        if content(gram) >= least:
                            where[gram].add(source)
            if source.startswith("locomo:"):
                self._speakers(source, value, said_in)
        self.runs = {gram for gram, found in where.items() if len(found) < COMMON_IN}
        for speaker, runs in self.by_speaker.items():
            runs.difference_update(gram for gram in list(runs) if len(said_in[gram]) >= COMMON_IN)

    def _speakers(self, source: str, item: object, said_in: dict[tuple[str, ...], set[str]]) -> None:
        conversation = item.get("conversation") if isinstance(item, dict) else None
        if not isinstance(conversation, dict):
            return
        for key, turns in conversation.items():
            if not (key.startswith("session_") and isinstance(turns, list)):
                continue
            for turn in turns:
                name = str(turn.get("speaker", "")).lower()
                for _, gram in grams(words(str(turn.get("text", ""))), SPEAKER_NGRAM):
                    if name and content(gram) >= 2:
                        self.by_speaker[name].add(gram)
                        said_in[gram].add(source)


# ---- the project's files ---------------------------------------------------------------------------------------


def project_files() -> Iterator[Path]:
    for name in SCANNED_FILES:
        if (ROOT / name).is_file():
            yield ROOT / name
    for pattern in SCANNED_GLOBS:
        yield from sorted(ROOT.glob(pattern))
    for folder in SCANNED_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                yield path


def read_text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def tokens_with_lines(text: str) -> tuple[list[str], list[int]]:
    """The file's words in order (a sentence may run over several lines) and the line of each."""
    tokens: list[str] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        found = words(line)
        tokens.extend(found)
        lines.extend([number] * len(found))
    return tokens, lines


def quoted_runs(name: str, text: str, evaluation: Evaluation) -> list[str]:
    """One finding per stretch of the file that repeats the evaluation data: file:line and the words matched."""
    tokens, lines = tokens_with_lines(text)
    hit = [False] * len(tokens)
    for n, _ in RUNS:
        for start, gram in grams(tokens, n):
            if gram in evaluation.runs:
                hit[start : start + n] = [True] * n
    found: list[str] = []
    index = 0
    while index < len(tokens):
        if not hit[index]:
            index += 1
            continue
        end = index
        while end < len(tokens) and hit[end]:
            end += 1
        found.append(f"{name}:{lines[index]}: {' '.join(tokens[index:end])}")
        index = end
    return found


def speaker_turns(name: str, text: str, evaluation: Evaluation) -> list[str]:
    """In a test, a LoCoMo speaker's name within a few lines of a short run of that speaker's own turns."""
    source_lines = text.splitlines()
    line_words = [words(line) for line in source_lines]
    found: list[str] = []
    for number, these in enumerate(line_words):
        for speaker in sorted(set(these) & evaluation.by_speaker.keys()):
            low, high = max(0, number - SPEAKER_WINDOW), number + SPEAKER_WINDOW + 1
            nearby = [word for line in line_words[low:high] for word in line]
            runs = [gram for _, gram in grams(nearby, SPEAKER_NGRAM) if gram in evaluation.by_speaker[speaker]]
            if runs:
                said = "; ".join(" ".join(gram) for gram in runs[:3])
                found.append(f"{name}:{number + 1}: LoCoMo speaker {speaker!r} beside words of their turns: {said}")
    return found


def findings(evaluation: Evaluation) -> list[str]:
    """The places of the project that repeat the data."""
    this_file = Path(__file__).resolve()
    found: list[str] = []
    for path in project_files():
        if path.resolve() == this_file:
            continue
        text = read_text(path)
        if text is None:
            continue
        name = path.relative_to(ROOT).as_posix()
        found.extend(quoted_runs(name, text, evaluation))
        if path.relative_to(ROOT).parts[0] == "tests":
            found.extend(speaker_turns(name, text, evaluation))
    return found


@pytest.fixture(scope="module")
def evaluation() -> Evaluation:
    if not (DATA / "locomo").is_dir() and not (DATA / "tau-bench").is_dir():
        pytest.skip(f"no evaluation data at {DATA} (a user's clone has none): nothing to compare the project with")
    return Evaluation([*locomo_sources(), *tau_sources()])


def a_turn(evaluation: Evaluation) -> str:
    """A LoCoMo turn whose first words are a run the guard counts (read at run time, never written down here)."""
    n = RUNS[0][0]
    for _, item in locomo_sources():
        conversation = item.get("conversation", {}) if isinstance(item, dict) else {}
        for key, turns in conversation.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = str(turn.get("text", ""))
                    if tuple(words(text)[:n]) in evaluation.runs:
                        return text
    pytest.skip("no LoCoMo turn in the data folder to try the guard on")


def test_the_guard_finds_a_turn_however_it_is_written(evaluation):
    """A development turn pasted into a comment, upper-cased and wrapped over two lines, is found at its line."""
    turn = a_turn(evaluation).split()
    text = f"x = 1\n# For example: {' '.join(turn[:2]).upper()}\n#   {' '.join(turn[2:])}\n"
    lines = [finding.split(":")[1] for finding in quoted_runs("example.py", text, evaluation)]
    assert lines[:1] == ["2"], f"the turn was found at lines {lines} of 4"  # never the words: they are the data's


def test_the_guard_ignores_everyday_phrases(evaluation):
    """Phrases anyone writes are no quotation, however often the conversations say them."""
    text = (
        "I don't know what to do, so let me think about it.\n"
        "Thank you so much, that means a lot to me!\n"
        "How are you doing today? I hope you have a great weekend.\n"
        "See you soon, take care and have a nice day.\n"
        "Let me know how it goes! I'm so happy for you, that sounds like a lot of fun.\n"
        "Have a great time at the party and say hi to everyone for me.\n"
    )
    assert quoted_runs("everyday.txt", text, evaluation) == []


def test_the_guard_finds_a_speaker_with_a_shortened_turn(evaluation):
    """In a test, a speaker's name beside a few words of that speaker's turn is a development turn, shortened."""
    turn = a_turn(evaluation)
    speaker = next(
        name
        for name, runs in evaluation.by_speaker.items()
        if any(gram in runs for _, gram in grams(words(turn), SPEAKER_NGRAM))
    )
    short = " ".join(
        next(gram for _, gram in grams(words(turn), SPEAKER_NGRAM) if gram in evaluation.by_speaker[speaker])
    )
    text = f'turns = [\n    ("{speaker.title()}", "{short}"),\n]\n'
    assert len(speaker_turns("tests/test_example.py", text, evaluation)) == 1
    assert not speaker_turns("tests/test_example.py", f'("Someone", "{short}")\n', evaluation)


def test_no_file_of_the_project_repeats_the_evaluation_data(evaluation):
    """memrepo/, tests/, benchmarks/*.py, docs/, templates/, examples/, viewer/ and README.md: own sentences only."""
    found = findings(evaluation)
    if found:
        pytest.fail(
            f"{len(found)} places repeat LoCoMo or tau-bench text (../shared/data); write your own sentences:\n"
            + "\n".join(found),
            pytrace=False,
        )

