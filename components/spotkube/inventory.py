"""Read the node pools back out of what the program registered, one reader per cloud.

The plan's pool table is built from the registered inputs, not from the spec, so it shows what
would really be sent to the cloud. The readers only know type tokens and input names, so this
module imports no cloud SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from spotkube.catalog.aks import GPU_VM_SIZES
from spotkube.contract import ACCELERATOR_LABEL, CAPACITY_LABEL, NO_ACCELERATOR, ROLE_LABEL


class RegisteredResource(Protocol):
    type: str
    inputs: Mapping[str, Any]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _pool_row(
    name: str, labels: Mapping[str, str], machine: str, gpu_count: int, low: Any, high: Any,
    taints: Sequence[str], zones: Sequence[str] | None, eviction: str | None, max_price: Any,
) -> dict[str, Any]:
    """One pool in the plan's JSON shape; role, capacity and GPU type come from the contract's
    labels, which every spotkube pool carries."""
    accelerator = labels.get(ACCELERATOR_LABEL, NO_ACCELERATOR)
    return {
        "name": name,
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


READERS: dict[str, Callable[[Sequence[RegisteredResource]], list[dict[str, Any]]]] = {
    "aks": aks_pools,
}


def registered_pools(cloud: str, resources: Sequence[RegisteredResource]) -> list[dict[str, Any]]:
    return READERS[cloud](resources)
