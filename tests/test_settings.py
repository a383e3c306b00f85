"""memrepo.toml and the environment: a value memrepo cannot use is a clear error naming the file, the key and
what was expected, from every command, all problems of the file at once, exit status 1, never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.settings import (FIELDS, SettingsError, approve_settings, config_from_text, load_settings,
                              network_keys)

BAD_TOML = """
[memrepo]
namespace = "default"
format = 1

[llm]
timeout = "soon"
max_retries = -1
max_tokens = 2.5
api_key = "sk-do-not-commit"

[embedding]
model = 384
mdoel = "typo"

[recall]
budget = "lots"
"""
EXPECTED_LINES = [
    "[llm] timeout: expected a number of seconds above 0, got the string 'soon'",
    "[llm] max_retries: expected a whole number, 0 or more, got -1",
    "[llm] max_tokens: expected a whole number, 1 or more, got 2.5",
    "[llm] api_key: not read from memrepo.toml, which is committed and shared; set OPENAI_API_KEY in the environment",
    "[embedding] model: expected a string, got 384",
    "[embedding] mdoel: unknown setting ([embedding] has model, base_url)",
    "[recall]: unknown section (memrepo.toml has [memrepo], [llm], [embedding])",
]


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("settings") / "memory"
    with MemoryRepo.init(root) as repo:
        repo.remember("Mia bought a Suica card at Tokyo Station", type="episodic", event_time="2023-05-02")
    (root / "memrepo.toml").write_text(BAD_TOML, encoding="utf-8")
    return root


def run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMREPO_"))}
    return subprocess.run([sys.executable, "-m", "memrepo", *args], cwd=root, capture_output=True, text=True,
                          env={**clean, **env}, timeout=120)


@pytest.mark.parametrize("args", [["search", "Suica"], ["recall", "Where did Mia buy a card?"], ["list"],
                                  ["remember", "Mia likes trains"], ["doctor"], ["reindex"]])
def test_every_command_names_each_bad_setting_and_exits_1(broken, args):
    result = run(broken, *args)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    path = broken / "memrepo.toml"
    assert lines[0].startswith("Error: ")
    assert [line.removeprefix("Error: ") for line in lines] == [f"{path}: {expected}" for expected in EXPECTED_LINES]


def test_nothing_is_written_when_the_settings_are_bad(broken):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=broken, capture_output=True, text=True).stdout
    assert run(broken, "remember", "Mia likes trains").returncode == 1
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=broken, capture_output=True, text=True).stdout == head


def test_a_base_url_in_the_environment_must_be_a_url(tmp_path):
    with MemoryRepo.init(tmp_path / "memory"):
        pass
    result = run(tmp_path / "memory", "list", OPENAI_BASE_URL="localhost:8080")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "Error: OPENAI_BASE_URL: expected an http:// or https:// URL, got 'localhost:8080'"


def test_the_shipped_template_and_good_values_pass(tmp_path):
    with MemoryRepo.init(tmp_path / "memory") as repo:
        assert repo.settings.llm.timeout == 60.0
    (tmp_path / "memory" / "memrepo.toml").write_text(
        '[memrepo]\nnamespace = "team"\n[llm]\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "m"\ntimeout = 2.5\n'
        'max_retries = 0\nmax_tokens = 64\n[embedding]\nmodel = "all-minilm-l6-v2-int8"\nbase_url = ""\n')
    settings = load_settings(tmp_path / "memory")
    assert (settings.namespace, settings.llm.timeout, settings.llm.max_retries) == ("team", 2.5, 0)
    assert settings.llm.base_url is None  # an endpoint in the committed file counts only once approved
    assert [item.key for item in settings.ignored] == ["llm.base_url"]
    approve_settings(tmp_path / "memory", tmp_path / "memory" / ".git" / "memrepo")
    assert load_settings(tmp_path / "memory").llm.base_url == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize("text, words", [
    ("[memrepo]\nformat = 2\n", "[memrepo] format: expected a whole number from 1 to 1"),
    ("[memrepo]\nnamespace = \"\"\n", "[memrepo] namespace: expected a non-empty string, got the string ''"),
    ("[llm]\ntimeout = true\n", "[llm] timeout: expected a number of seconds above 0, got true"),
    ("[llm]\nbase_url = \"ftp://x\"\n", "[llm] base_url: expected an http:// or https:// URL"),
    ("llm = 3\n", "llm: expected a table [llm], got 3"),
    ("namespace = \"x\"\n", "namespace: unknown setting (memrepo.toml has [memrepo], [llm], [embedding])"),
    ("[llm\n", "memrepo.toml: not valid TOML"),
    ('[llm]\n"x\\nError: fake" = 1\n', '[llm] "x\\nError: fake": unknown setting'),  # one line per problem, always
])
def test_each_kind_of_mistake_is_named(text, words):
    with pytest.raises(SettingsError) as caught:
        config_from_text(text, "memrepo.toml")
    assert words in str(caught.value)


def test_every_documented_setting_is_known():
    template = Path(__file__).parents[1] / "templates" / "repo" / "memrepo.toml"
    config = config_from_text(template.read_text(encoding="utf-8"), "memrepo.toml")
    assert set(config) <= set(FIELDS)


@pytest.mark.parametrize("text, keys", [
    ('[memrepo]\nnamespace = "team"\n[llm]\nmodel = "m"\ntimeout = 2.5\nmax_retries = 0\nmax_tokens = 64\n'
     '[embedding]\nmodel = "all-minilm-l6-v2-int8"\n', []),
    ('[llm]\nbase_url = "http://127.0.0.1:9/v1"\n[embedding]\nbase_url = "https://example.invalid/v1"\n',
     ["embedding.base_url", "llm.base_url"]),
    ('[llm]\nbase_url = ""\n[embedding]\nbase_url = " "\n', []),
    ('[llm]\napi_key = "x"\n[embedding]\nmodel_cache = "models"\n', ["embedding.model_cache", "llm.api_key"]),
    ('[proxy]\nhost = "h"\nport = 8080\n[recall]\nmirrors = ["https://x"]\nnote = "../outside"\n',
     ["proxy.host", "proxy.port", "recall.mirrors", "recall.note"]),
])
def test_network_keys_names_every_key_that_decides_where_data_goes(text, keys):
    assert network_keys(text) == keys


def test_network_keys_refuses_text_that_is_not_toml():
    with pytest.raises(SettingsError, match="not valid TOML"):
        network_keys("[llm\n")


# --- a committed memrepo.toml cannot redirect model traffic (DESIGN.md section 9, issue 37) ------------------

class RecordingEndpoint:
    """A real OpenAI-compatible server on 127.0.0.1 (chat completions and embeddings) that keeps every request's
    path and Authorization header. Its model routes a note to one semantic fact; its vectors are a hash."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str | None]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                endpoint.requests.append((self.path, self.headers.get("Authorization")))
                reply = endpoint.reply(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reply(self, path: str, body: dict) -> dict:
        if path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in inputs]
            return {"object": "list", "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]}
        role = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if role == "router":
            content = json.dumps({"types": ["semantic"]})
        elif role == "semantic_writer":
            schema = body["response_format"]["json_schema"]["schema"]
            anchors = schema["properties"]["facts"]["items"]["properties"]["anchors"]["items"]["enum"]
            content = json.dumps({"facts": [{"anchors": [anchors[0]], "text": "Mia owns a Suica card",
                                             "subject": "Mia"}]})
        else:
            content = "{}"
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "scripted",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2}}

    def __enter__(self) -> "RecordingEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), "-c", "user.name=Eve", "-c", "user.email=eve@example.com", *args],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


@pytest.fixture
def clones(tmp_path) -> tuple[Path, Path]:
    """(a teammate's clone that pushes, the user's clone) of one real bare remote."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    pusher = tmp_path / "pusher"
    with MemoryRepo.init(pusher) as repo:
        repo.remember("Hiroshi works at Sony", type="semantic", mention_time="2023-05-02")
    git(pusher, "remote", "add", "origin", str(remote))
    git(pusher, "push", "-q", "origin", "main")
    user = tmp_path / "user"
    git(tmp_path, "clone", "-q", str(remote), str(user))
    return pusher, user


def push_config(pusher: Path, text: str) -> None:
    (pusher / "memrepo.toml").write_text(text, encoding="utf-8")
    git(pusher, "commit", "-q", "-am", "settings")
    git(pusher, "push", "-q", "origin", "main")


def test_a_pushed_base_url_gets_no_request_until_approved_and_again_when_changed(clones, tmp_path):
    pusher, user = clones
    key = "-".join(["fake", "test", "key", str(os.getpid())])  # built at run time: no key-like literal
    config_home = tmp_path / "config"
    with RecordingEndpoint() as mine, RecordingEndpoint() as theirs:
        (config_home / "memrepo").mkdir(parents=True)
        (config_home / "memrepo" / "config.toml").write_text(
            f'[llm]\nbase_url = "{mine.url}"\nmodel = "m"\n[embedding]\nbase_url = "{mine.url}"\nmodel = "e"\n')
        env = {"XDG_CONFIG_HOME": str(config_home), "OPENAI_API_KEY": key}
        push_config(pusher, f'[memrepo]\nnamespace = "default"\n[llm]\nbase_url = "{theirs.url}"\n'
                            f'[embedding]\nbase_url = "{theirs.url}"\nmodel = "e"\n')
        git(user, "pull", "-q", "--no-rebase", "origin", "main")
        path = user / "memrepo.toml"

        wrote = run(user, "remember", "Mia bought a Suica card at Tokyo Station", **env)
        found = run(user, "search", "Suica", **env)

        assert wrote.returncode == 0, wrote.stderr
        assert found.returncode == 0, found.stderr
        assert theirs.requests == []  # no note, no record text, no Authorization header went there
        assert {p.rsplit("/", 1)[-1] for p, _ in mine.requests} >= {"completions", "embeddings"}
        assert {auth for _, auth in mine.requests} == {f"Bearer {key}"}
        for result in (wrote, found):
            assert f"{path}: [llm] base_url = \"{theirs.url}\" ignored (not approved in this clone" in result.stderr
            assert f"{path}: [embedding] base_url = \"{theirs.url}\" ignored" in result.stderr

        shown = json.loads(run(user, "settings", "show", "--json", **env).stdout)
        sources = {row["key"]: (row["value"], row["source"]) for row in shown["settings"]}
        assert sources["llm.base_url"] == (mine.url, str(config_home / "memrepo" / "config.toml"))
        assert sources["llm.api_key"] == ("(set)", "environment OPENAI_API_KEY")
        assert key not in json.dumps(shown)
        assert sorted(item["key"] for item in shown["ignored"]) == ["embedding.base_url", "llm.base_url"]

        approved = run(user, "settings", "approve", **env)
        assert approved.returncode == 0, approved.stderr
        assert f'approved llm.base_url = "{theirs.url}" for this clone' in approved.stdout
        assert "approved-settings.json" not in git(user, "status", "--porcelain", "--ignored")
        mine.requests.clear()
        assert run(user, "search", "Suica", **env).returncode == 0
        assert theirs.requests and not mine.requests  # the user chose to follow it in this clone

        push_config(pusher, f'[llm]\nbase_url = "{theirs.url}/v2"\n[embedding]\nbase_url = "{theirs.url}"\n'
                            'model = "e"\n')
        git(user, "pull", "-q", "--no-rebase", "origin", "main")
        theirs.requests.clear()
        wrote = run(user, "remember", "Mia lost her Suica card", **env)
        assert wrote.returncode == 0, wrote.stderr
        assert f"[llm] base_url = \"{theirs.url}/v2\" ignored (its value changed since it was approved" in wrote.stderr
        assert not [p for p, _ in theirs.requests if "/v2/" in p]  # the changed endpoint gets nothing
        assert {p.rsplit("/", 1)[-1] for p, _ in mine.requests} >= {"completions"}


def test_the_environment_beats_the_user_config_and_a_committed_key_is_refused(tmp_path):
    root = tmp_path / "memory"
    with MemoryRepo.init(root):
        pass
    user_config = tmp_path / "xdg" / "memrepo" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "mine"\napi_key = "from-file"\n'
                           '[embedding]\nmodel_cache = "/var/cache/m"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENAI_BASE_URL": "http://127.0.0.1:8/v1"}
    settings = load_settings(root, env)
    assert (settings.llm.base_url, settings.llm.model, settings.llm.api_key) == ("http://127.0.0.1:8/v1", "mine",
                                                                                 "from-file")
    assert settings.embedding.api_key == "from-file" and settings.embedding.model_cache == "/var/cache/m"
    assert settings.sources["llm.base_url"] == "environment OPENAI_BASE_URL"
    assert settings.sources["llm.model"] == str(user_config)
    assert load_settings(root, {"HOME": str(tmp_path / "nohome")}).llm.base_url is None  # ~/.config absent

    user_config.write_text('[llm]\ntimeout = "soon"\n[memrepo]\nnamespace = "x"\n')
    result = run(root, "list", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{user_config}: [llm] timeout: expected a number of seconds above 0" in result.stderr
    assert f"{user_config}: [memrepo]: unknown section (config.toml has [llm], [embedding])" in result.stderr


def test_an_approval_is_kept_in_the_clone_and_read_when_it_is_opened(tmp_path):
    root = tmp_path / "memory"
    with MemoryRepo.init(root):
        pass
    (root / "memrepo.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\n')
    with MemoryRepo.open(root) as repo:
        assert repo.settings.llm.base_url is None
        assert any("[llm] base_url" in notice for notice in repo.store.notices)
        assert repo.approve_settings() == [("llm.base_url", "http://127.0.0.1:9/v1")]
    with MemoryRepo.open(root) as repo:
        assert repo.settings.llm.base_url == "http://127.0.0.1:9/v1" and repo.store.notices == []


def test_sync_says_a_pulled_endpoint_is_ignored(clones):
    pusher, user = clones
    push_config(pusher, '[llm]\nbase_url = "http://127.0.0.1:9/v1"\n')

    result = run(user, "sync")

    assert result.returncode == 0, result.stderr
    assert "got 1 commit(s)" in result.stdout
    assert f'{user / "memrepo.toml"}: [llm] base_url = "http://127.0.0.1:9/v1" ignored' in result.stderr
