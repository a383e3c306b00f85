"""The word lists now live in :mod:`memrepo.nlp.lexicon`; this name stays for the modules that still import
them from here (read/recall.py, read/plan.py) until their owners change the import."""

from __future__ import annotations

from memrepo.nlp.lexicon import *  # noqa: F401,F403
from memrepo.nlp.lexicon import ADDRESSEE_ROLE, DIALOGUE_ACTS  # noqa: F401
