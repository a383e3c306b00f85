"""Several processes writing to one repository at once lose nothing (compare-and-swap commits)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from memrepo.api import MemoryRepo

WRITER = textwrap.dedent(
    """
    import sys
    from memrepo.api import MemoryRepo
    path, writer = sys.argv[1], int(sys.argv[2])
    repo = MemoryRepo.open(path)
    repo.ctx = repo.ctx.with_capabilities(after_commit={})  # the record commits alone: this is about the store's CAS
    for i in range(50):
        record = repo.new_record(
            "episodic", f"writer {writer} note {i}", mention_time="2023-05-02", source=f"w{writer}", position=str(i)
        )
        assert repo.add([record]).written == [record.id]
    repo.close()
    """
)


def test_eight_processes_writing_fifty_records_each_lose_nothing(repo):
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(repo.root), str(w)], stderr=subprocess.PIPE, text=True)
        for w in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    fresh = MemoryRepo.open(repo.root)
    texts = {r.text for r in fresh.records()}
    assert texts == {f"writer {w} note {i}" for w in range(8) for i in range(50)}
    history = fresh.log()
    assert len(history) == 401  # init + one commit per record
    assert all(len(c.parents) <= 1 for c in history)  # linear: every loser rebuilt on the new tip
    # Commits of writers that lost a race are left dangling, as git leaves them; gc removes them.
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo.root, capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout.strip() == "", fsck.stdout + fsck.stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo.root, capture_output=True, text=True)
    assert status.stdout == ""
    assert fresh.doctor() == []
