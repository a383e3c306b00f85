"""End to end: `memrepo view` as a real process, rendered by headless Chromium.

Playwright's Python package drives Debian's /usr/bin/chromium (installed by
tests/install_chromium.sh; Playwright never downloads a browser here).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from viewer_fixtures import build_example_repo, first_record_with

CHROMIUM = Path("/usr/bin/chromium")
# What this machine needs: no sandbox as root, no GPU, and no background traffic
# (the network is closed; Chromium's own connections would only fail).
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed (tests/install_chromium.sh installs it; apt-get install chromium)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    """The example repository served by `memrepo view` on a free port; yields (repo, base url)."""
    repo = build_example_repo(tmp_path / "memory")
    port = free_port()
    log = open(tmp_path / "view.log", "w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "memrepo", "view", str(repo.root), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ), cwd=tmp_path,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"memrepo view did not start (exit {process.poll()}):\n{log.read()}")
            time.sleep(0.2)
        log.seek(0)
        assert f"http://127.0.0.1:{port}" in log.read()  # the command printed its address
        yield repo, base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        repo.close()
    # `memrepo view` became the server: stopping it stopped the server (no orphan left serving).
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/_stcore/health", timeout=2)


def wait_for_text(page, text: str, timeout: float = 60) -> None:
    """Wait until the rendered page shows ``text`` (Streamlit renders in several passes)."""
    deadline = time.monotonic() + timeout
    while text not in page.inner_text("body"):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} not shown; the page shows:\n{page.inner_text('body')[:3000]}")
        page.wait_for_timeout(200)


def test_a_record_and_a_facts_citation_render_in_chromium(served, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    repo, base = served
    record = first_record_with(repo, "Suica card at Tokyo Station")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
        )
        try:
            page = browser.new_page()
            page.goto(f"{base}/memories?record={record.id}")
            wait_for_text(page, "I bought a Suica card at Tokyo Station this morning")
            wait_for_text(page, record.sources[0])  # the citation src-...#D1:3, in the front matter
            wait_for_text(page, "Jonas: The Suica card is a lifesaver.")  # the cited turn in its context
            # A fact of the graph and its citation: the record it cites and that record's source turn.
            buy = next(f for f in repo.graph_frames(cited=record.id) if f.predicate == "buy")
            page.goto(f"{base}/graph?frame={buy.iri}")
            wait_for_text(page, "Frame: buy")
            wait_for_text(page, f"{record.id} · {record.summary[:40]}")
            wait_for_text(page, record.sources[0])
            page.screenshot(path=str(tmp_path / "frame.png"))
            # The Memories table: selecting a row opens that record; the back button returns to the list.
            page.goto(f"{base}/memories")
            wait_for_text(page, "Select a row to open the record.")
            page.wait_for_timeout(1000)  # the grid draws on a canvas after the page text
            grid = page.locator('[data-testid="stDataFrame"]').bounding_box()
            page.mouse.click(grid["x"] + 15, grid["y"] + 35 + 17)  # the first row's selection box
            first = repo.records()[0]
            wait_for_text(page, "Front matter")
            wait_for_text(page, first.text.splitlines()[0][:60])
            assert f"record={first.id}" in page.url
            page.get_by_text("All memories").click()
            wait_for_text(page, "Select a row to open the record.")
            page.goto(f"{base}/")
            wait_for_text(page, "Records by memory type")
            wait_for_text(page, "episodic")
        finally:
            browser.close()
