# SessionLab: `make demo` and `make test` are all a newcomer needs (Python 3.11+ only).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo needs only the app (requirements.txt), not the test toolchain; a full install serves it too.
APP_STAMP := $(VENV)/.installed-app
PORT ?= 8000

.DEFAULT_GOAL := help
.PHONY: help demo demo-data test lint bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

$(APP_STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing the app's requirements (requirements.txt) into $(VENV)/ ..."
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(APP_STAMP)

# The demo is development on this machine: DEBUG=1 (DEBUG is off unless set; docs/security.md).
# Its documents: the Cranfield collection shipped in studies/demo_data/cranfield, unless DEMO_DATA names another.
demo-data: $(APP_STAMP) ## Migrate the database and load the scored demo study (no server)
	@DEBUG=1 $(BIN)/python manage.py migrate --noinput
	@DEBUG=1 $(BIN)/python manage.py load_demo --port $(PORT)

demo: $(APP_STAMP) ## Install the app, migrate, load and score the demo study, serve http://127.0.0.1:$PORT (8000)
	@DEBUG=1 $(BIN)/python manage.py migrate --noinput
	@DEBUG=1 $(BIN)/python manage.py load_demo --port $(PORT) --serve

lint: $(STAMP) ## Run ruff and the import contracts (pyproject.toml: the one direction of imports)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: lint ## Run ruff, then the whole test suite
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP) ## Run the benchmark scripts (prints figures)
	$(BIN)/python bench/scoring.py

.PHONY: bench-load
bench-load: $(STAMP) ## Load benchmark: 200 participants for 60 s against gunicorn on PostgreSQL (prints figures)
	$(BIN)/python bench/load.py

clean: ## Remove the virtualenv and the SQLite database
	rm -rf $(VENV) db.sqlite3
