"""Clauses: a sentence split into clauses, each read as a subject, a verb group and its arms.

A sentence's values are cut out first (:mod:`memrepo.nlp.literals`), quoted titles
become one word, and the tokens are split at conjunctions, commas and dashes that start
a new subject (:func:`split_clauses`). A clause (:func:`read_clause`) is read in three
steps over one :class:`Clause`: the subject (a pronoun resolved by the discourse, a noun
phrase, or the speaker of a verb-first fragment), the verb group (auxiliaries,
negation, control verbs such as "planning to", one step per token in
:data:`_VERB_STEPS`), then the arms (:func:`memrepo.nlp.roles.build_frame`). A clause
inside another (after "that", "and made", "to") is read by the same function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

from memrepo.nlp import lexicon as lx
from memrepo.nlp.acts import asked
from memrepo.nlp.chunks import NP, decap, mention_run, mentions_only, np_start, np_word_plain, parse_np, state_word
from memrepo.nlp.discourse import ClauseFrame, Discourse, drop_vocatives
from memrepo.nlp.literals import Literal, find_literals
from memrepo.nlp.morphology import is_past, is_verb_form, lemma, singular, third_singular
from memrepo.nlp.roles import build_frame, first_outcome, register
from memrepo.nlp.tokens import Tok, placeholder, tokenize

MAX_DEPTH = 4  # clauses inside clauses: deeper ones are not read

# --- the sentence ------------------------------------------------------------------------------

_CLAUSE_BREAK_MARKS = lx.CLAUSE_BREAK | {",", "-", "—", "–"}
_TITLE_RE = re.compile(r"[\"“]([A-Z0-9][^\"“”]{0,80}?)[\"”]")
# Set phrases whose words are no clause: "Of course!", "Fingers crossed!" name no course and no fingers.
_SET_PHRASES_RE = re.compile(r"\b(?:of course|fingers crossed|no wonder|no doubt|for sure|at least|after all)\b", re.I)
_SENTENCE_OPENERS = frozenset({":", ";", "\"", "“", "(", "-"})  # a word after these opens a sentence
_YES_NO_OPENERS = lx.QUESTION_WORDS | {"do", "did", "does", "are", "is", "have", "can", "could", "would", "will"}


def split_clauses(toks: list[Tok]) -> list[list[Tok]]:
    """Split a sentence's tokens at conjunctions, commas and dashes that start a new subject, and before a
    mid-sentence "I" ("after mending the fence I made tea")."""
    clauses: list[list[Tok]] = [[]]
    for i, tok in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        starts_subject = nxt is not None and (nxt.low in lx.SUBJECT_WORDS or (nxt.cap and i + 2 < len(toks)
                                                                               and is_verb_form(toks[i + 2])))
        if tok.low in (";", ":") or (tok.low in _CLAUSE_BREAK_MARKS and starts_subject and clauses[-1]):
            clauses.append([])
            continue
        prev = clauses[-1][-1].low if clauses[-1] else None
        if tok.text == "I" and prev is not None and len(clauses[-1]) >= 3 and prev not in lx.PREPOSITIONS \
                and prev not in lx.CONJUNCTIONS and prev not in lx.KEEPS_I:
            clauses.append([])
        clauses[-1].append(tok)
    return [c for c in clauses if c]


def _join_title(m: re.Match[str], ctx: Discourse) -> str:
    """A quoted title becomes one word (its spaces are no-break spaces) and a work."""
    title = m.group(1).strip().replace("’", "'")
    ctx.titles.add(" ".join(title.split()))
    return "\u00a0".join(title.split()) if " " in title else title


# A version: "2.8.1", "v18.2", "1.4.0-rc1" (not a date "12.05.2026", not an address "10.0.0.1").
_VERSION_RE = re.compile(r"(?<![\w.])(?:v\d+(?:\.\d+)+|\d+\.\d+\.\d+)(?:-[0-9A-Za-z]+)?(?![.\d]*\d)(?!\w)")
_DOTTED_DATE_RE = re.compile(r"\d{1,2}\.\d{1,2}\.\d{4}")
_STAND_IN = 0xF000  # private-use characters, outside the literals' placeholders, stand for versions meanwhile
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def _literals(ctx: Discourse, sentence: str) -> tuple[str, list[Literal]]:
    """The sentence's literals: versions ("invoice-service 2.8.1": a version, no count) and then the
    values of :func:`memrepo.nlp.literals.find_literals`."""
    versions = [m for m in _VERSION_RE.findall(sentence) if not _DOTTED_DATE_RE.fullmatch(m)]
    for k, version in enumerate(versions):
        sentence = sentence.replace(version, f" {chr(_STAND_IN + k)} ", 1)
    text, lits = find_literals(sentence, ctx.mention)
    for k, version in enumerate(versions):
        text = text.replace(chr(_STAND_IN + k), placeholder(len(lits)))
        lits.append(Literal("version", version, version))
    return text, lits


def _numbered_names(ctx: Discourse, toks: list[Tok], lits: list[Literal]) -> list[Tok]:
    """A number right after a name, with no noun after it to count, is part of the name: "HTTP 200",
    "Java 21", "Terminal 2"; so is one after a singular noun after a preposition: "in room 12", "on page 40"."""
    out: list[Tok] = []
    for k, tok in enumerate(toks):
        lit = lits[tok.lit] if tok.lit is not None else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if lit is not None and lit.key in _NAME_NUMBER_KEYS and _NUMBER_RE.fullmatch(lit.surface) and out \
                and _numbered(ctx, out, nxt):
            prev = out.pop()
            out.append(Tok(f"{prev.text}\u00a0{lit.surface}", f"{prev.low}\u00a0{lit.surface}"))
        else:
            out.append(tok)
    return out


_NAME_NUMBER_KEYS = frozenset({"count", "number"})


def _numbered(ctx: Discourse, before: list[Tok], nxt: Tok | None) -> bool:
    """Whether the number after ``before`` names, by the rule of :func:`_numbered_names`."""
    prev = before[-1]
    if nxt is not None and nxt.lit is None and (nxt.cap or np_word_plain(nxt)) and not is_verb_form(nxt):
        return False  # "Ana 3 apples": the number counts what follows
    if prev.lit is not None or prev.text in ctx.participants or prev.text == ctx.actor:
        return False
    ahead = before[-2].low if len(before) > 1 else None
    if prev.cap:  # not right after a verb unless an acronym: "I owe Ben 20" gives Ben an amount
        return prev.low not in lx.PRONOUNS and prev.low not in lx.CONJUNCTIONS and prev.low not in lx.PREPOSITIONS \
            and (prev.text.isupper() or ahead is None or ahead in lx.PREPOSITIONS or ahead in lx.DETERMINERS)
    return (ahead in lx.PREPOSITIONS or ahead in lx.DETERMINERS) and np_word_plain(prev) and not is_verb_form(prev) \
        and singular(prev.low) == prev.low and not prev.low.endswith("s") and prev.low not in lx.PERSON_NOUNS \
        and prev.low not in lx.ANIMALS


def sentence_frames(ctx: Discourse, sentence: str) -> None:
    """Read one sentence's clauses into ``ctx.frames``; a question names what it asks about instead."""
    sentence = _SET_PHRASES_RE.sub(",", sentence)
    sentence = _TITLE_RE.sub(lambda m: _join_title(m, ctx), sentence)
    text, lits = _literals(ctx, sentence)
    toks = drop_vocatives(ctx, _numbered_names(ctx, tokenize(text), lits))
    for idx, tok in enumerate(toks):
        if idx == 0 or toks[idx - 1].low in _SENTENCE_OPENERS:
            decap(ctx, toks, idx)
    # A sentence that ends in "." or "!" is no question even if it starts like one ("Have faith in yourself!").
    ending = sentence.rstrip()
    if ending.endswith("?") or (toks and toks[0].low in _YES_NO_OPENERS and not ending.endswith((".", "!"))):
        mentions_only(ctx, toks, lits)
        asked(ctx, toks, lits)
        return
    for number, clause in enumerate(split_clauses(toks)):
        read_clause(ctx, clause, lits, first=number == 0)


# --- one clause --------------------------------------------------------------------------------


@dataclass
class Clause:
    """One clause while it is read: its tokens and literals, its subject, and what its verb group said."""

    ctx: Discourse
    toks: list[Tok]
    lits: list[Literal]
    depth: int = 0
    first: bool = False  # the sentence's first clause (where an opening pronoun names an earlier subject)
    subject: str | None = None
    subj_np: NP | None = None
    pron_subject: bool = False
    planned: bool = False
    copula: bool = False
    negated: bool = False
    passive: bool = False
    past: bool = False
    verb: str | None = None
    i: int = 0  # the token being read
    side: list[ClauseFrame] = field(default_factory=list)  # frames the clause's phrases imply ("my sister Ana")
    clause_lits: list[Literal] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.toks)

    def at(self, k: int) -> Tok | None:
        """The token at ``k``, None past the end."""
        return self.toks[k] if k < len(self.toks) else None

    def subclause(self, toks: list[Tok], subject: str | None, planned: bool) -> None:
        """Read a clause inside this one (its arms' "who ...", "and made ...", "to ...")."""
        read_clause(self.ctx, toks, self.lits, subject, planned, self.depth + 1)

    def done(self) -> None:
        """The clause asserts nothing more: keep the side frames its phrases implied."""
        self.ctx.frames.extend(self.side)


def read_clause(ctx: Discourse, toks: list[Tok], lits: list[Literal], subject: str | None = None,
                planned: bool = False, depth: int = 0, first: bool = False) -> None:
    """Read one clause into ``ctx.frames``: its subject (``subject`` when a clause around it gave one), verb
    group and arms."""
    if depth > MAX_DEPTH or not toks:
        return
    c = Clause(ctx, toks, lits, depth, first, subject=subject, planned=planned)
    c.i = _after_lead(toks)
    c.clause_lits = [lits[t.lit] for t in toks if t.lit is not None]
    if c.subject is None and c.i < c.n and not _read_subject(c):
        return
    ctx.subject_named(c.subject)
    if not _read_verb_group(c):
        return
    if c.verb is None and not c.copula:
        _verbless(c)
        return
    frame = build_frame(c, c.i)
    if frame is not None:
        ctx.frames.append(frame)
    c.done()


_CLAUSE_LEAD = lx.CONJUNCTIONS | lx.INTERJECTIONS | {",", "\"", "“", "”", "(", ")", "-", "'s"}  # skipped before a subject
_LEAD_WORDS = lx.INTERJECTIONS | lx.CONJUNCTIONS | lx.ADVERBS


def _after_lead(toks: list[Tok]) -> int:
    """Where the clause starts after its values, conjunctions, interjections and adverbs."""
    i = 0
    while i < len(toks) and (toks[i].lit is not None or toks[i].low in _CLAUSE_LEAD
                             or (toks[i].low in lx.ADVERBS and toks[i].low not in lx.PLACE_ADVERBS)) \
            and not (toks[i].cap and toks[i].low not in _LEAD_WORDS):
        i += 1
    return i


# --- the subject -------------------------------------------------------------------------------


def _read_subject(c: Clause) -> bool:
    """Read the clause's subject; False when the clause is finished (a gerund subject said nothing done)."""
    tok = c.toks[c.i]
    if tok.low in lx.PRONOUNS and tok.low not in lx.POSSESSIVES or tok.low in lx.SUBJECT_PRONOUNS:
        _pronoun_subject(c, tok)
    elif np_start(tok) and not (is_verb_form(tok) and not tok.cap):
        _phrase_subject(c, tok)
    elif c.depth == 0 and c.first and is_verb_form(tok) and (is_past(tok) or tok.low.endswith("ing")):
        return _verb_first(c, tok)
    return True


def _pronoun_subject(c: Clause, tok: Tok) -> None:
    c.subject = c.ctx.resolve(tok.low)
    if tok.low in lx.HE_SHE and c.first and c.depth == 0:
        c.subject = c.ctx.earlier_subject(tok.low) or c.subject  # "Rui moved to Faro. He works at ..."
    c.pron_subject = tok.low in lx.PERSONAL_SUBJECTS
    c.i += 1


def _phrase_subject(c: Clause, tok: Tok) -> None:
    ctx = c.ctx
    owner = ctx.earlier_subject(tok.low) if tok.low in lx.HIS_HER and c.first and c.depth == 0 else None
    ctx.opening = (tok.low, owner) if owner else None  # "His sister Ana lives in Braga."
    try:
        c.subj_np, c.i, _carried = parse_np(ctx, c.toks, c.i, c.lits, subject=True)
        if c.subj_np is not None:
            c.subject = register(ctx, c.subj_np, None, "subject", c.side)
    finally:
        ctx.opening = None


def _verb_first(c: Clause, tok: Tok) -> bool:
    """A clause that opens with a verb: the speaker's ("Bought a rain jacket today.", "Planning a trip to the coast"),
    unless an -ing form is the subject of a judgement ("Meeting new people is hard")."""
    toks, i = c.toks, c.i
    be = next((k for k in range(i + 1, c.n) if toks[k].low == "," or toks[k].low in lx.COPULAS
               or toks[k].low in lx.MODALS or third_singular(toks[k])), None) if tok.low.endswith("ing") else None
    if be is not None and toks[be].low == ",":
        be = None  # "Thinking of it, I ...": the gerund is no subject
    if be is not None:
        # A gerund subject: "Meeting new people is hard" says nothing the speaker did; "Finding parts for my
        # bike was a hassle" says she found them (the judgement after "was" is no arm).
        if not any(t.low in lx.PRONOUNS_SELF for t in toks[i:be]):
            mention_run(c.ctx, toks, i, c.lits)
            return False
        c.toks = toks[:be]
    c.subject = c.ctx.person(c.ctx.speaker)
    return True


# --- the verb group ----------------------------------------------------------------------------

_NEXT, _STOP, _DONE = "next", "stop", "done"  # read on; the verb group ends here; the clause is finished
Step = Callable[[Clause, Tok], "str | None"]


def _read_verb_group(c: Clause) -> bool:
    """Read auxiliaries, negation, control verbs and the verb; False when the clause is finished already."""
    while c.i < c.n:
        outcome = first_outcome(_VERB_STEPS, c, c.toks[c.i]) or _STOP
        if outcome == _DONE:
            return False
        if outcome == _STOP:
            break
    return True


def _value(c: Clause, tok: Tok) -> str | None:
    if tok.lit is None:
        return None
    c.i += 1
    return _NEXT


def _marker(c: Clause, tok: Tok) -> str | None:
    """"will"/"would", "not", "is"/"was": the clause is planned, negated or a copula."""
    w = tok.low
    if w in lx.FUTURE_WORDS:
        c.planned = True
    elif w in lx.NEGATIONS:
        c.negated = True
    elif w in lx.COPULAS:
        c.copula = True
        c.past = c.past or w in lx.PAST_COPULAS
    else:
        return None
    c.i += 1
    return _NEXT


def _auxiliary(c: Clause, tok: Tok) -> str | None:
    """"can", "should", "to"; "have"/"do" before a verb, a negation or "to" ("had been", "have to")."""
    w = tok.low
    if w in lx.AUXILIARIES and w not in lx.HAVE_DO or w == "to":
        c.past = c.past or w in lx.PAST_AUXILIARIES
        c.i += 1
        return _NEXT
    nxt = c.at(c.i + 1)
    if w in lx.HAVE_DO and nxt is not None and (nxt.low in lx.NEGATIONS or nxt.low in lx.ADVERBS or is_verb_form(nxt)
                                                 or nxt.low in lx.AFTER_HAVE_DO):
        c.past = c.past or w in lx.PERFECT_AUXILIARIES
        c.i += 2 if nxt.low == "to" else 1  # "have to X"
        return _NEXT
    if w in lx.ADVERBS and w not in lx.PARTICLES:
        c.i += 1
        return _NEXT
    return None


def _control_ing(c: Clause, tok: Tok) -> str | None:
    """"started training" -> train; "I love sketching birds" also says sketching is liked."""
    lem, nxt = lemma(tok.low), _next_low(c)
    if not (lem in lx.CONTROL and nxt.endswith("ing") and c.i + 1 < c.n and lemma(nxt) in lx.VERBS):
        return None
    after = c.at(c.i + 2)
    has_args = after is not None and (np_start(after) or after.low in lx.PREPOSITIONS or after.lit is not None)
    if not (has_args or lem not in lx.LIKING):
        return None
    c.past = c.past or is_past(tok)
    if lem in lx.LIKING and c.subject:
        activity = c.ctx.entity(nxt, "concept")
        if activity:
            c.side.append(ClauseFrame("dislike" if lem == "hate" else "like",
                                      [("experiencer", c.subject), ("theme", activity)], []))
    c.i += 1
    return _NEXT


def _control_to(c: Clause, tok: Tok) -> str | None:
    """"planning to X", "want to X", "looking forward to": the clause is X, planned when the verb says so."""
    w, lem, nxt = tok.low, lemma(tok.low), _next_low(c)
    if (lem in lx.CONTROL or w in lx.PLAN_FORMS) and ((nxt == "to" and _verb_at(c, c.i + 2)) or nxt == "forward"):
        if lx.CONTROL.get(lem, True) or w == "going":
            c.planned = True
        c.i += 3 if nxt == "forward" else 2
        return _NEXT
    if w == "going" and nxt == "to":
        c.planned = True  # "I am going to a street festival": a planned trip
    return None


def _verb_at(c: Clause, k: int) -> bool:
    after = c.at(k)
    return after is not None and not after.cap and after.lit is None and (
        lemma(after.low) in lx.VERBS or is_verb_form(after)) and after.low not in lx.DETERMINERS


def _next_low(c: Clause) -> str:
    nxt = c.at(c.i + 1)
    return nxt.low if nxt is not None else ""


def _state(c: Clause, tok: Tok) -> str | None:
    """An adjective after "be": a state of the subject, with what it is about ("allergic to cats")."""
    w, nxt = tok.low, _next_low(c)
    if not (c.copula and not tok.cap and w.isalpha() and w not in lx.ADVERBS and w not in lx.INTERJECTIONS
            and lemma(w) not in lx.VERBS and state_word(tok, w) and not (w in lx.KIND_WORDS and nxt == "of")
            and (c.toks[c.i - 1].low in _BEFORE_STATE)):
        return None
    after = c.at(c.i + 2)
    about_thing = (nxt in lx.PREPOSITIONS and nxt != "by" and after is not None and (
        (np_start(after) and not is_verb_form(after))
        # "passionate about improving schools" (but "excited about opening ..." is a plan, below)
        or (nxt != "to" and w not in lx.PLAN_ADJECTIVES and after.low.endswith("ing")
            and after.low not in lx.NOT_ABOUT_ING)))
    if about_thing and c.subject is not None:
        # "I'm allergic to cats", "you're passionate about chess", "I'm thankful for this club": an adjective,
        # not a verb; the state frame names what it is about.
        frame = build_frame(replace(c, verb=None, copula=False, passive=False), c.i + 1)
        if frame is not None:
            frame.predicate = "state"
            first_role = frame.arms[1][0]  # what the preposition after the adjective names: its theme
            frame.arms = [frame.arms[0]] + [("theme" if r == first_role else r, e) for r, e in frame.arms[1:]]
            frame.literals.insert(0, ("quality", w))
            c.ctx.frames.append(frame)
        c.done()
        return _DONE
    if not is_verb_form(tok) and not (nxt == "to" or w in lx.STATE_BEFORE_TO):
        c.done()  # "I'm so tired": a state of no relation, no frame
        return _DONE
    return None


_BEFORE_STATE = lx.COPULAS | lx.ADVERBS | lx.NEGATIONS | lx.DEGREE_WORDS


def _plan_adjective(c: Clause, tok: Tok) -> str | None:
    """"excited to", "thinking about": planned, unless the adjective says only ability ("able to")."""
    if not (c.copula and tok.low in lx.PLAN_ADJECTIVES and _next_low(c) in lx.PLAN_LINKS):
        return None
    c.planned = c.planned or tok.low not in lx.UNPLANNED_ADJECTIVES
    c.i += 2
    return _NEXT


def _reporting(c: Clause, tok: Tok) -> str | None:
    """"I think (that) ...": the complement is the clause."""
    lem, nxt = lemma(tok.low), c.at(c.i + 1)
    phrasal = nxt is not None and (lem, nxt.low) in lx.PHRASAL  # "look into": no reporting verb
    if not (lem in lx.REPORTING and not c.copula and not phrasal and (lem not in lx.VERBS or (nxt is not None and (
            nxt.low in lx.SUBJECT_WORDS or nxt.low in lx.COMPLEMENTIZERS or nxt.cap)))):
        return None
    rest = c.toks[c.i + 1:]
    if rest and rest[0].low == "that":
        rest = rest[1:]
    read_clause(c.ctx, rest, c.lits, None, c.planned, c.depth + 1)
    c.done()
    return _DONE


def _ly_adverb(c: Clause, tok: Tok) -> str | None:
    """An adverb the lexicon does not list: "They obviously help", "I gladly accept"."""
    w, lem = tok.low, lemma(tok.low)
    if w.endswith("ly") and len(w) > 5 and lem not in lx.VERBS and lem not in lx.REPORTING \
            and w not in lx.IRREGULAR and not tok.cap:
        c.i += 1
        return _NEXT
    return None


def _verb(c: Clause, tok: Tok) -> str | None:
    """The verb (a phrasal one with its particle); "by" after it makes the clause passive."""
    w, lem = tok.low, lemma(tok.low)
    unknown_verb = (c.pron_subject and not tok.cap and w.isalpha() and len(w) > 2 and w not in lx.ADJECTIVES
                    and w not in lx.EVALUATIVE and np_word_plain(tok) and w not in lx.INTERJECTIONS)
    if not (is_verb_form(tok) or (lem in lx.VERBS and not tok.cap) or unknown_verb or _third_before_object(c, tok)):
        return None
    c.verb = lem
    c.past = c.past or is_past(tok)
    c.i += 1
    particle = c.at(c.i)
    if particle is not None and (lem, particle.low) in lx.PHRASAL:
        c.verb = lx.PHRASAL[(lem, particle.low)]
        c.i += 1
    by = c.at(c.i)
    if by is not None and by.low == "by" and (c.copula or c.depth > 0 or c.subject is not None and c.subj_np is not None):
        c.passive = True
    return _STOP


_OBJECT_STARTS = lx.DETERMINERS | lx.POSSESSIVES.keys() | lx.OBJECT_PRONOUNS


def _third_before_object(c: Clause, tok: Tok) -> bool:
    """A word the lexicon does not know, in -s after a noun-phrase subject and before an object's determiner,
    is the verb: "Sam Whitfield adds the check" (a noun there would be the subject's, and no "the" follows it)."""
    w, nxt = tok.low, c.at(c.i + 1)
    return (c.subj_np is not None and not tok.cap and w.endswith("s") and not w.endswith("ss") and len(w) > 3
            and np_word_plain(tok) and nxt is not None and nxt.low in _OBJECT_STARTS)


_VERB_STEPS: tuple[Step, ...] = (_value, _marker, _auxiliary, _control_ing, _control_to, _state, _plan_adjective,
                                 _reporting, _ly_adverb, _verb)


def _verbless(c: Clause) -> None:
    """A clause without a verb: a frame only for a value ("The ferry from Faro took 40 minutes" without its
    verb); the entities of a fragment without a subject as mentions."""
    ctx, toks, i = c.ctx, c.toks, c.i
    if c.subj_np is not None and c.subject is not None and any(t.low in lx.PREPOSITIONS for t in toks[i:]) \
            and (c.subj_np.determined or c.subj_np.name[:1].isupper()):
        bare = replace(c, past=False, negated=False, clause_lits=[c.lits[t.lit] for t in toks if t.lit is not None])
        frame = build_frame(bare, i)
        # Only a value: without one, a verbless clause relates nothing ("Sounds like a calm evening at the lake"
        # says no evening happened at a lake).
        if frame is not None and any(k in lx.VALUE_KEYS for k, _v in frame.literals):
            frame.predicate = "associated"
            ctx.frames.append(frame)
    c.done()
    if c.subject is None:
        mention_run(ctx, toks, i, c.lits)  # a fragment: keep its entities as mentions
