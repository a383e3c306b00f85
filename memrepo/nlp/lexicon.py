"""Word lists of the offline rules, as data: closed-class words, verbs and their canonical predicates,
noun classes, and the small sets the stages test words against.

Kept apart from the rules so that the rules read as rules (a condition names a list,
it does not spell one out). Everything is lowercase; verbs are listed by lemma with
their irregular forms.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from memrepo.text.dates import MONTHS, WEEKDAYS  # noqa: F401 (lx.MONTHS, lx.WEEKDAYS)
from memrepo.text.stopwords import QUESTION_WORDS  # noqa: F401 (lx.QUESTION_WORDS)

PRONOUNS_SELF = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"}
PRONOUNS_YOU = {"you", "your", "yours", "yourself", "yourselves"}
PRONOUNS_HE = {"he", "him", "his", "himself"}
PRONOUNS_SHE = {"she", "her", "hers", "herself"}
PRONOUNS_OTHER = {"it", "its", "itself", "they", "them", "their", "theirs", "themselves", "this", "that", "these",
                  "those", "there", "here", "something", "anything", "everything", "nothing", "someone", "anyone",
                  "everyone", "somebody", "anybody", "everybody", "nobody", "one", "what", "who", "whom", "which",
                  "whose", "where", "when", "why", "how", "whatever", "whoever"}
PRONOUNS = PRONOUNS_SELF | PRONOUNS_YOU | PRONOUNS_HE | PRONOUNS_SHE | PRONOUNS_OTHER
PRONOUNS_IT = {"it", "its"}
PRONOUNS_THEY = {"they", "them", "their"}
POSSESSIVES = {"my": "self", "our": "self", "your": "you", "his": "he", "her": "she", "their": "they", "its": "it"}

DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "some", "any", "every", "each", "another",
               "no", "all", "both", "many", "much", "more", "most", "several", "few", "such", "which", "what",
               "whose", "lots", "plenty", "enough", "either", "neither", "certain", "various"}
PREPOSITIONS = {"in", "at", "on", "to", "from", "with", "for", "by", "about", "of", "into", "onto", "near",
                "around", "through", "during", "after", "before", "since", "until", "till", "over", "under",
                "across", "without", "inside", "outside", "behind", "beside", "besides", "between", "among",
                "along", "toward", "towards", "within", "throughout", "against", "per", "via", "past", "beyond",
                "upon", "like", "than", "except", "despite", "including", "above", "below", "beneath", "underneath"}
CONJUNCTIONS = {"and", "or", "but", "so", "because", "when", "while", "if", "although", "though", "as",
                "whereas", "unless", "whether", "once", "since", "then", "nor", "yet", "plus", "cause", "cuz"}
AUXILIARIES = {"am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do",
               "does", "did", "will", "would", "can", "could", "should", "shall", "may", "might", "must", "gonna",
               "wanna", "gotta"}
COPULAS = {"am", "is", "are", "was", "were", "be", "been", "being"}
FUTURE_MARKERS = {"will", "gonna", "shall"}
NEGATIONS = {"not", "never", "no", "n't"}
ADVERBS = {"just", "really", "finally", "also", "still", "already", "recently", "actually", "always", "never",
           "ever", "often", "sometimes", "usually", "even", "only", "too", "very", "so", "again", "back", "here",
           "there", "now", "then", "today", "tonight", "yesterday", "tomorrow", "soon", "lately", "once", "twice",
           "almost", "quite", "pretty", "totally", "definitely", "probably", "maybe", "perhaps", "certainly",
           "absolutely", "especially", "together", "alone", "away", "abroad", "home", "currently", "later",
           "earlier", "first", "last", "next", "ago", "longer", "anymore", "recently", "well", "much", "more", "less", "most", "least", "super",
           "kinda", "sorta", "somewhat", "literally", "seriously", "honestly", "truly", "simply", "mostly",
           "mainly", "nearly", "barely", "hardly", "rather", "instead", "anyway", "anyways", "however", "yet",
           "regularly", "frequently", "occasionally", "daily", "weekly", "monthly", "yearly", "everyday",
           "forward", "ahead", "abroad", "somewhere", "anywhere", "everywhere", "nowhere", "long", "far", "out",
           "up", "down", "off", "around", "over", "in", "on", "along", "about", "through", "like"}
INTERJECTIONS = {"hey", "hi", "hello", "wow", "oh", "ah", "yes", "yeah", "yep", "no", "nope", "ok", "okay",
                 "thanks", "thank", "congrats", "congratulations", "haha", "ha", "lol", "omg", "awesome", "great",
                 "cool", "nice", "sure", "well", "um", "uh", "hmm", "aw", "aww", "welcome", "sorry", "please",
                 "bye", "goodbye", "cheers", "absolutely", "totally", "exactly", "indeed", "right", "alright",
                 "amazing", "wonderful", "brutal", "ugh", "whoa", "yay", "hooray", "gosh", "dear", "man", "dude",
                 "small", "big", "good", "glad", "happy", "true", "definitely", "of"}
# Adjectives dropped from the front of a noun phrase: they judge, they do not name.
EVALUATIVE = {"new", "old", "big", "small", "little", "tiny", "great", "good", "nice", "amazing", "awesome",
              "beautiful", "lovely", "favorite", "favourite", "own", "same", "other", "whole", "very", "really",
              "so", "super", "cool", "fun", "wonderful", "huge", "special", "real", "best", "better", "bad",
              "worst", "fantastic", "incredible", "awful", "terrible", "perfect", "fabulous", "gorgeous",
              "cute", "sweet", "adorable", "crazy", "busy", "certain", "particular", "different", "whole",
              "entire", "main", "major", "cozy", "fancy", "exciting", "interesting", "important", "hard",
              "tough", "difficult", "easy", "simple", "quick", "long", "short", "such", "lot", "lots", "bunch",
              "couple", "kind", "sort", "type", "first", "last", "next", "recent", "previous", "latest",
              "usual", "regular", "local", "nearby", "full", "empty", "proper", "true", "total", "complete",
              "brand", "stunning", "peaceful", "powerful", "inspiring", "meaningful", "cool", "neat", "dope"}
# Predicative adjectives: "I am ready", "she is young" name a quality, not an entity.
ADJECTIVES = {"ready", "young", "old", "lucky", "happy", "glad", "sad", "proud", "tired", "sick", "ill", "well",
              "fine", "okay", "ok", "sure", "excited", "nervous", "scared", "afraid", "worried", "grateful",
              "thankful", "hard", "tough", "easy", "free", "busy", "late", "early", "close", "closer", "open",
              "healthy", "strong", "weak", "single", "married", "pregnant", "alive", "dead", "awake", "asleep",
              "alone", "able", "unable", "likely", "important", "true", "false", "right", "wrong", "real", "fun",
              "funny", "strict", "kind", "nice", "cool", "great", "good", "bad", "better", "worse", "best", "worst",
              "new", "different", "same", "similar", "favorite", "favourite", "amazing", "awesome", "beautiful",
              "lovely", "huge", "tiny", "big", "small", "hot", "cold", "warm", "calm", "quiet", "loud", "safe",
              "special", "crazy", "empowering", "inspiring", "inspired", "motivated", "stoked", "thrilled",
              "interested", "blessed", "lonely", "curious", "keen", "eager", "brave", "vegan", "vegetarian",
              "remote", "full", "empty", "exhausted", "overwhelmed", "relaxed", "comfortable", "meaningful",
              "priceless", "impressive", "fantastic", "wonderful", "incredible", "stunning", "gorgeous", "perfect"}
TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "aunt", "uncle", "grandma", "grandpa",
          "st", "mt", "mount", "lake", "saint"}

# Verbs: lemma -> (canonical predicate, role of the subject, role of the direct object).
VERBS: dict[str, tuple[str, str, str]] = {}


def _verbs(predicate: str, subject: str, obj: str, *lemmas: str) -> None:
    for lemma in lemmas:
        VERBS.setdefault(lemma, (predicate, subject, obj))  # the first family a verb is listed in wins


_verbs("adopt", "adopter", "adoptee", "adopt", "foster", "rescue")
_verbs("own", "owner", "item", "own", "have", "possess", "keep")
_verbs("buy", "buyer", "item", "buy", "purchase", "order", "shop")
_verbs("get", "recipient", "item", "get", "receive", "obtain", "win", "earn", "collect", "gain", "pick")
_verbs("give", "giver", "item", "give", "gift", "donate", "send", "lend", "offer", "hand", "share", "show")
_verbs("travel", "traveler", "destination", "go", "travel", "fly", "drive", "ride", "head", "commute", "return",
       "come", "walk", "sail", "roadtrip")
_verbs("visit", "visitor", "place", "visit", "tour", "explore", "check")
_verbs("arrive", "traveler", "destination", "arrive", "land", "reach", "get")
_verbs("move", "mover", "destination", "move", "relocate", "emigrate", "immigrate")
_verbs("live", "resident", "place", "live", "reside", "settle")
_verbs("stay", "guest", "place", "stay", "camp", "sleep", "lodge")
_verbs("leave", "agent", "place", "leave", "quit", "depart", "escape")
_verbs("work", "worker", "employer", "work", "intern", "freelance", "serve")
_verbs("employ", "employer", "employee", "employ", "hire")
_verbs("study", "student", "subject", "study", "learn", "major", "research", "practice", "practise", "train")
_verbs("teach", "teacher", "subject", "teach", "tutor", "coach", "mentor", "instruct", "guide")
_verbs("attend", "attendee", "event", "attend", "join", "participate", "enroll", "enrol", "register",
       "volunteer", "compete", "perform")
_verbs("start", "agent", "theme", "start", "begin", "launch", "found", "open", "establish", "kick", "set")
_verbs("finish", "agent", "theme", "finish", "complete", "graduate", "end", "close", "wrap")
_verbs("create", "creator", "work", "make", "create", "build", "design", "craft", "produce", "draw", "sculpt",
       "knit", "sew", "compose", "record", "film", "publish", "develop", "invent")
_verbs("paint", "creator", "work", "paint")
_verbs("write", "author", "work", "write", "blog", "journal")
_verbs("cook", "cook", "dish", "cook", "bake", "grill", "brew", "prepare")
_verbs("eat", "eater", "food", "eat", "taste", "try", "drink", "have")
_verbs("like", "experiencer", "theme", "like", "love", "enjoy", "adore", "prefer", "appreciate", "fancy",
       "admire", "cherish", "treasure", "value")
_verbs("dislike", "experiencer", "theme", "hate", "dislike", "detest", "loathe", "mind")
_verbs("want", "experiencer", "theme", "want", "wish", "need", "crave", "desire")
_verbs("meet", "agent", "person", "meet", "see", "visit", "date", "befriend", "encounter", "reconnect", "hang")
_verbs("contact", "agent", "person", "call", "text", "email", "message", "phone", "contact", "tell", "ask",
       "invite", "thank", "talk", "speak", "chat")
_verbs("help", "helper", "beneficiary", "help", "support", "assist", "encourage", "inspire", "motivate",
       "comfort", "protect", "care", "raise", "adopt", "foster", "rescue", "feed", "babysit")
_verbs("read", "reader", "work", "read")
_verbs("watch", "viewer", "work", "watch", "see", "view", "stream", "binge")
_verbs("listen", "listener", "work", "listen", "hear")
_verbs("play", "player", "game", "play", "jam")
_verbs("do", "agent", "activity", "do", "perform", "pursue", "take", "practice")
_verbs("exercise", "agent", "activity", "run", "hike", "swim", "climb", "bike", "cycle", "jog", "ski",
       "surf", "skate", "dance", "sing", "skydive", "kayak", "row", "paddle", "lift", "stretch", "meditate")
_verbs("book", "agent", "booking", "book", "reserve", "schedule", "rent", "hire")
_verbs("use", "user", "tool", "use", "wear", "carry", "bring", "drive")
_verbs("lose", "agent", "item", "lose", "miss", "break", "damage", "forget", "drop", "leak")
_verbs("find", "finder", "item", "find", "discover", "notice", "spot", "stumble", "realize", "learn")
_verbs("plan", "planner", "plan", "plan", "arrange", "prepare")
_verbs("celebrate", "agent", "occasion", "celebrate", "host", "throw", "organize", "organise")
_verbs("marry", "spouse", "spouse", "marry", "wed", "engage", "divorce")
_verbs("pay", "payer", "item", "pay", "spend", "cost", "charge", "save", "invest", "afford")
_verbs("sell", "seller", "item", "sell", "trade", "swap")
_verbs("change", "agent", "theme", "change", "switch", "transition", "transform", "improve", "fix", "repair",
       "renovate", "decorate", "upgrade", "clean", "paint")
_verbs("grow", "agent", "theme", "grow", "plant", "garden")
_verbs("feel", "experiencer", "theme", "feel", "think", "believe", "consider", "remember", "miss", "worry",
       "wonder", "hope", "know")
_verbs("run", "manager", "organization", "run", "manage", "lead", "own", "operate", "direct", "host")
_verbs("name", "namer", "named", "name", "call")
_verbs("recommend", "agent", "theme", "recommend", "suggest", "advise", "review", "rate")
_verbs("sign", "agent", "event", "sign")
_verbs("decide", "agent", "theme", "decide", "choose", "pick", "select", "agree")
_verbs("accept", "agent", "theme", "accept", "admit", "approve", "pass")
_verbs("fail", "agent", "theme", "fail", "reject", "refuse", "deny", "cancel", "postpone")
_verbs("apply", "applicant", "position", "apply", "interview", "audition")
_verbs("lose_pet", "agent", "theme", "bury")
_verbs("photograph", "photographer", "subject", "photograph", "snap", "shoot", "capture")
_verbs("upload", "agent", "theme", "post", "upload", "tweet")
_verbs("give_birth", "parent", "child", "deliver")
_verbs("stop", "agent", "theme", "stop", "abandon", "drop")
_verbs("fall", "agent", "place", "fall", "trip", "slip", "crash", "injure", "hurt")
_verbs("receive", "recipient", "item", "receive", "inherit", "accept")
_verbs("celebrate", "agent", "occasion", "celebrate")

# Families too broad to be one relation: their verbs keep their own lemma as the predicate the
# extractor writes ("made" -> make, not create; "climbed" -> climb, not exercise).
OWN_PREDICATE_FAMILIES = frozenset({"exercise", "create", "do", "change", "help", "contact"})


def predicate_of(lemma: str) -> str:
    """The predicate written for a verb lemma: its family, or the lemma itself for the broad families.

    The one mapping the extractor writes with and the query planner asks with, so that every
    family a question can ask for is one the extractor writes.
    """
    family = VERBS.get(lemma, (lemma, "", ""))[0]
    return lemma if family in OWN_PREDICATE_FAMILIES else family


# Phrasal verbs (lemma, particle) -> lemma they mean; matched before single verbs.
PHRASAL = {
    ("sign", "up"): "enroll", ("pick", "up"): "start", ("take", "up"): "start", ("give", "up"): "quit",
    ("look", "after"): "care", ("take", "care"): "care", ("hang", "out"): "hang", ("check", "out"): "visit",
    ("go", "out"): "go", ("set", "up"): "start", ("work", "out"): "exercise", ("show", "off"): "show",
    ("find", "out"): "find", ("move", "in"): "move", ("move", "out"): "leave", ("drop", "by"): "visit",
    ("stop", "by"): "visit", ("come", "back"): "return", ("get", "back"): "return", ("go", "back"): "return",
    ("look", "forward"): "want", ("catch", "up"): "meet", ("meet", "up"): "meet", ("break", "up"): "divorce",
    ("sign", "in"): "register", ("fill", "out"): "complete", ("try", "out"): "try", ("put", "together"): "make",
    ("figure", "out"): "find", ("get", "into"): "start", ("run", "into"): "meet",
    ("look", "into"): "research",
}
VERBS.setdefault("enroll", ("attend", "attendee", "event"))
VERBS.setdefault("quit", ("leave", "agent", "place"))
VERBS.setdefault("exercise", ("exercise", "agent", "activity"))

# Irregular forms -> lemma.
IRREGULAR = {
    "focused": "focus", "focusing": "focus", "learnt": "learn", "retook": "retake",  # the e rule would misread these
    "went": "go", "gone": "go", "goes": "go", "bought": "buy", "got": "get", "gotten": "get", "gave": "give",
    "given": "give", "made": "make", "took": "take", "taken": "take", "saw": "see", "seen": "see",
    "met": "meet", "ate": "eat", "eaten": "eat", "drank": "drink", "drunk": "drink", "wrote": "write",
    "written": "write", "read": "read", "ran": "run", "swam": "swim", "swum": "swim", "flew": "fly",
    "flown": "fly", "drove": "drive", "driven": "drive", "rode": "ride", "ridden": "ride", "came": "come",
    "found": "find", "left": "leave", "kept": "keep", "felt": "feel", "thought": "think", "knew": "know",
    "known": "know", "sold": "sell", "sent": "send", "spent": "spend", "taught": "teach", "brought": "bring",
    "built": "build", "won": "win", "lost": "lose", "began": "begin", "begun": "begin", "sang": "sing",
    "sung": "sing", "drew": "draw", "drawn": "draw", "grew": "grow", "grown": "grow", "threw": "throw",
    "thrown": "throw", "wore": "wear", "worn": "wear", "broke": "break", "broken": "break", "chose": "choose",
    "chosen": "choose", "forgot": "forget", "forgotten": "forget", "heard": "hear", "held": "hold",
    "paid": "pay", "said": "say", "told": "tell", "slept": "sleep", "stood": "stand", "understood": "understand",
    "fell": "fall", "fallen": "fall", "hung": "hang", "led": "lead", "lent": "lend", "shot": "shoot",
    "sat": "sit", "spoke": "speak", "spoken": "speak", "woke": "wake", "has": "have", "had": "have",
    "did": "do", "done": "do", "does": "do", "is": "be", "am": "be", "are": "be", "was": "be", "were": "be",
    "been": "be", "dove": "dive", "set": "set", "put": "put", "cut": "cut", "hurt": "hurt", "let": "let",
    "quit": "quit", "shut": "shut", "cost": "cost", "fed": "feed", "fought": "fight", "caught": "catch",
    "sought": "seek", "dug": "dig", "stuck": "stick", "struck": "strike", "swept": "sweep", "won't": "will",
    "became": "become", "become": "become", "overcame": "overcome", "undertook": "undertake", "lit": "light",
    "bred": "breed", "bore": "bear", "born": "bear", "blew": "blow", "hid": "hide", "bit": "bite",
    "leapt": "leap", "knelt": "kneel", "meant": "mean", "dealt": "deal", "ground": "grind",
}
PAST_FORMS = {k for k, v in IRREGULAR.items() if k not in ("goes", "has", "does", "is", "am", "are", "read", "set",
                                                            "put", "cut", "hurt", "let", "quit", "shut", "cost")}
# Verbs that say something about the speaker's mind rather than an event; their complement is the event.
REPORTING = {"say", "tell", "think", "believe", "know", "guess", "hope", "feel", "mean", "wonder", "bet",
             "suppose", "imagine", "realize", "realise", "remember", "forget", "hear", "notice", "agree", "admit",
             "promise", "bet", "reckon", "seem", "sound", "look", "appear", "wish", "swear"}
# Verbs that take "to <verb>" and pass their subject on; the value says whether the event is planned.
CONTROL = {"plan": True, "want": True, "hope": True, "decide": True, "intend": True, "wish": True, "need": True,
           "aim": True, "expect": True, "prepare": True, "arrange": True, "consider": True, "think": True,
           "try": False, "start": False, "begin": False, "continue": False, "love": False, "like": False,
           "manage": False, "get": False, "learn": False, "used": False, "happen": False, "go": True,
           "promise": True, "would": True, "have": False, "seem": False, "agree": True, "dream": True,
           "choose": False, "volunteer": False, "offer": True, "ask": True, "want_to": True, "gonna": True,
           "wanna": True, "gotta": False, "look": True, "forward": True, "excited": True, "ready": True,
           "able": False, "going": True}

# Noun classes (singular, lowercase) that decide an entity's type.
KIN = {"sister", "brother", "mom", "mother", "mum", "mommy", "dad", "father", "daddy", "parent", "kid", "child",
       "son", "daughter", "husband", "wife", "partner", "spouse", "boyfriend", "girlfriend", "fiance", "fiancee",
       "grandma", "grandmother", "grandpa", "grandfather", "grandparent", "grandchild", "grandson",
       "granddaughter", "aunt", "uncle", "cousin", "niece", "nephew", "family", "sibling", "twin", "baby",
       "stepmom", "stepdad", "stepson", "stepdaughter", "in-law", "relative"}
SOCIAL = {"friend", "buddy", "bestie", "pal", "teacher", "manager", "boss", "coworker", "co-worker", "colleague",
          "neighbor", "neighbour", "mentor", "coach", "doctor", "therapist", "teammate", "classmate", "roommate",
          "counselor", "counsellor", "student", "instructor", "tutor", "landlord", "host", "client", "customer",
          "employee", "employer", "pastor", "priest", "nurse", "trainer", "supervisor", "professor", "mate",
          "acquaintance", "penpal", "bandmate", "ex"}
PERSON_NOUNS = KIN | SOCIAL | {"person", "people", "man", "woman", "guy", "girl", "boy", "lady", "gentleman",
                                "artist", "writer", "author", "painter", "potter", "musician", "singer", "player",
                                "volunteer", "member", "leader", "owner", "chef", "cook", "athlete", "runner",
                                "stranger", "adult", "teen", "teenager", "kiddo", "guest", "speaker", "activist",
                                "advocate", "veteran", "officer", "engineer", "designer", "developer", "scientist",
                                "photographer", "dancer", "actor", "actress", "star", "celebrity", "hero",
                                "youth", "individual", "folk", "crowd", "audience", "retiree", "mom-to-be"}
# The pronoun a person noun or title takes (general English): "my sister Lena ... She ...". A person named by
# a noun of GROUP_NOUNS ("my family") is no "he" or "she".
GENDER = {**dict.fromkeys(("brother", "dad", "father", "daddy", "son", "husband", "boyfriend", "fiance", "grandpa",
                           "grandfather", "grandson", "uncle", "nephew", "stepdad", "stepson", "man", "guy", "boy",
                           "gentleman", "mr", "sir", "king", "prince", "actor", "waiter"), "he"),
          **dict.fromkeys(("sister", "mom", "mother", "mum", "mommy", "daughter", "wife", "girlfriend", "fiancee",
                           "grandma", "grandmother", "granddaughter", "aunt", "niece", "stepmom", "stepdaughter",
                           "woman", "girl", "lady", "mrs", "ms", "miss", "madam", "queen", "princess", "actress",
                           "waitress", "mom-to-be"), "she")}
GROUP_NOUNS = {"family", "people", "folk", "crowd", "audience", "team", "group", "couple", "class", "staff", "crew",
               "band", "youth"}
ANIMALS = {"dog", "cat", "puppy", "pup", "kitten", "pet", "bird", "horse", "fish", "rabbit", "bunny", "hamster",
           "turtle", "snake", "parrot", "greyhound", "retriever", "labrador", "poodle", "terrier", "beagle",
           "husky", "bulldog", "shepherd", "lizard", "guinea", "pig", "cow", "goat", "chicken", "duck", "pony",
           "ferret", "gecko", "tortoise", "canary", "cockatiel", "kitty", "doggy", "doggo"}
PLACE_NOUNS = {"city", "town", "village", "country", "park", "beach", "station", "shop", "store", "restaurant",
               "cafe", "café", "place", "house", "apartment", "flat", "museum", "gym", "library", "mountain",
               "lake", "river", "forest", "trail", "temple", "church", "hospital", "office", "hotel", "hut",
               "studio", "garden", "cemetery", "market", "mall", "bar", "pub", "campsite", "neighborhood",
               "neighbourhood", "island", "coast", "valley", "canyon", "desert", "street", "road", "square",
               "airport", "zoo", "aquarium", "gallery", "theater", "theatre", "stadium", "arena", "shelter",
               "center", "centre", "guesthouse", "hostel", "inn", "resort", "bakery", "farm", "ranch", "cabin",
               "campground", "waterfall", "summit", "peak", "hill", "state", "province", "region", "area",
               "downtown", "suburb", "clinic", "school", "university", "college", "campus", "classroom", "venue",
               "kitchen", "backyard", "yard", "room", "bedroom", "basement", "garage", "porch", "pool", "spa",
               "salon", "dojo", "rink", "court", "field", "pier", "harbor", "harbour", "bridge", "castle",
               "palace", "tower", "monument", "landmark", "shrine", "sanctuary", "reserve", "ocean", "sea", "bay"}
EVENT_NOUNS = {"course", "class", "workshop", "concert", "party", "trip", "vacation", "holiday", "parade",
               "festival", "conference", "meeting", "race", "marathon", "game", "match", "wedding", "birthday",
               "ceremony", "camp", "retreat", "session", "program", "programme", "show", "exhibition", "exhibit",
               "tournament", "competition", "hike", "tour", "call", "interview", "lesson", "seminar", "lecture",
               "talk", "event", "fair", "fundraiser", "rally", "protest", "march", "gathering", "reunion",
               "celebration", "picnic", "barbecue", "bbq", "dinner", "lunch", "breakfast", "brunch", "date",
               "appointment", "surgery", "graduation", "anniversary", "funeral", "performance", "recital",
               "audition", "gig", "meetup", "hackathon", "webinar", "ride", "flight", "cruise", "road trip",
               "roadtrip", "sleepover", "playdate", "camping", "outing", "excursion", "journey", "getaway",
               "internship", "job", "shift", "project", "challenge", "volunteering", "drive", "walk", "run",
               "group", "club", "team", "league", "choir", "band", "charity", "pride"}
WORK_NOUNS = {"book", "novel", "movie", "film", "song", "album", "painting", "poem", "series", "podcast",
              "documentary", "article", "story", "play", "musical", "artwork", "sculpture", "drawing", "photo",
              "picture", "video", "essay", "blog", "memoir", "comic", "manga", "anime", "show", "track",
              "record", "mural", "portrait", "sketch", "piece", "collage", "quilt", "bowl", "vase", "poster"}
ORG_SUFFIXES = {"institute", "university", "college", "school", "company", "inc", "corp", "corporation", "ltd",
                "llc", "design", "designs", "studio", "studios", "group", "club", "bank", "association",
                "foundation", "agency", "society", "academy", "council", "committee", "organization",
                "organisation", "network", "alliance", "union", "church", "team", "league", "band", "center",
                "centre", "labs", "lab", "partners", "services", "solutions", "media", "press", "records",
                "airlines", "airline", "air", "hospital", "clinic", "charity", "fund", "party", "ministry",
                "department", "office", "shelter"}
PLACE_SUFFIXES = {"station", "park", "street", "st", "avenue", "ave", "road", "lake", "river", "mountain",
                  "mount", "mt", "beach", "island", "islands", "bay", "valley", "canyon", "city", "town",
                  "village", "square", "bridge", "temple", "shrine", "castle", "palace", "tower", "museum",
                  "airport", "cafe", "café", "restaurant", "bar", "hotel", "trail", "falls", "forest", "garden",
                  "gardens", "market", "mall", "zoo", "coast", "county", "state", "heights", "hills", "hill"}
# Common nouns worth an anchor of their own when possessed ("my bike" -> own(Mia, bike)).
OBJECT_NOUNS = {"car", "bike", "bicycle", "house", "apartment", "phone", "laptop", "computer", "camera",
                "bottle", "jacket", "shoe", "boot", "guitar", "piano", "violin", "drum", "book", "card", "watch",
                "ring", "necklace", "bag", "backpack", "tent", "boat", "kayak", "garden", "tablet", "headphone",
                "sneaker", "dress", "shirt", "hat", "scarf", "coat", "suitcase", "ticket", "passport", "wallet",
                "key", "desk", "chair", "couch", "sofa", "bed", "table", "tv", "television", "console", "collection",
                "painting", "sculpture", "journal", "notebook", "pen", "brush", "easel", "canvas", "instrument",
                "motorcycle", "scooter", "truck", "van", "home", "studio", "shop", "business", "blog", "channel",
                "podcast", "website", "app", "plant", "tattoo", "mug", "cup", "bowl", "vase", "pottery", "quilt"}

# Dialogue acts: what a turn does to the person spoken to when it asserts no event (FrameNet's
# Judgment_direct_address for thanks and praise, and its frames for greeting, agreement, encouragement
# and questioning). Their frames name the speaker (agent) and, when the record says who that is, the
# person spoken to (recipient). They are a class apart: the person spoken to is not mentioned by the
# turn (no mr:mentionedIn, memrepo/graph/model.py), and recall builds no rows from these frames
# (the base lane of memrepo/read/recall.py), so that a turn of thanks does not look like a turn about
# both speakers.
DIALOGUE_ACTS = frozenset({"thank", "greet", "farewell", "encourage", "praise", "congratulate", "agree", "ask"})
#: The arm of a dialogue act that names the person spoken to.
ADDRESSEE_ROLE = "recipient"

# --- the small sets the stages test words against (named here, not spelled out in conditions) ---

# Generic filing terms and dialogue-role pseudo-entities (written as anchor keys: singular, lowercase);
# the admission gate (memrepo/graph/kappa.py) refuses them, and the pronoun rule names none of them.
GENERIC_TERMS = frozenset(
    {
        "advice", "detail", "information", "info", "plan", "tip", "note", "update", "thing", "stuff",
        "topic", "issue", "matter", "question", "answer", "conversation", "discussion", "chat",
        "message", "summary", "context", "example", "idea", "point", "fact", "event", "activity",
        "experience", "situation", "something", "anything", "everything", "nothing", "lot", "way",
        "time", "day", "today", "yesterday", "tomorrow", "moment", "part", "kind", "sort", "bit",
        "memory", "record", "reminder", "task", "goal", "news", "preference", "feeling",
    }
)
# Number words the quantity patterns do not read as a count of their own ("a couple of", "a dozen" are read
# whole; "zero" is no count of things).
NOT_QUANTITY_WORDS = frozenset({"couple", "dozen", "hundred", "thousand", "zero"})
# Tokenizer: contractions split into two words, and words whose "'s" is "is" ("she's", "that's").
CONTRACTIONS = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would", "n't": "not"}
SPECIAL_NEGATIONS = {"can't": ["can", "not"], "won't": ["will", "not"], "shan't": ["shall", "not"],
                     "ain't": ["is", "not"]}
PRONOUN_IS = frozenset({"he", "she", "it", "that", "there", "what", "who", "where", "here", "how", "this",
                        "everything", "something", "nothing", "everyone", "someone", "let"})
# Predicates whose direct object is a place: a bare name there ("climb Fuji", "hiked Takao") is a location,
# not the person a lone capitalized word is otherwise taken for.
PLACE_OBJECT_PREDICATES = frozenset({"visit", "travel", "move", "climb", "hike", "trek", "ascend", "summit", "ski"})
# Entity types: the vague ones a later, definite type replaces; those "he"/"she" may name; the things "it" names.
VAGUE_TYPES = frozenset({"concept", "object"})
ANIMATE_TYPES = frozenset({"person", "animal"})
THING_TYPES = frozenset({"object", "work", "event", "animal"})
# A person named by one of these endings is a group ("my kids", "Mia's children", "his family"): "they".
GROUP_ENDINGS = ("s", "children", "family")
# Verbs that stay verbs inside a noun phrase only where a determiner allows it ("the love of", not "love painting").
STRONG_VERBS = frozenset({"love", "like", "want", "need", "go", "get", "buy", "make", "take", "think", "know",
                          "say", "tell", "give", "have", "enjoy", "hate", "hope", "feel", "try", "start", "decide",
                          "adopt", "visit", "meet", "bring", "keep", "leave", "find", "see", "watch", "learn",
                          "join", "miss"})
# Adjectives after "be" that take "to"/"about"/"of" and a plan ("excited to", "about to", "planning on").
PLAN_ADJECTIVES = frozenset({"excited", "ready", "able", "about", "supposed", "eager", "hoping", "planning",
                             "thinking", "happy", "glad", "proud", "keen"})
# Of those, the ones that say nothing is planned ("able to", "happy to").
UNPLANNED_ADJECTIVES = frozenset({"able", "happy", "glad", "proud"})
MODALS = frozenset({"can", "could", "will", "would", "might", "may", "must", "should"})
# Words after which a new clause starts when a subject follows.
CLAUSE_BREAK = frozenset({"and", "but", "so", "because", "while", "although", "though", "when", "if", "since",
                          "cause", "cuz", "whereas", "after", "before", "until", "once", "why"})
SUBJECT_WORDS = frozenset({"i", "we", "you", "he", "she", "they", "it", "my", "our", "his", "her", "their",
                           "there", "this", "that"})
# Words before a mid-sentence "I" that keep it in the clause ("than I", "what I", "where I").
KEEPS_I = frozenset({"that", "than", "what", "who", "which", "where", "how", "why", "-", "\"", "“"})
# Words a name used to address someone follows ("Thanks, Ana!", "Hi Ben!").
GREETINGS = frozenset({"hi", "hey", "hello", "thanks", "thank", "congrats", "congratulations", "bye", "welcome",
                       "dear", "wow", "oh", "yes", "yeah", "sorry", "agreed", "sure", "ok", "okay", "aw", "aww",
                       "haha", "cheers", "great", "cool", "awesome", "nice", "good", "morning", "evening", "night",
                       "you", "ya"})
# "a pile of plates", "a row of jars": what a photo shows is what comes after "of".
COLLECTIVES = frozenset({"group", "stack", "pile", "bunch", "couple", "pair", "set", "lot", "row", "variety",
                         "collection", "close", "closeup", "view", "number", "crowd", "handful", "line", "assortment"})
JUDGING_VERBS = frozenset({"look", "looks", "looked", "sound", "sounds", "sounded", "seem", "seems", "seemed"})
# Words that open a command, not a subject ("Remember that ...", "Keep going").
IMPERATIVES = REPORTING | {"remember", "keep", "let", "try", "make", "stay", "never", "always", "don't"}
# Endings of an adjective ("expressive", "graceful", "rewarding") and of an abstract noun ("motivation").
ADJECTIVE_SUFFIXES = ("ive", "ful", "ous", "able", "ible", "ic", "ing")
PREDICATIVE_SUFFIXES = ("ful", "ous", "ive", "able", "ible", "less", "ish", "ent", "ant", "ary")
NOUN_SUFFIXES = ("tion", "ment", "ness", "ity", "ance", "ence", "ship", "ism", "ing", "ure", "ogy")
# Noun phrases and names.
ARTICLES = frozenset({"a", "an", "the"})
INDEFINITE_DETERMINERS = frozenset({"a", "an", "another"})
FAVORITE = frozenset({"favorite", "favourite"})
NAMING_WORDS = frozenset({"named", "called"})
# Lowercase words inside a name ("Museum of Modern Art", "Bank of the West", "Casa de Campo").
NAME_JOINERS = frozenset({"of", "the", "de", "for", "on"})
NAME_AND = frozenset({"and", "&"})
NAME_WORDS_IN_CAPS = NAME_JOINERS | NAME_AND  # the words a name in capitals may hold
# A name with "and" is one only when it is an organization's ("Institute of Arts and Sciences").
ORG_JOINERS = frozenset({"of", "for"})
# Adverbs that head a noun phrase too ("back home", "a home run").
NOUN_ADVERBS = frozenset({"home", "run", "back"})
# Words before a hyphen and a date that keep the date a literal ("mid-2024", "pre-2020"); any other word
# glued to a digit by a hyphen makes a name of it ("db-stage-2", "eu-west-1").
DATE_PREFIXES = frozenset({"mid", "pre", "post", "early", "late"})
# Title words of a geographic name that say what the place is ("Mount Fuji" is Fuji), each with the words
# that show a text speaks of that kind of place ("we climbed Fuji"). Titles that are part of a different
# place's name ("Cape Town", "San Jose", "Fort Worth", "Port Louis") are not listed.
_MOUNT_WORDS = frozenset({"mount", "mountain", "summit", "peak", "crater", "volcano", "slope", "slopes", "climb",
                          "climbed", "climbing", "ascent", "ascended", "trailhead"})
_LAKE_WORDS = frozenset({"lake", "shore", "shores", "lakeside", "lakeshore"})
GEOGRAPHIC_TITLES: Mapping[str, frozenset[str]] = MappingProxyType({
    "mount": _MOUNT_WORDS, "mt": _MOUNT_WORDS, "lake": _LAKE_WORDS, "loch": _LAKE_WORDS,
    "river": frozenset({"river", "riverbank", "riverside", "upstream", "downstream"}),
})
# Two-word prepositions: their first word ends the noun phrase before it ("a kettle next to the station").
COMPOUND_PREPOSITIONS = frozenset({"next to", "close to", "near to", "prior to", "due to", "ahead of", "instead of",
                                   "because of", "out of", "regardless of", "apart from", "away from"})
# Irregular verb forms that are nouns as often ("a good read", "the left", "a record").
NOUN_LIKE_FORMS = frozenset({"read", "set", "left", "found", "bit", "ground", "record", "born"})
# Words in -ly that are no adverbs.
LY_NOUNS = frozenset({"family", "belly", "jelly", "rally", "italy", "lily", "butterfly"})
# -ing words English uses as count nouns: a word of a noun phrase wherever it stands ("the planning meeting in")
ING_NOUNS = frozenset({"meeting", "building", "wedding", "evening", "morning", "ceiling", "feeling", "painting",
                       "drawing", "recording", "booking", "briefing", "hearing", "opening", "ending", "beginning",
                       "warning", "finding", "offering", "filling", "heading", "listing", "setting", "crossing"})
# The first word of a name that makes it a person's or a place's; words in an organization's name.
PERSON_TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof", "miss", "aunt", "uncle", "grandma", "grandpa"})
PLACE_PREFIXES = frozenset({"mount", "mt", "lake", "st", "saint", "port", "fort", "cape", "san", "santa", "los", "las"})
ORG_WORDS = frozenset({"institute", "university", "college", "academy"})
# A bare name after one of these is a place ("in Lisbon", "toward Porto"; "visit" stands for a place object).
PLACE_PREPOSITIONS = frozenset({"in", "at", "from", "to", "near", "into", "around", "across", "through", "toward",
                                "towards", "outside", "inside", "via", "visit", "place", "destination"})
# The types of a name no cue has settled yet, and those a quoted title replaces with "work".
UNSETTLED_TYPES = frozenset({"concept", "object", "name"})
TITLE_TYPES = frozenset({"name", "concept", "location", "organization"})
QUOTES_OPEN = frozenset({'"', "“"})
# Dialogue: words a judgement's quality may follow ("is so lovely"), words that point at the last thing named,
# and words after which the next word of a question is a verb ("are you gonna stay").
INTENSIFIERS = frozenset({"so", "very", "such", "been", "truly", "pretty"})
DEICTIC_IT = frozenset({"it", "this"})
VERB_OPENERS = frozenset({"gonna", "wanna", "anything", "something"})
# Clauses: the verb group.
PLACE_ADVERBS = frozenset({"there", "here"})  # no lead words: "there" and "here" open a clause as its subject
SUBJECT_PRONOUNS = frozenset({"i", "we", "you", "he", "she"})
PERSONAL_SUBJECTS = SUBJECT_PRONOUNS | {"they"}  # after these an unknown word is a verb ("I grokked it")
HE_SHE = frozenset({"he", "she"})
HIS_HER = frozenset({"his", "her"})
FUTURE_WORDS = FUTURE_MARKERS | {"would", "'ll"}
PAST_COPULAS = frozenset({"was", "were"})
HAVE_DO = frozenset({"have", "has", "had", "do", "does", "did"})
PAST_AUXILIARIES = frozenset({"did", "had"})
PERFECT_AUXILIARIES = frozenset({"did", "had", "have", "has"})
AFTER_HAVE_DO = frozenset({"been", "got", "to"})  # "had been", "have got", "have to"
# Adverbs that are a verb's particle ("came back", "set up", "looked around"): the verb group ends before them.
PARTICLES = frozenset({"home", "back", "out", "up", "down", "off", "over", "in", "on", "around", "about", "through",
                       "along", "like"})
# Liking verbs whose -ing complement is liked as well ("I love sketching birds" also says sketching is liked).
LIKING = frozenset({"love", "like", "enjoy", "hate", "prefer"})
PLAN_FORMS = frozenset({"going", "planning", "looking"})  # "going to", "planning to", "looking forward"
PLAN_LINKS = frozenset({"to", "about", "of"})  # "excited to", "thinking about", "thinking of"
KIND_WORDS = frozenset({"kind", "sort"})  # "kind of", "sort of": no state
DEGREE_WORDS = frozenset({"so", "very"})
NOT_ABOUT_ING = frozenset({"going", "getting"})
STATE_BEFORE_TO = frozenset({"about", "able", "supposed"})  # "about to", "able to", "supposed to": a plan follows
COMPLEMENTIZERS = frozenset({"that", "what", "how", "why", "when"})
# Clauses: the arms.
RELATIVE_PRONOUNS = frozenset({"who", "that", "which"})
COORDINATORS = frozenset({"and", ",", "or", "then", "but"})
OBJECT_PRONOUNS = frozenset({"me", "you", "him", "her", "us", "them"})
DEMONSTRATIVES = frozenset({"that", "this"})
ARTICLES_A = frozenset({"a", "an"})
# The roles a verbless "X is ..." keeps (its category and places), and the place roles among them.
COPULA_ROLES = frozenset({"category", "item", "location", "destination", "topic"})
PLACE_ROLES = frozenset({"location", "destination"})
MOTION_PREDICATES = frozenset({"travel", "move", "arrive", "visit"})
STAY_PREDICATES = MOTION_PREDICATES | {"leave", "return", "stay", "live"}  # "to" names a destination, not a recipient
OWNED_TYPES = frozenset({"object", "animal", "work", "location"})  # what "own" may hold; else it is "have"
# Values that make a verbless clause worth a frame ("The ferry from Faro took 40 minutes").
VALUE_KEYS = frozenset({"price", "duration", "measurement", "age", "time", "count", "frequency"})
# The role of a prepositional phrase (memrepo/nlp/roles.prep_role).
LOCATIVE_PREPOSITIONS = frozenset({"in", "at", "inside", "near", "around", "within", "outside", "across", "throughout"})
GOAL_PREPOSITIONS = frozenset({"to", "into", "onto", "toward", "towards"})
PATH_PREPOSITIONS = frozenset({"through", "via"})
COMPANION_TYPES = frozenset({"person", "animal", "name"})  # "with" these is company, with anything else a tool
EMPLOY_PREDICATES = frozenset({"work", "employ"})  # "for" after these names the employer

# --- instructions: the one table of imperative openers (memrepo/write/offline, memrepo/write/documents) ---------
# Verbs a step or a rule opens with ("Restart the worker", "Descale the kettle"), in their base form.
IMPERATIVE_VERBS = frozenset((
    "add", "ask", "avoid", "back", "boil", "book", "bring", "call", "cancel", "change", "charge", "check", "choose",
    "clean", "clear", "click", "close", "commit", "compress", "confirm", "cool", "copy", "create", "delete",
    "deploy", "descale", "disable", "document", "double-check", "download", "drain", "drive", "drop", "edit", "email",
    "enable", "ensure", "enter", "escalate", "export", "feed", "file", "fill", "follow", "get", "give", "go", "hand",
    "heat", "install", "keep", "label", "leave", "lock", "log", "mark", "measure", "merge", "message", "mix", "move",
    "note", "notify", "open", "pack", "page", "park", "paste", "pay", "pick", "ping", "plug", "post", "pour",
    "press", "print", "pull", "push", "put", "read", "reboot", "record", "remove", "rename", "replace", "reply",
    "report", "request", "reset", "restart", "restore", "return", "review", "rinse", "rotate", "run", "save",
    "scan", "schedule", "select", "send", "set", "share", "sign", "skip", "sort", "start", "stop", "store",
    "submit", "switch", "tag", "take", "tell", "test", "tidy", "turn", "type", "unlock", "unplug", "update",
    "upgrade", "upload", "use", "verify", "wait", "walk", "wash", "water", "weigh", "wipe", "write",
))
# Openers that make a directive of what follows, whatever its verb ("make sure the tap is off").
DIRECTIVE_OPENERS = ("make sure", "be sure", "remember to", "don't forget", "do not", "don't", "please")
# Adverbs that open a sentence with an imperative of their own: "always"/"never" + a base-form verb.
FREQUENCY_OPENERS = frozenset({"always", "never"})
# Words before the verb of a step that do not change it ("First, drain the node", "Then restart it").
STEP_ADVERBS = frozenset({"first", "then", "next", "finally", "now", "and", "also", "second", "lastly"})
# Verbs of a state, a feeling or a thought: no imperative of a step or a rule is made of them ("always love
# hearing from you" is a statement with its subject left out), though "remember" and "forget" direct one.
STATIVE_VERBS = (REPORTING | LIKING | {"adore", "appreciate", "admire", "miss", "want", "need", "deserve", "belong",
                                       "enjoy", "love", "owe", "own"}) - {"remember", "forget"}
_NOT_BASE_VERBS = (DETERMINERS | PREPOSITIONS | ADVERBS | ADJECTIVES | EVALUATIVE | PAST_FORMS
                   | (AUXILIARIES - {"be", "do", "have", "keep"}) | {"i", "me", "you", "we", "it", "he", "she", "they"})


def _opening(text: str) -> list[str]:
    """The first words of ``text`` in lower case, after a list marker and the adverbs of a step."""
    words = text[:80].lower().replace("\u2019", "'").lstrip(" \t-*•>").split()[:8]
    while words and (words[0].rstrip(".):").isdigit() or words[0] == "step"):
        words = words[1:]  # "1." "2)" "Step 3:"
    while words and words[0].rstrip(",") in STEP_ADVERBS:
        words = words[1:]
    return [w.strip(",.;:!?\"()") for w in words]


def _after_step(text: str) -> bool:
    """Whether ``text`` opens with a step adverb that a clause without a subject follows ("First, ...", "then")."""
    first = text.lstrip(" \t-*•>").split(None, 1)[0].lower() if text.strip() else ""
    return first.endswith(",") and first.rstrip(",") in STEP_ADVERBS or first == "then"


def is_base_verb(word: str) -> bool:
    """Whether ``word`` (lower case) can be a verb's base form: not a closed-class word, an adjective, a past
    form, a participle in -ing/-ed, a third-person form in -s or a state verb."""
    if not word.isalpha() or word in _NOT_BASE_VERBS or word in STATIVE_VERBS:
        return False
    if word.endswith("ing") and len(word) > 5 or word.endswith("ed") and not word.endswith("eed"):
        return False  # "staying", "interested"; not "bring", "exceed"
    return not (word.endswith("s") and not word.endswith(("ss", "us", "is")))  # "runs": a third person


def opens_with_imperative(text: str) -> bool:
    """Whether ``text`` opens with an imperative (after a list marker and step adverbs such as "first", "then"):
    a verb of :data:`IMPERATIVE_VERBS`, a directive opener ("make sure", "do not", "please"), "always"/"never"
    with a base-form verb that is no state ("Always lock the gate"; not "Always here to help", "Never saw it"),
    or any base-form verb after "First," or "then"."""
    words = _opening(text)
    if not words:
        return False
    if words[0] in FREQUENCY_OPENERS:
        return len(words) > 1 and (words[1] in IMPERATIVE_VERBS or is_base_verb(words[1]))
    head = " ".join(words[:2])
    if any(head == opener or words[0] == opener for opener in DIRECTIVE_OPENERS):
        return True
    # After "First," or "then" a clause without a subject opens with its verb: "First, soak the beans".
    return words[0] in IMPERATIVE_VERBS or head == "back up" or (_after_step(text) and is_base_verb(words[0]))
