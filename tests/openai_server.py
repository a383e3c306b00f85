"""A small real HTTP server on 127.0.0.1 that speaks OpenAI chat completions with scripted replies.

    with ScriptedOpenAI() as server:
        server.enqueue('{"types": ["episodic"]}')          # content of the next reply
        server.enqueue(status=429)                        # then a rate-limit error
        server.enqueue("{}", delay=2.0)                   # a reply that comes late
        server.responder = lambda request: "..."          # content when the queue is empty
        settings = server.settings(timeout=1.0)           # Settings pointing at it
        ...
        server.requests                                   # every request body received

Tests use it with the real ``openai`` client: nothing is mocked below HTTP.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from memrepo.settings import LLMSettings, Settings


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    delay: float = 0.0
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] = (11, 7)


class ScriptedOpenAI:
    """Chat-completions server with a queue of scripted replies (FIFO), then ``responder``."""

    def __init__(self, *, reject_json_schema: bool = False):
        self.queue: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.responder: Callable[[dict[str, Any]], str] | None = None
        self.reject_json_schema = reject_json_schema
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # --- scripting -------------------------------------------------------------

    def enqueue(self, content: str | dict | None = None, *, status: int = 200, delay: float = 0.0,
                body: Any = None, headers: dict[str, str] | None = None, usage: tuple[int, int] = (11, 7)) -> None:
        if isinstance(content, dict):
            content = json.dumps(content)
        self.queue.append(Reply(content, status, delay, body, headers or {}, usage))

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def settings(self, *, timeout: float = 5.0, max_retries: int = 2, model: str = "scripted") -> Settings:
        return Settings(llm=LLMSettings(base_url=self.url, api_key="test-key", model=model, timeout=timeout,
                                        max_retries=max_retries))

    # --- lifecycle -------------------------------------------------------------

    def __enter__(self) -> "ScriptedOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- serving ---------------------------------------------------------------

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            fmt = (request.get("response_format") or {}).get("type")
            if self.reject_json_schema and fmt == "json_schema":
                return Reply(status=400, body={"error": {"message": "response_format json_schema is not supported",
                                                         "type": "invalid_request_error"}})
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            return Reply(self.responder(request))
        return Reply(status=500, body={"error": {"message": "no scripted reply left", "type": "server_error"}})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                request = json.loads(raw or b"{}")
                reply = server._next(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    body = reply.body or {"error": {"message": f"scripted HTTP {reply.status}", "type": "scripted"}}
                    headers = {"retry-after-ms": "10", **reply.headers} if reply.status == 429 else reply.headers
                    return self._send(reply.status, body, headers)
                prompt, completion = reply.usage
                body = reply.body or {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": request.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.content}}],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion},
                }
                self._send(200, body, reply.headers)

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler
