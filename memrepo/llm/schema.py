"""A small validator for the subset of JSON Schema that memrepo's roles use.

Supported keywords: ``type`` (a name or a list of names), ``properties``,
``required``, ``additionalProperties`` (boolean), ``items``, ``enum``, ``const``,
``minItems``, ``maxItems``, ``minLength``, ``maxLength``, ``minimum``,
``maximum``, ``pattern``. Anything else in a schema is ignored (it is still sent
to endpoints that enforce it). A dependency on ``jsonschema`` would buy the rest
of the standard, which no role needs, and an error text that names fewer paths.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def validate(instance: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems of ``instance`` against ``schema``, each naming its JSON path; empty if valid."""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(instance, n) for n in names):
            got = type(instance).__name__ if instance is not None else "null"
            return [f"{path}: expected {' or '.join(names)}, got {got}"]
    if "const" in schema and instance != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        problems.append(f"{path}: {instance!r} is not one of {', '.join(map(repr, schema['enum']))}")
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in instance:
                problems.append(f"{path}: missing required field '{key}'")
        for key, value in instance.items():
            if key in props:
                problems.extend(validate(value, props[key], f"{path}.{key}"))
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected field '{key}'")
    elif isinstance(instance, list):
        if "minItems" in schema and len(instance) < schema["minItems"]:
            problems.append(f"{path}: needs at least {schema['minItems']} items, got {len(instance)}")
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            problems.append(f"{path}: at most {schema['maxItems']} items allowed, got {len(instance)}")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(instance):
                problems.extend(validate(item, schema["items"], f"{path}[{i}]"))
    elif isinstance(instance, str):
        if "minLength" in schema and len(instance) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            problems.append(f"{path}: {instance!r} does not match {schema['pattern']!r}")
    elif isinstance(instance, (int, float)) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            problems.append(f"{path}: {instance} is below the minimum {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            problems.append(f"{path}: {instance} is above the maximum {schema['maximum']}")
    return problems
