"""`spotkube pipeline-check` as a user runs it: bad input is one clear error and exit code 2.

These need no kfp: the command reads compiled YAML with the core install.
"""

from __future__ import annotations

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
