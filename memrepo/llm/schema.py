"""Validation of model replies against a role's JSON Schema, by ``jsonschema``.

Every problem comes back as one line that starts with the JSON path of the value
at fault (``$.frames[3].roles[0].anchor: ...``), so the repair prompt can tell
the model exactly what to change and a user reading an error sees where it is.
The keywords memrepo's roles use get the short wording below; any other keyword
of the standard is checked too and reported with ``jsonschema``'s own message,
cut to a readable length (a message may quote the whole offending value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # imported where a reply is checked: a process that checks none (the CLI offline) skips ~30 ms
    from jsonschema.exceptions import ValidationError

MESSAGE_CHARS = 200  # a problem quoting a long value is cut here


def validate(instance: Any, schema: dict[str, Any]) -> list[str]:
    """Problems of ``instance`` against ``schema``, each naming its JSON path; empty if valid.

    Args:
        instance: the parsed reply.
        schema: a JSON Schema (draft 2020-12).

    Returns:
        One message per problem: the document's own first, then by path.
    """
    from jsonschema import Draft202012Validator

    # Cheap to build (40 µs for the extractor's schema), so not cached: writers build their schemas per call.
    validator = Draft202012Validator(schema)
    if validator.is_valid(instance):  # the common case, and faster than collecting no errors
        return []
    return [_message(error) for error in sorted(validator.iter_errors(instance), key=_path_key)]


def _path_key(error: ValidationError) -> list[tuple[int, int, str]]:
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


def json_path(parts: Iterable[str | int]) -> str:
    """``$.a[0].b`` for the path parts ``["a", 0, "b"]``."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _message(error: ValidationError) -> str:
    path = json_path(error.absolute_path)
    # Errors from iter_errors always carry these (they are unset only on a ValidationError built by hand).
    kind = error.validator
    want: Any = error.validator_value
    value: Any = error.instance
    schema: Any = error.schema
    if kind == "type":
        names = [want] if isinstance(want, str) else list(want)
        got = type(value).__name__ if value is not None else "null"
        text = f"expected {' or '.join(names)}, got {got}"
    elif kind == "required":
        missing = [k for k in want if isinstance(value, dict) and k not in value]
        text = "; ".join(f"missing required field '{k}'" for k in missing) or error.message
    elif kind == "additionalProperties" and isinstance(value, dict):
        known = schema.get("properties", {})
        text = "; ".join(f"unexpected field '{k}'" for k in value if k not in known)
    elif kind == "enum":
        text = f"{value!r} is not one of {', '.join(map(repr, want))}"
    elif kind == "const":
        text = f"must be {want!r}"
    elif kind == "minItems":
        text = f"needs at least {want} items, got {len(value)}"
    elif kind == "maxItems":
        text = f"at most {want} items allowed, got {len(value)}"
    elif kind == "minLength":
        text = f"shorter than {want} characters"
    elif kind == "maxLength":
        text = f"longer than {want} characters"
    elif kind == "minimum":
        text = f"{value} is below the minimum {want}"
    elif kind == "maximum":
        text = f"{value} is above the maximum {want}"
    elif kind == "pattern":
        text = f"{value!r} does not match {want!r}"
    else:
        text = error.message
    if len(text) > MESSAGE_CHARS:
        text = text[: MESSAGE_CHARS - 1] + "…"
    return f"{path}: {text}"
