"""One workload requirement, two clouds: the scheduling contract sends it to the same kind of pool.

A pipeline step compiled once carries one placement (`contract.spot_gpu`, `contract.on_demand_only`).
These tests run the contract's matcher over the pools of an AKS plan and a GKE plan, for the shipped
stacks and for plans built here, and check that the placement lands on the matching interruptible
GPU pool on both clouds and never on an on-demand system pool. Where each cloud sends a spot, a
fallback and an on-demand step on its own is checked for every registered cloud in
tests/clouds/test_every_cloud.py; these tests compare the clouds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spotkube.clouds import CLOUDS, load_stack_spec, parse_spec, plan_platform
from spotkube.platform import contract
from spotkube.platform.contract import PoolContract
from spotkube.platform.plan import PlatformPlan
from spotkube.platform.project import find_project

PROJECT = find_project(Path(__file__).resolve().parents[2])
T4 = "nvidia-tesla-t4"


def stack_plan(stack: str) -> PlatformPlan:
    return plan_platform(load_stack_spec(PROJECT, stack))


def built_plan(cloud: str, **values: object) -> PlatformPlan:
    return plan_platform(parse_spec({"cloud": cloud, "environment": "dev", **values}, f"{cloud} test plan"))


#: The same platform on both clouds: a spot T4 pool and an on-demand T4 fallback pool.
AKS_T4 = built_plan("aks", region="uksouth", gpu_pools=[
    {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot"},
    {"name": "t4ondemand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand", "max": 2},
])
GKE_T4 = built_plan("gke", region="us-central1", cluster={"project": "spotkube-test"}, gpu_pools=[
    {"name": "t4-spot", "machine": "n1-standard-4", "gpu": {"type": T4, "count": 1}, "capacity": "spot"},
    {"name": "t4-ondemand", "machine": "n1-standard-4", "gpu": {"type": T4, "count": 1},
     "capacity": "on-demand", "max": 2},
])


def by_name(plan: PlatformPlan) -> dict[str, PoolContract]:
    return {c.name: c for c in plan.contracts()}


def assert_not_on_on_demand_cpu_pools(landed: list[str], plan: PlatformPlan) -> None:
    pools = by_name(plan)
    assert not [name for name in landed if pools[name].role == "system"]
    assert not [name for name in landed if pools[name].capacity == "on-demand" and not pools[name].accelerator]


def test_the_shipped_stacks_send_a_spot_t4_step_to_their_interruptible_t4_pool() -> None:
    """aks-dev-uksouth has a spot T4 pool, gke-prod-europe-west4 a preemptible one."""
    step = contract.spot_gpu(T4)
    aks, gke = stack_plan("aks-dev-uksouth"), stack_plan("gke-prod-europe-west4")
    assert contract.landing_pools(step, aks.contracts()) == ["t4spot"]
    assert contract.landing_pools(step, gke.contracts()) == ["t4-preemptible"]
    assert by_name(aks)["t4spot"].capacity == "spot"
    assert by_name(gke)["t4-preemptible"].capacity == "preemptible"
    for plan in (aks, gke):
        assert_not_on_on_demand_cpu_pools(contract.landing_pools(step, plan.contracts()), plan)


def landing_kinds(step: contract.Placement, plan: PlatformPlan) -> list[tuple[str, str, str | None]]:
    """(role, capacity, GPU) of each pool a step lands on, leaving out the system pool: AKS keeps
    it for add-ons (CriticalAddonsOnly), GKE does not, and that difference is intended."""
    pools = by_name(plan)
    landed = [pools[name] for name in contract.landing_pools(step, plan.contracts())]
    return [(p.role, p.capacity, p.accelerator) for p in landed if p.role != "system"]


@pytest.mark.parametrize("step", [
    contract.spot_gpu(T4), contract.spot_gpu(T4, fallback_to_on_demand=True), contract.on_demand_only(),
    contract.on_any_gpu_pool(), contract.spot_cpu(),
], ids=["spot-gpu", "spot-gpu-with-fallback", "on-demand-only", "any-gpu-pool", "spot-cpu"])
def test_the_same_placement_lands_on_the_same_kinds_of_pool_on_both_clouds(step: contract.Placement) -> None:
    assert landing_kinds(step, AKS_T4) == landing_kinds(step, GKE_T4)


def test_a_gpu_the_platform_lacks_lands_nowhere_on_either_cloud() -> None:
    for plan in (AKS_T4, GKE_T4):
        assert contract.landing_pools(contract.spot_gpu("nvidia-l4"), plan.contracts()) == []


@pytest.mark.parametrize("stack", PROJECT.stacks())
def test_on_demand_only_never_lands_on_a_gpu_or_interruptible_pool(stack: str) -> None:
    plan = stack_plan(stack)
    pools = by_name(plan)
    landed = contract.landing_pools(contract.on_demand_only(), plan.contracts())
    assert landed, f"{stack}: on-demand work has nowhere to run"
    for name in landed:
        assert pools[name].accelerator is None, name
        assert pools[name].capacity == "on-demand", name


def test_the_shipped_stacks_cover_more_than_one_registered_cloud() -> None:
    clouds = {stack_plan(s).cloud for s in PROJECT.stacks()}
    assert len(clouds) > 1 and clouds <= set(CLOUDS)
