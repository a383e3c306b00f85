"""What every page of the viewer shares: the repository opened once, the revision being
read, cached per-commit tables, and errors shown as messages instead of tracebacks.

The viewer reads only through :mod:`memrepo.api`. It is an edge, like the CLI, so it
is allowed to read the environment: ``MEMREPO_VIEW_REPO`` (set by ``memrepo view``)
names the repository; ``--repo PATH`` after ``--`` on the ``streamlit run`` command line
does the same.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from datetime import datetime, timezone
from functools import wraps
from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

from memrepo.errors import MemrepoError

if TYPE_CHECKING:
    import pandas as pd

    from memrepo.api import MemoryRepo, MemoryView

REPO_ENV = "MEMREPO_VIEW_REPO"
REVIEW_ENV = "MEMREPO_VIEW_ALLOW_REVIEW"
REV_KEY = "rev"  # session state: the revision every page reads (None/"" = the branch tip)
NOT_YET = "not available yet in this version of memrepo"


# --- the repository ------------------------------------------------------------------


def repo_path() -> str:
    """The repository the viewer shows: ``--repo PATH`` after ``--``, else $MEMREPO_VIEW_REPO, else here."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--repo" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--repo="):
            return arg.split("=", 1)[1]
    return os.environ.get(REPO_ENV) or os.getcwd()


def allow_review() -> bool:
    """True when the viewer was started with ``--allow-review`` (approve/reject review branches)."""
    return os.environ.get(REVIEW_ENV, "") in ("1", "true", "yes")


# Every browser session runs its script in its own thread, and all of them share the one
# opened repository; Git pack files are read with seek-then-read, so reads are serialized.
# Pages take well under the 2 s goal once their commit's tables are built.
READ_LOCK = threading.RLock()


@st.cache_resource(show_spinner="Opening the memory repository…")
def _open(path: str) -> "MemoryRepo":
    from memrepo.api import MemoryRepo

    return MemoryRepo.open(path, environ=dict(os.environ))


def repo() -> "MemoryRepo":
    """The memory repository, opened once per server process.

    Raises:
        MemrepoError: if the path is not a memory repository (the page shows the message).
    """
    path = os.path.abspath(repo_path())
    if not os.path.isdir(path):
        from memrepo.errors import RepositoryError

        raise RepositoryError(f"{path}: no such folder")
    return _open(path)


def rev() -> str | None:
    """The revision the pages read (None: the tip of the current branch)."""
    value = st.session_state.get(REV_KEY)
    return value.strip() or None if isinstance(value, str) else None


def view() -> "MemoryView":
    """The memory as of the selected revision.

    Raises:
        MemrepoError: if the revision does not exist.
    """
    return repo().at(rev())


def set_rev(value: str | None) -> None:
    """Read the repository as of ``value`` from now on (a widget callback)."""
    st.session_state[REV_KEY] = value or ""


# --- errors --------------------------------------------------------------------------


def page(func: Callable[[], None]) -> Callable[[], None]:
    """Run a page; a library error becomes an ``st.error`` message, never a traceback."""

    @wraps(func)
    def run() -> None:
        try:
            func()
        except MemrepoError as exc:  # messages quote names and ids from the URL or the files: inert
            st.error(md(exc))
        except Exception as exc:  # a bug or an unexpected file: say what, keep the app alive
            st.error(md(f"Unexpected error ({type(exc).__name__}): {exc}"))

    return run


def optional_api(name: str) -> Callable[..., Any] | None:
    """The repository method ``name``, or None (with an info message) if this version lacks it."""
    method = getattr(repo(), name, None)
    if method is None:
        st.info(f"{code(name)} is {NOT_YET}.")
    return method


# --- cached per-commit data ------------------------------------------------------------


@st.cache_resource(max_entries=8, show_spinner="Reading records…")
def records_table(root: str, commit: str | None) -> "pd.DataFrame":
    """Every record at ``commit`` as a table (one row per record), built once per commit."""
    import pandas as pd

    rows = []
    view = _open(root).at(commit)
    for r in view.records():
        encrypted = r.encrypted
        rows.append(
            {
                "id": r.id,
                "type": r.type,
                "happened": (r.event_time or r.mention_time)[:10],
                "event_time": r.event_time or "",
                "mentioned": r.mention_time[:10],
                "summary": "(encrypted)" if encrypted and not r.summary else r.summary,
                "actor": r.actor or "",
                "sources": len(r.sources),
                "_search": "" if encrypted else f"{r.summary}\n{r.text}\n{r.actor or ''}".lower(),
            }
        )
    columns = ["id", "type", "happened", "event_time", "mentioned", "summary", "actor", "sources", "_search"]
    table = pd.DataFrame(rows, columns=columns)
    table.attrs["unreadable"] = list(view.unreadable)  # records whose Git object is damaged: left out, named
    return table


@st.cache_resource(max_entries=8, show_spinner=False)
def stats(root: str, commit: str | None) -> dict[str, Any]:
    """:meth:`MemoryView.stats_overview` at ``commit``, computed once per commit."""
    return _open(root).at(commit).stats_overview()


@st.cache_resource(max_entries=8, show_spinner="Reading the graph…")
def graph_stats(root: str, commit: str | None) -> dict[str, int]:
    """Size of the graph index at ``commit`` (the index is brought to that commit first)."""
    return _open(root).graph_stats(rev=commit)


@st.cache_resource(max_entries=4, show_spinner="Reading anchor names…")
def anchor_names(root: str, commit: str | None) -> list[str]:
    """Every anchor's canonical name at ``commit``, for suggestions when a name is not found."""
    return sorted({name for name, _ in _open(root).graph_anchor_names(rev=commit)}, key=str.casefold)


@st.cache_resource(max_entries=64, show_spinner=False)
def graph_anchor(root: str, commit: str | None, name: str) -> Any:
    """The anchor called ``name`` at ``commit`` with its frames (cached per commit)."""
    return _open(root).graph_anchor(name, rev=commit)


@st.cache_resource(max_entries=32, show_spinner="Recalling…")
def recall(root: str, commit: str | None, question: str) -> Any:
    """``repo.recall(question)`` at ``commit`` (cached: the same question at the same commit gives the same result)."""
    return _open(root).recall(question, rev=commit)


LOG_SCAN = 20_000  # commits read for the per-author figures at most (about 0.35 ms each)


@st.cache_resource(max_entries=8, show_spinner="Reading the history…")
def commit_log(root: str, commit: str | None) -> "pd.DataFrame":
    """Every commit reachable from ``commit`` (the newest LOG_SCAN): id, author, time, month, summary."""
    import pandas as pd

    rows = [{"id": c.id, "author": c.author, "time": c.time, "summary": c.summary, "parents": len(c.parents)}
            for c in (_open(root).log(rev=commit, limit=LOG_SCAN) if commit else [])]
    table = pd.DataFrame(rows, columns=["id", "author", "time", "summary", "parents"])
    table["month"] = pd.to_datetime(table["time"], unit="s", utc=True).dt.strftime("%Y-%m")
    return table


def authors(log: "pd.DataFrame") -> "pd.DataFrame":
    """One row per commit author: commits, first and last commit (newest author first)."""
    import pandas as pd

    if log.empty:
        return pd.DataFrame(columns=["author", "commits", "first", "last"])
    grouped = log.groupby("author").agg(commits=("id", "count"), first=("time", "min"), last=("time", "max"))
    grouped = grouped.reset_index().sort_values(["commits", "last"], ascending=False)
    grouped["first"] = grouped["first"].map(when)
    grouped["last"] = grouped["last"].map(when)
    return grouped.reset_index(drop=True)


def current_table() -> "pd.DataFrame":
    v = view()
    return records_table(str(repo().root), v.commit)


# --- rendering helpers -----------------------------------------------------------------
#
# Text in memory is data from strangers (an ingested chat, a teammate's push). Streamlit reads
# Markdown - with images, links, HTML, colour directives and icon shortcodes - in st.markdown,
# st.caption, st.title/header/subheader, st.info/warning/error/success and in the labels of
# expanders, page links, buttons and metrics. So stored text reaches the page only through
# ``st.text`` / ``st.code`` / table cells (never parsed), or through ``md()`` where a label is
# unavoidable. Never put stored text into a Markdown string without ``md()``.

_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
# What GitHub-flavoured Markdown turns into a link by itself, escaped or not (it finds them in
# the decoded text): URLs from http://, https:// or www., and e-mail addresses.
_AUTOLINK = re.compile(r"(?i)(https?://|www\.)|[-.\w+]+@[-\w]+(\.[-\w]+)+")


def md(text: Any) -> str:
    """``text`` made inert for a place Streamlit reads as Markdown: shown as written, one line.

    Every ASCII punctuation character is backslash-escaped (CommonMark shows an escaped
    character as itself), so no image, link, HTML tag, entity, emphasis, heading, list,
    LaTeX, ``:colour[...]`` directive or ``:shortcode:`` can form. A word that GitHub-flavoured
    Markdown would turn into a link anyway (a URL, an e-mail address) becomes inline code,
    which is never linked. Line breaks and runs of spaces become one space (a label is one line).
    """
    words = str(text).split()
    return " ".join(code(w) if _AUTOLINK.search(w) else _MD_PUNCT.sub(r"\\\1", w) for w in words)


def code(text: Any) -> str:
    """``text`` as inline code for a Markdown string (its own backticks cannot close the span)."""
    value = " ".join(str(text).split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def show_text(text: str) -> None:
    """Stored text exactly as stored: line breaks kept, long lines wrapped, nothing interpreted."""
    st.text(text, width="stretch", wrap=True)


CITED_STYLE = """<style>
div[class*="st-key-cited-"] {background: #fff3cd; border-left: 4px solid #f0ad4e; padding: 0.2rem 0.5rem;}
</style>"""


def cited_style() -> None:
    """The style of cited source parts (containers keyed ``cited-...``); our own CSS, no stored text."""
    st.html(CITED_STYLE)


def part_text(part) -> str:
    """One source part as plain text: its anchor, speaker and words."""
    speaker = part.meta.get("speaker") if part.meta else None
    return f"{part.anchor}  " + (f"{speaker}: " if speaker else "") + part.text


def show_part(part, cited: bool, key: str) -> None:
    """One source part; a cited one on a highlighted background, marked "cited"."""
    if cited:
        with st.container(key=f"cited-{key}"):
            st.caption("cited")
            show_text(part_text(part))
    else:
        show_text(part_text(part))


def show_cited(citation: str, title: str | None, text: str | None, key: str) -> None:
    """A citation (``src-...#D1:3``), its source's title and the cited text, highlighted."""
    with st.container(key=f"cited-{key}"):
        st.caption(f"cited {code(citation)}" + (f" in {md(title)}" if title else ""))
        show_text(text if text is not None else "[missing part]")


def when(timestamp: int) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def short(commit: str | None) -> str:
    return commit[:12] if commit else "(empty)"


def record_link(record_id: str, text: str | None = None) -> None:
    """A link to the record's page in Memories, labelled with its id and (inert) ``text``."""
    label = md(record_id) + (f" · {md(text)}" if text else "")
    st.page_link("memories.py", label=label, query_params={"record": record_id}, icon=":material/description:")


def sidebar() -> None:
    """Repository, branch and the revision being read; shown on every page."""
    with st.sidebar:
        st.caption(f"Repository: {code(repo_path())}")
        try:
            r = repo()
        except MemrepoError:
            return
        branch = r.current_branch()
        st.caption(f"Branch: {code(branch or 'detached HEAD')}")
        st.text_input(
            "Read as of revision",
            key=REV_KEY,
            placeholder="tip (commit, branch, tag, main~3)",
            help="Every page reads the repository as of this revision; leave empty for the tip.",
        )
        if rev():
            try:
                commit = r.at(rev()).commit
            except MemrepoError as exc:
                st.error(md(exc))
                return
            st.warning(f"Reading as of {code(short(commit))}, not the tip.")
            st.button("Back to the tip", on_click=set_rev, args=(None,))
        st.caption("Read-only viewer." if not allow_review() else "Review actions are enabled.")
