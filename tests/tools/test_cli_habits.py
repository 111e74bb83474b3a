"""The habits a command-line user expects of `spotkube`: help, completion, width, colour, pipes, exit.

Each test runs the command as a user would (a subprocess, or typer's runner for the fast ones) and
asserts what they would see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPOTKUBE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, **(env or {})})


def test_the_offline_engine_closes_every_event_loop_it_used() -> None:
    """Pulumi's runtime leaves an event loop per worker thread unclosed; finalised at exit in the wrong
    order, one printed "Exception ignored ... Invalid file descriptor" now and then. Python reports
    every unclosed loop it collects as a ResourceWarning, so none may be reported."""
    result = run("plan", "--stack", "aks-dev-uksouth", "--format", "json",
                 env={"PYTHONWARNINGS": "always::ResourceWarning"})
    assert result.returncode == 0, result.stderr
    assert "unclosed event loop" not in result.stderr
    assert "Exception ignored" not in result.stderr
