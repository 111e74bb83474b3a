"""The `spotkube` command as a user runs it: a subprocess, its output and its exit code."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import random
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import spotkube as spotkube_package
from spotkube.cli import plan_views, report
from spotkube.components.offline import run_stack
from spotkube.platform.project import Project
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


def spotkube(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPOTKUBE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_plan_all_as_table_shows_every_stack_and_pool(repo_project: Project) -> None:
    result = spotkube("plan", "--all")
    assert result.returncode == 0, result.stderr
    stacks = repo_project.stacks()
    assert stacks, "the repository ships stacks"
    for stack in stacks:
        assert stack in result.stdout
    assert "t4spot" in result.stdout
    assert "nvidia.com/gpu=present:NoSchedule" in result.stdout
    assert "monthly cost: idle floor" in result.stdout
    assert "kubeconfig (secret)" in result.stdout


def test_plan_all_as_json_has_the_stable_shape(repo_project: Project) -> None:
    result = spotkube("plan", "--all", "--format", "json")
    assert result.returncode == 0, result.stderr
    stacks = json.loads(result.stdout)["stacks"]
    assert [s["stack"] for s in stacks] == repo_project.stacks()
    for stack in stacks:
        assert {"stack", "cloud", "region", "pools", "resources", "outputs"} <= set(stack)
        assert stack["outputs"]["kubeconfig"] == {"secret": True}
        assert stack["pools"], stack["stack"]
        for pool in stack["pools"]:
            assert {"name", "role", "capacity", "machine", "gpu", "min", "max", "taints", "labels",
                    "evictionPolicy", "maxPrice", "zones"} <= set(pool)
    dev = next(s for s in stacks if s["stack"] == "aks-dev-uksouth")
    spot = next(p for p in dev["pools"] if p["name"] == "t4spot")
    assert spot["capacity"] == "spot" and spot["gpu"] == {"type": "nvidia-tesla-t4", "count": 1}
    assert spot["evictionPolicy"] == "Delete" and spot["maxPrice"] == -1
    assert spot["taints"] == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
                              "nvidia.com/gpu=present:NoSchedule"]
    assert (spot["min"], spot["max"]) == (0, 4)


def test_plan_never_prints_the_kubeconfig() -> None:
    result = spotkube("plan", "--all", "--format", "json")
    assert "offline-plan-placeholder" not in result.stdout
    assert "apiVersion" not in result.stdout


def test_unknown_stack_lists_the_stacks_that_exist(repo_project: Project) -> None:
    result = spotkube("plan", "--stack", "aks-dev-mars")
    assert result.returncode == 2
    assert "stacks/Pulumi.aks-dev-mars.yaml does not exist; stacks: " in result.stderr
    assert "aks-dev-uksouth" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_stack_gives_one_clear_message(project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack("aks-dev-uksouth", {"cloud": "aks", "environment": "dev", "region": "uksouth",
                                                     "gpuPools": [{"name": "gpu", "machine": "Standard_NC6s_v3"}]})
    result = spotkube("plan", "--stack", "aks-dev-uksouth", cwd=project.root)
    assert result.returncode == 2
    assert "stacks/Pulumi.aks-dev-uksouth.yaml: spotkube:gpuPools[0].machine: 'Standard_NC6s_v3' is retired" \
        in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_version() -> None:
    """One source: pyproject.toml's version, read back from the installed package's metadata."""
    result = spotkube("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"spotkube {spotkube_package.__version__}"
    declared = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert spotkube_package.__version__ == importlib.metadata.version("spotkube") == declared["version"]


def test_the_plan_does_not_depend_on_the_order_resources_were_registered(repo_project: Project) -> None:
    """The mocks record registrations from worker threads; a PR comment must not change with them."""
    run = run_stack(repo_project, "aks-dev-uksouth")
    backwards = dataclasses.replace(run, registrations=list(reversed(run.registrations)))
    shuffled = dataclasses.replace(
        run, registrations=random.Random(7).sample(run.registrations, len(run.registrations)))
    documents = [report.to_json([stack_document(r)], details=True) for r in (run, backwards, shuffled)]
    assert documents[0] == documents[1] == documents[2]
    views = [plan_views.to_markdown([stack_document(r)]) for r in (run, backwards)]
    assert views[0] == views[1]
