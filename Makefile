# The README's two commands: `make plan` and `make test`. Each sets up what it needs itself.
#
# Virtualenvs are made and filled by uv, pinned below and bootstrapped with the system Python's pip:
# on a fresh 2-core machine with empty caches, `make plan` takes about 20 s (under a minute when the
# machine is busy) where pip took 2 to 3 minutes; bench/README.md has the measurements.
PYTHON ?= python3
# bash, for `set -o pipefail`: a test run's exit code survives the pipe that prefixes its lines.
SHELL := /bin/bash
UV_VERSION := 0.13.9
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# What `make plan` needs: spotkube, its runtime dependencies and both clouds' SDKs (the `all` extra: the
# shipped stacks are on both clouds), without the other extras.
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
# Python keeps its bytecode caches (in .venv and __pycache__/, ignored by git) even where the environment
# sets PYTHONDONTWRITEBYTECODE: without them every `spotkube` process the tests start compiles its ~450
# modules again, 2.3 CPU seconds for a plan that takes 1.0 s with them.
unexport PYTHONDONTWRITEBYTECODE

# The docs site `make test` builds in strict mode (ignored by git).
SITE := .site

.PHONY: setup plan test lint bench schema reference crds docs dist release-test test-training clean

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
	$(UV) pip install --quiet --python $(PY) -c constraints.txt -e ".[all]"
	@touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	@echo "==> adding the dev, pipelines, docs, refresh, drill and bootstrap extras to $(VENV)"
	$(UV) pip install --quiet --python $(PY) -c constraints.txt -e ".[all,dev,pipelines,docs,refresh,drill,bootstrap]"
	@touch $(STAMP)

$(CORE_STAMP): pyproject.toml constraints.txt | $(UV)
	@echo "==> setting up $(CORE_VENV): spotkube without kfp, pinned by constraints.txt"
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(CORE_VENV)
	$(UV) pip install --quiet --python $(CORE_VENV)/bin/python -c constraints.txt -e ".[all,dev,refresh,drill,bootstrap]"
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

## .venv with spotkube and its runtime dependencies only: what the offline plan needs (the PR's plan job).
setup: $(RUNTIME_STAMP)

## The offline plan of every stack: no Pulumi CLI, cloud or credentials needed.
plan: $(RUNTIME_STAMP)
	@echo "==> planning every stack in stacks/ offline (a few seconds a stack)"
	@$(VENV)/bin/spotkube plan --all

## Lint and check the layers' import rules, then, side by side: the docs site built in strict mode, the
## whole suite once with every extra, spread over the cores, and the tests that kfp's absence could
## change, in an install without kfp. (tests/cli/test_bench.py runs each kind of run `make bench` times,
## once, untimed.)
test: $(STAMP) $(CORE_STAMP) $(CRDS_STAMP)
	@echo "==> ruff, lint-imports"
	$(VENV)/bin/ruff check components infra tests examples policy bench __main__.py
	$(VENV)/bin/lint-imports
	@echo "==> side by side: the docs site in strict mode ([docs]), all the tests with every extra ($(VENV), [all]) and those kfp's absence could change ($(CORE_VENV), [core])"
	@$(MAKE) --no-print-directory -j3 test-docs test-all test-without-kfp

# How many processes pytest-xdist runs the whole suite on: one per core unless told.
TEST_WORKERS ?= auto
# Tests that behave differently when kfp is not installed at all (not merely blocked, which the whole
# suite also checks): the pipeline helper's import error and skips, pipeline-check from compiled YAML,
# the CLI's plan and the Python API and its unit-test mocks.
CORE_TESTS := tests/pipelines tests/review/test_pipeline_check.py tests/cli/test_pipeline_check_cli.py \
	tests/cli/test_cli.py tests/components/test_python_api.py tests/components/test_testing.py

# Each run prints its progress by group as it goes, every line marked with its run; pipefail keeps
# pytest's exit code, so any failing fails `make test`. `--dist worksteal` lets an idle worker take a
# busy one's tests, so no heavy module runs alone at the end; each shipped stack's offline run
# is made once per worker (`shipped_run` in tests/conftest.py). The release test (a wheel built,
# installed and used) runs once, in the whole suite.
.PHONY: test-docs test-all test-without-kfp
# A broken link or anchor fails (never --quiet: it hides the warnings strict counts).
test-docs: $(STAMP)
	@set -o pipefail; NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(SITE) 2>&1 | sed -u 's/^/[docs] /'
test-all: $(STAMP) $(CRDS_STAMP)
	@set -o pipefail; PYTHONUNBUFFERED=1 UV=$(abspath $(UV)) $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist worksteal 2>&1 \
		| sed -u 's/^/[all]  /'
test-without-kfp: $(CORE_STAMP) $(CRDS_STAMP)
	@set -o pipefail; PYTHONUNBUFFERED=1 $(CORE_VENV)/bin/pytest -m "not release" $(CORE_TESTS) 2>&1 | sed -u 's/^/[core] /'

# The PyTorch DDP example's test runs in a virtualenv of its own: torch is hundreds of MB, so `make test` never
# installs it. Plain pip, because the CPU build of this torch release is what pip finds for it.
TORCH_VENV ?= .venv-torch
TORCH_STAMP := $(TORCH_VENV)/.installed
TORCH_VERSION := 2.13.0
PYTEST_VERSION := $(shell sed -n 's/^pytest==//p' constraints.txt)
NUMPY_VERSION := $(shell sed -n 's/^numpy==//p' constraints.txt)

$(TORCH_STAMP): constraints.txt
	@echo "==> setting up $(TORCH_VENV): torch $(TORCH_VERSION) (CPU), numpy and pytest, for the training example"
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check torch==$(TORCH_VERSION) \
		numpy==$(NUMPY_VERSION) pytest==$(PYTEST_VERSION)
	@touch $(TORCH_STAMP)

## The training example (examples/training/ddp_train.py) on CPU: two DDP workers, one evicted with SIGTERM, the
## job restarted; it must resume from the saved checkpoint and finish (docs/training.md).
test-training: $(TORCH_STAMP)
	$(TORCH_VENV)/bin/pytest -p no:cacheprovider examples/training

## The release test alone; SPOTKUBE_DIST=DIR tests the wheel and sdist in DIR instead of building them.
release-test: $(STAMP)
	SPOTKUBE_DIST="$(SPOTKUBE_DIST)" UV=$(abspath $(UV)) $(VENV)/bin/pytest -m release tests/cli/test_release.py

## The docs site in .site/ (`.venv/bin/mkdocs serve` shows it while you edit).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(SITE)

## The wheel and sdist in dist/, built by PyPA's build with the pinned setuptools: what a release publishes.
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --no-isolation --outdir dist .
	rm -rf build components/spotkube.egg-info

## How fast the plan is against the floor the Pulumi SDKs set, per stack and for 1, 10 and 50 GPU
## pools, best of 5; exits 1 when a target is missed (docs/speed.md).
bench: $(STAMP)
	$(PY) bench/plan_speed.py

## Regenerate tests/snapshots/schema.json after an intended change to a component's inputs or
## outputs (the cross-language API); review the diff before committing it.
schema: $(STAMP)
	SPOTKUBE_UPDATE_SNAPSHOTS=1 $(VENV)/bin/pytest -q tests/components/test_schema_snapshot.py

## Regenerate the configuration reference from the spec models: docs/configuration.md's tables,
## Pulumi.yaml's config block, schemas/stack.schema.json, the stack files' modelines and the
## components' args modules (a test fails until you do).
reference: $(STAMP)
	$(PY) -m spotkube.cli.reference write

clean:
	rm -rf $(VENV) $(CORE_VENV) $(TORCH_VENV) $(CRDS) $(SITE) dist
