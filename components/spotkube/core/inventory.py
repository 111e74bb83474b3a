"""Read the node pools back out of what the program registered, as rows of the plan's pool table.

The plan's pool table is built from the registered inputs, not from the spec, so it shows what
would really be sent to the cloud. Each cloud's profile reads its own resources (the policy pack
reads them the same way); this module only shapes and orders the rows, and imports no cloud SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from spotkube.core.contract import ACCELERATOR_LABEL, NO_ACCELERATOR, POOL_LABEL, ROLE_LABEL
from spotkube.core.profiles import RegisteredPool, profile


class RegisteredResource(Protocol):
    type: str
    name: str
    inputs: Mapping[str, Any]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def pool_row(pool: RegisteredPool) -> dict[str, Any]:
    """One pool in the plan's JSON shape; name, role and GPU type come from the contract's labels,
    which every spotkube pool carries. `cloudName` is the name the cloud knows it by, which differs
    for a control-plane pool whose name is versioned."""
    accelerator = pool.labels.get(ACCELERATOR_LABEL, NO_ACCELERATOR)
    return {
        "name": pool.labels.get(POOL_LABEL, pool.cloud_name),
        "cloudName": pool.cloud_name,
        "role": pool.labels.get(ROLE_LABEL, "unknown"),
        "capacity": pool.capacity,
        "machine": pool.machine or "",
        "gpu": None if accelerator == NO_ACCELERATOR else {"type": accelerator, "count": pool.gpu_count},
        "min": _int(pool.min_nodes),
        "max": _int(pool.max_nodes),
        "taints": list(pool.taint_texts),
        "labels": dict(sorted(pool.labels.items())),
        "evictionPolicy": pool.eviction_policy if pool.interruptible else None,
        "maxPrice": pool.max_price if pool.interruptible else None,
        "zones": list(pool.zones),
    }


#: Row order of the plan: the system pool, the platform pool, then the others by name.
_ROLE_ORDER = {"system": 0, "platform": 1}


def registered_pools(cloud: str, resources: Sequence[RegisteredResource]) -> list[dict[str, Any]]:
    """The cloud's pool rows in a stable order. The mock monitor records registrations from worker
    threads, so their order changes from run to run; a plan (and its PR comment) must not."""
    read = profile(cloud).read_pools
    rows = [pool_row(pool) for r in resources for pool in read(r.type, r.name, r.inputs)]
    return sorted(rows, key=lambda row: (_ROLE_ORDER.get(row["role"], len(_ROLE_ORDER)), row["name"]))
