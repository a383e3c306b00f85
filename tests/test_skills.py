"""Procedural AutoDream on real repositories: task sessions distilled into experiences, the curator's skill
edits on a review branch (the paper's Figure 3 story), quote checks, approve / reject / revert / git merge,
the negative cache of reviews, export, and the automatic proposal at five pending sessions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.dream.review import ReviewError
from memrepo.dream.skills import AUTO_PENDING, CAP_EXPERIENCES, CAP_SESSIONS, pending_sessions
from memrepo.llm import get_backend
from openai_server import ScriptedOpenAI

NOW = "2026-05-10T10:00:00Z"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "task-sessions.jsonl"
SESSIONS = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
PURCHASE = SESSIONS[0]  # the failed purchase of Figure 3
SHOPPING = """---
name: online-shopping
description: Buy things online for the user within their budget
---
# Online shopping

## Steps

1. Search with the budget as the price filter.
2. Pay only after the user confirms the order.
"""


def git(cwd, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def ingest(repo: MemoryRepo, tmp_path: Path, *sessions: dict) -> None:
    for i, s in enumerate(sessions):
        path = tmp_path / f"session-{len(list(tmp_path.glob('session-*')))}-{i}.json"
        path.write_text(json.dumps(s))
        repo.ingest([path])


def shop_repo(tmp_path: Path) -> MemoryRepo:
    repo = MemoryRepo.init(tmp_path / "m")
    repo.store.commit({"procedural/skills/online-shopping/SKILL.md": SHOPPING.encode()}, "A hand-written skill")
    ingest(repo, tmp_path, PURCHASE)
    return repo


def skill_at(repo: MemoryRepo, rev: str, slug: str = "online-shopping") -> str | None:
    data = repo.store.snapshot(rev).read(f"procedural/skills/{slug}/SKILL.md")
    return data.decode() if data is not None else None


@pytest.fixture()
def server():
    with ScriptedOpenAI() as s:
        yield s


def test_caps_are_printed_defaults():
    assert (CAP_SESSIONS, CAP_EXPERIENCES, AUTO_PENDING) == (20, 40, 5)


def test_figure_3_a_failed_purchase_edits_the_shopping_routine(tmp_path):
    repo = shop_repo(tmp_path)
    main_before = repo.store.head()
    result = repo.dream_skills(now=NOW)

    assert repo.store.head() == main_before  # main does not move
    assert result.branch.startswith("dream/skills-2026-05-10-")
    c = result.counts
    assert (c["sessions"], c["failure"], c["avoid"], c["reuse"]) == (1, 1, 1, 1)
    experiences = {e["lesson"]: e for e in result.run["experiences"]}
    avoid, reuse = experiences["avoid"]["id"], experiences["reuse"]["id"]
    for e in experiences.values():  # experiences are records under procedural/experiences/<YYYY>/<MM>/
        record = rec.parse(repo.store.snapshot(result.branch).read(rec.record_path(e["id"])), rec.record_path(e["id"]))
        assert record.extra["kind"] == "experience" and record.sources[0].endswith("#t4")
    (change,) = [ch for ch in result.changes if ch.slug == "online-shopping"]
    assert change.action == "edited" and change.hand_written and change.version == (0, 1)
    assert [a.text for a in change.added] == ["Compare the total with the budget before checkout.",
                                              "Confirm the material in the product details."]
    assert [a.cites for a in change.added] == [[(avoid, "Compare the total with the budget before checkout")],
                                               [(avoid, "confirm the material in the product details")]]
    assert change.kept == [("Search with the budget as the price filter.", reuse)]
    after = skill_at(repo, result.branch)
    assert "3. Compare the total with the budget before checkout.\n4. Confirm the material" in after
    assert "1. Search with the budget as the price filter." in after  # the step the reuse lesson supports stays
    meta, _ = rec.split_front_matter(after.encode(), "SKILL.md")
    assert meta["name"] == "online-shopping" and "version" not in meta  # memrepo's fields are under metadata
    assert meta["metadata"]["version"] == 1 and meta["metadata"]["experiences"] == [avoid]
    assert f"  experiences:\n    - {avoid}\n" in after  # block style: the reference validator refuses flow style
    # the session is settled in the same commit; the commit message is the review
    session_path = rec.record_path(result.run["sessions"][0]["id"])
    assert b"distillation: pending" in repo.snapshot.read(session_path)
    assert b"distillation: distilled" in repo.store.snapshot(result.branch).read(session_path)
    assert pending_sessions(repo.store, repo.store.snapshot(result.branch)) == []
    message = repo.store.log(rev=result.branch, limit=1)[0].message
    assert "Skill online-shopping: edited (a skill written or edited by hand), version 0 -> 1" in message
    assert f'experience {avoid} (avoid): "Compare the total with the budget before checkout"' in message
    assert '"Next time, compare the total with the budget before checkout; confirm the material' in message
    assert f"= Search with the budget as the price filter.  (kept; supported by experience {reuse})" in message
    # nothing else is pending, and the open branch claims the session: a second run proposes nothing
    assert repo.dream_skills(now="2026-05-10T11:00:00Z").branch is None


def test_review_show_prints_the_skill_diff_with_quoted_evidence(tmp_path):
    repo = shop_repo(tmp_path)
    branch = repo.dream_skills(now=NOW).branch
    out = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "review", "show", branch])
    assert out.exit_code == 0, out.output
    assert "+3. Compare the total with the budget before checkout." in out.output
    assert "session pr-" in out.output and "#t4): \"Next time, compare" in out.output
    listed = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "review", "list", "--json"])
    (entry,) = json.loads(listed.output)
    assert entry["branch"] == branch and entry["skill_changes"][0]["skill"] == "online-shopping"


def test_approve_then_revert_restores_the_skill_exactly(tmp_path):
    repo = shop_repo(tmp_path)
    branch = repo.dream_skills(now=NOW).branch
    merge = repo.review_approve(branch)
    assert "Compare the total" in skill_at(repo, "HEAD")
    assert repo.review_list() == [] and pending_sessions(repo.store, repo.snapshot) == []
    git(tmp_path / "m", "revert", "--no-edit", "-m", "1", merge)
    assert skill_at(repo, "HEAD") == SHOPPING


def test_plain_git_merge_of_a_skill_branch(tmp_path):
    repo = shop_repo(tmp_path)
    branch = repo.dream_skills(now=NOW).branch
    tip = repo.store.resolve(branch).decode()
    git(tmp_path / "m", "merge", "--no-ff", "--no-edit", branch)
    assert skill_at(repo, "HEAD") == skill_at(repo, tip)
    assert repo.review_list() == []


def test_hand_edit_on_main_while_the_branch_is_open_is_a_conflict(tmp_path):
    repo = shop_repo(tmp_path)
    branch = repo.dream_skills(now=NOW).branch
    edited = SHOPPING.replace("2. Pay only", "2. Ask before paying.\n3. Pay only")
    repo.store.commit({"procedural/skills/online-shopping/SKILL.md": edited.encode()}, "Hand edit")
    with pytest.raises(ReviewError, match="changed on both sides: procedural/skills/online-shopping/SKILL.md"):
        repo.review_approve(branch)
    assert skill_at(repo, "HEAD") == edited  # never a silent overwrite


def test_a_rejected_edit_is_not_proposed_again(tmp_path):
    repo = shop_repo(tmp_path)
    first = repo.dream_skills(now=NOW)
    branch, rejected_session = first.branch, first.run["sessions"][0]["id"]
    commit = repo.review_reject(branch, reason="we pay by invoice")
    assert commit and branch not in repo.branches()
    assert skill_at(repo, "HEAD") == SHOPPING
    # the rejected run returns its session to pending (only an approved run settles a session)
    (back,) = pending_sessions(repo.store, repo.snapshot)
    assert back.id == rejected_session and back.extra["distillation"] == "pending"
    # a new session teaching the same lesson: the rejected steps are not proposed again, so nothing changes and
    # no branch is made
    again = dict(PURCHASE, task="Buy a steel lunch box under $25", date="2026-05-11T10:00:00Z")
    ingest(repo, tmp_path, again)
    second = repo.dream_skills(now="2026-05-11T12:00:00Z")
    assert second.counts["sessions"] == 2  # the returned session is read again with the new one
    assert second.curator["rejected_before"] >= 2 and second.curator["steps_added"] == 0
    assert all(not ch.added for ch in second.changes)
    assert second.branch is None and "no skill would change" in second.message and repo.review_list() == []
    assert len(pending_sessions(repo.store, repo.snapshot)) == 2


def test_an_invented_quote_is_downgraded_and_refused(tmp_path, server):
    repo = shop_repo(tmp_path)
    server.enqueue({"outcome": "success", "quotes": [{"part": "outcome", "text": "The bottle was perfect."}],
                    "experiences": [
                        {"lesson": "avoid", "advice": "Compare the total with the budget",
                         "quotes": [{"part": "t4", "text": "compare the total with the budget before checkout"}]},
                        {"lesson": "reuse", "advice": "Always buy the cheapest item",
                         "quotes": [{"part": "t2", "text": "I always buy the cheapest item."}]}]})

    def curator(request: dict) -> str:
        exp = json.loads(request["messages"][-1]["content"].split("Experiences:", 1)[1])[0]["id"]
        return json.dumps({"decisions": [{"experience": exp, "action": "edit", "skill": "online-shopping",
                                          "reason": "budget", "add_steps": [
                                              {"text": "Compare the total with the budget.",
                                               "cites": [{"experience": exp, "quote": "compare the total"}]},
                                              {"text": "Use a coupon code at checkout.",
                                               "cites": [{"experience": exp, "quote": "use a coupon code"}]}]}]})

    server.responder = curator
    result = repo.dream_skills(backend=get_backend(server.settings()), now=NOW)
    assert result.counts["downgraded"] == 1 and result.counts["unclear"] == 1  # the outcome quote is not there
    assert result.counts["experiences"] == 1 and result.counts["experiences_dropped"] == 1  # the invented one
    assert result.curator["refused"] == 1 and result.curator["steps_added"] == 1
    text = skill_at(repo, result.branch)
    assert "Compare the total with the budget." in text and "coupon" not in text
    assert "coupon" not in repo.store.log(rev=result.branch, limit=1)[0].message.split("Experiences not")[0]


def test_export_writes_an_agent_skills_folder(tmp_path):
    repo = shop_repo(tmp_path)
    repo.review_approve(repo.dream_skills(now=NOW).branch)
    out = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "skills", "export", str(tmp_path / "agent")])
    assert out.exit_code == 0, out.output
    names = []
    for path in sorted((tmp_path / "agent").glob("*/SKILL.md")):
        meta = yaml.safe_load(path.read_text().split("---\n")[1])
        assert meta["description"] and path.parent.name == meta["name"]
        names.append(meta["name"])
    assert names == ["online-shopping"] and len(set(names)) == len(names)
    from test_skills_sessions import validate

    validate(tmp_path / "agent")  # the Agent Skills reference validator (skipped when skills-ref is missing)
    twin = SHOPPING.replace("# Online shopping", "# Twin")
    repo.store.commit({"procedural/skills/twin/SKILL.md": twin.encode()}, "same name")
    bad = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "skills", "export", str(tmp_path / "x")])
    assert bad.exit_code == 1 and "same name 'online-shopping'" in bad.output and "Traceback" not in bad.output


def test_five_pending_sessions_trigger_a_proposal(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    ingest(repo, tmp_path, *SESSIONS[:4])
    assert repo.review_list() == [] and len(pending_sessions(repo.store, repo.snapshot)) == 4
    main_before = repo.store.head()
    ingest(repo, tmp_path, SESSIONS[4])
    (review,) = repo.review_list()
    assert review.branch.startswith("dream/skills-") and review.skills == ["procedural/skills/buy-routine/SKILL.md"]
    log = repo.store.log(limit=10)
    since = log[: [c.id for c in log].index(main_before.decode())]
    # the ingest's commits only (its records, the graph index of its steps): a proposal, not a merge
    assert since and all(len(c.parents) == 1 and c.message.startswith(("Ingest ", "Index graph")) for c in since)
    assert pending_sessions(repo.store, repo.snapshot) == []  # claimed by the open branch


def test_caps_leave_sessions_pending_for_the_next_run(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    ingest(repo, tmp_path, *SESSIONS[:3])
    first = repo.dream_skills(now=NOW, caps={"sessions": 2})
    assert first.counts["sessions"] == 2 and first.counts["skipped_by_cap"] == 1
    repo.review_approve(first.branch)
    second = repo.dream_skills(now="2026-05-10T11:00:00Z")
    assert second.counts["sessions"] == 1 and second.counts["skipped_by_cap"] == 0


def test_cli_dream_skills_json_and_usage_errors(tmp_path):
    shop_repo(tmp_path).close()
    out = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "dream", "--skills", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["branch"].startswith("dream/skills-") and data["caps"] == {"sessions": 20, "experiences": 40}
    bad = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "dream", "--skills", "--final"])
    assert bad.exit_code == 2 and "--skills cannot be combined" in bad.output
    none = CliRunner().invoke(cli, ["--repo", str(tmp_path / "m"), "dream", "--skills"])
    assert none.exit_code == 0 and "no task session is pending" in none.output


def test_recall_reaches_the_skill_for_a_how_to_question(tmp_path):
    repo = shop_repo(tmp_path)
    repo.review_approve(repo.dream_skills(now=NOW).branch)
    result = repo.recall("How do I buy things online within a budget?", types=["procedural"])
    assert result.typed and result.typed[0].id == "skill-online-shopping"


def test_approved_skills_are_mcp_prompts(tmp_path):
    import anyio

    from test_mcp import connect

    repo = shop_repo(tmp_path)
    branch = repo.dream_skills(now=NOW).branch

    async def main() -> tuple[list[str], str, list[str]]:
        async with connect(tmp_path / "m") as client:
            before = [p.name for p in (await client.list_prompts()).prompts]
            repo.review_approve(branch)  # another process approves; the server reads the current branch
            after = await client.get_prompt("online-shopping")
            names = [p.name for p in (await client.list_prompts()).prompts]
            return before, after.messages[0].content.text, names

    before, text, names = anyio.run(main)
    assert before == ["online-shopping"] and names == ["online-shopping"]
    assert "name: online-shopping" in text and "Compare the total with the budget before checkout." in text


def test_a_hand_edit_after_approval_is_named_in_the_next_review(tmp_path):
    repo = shop_repo(tmp_path)
    repo.review_approve(repo.dream_skills(now=NOW).branch)
    text = skill_at(repo, "HEAD").replace("2. Pay only after", "2. Ask the user, then pay only after")
    repo.store.commit({"procedural/skills/online-shopping/SKILL.md": text.encode()}, "Hand edit")
    ingest(repo, tmp_path, SESSIONS[2])  # a failed shoe purchase: new steps for the same skill
    result = repo.dream_skills(now="2026-05-11T10:00:00Z")
    (change,) = [c for c in result.changes if c.added]
    assert change.slug == "online-shopping" and change.hand_written and change.version == (1, 2)
    message = repo.store.log(rev=result.branch, limit=1)[0].message
    assert "Skill online-shopping: edited (a skill written or edited by hand), version 1 -> 2" in message
    assert "2. Ask the user, then pay only after" in skill_at(repo, result.branch)  # the hand edit is kept


def test_a_deferred_experience_comes_back_only_with_new_evidence(tmp_path):
    repo = MemoryRepo.init(tmp_path / "m")
    unclear = dict(PURCHASE, outcome="unknown: the user did not say")
    ingest(repo, tmp_path, unclear)
    first = repo.dream_skills(now=NOW)
    assert first.counts["unclear"] == 1 and first.curator["deferred"] == 2 and first.curator["steps_added"] == 0
    # nothing would change: no (empty) review branch, and the session stays pending, not used up
    assert first.branch is None and repo.review_list() == [] and len(pending_sessions(repo.store, repo.snapshot)) == 1
    book = {"task": "Book a table for two on Friday", "date": "2026-05-12T10:00:00Z",
            "messages": [{"role": "assistant", "content": "Next time, confirm the time zone of the restaurant."}],
            "outcome": "failure: booked for the wrong hour"}
    ingest(repo, tmp_path, book)
    other = repo.dream_skills(now="2026-05-12T11:00:00Z")
    # the still-pending unclear session is read again beside the new one (deferred again); approving the run
    # that used it settles it, and its deferred lessons wait for a new purchase
    assert other.counts["sessions"] == 2 and other.curator["deferred"] == 2 and other.curator["steps_added"] == 1
    repo.review_approve(other.branch)
    assert pending_sessions(repo.store, repo.snapshot) == []
    ingest(repo, tmp_path, SESSIONS[2])  # a new purchase: new evidence for the deferred purchase lessons
    again = repo.dream_skills(now="2026-05-13T11:00:00Z")
    assert again.curator["deferred"] == 2 and again.curator["steps_added"] >= 1


def test_a_run_reads_only_the_sessions_written_since_the_last_one(tmp_path):
    from memrepo.dream.skills import _candidate_paths, read_ledger

    repo = MemoryRepo.init(tmp_path / "m")
    ingest(repo, tmp_path, *SESSIONS[:3])
    repo.review_approve(repo.dream_skills(now=NOW).branch)
    ingest(repo, tmp_path, SESSIONS[3])
    snap = repo.snapshot
    (new,) = pending_sessions(repo.store, snap)
    assert _candidate_paths(repo.store, snap, read_ledger(repo.store, snap)) == [new.path]
