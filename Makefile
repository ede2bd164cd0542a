# SessionLab: `make demo` and `make test` are all a newcomer needs (Python 3.11+ only).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo needs only the app (requirements.txt), not the test toolchain; a full install serves it too.
APP_STAMP := $(VENV)/.installed-app
PORT ?= 8000

.DEFAULT_GOAL := help
.PHONY: help demo demo-data serve check test lint typecheck bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-10s %s\n", $$1, $$2}'

# The test toolchain: the app, then the tools and oracles; pip prints a line per package, as for the app.
$(STAMP): requirements.txt requirements-dev.txt requirements-oracles.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing the app and the test toolchain (requirements-dev.txt: pytest, mypy, ruff, Playwright, ...) into $(VENV)/: a few minutes, a line per package ..."
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off --upgrade pip
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -r requirements-dev.txt
	@echo "Installing the test oracles without their dependencies (requirements-oracles.txt) ..."
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off --no-deps -r requirements-oracles.txt
	@echo "Test toolchain installed."
	@touch $(STAMP)

$(APP_STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing the app's requirements (requirements.txt) into $(VENV)/: about 2 minutes, a line per package ..."
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -r requirements.txt
	@touch $(APP_STAMP)

# The demo is development on this machine: DEBUG=1 (DEBUG is off unless set; docs/security.md).
# Its documents: the Cranfield collection shipped in studies/demo_data/cranfield, unless DEMO_DATA names another.
demo-data: $(APP_STAMP) ## Migrate the database and load the scored demo study (no server)
	@DEBUG=1 $(BIN)/python manage.py migrate --noinput -v 0
	@DEBUG=1 $(BIN)/python manage.py load_demo --port $(PORT)

demo: $(APP_STAMP) ## Install the app, migrate, load and score the demo study, serve http://127.0.0.1:$PORT (8000)
	@echo "Migrating the database (db.sqlite3, or DATABASE_URL's) ..."
	@DEBUG=1 $(BIN)/python manage.py migrate --noinput -v 0
	@DEBUG=1 $(BIN)/python manage.py load_demo --port $(PORT) --serve

# Your own study: what the database holds (SQLite's db.sqlite3, or DATABASE_URL's), served as it is; nothing is
# loaded or re-created (README, "Your own study").
serve: $(APP_STAMP) ## Migrate quietly and serve the database as it is, on http://127.0.0.1:$PORT (8000)
	@DEBUG=1 $(BIN)/python manage.py migrate --noinput -v 0
	@echo "Serving http://127.0.0.1:$(PORT)/ (Control-C stops it)"
	@DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

lint: $(STAMP) typecheck ## Run mypy, ruff and the import contracts (pyproject.toml: the one direction of imports)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP) ## Run mypy with the django-stubs plugin (pyproject.toml [tool.mypy])
	$(BIN)/mypy

# The suite runs on every core (pytest-xdist; PYTEST_WORKERS=0 runs it in one process), a test file per worker
# (--dist loadfile) so that a module's fixtures are built once. Where a broker is configured (CI's second
# pass), the needs_worker tests run first, alone and serially: the real Celery worker reads the one test
# database test_<name>, while each xdist worker has its own (test_<name>_gw0, ...). Both runs go to the end;
# exit 5 (nothing selected, e.g. a PYTEST_ARGS path without needs_worker tests) is no failure. Without a
# broker those tests skip (tests/conftest.py), in the one parallel run.
PYTEST_WORKERS ?= auto
# --durations: the slowest tests are printed, with the summary, even when a run is stopped with Control-C.
PYTEST := $(BIN)/python -m pytest --durations=15
XDIST := -n $(PYTEST_WORKERS) --dist loadfile
# A first check in about a minute: ruff, the import contracts and a representative subset (the pure scoring
# library and its oracles, the design and the study life cycle), not mypy nor the browser tests.
CHECK_TESTS := tests/scoring tests/design tests/lifecycle
check: $(STAMP) ## Quick check (about a minute): ruff, the import contracts and a subset of the tests
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(XDIST) -q $(CHECK_TESTS)

test: lint ## Run ruff, the import contracts and mypy, then the whole test suite (in parallel)
	@if [ -n "$$CELERY_BROKER_URL" ]; then \
	  status=0; \
	  echo "--- the needs_worker tests, serially (the real worker reads their database) ---"; \
	  $(PYTEST) -p no:xdist -m needs_worker $(PYTEST_ARGS) || [ $$? -eq 5 ] || status=1; \
	  echo "--- every other test, in parallel ---"; \
	  $(PYTEST) $(XDIST) -m "not needs_worker" $(PYTEST_ARGS) || [ $$? -eq 5 ] || status=1; \
	  exit $$status; \
	else \
	  echo "$(PYTEST) $(XDIST) $(PYTEST_ARGS)"; \
	  $(PYTEST) $(XDIST) $(PYTEST_ARGS); \
	fi

bench: $(STAMP) ## Run the benchmark scripts (prints figures)
	$(BIN)/python bench/scoring.py

.PHONY: bench-load
bench-load: $(STAMP) ## Load benchmark: 200 participants for 60 s against gunicorn on PostgreSQL (prints figures)
	$(BIN)/python bench/load.py

.PHONY: bench-load-paired
bench-load-paired: $(STAMP) ## Load benchmark paired: today's server, 2026-11-25's and a floor app, alternating rounds
	$(BIN)/python bench/load_paired.py

clean: ## Remove the virtualenv and the SQLite database
	rm -rf $(VENV) db.sqlite3
