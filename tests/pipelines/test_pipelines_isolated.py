"""Runs tests/pipelines/test_pipelines.py in a fresh interpreter when this process cannot import kfp.

kfp and Pulumi's provider runtime (loaded by the component-provider tests) both register the
protobuf message google.rpc.Status, so they cannot share one process; see tests/pipelines/test_pipelines.py.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The module whose presence keeps kfp out of this process (the same check as test_pipelines.py).
PROVIDER_RUNTIME = "pulumi.runtime.proto.status_pb2"

if PROVIDER_RUNTIME not in sys.modules:
    pytest.skip("tests/pipelines/test_pipelines.py runs in this process", allow_module_level=True)


def test_the_kfp_tests_pass_in_a_fresh_interpreter() -> None:
    if importlib.util.find_spec("kfp") is None:
        pytest.skip("kfp is not installed (the core install); tests/pipelines/test_pipelines.py skips itself")
    args = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
            "tests/pipelines/test_pipelines.py"]
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", result.stdout) and "skipped" not in result.stdout, result.stdout[-2000:]
