"""The write path: Meta Memory Manager, the six typed writers, ingestion parsers.

Graph indexing registers into :data:`AFTER_INGEST` (functions ``(repo, record_ids) -> None``),
which :meth:`memrepo.api.MemoryRepo.add` runs after every record commit; failures there are
logged and never undo records.
"""

from memrepo.write.hooks import AFTER_INGEST, run_after_ingest, run_after_write

__all__ = ["AFTER_INGEST", "run_after_ingest", "run_after_write"]
