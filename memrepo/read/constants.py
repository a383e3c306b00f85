"""Every constant of the read path in one place (MIRIX-2.0 §2.4, A.3, A.4; DESIGN.md §3).

The budgets and caps are the paper's; the score weights are ours (the paper
gives the terms, not their weights) and are fixed, never tuned per question.
"""

from __future__ import annotations

OPERATORS = ("single", "temporal", "intersection", "list-union", "count")

#: (B_B base rows, B_R cited rows) per operator. The paper gives single and count; the middle three are ours.
BUDGETS: dict[str, tuple[int, int]] = {
    "single": (6, 4),
    "temporal": (6, 8),
    "intersection": (8, 8),
    "list-union": (8, 10),
    "count": (8, 12),
}

# --- anchor entry (eq. 10, A.3) ---------------------------------------------------
ANCHOR_RECALL = 15  # anchors recalled by name vector
EXACT_ANCHORS = 16  # anchors the question names exactly (relation queries)
KEEP_ANCHORS = 15  # K_A: anchors kept after scoring
EXACT_NGRAM = 4  # longest question n-gram looked up as an exact anchor key

W_VEC = 1.0  # s_vec = cosine of the anchor name to the question (dominates)
W_EXACT = 0.35  # the question names the anchor exactly
W_LEX = 0.25  # share of the anchor's key tokens found in the question
W_PRED = 0.1  # the anchor takes part in a frame of a planned relation family
W_SPEC = 0.05  # per extra key token (multi-token names are more specific)
W_HUB = 0.04  # times log(1 + degree)
W_HUB_PERSON = 0.08  # person hubs the question does not name
# DEGREE_CAP, LABEL_MEMBERS and ROW_SCAN_CAP belong to the graph reader (memrepo/graph/reader.py).

# --- base lane (Rows(A_q)) ---------------------------------------------------------
ROWS_PER_ANCHOR = 48  # rows taken from one anchor (most connected to the other anchors first)
BASE_FRAMES = 48  # incident frames of the kept anchors traversed in the base lane (frame-id order)
CO_PARTICIPANT_ROWS = 4  # rows of each co-participant of a traversed frame
NEIGHBOUR_TURNS = 1  # adjacent-turn rows from provenance (each side), for the best rows
NEIGHBOUR_SEEDS = 6  # rows whose provenance neighbours are added
BASE_POOL_CAP = 400  # rows the base lane may inspect in all

TEXT_LANE = 60  # best full-text (BM25) records of the question's content words that join the pool (text lane)

VECTOR_LANE = 60  # nearest record vectors to the question that join the pool (vector lane)

# --- relation lane (Adj(A_q, P_q)) -------------------------------------------------
FRAME_CAP = 240  # K_F: frames after the predicate filter, in frame-id order

# --- fact score (eq. 11) -------------------------------------------------------------
F_REL = 1.0  # predicate in a planned relation family
F_ENTITY = 0.6  # per named anchor bound by the frame
F_CONSTRAINT = 0.3  # per constraint word found in the frame's anchors or literals
F_TYPE = 0.4  # the frame carries a literal/arm of the expected answer type
F_TIME = 0.5  # event time matches the requested date (half weight on record time)
F_INTERSECTION = 0.8  # the frame binds anchors of both sides of an intersection
F_SPECIFICITY = 0.05  # per arm
F_ROLE = 0.2  # named anchor in the role the question implies (negative if incompatible)
F_PLANNED = -0.6  # planned occurrence in count, list-union and temporal questions
#: A fact is rendered (and its rows get cited slots) only with one of these terms: relation and entity alone
#: ("Priya did something") do not make a fact evidence for the question.
FACT_EVIDENCE_TERMS = ("constraint", "type", "time", "intersection")

# --- row rerank and fusion (A.3 "citation-balanced fusion") ------------------------
R_LEX = 1.0  # BM25 of the row against the question (divided by the pool's best)
R_BM25_B = 0.4  # that BM25's length normalisation (Tantivy's 0.75 halved the weight of a long turn that answers
#                 after small talk); chosen on halves of LoCoMo dev, docs/recall.md
R_VEC = 1.0  # cosine of the row's vector to the question (min-max scaled within the pool)
R_ANCHOR = 0.1  # summed scores of the kept entry anchors the row mentions (divided by the pool's best)
R_ACTOR = 1.0  # the row is by (starts with) a person the question names (its first HEAD_CHARS characters)
HEAD_CHARS = 60
R_CONTEXT = 0.4  # times the best score of an adjacent-turn row in the pool (provenance, not graph edges)
R_TIME = 1.0  # the row's date matches a date the question names (day: linear to 0 over TIME_DAYS; month, year)
TIME_DAYS = 8  # a day-precise question date still favours rows this many days away, less and less
R_CITED = 0.0  # cited by a rendered graph fact (its place in fusion already favours it)
NEAR_DUPLICATE = 0.92  # token-set similarity above which episodic rows on one date collapse

# --- the ranking stage over the pool (read/rank.py). Each weight was chosen on one half of LoCoMo dev and kept
# only if it gained on the other half too (docs/recall.md, "The ranking stage"); 0 turns a term off and costs
# nothing. The terms at 0 were measured and gained on neither half or on one only.
K_AGREE = 0.0  # per independent lane beyond the first that proposed the row (text, vector, graph rows, fact)
K_COVER = 0.0  # times the share of the question's analyzed words the row holds
K_SESSION = 0.4  # other strong candidates near the row in its source (a session), up to K_SESSION_CAP of them
K_SESSION_DEPTH = 3  # "strong": among the best this many of rerank's order
K_SESSION_CAP = 2
K_SESSION_SPAN = 3  # "near": a cited part at most this many positions away (None: anywhere in the source)
K_EVENT = 0.0  # times how much better the row's event time meets the question's dates than its mention date
K_EVENT_DEPTH = 30  # rows whose records are read for their event time
K_ANCHORS = 0.0  # times the share of the concrete anchors the question names that frames citing the row bind
K_ROLE = 0.0  # a frame citing the row binds a person the question names in the role its relation implies
K_ANCHOR_DEPTH = 30  # rows whose frames are read for the two terms above
K_HOP_ROWS = 0  # second hop: rows of the anchors the first hop's best rows bind (0: no second hop)
K_HOP_SEEDS = 3  # the first hop's best rows whose frames' anchors are followed
K_HOP_ANCHORS = 6  # anchors followed at most
GATHERING = ("list-union", "count", "intersection")  # the operators that gather evidence
K_ASKS = 0.3  # a row among the best K_ASKS_DEPTH whose text ends in a question mark (it asks, it does not say)
K_REPLY = 0.2  # times the asking row's share of the best score, for the part right after it in its source
K_ASKS_DEPTH = 15  # rows whose records are read to see whether they ask
K_WHEN = 0.5  # a row among the best K_WHEN_DEPTH that says when (a date, a duration, "ago", "last ..."), for a question
#              asking for a date
K_WHEN_DEPTH = 15  # rows whose records are read to see whether they say when (the rows K_ASKS_DEPTH reads)
K_NEW_SESSION = 0.1  # in a gathering question (GATHERING), a row among the best K_NEW_SESSION_DEPTH from a source (a session)
#                      no better row cites: a list's members are told in different sessions
K_NEW_SESSION_DEPTH = 15
K_BRIEF = 0.3  # a row among the best K_BRIEF_DEPTH that says fewer than K_BRIEF_WORDS words (its speaker's name aside)
K_BRIEF_WORDS = 10
K_BRIEF_DEPTH = 15  # rows whose records are read to count their words (the rows K_ASKS_DEPTH reads)

# --- fallback (graph read raised) ----------------------------------------------------
FALLBACK_DEPTH = 30  # direct full-text + vector hits considered

# --- answering agent (A.4) ----------------------------------------------------------
MAX_RECALLS = 5
MAX_EXTRA_SEARCHES = 1
MAX_REWRITES = 1


def budget(operator: str) -> tuple[int, int]:
    """(B_B, B_R) of ``operator``."""
    return BUDGETS[operator]


def capacity(operator: str) -> int:
    """Rows fusion may return for ``operator``: B_B + B_R."""
    base, cited = BUDGETS[operator]
    return base + cited
