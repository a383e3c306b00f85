"""The HTTP side of `memrepo serve`: one ASGI application in front of the MCP SDK's streamable HTTP transport.

Each served repository (a *namespace*) gets the server ``memrepo mcp`` builds (memrepo/mcp.py: the
same tools, resources and prompts), at ``/mcp`` when one repository is served and ``/NAME/mcp`` when
several are. The transport is stateless (``stateless_http``): every POST stands alone, so any replica
behind a load balancer can answer it and each request is authorized by its own bearer token.

Around it, in this order, every request meets:

1. the token check: ``Authorization: Bearer <secret>`` naming a token of the tokens file that may use
   the namespace; anything else is the same 401, which never says what was wrong;
2. the per-token rate limit (a token bucket): 429 with ``Retry-After``;
3. the SDK's transport: the body limit (413), malformed JSON-RPC (400 with a JSON-RPC error);
4. :class:`ScopeMiddleware`, inside the MCP server: ``tools/list`` shows only the tools of the
   token's scope, a call of another is a tool error, read tools accept ``pull: true`` (sync first),
   and each committed write is queued for the next push.

One log line per request: token name, namespace, the MCP method and tool, HTTP status, outcome and
milliseconds; never arguments, results or error messages (they may quote memory text).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, AsyncIterator

from memrepo.serve.tokens import SCOPES, Token, TokenStore

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo
    from memrepo.serve.sync import Syncer

log = logging.getLogger("memrepo.serve")

SCOPE_KEY = "memrepo.serve"  # the ASGI scope entry that carries the request's token to the MCP layer
READ_TOOLS = frozenset({"recall", "ask", "search", "show", "list", "log", "review_list", "review_show"})
WRITE_TOOLS = frozenset({"remember", "forget"})
REVIEW_TOOLS = frozenset({"review_approve", "review_reject"})
# ingest reads a file by its path on the server's disk: a network client must never name one.
NOT_SERVED = {"ingest": "ingest is not offered over HTTP: it reads a file by its path on the server, which a "
                        "remote client must not choose; send the text to remember, or ingest on the server with "
                        "`memrepo ingest`"}
PULL_ARGUMENT = {"type": "boolean", "default": False,
                 "description": "Pull the team's latest commits from the Git remote before reading (the server "
                                "also pulls on an interval)."}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_./-]{1,64}$")


def tools_of(scope: str) -> frozenset[str]:
    """The tools a token of ``scope`` sees and may call (each scope includes the ones before it)."""
    level = SCOPES.index(scope)
    return READ_TOOLS | (WRITE_TOOLS if level >= 1 else frozenset()) | (REVIEW_TOOLS if level >= 2 else frozenset())


def _needed_scope(tool: str) -> str:
    return "review" if tool in REVIEW_TOOLS else "write" if tool in WRITE_TOOLS else "read"


@dataclass
class Limits:
    """What one client may ask of the server.

    Attributes:
        max_request_bytes: the largest request body (larger: 413).
        rate: requests per second a token may make, sustained (0: no limit).
        burst: requests a token may make at once before the rate applies.
    """

    max_request_bytes: int = 1 << 20
    rate: float = 50.0
    burst: int = 100


class RateLimiter:
    """A token bucket per bearer token (thread-safe; the clock is monotonic)."""

    def __init__(self, rate: float, burst: int):
        self.rate = rate
        self.burst = max(1, burst)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait_for(self, key: str) -> float:
        """0 if ``key`` may make a request now (and counts it), else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            level, then = self._buckets.get(key, (float(self.burst), now))
            level = min(float(self.burst), level + (now - then) * self.rate)
            if level < 1.0:
                self._buckets[key] = (level, now)
                return (1.0 - level) / self.rate
            self._buckets[key] = (level - 1.0, now)
            return 0.0


def _safe(value: Any) -> str | None:
    """A client-given name fit for the log (a tool or method name), else None."""
    return value if isinstance(value, str) and _SAFE_NAME.match(value) else None


def _request_info(ctx: Any) -> dict[str, Any]:
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return scope.get(SCOPE_KEY, {}) if isinstance(scope, dict) else {}


def token_name(ctx: Any) -> str | None:
    """The author of a tool's writes: the name of the request's bearer token (``build_server``'s ``agent_of``)."""
    try:
        info = _request_info(ctx.request_context)
    except (AttributeError, ValueError):
        return None
    token = info.get("token")
    return token.name if isinstance(token, Token) else None


class Namespace:
    """One served repository: its MCP server (memrepo/mcp.py's), its sync worker and its ASGI app.

    Args:
        name: the path segment it is served under (``""``: at ``/mcp``).
        repo: the open repository, kept open while the server runs.
        service: memrepo/mcp.py's tools on ``repo`` (their lock also serializes the syncs).
        syncer: keeps it in step with its remote.
        host: the listening address (the SDK guards a loopback one against DNS rebinding).
        limits: the largest request body.
    """

    def __init__(self, name: str, repo: MemoryRepo, service: Any, syncer: Syncer, *, host: str, limits: Limits):
        from memrepo.mcp import build_server

        self.name = name
        self.repo = repo
        self.service = service
        self.syncer = syncer
        self.server = build_server(service, agent_of=token_name)
        self.server.middleware.append(ScopeMiddleware(self))
        self.app = self.server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                                   json_response=True, host=host,
                                                   max_request_body_size=limits.max_request_bytes)

    def health(self) -> dict[str, Any]:
        """The repository, its commit, how far each index is behind it, the last sync.

        ``commits_behind`` (and ``index_lag``, the largest) is None for an index not built yet or more
        than 1,000 commits behind.
        """
        def read() -> dict[str, Any]:
            head = self.repo.store.head()
            tip = head.decode() if head else None
            order = {c.id: n for n, c in enumerate(self.repo.log(limit=1000))} if tip else {}
            indexes = {}
            for state in self.repo.index_status():
                behind = 0 if state["current"] else order.get(state["commit"] or "", None)
                indexes[state["index"]] = {"commit": state["commit"], "commits_behind": behind}
            return {"commit": tip, "indexes": indexes}

        data = self.service.locked(read)
        lag = [i["commits_behind"] for i in data["indexes"].values()]
        return {"namespace": self.name or None, "repository": self.repo.root.name, "path": f"/{self.name}/mcp"
                if self.name else "/mcp", **data,
                "index_lag": None if None in lag else max(lag, default=0), "sync": self.syncer.status()}


class ScopeMiddleware:
    """Inside the MCP server: what a token's scope lets it see and call; pulls asked for; writes to push."""

    def __init__(self, namespace: Namespace):
        self.namespace = namespace

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        info = _request_info(ctx)
        token = info.get("token")
        record = info.setdefault("log", {})
        record["method"] = _safe(ctx.method)
        if not isinstance(token, Token):  # the HTTP layer lets no request through without one
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32001, message="unauthorized")
        try:
            if ctx.method == "tools/list":
                return self._visible(await call_next(ctx), tools_of(token.scope))
            if ctx.method == "tools/call":
                return await self._call(ctx, call_next, token, record)
            return await call_next(ctx)
        except Exception as exc:
            error = getattr(exc, "error", None)
            record["outcome"] = f"rpc-error {getattr(error, 'code', type(exc).__name__)}"
            raise

    def _visible(self, result: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
        """A ``tools/list`` result (the wire form the SDK's middleware sees) cut to ``allowed``, read tools with ``pull``."""
        tools = []
        for tool in result.get("tools", []):
            if tool.get("name") not in allowed:
                continue
            if tool["name"] in READ_TOOLS:
                schema = dict(tool.get("inputSchema") or {})
                schema["properties"] = {**schema.get("properties", {}), "pull": PULL_ARGUMENT}
                tool = {**tool, "inputSchema": schema}
            tools.append(tool)
        return {**result, "tools": tools}

    async def _call(self, ctx: Any, call_next: Any, token: Token, record: dict[str, Any]) -> Any:
        import anyio.to_thread

        params = dict(ctx.params or {})
        name = params.get("name")
        record["tool"] = _safe(name) or "?"
        if isinstance(name, str) and name in NOT_SERVED:
            return _tool_error(record, NOT_SERVED[name])
        if isinstance(name, str) and name in READ_TOOLS | WRITE_TOOLS | REVIEW_TOOLS \
                and name not in tools_of(token.scope):
            return _tool_error(record, f"{name}: this token ({token.name}, scope {token.scope}) may not call it; "
                                       f"it needs scope {_needed_scope(name)}. Nothing was done.")
        arguments = params.get("arguments")
        if name in READ_TOOLS and isinstance(arguments, dict) and "pull" in arguments:
            arguments = dict(arguments)
            pull = arguments.pop("pull")
            if not isinstance(pull, bool):
                return _tool_error(record, "pull: expected true or false")
            ctx = replace(ctx, params={**params, "arguments": arguments})
            if pull:
                failed = await anyio.to_thread.run_sync(self.namespace.syncer.pull)
                if failed:
                    return _tool_error(record, f"{name}: the pull from the team's remote failed, so nothing was "
                                               f"read: {failed}")
        result = await call_next(ctx)
        if isinstance(result, dict) and result.get("isError"):
            record["outcome"] = "tool-error"
        else:
            record["outcome"] = "ok"
            if name in WRITE_TOOLS | REVIEW_TOOLS:
                self.namespace.syncer.written()
        return result


def _tool_error(record: dict[str, Any], message: str) -> Any:
    from mcp.types import CallToolResult, TextContent

    record["outcome"] = "refused"
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


class ServeApp:
    """The ASGI application: the token check, the rate limit and the log line around the namespaces' apps."""

    def __init__(self, namespaces: list[Namespace], tokens: TokenStore, limits: Limits):
        from starlette.applications import Starlette
        from starlette.routing import Mount, Route

        self.namespaces = {ns.name: ns for ns in namespaces}
        self.tokens = tokens
        self.limits = limits
        self.limiter = RateLimiter(limits.rate, limits.burst)
        routes: list[Any] = [Route("/healthz", self._health, methods=["GET"])]
        routes += [Mount(f"/{ns.name}" if ns.name else "", app=ns.app) for ns in namespaces]
        self.router = Starlette(routes=routes, lifespan=self._lifespan)

    @asynccontextmanager
    async def _lifespan(self, app: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for ns in self.namespaces.values():
                await stack.enter_async_context(ns.server.session_manager.run())
                ns.syncer.start()
            try:
                yield
            finally:  # every request has been answered (uvicorn waits for them): push what they wrote
                import anyio.to_thread

                for ns in self.namespaces.values():
                    await anyio.to_thread.run_sync(ns.syncer.stop)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        started = time.monotonic()
        status: list[int] = [0]
        record: dict[str, Any] = {}

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        token = self._authorize(scope)
        namespace = self._namespace_of(scope["path"])
        try:
            if token is None or (namespace is not None and not token.allows(namespace)):
                await _plain(watch, 401, b'{"error": "unauthorized"}', [(b"www-authenticate", b"Bearer")])
                return
            wait = self.limiter.wait_for(token.name)
            if wait:
                await _plain(watch, 429, b'{"error": "rate limit: too many requests for this token"}',
                             [(b"retry-after", str(math.ceil(wait)).encode())])
                return
            scope[SCOPE_KEY] = {"token": token, "log": record}
            await self.router(scope, receive, watch)
        finally:
            call = record.get("method") or "-"
            if record.get("tool"):
                call += f":{record['tool']}"
            log.info("token=%s %s %s call=%s status=%d outcome=%s ms=%d",
                     token.name if token else "-", scope.get("method"),
                     scope["path"] if _SAFE_NAME.match(scope["path"]) else "?", call, status[0],
                     record.get("outcome") or ("ok" if status[0] < 400 else "refused"),
                     round((time.monotonic() - started) * 1000))

    def _authorize(self, scope: Any) -> Token | None:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                kind, _, secret = value.decode("latin-1").partition(" ")
                return self.tokens.verify(secret.strip()) if kind.lower() == "bearer" and secret.strip() else None
        return None

    def _namespace_of(self, path: str) -> str | None:
        """The namespace a path is under ("" for /mcp), None for /healthz and unknown paths."""
        if "" in self.namespaces and (path == "/mcp" or path.startswith("/mcp/")):
            return ""
        first = path.strip("/").split("/", 1)[0]
        return first if first and first in self.namespaces else None

    async def _health(self, request: Any) -> Any:
        import anyio.to_thread
        from starlette.responses import JSONResponse

        token = request.scope.get(SCOPE_KEY, {}).get("token")
        report = []
        for ns in self.namespaces.values():
            if token is not None and token.allows(ns.name):
                report.append(await anyio.to_thread.run_sync(ns.health))
        failing = any(r["sync"]["ok"] is False for r in report)
        return JSONResponse({"status": "degraded" if failing else "ok", "namespaces": report})


async def _plain(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})
