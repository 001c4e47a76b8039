# One entry point: `make run` starts TRACE on its embedded default, `make test` runs every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint stop eval bench clean-venv

$(STAMP): requirements.lock
	@bash scripts/make-venv.sh $(VENV)
	@touch $(STAMP)

run: $(STAMP)
	$(PY) manage.py serve

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

stop: $(STAMP)
	$(PY) -c "from pathlib import Path; from trace_site import embedded; import os; \
d=Path(os.environ.get('TRACE_DATA_DIR','data')).resolve(); \
print('redis stopped' if embedded.stop_redis(d) else 'redis not running'); \
print('postgres stopped' if embedded.stop_postgres(d) else 'postgres not running')"

clean-venv:
	rm -rf $(VENV)
