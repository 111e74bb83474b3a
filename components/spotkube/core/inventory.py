"""Read the node pools back out of what the program registered, one reader per cloud.

The plan's pool table is built from the registered inputs, not from the spec, so it shows what
would really be sent to the cloud. The readers only know type tokens and input names, so this
module imports no cloud SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from spotkube.core.catalog.aks import GPU_VM_SIZES
from spotkube.core.contract import ACCELERATOR_LABEL, CAPACITY_LABEL, NO_ACCELERATOR, POOL_LABEL, ROLE_LABEL, Taint


class RegisteredResource(Protocol):
    type: str
    inputs: Mapping[str, Any]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _pool_row(
    name: str, labels: Mapping[str, str], machine: str, gpu_count: int, low: Any, high: Any,
    taints: Sequence[str], zones: Sequence[str] | None, eviction: str | None, max_price: Any,
) -> dict[str, Any]:
    """One pool in the plan's JSON shape; name, role, capacity and GPU type come from the contract's
    labels, which every spotkube pool carries. `cloudName` is the name the cloud knows it by, which
    differs for a control-plane pool whose name is versioned."""
    accelerator = labels.get(ACCELERATOR_LABEL, NO_ACCELERATOR)
    return {
        "name": labels.get(POOL_LABEL, name),
        "cloudName": name,
        "role": labels.get(ROLE_LABEL, "unknown"),
        "capacity": labels.get(CAPACITY_LABEL, "unknown"),
        "machine": machine,
        "gpu": None if accelerator == NO_ACCELERATOR else {"type": accelerator, "count": gpu_count},
        "min": _int(low),
        "max": _int(high),
        "taints": list(taints or []),
        "labels": dict(sorted(labels.items())),
        "evictionPolicy": eviction,
        "maxPrice": max_price,
        "zones": list(zones or []),
    }


def _aks_row(profile: Mapping[str, Any], name: str) -> dict[str, Any]:
    vm_size = profile.get("vmSize", "")
    spot = profile.get("scaleSetPriority") == "Spot"
    return _pool_row(
        name, profile.get("nodeLabels") or {}, vm_size, GPU_VM_SIZES.get(vm_size, ("", 0))[1],
        profile.get("minCount"), profile.get("maxCount"), profile.get("nodeTaints") or [],
        profile.get("availabilityZones"),
        profile.get("scaleSetEvictionPolicy") if spot else None,
        profile.get("spotMaxPrice") if spot else None,
    )


def aks_pools(resources: Sequence[RegisteredResource]) -> list[dict[str, Any]]:
    """The inline system pool of each ManagedCluster, then every AgentPool."""
    rows = []
    for resource in resources:
        if resource.type == "azure-native:containerservice:ManagedCluster":
            rows += [_aks_row(p, p["name"]) for p in resource.inputs.get("agentPoolProfiles") or []]
        elif resource.type == "azure-native:containerservice:AgentPool":
            rows.append(_aks_row(resource.inputs, resource.inputs["agentPoolName"]))
    return rows


def _first(values: Mapping[str, Any], *keys: str) -> Any:
    return next((values[k] for k in keys if values.get(k) is not None), None)


def _gke_capacity(node_config: Mapping[str, Any]) -> str:
    """What the pool really asks Compute Engine for; the capacity label only claims it."""
    if node_config.get("spot"):
        return "spot"
    return "preemptible" if node_config.get("preemptible") else "on-demand"


def gke_pools(resources: Sequence[RegisteredResource]) -> list[dict[str, Any]]:
    """Every GKE NodePool; the cluster's default pool is removed at creation, so it is not one.

    Limits are read as totals (`totalMin/MaxNodeCount`, which spotkube sets), falling back to the
    per-zone `min/maxNodeCount` of pools built otherwise. GKE has no eviction policy or max price.
    """
    rows = []
    for resource in resources:
        if resource.type != "gcp:container/nodePool:NodePool":
            continue
        inputs = resource.inputs
        config = inputs.get("nodeConfig") or {}
        scaling = inputs.get("autoscaling") or {}
        row = _pool_row(
            inputs.get("name", ""), config.get("labels") or {}, config.get("machineType", ""),
            sum(int(a.get("count") or 0) for a in config.get("guestAccelerators") or []),
            _first(scaling, "totalMinNodeCount", "minNodeCount"),
            _first(scaling, "totalMaxNodeCount", "maxNodeCount"),
            [str(Taint.from_gke(t)) for t in config.get("taints") or []],
            inputs.get("nodeLocations"), None, None,
        )
        row["capacity"] = _gke_capacity(config)
        rows.append(row)
    return rows


READERS: dict[str, Callable[[Sequence[RegisteredResource]], list[dict[str, Any]]]] = {
    "aks": aks_pools,
    "gke": gke_pools,
}


#: Row order of the plan: the system pool, the platform pool, then the others by name.
_ROLE_ORDER = {"system": 0, "platform": 1}


def registered_pools(cloud: str, resources: Sequence[RegisteredResource]) -> list[dict[str, Any]]:
    """The cloud's pool rows in a stable order. The mock monitor records registrations from worker
    threads, so their order changes from run to run; a plan (and its PR comment) must not."""
    rows = READERS[cloud](resources)
    return sorted(rows, key=lambda row: (_ROLE_ORDER.get(row["role"], len(_ROLE_ORDER)), row["name"]))
