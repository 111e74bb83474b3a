"""AKS's writer and reader together: what `resources` writes for a planned pool, `resources` reads back
as the same pool. The round trip is pure (no Pulumi, no mocks); the last test checks, under the offline
engine, that azure-native registers the pool inputs exactly as `api_spelling` spells them.
"""

from __future__ import annotations

import re

import pytest

from spotkube import AksGpuCluster
from spotkube.clouds import RegisteredPool, parse_spec, plan_platform
from spotkube.clouds.aks import catalog, resources
from spotkube.components.offline import record_program
from spotkube.platform.contract import POOL_LABEL, Taint
from spotkube.platform.errors import SpecError
from spotkube.platform.plan import PlatformPlan, PoolPlan

#: Every kind of pool AKS builds: a zoned system pool with labels, a platform pool, a spot CPU pool with
#: a max price, a label and a taint of the user's, a spot GPU pool and an on-demand GPU fallback.
VALUES = {
    "cloud": "aks", "environment": "dev", "region": "uksouth",
    "systemPool": {"min": 2, "max": 4, "zones": ["1", "2"], "labels": {"team": "ml"}},
    "platformPool": {"name": "platform", "min": 1, "max": 3, "zones": ["1"]},
    "spotPools": [{"name": "cpuspot", "machine": "Standard_D8s_v5", "min": 0, "max": 5, "maxPrice": 0.12345,
                   "labels": {"tier": "batch"}, "taints": ["example.com/batch=yes:NoSchedule"]}],
    "gpuPools": [
        {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot", "evictionPolicy": "Delete",
         "maxPrice": -1, "min": 0, "max": 3, "zones": ["1", "3"]},
        {"name": "a100od", "machine": "Standard_NC24ads_A100_v4", "capacity": "on-demand", "min": 0, "max": 2},
    ],
    "kubeflow": {"enabled": False},
    "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001", "principalType": "ServicePrincipal"}},
}


def planned() -> PlatformPlan:
    """The plan with each pool's cloud name, as the component gives them."""
    plan = plan_platform(parse_spec(VALUES, "test"))
    return plan.with_cloud_names({p.name: resources.cloud_pool_name(p) for p in plan.node_pools})


PLAN = planned()


def assert_read_back(read: RegisteredPool, pool: PoolPlan) -> None:
    assert read.cloud_name == pool.cloud_name and read.labels[POOL_LABEL] == pool.name
    assert read.machine == pool.machine
    assert read.capacity == pool.capacity
    assert (read.min, read.max) == (pool.min, pool.max)
    assert read.labels == pool.labels
    assert read.taints == tuple(str(t) for t in pool.taints) and read.parsed_taints == frozenset(pool.taints)
    assert read.zones == pool.zones
    assert (read.has_gpu, read.gpu_count) == (pool.gpu_type is not None, pool.gpu_count)
    assert (read.eviction_policy, read.max_price) == (pool.eviction_policy, pool.max_price)


@pytest.mark.parametrize("pool", PLAN.node_pools, ids=lambda p: p.name)
def test_an_agent_pool_reads_back_as_planned(pool: PoolPlan) -> None:
    inputs = resources.api_spelling(resources.agent_pool_inputs(pool))
    (read,) = resources.read_pools(resources.AGENT_POOL_TYPE, f"ml-{pool.name}", inputs)
    assert_read_back(read, pool)
    assert not read.system and read.where == f"AgentPool 'ml-{pool.name}'"


def test_the_inline_system_pool_reads_back_as_planned() -> None:
    cluster = resources.cluster_inputs(PLAN, "ml", resource_group_name="ml-rg", admin_group_object_ids=(),
                                       authorized_ip_ranges=None)
    profiles = [resources.api_spelling(p) for p in cluster["agent_pool_profiles"]]
    (read,) = resources.read_pools(resources.CLUSTER_TYPE, "ml-aks", {"agentPoolProfiles": profiles})
    assert_read_back(read, PLAN.system_pool)
    assert read.system


def test_the_plan_covers_what_the_round_trip_must_show() -> None:
    """The pools above do carry every field the test compares, so none passes by being empty."""
    cpu, gpu, fallback = (p for p in PLAN.pools if p.name in ("cpuspot", "t4spot", "a100od"))
    assert cpu.max_price == 0.12345 and Taint("example.com/batch", "yes") in cpu.taints
    assert (gpu.capacity, gpu.eviction_policy, gpu.max_price, gpu.zones) == ("spot", "Delete", -1, ("1", "3"))
    assert (fallback.capacity, fallback.gpu_type, fallback.gpu_count) == ("on-demand", "nvidia-a100-80gb", 1)
    assert PLAN.system_pool.labels["team"] == "ml" and PLAN.system_pool.zones == ("1", "2")


def test_a_versioned_pool_name_is_always_a_name_aks_takes() -> None:
    """The version's digits and the longest name the rules accept are one pair of constants."""
    longest = "p" * resources.VERSIONED_NAME_MAX
    plan = plan_platform(parse_spec({**VALUES, "platformPool": {"name": longest}}, "test"))
    (platform,) = (p for p in plan.pools if p.role == "platform")
    name = resources.cloud_pool_name(platform)
    assert len(name) == resources.POOL_NAME_MAX and re.fullmatch(catalog.POOL_NAME_PATTERN, name)
    too_long = {**VALUES, "platformPool": {"name": longest + "p"}}
    with pytest.raises(SpecError, match=f"use at most {resources.VERSIONED_NAME_MAX} characters"):
        parse_spec(too_long, "test")


def test_azure_native_registers_the_pool_inputs_as_api_spelling_spells_them() -> None:
    spec = parse_spec(VALUES, "test")
    recording = record_program(lambda: AksGpuCluster.from_spec("ml", spec), project="spotkube", stack="test",
                               config={})
    registered = {r.inputs["agentPoolName"]: r for r in recording.registrations
                  if r.type == resources.AGENT_POOL_TYPE}
    assert set(registered) == {p.cloud_name for p in PLAN.node_pools}
    for pool in PLAN.node_pools:
        inputs = dict(registered[pool.cloud_name].inputs)
        assert inputs.pop("resourceGroupName") and inputs.pop("resourceName"), "the outputs it is given"
        assert inputs == resources.api_spelling(resources.agent_pool_inputs(pool))
    (cluster,) = (r for r in recording.registrations if r.type == resources.CLUSTER_TYPE)
    system_pool = resources.api_spelling(resources.system_pool_profile(PLAN.system_pool))
    assert cluster.inputs["agentPoolProfiles"] == [system_pool]
