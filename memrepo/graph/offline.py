"""The offline rules moved to :mod:`memrepo.nlp` (issue 31); these names stay for the modules whose owners have
not changed their import lines yet (read/span.py, read/plan.py). New code imports from memrepo.nlp."""

from __future__ import annotations

from memrepo.nlp.literals import DIGIT_PATTERNS, LITERAL_PATTERNS, find_literals
from memrepo.nlp.morphology import lemma, predicate_for
from memrepo.nlp.rules import extract_offline

__all__ = ["DIGIT_PATTERNS", "LITERAL_PATTERNS", "extract_offline", "find_literals", "lemma", "predicate_for"]
