"""End to end: `memrepo view` as a real process, rendered by headless Chromium.

Playwright's Python package drives Debian's /usr/bin/chromium (installed by
tests/install_chromium.sh; Playwright never downloads a browser here).
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from viewer_fixtures import (BEACON, HOSTILE_AUTHOR, HOSTILE_PLACE, add_hostile, build_example_repo, first_record_with,
                             serving)

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


@pytest.fixture
def served(tmp_path):
    """The example repository, with hostile records added, served by `memrepo view` on a free port;
    yields (repo, base url)."""
    repo = build_example_repo(tmp_path / "memory")
    add_hostile(repo)
    log = tmp_path / "view.log"
    try:
        with serving(repo.root, log) as base:
            assert base in log.read_text(encoding="utf-8")  # the command printed its address
            yield repo, base
    finally:
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


# --- hostile text, and nothing leaves the machine -------------------------------------------------


def one_line(text: str) -> str:
    return " ".join(text.split())


class Guard:
    """Every request the browser makes goes through here: one for 127.0.0.1 goes on, any other is
    aborted and recorded (nothing may leave the machine, in a test least of all)."""

    def __init__(self, context):
        self.outside: list[str] = []
        self.sockets: list[str] = []
        context.route("**/*", self.route)

    def route(self, route) -> None:
        url = route.request.url
        if url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def watch(self, page) -> None:
        page.on("websocket", lambda ws: self.sockets.append(ws.url))


def assert_inert(page, base: str, where: str) -> None:
    """Nothing stored became an image, a link out, a script or a style on the page."""
    images = page.locator("img").evaluate_all("els => els.map(e => e.getAttribute('src') || '')")
    assert not [src for src in images if BEACON in src], (where, images)
    links = page.locator("a").evaluate_all(  # resolved against the page: absolute URLs (SVG links too)
        "els => els.map(e => { const h = typeof e.href === 'string' ? e.href : (e.href && e.href.baseVal) || '';"
        " return h ? new URL(h, document.baseURI).href : ''; })")
    assert all(h.startswith(base) or h.startswith("#") or not h for h in links), (where, links)
    svg_links = page.locator("svg a").evaluate_all(
        "els => els.map(e => e.getAttribute('href') || e.getAttribute('xlink:href') || '')")
    assert all(h.startswith("graph?") for h in svg_links), (where, svg_links)
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert not [t for t in scripts if "alert(" in t], where
    styled = page.locator('[style*="color:red"], [style*="color: red"]').count()
    assert styled == 0, where


def shows(page, text: str, timeout: float = 60) -> None:
    """Wait until the page shows ``text`` (compared with runs of white space as one space)."""
    wanted = one_line(text)
    deadline = time.monotonic() + timeout
    while wanted not in one_line(page.inner_text("body")):
        if time.monotonic() > deadline:
            raise AssertionError(f"{wanted[:200]!r} not shown; the page shows:\n{page.inner_text('body')[:3000]}")
        page.wait_for_timeout(200)


def test_hostile_text_shows_as_stored_and_nothing_leaves_the_machine_on_any_page(served, tmp_path):
    """Records, sources, names, commit messages and authors full of Markdown images and links,
    javascript: URLs, HTML, Streamlit colour directives and a 3,000-character line: every page
    shows them as written, and the browser attempts no request that is not for 127.0.0.1."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    repo, base = served
    record = next(r for r in repo.records(type="episodic") if BEACON in r.text)
    hostile_frame = next(f for f in repo.graph_frames(cited=record.id))
    hostile_anchor = next(a.name for a in hostile_frame.arms if BEACON in a.name)
    assert repo.review_list(), "add_hostile opens a review branch"
    pages = [
        ("/", ["Records by memory type", "Commits per author"]),
        ("/memories", ["Select a row to open the record."]),
        (f"/memories?record={record.id}", [record.summary, record.text, HOSTILE_AUTHOR, "Remember Beacon ![x]"]),
        ("/graph", ["The most connected anchors"]),
        (f"/graph?anchor={quote(hostile_anchor)}", [hostile_anchor, f"{record.id} · {record.summary}"]),
        (f"/graph?frame={quote(hostile_frame.iri)}", [f"{record.id} · {record.summary}", record.text.splitlines()[1]]),
        ("/recall?q=" + quote("kettle Kyoto beacon"), [f"{record.id} · ", record.summary]),
        ("/history", ["Who wrote what", HOSTILE_AUTHOR]),
        ("/review", [HOSTILE_PLACE, "What approving merges", HOSTILE_AUTHOR]),
    ]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
        )
        try:
            guard = Guard(browser)
            page = browser.new_page()
            page.set_viewport_size({"width": 1400, "height": 1600})
            guard.watch(page)
            for path, texts in pages:
                page.goto(base + path)
                for text in texts:
                    shows(page, text)
                page.wait_for_timeout(1500)  # charts, tables and pictures draw after the text
                assert_inert(page, base, path)
                if path.startswith("/memories?"):  # the Text panel: exactly the stored text
                    panels = page.locator('[data-testid="stText"]').all_inner_texts()
                    assert record.text in panels
            page.screenshot(path=str(tmp_path / "review.png"))
        finally:
            browser.close()
    assert guard.outside == [], guard.outside
    assert guard.sockets and all(url.startswith(base.replace("http", "ws")) for url in guard.sockets)


def test_clicking_an_anchor_or_a_frame_in_the_picture_opens_it(served, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    repo, base = served
    neighbour = repo.graph_neighbours("Mia", limit=6).neighbours[0]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
        )
        try:
            guard = Guard(browser)
            page = browser.new_page()
            page.goto(f"{base}/graph?anchor=Mia")
            shows(page, "Neighbours")
            node = page.locator(f'svg a[*|href="graph?anchor={quote(neighbour.anchor.name, safe="")}"]').first
            node.wait_for(timeout=30_000)
            node.click()
            page.wait_for_url(f"**/graph?anchor={quote(neighbour.anchor.name, safe='')}", timeout=30_000)
            shows(page, f"{neighbour.anchor.name}\ntype")
            frame = page.locator('svg a[*|href^="graph?frame="]').first
            frame.wait_for(timeout=30_000)
            frame.click()
            page.wait_for_url("**/graph?frame=*", timeout=30_000)
            shows(page, "Frame:")
        finally:
            browser.close()
    assert guard.outside == [], guard.outside
