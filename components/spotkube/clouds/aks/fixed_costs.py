"""What an AKS stack's registered resources cost a month with no step running, besides its nodes.

Read from the registered ManagedCluster and AgentPools; `platform/cost/fixed.py` prices the items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from spotkube.clouds.aks import checkpoints, supply
from spotkube.clouds.aks.catalog import PRICES_FILE
from spotkube.clouds.aks.resources import AGENT_POOL_TYPE, CLUSTER_TYPE, OMS_AGENT_ADDON
from spotkube.platform import contract
from spotkube.platform.addons.kfp_kinds import DATA_VOLUMES
from spotkube.platform.addons.kfp_transforms import KUBEFLOW_TYPE
from spotkube.platform.cloud import first, items, mapping, whole
from spotkube.platform.cost.fixed import FixedItem, FixedPriceRow, FixedPriceTable, parse_fixed_prices
from spotkube.platform.input_messages import shown
from spotkube.platform.spec import PlatformSpec

#: AKS's OS disk size when a pool sets none (learn.microsoft.com/azure/aks/concepts-storage).
DEFAULT_OS_DISK_GIB = 128
#: Premium SSD (P) and Standard SSD (E) size tiers: a disk is billed as the smallest tier that holds it.
DISK_TIERS_GIB: tuple[tuple[int, str], ...] = (
    (4, "1"), (8, "2"), (16, "3"), (32, "4"), (64, "6"), (128, "10"), (256, "15"), (512, "20"),
    (1024, "30"), (2048, "40"), (4096, "50"), (8192, "60"), (16384, "70"), (32767, "80"),
)
#: The disk SKU behind each built-in AKS storage class (learn.microsoft.com/azure/aks/concepts-storage):
#: `default` and `managed-csi` are Standard SSD LRS, `managed-csi-premium` Premium SSD LRS.
STORAGE_CLASS_TIER_LETTER = {"default": "E", "managed-csi": "E", "managed-premium": "P", "managed-csi-premium": "P"}
#: A VM size that takes Premium SSDs has `s` among the lowercase feature letters after its vCPU count
#: (Standard_D4s_v3, Standard_NC24ads_A100_v4).
PREMIUM_STORAGE_SIZE = re.compile(r"^Standard_[A-Z]+[0-9]+[a-z]*s[a-z]*(_|$)")


@cache
def fixed_prices() -> FixedPriceTable:
    """The bundled fixed-cost prices of Azure (fixed_prices.json, next to this module), and a capacity
    reservation's price per VM size and region: Azure bills it at the size's on-demand rate, so those rows
    are the on-demand rows of prices.json, with their own sources and dates."""
    table = parse_fixed_prices(resources.files(__package__).joinpath("fixed_prices.json").read_text("utf-8"))
    machines = json.loads(PRICES_FILE.read_text("utf-8"), parse_float=Decimal)["rows"]
    reserved = tuple(FixedPriceRow(
        item=f"capacity-reservation:{row['sku']}", region=row["region"], usd=row["usdPerHour"], per="hour",
        source=f"capacity reservations are billed at the VM size's on-demand rate "
        f"(learn.microsoft.com/azure/virtual-machines/capacity-reservation-overview); that rate: {row['source']}",
        date=row["date"]) for row in machines if row["kind"] == "machine" and row["capacity"] == "on-demand")
    return table.model_copy(update={"rows": table.rows + reserved})


def disk_tier(letter: str, gib: int) -> str:
    """The billed tier of a managed disk of `gib` GiB: P10 for a 128 GiB Premium SSD."""
    return letter + next((tier for size, tier in DISK_TIERS_GIB if gib <= size), DISK_TIERS_GIB[-1][1])


def _cluster_items(name: str, inputs: Mapping[str, Any]) -> list[FixedItem]:
    where = f"ManagedCluster {shown(name)}"
    tier = str(mapping(inputs.get("sku")).get("tier") or "Free")
    out = [FixedItem(f"cluster management ({tier} tier)", where, f"cluster-tier:{tier}", Decimal(1))]
    network = mapping(inputs.get("networkProfile"))
    outbound = str(network.get("outboundType") or "loadBalancer")
    if outbound == "loadBalancer":
        managed_ips = mapping(mapping(network.get("loadBalancerProfile")).get("managedOutboundIPs"))
        ips = whole(managed_ips.get("count")) or 1
        out += [FixedItem("Standard load balancer (AKS's outbound rule)", where, "load-balancer:standard", Decimal(1)),
                FixedItem(f"outbound public IP × {ips}", where, "public-ip:standard", Decimal(ips))]
    elif outbound == "managedNATGateway":
        profile = mapping(mapping(network.get("natGatewayProfile")).get("managedOutboundIPProfile"))
        ips = whole(profile.get("count")) or 1
        out += [FixedItem("managed NAT gateway", where, "nat-gateway", Decimal(1)),
                FixedItem(f"NAT gateway public IP × {ips}", where, "public-ip:standard", Decimal(ips))]
    else:
        out.append(FixedItem(f"outbound ({outbound})", where, None, Decimal(0),
                             "through network resources this stack doesn't create; they are billed where they are"))
    addon = mapping(mapping(inputs.get("addonProfiles")).get(OMS_AGENT_ADDON))
    if addon.get("enabled"):
        out.append(FixedItem("Log Analytics workspace (Container Insights)", where, None, Decimal(0),
                             "pay-as-you-go Log Analytics has no fixed fee: it bills per GB ingested (the cost basis)"))
    return out


def _os_disks(where: str, pool: Mapping[str, Any]) -> list[FixedItem]:
    """The OS disks of a pool's nodes at its minimum, as AKS creates them."""
    label = mapping(pool.get("nodeLabels")).get(contract.POOL_LABEL)
    name = label or pool.get("name") or pool.get("agentPoolName")
    nodes = whole(first(pool, "minCount", "count")) if pool.get("enableAutoScaling") else whole(pool.get("count"))
    if nodes == 0:
        return []
    size = str(pool.get("vmSize") or "")
    kind = pool.get("osDiskType")
    what = f"OS disks of pool {name} ({nodes} node(s)"
    if kind == "Ephemeral":
        return [FixedItem(what + ", ephemeral)", where, None, Decimal(0),
                          "ephemeral OS disks live on the VM's cache or temp disk and cost nothing beyond the VM")]
    gib = whole(pool.get("osDiskSizeGB")) or DEFAULT_OS_DISK_GIB
    note = None if kind == "Managed" else (
        "osDiskType unset: AKS chooses an ephemeral OS disk when the size's cache holds it, which costs nothing "
        "extra; counted here as the managed disk it otherwise gets, so this line is an upper bound")
    if not PREMIUM_STORAGE_SIZE.match(size):
        return [FixedItem(f"{what}, {gib} GiB managed; {size} takes no Premium SSD)", where,
                          f"managed-disk:os-without-premium-storage:{gib}", Decimal(nodes), note)]
    tier = disk_tier("P", gib)
    return [FixedItem(f"{what} × {gib} GiB Premium SSD {tier})", where, f"managed-disk:{tier}", Decimal(nodes), note)]


def _kubeflow_items(spec: PlatformSpec) -> list[FixedItem]:
    where = "KubeflowPipelines' manifests"
    settings = spec.kubeflow
    storage_class = settings.storage_class or "default"
    letter = STORAGE_CLASS_TIER_LETTER.get(storage_class)
    out = [FixedItem(f"{what} volume ({gib} GiB, storage class {storage_class})", where,
                     f"managed-disk:{disk_tier(letter, gib)}" if letter else f"storage-class:{storage_class}",
                     Decimal(1)) for what, gib in DATA_VOLUMES]
    if settings.expose_ui:
        out.append(FixedItem("the UI's LoadBalancer Service public IP", where, "public-ip:standard", Decimal(1)))
    return out


def fixed_items(registered: Sequence[tuple[str, str, Mapping[str, Any]]], spec: PlatformSpec) -> list[FixedItem]:
    """Every fixed-cost item of the registered AKS resources; KFP's volumes come from its settings, since
    kustomize renders its manifests only at deploy time."""
    out: list[FixedItem] = []
    for type_token, name, inputs in registered:
        if type_token == CLUSTER_TYPE:
            out += _cluster_items(name, inputs)
            for profile in map(mapping, items(inputs.get("agentPoolProfiles"))):
                out += _os_disks(f"ManagedCluster {shown(name)} agentPoolProfiles ({profile.get('name')})", profile)
        elif type_token == AGENT_POOL_TYPE:
            out += _os_disks(f"AgentPool {shown(name)}", inputs)
        elif type_token == KUBEFLOW_TYPE:
            out += _kubeflow_items(spec)
        elif type_token == checkpoints.STORAGE_ACCOUNT_TYPE:
            out.append(FixedItem(f"checkpoint store (storage account {inputs.get('accountName')})",
                                 f"StorageAccount {shown(name)}", None, Decimal(0), checkpoints.UNPRICED))
    return out + supply.reservation_items(registered)
