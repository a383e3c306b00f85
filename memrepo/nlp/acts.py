"""Dialogue acts and discourse frames: what a turn does when it asserts no event.

A question asks about the things it names (:func:`asked`); a shared photo shows what its
caption depicts (:func:`shared_visual`); a judgement ("that bread looks amazing") evaluates
the thing it names (:func:`judgement`). Each is what the turn itself says, so the frame is
as true as the record. The person spoken to is no arm of those: naming her on every turn
would make each turn look about both speakers (and crowd recall's rows of the two); the
dialogue acts (:func:`dialogue_acts`: thanks, greetings, praise, agreement...) name her,
as a class recall keeps apart (:data:`memrepo.nlp.lexicon.DIALOGUE_ACTS`).
"""

from __future__ import annotations

import re

from memrepo.nlp import lexicon as lx
from memrepo.nlp.chunks import np_start, parse_np, settle_name_type
from memrepo.nlp.discourse import ClauseFrame, Discourse, dedupe_arms, drop_vocatives
from memrepo.nlp.literals import Literal, find_literals
from memrepo.nlp.morphology import is_verb_form, kappa
from memrepo.nlp.tokens import Tok, tokenize

VISUAL_RE = re.compile(r"\[(?:shares?|shared|sends?|sent)\s+(?:a\s+)?(?:photo|picture|image|video)[^\]]*\]|\bphoto of\b|"
                       r"\[image[^\]]*\]", re.I)


_CAPTION_RE = re.compile(r"\[(?:image|shares?|shared|sends?|sent)\b[^\]]*?\b(?:photo|picture|image|video|"
                         r"photography|drawing|painting|screenshot)s?\s+of\s+([^\]]+)\]", re.I)


def shared_visual(ctx: Discourse, sentence: str) -> None:
    """"[image: a photo of a band on stage]": the speaker shared a photo of the band."""
    speaker = ctx.person(ctx.speaker)
    m = _CAPTION_RE.search(sentence)
    if speaker is None or m is None:
        return
    text, lits = find_literals(m.group(1), ctx.mention)
    toks = tokenize(text)
    depicted: str | None = None
    i = 0
    while i < len(toks) and depicted is None:
        # "a photo of a man in a raincoat": the unnamed person is no anchor, the raincoat is what the photo shows.
        if np_start(toks[i]):
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None and np.head in lx.COLLECTIVES and j + 1 < len(toks) and toks[j].low == "of":
                after = toks[j + 1]
                nxt_np, _k, _ = parse_np(ctx, toks, j + 1, lits)
                if nxt_np is None and after.low.isalpha() and after.low not in lx.PRONOUNS and not after.cap:
                    depicted = ctx.entity(after.low, "object")  # "a pile of plates drying on ..."
                i = j + 1
                continue
            if np is not None and np.type != "person":
                depicted = ctx.entity(np.name, settle_name_type(np, None, "object"))
            i = max(j, i + 1)
        else:
            i += 1
    if depicted is None:
        return
    arms = [("giver", speaker), ("item", depicted)]
    ctx.frames.append(ClauseFrame(lx.predicate_of("share"), dedupe_arms(arms), [("medium", "photo")],
                                  status=ctx.record_status))


def asked(ctx: Discourse, toks: list[Tok], lits: list[Literal]) -> None:
    """A question: the speaker asks the other participant about the things it names."""
    asker = ctx.person(ctx.speaker)
    if asker is None:
        return
    topics: list[str] = []
    i = 1
    while i < len(toks):
        tok = toks[i]
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        prev = toks[i - 1].low
        # "Did anything break?", "are you gonna stay": the word after a subject is its verb, not a topic.
        verb_after_subject = not tok.cap and tok.low not in lx.DETERMINERS and tok.low not in lx.POSSESSIVES and (
            prev in lx.PRONOUNS and prev not in lx.POSSESSIVES or prev in lx.AUXILIARIES
            or prev in lx.VERB_OPENERS)
        if np_start(tok) and not is_verb_form(tok) and tok.low not in lx.EVALUATIVE and not verb_after_subject \
                and tok.text not in ctx.participants and nxt != "to":  # "did you happen to ...": a verb
            np, j, _ = parse_np(ctx, toks, i, lits)
            if np is not None and kappa(np.name) and np.name != asker:
                name = ctx.entity(np.name, settle_name_type(np, toks[i - 1].low, "object"))
                if name and name not in topics:
                    topics.append(name)
            i = max(j, i + 1)
        else:
            i += 1
    if not topics:
        # A question that names nothing ("How are you?") still asks the person spoken to: a dialogue act.
        addressee = _addressee(ctx, " ".join(t.text for t in toks))
        if addressee and addressee != asker:
            add_acts(ctx, [ClauseFrame(lx.predicate_of("ask"), [("agent", asker), (lx.ADDRESSEE_ROLE, addressee)], [],
                                        status="done")])
        return
    # The addressee is not an arm: a question to her is not about her, and naming her on every
    # question would make each turn look about both speakers.
    arms = [("agent", asker)] + [("topic", t) for t in topics[:4]]
    ctx.frames.append(ClauseFrame(lx.predicate_of("ask"), dedupe_arms(arms), [], status="done"))


def judgement(ctx: Discourse, sentence: str) -> None:
    """A sentence that asserts no event may still judge a thing it names ("That old bridge looks lovely!")."""
    speaker = ctx.person(ctx.speaker)
    if speaker is None:
        return
    text, lits = find_literals(sentence, ctx.mention)
    _judged(ctx, speaker, drop_vocatives(ctx, tokenize(text)), lits)


def _judged(ctx: Discourse, speaker: str, toks: list[Tok], lits: list[Literal]) -> None:
    """"<thing> is/looks/sounds <judging adjective>": the speaker evaluates the thing."""
    for k, tok in enumerate(toks):
        if tok.low not in lx.COPULAS and tok.low not in lx.JUDGING_VERBS and tok.low != "'s":
            continue
        rest = [t.low for t in toks[k + 1:k + 4]
                if t.low not in lx.ADVERBS and t.low not in lx.INTENSIFIERS]
        quality = next((w for w in rest[:1] if w in lx.ADJECTIVES or w in lx.EVALUATIVE
                        or (w.isalpha() and len(w) > 5 and w.endswith(lx.ADJECTIVE_SUFFIXES))), None)
        if quality is None:
            return
        thing: str | None = None
        start = next((i for i in range(k) if np_start(toks[i]) and toks[i].low not in lx.INTERJECTIONS
                      and not (i == 0 and toks[i].low in lx.IMPERATIVES)  # "Remember that resting is ..."
                      and (toks[i].low not in lx.PRONOUNS or toks[i].low in lx.DETERMINERS and i + 1 < k)), None)
        if k > 0 and toks[k - 1].low in lx.DEICTIC_IT:
            thing = ctx.last_thing  # "I bought a bike. It's awesome."
        elif start is not None:
            np, _j, _ = parse_np(ctx, toks[:k], start, lits)
            if np is not None and np.type != "person" and kappa(np.name):
                thing = ctx.entity(np.name, settle_name_type(np, None, "subject"))
        if thing and thing != speaker:
            ctx.frames.append(ClauseFrame("evaluate", [("agent", speaker), ("theme", thing)], [("quality", quality)],
                                          status="done"))
        return


# --- dialogue acts: what a turn does to the person spoken to ------------------------------------
#
# "Thanks, Ana!", "Hi!", "Bye!", "Keep it up!", "Congrats on the new job!", "I totally agree": the
# turn states no event, but it does something to the other speaker. Each cue is general English;
# the frame is act(agent=speaker, recipient=the person spoken to[, reason/theme=the thing it names]).
# The person spoken to is the other participant of a two-person record, or the one participant the
# sentence names; when neither is known the arm is left out. lexicon.DIALOGUE_ACTS keeps these frames
# apart from the rest (no mention of the addressee, no recall rows).


_FILLERS_RE = re.compile(r"^(?:(?:wow|oh|ah|aw+|yeah|yes|yep|yup|ok|okay|well|haha|woah|whoa|omg|hmm|sure|so|and)"
                         r"\b[\s,!.]*)+")


_ACT_CUES: list[tuple[str, re.Pattern[str]]] = [
    ("thank", re.compile(r"^(?:thanks|thank (?:you|u)|thx|many thanks)\b|\b(?:thanks|thank you)(?: so much| a lot)? for\b"
                         r"|(?:^|\b(?:i|we) )(?:(?:really|truly|so|do|totally|definitely|much) )*appreciate "
                         r"(?:it|that|this|you|your)\b")),
    ("greet", re.compile(r"^(?:hi|hey|hello|hiya|howdy|good (?:morning|afternoon|evening))\b(?![ ,]+(?:is|are|was)\b)"
                         r"|\blong time no (?:see|talk|chat)\b"
                         r"|^(?:it's |it is |so )?(?:nice|great|good|lovely) to (?:meet|see|hear from) you\b")),
    ("farewell", re.compile(r"\b(?:bye|goodbye|bye-bye|see (?:you|ya)\b(?! (?:at|in|on)\b)|(?:talk|speak|chat)(?: to you)? "
                            r"(?:soon|later)|catch (?:you|ya) later|take care\b(?! of (?!yourself))"
                            r"|have a (?:good|great|nice|lovely) (?:day|night|evening|weekend|one))\b")),
    ("encourage", re.compile(r"^(?:just |please |now )?(?:keep (?:it up|up the \w+(?: \w+)? work|(?:on )?[a-z]+ing\b)"
                             r"|don'?t (?:give up|stop|quit|lose hope|get discouraged)|never give up|hang in there|go for it"
                             r"|go get (?:'?em|them)|stay (?:strong|positive|motivated|focused))"
                             r"|\bbelieve in yourself\b|\byou(?:'ve)? got this\b|\byou can do (?:it|this)\b"
                             r"|\b(?:good|best of) luck\b|\bkeep it up\b")),
    ("congratulate", re.compile(r"^(?:congrats|congratulations)\b|\b(?:congrats|congratulations) (?:on|to)\b")),
    ("praise", re.compile(r"^(?:(?:such|what) an? |really )?(?:great|good|nice|awesome|amazing) (?:job|work)\b|^well done\b"
                          r"|\byou did (?:an? |such an? )?(?:great|good|nice|awesome|amazing) job\b|\bproud of you\b"
                          r"|\byou rock\b|\bgood for you\b|\blucky you\b"
                          r"|\byou(?:'re| are) (?:(?:so|really|truly|incredibly|such|the|an?) )*(?:amazing|awesome|"
                          r"incredible|talented|inspiring|brave|strong|wonderful|star|best|inspiration)\b")),
    ("agree", re.compile(r"^(?:(?:i|we) )?(?:(?:totally|completely|fully|really|definitely|so|absolutely|100%) )?"
                         r"agreed?\b(?! to\b)|^(?:exactly|totally|absolutely|so true|true that|same here|me too)\b[\s.!,]*$"
                         r"|^(?:you're|you are) (?:so |absolutely |totally )?right\b|^i know,? right\b")),
]


# Cues after which the clause rules read the words wrongly ("I agree with you" is no decision,
# "I appreciate your support" no liking): the act is the sentence's only frame.
_ACT_ONLY_RE = re.compile(r"^(?:(?:i|we) )?(?:(?:totally|completely|fully|really|definitely|so|absolutely) )?agreed?\b"
                          r"|^(?:(?:i|we) )?(?:(?:really|truly|so|do|totally|definitely|much) )*appreciate "
                          r"(?:it|that|this|you|your)\b")


# Where the thing thanked for or congratulated on starts.
_ACT_THING_RE = {"thank": re.compile(r"\b(?:thanks|thank you)(?: so much| a lot)? for |\bappreciate (?=your\b)", re.I),
                 "congratulate": re.compile(r"\b(?:congrats|congratulations) on ", re.I)}


def _cue_text(ctx: Discourse, sentence: str) -> str:
    """The sentence lowercased, without the names of the participants and the fillers before a cue."""
    text = " ".join(sentence.replace("’", "'").lower().split())
    for name in sorted({w for p in ctx.participants for w in [p, p.split()[0]]}, key=len, reverse=True):
        text = re.sub(rf"(?:^|(?<=[\s,]))[,\s]*{re.escape(name.lower())}\b[,]?", " ", text)
    text = " ".join(text.split()).strip(" ,")
    return _FILLERS_RE.sub("", text).strip(" ,")


def _addressee(ctx: Discourse, sentence: str) -> str | None:
    """The person spoken to: the other of two participants, else the one other participant the sentence names."""
    other = ctx.other()
    if other:
        return other
    named = [p for p in ctx.participants if p != ctx.speaker and re.search(rf"\b{re.escape(p.split()[0])}\b", sentence)]
    return named[0] if len(named) == 1 else None


def dialogue_acts(ctx: Discourse, sentence: str) -> tuple[list[ClauseFrame], bool]:
    """The dialogue acts of a sentence, and whether they are all it says (the clause rules are then skipped)."""
    speaker = ctx.speaker
    if not speaker or sentence.rstrip().endswith("?"):
        return [], False
    cue = _cue_text(ctx, sentence)
    found: list[ClauseFrame] = []
    for predicate, pattern in _ACT_CUES:
        if not pattern.search(cue):
            continue
        arms = [("agent", speaker)]
        addressee = _addressee(ctx, sentence)
        if addressee and addressee != speaker:
            arms.append((lx.ADDRESSEE_ROLE, addressee))
        thing = _act_thing(ctx, predicate, sentence)
        if thing and thing not in (speaker, addressee):
            arms.append(("reason" if predicate == "thank" else "theme", thing))
        found.append(ClauseFrame(predicate, arms, [], status="done"))
    return found, bool(found) and bool(_ACT_ONLY_RE.search(cue))


def _act_thing(ctx: Discourse, predicate: str, sentence: str) -> str | None:
    """"Thanks for the tips" -> tips, "Congrats on the new job" -> job: a thing named right after the cue."""
    pattern = _ACT_THING_RE.get(predicate)
    m = pattern.search(sentence.replace("’", "'")) if pattern else None
    if m is None:
        return None
    text, lits = find_literals(sentence.replace("’", "'")[m.end():], ctx.mention)
    toks = tokenize(text)
    if not toks or not np_start(toks[0]) or is_verb_form(toks[0]) or toks[0].low.endswith("ing"):
        return None  # "thanks for helping me move", "congrats on finishing": an act, not a thing
    np, _j, _ = parse_np(ctx, toks, 0, lits)
    if np is None or np.type == "person" or not kappa(np.name) or np.name in ctx.participants:
        return None
    return ctx.entity(np.name, settle_name_type(np, None, "object"))


def add_acts(ctx: Discourse, acts: list[ClauseFrame]) -> None:
    """Add each act once per record, and only with two named arms (a frame binds two anchors)."""
    for act in acts:
        if len({e for _r, e in act.arms}) < 2:
            continue
        if any(f.predicate == act.predicate and f.arms == act.arms for f in ctx.frames):
            continue
        ctx.person(ctx.speaker)
        ctx.frames.append(act)
