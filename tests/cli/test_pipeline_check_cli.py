"""`spotkube pipeline-check` as a user runs it: bad input is one clear error and exit code 2.

These need no kfp: the command reads compiled YAML with the core install.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def spotkube(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPOTKUBE, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(("text", "message"), [
    ("root: {dag: [unclosed\n", "is not valid YAML at line 2"),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", "is not a compiled KFP pipeline"),
])
def test_a_malformed_or_non_kfp_file_exits_2_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text(text)
    result = spotkube("pipeline-check", str(path), "--stack", "aks-dev-uksouth")
    assert result.returncode == 2
    assert result.stdout == ""
    assert " ".join(result.stderr.split()).startswith(f"error: {path}: {message}")
    assert "Traceback" not in result.stderr


def test_an_unknown_stack_exits_2_and_lists_the_stacks(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text("pipelineInfo: {name: empty}\nroot: {dag: {tasks: {}}}\n")
    result = spotkube("pipeline-check", str(path), "--stack", "nope")
    assert result.returncode == 2
    assert "stacks/Pulumi.nope.yaml does not exist; stacks: " in result.stderr
    assert "aks-dev-uksouth" in result.stderr


def test_each_step_shows_the_evictions_and_failures_it_survives(tmp_path: Path) -> None:
    """A step's set_retry count is its own Argo limit; a step without takes the stack's defaults (10)."""
    path = tmp_path / "pipeline.yaml"
    path.write_text(
        "pipelineInfo: {name: two-steps}\n"
        "components:\n  comp-a: {executorLabel: exec-a}\n  comp-b: {executorLabel: exec-b}\n"
        "deploymentSpec: {executors: {exec-a: {container: {image: python}}, exec-b: {container: {image: python}}}}\n"
        "root:\n  dag:\n    tasks:\n"
        "      a: {componentRef: {name: comp-a}, retryPolicy: {maxRetryCount: 3, backoffDuration: 300s,"
        " backoffFactor: 1, backoffMaxDuration: 604800s}}\n"
        "      b: {componentRef: {name: comp-b}}\n")
    table = spotkube("pipeline-check", str(path), "--stack", "aks-dev-uksouth")
    assert table.returncode == 0, table.stderr
    assert "survives" in table.stdout
    assert "3 evictions, 1 failure" in table.stdout and "10 evictions, 1 failure" in table.stdout
    result = spotkube("pipeline-check", str(path), "--stack", "aks-dev-uksouth", "--format", "json")
    steps = json.loads(result.stdout)["checks"][0]["steps"]
    assert [s["survives"] for s in steps] == [
        {"evictions": 3, "failures": 1, "failuresWanted": None},
        {"evictions": 10, "failures": 1, "failuresWanted": None},
    ]
