"""The server's pre-receive hook (`memrepo serve-hooks install`) and `memrepo validate` (issue 16).

A real bare remote with the hook installed, a real clone, real `git push`es.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo import records as rec
from memrepo.cli import cli

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLE = PROJECT / "examples" / "conversation.txt"


def git(root: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(root), *args], capture_output=True,
                          text=True, env=env)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done


def memrepo(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout if "--json" in args else result.output


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A bare remote with the pre-receive hook, and a clone whose ingest of a conversation was accepted."""
    tmp = tmp_path_factory.mktemp("server")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(PROJECT), os.environ.get("PYTHONPATH", "")) if p),
               HOME=str(tmp), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.com")
    old = os.environ.copy()
    os.environ.update(env)
    try:
        remote = tmp / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        code, out = memrepo("serve-hooks", "install", str(remote))
        assert code == 0 and "pre-receive" in out
        assert memrepo("clone", str(remote), str(tmp / "a"))[0] == 0
        a = tmp / "a"
        code, out = memrepo("--repo", str(a), "ingest", str(EXAMPLE))
        assert code == 0, out
        code, out = memrepo("--repo", str(a), "sync")  # a good push is accepted
        assert code == 0, out
        yield remote, a
    finally:
        os.environ.clear()
        os.environ.update(old)


def _a_record(a: Path, folder: str) -> tuple[str, str]:
    path = sorted(str(p.relative_to(a)) for p in (a / folder).rglob("*.md"))[0]
    return path, (a / path).read_text()


def _source_of(a: Path) -> str:
    return sorted(str(p.relative_to(a)) for p in (a / "sources").rglob("*.md"))[0]


def _bad(a: Path, kind: str) -> tuple[str, dict[str, str]]:
    """The file a bad push of ``kind`` is refused for, and the files (path -> text) that make it bad."""
    ep, text = _a_record(a, "episodic")
    head, body = text.split("\n---\n", 1)
    record = rec.parse(text.encode(), ep)
    if kind == "conflict markers":
        return ep, {ep: text.replace("\n---\n", "\n<<<<<<< HEAD\nstatus: done\n=======\nstatus: planned\n>>>>>>> b\n---\n", 1)}
    if kind == "front matter":
        return ep, {ep: head + "\nevent_time: [unclosed\n---\n" + body}
    if kind == "record at the wrong path":
        wrong = ep.replace("/2023/05/", "/2021/01/")
        return wrong, {wrong: text}
    if kind == "id of the wrong type":
        return ep, {ep: text.replace("type: episodic", "type: semantic").replace("status: done\n", "")}
    if kind == "citation of a missing source":
        return ep, {ep: text.replace(record.sources[0].split("#")[0], "src-2020-01-01-00000000")}
    if kind == "citation of a missing part":
        return ep, {ep: text.replace("#" + record.sources[0].split("#")[1], "#D99:99")}
    if kind == "broken Turtle":
        path = next(str(p.relative_to(a)) for p in (a / "graph" / "frames").rglob("*.ttl"))
        return path, {path: (a / path).read_text() + "\n<urn:x> <urn:y> \"unterminated .\n"}
    if kind == "graph file at the wrong path":
        path = "graph/frames/1999/01/ep-2023-05-02-01cd8fb0.ttl"
        src = next(str(p.relative_to(a)) for p in (a / "graph" / "frames").rglob("*.ttl"))
        return path, {path: (a / src).read_text()}
    if kind == "decision file":
        path = "graph/decisions/2024/01/run-1.ttl"
        return path, {path: "<urn:memrepo:anchor:a> <http://www.w3.org/2002/07/owl#sameAs> <urn:memrepo:anchor:b> .\n"}
    if kind == "plaintext vault value":
        record = rec.new_record("vault", "the alarm code is 4711", mention_time="2024-01-01T00:00:00Z")
        path = rec.record_path(record.id, "vault")
        return path, {path: rec.serialize(record).decode()}
    if kind == "memrepo.toml":
        return "memrepo.toml", {"memrepo.toml": (a / "memrepo.toml").read_text() + "\n[broken\n"}
    if kind == "source":
        src = _source_of(a)
        return src, {src: "no front matter at all\n"}
    raise AssertionError(kind)


KINDS = ["conflict markers", "front matter", "record at the wrong path", "id of the wrong type",
         "citation of a missing source", "citation of a missing part", "broken Turtle", "graph file at the wrong path",
         "decision file", "plaintext vault value", "memrepo.toml", "source"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_push_is_refused_naming_the_file(server, kind):
    remote, a = server
    path, files = _bad(a, kind)
    before = git(remote, "rev-parse", "main").stdout
    try:
        for name, text in files.items():
            (a / name).parent.mkdir(parents=True, exist_ok=True)
            (a / name).write_text(text)
        git(a, "add", "-A")
        git(a, "commit", "-qm", f"bad: {kind}")
        code, out = memrepo("--repo", str(a), "validate", "origin/main..HEAD")
        assert code == 1 and path in out, out  # the same checks, in the clone
        push = git(a, "push", "origin", "main", check=False)
        assert push.returncode != 0
        refused = [line for line in push.stderr.splitlines() if "memrepo: refused:" in line]
        assert refused and all(path in line for line in refused), push.stderr
        assert git(remote, "rev-parse", "main").stdout == before
    finally:
        git(a, "reset", "-q", "--hard", "origin/main")
        git(a, "clean", "-qfd")


def test_rewriting_or_deleting_main_is_refused(server):
    remote, a = server
    git(a, "commit", "-q", "--amend", "-m", "rewritten")
    try:
        push = git(a, "push", "--force", "origin", "main", check=False)
        assert push.returncode != 0 and "rewrites main's history" in push.stderr
        push = git(a, "push", "origin", "--delete", "main", check=False)
        assert push.returncode != 0 and "deleting the main branch is refused" in push.stderr
    finally:
        git(a, "reset", "-q", "--hard", "origin/main")


def test_validate_a_whole_revision_and_bad_input(server):
    remote, a = server
    code, out = memrepo("--repo", str(a), "validate", "--json")
    assert code == 0 and '"ok": true' in out
    code, out = memrepo("--repo", str(a), "validate", "nosuchbranch..HEAD")
    assert code == 1 and "revision 'nosuchbranch' not found" in out and "Traceback" not in out
    code, out = memrepo("serve-hooks", "install", str(a / "episodic"))
    assert code == 1 and "not a Git repository" in out or "pre-receive" in out


def test_the_hook_checks_a_push_of_1000_records_in_seconds(server, tmp_path):
    remote, a = server
    from memrepo.api import MemoryRepo

    with MemoryRepo.open(a) as repo:
        records = [repo.new_record("semantic", f"Fact number {i} about the garden shed", mention_time="2024-02-01T00:00:00Z")
                   for i in range(1000)]
        repo.add(records)
    started = time.perf_counter()
    push = git(a, "push", "origin", "main", check=False)
    seconds = time.perf_counter() - started
    assert push.returncode == 0, push.stderr
    print(f"pre-receive + push of 1,000 records: {seconds:.2f} s")
    assert seconds < 30


def test_the_ci_workflow_template_runs_validate_on_pull_requests():
    import yaml

    from memrepo.resources import data_dir

    workflow = yaml.safe_load((data_dir("templates") / "ci" / "memrepo-validate.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as True
    runs = [s.get("run", "") for s in workflow["jobs"]["validate"]["steps"]]
    assert any(r.startswith("memrepo validate \"origin/${{ github.base_ref }}..HEAD\"") for r in runs)
