"""Azure VM sizes spotkube knows how to build GPU pools from, and sizes Azure has retired.

A GPU pool's GPU type and count follow from its VM size, so the spec fills them in (or refuses a
mismatch) instead of trusting two fields that could disagree. GPU names use GKE's accelerator
vocabulary, which is spotkube's cloud-neutral one.

Sources: Azure docs "NCasT4_v3 series", "NC A100 v4 series", "NC H100 v5 series", "ND H100 v5
series" (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated), read 2026-11.

More: docs/platform-facts.md#aks-gpu-node-pools.
"""

from __future__ import annotations

import re

from spotkube.platform.cost.prices import CloudPricing, PriceRow

#: VM size -> (GPU type, GPUs per VM).
GPU_VM_SIZES: dict[str, tuple[str, int]] = {
    "Standard_NC4as_T4_v3": ("nvidia-tesla-t4", 1),
    "Standard_NC8as_T4_v3": ("nvidia-tesla-t4", 1),
    "Standard_NC16as_T4_v3": ("nvidia-tesla-t4", 1),
    "Standard_NC64as_T4_v3": ("nvidia-tesla-t4", 4),
    "Standard_NC24ads_A100_v4": ("nvidia-a100-80gb", 1),
    "Standard_NC48ads_A100_v4": ("nvidia-a100-80gb", 2),
    "Standard_NC96ads_A100_v4": ("nvidia-a100-80gb", 4),
    "Standard_NC40ads_H100_v5": ("nvidia-h100-nvl", 1),
    "Standard_NC80adis_H100_v5": ("nvidia-h100-nvl", 2),
    "Standard_ND96isr_H100_v5": ("nvidia-h100-80gb", 8),
}

#: Retired VM size -> the size to use instead. NCv3 (V100) retired on 2025-09-30.
RETIRED_VM_SIZES: dict[str, str] = {
    "Standard_NC6s_v3": "Standard_NC4as_T4_v3 (T4) or Standard_NC24ads_A100_v4 (A100)",
    "Standard_NC12s_v3": "Standard_NC8as_T4_v3 (T4) or Standard_NC24ads_A100_v4 (A100)",
    "Standard_NC24s_v3": "Standard_NC64as_T4_v3 (4 × T4) or Standard_NC96ads_A100_v4 (4 × A100)",
    "Standard_NC24rs_v3": "Standard_NC96ads_A100_v4 (4 × A100)",
    "Standard_NC6": "Standard_NC4as_T4_v3 (T4)",
    "Standard_NC12": "Standard_NC8as_T4_v3 (T4)",
    "Standard_NC24": "Standard_NC64as_T4_v3 (4 × T4)",
    "Standard_NV6": "Standard_NV6ads_A10_v5",
}

#: Pool names: Linux agent pools, lower-case alphanumerics starting with a letter, 1-12 characters.
POOL_NAME_PATTERN = r"^[a-z][a-z0-9]{0,11}$"
#: Azure VM size names (Standard_D4s_v3); the size itself is checked by Azure.
VM_SIZE_PATTERN = r"^Standard_[A-Za-z0-9_]+$"

#: Azure names Arm64 (Ampere Altra / Cobalt) sizes with a `p` among the feature letters after the
#: vCPU count: Standard_D4ps_v5, Standard_E8pds_v6 (learn.microsoft.com/azure/virtual-machines/
#: vm-naming-conventions). Every other size spotkube builds on is amd64.
_FEATURES = re.compile(r"^Standard_[A-Z]+[0-9]+([a-z]*)_")


def vm_size_arch(vm_size: str) -> str:
    """The `kubernetes.io/arch` label of nodes of this VM size."""
    match = _FEATURES.match(vm_size)
    return "arm64" if match and "p" in match.group(1) else "amd64"

#: The built-in role "Azure Kubernetes Service RBAC Cluster Admin": every Kubernetes data action.
#: With Azure RBAC for Kubernetes, rights come only from such assignments; subscription Owner has no
#: data actions (learn.microsoft.com/azure/aks/manage-azure-rbac, .../role-based-access-control/
#: built-in-roles/containers).
RBAC_CLUSTER_ADMIN_ROLE_ID = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"

#: Azure regions (`az account list-locations --query "[?metadata.regionType=='Physical'].name"`), public
#: cloud plus Azure Government and Azure China, as of the lookup date in
#: docs/platform-facts.md#cloud-regions. A region newer than this list is accepted with
#: `cluster.allowUnlistedRegion: true`.
REGIONS: frozenset[str] = frozenset({
    "australiacentral", "australiacentral2", "australiaeast", "australiasoutheast", "austriaeast",
    "belgiumcentral", "brazilsouth", "brazilsoutheast", "canadacentral", "canadaeast", "centralindia",
    "centralus", "chilecentral", "denmarkeast", "eastasia", "eastus", "eastus2", "francecentral", "francesouth",
    "germanynorth", "germanywestcentral", "indonesiacentral", "israelcentral", "italynorth", "japaneast",
    "japanwest", "jioindiacentral", "jioindiawest", "koreacentral", "koreasouth", "malaysiawest",
    "mexicocentral", "newzealandnorth", "northcentralus", "northeurope", "norwayeast", "norwaywest",
    "polandcentral", "qatarcentral", "southafricanorth", "southafricawest", "southcentralus",
    "southeastasia", "southindia", "spaincentral", "swedencentral", "swedensouth", "switzerlandnorth",
    "switzerlandwest", "uaecentral", "uaenorth", "uksouth", "ukwest", "westcentralus", "westeurope",
    "westindia", "westus", "westus2", "westus3",
    "usgovarizona", "usgovtexas", "usgovvirginia", "usdodcentral", "usdodeast",
    "chinaeast", "chinaeast2", "chinaeast3", "chinanorth", "chinanorth2", "chinanorth3",
})


# --- How Azure appears in the price table ---------------------------------------------------------


def price_row_problem(row: PriceRow) -> str | None:
    """Azure's Retail Prices API prices whole VM sizes, by their ARM names, as spot or on-demand."""
    if row.kind != "machine":
        return "Azure prices whole VM sizes; it has no separate GPU rows"
    if row.capacity == "preemptible":
        return "Azure has no preemptible capacity (it is called spot there)"
    if not row.sku.startswith("Standard_"):
        return f"Azure sku must be an ARM size like Standard_D4s_v3: {row.sku}"
    return None


def gpus_billed_separately(vm_size: str) -> bool:
    """An Azure GPU size's price includes its GPUs."""
    return False


PRICING = CloudPricing(name="azure", row_problem=price_row_problem, gpus_billed_separately=gpus_billed_separately)
