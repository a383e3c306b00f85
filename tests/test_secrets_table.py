"""Secret forms and look-alikes (issue 37, "Secrets"), one table run through the detector and the write paths.

Every form is found by ``sensitive.find`` (or ``find_replies`` over turns); no look-alike is. Then
the same forms go through ``remember`` (routed and typed), ``ingest`` of a conversation and
``ingest --to``, with a vault key (nothing in plaintext in any Git object, the reflog or any file
under .git/memrepo/, and the text around each secret byte for byte) and without one (each form
refused on each path, nothing written). Token-shaped values are built at run time, so that this
file holds no string a secret scanner would flag.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memrepo import sensitive
from memrepo.api import MemoryRepo
from memrepo.cli import cli
from memrepo.errors import VaultKeyError
from memrepo.settings import Settings
from memrepo.vault import generate_key

from test_secrets import _tantivy_documents


def _hex(n: int, seed: str = "9f3a") -> str:
    return (seed * n)[:n]


def _mix(n: int, seed: str = "Qx7Lm2Np") -> str:
    return (seed * n)[:n]


# name -> (text holding the secret, the secret's value). A "\n" separates turns of a dialogue.
def secret_forms() -> dict[str, tuple[str, str]]:
    pem_body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC" + _mix(40, "Zr8Kq2Wd")
    pem = "-----BEGIN " + "PRIVATE KEY-----\n" + pem_body + "\n-----END " + "PRIVATE KEY-----"
    tokens = {
        "github": "ghp_" + "A1b2" * 9,
        "github_pat": "github_pat_" + "11ABCDE2F0" + _mix(60, "x7Yq"),
        "gitlab": "glpat-" + _mix(20, "Vt9xQ2mB"),
        "huggingface": "hf_" + _mix(34, "QxLmNpRt"),
        "npm": "npm_" + _mix(36, "Zk4Wq9Lr"),
        "sendgrid": "SG." + _mix(22, "Ab3dE5fG") + "." + _mix(43, "Hi7jK9lM"),
        "anthropic": "sk-ant-api03-" + _mix(80, "Rv5Tw8Xy") + "-" + _mix(10, "AaBb"),
        "openai": "sk-proj-" + _mix(40, "R7vK2mQ9"),
        "stripe": "sk_live_" + _mix(24, "51HqZ"),
        "twilio": "SK" + _hex(32, "a3f9"),
        "mailgun": "key-" + _mix(32, "3w9Zk"),
        "shopify": "shpat_" + _hex(32, "b7c1"),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + _mix(60, "CJDk4Nz"),
        "doppler": "dp.pt." + _mix(43, "Lx8Qw3Ez"),
        "digitalocean": "dop_v1_" + _hex(64, "c4d2"),
        "linear": "lin_api_" + _mix(40, "Mn4Bv7Cx"),
        "notion": "secret_" + _mix(43, "Tq6Yp1Ur"),
        "telegram": "7123456789:AA" + _mix(33, "Fh2Gj5Kl"),
        "discord": "M" + _mix(25, "TA3NzQ5Mj") + "." + "GhT3kQ" + "." + _mix(30, "pL9sW2dR"),
        "groq": "gsk_" + _mix(52, "Wq8Er4Ty"),
        "aws": "AKIA" + "J7QX2MZK5VLP4TRN",
        "google": "AIza" + _mix(35, "SyB4xK9m"),
        "slack": "xoxb-" + "4312987650123-" + _mix(24, "Hq7TzP2w"),
        "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJtaWEiLCJyb2xlIjoiYWRtaW4ifQ." + _mix(32, "Wb3kS8pQ"),
        "bearer": _mix(40, "Zx9Cv8Bn"),
        "datadog": _hex(32, "d7e4"),
        "heroku": "4f6b2c1a-" + "9d3e-4b7a-8c2f-" + "1e5d7a9b3c6f",
    }
    forms = {name: (f"here it is: {value} - thanks", value) for name, value in tokens.items()}
    forms["bearer"] = (f"curl -H 'Authorization: Bearer {tokens['bearer']}' https://api.example.org", tokens["bearer"])
    forms["datadog"] = (f"DD_API_KEY={tokens['datadog']}", tokens["datadog"])
    forms["heroku"] = (f"The Heroku API key is {tokens['heroku']}", tokens["heroku"])
    forms["pem"] = (f"The deploy key:\n{pem}\nkeep it safe", pem_body)
    forms["url"] = ("It connects to postgres://export:" + "Pg-S3cr3t-771" + "@db.internal:5432/app", "Pg-S3cr3t-771")
    forms["card"] = ("Pay with 4539 1488 0343 6467 and keep the receipt.", "4539 1488 0343 6467")
    forms["iban"] = ("Rent goes to GB82 WEST 1234 5698 7654 32 every month.", "GB82 WEST 1234 5698 7654 32")
    prose = {
        "bank_account": ("The password for my bank account is {}.", "Kx9-vault-" + "31q"),
        "pin_bare": ("PIN {} for the side door", "7345"),
        "is_colon": ("My password is: {} and the note: colons stay", "Xq9zz-" + "secret1"),
        "quoted": ('my password is "{}" now', "p@ss w0rd" + "#5"),
        "plain_word": ("The wifi password is {}.", "swordfish" + "tango"),
        "pin_is": ("My bank PIN is {}.", "8251"),
        "door_code": ("The door code: {}, since Monday", "4417"),
        "config": ("DB_PASSWORD={}", "Zq" + "-config-pw-93"),
        "passphrase": ("My passphrase is {}.", "purple " + "otter eats " + "nine lemons"),
        "german": ("Mein Passwort ist {}.", "Sonnen" + "schein42"),
        "german_kennwort": ("Das Kennwort für das Konto lautet {}", "Kenn-" + "wort-77"),
        "french": ("Mon mot de passe est {}.", "bonjour" + "-Paris9"),
        "spanish": ("Mi contraseña del banco es {}.", "gato-azul" + "-77"),
        "italian": ("La mia password è {}.", "Ciao!" + "Roma2023"),
        "italian_parola": ("La parola d'ordine è {}", "Vesuvio" + "-81"),
        "portuguese": ("Minha senha é {}.", "abacaxi" + "99x"),
        "dutch": ("Mijn wachtwoord is {}.", "fiets" + "123bel"),
        "swedish": ("Mitt lösenord är {}.", "Sommar" + "2024x"),
        "reply_password": ("Mia: what's your password?\nJonas: {}!", "hunter" + "2x"),
        "reply_pin": ("Mia: What's the PIN for the garage?\nJonas: Sure, it's {}.", "6062"),
        "reply_german": ("Mia: Wie lautet dein Passwort?\nJonas: {}", "Tanne" + "nbaum7"),
    }
    forms.update({name: (template.format(value), value) for name, (template, value) in prose.items()})
    return forms


PROSE = {"bank_account", "pin_bare", "is_colon", "quoted", "plain_word", "pin_is", "door_code", "passphrase",
         "german", "german_kennwort", "french", "spanish", "italian", "italian_parola", "portuguese", "dutch",
         "swedish", "reply_password", "reply_pin", "reply_german"}


LOOK_ALIKES = [
    # a Luhn-valid card-shaped run of digits inside a hex hash, as in a graph file's frame IRI
    "<urn:memrepo:frame:5c1e" + "4111" * 4 + "ab> a mr:Frame .",
    "I changed my password yesterday.",
    "The password is too short, it needs 12 characters.",
    "My password is 8 characters long.",
    "Reset your password with the link we sent.",
    "The wifi password is written on the fridge.",
    "The password is taped under the keyboard.",
    "The password is the name of my first dog.",
    "Your password is required.",
    "The passphrase is long and hard to remember.",
    "My password is wrong again, I keep forgetting it.",
    "Mein Passwort ist falsch.",
    "Le mot de passe est incorrect.",
    "La contraseña es demasiado corta.",
    "La password è scaduta.",
    "A senha é fraca.",
    "Het wachtwoord is verlopen.",
    "PIN the tweet to the top of the profile.",
    "Pin the tail on the donkey at 3 pm.",
    "My PIN is four digits long.",
    "The door code changed last week.",
    "We use scikit-learn (sk-learn) for the baseline.",
    "Upgrade to version 2.14.3 before Friday.",
    "Python 3.12.1 and numpy 1.26.4 are installed.",
    "Merged commit 3f2a9c1d4e5b6a7980abcdef1234567890abcdef into main.",
    "The request id is 123e4567-e89b-12d3-a456-426614174000.",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "It costs $1,299.99, or 45,00 € in the shop.",
    "Call me on +49 1512 3456789 tomorrow.",
    "The order number is 2023-05-02-1234.",
    "ISBN 978-3-16-148410-0, 1,234,567,890,123 yen",
    "Card 4539 1488 0343 6468 failed the Luhn check.",
    "The meeting is at 12:30:45 in room 4.",
    "Ping 192.168.1.10 and fe80::1 to check the router.",
    "Set OPENAI_API_KEY=${OPENAI_API_KEY} in the shell.",
    "token = os.environ['GITHUB_TOKEN']",
    "max_tokens = 100000000",
    "hf_hub_download fetches the model.",
    "npm_config_cache points at the cache folder.",
    "SG. Meeting notes follow.",
    "A key-value store keeps it.",
    "Tokens are prefixed with shpat_ or ghp_ by convention.",
    "secret_santa_list.txt is on the desk.",
    "Bearer of bad news, again.",
    "Visit https://example.com/path?q=1&x=2 for details.",
    "Email me at mia@example.com.",
    "The API key is stored in the vault.",
    "The secret: never give up.",
    "We pinned version 1.2.3 of the package.",
    "Paid: Store Credit: $35, Credit Card: $410.",
    "Change password: Settings > Security",
    "password: <your password>",
    "PIN 1 is ground, pin 2 is VCC.",
    "The code review is at 10:30.",
    "Did you change your password?\nYes, last week.",
    "What's your password?\nI'd rather not say.",
    "What's the wifi password?\nIt's on the fridge.",
    "Forgot your PIN?\nYes, again.",
    "Do you use a password manager?\nYes, the one on my phone.",
    "La clave es practicar todos los días.",
    'PASSWORD = os.environ["PASSWORD"]',
    "db_password = settings.DB_PASSWORD",
    "def check(password: str) -> bool:",
    "Our Heroku app 123e4567-e89b-12d3-a456-426614174000 restarted.",
]


# --- the detector --------------------------------------------------------------------------------


def test_there_are_enough_forms_and_look_alikes():
    assert len(secret_forms()) >= 40 and len(LOOK_ALIKES) >= 40


def test_every_label_holds_one_of_the_hints_that_let_its_pattern_run():
    from memrepo.sensitive import _LABEL_CONNECTORS, _LABEL_HINTS

    assert [label for label in _LABEL_CONNECTORS if not any(h in label for h in _LABEL_HINTS)] == []


@pytest.mark.parametrize("name", sorted(secret_forms()))
def test_every_form_is_found_with_its_value(name):
    text, value = secret_forms()[name]
    found = sensitive.find(text)
    assert [f.value for f in found if value in f.value] != [], (name, found)
    assert value not in sensitive.redact(text)


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_no_look_alike_is_found(text):
    assert sensitive.find(text) == []


@pytest.mark.parametrize("name", sorted(n for n, (t, _) in secret_forms().items() if n.startswith("reply_")))
def test_a_reply_in_the_next_turn_is_found_over_turns(name):
    text, value = secret_forms()[name]
    turns = [line.split(": ", 1)[1] for line in text.split("\n")]
    ((index, finding),) = sensitive.find_replies(turns)
    assert index == 1 and finding.value == value


def test_sealing_replaces_exactly_the_secret():
    for name, (text, value) in secret_forms().items():
        sealed = sensitive.redact(text, {value: "[kept in the vault: va-x]"})
        assert sealed == text.replace(value, "[kept in the vault: va-x]"), name
        assert sensitive.redact(sealed) == sealed, name  # a pointer is never sealed again


# --- the write paths -----------------------------------------------------------------------------


def _leaks(root: Path, values: dict[str, str]) -> dict[str, list[str]]:
    """name -> where its value stands in plaintext: Git objects, the reflog, files under .git/memrepo, Tantivy."""
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True,
                             check=True).stdout
    reflog = subprocess.run(["git", "reflog", "--all", "--format=%H %gs%n%B"], cwd=root, capture_output=True,
                            check=True).stdout
    logs = b"".join(p.read_bytes() for p in (root / ".git" / "logs").rglob("*") if p.is_file())
    state = {p: p.read_bytes() for p in (root / ".git" / "memrepo").rglob("*") if p.is_file()}
    work = {p: p.read_bytes() for p in root.rglob("*.md") if ".git" not in p.parts}
    tantivy = _tantivy_documents(root).encode()
    found: dict[str, list[str]] = {}
    for name, value in values.items():
        whole = re.compile(rb"(?<![A-Za-z0-9])" + re.escape(value.encode()) + rb"(?![A-Za-z0-9])")
        where = [label for label, data in (("git objects", objects), ("reflog", reflog + logs),
                                           ("tantivy", tantivy)) if whole.search(data)]
        where += [str(p.relative_to(root)) for p, data in {**state, **work}.items() if whole.search(data)]
        if where:
            found[name] = where
    return found


def _conversation(forms: dict[str, tuple[str, str]]) -> str:
    """Every form as turns of one OpenAI-messages conversation (a dialogue form's question and reply as two)."""
    messages = []
    for text, _ in forms.values():
        for i, line in enumerate(text.split("\n") if "\n" in text and ": " in text.split("\n")[0] else [text]):
            messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": line.split(": ", 1)[-1]
                             if "\n" in text and ": " in text.split("\n")[0] else line})
        messages.append({"role": "assistant", "content": "Noted."})
    return json.dumps({"title": "Secrets", "date": "2023-05-02", "messages": messages})


def _document(forms: dict[str, tuple[str, str]]) -> str:
    return "# Notes\n\n" + "\n\n".join(text for text, _ in forms.values()) + "\n"


def _cli(root: Path, *args: str, key: bytes | None = None):
    env = {"MEMREPO_VAULT_KEY": key.decode()} if key else {"MEMREPO_VAULT_KEY": ""}
    return CliRunner().invoke(cli, ["--repo", str(root), *args], env=env)


POINTER_RE = re.compile(r"\[kept in the vault(?:: va-[0-9a-z-]+)?\]")


def test_with_a_key_no_form_is_left_in_plaintext_on_any_write_path(tmp_path):
    forms = secret_forms()
    values = {name: value for name, (_, value) in forms.items()}
    root, key = tmp_path / "m", generate_key()
    MemoryRepo.init(root).close()
    (tmp_path / "chat.json").write_text(_conversation(forms))
    (tmp_path / "s.md").write_text(_document(forms))
    names = sorted(forms)
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        note = "\n\n".join(forms[n][0] for n in names[::2])
        repo.remember(note, mention_time="2023-05-02")  # routed: a source and its records
        repo.remember("\n\n".join(forms[n][0] for n in names[1::2]), type="semantic", mention_time="2023-05-03")
        repo.ingest([tmp_path / "chat.json"], mention_time="2023-05-02")
        stored = repo.source(next(s.id for s in repo.sources() if s.kind == "note")).part("n1").text
    placed = _cli(root, "ingest", "--to", "rules/s.md", str(tmp_path / "s.md"), key=key)
    assert placed.exit_code == 0, placed.output
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        repo.reindex(full=True)
        repo.search("password")
    assert _leaks(root, values) == {}
    # What memrepo committed passes the detector the push check runs on every blob.
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    flagged = {}
    for name in files:
        text = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=root, capture_output=True, check=True).stdout
        found = sensitive.find(text.decode("utf-8", "replace"))
        if found:
            flagged[name] = [f.kind for f in found]
    assert flagged == {}
    # Each secret (as found: a private key from BEGIN to END), and nothing else, was replaced: the text
    # around it is byte for byte what was given.
    sealed = sorted({f.value for text, _ in forms.values() for f in sensitive.find(text)}, key=len, reverse=True)

    def expected(given: str) -> str:
        for value in sealed:
            given = given.replace(value, "\0")
        return given

    assert POINTER_RE.sub("\0", stored) == expected(note)
    assert POINTER_RE.sub("\0", (root / "rules" / "s.md").read_text()) == expected(_document(forms))
    # The vault gives every value back.
    with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
        vault_text = "\n".join(r.text for r in repo.records("vault"))
    assert [name for name, value in values.items() if value not in vault_text] == []
    assert subprocess.run(["git", "fsck", "--strict"], cwd=root, capture_output=True).returncode == 0


def test_without_a_key_every_form_is_refused_on_every_write_path(tmp_path):
    forms = secret_forms()
    root = tmp_path / "m"
    MemoryRepo.init(root).close()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout
    passed: list[tuple[str, str]] = []
    with MemoryRepo.open(root) as repo:
        for name, (text, value) in forms.items():
            for path, write in (
                    ("remember", lambda t: repo.remember(t, mention_time="2023-05-02")),
                    ("remember --type", lambda t: repo.remember(t, type="semantic", mention_time="2023-05-02"))):
                try:
                    write(text)
                    passed.append((path, name))
                except VaultKeyError as exc:
                    assert "no vault key" in str(exc) and value not in str(exc)
                    if name in PROSE and len(value) >= 8:
                        assert f"{value[:4]}…" not in str(exc)  # nothing of a value a person chose
            one = {name: forms[name]}
            (tmp_path / "chat.json").write_text(_conversation(one))
            try:
                repo.ingest([tmp_path / "chat.json"], mention_time="2023-05-02")
                passed.append(("ingest", name))
            except VaultKeyError:
                pass
    for name in forms:
        (tmp_path / "s.md").write_text(_document({name: forms[name]}))
        out = _cli(root, "ingest", "--to", f"rules/{name}.md", str(tmp_path / "s.md"))
        if out.exit_code != 1 or "no vault key" not in out.output:
            passed.append(("ingest --to", name))
    assert passed == []
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout == head
    values = {name: value for name, (_, value) in forms.items()}
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True,
                             check=True).stdout
    assert [name for name, value in values.items() if value.encode() in objects] == []


def test_look_alikes_are_written_as_they_are_with_or_without_a_key(tmp_path):
    text = "\n\n".join(LOOK_ALIKES)
    for key in (None, generate_key()):
        root = tmp_path / ("keyed" if key else "plain")
        MemoryRepo.init(root).close()
        with MemoryRepo.open(root, settings=Settings(vault_key=key)) as repo:
            result = repo.remember(text, type="semantic", mention_time="2023-05-02")
            (record_id,) = result.written
            assert repo.get(record_id).text == text
            assert repo.records("vault") == []
        (tmp_path / "l.md").write_text(text + "\n")
        out = _cli(root, "ingest", "--to", "rules/l.md", str(tmp_path / "l.md"), key=key)
        assert out.exit_code == 0, out.output
        assert (root / "rules" / "l.md").read_text() == text + "\n"


# --- the push check ------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(root), *args], capture_output=True,
                          text=True)


def test_a_push_of_every_form_in_plaintext_is_refused_and_no_look_alike_is(tmp_path, monkeypatch):
    """One commit holding each form in a file of its own (and each look-alike in one), pushed to a real bare
    remote whose pre-receive hook runs the detector; `memrepo validate` names exactly the files with a form."""
    project = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PYTHONPATH", str(project))
    remote, clone = tmp_path / "remote.git", tmp_path / "a"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert CliRunner().invoke(cli, ["serve-hooks", "install", str(remote)]).exit_code == 0
    assert CliRunner().invoke(cli, ["clone", str(remote), str(clone)]).exit_code == 0
    _git(clone, "config", "user.name", "Ana")
    _git(clone, "config", "user.email", "ana@example.org")
    forms = secret_forms()
    expected = {f"rules/secrets/{name}.md" for name in forms}
    for name, (text, _) in forms.items():
        (clone / "rules" / "secrets").mkdir(parents=True, exist_ok=True)
        (clone / "rules" / "secrets" / f"{name}.md").write_text(f"# {name}\n\n{text}\n")
    for i, text in enumerate(LOOK_ALIKES):
        (clone / "rules" / "prose").mkdir(parents=True, exist_ok=True)
        (clone / "rules" / "prose" / f"p{i:02d}.md").write_text(f"# Prose {i}\n\n{text}\n")
    assert _git(clone, "add", "rules").returncode == 0
    assert _git(clone, "commit", "-q", "-m", "rules").returncode == 0
    done = _git(clone, "push", "origin", "main")
    assert done.returncode != 0 and "memrepo: refused:" in done.stderr and "rule secret" in done.stderr
    result = CliRunner().invoke(cli, ["--repo", str(clone), "validate", "HEAD", "--json"])
    assert result.stdout.startswith("{"), (done.stderr, result.output)
    problems = json.loads(result.stdout)["problems"]
    assert {p["path"] for p in problems if p["rule"] == "secret"} == expected
    values = [value for _, value in forms.values()]
    assert [v for v in values if len(v) >= 6 and v in done.stderr + result.stdout] == []  # never the value
