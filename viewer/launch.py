"""How ``memrepo view`` starts the viewer: the ``streamlit run`` command line and its environment.

Kept free of Streamlit imports so that the CLI stays fast to start.
"""

from __future__ import annotations

import errno
import socket
import sys
from pathlib import Path
from typing import Mapping

from memrepo.errors import MemrepoError

APP = Path(__file__).resolve().parent / "app.py"
SERVE = Path(__file__).resolve().parent / "serve.py"  # app.py behind the Host-header check


class ViewerError(MemrepoError):
    """The viewer cannot start (port taken, Streamlit missing)."""


def check_port(host: str, port: int) -> None:
    """Raise :class:`ViewerError` if ``host:port`` cannot be served (in use, or not an address here)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As the server itself does: a port whose last connections are in TIME_WAIT is free;
        # one that a server listens on is not (SO_REUSEADDR does not change that on Linux).
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ViewerError(f"port {port} on {host} is already in use; choose another with --port") from exc
            raise ViewerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def viewer_command(
    root: str, *, host: str = "127.0.0.1", port: int = 8501, allow_review: bool = False,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The command that serves the viewer on the repository at ``root``, and its environment.

    Raises:
        ViewerError: if Streamlit is not installed or the port cannot be used.
    """
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise ViewerError("the viewer needs Streamlit, which is not installed (pip install streamlit)")
    check_port(host, port)
    env = dict(environ or {})
    env["MEMREPO_VIEW_REPO"] = root
    env["MEMREPO_VIEW_ALLOW_REVIEW"] = "1" if allow_review else ""
    command = [
        sys.executable, "-m", "streamlit", "run", str(SERVE),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.address", host,
        "--server.port", str(port),
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--client.toolbarMode", "minimal",
        "--", "--repo", root,
    ]
    return command, env
