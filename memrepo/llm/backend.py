"""Model backends: one call per role, structured JSON validated against a schema.

:func:`get_backend` picks the backend from the settings: an OpenAI-compatible
endpoint when ``settings.llm.base_url`` is set, otherwise the offline backend,
which runs each role's deterministic implementation. Both record calls, tokens
and seconds per role.
"""

from __future__ import annotations

import atexit
import json
import re
import time
import weakref
from pathlib import Path
from typing import Any, Callable

from memrepo import safejson
from memrepo.errors import ModelError
from memrepo.llm import stats as st
from memrepo.llm.prompts import load_prompt, render
from memrepo.llm.schema import validate
from memrepo.settings import Settings

Offline = Callable[[dict[str, Any]], dict[str, Any]]
FLUSH_SECONDS = 2.0
REPAIR_ECHO_CHARS = 4000  # how much of an invalid reply the repair request shows back (context is small)
RESPONSE_MODES = ("json_schema", "json_object_schema", "json_object", "none")


class Backend:
    """Runs roles; subclasses decide how. Use :func:`get_backend` to make one."""

    offline = True
    model_id = "offline"

    def __init__(self, settings: Settings, stats_path: Path | None = None):
        self.settings = settings
        self.stats_path = stats_path
        self.totals: dict[str, st.RoleStats] = {}
        self._pending: dict[str, st.RoleStats] = {}
        self._last_flush = time.monotonic()
        self._finalizer = weakref.finalize(self, _flush_pending, stats_path, self._pending)
        atexit.register(self._finalizer)

    def run(self, role: str, variables: dict[str, Any], schema: dict[str, Any], offline: Offline) -> dict[str, Any]:
        """Run ``role`` on ``variables`` and return its reply, valid against ``schema``.

        Args:
            role: names the prompt file ``templates/prompts/<role>.md`` and the stats row.
            variables: values for the prompt's ``{{name}}`` placeholders (and the offline function).
            schema: JSON schema of the reply (the subset in :mod:`memrepo.llm.schema`).
            offline: the role's deterministic implementation, used when no endpoint is set.

        Raises:
            ModelError: naming the role and what was wrong.
        """
        raise NotImplementedError

    def add_time(self, role: str, seconds: float) -> None:
        """Count ``seconds`` spent on ``role`` elsewhere (an extraction worker) in the usage figures."""
        self._record(role, st.RoleStats(seconds=seconds))

    def _record(self, role: str, delta: st.RoleStats) -> None:
        self.totals.setdefault(role, st.RoleStats()).add(delta)
        self._pending.setdefault(role, st.RoleStats()).add(delta)
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the usage recorded since the last flush to the stats file."""
        _flush_pending(self.stats_path, self._pending)
        self._last_flush = time.monotonic()

    def close(self) -> None:
        self.flush()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Usage of this backend object so far, per role."""
        return st.as_dict(self.totals)


def _flush_pending(path: Path | None, pending: dict[str, st.RoleStats]) -> None:
    if path is not None and pending:
        try:
            st.add_stats(path, dict(pending))
        except OSError:
            return  # usage figures are a convenience; never fail a write because of them
    pending.clear()


class OfflineBackend(Backend):
    """Runs each role's deterministic offline implementation (no model, no network).

    Its replies are built by memrepo's own code, not by a model, so they are not checked against
    the role's schema on every call (jsonschema cost about a tenth of an offline ingest with the
    graph step). With ``check_replies`` set, every reply is checked and an invalid one raises
    :class:`ModelError`; the test suite sets it for every test (tests/conftest.py), so each offline
    role's replies are checked there. A model's replies are always checked (:class:`OpenAIBackend`).
    """

    check_replies = False

    def run(self, role: str, variables: dict[str, Any], schema: dict[str, Any], offline: Offline) -> dict[str, Any]:
        start = time.perf_counter()
        reply = offline(dict(variables))
        if self.check_replies:
            problems = validate(reply, schema)
            if problems:
                raise ModelError(
                    f"role {role!r}: the offline implementation returned an invalid reply: {'; '.join(problems[:3])}")
        self._record(role, st.RoleStats(calls=1, offline_calls=1, seconds=time.perf_counter() - start))
        return reply


class OpenAIBackend(Backend):
    """Calls an OpenAI-compatible chat-completions endpoint through the ``openai`` client.

    Timeouts and retries with exponential backoff on 429, 5xx and connection
    errors are the client's own (``settings.llm.timeout``, ``max_retries``);
    ``max_tokens`` bounds a runaway reply (a cut-off reply is invalid and gets repaired). The
    reply format is ``json_schema``; an endpoint that refuses it gets
    ``json_object`` (the schema is in the prompt either way), then no format.
    """

    offline = False

    def __init__(self, settings: Settings, stats_path: Path | None = None):
        super().__init__(settings, stats_path)
        if not settings.llm.model:
            raise ModelError(
                f"model endpoint {settings.llm.base_url} is configured but no model is: "
                "set MEMREPO_LLM_MODEL or `model` under [llm] in memrepo.toml"
            )
        self.model_id = settings.llm.model
        self.mode = RESPONSE_MODES[0]
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            llm = self.settings.llm
            self._client = OpenAI(
                base_url=llm.base_url,
                api_key=llm.api_key or "no-key",
                timeout=llm.timeout,
                max_retries=llm.max_retries,
            )
        return self._client

    def close(self) -> None:
        super().close()
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, role: str, variables: dict[str, Any], schema: dict[str, Any], offline: Offline) -> dict[str, Any]:
        messages = render(role, load_prompt(role), variables, schema)
        usage = st.RoleStats()
        start = time.perf_counter()
        try:
            for attempt in range(2):
                content = self._complete(role, schema, messages, usage)
                reply, problems = parse_reply(content, schema)
                if not problems:
                    return reply
                if attempt == 0:
                    usage.repairs += 1
                    messages = messages + [
                        {"role": "assistant", "content": content[:REPAIR_ECHO_CHARS]},
                        {"role": "user", "content": repair_message(problems)},
                    ]
            usage.failed_calls += 1
            raise ModelError(
                f"role {role!r}: the model's reply was still invalid after one repair retry: {'; '.join(problems[:3])}"
            )
        except ModelError:
            if not usage.failed_calls:
                usage.failed_calls += 1
            raise
        finally:
            usage.seconds = time.perf_counter() - start
            self._record(role, usage)

    def _complete(self, role: str, schema: dict[str, Any], messages: list[dict[str, str]], usage: st.RoleStats) -> str:
        import openai

        llm = self.settings.llm
        while True:
            kwargs: dict[str, Any] = {
                "model": self.model_id, "messages": messages, "temperature": 0, "max_tokens": llm.max_tokens,
            }
            if self.mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": role.replace("-", "_"), "schema": schema, "strict": False},
                }
            elif self.mode == "json_object_schema":
                # llama.cpp's server (llama-cpp-python) constrains json_object output by a "schema" key.
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
            elif self.mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            try:
                response = self.client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                if _refuses_format(exc) and self.mode != RESPONSE_MODES[-1]:
                    # Endpoints without structured output refuse the format; step down once each.
                    self.mode = RESPONSE_MODES[RESPONSE_MODES.index(self.mode) + 1]
                    continue
                if isinstance(exc, openai.RateLimitError):
                    raise ModelError(
                        f"role {role!r}: the model endpoint is still rate limiting (HTTP 429) after {llm.max_retries} retries"
                    ) from exc
                raise ModelError(
                    f"role {role!r}: the model endpoint answered HTTP {exc.status_code}: {_message(exc)}"
                ) from exc
            except openai.APITimeoutError as exc:
                raise ModelError(
                    f"role {role!r}: the model endpoint {llm.base_url} did not answer within {llm.timeout:g} s "
                    f"(tried {llm.max_retries + 1} times)"
                ) from exc
            except openai.APIConnectionError as exc:
                raise ModelError(f"role {role!r}: cannot reach the model endpoint {llm.base_url}: {exc}") from exc
            except openai.OpenAIError as exc:
                raise ModelError(f"role {role!r}: model call failed: {exc}") from exc
            usage.calls += 1
            if response.usage is not None:
                usage.input_tokens += response.usage.prompt_tokens or 0
                usage.output_tokens += response.usage.completion_tokens or 0
            if not response.choices:
                return ""
            return response.choices[0].message.content or ""


def _refuses_format(exc: Exception) -> bool:
    """True if an HTTP error says the endpoint does not take the requested ``response_format``."""
    status = getattr(exc, "status_code", 0)
    text = _message(exc, 2000).lower()
    return (status in (400, 422) or status >= 500) and ("response_format" in text or "json_schema" in text)


def _message(exc: Exception, limit: int = 300) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:limit]
    return str(exc)[:limit]


_FENCE_RE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```\s*$", re.S)


def parse_reply(content: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """The reply's JSON and its problems against ``schema`` (a code fence around it is tolerated)."""
    text = content.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, ["the reply is empty"]
    try:
        data = safejson.loads(text)
    except json.JSONDecodeError as exc:
        return None, [f"the reply is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]
    return data, validate(data, schema)


def repair_message(problems: list[str]) -> str:
    listed = "\n".join(f"- {p}" for p in problems[:12])
    return (
        "Your reply does not follow the required JSON schema:\n"
        f"{listed}\n"
        "Reply again with only one JSON object that follows the schema, and nothing else."
    )


def get_backend(settings: Settings, stats_path: Path | None = None) -> Backend:
    """The backend the settings ask for: OpenAI-compatible if ``settings.llm.base_url``, else offline.

    Args:
        settings: the repository's settings (``settings.llm``).
        stats_path: file under the repository's state directory to accumulate usage in;
            None keeps usage in memory only (``backend.summary()``).

    Raises:
        ModelError: if an endpoint is configured without a model.
    """
    if settings.llm.base_url:
        return OpenAIBackend(settings, stats_path)
    return OfflineBackend(settings, stats_path)
