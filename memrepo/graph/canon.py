"""Registry-guided canonicalization (M§2.3, A.2): ANN candidates among the namespace's anchors, one decision.

For each extracted entity the registry proposes at most 4 existing anchors whose
name embedding has cosine >= 0.72; one call per record (the ``canonicalizer``
role) decides, conservatively, which entity is a retrieved candidate. A rename
naming anything else is ignored: embeddings propose, they never authorize.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from memrepo.graph.kappa import kappa
from memrepo.nlp import analyzer

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("memrepo.graph")

MAX_CANDIDATES = 4
MIN_COSINE = 0.72

CANON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["decisions"],
    "properties": {
        "decisions": {
            "type": "array",
            "maxItems": 40,
            "items": {
                "type": "object",
                "required": ["entity", "choice"],
                "properties": {
                    "entity": {"type": "string"},
                    "choice": {"type": ["string", "null"]},
                },
            },
        }
    },
}


class AnchorRegistry:
    """The anchors of a namespace by name, with their name vectors for nearest-neighbour candidates.

    The vectors come from the embedder of :mod:`memrepo.index.embed`; names are
    embedded once (through the embedding cache when one is given), and only when a
    name needs a nearest-neighbour search. Without an embedder, only exact keys
    match (no candidates are proposed).
    """

    def __init__(self, embedder: Any | None = None, cache: Any | None = None):
        self.embedder: Any = embedder
        self.cache = cache
        self.names: list[str] = []
        self.types: list[str] = []
        self.keys: dict[str, int] = {}
        self._vectors: "np.ndarray | None" = None
        self._pending: list[int] = []
        self._rows = 0  # rows of _vectors in use (the rest is room to grow)
        self._folds: set[str] = set()  # _fold of every registered name
        self._firsts: set[str] = set()  # lowercased first word of every registered person's full name
        self._untitled: set[str] = set()  # _fold of every registered titled location without its title

    def __len__(self) -> int:
        return len(self.names)

    def add(self, anchors: Iterable[tuple[str, str]]) -> None:
        """Add (name, type) pairs; a key already present keeps its first name."""
        for name, type_ in anchors:
            key, folded = _key_and_fold(name)
            if not key or key in self.keys:
                continue
            self.keys[key] = len(self.names)
            self.names.append(name)
            self.types.append(type_)
            self._pending.append(len(self.names) - 1)
            self._folds.add(folded)
            words = name.split()
            if type_ == "person" and len(words) > 1:
                self._firsts.add(words[0].lower())
            if type_ == "location" and (titled := analyzer().geographic_title(name)):
                self._untitled.add(_fold(titled[1]))

    def name_for(self, name: str) -> str | None:
        """The registered name with the same key as ``name``, if any."""
        idx = self.keys.get(kappa(name))
        return self.names[idx] if idx is not None else None

    def type_for(self, name: str) -> str | None:
        idx = self.keys.get(kappa(name))
        return self.types[idx] if idx is not None else None

    def _embed(self, texts: list[str]) -> "np.ndarray":
        if self.cache is not None:
            from memrepo.index.embed import text_key

            return self.cache.embed(self.embedder, [(text_key(t), t) for t in texts])
        return self.embedder.embed(texts)

    def _matrix(self) -> "np.ndarray | None":
        import numpy as np

        if self.embedder is None or not self.names:
            return None
        if self._pending:
            new = self._embed([self.names[i] for i in self._pending]).astype(np.float32)
            have = self._rows
            if self._vectors is None or have + len(new) > self._vectors.shape[0]:
                # Room to grow by doubling: a catch-up adding names record by record copies them O(log n) times.
                grown = np.zeros((max(2 * (have + len(new)), 64), new.shape[1]), dtype=np.float32)
                if self._vectors is not None:
                    grown[:have] = self._vectors[:have]
                self._vectors = grown
            self._vectors[have:have + len(new)] = new
            self._rows = have + len(new)
            self._pending = []
        return None if self._vectors is None else self._vectors[: self._rows]

    def offline_could_choose(self, name: str) -> bool:
        """Whether :func:`decide_offline` could choose any registered name for ``name``, whatever the vectors.

        It chooses only a candidate that folds to the same form as the name, for a single
        word a person whose full name starts with it, or a location that is the name with
        its geographic title; without such a registered name its decision is "none" for
        every candidate list.
        """
        folded = _fold(name)
        return bool(folded and (folded in self._folds or folded in self._untitled)) or (
            len(name.split()) == 1 and name.lower() in self._firsts)

    def candidates(self, names: list[str], *, offline_decision: bool = False) -> dict[str, list[tuple[str, float]]]:
        """For each name without an exact key match: up to 4 registered names with cosine >= 0.72, best first.

        Args:
            offline_decision: the candidates go to :func:`decide_offline`: names it could not
                rename whatever their candidates (:meth:`offline_could_choose`) get none, without
                a vector search (so the same renames, and no embedding when no name needs one).
        """
        import numpy as np

        asked = [n for n in names if kappa(n) and kappa(n) not in self.keys]
        if offline_decision:
            asked = [n for n in asked if self.offline_could_choose(n)]
        if self.embedder is None or not asked:
            return {}
        try:
            matrix = self._matrix()
            if matrix is None:
                return {}
            queries = self._embed(asked).astype(np.float32)
        except (ImportError, OSError, RuntimeError) as exc:  # the model loads on first use: it may fail here
            log.warning("graph: no embedder for canonicalization candidates (%s); exact keys only", exc)
            self.embedder = None
            return {}
        scores = queries @ matrix.T
        out: dict[str, list[tuple[str, float]]] = {}
        for row, name in enumerate(asked):
            # Only names over the threshold can be proposed: sort those (few), not every registered name;
            # the same order as a stable sort of all scores, so the same candidates.
            over = np.flatnonzero(scores[row] >= MIN_COSINE)
            order = over[np.argsort(-scores[row][over], kind="stable")][:MAX_CANDIDATES]
            found = [(self.names[j], round(float(scores[row, j]), 4)) for j in order]
            if found:
                out[name] = found
        return out


@lru_cache(maxsize=1 << 16)
def _key_and_fold(name: str) -> tuple[str, str]:
    """κ(name) and _fold(name), remembered: a session of writes builds a registry of the same names per write."""
    return kappa(name), _fold(name)


def _fold(text: str) -> str:
    """Case-, accent- and punctuation-free form of a name, with spaces removed (the analyzer's name words)."""
    return "".join(analyzer().name_words(text))


def _titled(name: str, cands: list[dict[str, Any]], text: str) -> str | None:
    """The one location candidate that is ``name`` with its geographic title, when ``text`` says what the title
    says ("we climbed Fuji": "Mount Fuji"); else None."""
    reader = analyzer()
    found = [c["name"] for c in cands if c.get("type") == "location"
             and (titled := reader.geographic_title(c["name"]))
             and _fold(titled[1]) == _fold(name) and reader.says_title(titled[0], (text,))]
    return found[0] if len(found) == 1 else None


def decide_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """The conservative deterministic decision of the ``canonicalizer`` role.

    A candidate is chosen only when it is the same name written differently
    (case, accents, spacing, punctuation: "Menya-Kaiko" = "Menya Kaiko"), or when
    the entity is a person's single given name and exactly one candidate is a
    person whose name starts with it ("Hiroshi" -> "Hiroshi Tanabe"), or when the
    entity is a location and exactly one candidate is that location with its
    geographic title, the record's text saying what the title says ("we climbed
    Fuji" -> "Mount Fuji"; "a safari in Kenya" keeps Kenya apart from "Mount Kenya").
    Different numbers never merge.
    """
    decisions = []
    for item in variables.get("entities", []):
        name = item["name"]
        choice = None
        cands = item.get("candidates", [])
        digits = re.findall(r"\d+", name)
        for cand in cands:
            if re.findall(r"\d+", cand["name"]) != digits:
                continue
            if _fold(cand["name"]) == _fold(name) and _fold(name):
                choice = cand["name"]
                break
        if choice is None and item.get("type") == "person" and len(name.split()) == 1:
            firsts = [c["name"] for c in cands if c.get("type") == "person"
                      and c["name"].split()[0].lower() == name.lower() and len(c["name"].split()) > 1]
            if len(firsts) == 1:
                choice = firsts[0]
        if choice is None and item.get("type") == "location":
            choice = _titled(name, cands, str(variables.get("text") or ""))
        decisions.append({"entity": name, "choice": choice})
    return {"decisions": decisions}


def validated_renames(reply: dict[str, Any], candidates: dict[str, list[tuple[str, float]]]) -> dict[str, str]:
    """Renames of a canonicalizer reply that name a retrieved candidate of that entity; the rest are dropped."""
    out: dict[str, str] = {}
    for item in reply.get("decisions", []):
        entity, choice = item.get("entity"), item.get("choice")
        if not entity or not choice or entity not in candidates:
            continue
        allowed = {name for name, _ in candidates[entity]}
        if choice in allowed:
            out[entity] = choice
    return out
