"""The plan's placements section, from the offline runs of the shipped stacks to the table, the Markdown
and the exit code: every workload a stack deploys, where it can land, and what is unsafe.

The judge itself (`spotkube.review.placements`) is tested over hand-made registrations in
tests/review/test_placements.py.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spotkube.cli import plan_views
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import contract
from spotkube.platform.addons import kfp_transforms
from spotkube.platform.project import Project
from spotkube.review.program_review import stack_document

SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))
#: An AKS stack names who runs `pulumi up`.
AKS_CLUSTER = {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001", "principalType": "ServicePrincipal"}}


@pytest.fixture(scope="module")
def documents(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, dict[str, Any]]:
    return {name: stack_document(shipped_run(name)).to_json() for name in repo_project.stacks()}


def roles(document: dict[str, Any]) -> dict[str, tuple[str, str, bool]]:
    """Pool -> (role, capacity, has GPU), from the plan's own pool rows, keyed like the placements: by
    the pool label, since a cloud resource's own name may carry a suffix."""
    return {p["labels"].get(contract.POOL_LABEL, p["name"]): (p["role"], p["capacity"], p["gpu"] is not None)
            for p in document["pools"]}


def test_every_shipped_stack_places_both_components_and_nothing_is_unsafe(
    documents: dict[str, dict[str, Any]],
) -> None:
    assert {d["cloud"] for d in documents.values()} >= {"aks"}
    for name, document in documents.items():
        assert document["errors"] == [], name
        for entry in document["placements"]:
            assert {"workload", "kind", "namespace", "pools"} <= set(entry), entry
            assert entry["pools"], (name, entry)
        kfp = [e for e in document["placements"] if e["namespace"] == "kubeflow"]
        assert [e["workload"] for e in kfp] == list(kfp_transforms.DEPLOYMENTS), name
        plugin = [e for e in document["placements"] if e["kind"] == "DaemonSet"]
        assert len(plugin) == (1 if document["cloud"] == "aks" else 0), name


def test_kfp_deployments_land_only_on_the_platform_pool(documents: dict[str, dict[str, Any]]) -> None:
    assert documents, "the shipped stacks' plans"
    for name, document in documents.items():
        pools = roles(document)
        kubeflow = [e for e in document["placements"] if e["namespace"] == "kubeflow"]
        assert kubeflow, name
        for entry in kubeflow:
            assert entry["pools"], (name, entry["workload"])
            for pool in entry["pools"]:
                role, capacity, has_gpu = pools[pool]
                assert (role, capacity, has_gpu) == ("platform", "on-demand", False), (name, entry["workload"], pool)
            assert "not visible offline" in entry["note"]
            assert "KFP 2.17.0's Deployments as shipped" in entry["note"]


def test_the_device_plugin_lands_on_every_gpu_pool_on_aks(documents: dict[str, dict[str, Any]]) -> None:
    aks = [document for document in documents.values() if document["cloud"] == "aks"]
    assert aks, "a shipped aks stack"
    for document in aks:
        (plugin,) = [e for e in document["placements"] if e["kind"] == "DaemonSet"]
        assert sorted(plugin["pools"]) == sorted(p for p, (_, _, gpu) in roles(document).items() if gpu)
        assert plugin["namespace"] == "kube-system"


def test_the_table_and_markdown_show_the_placements(repo_project: Project) -> None:
    document = stack_document(run_stack(repo_project, "aks-dev-uksouth"))
    markdown = plan_views.to_markdown([document])
    assert "| workload | kind | namespace | pools |" in markdown
    assert "| nvidia-device-plugin-daemonset | DaemonSet | kube-system | t4spot |" in markdown
    assert "not visible offline" in markdown
    rows = plan_views.placement_rows(document)
    assert len(rows) == 2, "the 14 KFP Deployments land alike and share a row"


def test_a_stack_can_switch_both_off(project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack("aks-dev-test", {
        "cloud": "aks", "environment": "dev", "region": "uksouth", "cluster": AKS_CLUSTER,
        "gpuPools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3"}],
        "devicePlugin": {"enabled": False}, "kubeflow": {"enabled": False},
    })
    run = run_stack(project, "aks-dev-test")
    types = {r.type for r in run.registrations}
    assert not types & {"spotkube:index:NvidiaDevicePlugin", "spotkube:index:KubeflowPipelines",
                        "kubernetes:apps/v1:DaemonSet", "kubernetes:kustomize/v2:Directory"}
    document = stack_document(run).to_json()
    assert document["placements"] == [] and document["errors"] == []


def test_without_pool_contracts_the_plan_says_placements_are_unknown(repo_project: Project) -> None:
    run = run_stack(repo_project, "aks-dev-uksouth")
    blind = dataclasses.replace(run, clusters=[dataclasses.replace(c, contracts=None) for c in run.clusters])
    document = stack_document(blind).to_json()
    assert document["placements"] == [] and document["errors"] == []
    assert any("placements unknown" in n for n in document["notes"])


STRAY_DEPLOYMENT = '''
import pulumi_kubernetes as k8s
k8s.apps.v1.Deployment(
    "stray",
    metadata={"name": "stray", "namespace": "default"},
    spec={"selector": {"matchLabels": {"app": "stray"}},
          "template": {"metadata": {"labels": {"app": "stray"}},
                       "spec": {"nodeSelector": {"example.com/pool": "gone"},
                                "containers": [{"name": "stray", "image": "busybox"}]}}},
    opts=pulumi.ResourceOptions(provider=cluster.provider),
)
'''


def test_plan_exits_1_with_a_clear_message_when_a_workload_lands_nowhere(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    project = project_with_stack("aks-dev-test", {"cloud": "aks", "environment": "dev", "region": "uksouth",
                                                  "cluster": AKS_CLUSTER})
    with project.main.open("a") as program:
        program.write(STRAY_DEPLOYMENT)
    result = subprocess.run([SPOTKUBE, "plan", "--stack", "aks-dev-test", "--project", str(project.root)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 1, result.stderr
    assert "aks-dev-test: Deployment default/stray can land on no pool" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "stray" in result.stdout, "the plan is still printed, so the reader sees where things land"


def test_plan_pool_labels_are_the_pool_contracts_output(repo_project: Project,
                                                       documents: dict[str, dict[str, Any]]) -> None:
    """The plan shows the very node labels and zones the stack exports to workloads."""
    assert documents, "the shipped stacks' plans"
    for name, document in documents.items():
        exported = run_stack(repo_project, name).outputs["poolContracts"].value
        by_name = {c["name"]: c for c in exported}
        assert {p["name"] for p in document["pools"]} == set(by_name)
        for pool in document["pools"]:
            assert pool["labels"] == by_name[pool["name"]]["labels"]
            assert pool["zoneLabels"] == by_name[pool["name"]]["zones"]
            assert pool["labels"]["kubernetes.io/os"] == "linux"
