"""The viewer's server: Streamlit serving ``app.py`` behind a Host-header check.

``memrepo view`` runs ``streamlit run viewer/serve.py``. Streamlit finds the ``st.App`` below
and serves ``app.py`` through it, with :class:`viewer.hostcheck.HostCheck` in front of every
route: a request (HTTP or websocket) whose Host header is not the address the viewer serves
on is refused, so a DNS-rebinding page cannot read the memory (see viewer/hostcheck.py).
The address and port are the ones ``streamlit run`` was given (``--server.address/port``).
"""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config

from viewer.hostcheck import HostCheck

app = st.App(
    Path(__file__).with_name("app.py"),
    middleware=[Middleware(HostCheck, address=str(config.get_option("server.address") or ""),
                           port=int(config.get_option("server.port")))],
)
