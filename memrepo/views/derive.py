"""Derivations: a selection (the IR, a list of locators kept unresolved) resolved to exact inputs.

The id of a Derivation is the hash of its canonical resolved inputs: the sorted
(name, path, blob) of every selected file, where ``name`` is the path under the
locator that selected it (where the file lands when the Derivation is mounted).
Commits are not part of the id: the same files give the same id in any clone and
after commits elsewhere in the repository, and any change to a selected file gives
a new id. The manifest holds only what the id is a function of (the files, their
tree, the selection), so two clones that derive the same files write the same
manifest and a merge never conflicts on it. The generation (commit) each file was
read at differs between clones with diverged histories: it is per-clone derived
state under the Git directory (``memrepo/derivations/<id>.json``), recomputed from
history for a Derivation another clone recorded; a Quest's history records the
commit each resolve ran at.

A Derivation is stored as
- a Git tree of its files, kept reachable by ``refs/memrepo/derivations/<id>`` (a
  commit with a fixed author and time, so the ref is the same in every clone);
- the manifest ``views/derivations/<id>.json`` (IR, inputs as name/path/blob, tree id), committed;
- derived artifacts keyed by the id, committed once and reused by whoever mounts
  it: ``views/derivations/<id>.summary.md`` with ``--summarize`` (an extractive
  summary: the first sentence of each file).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from memrepo import records as rec
from memrepo.errors import NotFoundError, RecordError
from memrepo.store.git import GitStore, Snapshot, commit_parent, get_ref, set_ref, write_tree, write_tree_commit
from memrepo.views.locators import Input, Locator, parse_locator, resolve

DERIVATIONS = "views/derivations"
DERIVATION_REF = "refs/memrepo/derivations/"
ID_LENGTH = 16


@dataclass(frozen=True)
class Mounted:
    """A selected file: where it lands under a mount (``name``), what it is (``path``, ``blob``), its package."""

    name: str
    path: str
    generation: str
    blob: str
    package: str | None = None
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": self.path, "generation": self.generation, "blob": self.blob}
        if self.package:
            out.update(package=self.package, version=self.version)
        return out

    def manifest_entry(self) -> dict[str, Any]:
        """What the manifest keeps: no generation (a commit differs between clones that derived the same file)."""
        out = self.to_dict()
        del out["generation"]
        return out


@dataclass
class Derivation:
    id: str
    ir: list[str]
    inputs: list[Mounted]
    tree: str
    artifacts: dict[str, str] = field(default_factory=dict)
    created: bool = False  # this call wrote the manifest (False: it already existed)
    commit: str | None = None

    @property
    def manifest_path(self) -> str:
        return f"{DERIVATIONS}/{self.id}.json"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ir": self.ir, "inputs": [i.to_dict() for i in self.inputs], "tree": self.tree,
                "artifacts": self.artifacts}

    def manifest(self) -> bytes:
        """Deterministic JSON with one line per input (a diff shows the files that changed; fast at 10,000).

        A pure function of the selection and its files: the same bytes in every clone that derives them.
        Artifacts are not listed (each is a file named after the id, found by :func:`load`).
        """
        data = {"id": self.id, "ir": self.ir, "tree": self.tree}
        inputs = [i.manifest_entry() for i in self.inputs]
        head = json.dumps(data, sort_keys=True, ensure_ascii=False)
        encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
        lines = ",\n".join(encode(i) for i in inputs)
        return f'{head[:-1]}, "inputs": [\n{lines}\n]}}\n'.encode("utf-8")


def resolve_selection(store: GitStore, locators: list[str]) -> tuple[list[str], list[Mounted]]:
    """The canonical IR (each locator as ``path@generation``) and the files it selects.

    Raises:
        RecordError: a locator is malformed, or the selection is empty.
        NotFoundError: a locator selects nothing.
    """
    if not locators:
        raise RecordError("give at least one locator (e.g. rules/python/@latest)")
    parsed = [parse_locator(text) for text in locators]
    inputs: dict[tuple[str, str], Mounted] = {}
    for locator in parsed:
        snap_cache: dict[str, Snapshot] = {}
        for found in resolve(store, locator):
            name = _name_under(locator, found.path)
            package = version = None
            if found.path.startswith("resource/"):
                if found.generation not in snap_cache:
                    snap_cache[found.generation] = store.snapshot(found.generation.encode())
                package, version = _package_of(snap_cache[found.generation], found)
            inputs[(name, found.path)] = Mounted(name, found.path, found.generation, found.blob, package, version)
    return [str(p) for p in parsed], [inputs[k] for k in sorted(inputs)]


def _name_under(locator: Locator, path: str) -> str:
    if locator.is_folder:
        return path[len(locator.path):]
    if path == locator.path:
        return path.rsplit("/", 1)[-1]
    return path[len(locator.path) + 1:]  # a folder named without a trailing slash


def _package_of(snap: Snapshot, found: Input) -> tuple[str | None, str | None]:
    """``package`` and ``version`` front matter of a resource document (docs pinned to a project's lock)."""
    if not found.path.startswith("resource/") or not found.path.endswith(".md"):
        return None, None
    try:
        record = rec.parse(snap.read_blob(found.blob), found.path)
    except RecordError:
        return None, None
    package, version = record.extra.get("package"), record.extra.get("version")
    if not package or version in (None, ""):
        return None, None
    return str(package), str(version)


def derivation_id(inputs: list[Mounted]) -> str:
    canonical = json.dumps([[i.name, i.path, i.blob] for i in sorted(inputs, key=lambda i: (i.name, i.path))],
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:ID_LENGTH]


def uncommitted(store: GitStore, ir: list[str], inputs: list[Mounted]) -> Derivation:
    """The Derivation of resolved ``inputs``, nothing committed (a project keeps its manifest; the Git tree of
    its files is written to the object store, so its id is the one :func:`derive` would record)."""
    return Derivation(derivation_id(inputs), ir, inputs, write_tree(store, {i.path: i.blob for i in inputs}))


def derive(store: GitStore, locators: list[str], *, summarize: bool = False, author: bytes | None = None,
           extra_files: Callable[[Snapshot, "Derivation"], dict[str, bytes]] | None = None,
           message: str | None = None, resolved: tuple[list[str], list[Mounted]] | None = None) -> Derivation:
    """Resolve ``locators`` and record the Derivation (tree, ref, manifest, artifacts) if it is new.

    ``extra_files`` is a function of the tip the commit lands on that returns more files to commit with the
    manifest (the Quest of this resolve, updated read-modify-write). ``resolved`` is :func:`resolve_selection`'s
    answer when the caller already has it.
    """
    ir, inputs = resolved or resolve_selection(store, locators)
    files = {i.path: i.blob for i in inputs}
    tree = write_tree(store, files)
    derivation = Derivation(derivation_id(inputs), ir, inputs, tree)
    ref = DERIVATION_REF + derivation.id
    if get_ref(store, ref) is None:
        set_ref(store, ref, write_tree_commit(store, tree, f"derivation {derivation.id}\n\n" + "\n".join(ir)))
    summary_path = f"{DERIVATIONS}/{derivation.id}.summary.md"
    if summarize:
        derivation.artifacts["summary"] = summary_path

    def change(snap: Snapshot) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        existing = snap.read(derivation.manifest_path)
        if existing is not None:
            derivation.ir = json.loads(existing)["ir"]
        if snap.exists(summary_path):
            derivation.artifacts["summary"] = summary_path
        if summarize and not snap.exists(summary_path):
            out[summary_path] = extractive_summary(store, derivation)
        manifest = derivation.manifest()
        derivation.created = existing is None
        if existing != manifest:
            out[derivation.manifest_path] = manifest
        if extra_files is not None:
            out.update(extra_files(snap, derivation))
        return out

    commit = store.commit(change, message or f"derive {derivation.id}: {', '.join(ir)}", author=author)
    derivation.commit = commit.decode() if commit else None
    _remember_generations(store, derivation)
    return derivation


def _generations_file(store: GitStore, derivation_id_: str) -> Any:
    return store.state_dir / "derivations" / f"{derivation_id_}.json"


def _remember_generations(store: GitStore, derivation: Derivation) -> None:
    """Per-clone derived state: the generation each input was read at in this clone."""
    path = _generations_file(store, derivation.id)
    known = _known_generations(store, derivation.id)
    fresh = {i.path: i.generation for i in derivation.inputs if i.generation and i.path not in known}
    if not fresh:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**known, **fresh}, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # a read-only clone: recomputed from history when needed


def _known_generations(store: GitStore, derivation_id_: str) -> dict[str, str]:
    try:
        data = json.loads(_generations_file(store, derivation_id_).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _generation_in_history(store: GitStore, path: str, blob: str) -> str:
    """The oldest commit on HEAD's first-parent chain, back from HEAD, that already had ``blob`` at ``path``."""
    head = store.head()
    if head is None:
        return ""
    generation = head.decode()
    while True:
        parent = commit_parent(store, generation)
        if parent is None or store.snapshot(parent.encode()).blob_id(path) != blob:
            return generation
        generation = parent


def extractive_summary(store: GitStore, derivation: Derivation) -> bytes:
    """The first sentence of each selected file (offline, deterministic), one line per file."""
    from memrepo.nlp.tokens import split_sentences

    lines = [f"# Summary of derivation {derivation.id}", ""]
    for item in derivation.inputs:
        data = store.snapshot(item.generation.encode()).read_blob(item.blob)
        try:
            body = rec.split_front_matter(data, item.path)[1] if data.startswith(b"---\n") else data.decode("utf-8")
        except (RecordError, UnicodeDecodeError):
            continue
        lines_ = [line.strip() for line in body.splitlines() if line.strip()]
        prose = [line for line in lines_ if not line.startswith("#")] or [line.lstrip("#").strip() for line in lines_]
        first = next(iter(split_sentences(" ".join(prose))), "")
        lines.append(f"- {item.name}: {rec.default_summary(first, 200)}" if first else f"- {item.name}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def load(store: GitStore, derivation: str, rev: str | None = None) -> Derivation:
    """The Derivation with id (or unique id prefix) ``derivation`` from its manifest.

    Raises:
        NotFoundError: no such Derivation, or the prefix is ambiguous.
    """
    snap = store.snapshot(rev)
    full = _full_id(snap, derivation, DERIVATIONS, "derivation")
    loaded = from_manifest(store, snap.read(f"{DERIVATIONS}/{full}.json") or b"{}", full)
    if snap.exists(f"{DERIVATIONS}/{full}.summary.md"):
        loaded.artifacts["summary"] = f"{DERIVATIONS}/{full}.summary.md"
    return loaded


def from_manifest(store: GitStore, manifest: bytes, full: str) -> Derivation:
    """The Derivation a manifest describes, its files read from ``store`` (a manifest kept outside the memory
    repository, as a project keeps the Derivations its profile binds, is read the same way).

    Raises:
        RecordError: the bytes are not the manifest of Derivation ``full``.
    """
    try:
        data = json.loads(manifest)
        if data.get("id", full) != full or not isinstance(data["inputs"], list):
            raise ValueError(f"it names derivation {data.get('id')!r}")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecordError(f"derivation {full}: not a Derivation manifest ({exc})") from exc
    known = _known_generations(store, full)
    inputs = []
    for item in data["inputs"]:
        item = dict(item)
        generation = item.pop("generation", None) or known.get(item["path"])  # older manifests kept it
        if generation is None:
            generation = known[item["path"]] = _generation_in_history(store, item["path"], item["blob"])
        inputs.append(Mounted(generation=generation, **item))
    loaded = Derivation(full, data["ir"], inputs, data.get("tree", ""), dict(data.get("artifacts", {})))
    _remember_generations(store, loaded)
    return loaded


def _full_id(snap: Snapshot, prefix: str, folder: str, what: str) -> str:
    if not prefix or not all(c in "0123456789abcdef" for c in prefix):
        raise NotFoundError(f"{what} {prefix!r} not found (ids are hexadecimal)")
    if snap.exists(f"{folder}/{prefix}.json"):
        return prefix
    matches = [p.rsplit("/", 1)[-1][:-5] for p, _ in snap.walk(folder) if p.endswith(".json")]
    matches = [m for m in matches if m.startswith(prefix)]
    if len(matches) != 1:
        raise NotFoundError(f"{what} {prefix!r} " + ("not found" if not matches else "is ambiguous: " + ", ".join(matches)))
    return matches[0]


def merge_manifests(ours: bytes, theirs: bytes, path: str) -> bytes | None:
    """The merge of a Derivation manifest two clones both wrote (the ``memrepo`` merge driver, ``memrepo sync``).

    Both describe the same files (the id is their hash); they can differ only in the selection text that
    chose them (``rules/python/`` and ``rules/python/vllm.md`` may select the same file) or in format (an
    older memrepo kept generations). The one whose bytes sort first is kept, the same whichever clone merges.
    None if they are not manifests of the same files.
    """
    def files(data: bytes) -> tuple[str, list[tuple[str, str, str]]] | None:
        try:
            loaded = json.loads(data)
            return loaded["id"], sorted((i["name"], i["path"], i["blob"]) for i in loaded["inputs"])
        except (ValueError, KeyError, TypeError):
            return None

    mine, other = files(ours), files(theirs)
    if mine is None or mine != other or not path.endswith(f"/{mine[0]}.json"):
        return None
    return min(ours, theirs)


def is_manifest_path(path: str) -> bool:
    return path.startswith(DERIVATIONS + "/") and path.endswith(".json") and "/" not in path[len(DERIVATIONS) + 1:]
