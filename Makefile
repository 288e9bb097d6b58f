# Two commands for a fresh machine (README.md): `make demo` and `make test`.
# Both create .venv on first use; `make demo` installs only the runtime, `make test` adds the
# dev and train extras (torch/ultralytics for the CI smoke training; never imported at run time).
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
ARGS ?=

.PHONY: demo test setup setup-test system-deps lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev,train]'
	@touch $@ $(VENV)/.runtime

setup: $(VENV)/.runtime

setup-test: $(VENV)/.test

# Debian packages the tests use: Chromium (page screenshots), the aisleriot and KDE card designs
# (KDE's rendered by rsvg-convert), the DejaVu / Liberation / Noto CJK fonts (detector smoke
# training, drawn and randomised decks with Chinese jokers). Installed only when missing; needs
# root, as on the CI machine.
TEST_DEBS := chromium gnome-cards-data fonts-dejavu-core fonts-dejavu-extra fonts-liberation \
	fonts-noto-cjk kdegames-card-data-kf5 librsvg2-bin

system-deps:
	@missing=""; for p in $(TEST_DEBS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

demo: setup
	$(BIN)/guandan demo $(ARGS)

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy engine

test: system-deps lint
	$(BIN)/python -m pytest $(ARGS)
