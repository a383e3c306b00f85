"""Team memory (issue 16): clone, sync, review across clones, a merge in progress.

Real bare remotes and clones in tmp_path, driven by the real `git` and the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dream_fixtures import add_semantic, dream_branch
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import RepositoryError

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _memrepo_importable(monkeypatch):
    """Hooks run `python -m memrepo` in other processes: they must import this checkout."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p))


def run(*args: str, cwd: Path | None = None) -> tuple[int, str]:
    """Exit status and output (stdout, or stdout+stderr when no --json) of one memrepo command."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout if "--json" in args else result.output


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip() + done.stderr.strip()


def bare(tmp_path: Path, name: str = "remote.git") -> Path:
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)  # HEAD names master (git's default)
    return path


def remember(root: Path, text: str, type_: str = "semantic", when: str = "2024-03-01T10:00:00Z") -> str:
    with MemoryRepo.open(root) as repo:
        record = repo.new_record(type_, text, mention_time=when)
        repo.add([record])
        return record.id


def tree(root: Path) -> str:
    return git(root, "rev-parse", "HEAD^{tree}")


def test_clone_an_empty_remote_then_a_remote_whose_head_names_missing_master(tmp_path):
    remote = bare(tmp_path)
    code, out = run("clone", str(remote), str(tmp_path / "a"))
    assert code == 0, out
    assert "has no branch yet" in out
    a = tmp_path / "a"
    assert git(a, "symbolic-ref", "--short", "HEAD") == "main"
    assert (a / "memrepo.toml").exists()
    hooks = [(a / ".git" / "hooks" / n).read_text() for n in ("post-commit", "post-merge", "post-checkout")]
    assert all(sys.executable in h and "command -v memrepo" in h for h in hooks)
    assert run("--repo", str(a), "sync")[0] == 0  # publishes main
    remember(a, "Hiroshi Tanabe works at Sony")

    # The bare remote's HEAD still names master, which does not exist: git clone checks nothing out.
    assert git(remote, "symbolic-ref", "HEAD") == "refs/heads/master"
    code, out = run("clone", str(remote), str(tmp_path / "b"))
    assert code == 0, out
    assert "names master, which does not exist there: checked out main" in out
    b = tmp_path / "b"
    assert git(b, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert git(b, "rev-list", "--max-parents=0", "HEAD") == git(a, "rev-list", "--max-parents=0", "HEAD")

    # A plain git clone, then memrepo init: the remote's branch, never an unrelated root commit.
    git(tmp_path, "clone", "-q", str(remote), "c")
    c = tmp_path / "c"
    code, out = run("init", str(c))
    assert code == 0, out
    assert "checked out main" in out and "ready" in out
    assert git(c, "rev-list", "--max-parents=0", "HEAD") == git(a, "rev-list", "--max-parents=0", "HEAD")
    assert "memrepo" in (c / ".git" / "hooks" / "post-merge").read_text()
    code, out = run("init", str(c))
    assert code == 0 and "nothing changed" in out


def test_init_in_a_clone_installs_the_missing_hooks(tmp_path):
    remote = bare(tmp_path)
    run("clone", str(remote), str(tmp_path / "a"))
    run("--repo", str(tmp_path / "a"), "sync")
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), "b")
    b = tmp_path / "b"
    assert not (b / ".git" / "hooks" / "post-commit").exists()
    code, out = run("init", str(b))
    assert code == 0 and "installed the Git hooks post-commit, post-merge, post-checkout" in out


def test_clone_refuses_a_repository_that_is_not_a_memory_and_leaves_nothing(tmp_path):
    src = tmp_path / "src"
    git(tmp_path, "init", "-q", "src")
    (src / "f.txt").write_text("x")
    git(src, "add", "f.txt")
    git(src, "commit", "-qm", "x")
    code, out = run("clone", str(src), str(tmp_path / "dst"))
    assert code == 1 and "not a memory repository" in out and "Traceback" not in out
    assert not (tmp_path / "dst").exists()
    code, out = run("clone", str(tmp_path / "nowhere"), str(tmp_path / "dst"))
    assert code == 1 and "cannot clone" in out


def test_hook_falls_back_to_memrepo_on_the_path_when_its_python_is_gone(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m", python="/nonexistent/venv/bin/python")
    repo.close()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "ran"
    script = bin_dir / "memrepo"
    script.write_text(f'#!/bin/sh\necho "$@" > "{marker}"\nexec "{sys.executable}" -m memrepo "$@"\n')
    script.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    root = tmp_path / "m"
    (root / "note.txt").write_text("x")
    subprocess.run(["git", "-C", str(root), "add", "note.txt"], check=True, env=env)
    done = subprocess.run(["git", "-C", str(root), "commit", "-qm", "plain commit"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stderr == ""
    deadline = time.time() + 30
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert "hook post-commit" in marker.read_text()

    # Neither the Python nor a memrepo on the PATH: said on stderr, and the commit still succeeds.
    (root / "note.txt").write_text("y")
    env["PATH"] = "/usr/bin:/bin"
    done = subprocess.run(["git", "-C", str(root), "commit", "-qam", "again"], capture_output=True, text=True, env=env)
    assert done.returncode == 0
    assert "neither /nonexistent/venv/bin/python nor a `memrepo` on the PATH exists" in done.stderr


def two_clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = bare(tmp_path)
    run("clone", str(remote), str(tmp_path / "a"))
    assert run("--repo", str(tmp_path / "a"), "sync")[0] == 0
    run("clone", str(remote), str(tmp_path / "b"))
    return remote, tmp_path / "a", tmp_path / "b"


def test_sync_merges_both_ways_and_a_teammates_memory_is_found_right_after(tmp_path):
    remote, a, b = two_clones(tmp_path)
    remember(a, "Mia moved to Lisbon in May")
    remember(b, "Jonas plays the cello in an orchestra")
    code, out = run("--repo", str(a), "sync", "--json")
    assert code == 0 and json.loads(out)["pushed"] >= 1
    code, out = run("--repo", str(b), "sync", "--json")
    result = json.loads(out)
    assert code == 0 and result["fetched"] >= 1 and result["merge"] and result["pushed"] >= 1
    assert result["indexes"]["actions"]  # brought up to what was merged
    code, out = run("--repo", str(a), "sync")
    assert code == 0 and "fast-forward" in out
    assert tree(a) == tree(b) == git(remote, "rev-parse", "main^{tree}")
    with MemoryRepo.open(a) as repo:
        assert any("cello" in h.summary for h in repo.search("cello orchestra"))
        assert repo.doctor() == []
    code, out = run("--repo", str(a), "sync")
    assert code == 0 and "nothing new, nothing to push" in out


def test_graph_files_of_the_same_record_from_two_clones_never_conflict(tmp_path):
    # What each clone extracted depends on what it had seen: two different graph files for one record.
    remote, a, b, path, ours, theirs = two_extractions(tmp_path, "semantic")
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync", "--json")
    assert code == 0, out
    assert json.loads(out)["resolved"] == []  # Git's merge ran memrepo's merge driver on it (graph/**)
    import hashlib

    blob = lambda d: hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest()  # noqa: E731
    merged = (b / path).read_bytes()
    assert merged + b"\n" == min(ours, theirs, key=blob) or merged in (ours, theirs)  # as checked out: one more newline
    assert b"<<<<<<<" not in merged and not git(b, "status", "--porcelain", "--untracked-files=no")
    run("--repo", str(a), "sync")
    assert tree(a) == tree(b)


def test_two_different_notes_md_ingested_in_two_clones_both_stay(tmp_path):
    remote, a, b = two_clones(tmp_path)
    for root, body in ((a, "# Notes\n\nThe boiler is serviced every March.\n"),
                       (b, "# Notes\n\nThe car needs new tyres before winter.\n")):
        doc = root.parent / f"in-{root.name}" / "notes.md"
        doc.parent.mkdir()
        doc.write_text(body)
        code, out = run("--repo", str(root), "ingest", str(doc))
        assert code == 0, out
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync", "--json")
    assert code == 0, out
    assert any(r["path"] == "resource/notes.md" for r in json.loads(out)["resolved"])
    files = sorted(p.name for p in (b / "resource").glob("notes*.md"))
    assert len(files) == 2 and "notes.md" in files
    texts = " ".join((b / "resource" / f).read_text() for f in files)
    assert "boiler" in texts and "tyres" in texts
    with MemoryRepo.open(b) as repo:
        assert repo.doctor() == []


def test_a_text_conflict_stops_with_the_files_named_and_memrepo_writes_nothing_until_resolved(tmp_path):
    remote, a, b = two_clones(tmp_path)
    for root, text in ((a, "Prefers tea."), (b, "Prefers coffee.")):
        code, out = run("--repo", str(root), "remember", text, "--type", "core", "--label", "human")
        assert code == 0, out
    assert run("--repo", str(a), "sync")[0] == 0
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "Traceback" not in out
    assert "core/human.md" in out and "git add" in out and "git merge --abort" in out
    assert (b / ".git" / "MERGE_HEAD").exists()
    with MemoryRepo.open(b) as repo:
        problems = [str(p) for p in repo.doctor()]
        assert any(p.startswith(".git/MERGE_HEAD: a Git merge is unresolved") for p in problems)
        with pytest.raises(RepositoryError, match="merge is in progress"):
            repo.add([repo.new_record("semantic", "Anything", mention_time="2024-01-01T00:00:00Z")])
    code, out = run("--repo", str(b), "remember", "x", "--type", "semantic")
    assert code == 1 and "merge is in progress" in out
    code, out = run("--repo", str(b), "sync")
    assert code == 1 and "merge is in progress" in out

    # Committing the markers is caught by doctor (and refused by the server hook, tests/test_validate.py).
    git(b, "commit", "-qam", "oops")
    with MemoryRepo.open(b) as repo:
        assert any(p.path == "core/human.md" and "conflict marker" in p.message for p in repo.doctor())


def test_a_rejection_recorded_in_one_clone_is_honoured_in_every_clone(tmp_path):
    remote, a, b = two_clones(tmp_path)
    branch = dream_branch(a)
    # What a pull request on a Git host shows: the decision file, names before ids in each block.
    path = git(a, "diff", "--name-only", "main", branch)
    decision = git(a, "show", f"{branch}:{path}")
    block = decision.split("a mr:MergeDecision")[1]
    assert block.index('rdfs:label "merge \\"Vesuvius\\" -> \\"Mount Vesuvius\\"') < block.index("mr:alias")
    code, out = run("--repo", str(a), "sync", "--json")
    assert code == 0 and json.loads(out)["review_branches"] == [branch]
    assert run("--repo", str(b), "sync")[0] == 0
    code, out = run("--repo", str(b), "review", "list", "--json")
    listed = json.loads(out)
    assert [r["branch"] for r in listed] == [f"origin/{branch}"] and listed[0]["remote"] == "origin"

    code, out = run("--repo", str(b), "review", "reject", branch, "--delete-remote", "--reason", "two places")
    assert code == 0, out
    assert git(remote, "branch", "--list", branch) == ""  # gone on the remote
    assert run("--repo", str(b), "sync")[0] == 0

    assert run("--repo", str(a), "sync")[0] == 0
    assert git(remote, "branch", "--list", branch) == ""  # not published again
    code, out = run("--repo", str(a), "review", "list")
    assert code == 0 and "no open review branches" in out
    code, out = run("--repo", str(a), "review", "approve", branch)
    assert code == 1 and "was rejected on main" in out and "--force" in out
    code, out = run("--repo", str(a), "review", "approve", branch, "--force")
    assert code == 0, out


def test_sync_bad_input_is_one_clear_line(tmp_path):
    MemoryRepo.init(tmp_path / "alone").close()
    code, out = run("--repo", str(tmp_path / "alone"), "sync")
    assert code == 1 and "no remote to sync with: add one with `git remote add origin URL`" in out
    assert "Traceback" not in out
    remote, a, b = two_clones(tmp_path)
    code, out = run("--repo", str(a), "sync", "nosuchremote")
    assert code == 1 and out.startswith("Error: git fetch failed:") and len(out.strip().splitlines()) == 1
    (a / "memrepo.toml").write_text((a / "memrepo.toml").read_text() + "\n# local edit\n")
    code, out = run("--repo", str(a), "sync")
    assert code == 1 and "uncommitted changes in memrepo.toml" in out


def skills_branch(root: Path, tmp_path: Path) -> str:
    """A dream/skills-... branch distilled from the failed purchase of the paper's Figure 3."""
    from test_skills import PURCHASE, SHOPPING

    with MemoryRepo.open(root) as repo:
        repo.store.commit({"procedural/skills/online-shopping/SKILL.md": SHOPPING.encode()}, "A hand-written skill")
        session = tmp_path / f"session-{root.name}.json"
        session.write_text(json.dumps(PURCHASE))
        repo.ingest([session])
    code, out = run("--repo", str(root), "dream", "--skills", "--json")
    assert code == 0, out
    return json.loads(out)["branch"]


def test_a_skills_branch_rejected_in_one_clone_is_honoured_in_every_clone(tmp_path):
    remote, a, b = two_clones(tmp_path)
    branch = skills_branch(a, tmp_path)
    assert branch.startswith("dream/skills-")
    code, out = run("--repo", str(a), "sync", "--json")
    assert code == 0 and json.loads(out)["review_branches"] == [branch]
    assert run("--repo", str(b), "sync")[0] == 0
    code, out = run("--repo", str(b), "review", "list", "--json")
    (listed,) = json.loads(out)
    assert listed["branch"] == f"origin/{branch}" and listed["skill_changes"][0]["skill"] == "online-shopping"
    code, out = run("--repo", str(b), "review", "show", f"origin/{branch}")  # the SKILL.md diff and its evidence
    assert code == 0 and "+3. Compare the total with the budget before checkout." in out, out

    code, out = run("--repo", str(b), "review", "reject", branch, "--delete-remote", "--reason", "not our shop")
    assert code == 0, out
    assert git(remote, "branch", "--list", branch) == ""  # gone on the remote
    assert run("--repo", str(b), "sync")[0] == 0

    assert run("--repo", str(a), "sync")[0] == 0  # a still has its local branch: sync must not re-publish it
    assert git(remote, "branch", "--list", branch) == ""
    code, out = run("--repo", str(a), "review", "list")
    assert code == 0 and "no open review branches" in out
    code, out = run("--repo", str(a), "review", "approve", branch)
    assert code == 1 and "was rejected on main" in out and "--force" in out
    assert git(a, "show", "HEAD:procedural/skills/online-shopping/SKILL.md").count("Compare the total") == 0


def two_extractions(tmp_path: Path, type_: str = "episodic") -> tuple[Path, Path, Path, str, bytes, bytes]:
    """Two clones that remembered the same text and extracted it differently (issue 16's case).

    ``ours`` and ``theirs`` are the two graph files as checked out (``git show`` drops the last newline).
    """
    from memrepo.graph.model import graph_path

    remote, a, b = two_clones(tmp_path)
    text, when = "Hiroshi Tanabe joined Sony in 2019", "2024-03-01T10:00:00Z"
    ids = [remember(root, text, type_, when=when) for root in (a, b)]
    assert ids[0] == ids[1]
    path = graph_path(ids[0])
    for root, label in ((a, "Hiroshi"), (b, "Hiroshi Tanabe")):
        with MemoryRepo.open(root) as repo:
            data = repo.snapshot.read(path).replace(b'"Hiroshi Tanabe"', f'"{label}"'.encode())
            data = data.replace(b"@prefix", f"# seen as {label}\n@prefix".encode(), 1)
            repo.store.commit({path: data}, "graph as this clone sees it")
    ours, theirs = (git(r, "show", f"HEAD:{path}").encode() + b"\n" for r in (a, b))
    assert ours != theirs
    return remote, a, b, path, ours, theirs


def test_a_plain_git_pull_merges_graph_files_with_memrepos_merge_driver(tmp_path):
    import hashlib

    remote, a, b, path, ours, theirs = two_extractions(tmp_path)
    for root in (a, b):
        assert (root / ".gitattributes").read_text().count("graph/** merge=memrepo") == 1
        assert "-m memrepo merge-driver %O %A %B %P" in git(root, "config", "merge.memrepo.driver")
    git(a, "push", "-q", "origin", "main")
    done = subprocess.run(["git", "-C", str(b), "-c", "user.name=t", "-c", "user.email=t@t", "pull", "--no-rebase",
                           "--no-edit", "-q", "origin", "main"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    blob = lambda d: hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest()  # noqa: E731
    assert (b / path).read_bytes() == min(ours, theirs, key=blob)  # the rule `memrepo sync` applies
    assert not git(b, "status", "--porcelain", "--untracked-files=no")
    code, out = run("--repo", str(b), "doctor")
    assert code == 0, out
    # the same choice in the other clone whichever way it merges
    assert run("--repo", str(b), "sync")[0] == 0 and run("--repo", str(a), "sync")[0] == 0
    assert tree(a) == tree(b)


def test_init_in_an_older_clone_and_doctor_fix_install_the_merge_driver(tmp_path):
    remote, a, b = two_clones(tmp_path)
    git(b, "config", "--unset", "merge.memrepo.driver")
    code, out = run("--repo", str(b), "doctor")
    assert code == 1 and "merge.memrepo.driver" in out
    code, out = run("--repo", str(b), "doctor", "--fix")
    assert "merge.memrepo.driver" in git(b, "config", "--get-regexp", "merge")
    code, out = run("--repo", str(b), "doctor")
    assert code == 0, out
    git(b, "config", "--unset", "merge.memrepo.driver")
    code, out = run("init", str(b))
    assert code == 0 and "merge.memrepo.driver" in out, out


def test_merge_driver_leaves_a_file_it_cannot_parse_in_conflict(tmp_path):
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("a\n")
    ours.write_text("a\n<not turtle\n")
    theirs.write_text("a\n<also not turtle\n")
    done = CliRunner().invoke(cli, ["merge-driver", str(base), str(ours), str(theirs), "graph/decisions/x.ttl"])
    assert done.exit_code == 1 and "could not be merged automatically" in done.stderr
    assert "<<<<<<<" in ours.read_text()
    done = CliRunner().invoke(cli, ["merge-driver", str(base), str(tmp_path / "missing"), str(theirs), "graph/x.ttl"])
    assert done.exit_code == 1 and "merge-driver: cannot read" in done.stderr and done.exception is None or \
        isinstance(done.exception, SystemExit)


RACE_HOOK = """#!/bin/sh
# The first push: a teammate's push (prepared in refs/race/main) lands while this one is being received,
# between Git's advertisement and its update of main - the window two real pushes race in.
marker="$(pwd)/raced"
if [ ! -e "$marker" ]; then
    : > "$marker"
    env -u GIT_QUARANTINE_PATH git update-ref refs/heads/main "$(git rev-parse refs/race/main)"
fi
exit 0
"""


def test_sync_retries_a_push_that_raced_another_and_loses_nothing(tmp_path):
    remote, a, b = two_clones(tmp_path)
    theirs = remember(b, "Jonas plays the cello in an orchestra")
    git(b, "push", "-q", "origin", "main:refs/race/main")  # the teammate's commit, in the remote, not yet on main
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(RACE_HOOK)
    hook.chmod(0o755)
    ours = remember(a, "Mia moved to Lisbon in May")
    code, out = run("--repo", str(a), "sync", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert result["attempts"] == 2 and result["pushed"] >= 2 and result["merge"]
    assert (remote / "raced").exists()
    main = git(remote, "rev-parse", "main")
    assert main == git(a, "rev-parse", "HEAD")
    for record_id in (ours, theirs):  # nothing lost: both memories on the remote's main
        assert git(remote, "log", "--oneline", "-1", "main", "--", f"*{record_id}.md")


def test_one_decision_recorded_in_two_clones_at_once_merges_to_one_sides_file():
    """Two reviewers rejecting the same run at once write the same decision path with their own names: the
    merge keeps one side's file whole (the same choice in every clone), never a union the server would refuse
    as an edited decision."""
    from memrepo.team.sync import resolve_graph

    def decision(reviewer: str) -> bytes:
        return (f'<urn:run:r1> <urn:mr:reviewer> "{reviewer}" .\n'
                f'<urn:run:r1> <urn:mr:verdict> "rejected" .\n').encode()

    path = "graph/decisions/2026/12/r1-rejected.ttl"
    ana, ben = decision("Ana"), decision("Ben")
    merged, how = resolve_graph(path, ana, ben)
    assert merged in (ana, ben) and resolve_graph(path, ben, ana)[0] == merged and "kept the file" in how
    from memrepo.graph.rdf import TurtleError

    with pytest.raises(TurtleError):  # the merge driver leaves such a file in conflict
        resolve_graph(path, ana, b"<not turtle\n")
