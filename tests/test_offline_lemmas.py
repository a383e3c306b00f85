"""The offline extractor's lemmas of verbs its lexicon does not know: whole words, never cut stems (issue 19).

The old suffix rules left ``sourc`` (sourcing), ``dres`` (dress), ``recharg`` (recharging) as predicates:
frames no question could ask for. The e a verb drops before -ed/-ing is restored by spelling rules.
"""

from __future__ import annotations

import pytest

from memrepo.graph import lexicon as lx
from memrepo.graph.offline import extract_offline, lemma

CASES = {
    "sourcing": "source", "recharging": "recharge", "rehearsed": "rehearse", "acquired": "acquire",
    "figured": "figure", "combined": "combine", "overcoming": "overcome", "excited": "excite",
    "juggling": "juggle", "achieving": "achieve", "skating": "skate", "color-coded": "color-code",
    "dress": "dress", "dresses": "dress", "kissed": "kiss", "added": "add", "stopped": "stop",
    "visited": "visit", "repairing": "repair", "treating": "treat", "singing": "sing", "thing": "thing",
    "indeed": "indeed", "focusing": "focus", "bowling": "bowl", "fishing": "fish", "texting": "text",
}


@pytest.mark.parametrize("form, expected", sorted(CASES.items()))
def test_lemma_restores_whole_words(form, expected):
    assert lemma(form) == expected


def test_the_cases_exercise_the_rules_not_the_lexicon():
    """Most expected lemmas are outside the verb lexicon: the spelling rules, not a table, give them."""
    assert sum(v not in lx.VERBS for v in CASES.values()) >= 15


@pytest.mark.parametrize("text, predicate", [
    ("Gina: Sourcing trendy pieces for my store was a big hurdle.", "source"),
    ("Joanna: I'm recharging this weekend with a long walk.", "recharge"),
    ("Tim: I didn't dress as any character, but I wore my scarf.", "dress"),
])
def test_frames_carry_the_whole_verb(text, predicate):
    out = extract_offline({"text": text, "actor": text.split(":")[0], "participants": [], "mention_time": "2023-05-08"})
    predicates = [f["predicate"] for f in out["frames"]]
    assert predicate in predicates, predicates
    assert not any(p != predicate and predicate.startswith(p) for p in predicates), predicates
