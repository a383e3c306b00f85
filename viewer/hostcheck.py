"""The viewer's Host-header check (installed by viewer/serve.py in front of every route).

Why: a web page the user opens elsewhere can point a domain it controls at 127.0.0.1 (DNS
rebinding); the browser then sends that page's requests, and its websocket, to the viewer
with the attacker's domain in the Host header, and lets the page read the answers. So a
request (HTTP or websocket) is served only when its Host names the address the viewer
serves on: that address itself, or ``localhost`` when it is a loopback address; any IP
literal or this machine's own names when it serves on every interface (0.0.0.0 or ::). An
IP literal cannot be rebound, so it is always safe to accept one that reaches us.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any, Awaitable, Callable

WILDCARDS = ("", "0.0.0.0", "::")


def split_host(host: str) -> tuple[str, int | None]:
    """``"[::1]:8501"`` -> ("::1", 8501); ``"localhost"`` -> ("localhost", None). Lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif host.count(":") == 1:
        name, port = host.split(":")
    else:
        name, port = host, ""
    return name.rstrip("."), int(port) if port.isdigit() else None


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def host_allowed(host: str, address: str, port: int) -> bool:
    """True if a request with this Host header is for the viewer serving on ``address``:``port``."""
    name, asked_port = split_host(host)
    if not name or (asked_port is not None and asked_port != port):
        return False
    served = address.strip().lower().strip("[]")
    ip, served_ip = _ip(name), _ip(served)
    if served in WILDCARDS:
        return ip is not None or name == "localhost" or name in _own_names()
    if served_ip is not None and served_ip.is_loopback and name == "localhost":
        return True
    if ip is not None and served_ip is not None:
        return ip == served_ip
    return name == served


def _own_names() -> set[str]:
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    return {n.rstrip(".") for n in names if n}


class HostCheck:
    """ASGI middleware: refuse HTTP requests (403) and websockets (closed before accepting) whose
    Host header is not the viewer's address."""

    def __init__(self, app: Callable[..., Awaitable[None]], address: str, port: int):
        self.app = app
        self.address = address
        self.port = port

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"]
        if len(hosts) == 1 and host_allowed(hosts[0], self.address, self.port):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the handshake gets 403
            return
        body = b"Refused: this server answers only requests addressed to it (Host header).\n"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
