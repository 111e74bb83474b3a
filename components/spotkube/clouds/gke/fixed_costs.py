"""What a GKE stack's registered resources cost a month with no step running, besides its nodes.

Read from the registered Cluster, NodePools and RouterNat; `platform/cost/fixed.py` prices the items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from spotkube.clouds.gke import checkpoints
from spotkube.clouds.gke.resources import CLUSTER_TYPE, NODE_POOL_TYPE, ROUTER_NAT_TYPE
from spotkube.platform import contract
from spotkube.platform.addons.kfp_kinds import DATA_VOLUMES
from spotkube.platform.addons.kfp_transforms import KUBEFLOW_TYPE
from spotkube.platform.cloud import first, items, mapping, whole
from spotkube.platform.cost.fixed import FixedItem, FixedPriceTable, parse_fixed_prices
from spotkube.platform.input_messages import shown
from spotkube.platform.spec import PlatformSpec

#: GKE's boot disk when a pool sets none: 100 GB of pd-balanced (pd-balanced is the default from GKE
#: 1.24; cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks).
DEFAULT_DISK_TYPE = "pd-balanced"
DEFAULT_DISK_GB = 100
#: The disk type behind each built-in GKE storage class; `standard-rwo` is the default class.
STORAGE_CLASS_DISKS = {"standard-rwo": "pd-balanced", "premium-rwo": "pd-ssd", "standard": "pd-standard"}
DEFAULT_STORAGE_CLASS = "standard-rwo"
#: Cloud NAT's hourly price grows per VM up to this many VMs, then stays at its cap.
NAT_VM_CAP = 32


@cache
def fixed_prices() -> FixedPriceTable:
    """The bundled fixed-cost prices of Google Cloud (fixed_prices.json, next to this module)."""
    return parse_fixed_prices(resources.files(__package__).joinpath("fixed_prices.json").read_text("utf-8"))


def _idle_nodes(inputs: Mapping[str, Any]) -> int:
    """A pool's nodes at its minimum: the total, or the per-zone minimum times its zones."""
    scaling = mapping(inputs.get("autoscaling"))
    if not scaling:
        return whole(first(inputs, "nodeCount", "initialNodeCount"))
    if scaling.get("totalMinNodeCount") is not None:
        return whole(scaling.get("totalMinNodeCount"))
    return whole(scaling.get("minNodeCount")) * max(1, len(items(inputs.get("nodeLocations"))))


def _cluster_items(name: str, inputs: Mapping[str, Any]) -> list[FixedItem]:
    where = f"Cluster {shown(name)}"
    location = str(inputs.get("location") or "")
    zonal = location.count("-") >= 2
    credit = ("a zonal cluster: the free tier's $74.40 monthly credit covers one zonal or Autopilot cluster per "
              "billing account, which the plan can't see, so the fee is counted" if zonal else
              "a regional cluster: the free tier's monthly credit applies only to zonal and Autopilot clusters")
    out = [FixedItem("cluster management fee", where, "cluster-fee", Decimal(1), credit)]
    if "WORKLOADS" in [str(c) for c in items(mapping(inputs.get("loggingConfig")).get("enableComponents"))]:
        out.append(FixedItem("Cloud Logging (workload logs)", where, None, Decimal(0),
                             "no fixed fee: the first 50 GiB a project a month are free, then it bills per GiB"))
    return out


def _pool_items(name: str, inputs: Mapping[str, Any], private_nodes: bool) -> list[FixedItem]:
    nodes = _idle_nodes(inputs)
    if nodes == 0:
        return []
    where = f"NodePool {shown(name)}"
    config = mapping(inputs.get("nodeConfig"))
    disk = str(config.get("diskType") or DEFAULT_DISK_TYPE)
    gb = whole(config.get("diskSizeGb")) or DEFAULT_DISK_GB
    pool = mapping(config.get("labels")).get(contract.POOL_LABEL) or inputs.get("name") or name
    out = [FixedItem(f"boot disks of pool {pool} ({nodes} × {gb} GB {disk})", where,
                     f"disk:{disk}", Decimal(nodes * gb))]
    if not private_nodes:
        vm = "spot-vm" if config.get("spot") or config.get("preemptible") else "standard-vm"
        out.append(FixedItem(f"external IPv4 addresses of pool {pool} ({nodes} node(s))",
                             where, f"external-ip:{vm}", Decimal(nodes)))
    return out


def _nat_items(name: str, inputs: Mapping[str, Any], nodes: int) -> list[FixedItem]:
    where = f"RouterNat {shown(name)}"
    ips = len(items(inputs.get("natIps")))
    auto = str(inputs.get("natIpAllocateOption") or "AUTO_ONLY") == "AUTO_ONLY"
    if nodes > NAT_VM_CAP:
        gateway = FixedItem(f"Cloud NAT gateway ({nodes} VMs, above the {NAT_VM_CAP}-VM cap)", where,
                            "cloud-nat:capped", Decimal(1))
    else:
        gateway = FixedItem(f"Cloud NAT gateway ({nodes} VM(s) using it at idle)", where, "cloud-nat:per-vm",
                            Decimal(nodes))
    count = max(ips, 1) if auto else ips
    note = "Cloud NAT allocates more addresses as the nodes need ports; one at idle" if auto else None
    return [gateway, FixedItem(f"Cloud NAT external IP × {count}", where, "cloud-nat:ip", Decimal(count), note)]


def _kubeflow_items(spec: PlatformSpec) -> list[FixedItem]:
    where = "KubeflowPipelines' manifests"
    storage_class = spec.kubeflow.storage_class or DEFAULT_STORAGE_CLASS
    disk = STORAGE_CLASS_DISKS.get(storage_class)
    out = [FixedItem(f"{what} volume ({gib} GiB, storage class {storage_class})", where,
                     f"disk:{disk}" if disk else f"storage-class:{storage_class}", Decimal(gib) if disk else Decimal(1))
           for what, gib in DATA_VOLUMES]
    if spec.kubeflow.expose_ui:
        out.append(FixedItem("the UI's LoadBalancer Service (forwarding rule and external IP)", where,
                             "network-load-balancer", Decimal(1)))
    return out


def fixed_items(registered: Sequence[tuple[str, str, Mapping[str, Any]]], spec: PlatformSpec) -> list[FixedItem]:
    """Every fixed-cost item of the registered GKE resources; KFP's volumes come from its settings, since
    kustomize renders its manifests only at deploy time."""
    clusters = [(name, inputs) for t, name, inputs in registered if t == CLUSTER_TYPE]
    private = any(mapping(inputs.get("privateClusterConfig")).get("enablePrivateNodes") for _, inputs in clusters)
    pools = [(name, inputs) for t, name, inputs in registered if t == NODE_POOL_TYPE]
    idle = sum(_idle_nodes(inputs) for _, inputs in pools)
    out: list[FixedItem] = []
    for type_token, name, inputs in registered:
        if type_token == CLUSTER_TYPE:
            out += _cluster_items(name, inputs)
        elif type_token == NODE_POOL_TYPE:
            out += _pool_items(name, inputs, private)
        elif type_token == ROUTER_NAT_TYPE:
            out += _nat_items(name, inputs, idle)
        elif type_token == KUBEFLOW_TYPE:
            out += _kubeflow_items(spec)
        elif type_token == checkpoints.BUCKET_TYPE:
            out.append(FixedItem(f"checkpoint store (bucket {inputs.get('name')})", f"Bucket {shown(name)}", None,
                                 Decimal(0), checkpoints.UNPRICED))
    return out
