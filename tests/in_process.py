"""The `spotkube` command run inside the test's own process, answered as a finished process would be.

Starting `spotkube` costs about a second of imports, and its first plan again as much for the cloud
SDKs' type modules; a test process has paid both already. So the tests that check what a command
prints and its exit code call the typer app in-process (typer's CliRunner) and get the same
`CompletedProcess` a subprocess gives: stdout, stderr and the exit code, in the folder given. An
exception the command lets escape is written to stderr as the interpreter would write it, so "no
traceback" still fails when there is one. A few tests still start the real entry point
(`tests/cli/test_cli.py`, the release test, the closed pipe, the terminal width a child inherits).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

from spotkube.cli.app import app

REPO = Path(__file__).resolve().parents[1]
#: The installed entry point the command line's own tests start.
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def run_spotkube(*args: str, cwd: Path = REPO,
                 env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`spotkube ARGS` in `cwd`, with `env` over the process's environment (None unsets a variable)."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args), env=env, prog_name="spotkube")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess([SPOTKUBE, *args], result.exit_code, result.stdout, stderr)



def run_spotkube_process(*args: str, cwd: Path = REPO,
                         env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`spotkube ARGS` in a process of its own, for commands that load Google's client libraries: they
    register protobuf symbols (google.rpc.Status) that a test process which has already hosted Pulumi's
    engine holds in another version, and whichever loads second fails, depending on the tests' order."""
    merged = {**os.environ, **{k: v for k, v in (env or {}).items() if v is not None}}
    for key, value in (env or {}).items():
        if value is None:
            merged.pop(key, None)
    return subprocess.run([SPOTKUBE, *args], cwd=cwd, env=merged, capture_output=True, text=True, timeout=300,
                          check=False)
