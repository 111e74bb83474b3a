"""Rules that depend on the cloud: names, machines, GPUs, zones, and combinations of fields.

They run after pydantic has checked types and ranges, collect every problem with its config key
path, and fill in what follows from the facts (a pool's GPU type and count from its machine).
Pure module: no Pulumi.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

from pydantic import BaseModel

from spotkube.core.catalog import aks as aks_catalog
from spotkube.core.catalog import gke as gke_catalog
from spotkube.core.contract import LABEL_PREFIX
from spotkube.core.errors import Problem
from spotkube.core.spec import CONFIG_NAMESPACE, GpuPool, GpuSpec, PlatformSpec, SpotPool

#: Machines used for the system and platform pools when a stack does not name one.
DEFAULT_MACHINES = {"aks": "Standard_D4s_v3", "gke": "e2-standard-4"}
CHANNELS = {
    "aks": ("stable", "rapid", "patch", "node-image", "none"),
    "gke": ("RAPID", "REGULAR", "STABLE", "EXTENDED"),
}
DEFAULT_CHANNEL = {"aks": "stable", "gke": "REGULAR"}

RuleOutput = Iterator[Problem]


def key(path: str) -> str:
    return f"{CONFIG_NAMESPACE}:{path}"


def _pools(spec: PlatformSpec) -> Iterator[tuple[str, str, int, int]]:
    """(path, name, min, max) of every pool that will exist."""
    yield "systemPool", spec.system_pool.name, spec.system_pool.min, spec.system_pool.max
    if spec.platform_pool.enabled:
        yield "platformPool", spec.platform_pool.name, spec.platform_pool.min, spec.platform_pool.max
    for i, spot in enumerate(spec.spot_pools):
        yield f"spotPools[{i}]", spot.name, spot.min, spot.max
    for i, pool in enumerate(spec.gpu_pools):
        yield f"gpuPools[{i}]", pool.name, pool.min, pool.max


def worker_pools(spec: PlatformSpec) -> Iterator[tuple[str, SpotPool]]:
    """(path, pool) of the pools that scale from zero: spot CPU pools, then GPU pools."""
    yield from ((f"spotPools[{i}]", p) for i, p in enumerate(spec.spot_pools))
    yield from ((f"gpuPools[{i}]", p) for i, p in enumerate(spec.gpu_pools))


def common_rules(spec: PlatformSpec) -> RuleOutput:
    """Rules both clouds share."""
    seen: dict[str, str] = {}
    for path, name, low, high in _pools(spec):
        if name in seen:
            yield Problem(key(f"{path}.name"),
                          f"{name!r} is already the name of {seen[name]}; pool names must be unique")
        seen.setdefault(name, path)
        if low > high:
            yield Problem(key(f"{path}.min"), f"{low} is above max {high}; use 0 <= min <= max <= 1000")
    if spec.system_pool.min < 1:
        yield Problem(key("systemPool.min"), f"{spec.system_pool.min} is not allowed; the system pool needs min >= 1")
    for path, capacity in (("systemPool", spec.system_pool.capacity), ("platformPool", spec.platform_pool.capacity)):
        if capacity != "on-demand":
            yield Problem(key(f"{path}.capacity"), f"{capacity!r} is not allowed; the {path} must be 'on-demand' "
                          "(a spot pool can't be a System pool, and evictions would take the platform down)")
    labelled = [("systemPool", spec.system_pool.labels), ("platformPool", spec.platform_pool.labels)]
    labelled += [(path, p.labels) for path, p in worker_pools(spec)]
    for i, spot in enumerate(spec.spot_pools):
        if spot.capacity == "on-demand":
            yield Problem(key(f"spotPools[{i}].capacity"), "'on-demand' is not a spot pool; use 'spot' or "
                          "'preemptible', or the platformPool for on-demand CPU nodes")
    for path, labels in labelled:
        for label in labels:
            if label.startswith(f"{LABEL_PREFIX}/"):
                yield Problem(key(f"{path}.labels.{label}"),
                              f"{label!r} is reserved for spotkube's scheduling contract; use another prefix")
    channel = spec.cluster.channel
    if channel is not None and channel not in CHANNELS[spec.cloud]:
        yield Problem(key("cluster.channel"), f"{channel!r} is not a {spec.cloud.upper()} channel; use one of "
                      f"{', '.join(CHANNELS[spec.cloud])}")
    pool_names = [name for _, name, _, _ in _pools(spec)]
    scenario = [(f"cost.hours.{pool}", pool) for pool in spec.cost.hours]
    scenario += [(f"cost.workloads[{i}].pool", w.pool) for i, w in enumerate(spec.cost.workloads)]
    for path, pool in scenario:
        if pool not in pool_names:
            yield Problem(key(path), f"{pool!r} is not a pool of this stack; use one of {', '.join(pool_names)}")
    for pool, hours in spec.cost.hours.items():
        if hours < 0:
            yield Problem(key(f"cost.hours.{pool}"), f"{hours:g} is not allowed; use 0 or more node-hours per month")
    cidrs = [(f"cluster.authorizedIpRanges[{i}]", c) for i, c in enumerate(spec.cluster.authorized_ip_ranges)]
    cidrs += [(f"cluster.deployer.egressRanges[{i}]", c) for i, c in enumerate(spec.cluster.deployer.egress_ranges)]
    for path, cidr in cidrs:
        try:
            ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            yield Problem(key(path), f"{cidr!r} is not a CIDR; use e.g. 203.0.113.0/24")
    if spec.kubeflow.enabled and not spec.platform_pool.enabled:
        yield Problem(key("platformPool.enabled"), "false leaves Kubeflow Pipelines no pool: it runs only on the "
                      "platform pool; enable the platform pool or set kubeflow.enabled: false")


def aks_rules(spec: PlatformSpec) -> RuleOutput:
    """AKS's own rules (learn.microsoft.com/azure/aks: node pools, spot node pools, GPU clusters)."""
    pattern = re.compile(aks_catalog.POOL_NAME_PATTERN)
    for path, name, _, _ in _pools(spec):
        if not pattern.match(name):
            yield Problem(key(f"{path}.name"), f"{name!r} is not a valid AKS pool name; use 1-12 lower-case "
                          "letters and digits, starting with a letter")
    machines = [("systemPool", spec.system_pool.machine), ("platformPool", spec.platform_pool.machine)]
    machines += [(path, p.machine) for path, p in worker_pools(spec)]
    for path, machine in machines:
        if machine in aks_catalog.RETIRED_VM_SIZES:
            yield Problem(key(f"{path}.machine"), f"{machine!r} is retired; use "
                          f"{aks_catalog.RETIRED_VM_SIZES[machine]}")
        elif machine is not None and not re.match(aks_catalog.VM_SIZE_PATTERN, machine):
            yield Problem(key(f"{path}.machine"), f"{machine!r} is not an Azure VM size; use e.g. Standard_D4s_v3")
    for path, pool in worker_pools(spec):
        if pool.capacity == "preemptible":
            yield Problem(key(f"{path}.capacity"), "'preemptible' is a GKE capacity; on AKS use 'spot' or 'on-demand'")
        if pool.capacity != "spot" and pool.max_price != -1:
            yield Problem(key(f"{path}.maxPrice"), f"{pool.max_price} applies to spot pools only; remove it or "
                          "set capacity: spot")
        for z, zone in enumerate(pool.zones):
            if zone not in ("1", "2", "3"):
                yield Problem(key(f"{path}.zones[{z}]"), f"{zone!r} is not an Azure zone; use '1', '2' or '3'")
    if spec.platform_pool.enabled and len(spec.platform_pool.name) > AKS_VERSIONED_NAME_MAX:
        yield Problem(key("platformPool.name"), f"{spec.platform_pool.name!r} is too long; use at most "
                      f"{AKS_VERSIONED_NAME_MAX} characters (AKS allows 12, and spotkube adds 4 that change when the "
                      "pool must be replaced, so the new pool can start before the old one goes)")
    for i, group in enumerate(spec.cluster.admin_group_object_ids):
        if not re.fullmatch(GUID_PATTERN, group) or group == NIL_GUID:
            yield Problem(key(f"cluster.adminGroupObjectIds[{i}]"), f"{group!r} is not an Entra ID group object id; "
                          "use the group's object id (a GUID such as 3f2b1c4d-...; az ad group show --query id)")
    if spec.system_pool.critical_addons_only and not spec.platform_pool.enabled:
        yield Problem(key("platformPool.enabled"), "false leaves Kubeflow and other platform workloads no "
                      "untainted on-demand pool; enable it or set systemPool.criticalAddonsOnly: false")
    for name in GKE_ONLY_CLUSTER_SETTINGS:
        if getattr(spec.cluster, name) is not None:
            yield Problem(key(f"cluster.{_alias(spec.cluster, name)}"), "is a GKE setting; remove it from an AKS stack")


def aks_gpu(pool: GpuPool) -> tuple[GpuSpec | None, str | None]:
    """The GPU an AKS VM size carries, or the reason the pool's GPU settings are wrong."""
    known = aks_catalog.GPU_VM_SIZES.get(pool.machine)
    if known is None:
        if pool.machine in aks_catalog.RETIRED_VM_SIZES:
            return None, None  # already reported as retired
        return None, (f"{pool.machine!r} is not a GPU VM size spotkube knows; use one of "
                      f"{', '.join(aks_catalog.GPU_VM_SIZES)}")
    gpu = GpuSpec(type=known[0], count=known[1])
    if pool.gpu is not None and pool.gpu != gpu:
        return None, (f"{pool.gpu.count} × {pool.gpu.type} does not match {pool.machine}, which carries "
                      f"{gpu.count} × {gpu.type}; remove gpu or correct it")
    return gpu, None


# --- GKE -----------------------------------------------------------------------------------------

#: Cluster settings only AKS understands, with what a GKE stack uses instead. They are refused on
#: GKE rather than ignored, so nobody believes a setting protects a cluster it never reaches.
AKS_ONLY_CLUSTER_SETTINGS = {
    "resource_group_name": "a GKE cluster lives in cluster.project",
    "local_accounts_disabled": "GKE issues no client certificates; access goes through IAM",
    "admin_group_object_ids": "grant roles/container.admin through IAM instead",
}
#: AKS autoscaler profile fields; GKE's managed autoscaler takes only `profile`.
AKS_ONLY_AUTOSCALER_SETTINGS = (
    "expander", "scan_interval", "scale_down_unneeded_time", "scale_down_delay_after_add",
    "max_graceful_termination_sec", "skip_nodes_with_local_storage",
)
#: GPU pool fields only AKS spot pools have, with why GKE has no use for them.
AKS_ONLY_POOL_SETTINGS = {
    "eviction_policy": "GKE always deletes preempted spot and preemptible VMs",
    "max_price": "GKE spot prices are set by Google and have no per-pool cap",
}
#: Cluster settings only GKE understands; an AKS stack that sets them is refused.
GKE_ONLY_CLUSTER_SETTINGS = ("project", "network", "subnetwork", "egress", "dns_endpoint")
#: Deployer settings only AKS understands: GKE always signs in with Application Default Credentials.
AKS_ONLY_DEPLOYER_SETTINGS = ("login", "grant_propagation_wait")
#: Longest pool names whose cloud name spotkube versions (see aks.cloud_pool_name, gke.cloud_pool_name).
AKS_VERSIONED_NAME_MAX = 8
GKE_VERSIONED_NAME_MAX = 33
GUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
#: The all-zero GUID: a placeholder, never a real group.
NIL_GUID = "00000000-0000-0000-0000-000000000000"
#: Google Cloud project ids: 6-30 lower-case letters, digits and hyphens, starting with a letter.
GKE_PROJECT_PATTERN = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
#: Region names such as us-central1 or northamerica-northeast1 (not Azure's uksouth).
GKE_REGION_PATTERN = r"^[a-z]+-[a-z]+[0-9]+$"
#: Machine type names such as e2-standard-4 or n2d-highmem-8 (not Azure's Standard_D4s_v3).
GKE_MACHINE_PATTERN = r"^[a-z][a-z0-9]*-[a-z0-9-]*[a-z0-9]$"


def _alias(model: BaseModel, name: str) -> str:
    """A field's name as a stack file spells it (camelCase)."""
    return type(model).model_fields[name].alias or name


def _changed(model: BaseModel, name: str) -> bool:
    """Whether a field differs from its default. Compared by value, not by "was it given": component
    args arrive fully dumped from a resolved spec, so every field looks given there."""
    return getattr(model, name) != type(model).model_fields[name].get_default(call_default_factory=True)


def _gke_zones_in_region(region: str, path: str, zones: tuple[str, ...]) -> RuleOutput:
    """Zones of a pool without GPUs: they must belong to the region (checked against the zone table
    when it lists the region, by name otherwise)."""
    known = gke_catalog.GPU_ZONES.get(region)
    for z, zone in enumerate(zones):
        if known is not None:
            valid, accepted = zone in known, ", ".join(known)
        else:
            valid, accepted = bool(re.fullmatch(rf"{re.escape(region)}-[a-z]", zone)), f"{region}-a, {region}-b, ..."
        if not valid:
            yield Problem(key(f"{path}.zones[{z}]"), f"{zone!r} is not a zone of {region}; use {accepted}")


def gke_rules(spec: PlatformSpec) -> RuleOutput:
    """GKE's own rules (cloud.google.com/kubernetes-engine/docs), checked against the bundled
    `catalog.gke` facts."""
    settings = spec.cluster
    if not settings.project:
        yield Problem(key("cluster.project"), "is required on GKE; set the Google Cloud project id, "
                      "e.g. my-ml-platform")
    elif not re.match(GKE_PROJECT_PATTERN, settings.project):
        yield Problem(key("cluster.project"), f"{settings.project!r} is not a Google Cloud project id; use 6-30 "
                      "lower-case letters, digits and hyphens, starting with a letter")
    for name, instead in AKS_ONLY_CLUSTER_SETTINGS.items():
        if _changed(settings, name):
            yield Problem(key(f"cluster.{_alias(settings, name)}"), f"{getattr(settings, name)!r} is an AKS "
                          f"setting; remove it from a GKE stack ({instead})")
    for name in AKS_ONLY_AUTOSCALER_SETTINGS:
        if _changed(settings.autoscaler, name):
            yield Problem(key(f"cluster.autoscaler.{_alias(settings.autoscaler, name)}"),
                          f"{getattr(settings.autoscaler, name)!r} is an AKS setting; remove it from a GKE stack "
                          "(GKE's autoscaler takes only cluster.autoscaler.profile: BALANCED or OPTIMIZE_UTILIZATION)")
    for name in AKS_ONLY_DEPLOYER_SETTINGS:
        if _changed(settings.deployer, name):
            yield Problem(key(f"cluster.deployer.{_alias(settings.deployer, name)}"),
                          f"{getattr(settings.deployer, name)!r} is an AKS setting; remove it from a GKE stack (GKE's "
                          "auth plugin always uses Application Default Credentials)")
    control_plane = [("systemPool", spec.system_pool)]
    control_plane += [("platformPool", spec.platform_pool)] if spec.platform_pool.enabled else []
    for path, pool in control_plane:
        if len(pool.name) > GKE_VERSIONED_NAME_MAX:
            yield Problem(key(f"{path}.name"), f"{pool.name!r} is too long; use at most {GKE_VERSIONED_NAME_MAX} "
                          "characters (GKE allows 40, and spotkube adds 7 that change when the pool must be "
                          "replaced, so the new pool can start before the old one goes)")
    if settings.network_policy == "azure":
        yield Problem(key("cluster.networkPolicy"), "'azure' is an AKS network policy; on GKE use cilium "
                      "(Dataplane V2, the default) or calico")
    region_valid = bool(re.match(GKE_REGION_PATTERN, spec.region))
    if not region_valid:
        yield Problem(key("region"), f"{spec.region!r} is not a Google Cloud region; use e.g. us-central1 or "
                      "europe-west4")
    pattern = re.compile(gke_catalog.NODE_POOL_NAME_PATTERN)
    for path, name, _, _ in _pools(spec):
        if not pattern.match(name):
            yield Problem(key(f"{path}.name"), f"{name!r} is not a valid GKE node pool name; use 1-40 lower-case "
                          "letters, digits and hyphens, starting with a letter and not ending with a hyphen")
    cpu_pools = [("systemPool", spec.system_pool), ("platformPool", spec.platform_pool)]
    cpu_pools += [(f"spotPools[{i}]", p) for i, p in enumerate(spec.spot_pools)]
    for path, cpu_pool in cpu_pools:
        if cpu_pool.machine is not None and not re.match(GKE_MACHINE_PATTERN, cpu_pool.machine):
            yield Problem(key(f"{path}.machine"), f"{cpu_pool.machine!r} is not a GKE machine type; use e.g. "
                          f"{DEFAULT_MACHINES['gke']}")
        if region_valid:
            yield from _gke_zones_in_region(spec.region, path, cpu_pool.zones)
    for path, worker in worker_pools(spec):
        for name, why in AKS_ONLY_POOL_SETTINGS.items():
            if _changed(worker, name):
                yield Problem(key(f"{path}.{_alias(worker, name)}"), f"{getattr(worker, name)!r} is an AKS "
                              f"setting; remove it from a GKE stack ({why})")
    region_problem = None
    for i, pool in enumerate(spec.gpu_pools):
        path = f"gpuPools[{i}]"
        if gke_catalog.requires_spot_or_flex(pool.machine) and pool.capacity != "spot":
            yield Problem(key(f"{path}.capacity"), f"{pool.capacity!r} is not available for {pool.machine}, which "
                          "Compute Engine creates only as Spot or Flex-start VMs; use capacity: spot, or "
                          "a3-highgpu-8g for a pool that is not spot")
        gpu, error = gke_gpu(pool)
        if gpu is None or error or not region_valid:
            continue  # the resolver reports a GPU problem; zones can't be judged without the GPU
        if gke_catalog.zones_offering(spec.region, gpu.type) is None:
            region_problem = gke_catalog.zone_check(spec.region, (), gpu.type)
            continue
        zone_problem = gke_catalog.zone_check(spec.region, pool.zones, gpu.type)
        if zone_problem:
            yield Problem(key(f"{path}.zones"), zone_problem)
    if region_problem:
        yield Problem(key("region"), region_problem)


def gke_gpu(pool: GpuPool) -> tuple[GpuSpec | None, str | None]:
    """The GPU a GKE pool carries, or the reason its machine and GPU settings are wrong.

    a2, a3 and g2 machine types fix their GPUs, so `gpu` is filled in from the machine (or refused
    if it disagrees); N1 takes a GPU chosen separately, so `gpu` must be given there.
    """
    if pool.gpu is not None:
        error = gke_catalog.pairing_error(pool.machine, pool.gpu.type, pool.gpu.count)
        return (None, error) if error else (pool.gpu, None)
    fixed = gke_catalog.accelerator_for_machine(pool.machine)
    if fixed is not None:
        return GpuSpec(type=fixed[0], count=fixed[1]), None
    if gke_catalog.is_n1(pool.machine):
        return None, (f"{pool.machine} has no built-in GPUs, so gpu must be given; use e.g. gpu: "
                      f"{{type: nvidia-tesla-t4, count: 1}} (N1 takes {', '.join(gke_catalog.N1_ACCELERATOR_COUNTS)})")
    family = gke_catalog.machine_family(pool.machine)
    same_family = [m for m in gke_catalog.FIXED_GPU_MACHINE_TYPES if gke_catalog.machine_family(m) == family]
    if same_family:
        return None, (f"{pool.machine!r} is not a {family} machine type spotkube knows; use one of "
                      f"{', '.join(same_family)}")
    return None, (f"{pool.machine!r} carries no GPU; use a machine type from {gke_catalog.GPU_FAMILIES_TEXT}, "
                  "e.g. g2-standard-8 (1 × nvidia-l4), or an N1 type with gpu: {type: nvidia-tesla-t4, count: 1}")


def gke_pool_defaults(spec: PlatformSpec, pool: GpuPool) -> GpuPool:
    """Zones left empty become every zone of the region that offers the pool's GPU.

    GKE would otherwise spread the pool over the cluster's zones, some without the GPU, and scale-ups
    there fail. Filling them in here, not in the component, makes the plan show the real zones.
    """
    if pool.zones or pool.gpu is None:
        return pool
    offering = gke_catalog.zones_offering(spec.region, pool.gpu.type)
    return pool.model_copy(update={"zones": offering}) if offering else pool


GpuResolver = Callable[[GpuPool], tuple[GpuSpec | None, str | None]]
RULES: dict[str, tuple[Callable[[PlatformSpec], RuleOutput], GpuResolver]] = {
    "aks": (aks_rules, aks_gpu),
    "gke": (gke_rules, gke_gpu),
}
#: Per-cloud defaults that depend on a GPU pool's resolved GPU (applied after the resolver).
POOL_DEFAULTS: dict[str, Callable[[PlatformSpec, GpuPool], GpuPool]] = {
    "gke": gke_pool_defaults,
}


def resolve(spec: PlatformSpec) -> tuple[PlatformSpec, list[Problem]]:
    """Check `spec` against its cloud's rules and fill in defaults that follow from the facts."""
    rules, gpu_of = RULES[spec.cloud]
    problems = [*common_rules(spec), *rules(spec)]
    pools = []
    for i, pool in enumerate(spec.gpu_pools):
        gpu, error = gpu_of(pool)
        if error:
            problems.append(Problem(key(f"gpuPools[{i}].gpu" if pool.gpu else f"gpuPools[{i}].machine"), error))
        resolved_pool = pool.model_copy(update={"gpu": gpu or pool.gpu})
        fill = POOL_DEFAULTS.get(spec.cloud)
        pools.append(fill(spec, resolved_pool) if fill else resolved_pool)
    machine = DEFAULT_MACHINES[spec.cloud]
    resolved = spec.model_copy(update={
        "gpu_pools": tuple(pools),
        "system_pool": spec.system_pool.model_copy(update={"machine": spec.system_pool.machine or machine}),
        "platform_pool": spec.platform_pool.model_copy(update={"machine": spec.platform_pool.machine or machine}),
        "cluster": spec.cluster.model_copy(update={"channel": spec.cluster.channel or DEFAULT_CHANNEL[spec.cloud]}),
    })
    return resolved, problems
