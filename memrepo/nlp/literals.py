"""Literals and times: the values a sentence states, cut out before its words are parsed.

Dates, prices, percentages, counts, durations, measurements, ages, frequencies, times of day
and the ways to reach someone (an email address, a telephone number, a web address) are found
by the named patterns of :data:`PATTERNS` (in order: the first to take a span keeps it) and
replaced by placeholder characters that no later pattern matches. Money in any currency, in
digits or in words, is read from one table (:data:`CURRENCY_SIGNS`, :data:`CURRENCY_CODES`,
:data:`CURRENCY_NAMES`; :data:`MONEY_RE` is the one test for money the answerers share). A date is
resolved against the day the record was said (:func:`resolve_date`): months are
shifted with python-dateutil's calendar arithmetic (``relativedelta``), the words of a
relative date ("last week", "three days ago", "next summer") read by the rules below.

Absolute dates stay with the rules: measured on one machine, ``dateutil.parser.parse``
took 40-47 µs per date ("March 7", "7th of March 2021", "May 2019", "Feb 3, 2024")
against 11-15 µs for :func:`resolve_date`, and it reads a month ("May 2019", "last
June") as its first day and "last June" as this year's, where a record needs
``2019-05`` and the June before the mention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import NamedTuple

from memrepo.nlp import lexicon as lx
from memrepo.nlp.morphology import NUMBER_WORDS, format_number, number
from memrepo.nlp.tokens import PLACEHOLDER_RE, placeholder
from memrepo.text.dates import month_alternation, month_number

_MONTH_ALT = month_alternation(capitalized=True)
_NUMWORD_ALT = "|".join(sorted((w for w in NUMBER_WORDS if w not in lx.NOT_QUANTITY_WORDS), key=len, reverse=True))
# A number in digits ("1,150", "2.5"); never the tail of a longer one ("150" of "1,150") as a quantity, or in words.
_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_DIGITS = rf"(?<![\d.,]){_AMOUNT}"
_QTY = rf"(?:{_DIGITS}|{_NUMWORD_ALT}|an?|half an?|a couple of|a few|several)"
_UNIT_DUR = r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?|yrs?|decades?)"
_WEEKDAY_ALT = "|".join(d.capitalize() for d in lx.WEEKDAYS)
_ALL_NUMWORDS = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))

# --- money: the one currency table ------------------------------------------------------------

#: Signs written right before an amount ("£38", "€1,150", "R$ 40", "US$ 12"), or after it ("12,50 €").
CURRENCY_SIGNS = ("US$", "A$", "C$", "NZ$", "HK$", "S$", "R$", "$", "€", "£", "¥", "₹", "₩", "₽", "₺", "₪", "₦",
                  "₱", "฿", "₫", "₴", "₲", "₡")
#: ISO codes and local abbreviations, written before or after an amount ("CHF 20", "300 SEK", "kr 450").
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CNY", "RMB", "CHF", "SEK", "NOK", "DKK", "ISK", "PLN", "CZK", "HUF",
                  "RON", "BGN", "INR", "ZAR", "AUD", "CAD", "NZD", "MXN", "BRL", "ARS", "CLP", "COP", "ILS", "AED",
                  "SAR", "SGD", "HKD", "KRW", "THB", "MYR", "IDR", "VND", "RUB", "UAH", "NGN", "KES", "EGP", "kr",
                  "zł", "Kč", "Rs", "Fr.", "usd", "eur", "gbp")
#: Names written after an amount ("950 pounds", "fifty euros", "300 kronor"); "pound" may weigh instead
#: (:func:`_pound_of_money`).
CURRENCY_NAMES = ("dollars", "dollar", "bucks", "euros", "euro", "pounds", "pound", "quid", "pence", "cents", "cent",
                  "yen", "yuan", "renminbi", "rupees", "rupee", "pesos", "peso", "francs", "franc", "kronor", "krona",
                  "kroner", "krone", "rand", "zloty", "zlotys", "złoty", "forint", "lira", "lire", "shillings",
                  "shilling", "dirhams", "dirham", "ringgit", "baht", "rubles", "ruble", "roubles", "rouble", "reais",
                  "leva", "hryvnia", "dinars", "dinar", "riyals", "riyal", "shekels", "shekel", "rupiah", "pesetas")
_SIGN_ALT = "|".join(re.escape(s) for s in CURRENCY_SIGNS)
_CODE_ALT = "|".join(re.escape(c) for c in CURRENCY_CODES)
_NAME_ALT = "|".join(sorted(CURRENCY_NAMES, key=len, reverse=True))
_SCALE = r"(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
# What a price is per, said with it: "£6 per hour", "€610 a month", "45 pounds each".
_RATE = (r"(?:\s?(?:/|\ban?\b|\bper\b)\s?(?:hour|day|night|week|month|year|person|head|user|seat)\b"
         r"|\s+(?:each|apiece)\b)?")
_PRICE_DIGITS_RE = re.compile(
    rf"(?:(?<![\w$])(?:{_SIGN_ALT})\s?{_AMOUNT}{_SCALE}"  # "£38", "€1.2 million"
    r"|(?<![\w$])(?-i:R)\s?\d{1,3}(?:[ ,]\d{3})*(?:\.\d{2})?(?![\w-]|\.\d)"  # "R85,000" (rand)
    rf"|(?<![\w.,])(?-i:{_CODE_ALT})\s?{_AMOUNT}(?![\w.,]*\d){_SCALE}"  # "CHF 20"
    rf"|(?<![\w.,]){_AMOUNT}\s?(?:(?:k|million|billion|thousand)\s)?(?:(?-i:{_CODE_ALT})(?!\w)|(?:{_NAME_ALT})\b)"
    r"|(?<![\w.,])(?:\d{1,3}(?:[.,\s]\d{3})+|\d+)(?:[.,]\d{1,2})?\s?[€£$¥](?![\w$]))"  # "12,50 €"
    rf"{_RATE}", re.I)
# An amount in words before a currency's name: "fifty euros", "a hundred and twenty pounds", "twenty-five dollars".
_PRICE_WORDS_RE = re.compile(
    rf"\b(?:{_ALL_NUMWORDS}|an?)(?:(?:[\s-]+|\s+and\s+)(?:{_ALL_NUMWORDS}|million|billion))*\s+(?:{_NAME_ALT})\b"
    rf"{_RATE}", re.I)
#: Whether a text states an amount of money, in any currency: the one test the answerers use (read/cells).
MONEY_RE = re.compile(f"{_PRICE_DIGITS_RE.pattern}|{_PRICE_WORDS_RE.pattern}", re.I)
# Two forms of money need their sentence: "pound" weighs where it says so and names no money ("lost 10 pounds"), and
# a bare "R" before a number without thousands is rand only where the sentence speaks of money ("R310 a head", not
# "the R101").
_POUND_RE = re.compile(r"\bpounds?\b", re.I)
_BARE_RAND_RE = re.compile(r"R\s?\d+(?:\.\d+)?(?:\s|$)")
_POUND_WEIGHT_RE = re.compile(r"\b(?:weigh\w*|weight|heav(?:y|ier|iest)|light(?:er)?|los[et]|gain(?:ed)?|lift\w*|"
                              r"pounds? of)\b", re.I)
_MONEY_CONTEXT_RE = re.compile(
    r"\b(?:costs?|costing|pa(?:y|ys|id|ying)|pric\w*|rents?|rental|fees?|charge[sd]?|spen[dt]\w*|earn\w*|worth|"
    r"salary|wages?|budget\w*|b(?:uy|ought)|s(?:ell|old)|sav(?:e|ed)|owe[sd]?|fined?|bills?|deposit|refund\w*|"
    r"fares?|tips?|donat\w*|each|apiece|per|(?:a|an)\s+(?:month|week|year|night|day|hour))\b|[$€£¥]", re.I)

# --- contact values ------------------------------------------------------------------------------

_EMAIL_RE = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'()]*[^\s<>\"'().,;:!?]")
# A telephone number as it is written: an international "+44 117 496 0733", an area code in brackets "(020) 7946
# 0958", a national number opened by a trunk 0 ("0117 496 0733", "06 12 34 56 78"), or groups joined by hyphens or
# dots ("555-0148", "415.555.0132"); 7 to 15 digits in all (:func:`_literal_value`). A date's or a version's digits
# are none.
_PHONE_RE = re.compile(
    r"(?<![\w+.,:/-])(?:\+\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){2,5}"
    r"|\(\d{2,5}\)\s?\d{2,5}(?:[\s.-]\d{2,5}){0,3}"
    r"|0\d{1,4}(?:[\s-]\d{2,5}){1,4}"
    r"|\d{3}[-.]\d{3}[-.]\d{4}|\d{3}-\d{4})(?![\w.,:/-]*\d|[\w/-])")


class LiteralPattern(NamedTuple):
    """A pattern of :data:`PATTERNS`: the literal key it gives, the expression, and whether it needs a digit."""

    key: str
    regex: re.Pattern[str]
    needs_digit: bool = False


#: The literal patterns by name, in the order they are tried.
PATTERNS: dict[str, LiteralPattern] = {
    "email": LiteralPattern("email", _EMAIL_RE),
    "url": LiteralPattern("url", _URL_RE),
    "phone": LiteralPattern("phone", _PHONE_RE, needs_digit=True),
    "price": LiteralPattern("price", _PRICE_DIGITS_RE, needs_digit=True),
    "price_words": LiteralPattern("price", _PRICE_WORDS_RE),
    "frequency": LiteralPattern("frequency", re.compile(
        rf"\b(?:{_QTY}|once|twice)\s+(?:(?:times?|mornings?|evenings?|nights?|days?|weekends?|sessions?|classes)\s+)?"
        rf"(?:a|per|every|each)\s+(?:day|week|month|year|weekend)\b"
        # "every quarter", "every 30 minutes", "once every 6 hours": a period that repeats (a weekday stays a date)
        rf"|\b(?:(?:once|twice|{_QTY}\s+times)\s+)?(?:every|each)\s+(?:other\s+|second\s+|(?:{_QTY})\s+)?"
        rf"(?:working\s+)?(?:{_UNIT_DUR}|quarters?|fortnight|hrs?)\b", re.I)),
    "age": LiteralPattern("age", re.compile(rf"\b({_QTY})[\s-]years?[\s-]old\b", re.I)),
    # an age said with "aged" or "of age", or as a bound of age: "aged 18 or over", "16 years of age", "65 or older"
    "age_stated": LiteralPattern("age", re.compile(
        r"\baged?\s+(\d{1,3})(?:\s+years?(?:\s+old)?)?(?:\s*\+|\s+(?:or|and)\s+(?:over|above|older|under|younger|"
        r"below|up(?:wards)?)\b)?|\b(\d{1,3})\s+years?\s+of\s+age\b|\b(\d{1,3})\s+or\s+(?:older|younger)\b",
        re.I), needs_digit=True),
    "iso_date": LiteralPattern("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), needs_digit=True),
    "month_day": LiteralPattern("date", re.compile(
        rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b"), needs_digit=True),
    "day_month": LiteralPattern("date", re.compile(
        rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})(?:,?\s+(\d{{4}}))?\b"), needs_digit=True),
    "month": LiteralPattern("date", re.compile(
        rf"\b(?:(?:early|mid|late|in|of|since|until|by|last|next|this|during)\s+)?"
        rf"(?!May\b(?!\s+\d{{4}}))({_MONTH_ALT})(?:\s+(?:of\s+)?(\d{{4}}))?\b")),
    "year": LiteralPattern("date", re.compile(
        r"\b(?:in|since|of|from|until|by|back in|around)\s+((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\b"), needs_digit=True),
    "relative_date": LiteralPattern("date", re.compile(
        rf"\b(yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening)"
        rf"|(?:last|next|this) (?:week|weekend|month|year|summer|winter|spring|fall|autumn|{_WEEKDAY_ALT.lower()}|{_WEEKDAY_ALT})"
        rf"|(?:{_QTY}) (?:days?|weeks?|months?|years?) ago"
        rf"|(?:on |last |this |next )?(?:{_WEEKDAY_ALT})s?)\b", re.I)),
    "time": LiteralPattern("time", re.compile(
        r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?=\W|$)|\b\d{1,2}:\d{2}\b", re.I), needs_digit=True),
    "duration": LiteralPattern("duration", re.compile(
        rf"\b({_QTY})[\s-](?:(?:working|business|calendar)\s+)?({_UNIT_DUR})(?:[\s-]long)?\b", re.I)),
    "percent": LiteralPattern("percent", re.compile(
        rf"(?:\b\d+(?:\.\d+)?|\b(?:{_ALL_NUMWORDS})(?:[\s-](?:{_ALL_NUMWORDS}))?)\s?(?:%|percent\b|per\s?cent\b)",
        re.I)),
    "measurement": LiteralPattern("measurement", re.compile(
        r"(?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\b\d+)(?:\.\d+)?\s?"
        r"(?:km|kilomet(?:er|re)s?|miles?|mi|met(?:er|re)s?|kg|kilos?|kilograms?|lbs?|pounds|"
        r"gallons?|lit(?:er|re)s?|ml|cm|inch(?:es)?|feet|foot|ft|degrees?|°[cf]?|mph|kph|calories|"
        r"steps|grams?|oz|ounces?|floors?|acres?|square feet|sq ft)(?=\W|$)", re.I), needs_digit=True),
    "times": LiteralPattern("frequency", re.compile(
        rf"\b(?:\d+|{_NUMWORD_ALT})\s+times\b|\bonce\b(?=\s+(?:a|an|per|every)\b)|\btwice\b", re.I)),
    # a number before its noun, or a number word ending its clause, its noun said before it ("a change needs two,")
    "count": LiteralPattern("count", re.compile(
        rf"\b(\d[\d,]*(?:\.\d+)?|{_NUMWORD_ALT})\b(?=\s+[A-Za-z])|\b({_NUMWORD_ALT})\b(?=\s*[,;:.](?:\s|$))", re.I)),
    "number": LiteralPattern("number", re.compile(r"\b\d[\d,]*(?:\.\d+)?\b"), needs_digit=True),
}
#: The same patterns as ``(key, regex)`` pairs, in order (the audit reads the date and time ones).
LITERAL_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(p.key, p.regex) for p in PATTERNS.values()]
#: Positions in :data:`LITERAL_PATTERNS` of the patterns that match nothing without a digit (derived from
#: :attr:`LiteralPattern.needs_digit`; a sentence without a digit skips them).
DIGIT_PATTERNS = frozenset(n for n, p in enumerate(PATTERNS.values()) if p.needs_digit)
_DIGIT_RE = re.compile(r"\d")
_WITH_DIGITS = tuple(PATTERNS.values())
_WITHOUT_DIGITS = tuple(p for p in PATTERNS.values() if not p.needs_digit)


@dataclass
class Literal:
    """A value a sentence states: its key ("date", "price", ...), resolved value, and the words that said it."""

    key: str
    value: str
    surface: str


def find_literals(sentence: str, mention: date | None) -> tuple[str, list[Literal]]:
    """Cut dates, prices, counts, durations, measurements and times out of ``sentence``.

    Returns:
        The sentence with each value replaced by a placeholder character, and the literals.
    """
    literals: list[Literal] = []
    text = sentence
    # Cutting values out only ever removes digits: without one, the patterns that need one cannot match.
    for key, pattern, _ in _WITH_DIGITS if _DIGIT_RE.search(sentence) else _WITHOUT_DIGITS:
        def replace(m: re.Match[str], key: str = key) -> str:
            surface = m.group(0)
            if PLACEHOLDER_RE.search(surface) or _inside_name(m):
                return surface
            value = _literal_value(key, m, mention)
            if value is None:
                return surface
            literals.append(Literal(key, value, surface.strip()))
            return f" {placeholder(len(literals) - 1)} "
        text = pattern.sub(replace, text)
    return text, literals


_GLUED_RE = re.compile(r"([^\W_]+)-$")


def _inside_name(m: re.Match[str]) -> bool:
    """A value glued by a hyphen to the word before it is the end of a name ("db-stage-2", "eu-west-1"), not
    a literal; after "mid-" or "pre-" it stays a date ("mid-2024")."""
    glued = _GLUED_RE.search(m.string, max(0, m.start() - 40), m.start()) if m.group(0)[:1].isdigit() else None
    word = glued.group(1).lower() if glued else ""
    return any(c.isalpha() for c in word) and word not in lx.DATE_PREFIXES  # "2-3 days" is a range


def _literal_value(key: str, m: re.Match[str], mention: date | None) -> str | None:
    surface = m.group(0).strip()
    if key == "date":
        return resolve_date(surface, mention)
    if key == "count":
        n = number(m.group(1) or m.group(2))
        return None if n is None or n == 1 else format_number(n)
    if key in ("age", "duration"):
        return _amount_of_time(key, m, surface)
    if key == "price" and _POUND_RE.search(surface) and not _pound_of_money(m):
        return None  # "lost 10 pounds": a weight, read as a measurement
    if key == "price" and _BARE_RAND_RE.match(surface) and not _MONEY_CONTEXT_RE.search(m.string):
        return None  # "the R101": a road, not 101 rand ("R85,000" is money wherever it is said)
    if key == "phone":
        return surface if 7 <= len(re.sub(r"\D", "", surface)) <= 15 else None
    if key == "number":
        n = number(surface)
        return format_number(n) if n is not None else None
    return surface


def _pound_of_money(m: re.Match[str]) -> bool:
    """Whether "pounds" in ``m`` is money: its sentence names money ("costs", "a month", "each") and no weight."""
    return bool(_MONEY_CONTEXT_RE.search(m.string)) and not _POUND_WEIGHT_RE.search(m.string)


def _amount_of_time(key: str, m: re.Match[str], surface: str) -> str:
    """An age ("7 years") or a duration ("2 hours") in one form, whatever the words said it with."""
    qty = number(next((g for g in m.groups() if g), None)) if m.lastindex else None
    if key == "age":
        return f"{format_number(qty)} years" if qty is not None else surface
    unit = re.sub(r"[\s-]long$", "", surface).split()[-1].split("-")[-1]
    unit = unit if unit.endswith("s") or qty == 1 else unit + "s"
    return f"{format_number(qty)} {unit}" if qty is not None else surface.lower()


# --- dates ------------------------------------------------------------------------------------

_YEAR_RE = re.compile(r"((?:19|20)\d{2})")
_DAY_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")
_YEAR_WORDS_RE = re.compile(r"\b(in|since|of|from|until|by|back|around)\b")
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}
_DAYS_PER_UNIT = {"day": 1, "week": 7, "month": 30, "year": 365}
_SAME_DAY_OPENINGS = ("this morning", "this afternoon", "this evening")


def resolve_date(surface: str, mention: date | None) -> str | None:
    """ISO value of a date expression: a day, ``YYYY-MM``, ``YYYY`` or a ``start/end`` interval."""
    low = surface.lower().strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", low):
        return low
    m = _YEAR_RE.search(low)
    explicit_year = int(m.group(1)) if m else None
    words = re.findall(r"[a-z]+", low)
    months = [w for w in words if len(w) >= 3 and (n := month_number(w)) and lx.MONTHS[n - 1].startswith(w)]
    if months:
        return _calendar_date(low, words, months[0], explicit_year, mention)
    if explicit_year and not re.search(r"[a-z]{3,}", _YEAR_WORDS_RE.sub("", low)):
        return f"{explicit_year:04d}"
    if mention is None:
        return None
    return _relative_day(low, words, mention) or _relative_period(words, mention)


def _shift(words: list[str]) -> int:
    """-1 for "last ...", +1 for "next ...", else 0."""
    return -1 if "last" in words else (1 if "next" in words else 0)


def _calendar_date(low: str, words: list[str], month_word: str, explicit_year: int | None,
                   mention: date | None) -> str | None:
    """A date that names its month ("May 7", "7th of March 2021", "last June"): a day or ``YYYY-MM``."""
    month = month_number(month_word)
    y = explicit_year or (mention.year if mention else None)
    if y is None or month is None:
        return None
    day = _DAY_RE.search(_YEAR_RE.sub("", low))
    if day:
        try:
            return date(y, month, int(day.group(1))).isoformat()
        except ValueError:
            return None  # "February 30"
    if not explicit_year and mention:
        if "last" in words and month >= mention.month:
            y -= 1
        if "next" in words and month <= mention.month:
            y += 1
    return f"{y:04d}-{month:02d}"


def _relative_day(low: str, words: list[str], mention: date) -> str | None:
    """A day said relative to the mention: yesterday, today, tomorrow, "three days ago", a weekday."""
    if "yesterday" in words or low == "last night":
        return (mention - timedelta(days=1)).isoformat()
    if words and words[0] in ("today", "tonight") or low.startswith(_SAME_DAY_OPENINGS):
        return mention.isoformat()
    if "tomorrow" in words:
        return (mention + timedelta(days=1)).isoformat()
    if "ago" in words:
        return _ago(low, mention)
    for i, wd in enumerate(lx.WEEKDAYS):
        if wd in words or wd + "s" in words:
            if "next" in words:
                return (mention + timedelta(days=(i - mention.weekday()) % 7 or 7)).isoformat()
            if "this" in words:
                return (mention + timedelta(days=(i - mention.weekday()) % 7)).isoformat()
            return (mention - timedelta(days=(mention.weekday() - i) % 7 or 7)).isoformat()
    return None


def _ago(low: str, mention: date) -> str:
    """"three days ago" -> that day; "two months ago" -> that month; "a year ago" -> that year."""
    qty = number(" ".join(low.split()[:-2])) or 1.0
    unit = low.split()[-2]
    when = mention - timedelta(days=int(qty * _DAYS_PER_UNIT[unit.rstrip("s")]))
    if unit.startswith(("day", "week")):
        return when.isoformat()
    return f"{when.year:04d}-{when.month:02d}" if unit.startswith("month") else f"{when.year:04d}"


def _relative_period(words: list[str], mention: date) -> str | None:
    """A week, weekend, month, year or season said relative to the mention ("last week", "next summer")."""
    shift = _shift(words)
    if "week" in words or "weekend" in words:
        start = mention + timedelta(days=7 * shift - mention.weekday())
        if "weekend" in words:
            start = start + timedelta(days=5)
            return f"{start.isoformat()}/{(start + timedelta(days=1)).isoformat()}"
        return f"{start.isoformat()}/{(start + timedelta(days=6)).isoformat()}"
    if "month" in words:
        from dateutil.relativedelta import relativedelta  # here: importing it (and calendar) costs a CLI run ~10 ms

        month = mention + relativedelta(months=shift)
        return f"{month.year:04d}-{month.month:02d}"
    if "year" in words:
        return f"{mention.year + shift:04d}"
    for name, (a, b) in _SEASONS.items():
        if name in words:
            y = mention.year + shift
            end_y = y + 1 if b < a else y
            return f"{y:04d}-{a:02d}/{end_y:04d}-{b:02d}"
    return None
