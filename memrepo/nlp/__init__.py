"""The offline language layer: one :class:`Analyzer` protocol over explicit stages.

With no model configured, memrepo's extractor, writers, judges and answerer read text
with deterministic rules. They read it in stages, each a module with its own tests:

- :mod:`~memrepo.nlp.tokens`: sentences and tokens;
- :mod:`~memrepo.nlp.morphology`: lemmas, the one singularizer, the one number-word table, the anchor key;
- :mod:`~memrepo.nlp.literals`: dates, times, prices, counts, durations, measurements;
- :mod:`~memrepo.nlp.chunks`: noun phrases, names and their entity types;
- :mod:`~memrepo.nlp.clauses` and :mod:`~memrepo.nlp.roles`: clauses, their verbs and the roles of their arms;
- :mod:`~memrepo.nlp.discourse` and :mod:`~memrepo.nlp.acts`: speaker lines, pronouns, dialogue acts;
- :mod:`~memrepo.nlp.names`: names compared as names (folded words, geographic titles), for the judges;
- :mod:`~memrepo.nlp.lexicon`: the word lists, as data.

:class:`memrepo.nlp.rules.RulesAnalyzer` puts them together. Code above this layer takes
an analyzer from its context (:attr:`memrepo.context.Context.analyzer`) or its caller,
resolved by name through :data:`memrepo.capabilities.ANALYZERS`, and never imports the
rules themselves, so another implementation (a model pipeline) fits behind the protocol.

A layer beside ``memrepo/text/``: it imports ``text/``, the capability table and the errors only.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, Iterable, Protocol, runtime_checkable

from memrepo.capabilities import ANALYZERS, resolve
from memrepo.errors import RepositoryError

if TYPE_CHECKING:
    from memrepo.nlp.literals import Literal
    from memrepo.nlp.questions import Question
    from memrepo.nlp.tokens import Tok

DEFAULT_ANALYZER = "rules"


@runtime_checkable
class Analyzer(Protocol):
    """What reads English text for the offline roles: the stages, and the extractor's reply built on them."""

    name: str

    def sentences(self, text: str, *, keep_quotes: bool = False) -> list[str]:
        """The sentences of ``text``: as the extractor splits them, or with ``keep_quotes`` as the writers
        store them (a closing quote stays with its sentence)."""
        ...

    def tokens(self, text: str) -> list["Tok"]:
        """The tokens of one sentence."""
        ...

    def lemma(self, word: str) -> str:
        """The lemma of a verb form (``bought`` -> ``buy``)."""
        ...

    def singular(self, word: str) -> str:
        """The singular of a lowercase plural (``cities`` -> ``city``); other words unchanged."""
        ...

    def literals(self, sentence: str, mention: date | None) -> tuple[str, list["Literal"]]:
        """The values of ``sentence`` (dates resolved against ``mention``), and the sentence with each cut out."""
        ...

    def split_speaker(self, line: str) -> tuple[str, str]:
        """``(speaker, text)`` of a "Name: text" line; ``("", line)`` without one."""
        ...

    def extract(self, variables: dict[str, Any]) -> dict[str, Any]:
        """Entities and frames of one record: the reply of the ``extractor`` role."""
        ...

    def question(self, text: str) -> "Question":
        """The reading of a question: what it asks for (answer types, the noun asked), its names, operator and
        time constraint (the read side's one question classifier)."""
        ...

    def name_words(self, name: str) -> tuple[str, ...]:
        """The words of a name, case, accents and punctuation folded (the judges compare names by them)."""
        ...

    def geographic_title(self, name: str) -> tuple[str, str] | None:
        """``(title, bare name)`` of "Mount Fuji"-like names; None for any other name."""
        ...

    def says_title(self, title: str, texts: Iterable[str]) -> bool:
        """Whether ``texts`` say what the geographic ``title`` names (a summit, a shore)."""
        ...


_made: dict[str, Analyzer] = {}


def analyzer(name: str = DEFAULT_ANALYZER) -> Analyzer:
    """The analyzer ``name`` of :data:`memrepo.capabilities.ANALYZERS`, made once per process (they hold no
    state between calls).

    Raises:
        RepositoryError: no analyzer is listed under ``name``.
    """
    if name not in _made:
        entry = ANALYZERS.get(name)
        if entry is None:
            raise RepositoryError(f"unknown analyzer {name!r} (known: {', '.join(sorted(ANALYZERS))})")
        _made[name] = resolve(entry)()
    return _made[name]
