"""The anchor-name index AutoDream searches for NN_4 (a derived index, rebuilt per commit by tree diff).

Every anchor a graph file labels gets one name vector
(:class:`memrepo.index.vectors.AnchorVectors`, through the embedding cache), so
a run embeds only the names that are new since the index's last commit, and a
nearest-neighbour query costs one ANN search whatever the size of the graph.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from memrepo.graph.model import FRAMES_FOLDER
from memrepo.index.base import Change, DerivedIndex, UpdateContext

if TYPE_CHECKING:
    from memrepo.index.vectors import AnchorVectors
    from memrepo.settings import Settings
    from memrepo.store.git import GitStore

INDEX_NAME = "dreamnames"


class DreamNameIndex(DerivedIndex):
    """Anchor IRI -> name vector for every labelled anchor of the graph files."""

    name = INDEX_NAME
    schema = 1

    def identity(self) -> dict[str, str]:
        from memrepo.index.vectors import embedder_id

        return {"model": embedder_id(self.settings.embedding)}

    def wants(self, path: str) -> bool:
        return path.startswith(FRAMES_FOLDER + "/") and path.endswith(".ttl")

    def update(self, ctx: UpdateContext, previous: Path | None, folder: Path, changes: list[Change]) -> None:
        from memrepo.index.embed import get_embedder
        from memrepo.index.vectors import AnchorVectors

        embedder = get_embedder(self.settings.embedding)
        vectors = (AnchorVectors.load(previous, embedder, ctx.embedding_cache) if previous is not None
                   else AnchorVectors(embedder, ctx.embedding_cache))
        names: dict[str, str] = {}
        for change in changes:
            if change.new is None:
                continue  # an anchor of a deleted file may live on in others; a stale name only proposes a pair
            for anchor, value in anchor_labels(ctx.read_blob(change.new), change.path):
                if anchor not in vectors and anchor not in names:
                    names[anchor] = value
        with ctx.progress(f"anchor names ({len(names)})", len(names)):
            vectors.add_many(sorted(names.items()))
        vectors.save(folder)


# An anchor block as memrepo's canonical Turtle writer emits it (memrepo.graph.rdf.turtle).
_ANCHOR_BLOCK = re.compile(
    r'^<(urn:memrepo:anchor:[^>\s]+)> a mr:Anchor ;\n    rdfs:label "((?:[^"\\\n]|\\.)*)"', re.M)
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n", "\\r": "\r", "\\t": "\t"}


def anchor_labels(data: bytes, path: str) -> list[tuple[str, str]]:
    """(anchor IRI, label) of the anchors a graph file labels.

    Files in memrepo's canonical form are read with one regular expression (no RDF
    parse); anything else (a file edited by hand) goes through rdflib.
    """
    text = data.decode("utf-8", "replace")
    found = [(iri, re.sub(r"\\.", lambda m: _UNESCAPE.get(m.group(0), m.group(0)), label))
             for iri, label in _ANCHOR_BLOCK.findall(text)]
    if len(found) == text.count(" a mr:Anchor ") and text.count("mr:Anchor") == len(found):
        return found
    from memrepo.graph.rdf import TurtleError, parse_turtle, rows

    try:
        parsed = rows(parse_turtle(data, path))
    except TurtleError:
        return []
    return [(anchor, value) for anchor, prop, value, _n3 in parsed.anchor_facts if prop == "label"]


def open_names(store: "GitStore", settings: "Settings", commit: str | None) -> "AnchorVectors":
    """The anchor-name vectors at ``commit`` (the index is caught up first)."""
    from memrepo.index.base import Indexes, open_embedding_cache
    from memrepo.index.embed import get_embedder
    from memrepo.index.vectors import AnchorVectors

    indexes = Indexes(store, settings)
    try:
        folder = indexes.folder(INDEX_NAME, commit)
    finally:
        indexes.close()
    return AnchorVectors.load(folder, get_embedder(settings.embedding), open_embedding_cache(store))
