"""The curator (role ``curator``): turn experiences into skill edits, each added step citing its experiences.

For each experience the curator creates, edits or deletes a skill, or marks the
experience ``covered`` (an existing step already says it), ``not_worth`` (not
worth a skill) or ``deferred`` (not enough evidence yet). Deterministic code
checks every reply: a step is kept only with at least one citation whose quote
occurs verbatim in the cited experience (an invented quote is refused, never
committed); a step or deletion rejected in an earlier review is not proposed
again; removed steps must exist.

Skills are ``procedural/skills/<slug>/SKILL.md`` in the Agent Skills format:
front matter ``name`` and ``description`` (plus memrepo's ``id``, ``version``
and ``experiences``), then Markdown with a ``## Steps`` list. The offline
curator matches an experience to the skill whose name or description holds the
task's first word (its verb), splits the advice at ``;`` into steps, keeps a
step an existing one already says (``covered``), and creates ``<verb>-routine``
when no skill matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memrepo import records as rec
from memrepo.dream.distill import plain, quote_in
from memrepo.graph.model import digest
from memrepo.read.plan import content_terms

ROLE = "curator"
ACTIONS = ("create", "edit", "delete", "covered", "not_worth", "deferred")
COVER = 0.7  # share of a new step's words an existing step must hold to cover it

_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_STEPS_HEADING = re.compile(r"^#{1,6}\s+steps\b", re.I)
_HEADING = re.compile(r"^#{1,6}\s")
_ITEM = re.compile(r"^(\s*)(\d+[.)]|[-*])\s+(\S.*)$")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["decisions"],
    "properties": {"decisions": {"type": "array", "maxItems": 80, "items": {
        "type": "object",
        "required": ["experience", "action", "reason"],
        "properties": {
            "experience": {"type": "string", "minLength": 1},
            "action": {"type": "string", "enum": list(ACTIONS)},
            "skill": {"type": ["string", "null"]},
            "description": {"type": ["string", "null"]},
            "add_steps": {"type": "array", "maxItems": 6, "items": {
                "type": "object", "required": ["text", "cites"],
                "properties": {"text": {"type": "string", "minLength": 3, "maxLength": 300},
                               "cites": {"type": "array", "minItems": 1, "maxItems": 4, "items": {
                                   "type": "object", "required": ["experience", "quote"],
                                   "properties": {"experience": {"type": "string"},
                                                  "quote": {"type": "string", "minLength": 3}}}}}}},
            "remove_steps": {"type": "array", "maxItems": 6, "items": {"type": "string"}},
            "reason": {"type": "string"},
        },
    }}},
}


# --- skill files ------------------------------------------------------------------------------------


TOP_LEVEL = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")  # the Agent Skills format
OWN_FIELDS = ("id", "version", "experiences", "citations", "tools")  # memrepo's, kept under ``metadata``


@dataclass
class Skill:
    """One ``SKILL.md``: its front matter (in file order) and Markdown body.

    memrepo's own fields (:data:`OWN_FIELDS`) live under ``metadata``; a skill written before that layout (with
    them at the top level) is read the same and written in the new layout when a run edits it.
    """

    slug: str
    meta: dict[str, Any]
    body: str

    @property
    def path(self) -> str:
        return f"{rec.SKILLS_FOLDER}/{self.slug}/SKILL.md"

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.slug)

    @property
    def description(self) -> str:
        return str(self.meta.get("description") or "")

    @property
    def own(self) -> dict[str, Any]:
        """memrepo's fields: those under ``metadata``, else the old top-level ones."""
        nested = self.meta.get("metadata")
        found = {k: self.meta[k] for k in OWN_FIELDS if k in self.meta}
        if isinstance(nested, dict):
            found.update({k: nested[k] for k in OWN_FIELDS if k in nested})
        return found

    @property
    def version(self) -> int:
        try:
            return int(self.own.get("version") or 0)
        except (TypeError, ValueError):
            return 0

    @property
    def hand_written(self) -> bool:
        """A skill memrepo did not write (no ``version`` of its own)."""
        return "version" not in self.own

    def set_own(self, **fields: Any) -> None:
        """Set memrepo's fields under ``metadata`` (moving old top-level ones there)."""
        nested = self.meta.get("metadata")
        nested = dict(nested) if isinstance(nested, dict) else {}
        for key in OWN_FIELDS:
            if key in self.meta:
                nested.setdefault(key, self.meta.pop(key))
        nested.update(fields)
        self.meta["metadata"] = {k: nested[k] for k in sorted(nested)}

    def steps(self) -> list[str]:
        return [m.group(3).strip() for m in map(_ITEM.match, self.body.split("\n")) if m and not m.group(1)]
    def add_steps(self, texts: list[str]) -> None:
        lines = self.body.rstrip("\n").split("\n") if self.body.strip() else []
        start = next((i for i, ln in enumerate(lines) if _STEPS_HEADING.match(ln)), None)
        if start is None:
            lines += ["", "## Steps", ""]
            start = len(lines) - 2
        end, last, numbered = start + 1, None, True
        while end < len(lines) and not _HEADING.match(lines[end]):
            m = _ITEM.match(lines[end])
            if m and not m.group(1):
                last, numbered = end, m.group(2)[0].isdigit()
            end += 1
        count = sum(1 for ln in lines[start + 1:end] if (m := _ITEM.match(ln)) and not m.group(1))
        new = [f"{count + i}. {t}" if numbered else f"- {t}" for i, t in enumerate(texts, 1)]
        at = (last + 1) if last is not None else start + 1
        if last is None:
            new = ["", *new]
        lines[at:at] = new
        self.body = "\n".join(lines).strip("\n") + "\n"

    def remove_steps(self, texts: list[str]) -> None:
        drop = {plain(t) for t in texts}
        out, n = [], 0
        for ln in self.body.split("\n"):
            m = _ITEM.match(ln)
            if m and not m.group(1):
                if plain(m.group(3)) in drop:
                    continue
                if m.group(2)[0].isdigit():
                    n += 1
                    ln = f"{n}{m.group(2)[-1]} {m.group(3)}"
            out.append(ln)
        self.body = "\n".join(out)

    def render(self) -> bytes:
        """The file: the format's fields first (in its order), then any other a person wrote, block-style YAML."""
        body = self.body if self.body.endswith("\n") else self.body + "\n"
        meta = {k: self.meta[k] for k in TOP_LEVEL if k in self.meta}
        meta.update({k: v for k, v in self.meta.items() if k not in meta})
        return f"---\n{rec.dump_block_front_matter(meta)}---\n{body}".encode("utf-8")


def parse_skill(slug: str, data: bytes) -> Skill:
    meta, body = rec.split_front_matter(data, f"{rec.SKILLS_FOLDER}/{slug}/SKILL.md")
    return Skill(slug, dict(meta), body)


def new_skill(slug: str, description: str) -> Skill:
    title = slug.replace("-", " ").capitalize()
    return Skill(slug, {"name": slug, "description": description}, f"# {title}\n\n{description}\n\n## Steps\n")


def check_slug(slug: str) -> str | None:
    return slug if _SLUG_RE.match(slug or "") else None


# --- keys of decisions (the negative cache of reviews) --------------------------------------------


def step_key(slug: str, text: str) -> str:
    return digest("skill-step", slug, plain(text).lower().rstrip("."), length=16)


def removal_key(slug: str, text: str) -> str:
    return digest("skill-remove", slug, plain(text).lower().rstrip("."), length=16)


def delete_key(slug: str) -> str:
    return digest("skill-delete", slug, length=16)


# --- the offline curator ----------------------------------------------------------------------------


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> set[str]:
    return {_stem(t) for t in content_terms(text)}


def covers(existing: str, step: str) -> bool:
    new = terms(step)
    return bool(new) and len(new & terms(existing)) / len(new) >= COVER


def task_verb(task: str) -> str:
    words = re.findall(r"[a-z]+", task.lower())
    return words[0] if words else "task"


def _match(task: str, skills: list[dict[str, Any]]) -> dict[str, Any] | None:
    verb, wanted = _stem(task_verb(task)), terms(task)
    best, score = None, 0
    for s in skills:
        have = terms(s["name"].replace("-", " ") + " " + s["description"])
        if verb in have and len(wanted & have) > score:
            best, score = s, len(wanted & have)
    return best


def offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Deterministic curator over ``experiences`` and the candidate ``skills`` (see the module text)."""
    skills = [dict(s) for s in variables["skills"]]
    decisions = []
    for e in variables["experiences"]:
        base = {"experience": e["id"]}
        if e["outcome"] == "unclear":
            decisions.append({**base, "action": "deferred", "reason": "the session's outcome is unclear"})
            continue
        pieces = [p.strip() for p in e["advice"].split(";") if p.strip()]
        if not any(len(terms(p)) >= 2 for p in pieces):
            decisions.append({**base, "action": "not_worth", "reason": "too short to be a step"})
            continue
        skill = _match(e["task"], skills)
        if skill is None:
            verb = task_verb(e["task"])
            slug = f"{verb}-routine"
            task = e["task"].strip().rstrip(".")
            how = task[:1].lower() + task[1:]
            skill = {"slug": slug, "name": slug, "steps": [],
                     "description": f"How to {how} and similar tasks, learned from task sessions"}
            skills.append(skill)
            action = "create"
        else:
            action = "edit"
        new, kept = [], []
        for piece in pieces:
            covering = next((s for s in skill["steps"] if covers(s, piece)), None)
            if covering is not None:
                kept.append(covering)
            elif len(terms(piece)) >= 2:
                new.append({"text": piece[:1].upper() + piece[1:] + ".", "cites": [{"experience": e["id"],
                                                                                   "quote": piece}]})
        if not new:
            decisions.append({**base, "action": "covered", "skill": skill["slug"],
                              "reason": f"already a step: {kept[0]}" if kept else "already covered"})
            continue
        skill["steps"] = skill["steps"] + [s["text"] for s in new]
        decisions.append({**base, "action": action, "skill": skill["slug"], "description": skill["description"],
                          "add_steps": new, "remove_steps": [],
                          "reason": f"{e['lesson']} lesson from a {e['outcome']} session"})
    return {"decisions": decisions}


# --- checking and applying a reply ------------------------------------------------------------------


@dataclass
class AddedStep:
    text: str
    key: str
    cites: list[tuple[str, str]]  # (experience id, quote found in it)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "key": self.key, "cites": [{"experience": e, "quote": q} for e, q in self.cites]}


@dataclass
class SkillChange:
    """What the run does to one skill file."""

    slug: str
    action: str  # created | edited | deleted
    before: bytes | None
    skill: Skill | None
    version: tuple[int, int]
    hand_written: bool = False
    added: list[AddedStep] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (text, key)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (existing step, supporting experience)
    delete_key: str | None = None

    @property
    def path(self) -> str:
        return f"{rec.SKILLS_FOLDER}/{self.slug}/SKILL.md"

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.slug, "path": self.path, "action": self.action, "hand_written": self.hand_written,
                "version": list(self.version), "added": [a.to_dict() for a in self.added],
                "removed": [{"text": t, "key": k} for t, k in self.removed],
                "kept": [{"step": s, "experience": e} for s, e in self.kept],
                **({"delete_key": self.delete_key} if self.delete_key else {})}


@dataclass
class Curated:
    changes: dict[str, SkillChange] = field(default_factory=dict)
    marks: list[dict[str, Any]] = field(default_factory=list)  # covered / not_worth / deferred decisions
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("steps_added", "steps_removed", "covered", "not_worth", "deferred", "refused", "rejected_before",
         "invalid"), 0))
    problems: list[str] = field(default_factory=list)


def apply(reply: dict[str, Any], skills: dict[str, Skill], experiences: dict[str, str], rejected: set[str],
          *, by_hand: set[str] = frozenset()) -> Curated:  # type: ignore[assignment]
    """Check ``reply`` against the experiences (id -> text) and apply it to ``skills`` (slug -> skill, edited).

    ``by_hand``: skills a person edited since a run wrote them; their changes are marked ``hand_written``.

    Returns what changed; ``skills`` gains created skills and loses deleted ones.
    """
    out = Curated()

    def bad(message: str) -> None:
        out.counts["invalid"] += 1
        out.problems.append(message)

    def change(slug: str, action: str) -> SkillChange:
        if slug not in out.changes:
            skill = skills.get(slug)
            before = skill.render() if skill is not None else None
            v = skill.version if skill is not None else 0
            out.changes[slug] = SkillChange(slug, action, before, skill, (v, v),
                                            hand_written=bool(skill and (skill.hand_written or slug in by_hand)))
        return out.changes[slug]

    for d in reply["decisions"]:
        exp, action, slug = d["experience"], d["action"], check_slug(str(d.get("skill") or ""))
        if exp not in experiences:
            bad(f"the curator named an experience it was not given: {exp!r}")
            continue
        if action in ("not_worth", "deferred"):
            out.counts[action] += 1
            out.marks.append({"experience": exp, "action": action, "reason": d["reason"]})
            continue
        if slug is None:
            bad(f"{action} of {exp}: no valid skill slug ({d.get('skill')!r})")
            continue
        if action == "covered":
            if slug not in skills:
                bad(f"covered by {slug!r}, which is not a skill")
                continue
            out.counts["covered"] += 1
            step = next((s for s in skills[slug].steps() if covers(s, d["reason"])), None)
            out.marks.append({"experience": exp, "action": "covered", "skill": slug, "reason": d["reason"]})
            if step is None:
                step = d["reason"].removeprefix("already a step: ")
            if step in skills[slug].steps():
                change(slug, "edited").kept.append((step, exp))
            continue
        if action == "delete":
            if slug not in skills:
                bad(f"delete of {slug!r}, which is not a skill")
                continue
            key = delete_key(slug)
            if key in rejected:
                out.counts["rejected_before"] += 1
                continue
            c = change(slug, "deleted")
            c.action, c.delete_key, c.skill = "deleted", key, None
            del skills[slug]
            continue
        if action == "create" and slug not in skills:
            description = plain(str(d.get("description") or ""))
            if not description:
                bad(f"create of {slug!r} without a description")
                continue
            skills[slug] = new_skill(slug, description)
            c = change(slug, "created")
            c.before, c.hand_written = None, False
        elif slug not in skills:
            bad(f"edit of {slug!r}, which is not a skill")
            continue
        else:
            c = change(slug, "edited")
        skill = skills[slug]
        removed = []
        for text in d.get("remove_steps") or []:
            if plain(text) not in {plain(s) for s in skill.steps()}:
                bad(f"{slug}: cannot remove a step it does not have: {text!r}")
                continue
            key = removal_key(slug, text)
            if key in rejected:
                out.counts["rejected_before"] += 1
                continue
            removed.append(text)
            c.removed.append((plain(text), key))
        if removed:
            skill.remove_steps(removed)
            out.counts["steps_removed"] += len(removed)
        added = []
        have = {plain(s).lower().rstrip(".") for s in skill.steps()}
        for step in d.get("add_steps") or []:
            text = plain(step["text"])
            cites = [(str(x["experience"]), plain(x["quote"])) for x in step["cites"]
                     if str(x["experience"]) in experiences and quote_in(x["quote"], experiences[str(x["experience"])])]
            if not cites:
                out.counts["refused"] += 1
                out.problems.append(f"{slug}: step {text!r} refused: no quote found in the experience it cites")
                continue
            key = step_key(slug, text)
            if key in rejected:
                out.counts["rejected_before"] += 1
                continue
            if text.lower().rstrip(".") in have:
                continue
            have.add(text.lower().rstrip("."))
            added.append(text)
            c.added.append(AddedStep(text, key, cites))
        if added:
            skill.add_steps(added)
            out.counts["steps_added"] += len(added)
    for slug, c in list(out.changes.items()):
        if c.action == "deleted":
            continue
        if not c.added and not c.removed:
            if c.action == "created":
                skills.pop(slug, None)
                del out.changes[slug]
            continue
        skill = skills[slug]
        old = c.version[0]
        cited = list(dict.fromkeys([*map(str, skill.own.get("experiences") or []),
                                    *(e for a in c.added for e, _ in a.cites)]))
        skill.set_own(id=f"skill-{slug}", version=old + 1, experiences=cited)
        c.version = (old, old + 1)
        c.skill = skill
    return out
