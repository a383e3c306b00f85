"""Secrets (issue 21, and issue 13's double redaction): planted through every write path, then
looked for in every Git object, every file of the work tree and of .git (indexes included) and
in the Tantivy store's documents. Token-shaped test values are built at run time, so that no
literal token sits in this file for a secret scanner to flag.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo import sensitive
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import VaultKeyError
from memrepo.settings import Settings
from memrepo.vault import KEY_CHECK_PATH, generate_key

from conftest import EXAMPLES, shared_data


def planted() -> dict[str, str]:
    """kind -> a secret value as a user would paste it (distinctive, so a search cannot hit it by chance)."""
    b64 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q9Z3uX"
    return {
        "password": "Tr0ub4dor-93x",
        "pin": "738261",
        "github": "ghp_" + "Zq8WmT4vLp2K" * 3,
        "github_pat": "github_pat_" + "11ABCDE2F0" + "x7Yq" * 16,
        "gitlab": "glpat-" + "Vt9xQ2mB7nK4pL6sR1wZ",
        "aws": "AKIA" + "J7QX2MZK5VLP4TRN",
        "gcp_key": b64 + "ym1V",
        "azure": "Qk9wZ3N0c" * 9 + "Xk7=",
        "slack": "xoxb-" + "4312987650123-" + "Hq7TzP2wLm9KxR4v",
        "openai": "sk-proj-" + "R7vK2mQ9xT4wLp8ZsN3bYc6H",
        "card": "4539 1488 0343 6467",
        "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJtaWEiLCJyb2xlIjoiYWRtaW4ifQ." + "Wb3kS8pQz1vL5mX9tR2nY7cH4jF6dG0a",
        "db_url_password": "Pg-S3cr3t-771",
    }


def _conversation(s: dict[str, str]) -> str:
    return (
        "# Session 1: 2023-05-02 14:03\n"
        f"Mia: My bank PIN is {s['pin']}.\n"
        f"Jonas: Got it, {s['pin']}, I will not forget.\n"  # the vaulted value again, with no label
        f"Mia: The team bot posts with {s['slack']} for now.\n"
        f"Jonas: Pay with {s['card']} and keep the receipt.\n"
        f"Mia: My password is {s['password']}.\n"
    )


def _document(s: dict[str, str]) -> str:
    service_account = {
        "type": "service_account",
        "project_id": "mia-travel",
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{s['gcp_key']}\n-----END PRIVATE KEY-----\n",
        "client_email": "bot@mia-travel.iam.gserviceaccount.com",
    }
    return (
        "# Ops notes\n\n"
        f"The staging account uses {s['aws']} as its access key.\n\n"
        "```json\n" + json.dumps(service_account, indent=2) + "\n```\n\n"
        f"Storage: DefaultEndpointsProtocol=https;AccountName=miatravel;AccountKey={s['azure']};"
        "EndpointSuffix=core.windows.net\n\n"
        f"The summarizer calls the API with {s['openai']}.\n"
        f"Releases are pushed by a token {s['gitlab']} and mirrored with {s['github_pat']}.\n"
    )


def _task_session(s: dict[str, str]) -> dict:
    return {
        "task": "Fix the nightly export",
        "messages": [
            {"role": "user", "content": f"The export job logs in with {s['jwt']}."},
            {"role": "assistant", "content": f"It connects to postgres://export:{s['db_url_password']}@db.internal:5432/app"},
        ],
        "outcome": {"status": "success", "text": "The export runs again."},
    }


def _write_everything(repo: MemoryRepo, tmp_path: Path, s: dict[str, str]) -> None:
    """Every write path: remember routed and typed, ingest of a conversation, a document and a task session."""
    (tmp_path / "chat.txt").write_text(_conversation(s))
    (tmp_path / "ops-notes.md").write_text(_document(s))
    (tmp_path / "task.json").write_text(json.dumps(_task_session(s)))
    repo.ingest([tmp_path / "chat.txt", tmp_path / "ops-notes.md", tmp_path / "task.json"], mention_time="2023-05-02")
    repo.remember(f"Deploys run with {s['github']}.", mention_time="2023-05-03")  # routed, no label at all
    repo.remember(f"Lena's GitHub token is {s['github']}", type="semantic", mention_time="2023-05-03")  # typed
    # A later input repeats a value the vault already holds, unlabelled: it is sealed as well.
    repo.remember(f"Typed {s['password']} into the NAS today.", type="episodic", mention_time="2023-05-04")


def _git_objects(root: Path) -> bytes:
    """Every object of the repository, loose or packed, decompressed."""
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True,
                          check=True).stdout


def _tantivy_documents(root: Path) -> str:
    import tantivy

    from memrepo.index.fulltext import open_index

    texts = []
    for meta in (root / ".git" / "memrepo" / "indexes").rglob("meta.json"):
        index = open_index(meta.parent)
        index.reload()
        searcher = index.searcher()
        for _, address in searcher.search(tantivy.Query.all_query(), limit=max(searcher.num_docs, 1)).hits:
            texts.append(json.dumps(searcher.doc(address).to_dict(), ensure_ascii=False))
    assert texts, "no Tantivy index was built"
    return "\n".join(texts)


def _leaks(root: Path, values: dict[str, str]) -> dict[str, list[str]]:
    """kind -> where its plaintext was found: Git objects, any file under the work tree or .git, the Tantivy store."""
    objects = _git_objects(root)
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    store = _tantivy_documents(root)
    found: dict[str, list[str]] = {}
    for kind, value in values.items():
        where = [str(p.relative_to(root)) for p, data in files.items() if value.encode() in data]
        if value.encode() in objects:
            where.append("git objects")
        if value in store:
            where.append("tantivy store")
        if where:
            found[kind] = where
    return found


@pytest.fixture
def keyed(tmp_path):
    MemoryRepo.init(tmp_path / "m").close()
    repo = MemoryRepo.open(tmp_path / "m", settings=Settings(vault_key=generate_key()))
    yield repo
    repo.close()


def test_no_planted_secret_is_left_in_plaintext_anywhere(keyed, tmp_path):
    s = planted()
    _write_everything(keyed, tmp_path, s)
    keyed.reindex(full=True)  # every derived index: full text, vectors, graph, embedding cache
    keyed.search("token")
    keyed.recall("What does the export job log in with?")
    assert _leaks(keyed.root, s) == {}
    # Each one went to the vault, which gives it back with the key.
    vault_texts = "\n".join(r.text for r in keyed.records("vault"))
    assert [kind for kind, value in s.items() if value not in vault_texts] == []
    # Where a value stood, a pointer to its vault entry stands now, in the source and in the records.
    chat = next(src for src in keyed.sources() if src.kind == "conversation")
    pin_entry = next(r for r in keyed.records("vault") if s["pin"] in r.text)
    assert chat.part("D1:2").text == f"Got it, [kept in the vault: {pin_entry.id}], I will not forget."
    assert subprocess.run(["git", "fsck", "--strict"], cwd=keyed.root, capture_output=True).returncode == 0


def test_a_remembered_password_is_redacted_once(keyed):
    result = keyed.remember("My password is hunter2xyz", mention_time="2023-07-04")
    (episodic,) = [keyed.get(i) for i in result.written if i.startswith("ep-")]
    assert episodic.text == "My password is [kept in the vault]"
    for text in ("My password is hunter2xyz.", "PIN: 4321, password=abc123XY", "token " + planted()["github"]):
        once = sensitive.redact(text)
        assert sensitive.redact(once) == once and "in the vault] in the vault]" not in once


def test_no_id_is_a_plain_hash_of_a_short_secret(keyed, tmp_path):
    """A four-digit PIN has 10,000 values: an id hashed from the text around it would give it away."""
    from memrepo.records import content_hash

    text = "My bank PIN is 4321."
    result = keyed.remember(text, mention_time="2023-07-04")
    chat = tmp_path / "chat.txt"
    chat.write_text("# Session 1: 2023-07-04 09:00\nMia: My bank PIN is 4321.\nJonas: Noted.\n", encoding="utf-8")
    keyed.ingest([chat])
    ids = result.written + result.unchanged + [s.id for s in keyed.sources()]
    ids += [r.id for t in ("episodic", "semantic") for r in keyed.records(t)]
    digests = {i.rsplit("-", 1)[-1] for i in ids}
    # Try every PIN in every part an id is hashed from, as someone holding the repository would.
    guessed = [pin for pin in (f"{n:04d}" for n in range(10_000))
               if digests & {content_hash(keyed.settings.namespace, "source", "remember", "n1",
                                          text.replace("4321", pin))}]
    assert guessed == []
    # The same input under the same key still gets the same ids: a retry writes nothing.
    assert keyed.remember(text, mention_time="2023-07-04").commit is None


def _cli(root: Path, *args: str, key: bytes | None = None):
    env = {"MEMREPO_VAULT_KEY": key.decode()} if key else {}
    return CliRunner().invoke(cli, ["--repo", str(root), *args], env=env)


def _head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout


def test_without_a_key_a_secret_is_refused_and_nothing_is_written(tmp_path):
    root = tmp_path / "m"
    MemoryRepo.init(root).close()
    s = planted()
    before = _head(root)
    routed = _cli(root, "remember", f"Deploys run with {s['github']}.")
    assert routed.exit_code == 1
    assert "GitHub token" in routed.output and "MEMREPO_VAULT_KEY" in routed.output
    assert "--allow-plaintext-secrets" in routed.output and s["github"] not in routed.output
    typed = _cli(root, "remember", f"My password is {s['password']}", "--type", "semantic")
    assert typed.exit_code == 1 and "password" in typed.output
    (tmp_path / "clean.txt").write_text("# Session 1: 2023-05-02 14:03\nMia: I bought a Suica card.\n")
    (tmp_path / "chat.txt").write_text(_conversation(s))
    ingest = _cli(root, "ingest", str(tmp_path / "clean.txt"), str(tmp_path / "chat.txt"))
    assert ingest.exit_code == 1 and "chat.txt" in ingest.output and "card number" in ingest.output
    assert "Traceback" not in ingest.output
    assert _head(root) == before  # not even the clean file before it
    assert [kind for kind, value in s.items() if value.encode() in _git_objects(root)] == []


def test_plaintext_secrets_need_an_explicit_opt_in(tmp_path):
    root = tmp_path / "m"
    MemoryRepo.init(root).close()
    s = planted()
    out = _cli(root, "remember", f"Deploys run with {s['github']}.", "--allow-plaintext-secrets", "--json")
    assert out.exit_code == 0, out.output
    (record_id,) = json.loads(out.output)["written"]
    assert s["github"] in _cli(root, "show", record_id).output
    (tmp_path / "chat.txt").write_text(_conversation(s))
    with MemoryRepo.open(root) as repo:
        with pytest.raises(VaultKeyError, match="no vault key"):
            repo.ingest([tmp_path / "chat.txt"])
        result = repo.ingest([tmp_path / "chat.txt"], allow_plaintext_secrets=True)
        assert result.sources_written and s["pin"].encode() in _git_objects(root)
        assert repo.ingest([tmp_path / "chat.txt"]).sources_unchanged  # a rerun skips it, with no need to opt in again


def test_a_key_other_than_the_repositorys_is_refused_for_writes(tmp_path):
    root = tmp_path / "m"
    MemoryRepo.init(root).close()
    key, other = generate_key(), generate_key()
    assert _cli(root, "remember", "My PIN is 4321.", key=key).exit_code == 0
    check = (root / KEY_CHECK_PATH).read_bytes()
    assert key not in check and b"hmac-sha256:" in check
    before = _head(root)
    refused = _cli(root, "remember", "My password is Tr0ub4dor-93x.", key=other)
    assert refused.exit_code == 1 and "not the repository's vault key" in refused.output
    typed = _cli(root, "remember", "door code 1234", "--type", "vault", key=other)
    assert typed.exit_code == 1 and "not the repository's vault key" in typed.output
    assert _head(root) == before
    listed = _cli(root, "list", key=key)
    assert listed.exit_code == 0 and "vault" in listed.output
    assert _cli(root, "remember", "Bought oat milk", key=other).exit_code == 0  # no secret: nothing to seal


def test_a_repository_without_a_key_check_gets_one_on_its_first_vault_write(tmp_path):
    root = tmp_path / "m"
    MemoryRepo.init(root).close()
    key, other = generate_key(), generate_key()
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        repo.remember("PIN 4321", type="vault", mention_time="2023-05-02")
        repo.store.commit({KEY_CHECK_PATH: None}, "A repository from before key checks")
    with MemoryRepo.open(root, settings=Settings(vault_key=other)) as wrong:
        with pytest.raises(VaultKeyError, match="does not decrypt"):
            wrong.remember("door code 9876", type="vault", mention_time="2023-05-03")
    assert not (root / KEY_CHECK_PATH).exists()
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        repo.remember("door code 9876", type="vault", mention_time="2023-05-03")
        assert repo.snapshot.exists(KEY_CHECK_PATH)


@pytest.mark.parametrize("kind", sorted(planted()))
def test_token_shapes_are_found_without_a_label(kind):
    value = planted()[kind]
    if kind == "pin":
        text = f"My PIN is {value}."
    elif kind == "password":
        text = f"password: {value}"
    elif kind == "azure":
        text = f"AccountName=x;AccountKey={value};EndpointSuffix=core.windows.net"
    elif kind == "gcp_key":
        text = json.dumps({"private_key": f"-----BEGIN PRIVATE KEY-----\n{value}\n-----END PRIVATE KEY-----\n"})
    elif kind == "db_url_password":
        text = f"postgres://app:{value}@db.internal/app"
    else:
        text = f"here it is: {value} - thanks"
    (finding,) = sensitive.find(text)
    assert value in finding.value
    assert value not in sensitive.redact(text)


@pytest.mark.parametrize("text", [
    "My password is wrong again, I keep forgetting it.",
    "The pin is broken on my bag.",
    "Card 4539 1488 0343 6468 failed the Luhn check.",  # one digit off: not a card number
    "Call me on +49 1512 3456789 tomorrow.",
    "The order number is 2023-05-02-1234.",
    "ISBN 978-3-16-148410-0, 1,234,567,890,123 yen",
    "max_tokens = 100000000",
    "The secret: never give up.",
    "Ask the skeleton-key question later.",
    "The token is valid for a week.",
])
def test_ordinary_text_is_not_a_secret(text):
    assert sensitive.find(text) == []


def test_no_false_positives_in_the_example_conversation():
    texts = (EXAMPLES / "conversation.txt").read_text().splitlines()
    assert [f for t in texts for f in sensitive.find(t)] == []


def test_no_false_positives_in_locomo():
    data = json.loads(shared_data("locomo", "locomo-dev.json").read_text())
    turns = [t["text"] for conv in data for key, session in conv["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    assert len(turns) > 1000
    assert [(f.kind, t) for t in turns for f in sensitive.find(t)] == []


# --- issue 37: what sealing got wrong ---------------------------------------------------------------------------


def _objects_hold(root: Path, value: str) -> bool:
    reflog = subprocess.run(["git", "reflog", "--all", "--format=%gs %B"], cwd=root, capture_output=True).stdout
    return value.encode() in _git_objects(root) or value.encode() in reflog


def test_a_password_after_is_colon_is_sealed_and_every_colon_stays(tmp_path):
    root, key = tmp_path / "m", generate_key()
    MemoryRepo.init(root).close()
    password = "Xq9zz-" + "secret1"
    out = _cli(root, "remember", f"My password is: {password} (note: the colons stay)", "--type", "semantic",
               "--json", key=key)
    assert out.exit_code == 0, out.output
    (record_id,) = [i for i in json.loads(out.output)["written"] if i.startswith("se-")]
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        text = repo.get(record_id).text
        (entry,) = repo.records("vault")
    assert text == f"My password is: [kept in the vault: {entry.id}] (note: the colons stay)"
    assert password in entry.text and not _objects_hold(root, password)


def test_a_quoted_password_leaves_one_pointer_in_the_source(keyed):
    password = "p@ss w0rd" + "#5"
    keyed.remember(f'my password is "{password}" now', mention_time="2023-07-04")
    (source,) = keyed.sources()
    (entry,) = keyed.records("vault")
    assert source.part("n1").text == f'my password is "[kept in the vault: {entry.id}]" now'
    assert not _objects_hold(keyed.root, password)


def test_ingest_to_seals_a_token_with_a_key_and_is_refused_without_one(tmp_path):
    root, key = tmp_path / "m", generate_key()
    MemoryRepo.init(root).close()
    token = planted()["github"]
    (tmp_path / "s.md").write_text(f"# Deploys\n\nThe bot pushes with {token}, weekly.\n")
    before = _head(root)
    refused = _cli(root, "ingest", "--to", "rules/s.md", str(tmp_path / "s.md"))
    assert refused.exit_code == 1 and "no vault key" in refused.output and "GitHub token" in refused.output
    assert token not in refused.output and "Traceback" not in refused.output
    assert _head(root) == before and not _objects_hold(root, token)
    stored = _cli(root, "ingest", "--to", "rules/s.md", str(tmp_path / "s.md"), key=key)
    assert stored.exit_code == 0, stored.output
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        (entry,) = repo.records("vault")
    assert (root / "rules" / "s.md").read_text() == \
        f"# Deploys\n\nThe bot pushes with [kept in the vault: {entry.id}], weekly.\n"
    assert token in entry.text and not _objects_hold(root, token)
    again = _cli(root, "ingest", "--to", "rules/s.md", str(tmp_path / "s.md"), key=key)
    assert again.exit_code == 0 and "nothing to commit" in again.output  # the same file, the same pointer
    plain = _cli(root, "ingest", "--to", "rules/t.md", str(tmp_path / "s.md"), "--allow-plaintext-secrets")
    assert plain.exit_code == 0 and token in (root / "rules" / "t.md").read_text()


def test_a_password_given_in_the_turn_after_the_question_is_sealed(tmp_path):
    root, key = tmp_path / "m", generate_key()
    MemoryRepo.init(root).close()
    password = "hunter" + "2x"
    chat = tmp_path / "chat.txt"
    chat.write_text(f"# Session 1: 2023-05-02 14:03\nMia: What's your password?\nJonas: {password}!\nMia: Thanks.\n")
    refused = _cli(root, "ingest", str(chat))
    assert refused.exit_code == 1 and "password (a reply)" in refused.output and "D1:2" in refused.output
    assert _cli(root, "ingest", str(chat), key=key).exit_code == 0
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        (source,) = repo.sources()
        (entry,) = repo.records("vault")
        assert source.part("D1:2").text == f"[kept in the vault: {entry.id}]!"
        assert entry.text == f"What's your password?\n{password}!"
        # The same, remembered as one note holding the conversation.
        repo.remember(f"Mia: What's the PIN?\nJonas: Sure, it's 60627193.", mention_time="2023-05-03")
    # eight digits: a shorter PIN can be found by chance in the hex of the repository's own ids and hashes
    assert not _objects_hold(root, password) and not _objects_hold(root, "60627193")


def test_no_id_is_a_plain_hash_of_a_pin_given_in_a_reply(keyed, tmp_path):
    from memrepo.records import make_id

    chat = tmp_path / "chat.txt"
    chat.write_text("# Session 1: 2023-07-04 09:00\nMia: What's the PIN for the garage?\nJonas: Sure, it's 6062.\n")
    keyed.ingest([chat])
    (source,) = keyed.sources()
    records = [r for t in ("episodic", "semantic", "procedural") for r in keyed.records(t)]
    reply = next(r for r in records if "D1:2" in r.id or any(c.endswith("#D1:2") for c in r.sources))
    assert "6062" not in reply.text
    # Try every PIN in the text the reply's record was made from, as someone holding the repository would.
    guessed = [pin for pin in (f"{n:04d}" for n in range(10_000))
               if make_id("episodic", namespace=reply.namespace, source=source.id, position="D1:2",
                          content=f"Jonas: Sure, it's {pin}.", mention_time=reply.mention_time) == reply.id]
    assert guessed == []
