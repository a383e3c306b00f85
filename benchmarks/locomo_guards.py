"""Regression guards of the offline extractor on LoCoMo development turns, read from ../shared at run time.

    .venv/bin/python benchmarks/locomo_guards.py [--data ../shared/data/locomo/locomo-dev.json] [--json]

The offline rules were fixed one development turn at a time (issue 19), and the unit tests once held those
turns verbatim. They now hold sentences written for them (tests/test_offline_*.py, tests/test_graph_*.py);
the turns themselves stay in the data folder, and each guard here names one by conversation and turn id
(``dia_id``). The turn is given to the offline extractor as ingestion gives it (the speaker's line, then the
shared image's caption on its own line) and the guard checks what the rule it was written for still does:
in predicates, roles, entity types, literals and counts, never in the turn's words. The people a check
names (the speaker, the person spoken to) come from the data too.

Prints one line per guard (PASS or FAIL, the turn, the rule; a failure's problems below it) and a total;
``--json`` prints the same as one JSON object. Exit status 1 if a guard fails; without the data folder (a
user's clone) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


@dataclass
class Turn:
    """One development turn as the extractor saw it, and what it returned."""

    speaker: str
    other: str  # the other speaker of the conversation: the person spoken to
    text: str
    caption: str
    frames: list[dict[str, Any]]
    types: dict[str, str]  # entity -> type

    def of(self, predicate: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["predicate"] == predicate]

    def predicates(self) -> list[str]:
        return [f["predicate"] for f in self.frames]


Check = Callable[[Turn], list[str]]


@dataclass(frozen=True)
class Guard:
    conversation: str
    turn: str  # dia_id
    rule: str
    check: Check


# --- what a frame is made of ----------------------------------------------------------------------------


def arms(frame: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["role"], a["entity"]) for a in frame["arms"]]


def literals(frame: dict[str, Any]) -> dict[str, str]:
    return {lit["key"]: lit["value"] for lit in frame["literals"]}


def first(frame: dict[str, Any]) -> tuple[str, str] | None:
    found = arms(frame)
    return found[0] if found else None


def led_by(turn: Turn, predicate: str, role: str, who: str) -> list[dict[str, Any]]:
    """The frames of ``predicate`` whose first arm is ``who`` in ``role``."""
    return [f for f in turn.of(predicate) if first(f) == (role, who)]


def need(condition: bool, problem: str) -> list[str]:
    return [] if condition else [problem]


def photo_frames(turn: Turn) -> list[dict[str, Any]]:
    return [f for f in turn.frames if literals(f).get("medium") == "photo"]


def caption_word(turn: Turn, pattern: str) -> str | None:
    """A word of the turn's caption the pattern's group selects (read from the data, never written here)."""
    m = re.search(pattern, turn.caption.lower())
    return m.group(1) if m else None


# --- the checks, one per rule ---------------------------------------------------------------------------


def state_of_the_speaker(themes: int) -> Check:
    def check(turn: Turn) -> list[str]:
        states = led_by(turn, "state", "subject", turn.speaker)
        if not states:
            return [f"no 'state' frame with the speaker as subject (predicates: {turn.predicates()})"]
        roles = [role for role, _ in arms(states[0])]
        return (need(roles.count("theme") >= themes, f"the state has {roles.count('theme')} theme arms, not "
                     f"{themes} or more")
                + need("quality" in literals(states[0]), "the state has no 'quality' literal"))
    return check


def no_act_of_the_speaker(*predicates: str, read: str | None = None) -> Check:
    """A gerund subject: none of the gerunds' predicates has the speaker as its doer; the turn's other sentence
    (``read``: the predicate of the speaker's frame it gives) is still read."""
    def check(turn: Turn) -> list[str]:
        speakers = [f["predicate"] for f in turn.frames if (first(f) or ("", ""))[1] == turn.speaker]
        done = [p for p in speakers if p in predicates]
        return (need(not done, f"the speaker is the doer of {done}")
                + need(read is None or read in speakers, f"the turn's '{read}' frame of the speaker is gone"))
    return check


def own_act_without_the_judgement(turn: Turn) -> list[str]:
    acts = led_by(turn, "source", "agent", turn.speaker)
    if not acts:
        return [f"no 'source' frame with the speaker as agent (predicates: {turn.predicates()})"]
    roles = {role for role, _ in arms(acts[0])}
    cut = [p for p in turn.predicates() if p != "source" and "source".startswith(p)]
    return (need(roles <= {"agent", "theme", "purpose"}, f"the act has other arms: {sorted(roles)}")
            + need(not cut, f"a cut stem among the predicates: {cut}"))


def photo_of_a_holder_shows_the_thing_held(turn: Turn) -> list[str]:
    holder = caption_word(turn, r"photo of an? (\w+) holding")
    shown = photo_frames(turn)
    if holder is None or len(shown) != 1:
        return [f"expected one photo frame and a caption '... of a <someone> holding ...' ({len(shown)} frames)"]
    frame = arms(shown[0])
    depicted = [entity for _role, entity in frame[1:]]
    people = [e for e, t in turn.types.items() if t == "person" and e not in (turn.speaker, turn.other)]
    held = turn.caption.lower().split("holding", 1)[1]
    return (need(frame[0][1] == turn.speaker, "the photo frame is not the speaker's")
            + need(len(depicted) == 1 and depicted[0].lower() in held, "the photo frame does not name one thing "
                   "the holder holds")
            + need(holder not in [e.lower() for e in depicted] and not people, "the unnamed holder is an anchor"))


def photo_of_a_group_shows_the_members(turn: Turn) -> list[str]:
    collective = caption_word(turn, r"photo of an? (\w+) of")
    shown = photo_frames(turn)
    if collective is None or len(shown) != 1:
        return [f"expected one photo frame and a caption '... of a <group> of ...' ({len(shown)} frames)"]
    depicted = [entity.lower() for _role, entity in arms(shown[0])[1:]]
    after = turn.caption.lower().split(f"{collective} of", 1)[1]
    return (need(bool(depicted) and all(e not in (collective,) for e in depicted), "the group word is the thing "
                 "shown")
            + need(bool(depicted) and depicted[0] in after, "the thing shown is not what the group is of"))


def a_clause_after_why(turn: Turn) -> list[str]:
    likes = led_by(turn, "like", "experiencer", turn.speaker)
    return need(len(likes) == 1 and [r for r, _ in arms(likes[0])] == ["experiencer", "theme"],
                f"no one 'like(experiencer=speaker, theme=...)' frame (predicates: {turn.predicates()})")


def verbless_clause_relates_nothing(turn: Turn) -> list[str]:
    return (need(not turn.of("associated"), "the verbless clause gave an 'associated' frame")
            + need(bool(led_by(turn, "greet", "agent", turn.speaker)), "the turn's greeting was not read"))


def imperative_verb_is_not_judged(turn: Turn) -> list[str]:
    praise = [f for f in led_by(turn, "praise", "agent", turn.speaker) if ("recipient", turn.other) in arms(f)]
    return (need(not turn.of("evaluate"), "an 'evaluate' frame judges the imperative")
            + need(bool(praise), "no 'praise' of the person spoken to"))


def everything_seen_is_seen(turn: Turn) -> list[str]:
    seen = led_by(turn, "watch", "agent", turn.speaker)
    works = [r for r, _ in arms(seen[0])].count("work") if seen else 0
    return need(works == 2, f"the 'watch' frame has {works} 'work' arms, not 2")


def gerund_subject_of_a_verb(turn: Turn) -> list[str]:
    return (need(not turn.of("eat") and not turn.of("try"), "the gerund is read as the speaker's act")
            + need(bool(led_by(turn, "evaluate", "agent", turn.speaker)), "the judgement of the gerund is gone"))


def a_question_that_names_nothing(turn: Turn) -> list[str]:
    asks = led_by(turn, "ask", "agent", turn.speaker)
    return need(any(arms(f) == [("agent", turn.speaker), ("recipient", turn.other)] for f in asks),
                f"no 'ask(agent=speaker, recipient=other)' without topics (asks: {[arms(f)[1:] for f in asks]})")


def an_adjective_about_an_activity(turn: Turn) -> list[str]:
    states = led_by(turn, "state", "subject", turn.speaker)
    if not states:
        return ["no 'state' frame with the speaker as subject"]
    themes = [entity for role, entity in arms(states[0]) if role == "theme"]
    return (need("quality" in literals(states[0]), "the state has no 'quality' literal")
            + need(bool(themes) and themes[0].split()[0].endswith("ing"), "the first theme is not the activity"))


def kind_of_is_no_adjective(turn: Turn) -> list[str]:
    thanks = [f for f in led_by(turn, "thank", "agent", turn.speaker) if ("recipient", turn.other) in arms(f)]
    return (need(not turn.of("state"), "'kind of' gave a 'state' frame")
            + need(bool(thanks), "the turn's thanks to the person spoken to were not read"))


def whole_verb(predicate: str, role: str = "agent", **lits: str) -> Check:
    def check(turn: Turn) -> list[str]:
        found = led_by(turn, predicate, role, turn.speaker)
        cut = [p for p in turn.predicates() if p != predicate and predicate.startswith(p)]
        return (need(bool(found), f"no '{predicate}' frame with the speaker as {role} (predicates: "
                     f"{turn.predicates()})")
                + need(not cut, f"a cut stem among the predicates: {cut}")
                + need(not found or all(literals(found[0]).get(k) == v for k, v in lits.items()),
                       f"the '{predicate}' frame lacks the literals {lits}"))
    return check


def no_adverb_predicate(predicate: str) -> Check:
    def check(turn: Turn) -> list[str]:
        adverbs = [p for p in turn.predicates() if p.endswith("ly")]
        return (need(bool(led_by(turn, predicate, "agent", turn.speaker)), f"no '{predicate}' frame of the speaker")
                + need(not adverbs, f"adverb predicates: {adverbs}"))
    return check


def s_before_been_is_has(turn: Turn) -> list[str]:
    from memrepo.nlp.tokens import tokenize

    said = turn.text.split(": ", 1)[1]
    tokens = [t.low for t in tokenize(said)]
    return need(len(tokens) > 1 and tokens[1] == "has", "the first word's 's before 'been' is not read as 'has'")


def a_common_word_opening_is_no_candidate(turn: Turn) -> list[str]:
    resolved = [p for p in turn.predicates() if p in ("find", "leave")]
    return (need(not resolved, f"'she' was resolved: {resolved}")
            + need(bool(led_by(turn, "evaluate", "agent", turn.speaker)), "the turn's judgement was not read"))


def the_person_spoken_to_is_never_she(turn: Turn) -> list[str]:
    naming = sorted({f["predicate"] for f in turn.frames if turn.other in [e for _r, e in arms(f)]})
    adopted = led_by(turn, "adopt", "adopter", turn.speaker)
    adoptee = [e for r, e in arms(adopted[0]) if r == "adoptee"] if adopted else []
    return (need(naming == ["do"], f"frames naming the person spoken to: {naming}, not only 'do'")
            + need(bool(adoptee) and turn.types.get(adoptee[0]) == "animal", "no adoption of an animal"))


def travel_to_a_named_group(turn: Turn) -> list[str]:
    went = led_by(turn, "travel", "traveler", turn.speaker)
    if not went:
        return [f"no 'travel' frame with the speaker as traveler (predicates: {turn.predicates()})"]
    frame = arms(went[0])
    return (need(len(frame) == 2 and len(frame[1][1].split()) >= 3, "the place is not one name of three words "
                 "or more")
            + need(went[0]["status"] == "done", f"status {went[0]['status']!r}, not 'done'"))


def a_quoted_title_is_one_work(turn: Turn) -> list[str]:
    title = re.search(r'"([^"]+)"', turn.text)
    read = led_by(turn, "read", "reader", turn.speaker)
    works = [e for r, e in arms(read[0]) if r == "work"] if read else []
    return (need(title is not None and works == [title.group(1)], "the quoted title is not the 'work' read")
            + need(bool(works) and turn.types.get(works[0]) == "work", "the title is not typed 'work'"))


GUARDS: tuple[Guard, ...] = (
    Guard("conv-42", "D2:23", "an adjective after 'be' with a preposition is a state", state_of_the_speaker(2)),
    Guard("conv-30", "D18:7", "a gerund subject is not the speaker's act",
          no_act_of_the_speaker("connect", "contact", read="ask")),
    Guard("conv-41", "D1:5", "a gerund subject is not the speaker's act",
          no_act_of_the_speaker("kickbox", "exercise", read="ask")),
    Guard("conv-26", "D12:11", "a gerund subject is not the speaker's act",
          no_act_of_the_speaker("find", "cling", read="have")),
    Guard("conv-30", "D18:5", "a gerund with the speaker's own things is her act, without the judgement; whole "
          "verb", own_act_without_the_judgement),
    Guard("conv-26", "D4:1", "a photo of an unnamed person shows what the person holds",
          photo_of_a_holder_shows_the_thing_held),
    Guard("conv-42", "D19:15", "a photo of a group of things shows the things", photo_of_a_group_shows_the_members),
    Guard("conv-43", "D27:36", "'why' starts a clause", a_clause_after_why),
    Guard("conv-42", "D13:2", "a verbless clause relates nothing", verbless_clause_relates_nothing),
    Guard("conv-42", "D17:21", "an imperative verb is not the thing judged", imperative_verb_is_not_judged),
    Guard("conv-42", "D17:4", "everything seen is what was seen", everything_seen_is_seen),
    Guard("conv-41", "D13:31", "a gerund subject of a verb is not the speaker's act", gerund_subject_of_a_verb),
    Guard("conv-26", "D16:17", "the verb after a subject is no topic of a question", a_question_that_names_nothing),
    Guard("conv-41", "D1:8", "an adjective about an activity names the activity", an_adjective_about_an_activity),
    Guard("conv-42", "D15:3", "'kind of' is no adjective", kind_of_is_no_adjective),
    Guard("conv-41", "D8:23", "an adverb is no predicate", no_adverb_predicate("form")),
    Guard("conv-42", "D19:10", "a whole verb the lexicon does not know (-ing)", whole_verb("recharge")),
    Guard("conv-43", "D22:3", "a whole verb ending in -ss, negated", whole_verb("dress", negated="true")),
    Guard("conv-42", "D7:1", "a four-letter -ed form is a verb", whole_verb("dye")),
    Guard("conv-42", "D8:10", "'s before 'been' is 'has'", s_before_been_is_has),
    Guard("conv-41", "D21:7", "a word opening a sentence is a candidate that makes the pronoun rule decline",
          a_common_word_opening_is_no_candidate),
    Guard("conv-41", "D31:2", "the person spoken to is never 'she'", the_person_spoken_to_is_never_she),
    Guard("conv-26", "D1:3", "motion to a named group is travel, done", travel_to_a_named_group),
    Guard("conv-26", "D6:10", "a quoted title is one work", a_quoted_title_is_one_work),
)


# --- running them ---------------------------------------------------------------------------------------


def find_turn(conversations: dict[str, dict[str, Any]], conversation: str, dia_id: str
              ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    body = conversations.get(conversation, {}).get("conversation", {})
    for key, turns in body.items():
        if key.startswith("session_") and isinstance(turns, list):
            for turn in turns:
                if turn.get("dia_id") == dia_id:
                    return body, turn
    return None


def read_turn(body: dict[str, Any], turn: dict[str, Any]) -> Turn:
    """The turn as ingestion gives it to the offline extractor, and the extractor's reply."""
    from memrepo.nlp import analyzer

    speaker = str(turn["speaker"])
    people = [str(body["speaker_a"]), str(body["speaker_b"])]
    caption = str(turn.get("blip_caption") or "")
    text = f"{speaker}: {turn['text']}" + (f"\n[image: {caption}]" if caption else "")
    reply = analyzer().extract({"text": text, "actor": speaker, "participants": people,
                                "mention_time": "2023-05-08"})
    other = next((p for p in people if p != speaker), "")
    types = {e["name"]: e["type"] for e in reply.get("entities", [])}
    return Turn(speaker, other, text, caption, reply["frames"], types)


def run(conversations: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    results = []
    for guard in GUARDS:
        found = find_turn(conversations, guard.conversation, guard.turn)
        problems = ["no such turn in the data"] if found is None else guard.check(read_turn(*found))
        results.append({"conversation": guard.conversation, "turn": guard.turn, "rule": guard.rule,
                        "passed": not problems, "problems": problems})
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo development JSON file")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"skipped: {args.data} is not here (the LoCoMo development data is kept outside the project, "
              f"in ../shared/data/locomo)")
        return 0
    try:
        data = json.loads(args.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: {args.data}: {exc}", file=sys.stderr)
        return 1
    if not isinstance(data, list):
        print(f"error: {args.data}: not a list of conversations", file=sys.stderr)
        return 1
    results = run({str(c.get("sample_id")): c for c in data if isinstance(c, dict)})
    passed = sum(r["passed"] for r in results)
    if args.json:
        print(json.dumps({"guards": results, "passed": passed, "failed": len(results) - passed}, indent=2,
                         sort_keys=True))
    else:
        for r in results:
            print(f"{'PASS' if r['passed'] else 'FAIL'}  {r['conversation']} {r['turn']:<7} {r['rule']}")
            for problem in r["problems"]:
                print(f"        {problem}")
        print(f"{len(results)} guards: {passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
