# One entry point: `make run` starts TRACE on its embedded default, `make test` runs the linters
# (ruff, mypy) and every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint stop clean-venv

$(STAMP): requirements.lock requirements-dev.lock
	@bash scripts/make-venv.sh $(VENV)
	@touch $(STAMP)

run: $(STAMP)
	$(PY) manage.py serve

test: lint
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

stop: $(STAMP)
	$(PY) manage.py stop

clean-venv:
	rm -rf $(VENV)
