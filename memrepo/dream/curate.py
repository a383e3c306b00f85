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
            # a whole procedure instead of add/remove: ordered steps (tool, text, runs, cites), each with its
            # cautions (kind, text, runs, cites); the Steps section of the skill becomes it
            "procedure": {"type": "object", "properties": {
                "steps": {"type": "array", "maxItems": 30, "items": {
                    "type": "object", "required": ["tool", "text", "cites"],
                    "properties": {"tool": {"type": "string", "minLength": 1},
                                   "text": {"type": "string", "minLength": 3, "maxLength": 300},
                                   "runs": {"type": "array", "items": {"type": "string"}},
                                   "cites": {"type": "array", "items": {"type": "object"}},
                                   "cautions": {"type": "array", "maxItems": 10, "items": {
                                       "type": "object", "required": ["text", "cites"],
                                       "properties": {"text": {"type": "string", "minLength": 3,
                                                               "maxLength": 500},
                                                      "runs": {"type": "array", "items": {"type": "string"}},
                                                      "cites": {"type": "array", "items": {"type": "object"}}}}}}}},
                "runs": {"type": "array", "items": {"type": "string"}},
                "tools": {"type": "array", "items": {"type": "string"}},
                "outcomes": {"type": "object"}}},
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
    decisions, handled = procedure_decisions(variables, skills)
    for e in variables["experiences"]:
        if e["id"] in handled:
            continue
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
    touched: bool = False  # a procedure's steps now rest on new runs (their run numbers changed)

    @property
    def path(self) -> str:
        return f"{rec.SKILLS_FOLDER}/{self.slug}/SKILL.md"

    @property
    def changed(self) -> bool:
        return self.action == "deleted" or bool(self.added or self.removed or self.touched)

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.slug, "path": self.path, "action": self.action, "hand_written": self.hand_written,
                "touched": self.touched,
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
        if d.get("procedure"):
            _apply_procedure(out, c, skill, d, experiences, rejected)
            continue
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
        if not c.added and not c.removed and not c.touched:
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


# --- procedures: what successful runs of one kind of task did, and what failed runs did differently ---------

# Half task words, half tools (Jaccard each) a session needs to join a group, or a group the skill of earlier
# runs. On the tau-bench airline dev runs 0.35 merged 19 of 35 tasks into one skill; 0.55 halved the cautions.
GROUP_SIMILARITY = 0.45


@dataclass
class Caution:
    """What a failed run did differently, placed at the step it concerns. ``kind``: cause (the run said so),
    missing (it left the step out), order (it took the step before ``other``), extra (it called ``other``,
    which no successful run called, after the step), error (the step's tool reported an error)."""

    kind: str
    tool: str
    text: str
    runs: list[str]
    cites: list[tuple[str, str]]  # (experience id, quote)
    other: str = ""

    def broken_by(self, tools: list[str], order: list[str]) -> bool:
        """True if a run with these tool calls (in order) does what this caution warns about."""
        if self.kind == "missing":
            return self.tool not in tools
        if self.kind == "extra":
            return self.other in tools
        if self.kind == "order":
            return self.tool in tools and self.other in tools and tools.index(self.tool) < tools.index(self.other)
        return False  # a stated cause or an error: what the run did wrong is in its words, not its calls


@dataclass
class Step:
    tool: str
    text: str
    runs: list[str]
    cites: list[tuple[str, str]]
    cautions: list[Caution] = field(default_factory=list)


@dataclass
class Procedure:
    steps: list[Step]
    runs: list[str]  # every session the procedure rests on, in order: the numbers the steps refer to
    tools: list[str]
    description: str
    unexplained: list[str] = field(default_factory=list)  # failed runs no caution could be drawn from


_FILLER = {"please", "plea", "can", "could", "would", "like", "want", "need", "help", "hi", "hello", "hey", "thank",
           "thanks"}  # words of a request, not of its task


def _human(tool: str) -> str:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", tool) if w]
    return (" ".join(words) or tool).capitalize()


def step_text(tool: str, arguments: list[str]) -> str:
    with_ = f" with {', '.join(arguments)}" if arguments else ""
    return f"{_human(tool)}: call `{tool}`{with_}."


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _tools(session: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for a in session.get("actions") or ():
        if not out or out[-1] != a["tool"]:
            out.append(a["tool"])
    return out


def similarity(task: str, tools: set[str], other_task: str, other_tools: set[str]) -> float:
    return 0.5 * _jaccard(terms(task), terms(other_task)) + 0.5 * _jaccard(tools, other_tools)


def group_sessions(sessions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Sessions of one kind of task together: each joins the most similar group (task words and tools used),
    if similar enough, else starts one. Deterministic for the same sessions in the same order."""
    groups: list[list[dict[str, Any]]] = []
    for s in sessions:
        tools = set(_tools(s))
        scored = [(max(similarity(s["task"], tools, o["task"], set(_tools(o))) for o in g), i)
                  for i, g in enumerate(groups)]
        best = max(scored, default=(0.0, -1))
        if best[0] >= GROUP_SIMILARITY:
            groups[best[1]].append(s)
        else:
            groups.append([s])
    return groups


def _best_tool(sentence: str, tools: list[str]) -> str | None:
    from memrepo.dream.distill import mentions

    scored = [(n, -at, -i, t) for i, t in enumerate(tools) for n, at in [mentions(sentence, t)] if n]
    return max(scored)[3] if scored else None


def describe(sessions: list[dict[str, Any]], tools: list[str]) -> str:
    """What the skill is for, from the group: the task words most of its sessions share, in the order the first
    task has them, and what it rests on."""
    tasks = [s["task"] for s in sessions]
    shared = {t for t in terms(tasks[0]) - _FILLER if sum(t in terms(x) for x in tasks) * 2 >= len(tasks)}
    words, seen = [], set()
    for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]*", tasks[0]):
        stem = _stem(w.lower())
        if stem in shared and stem not in seen:
            words.append(w)
            seen.add(stem)
    what = " ".join(words) or _human(tools[0])
    ok = sum(s["outcome"] == "success" for s in sessions)
    return (f"How to {what[:1].lower() + what[1:]}: the steps successful runs took, in their order, with "
            f"cautions from failed runs. Use it for a task like \"{what}\" (learned from {len(sessions)} runs, "
            f"{ok} successful, using {', '.join(tools)}).")[:1000]


def build_procedure(sessions: list[dict[str, Any]], experiences: dict[str, dict[str, Any]]) -> Procedure | None:
    """The procedure of a group of sessions (their ``id``, ``task``, ``outcome``, ``actions``, ``cause`` and
    ``experiences``), or None without a successful run.

    Steps are the tools most successful runs called (all of them when there are two, the one there is when
    there is one), in the order those runs took them (their mean relative position). Each failed run gives a
    caution at the step it concerns: the step its stated cause names, else the first step it left out that
    every successful run took, else the first pair it took in an order no successful run did, else the first
    tool no successful run called, else its tool error.
    Each step cites the successful runs' experiences, each caution the failed run's, with quotes of them.
    """
    sessions = sorted(sessions, key=lambda s: (str(s.get("time", "")), s["id"]))
    ok = [s for s in sessions if s["outcome"] == "success" and _tools(s)]
    if not ok:
        return None
    need = 1 if len(ok) == 1 else max(2, (len(ok) + 1) // 2)
    counts: dict[str, int] = {}
    for s in ok:
        for t in dict.fromkeys(_tools(s)):
            counts[t] = counts.get(t, 0) + 1
    shared = [t for t in counts if counts[t] >= need]

    def rank(tool: str) -> tuple[float, int]:
        places = []
        for s in ok:
            seq = [t for t in dict.fromkeys(_tools(s)) if t in shared]
            if tool in seq:
                places.append(seq.index(tool) / max(1, len(seq) - 1))
        return sum(places) / len(places), list(counts).index(tool)

    order = sorted(shared, key=rank)

    def cite(session: dict[str, Any], quote_of: Any) -> list[tuple[str, str]]:
        out = []
        for exp_id in session.get("experiences") or ():
            e = experiences.get(exp_id)
            quote = quote_of(e) if e is not None else None
            if e is not None and quote and quote_in(quote, e["text"]):
                out.append((exp_id, plain(quote)))
        return out[:1]

    steps = []
    for tool in order:
        runs = [s["id"] for s in ok if tool in _tools(s)]
        args = sorted({k for s in ok for a in s.get("actions") or () if a["tool"] == tool
                       for k in (a.get("arguments") or {})})
        quote = f'"name": "{tool}"'
        cites = [c for s in ok if s["id"] in runs for c in cite(s, lambda e, q=quote: q)]
        steps.append(Step(tool, step_text(tool, args), runs, cites))
    by_tool = {s.tool: s for s in steps}
    success_tools = set(counts)
    unexplained = []
    for f in (s for s in sessions if s["outcome"] == "failure"):
        seq = list(dict.fromkeys(_tools(f)))
        cause = f.get("cause") or None
        caution: Caution | None = None
        if cause:
            named = _best_tool(cause["text"], order + [t for t in seq if t not in order])
            if named is not None and named in by_tool:
                caution = Caution("cause", named, f"Caution: a failed run says \"{plain(cause['text'])}\"", [f["id"]],
                                  cite(f, lambda e, q=cause["text"]: q))
        if caution is None:
            # only what every successful run did sets a failure apart: a step all of them took, an order all
            # of them that took both steps kept
            missing = [t for t in order if t not in seq and counts[t] == len(ok)]
            late = [(a, b) for i, a in enumerate(order) for b in order[i + 1:] if a in seq and b in seq
                    and seq.index(b) < seq.index(a) and _always_before(ok, a, b)]
            extra = [t for t in seq if t not in success_tools]
            failing = next((a for a in f.get("actions") or () if a.get("error") and a["tool"] in by_tool), None)
            if missing:
                caution = Caution("missing", missing[0], "Caution: a failed run left this step out.", [f["id"]], [])
            elif late:
                a, b = late[0]
                caution = Caution("order", b, f"Caution: a failed run did this before `{a}`.", [f["id"]], [], a)
            elif extra:
                before = [t for t in seq[:seq.index(extra[0])] if t in by_tool]
                at = before[-1] if before else order[0]
                caution = Caution("extra", at, f"Caution: a failed run called `{extra[0]}` after this step; no "
                                              "successful run did.", [f["id"]], [], extra[0])
            elif failing is not None:
                caution = Caution("error", failing["tool"], "Caution: in a failed run this step's tool reported "
                                                            "an error.", [f["id"]], [])
            if caution is not None:
                caution.cites = cite(f, lambda e: e["advice"])
        if caution is None or not caution.cites:
            unexplained.append(f["id"])
            continue
        same = next((c for c in by_tool[caution.tool].cautions if c.text == caution.text), None)
        if same is not None:
            same.runs += caution.runs
            same.cites += caution.cites
        else:
            by_tool[caution.tool].cautions.append(caution)
    tools = list(dict.fromkeys(t for s in sessions for t in _tools(s)))
    return Procedure(steps, [s["id"] for s in sessions], tools, describe(sessions, order), unexplained)


def _always_before(ok: list[dict[str, Any]], a: str, b: str) -> bool:
    """True if every successful run that called both ``a`` and ``b`` called ``a`` first."""
    for s in ok:
        seq = list(dict.fromkeys(_tools(s)))
        if a in seq and b in seq and seq.index(b) < seq.index(a):
            return False
    return True


def _refs(runs: list[str], numbers: dict[str, int]) -> str:
    return f" [run{'s' if len(runs) > 1 else ''} {', '.join(str(numbers[r]) for r in runs if r in numbers)}]"


def render_procedure(skill: Skill, procedure: Procedure, runs: list[str], outcomes: dict[str, str]) -> None:
    """Write ``procedure`` into the skill's ``## Steps`` (and ``## Runs``, the numbers its steps refer to)."""
    numbers = {r: i for i, r in enumerate(runs, 1)}
    steps = ["## Steps", ""]
    for n, step in enumerate(procedure.steps, 1):
        steps.append(f"{n}. {step.text}{_refs(step.runs, numbers)}")
        steps += [f"   - {c.text}{_refs(c.runs, numbers)}" for c in step.cautions]
    listing = ["## Runs", "", *(f"{numbers[r]}. {r} ({outcomes.get(r, 'unclear')})" for r in runs)]
    lines = skill.body.rstrip("\n").split("\n") if skill.body.strip() else []
    keep, skipping = [], False
    for ln in lines:
        if re.match(r"^#{1,6}\s+(steps|runs)\b", ln, re.I):
            skipping = True
            continue
        if skipping and _HEADING.match(ln):
            skipping = False
        if not skipping:
            keep.append(ln)
    while keep and not keep[-1].strip():
        keep.pop()
    skill.body = "\n".join([*keep, "", *steps, "", *listing]).strip("\n") + "\n"


def procedure_lines(skill: Skill) -> list[str]:
    """The steps and cautions of a skill's ``## Steps`` without their run numbers: what a diff compares."""
    out, inside = [], False
    for ln in skill.body.split("\n"):
        if _HEADING.match(ln):
            inside = bool(_STEPS_HEADING.match(ln))
            continue
        m = _ITEM.match(ln)
        if inside and m:
            out.append(re.sub(r"\s*\[runs? [0-9, ]+\]$", "", m.group(3)).strip())
    return out


def _slug_for(procedure: dict[str, Any], taken: set[str]) -> str:
    words = re.findall(r"[a-z0-9]+", str(procedure.get("phrase", "")).lower())
    base = "-".join([w for w in words if len(w) >= 3][:3]) or "task"
    slug, n = base[:60], 2
    while slug in taken:
        slug, n = f"{base[:56]}-{n}", n + 1
    return slug


def procedure_dict(p: Procedure, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    def cites(cs: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [{"experience": e, "quote": q} for e, q in cs]

    return {"steps": [{"tool": st.tool, "text": st.text, "runs": st.runs, "cites": cites(st.cites),
                       "cautions": [{"kind": c.kind, "tool": c.tool, "other": c.other, "text": c.text, "runs": c.runs,
                                     "cites": cites(c.cites)} for c in st.cautions]} for st in p.steps],
            "runs": p.runs, "tools": p.tools, "unexplained": p.unexplained,
            "outcomes": {s["id"]: s["outcome"] for s in sessions}}


def procedure_decisions(variables: dict[str, Any], skills: list[dict[str, Any]]
                        ) -> tuple[list[dict[str, Any]], set[str]]:
    """The offline curator's procedures: the sessions with tool calls grouped by kind of task; each group edits
    the skill an earlier group of the same kind made (its procedure built again over its runs and the new
    ones), or creates one. Returns the decisions and the experiences they handled."""
    sessions = [s for s in variables.get("sessions") or () if s.get("actions")]
    known = {e["id"]: e for e in variables["experiences"]} | dict(variables.get("cited") or {})
    decisions: list[dict[str, Any]] = []
    handled: set[str] = set()
    taken = {s["slug"] for s in skills}
    for group in group_sessions(sessions):
        exps = [e for s in group for e in s.get("experiences") or () if e in known]
        if not exps:
            continue
        handled |= set(exps)
        tools = set().union(*(_tools(s) for s in group))
        scored = [(max((similarity(r["task"], set(_tools(r)), g["task"], tools) for r in sk.get("runs") or ()
                        for g in group), default=0.0), sk["slug"], sk) for sk in skills if sk.get("runs")]
        best = max(scored, key=lambda x: (x[0], x[1]), default=None)
        skill = best[2] if best and best[0] >= GROUP_SIMILARITY else None
        ids = {s["id"] for s in group}
        everything = [*(r for r in (skill.get("runs") if skill else []) or () if r["id"] not in ids), *group]
        procedure = build_procedure(everything, known)
        if procedure is None:
            decisions += [{"experience": e, "action": "deferred", "reason": "no successful run of this task yet"}
                          for e in exps]
            continue
        data = procedure_dict(procedure, everything)
        first = sorted(everything, key=lambda s: (str(s.get("time", "")), s["id"]))[0]
        data["phrase"] = procedure.description.split(":", 1)[0].removeprefix("How to ")
        slug = skill["slug"] if skill else _slug_for(data, taken)
        taken.add(slug)
        if skill is None:
            skills.append({"slug": slug, "name": slug, "steps": [], "description": procedure.description,
                           "runs": everything, "tools": procedure.tools})
        decisions.append({"experience": exps[0], "action": "edit" if skill else "create", "skill": slug,
                          "description": procedure.description, "procedure": data,
                          "reason": f"procedure of {len(everything)} runs of \"{first['task'][:80]}\" "
                                    f"({sum(s['outcome'] == 'success' for s in everything)} successful)"})
    return decisions, handled


def _apply_procedure(out: Curated, c: SkillChange, skill: Skill, d: dict[str, Any], experiences: dict[str, str],
                     rejected: set[str]) -> None:
    """Check a procedure decision (every step and caution cites an experience with a quote found in it; a step or
    caution rejected in an earlier review is left out) and write it into ``skill``."""
    data = d["procedure"]
    slug = skill.slug
    before = procedure_lines(skill)

    def checked(item: dict[str, Any]) -> list[tuple[str, str]] | None:
        cites = [(str(x["experience"]), plain(str(x["quote"]))) for x in item.get("cites") or ()
                 if isinstance(x, dict) and str(x.get("experience")) in experiences
                 and quote_in(str(x.get("quote", "")), experiences[str(x["experience"])])]
        text = plain(str(item["text"]))
        if not cites:
            out.counts["refused"] += 1
            out.problems.append(f"{slug}: {text!r} refused: no quote found in the experience it cites")
            return None
        if text not in before and step_key(slug, text) in rejected:
            out.counts["rejected_before"] += 1
            return None
        return cites

    steps, cited = [], {}
    for st in data.get("steps") or ():
        cites = checked(st)
        if cites is None:
            continue
        cited[plain(st["text"])] = cites
        cautions = []
        for ct in st.get("cautions") or ():
            ccites = checked(ct)
            if ccites is not None:
                cited[plain(ct["text"])] = ccites
                cautions.append(Caution(str(ct.get("kind", "")), str(st["tool"]), plain(ct["text"]),
                                        list(ct.get("runs") or ()), ccites, str(ct.get("other", ""))))
        steps.append(Step(str(st["tool"]), plain(st["text"]), list(st.get("runs") or ()), cites, cautions))
    if not steps:
        return
    own_runs = [str(r) for r in skill.own.get("citations") or ()]
    runs = [*own_runs, *(str(r) for r in data.get("runs") or () if str(r) not in own_runs)]
    old_body = skill.body
    render_procedure(skill, Procedure(steps, runs, list(data.get("tools") or ()), ""), runs,
                     dict(data.get("outcomes") or {}))
    after = procedure_lines(skill)
    for text in after:
        if text not in before:
            c.added.append(AddedStep(text, step_key(slug, text), cited.get(text, [])))
    for text in before:
        if text not in after:
            c.removed.append((text, removal_key(slug, text)))
    out.counts["steps_added"] += sum(1 for t in after if t not in before)
    out.counts["steps_removed"] += sum(1 for t in before if t not in after)
    c.touched = skill.body != old_body
    if not c.hand_written and d.get("description"):
        skill.meta["description"] = plain(str(d["description"]))
    skill.set_own(citations=runs, tools=list(data.get("tools") or ()))
