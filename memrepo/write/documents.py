"""Documents: Markdown, plain text, HTML and PDF read into parts that follow their structure (DESIGN.md §10).

Every format becomes one text (the document the resource record keeps) and a list of
*blocks*, each a span of that text: a heading, a paragraph, a list item, a table row, a
code block. A block's anchor names where it is::

    handbook/People:2      the second block under the heading "People"
    handbook/People:0      the heading itself
    handbook/Systems/Billing:1   the first block under "Billing", a subheading of "Systems"
    handbook:1             the first block before any section heading

The first segment is the file's name (its stem, as a slug); the section path is the
headings above the block (a lone top-level heading is the document's title and is left
out); the number counts blocks from the section's heading, so editing, adding or
removing another section never moves a block's anchor. A second section of the same
name under one parent is ``Name~2``. Anchors hold no spaces (they are slugs:
characters other than letters, digits, ``.``, ``_`` and ``-`` become ``-``).

Formats:

- Markdown (``.md``, ``.markdown``): parsed by markdown-it-py (CommonMark with
  tables); the text is the file as it is.
- Plain text (anything else that is UTF-8): paragraphs at blank lines; a short line
  alone before a paragraph (``People`` or ``People:``), an underlined one
  (``====``/``----``) or a ``#`` line is a heading; ``-``, ``*``, ``•`` and ``1.``
  lines are list items. The text is the file as it is.
- HTML (``.html``, ``.htm``, ``.xhtml``): read by the standard library's
  :mod:`html.parser` into Markdown (headings, paragraphs, list items, table rows,
  preformatted text); ``script``, ``style``, ``template``, ``svg`` and the like are
  dropped, and nothing a page references is fetched. The text kept is that Markdown.
- PDF (``.pdf``): text extracted page by page by pypdf (pure Python, no network,
  no external programs); the outline (bookmarks), when there is one, gives the
  sections, else each page is one (``report/p12:3``). Wrapped lines are joined into
  paragraphs at sentence ends. The text kept is that Markdown.

The writers' offline rules for documents are here too (:func:`document_route_offline`,
:func:`facts_offline`, :func:`events_offline`, :func:`instructions_offline`): each
statement sentence of a block becomes one record, verbatim: dated events episodic,
instructions procedural, the rest semantic.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

from memrepo import records as rec
from memrepo.errors import RecordError
from memrepo.text.dates import find_date
from memrepo.nlp.lexicon import opens_with_imperative
from memrepo.nlp.tokens import split_sentences
from memrepo.write.offline import event_timing, secrets, statement_types

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
PDF_SUFFIXES = (".pdf",)
MAX_PARTS = 20_000  # a 300-page book has about 3,000 blocks; more is a document that should be split
MAX_PDF_PAGES = 2_000
LONG_RUN_LINES = 12  # plain text: more lines than this without a blank one are split at sentence ends
STATEMENTS_PER_PART = 40  # records one part may give (one per statement sentence); the writers' schemas allow as many
SLUG_CHARS = 60
# Elements whose content is never text of the page.
_HTML_SKIP = {"script", "style", "template", "svg", "math", "noscript", "iframe", "object", "embed", "canvas",
              "select", "button", "form", "nav"}
_HTML_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "figure",
                "figcaption", "dd", "dt", "address", "details", "summary", "caption", "body", "html"}


@dataclass(frozen=True)
class Block:
    """One part of a document: a span ``[start, end)`` of its text with the anchor that names it."""

    anchor: str
    kind: str  # heading | paragraph | item | row | header | code | meta
    section: str  # the nearest heading's title ("" before any)
    start: int
    end: int
    header: tuple[str, ...] = ()  # table rows: the header cells

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"block": self.kind, "start": self.start, "end": self.end}
        if self.section:
            out["section"] = self.section
        if self.header:
            out["header"] = list(self.header)
        return out


@dataclass
class Document:
    """A document read: its text, title, format and blocks."""

    text: str
    title: str
    format: str  # markdown | text | html | pdf
    blocks: list[Block] = field(default_factory=list)
    titled: bool = False  # the title is the document's own (a heading, <title>, PDF metadata), not its file name


# --- anchors --------------------------------------------------------------------------------------


def slug(title: str) -> str:
    """A heading or file name as one anchor segment: letters, digits, ``.``, ``_``, ``-``."""
    out = re.sub(r"[^\w.-]+", "-", title, flags=re.UNICODE).strip("-.")[:SLUG_CHARS].strip("-.")
    return out or "section"


class _Anchors:
    """Hands out anchors while a document's blocks are read in order."""

    def __init__(self, root: str) -> None:
        self.root = slug(root)
        self.stack: list[tuple[int, str]] = []  # (level, segment)
        self.counts: dict[str, int] = {}
        self.seen: dict[str, int] = {}
        self.path = self.root
        self.section = ""

    def heading(self, level: int, title: str) -> str:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        parent = "/".join([self.root, *(s for _, s in self.stack)])
        segment = slug(title)
        key = f"{parent}/{segment}"
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.seen[key] > 1:
            segment = f"{segment}~{self.seen[key]}"
        self.stack.append((level, segment))
        self.path = f"{parent}/{segment}"
        self.section = title
        self.counts[self.path] = 0
        return f"{self.path}:0"

    def next(self) -> str:
        n = self.counts.get(self.path, 0) + 1
        self.counts[self.path] = n
        return f"{self.path}:{n}"


def _blocks(text: str, spans: list[tuple[int, str, int, str, tuple[str, ...]]], root: str,
            title_level: int | None) -> list[Block]:
    """Blocks from (start offset, kind, heading level, heading title or "", header cells), in order.

    Each block runs to the start of the next, trailing newlines left out, so the blocks cover the
    text and the document is rebuilt from its parts (:func:`memrepo.write.writers.document_text`).
    """
    anchors = _Anchors(root)
    out: list[Block] = []
    starts = [s[0] for s in spans] + [len(text)]
    for i, (start, kind, level, title, header) in enumerate(spans):
        start = 0 if i == 0 else start
        end = start + len(text[start:starts[i + 1]].rstrip("\n"))
        if end <= start:
            continue
        if kind == "heading" and level == title_level:
            anchor = f"{anchors.root}:0"
        elif kind == "heading":
            anchor = anchors.heading(level, title)
        elif kind == "meta":
            anchor = f"{anchors.root}:meta"
        else:
            anchor = anchors.next()
        out.append(Block(anchor, kind, anchors.section if kind != "heading" else title, start, end, header))
    if len(out) > MAX_PARTS:
        raise RecordError(f"{len(out)} parts, over the limit of {MAX_PARTS} for one document; split it")
    return out


def _title_level(headings: list[tuple[int, str]]) -> int | None:
    """The level of a lone top-level heading that opens the document (its title), else None."""
    if not headings:
        return None
    top = min(level for level, _ in headings)
    if headings[0][0] == top and sum(1 for level, _ in headings if level == top) == 1:
        return top
    return None


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for m in re.finditer("\n", text):
        offsets.append(m.end())
    offsets.append(len(text))
    return offsets


# --- Markdown ---------------------------------------------------------------------------------------


_FRONT_MATTER_RE = re.compile(r"\A---\n.*?\n---\n", re.S)


def _markdown_parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def parse_markdown(text: str, root: str) -> Document:
    """A Markdown document's blocks (markdown-it-py's block tokens, at their source lines)."""
    fm = _FRONT_MATTER_RE.match(text)
    skip = fm.end() if fm else 0
    lines = _line_offsets(text)
    base_line = text[:skip].count("\n")
    tokens = _markdown_parser().parse(text[skip:])
    spans: list[tuple[int, str, int, str, tuple[str, ...]]] = [(0, "meta", 0, "", ())] if fm else []
    headings: list[tuple[int, str]] = []
    items = 0
    header: tuple[str, ...] = ()
    in_head = False
    for i, tok in enumerate(tokens):
        if tok.type == "list_item_open":
            items += 1
        elif tok.type == "list_item_close":
            items -= 1
        elif tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        if tok.map is None:
            continue
        start = lines[min(base_line + tok.map[0], len(lines) - 1)]
        if tok.type == "heading_open":
            title = inline_text(tokens[i + 1].content)
            level = int(tok.tag[1:])
            headings.append((level, title))
            spans.append((start, "heading", level, title, ()))
        elif tok.type == "paragraph_open":
            spans.append((start, "item" if items else "paragraph", 0, "", ()))
        elif tok.type in ("fence", "code_block", "html_block"):
            spans.append((start, "code", 0, "", ()))
        elif tok.type == "tr_open":
            cells = _row_cells(tokens, i)
            if in_head:
                header = tuple(cells)
            spans.append((start, "header" if in_head else "row", 0, "", () if in_head else header))
        elif tok.type == "hr" and not spans:
            spans.append((start, "paragraph", 0, "", ()))
    if not spans:
        spans = [(0, "paragraph", 0, "", ())]
    top = _title_level(headings)
    title = next((t for lv, t in headings if lv == top), "") if top is not None else \
        (headings[0][1] if headings and headings[0][0] == 1 else "")
    return Document(text, title or root, "markdown", _blocks(text, spans, root, top), titled=bool(title))


def _row_cells(tokens: list[Any], i: int) -> list[str]:
    cells = []
    for tok in tokens[i + 1:]:
        if tok.type == "tr_close":
            break
        if tok.type == "inline":
            cells.append(inline_text(tok.content))
    return cells


_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Emphasis marks (CommonMark): "*" and "~~" anywhere, "_" only at a word's edge (snake_case is a word).
_EMPHASIS_RE = re.compile(r"(\*\*|\*|~~)(?=\S)(.+?)(?<=\S)\1|(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\3(?!\w)")
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")  # a code span is literal: nothing inside it is markup
_MARKER_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")


def inline_text(content: str) -> str:
    """Markdown inline source as plain text: links and images by their text, emphasis and code marks dropped."""
    out, at = [], 0
    for code in _CODE_SPAN_RE.finditer(content):
        out += [_prose(content[at:code.start()]), code.group(2).strip()]
        at = code.end()
    out.append(_prose(content[at:]))
    return " ".join("".join(out).split())


def _prose(text: str) -> str:
    """Inline Markdown outside code spans as plain text; a backslash-escaped mark is kept as itself."""
    text = re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: f"\0{ord(m.group(1))}\0", text)
    text = _LINK_RE.sub(r"\1", text)
    for _ in range(3):
        text = _EMPHASIS_RE.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(4), text)
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    return re.sub("\0(\\d+)\0", lambda m: chr(int(m.group(1))), text)


def block_plain(part_text: str, kind: str) -> str:
    """The words of one block without its Markdown (list marker, table pipes, emphasis, heading marks)."""
    if kind in ("row", "header"):
        return " | ".join(row_cells(part_text))
    lines = [ln.strip() for ln in part_text.split("\n") if ln.strip()]
    if kind == "heading":
        lines = [ln.lstrip("#").strip() for ln in lines if not re.fullmatch(r"[=-]+", ln)]
    elif kind == "item" and lines:
        lines[0] = _MARKER_RE.sub("", lines[0])
    lines = [ln[1:].strip() if ln.startswith(">") else ln for ln in lines]
    return inline_text(" ".join(lines))


def row_cells(part_text: str) -> list[str]:
    """The cells of a table row's first line (``| a | b |``)."""
    line = next((ln for ln in part_text.split("\n") if "|" in ln), part_text).strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [inline_text(c.strip()) for c in re.split(r"(?<!\\)\|", line)]


# --- plain text -------------------------------------------------------------------------------------


_ITEM_RE = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+\S")
_UNDERLINE_RE = re.compile(r"^\s*(=+|-+)\s*$")


def parse_plain(text: str, root: str) -> Document:
    """A plain-text document's blocks: paragraphs at blank lines, list items by their markers, short lines
    standing alone as headings."""
    spans: list[tuple[int, str, int, str, tuple[str, ...]]] = []
    headings: list[tuple[int, str]] = []
    paragraphs = [(m.start(), m.group(0)) for m in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text)]
    for n, (start, para) in enumerate(paragraphs):
        lines = para.rstrip("\n").split("\n")
        if len(lines) == 2 and _UNDERLINE_RE.match(lines[1]) and len(lines[0].strip()) <= 80:
            level = 1 if lines[1].strip().startswith("=") else 2
            headings.append((level, lines[0].strip()))
            spans.append((start, "heading", level, lines[0].strip(), ()))
            continue
        first = lines[0].strip()
        if first.startswith("#") and re.match(r"#{1,6}\s+\S", first):
            level = len(first) - len(first.lstrip("#"))
            title = first.lstrip("#").strip()
            headings.append((level, title))
            spans.append((start, "heading", level, title, ()))
            lines, start = lines[1:], start + len(lines[0]) + 1
            if not lines:
                continue
        elif len(lines) == 1 and _plain_heading(first) and n + 1 < len(paragraphs):
            title = first.rstrip(":").strip()
            headings.append((2, title))
            spans.append((start, "heading", 2, title, ()))
            continue
        offset = start
        kind = "paragraph"
        # A long run of lines with no blank line between them (a text file that never leaves one) is split
        # where a line ends a sentence, as a PDF's lines are: one part per paragraph, not per file.
        long_run = len(lines) > LONG_RUN_LINES
        for j, line in enumerate(lines):
            if _ITEM_RE.match(line):
                spans.append((offset, "item", 0, "", ()))
                kind = "item"
            elif j == 0 or (long_run and _SENTENCE_END_RE.search(lines[j - 1].rstrip())):
                spans.append((offset, "paragraph", 0, "", ()))
                kind = "paragraph"
            elif kind == "item" and not line.startswith((" ", "\t")):
                spans.append((offset, "paragraph", 0, "", ()))
                kind = "paragraph"
            offset += len(line) + 1
    if not spans:
        spans = [(0, "paragraph", 0, "", ())]
    top = _title_level(headings)
    title = next((t for lv, t in headings if lv == top), "") if top is not None else ""
    return Document(text, title or root, "text", _blocks(text, spans, root, top), titled=bool(title))


def _plain_heading(line: str) -> bool:
    words = line.rstrip(":").split()
    return (0 < len(words) <= 8 and len(line) <= 60 and not re.search(r"[.!?;,]$", line)
            and line[0].isupper() and not _ITEM_RE.match(line))


# --- HTML ---------------------------------------------------------------------------------------------


class _HTMLToMarkdown(HTMLParser):
    """HTML as Markdown lines; nothing is fetched (the parser only reads the string it is fed)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.line: list[str] = []
        self.skip = 0
        self.prefix = ""
        self.title: list[str] = []
        self.in_title = False
        self.pre = 0
        self.lists: list[list[Any]] = []  # [tag, items so far] of each open list
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.rows_in_table: list[int] = []

    def flush(self) -> None:
        words = " ".join("".join(self.line).split())
        if words:  # a list item's marker waits for its text (<li><p>text</p></li>)
            self.out.append(self.prefix + (words if self.prefix else _md_escape(words)))
            self.out.append("")
            self.prefix = ""
        self.line = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_SKIP:
            self.skip += 1
            return
        if tag == "title":
            self.in_title = True
        if self.skip:
            return
        if re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.prefix = "#" * int(tag[1]) + " "
        elif tag in ("ul", "ol"):
            self.flush()
            self.lists.append([tag, 0])
        elif tag == "li":
            self.flush()
            depth = "   " * max(0, len(self.lists) - 1)
            if self.lists and self.lists[-1][0] == "ol":
                self.lists[-1][1] += 1
                self.prefix = f"{depth}{self.lists[-1][1]}. "
            else:
                self.prefix = depth + "- "
        elif tag == "table":
            self.flush()
            self.rows_in_table.append(0)
        elif tag == "tr":
            self.flush()
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "pre":
            self.flush()
            self.pre += 1
            self.out.append("```")
        elif tag == "br":
            self.line.append(" ")
        elif tag in _HTML_BLOCKS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if tag == "title":
            self.in_title = False
        if self.skip:
            return
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()).replace("|", "\\|"))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row and any(self.row):
                self.out.append("| " + " | ".join(self.row) + " |")
                if self.rows_in_table and self.rows_in_table[-1] == 0:
                    self.out.append("|" + "---|" * len(self.row))
                if self.rows_in_table:
                    self.rows_in_table[-1] += 1
            self.row = None
        elif tag == "table":
            if self.rows_in_table:
                self.rows_in_table.pop()
            self.out.append("")
        elif tag == "pre":
            self.out.append("".join(self.line).strip("\n"))
            self.line = []
            self.out.append("```")
            self.out.append("")
            self.pre = max(0, self.pre - 1)
        elif tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif re.fullmatch(r"h[1-6]", tag) or tag == "li" or tag in _HTML_BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            return
        (self.cell if self.cell is not None else self.line).append(data)

    def markdown(self) -> str:
        self.flush()
        text = "\n".join(self.out)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def parse_html(text: str, root: str) -> Document:
    """An HTML page as Markdown, then read as Markdown; its ``<title>`` (else first heading) is the title."""
    reader = _HTMLToMarkdown()
    try:
        reader.feed(text)
        reader.close()
    except (AssertionError, ValueError) as exc:  # html.parser is lenient; a failure here is a broken page
        raise RecordError(f"not readable as HTML ({exc})") from exc
    markdown = reader.markdown()
    if not markdown.strip():
        raise RecordError("an HTML page with no text (only markup, scripts or styles)")
    doc = parse_markdown(markdown, root)
    own = " ".join("".join(reader.title).split())
    return Document(doc.text, own or doc.title, "html", doc.blocks, titled=bool(own) or doc.titled)


# --- PDF ------------------------------------------------------------------------------------------------


_SENTENCE_END_RE = re.compile(r"[.!?:;)\"”’]$")
_BULLET_RE = re.compile(r"^(?:[•·▪‣◦–-]|\d{1,3}[.)])\s+")


def parse_pdf(data: bytes, root: str, progress: Callable[[int, int], None] | None = None) -> Document:
    """A PDF's text, page by page, as Markdown: outline entries (or pages) as sections, paragraphs joined at
    sentence ends.

    Raises:
        RecordError: the file is not a readable PDF, is encrypted, has too many pages or no text.
    """
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise RecordError("reading PDF needs pypdf (pip install pypdf)") from exc
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise RecordError("an encrypted PDF; decrypt it first")
        pages = reader.pages
        count = len(pages)
        if count > MAX_PDF_PAGES:
            raise RecordError(f"{count} pages, over the limit of {MAX_PDF_PAGES}; split it")
        outline = _pdf_outline(reader)
        texts = []
        for i, page in enumerate(pages):
            texts.append(page.extract_text() or "")
            if progress:
                progress(i + 1, count)
        meta = reader.metadata
        own = str(meta.title).strip() if meta is not None and meta.title else ""
    except RecordError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError, RecursionError) as exc:
        raise RecordError(f"not a readable PDF ({type(exc).__name__}: {str(exc)[:120]})") from exc
    lines_out: list[str] = []
    for number, page_text in enumerate(texts, 1):
        titles = outline.get(number - 1, [])
        if not outline:
            lines_out += [f"## p{number}", ""]
        page_lines = [ln.strip() for ln in page_text.replace("\r", "\n").split("\n")]
        pending = list(titles)
        paragraph: list[str] = []

        def end_paragraph() -> None:
            if paragraph:
                lines_out.extend([_md_escape(" ".join(paragraph)), ""])
                paragraph.clear()

        for line in page_lines:
            if not line:
                end_paragraph()
                continue
            if pending and " ".join(line.split()).casefold() == " ".join(pending[0][1].split()).casefold():
                end_paragraph()
                level, title = pending.pop(0)
                lines_out += ["#" * level + " " + title, ""]
                continue
            if _BULLET_RE.match(line):
                end_paragraph()
                paragraph.append("- " + _BULLET_RE.sub("", line))
                continue
            paragraph.append(line)
            if _SENTENCE_END_RE.search(line):
                end_paragraph()
        end_paragraph()
        for level, title in pending:  # an outline entry whose title is not a line of its page: at its page's end
            lines_out += ["#" * level + " " + title, ""]
    markdown = "\n".join(lines_out).strip("\n") + "\n"
    if not any(t.strip() for t in texts):
        raise RecordError("a PDF with no extractable text (scanned pages need OCR first)")
    doc = parse_markdown(markdown, root)
    return Document(doc.text, own or doc.title, "pdf", doc.blocks, titled=bool(own) or doc.titled)


def _md_escape(line: str) -> str:
    """A line of PDF or HTML text that would read as Markdown markup (a heading, a quote, a table, a numbered
    list) kept as text, by a backslash escape (which :func:`inline_text` takes off again)."""
    if line.startswith("- "):
        return line
    line = re.sub(r"^(\d{1,9})([.)]\s)", r"\1\\\2", line)
    return re.sub(r"^([#>|=+*`~])", r"\\\1", line)


def _pdf_outline(reader: Any) -> dict[int, list[tuple[int, str]]]:
    """Page index -> [(heading level, title)] of the PDF's outline, in order; empty without one."""
    out: dict[int, list[tuple[int, str]]] = {}

    def walk(items: Any, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a broken destination: the entry is left out
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if title and page is not None and page >= 0:
                out.setdefault(page, []).append((min(level, 6), title))

    try:
        walk(reader.outline, 2)
    except Exception:  # noqa: BLE001 - an unreadable outline: pages are the sections
        return {}
    return out


# --- reading a file -------------------------------------------------------------------------------------


def document_format(path: Path) -> str:
    """``markdown``, ``html``, ``pdf`` or ``text`` by the file's extension."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return "pdf"
    if suffix in HTML_SUFFIXES:
        return "html"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    return "text"


def read_document(path: Path, data: bytes | str, progress: Callable[[int, int], None] | None = None) -> Document:
    """The document in ``data`` (the file's bytes for a PDF, its text otherwise), by ``path``'s extension.

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    root = Path(path.name).stem or path.name
    fmt = document_format(path)
    try:
        if fmt == "pdf":
            if not isinstance(data, bytes):
                raise RecordError("expected the PDF's bytes")
            if not data.lstrip()[:5] == b"%PDF-":
                raise RecordError("not a PDF (it does not start with %PDF-)")
            return parse_pdf(data, root, progress)
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if fmt == "html":
            return parse_html(text, root)
        if fmt == "markdown":
            return parse_markdown(text, root)
        return parse_plain(text, root)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from exc


# --- statements: the offline writers' reading of a block -----------------------------------------------

_PRONOUN_START_RE = re.compile(r"^(?:it|its|it's|they|their|them|this|these|that|those|he|she|his|her|there|here|"
                               r"both|each|all|the latter|the former)\b", re.I)
_STEPS_RE = re.compile(r"\b(?:how to|steps?|procedure|runbook|checklist|instructions?|playbook)\b", re.I)
_VERBISH_RE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|will|would|should|must|may|"
                         r"[a-z]+[^su\W]s|[a-z]+ed)\b")
_LABELLED_RE = re.compile(r"^[^:.!?]{1,40}:\s")  # "Backup contact: Idris Baptiste"
# A line that is a label and its value ("DBA: Priya Raman", "Meeting room: the back hall"): a short label that is
# no sentence (no sentence end, no clock time "10:00" before it), a colon, a value on the same line.
_LABEL_LINE_RE = re.compile(r"^(?P<label>[^\W\d_][^:.!?|]{0,39}?):\s+(?P<value>\S.*)$")


@dataclass(frozen=True)
class Statement:
    """One statement of a block: its record text (the sentence verbatim, with context when needed) and types."""

    text: str
    types: tuple[str, ...]  # procedural | episodic | semantic | episodic and semantic (an event that states a role)
    sentence: str

    @property
    def type(self) -> str:
        """The statement's first type (episodic for an event that also states a role)."""
        return self.types[0]


def statements(part: dict[str, Any]) -> list[Statement]:
    """The statements of one document part (a window variable: ``text``, ``block``, ``section``, ``header``).

    Headings, code, table headers and questions state nothing. A table row is its cells under their
    headers; a sentence that does not stand alone (a list item fragment, one opening with a pronoun) gets
    its section heading in front ("People — Ana Lima: data warehouse").
    """
    kind = str(part.get("block") or "paragraph")
    if kind in ("heading", "code", "header", "meta"):
        return []
    section = str(part.get("section") or "")
    if kind == "row":
        cells = row_cells(part["text"])
        header = [str(h) for h in part.get("header") or []]
        if not any(cells):
            return []
        pairs = [f"{h}: {c}" if h else c for h, c in zip(header + [""] * len(cells), cells)]
        # One statement per column after the first, each with the first (the row's key): "Systems — System:
        # pg-main; Size: 1.6 TB" holds one value, so the answer to "how much storage" is the one it gives.
        bodies = [f"{pairs[0]}; {pair}" for pair, cell in zip(pairs[1:], cells[1:]) if cell] if len(cells) > 2 \
            else ["; ".join(p for p, c in zip(pairs, cells) if c)]
        return [Statement(f"{section} — {body}" if section else body, ("semantic",), body) for body in bodies if body]
    lines = label_lines(part["text"]) if kind == "paragraph" else []
    if lines:
        where = f"{part.get('anchor') or ''} {section}"
        return [Statement(f"{section} — {line}" if section else line, _statement_types(line, kind, where), line)
                for line in lines]
    plain = block_plain(part["text"], kind)
    out = []
    sentences = split_sentences(plain, keep_quotes=True) if kind != "item" or len(plain) > 200 else [plain]
    for sentence in sentences:
        sentence = sentence.strip()
        words = sentence.split()
        if len(words) < 2 or sentence.endswith("?") or not re.search(r"[^\W\d_]", sentence):
            continue
        types = _statement_types(sentence, kind, f"{part.get('anchor') or ''} {section}")
        imperative = opens_with_imperative(sentence)
        stands_alone = (not _PRONOUN_START_RE.match(sentence) and
                        (kind != "item" or (len(words) >= 4 and not _LABELLED_RE.match(sentence)
                                            and (imperative or bool(_VERBISH_RE.search(sentence))))))
        text = sentence if stands_alone or not section else f"{section} — {sentence}"
        out.append(Statement(text, types, sentence))
    return out


def label_lines(text: str) -> list[str]:
    """The lines of a paragraph of consecutive "Label: value" lines, each a statement of its own ("Treasurer:
    Walter Brandt" / "Chair: Lea Berg" are two facts, not one sentence), or [] when the paragraph is not one: fewer
    than two lines, or a line that is not a label and its value (a sentence wrapped over lines)."""
    lines = [inline_text(ln.strip()) for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2 or not all(_LABEL_LINE_RE.match(ln) for ln in lines):
        return []
    return lines


def _statement_types(sentence: str, kind: str, where: str) -> tuple[str, ...]:
    """The sentence's types by the writers' one statement classifier (memrepo.write.offline.statement_types):
    one of procedural, episodic, semantic, or both of the last two for an event that also states who someone is
    or what they do ("Ana joined in May and now leads the data team": an event, and what Ana does now); a
    verbless item under a steps heading ("How to restore") is a step."""
    if kind == "item" and _STEPS_RE.search(where) and not _VERBISH_RE.match(sentence):
        return ("procedural",)
    types = statement_types(sentence, default="semantic")
    if "procedural" in types:
        return ("procedural",)
    return tuple(t for t in ("episodic", "semantic") if t in types) or ("semantic",)


def _document_parts(variables: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in variables["parts"] if str(p.get("text") or "").strip()]


def document_route_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """The offline router on a document window: the types its statements have (and the resource, always)."""
    allowed = variables.get("allowed") or ()
    found = {t for p in _document_parts(variables) for s in statements(p) for t in s.types}
    order = ("episodic", "semantic", "procedural")
    return {"types": [t for t in order if t in found and t in allowed], "reason": "offline rules (document)"}


def _of_type(variables: dict[str, Any], *types: str) -> list[tuple[dict[str, Any], Statement]]:
    return [(p, s) for p in _document_parts(variables) for s in statements(p)[:STATEMENTS_PER_PART]
            if set(s.types) & set(types) and not secrets(s.sentence)]  # sensitive values go to the vault only


def facts_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Semantic writer, offline, on a document window: every statement that states what holds (not an
    instruction, not an event that states nothing more), verbatim, citing its part. An instruction is a
    procedural record only: the graph extracts procedural records and recall returns them with their citations
    like facts (memrepo.graph.model.INDEXED_TYPES, memrepo.read.lanes.GRAPH_TYPES), so a semantic copy would
    only say it twice."""
    return {"facts": [{"anchors": [p["anchor"]], "text": s.text, "subject": None} for p, s in
                      _of_type(variables, "semantic")]}


def events_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Episodic writer, offline, on a document window: each dated statement, dated by the date it names."""
    events = []
    for p, s in _of_type(variables, "episodic"):
        day = section_day(str(p.get("anchor") or "")) or str(p.get("time") or variables.get("date") or "")[:10]
        event_time, status = event_timing(s.sentence, day or None)
        events.append({"anchors": [p["anchor"]], "text": s.text, "actor": None, "event_time": event_time,
                       "status": status})
    return {"events": events}


_SECTION_DAY_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})-(\d{2})-(\d{2})(?!\d)")


def section_day(anchor: str) -> str | None:
    """The day the innermost dated heading above a part names (``meetings/2026-01-12-Weekly-planning/Decisions:1``
    is 2026-01-12): meeting notes date what each meeting's section says by the meeting, not by the document."""
    from datetime import date

    for m in reversed(list(_SECTION_DAY_RE.finditer(anchor.rpartition(":")[0]))):
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
        except ValueError:
            continue
    return None


def instructions_offline(variables: dict[str, Any]) -> dict[str, Any]:
    """Procedural writer, offline, on a document window: each instruction, verbatim, with its section."""
    return {"steps": [{"anchors": [p["anchor"]], "text": s.text, "section": str(p.get("section") or "")}
                      for p, s in _of_type(variables, "procedural")]}


def digest(text: str) -> str:
    """The content key of a document's text: equal for an unchanged re-ingest whatever its file time."""
    return rec.content_hash("document", text, length=16)
