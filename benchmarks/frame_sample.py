"""A random sample of the offline extractor's frames on LoCoMo turns, each printed next to its turn, to check by hand.

    .venv/bin/python benchmarks/frame_sample.py [--data ../shared/data/locomo/locomo-dev.json] [--n 100] [--seed 19]
        [--frameless] [--new-rule pronouns]

Every turn of every conversation is given to the offline extractor as ingestion gives it
(the speaker's line, then the shared image's caption on its own line); ``--n`` frames are
drawn at random from all the frames it returns. ``--new-rule pronouns`` draws only the frames the
sixth pass's rule adds (those a turn gets with it and not without it). docs/graph.md reports the hand check.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def turns(conversations: list[dict], new_rule: str | None = None) -> list[tuple[str, list[dict]]]:
    """Every turn as ingestion gives it to the extractor, with the frames the offline extractor returns (with
    ``new_rule``, only those the rule adds)."""
    from memrepo.nlp.rules import extract_offline

    out = []
    for conv in conversations:
        body = conv["conversation"]
        participants = [body["speaker_a"], body["speaker_b"]]
        for key in sorted(body):
            if not key.startswith("session_") or not isinstance(body[key], list):
                continue
            for turn in body[key]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f"\n[image: {turn['blip_caption']}]"
                # One fixed mention date for every turn: the sample does not hang on parsing session dates.
                variables = {"text": text, "actor": turn["speaker"], "participants": participants,
                             "mention_time": "2023-05-08"}
                found = extract_offline(variables)["frames"]
                if new_rule == "pronouns":
                    before = extract_offline(variables, pronouns=False)["frames"]
                    found = [f for f in found if f not in before]
                out.append((text, found))
    return out


def frames(conversations: list[dict], new_rule: str | None = None) -> list[tuple[str, dict]]:
    """Every frame of every turn, with the turn's text."""
    return [(text, frame) for text, found in turns(conversations, new_rule) for frame in found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-shaped JSON file")
    parser.add_argument("--n", type=int, default=100, help="frames to draw")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--frameless", action="store_true",
                        help="draw turns that get no frame instead (to judge which of them state something)")
    parser.add_argument("--new-rule", choices=["pronouns"],
                        help="draw only the frames this rule adds (pronouns: issue 19's sixth pass)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the shared data folder is not in this checkout)")
        return 0
    if args.frameless:
        every_turn = turns(json.loads(args.data.read_text(encoding="utf-8")))
        bare = [text for text, got in every_turn if not got]
        random.seed(args.seed)
        for n, text in enumerate(random.sample(bare, min(args.n, len(bare))), 1):
            print(f"{n}. {text[:230]!r}")
        print(f"{len(bare)} of {len(every_turn)} turns get no frame")
        return 0
    everything = frames(json.loads(args.data.read_text(encoding="utf-8")), args.new_rule)
    random.seed(args.seed)
    for n, (text, frame) in enumerate(random.sample(everything, min(args.n, len(everything))), 1):
        arms = ", ".join(f"{a['role']}={a['entity']}" for a in frame["arms"])
        lits = ", ".join(f"{lit['key']}={lit['value']}" for lit in frame["literals"])
        print(f"{n}. {frame['predicate']}({arms}{'; ' + lits if lits else ''}) [{frame['status']}]  <= {text[:230]!r}")
    print(f"{len(everything)} frames in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
