"""The plan states each GPU type's spot fallback as deployed: order, worst case, missing fallback."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from spotkube.clouds import parse_spec, plan_platform
from spotkube.platform.cloud import AutoscalerFacts
from spotkube.platform.plan import autoscaler_priorities, missing_fallbacks
from spotkube.review.fallback import RANK, GpuFallback, duration, gpu_fallback, stack_fallback

CLUSTER = "azure-native:containerservice:ManagedCluster"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


@dataclass
class Res:
    type: str
    name: str
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Pool:
    name: str
    capacity: str
    gpu_type: str | None
    cloud_name: str = ""
    queued: bool = False
    max_run_seconds: int | None = None

    def __post_init__(self) -> None:
        self.cloud_name = self.cloud_name or self.name


def aks(profile: dict[str, Any], priorities: dict[int, list[str]] | None) -> list[Res]:
    resources = [Res(CLUSTER, "c", {"autoScalerProfile": profile})]
    if priorities is not None:
        resources.append(Res(CONFIG_MAP, "p", {
            "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            "data": {"priorities": yaml.safe_dump(priorities)}}))
    return resources


POOLS = [Pool("a100spot", "spot", "nvidia-a100-80gb"), Pool("a100spot2", "spot", "nvidia-a100-80gb"),
         Pool("a100od", "on-demand", "nvidia-a100-80gb"), Pool("t4spot", "spot", "nvidia-tesla-t4"),
         Pool("platform", "on-demand", None)]
TIERS = {30: ["^aks-a100spot-[0-9]+-vmss$", "^aks-a100spot2-[0-9]+-vmss$", "^aks-t4spot-[0-9]+-vmss$"],
         20: ["^aks-a100od-[0-9]+-vmss$"], 10: [".*"]}
PROFILE = {"expander": "priority", "scanInterval": "10s", "maxNodeProvisionTime": "10m", "newPodScaleUpDelay": "30s"}


def test_each_spot_pool_ahead_of_on_demand_costs_its_provision_time_and_a_scan() -> None:
    a100, t4 = stack_fallback("aks", aks(PROFILE, TIERS), POOLS)
    assert [(s.capacity, s.pools, s.priority) for s in a100.order] == [
        ("spot", ("a100spot", "a100spot2"), 30), ("on-demand", ("a100od",), 20)]
    assert a100.guaranteed
    assert a100.worst_case_seconds == 30 + 2 * (600 + 10)
    assert a100.worst_case_text() == "20m50s"
    assert a100.formula and "maxNodeProvisionTime 600s" in a100.formula and a100.warning is None
    assert t4.warning and "no on-demand fallback for nvidia-tesla-t4" in t4.warning
    assert t4.worst_case_seconds is None and t4.worst_case_text() == "no on-demand fallback"


def test_aks_defaults_apply_to_timers_the_profile_leaves_unset() -> None:
    (a100, _) = stack_fallback("aks", aks({"expander": "priority"}, TIERS), POOLS)
    assert a100.worst_case_seconds == 2 * (15 * 60 + 10)


def test_an_on_demand_pool_ranked_with_spot_is_not_a_guaranteed_fallback() -> None:
    tiers = {30: [".*a100.*"], 10: [".*"]}
    (a100, _) = stack_fallback("aks", aks(PROFILE, tiers), POOLS)
    assert not a100.guaranteed
    assert a100.note == "an on-demand pool of nvidia-a100-80gb ranks with or above a spot pool"


def test_without_the_priority_expander_nothing_ranks_spot_first() -> None:
    (a100, _) = stack_fallback("aks", aks({**PROFILE, "expander": "least-waste"}, TIERS), POOLS)
    assert not a100.guaranteed and a100.worst_case_seconds is None
    assert a100.note and "use expander: priority" in a100.note


def test_gke_states_the_order_is_not_guaranteed_and_unbounded() -> None:
    resources = [Res("gcp:container/cluster:Cluster", "c")]
    (a100, t4) = stack_fallback("gke", resources, POOLS)
    assert not a100.guaranteed and a100.worst_case_seconds is None
    assert a100.worst_case_text() == "not bounded (not stated by the cloud)"
    assert a100.note and "order not guaranteed" in a100.note
    assert t4.warning


def test_no_cluster_no_fallback() -> None:
    assert stack_fallback("aks", [], POOLS) == ()


def test_the_plan_s_own_tiers_give_a_guaranteed_fallback() -> None:
    spec = parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus", "gpuPools": [
        {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4"},
        {"name": "a100od", "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand", "max": 1}]}, "test")
    plan = plan_platform(spec)
    tiers = autoscaler_priorities(plan, "^aks-{pool}-[0-9]+-vmss$")
    pools = [Pool(p.name, p.capacity, p.gpu_type, p.cloud_name) for p in plan.pools]
    (a100,) = stack_fallback("aks", aks({"expander": "priority", "maxNodeProvisionTime": "10m",
                                          "scanInterval": "10s"}, tiers), pools)
    assert a100.guaranteed and a100.worst_case_seconds == 610


def test_durations_read_as_people_write_them() -> None:
    assert [duration(s) for s in (610, 600, 10, 1250)] == ["10m10s", "10m", "10s", "20m50s"]


FLEX_POOLS = [Pool("a100od", "on-demand", "nvidia-tesla-a100"), Pool("a100flex", "flex-start", "nvidia-tesla-a100",
                                                                      max_run_seconds=86400),
              Pool("a100spot", "spot", "nvidia-tesla-a100"), Pool("a100queued", "flex-start", "nvidia-tesla-a100",
                                                                   queued=True)]


def facts(priorities: dict[int, list[str]] | None) -> AutoscalerFacts:
    return AutoscalerFacts(ordered_by="a ComputeClass", priorities=priorities, node_group=lambda pool: pool,
                           give_up_seconds=None, first_look_seconds=0, formula="no timer",
                           tier_bounds={"flex-start": "until the scheduler gives up"})


def test_flex_start_is_the_tier_between_spot_and_on_demand_and_a_queued_pool_is_none() -> None:
    (a100,) = _fallbacks(facts({3: ["^a100spot$"], 2: ["^a100flex$"], 1: ["^a100od$"]}))
    assert [(s.capacity, s.pools) for s in a100.order] == [
        ("spot", ("a100spot",)), ("flex-start", ("a100flex",)), ("on-demand", ("a100od",))]
    assert a100.guaranteed
    assert a100.order[1].bound == "until the scheduler gives up; a node runs at most 24 h, then the cloud deletes it"
    assert a100.order[0].bound is None


def test_flex_start_ranked_above_spot_is_no_guaranteed_order() -> None:
    (a100,) = _fallbacks(facts({3: ["^a100flex$"], 2: ["^a100spot$"], 1: ["^a100od$"]}))
    assert not a100.guaranteed
    assert a100.note == "a pool of nvidia-tesla-a100 ranks with or above a pool of an earlier tier (spot, " \
        "flex-start, on-demand)"


def test_without_priorities_the_tiers_are_listed_cheapest_first() -> None:
    (a100,) = _fallbacks(facts(None))
    assert [s.capacity for s in a100.order] == ["spot", "flex-start", "on-demand"] and not a100.guaranteed


def test_a_queued_pool_is_no_fallback_of_its_gpu_type() -> None:
    """Its nodes come only through provisioning requests, so it neither counts as a fallback nor needs one."""
    (warning,) = missing_fallbacks([Pool("a100spot", "spot", "nvidia-tesla-a100"), FLEX_POOLS[3],
                                    Pool("h100queued", "flex-start", "nvidia-h100-80gb", queued=True)])
    assert warning.id == "fallback-no-on-demand:nvidia-tesla-a100"
    assert "when a100spot is out of capacity" in warning.message and "a100queued" not in warning.message


def _fallbacks(autoscaler: AutoscalerFacts) -> list[GpuFallback]:
    return [gpu_fallback("nvidia-tesla-a100", [p for p in FLEX_POOLS if not p.queued], autoscaler)]


@given(st.lists(st.tuples(st.sampled_from([*RANK, "unknown"]), st.integers(0, 4)), min_size=1, max_size=8))
def test_a_fallback_is_guaranteed_exactly_when_every_earlier_pool_outranks_every_later_one(
    pools: list[tuple[str, int]],
) -> None:
    """The guarantee as the priority expander defines it, pool by pool: each pool of an earlier capacity
    (spot or preemptible, then flex-start, then on-demand, then any other) has a higher priority than
    each pool of a later one of its GPU type, and there is an on-demand pool to fall back to (found in
    one pass, however many pools)."""
    named = [Pool(f"p{i}", capacity, "nvidia-a100-80gb") for i, (capacity, _) in enumerate(pools)]
    tiers: dict[int, list[str]] = {}
    for pool, (_, tier) in zip(named, pools, strict=True):
        tiers.setdefault(tier, []).append(f"^aks-{pool.name}-[0-9]+-vmss$")
    (a100,) = stack_fallback("aks", aks(PROFILE, tiers), named)
    rank = {**RANK, "unknown": len(RANK)}
    every_pair_ordered = all(t1 > t2 for (c1, t1) in pools for (c2, t2) in pools if rank[c1] < rank[c2])
    capacities = {capacity for capacity, _ in pools}
    falls_back = "on-demand" in capacities and bool(capacities - {"on-demand"})
    assert a100.guaranteed == (every_pair_ordered and falls_back)
