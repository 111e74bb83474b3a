"""Rules that depend on the cloud: names, machines, GPUs, zones, and combinations of fields.

They run after pydantic has checked types and ranges, collect every problem with its config key
path, and fill in what follows from the facts (a pool's GPU type and count from its machine).
Pure module: no Pulumi.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

from spotkube.catalog import aks as aks_catalog
from spotkube.contract import LABEL_PREFIX
from spotkube.errors import Problem
from spotkube.spec import CONFIG_NAMESPACE, GpuPool, GpuSpec, PlatformSpec

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
    for i, pool in enumerate(spec.gpu_pools):
        yield f"gpuPools[{i}]", pool.name, pool.min, pool.max


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
    labelled += [(f"gpuPools[{i}]", p.labels) for i, p in enumerate(spec.gpu_pools)]
    for path, labels in labelled:
        for label in labels:
            if label.startswith(f"{LABEL_PREFIX}/"):
                yield Problem(key(f"{path}.labels.{label}"),
                              f"{label!r} is reserved for spotkube's scheduling contract; use another prefix")
    channel = spec.cluster.channel
    if channel is not None and channel not in CHANNELS[spec.cloud]:
        yield Problem(key("cluster.channel"), f"{channel!r} is not a {spec.cloud.upper()} channel; use one of "
                      f"{', '.join(CHANNELS[spec.cloud])}")
    for i, cidr in enumerate(spec.cluster.authorized_ip_ranges):
        try:
            ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            yield Problem(key(f"cluster.authorizedIpRanges[{i}]"), f"{cidr!r} is not a CIDR; use e.g. 203.0.113.0/24")


def aks_rules(spec: PlatformSpec) -> RuleOutput:
    """AKS's own rules (FACTS.md, AKS section)."""
    pattern = re.compile(aks_catalog.POOL_NAME_PATTERN)
    for path, name, _, _ in _pools(spec):
        if not pattern.match(name):
            yield Problem(key(f"{path}.name"), f"{name!r} is not a valid AKS pool name; use 1-12 lower-case "
                          "letters and digits, starting with a letter")
    machines = [("systemPool", spec.system_pool.machine), ("platformPool", spec.platform_pool.machine)]
    machines += [(f"gpuPools[{i}]", p.machine) for i, p in enumerate(spec.gpu_pools)]
    for path, machine in machines:
        if machine in aks_catalog.RETIRED_VM_SIZES:
            yield Problem(key(f"{path}.machine"), f"{machine!r} is retired; use "
                          f"{aks_catalog.RETIRED_VM_SIZES[machine]}")
        elif machine is not None and not re.match(aks_catalog.VM_SIZE_PATTERN, machine):
            yield Problem(key(f"{path}.machine"), f"{machine!r} is not an Azure VM size; use e.g. Standard_D4s_v3")
    for i, pool in enumerate(spec.gpu_pools):
        path = f"gpuPools[{i}]"
        if pool.capacity == "preemptible":
            yield Problem(key(f"{path}.capacity"), "'preemptible' is a GKE capacity; on AKS use 'spot' or 'on-demand'")
        if pool.capacity != "spot" and pool.max_price != -1:
            yield Problem(key(f"{path}.maxPrice"), f"{pool.max_price} applies to spot pools only; remove it or "
                          "set capacity: spot")
        for z, zone in enumerate(pool.zones):
            if zone not in ("1", "2", "3"):
                yield Problem(key(f"{path}.zones[{z}]"), f"{zone!r} is not an Azure zone; use '1', '2' or '3'")
    if spec.system_pool.critical_addons_only and not spec.platform_pool.enabled:
        yield Problem(key("platformPool.enabled"), "false leaves Kubeflow and other platform workloads no "
                      "untainted on-demand pool; enable it or set systemPool.criticalAddonsOnly: false")
    if spec.cluster.project is not None:
        yield Problem(key("cluster.project"), "is a GKE setting; remove it from an AKS stack")


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


GpuResolver = Callable[[GpuPool], tuple[GpuSpec | None, str | None]]
RULES: dict[str, tuple[Callable[[PlatformSpec], RuleOutput], GpuResolver]] = {
    "aks": (aks_rules, aks_gpu),
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
        pools.append(pool.model_copy(update={"gpu": gpu or pool.gpu}))
    machine = DEFAULT_MACHINES[spec.cloud]
    resolved = spec.model_copy(update={
        "gpu_pools": tuple(pools),
        "system_pool": spec.system_pool.model_copy(update={"machine": spec.system_pool.machine or machine}),
        "platform_pool": spec.platform_pool.model_copy(update={"machine": spec.platform_pool.machine or machine}),
        "cluster": spec.cluster.model_copy(update={"channel": spec.cluster.channel or DEFAULT_CHANNEL[spec.cloud]}),
    })
    return resolved, problems
