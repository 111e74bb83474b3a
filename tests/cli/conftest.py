"""Fixtures for the command-line tests."""

from __future__ import annotations

import os

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
