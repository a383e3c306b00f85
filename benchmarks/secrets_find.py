"""The secret detector's cost on ordinary prose (issue 37): the push hook runs ``sensitive.find`` on every blob.

    .venv/bin/python benchmarks/secrets_find.py [--against REV] [--repeat 7] [--json]

Times ``find`` over 10,000 turns of LoCoMo's dev conversations (read from ../shared/data
at run time; the example conversation when that is absent) one at a time, and over one
blob of 3,000 of them joined by newlines (a page of prose holding questions, as a
conversation's source file does). With ``--against REV`` the detector of that revision
(``git show REV:memrepo/sensitive.py``, loaded on its own: it imports only the standard
library) is timed interleaved with this one, best of ``--repeat`` each, so that a loaded
machine slows both alike.

    {"turns": 10000, "blob_kib": 343, "this": {"turns_ms": .., "blob_ms": ..}, "REV": {...}}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path
from types import ModuleType
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
LOCOMO = PROJECT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def turns() -> list[str]:
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text())
        return [t["text"] for conv in data for key, session in conv["conversation"].items()
                if key.startswith("session_") and isinstance(session, list) for t in session]
    lines = (PROJECT / "examples" / "conversation.txt").read_text().splitlines()
    return [line.split(": ", 1)[1] for line in lines if ": " in line and not line.startswith("#")]


def load(name: str, source: str) -> ModuleType:
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", help="a revision whose detector is timed too")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    detectors = {"this": load("sensitive_this", (PROJECT / "memrepo" / "sensitive.py").read_text())}
    if args.against:
        old = subprocess.run(["git", "show", f"{args.against}:memrepo/sensitive.py"], cwd=PROJECT, check=True,
                             capture_output=True, text=True).stdout
        detectors[args.against] = load("sensitive_against", old)
    every = turns()
    sample = (every * (10_000 // len(every) + 1))[:10_000]
    blob = "\n".join(every[:3000])
    times: dict[str, dict[str, list[float]]] = {name: {"turns_ms": [], "blob_ms": []} for name in detectors}
    for _ in range(args.repeat):
        for name, module in detectors.items():
            times[name]["turns_ms"].append(timeit.timeit(lambda: [module.find(t) for t in sample], number=1) * 1000)
            times[name]["blob_ms"].append(timeit.timeit(lambda: module.find(blob), number=1) * 1000)
    out: dict[str, Any] = {"turns": len(sample), "blob_kib": len(blob.encode()) // 1024,
           **{name: {k: round(min(v), 1) for k, v in t.items()} for name, t in times.items()},
           "findings": {name: sum(len(m.find(t)) for t in sample) for name, m in detectors.items()}}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name in detectors:
        print(f"{name:>12}: {out[name]['turns_ms']:7.1f} ms for {out['turns']} turns, "
              f"{out[name]['blob_ms']:6.1f} ms for one {out['blob_kib']} KiB blob, "
              f"{out['findings'][name]} findings")


if __name__ == "__main__":
    main()
