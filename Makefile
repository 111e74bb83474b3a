# The README's two commands: `make plan` and `make test`. Each sets up what it needs itself.
#
# Virtualenvs are made and filled by uv, pinned below and bootstrapped with the system Python's pip:
# on a fresh 2-core machine with empty caches, `make plan` takes about 20 s (under a minute when the
# machine is busy) where pip took 2 to 3 minutes; bench/README.md has the measurements.
PYTHON ?= python3
UV_VERSION := 0.13.9
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# What `make plan` needs: spotkube and its runtime dependencies, without the extras.
RUNTIME_STAMP := $(VENV)/.installed-runtime
# The core install, without the `pipelines` extra: proves kfp stays optional.
CORE_VENV ?= .venv-core
CORE_STAMP := $(CORE_VENV)/.installed
# The CRD schemas the tests check custom resources against (GKE's ComputeClass), from npm, pinned with
# their integrity hashes by tests/crds/package-lock.json and installed outside the source tree.
CRDS := .crds
CRDS_STAMP := $(CRDS)/.installed
# uv lives inside .venv (ignored by git, gone with `make clean`), and only ever uses this Python.
UV_HOME := $(VENV)/.uv
UV := $(UV_HOME)/bin/uv
export UV_PYTHON_DOWNLOADS := never

.PHONY: plan test lint bench schema reference crds clean

# With the system Python's pip when it has one, else (Debian's python3 without python3-pip) with
# the pip of a throwaway virtualenv.
$(UV):
	@echo "==> bootstrapping uv $(UV_VERSION) (pinned) into $(UV_HOME)"
	@if $(PYTHON) -m pip --version >/dev/null 2>&1; then \
		$(PYTHON) -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
			--no-warn-script-location --target $(UV_HOME) uv==$(UV_VERSION); \
	else \
		$(PYTHON) -m venv $(UV_HOME)/venv && \
		$(UV_HOME)/venv/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION) && \
		mkdir -p $(UV_HOME)/bin && ln -sf ../venv/bin/uv $(UV); \
	fi

# --seed puts pip in the virtualenv too, so `pulumi install` (toolchain: pip) works on it.
$(RUNTIME_STAMP): pyproject.toml constraints.txt | $(UV)
	@echo "==> setting up $(VENV): spotkube and its runtime dependencies, pinned by constraints.txt"
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(VENV)
	$(UV) pip install --quiet --python $(PY) -c constraints.txt -e .
	@touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	@echo "==> adding the dev, pipelines and cloud extras to $(VENV)"
	$(UV) pip install --quiet --python $(PY) -c constraints.txt -e ".[dev,pipelines,cloud]"
	@touch $(STAMP)

$(CORE_STAMP): pyproject.toml constraints.txt | $(UV)
	@echo "==> setting up $(CORE_VENV): spotkube without kfp, pinned by constraints.txt"
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(CORE_VENV)
	$(UV) pip install --quiet --python $(CORE_VENV)/bin/python -c constraints.txt -e ".[dev,cloud]"
	@touch $(CORE_STAMP)

# npm ci checks every package against the lockfile's sha512 and reuses npm's cache when it can.
$(CRDS_STAMP): tests/crds/package.json tests/crds/package-lock.json
	@echo "==> installing the CRD schemas (@kubernetes-models/gke, pinned by tests/crds/package-lock.json) into $(CRDS)"
	@command -v npm >/dev/null || { echo "error: npm (Node.js 18 or later) is needed to check custom resources against their CRD schemas" >&2; exit 2; }
	@mkdir -p $(CRDS)
	cp tests/crds/package.json tests/crds/package-lock.json $(CRDS)/
	npm ci --prefix $(CRDS) --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error
	@touch $(CRDS_STAMP)

crds: $(CRDS_STAMP)

## The offline plan of every stack: no Pulumi CLI, cloud or credentials needed.
plan: $(RUNTIME_STAMP)
	@echo "==> planning every stack in stacks/ offline (a few seconds a stack)"
	@$(VENV)/bin/spotkube plan --all

## Lint, check the layers' import rules, then the whole test suite twice: with the pipelines extra
## (kfp) and without it.
test: $(STAMP) $(CORE_STAMP) $(CRDS_STAMP)
	@echo "==> ruff, lint-imports"
	$(VENV)/bin/ruff check components infra tests examples policy bench __main__.py
	$(VENV)/bin/lint-imports
	@echo "==> the tests with kfp ($(VENV)) and without it ($(CORE_VENV)), side by side on two cores"
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-with-kfp test-without-kfp

# The two runs share nothing but the source tree, so they run at once; each one's output is printed
# whole when it ends (--output-sync), and either failing fails `make test`.
.PHONY: test-with-kfp test-without-kfp
test-with-kfp: $(STAMP) $(CRDS_STAMP)
	@echo "==> tests with kfp ($(VENV))"
	$(VENV)/bin/pytest
test-without-kfp: $(CORE_STAMP) $(CRDS_STAMP)
	@echo "==> tests without kfp ($(CORE_VENV))"
	$(CORE_VENV)/bin/pytest

bench: $(STAMP)
	$(PY) bench/plan_speed.py

## Regenerate tests/snapshots/schema.json after an intended change to a component's inputs or
## outputs (the cross-language API); review the diff before committing it.
schema: $(STAMP)
	SPOTKUBE_UPDATE_SNAPSHOTS=1 $(VENV)/bin/pytest -q tests/components/test_schema_snapshot.py

## Regenerate the configuration reference from the spec models: README.md's tables, Pulumi.yaml's
## config block, schemas/stack.schema.json and the stack files' modelines (a test fails until you do).
reference: $(STAMP)
	$(PY) -m spotkube.cli.reference write

clean:
	rm -rf $(VENV) $(CORE_VENV) $(CRDS)
