"""Procedural AutoDream on sessions as agents write them (issue 33): SKILL.md files the Agent Skills reference
validator accepts, old-format skills still read, agent runs in OpenAI tool-call shape ingested, and a release
procedure learned from six natural sessions (no cue phrases)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.dream.skills import pending_sessions

NOW = "2026-05-10T10:00:00Z"


def agentskills() -> str:
    """The reference validator's command, or skip with the reason."""
    found = shutil.which("agentskills") or str(Path(sys.executable).parent / "agentskills")
    if not Path(found).exists():
        pytest.skip("the skills-ref package (command agentskills) is not installed: pip install -e '.[test]'")
    return found


def validate(folder: Path) -> None:
    """Every skill folder under ``folder`` passes ``agentskills validate``."""
    command = agentskills()
    skills = sorted(p.parent for p in folder.glob("*/SKILL.md"))
    assert skills, f"no skill exported under {folder}"
    for skill in skills:
        done = subprocess.run([command, "validate", str(skill)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def export(repo_dir: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["--repo", str(repo_dir), "skills", "export", str(out)])
    assert result.exit_code == 0, result.output


OLD_FORMAT = """---
name: online-shopping
description: Buy things online for the user within their budget
id: skill-online-shopping
version: 3
experiences: [pr-2026-05-01-aaaaaaaa]
---
# Online shopping

## Steps

1. Search with the budget as the price filter.
"""


def test_an_old_format_skill_is_read_and_rewritten_in_the_format_the_validator_accepts(tmp_path):
    from memrepo.dream.curate import parse_skill

    skill = parse_skill("online-shopping", OLD_FORMAT.encode())
    assert skill.version == 3 and not skill.hand_written and skill.own["experiences"] == ["pr-2026-05-01-aaaaaaaa"]
    skill.set_own(version=4)
    folder = tmp_path / "out" / "online-shopping"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill.render())
    meta = yaml.safe_load((folder / "SKILL.md").read_text().split("---\n")[1])
    assert set(meta) == {"name", "description", "metadata"}
    assert meta["metadata"] == {"experiences": ["pr-2026-05-01-aaaaaaaa"], "id": "skill-online-shopping",
                                "version": 4}
    validate(tmp_path / "out")
    # the file as it was fails the validator: the flow-style list and the top-level fields
    old = tmp_path / "old" / "online-shopping"
    old.mkdir(parents=True)
    (old / "SKILL.md").write_text(OLD_FORMAT)
    done = subprocess.run([agentskills(), "validate", str(old)], capture_output=True, text=True)
    assert done.returncode == 1


# --- six release sessions, as an agent with tools writes them (no cue phrases) ----------------------------


def call(n: int, tool: str, **arguments: object) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n}", "type": "function",
         "function": {"name": tool, "arguments": json.dumps(arguments, sort_keys=True)}}]}


def reply(n: int, tool: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": f"call_{n}", "name": tool, "content": content}


def release(version: str, day: int, steps: list[tuple[str, dict, str]], closing: str) -> list[dict]:
    messages: list[dict] = [
        {"role": "system", "content": "You are a release engineer with shell tools."},
        {"role": "user", "content": f"Please release version {version} of acme-cli to the package index."}]
    for n, (tool, args, answer) in enumerate(steps, 1):
        messages += [call(n, tool, **args), reply(n, tool, answer)]
    messages.append({"role": "assistant", "content": closing})
    for i, m in enumerate(messages):
        m["timestamp"] = f"2026-05-{day:02d}T09:{i:02d}:00Z"
    return messages


def good(version: str) -> list[tuple[str, dict, str]]:
    return [("bump_version", {"version": version}, f"version set to {version}"),
            ("run_tests", {}, "412 passed in 38.2s"),
            ("build_package", {}, f"built dist/acme_cli-{version}.tar.gz"),
            ("upload_package", {"repository": "pypi"}, "uploaded to https://upload.example.org"),
            ("push_tag", {"tag": f"v{version}"}, f"pushed tag v{version}")]


def release_sessions() -> list[dict]:
    """Three successes (OpenAI runs with a reward) and three failures (memrepo's JSON, outcome stated), each
    failure saying in its own words which step went wrong."""
    ok = [{"messages": release(v, d, good(v), f"Version {v} is on the package index and tagged."), "reward": 1.0}
          for v, d in (("2.4.0", 1), ("2.4.1", 3), ("2.5.0", 5))]
    early_tag = release("2.5.1", 7, [
        ("bump_version", {"version": "2.5.1"}, "version set to 2.5.1"),
        ("push_tag", {"tag": "v2.5.1"}, "pushed tag v2.5.1"),
        ("run_tests", {}, "Error: 3 failed, 409 passed")],
        "The release went wrong: I pushed the tag v2.5.1 before the test suite had passed, so the tag now points "
        "at a commit that does not pass.")
    no_tests = release("2.6.0", 9, [
        ("bump_version", {"version": "2.6.0"}, "version set to 2.6.0"),
        ("build_package", {}, "built dist/acme_cli-2.6.0.tar.gz"),
        ("upload_package", {"repository": "pypi"}, "uploaded to https://upload.example.org"),
        ("push_tag", {"tag": "v2.6.0"}, "pushed tag v2.6.0")],
        "Users report that 2.6.0 cannot be imported. The upload went out without running the tests first, so "
        "the broken import was not caught.")
    wrong_index = release("2.6.1", 11, [
        ("bump_version", {"version": "2.6.1"}, "version set to 2.6.1"),
        ("run_tests", {}, "412 passed in 37.9s"),
        ("build_package", {}, "built dist/acme_cli-2.6.1.tar.gz"),
        ("upload_package", {"repository": "testpypi"}, "uploaded to https://test.upload.example.org"),
        ("push_tag", {"tag": "v2.6.1"}, "pushed tag v2.6.1")],
        "The upload step was wrong: it sent the package to the test index instead of the real one, so 2.6.1 is "
        "not installable.")
    failed = [{"task": "Release version 2.5.1 of acme-cli to the package index.", "messages": early_tag,
               "outcome": "failure: the tag points at a failing commit"},
              {"task": "Release version 2.6.0 of acme-cli to the package index.", "messages": no_tests,
               "outcome": "failure: the published package is broken"},
              {"task": "Release version 2.6.1 of acme-cli to the package index.", "messages": wrong_index,
               "outcome": "failure: the package is on the wrong index"}]
    return ok + failed


def ingest_all(repo: MemoryRepo, tmp_path: Path, sessions: list[dict]) -> None:
    for i, s in enumerate(sessions):
        path = tmp_path / f"release-{i}.json"
        path.write_text(json.dumps(s))
        repo.ingest([path])


RELEASE_ORDER = ["bump_version", "run_tests", "build_package", "upload_package", "push_tag"]


def steps_and_cautions(text: str) -> list[tuple[str, list[str]]]:
    """The numbered steps of a SKILL.md (the tool each calls) with the cautions under each."""
    body = text.split("## Steps", 1)[1].split("\n## ", 1)[0]
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line[:1].isdigit():
            out.append((line.split("`")[1], []))
        elif line.strip().startswith("- Caution"):
            out[-1][1].append(line.strip())
    return out


def the_skill(repo: MemoryRepo, rev: str) -> tuple[str, str]:
    (path,) = [p for p, _ in repo.store.snapshot(rev).walk("procedural/skills") if p.endswith("/SKILL.md")]
    return path, repo.store.snapshot(rev).read(path).decode()


def test_agent_runs_in_tool_call_shape_are_task_sessions_and_info_is_not_read(tmp_path):
    from memrepo.write.parsers import parse_file

    runs = [dict(s, info={"task": {"actions": ["kept-out-marker"]}}) for s in release_sessions()[:2]]
    runs.append({"traj": runs[0]["messages"]})  # no reward, no outcome: unclear
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    parsed = parse_file(path)
    assert parsed.format == "task" and len(parsed.sources) == 3
    first = parsed.sources[0]
    parts = {p.anchor: p for p in first.parts}
    assert parts["task"].text == "Please release version 2.4.0 of acme-cli to the package index."
    assert parts["outcome"].meta["status"] == "success" and parts["outcome"].text == "success: reward 1"
    assert parsed.sources[2].parts[-1].meta["status"] == "unclear"
    assert '"name": "bump_version"' in parts["t3"].text and parts["t4"].meta["role"] == "tool"
    assert all("kept-out-marker" not in p.text for s in parsed.sources for p in s.parts)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([dict(runs[0], reward="high")]))
    with pytest.raises(rec.RecordError, match=r"bad\.json.*'reward' must be a number"):
        parse_file(bad)


def test_the_distiller_reads_the_calls_the_outcome_and_the_stated_cause(tmp_path):
    from memrepo.dream import distill
    from memrepo.write.parsers import parse_file

    path = tmp_path / "failed.json"
    path.write_text(json.dumps(release_sessions()[3]))
    (source,) = parse_file(path).sources
    variables = distill.variables(source, "Release it.", "failure")
    reply = distill.offline(variables)
    assert reply["outcome"] == "failure"
    assert [a["tool"] for a in reply["actions"]] == ["bump_version", "push_tag", "run_tests"]
    assert reply["actions"][1]["arguments"] == {"tag": "v2.5.1"}
    assert reply["actions"][2]["error"]["text"] == "Error: 3 failed, 409 passed"  # the tool's reply
    assert reply["cause"]["text"].startswith("The release went wrong: I pushed the tag v2.5.1 before")
    (experience,) = reply["experiences"]  # no cue phrase in the session: the experience comes from its actions
    assert experience["lesson"] == "avoid" and experience["quotes"] == [reply["cause"]]
    checked = distill.check(reply, source)  # every quote is found verbatim in the session
    assert checked.cause == (reply["cause"]["part"], reply["cause"]["text"]) and len(checked.experiences) == 1
    assert [a["tool"] for a in checked.actions] == ["bump_version", "push_tag", "run_tests"]
    invented = dict(reply, cause={"part": "t9", "text": "I forgot to bump the version."})
    assert distill.check(invented, source).cause is None


def test_six_release_sessions_give_one_ordered_skill_with_a_caution_per_failure(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    sessions = release_sessions()
    (tmp_path / "runs.json").write_text(json.dumps(sessions))
    repo.ingest([tmp_path / "runs.json"])  # the fifth pending session makes the proposal on its own
    (review,) = repo.review_list()
    path, text = the_skill(repo, review.branch)
    assert [tool for tool, _ in steps_and_cautions(text)] == RELEASE_ORDER
    repo.review_approve(review.branch)
    (left,) = pending_sessions(repo.store, repo.snapshot)  # the sixth came after the proposal

    second = repo.dream_skills(now=NOW)  # the sixth session edits the skill: a diff, not a second skill
    (change,) = [c for c in second.changes if c.changed]
    assert change.path == path and change.action == "edited" and change.version == (1, 2)
    assert [a.text for a in change.added] == [
        'Caution: a failed run says "The upload step was wrong: it sent the package to the test index instead '
        'of the real one, so 2.6.1 is not installable."']
    assert "+   - Caution: a failed run says \"The upload step was wrong" in CliRunner().invoke(
        cli, ["--repo", str(tmp_path / "m"), "review", "show", second.branch]).output
    repo.review_approve(second.branch)
    assert pending_sessions(repo.store, repo.snapshot) == [] and left.id in the_skill(repo, "HEAD")[1]

    path_now, text = the_skill(repo, "HEAD")
    assert path_now == path
    steps = dict(steps_and_cautions(text))
    assert list(steps) == RELEASE_ORDER  # in the order the successful runs took them
    assert [len(steps[t]) for t in RELEASE_ORDER] == [0, 1, 0, 1, 1]  # one caution per failure, at its step
    assert "pushed the tag v2.5.1 before the test suite had passed" in steps["push_tag"][0]
    assert "without running the tests first" in steps["run_tests"][0]
    assert "test index instead of the real one" in steps["upload_package"][0]
    meta = yaml.safe_load(text.split("---\n")[1])
    runs = meta["metadata"]["citations"]
    assert len(runs) == 6 and "1. Bump version: call `bump_version` with version. [runs 1, 2, 3]" in text
    # each run a step rests on is one of the sessions, listed under Runs with its outcome
    for n, run in enumerate(runs, 1):
        assert f"{n}. {run} (" in text
    assert "release" in meta["description"].lower() and "acme-cli" in meta["description"]
    assert meta["description"] != sessions[0]["messages"][1]["content"]  # written from the group, not copied
    # the review cites the sessions verbatim
    message = repo.store.log(rev=repo.store.log(limit=1)[0].parents[1], limit=1)[0].message
    assert "#t13): \"The upload step was wrong: it sent the package to the test index" in message

    export(tmp_path / "m", tmp_path / "agent")
    validate(tmp_path / "agent")
    assert repo.dream_skills(now="2026-06-02T00:00:00Z").branch is None  # nothing pending: no branch
    # `skills show` expands the run numbers to the sessions and their quotes
    slug = path.split("/")[2]
    shown = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "skills", "show", slug])
    assert shown.exit_code == 0, shown.output
    assert f"6. {runs[5]} (failure): Release version 2.6.1 of acme-cli to the package index." in shown.output
    assert '"The upload step was wrong: it sent the package to the test index instead of the real one' in shown.output
    assert f"1. {runs[0]} (success)" in shown.output and '"name": "bump_version"' in shown.output
    data = json.loads(CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "skills", "show", slug,
                                               "--json"]).output)
    assert [r["session"] for r in data["runs"]] == runs
    missing = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "skills", "show", "no-such-skill"])
    assert missing.exit_code == 1 and "no skill 'no-such-skill'" in missing.output


def test_failures_alone_make_no_branch_and_stay_pending(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    (tmp_path / "runs.json").write_text(json.dumps(release_sessions()[3:]))
    repo.ingest([tmp_path / "runs.json"])
    result = repo.dream_skills(now=NOW)
    assert result.counts["sessions"] == 3 and result.counts["avoid"] == 3
    assert result.branch is None and repo.review_list() == [] and "no skill would change" in result.message
    assert len(pending_sessions(repo.store, repo.snapshot)) == 3  # not used up: a later success brings them back


def test_a_rejected_run_returns_its_sessions_to_pending(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    (tmp_path / "runs.json").write_text(json.dumps(release_sessions()))
    repo.ingest([tmp_path / "runs.json"])
    (review,) = repo.review_list()
    claimed = {s["id"] for run in review.skill_runs for s in run["sessions"]}
    assert len(claimed) == 5 and len(pending_sessions(repo.store, repo.snapshot)) == 1
    repo.review_reject(review.branch, reason="we release from CI")
    back = {s.id for s in pending_sessions(repo.store, repo.snapshot)}
    assert claimed <= back and len(back) == 6
    assert all(s.extra["distillation"] == "pending" for s in pending_sessions(repo.store, repo.snapshot))
    # the rejected steps are not proposed again; with nothing else to propose there is no branch
    again = repo.dream_skills(now=NOW)
    assert again.counts["sessions"] == 6 and again.curator["rejected_before"] >= 5
    assert again.branch is None and repo.review_list() == []


def test_the_model_path_writes_the_same_shapes_and_passes_the_validator(tmp_path):
    """The distiller and curator roles answered by a scripted OpenAI-protocol server: the quote checks hold (an
    invented cause is dropped, a step citing an invented quote is refused) and the SKILL.md is as offline."""
    from memrepo.dream import distill
    from memrepo.llm import get_backend
    from memrepo.write.parsers import parse_file
    from openai_server import ScriptedOpenAI

    repo = MemoryRepo.init(tmp_path / "m")
    chosen = [release_sessions()[i] for i in (0, 1, 3)]  # two successes, the early tag (fewer than five)
    (tmp_path / "runs.json").write_text(json.dumps(chosen))
    repo.ingest([tmp_path / "runs.json"])
    assert repo.review_list() == []
    replies = []
    for source in parse_file(tmp_path / "runs.json").sources:  # what a model would answer, sessions in order
        reply = distill.offline(distill.variables(source, "", ""))
        if reply["outcome"] == "failure":
            reply["experiences"] = [{"lesson": "avoid", "advice": "Push the tag only after the tests pass",
                                     "quotes": [reply["cause"]]}]
        replies.append(reply)
    replies[0]["cause"] = {"part": "t3", "text": "an invented cause"}  # not a failure: ignored either way

    def curator(request: dict) -> str:
        rows = json.loads(request["messages"][-1]["content"].split("Experiences:", 1)[1])
        ok = [r["id"] for r in rows if r["lesson"] == "reuse"]
        (bad,) = [r["id"] for r in rows if r["lesson"] == "avoid"]

        def step(tool: str, text: str, cautions: list | None = None) -> dict:
            return {"tool": tool, "text": text, "runs": [], "cautions": cautions or [],
                    "cites": [{"experience": e, "quote": f'"name": "{tool}"'} for e in ok]}

        steps = [step("bump_version", "Bump the version with `bump_version`."),
                 step("run_tests", "Run the test suite with `run_tests`."),
                 step("upload_package", "Upload with `upload_package`."),
                 step("push_tag", "Push the tag with `push_tag`.", [
                     {"text": "Caution: push the tag only after the tests pass.",
                      "cites": [{"experience": bad, "quote": "Push the tag only after the tests pass"}]},
                     {"text": "Caution: sign the tag.", "cites": [{"experience": bad, "quote": "sign the tag"}]}])]
        return json.dumps({"decisions": [{"experience": ok[0], "action": "create", "skill": "release-acme-cli",
                                          "description": "Release acme-cli to the package index.",
                                          "reason": "three runs", "procedure": {"steps": steps}}]})

    with ScriptedOpenAI() as server:
        for reply in replies:
            server.enqueue(reply)
        server.responder = curator
        result = repo.dream_skills(backend=get_backend(server.settings()), now=NOW)
    assert result.counts["sessions"] == 3 and result.counts["failure"] == 1
    session = next(s for s in result.run["sessions"] if s["outcome"] == "failure")
    assert session["cause"]["text"].startswith("The release went wrong") and len(session["actions"]) == 3
    assert result.curator["refused"] == 1  # "sign the tag" is in no experience
    text = repo.store.snapshot(result.branch).read("procedural/skills/release-acme-cli/SKILL.md").decode()
    assert [t for t, _ in steps_and_cautions(text)] == ["bump_version", "run_tests", "upload_package", "push_tag"]
    assert "   - Caution: push the tag only after the tests pass." in text and "sign the tag" not in text
    repo.review_approve(result.branch)
    export(tmp_path / "m", tmp_path / "agent")
    validate(tmp_path / "agent")
