"""Stop words: the word lists memrepo leaves out when it matches text, in one place.

They differ on purpose, each with its user: the full-text analyzer's list is part of
the index (changing it changes every BM25 score, so it needs a new index schema),
question parsing keeps words such as "before" and "since" out of its keys but looks at
them for time, and the extractor's audit also ignores chat fillers ("oh", "wow").
"""

from __future__ import annotations

QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})

# English function words, auxiliaries and quantifiers: never the key of a question (read/plan.py).
STOPWORDS = frozenset(
    "a an the of and or in on at to for by with from about into over after before during since until as is are was "
    "were be been being am do does did doing have has had having will would can could should shall may might must "
    "i me my we our you your he him his she her it its they them their this that these those what which who whom "
    "whose when where why how there here than then so if not no yes also too very just ever still any some all "
    "each every both either neither other another such own same more most much many few lot lots get got".split()
)

# Words that never start or end an exact anchor name in a question ("likely", "kind of"): read/recall.py.
ENTRY_STOPWORDS = STOPWORDS | QUESTION_WORDS | {"likely", "would", "kind", "kinds", "type", "types", "thing",
                                                "things"}

# English function words, question words and auxiliaries: a question like "what pet does Jonas have"
# must score on "pet" and "Jonas", not on "what" and "does". Part of the full-text index (index/fulltext.py).
SEARCH_STOPWORDS = sorted(set("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing done down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself yourselves ever tell know remember
""".split()))

# Function words and chat fillers a frame need not carry: the extractor's audit of quotes and coverage
# (graph/extract.py).
CHAT_STOPWORDS = frozenset({
    "the", "a", "an", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "is", "am", "are", "was",
    "were", "be", "been", "i", "you", "he", "she", "it", "we", "they", "me", "my", "your", "his", "her", "our",
    "their", "this", "that", "so", "just", "really", "very", "too", "have", "has", "had", "do", "did", "not",
    "what", "how", "from", "by", "as", "if", "there", "here", "all", "some", "about", "up", "out", "one", "can",
    "will", "would", "could", "oh", "yes", "no", "wow", "hey", "also", "like", "get", "got", "its", "it's",
    "i'm", "that's", "them", "him", "us", "which", "who", "when", "where", "than", "then", "more", "much"})
