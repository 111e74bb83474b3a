# The README's two commands: `make plan` and `make test`. Each sets up .venv itself.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# The core install, without the `pipelines` extra: proves kfp stays optional.
CORE_VENV ?= .venv-core
CORE_STAMP := $(CORE_VENV)/.installed

.PHONY: plan test lint bench schema reference clean

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c constraints.txt -e ".[dev,pipelines]"
	touch $(STAMP)

$(CORE_STAMP): pyproject.toml constraints.txt
	python3 -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(CORE_STAMP)

## The offline plan of every stack: no Pulumi CLI, cloud or credentials needed.
plan: $(STAMP)
	$(VENV)/bin/spotkube plan --all

## Lint, check the layers' import rules, then the whole test suite twice: with the pipelines extra
## (kfp) and without it.
test: $(STAMP) $(CORE_STAMP)
	$(VENV)/bin/ruff check components infra tests examples policy bench __main__.py
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest
	$(CORE_VENV)/bin/pytest

bench: $(STAMP)
	$(PY) bench/plan_speed.py

## Regenerate tests/snapshots/schema.json after an intended change to a component's inputs or
## outputs (the cross-language API); review the diff before committing it.
schema: $(STAMP)
	SPOTKUBE_UPDATE_SNAPSHOTS=1 $(VENV)/bin/pytest -q tests/shells/test_schema_snapshot.py

## Regenerate the configuration reference from the spec models: README.md's tables, Pulumi.yaml's
## config block, schemas/stack.schema.json and the stack files' modelines (a test fails until you do).
reference: $(STAMP)
	$(PY) -m spotkube.tools.reference write

clean:
	rm -rf $(VENV) $(CORE_VENV)
