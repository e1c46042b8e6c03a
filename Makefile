# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv and
# installs everything it needs (idempotent: a stamp file re-installs only when
# pyproject.toml changes).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.mir-installed

# llama-cpp-python compiles llama.cpp from source: skip the CPU-specific tuning and the
# multimodal library (~3 min faster on 2 cores, same inference speed). It is installed
# *by name* (not from a local sdist) so pip's wheel cache is reused on a second install.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
# litellm must never fetch its cost map at run time (no network): use the bundled copy.
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: install demo test test-duckdb2 lint format bench clean browser docs phoenix

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/python examples/demo.py

# The HTML eval report is tested in a real headless Chromium: Debian's package, driven by
# Playwright through its path (Playwright never downloads a browser here).
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get install -y chromium || { apt-get update -qq && apt-get install -y chromium; }; \
	  else echo "chromium is missing: run 'sudo apt-get install -y chromium' (the HTML report test skips without it)"; fi; }

# Arize Phoenix, the OTLP backend the live-export test sends spans to, in an env of its
# own (its ~100 dependencies would clash with mir's; ~50 s to install, once).
PHOENIX := $(VENV)/phoenix
phoenix: | $(BIN)/python
	test -x $(PHOENIX)/bin/phoenix || { $(PYTHON) -m venv $(PHOENIX) && \
	  $(PHOENIX)/bin/pip install --quiet "arize-phoenix==20.26.1"; }

test: install browser phoenix
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mir schema --check schemas
	$(BIN)/mir lint boundaries .
	$(BIN)/pytest -n 2 --dist loadgroup
	$(MAKE) test-duckdb2

# The fleet extra pins DuckDB 1.5.5 (its DuckLake extensions ship as wheels); local mode
# must keep working on DuckDB 2 too: the trace store, drift and the CLI over them, with
# DuckDB 2 put first on the path (the rest of the venv unchanged).
DUCKDB2 := $(VENV)/duckdb2
LOCAL_ON_DUCKDB2 := tests/unit/traces tests/unit/drift tests/unit/test_duckdb_versions.py \
	tests/integration/test_trace_store*.py tests/integration/test_drift_rows.py \
	tests/integration/test_drift_hostile.py tests/functional/test_traces_cli.py \
	tests/functional/test_drift_cli.py tests/functional/test_flow_sources.py

test-duckdb2: install
	test -f $(DUCKDB2)/.installed || { $(BIN)/pip install --quiet --upgrade --target $(DUCKDB2) "duckdb>=2,<3" && touch $(DUCKDB2)/.installed; }
	PYTHONPATH=$(DUCKDB2) MIR_EXPECT_DUCKDB=2. $(BIN)/pytest -n 2 -q -m "not fleet" $(LOCAL_ON_DUCKDB2)

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# docs/cli.md, the command reference, from the typer app (a test fails when it is stale)
docs: install
	$(BIN)/python docs/cli_reference.py

bench: install
	$(BIN)/python bench/startup.py

clean:
	rm -rf $(VENV) .mir .pytest_cache .ruff_cache dist build
