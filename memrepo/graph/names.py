"""The anchor-name index: one name vector per anchor the graph files label (a derived index).

Recall's entry lane searches it with the question's vector
(:meth:`memrepo.graph.reader.GraphReader.search_anchor_names`) and AutoDream
takes each source anchor's nearest names from it (NN_4, M eq. 13). Rebuilt per
commit by tree diff (:mod:`memrepo.index.base`): a commit embeds only the names
that are new since the index's last commit (through the embedding cache), and a
nearest-neighbour query costs one ANN search whatever the size of the graph.

Labels are read with the RDF parser (:func:`memrepo.graph.rdf.parse_turtle`),
so a graph file edited by hand counts as much as one memrepo wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memrepo.graph.model import FRAMES_FOLDER
from memrepo.index.base import Change, DerivedIndex, UpdateContext

if TYPE_CHECKING:
    from memrepo.index.vectors import AnchorVectors
    from memrepo.settings import EmbeddingSettings, Settings
    from memrepo.store.git import GitStore

INDEX_NAME = "anchornames"
#: The folder an older memrepo kept a second, identical anchor-name index in (removed when found).
RETIRED_INDEXES = ("dreamnames",)


class AnchorNameIndex(DerivedIndex):
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
        from memrepo.index.vectors import AnchorVectors, add_to_generation, first_labels

        embedder = get_embedder(self.settings.embedding)
        # Anchors of deleted files stay; readers drop anchors the graph index no longer has.
        labels = [label for change in changes if change.new is not None
                  for label in anchor_labels(ctx.read_blob(change.new), change.path)]
        with ctx.progress(f"anchor names ({len(labels)} labels)", len(labels)):
            if previous is not None:
                add_to_generation(previous, folder, embedder, ctx.embedding_cache, labels)
            else:
                vectors = AnchorVectors(embedder, ctx.embedding_cache)
                vectors.add_many(first_labels(labels))
                vectors.save(folder)
        remove_retired(ctx.store)


def remove_retired(store: "GitStore") -> None:
    """Remove the folders of the anchor-name indexes an older memrepo kept (nothing reads them any more)."""
    import shutil

    from memrepo.index.base import index_root

    for name in RETIRED_INDEXES:
        root = index_root(store, name)
        if root.exists():
            shutil.rmtree(root, ignore_errors=True)


def anchor_labels(data: bytes, path: str) -> list[tuple[str, str]]:
    """(anchor IRI, label) of the anchors a graph file labels; none for a file that is not valid Turtle."""
    from memrepo.graph.rdf import TurtleError, parse_turtle, rows

    try:
        parsed = rows(parse_turtle(data, path))
    except TurtleError:
        return []
    return [(anchor, value) for anchor, prop, value, _n3 in parsed.anchor_facts if prop == "label"]


def open_names(store: "GitStore", settings: "Settings", commit: str | None) -> "AnchorVectors":
    """The anchor-name vectors at ``commit`` (caught up first), with the embedding cache to embed queries."""
    from memrepo.index.base import Indexes, open_embedding_cache
    from memrepo.index.embed import get_embedder
    from memrepo.index.vectors import AnchorVectors

    indexes = Indexes(store, settings)
    try:
        folder = indexes.folder(INDEX_NAME, commit)
    finally:
        indexes.close()
    return AnchorVectors.load(folder, get_embedder(settings.embedding), open_embedding_cache(store))


def open_cached_names(folder: Path, embedding: "EmbeddingSettings") -> "AnchorVectors":
    """The anchor-name vectors of one published generation, memory-mapped once per process."""
    from memrepo.index.base import open_cached

    return open_cached(folder, _NamesOpener(embedding))


@dataclass(frozen=True)
class _NamesOpener:
    """Opens the anchor-name vectors of one generation (equal for equal settings, so it keys the reader cache)."""

    embedding: "EmbeddingSettings"

    def __call__(self, folder: Path) -> Any:
        from memrepo.index.embed import get_embedder
        from memrepo.index.vectors import AnchorVectors

        return AnchorVectors.load(folder, get_embedder(self.embedding), view=True)
