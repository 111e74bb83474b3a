"""Fixtures for the command-line tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def no_terminal_size_from_readline() -> None:
    """Python's readline module, which pytest loads, writes COLUMNS=80 and LINES into the process's
    environment behind os.environ's back: os.environ doesn't show them, yet every subprocess started
    without `env=` inherits them. spotkube honours COLUMNS, so each `spotkube` a test runs would print
    80 columns wide instead of the 120 of a pipe. A test that means a width sets COLUMNS itself."""
    for name in ("COLUMNS", "LINES"):
        if name not in os.environ:
            os.unsetenv(name)


#: A compiled pipeline of two steps as KFP writes them: `a` with set_retry(3) (its own Argo limit) and
#: `b` without one (it takes the stack's workflow defaults).
TWO_STEPS = (
    "pipelineInfo: {name: two-steps}\n"
    "components:\n  comp-a: {executorLabel: exec-a}\n  comp-b: {executorLabel: exec-b}\n"
    "deploymentSpec: {executors: {exec-a: {container: {image: python}}, exec-b: {container: {image: python}}}}\n"
    "root:\n  dag:\n    tasks:\n"
    "      a: {componentRef: {name: comp-a}, retryPolicy: {maxRetryCount: 3, backoffDuration: 300s,"
    " backoffFactor: 1, backoffMaxDuration: 604800s}}\n"
    "      b: {componentRef: {name: comp-b}}\n")


@pytest.fixture
def two_step_pipeline(tmp_path: Path) -> Path:
    """TWO_STEPS written as a compiled pipeline file."""
    path = tmp_path / "pipeline.yaml"
    path.write_text(TWO_STEPS)
    return path

