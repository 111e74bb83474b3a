"""The placements judge: where each workload can land on a stack's pools, and what is unsafe.

Over registrations made here, shaped like the engine's, and the pool contracts a shipped stack exports;
the plan's placements section over the shipped stacks is tested in tests/cli/test_plan_placements.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from spotkube.components.offline import run_stack
from spotkube.platform import contract
from spotkube.platform.addons import kfp_reference, kfp_transforms
from spotkube.platform.contract import Placement, PoolContract, Taint
from spotkube.platform.project import Project
from spotkube.platform.registration import Registration
from spotkube.review.placements import DIRECTORY_TYPE, stack_placements


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
