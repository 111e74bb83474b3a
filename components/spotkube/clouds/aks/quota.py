"""AKS: the Azure compute quotas a stack's pools count against at full scale.

Azure counts vCPUs per region in three ways (learn.microsoft.com/azure/quotas/regional-quota-requests,
.../virtual-machines/spot-vms):
- each VM family has its own quota (`standardNCASv3_T4Family`: the usage API's `name.value`);
- every regular (not Spot) VM also counts against the total regional vCPUs (`cores`);
- Spot VMs count only against the regional Spot/low-priority vCPUs (`lowPriorityCores`), not their
  family's quota nor `cores`.
Upgrades add surge nodes: each regular pool's max surge as registered (spotkube's `upgrade.maxSurge`,
1 node on GPU pools by default), else AKS's default of 10 % of a pool, fractions rounded up
(azure-native 3.x `AgentPoolUpgradeSettings.maxSurge`: "If not specified, the default is 10%"); Spot
pools get none ("There are no surge nodes available for Spot
node pool upgrades", learn.microsoft.com/azure/aks/spot-node-pool). Pure module: no Pulumi, no SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from spotkube.clouds.aks import catalog
from spotkube.platform.quota import PoolDemand, QuotaNeed, QuotaPlan, QuotaRef, summed, surge_nodes

#: AKS's max surge when a pool sets none, in percent of the pool.
DEFAULT_MAX_SURGE_PERCENT = 10
TOTAL_CORES = "cores"
SPOT_CORES = "lowPriorityCores"
SURGE = ("AKS adds each regular pool's max surge while it upgrades it: as the pool registers it, else "
         f"{DEFAULT_MAX_SURGE_PERCENT} percent of its nodes, rounded up (AKS's default); Spot pools upgrade without "
         "surge nodes. Every pool is counted surging at once: the worst case.")

#: The quota families of the general-purpose sizes system and platform pools run on, which the GPU
#: catalog doesn't list, by the usage API's `name.value`. A GPU size's family is the catalog's (its
#: `family`, from the Resource SKUs API); any other size's is resolved by `spotkube quota` from that API.
#: Sources: skypilot-org/skypilot `sky/catalog/data_fetchers/fetch_azure.py` (from the Resource SKUs
#: API's `family`), learn.microsoft.com/azure/quotas/per-vm-quota-requests.
GENERAL_PURPOSE_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"Standard_D\d+s_v3", "standardDSv3Family"),
    (r"Standard_D\d+s_v5", "standardDSv5Family"),
)
#: The vCPU count is the number after the family letters (learn.microsoft.com/azure/virtual-machines/
#: vm-naming-conventions: "# of vCPUs"); a constrained size (`Standard_E8-4ds_v5`) counts its full size.
_VCPUS = re.compile(r"^Standard_[A-Z]+(\d+)")


def quota_name(sku_family: str) -> str:
    """A family as the usage API names its quota: the Resource SKUs API writes the same name with other
    spacing and case (`Standard NCASv3_T4 Family` for `standardNCASv3_T4Family`)."""
    joined = sku_family.replace(" ", "")
    return joined[:1].lower() + joined[1:]


def family(vm_size: str, learnt: Mapping[str, str]) -> str | None:
    """The quota family of a VM size: from the cloud (`learnt`), the GPU catalog or the general-purpose
    sizes; None when unknown."""
    if vm_size in learnt:
        return learnt[vm_size]
    machine = catalog.section().machine(vm_size)
    if machine is not None and machine.family:
        return quota_name(machine.family)
    return next((name for pattern, name in GENERAL_PURPOSE_FAMILIES if re.fullmatch(pattern, vm_size)), None)


def vcpus(vm_size: str) -> int | None:
    match = _VCPUS.match(vm_size)
    return int(match.group(1)) if match else None


def quota_plan(pools: Sequence[PoolDemand], learnt: Mapping[str, str]) -> QuotaPlan:
    """The vCPU quotas the pools need at full scale and during upgrades."""
    needs: list[QuotaNeed] = []
    notes: list[str] = []
    for pool in pools:
        cores = vcpus(pool.machine)
        if cores is None:
            notes.append(f"pool {pool.name}: {pool.machine} has no vCPU count in its name; its quota is not counted")
            continue
        full = (pool.max or 0) * cores
        if pool.capacity == "spot":
            needs.append(QuotaNeed((QuotaRef(SPOT_CORES),), "Total Regional Spot vCPUs", "vCPUs", full, 0,
                                   (pool.name,)))
            continue
        surge = surge_nodes(pool, f"{DEFAULT_MAX_SURGE_PERCENT}%") * cores
        needs.append(QuotaNeed((QuotaRef(TOTAL_CORES),), "Total Regional vCPUs", "vCPUs", full, surge, (pool.name,)))
        name = family(pool.machine, learnt)
        if name is None:
            notes.append(f"pool {pool.name}: the quota family of {pool.machine} is not in spotkube's catalog; "
                         "`spotkube quota` reads it from Azure's Resource SKUs API")
            continue
        needs.append(QuotaNeed((QuotaRef(name),), f"{name} vCPUs", "vCPUs", full, surge, (pool.name,)))
    return QuotaPlan(summed(needs), SURGE, tuple(notes))
