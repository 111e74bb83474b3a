"""GKE's writer and reader together: what `resources` writes for a planned pool, `resources` reads back
as the same pool. The round trip is pure (no Pulumi, no mocks): `registered` spells the writer's
snake_case inputs the way pulumi-gcp registers them, and the last test checks, under the offline engine,
that it does so exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest

from spotkube import GkeGpuCluster
from spotkube.clouds import RegisteredPool, parse_spec, plan_platform
from spotkube.clouds.gke import catalog, resources
from spotkube.components.offline import record_program
from spotkube.platform.contract import POOL_LABEL, Taint
from spotkube.platform.errors import SpecError
from spotkube.platform.plan import PlatformPlan, PoolPlan

PROJECT = "ml-platform-dev"
SERVICE_ACCOUNT = f"ml-nodes-000000@{PROJECT}.iam.gserviceaccount.com"
#: Every kind of pool GKE builds: a zoned system pool with labels, a platform pool, a preemptible CPU
#: pool with a label and a taint of the user's, a spot L4 pool (zones filled in from the GPU table)
#: and an on-demand N1 pool with two T4s.
VALUES = {
    "cloud": "gke", "environment": "dev", "region": "us-central1", "cluster": {"project": PROJECT},
    "systemPool": {"min": 2, "max": 4, "zones": ["us-central1-a", "us-central1-b"], "labels": {"team": "ml"}},
    "platformPool": {"name": "platform", "min": 1, "max": 3},
    "spotPools": [{"name": "cpu-pre", "machine": "e2-standard-8", "capacity": "preemptible", "min": 0, "max": 5,
                   "labels": {"tier": "batch"}, "taints": ["example.com/batch=yes:NoSchedule"]}],
    "gpuPools": [
        {"name": "l4-spot", "machine": "g2-standard-8", "capacity": "spot", "min": 0, "max": 4},
        {"name": "t4-od", "machine": "n1-standard-16", "gpu": {"type": "nvidia-tesla-t4", "count": 2},
         "capacity": "on-demand", "min": 0, "max": 2},
    ],
    "kubeflow": {"enabled": False},
}
#: Inputs whose values are maps of the user's own keys, which the SDK passes on untouched.
MAPS = ("labels", "metadata", "resourceLabels")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def registered(value: Any, key: str = "") -> Any:
    """Inputs as pulumi-gcp registers them: camelCase keys at every level but inside maps, unset
    values left out."""
    if isinstance(value, Mapping):
        if key in MAPS:
            return dict(value)
        return {camel(k): registered(v, camel(k)) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [registered(v, key) for v in value]
    return value


def planned() -> PlatformPlan:
    """The plan with each pool's cloud name, as the component gives them."""
    plan = plan_platform(parse_spec(VALUES, "test"))
    account = resources.node_service_account_id("ml", plan.spec)
    return plan.with_cloud_names({p.name: resources.cloud_pool_name(p, account) for p in plan.pools})


PLAN = planned()


def written(pool: PoolPlan) -> dict[str, Any]:
    return resources.node_pool_inputs(pool, project=PROJECT, location="us-central1", cluster="ml-gke-0000000",
                                      service_account=SERVICE_ACCOUNT)


def assert_read_back(read: RegisteredPool, pool: PoolPlan) -> None:
    assert read.cloud_name == pool.cloud_name and read.labels[POOL_LABEL] == pool.name
    assert read.machine == pool.machine
    assert read.capacity == pool.capacity
    assert (read.min, read.max) == (pool.min, pool.max)
    assert read.labels == pool.labels
    assert read.taints == tuple(str(t) for t in pool.taints) and read.parsed_taints == frozenset(pool.taints)
    assert read.zones == pool.zones
    assert (read.has_gpu, read.gpu_count) == (pool.gpu_type is not None, pool.gpu_count)
    assert (read.eviction_policy, read.max_price) == (pool.eviction_policy, pool.max_price) == (None, None)


@pytest.mark.parametrize("pool", PLAN.pools, ids=lambda p: p.name)
def test_a_node_pool_reads_back_as_planned(pool: PoolPlan) -> None:
    (read,) = resources.read_pools(resources.NODE_POOL_TYPE, f"ml-{pool.name}", registered(written(pool)))
    assert_read_back(read, pool)
    assert read.system == (pool.role == "system")


def test_the_plan_covers_what_the_round_trip_must_show() -> None:
    """The pools above do carry every field the test compares, so none passes by being empty."""
    system, platform, cpu, l4, t4 = PLAN.pools
    assert system.labels["team"] == "ml" and system.zones == ("us-central1-a", "us-central1-b")
    assert system.cloud_name != system.name and platform.cloud_name != platform.name, "versioned"
    assert cpu.capacity == "preemptible" and Taint("example.com/batch", "yes") in cpu.taints
    assert (l4.capacity, l4.gpu_type, l4.gpu_count) == ("spot", "nvidia-l4", 1) and l4.zones
    assert (t4.capacity, t4.gpu_type, t4.gpu_count) == ("on-demand", "nvidia-tesla-t4", 2)


def test_taints_round_trip_in_gke_s_spelling() -> None:
    for effect in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        taint = Taint("example.com/k", "v", effect)  # type: ignore[arg-type]
        assert resources.taint_of(resources.gke_taint(taint)) == taint
    assert resources.gke_taint(Taint("a", "b", "PreferNoSchedule"))["effect"] == "PREFER_NO_SCHEDULE"


def test_a_versioned_pool_name_is_always_a_name_gke_takes() -> None:
    """The version's digits and the longest name the rules accept are one pair of constants."""
    longest = "p" * resources.VERSIONED_NAME_MAX
    plan = plan_platform(parse_spec({**VALUES, "platformPool": {"name": longest}}, "test"))
    (platform,) = (p for p in plan.pools if p.role == "platform")
    name = resources.cloud_pool_name(platform, "ml-nodes-000000")
    assert len(name) == resources.POOL_NAME_MAX and catalog.is_valid_node_pool_name(name)
    assert re.fullmatch(rf"{longest}-[0-9a-f]{{{resources.VERSION_DIGITS}}}", name)
    with pytest.raises(SpecError, match=f"use at most {resources.VERSIONED_NAME_MAX} characters"):
        parse_spec({**VALUES, "platformPool": {"name": longest + "p"}}, "test")


def test_pulumi_gcp_registers_the_pool_inputs_as_registered_spells_them() -> None:
    spec = parse_spec(VALUES, "test")
    recording = record_program(lambda: GkeGpuCluster.from_spec("ml", spec), project="spotkube", stack="test",
                               config={})
    pools = {r.inputs["name"]: r.inputs for r in recording.registrations if r.type == resources.NODE_POOL_TYPE}
    assert set(pools) == {p.cloud_name for p in PLAN.pools}
    for pool in PLAN.pools:
        inputs = pools[pool.cloud_name]
        expected = registered(resources.node_pool_inputs(
            pool, project=inputs["project"], location="us-central1", cluster=inputs["cluster"],
            service_account=inputs["nodeConfig"]["serviceAccount"]))
        assert inputs == expected
