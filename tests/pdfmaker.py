"""A minimal PDF built at run time, for the tests and the PDF ingest benchmark alike (issue 32).

One builder, so the runs that time PDF ingest (``benchmarks/documents_ingest.py``) and the tests that check it
(``tests/test_documents.py``) read the same kind of file: one page per list of lines, Helvetica with the WinAnsi
encoding, each page's content stream compressed, an optional metadata title and outline (written by pypdf, the
reader memrepo itself uses). It imports nothing of memrepo.
"""

from __future__ import annotations

import io
import zlib


def build_pdf(pages: list[list[str]], title: str | None = None, outline: list[tuple[str, int]] | tuple = (),
              *, size: int = 11, leading: int = 14, origin: tuple[int, int] = (72, 760)) -> bytes:
    """A PDF with one page per list of lines (one text line each).

    Args:
        pages: each page's lines, in order (text in Windows-1252).
        title: the document's metadata title.
        outline: (heading, page index from 0) entries of its outline.
        size: the font size in points; leading: the distance between lines; origin: where the first line starts.
    """
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_id = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for lines in pages:
        ops = [b"BT /F1 %d Tf %d TL %d %d Td" % (size, leading, *origin)]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(b"(" + escaped.encode("cp1252") + b") Tj T*")
        ops.append(b"ET")
        stream = zlib.compress(b"\n".join(ops))
        content = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_id, content, font)))
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref))
    data = out.getvalue()
    if title is None and not outline:
        return data
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    if title:
        writer.add_metadata({"/Title": title})
    for heading, page in outline:
        writer.add_outline_item(title=heading, page_number=page)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
