"""Pure decisions about a platform: each pool's taints, labels, limits and scaling priority.

The cloud components only translate a PlatformPlan into resources, so everything a reviewer must
trust is decided here, in plain data, including the fallback's completeness (`missing_fallbacks`).
Why control-plane pools get versioned names: docs/architecture.md#replacing-pools-safely.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from spotkube.platform import contract
from spotkube.platform.cloud import Cloud
from spotkube.platform.contract import Capacity, PoolContract, Role, Taint
from spotkube.platform.records import record
from spotkube.platform.spec import GpuPool, PlatformSpec, Pool, PoolUpgrade, SpotPool
from spotkube.platform.warnings import PlanWarning

#: Cluster-autoscaler priority expander tiers: the highest number wins among pools that fit.
SPOT_PRIORITY = 30
ON_DEMAND_GPU_PRIORITY = 20
DEFAULT_PRIORITY = 10


@record
class PoolPlan:
    """One node pool, fully decided: its contract (name, role, capacity, GPUs, taints and sharing, as the
    workloads see them) and how it is built. `labels` are what its inputs declare; `cloud_name` is the name
    the cloud knows it by (see `versioned_name`)."""

    contract: PoolContract
    machine: str
    min: int
    max: int
    zones: tuple[str, ...]
    labels: dict[str, str]
    eviction_policy: str | None
    max_price: float | None
    gpu_driver: str | None
    cloud_name: str = ""
    #: How the cloud replaces the nodes when it upgrades them, as the stack set it (spot and GPU pools).
    upgrade: PoolUpgrade | None = None
    #: Nodes come only through the cloud's provisioning requests (GKE's queued provisioning), never from
    #: the autoscaler's own scale-up: such a pool stays out of its GPU type's compute class.
    queued: bool = False
    #: How long one node may run before the cloud deletes it (a flex-start VM's run); None: no limit.
    max_run_hours: int | None = None

    # What the contract holds, read from it (not copied), as the builders and the rules ask for it.
    @property
    def name(self) -> str:
        return self.contract.name

    @property
    def role(self) -> Role:
        return self.contract.role

    @property
    def capacity(self) -> Capacity:
        return self.contract.capacity

    @property
    def gpu_type(self) -> str | None:
        return self.contract.accelerator

    @property
    def gpu_count(self) -> int:
        return self.contract.gpu_count

    @property
    def taints(self) -> tuple[Taint, ...]:
        return self.contract.taints

    @property
    def sharing(self) -> contract.GpuSharing | None:
        """How the pool's GPUs are shared among pods, None for whole GPUs (docs/gpu-sharing.md)."""
        return self.contract.sharing

    @property
    def interruptible(self) -> bool:
        return self.capacity in contract.INTERRUPTIBLE

    @property
    def max_run_seconds(self) -> int | None:
        return None if self.max_run_hours is None else self.max_run_hours * 3600

    @property
    def hosts_control_plane(self) -> bool:
        """System and platform pools run what every pipeline needs (CoreDNS, Kubeflow, MySQL): they
        must never be deleted before their replacement exists. Spot and GPU pools may be."""
        return self.role in ("system", "platform")


@record
class PlatformPlan:
    """Everything the cloud components build, decided from a validated spec."""

    spec: PlatformSpec
    pools: tuple[PoolPlan, ...]

    @property
    def cloud(self) -> str:
        return self.spec.cloud

    @property
    def system_pool(self) -> PoolPlan:
        return self.pools[0]

    @property
    def node_pools(self) -> tuple[PoolPlan, ...]:
        """Every pool except the system pool: built as separate pool resources on both clouds."""
        return self.pools[1:]

    @property
    def gpu_pools(self) -> tuple[PoolPlan, ...]:
        return tuple(p for p in self.pools if p.role == "gpu")

    @property
    def scalable_pools(self) -> tuple[PoolPlan, ...]:
        """Pools that scale from zero for work: spot CPU batch pools and GPU pools."""
        return tuple(p for p in self.pools if p.role in ("batch", "gpu"))

    def contracts(self) -> list[PoolContract]:
        return [p.contract for p in self.pools]

    def with_cloud_names(self, cloud_names: Mapping[str, str]) -> PlatformPlan:
        """The plan with the given pools known to the cloud under other names. The cloud writes that
        name into its node-pool label, so the contract follows."""
        pools = []
        for pool in self.pools:
            cloud_name = cloud_names.get(pool.name, pool.cloud_name)
            if cloud_name == pool.cloud_name:
                pools.append(pool)
                continue
            labels = {**pool.contract.labels,
                      **contract.cloud_added_labels(self.cloud, cloud_name, pool.capacity, pool.gpu_type,
                                                    pool.sharing)}
            pools.append(replace(pool, cloud_name=cloud_name, contract=replace(pool.contract, labels=labels)))
        return replace(self, pools=tuple(pools))


def versioned_name(name: str, create_only: Mapping[str, Any], *, separator: str, digits: int) -> str:
    """A pool's cloud name that changes whenever a field the cloud can't update in place changes, so
    Pulumi creates the replacement before deleting the old pool (a fixed name would force the old one
    out first) and a pool hosting the control plane is never gone. The same fields give the same name."""
    digest = hashlib.sha256(json.dumps(create_only, sort_keys=True, default=str).encode()).hexdigest()
    return f"{name}{separator}{digest[:digits]}"


def _pool(
    cloud: str, region: str, name: str, role: Role, capacity: Capacity, machine: str, arch: str, *,
    gpu: tuple[str, int] | None, low: int, high: int, zones: tuple[str, ...],
    extra_labels: dict[str, str], extra_taints: tuple[Taint, ...] = (),
    critical_only: bool = False, eviction_policy: str | None = None,
    max_price: float | None = None, gpu_driver: str | None = None, sharing: contract.GpuSharing | None = None,
    queued: bool = False,
) -> PoolPlan:
    accelerator, count = gpu if gpu else (None, 0)
    labels = contract.declared_labels(cloud, name, role, capacity, accelerator, extra_labels, sharing,
                                      in_class=not queued)
    taints = contract.pool_taints(cloud, role, capacity, has_gpu=gpu is not None,
                                  system_critical_only=critical_only, extra=extra_taints, accelerator=accelerator,
                                  in_class=not queued)
    node_labels = {
        **contract.well_known_labels(machine, arch, region),
        **labels,
        **contract.cloud_added_labels(cloud, name, capacity, accelerator, sharing),
    }
    return PoolPlan(
        PoolContract(name, role, capacity, accelerator, count, node_labels, taints,
                     contract.zone_label_values(cloud, region, zones), sharing),
        machine=machine, min=low, max=high, zones=zones, labels=labels, eviction_policy=eviction_policy,
        max_price=max_price, gpu_driver=gpu_driver, cloud_name=name, queued=queued,
    )


def gpu_sharing(spec: PlatformSpec, pool: GpuPool, facts: Cloud) -> contract.GpuSharing | None:
    """What a resolved GPU pool's sharing makes of each GPU: MIG instances of its profile, or the
    clients of a time-shared or MPS GPU; and the resource they are advertised as. Only a device plugin
    spotkube deploys (AKS) takes the `mixed` MIG strategy; GKE's own advertises `nvidia.com/gpu`."""
    sharing = pool.sharing
    if sharing is None or pool.gpu is None:
        return None
    if sharing.mig is not None:
        mixed = facts.device_plugin_mode == "daemonset" and spec.device_plugin.mig_strategy == "mixed"
        return contract.GpuSharing(
            "mig", slices_per_gpu=facts.mig_profiles(pool.gpu.type).get(sharing.mig, 1), partition=sharing.mig,
            resource=contract.mig_resource(sharing.mig) if mixed else contract.GPU_RESOURCE)
    shared = sharing.time_shared()
    if shared is None:
        return None
    strategy, clients = shared
    return contract.GpuSharing(strategy, slices_per_gpu=clients)  # type: ignore[arg-type]


def plan_platform(spec: PlatformSpec, facts: Cloud) -> PlatformPlan:
    """Decide every pool of a resolved spec (see `parse_spec`), system pool first, with the facts of
    its cloud (`spotkube.clouds.CLOUDS[spec.cloud]`)."""
    control: list[tuple[Role, Pool]] = [("system", spec.system_pool)]
    control += [("platform", spec.platform_pool)] if spec.platform_pool.enabled else []
    pools = [_pool(
        spec.cloud, spec.region, pool.name, role, "on-demand", pool.machine or "",
        facts.machine_arch(pool.machine or ""), gpu=None,
        low=pool.min, high=pool.max, zones=pool.zones, extra_labels=pool.labels,
        critical_only=role == "system" and spec.system_pool.critical_addons_only_taint(),
    ) for role, pool in control]
    workers: list[tuple[Role, SpotPool]] = [("batch", p) for p in spec.spot_pools]
    workers += [("gpu", p) for p in spec.gpu_pools]
    for role, worker in workers:
        gpu_pool = worker if isinstance(worker, GpuPool) else None
        gpu_spec = gpu_pool.gpu if gpu_pool else None
        eviction_policy, max_price = worker.spot_price_controls()
        pools.append(replace(_pool(
            spec.cloud, spec.region, worker.name, role, worker.capacity, worker.machine,
            facts.machine_arch(worker.machine),
            gpu=(gpu_spec.type, gpu_spec.count) if gpu_spec else None,
            low=worker.min, high=worker.max, zones=worker.zones,
            extra_labels=worker.labels, extra_taints=worker.parsed_taints(),
            eviction_policy=eviction_policy, max_price=max_price,
            gpu_driver=gpu_pool.driver() if gpu_pool else None,
            sharing=gpu_sharing(spec, gpu_pool, facts) if gpu_pool else None,
            queued=gpu_pool.by_provisioning_request() if gpu_pool else False,
        ), upgrade=worker.upgrade, max_run_hours=gpu_pool.run_limit_hours() if gpu_pool else None))
    return PlatformPlan(spec=spec, pools=tuple(pools))


def autoscaler_priorities(plan: PlatformPlan, node_group_pattern: str) -> dict[int, list[str]]:
    """Priority expander tiers: spot pools first, then on-demand GPU fallbacks, then the rest;
    `node_group_pattern` turns a pool name into the regex over the cloud's node group names."""
    tiers: dict[int, list[str]] = {DEFAULT_PRIORITY: [".*"]}
    for pool in plan.scalable_pools:
        tier = SPOT_PRIORITY if pool.interruptible else ON_DEMAND_GPU_PRIORITY
        tiers.setdefault(tier, []).append(node_group_pattern.format(pool=pool.cloud_name))
    return dict(sorted(tiers.items(), reverse=True))


#: The order a GPU type's capacities are tried in: the cheapest that can be taken back first, then the
#: middle tier, then on-demand.
FALLBACK_ORDER: tuple[tuple[Capacity, ...], ...] = (contract.INTERRUPTIBLE, (contract.FLEX_START,), ("on-demand",))


def compute_class_priorities(plan: PlatformPlan) -> dict[str, list[list[str]]]:
    """Each GPU type's compute class and its priorities, as lists of pool cloud names, one per tier of
    `FALLBACK_ORDER`: the autoscaler grows a later priority only when it can't grow an earlier one. A GPU
    type without an on-demand pool still gets its class, so one pod spec selects a class on every stack.
    Queued pools are left out: their provisioning requests name the pool themselves."""
    classes: dict[str, list[list[str]]] = {}
    reachable = [p for p in plan.gpu_pools if not p.queued]
    for gpu_type in dict.fromkeys(p.gpu_type for p in reachable if p.gpu_type):
        pools = [p for p in reachable if p.gpu_type == gpu_type]
        tiers = [[p.cloud_name for p in pools if p.capacity in tier] for tier in FALLBACK_ORDER]
        classes[contract.compute_class(gpu_type)] = [tier for tier in tiers if tier]
    return classes


class FallbackPool(Protocol):
    """What the fallback's completeness reads of a pool: a planned pool (`PoolPlan`), or one a program
    registered (the plan's fallback, `review/fallback.py`). Read-only, as a plan's pool is."""

    @property
    def name(self) -> str: ...
    @property
    def capacity(self) -> str: ...
    @property
    def gpu_type(self) -> str | None: ...
    @property
    def queued(self) -> bool:
        """Nodes only through provisioning requests: never part of the autoscaler's fallback."""
        ...


FallbackPoolT = TypeVar("FallbackPoolT", bound=FallbackPool)


def fallback_pools(pools: Sequence[FallbackPoolT]) -> dict[str, list[FallbackPoolT]]:
    """Each GPU type's pools the autoscaler may grow, by GPU type: a queued pool's nodes come only through
    provisioning requests that name it, so it is no step of any fallback."""
    by_gpu: dict[str, list[FallbackPoolT]] = {}
    for pool in pools:
        if pool.gpu_type and not pool.queued:
            by_gpu.setdefault(pool.gpu_type, []).append(pool)
    return dict(sorted(by_gpu.items()))


def no_fallback_text(gpu_type: str, interruptible: Sequence[str]) -> str:
    """What a GPU type without an on-demand pool risks: its interruptible pools' steps wait out a stock-out."""
    return (f"no on-demand fallback for {gpu_type}: when {', '.join(interruptible)} is out of capacity, its steps "
            "wait until capacity returns")


def fallback_warning_id(gpu_type: str) -> str:
    """The id of a GPU type's no-fallback warning, which a stack acknowledges it by."""
    return f"fallback-no-on-demand:{gpu_type}"


def missing_fallbacks(pools: Sequence[FallbackPool]) -> list[PlanWarning]:
    """The no-fallback warnings from the pools alone: whether a GPU type has an on-demand pool needs no
    autoscaler settings, so the cluster components log them under `pulumi up` as the plan states them."""
    return [PlanWarning(fallback_warning_id(gpu), no_fallback_text(gpu, [p.name for p in members]))
            for gpu, members in fallback_pools(pools).items() if all(p.capacity != "on-demand" for p in members)]
