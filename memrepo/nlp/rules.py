"""The deterministic analyzer: the stages of :mod:`memrepo.nlp` put together (``ANALYZERS["rules"]``).

No model is available offline, so this is a small shallow parser: a record's lines are
read with their speakers (:mod:`~memrepo.nlp.discourse`), each line split into sentences
(:mod:`~memrepo.nlp.tokens`); a sentence is a shared photo, a question, dialogue acts
(:mod:`~memrepo.nlp.acts`) or clauses (:mod:`~memrepo.nlp.clauses`), whose values are
literals (:mod:`~memrepo.nlp.literals`) and whose noun phrases are entities
(:mod:`~memrepo.nlp.chunks`). Appositives ("my sister Ana", "a baker called Rui
Alves") become their own frames. The reply has the shape of the extractor role's
schema (:data:`memrepo.graph.extract.EXTRACTION_SCHEMA`).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Iterable

from memrepo.nlp import names
from memrepo.nlp.acts import VISUAL_RE, add_acts, dialogue_acts, judgement, shared_visual
from memrepo.nlp.clauses import sentence_frames
from memrepo.nlp.discourse import Discourse, split_speaker
from memrepo.nlp.literals import Literal, find_literals
from memrepo.nlp.morphology import lemma, singular
from memrepo.nlp.questions import Question, classify
from memrepo.nlp.tokens import Tok, split_sentences, tokenize

MAX_ITEMS = 60  # entities and frames per reply (EXTRACTION_SCHEMA's maxItems)
MAX_ARMS = 12  # arms and literals per frame
MAX_PREDICATE = 60  # characters of a predicate
_MID_SENTENCE_CAPITAL_RE = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+")


def extract_offline(variables: dict[str, Any], pronouns: bool = True) -> dict[str, Any]:
    """Entities and frames of one record, by rule; the reply shape of the ``extractor`` role.

    Args:
        variables: ``text``, ``actor``, ``participants``, ``mention_time``, ``status`` (as given to the role).
        pronouns: resolve a sentence-opening third-person pronoun to the earlier sentences' one subject
            person (off only to measure the rule: ``benchmarks/frame_sample.py --new-rule pronouns``).
    """
    ctx = Discourse(variables, pronouns)
    lines = ctx.speaker_lines(str(variables.get("text") or ""))
    for _speaker, line in lines:
        ctx.known_caps.update(_MID_SENTENCE_CAPITAL_RE.findall(line))
    for speaker, line in lines:
        ctx.speaker = speaker
        for sentence in split_sentences(line):
            _sentence(ctx, sentence)
            ctx.sentence_read(sentence)
    # The reply must fit the extractor role's schema (at most 60 of each); long documents keep their first ones.
    return {
        "entities": [{"name": ctx.entities[k][0], "type": ctx.entities[k][1]} for k in ctx.order][:MAX_ITEMS],
        "frames": [
            {
                "predicate": f.predicate[:MAX_PREDICATE],
                "arms": [{"role": r, "entity": e} for r, e in f.arms][:MAX_ARMS],
                "literals": [{"key": k, "value": v} for k, v in f.literals][:MAX_ARMS],
                "event_time": f.event_time,
                "status": f.status,
            }
            for f in ctx.frames[:MAX_ITEMS]
        ],
    }


def _sentence(ctx: Discourse, sentence: str) -> None:
    """One sentence: a shared photo, else its dialogue acts and (unless they are all it says) its clauses or,
    when those assert nothing, the judgement it makes."""
    if VISUAL_RE.fullmatch(sentence.strip()):
        shared_visual(ctx, sentence.strip())
        return
    acts, only = dialogue_acts(ctx, sentence)
    if not only:
        before = len(ctx.frames)
        sentence_frames(ctx, sentence)
        if len(ctx.frames) == before:
            judgement(ctx, sentence)
    add_acts(ctx, acts)


class RulesAnalyzer:
    """The deterministic :class:`memrepo.nlp.Analyzer`: the stages of memrepo/nlp, no model."""

    name = "rules"

    def sentences(self, text: str, *, keep_quotes: bool = False) -> list[str]:
        return split_sentences(text, keep_quotes=keep_quotes)

    def tokens(self, text: str) -> list[Tok]:
        return tokenize(text)

    def lemma(self, word: str) -> str:
        return lemma(word)

    def singular(self, word: str) -> str:
        return singular(word)

    def literals(self, sentence: str, mention: date | None) -> tuple[str, list[Literal]]:
        return find_literals(sentence, mention)

    def split_speaker(self, line: str) -> tuple[str, str]:
        return split_speaker(line)

    def extract(self, variables: dict[str, Any]) -> dict[str, Any]:
        return extract_offline(variables)

    def question(self, text: str) -> Question:
        return classify(text)

    def name_words(self, name: str) -> tuple[str, ...]:
        return names.name_words(name)

    def geographic_title(self, name: str) -> tuple[str, str] | None:
        return names.geographic_title(name)

    def says_title(self, title: str, texts: Iterable[str]) -> bool:
        return names.says_title(title, texts)
