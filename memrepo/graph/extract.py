"""From one committed record to its anchors and frames (M Alg. 1 lines 5-9; DESIGN.md §3).

    extract (LLM or offline) -> audit -> at most one repair call (adds only)
    -> canonicalize (ANN candidates, one decision per record) -> admission gate and cap
    -> frames with >= 2 distinct admitted anchors -> identities

Language models propose; this module owns the boundaries: admissible names,
candidate allowlists, frame identities, provenance.
"""

from __future__ import annotations

import re
import time
from typing import Any, NamedTuple

from memrepo.graph.canon import CANON_SCHEMA, AnchorRegistry, decide_offline, validated_renames
from memrepo.graph.kappa import admit, kappa
from memrepo.graph.model import (
    ENTITY_TYPES,
    AnchorRef,
    Arm,
    Frame,
    FrameLiteral,
    MemoryGraph,
    canonical_predicate,
    canonical_role,
    frame_iri,
    holds_frames,
)
from memrepo.nlp import Analyzer, analyzer
from memrepo.nlp.acts import VISUAL_RE
from memrepo.nlp.literals import LITERAL_PATTERNS
from memrepo.records import Record
from memrepo.text.stopwords import CHAT_STOPWORDS

MAX_REPAIR_ITEMS = 12
MAX_ITEMS = 60  # entities and frames per reply (EXTRACTION_SCHEMA's maxItems)
VISUAL_COVERAGE = 0.45

_ENTITY = {
    "type": "object",
    "required": ["name", "type"],
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 160}, "type": {"type": "string"}},
}
_FRAME = {
    "type": "object",
    "required": ["predicate", "arms"],
    "properties": {
        "predicate": {"type": "string", "minLength": 1, "maxLength": 60},
        "arms": {
            "type": "array",
            "maxItems": 12,
            "items": {
                "type": "object",
                "required": ["role", "entity"],
                "properties": {"role": {"type": "string", "minLength": 1}, "entity": {"type": "string", "minLength": 1}},
            },
        },
        "literals": {
            "type": "array",
            "maxItems": 12,
            "items": {
                "type": "object",
                "required": ["key", "value"],
                "properties": {"key": {"type": "string", "minLength": 1}, "value": {"type": "string"}},
            },
        },
        "event_time": {"type": ["string", "null"]},
        "status": {"type": ["string", "null"], "enum": ["done", "planned", None]},
    },
}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["entities", "frames"],
    "properties": {
        "entities": {"type": "array", "maxItems": MAX_ITEMS, "items": _ENTITY},
        "frames": {"type": "array", "maxItems": MAX_ITEMS, "items": _FRAME},
    },
}

_NUMBER_RE = re.compile(r"(?<![\w.])[$€£¥]?\d[\d,]*(?:\.\d+)?(?![\w])")
_QUOTE_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'’-]*")


def record_variables(record: Record, participants: list[str] | None = None) -> dict[str, Any]:
    """What the extractor role sees of a record."""
    people = list(participants or [])
    for key in ("participants", "speakers"):
        value = record.extra.get(key)
        if isinstance(value, list):
            people += [str(v) for v in value]
    if record.actor and record.actor not in people:
        people.insert(0, record.actor)
    return {
        "id": record.id,
        "kind": record.type,
        "text": record.text,
        "actor": record.actor or "",
        "participants": list(dict.fromkeys(p for p in people if p)),
        "mention_time": record.mention_time,
        "event_time": record.event_time,
        "status": record.status,
    }


# --- audit and repair -------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("’", "'"))


def render_raw(frames: list[dict[str, Any]]) -> str:
    parts = []
    for f in frames:
        parts.append(str(f.get("predicate", "")).replace("_", " "))
        parts += [str(a.get("entity", "")) for a in f.get("arms", [])]
        parts += [str(lit.get("value", "")) + " " + str(lit.get("surface", "")) for lit in f.get("literals", []) or []]
        if f.get("event_time"):
            parts.append(str(f["event_time"]))
    return " ".join(parts)


def audit(text: str, frames: list[dict[str, Any]], visual: bool = False) -> tuple[list[str], bool]:
    """Source details no frame covers: quoted phrases and numbers (M A.2).

    Returns:
        (missing items, at most 12; whether a repair call is warranted). A missing
        date alone never warrants one; a source with visual content is uncovered
        below 45% content-word coverage.
    """
    rendered = render_raw(frames).lower()
    rendered_words = set(_words(rendered))
    rendered_numbers = {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", rendered)}
    missing: list[str] = []
    trigger = False
    for quote in _QUOTE_RE.findall(text):
        if not set(_words(quote)) - CHAT_STOPWORDS <= rendered_words:
            missing.append(f'"{quote}"')
            trigger = True
    # Dates (and times of day) are cut out first: a missing date alone never triggers a repair (M A.2).
    undated, dates = text, []
    numeric = re.search(r"\d", text) is not None  # without a digit there is no number and no date to miss
    for key, pattern in LITERAL_PATTERNS if numeric else ():
        if key in ("date", "time"):
            dates += [m.group(0).strip() for m in pattern.finditer(undated) if re.search(r"\d", m.group(0))]
            undated = pattern.sub(" ", undated)
    for number in _NUMBER_RE.findall(undated):
        if number.lstrip("$€£¥").replace(",", "") not in rendered_numbers:
            missing.append(number)
            trigger = True
    for surface in dates:
        if not set(re.findall(r"\d+", surface)) <= rendered_numbers | _date_numbers(rendered):
            missing.append(surface)
    if visual:
        content = [w for w in _words(text) if w not in CHAT_STOPWORDS and len(w) > 2]
        covered = sum(1 for w in content if w in rendered_words)
        if content and covered / len(content) < VISUAL_COVERAGE:
            trigger = True
            missing.append(f"visual content ({covered}/{len(content)} content words covered)")
    return list(dict.fromkeys(missing))[:MAX_REPAIR_ITEMS], trigger


def _date_numbers(rendered: str) -> set[str]:
    """Day, month and year numbers of the ISO dates in a rendering ("2023-08-12" -> 2023, 8, 08, 12)."""
    out: set[str] = set()
    for y, m, d in re.findall(r"(\d{4})-(\d{2})(?:-(\d{2}))?", rendered):
        out |= {y, m, str(int(m))} | ({d, str(int(d))} if d else set())
    return out


def repair_offline(variables: dict[str, Any], reader: Analyzer | None = None) -> dict[str, Any]:
    """Deterministic repair: frames for the sentences that hold the missing items, by the offline rules.

    Only frames that mention a missing item are returned, so the repair adds
    coverage and nothing else.

    Args:
        reader: the analyzer whose extraction reads the sentences (None: the default, ``ANALYZERS["rules"]``).
    """
    reader = reader or analyzer()
    text = str(variables.get("text") or "")
    missing = [m.strip('"') for m in variables.get("missing", [])]
    sentences = re.split(r"(?<=[.!?])\s+", text)
    wanted = [s for s in sentences if any(m and m.lower() in s.lower() for m in missing)]
    if not wanted:
        return {"entities": [], "frames": []}
    speaker_vars = dict(variables)
    frames: list[dict[str, Any]] = []
    entities: list[dict[str, Any]] = []
    actor = variables.get("actor") or ""
    for sentence in wanted:
        speaker_vars["text"] = sentence
        reply = reader.extract(speaker_vars)
        names = [e["name"] for e in reply["entities"]]
        items = [m for m in missing if m.lower() in sentence.lower()]
        covered = {f_item for f in reply["frames"] for f_item in items if f_item.lower() in render_raw([f]).lower()}
        if set(items) - covered and actor and names:
            # One more frame that carries the uncovered values: the speaker and the nearest named thing.
            target = next((n for n in names if n != actor), None)
            if target:
                frames.append({"predicate": "mention", "arms": [{"role": "speaker", "entity": actor},
                                                               {"role": "topic", "entity": target}],
                               "literals": [{"key": "detail", "value": v} for v in sorted(set(items) - covered)],
                               "event_time": None, "status": None})
        frames += reply["frames"]
        entities += reply["entities"]
    unique = list({e["name"]: e for e in entities}.values())
    return {"entities": unique[:MAX_ITEMS], "frames": frames[:MAX_ITEMS]}  # within the role's schema


# --- the pipeline -------------------------------------------------------------------------


class OfflineReplies(NamedTuple):
    """The offline extractor's reply for one record, its audit, and, when the audit calls for it, the offline
    repair's reply."""

    extractor: dict[str, Any] | None
    repair: dict[str, Any] | None
    missing: list[str] | None = None  # the audit of the extractor's reply (None: not audited yet)
    trigger: bool = False
    seconds: float = 0.0  # spent on the extractor's rules and the audit (a worker's time, for the usage figures)
    repair_seconds: float = 0.0


def is_visual(record: Record) -> bool:
    """The record shares an image: the audit then also asks that its content words be covered."""
    return bool(VISUAL_RE.search(record.text)) or bool(record.extra.get("images") or record.extra.get("image"))


def offline_replies(variables: dict[str, Any], visual: bool, reader: Analyzer | None = None) -> OfflineReplies:
    """What :func:`extract_memory` asks the offline roles for one record, computed from the record alone.

    The registry plays no part here, so a large catch-up runs this for many records at once in worker
    processes (memrepo/graph/parallel.py) and canonicalizes in order afterwards. Same replies as
    ``extract_memory`` gets from the offline rules itself.

    Args:
        reader: the analyzer (None: the default, ``ANALYZERS["rules"]``).
    """
    reader = reader or analyzer()
    start = time.perf_counter()
    reply = reader.extract(dict(variables))
    _, frames = _clean(reply, variables)
    missing, trigger = audit(str(variables.get("text") or ""), frames, visual)
    seconds = time.perf_counter() - start
    if not trigger:
        return OfflineReplies(reply, None, missing, trigger, seconds)
    repair_vars = {**variables, "frames": [render_raw([f]) for f in frames], "missing": missing}
    start = time.perf_counter()
    repair = repair_offline(repair_vars, reader)
    return OfflineReplies(reply, repair, missing, trigger, seconds, time.perf_counter() - start)


def _given(reply: dict[str, Any] | None, offline: Any) -> Any:
    """The offline role itself, or one that returns the reply computed ahead."""
    return offline if reply is None else (lambda _variables: reply)


def _count_time(backend: Any, role: str, seconds: float) -> None:
    """Add the time a worker spent on ``role`` for this record to the backend's usage figures."""
    if seconds and backend is not None:
        backend.add_time(role, seconds)


def _run(backend: Any, role: str, variables: dict[str, Any], schema: dict[str, Any], offline: Any) -> dict[str, Any]:
    if backend is None:
        return offline(dict(variables))
    return backend.run(role, variables, schema, offline=offline)


def _clean(reply: dict[str, Any], variables: dict[str, Any]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Entity name -> type, and frames whose arms all name a listed (or resolvable) entity."""
    types: dict[str, str] = {}
    for item in reply.get("entities", []):
        name = " ".join(str(item.get("name", "")).split())
        if name and name not in types:
            t = str(item.get("type", "concept")).lower()
            types[name] = t if t in ENTITY_TYPES else "concept"
    people = set(variables.get("participants", []))
    frames = []
    for frame in reply.get("frames", []):
        arms = []
        for arm in frame.get("arms", []):
            name = " ".join(str(arm.get("entity", "")).split())
            if not name:
                continue
            types.setdefault(name, "person" if name in people else "concept")
            arms.append({"role": canonical_role(str(arm.get("role", "arg"))), "entity": name})
        frames.append({**frame, "arms": arms, "predicate": canonical_predicate(str(frame.get("predicate", "")))})
    return types, frames


def _supported(name: str, text: str, variables: dict[str, Any]) -> bool:
    """A repair may only use names the source supports: every key token appears in the text, or a participant."""
    if name in variables.get("participants", []):
        return True
    words = set(_words(text))
    from memrepo.graph.kappa import singularize

    singular = {singularize(w) for w in words}
    return all(t in words or t in singular for t in kappa(name).split())


def extract_memory(
    record: Record,
    *,
    namespace: str,
    backend: Any = None,
    registry: AnchorRegistry | None = None,
    participants: list[str] | None = None,
    replies: OfflineReplies | None = None,
    reader: Analyzer | None = None,
) -> MemoryGraph:
    """Anchors and frames of one episodic, semantic or procedural record (none of a task session's record).

    Args:
        backend: a :mod:`memrepo.llm` backend (None: the offline rules, directly).
        registry: the namespace's anchors, for canonicalization; the admitted anchors are added to it.
        replies: the offline roles' replies for this record, computed ahead (:func:`offline_replies`, in a
            worker process): used instead of running the offline rules here. Only for an offline backend.
        reader: the analyzer of the offline extractor and repair (the caller's ``Context.analyzer``; None:
            the default, ``ANALYZERS["rules"]``).

    Raises:
        ModelError: if a model call fails (the caller logs it; the record stays as it is).
    """
    graph = MemoryGraph(record.id, record.type)
    if not holds_frames(record):  # a task session's record: its turns' own records hold its frames
        return graph
    variables = record_variables(record, participants)
    given = replies or OfflineReplies(None, None)
    reader = reader or analyzer()
    reply = _run(backend, "extractor", variables, EXTRACTION_SCHEMA, _given(given.extractor, reader.extract))
    _count_time(backend, "extractor", given.seconds)
    types, frames = _clean(reply, variables)
    if given.missing is not None:  # audited with the reply, by the same rules
        missing, trigger = list(given.missing), given.trigger
    else:
        missing, trigger = audit(record.text, frames, is_visual(record))
    graph.missing = missing
    if trigger:
        rendered = [render_raw([f]) for f in frames]
        repair_vars = {**variables, "frames": rendered, "missing": missing}
        extra = _run(backend, "repair", repair_vars, EXTRACTION_SCHEMA,
                     _given(given.repair, lambda variables: repair_offline(variables, reader)))
        _count_time(backend, "repair", given.repair_seconds)
        extra_types, extra_frames = _clean(extra, variables)
        for frame in extra_frames:
            if all(_supported(a["entity"], record.text, variables) for a in frame["arms"]):
                frames.append(frame)
                for a in frame["arms"]:
                    types.setdefault(a["entity"], extra_types.get(a["entity"], "concept"))
        graph.repaired = True
    # Canonicalize before admission, so that the gate judges canonical names.
    renames: dict[str, str] = {}
    if registry is not None:
        for name in list(types):
            known = registry.name_for(name)
            if known and known != name:
                renames[name] = known
        candidates = registry.candidates([n for n in types if n not in renames],
                                         offline_decision=backend is None or bool(getattr(backend, "offline", False)))
        if candidates:
            items = [{"name": n, "type": types[n],
                      "candidates": [{"name": c, "cosine": s, "type": registry.type_for(c) or "concept"} for c, s in cands]}
                     for n, cands in candidates.items()]
            decision = _run(backend, "canonicalizer", {"entities": items, "text": record.text}, CANON_SCHEMA, decide_offline)
            chosen = validated_renames(decision, candidates)
            graph.renamed = dict(chosen)
            renames.update(chosen)
    canon_types: dict[str, str] = {}
    for name, type_ in types.items():
        canon = renames.get(name, name)
        if registry is not None and registry.type_for(canon):
            type_ = registry.type_for(canon) or type_
        canon_types.setdefault(canon, type_)
    # Admission: names that take part in frames first, in order of appearance; then the rest.
    in_frames = [renames.get(a["entity"], a["entity"]) for f in frames for a in f["arms"]]
    ordered = list(dict.fromkeys(in_frames + list(canon_types)))
    admitted, rejected = admit(ordered, record.type)
    graph.rejected = rejected
    refs = {kappa(n): AnchorRef.make(namespace, n, canon_types.get(n, "concept")) for n in admitted}
    graph.anchors = list(refs.values())
    graph.listed = {kappa(renames.get(n, n)) for n in (" ".join(str(e.get("name", "")).split())
                                                        for e in reply.get("entities", [])) if n}
    graph.frames = _frames(record, namespace, frames, renames, refs)
    if registry is not None:
        registry.add((a.name, a.type) for a in graph.anchors)
    return graph


def _frames(record: Record, namespace: str, raw: list[dict[str, Any]], renames: dict[str, str],
            refs: dict[str, AnchorRef]) -> list[Frame]:
    out: dict[str, Frame] = {}
    for item in raw:
        arms: list[Arm] = []
        seen: set[str] = set()
        for arm in item["arms"]:
            ref = refs.get(kappa(renames.get(arm["entity"], arm["entity"])))
            if ref is None or ref.key in seen:
                continue
            seen.add(ref.key)
            arms.append(Arm(arm["role"], ref))
        if len(seen) < 2:
            continue  # a frame binds at least two distinct anchors
        literals: list[FrameLiteral] = []
        for lit in item.get("literals") or []:
            key, value = canonical_role(str(lit.get("key", "value"))), str(lit.get("value", "")).strip()
            if value and (key, value) not in {(x.key, x.value) for x in literals}:
                literals.append(FrameLiteral(key, value))
        event_time = _clean_time(item.get("event_time"))
        if event_time is None and record.type == "episodic":
            event_time = record.event_time
        status = None
        if record.type == "episodic":
            status = item.get("status") if item.get("status") in ("done", "planned") else (record.status or "done")
        predicate = item["predicate"]
        chi = event_time or record.id
        iri = frame_iri(namespace, predicate, arms, record.type, chi)
        if iri in out:
            continue
        out[iri] = Frame(iri, predicate, tuple(arms), tuple(literals), record.type, record.mention_time,
                         event_time, status, (record.id,))
    return list(out.values())


def _clean_time(value: Any) -> str | None:
    if not value:
        return None
    text = str(value).strip()
    if re.fullmatch(r"\d{4}(-\d{2}(-\d{2}([T ][\d:.+\-Z]+)?)?)?(/\d{4}(-\d{2}(-\d{2})?)?)?", text):
        return text
    return None
