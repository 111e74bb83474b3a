"""`spotkube pipeline-check` as a user runs it: each format shows every stack's verdict, and bad input is one
clear error and exit code 2.

These need no kfp: the command reads compiled YAML with the core install.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from in_process import run_spotkube
from spotkube.platform import contract


def spotkube(*args: str) -> subprocess.CompletedProcess[str]:
    """The command, in this process (tests/in_process.py)."""
    return run_spotkube(*args)


def gpu_step_pipeline(path: Path) -> Path:
    """A pipeline of one step placed with `spot_gpu("nvidia-l4")`, asking for a GPU and retried 5 times,
    in the shapes kfp 2.17 compiles it to (tests/review/test_pipeline_check.py builds more of them)."""
    placement = contract.spot_gpu("nvidia-l4")
    accelerator = {"count": "1", "resourceCount": "1", "resourceType": "nvidia.com/gpu", "type": "nvidia.com/gpu"}
    spec = {
        "pipelineInfo": {"name": "demo"}, "schemaVersion": "2.1.0", "sdkVersion": "kfp-2.17.0",
        "components": {"comp-train": {"executorLabel": "exec-train"}},
        "deploymentSpec": {"executors": {"exec-train": {"container": {
            "image": "python:3.12-slim", "command": ["python"], "resources": {"accelerator": accelerator}}}}},
        "root": {"dag": {"tasks": {"train": {
            "componentRef": {"name": "comp-train"}, "taskInfo": {"name": "train"},
            "retryPolicy": {"backoffDuration": "300s", "backoffFactor": 1.0, "backoffMaxDuration": "604800s",
                            "maxRetryCount": 5}}}}},
    }
    config = {"tolerations": placement.tolerations_k8s(),
              "nodeAffinity": [{"matchExpressions": [r.to_k8s() for r in term]} for term in placement.required or ()]}
    platform = {"platforms": {"kubernetes": {"deploymentSpec": {"executors": {"exec-train": config}}}}}
    path.write_text("# PIPELINE DEFINITION\n" + yaml.safe_dump_all([spec, platform], sort_keys=True))
    return path


def test_every_format_shows_each_stack_s_verdict(tmp_path: Path) -> None:
    pipeline = gpu_step_pipeline(tmp_path / "pipeline.yaml")
    stacks = ("--stack", "aks-dev-uksouth", "--stack", "gke-dev-us-central1")
    markdown = spotkube("pipeline-check", str(pipeline), *stacks, "--format", "markdown")
    assert markdown.returncode == 1, "the step lands nowhere on the AKS stack"
    assert "### demo on aks-dev-uksouth" in markdown.stdout and "### demo on gke-dev-us-central1" in markdown.stdout
    assert "**nowhere**: needs GPU type nvidia-l4; stack aks-dev-uksouth has only nvidia-tesla-t4" in markdown.stdout
    assert "| train | 1 | 5, backoff 300s | 5 evictions, 1 failure | l4-spot (spot) |" in markdown.stdout
    document = json.loads(spotkube("pipeline-check", str(pipeline), *stacks, "--format", "json").stdout)
    assert document["ok"] is False and document["pipeline"] == "demo"
    assert [c["ok"] for c in document["checks"]] == [False, True]
    (step,) = document["checks"][1]["steps"]
    assert step["pools"] == step["spotPools"] == ["l4-spot"] and step["retries"]["maxRetries"] == 5


def test_the_cli_imports_no_kfp() -> None:
    code = ("import sys, spotkube.cli.app; "
            "print(sorted(m for m in sys.modules if m == 'kfp' or m.startswith('kfp.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


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


def test_each_step_shows_the_evictions_and_failures_it_survives(two_step_pipeline: Path) -> None:
    """A step's set_retry count is its own Argo limit; a step without takes the stack's defaults (10)."""
    path = two_step_pipeline
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
