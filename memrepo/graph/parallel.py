"""The offline rules of a large graph step in worker processes (issue 18).

The offline extractor reads one record and nothing else (:func:`memrepo.graph.extract.offline_replies`),
so a catch-up of many records computes those replies in worker processes, one per CPU, while this
process parses the records ahead and canonicalizes them in order as the replies come back: the same
replies in the same order, hence the same graph files, byte for byte.

A worker is ``python -m memrepo.graph.parallel``: a fresh interpreter that imports the extractor and
nothing of the caller (not its threads, not its main script), reads one JSON line of records per chunk
on its standard input and writes one JSON line of replies. Below :data:`MIN_RECORDS` records, on one
CPU, or for a model endpoint, the rules run in this process as before. A worker that fails on a
record, or one that dies, only sends those records back to the rules here, where a failure is
handled per record as it always was.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from memrepo.graph.extract import OfflineReplies, offline_replies
from memrepo.resources import usable_cpus

log = logging.getLogger(__name__)

MIN_RECORDS = 400  # fewer records than this are extracted here: starting the workers costs more than they save
MAX_WORKERS = 4
CHUNK = 32  # records per hand-off: enough to pay for it, few enough to keep every worker busy

Item = tuple[dict[str, Any], bool]  # a record's extractor variables, and whether it shares an image
Replies = list[OfflineReplies | None]  # per item; None: the caller runs the rules for it itself


def extract_chunk(items: list[Item]) -> Replies:
    """The offline replies of each item, None where the rules raised (the caller runs that record again)."""
    out: Replies = []
    for variables, visual in items:
        try:
            out.append(offline_replies(variables, visual))
        except Exception:  # noqa: BLE001 - the caller runs this record again and reports its failure
            out.append(None)
    return out


class _Worker:
    """One ``python -m memrepo.graph.parallel`` process; one chunk at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memrepo.graph.parallel"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=_worker_environment())

    def run(self, items: list[Item]) -> Replies:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(items).encode("utf-8") + b"\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"an extraction worker exited (code {self.proc.poll()})")
        return [None if r is None else OfflineReplies(*r) for r in json.loads(line)]

    def end_input(self) -> None:
        """End of input: the worker exits once it has answered what it was given."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        self.end_input()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _worker_environment() -> dict[str, str]:
    """This process's environment, with this memrepo's folder first on ``PYTHONPATH`` if a fresh interpreter
    would not find it there (a source checkout, or a folder the caller added to ``sys.path``), so the worker
    runs this code. An installed memrepo's site-packages is left where Python puts it, after the standard
    library."""
    import site

    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    installed = {str(Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if package_root not in installed:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    return env


class ExtractionPool:
    """Worker processes that compute offline replies for chunks of records, handed out in order."""

    def __init__(self, workers: int):
        self._workers: list[_Worker] = []
        try:
            for _ in range(workers):
                self._workers.append(_Worker())
        except OSError:
            for worker in self._workers:
                worker.close()
            raise
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)
        self._threads: ThreadPoolExecutor | None = ThreadPoolExecutor(workers, thread_name_prefix="memrepo-extract")

    @classmethod
    def open(cls, records: int, backend: Any) -> "ExtractionPool | None":
        """A pool for ``records`` records extracted by ``backend``, or None where the rules should run here."""
        offline = backend is None or getattr(backend, "offline", False)
        workers = min(MAX_WORKERS, usable_cpus())
        if not offline or records < MIN_RECORDS or workers < 2:
            return None
        try:
            return cls(workers)
        except OSError as exc:
            log.warning("graph: could not start extraction workers (%s); extracting in this process", exc)
            return None

    def _run(self, items: list[Item]) -> Replies:
        worker = self._idle.get()
        try:
            return worker.run(items)
        finally:
            self._idle.put(worker)

    def submit(self, items: list[Item]) -> list[tuple[Future[Replies] | None, int]]:
        """Hand ``items`` to the workers; one (future, size) per chunk, in order (future None: run them here)."""
        out: list[tuple[Future[Replies] | None, int]] = []
        for start in range(0, len(items), CHUNK):
            chunk = items[start:start + CHUNK]
            out.append((self._threads.submit(self._run, chunk) if self._threads is not None else None, len(chunk)))
        return out

    def results(self, future: Future[Replies] | None, size: int) -> Replies:
        """The replies of one chunk (None for each record the rules should run here for)."""
        if future is None:
            return [None] * size
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a worker died (killed, out of memory): the rest runs here
            if self._threads is not None:
                log.warning("graph: an extraction worker stopped (%s); extracting the rest in this process", exc)
                self.close()
            return [None] * size

    def close(self) -> None:
        if self._threads is not None:
            threads, self._threads = self._threads, None
            threads.shutdown(wait=False, cancel_futures=True)
            for worker in self._workers:
                worker.end_input()  # all at once: they exit side by side
            for worker in self._workers:
                worker.close()
            threads.shutdown(wait=True)


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """A worker's loop: a JSON line of items in, a JSON line of replies out, until the input ends."""
    for line in stdin:
        replies = extract_chunk([(variables, bool(visual)) for variables, visual in json.loads(line)])
        stdout.write(json.dumps([None if r is None else list(r) for r in replies]).encode("utf-8") + b"\n")
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
