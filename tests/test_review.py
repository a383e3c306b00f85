"""Review branches from the command line and from the viewer's Review page (Streamlit AppTest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dream_fixtures import BARE, MOUNT, add_semantic, volcano_cosine, volcano_repo
from memrepo.api import MemoryRepo
from memrepo.cli import cli

APP = str(Path(__file__).resolve().parents[1] / "viewer" / "app.py")


def run(root: Path, *args: str) -> tuple[int, str]:
    """Exit status, and stdout for --json commands (stdout and stderr interleaved otherwise)."""
    result = CliRunner().invoke(cli, ["--repo", str(root), *args])
    return result.exit_code, result.stdout if "--json" in args else result.output


def test_cli_dream_prints_branch_counts_and_caps_then_approve(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    code, out = run(repo.root, "dream")
    assert code == 0, out
    assert "caps: intermediate 80" in out
    assert "pairs: considered 1, verified 1, merged 1, rejected 0, skipped by cap 0, cached 0" in out
    assert f'merge "Vesuvius" -> "Mount Vesuvius" (location, cosine {volcano_cosine(repo)})' in out
    branch = out.split("review branch: ")[1].split()[0]

    code, out = run(repo.root, "review", "list", "--json")
    assert code == 0 and [r["branch"] for r in json.loads(out)] == [branch]
    code, out = run(repo.root, "review", "show", branch)
    assert code == 0
    assert "se-" in out and MOUNT in out and BARE in out

    code, out = run(repo.root, "review", "approve", branch)
    assert code == 0 and f"approved {branch}: merge commit" in out
    assert repo.graph_anchor("Vesuvius").anchor.name == "Mount Vesuvius"
    code, out = run(repo.root, "review", "list")
    assert out.strip() == "no open review branches"
    code, out = run(repo.root, "review", "approve", branch)
    assert code == 1 and "not found" in out


def test_cli_reject_records_the_rejection_on_main_and_deletes_the_branch(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    code, out = run(repo.root, "dream", "--json")
    assert code == 0
    branch = json.loads(out)["branch"]
    head = repo.store.head()
    code, out = run(repo.root, "review", "reject", branch, "--reason", "the volcano and a town of its name")
    assert code == 0 and "rejections recorded" in out
    assert repo.store.head() != head and f"refs/heads/{branch}".encode() not in repo.store.repo.refs
    assert repo.graph_anchor("Vesuvius").anchor.name == "Vesuvius"  # nothing merged
    files = [c.path for c in repo.changes(repo.store.head().decode())]
    assert len(files) == 1 and files[0].startswith("graph/decisions/") and files[0].endswith("-rejected.ttl")
    # the pair comes back in a later frontier and is answered from the cache
    add_semantic(repo, "Mia compared the crater of Vesuvius with photos of Mount Vesuvius.", "2023-06-01T10:00:00")
    repo.index_graph()
    code, out = run(repo.root, "dream", "--json")
    counts = json.loads(out)["counts"]
    assert counts["cached"] == 1 and counts["verified"] == 0


def test_cli_dream_apply_and_bad_input(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    code, out = run(repo.root, "dream", "--apply")
    assert code == 0 and "applied: merged into the current branch" in out
    assert len(repo.log(limit=1)[0].parents) == 2
    code, out = run(repo.root, "dream")
    assert code == 0 and "nothing new since the last run" in out
    code, out = run(repo.root, "review", "reject", "main")
    assert code == 1 and "not a review branch" in out


def _branch(repo: MemoryRepo, name: str, files: dict[str, bytes], message: str) -> str:
    """A branch ``dream/<name>`` forked from HEAD with one commit of ``files``."""
    ref = f"refs/heads/dream/{name}".encode()
    repo.store.repo.refs[ref] = repo.store.head()
    repo.store.commit(files, message, ref=ref)
    return f"dream/{name}"


SKILL = b"---\nname: tea\ndescription: How Mia makes tea.\n---\nBoil water, wait two minutes.\n"


def test_review_list_shows_only_reviewable_branches_and_approve_refuses_the_others(tmp_path):
    repo = volcano_repo(tmp_path / "m")
    dreamed = repo.dream().branch
    notes = _branch(repo, "notes", {"rules/notes.md": b"# my own notes\n"}, "my own branch")
    skills = _branch(repo, "skills-2026-01-01-abcd1234", {"procedural/skills/tea/SKILL.md": SKILL}, "skill edit")
    # main moves on after the forks: a skill added on main is no change of the dream/notes branch
    repo.store.commit({"procedural/skills/walk/SKILL.md": SKILL.replace(b"tea", b"walk")}, "skill on main")

    code, out = run(repo.root, "review", "list", "--json")
    listed = {r["branch"]: r for r in json.loads(out)}
    assert code == 0 and sorted(listed) == sorted([dreamed, skills])
    assert listed[skills]["skills"] == ["procedural/skills/tea/SKILL.md"] and listed[skills]["reviewable"]
    code, out = run(repo.root, "review", "list")
    assert code == 0 and notes not in out.split("note:")[0]
    assert f"1 other dream/ branch(es) not listed" in out and notes in out and "--all" in out
    code, out = run(repo.root, "review", "list", "--all", "--json")
    marked = {r["branch"]: r for r in json.loads(out)}
    assert marked[notes]["reviewable"] is False and "no Dream decision file" in marked[notes]["reason"]

    code, out = run(repo.root, "review", "approve", notes)
    assert code == 1 and "changes nothing under procedural/skills/" in out
    code, out = run(repo.root, "review", "reject", notes)
    assert code == 1 and f"refs/heads/{notes}".encode() in repo.store.repo.refs  # not ours to delete
    code, out = run(repo.root, "review", "approve", skills)
    assert code == 0, out
    assert repo.store.snapshot().read("procedural/skills/tea/SKILL.md") == SKILL


# --- the viewer -----------------------------------------------------------------------------

st_testing = pytest.importorskip("streamlit.testing.v1")


def review_page(monkeypatch, root: Path, allow: bool):
    monkeypatch.setenv("MEMREPO_VIEW_REPO", str(root))
    monkeypatch.setenv("MEMREPO_VIEW_ALLOW_REVIEW", "1" if allow else "")
    at = st_testing.AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("review.py").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def unescaped(markdown: str) -> str:
    """What the viewer's inert Markdown (every punctuation character backslash-escaped) shows."""
    import re

    return re.sub(r"\\(.)", r"\1", markdown)


def shown(at) -> str:
    return "\n".join(str(e.value) for kind in ("title", "markdown", "caption", "info", "success", "code")
                     for e in getattr(at, kind))


def test_viewer_review_page_shows_evidence_and_is_read_only_by_default(monkeypatch, tmp_path):
    repo = volcano_repo(tmp_path / "m")
    branch = repo.dream().branch
    at = review_page(monkeypatch, repo.root, allow=False)
    text = shown(at)
    assert "Mount Vesuvius" in text and f"cosine {volcano_cosine(repo)}" in text
    assert at.dataframe[0].value["branch"].tolist() == [branch]
    assert not [b for b in at.button if b.label.startswith(("Approve", "Reject"))]
    assert "memrepo view --allow-review" in text


def test_viewer_approves_with_allow_review(monkeypatch, tmp_path):
    repo = volcano_repo(tmp_path / "m")
    branch = repo.dream().branch
    at = review_page(monkeypatch, repo.root, allow=True)
    next(b for b in at.button if b.label.startswith("Approve")).click().run()
    assert not at.exception, at.exception
    assert MemoryRepo.open(repo.root).review_list() != []  # not yet: it asks first, saying what it merges
    confirm = at.warning[0].value
    assert f"`{branch}` into `main`" in confirm and "1 anchor merge(s)" in confirm
    next(b for b in at.button if b.label == "Merge now").click().run()
    assert not at.exception, at.exception
    assert any(f"Approved {branch}" in unescaped(s.value) for s in at.success)
    assert MemoryRepo.open(repo.root).review_list() == []
    assert repo.graph_anchor("Vesuvius").anchor.name == "Mount Vesuvius"


def test_viewer_rejects_with_allow_review(monkeypatch, tmp_path):
    repo = volcano_repo(tmp_path / "m")
    branch = repo.dream().branch
    at = review_page(monkeypatch, repo.root, allow=True)
    reject = next(b for b in at.button if b.label.startswith("Reject"))
    assert reject.disabled  # a rejection needs its reason
    at.text_area(key=f"reason-{branch}").set_value("one is the volcano, the other a town at its foot").run()
    next(b for b in at.button if b.label.startswith("Reject")).click().run()
    assert not at.exception, at.exception
    assert any(f"Rejected {branch}" in unescaped(s.value) for s in at.success)
    assert "one is the volcano, the other a town at its foot." in repo.log(limit=1)[0].message
    assert f"refs/heads/{branch}".encode() not in repo.store.repo.refs
    assert repo.graph_anchor("Vesuvius").anchor.name == "Vesuvius"
