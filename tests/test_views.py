"""Memorix views (DESIGN.md §4): typed trees, locators, Derivations, Environments, Quests.

Real repositories in tmp_path, real clones with git, the CLI through CliRunner.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import NotFoundError, RecordError
from memrepo.store.git import get_ref
from memrepo.views import derive as dv
from memrepo.views import quest as qv

RULE = b"# vLLM rules\n\nAlways pin the vLLM version. Use tensor parallel 2 on two GPUs.\n"


def doc(package: str, version: str, text: str) -> bytes:
    return f'---\npackage: {package}\nversion: "{version}"\n---\n# {package} {version}\n\n{text}\n'.encode()


def raw(repo: MemoryRepo, files: dict[str, bytes | None], message: str = "raw files") -> str:
    """Commit files as they are (what a hand edit plus `git commit` does)."""
    return repo.store.commit(files, message).decode()


def cli_run(repo_path, *args: str):
    return CliRunner().invoke(cli, ["--repo", str(repo_path), *args], catch_exceptions=False)


# --- typed trees ----------------------------------------------------------------------------------------------------


def test_ingest_to_stores_at_the_path_and_moves_only_that_trees_generation(repo):
    repo.place("resource/api.md", doc("api", "1.0", "The API."))
    resource_gen = get_ref(repo.store, "refs/memrepo/trees/resource")
    path, first = repo.place("rules/python/vllm.md", RULE)
    _, second = repo.place("rules/cpp/vllm.md", b"# C++\n\nBuild with -O2.\n")
    assert path == "rules/python/vllm.md" and first and second
    # Same file name elsewhere: a second path, the first one untouched.
    assert [f.path for f in repo.tree_files("rules/")] == ["rules/cpp/vllm.md", "rules/python/vllm.md"]
    assert repo.cat("rules/python/vllm.md")[1] == RULE
    # An ingest into rules/ moved rules/'s generation, not resource/'s.
    assert get_ref(repo.store, "refs/memrepo/trees/rules") == second
    assert get_ref(repo.store, "refs/memrepo/trees/resource") == resource_gen
    assert repo.tree_files("resource/")[0].generation == resource_gen
    # An older generation of the tree, by any commit-ish.
    assert [f.path for f in repo.tree_files(f"rules/@{first}")] == ["rules/python/vllm.md"]
    assert [f.path for f in repo.tree_files("rules/@main~1")] == ["rules/python/vllm.md"]
    # The work tree holds the files (git status clean).
    assert (repo.store.root / "rules/cpp/vllm.md").read_bytes().startswith(b"# C++")
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo.store.root, capture_output=True,
                          text=True).stdout == ""


def test_generation_catches_up_after_commits_made_elsewhere(repo):
    repo.place("rules/a.md", b"a\n")
    changed = raw(repo, {"rules/b.md": b"b\n"})  # a plain commit: no ref moved yet
    repo.remember("Mia moved to Lisbon", type="semantic")
    assert repo.tree_files("rules/")[0].generation == changed  # the commit that changed rules/, not HEAD


def test_a_rule_without_front_matter_is_a_record_found_by_search(repo):
    repo.place("rules/python/vllm.md", RULE)
    record = repo.get("rule-python--vllm")
    assert record.extra["kind"] == "rule" and "tensor parallel" in record.text
    hits = repo.search("tensor parallel GPUs")
    assert hits and hits[0].id == "rule-python--vllm"
    assert [r.id for r in repo.records("resource")] == ["rule-python--vllm"]
    recalled = repo.recall("How many GPUs for tensor parallel with vLLM?").to_dict()
    assert recalled["typed"][0]["id"] == "rule-python--vllm"
    assert not repo.doctor()


def test_resource_placed_keeps_package_and_version(repo):
    repo.place("resource/vllm/0.5.md", doc("vllm", "0.5.0", "Old API."))
    record = repo.get(repo.records("resource")[0].id)
    assert record.path == "resource/vllm/0.5.md" and record.extra["package"] == "vllm"
    assert record.extra["version"] == "0.5.0"


@pytest.mark.parametrize("target,message", [
    ("episodic/x.md", "give a file path under"),
    ("rules/../core/persona.md", "would escape"),
    ("rules/python/", "give a file path"),
    ("rules/x.txt", "end the path with .md"),
    ("procedural/skills/x.md", "procedural/skills/<name>/SKILL.md"),
])
def test_ingest_to_refuses_bad_targets_with_one_line(repo, tmp_path, target, message):
    src = tmp_path / "f.md"
    src.write_bytes(RULE)
    result = cli_run(repo.store.root, "ingest", "--to", target, str(src))
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert repo.store.head() is None or not repo.tree_files("rules/")


def test_cli_ls_cat_and_locator_errors(repo, tmp_path):
    src = tmp_path / "rule.md"
    src.write_bytes(RULE)
    assert cli_run(repo.store.root, "ingest", "--to", "rules/python/vllm.md", str(src)).exit_code == 0
    out = cli_run(repo.store.root, "ls", "rules/", "--json")
    assert [f["path"] for f in json.loads(out.output)] == ["rules/python/vllm.md"]
    assert cli_run(repo.store.root, "cat", "rules/python/vllm.md@latest").output == RULE.decode()
    for args, message in ((("cat", "rules/python/"), "is a folder"), (("cat", "rules/nope.md"), "no such file"),
                          (("ls", "graph/"), "must start with a typed tree"),
                          (("cat", "rules/python/vllm.md@nope"), "not found")):
        result = cli_run(repo.store.root, *args)
        assert result.exit_code == 1 and message in result.output, result.output
    two = cli_run(repo.store.root, "ingest", "--to", "rules/a.md", str(src), str(src))
    assert two.exit_code == 2


# --- Derivations ------------------------------------------------------------------------------------------------------


def test_derivation_id_follows_the_selected_files_in_two_clones(repo, tmp_path):
    repo.place("rules/python/vllm.md", RULE)
    repo.place("rules/cpp/vllm.md", b"# C++\n")
    d1, quest = repo.derive(["rules/python/"], intent="python rules")
    other_path = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.store.root), str(other_path)], check=True)
    other = MemoryRepo.open(other_path)
    try:
        assert other.derive(["rules/python/@latest"], intent="python rules")[0].id == d1.id
        # Commits that change nothing selected: same id, in both clones.
        repo.place("rules/cpp/vllm.md", b"# C++ changed\n")
        repo.place("resource/api.md", b"# API\n")
        other.place("rules/go/x.md", b"# Go\n")
        assert repo.derive(["rules/python/"], intent="python rules")[0].id == d1.id
        assert other.derive(["rules/python/"], intent="python rules")[0].id == d1.id
        # An ingest that changes a selected file: a new id, the same one in both clones.
        repo.place("rules/python/vllm.md", RULE + b"Use --max-model-len.\n")
        other.place("rules/python/vllm.md", RULE + b"Use --max-model-len.\n")
        d2 = repo.derive(["rules/python/"], intent="python rules")[0]
        assert d2.id != d1.id
        assert other.derive(["rules/python/"], intent="python rules")[0].id == d2.id
    finally:
        other.close()
    # Its tree is a Git tree kept reachable under refs/memrepo/; the manifest is committed.
    ref = get_ref(repo.store, f"refs/memrepo/derivations/{d2.id}")
    tree = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref], cwd=repo.store.root, capture_output=True,
                          text=True, check=True).stdout.split()
    assert tree == ["rules/python/vllm.md"]
    manifest = json.loads(repo.store.snapshot().read(f"views/derivations/{d2.id}.json"))
    assert manifest["ir"] == ["rules/python/@latest"] and manifest["inputs"][0]["name"] == "vllm.md"
    assert "generation" not in manifest["inputs"][0]  # per-clone: kept under the Git directory
    assert dv.load(repo.store, d2.id).inputs[0].generation == get_ref(repo.store, "refs/memrepo/trees/rules")
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.store.root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_summary_artifact_is_stored_once_per_derivation(repo):
    repo.place("rules/python/vllm.md", RULE)
    d, _ = repo.derive(["rules/python/vllm.md"], intent="vllm", summarize=True)
    summary = repo.store.snapshot().read(d.artifacts["summary"]).decode()
    assert "vllm.md: Always pin the vLLM version." in summary
    head = repo.store.head()
    again, quest = repo.derive(["rules/python/vllm.md"], intent="vllm", summarize=True)
    assert again.id == d.id and not again.created and quest.resolves == 2
    assert repo.store.head() == head  # the same resolve again is counted in the local log, not committed
    assert repo.quest("vllm").resolves == 2


def test_derive_errors_are_explained(repo):
    with pytest.raises(NotFoundError, match="has nothing yet"):
        repo.derive(["rules/"], intent="x")
    repo.place("rules/a.md", b"a\n")
    with pytest.raises(NotFoundError, match="no such file or folder"):
        repo.derive(["rules/missing/"], intent="x")
    with pytest.raises(RecordError, match="say in words"):
        repo.derive(["rules/"], intent="!!!")
    result = cli_run(repo.store.root, "derive", "rules/", "--intent", "x", "--json")
    assert result.exit_code == 0 and json.loads(result.output)["quest"] == "x"


# --- Environments: every conflict rule ----------------------------------------------------------------------------


def _placed(repo, env_id, pins=None):
    _, placed, left_out = repo.env_show(env_id, pins)
    return {p.name: p for p in placed}, left_out


def test_deeper_mount_wins(repo):
    repo.place("rules/python/vllm.md", RULE)
    raw(repo, {"rules/all/python/vllm.md": b"# generic\n"})
    deep = repo.derive(["rules/python/"], intent="python")[0]
    top = repo.derive(["rules/all/"], intent="all")[0]
    env = repo.env_compose([f"/python={deep.id}", f"/={top.id}"])
    placed, left_out = _placed(repo, env.id)
    assert placed["python/vllm.md"].path == "rules/python/vllm.md"
    assert placed["python/vllm.md"].rule == "deeper path" and placed["python/vllm.md"].candidates == 2
    assert left_out[0]["path"] == "rules/all/python/vllm.md"


def test_rules_over_resource_over_sources(repo):
    raw(repo, {"rules/x/guide.md": b"# rule\n", "resource/x/guide.md": b"---\nid: re-2023-05-02-aaaa1111\n"
               b"type: resource\nmention_time: 2023-05-02\n---\ndoc\n", "sources/x/guide.md": b"chat\n"})
    mixed = repo.derive(["sources/x/", "resource/x/", "rules/x/"], intent="mixed")[0]
    placed, left_out = _placed(repo, repo.env_compose([f"/={mixed.id}"]).id)
    assert placed["guide.md"].path == "rules/x/guide.md"
    assert placed["guide.md"].rule == "rules > resource > sources" and placed["guide.md"].candidates == 3
    docs_vs_chat = repo.derive(["sources/x/", "resource/x/"], intent="docs and chat")[0]
    placed, _ = _placed(repo, repo.env_compose([f"/={docs_vs_chat.id}"]).id)
    assert placed["guide.md"].path == "resource/x/guide.md"
    assert placed["guide.md"].rule == "rules > resource > sources"


def test_latest_generation_wins_and_override_beats_a_deeper_mount(repo):
    first = raw(repo, {"rules/a/api.md": b"# one\n", "rules/b/api.md": b"# one\n"})
    raw(repo, {"rules/b/api.md": b"# two\n"})  # usually the same second: ancestry, not the clock, decides
    both = repo.derive([f"rules/a/@{first}", "rules/b/"], intent="both")[0]
    placed, left_out = _placed(repo, repo.env_compose([f"/={both.id}"]).id)
    assert placed["api.md"].path == "rules/b/api.md" and placed["api.md"].rule == "latest"
    b = repo.derive(["rules/b/"], intent="b")[0]
    raw(repo, {"rules/c/x/api.md": b"# deep\n"})
    top = repo.derive(["rules/c/"], intent="c")[0]
    env = repo.env_compose([f"/x={b.id}", f"/={top.id}"])
    assert _placed(repo, env.id)[0]["x/api.md"].rule == "deeper path"
    env = repo.env_compose([f"/x={b.id}", f"/={top.id}"], [f"x/api.md={top.id[:8]}"])
    placed, _ = _placed(repo, env.id)
    assert placed["x/api.md"].path == "rules/c/x/api.md" and placed["x/api.md"].rule == "override"
    with pytest.raises(RecordError, match="naming one bound Derivation"):
        repo.env_compose([f"/x={b.id}"], ["x/api.md=ffff"])


def test_docs_pinned_by_lock_else_latest_version(repo):
    repo.place("resource/vllm/0.5.md", doc("vllm", "0.5.0", "Old."))
    repo.place("resource/vllm/0.10.md", doc("vllm", "0.10.1", "New."))
    repo.place("resource/vllm/0.6.md", doc("vllm", "0.6.0", "Mid."))
    d = repo.derive(["resource/vllm/"], intent="vllm docs")[0]
    env = repo.env_compose([f"/docs={d.id}"])
    placed, left_out = _placed(repo, env.id)
    assert list(placed) == ["docs/0.10.md"] and len(left_out) == 2
    assert "latest version: vllm 0.10.1" in left_out[0]["reason"]
    placed, left_out = _placed(repo, env.id, {"vllm": "0.6.0"})
    assert list(placed) == ["docs/0.6.md"] and all("lock pin" in x["reason"] for x in left_out)
    placed, _ = _placed(repo, env.id, {"vllm": "9.9"})
    assert placed == {}  # never another version's docs


def test_environment_id_is_the_hash_of_its_bindings(repo):
    repo.place("rules/a.md", b"a\n")
    d = repo.derive(["rules/"], intent="a")[0]
    e1 = repo.env_compose([f"/x={d.id[:6]}"])
    assert repo.env_compose([f"/x={d.id}"]).id == e1.id
    assert repo.env_compose([f"/y={d.id}"]).id != e1.id
    assert json.loads(repo.store.snapshot().read(f"views/environments/{e1.id}.json"))["bindings"] == [
        {"mount": "/x", "derivation": d.id}]
    result = cli_run(repo.store.root, "env", "show", e1.id[:8], "--json")
    assert json.loads(result.output)["files"][0]["rule"] == "only candidate"
    for bad in ("/x", "/../x=" + d.id, "/.git=" + d.id):
        result = cli_run(repo.store.root, "env", "compose", bad)
        assert result.exit_code == 1 and "expected /MOUNT=DERIVATION" in result.output
    assert "not found" in cli_run(repo.store.root, "env", "compose", "/x=abcdef").output


# --- Quests -----------------------------------------------------------------------------------------------------------


def test_quest_goes_stale_on_exactly_the_commits_that_touch_its_inputs(repo):
    repo.place("rules/python/vllm.md", RULE)
    repo.place("rules/cpp/x.md", b"cpp\n")
    repo.place("resource/api.md", b"# api\n")
    _, quest = repo.derive(["rules/python/", "resource/api.md"], intent="serve")
    pinned_at = repo.store.head().decode()
    repo.derive([f"rules/cpp/x.md@{pinned_at}"], intent="pinned cpp")

    def stale() -> dict[str, bool]:
        return {q.slug: q.stale_since is not None for q in repo.quests()}

    assert stale() == {"serve": False, "pinned-cpp": False}
    repo.place("rules/cpp/y.md", b"other\n")
    repo.remember("Mia moved to Lisbon", type="semantic")
    assert stale()["serve"] is False
    commit = repo.place("rules/cpp/x.md", b"cpp changed\n")[1]
    assert stale() == {"serve": False, "pinned-cpp": False}  # pinned to a generation: never stale
    touching = repo.place("resource/api.md", b"# api v2\n")[1]
    repo.place("rules/cpp/z.md", b"z\n")
    assert repo.quest("serve").stale_since == touching
    assert stale() == {"serve": True, "pinned-cpp": False}
    # Refresh: a new resolve, the old one kept in the history with what changed.
    repo.quest_refresh("serve")
    quest = repo.quest("serve")
    assert quest.stale_since is None and quest.resolves == 2 and len(quest.history) == 2
    assert quest.history[1]["changed"] == ["resource/api.md"]
    added = repo.place("rules/python/new.md", b"new rule\n")[1]  # a new file under a folder it selects
    assert repo.quest("serve").stale_since == added
    assert commit


def test_quest_is_greppable_text_and_searchable(repo):
    repo.place("rules/python/vllm.md", RULE)
    repo.derive(["rules/python/"], intent="Serve models with vLLM")
    text = (repo.store.root / "views/quests/serve-models-with-vllm.md").read_text()
    assert "intent: Serve models with vLLM" in text and "rules/python/@latest" in text
    found = repo.quest_search("VLLM")
    assert [q.slug for q, _ in found] == ["serve-models-with-vllm"]
    assert json.loads(cli_run(repo.store.root, "quest", "list", "--json").output)[0]["stale"] is False
    assert "rules/python/@latest" in cli_run(repo.store.root, "quest", "show", "serve-models-with-vllm").output
    result = cli_run(repo.store.root, "quest", "show", "nope")
    assert result.exit_code == 1 and "quest 'nope' not found" in result.output
    repo.place("rules/python/vllm.md", RULE + b"more\n")
    declined = CliRunner().invoke(cli, ["--repo", str(repo.store.root), "quest", "refresh", "serve-models-with-vllm"],
                                  input="n\n")
    assert declined.exit_code == 1 and "~ rules/python/vllm.md" in declined.output
    assert repo.quest("serve-models-with-vllm").resolves == 1
    accepted = cli_run(repo.store.root, "quest", "refresh", "serve-models-with-vllm", "--yes")
    assert accepted.exit_code == 0 and repo.quest("serve-models-with-vllm").resolves == 2


def test_staleness_cache_extends_one_commit_at_a_time(repo):
    repo.place("rules/a.md", b"a\n")
    repo.derive(["rules/"], intent="a")
    for i in range(3):
        repo.place(f"resource/{i}.md", b"x\n")
        assert repo.quest("a").stale_since is None
    touching = repo.place("rules/a.md", b"a2\n")[1]
    repo.place("resource/9.md", b"x\n")
    assert qv.staleness(repo.store, qv.quests(repo.store)) == {"a": touching}
    assert json.loads((repo.store.state_dir / qv.STALE_CACHE).read_text())["stale"] == {"a": touching}
