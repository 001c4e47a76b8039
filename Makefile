# One entry point: `make run` starts TRACE on its embedded default, `make test` runs the linters
# (ruff, mypy, lint-imports over .importlinter) and every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint stop clean-venv eval-docs

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
	$(VENV)/bin/lint-imports

stop: $(STAMP)
	$(PY) manage.py stop

clean-venv:
	rm -rf $(VENV)

# Re-run the dev evaluation of the README's systems on the loaded archive and rewrite the figures:
# docs/eval/historiqa/ (every table, JSON and plot) and the `evaluation-dev` block of README.md and
# docs/retrieval-evaluation.md.
EVAL_SYSTEMS := bm25 dense hybrid hybrid-per-subcorpus offline
eval-docs: $(STAMP)
	$(PY) manage.py evaluate --questions demo/historiqa/questions_dev.jsonl \
		$(foreach s,$(EVAL_SYSTEMS),--system $(s)) --out docs/eval/historiqa --no-progress \
		--write-doc README.md --write-doc docs/retrieval-evaluation.md --doc-block evaluation-dev
