"""Long documents: how fast a 300-page PDF is ingested offline (issue 32: "minutes, not hours").

    .venv/bin/python benchmarks/documents_ingest.py [--pages 300] [--keep DIR] [--no-graph]

Builds a PDF at run time (``tests/pdfmaker.py``, the builder the tests use too: Helvetica text, one outline entry per chapter; no
binary data is committed): chapters of ten pages, each page a heading line and paragraphs of invented
handbook sentences (owners, regions, sizes, costs, schedules, dated events, instructions), about 2.4 KB of
text a page. It is ingested into a fresh memory repository with the offline backend, through the
porcelain (``MemoryRepo.ingest``) as ``memrepo ingest`` does, with the after-commit graph step unless
``--no-graph``. Prints the seconds of each step (reading the PDF, writing and committing, the graph
step), pages per second over the whole ingest, and the seconds of a re-ingest of the unchanged file (a
no-op: no commit).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pdfmaker import build_pdf  # noqa: E402  (one PDF builder for the tests and this benchmark)

LINES_PER_PAGE = 40
NAMES = ("Priya Raman", "Tomasz Wójcik", "Ana Lima", "Kenji Sato", "Noor Haddad", "Lev Petrov", "Mara Keller",
         "Idris Baptiste", "Ben Okafor", "Yuki Tanabe")
REGIONS = ("eu-west-1", "us-east-2", "eu-central-1", "ap-south-1", "us-west-2")


def sentences(chapter: int, page: int) -> list[str]:
    """The paragraphs of one page: short invented sentences, each a fact, event or instruction."""
    out = []
    for k in range(6):
        n = chapter * 100 + page * 6 + k
        system = f"service-{chapter}-{page}-{k}"
        name = NAMES[n % len(NAMES)]
        out.append(f"{name} owns {system}, which runs in {REGIONS[n % len(REGIONS)]} on {3 + n % 9} nodes. "
                   f"{system} stores {10 + n % 90} GB and costs {200 + n % 700} EUR a month.")
        out.append(f"On 2026-0{1 + n % 9}-1{n % 10} the {system} database was moved to Postgres {13 + n % 4}.")
        out.append(f"Restart {system} with the deploy tool if its queue passes {1000 + n % 9000} messages.")
    return out


def wrap(text: str, width: int = 90) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])


def handbook(pages: int) -> tuple[bytes, int]:
    """The benchmark's PDF (with an outline: one entry per chapter of ten pages) and its text size in bytes."""
    content, chars = [], 0
    for p in range(pages):
        chapter, page = divmod(p, 10)
        lines = [f"Chapter {chapter + 1}" if page == 0 else f"Chapter {chapter + 1}, page {page + 1}"]
        for paragraph in sentences(chapter, page):
            lines.extend(wrap(paragraph))
        content.append(lines[:LINES_PER_PAGE])
        chars += sum(len(ln) + 1 for ln in lines[:LINES_PER_PAGE])
    outline = [(f"Chapter {chapter // 10 + 1}", chapter) for chapter in range(0, pages, 10)]
    data = build_pdf(content, "Operations handbook (benchmark)", outline, size=9, leading=11, origin=(50, 770))
    return data, chars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="keep the memory repository here instead of a temporary folder")
    parser.add_argument("--no-graph", action="store_true", help="leave out the after-commit steps (graph indexing)")
    args = parser.parse_args(argv)

    from memrepo.api import MemoryRepo
    from memrepo.write.ingest import parse_all

    workdir = Path(tempfile.mkdtemp(prefix="memrepo-docbench-"))
    try:
        start = time.perf_counter()
        data, chars = handbook(args.pages)
        pdf = workdir / "handbook.pdf"
        pdf.write_bytes(data)
        build_s = time.perf_counter() - start
        repo = MemoryRepo.init(args.keep or workdir / "memory")
        if args.no_graph:
            repo.ctx = repo.ctx.with_capabilities(after_commit={})
        start = time.perf_counter()
        parsed = parse_all([pdf], namespace=repo.settings.namespace, mention_time="2026-04-01T09:00:00+00:00")
        read_s = time.perf_counter() - start
        parts = sum(p.parts for p in parsed)
        done = [0]
        last = [time.perf_counter()]

        def progress(n: int) -> None:
            done[0] += n
            if time.perf_counter() - last[0] > 10:
                last[0] = time.perf_counter()
                print(f"  {done[0]}/{parts} parts written", file=sys.stderr)

        start = time.perf_counter()
        result = repo.ingest([pdf], mention_time="2026-04-01T09:00:00+00:00", parsed=parsed, progress=progress)
        ingest_s = time.perf_counter() - start
        total = read_s + ingest_s
        records = sum(result.records.values())
        print(f"PDF: {args.pages} pages, {len(data):,} bytes, {chars:,} characters of text (built in {build_s:.1f} s)")
        print(f"read (pypdf, parts): {read_s:.1f} s, {parts} parts ({args.pages / read_s:.1f} pages/s)")
        print(f"write, commit{'' if args.no_graph else ' and graph'}: {ingest_s:.1f} s, {records} records "
              f"({', '.join(f'{n} {t}' for t, n in sorted(result.records.items()))}), {len(result.commits)} commits")
        print(f"total: {total:.1f} s, {args.pages / total:.2f} pages/s, {records / total:.0f} records/s")
        for warning in result.warnings:
            print(f"warning: {warning}")
        start = time.perf_counter()
        again = repo.ingest([pdf], mention_time="2026-04-02T09:00:00+00:00")  # a later file time, the same text
        print(f"re-ingest of the unchanged PDF (read again): {time.perf_counter() - start:.1f} s, "
              f"{len(again.commits)} commits ({again.documents[0]['status']})")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
