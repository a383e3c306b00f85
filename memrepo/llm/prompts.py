"""Prompts are files: ``templates/prompts/<role>.md``, loaded by name, one per role.

A prompt file is the system message; an optional line ``<!-- user -->`` starts
the user message. ``{{name}}`` is replaced by ``variables[name]`` (strings as
they are, anything else as sorted JSON); ``{{schema}}`` is always available and
holds the JSON schema the reply must follow. Without a user part, the user
message is the variables as JSON. Changing a prompt needs no code change.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memrepo.errors import ModelError

USER_MARKER = "<!-- user -->"
_VAR_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def load_prompt(role: str) -> str:
    """Text of ``templates/prompts/<role>.md``.

    Raises:
        ModelError: if the role has no prompt file.
    """
    from memrepo.resources import template

    if not re.fullmatch(r"[a-z][a-z0-9_-]*", role):
        raise ModelError(f"role {role!r}: not a role name (lowercase letters, digits, '-', '_')")
    try:
        return template(f"prompts/{role}.md")
    except (FileNotFoundError, OSError) as exc:
        raise ModelError(f"role {role!r}: no prompt file templates/prompts/{role}.md") from exc


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)


def render(role: str, text: str, variables: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, str]]:
    """Chat messages (system, user) for ``role`` from its prompt ``text``.

    Raises:
        ModelError: naming the role and the variable a prompt uses but was not given.
    """
    values = dict(variables)
    values.setdefault("schema", schema)

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ModelError(f"role {role!r}: templates/prompts/{role}.md uses {{{{{name}}}}} but no such variable was given")
        return _as_text(values[name])

    if USER_MARKER in text:
        system, user = text.split(USER_MARKER, 1)
    else:
        system, user = text, None
    system_msg = _VAR_RE.sub(substitute, system).strip()
    if user is None:
        user_msg = _as_text({k: v for k, v in variables.items()})
    else:
        user_msg = _VAR_RE.sub(substitute, user).strip()
    return [{"role": "system", "content": system_msg}, {"role": "user", "content": user_msg}]
