"""Month and weekday names and the small date parsing every layer shares.

Dates in memrepo are ISO strings (``2023-05-08``, ``2023-05``, ``2023``); what is
parsed here is how people write them ("8 May", "Aug 12th") and how answers say them
back ("8 May 2023").
"""

from __future__ import annotations

import re
from datetime import date, datetime

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CLOCK_DATE_RE = re.compile(r"^(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$", re.I)


def month_number(word: str) -> int | None:
    """1 to 12 for a month's name or abbreviation ("Aug", "august", "Sept"), found by its first three letters.

    The three-letter prefixes of the months are all different, so the full name and any
    abbreviation of three letters or more give the same month; None when nothing matches.
    """
    low = word.lower()[:3]
    return next((i for i, name in enumerate(MONTHS, 1) if name.startswith(low)), None)


def month_alternation(capitalized: bool = False) -> str:
    """A regular-expression alternation of every month: its first three letters, the rest optional.

    Args:
        capitalized: "Aug(?:ust)?" (for case-sensitive patterns, where a capital marks the name)
            instead of "aug(?:ust)?".
    """
    return "|".join((m.capitalize() if capitalized else m)[:3] + "(?:" + m[3:] + ")?" for m in MONTHS)


def find_month_day(text: str) -> tuple[int, int] | None:
    """(month, day) of the first calendar date named in ``text`` by its month ("August 12th", "12 of Aug").

    A month-first date anywhere in the text wins over a day-first one.
    """
    found = _named_date(text)
    return found[1:] if found else None


def find_date(text: str) -> tuple[int | None, int, int] | None:
    """(year or None, month, day) of the first calendar date named in ``text``: an ISO date ("2026-11-20")
    first, else a month and day with or without a year ("20 November 2026", "Nov 3rd, 2026", "August 12")."""
    m = _ISO_DAY_RE.search(text)
    if m:
        return int(m.group(1)), int(m.group(2)), int(m.group(3))
    return _named_date(text)


def _named_date(text: str) -> tuple[int | None, int, int] | None:
    m = _MONTH_DAY_RE.search(text)
    if m:
        month_text, day_text, year_text = m.group(1), m.group(2), m.group(3)
    else:
        m = _DAY_MONTH_RE.search(text)
        if not m:
            return None
        day_text, month_text, year_text = m.group(1), m.group(2), m.group(3)
    month = month_number(month_text)
    return (int(year_text) if year_text else None, month, int(day_text)) if month else None


def parse_clock_date(text: str) -> str | None:
    """``4:27 pm on 3 June, 2024`` (LoCoMo's session times) as an ISO datetime, else None."""
    m = _CLOCK_DATE_RE.match(text.strip())
    if not m:
        return None
    hour, minute, half, day, month_text, year = m.groups()
    month = month_number(month_text)
    if month is None:
        return None
    try:
        return datetime(int(year), month, int(day), int(hour) % 12 + (12 if half.lower() == "pm" else 0),
                        int(minute)).isoformat()
    except ValueError:
        return None


def parse_written_time(text: str) -> str | None:
    """A date as people write it in a header ("3 March 2026", "March 3, 2026 6:30 pm", "Tue, 3 Mar 2026 18:30")
    as an ISO date (or datetime when a time of day is written), else None.

    python-dateutil reads the forms; only text naming its month by a word is read (all-digit forms such as
    "3/4/2026" are ambiguous between day-first and month-first, so they stay ISO-only), and the day and the
    year must be written: "March 2026" or "3 March" is None, not a guess.
    """
    if not re.search(rf"\b(?:{month_alternation()})\b", text, re.I):
        return None
    from dateutil import parser  # here: importing it costs a CLI run a few milliseconds

    readings = []
    for default in (datetime(2000, 1, 1, 0, 0), datetime(2001, 2, 2, 1, 1)):  # what is not written differs
        try:
            readings.append(parser.parse(text, default=default))
        except (ValueError, OverflowError):
            return None
    first, second = readings
    if (first.year, first.day) != (second.year, second.day):
        return None
    if (first.hour, first.minute) != (second.hour, second.minute):
        return first.date().isoformat()
    return first.replace(tzinfo=None, microsecond=0).isoformat()


def parse_iso_date(text: str) -> date | None:
    """The date that ``text`` starts with (``2023-05-08`` or ``2023-05-08T13:56:00``), else None."""
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


_YEAR = r"(?:,? ((?:19|20)\d{2})\b)?"  # an optional year after the day or the month
_MONTH_DAY_RE = re.compile(rf"\b({month_alternation()})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b{_YEAR}", re.I)
_DAY_MONTH_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({month_alternation()})\b\.?{_YEAR}", re.I)
_ISO_DAY_RE = re.compile(r"(?<![\d-])((?:19|20)\d{2})-(\d{2})-(\d{2})(?![\d-])")


def human_date(value: str) -> str:
    """``2023-05-08`` as "8 May 2023" and ``2023-05`` as "May 2023"; anything else unchanged."""
    parts = value.split("-")
    try:
        if len(parts) == 3:
            return f"{int(parts[2])} {MONTHS[int(parts[1]) - 1].capitalize()} {parts[0]}"
        if len(parts) == 2:
            return f"{MONTHS[int(parts[1]) - 1].capitalize()} {parts[0]}"
    except (ValueError, IndexError):
        return value
    return value
