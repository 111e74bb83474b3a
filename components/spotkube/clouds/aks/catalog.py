"""Azure VM sizes: which carry GPUs (from the GPU catalog), how Azure's names map onto spotkube's GPU
names, and sizes Azure has retired.

A GPU pool's GPU type and count follow from its VM size, so the spec fills them in (or refuses a
mismatch) instead of trusting two fields that could disagree. The sizes, their GPUs and the regions
offering them live in the GPU catalog (`spotkube.platform.catalog`, docs/catalog.md), which
`spotkube catalog refresh --cloud aks` rebuilds from Azure's Resource SKUs API; this module holds
what that API doesn't say: which GPU model a size family carries, in spotkube's cloud-neutral
vocabulary (GKE's accelerator names), and which sizes get a part of one GPU.

More: docs/platform-facts.md#aks-gpu-node-pools.
"""

from __future__ import annotations

import re
from importlib import resources

from spotkube.platform.catalog import CloudCatalog, cloud_part
from spotkube.platform.cost.prices import CloudPricing, PriceRow

#: This cloud's part of the GPU catalog.
CLOUD = "aks"
#: This cloud's shipped part of the GPU catalog, and its shipped price rows (docs/catalog.md, docs/cost.md).
CATALOG_FILE = resources.files(__package__).joinpath("catalog.json")
PRICES_FILE = resources.files(__package__).joinpath("prices.json")


def section() -> CloudCatalog:
    """The AKS part of the catalog in use: the bundled one, or the user's refreshed copy."""
    return cloud_part(CLOUD, CATALOG_FILE)


def gpu_vm_size(vm_size: str) -> tuple[str, int] | None:
    """(GPU type, GPUs per VM) of a VM size the catalog knows, or None."""
    machine = section().machine(vm_size)
    return (machine.gpu.type, machine.gpu.count) if machine else None


#: Azure's GPU size families, as the Resource SKUs API's `family` writes them (compared without case,
#: spaces or underscores: the API writes "Standard NDASv4_A100 Family" and "standardNDSH100v5Family"
#: alike), -> spotkube's GPU type. The API names no GPU model, so the model comes from the family.
#: Sources: each family's size page (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated).
AZURE_GPU_FAMILIES: dict[str, str] = {
    "Standard NCASv3_T4 Family": "nvidia-tesla-t4",
    "StandardNCADSA100v4Family": "nvidia-a100-80gb",
    "StandardNCadsH100v5Family": "nvidia-h100-nvl",
    "Standard NDASv4_A100 Family": "nvidia-tesla-a100",
    "standard NDAMSv4_A100Family": "nvidia-a100-80gb",
    "standardNDSH100v5Family": "nvidia-h100-80gb",
    "standardNDISRH200V5Family": "nvidia-h200-141gb",
    "StandardNVADSA10v5Family": "nvidia-a10",
}

#: Sizes whose VM gets a part of one GPU (NVadsA10 v5: 1/6, 1/3 and 1/2 of an A10). The SKU API
#: reports each as one GPU, and the node advertises one `nvidia.com/gpu`; the catalog keeps the part.
#: Source: learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series.
GPU_SHARES: dict[str, str] = {
    "Standard_NV6ads_A10_v5": "1/6",
    "Standard_NV12ads_A10_v5": "1/3",
    "Standard_NV18ads_A10_v5": "1/2",
}

#: GPU sizes whose GPUs are not NVIDIA's (AMD Instinct MI300X, Radeon Pro V620 and V710), by the
#: model in their name. spotkube's GPU pools run NVIDIA's driver and device plugin, so a refresh
#: leaves them out of the catalog.
NON_NVIDIA_MODELS = ("MI300X", "V620", "V710")


def family_key(family: str) -> str:
    """A family name as compared: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", family.lower())


_FAMILY_GPUS = {family_key(family): gpu for family, gpu in AZURE_GPU_FAMILIES.items()}


def gpu_type_of_family(family: str) -> str | None:
    """spotkube's GPU type for an Azure GPU family, or None when it has no neutral name yet."""
    return _FAMILY_GPUS.get(family_key(family))


def own_gpu_name(family: str) -> str:
    """Azure's own name for the GPU of a family without a neutral name: the family as a GPU type
    (`standardndgb200v6family`), so a new GPU size is accepted before spotkube names its GPU."""
    return family_key(family)[:54]


def is_nvidia_size(vm_size: str) -> bool:
    """Whether a GPU size's GPUs are NVIDIA's (see NON_NVIDIA_MODELS)."""
    return not any(f"_{model}_" in vm_size for model in NON_NVIDIA_MODELS)


_SERIES = re.compile(r"^Standard_([A-Z]+)[0-9]")


def series(vm_size: str) -> str | None:
    """The size's series, the capital letters before its vCPU count: `Standard_D4s_v3` -> `D`."""
    match = _SERIES.match(vm_size)
    return match.group(1) if match else None


def carries_no_gpu(vm_size: str) -> bool:
    """Whether the catalog knows the size's series to have no GPU size at all."""
    return series(vm_size) in section().cpu_families


#: Retired VM size -> the size to use instead. NCv3 (V100) retired on 2025-09-30.
RETIRED_VM_SIZES: dict[str, str] = {
    "Standard_NC6s_v3": "Standard_NC4as_T4_v3 (T4) or Standard_NC24ads_A100_v4 (A100)",
    "Standard_NC12s_v3": "Standard_NC8as_T4_v3 (T4) or Standard_NC24ads_A100_v4 (A100)",
    "Standard_NC24s_v3": "Standard_NC64as_T4_v3 (4 × T4) or Standard_NC96ads_A100_v4 (4 × A100)",
    "Standard_NC24rs_v3": "Standard_NC96ads_A100_v4 (4 × A100)",
    "Standard_NC6": "Standard_NC4as_T4_v3 (T4)",
    "Standard_NC12": "Standard_NC8as_T4_v3 (T4)",
    "Standard_NC24": "Standard_NC64as_T4_v3 (4 × T4)",
    "Standard_NV6": "Standard_NV6ads_A10_v5 (1/6 of an A10)",
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


PRICING = CloudPricing(name="azure", row_problem=price_row_problem, gpus_billed_separately=gpus_billed_separately,
                       table=PRICES_FILE)
