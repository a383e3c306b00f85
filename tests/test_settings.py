"""memrepo.toml and the environment: a value memrepo cannot use is a clear error naming the file, the key and
what was expected, from every command, all problems of the file at once, exit status 1, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.api import MemoryRepo
from memrepo.settings import FIELDS, SettingsError, config_from_text, load_settings, network_keys

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
    assert (settings.namespace, settings.llm.base_url, settings.llm.timeout, settings.llm.max_retries) == (
        "team", "http://127.0.0.1:8080/v1", 2.5, 0)


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
