"""The queue spotkube puts in front of the GPU pools: Kueue's flavors, ClusterQueue and LocalQueue.

One ResourceFlavor per GPU tier (a GPU type on one capacity) and per queued-provisioning pool, labelled
with the contract's labels: Kueue only offers a step the flavors its own placement allows, so a step
placed on spot stays on spot. A flavor's quota is what its pools hold at full scale, in the fallback
order (interruptible, flex-start, queued provisioning, on-demand). A queued pool's flavor has Kueue's
ProvisioningRequest admission check, which holds a step until the cloud provisioned all its nodes at once.
Objects are `kueue.x-k8s.io/v1beta2`, the storage version of Kueue v0.19.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from spotkube.platform import contract
from spotkube.platform.contract import Capacity, PoolContract
from spotkube.platform.records import record

API_VERSION = "kueue.x-k8s.io/v1beta2"
CLUSTER_QUEUE = "spotkube-gpus"
#: Kueue's built-in admission check controller for ProvisioningRequests.
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
QUEUED_PROVISIONING = "spotkube-queued-provisioning"


class PlannedGpuPool(Protocol):
    """What the preset reads of a planned GPU pool (`plan.PoolPlan`, which imports the add-ons' modules
    through the cloud profiles, so this module names only the fields)."""

    @property
    def name(self) -> str: ...
    @property
    def capacity(self) -> Capacity: ...
    @property
    def max(self) -> int: ...
    @property
    def contract(self) -> PoolContract: ...


@record
class Flavor:
    """One ResourceFlavor and its nominal quota in the ClusterQueue: resource -> amount."""

    name: str
    node_labels: Mapping[str, str]
    quotas: Mapping[str, int]
    #: Its pools get their nodes through queued provisioning: the ProvisioningRequest check applies.
    queued: bool = False


def _quotas(pools: Sequence[PlannedGpuPool]) -> dict[str, int]:
    quotas: dict[str, int] = {}
    for pool in pools:
        for resource, per_node in pool.contract.advertised().items():
            quotas[resource] = quotas.get(resource, 0) + pool.max * per_node
    return quotas


def flavors(gpu_pools: Sequence[PlannedGpuPool], queued_pools: Sequence[str] = ()) -> list[Flavor]:
    """The flavors of the stack's GPU pools, in fallback order. `queued_pools` names the pools with
    queued provisioning (the cloud's profile answers which): each gets a flavor of its own."""
    queued = [pool for pool in gpu_pools if pool.name in queued_pools]
    tiers: dict[tuple[Capacity, str], list[PlannedGpuPool]] = {}
    for pool in gpu_pools:
        if pool not in queued:
            tiers.setdefault((pool.capacity, pool.contract.accelerator or ""), []).append(pool)

    def tier(capacity: Capacity) -> list[Flavor]:
        return [Flavor(f"{accelerator}-{capacity}", {contract.ACCELERATOR_LABEL: accelerator,
                                                     contract.CAPACITY_LABEL: capacity},
                       _quotas(pools))
                for (pool_capacity, accelerator), pools in sorted(tiers.items()) if pool_capacity == capacity]

    queued_flavors = [Flavor(f"queued-{pool.name}", {contract.POOL_LABEL: pool.name}, _quotas([pool]), queued=True)
                      for pool in queued]
    return [*tier("spot"), *tier("preemptible"), *tier("flex-start"), *queued_flavors, *tier("on-demand")]


def resource_flavor(flavor: Flavor) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": flavor.name},
            "spec": {"nodeLabels": dict(flavor.node_labels)}}


def cluster_queue(flavor_list: Sequence[Flavor], namespace: str) -> dict[str, Any]:
    """The ClusterQueue over every flavor, open to the pipelines' namespace only. Each flavor of a
    resource group must name every covered resource, so a tier without a resource gets quota 0 of it;
    quotas are Kubernetes quantities, written as strings."""
    covered = sorted({resource for flavor in flavor_list for resource in flavor.quotas})
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "resourceGroups": [{
            "coveredResources": covered,
            "flavors": [{"name": flavor.name,
                         "resources": [{"name": r, "nominalQuota": str(flavor.quotas.get(r, 0))} for r in covered]}
                        for flavor in flavor_list],
        }],
    }
    queued = [flavor.name for flavor in flavor_list if flavor.queued]
    if queued:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": QUEUED_PROVISIONING, "onFlavors": queued}]}
    return {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": CLUSTER_QUEUE}, "spec": spec}


def local_queue(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": CLUSTER_QUEUE}}


def admission_check() -> dict[str, Any]:
    """The ProvisioningRequest admission check, parameterised by `provisioning_request_config`."""
    return {"apiVersion": API_VERSION, "kind": "AdmissionCheck", "metadata": {"name": QUEUED_PROVISIONING},
            "spec": {"controllerName": PROVISIONING_CONTROLLER,
                     "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                    "name": QUEUED_PROVISIONING}}}


def provisioning_request_config(provisioning_class: str) -> dict[str, Any]:
    """The ProvisioningRequests Kueue creates for an admitted step: of the cloud's class, covering only
    the GPUs (the pools' CPU and memory come with the nodes)."""
    return {"apiVersion": API_VERSION, "kind": "ProvisioningRequestConfig", "metadata": {"name": QUEUED_PROVISIONING},
            "spec": {"provisioningClassName": provisioning_class, "managedResources": [contract.GPU_RESOURCE]}}


def preset(gpu_pools: Sequence[PlannedGpuPool], namespace: str, queue: str, queued_pools: Sequence[str] = (),
           provisioning_class: str | None = None) -> list[dict[str, Any]]:
    """Every object of the preset, in the order they can be applied: the provisioning check (when a
    pool queues and the cloud has a ProvisioningRequest class), the flavors, the ClusterQueue, the
    LocalQueue. A cloud without a class has no queued pools to name."""
    flavor_list = flavors(gpu_pools, queued_pools if provisioning_class is not None else ())
    objects = []
    if provisioning_class is not None and any(flavor.queued for flavor in flavor_list):
        objects += [provisioning_request_config(provisioning_class), admission_check()]
    objects += [resource_flavor(flavor) for flavor in flavor_list]
    return [*objects, cluster_queue(flavor_list, namespace), local_queue(queue, namespace)]
