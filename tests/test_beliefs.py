"""Beliefs over time (issue 30): no stale fact after a hand edit, `git rm` or pull; supersession of one-value
relations; the current belief, the belief at a past date, conflicts; an anchor's timeline."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner

from memrepo import records as rec
from memrepo.api import MemoryRepo
from memrepo.cli import cli

SUICA = "Mia bought a Suica card at Tokyo Station"
PASMO = "Mia bought a Pasmo card at Shinagawa Station"
QUESTION = "What card did Mia buy?"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def no_hooks(root: Path) -> None:
    """A clone whose Git runs no memrepo hook: only the next read can notice a plain Git change."""
    shutil.rmtree(root / ".git" / "hooks", ignore_errors=True)
    (root / ".git" / "hooks").mkdir()


def bought(result) -> list[str]:
    return [a.label for f in result.facts if f.predicate == "buy" for a in f.arms if a.role == "item"]


def hand_edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    file.write_text(file.read_text().replace(old, new))


# --- 1. no stale fact -------------------------------------------------------------------------------


def test_a_hand_edit_committed_with_git_is_followed_by_the_very_next_recall(repo):
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    assert bought(repo.recall(QUESTION)) == ["Suica card"]
    path = rec.record_path(card)
    subprocess.run(["sed", "-i", "s/Suica card at Tokyo Station/Pasmo card at Shinagawa Station/", path],
                   cwd=repo.root, check=True)
    git(repo.root, "commit", "-q", "-am", "by hand")
    result = repo.recall(QUESTION)  # no `memrepo index` in between
    assert "Suica card" not in bought(result)
    assert {"record": card, "reason": "changed", "predicate": "buy"}.items() <= result.stale_dropped[0].items()
    assert card in result.record_ids  # the record itself, as it now reads, is still found
    assert "Pasmo" in repo.ask(QUESTION).answer
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "recall", QUESTION, "--json"])
    assert json.loads(out.stdout)["stale_dropped"][0]["record"] == card
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "recall", QUESTION, "--explain"])
    assert f"changed since the graph extracted it" in out.output and f"cites {card} (changed)" in out.output
    repo.index_graph()  # the catch-up extracts it again: the new fact, nothing dropped
    result = repo.recall(QUESTION)
    assert bought(result) == ["Pasmo card"] and result.stale_dropped == []


def test_a_repository_without_hooks_reads_right_after_a_hand_edit(repo):
    no_hooks(repo.root)
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    hand_edit(repo.root, rec.record_path(card), "Suica card at Tokyo Station", "Pasmo card at Shinagawa Station")
    git(repo.root, "commit", "-q", "-am", "by hand")
    result = repo.recall(QUESTION)
    assert "Suica card" not in bought(result) and result.stale_dropped[0]["record"] == card


def test_git_rm_is_followed_by_the_very_next_recall_and_said(repo):
    (card,) = repo.remember(SUICA, type="episodic", event_time="2023-05-02").written
    repo.remember("Mia bought a bento box at Kyoto Station", type="episodic", event_time="2023-05-03")
    git(repo.root, "rm", "-q", rec.record_path(card))
    git(repo.root, "commit", "-q", "-m", "forget by hand")
    result = repo.recall(QUESTION)
    assert "Suica card" not in bought(result) and card not in result.record_ids
    assert [(d["record"], d["reason"]) for d in result.stale_dropped] == [(card, "gone")]


def test_a_pulled_hand_edit_is_followed_by_the_very_next_recall(tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = MemoryRepo.init(tmp_path / "a")
    (card,) = a.remember(SUICA, type="episodic", event_time="2023-05-02").written
    path = rec.record_path(card)
    a.close()
    git(tmp_path / "a", "push", "-q", str(bare), "main")
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(tmp_path / "b"))
    no_hooks(tmp_path / "b")
    with MemoryRepo.open(tmp_path / "b") as b:
        assert bought(b.recall(QUESTION)) == ["Suica card"]  # b's graph index is built at the old commit
    hand_edit(tmp_path / "a", path, "Suica card at Tokyo Station", "Pasmo card at Shinagawa Station")
    git(tmp_path / "a", "commit", "-q", "-am", "a teammate's hand edit")
    git(tmp_path / "a", "push", "-q", str(bare), "main")
    git(tmp_path / "b", "pull", "-q", "--ff-only", "origin", "main")
    with MemoryRepo.open(tmp_path / "b") as b:
        result = b.recall(QUESTION)
        assert "Suica card" not in bought(result) and result.stale_dropped[0]["record"] == card


# --- 2-3. supersession, the current belief, the belief then, conflicts -----------------------------------


def remember(repo, text: str, when: str) -> str:
    (written,) = repo.remember(text, type="episodic", event_time=when, mention_time=when + "T10:00:00Z").written
    return written


def history(repo) -> dict[str, str]:
    return {
        "nurse": remember(repo, "Jonas works as a nurse in Braga", "2023-05-10"),
        "baker": remember(repo, "Jonas quit the hospital and now works as a baker in Porto", "2023-07-20"),
        "ghent": remember(repo, "Lena moved to Ghent", "2023-03-01"),
        "leuven": remember(repo, "Lena now lives in Leuven", "2024-01-15"),
        "tom": remember(repo, "Mia married Tom", "2019-06-01"),
        "ben": remember(repo, "Mia is engaged to Ben", "2024-02-01"),
    }


def test_a_job_a_home_and_a_partner_answer_now_and_then(repo):
    ids = history(repo)
    job = repo.recall("What is Jonas's job?")
    assert [b["answer"] for b in job.beliefs] == ["baker in Porto since 2023-07-20; before: nurse in Braga from 2023-05-10"]
    now = [f for f in job.facts if f.valid_from == "2023-07-20"]
    assert now and now[0].valid_until is None and now[0].cites == [ids["baker"]]
    older = [f for f in job.facts if f.valid_from == "2023-05-10"]
    assert older[0].valid_until == "2023-07-20" and older[0].superseded_by == [now[0].id]
    assert repo.ask("What is Jonas's job?").answer.startswith("baker in Porto since 2023-07-20")
    past = repo.ask("What was Jonas's job in June 2023?")
    assert past.answer.startswith("nurse in Braga") and past.record_ids == [ids["nurse"]]
    assert repo.ask("Where does Lena live?").answer.startswith("Leuven since 2024-01-15; before: Ghent")
    assert repo.ask("Where did Lena live in June 2023?").answer.startswith("Ghent from 2023-03-01 until 2024-01-15")
    assert repo.ask("Who is Mia's partner?").answer.startswith("Ben since 2024-02-01; before: Tom from 2019-06-01")
    assert repo.ask("Who was Mia's partner in 2020?").answer.startswith("Tom from 2019-06-01")


def test_recall_json_carries_the_intervals(repo):
    history(repo)
    out = CliRunner().invoke(cli, ["--repo", str(repo.root), "recall", "What is Jonas's job?", "--json"])
    data = json.loads(out.stdout)
    assert data["stale_dropped"] == [] and data["beliefs"][0]["slot"] == "job"
    for fact in data["facts"]:
        assert {"valid_from", "valid_until", "superseded_by"} <= fact.keys()
    assert sorted((f["valid_from"], f["valid_until"]) for f in data["facts"] if f["valid_from"]) == [
        ("2023-05-10", "2023-07-20"), ("2023-07-20", None)]


def test_two_sources_for_the_same_date_are_a_conflict_with_both_citations(repo):
    braga = remember(repo, "Jonas works as a nurse in Braga", "2023-05-10")
    lisbon = remember(repo, "Jonas works as a teacher in Lisbon", "2023-05-10")
    result = repo.recall("What is Jonas's job?")
    (belief,) = result.beliefs
    assert belief["answer"].startswith("conflict: ") and "nurse in Braga" in belief["answer"]
    assert "teacher in Lisbon" in belief["answer"] and belief["cites"] == sorted([braga, lisbon])
    assert all(f.conflicts for f in result.facts if f.valid_from)
    answer = repo.ask("What is Jonas's job?")
    assert "conflict" in answer.answer and sorted(answer.record_ids) == sorted([braga, lisbon])


def test_a_revert_restores_the_old_belief_and_nothing_tracked_is_rewritten(repo):
    remember(repo, "Jonas works as a nurse in Braga", "2023-05-10")
    before = git(repo.root, "rev-parse", "HEAD").strip()
    tracked = git(repo.root, "ls-files").split()
    remember(repo, "Jonas quit the hospital and now works as a baker in Porto", "2023-07-20")
    assert repo.ask("What is Jonas's job?").answer.startswith("baker in Porto")
    changed = git(repo.root, "diff", "--name-only", before, "HEAD").split()
    assert not set(changed) & set(tracked)  # the newer record closes the older one without touching it
    git(repo.root, "revert", "--no-edit", "HEAD")
    assert repo.ask("What is Jonas's job?").answer.startswith("nurse in Braga since 2023-05-10")


def test_a_belief_of_a_record_edited_by_hand_is_what_the_record_says_now(repo):
    remember(repo, "Jonas works as a nurse in Braga", "2023-05-10")
    baker = remember(repo, "Jonas quit the hospital and now works as a baker in Porto", "2023-07-20")
    hand_edit(repo.root, rec.record_path(baker), "baker in Porto", "baker in Faro")
    git(repo.root, "commit", "-q", "-am", "by hand")
    result = repo.recall("What is Jonas's job?")  # extracted again in memory, nothing written
    assert result.beliefs[0]["answer"] == "baker in Faro since 2023-07-20; before: nurse in Braga from 2023-05-10"
    assert baker in {d["record"] for d in result.stale_dropped} and "Porto" not in json.dumps(result.to_dict()["facts"])
    timeline = repo.graph_beliefs("Jonas")
    assert [b["value"] for b in timeline] == ["nurse in Braga", "baker in Faro"]


def test_a_statement_corrected_to_someone_else_leaves_the_older_belief(repo):
    remember(repo, "Lena moved to Ghent", "2023-03-01")
    leuven = remember(repo, "Lena now lives in Leuven", "2024-01-15")
    hand_edit(repo.root, rec.record_path(leuven), "Lena", "Greta")
    git(repo.root, "commit", "-q", "-am", "it was Greta")
    assert repo.ask("Where does Lena live?").answer == "Ghent since 2023-03-01"


# --- 4. an anchor's beliefs as a timeline ------------------------------------------------------------


def test_graph_anchor_shows_the_beliefs_as_a_timeline_with_intervals_and_citations(repo):
    ids = history(repo)
    base = ["--repo", str(repo.root), "graph", "anchor", "Jonas"]
    out = CliRunner().invoke(cli, base)
    assert out.exit_code == 0, out.output
    lines = out.output.split("beliefs over time: 2\n", 1)[1].splitlines()
    assert lines[0].startswith("  job: nurse in Braga  2023-05-10 .. 2023-07-20  work(")
    assert lines[0].endswith(f"cites {ids['nurse']}")
    assert lines[1].startswith("  job: baker in Porto  2023-07-20 .. now  leave(")
    data = json.loads(CliRunner().invoke(cli, [*base, "--json"]).stdout)
    assert [(b["value"], b["valid_from"], b["valid_until"], b["citations"]) for b in data["beliefs"]] == [
        ("nurse in Braga", "2023-05-10", "2023-07-20", [ids["nurse"]]),
        ("baker in Porto", "2023-07-20", None, [ids["baker"]])]
    assert data["beliefs"][0]["superseded_by"] == [data["beliefs"][1]["frame"]]


def test_the_viewer_anchor_page_shows_the_timeline(monkeypatch, repo):
    import pytest

    st_testing = pytest.importorskip("streamlit.testing.v1")
    history(repo)
    monkeypatch.setenv("MEMREPO_VIEW_REPO", str(repo.root))
    app = str(Path(__file__).resolve().parents[1] / "viewer" / "app.py")
    at = st_testing.AppTest.from_file(app, default_timeout=60).run()
    at.switch_page("graph.py")
    at.query_params.update(anchor="Lena")
    at.run()
    assert not at.exception
    assert any("Beliefs over time" in m.value for m in at.markdown)
    table = next(d.value for d in at.dataframe if "valid from" in d.value.columns)
    assert list(zip(table["value"], table["valid from"], table["valid until"])) == [
        ("Ghent", "2023-03-01", "2024-01-15"), ("Leuven", "2024-01-15", "now")]


def test_only_a_question_that_asks_for_the_relation_gets_a_belief(repo):
    remember(repo, "Marta has 2 goats", "2021-05-01")
    remember(repo, "Marta now has 6 goats", "2023-05-01")
    remember(repo, "Jonas works as a nurse in Braga", "2023-05-10")
    assert repo.ask("How many goats does Marta have?").answer == "6 since 2023-05-01; before: 2 from 2021-05-01"
    assert repo.recall("How many times did Marta go hiking?").beliefs == []  # her goats are no answer to that
    assert repo.recall("What did Jonas work on?").beliefs == []
    assert repo.recall("Where does Jonas work?").beliefs[0]["answer"] == "nurse in Braga since 2023-05-10"


def test_a_question_about_the_past_without_a_date_answers_the_belief_before_the_change(repo):
    ids = history(repo)
    before_move = repo.ask("Where did Lena live before she moved?")
    assert before_move.answer.startswith("Ghent from 2023-03-01 until 2024-01-15"), before_move.answer
    assert before_move.record_ids == [ids["ghent"]]
    assert repo.ask("What was Jonas's previous job?").answer.startswith("nurse in Braga")
    assert repo.ask("Who was Mia's partner before she got engaged?").answer.startswith("Tom from 2019-06-01")
    used = repo.recall("Where did Lena use to live?")  # "use to" is not "used to": asks about now
    assert [b["at"] for b in used.beliefs] == [None]
    # the same words with no change behind them answer what holds
    assert repo.ask("Where does Jonas work?").answer.startswith("baker in Porto")
