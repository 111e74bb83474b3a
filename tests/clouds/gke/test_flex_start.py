"""GKE's middle tier: a flex-start pool is registered with the fields GKE requires, tried between spot
and on-demand by its GPU type's ComputeClass, and a queued-provisioning pool stays out of the class
(its nodes come only through ProvisioningRequests). Through the component, as another repository uses it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pulumi
import pytest

from spotkube import GkeGpuCluster, GkeGpuClusterArgs
from spotkube.components.offline import ProgramFailed, Recording, record_program, run_stack
from spotkube.platform.contract import PoolContract
from spotkube.platform.project import Project
from spotkube.platform.registration import Registration
from spotkube.review.program_review import stack_document

NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
A100_CLASS = "spotkube-nvidia-tesla-a100"

ARGS: GkeGpuClusterArgs = {
    "environment": "dev",
    "region": "europe-west4",
    "cluster": {"project": "spotkube-test"},
    "gpu_pools": [
        {"name": "a100-spot", "machine": "a2-highgpu-1g", "capacity": "spot", "max": 8},
        {"name": "a100-flex", "machine": "a2-highgpu-1g", "capacity": "flex-start", "max": 4, "max_run_hours": 24},
        {"name": "a100-queued", "machine": "a2-highgpu-1g", "capacity": "flex-start", "max": 8,
         "queued_provisioning": True},
        {"name": "a100-ondemand", "machine": "a2-highgpu-1g", "capacity": "on-demand", "max": 2},
    ],
}


def build(args: GkeGpuClusterArgs) -> Recording:
    def program() -> None:
        cluster = GkeGpuCluster("ml", args=args)
        pulumi.export("poolContracts", cluster.pool_contracts)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def recording() -> Recording:
    return build(ARGS)


def node_pools(recording: Recording) -> dict[str, dict[str, Any]]:
    return {r.inputs["name"]: r.inputs for r in recording.registrations if r.type == NODE_POOL}


def compute_classes(recording: Recording) -> dict[str, Registration]:
    return {r.inputs["metadata"]["name"]: r for r in recording.registrations if r.type == COMPUTE_CLASS}


def test_a_flex_start_pool_is_registered_with_the_fields_gke_requires(recording: Recording) -> None:
    flex = node_pools(recording)["a100-flex"]
    config = flex["nodeConfig"]
    assert config["flexStart"] is True
    assert config["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert config["maxRunDuration"] == "86400s"
    assert "spot" not in config and "preemptible" not in config
    assert flex["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert flex["initialNodeCount"] == 0
    assert flex["management"] == {"autoRepair": False, "autoUpgrade": True}
    # GKE gives flex-start nodes short-lived upgrades: no surge or blue-green settings are sent.
    assert "upgradeSettings" not in flex
    assert "queuedProvisioning" not in flex


def test_a_flex_start_pool_keeps_the_gpu_taint_and_no_spot_taint_and_joins_its_class(recording: Recording) -> None:
    contracts = {c.name: c for c in map(PoolContract.from_json, recording.outputs["poolContracts"].value)}
    flex = contracts["a100-flex"]
    assert flex.capacity == "flex-start"
    assert [str(t) for t in flex.taints] == ["nvidia.com/gpu=present:NoSchedule",
                                              f"cloud.google.com/compute-class={A100_CLASS}:NoSchedule"]
    # GKE labels flex-start nodes itself; the contract states it so a step may select it.
    assert flex.labels["cloud.google.com/gke-flex-start"] == "true"
    assert flex.labels["spotkube.io/capacity"] == "flex-start"
    assert "cloud.google.com/gke-spot" not in flex.labels
    registered = node_pools(recording)["a100-flex"]["nodeConfig"]
    assert registered["labels"]["cloud.google.com/compute-class"] == A100_CLASS


def test_the_compute_class_tries_spot_then_flex_start_then_on_demand(recording: Recording) -> None:
    spec = compute_classes(recording)[A100_CLASS].inputs["spec"]
    assert spec["priorities"] == [{"nodepools": ["a100-spot"]}, {"nodepools": ["a100-flex"]},
                                  {"nodepools": ["a100-ondemand"]}]


def test_a_queued_pool_is_reached_only_through_provisioning_requests(recording: Recording) -> None:
    queued = node_pools(recording)["a100-queued"]
    assert queued["queuedProvisioning"] == {"enabled": True}
    assert queued["nodeConfig"]["flexStart"] is True
    assert queued["management"]["autoRepair"] is False
    assert queued["autoscaling"]["totalMinNodeCount"] == 0 and queued["autoscaling"]["locationPolicy"] == "ANY"
    assert "maxRunDuration" not in queued["nodeConfig"]  # GKE's own 7 days
    # Out of the class: neither named by its priorities nor joined by label and taint.
    priorities = compute_classes(recording)[A100_CLASS].inputs["spec"]["priorities"]
    names = [pool for priority in priorities for pool in priority["nodepools"]]
    assert "a100-queued" not in names
    assert "cloud.google.com/compute-class" not in queued["nodeConfig"]["labels"]
    assert "cloud.google.com/compute-class" not in {t["key"] for t in queued["nodeConfig"]["taints"]}


def test_a_queued_pool_without_flex_start_is_refused_before_anything_is_registered() -> None:
    args: GkeGpuClusterArgs = {**ARGS, "gpu_pools": [
        {"name": "a100-queued", "machine": "a2-highgpu-1g", "capacity": "spot", "queued_provisioning": True}]}
    with pytest.raises(ProgramFailed) as failure:
        build(args)
    assert failure.value.registrations == []
    assert ("GkeGpuCluster 'ml' args: gpu_pools[0].queued_provisioning: true applies to flex-start pools only, "
            "and this pool's capacity is 'spot'; set capacity: flex-start or remove it") in str(failure.value)


def test_flex_start_hours_are_priced_at_the_flex_start_price_without_rework(project_with_stack: Any) -> None:
    """A stack that states its flex-start price: the scenario bills the flex-start hours at that price,
    with no eviction rework (a flex-start VM is not taken back), against on-demand."""
    config = {"cloud": "gke", "environment": "dev", "region": "europe-west4",
              "cluster": {"project": "spotkube-test"}, "kubeflow": {"enabled": False},
              "gpuPools": [{"name": "a100-spot", "machine": "a2-highgpu-1g", "capacity": "spot", "max": 4},
                           {"name": "a100-flex", "machine": "a2-highgpu-1g", "capacity": "flex-start", "max": 4}],
              "cost": {"evictionRate": 0.2, "reworkFraction": 1, "hours": {"a100-spot": 100, "a100-flex": 100},
                       "prices": [{"sku": "a2-highgpu-1g", "capacity": "flex-start", "usdPerHour": 2.0,
                                   "source": "a quote for this test", "date": "2026-11-01"}]}}
    project: Project = project_with_stack("gke-flex-europe-west4", config)
    document = stack_document(run_stack(project, "gke-flex-europe-west4"))
    report = document.cost
    line = report.line("a100-flex")
    assert line is not None
    priced, cost = line
    assert priced.price is not None and priced.price.usd_per_hour == Decimal("2.0")
    assert cost.effective_hours == Decimal(100) and cost.scenario_usd == Decimal("200.00")
    on_demand = priced.on_demand.usd_per_hour if priced.on_demand else None
    assert cost.on_demand_equivalent_usd == (Decimal(100) * on_demand).quantize(Decimal("0.01"))
    assert cost.saving_percent > 0
    spot = report.line("a100-spot")
    assert spot is not None and spot[1].effective_hours == Decimal(120)  # spot work is reworked, flex-start not
    assert report.total("scenario") == spot[1].scenario_usd + Decimal("200.00")


def test_a_flex_start_pool_without_a_price_is_named_with_the_published_discount(repo_project: Project) -> None:
    """No public copy of the price list has flex-start rows: the plan names the pool and says what Google
    publishes instead, and the totals stay whole while the pool adds nothing to them."""
    document = stack_document(run_stack(repo_project, "gke-prod-europe-west4"))
    (note,) = [n for n in document.cost.notes if n.startswith("a100-flex,")]
    assert "up to 53%" in note and "https://cloud.google.com/products/dws/pricing" in note
    assert "a ceiling on the discount, not a price" in note
    assert document.cost.total("scenario") is not None

