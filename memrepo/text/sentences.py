"""Sentence splitting: :func:`memrepo.nlp.tokens.split_sentences`, named here for the modules that import it
from its former home."""

from __future__ import annotations

from memrepo.nlp.tokens import split_sentences

__all__ = ["split_sentences"]
