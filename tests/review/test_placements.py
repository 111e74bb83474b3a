"""The plan's placements: every workload a stack deploys, where it can land, and what is unsafe."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spotkube.cli import plan_views, report
from spotkube.cli.offline import Registration, StackRun, run_stack
from spotkube.platform import contract
from spotkube.platform.addons import kfp_reference, kfp_transforms
from spotkube.platform.contract import Placement, PoolContract, Taint
from spotkube.platform.project import Project
from spotkube.review.placements import DIRECTORY_TYPE, stack_placements

SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))


@pytest.fixture(scope="module")
def documents(repo_project: Project) -> dict[str, dict[str, Any]]:
    return {name: report.stack_document(run_stack(repo_project, name)).to_json() for name in repo_project.stacks()}


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
    for name, document in documents.items():
        pools = roles(document)
        for entry in (e for e in document["placements"] if e["namespace"] == "kubeflow"):
            for pool in entry["pools"]:
                role, capacity, has_gpu = pools[pool]
                assert (role, capacity, has_gpu) == ("platform", "on-demand", False), (name, entry["workload"], pool)
            assert "not visible offline" in entry["note"]
            assert "KFP 2.17.0's Deployments as shipped" in entry["note"]


def test_the_device_plugin_lands_on_every_gpu_pool_on_aks(documents: dict[str, dict[str, Any]]) -> None:
    for document in documents.values():
        if document["cloud"] != "aks":
            continue
        (plugin,) = [e for e in document["placements"] if e["kind"] == "DaemonSet"]
        assert sorted(plugin["pools"]) == sorted(p for p, (_, _, gpu) in roles(document).items() if gpu)
        assert plugin["namespace"] == "kube-system"


def test_the_table_and_markdown_show_the_placements(repo_project: Project) -> None:
    document = report.stack_document(run_stack(repo_project, "aks-dev-uksouth"))
    markdown = plan_views.to_markdown([document])
    assert "| workload | kind | namespace | pools |" in markdown
    assert "| nvidia-device-plugin-daemonset | DaemonSet | kube-system | t4spot |" in markdown
    assert "not visible offline" in markdown
    rows = plan_views.placement_rows(document)
    assert len(rows) == 2, "the 14 KFP Deployments land alike and share a row"


def test_a_stack_can_switch_both_off(project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack("aks-dev-test", {
        "cloud": "aks", "environment": "dev", "region": "uksouth",
        "gpuPools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3"}],
        "devicePlugin": {"enabled": False}, "kubeflow": {"enabled": False},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })
    run = run_stack(project, "aks-dev-test")
    types = {r.type for r in run.registrations}
    assert not types & {"spotkube:index:NvidiaDevicePlugin", "spotkube:index:KubeflowPipelines",
                        "kubernetes:apps/v1:DaemonSet", "kubernetes:kustomize/v2:Directory"}
    document = report.stack_document(run).to_json()
    assert document["placements"] == [] and document["errors"] == []


def registration(type_token: str, inputs: dict[str, Any], name: str = "x", parent: str = "") -> Registration:
    return Registration(type=type_token, name=name, urn=f"urn:{name}", parent=parent, custom=True, inputs=inputs)


def test_a_workload_that_lands_nowhere_is_an_error_with_the_reason(repo_project: Project) -> None:
    pools = [PoolContract.from_json(p) for p in
             run_stack(repo_project, "aks-dev-uksouth").outputs["poolContracts"].value]
    stray = kfp_reference.shipped_deployments()[0]
    stray["metadata"]["name"] = "stray"
    stray["spec"]["template"]["spec"]["nodeSelector"] = {"example.com/pool": "gone"}
    placed = stack_placements("aks", [registration("kubernetes:apps/v1:Deployment", stray)], pools)
    (entry,) = placed.placements
    assert entry.pools == ()
    (error,) = placed.errors
    assert error.startswith("Deployment kubeflow/stray can land on no pool: ")
    assert "nodeSelector example.com/pool=gone does not match" in error


LINUX_NODE = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "topology.kubernetes.io/region": "us-central1"}


def gke_pool(name: str, role: contract.Role, capacity: contract.Capacity, accelerator: str | None = None,
             node_labels: dict[str, str] | None = None) -> PoolContract:
    """A GKE pool as the plan describes it: spotkube's labels, GKE's own and every node's well-known ones.
    The system pool is untainted, as GKE leaves it."""
    labels = {**(LINUX_NODE if node_labels is None else node_labels),
              **contract.cloud_added_labels("gke", name, capacity, accelerator),
              **contract.declared_labels("gke", name, role, capacity, accelerator)}
    taints = contract.pool_taints("gke", role, capacity, has_gpu=accelerator is not None)
    return PoolContract(name, role, capacity, accelerator, 1 if accelerator else 0, labels, taints,
                        zones=("us-central1-a",))


def gke_pools(platform_labels: dict[str, str] | None = None) -> list[PoolContract]:
    return [gke_pool("system", "system", "on-demand"),
            gke_pool("platform", "platform", "on-demand", node_labels=platform_labels),
            gke_pool("cpuspot", "batch", "spot"),
            gke_pool("l4spot", "gpu", "spot", "nvidia-l4"),
            gke_pool("l4demand", "gpu", "on-demand", "nvidia-l4")]


KFP_DIRECTORY = registration(DIRECTORY_TYPE, {"directory": kfp_transforms.manifest_url(
    "https://github.com/kubeflow/pipelines", kfp_transforms.PLATFORM_AGNOSTIC_PATH, "2.17.0")}, name="kfp")


def test_kfp_is_judged_from_its_shipped_pod_specs_and_lands_on_the_platform_pool_only() -> None:
    placed = stack_placements("gke", [KFP_DIRECTORY], gke_pools())
    assert [(e.workload, e.kind, e.namespace, e.pools) for e in placed.placements] == [
        (name, "Deployment", "kubeflow", ("platform",)) for name in kfp_reference.deployment_names()
    ], "not the untainted system pool, nor spot or GPU pools"
    assert placed.errors == []


def test_a_pool_without_the_linux_label_refuses_argo_s_controller_for_its_node_selector() -> None:
    placed = stack_placements("gke", [KFP_DIRECTORY], gke_pools(platform_labels={}))
    by_name = {e.workload: e for e in placed.placements}
    controller = by_name.pop("workflow-controller")
    assert controller.pools == ()
    assert "platform: nodeSelector kubernetes.io/os=linux does not match" in (controller.reason or "")
    assert all(e.pools == ("platform",) for e in by_name.values()), "the others select no OS"
    (error,) = placed.errors
    assert error.startswith("Deployment kubeflow/workflow-controller can land on no pool: ")


def test_kfp_on_a_tainted_platform_pool_lands_nowhere() -> None:
    """spotkube adds no tolerations to KFP: a platform pool with a taint of its own keeps it off."""
    pools = gke_pools()
    pools[1] = dataclasses.replace(pools[1], taints=(Taint("example.com/team", "ml"),))
    placed = stack_placements("gke", [KFP_DIRECTORY], pools)
    assert len(placed.errors) == 14
    assert all("platform: does not tolerate taint example.com/team=ml:NoSchedule" in e for e in placed.errors)


def test_a_stack_deploying_another_kfp_version_is_told_the_description_is_of_2_17_0() -> None:
    other = registration(DIRECTORY_TYPE, {"directory": kfp_transforms.manifest_url(
        "https://github.com/kubeflow/pipelines", kfp_transforms.PLATFORM_AGNOSTIC_PATH, "2.16.1")}, name="kfp")
    (note,) = {e.note for e in stack_placements("gke", [other], gke_pools()).placements}
    assert "KFP 2.17.0's Deployments as shipped; the stack deploys 2.16.1, whose Deployments may differ" in note


def test_without_pool_contracts_the_plan_says_placements_are_unknown(repo_project: Project) -> None:
    run = run_stack(repo_project, "aks-dev-uksouth")
    blind = StackRun(stack=run.stack, spec=run.spec, registrations=run.registrations, outputs={}, log=[],
                     invokes=run.invokes, source=run.source)
    document = report.stack_document(blind).to_json()
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
    deployer = {"objectId": "c0ffee00-0000-4000-8000-000000000001", "principalType": "ServicePrincipal"}
    project = project_with_stack("aks-dev-test", {"cloud": "aks", "environment": "dev", "region": "uksouth",
                                                  "cluster": {"deployer": deployer}})
    with project.main.open("a") as program:
        program.write(STRAY_DEPLOYMENT)
    result = subprocess.run([SPOTKUBE, "plan", "--stack", "aks-dev-test", "--project", str(project.root)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 1, result.stderr
    assert "aks-dev-test: Deployment default/stray can land on no pool" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "stray" in result.stdout, "the plan is still printed, so the reader sees where things land"


def test_constraining_a_pod_spec_applies_every_part_of_a_placement() -> None:
    """The contract helper the KFP transform uses, with a placement that has every part."""
    existing = {"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}
    pod_spec = {
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [existing, contract.Toleration.for_taint(contract.GPU_TAINT).to_k8s()],
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]}},
        "containers": [{"name": "train", "image": "trainer"}],
    }
    gpu = contract.spot_gpu("nvidia-tesla-t4", fallback_to_on_demand=True)
    placement = Placement(tolerations=gpu.tolerations, node_selector={"example.com/team": "vision"},
                          required=gpu.required, preferred=gpu.preferred)
    changed = contract.constrain_pod_spec(pod_spec, placement)
    assert changed["nodeSelector"] == {"kubernetes.io/os": "linux", "example.com/team": "vision"}
    assert changed["tolerations"][0] == existing
    assert len(changed["tolerations"]) == len(gpu.tolerations) + 1, "the GPU toleration is not repeated"
    preferred = changed["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred[0]["weight"] == 5 and len(preferred) == 1 + len(gpu.preferred)
    read_back = Placement.from_pod_spec(changed)
    assert read_back.required == gpu.required
    assert set(gpu.tolerations) <= set(read_back.tolerations)
    assert pod_spec["nodeSelector"] == {"kubernetes.io/os": "linux"}, "the input is not mutated"


def test_plan_pool_labels_are_the_pool_contracts_output(repo_project: Project,
                                                       documents: dict[str, dict[str, Any]]) -> None:
    """The plan shows the very node labels and zones the stack exports to workloads."""
    for name, document in documents.items():
        exported = run_stack(repo_project, name).outputs["poolContracts"].value
        by_name = {c["name"]: c for c in exported}
        assert {p["name"] for p in document["pools"]} == set(by_name)
        for pool in document["pools"]:
            assert pool["labels"] == by_name[pool["name"]]["labels"]
            assert pool["zoneLabels"] == by_name[pool["name"]]["zones"]
            assert pool["labels"]["kubernetes.io/os"] == "linux"
