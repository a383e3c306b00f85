"""JSON from strangers (ingested files, model replies, metadata in sources) with its nesting bounded.

Python's parser recurses once per level: a file of 100,000 ``[`` raises
RecursionError, and a few hundred levels that do parse still break code that
walks the result. Nothing memrepo reads needs more than a handful of levels, so
the depth is checked first, by regular expressions that run in C (strings
dropped, then innermost bracket pairs removed, at most ``MAX_DEPTH`` passes),
and too deep a text is refused as invalid JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # OpenAI messages with tool calls and LoCoMo conversations need fewer than 10

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # unrolled: 3 times faster than (?:[^"\\]|\\.)*
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """True if the brackets of ``text`` (outside strings) nest deeper than ``max_depth``, or do not balance.

    Each pass removes the innermost pairs, so ``max_depth`` passes empty any text within the bound;
    every pass runs in C over the brackets alone.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = _INNERMOST.sub("", brackets)
    return bool(brackets)


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing text nested deeper than ``max_depth``.

    Raises:
        json.JSONDecodeError: if ``text`` is not JSON or is nested too deeply (callers already
            turn this error into their one-line message).
    """
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    if too_deep(text, max_depth):
        try:
            json.loads(text)  # unbalanced brackets: report the parser's own error
        except json.JSONDecodeError:
            raise
        except RecursionError:
            pass
        raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", text, 0)
    return json.loads(text)
