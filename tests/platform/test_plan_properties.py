"""Properties of the path from a stack's config to its plan, for any valid AKS or GKE stack.

In the style of awsx's subnet planner property tests: the strategies below build stack config values
(as a stack file writes them, without the `spotkube:` prefix) that are valid by construction, using
the bundled catalogs for GPU machines and GPU zones, and each test checks one promise the plan makes
to workloads: interruptible and GPU pools are tainted, the control plane never runs on spot, every
pool can be targeted on its own, and so on.

The strategies never `assume()` a spec away. `test_generated_stacks_are_accepted_by_validation` keeps
them honest instead: if validation starts refusing valid stacks (or the strategies drift from the
rules), that test fails rather than the properties quietly checking nothing. Every other test parses
its stack the same way, so a refused spec fails it too.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spotkube.clouds import CLOUDS, parse_spec, plan_platform
from spotkube.clouds.aks import catalog as aks_catalog
from spotkube.clouds.aks.labels import AKS_SPOT_LABEL, AKS_SPOT_TAINT
from spotkube.clouds.gke import catalog as gke_catalog
from spotkube.clouds.gke.labels import GKE_PREEMPTIBLE_LABEL, GKE_PREEMPTIBLE_TAINT, GKE_SPOT_LABEL, GKE_SPOT_TAINT
from spotkube.platform import contract
from spotkube.platform.contract import Placement, Taint, Toleration, landing_pools
from spotkube.platform.errors import SpecError
from spotkube.platform.plan import PlatformPlan, PoolPlan

SOURCE = "stacks/Pulumi.generated.yaml"
MAX_NODES = 1000
PROPERTY = settings(max_examples=40, deadline=None)

#: What each cloud must taint interruptible pools with, and the label its nodes carry for it.
#: Spelled out per (cloud, capacity) rather than through `contract.interruptible_taint`, which the
#: plan itself uses: the test should not agree with the plan by calling the same function.
INTERRUPTIBLE_TAINT = {
    ("aks", "spot"): AKS_SPOT_TAINT,
    ("gke", "spot"): GKE_SPOT_TAINT,
    ("gke", "preemptible"): GKE_PREEMPTIBLE_TAINT,
}
INTERRUPTIBLE_LABEL = {
    ("aks", "spot"): AKS_SPOT_LABEL,
    ("gke", "spot"): GKE_SPOT_LABEL,
    ("gke", "preemptible"): GKE_PREEMPTIBLE_LABEL,
}
#: Defaults the stack docs promise when a pool leaves a field out.
WORKER_DEFAULT_CAPACITY = "spot"
WORKER_DEFAULT_MIN = 0

# --- Building blocks ------------------------------------------------------------------------------

LOWER = "abcdefghijklmnopqrstuvwxyz"
LOWER_DIGITS = LOWER + "0123456789"


def identifier(longest: int, *, hyphens: bool = False, shortest: int = 1) -> st.SearchStrategy[str]:
    """A lower-case letter, then letters and digits (and inner hyphens): `[a-z][a-z0-9-]*[a-z0-9]`.
    Built from `st.text` rather than `st.from_regex`, which is several times slower to draw."""
    first = st.sampled_from(LOWER)
    if not hyphens:
        return st.builds(str.__add__, first, st.text(LOWER_DIGITS, min_size=shortest - 1, max_size=longest - 1))
    middle = st.text(LOWER_DIGITS + "-", min_size=max(shortest - 2, 0), max_size=longest - 2)
    last = st.sampled_from(LOWER_DIGITS)
    longer = st.builds(lambda f, m, la: f + m + la, first, middle, last)
    return first | longer if shortest == 1 else longer


#: Pool names as each cloud accepts them (AKS: 1-12 lower-case alphanumerics starting with a letter,
#: at most 8 for the platform pool; GKE: 1-40 with inner hyphens, at most 33 for system and platform).
AKS_POOL_NAME = identifier(12)
AKS_PLATFORM_NAME = identifier(8)
GKE_CONTROL_PLANE_NAME = identifier(33, hyphens=True)
GKE_WORKER_NAME = identifier(40, hyphens=True)
ENVIRONMENT = st.sampled_from(["dev", "prod"]) | identifier(16)
GKE_PROJECT = identifier(30, hyphens=True, shortest=6)

AKS_CPU_SIZES = ("Standard_D4s_v3", "Standard_D8s_v5", "Standard_E8ds_v5", "Standard_D4ps_v5", "Standard_F8s_v2")
GKE_CPU_MACHINES = ("e2-standard-4", "n2-standard-8", "n2d-highmem-4", "t2a-standard-4", "c3-standard-8")
AKS_CHANNELS = ("stable", "rapid", "patch", "node-image", "none")
GKE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
#: Regions outside the GPU zone table: fine for a GKE stack without GPU pools.
GKE_REGIONS_WITHOUT_GPU_TABLE = ("asia-northeast1", "southamerica-east1")

EFFECTS = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
SHORT_VALUE = st.text(LOWER_DIGITS, min_size=1, max_size=8)
USER_LABELS = st.dictionaries(st.sampled_from(["team", "example.com/tier", "cost-center"]), SHORT_VALUE, max_size=2)
USER_TAINT = st.one_of(
    st.builds("{}={}:{}".format, st.sampled_from(["example.com/team", "dedicated"]), SHORT_VALUE, EFFECTS),
    st.builds("{}:{}".format, st.just("example.com/exclusive"), EFFECTS),
)
#: GPU pools' taints may repeat spotkube's own GPU taint (people copy it from docs): it must not
#: appear twice. Lists may also repeat a taint.
GPU_POOL_TAINT = st.one_of(USER_TAINT, st.just(str(contract.GPU_TAINT)))


def _n1_options() -> list[tuple[str, str, int]]:
    """(machine, GPU type, count) for every predefined N1 size and GPU count Compute Engine accepts."""
    options = []
    for series, sizes in gke_catalog.N1_SIZES.items():
        for vcpus in sizes:
            for gpu, counts in gke_catalog.N1_ACCELERATOR_COUNTS.items():
                options += [(f"n1-{series}-{vcpus}", gpu, count) for count in counts
                            if vcpus <= gke_catalog.N1_MAX_VCPUS[gpu][count]]
    return options


def _gpu_choices(region: str) -> st.SearchStrategy[tuple[str, str, int]] | None:
    """(machine, GPU type, count) whose GPU some zone of `region` offers: a2/a3/g2 or N1 alike."""
    fixed = [(machine, gpu, count) for machine, (gpu, count) in gke_catalog.fixed_gpu_machine_types().items()]
    branches = [st.sampled_from(offered) for options in (fixed, _n1_options())
                if (offered := [o for o in options if gke_catalog.zones_offering(region, o[1])])]
    return st.one_of(branches) if branches else None


#: GKE regions whose GPU zones the catalog knows, with the GPU machines their zones can run.
GKE_GPU_CHOICES = {r: choices for r in gke_catalog.gpu_regions() if (choices := _gpu_choices(r)) is not None}
AKS_ZONES = st.lists(st.sampled_from(("1", "2", "3")), unique=True)


@functools.cache
def aks_gpu_sizes(region: str) -> st.SearchStrategy[str]:
    """The catalog's GPU sizes, but those it knows `region` lacks (which the spec refuses)."""
    section = aks_catalog.section()
    return st.sampled_from(sorted(m for m in section.machines if section.offer(m, region).status != "absent"))


AKS_SPOT_PRICE = st.just(-1) | st.integers(1, 10_000_000).map(lambda n: n / 100_000)  # at most 5 decimals


@functools.cache
def gke_zones(region: str, gpu_type: str | None = None) -> st.SearchStrategy[list[str]]:
    """Zones of `region` for a pool (offering `gpu_type`, if given; then at least one)."""
    if gpu_type is not None:
        offering = gke_catalog.zones_offering(region, gpu_type)
        assert offering, f"generator bug: {region} offers no {gpu_type}"
        return st.lists(st.sampled_from(offering), unique=True, min_size=1)
    known = gke_catalog.region_zones(region)
    return st.lists(st.sampled_from(tuple(known) if known else tuple(f"{region}-{z}" for z in "abc")), unique=True)


@st.composite
def scale(draw: st.DrawFn, lowest_min: int = 0) -> dict[str, int]:
    high = draw(st.integers(lowest_min, MAX_NODES))
    return {"min": draw(st.integers(lowest_min, high)), "max": high}


@st.composite
def worker_scale(draw: st.DrawFn) -> dict[str, int]:
    """A spot or GPU pool's min and max; min is sometimes left to its default (0)."""
    bounds = draw(scale())
    if draw(st.booleans()):
        bounds = {"max": bounds["max"]}
    return bounds


def _maybe(draw: st.DrawFn, pool: dict[str, Any], key: str, strategy: st.SearchStrategy[Any]) -> None:
    """Set `key` from `strategy`, or leave it out to get the default."""
    if draw(st.booleans()):
        pool[key] = draw(strategy)


@st.composite
def unique_names(draw: st.DrawFn, names: st.SearchStrategy[str], taken: set[str], count: int) -> list[str]:
    return draw(st.lists(names.filter(lambda n: n not in taken), unique=True,
                         min_size=count, max_size=count))


@st.composite
def control_plane(draw: st.DrawFn, cloud: str) -> dict[str, Any]:
    """systemPool, platformPool, kubeflow (and the names they take) for one cloud."""
    system: dict[str, Any] = draw(scale(lowest_min=1)) if draw(st.booleans()) else {}
    _maybe(draw, system, "name", AKS_POOL_NAME if cloud == "aks" else GKE_CONTROL_PLANE_NAME)
    system_name = system.get("name", "system")
    machines = AKS_CPU_SIZES if cloud == "aks" else GKE_CPU_MACHINES
    _maybe(draw, system, "machine", st.sampled_from(machines))
    _maybe(draw, system, "labels", USER_LABELS)

    platform_enabled = draw(st.booleans()) or draw(st.booleans())  # mostly enabled
    platform: dict[str, Any] = draw(scale()) if draw(st.booleans()) else {}
    platform_pattern = AKS_PLATFORM_NAME if cloud == "aks" else GKE_CONTROL_PLANE_NAME
    _maybe(draw, platform, "name", platform_pattern.filter(lambda n: n != system_name))
    if platform.get("name", "platform") == system_name:
        platform["name"] = draw(platform_pattern.filter(lambda n: n != system_name))
    _maybe(draw, platform, "machine", st.sampled_from(machines))
    _maybe(draw, platform, "labels", USER_LABELS)
    values: dict[str, Any] = {"systemPool": system, "platformPool": platform}
    if not platform_enabled:
        # Kubeflow and the add-ons-only system pool need the platform pool.
        platform["enabled"] = False
        values["kubeflow"] = {"enabled": False}
        system["criticalAddonsOnly"] = False
    else:
        _maybe(draw, system, "criticalAddonsOnly", st.booleans())
    for key in ("systemPool", "platformPool"):
        if not values[key] and draw(st.booleans()):
            del values[key]  # the whole pool left to its defaults
    if cloud == "aks":
        for pool in (system, platform):
            _maybe(draw, pool, "zones", AKS_ZONES)
    return values


def _taken_names(values: dict[str, Any]) -> set[str]:
    return {values.get("systemPool", {}).get("name", "system"), values.get("platformPool", {}).get("name", "platform")}


@st.composite
def aks_stacks(draw: st.DrawFn, min_gpu_pools: int = 0) -> dict[str, Any]:
    values: dict[str, Any] = {
        "cloud": "aks",
        "environment": draw(ENVIRONMENT),
        "region": draw(st.sampled_from(["uksouth", "eastus", "westeurope", "swedencentral"])),
        **draw(control_plane("aks")),
    }
    _maybe(draw, values, "cluster", st.fixed_dictionaries({"channel": st.sampled_from(AKS_CHANNELS)}))
    n_gpu, n_spot = draw(st.integers(min_gpu_pools, 3)), draw(st.integers(0, 2))
    pool_names = draw(unique_names(AKS_POOL_NAME, _taken_names(values), n_gpu + n_spot))
    def worker(name: str, machine: str, capacities: tuple[str, ...], taints: st.SearchStrategy[str]) -> dict[str, Any]:
        pool = {"name": name, "machine": machine, **draw(worker_scale())}
        _maybe(draw, pool, "capacity", st.sampled_from(capacities))
        if pool.get("capacity", WORKER_DEFAULT_CAPACITY) == "spot":
            _maybe(draw, pool, "maxPrice", AKS_SPOT_PRICE)
            _maybe(draw, pool, "evictionPolicy", st.sampled_from(("Delete", "Deallocate")))
        _maybe(draw, pool, "zones", AKS_ZONES)
        _maybe(draw, pool, "labels", USER_LABELS)
        _maybe(draw, pool, "taints", st.lists(taints, max_size=3))
        return pool

    gpu_pools = []
    for name in pool_names[:n_gpu]:
        machine = draw(aks_gpu_sizes(values["region"]))
        pool = worker(name, machine, ("spot", "on-demand"), GPU_POOL_TAINT)
        if draw(st.booleans()):
            gpu_type, count = aks_catalog.gpu_vm_size(machine) or ("", 0)
            pool["gpu"] = {"type": gpu_type, "count": count}
        gpu_pools.append(pool)
    spot_pools = [worker(name, draw(st.sampled_from(AKS_CPU_SIZES)), ("spot",), USER_TAINT)
                  for name in pool_names[n_gpu:]]
    values |= {"gpuPools": gpu_pools, "spotPools": spot_pools}
    return values


@st.composite
def gke_stacks(draw: st.DrawFn, min_gpu_pools: int = 0) -> dict[str, Any]:
    regions = (*GKE_GPU_CHOICES, *(() if min_gpu_pools else GKE_REGIONS_WITHOUT_GPU_TABLE))
    region = draw(st.sampled_from(regions))
    values: dict[str, Any] = {
        "cloud": "gke",
        "environment": draw(ENVIRONMENT),
        "region": region,
        **draw(control_plane("gke")),
    }
    for key in ("systemPool", "platformPool"):
        if key in values:
            _maybe(draw, values[key], "zones", gke_zones(region))
    cluster = {"project": draw(GKE_PROJECT)}
    _maybe(draw, cluster, "channel", st.sampled_from(GKE_CHANNELS))
    values["cluster"] = cluster

    n_gpu = draw(st.integers(min_gpu_pools, 3)) if region in GKE_GPU_CHOICES else 0
    n_spot = draw(st.integers(0, 2))
    pool_names = draw(unique_names(GKE_WORKER_NAME, _taken_names(values), n_gpu + n_spot))

    gpu_pools = []
    for name in pool_names[:n_gpu]:
        machine, gpu_type, count = draw(GKE_GPU_CHOICES[region])
        pool: dict[str, Any] = {"name": name, "machine": machine, **draw(worker_scale())}
        if machine in gke_catalog.SPOT_OR_FLEX_ONLY_MACHINE_TYPES:
            pool["capacity"] = "spot"
        else:
            _maybe(draw, pool, "capacity", st.sampled_from(("spot", "preemptible", "on-demand")))
        if gke_catalog.is_n1(machine) or draw(st.booleans()):
            pool["gpu"] = {"type": gpu_type, "count": count}
        _maybe(draw, pool, "zones", gke_zones(region, gpu_type))
        _maybe(draw, pool, "gpuDriver", st.sampled_from(("DEFAULT", "LATEST", "INSTALLATION_DISABLED")))
        _maybe(draw, pool, "labels", USER_LABELS)
        _maybe(draw, pool, "taints", st.lists(GPU_POOL_TAINT, max_size=3))
        gpu_pools.append(pool)
    spot_pools = []
    for name in pool_names[n_gpu:]:
        pool = {"name": name, "machine": draw(st.sampled_from(GKE_CPU_MACHINES)), **draw(worker_scale())}
        _maybe(draw, pool, "capacity", st.sampled_from(("spot", "preemptible")))
        _maybe(draw, pool, "zones", gke_zones(region))
        _maybe(draw, pool, "labels", USER_LABELS)
        _maybe(draw, pool, "taints", st.lists(USER_TAINT, max_size=3))
        spot_pools.append(pool)
    if gpu_pools or draw(st.booleans()):
        values["gpuPools"] = gpu_pools
    if spot_pools or draw(st.booleans()):
        values["spotPools"] = spot_pools
    return values


#: The generators of stacks, by cloud: the properties below hold for every cloud that has one.
GENERATORS = {"aks": aks_stacks, "gke": gke_stacks}
STACKS = st.one_of(*(generate() for _, generate in sorted(GENERATORS.items())))
STACKS_WITH_GPUS = st.one_of(*(generate(min_gpu_pools=1) for _, generate in sorted(GENERATORS.items())))


def test_every_generator_is_a_registered_cloud_s() -> None:
    assert GENERATORS and set(GENERATORS) <= set(CLOUDS)

# --- Reading the generated config back ------------------------------------------------------------


@dataclass(frozen=True)
class ConfiguredPool:
    """One pool as the stack config gives it, with the default capacity applied."""

    path: str
    name: str
    role: str
    capacity: str
    fields: dict[str, Any]


def configured_pools(values: dict[str, Any]) -> Iterator[ConfiguredPool]:
    """The pools the config asks for, in the plan's order: system, platform, spot, GPU."""
    system = values.get("systemPool", {})
    yield ConfiguredPool("systemPool", system.get("name", "system"), "system", "on-demand", system)
    platform = values.get("platformPool", {})
    if platform.get("enabled", True):
        yield ConfiguredPool("platformPool", platform.get("name", "platform"), "platform", "on-demand", platform)
    for key, role in (("spotPools", "batch"), ("gpuPools", "gpu")):
        for i, pool in enumerate(values.get(key, ())):
            yield ConfiguredPool(f"{key}[{i}]", pool["name"], role, pool.get("capacity", WORKER_DEFAULT_CAPACITY), pool)


def planned(values: dict[str, Any]) -> PlatformPlan:
    return plan_platform(parse_spec(values, SOURCE))


def by_name(plan: PlatformPlan) -> dict[str, PoolPlan]:
    return {pool.name: pool for pool in plan.pools}


def expected_gpu(cloud: str, fields: dict[str, Any]) -> tuple[str, int]:
    """The GPU the catalogs say a GPU pool's nodes carry."""
    if "gpu" in fields:
        return fields["gpu"]["type"], fields["gpu"]["count"]
    if cloud == "aks":
        known = aks_catalog.gpu_vm_size(fields["machine"])
        assert known is not None, f"generator bug: {fields['machine']} is not in the catalog"
        return known
    fixed = gke_catalog.accelerator_for_machine(fields["machine"])
    assert fixed is not None, f"generator bug: {fields['machine']} needs an explicit gpu"
    return fixed


TOLERATE_EVERYTHING = (Toleration(operator="Exists"),)

# --- Properties -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", sorted(GENERATORS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_generated_stacks_are_accepted_by_validation(cloud: str, data: st.DataObject) -> None:
    """Guards the strategies: if this fails, either validation regressed or the generator drifted.
    More examples than the properties, per cloud, since every property relies on it."""
    values = data.draw(GENERATORS[cloud]())
    try:
        spec = parse_spec(values, SOURCE)
    except SpecError as err:
        pytest.fail(f"a stack valid by construction was refused:\n{err}")
    plan = plan_platform(spec)
    assert [p.name for p in plan.pools] == [g.name for g in configured_pools(values)]
    assert [p.role for p in plan.pools] == [g.role for g in configured_pools(values)]


@PROPERTY
@given(STACKS)
def test_spot_and_preemptible_pools_carry_their_clouds_interruptible_taint_and_only_they_do(
    values: dict[str, Any],
) -> None:
    plan = planned(values)
    pools = by_name(plan)
    wanted = list(configured_pools(values))
    assert wanted, "a stack configures its system pool at least"
    for want in wanted:
        pool = pools[want.name]
        assert pool.capacity == want.capacity, f"{want.path}: capacity changed on the way to the plan"
        assert pool.contract.capacity == want.capacity
        assert pool.contract.labels[contract.CAPACITY_LABEL] == want.capacity
        interruptible = {t for t in pool.contract.taints if t in contract.interruptible_taints()}
        if want.capacity == "on-demand":
            assert not pool.interruptible
            assert interruptible == set(), f"{want.path}: on-demand pool tainted as interruptible"
            continue
        taint = INTERRUPTIBLE_TAINT[plan.cloud, want.capacity]
        assert taint.effect == "NoSchedule"
        assert pool.interruptible
        assert interruptible == {taint}, f"{want.path}: {want.capacity} pool on {plan.cloud} has {interruptible}"
        assert taint in pool.taints
        label_key, label_value = INTERRUPTIBLE_LABEL[plan.cloud, want.capacity]
        assert pool.contract.labels.get(label_key) == label_value


@PROPERTY
@given(STACKS)
def test_every_gpu_pool_carries_the_gpu_taint_and_names_its_gpu(values: dict[str, Any]) -> None:
    plan = planned(values)
    pools = by_name(plan)
    wanted = list(configured_pools(values))
    assert wanted, "a stack configures its system pool at least"
    for want in wanted:
        pool = pools[want.name]
        if want.role != "gpu":
            assert pool.gpu_type is None and pool.gpu_count == 0
            assert contract.GPU_TAINT not in pool.contract.taints
            assert pool.contract.labels[contract.ACCELERATOR_LABEL] == contract.NO_ACCELERATOR
            continue
        gpu_type, count = expected_gpu(plan.cloud, want.fields)
        assert (pool.gpu_type, pool.gpu_count) == (gpu_type, count)
        assert (pool.contract.accelerator, pool.contract.gpu_count) == (gpu_type, count)
        assert contract.GPU_TAINT in pool.taints
        assert contract.GPU_TAINT in pool.contract.taints
        assert contract.GPU_TAINT.effect == "NoSchedule"
        assert pool.contract.labels[contract.ACCELERATOR_LABEL] == gpu_type != contract.NO_ACCELERATOR


@PROPERTY
@given(STACKS)
def test_system_and_platform_pools_are_never_interruptible(values: dict[str, Any]) -> None:
    plan = planned(values)
    control = [p for p in plan.pools if p.role in ("system", "platform")]
    assert control[0] is plan.system_pool and plan.system_pool.role == "system"
    for pool in control:
        assert pool.capacity == "on-demand" and not pool.interruptible
        assert pool.contract.labels[contract.CAPACITY_LABEL] == "on-demand"
        assert not set(pool.contract.taints) & set(contract.interruptible_taints())
        assert contract.GPU_TAINT not in pool.contract.taints
        assert pool.gpu_type is None


@PROPERTY
@given(STACKS)
def test_pool_sizes_are_kept_min_never_above_max_and_the_system_pool_never_empty(values: dict[str, Any]) -> None:
    plan = planned(values)
    pools = by_name(plan)
    assert plan.pools, "a plan has its system pool at least"
    for pool in plan.pools:
        assert 0 <= pool.min <= pool.max <= MAX_NODES, f"{pool.name}: min {pool.min}, max {pool.max}"
    assert plan.system_pool.min >= 1
    wanted = list(configured_pools(values))
    assert wanted, "a stack configures its system pool at least"
    for want in wanted:
        pool = pools[want.name]
        if "max" in want.fields:
            assert pool.max == want.fields["max"]
        if "min" in want.fields:
            assert pool.min == want.fields["min"]
        elif want.role in ("batch", "gpu"):
            assert pool.min == WORKER_DEFAULT_MIN, f"{want.path}: a spot or GPU pool should scale from zero"


@PROPERTY
@given(STACKS)
def test_each_pool_can_be_targeted_alone_by_its_pool_label(values: dict[str, Any]) -> None:
    plan = planned(values)
    contracts = plan.contracts()
    pool_labels = [c.labels[contract.POOL_LABEL] for c in contracts]
    assert pool_labels == [c.name for c in contracts]
    assert len(set(pool_labels)) == len(pool_labels), f"two pools share a pool label: {pool_labels}"
    label_sets = [frozenset(labels.items()) for c in contracts for labels in c.node_label_sets()]
    assert len(set(label_sets)) == len(label_sets), "two pools' nodes would carry the same labels"
    for c in contracts:
        # Tolerate every taint, so only the labels decide.
        pinned = Placement(tolerations=TOLERATE_EVERYTHING, node_selector={contract.POOL_LABEL: c.name})
        assert landing_pools(pinned, contracts) == [c.name]
        role_and_pool = Placement(tolerations=TOLERATE_EVERYTHING, required=((
            contract.Requirement(contract.POOL_LABEL, "In", (c.name,)),
            contract.Requirement(contract.ROLE_LABEL, "In", (c.role,)),
        ),))
        assert landing_pools(role_and_pool, contracts) == [c.name]


@PROPERTY
@given(STACKS)
def test_users_taints_and_labels_are_kept_and_no_taint_is_declared_twice(values: dict[str, Any]) -> None:
    plan = planned(values)
    pools = by_name(plan)
    wanted = list(configured_pools(values))
    assert wanted, "a stack configures its system pool at least"
    for want in wanted:
        pool = pools[want.name]
        assert len(set(pool.taints)) == len(pool.taints), f"{want.path}: duplicate taints {pool.taints}"
        assert pool.contract.taints == pool.taints
        for text in want.fields.get("taints", ()):  # loop may be empty: a drawn pool need not set taints
            assert Taint.parse(text) in pool.taints, f"{want.path}: taint {text} lost"
        for key, value in want.fields.get("labels", {}).items():  # loop may be empty: nor labels
            assert pool.labels.get(key) == value, f"{want.path}: label {key} lost"
            assert pool.contract.labels.get(key) == value
        assert pool.labels[contract.ROLE_LABEL] == want.role
        assert pool.labels[contract.POOL_LABEL] == want.name


@PROPERTY
@given(gke_stacks(min_gpu_pools=1))
def test_gke_gpu_pools_run_only_in_zones_that_offer_their_gpu(values: dict[str, Any]) -> None:
    plan = planned(values)
    pools = by_name(plan)
    region = values["region"]
    gpu = [want for want in configured_pools(values) if want.role == "gpu"]
    assert gpu, "the strategy draws one GPU pool at least"
    for want in gpu:
        pool = pools[want.name]
        assert pool.zones, f"{want.path}: no zones, so GKE would spread it over zones without {pool.gpu_type}"
        offering = gke_catalog.zones_offering(region, pool.gpu_type or "") or ()
        assert all(zone in offering for zone in pool.zones), f"{want.path}: {pool.zones}"
        if "zones" in want.fields:
            assert pool.zones == tuple(want.fields["zones"])
        else:
            assert pool.zones == gke_catalog.zones_offering(values["region"], pool.gpu_type)
        assert pool.contract.zones == pool.zones


@PROPERTY
@given(STACKS)
def test_a_pod_without_tolerations_never_lands_on_spot_or_gpu_nodes(values: dict[str, Any]) -> None:
    plan = planned(values)
    plain = landing_pools(Placement(), plan.contracts())
    safe = {p.name for p in plan.pools if p.capacity == "on-demand" and p.gpu_type is None}
    assert set(plain) <= safe, f"an ordinary pod may land on {set(plain) - safe}"
    if any(p.role == "platform" for p in plan.pools):
        assert plan.pools[1].name in plain, "the untainted platform pool should take ordinary pods"


@PROPERTY
@given(STACKS)
def test_kubeflow_lands_exactly_on_the_platform_pool(values: dict[str, Any]) -> None:
    plan = planned(values)
    platform = [p.name for p in plan.pools if p.role == "platform"]
    assert landing_pools(contract.on_platform_pool(), plan.contracts()) == platform
    control = Placement(tolerations=TOLERATE_EVERYTHING, required=contract.on_demand_only().required)
    on_demand_cpu = {p.name for p in plan.pools if p.capacity == "on-demand" and p.gpu_type is None
                     and p.role != "system"}
    assert set(landing_pools(control, plan.contracts())) == on_demand_cpu


@PROPERTY
@given(STACKS_WITH_GPUS)
def test_a_spot_gpu_step_lands_exactly_on_interruptible_pools_of_its_gpu(values: dict[str, Any]) -> None:
    plan = planned(values)
    own_taints = tuple({Toleration.for_taint(Taint.parse(t)) for g in configured_pools(values)
                        for t in g.fields.get("taints", ())})
    assert plan.gpu_pools, "the strategy draws one GPU pool at least"
    for gpu_type in {p.gpu_type for p in plan.gpu_pools}:
        step = contract.spot_gpu(gpu_type)
        step = replace(step, tolerations=(*step.tolerations, *own_taints))  # the stack's own taints aside
        expected = {p.name for p in plan.pools if p.gpu_type == gpu_type and p.interruptible}
        assert set(landing_pools(step, plan.contracts())) == expected
        fallback = contract.spot_gpu(gpu_type, fallback_to_on_demand=True)
        fallback = replace(fallback, tolerations=(*fallback.tolerations, *own_taints))
        landed = landing_pools(fallback, plan.contracts())
        assert set(landed) == {p.name for p in plan.gpu_pools if p.gpu_type == gpu_type}
        if expected:
            assert landed[0] in expected, "with a fallback, spot pools must still be preferred"


# --- Invalid stacks are refused, naming the key ---------------------------------------------------


def _min_above_max(draw: st.DrawFn, values: dict[str, Any]) -> str:
    targets = list(configured_pools(values))
    want = draw(st.sampled_from(targets))
    pool = values.setdefault(want.path, {}) if "[" not in want.path else want.fields
    high = draw(st.integers(1, MAX_NODES - 1))
    pool["max"], pool["min"] = high, draw(st.integers(high + 1, MAX_NODES))
    return f"{want.path}.min"


def _duplicate_name(draw: st.DrawFn, values: dict[str, Any]) -> str:
    workers = [g for g in configured_pools(values) if g.role in ("batch", "gpu")]
    if not workers:
        return _min_above_max(draw, values)
    want = draw(st.sampled_from(workers))
    want.fields["name"] = next(configured_pools(values)).name  # the system pool's
    return f"{want.path}.name"


def _interruptible_system_pool(draw: st.DrawFn, values: dict[str, Any]) -> str:
    values.setdefault("systemPool", {})["capacity"] = draw(st.sampled_from(["spot", "preemptible"]))
    return "systemPool.capacity"


def _reserved_label(draw: st.DrawFn, values: dict[str, Any]) -> str:
    want = draw(st.sampled_from(list(configured_pools(values))))
    pool = values.setdefault(want.path, {}) if "[" not in want.path else want.fields
    pool["labels"] = {**pool.get("labels", {}), contract.POOL_LABEL: draw(SHORT_VALUE)}
    return f"{want.path}.labels.{contract.POOL_LABEL}"


MUTATIONS = [_min_above_max, _duplicate_name, _interruptible_system_pool, _reserved_label]


@PROPERTY
@given(STACKS, st.sampled_from(MUTATIONS), st.data())
def test_an_invalid_change_to_a_valid_stack_is_refused_naming_its_key(
    values: dict[str, Any], mutate: Any, data: st.DataObject
) -> None:
    broken = copy.deepcopy(values)
    path = f"spotkube:{mutate(data.draw, broken)}"
    with pytest.raises(SpecError) as raised:
        parse_spec(broken, SOURCE)
    assert raised.value.source == SOURCE
    assert path in [p.path for p in raised.value.problems], str(raised.value)
    assert f"{SOURCE}: {path}: " in str(raised.value)


def _kubeflow_placements() -> list[tuple[str, Placement]]:
    """KFP 2.17.0's Deployments as spotkube applies them (the transform the real install runs)."""
    from spotkube.platform.addons import kfp_reference, kfp_transforms
    from spotkube.platform.spec import KubeflowSettings

    placements = []
    for shipped in kfp_reference.shipped_deployments():
        applied = kfp_transforms.transform(shipped, KubeflowSettings(), kfp_transforms.NO_CREDENTIALS) or shipped
        placements.append((f"kubeflow {shipped['metadata']['name']}",
                           Placement.from_pod_spec(applied["spec"]["template"]["spec"])))
    return placements


def _device_plugin_placement() -> Placement:
    from spotkube.platform.addons.device_plugin import device_plugin_daemonset
    from spotkube.platform.spec import DevicePluginSettings

    return Placement.from_pod_spec(device_plugin_daemonset(DevicePluginSettings())["spec"]["template"]["spec"])


@PROPERTY
@given(STACKS)
def test_no_pipeline_step_kubeflow_or_device_plugin_lands_on_the_system_pool(values: dict[str, Any]) -> None:
    """For any valid stack, whatever the system pool's taint says (a stack may switch it off): every
    placement a pipeline step can get from spotkube, the Argo default a step without one gets, KFP's
    own Deployments and the device plugin stay off the system pool, by the contract's matcher."""
    from spotkube.review.pipeline_check import with_cluster_defaults

    plan = planned(values)
    pools = plan.contracts()
    system = plan.system_pool.name
    gpu_types = sorted({p.gpu_type for p in plan.gpu_pools if p.gpu_type})
    steps: list[tuple[str, Placement]] = [
        ("spot_cpu()", contract.spot_cpu()),
        ("spot_cpu(fallback_to_on_demand=False)", contract.spot_cpu(fallback_to_on_demand=False)),
        ("on_demand_only()", contract.on_demand_only()),
        ("a step placed nowhere, with Argo's default", with_cluster_defaults(Placement(),
                                                                            contract.pipeline_pod_default())),
        ("a GPU-free step that tolerates everything, with Argo's default",
         with_cluster_defaults(Placement(tolerations=TOLERATE_EVERYTHING), contract.pipeline_pod_default())),
    ]
    for gpu_type in gpu_types:
        steps += [(f"spot_gpu({gpu_type})", contract.spot_gpu(gpu_type)),
                  (f"spot_gpu({gpu_type}, fallback)", contract.spot_gpu(gpu_type, fallback_to_on_demand=True))]
    steps += [(p.name, contract.spot_gpu(pool=p.name)) for p in plan.gpu_pools]
    workloads = [*steps, *_kubeflow_placements(), ("nvidia-device-plugin", _device_plugin_placement())]
    for name, placement in workloads:
        assert system not in landing_pools(placement, pools), f"{name} can land on the system pool {system}"
