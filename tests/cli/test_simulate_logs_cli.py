"""`spotkube simulate`, `spotkube logs` and `pipeline-check` as a user runs them, on the shipped stacks and
the compiled example pipelines (examples/pipelines/*.yaml, kept next to their code)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from in_process import run_spotkube

REPO = Path(__file__).resolve().parents[2]
STACKS = ("aks-dev-uksouth", "aks-prod-eastus", "gke-dev-us-central1", "gke-prod-europe-west4")
PIPELINES = sorted((REPO / "examples" / "pipelines").glob("*.yaml"))


def spotkube(*args: str) -> subprocess.CompletedProcess[str]:
    """The command, in this process (tests/in_process.py)."""
    return run_spotkube(*args)


def test_the_examples_are_compiled() -> None:
    assert [p.name for p in PIPELINES] == ["download_csvs.yaml", "train_checkpointed.yaml"]


@pytest.mark.parametrize("stack", STACKS)
def test_simulate_runs_every_example_pipeline_on_every_shipped_stack(stack: str) -> None:
    result = spotkube("simulate", "--stack", stack, *(str(p.relative_to(REPO)) for p in PIPELINES), "--runs", "300",
                      "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["stack"] == stack
    assert [s["pipeline"] for s in document["simulations"]] == ["download-csvs", "train-checkpointed"]
    for body in document["simulations"]:
        assert body["runs"] == 300 and body["seed"] == 0
        wall = body["wallHours"]
        declared = sum(step["hours"] for step in body["steps"])
        assert declared <= wall["median"] <= wall["p90"], "evictions only add time"
        assert all(step["pool"] != "system" for step in body["steps"])
        if body["costUsd"] is not None:
            assert body["costUsd"]["median"] <= body["costUsd"]["p90"]


def test_simulate_prints_the_articles_linear_figures_next_to_the_sampled_ones(tmp_path: Path) -> None:
    """The articles' scenario: 3,400 h of D4s_v3 work in UK South on the spot CPU pool, 5 % evicted,
    rework fraction 1 (aks-dev-uksouth's cost settings): $173.86 against $788.80 on demand."""
    result = spotkube("simulate", "--stack", "aks-dev-uksouth", "examples/pipelines/download_csvs.yaml",
                      "--runtime", "download-archive=3400h", "--runtime", "unpack-archive=1s",
                      "--runtime", "concatenate-csvs=1s", "--runs", "200")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "linear model │ $173.87" in text or "linear model │ $173.86" in text
    assert "sampled │ 200 runs, seed 0" in text


def test_simulate_overrides_are_checked(tmp_path: Path) -> None:
    result = spotkube("simulate", "--stack", "aks-dev-uksouth", "examples/pipelines/download_csvs.yaml",
                      "--eviction-rate", "nopool=0.1")
    assert result.returncode == 2
    assert "--eviction-rate nopool: stack aks-dev-uksouth has no such pool; pools: system, platform" in result.stderr
    result = spotkube("simulate", "--stack", "aks-dev-uksouth", "examples/pipelines/download_csvs.yaml",
                      "--runtime", "download-archive=soon")
    assert result.returncode == 2 and "--runtime soon: use a whole number above 0 followed by s, m, h or d" in \
        result.stderr
    assert "Traceback" not in result.stderr


def test_logs_prints_a_cloud_logging_filter_and_link_on_gke_and_kql_on_aks() -> None:
    gke = spotkube("logs", "--stack", "gke-dev-us-central1", "--pod", "download-csvs-x-system-container-impl-1",
                   "--cluster", "spotkube-gke-1a2b3c4", "--format", "json")
    assert gke.returncode == 0, gke.stderr
    body = json.loads(gke.stdout)
    assert body["language"] == "Cloud Logging filter"
    assert 'resource.labels.pod_name="download-csvs-x-system-container-impl-1"' in body["query"]
    assert body["link"].startswith("https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container")
    aks = spotkube("logs", "--stack", "aks-prod-eastus", "--run", "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d")
    assert aks.returncode == 0, aks.stderr
    assert aks.stdout.startswith("KQL (Log Analytics):\nlet pods = KubePodInventory")
    assert "pulumi stack output logWorkspaceId" in aks.stderr
    dev = spotkube("logs", "--stack", "aks-dev-uksouth", "--pod", "p")
    assert "Container Insights is not installed" in " ".join(dev.stderr.split())
    neither = spotkube("logs", "--stack", "aks-dev-uksouth")
    assert neither.returncode == 2 and "name one step's pod with --pod NAME or a whole run with --run ID" in \
        neither.stderr


def test_pipeline_check_keeps_gke_steps_off_the_system_pool_and_calls_preemptible_preemptible() -> None:
    result = spotkube("pipeline-check", "examples/pipelines/train_checkpointed.yaml", "-s", "gke-prod-europe-west4",
                      "--format", "json")
    assert result.returncode == 0, result.stderr
    steps = {s["name"]: s for s in json.loads(result.stdout)["checks"][0]["steps"]}
    assert steps["stage-dataset"]["pools"] == ["platform"]
    assert steps["train"]["capacities"] == {"a100-spot": "spot", "t4-preemptible": "preemptible"}
    table = spotkube("pipeline-check", "examples/pipelines/download_csvs.yaml", "-s", "gke-dev-us-central1")
    assert table.returncode == 0, table.stderr
    assert "system" not in table.stdout.split("lands on")[1]


def test_simulate_takes_a_step_s_own_eviction_limit_or_the_stack_s(two_step_pipeline: Path) -> None:
    """An eviction is retried up to the step's set_retry count, or for a step without one up to the stack's
    `kubeflow.evictionRetryLimit` (10 by default): the limits pipeline-check's "survives" column shows."""
    path = two_step_pipeline
    result = spotkube("simulate", "--stack", "aks-dev-uksouth", str(path), "--runs", "50", "--format", "json")
    assert result.returncode == 0, result.stderr
    (body,) = json.loads(result.stdout)["simulations"]
    assert [(s["name"], s["retries"]) for s in body["steps"]] == [("a", 3), ("b", 10)]
