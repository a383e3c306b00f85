"""Month and weekday names and the small date parsing every layer shares.

Dates in memrepo are ISO strings (``2023-05-08``, ``2023-05``, ``2023``); what is
parsed here is how people write them ("8 May", "Aug 12th") and how answers say them
back ("8 May 2023").
"""

from __future__ import annotations

from datetime import date

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


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


def parse_iso_date(text: str) -> date | None:
    """The date that ``text`` starts with (``2023-05-08`` or ``2023-05-08T13:56:00``), else None."""
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


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
