"""`memrepo serve`: memory repositories served to a team's agents over MCP's streamable HTTP transport.

``memrepo mcp`` serves one clone to one agent over stdio; this serves one or more clones to many
agents over the network, with the same tools, resources and prompts (memrepo/mcp.py builds the
server; :mod:`memrepo.serve.app` puts the HTTP edge around it). Who may do what is a bearer token
(:mod:`memrepo.serve.tokens`) whose name is the Git author of its writes; the Git remote stays the
shared, durable store, and each server is a clone that keeps in step with it
(:mod:`memrepo.serve.sync`), so servers scale out as replicas of one remote.
"""

from __future__ import annotations

import ipaddress
import socket
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from memrepo.errors import MemrepoError
from memrepo.serve.app import Limits, Namespace, ServeApp
from memrepo.serve.tokens import NAME_RE, TokenStore

if TYPE_CHECKING:
    from memrepo.api import MemoryRepo

__all__ = ["Limits", "ServeError", "ServeOptions", "TokenStore", "build_app", "is_loopback", "serve"]


class ServeError(MemrepoError):
    """The server cannot start as asked (an address without tokens, a bad namespace, a port in use)."""


@dataclass
class ServeOptions:
    """How `memrepo serve` runs.

    Attributes:
        host: the address to listen on; anything but loopback needs at least one token.
        port: the TCP port (0: any free one, said in the ready message).
        pull_interval: seconds between pulls from each repository's remote (0: none on a timer).
        push_delay: seconds writes gather before they are pushed as one batch.
        remote: the remote to sync with (default: the branch's, else origin).
        limits: request size and per-token rate.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    pull_interval: float = 30.0
    push_delay: float = 1.0
    remote: str | None = None
    limits: Limits = field(default_factory=Limits)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_app(repos: dict[str, MemoryRepo], tokens: TokenStore, options: ServeOptions) -> ServeApp:
    """The ASGI application serving ``repos`` (namespace -> open repository; ``""`` alone: at ``/mcp``).

    Raises:
        ServeError: a namespace name that cannot be a URL path segment.
    """
    from memrepo.mcp import MemoryService
    from memrepo.serve.sync import Syncer

    for name in repos:
        if name and (not NAME_RE.match(name) or name in ("mcp", "healthz")):
            raise ServeError(f"namespace {name!r}: use 1-64 letters, digits, '.', '_' or '-' (not mcp or healthz)")
    if "" in repos and len(repos) > 1:
        raise ServeError("several repositories need a name each: --repo NAME=PATH")
    namespaces = []
    for name, repo in repos.items():
        service = MemoryService(repo, allow_review=True)  # which tools a request may call is its token's scope
        syncer = Syncer(repo, service, remote=options.remote, interval=options.pull_interval,
                        push_delay=options.push_delay)
        namespaces.append(Namespace(name, repo, service, syncer, host=options.host, limits=options.limits))
    return ServeApp(namespaces, tokens, options.limits)


def serve(paths: dict[str, str], tokens: TokenStore, options: ServeOptions, *,
          open_repo: Callable[[str], MemoryRepo], notify: Callable[[str], None] = lambda _: None) -> None:
    """Serve the repositories at ``paths`` (namespace -> path) until SIGINT or SIGTERM.

    On SIGTERM the server stops accepting requests, answers those in flight (a write finishes and is
    committed), pushes the writes not pushed yet, then closes the repositories.

    Args:
        open_repo: opens a repository by path (the CLI's, with the user's environment).
        notify: receives the ready message and warnings.

    Raises:
        ServeError: a non-loopback address with no token defined, or a port that cannot be bound.
    """
    import uvicorn

    if not is_loopback(options.host) and not tokens.any():
        raise ServeError(f"refusing to listen on {options.host} with no token defined in {tokens.path}: anyone "
                         "who can reach it would be refused, or worse; add one with "
                         "`memrepo serve token add NAME --scope read|write|review`")
    if not tokens.any():
        notify(f"no token is defined in {tokens.path} yet: every request is refused (401) until one is added with "
               "`memrepo serve token add NAME --scope read|write|review` (no restart needed)")
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
        sock.listen(2048)  # connections made from the ready message on wait in the backlog until uvicorn accepts
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}") from exc
    with ExitStack() as stack:
        stack.callback(sock.close)
        repos = {}
        for name, path in paths.items():
            repo = repos[name] = open_repo(path)
            stack.callback(repo.close)
        app = build_app(repos, tokens, options)
        port = sock.getsockname()[1]
        shown = f"[{options.host}]" if ":" in options.host else options.host
        for ns in app.namespaces.values():
            where = f"/{ns.name}/mcp" if ns.name else "/mcp"
            sync = "syncs with its remote" if ns.syncer.enabled else "no remote: nothing is pushed"
            notify(f"serving {ns.repo.root} at http://{shown}:{port}{where} ({sync})")
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=None)
        _run_until_signal(uvicorn.Server(config), sock)


def _run_until_signal(server: Any, sock: socket.socket) -> None:
    """Run ``server`` until SIGTERM or SIGINT: uvicorn shuts down gracefully (requests in flight are answered,
    then the lifespan's end pushes), then sends the signal again to the handler it found, which here returns,
    so the process exits normally (status 0) rather than by the signal."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        server.run(sockets=[sock])
        return
    kept = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
