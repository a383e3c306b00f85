"""Roles: the arms of a clause's frame after its verb, and the frames its noun phrases imply.

After the verb group (:mod:`memrepo.nlp.clauses`), each token of the rest of the clause
is read by the first step of :data:`_ARM_STEPS` that takes it: an appositive name
("a dog called Pip"), a relative clause, a coordinated verb or phrase, "to" and a verb,
a capacity ("as a nurse"), a preposition and its phrase (its role from the preposition,
the predicate and the phrase's type: :func:`prep_role`), a pronoun, a direct object.
:func:`register` makes a phrase an entity, with the frames it implies by itself
("my sister Ana": relative; "my bike": own; "a baker called Rui": is_a).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, TypeVar

from memrepo.nlp import lexicon as lx
from memrepo.nlp.chunks import NP, np_start, parse_np, settle_name_type
from memrepo.nlp.discourse import ClauseFrame, Discourse, dedupe_arms
from memrepo.nlp.morphology import is_past, is_verb_form, kappa, lemma
from memrepo.nlp.tokens import Tok

if TYPE_CHECKING:
    from memrepo.nlp.clauses import Clause

_COUNT_KEYS = frozenset({"count", "number"})
State = TypeVar("State")


def first_outcome(steps: "tuple[Callable[[State, Tok], str | None], ...]", state: State, tok: Tok) -> str | None:
    """What the first step that takes ``tok`` says (the clause's verb steps, a frame's arm steps); None: none took it."""
    for step in steps:
        outcome = step(state, tok)
        if outcome is not None:
            return outcome
    return None


def register(ctx: Discourse, np: NP, prep: str | None, role: str, frames: list[ClauseFrame]) -> str | None:
    """Register a noun phrase as an entity, with the side frames it implies (kinship, ownership, naming)."""
    type_ = settle_name_type(np, prep, role)
    name = np.name
    if np.possessor and (np.person_noun or np.head in lx.ANIMALS) and not name[:1].isupper():
        name = f"{np.possessor}'s {name}"  # "my kids" -> "Ana's kids"
    entity = ctx.entity(name, type_)
    if entity is None:
        return None
    title = name.split()[0].lower().rstrip(".")
    gender = lx.GENDER.get(np.head) or lx.GENDER.get(title) if name[:1].isupper() or np.possessor else None
    if gender:
        ctx.gender[kappa(entity)] = gender  # "my sister Ana", "Mrs. Costa": "she"
    if np.possessor and np.possessor != entity and not np.favorite:
        if np.head in lx.KIN or np.head in lx.SOCIAL:
            kin = np.head in lx.KIN
            frames.append(ClauseFrame("relative" if kin else "acquaintance",
                                      [("person", np.possessor), ("relative" if kin else "contact", entity)],
                                      [("relation", np.head)]))
        elif np.head in lx.ANIMALS or np.head in lx.OBJECT_NOUNS:
            frames.append(ClauseFrame("own", [("owner", np.possessor), ("item", entity)], []))
    elif np.category and not np.possessor:
        category = ctx.entity(np.category, "person" if np.head in lx.PERSON_NOUNS else "concept")
        if category and category != entity:
            frames.append(ClauseFrame("is_a", [("instance", entity), ("category", category)], []))
    return entity


def prep_role(prep: str, predicate: str, type_: str, passive: bool = False) -> str:
    """The role of a prepositional argument, from the preposition, the predicate and the argument's type."""
    motion = predicate in lx.STAY_PREDICATES
    type_ = type_.rstrip("?")
    if prep == "by":
        return "agent" if passive else "by"
    if prep in lx.LOCATIVE_PREPOSITIONS:
        return "occasion" if type_ == "event" and prep == "at" else "location"
    if prep == "on":
        return "location" if type_ == "location" else ("occasion" if type_ == "event" else "topic")
    if prep in lx.GOAL_PREPOSITIONS:
        if type_ == "person" and not motion:
            return "recipient"
        return "event" if type_ == "event" else "destination"
    if prep == "from":
        return "origin" if type_ == "location" or motion else "source"
    if prep == "with":
        return "companion" if type_ in lx.COMPANION_TYPES else "instrument"
    if prep == "for":
        if type_ == "person":
            return "beneficiary"
        return "employer" if predicate in lx.EMPLOY_PREDICATES else "purpose"
    if prep == "about":
        return "topic"
    if prep in lx.PATH_PREPOSITIONS:
        return "via"
    return prep


# --- the arms of one frame ---------------------------------------------------------------------


@dataclass
class _Arms:
    """The frame being built from a clause's tokens after its verb."""

    c: "Clause"
    predicate: str
    subj_role: str
    obj_role: str
    i: int
    arms: list[tuple[str, str]] = field(default_factory=list)
    literals: list[tuple[str, str]] = field(default_factory=list)
    last_role: str | None = None
    last_entity: str | None = None
    last_np: NP | None = None
    prep: str | None = None
    has_object: bool = False
    person_role: str | None = None  # the role of a person noun ("two friends"), for the names after it

    def took(self, role: str, entity: str, np: NP) -> None:
        """``entity`` (of the phrase ``np``) is an arm in ``role``; later coordinated phrases share the role."""
        self.arms.append((role, entity))
        self.last_role, self.last_entity, self.last_np = role, entity, np


_NEXT, _STOP = "next", "stop"  # read on; the frame's arms end here


def build_frame(c: "Clause", i: int) -> ClauseFrame | None:
    """The frame of clause ``c`` from its token ``i`` on (after its verb group), or None when it binds fewer than
    two entities or its subject is unresolved."""
    if c.verb is None:
        predicate, subj_role, obj_role = "is_a", "subject", "category"
    else:
        _family, subj_role, obj_role = lx.VERBS.get(c.verb, (c.verb, "agent", "theme"))
        predicate = lx.predicate_of(c.verb)
    b = _Arms(c, predicate, subj_role, obj_role, i)
    if c.subject:
        b.arms.append(("theme" if c.passive else subj_role, c.subject))
    while b.i < c.n:
        outcome = first_outcome(_ARM_STEPS, b, c.toks[b.i])
        if outcome == _STOP:
            break
        if outcome is None:
            b.i += 1
    return _frame(b)


def _value(b: _Arms, tok: Tok) -> str | None:
    if tok.lit is None:
        return None
    b.i += 1
    return _NEXT


def _naming(b: _Arms, tok: Tok) -> str | None:
    """"a puppy named Pip": the name is the arm, an instance of the noun before it."""
    c, i = b.c, b.i
    nxt = c.at(i + 1)
    if not (tok.low in lx.NAMING_WORDS and nxt is not None and nxt.cap and b.last_entity):
        return None
    np, j, _ = parse_np(c.ctx, c.toks, i + 1, c.lits)
    if np is not None:
        base_type = b.last_np.type if b.last_np else "concept"
        base_type = {"concept": "name", "object": "name"}.get(base_type, base_type)
        name = c.ctx.entity(np.name, base_type if base_type != "name" else settle_name_type(np, None, "object"))
        if name:
            c.side.append(ClauseFrame("is_a", [("instance", name), ("category", b.last_entity)], []))
            b.arms = [(r, name if e == b.last_entity else e) for r, e in b.arms]
            b.last_entity = name
    b.i = max(j, i + 1)
    return _NEXT


def _relative(b: _Arms, tok: Tok) -> str | None:
    """"a friend who runs a bakery": the relative clause's subject is the last arm."""
    nxt = b.c.at(b.i + 1)
    if tok.low in lx.RELATIVE_PRONOUNS and nxt is not None and b.last_entity and (
            is_verb_form(nxt) or nxt.low in lx.AUXILIARIES):
        b.c.subclause(b.c.toks[b.i + 1:], b.last_entity, False)
        return _STOP
    return None


def _coordination(b: _Arms, tok: Tok) -> str | None:
    """"... and made two bowls": same subject, new predicate; ", taught by X": passive on the last noun;
    "... with Ana and Rui": another arm in the same role."""
    c = b.c
    nxt = c.at(b.i + 1)
    if tok.low not in lx.COORDINATORS or nxt is None:
        return None
    after = c.at(b.i + 2)
    verbish = is_verb_form(nxt) and not nxt.cap and (
        is_past(nxt) or nxt.low in lx.IRREGULAR or nxt.low in lx.STRONG_VERBS or after is None
        or after.lit is not None or after.low in lx.DETERMINERS or after.low in lx.PREPOSITIONS
        or after.low in lx.POSSESSIVES or after.low in lx.PRONOUNS)
    if verbish or (nxt.low in lx.AUXILIARIES and c.subject):
        passive_next = after is not None and after.low == "by"
        c.subclause(c.toks[b.i + 1:], b.last_entity if passive_next and b.last_entity else c.subject, c.planned)
        return _STOP
    b.i += 1
    i = b.i
    if b.last_role and i < c.n and (np_start(c.toks[i]) or (c.toks[i].lit is not None and i + 1 < c.n
                                                           and np_start(c.toks[i + 1]))):
        np, i2, carried = parse_np(c.ctx, c.toks, i, c.lits)
        if np is not None:
            role = b.last_role
            if np.type == "name" and b.person_role:
                # "two friends from the climbing gym, Ana and Rui": the names are the friends.
                role, np.type = b.person_role, "person"
                b.last_role = role
            ent = register(c.ctx, np, b.prep, role, c.side)
            if ent:
                b.arms.append((role, ent))
                b.last_entity, b.last_np = ent, np
            b.literals.extend(carried)
        b.i = max(i2, i + 1)
    return _NEXT


def _to_verb(b: _Arms, tok: Tok) -> str | None:
    """"went there to ski": the subject does the verb after "to" too."""
    nxt = b.c.at(b.i + 1)
    if tok.low == "to" and nxt is not None and (lemma(nxt.low) in lx.VERBS or is_verb_form(nxt)) \
            and not nxt.cap and nxt.low not in lx.DETERMINERS:
        b.c.subclause(b.c.toks[b.i + 1:], b.c.subject, b.c.planned)
        return _STOP
    return None


def _capacity(b: _Arms, tok: Tok) -> str | None:
    """"works as a nurse", "volunteers as a tutor": the capacity, not the verb's object."""
    c, i = b.c, b.i
    article, head = c.at(i + 1), c.at(i + 2)
    if not (tok.low == "as" and c.verb is not None and article is not None and article.low in lx.ARTICLES_A
            and head is not None and np_start(head) and not is_verb_form(head)):
        return None
    np, i2, carried = parse_np(c.ctx, c.toks, i + 1, c.lits)
    if np is None or not np.person_noun:
        return None
    ent = c.ctx.entity(np.name, np.type)
    if ent:
        b.arms.append(("capacity", ent))
    b.literals.extend(carried)
    b.i = max(i2, i + 2)
    return _NEXT


def _preposition(b: _Arms, tok: Tok) -> str | None:
    """A preposition and its phrase (or pronoun): an arm whose role the preposition and the phrase decide."""
    c = b.c
    j = b.i + 1
    if tok.low not in lx.PREPOSITIONS or j >= c.n:
        return None
    b.prep = prep = tok.low
    after = c.toks[j]
    if after.lit is not None and not (c.lits[after.lit].key in _COUNT_KEYS and j + 1 < c.n
                                      and np_start(c.toks[j + 1])):
        b.i = j + 1  # "at 7pm", "for $20": the value is a literal of the frame already
        return _NEXT
    if after.low in lx.PRONOUNS and after.low not in lx.POSSESSIVES:
        who = c.ctx.resolve(after.low)
        if who:
            b.arms.append((prep_role(prep, b.predicate, "person", c.passive), who))
        b.i = j + 1
        return _NEXT
    if np_start(after) or after.lit is not None or (after.low.endswith("ing") and after.low.isalpha()):
        np, i2, carried = parse_np(c.ctx, c.toks, j, c.lits, gerund=True)
        if np is not None:
            role = prep_role(prep, b.predicate, settle_name_type(np, prep, "object"), c.passive)
            ent = register(c.ctx, np, prep, role, c.side)
            if ent:
                b.took(role, ent, np)
                if np.person_noun:
                    b.person_role = role
            b.literals.extend(carried)
        b.i = max(i2, j + 1)
        return _NEXT
    b.i += 1
    return _NEXT


def _pronoun(b: _Arms, tok: Tok) -> str | None:
    """A pronoun object ("I called her"), or the recipient of a giving verb ("gave him a book")."""
    c, w = b.c, tok.low
    if not (w in lx.PRONOUNS and w not in lx.POSSESSIVES and not b.has_object):
        return None
    who = c.ctx.resolve(w) if c.verb is not None else None  # "I'm sure you ...": no category
    after = c.at(b.i + 1)
    if who and w in lx.OBJECT_PRONOUNS and not c.copula and lx.VERBS.get(c.verb or "", ("",))[0] == "give" \
            and after is not None and after.low in _GIVEN_DETERMINERS and after.low not in lx.DEMONSTRATIVES:
        b.arms.append(("recipient", who))  # "She showed me the way to ...", "gave him a book"
    elif who:
        b.arms.append((b.obj_role if not c.copula else "category", who))
        b.has_object = True
        b.last_role = b.obj_role
    b.i += 1
    return _NEXT


_GIVEN_DETERMINERS = lx.DETERMINERS | lx.POSSESSIVES.keys()


def _object(b: _Arms, tok: Tok) -> str | None:
    """The direct object (a second phrase is a theme); "My favorite X is Y" becomes favorite(fan, item)."""
    c, w = b.c, tok.low
    if not (np_start(tok) or (w.endswith("ing") and w.isalpha() and not b.has_object)):
        return None
    np, i2, carried = parse_np(c.ctx, c.toks, b.i, c.lits, gerund=not b.has_object)
    if np is not None and _object_phrase(b, np):
        b.literals.extend(carried)
    b.i = max(i2, b.i + 1)
    return _NEXT


def _object_phrase(b: _Arms, np: NP) -> bool:
    """Make ``np`` the frame's object; False when it is only a mention (the talk of a verbless clause)."""
    c = b.c
    role = b.obj_role if not b.has_object else "theme"
    subj = c.subj_np
    if c.copula and subj is not None and subj.favorite and subj.possessor:
        b.predicate = "favorite"
        b.arms = [("fan", str(subj.possessor))]
        b.literals.append(("category", subj.name))
        role = "item"
    elif c.verb is None and (b.has_object or not (np.indefinite or np.name[:1].isupper())):
        # "X is a Y" names a category, "My coach is Coach Lima" an identity; the rest is talk.
        c.ctx.entity(np.name, settle_name_type(np, None, "object"))
        return False
    ent = register(c.ctx, np, "visit" if b.predicate in lx.PLACE_OBJECT_PREDICATES else None, role, c.side)
    if ent:
        b.took(role, ent, np)
        b.has_object = True
    return True


_ARM_STEPS: tuple[Callable[[_Arms, Tok], "str | None"], ...] = (
    _value, _naming, _relative, _coordination, _to_verb, _capacity, _preposition, _pronoun, _object)


# --- the frame ---------------------------------------------------------------------------------


def _frame(b: _Arms) -> ClauseFrame | None:
    """The frame the arms make: its literals, time and status; None when it binds fewer than two entities."""
    c, ctx = b.c, b.c.ctx
    if c.copula and c.verb is None:
        _copula_arms(b)
    literals = list(dict.fromkeys([(lit.key, lit.value) for lit in c.clause_lits] + b.literals))
    if c.negated:
        literals.append(("negated", "true"))
    event_time = next((v for k, v in literals if k == "date"), None)
    planned = c.planned or bool(event_time and ctx.mention and event_time[:10] > ctx.mention.isoformat() and not c.past)
    status = "planned" if planned else ("done" if c.past else ctx.record_status)
    if len({kappa(e) for _, e in b.arms}) < 2 or c.subject is None:
        return None  # a clause whose subject is unresolved ("it", "they") asserts nothing we can anchor
    predicate, arms = _retyped(b)
    return ClauseFrame(predicate, dedupe_arms(arms), literals, event_time, status)


def _copula_arms(b: _Arms) -> None:
    """Only the category and places stay on an is_a/located frame ("My studio is in Porto": located)."""
    arms = [b.arms[0]] + [(r, e) for r, e in b.arms[1:] if r in lx.COPULA_ROLES] if b.arms else b.arms
    if not b.has_object and any(r == "topic" for r, _ in arms[1:]):
        b.predicate = "about"  # "My talk is about restoring old boats"
    elif not b.has_object and any(r in lx.PLACE_ROLES for r, _ in arms[1:]):
        b.predicate = "located"
    b.arms = [(r, e) for r, e in arms if r != "topic" or b.predicate == "about"]


def _retyped(b: _Arms) -> tuple[str, list[tuple[str, str]]]:
    """The predicate and arms once the arms' types are known: "see" a place is a visit, "own" an experience is
    "have", and a place object of a verb of no motion is its place."""
    predicate, arms = b.predicate, b.arms
    types = [b.c.ctx.entities.get(kappa(e), ("", "concept"))[1] for _, e in arms]
    if predicate == "meet" and len(arms) > 1 and types[1] not in lx.ANIMATE_TYPES:
        predicate = "visit" if types[1] == "location" else "watch"  # "see the sunrise", "saw Lisbon"
        seen_role = arms[1][0]  # "got to see some hills and old churches": both are what was seen
        arms = arms[:1] + [("place" if predicate == "visit" else "work", e) if r == seen_role else (r, e)
                           for r, e in arms[1:]]
    if predicate == "own" and len(types) > 1 and types[1] not in lx.OWNED_TYPES:
        predicate = "have"  # "I had a long exam": an experience, not a possession
    motion = predicate in lx.MOTION_PREDICATES
    places = (b.obj_role, "theme", "activity")
    arms = [("place" if (k > 0 and t == "location" and r in places and not motion) else r, e)
            for k, ((r, e), t) in enumerate(zip(arms, types))]
    return predicate, arms
