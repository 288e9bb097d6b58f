# Two commands for a fresh machine (README.md): `make demo` and `make test`.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test setup lint

$(BIN)/guandan: pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

setup: $(BIN)/guandan

demo: setup
	$(BIN)/guandan demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy engine

test: lint
	$(BIN)/python -m pytest
