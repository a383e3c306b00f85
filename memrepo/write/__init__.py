"""The write path: Meta Memory Manager, the six typed writers, ingestion parsers.

Every write commits through :func:`commit_records` (what the porcelain's ``add``
does), which then runs the after-commit steps of ``ctx.capabilities.after_commit``
(functions ``(ctx, record_ids) -> None``: graph extraction, skills proposal); failures
there are logged and never undo records.
"""

from memrepo.write.commit import AddResult, commit_records, new_record
from memrepo.write.hooks import run_after_write

__all__ = ["AddResult", "commit_records", "new_record", "run_after_write"]
