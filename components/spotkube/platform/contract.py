"""The scheduling contract: every label, taint, toleration and node affinity spotkube uses.

Spot capacity is only safe when the pool side (taints and labels on nodes) and the workload side
(tolerations and affinity on pods) agree. Keeping both sides in this one module means a pool and
the workloads aimed at it cannot drift apart, and a pipeline compiled against the neutral labels
runs on an AKS or a GKE cluster alike. No other module may spell a taint key.

This module is pure: plain data and functions, no Pulumi and no cloud SDK.

Why each label and taint exists: docs/architecture.md#the-scheduling-contract; the clouds' own
labels and taints, with sources: docs/platform-facts.md#aks-spot-pools and
docs/platform-facts.md#gke-spot-and-preemptible-nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from spotkube.platform.input_messages import shown
from spotkube.platform.kubernetes_syntax import TAINT_EFFECTS, key_problem, reserved_prefix, value_problem

Cloud = Literal["aks", "gke"]
Capacity = Literal["spot", "preemptible", "on-demand"]
Role = Literal["system", "platform", "batch", "gpu"]
Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

#: Our own label prefix. Every pool spotkube builds carries these labels on both clouds, so a
#: workload can target "a spot nvidia-l4 node" without knowing which cloud it runs on.
LABEL_PREFIX = "spotkube.io"
POOL_LABEL = f"{LABEL_PREFIX}/pool"
ROLE_LABEL = f"{LABEL_PREFIX}/role"
CAPACITY_LABEL = f"{LABEL_PREFIX}/capacity"
ACCELERATOR_LABEL = f"{LABEL_PREFIX}/accelerator"
#: Value of the accelerator label on pools without GPUs; a label that is always present lets an
#: affinity say "no GPU" with a plain `In` instead of relying on `DoesNotExist`.
NO_ACCELERATOR = "none"

INTERRUPTIBLE: tuple[Capacity, ...] = ("spot", "preemptible")

#: Pod annotations a pipeline step declares its timing with, in whole seconds, for `spotkube simulate`:
#: how long its work takes on one node, and how often it saves a checkpoint it can resume from.
RUNTIME_ANNOTATION = f"{LABEL_PREFIX}/runtime-seconds"
CHECKPOINT_ANNOTATION = f"{LABEL_PREFIX}/checkpoint-interval-seconds"

#: How a pool's GPUs are shared: MIG instances (both clouds), or several pods per GPU by time-sharing
#: or NVIDIA MPS (GKE). A GPU pool without sharing gives each pod whole GPUs.
SharingMode = Literal["mig", "time-sharing", "mps"]
SHARING_MODES: tuple[SharingMode, ...] = ("mig", "time-sharing", "mps")
#: The NVIDIA device plugin's MIG strategies: `single` advertises every MIG instance as
#: `nvidia.com/gpu`, `mixed` as `nvidia.com/mig-<profile>` (github.com/NVIDIA/k8s-device-plugin).
MigStrategy = Literal["single", "mixed"]
#: Neutral labels of a GPU pool that shares its GPUs, on both clouds: the mode, the MIG profile and the
#: pods per GPU. A pool without sharing carries none of them, so a step that wants whole GPUs
#: requires `gpu-sharing DoesNotExist` and never gets a slice by accident.
GPU_SHARING_LABEL = f"{LABEL_PREFIX}/gpu-sharing"
GPU_PARTITION_LABEL = f"{LABEL_PREFIX}/gpu-partition"
GPU_CLIENTS_LABEL = f"{LABEL_PREFIX}/gpu-clients"

#: The GPU resource name the NVIDIA device plugin advertises: a whole GPU, or with GPU sharing one
#: slice of it (a MIG instance under the `single` strategy, or one client's share of a time-shared or
#: MPS GPU on GKE).
GPU_RESOURCE = "nvidia.com/gpu"
#: With the NVIDIA device plugin's `mixed` MIG strategy each MIG profile is a resource of its own:
#: `nvidia.com/mig-1g.10gb` (docs/gpu-sharing.md).
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


@dataclass(frozen=True, order=True)
class Taint:
    """A node taint, written the Kubernetes way and rendered into each cloud's own format."""

    key: str
    value: str
    effect: Effect = "NoSchedule"

    def __str__(self) -> str:
        """`key=value:Effect`, the AKS `nodeTaints` format and the plan's display format."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def as_gke(self) -> dict[str, str]:
        """GKE node pool taints spell the effect in SCREAMING_SNAKE_CASE."""
        gke_effect = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE",
                      "NoExecute": "NO_EXECUTE"}[self.effect]
        return {"key": self.key, "value": self.value, "effect": gke_effect}

    @staticmethod
    def parse(text: str) -> Taint:
        """Read `key=value:Effect` (or `key:Effect`) with Kubernetes' syntax for the key and value;
        raises ValueError naming the accepted form."""
        body, sep, effect = text.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise ValueError(
                f"{shown(text)} is not a taint; use key=value:Effect with Effect one of {', '.join(TAINT_EFFECTS)}"
            )
        key, _, value = body.partition("=")
        problem = key_problem(key)
        if problem is None and (value_error := value_problem(value)):
            problem = f"its value {shown(value)}: {value_error}"
        if problem:
            raise ValueError(f"{shown(text)} is not a taint Kubernetes accepts: {problem}")
        return Taint(key, value, effect)  # type: ignore[arg-type]

    @staticmethod
    def from_gke(taint: Mapping[str, str]) -> Taint:
        """The inverse of `as_gke`, for reading registered GKE node pools back."""
        effect = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule",
                  "NO_EXECUTE": "NoExecute"}[taint["effect"]]
        return Taint(taint["key"], taint.get("value", ""), effect)  # type: ignore[arg-type]


# --- The pool side: taints and labels ------------------------------------------------------------

#: Every GPU pool carries it, so that only pods that ask for GPUs land on expensive nodes. GKE adds
#: it only when a non-GPU pool exists and AKS never does, so we always declare it ourselves.
GPU_TAINT = Taint("nvidia.com/gpu", "present")
#: AKS adds this taint to every spot pool; repeating it in our inputs avoids a perpetual diff
#: (pulumi-azure-native #959).
AKS_SPOT_TAINT = Taint("kubernetes.azure.com/scalesetpriority", "spot")
#: GKE Standard clusters label spot and preemptible nodes but do not taint them: we add these.
GKE_SPOT_TAINT = Taint("cloud.google.com/gke-spot", "true")
GKE_PREEMPTIBLE_TAINT = Taint("cloud.google.com/gke-preemptible", "true")
#: The AKS docs' recommended taint for a dedicated system pool.
CRITICAL_ADDONS_ONLY_TAINT = Taint("CriticalAddonsOnly", "true")
#: GKE's own system workloads (kube-dns and its autoscaler, konnectivity-agent, event-exporter, the
#: L7 default backend) tolerate `components.gke.io/gke-managed-components` with `Exists`, and GKE's
#: node agents (DaemonSets) tolerate every taint, so a GKE system pool tainted with it still runs
#: GKE's system pods while ordinary pods go elsewhere (docs/platform-facts.md#gke-system-pool-taint).
GKE_MANAGED_COMPONENTS_TAINT = Taint("components.gke.io/gke-managed-components", "true")
#: The taint that keeps a cloud's system pool for the cluster's own add-ons.
SYSTEM_POOL_TAINTS: dict[Cloud, Taint] = {"aks": CRITICAL_ADDONS_ONLY_TAINT, "gke": GKE_MANAGED_COMPONENTS_TAINT}

#: Every taint that marks interruptible capacity, on either cloud. A workload that tolerates all of
#: them can be compiled once and still land on spot nodes of both clouds.
INTERRUPTIBLE_TAINTS: tuple[Taint, ...] = (AKS_SPOT_TAINT, GKE_SPOT_TAINT, GKE_PREEMPTIBLE_TAINT)

#: Labels each cloud puts on nodes by itself. We repeat AKS's spot label in the pool inputs for the
#: same perpetual-diff reason as the taint; the others are only used to predict placement.
AKS_SPOT_LABEL = (AKS_SPOT_TAINT.key, "spot")
AKS_ACCELERATOR_LABEL = ("kubernetes.azure.com/accelerator", "nvidia")
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
GKE_SPOT_LABEL = (GKE_SPOT_TAINT.key, "true")
GKE_PREEMPTIBLE_LABEL = (GKE_PREEMPTIBLE_TAINT.key, "true")
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
#: The labels GKE puts on the nodes of a pool whose GPUs are partitioned or shared
#: (cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi, .../timesharing-gpus, .../nvidia-mps-gpus).
GKE_GPU_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
GKE_GPU_SHARING_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_GPU_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
#: On GKE, NVIDIA's upstream plugin may only run on pools that carry this label, with the driver
#: installed by hand (cloud.google.com/kubernetes-engine/docs/how-to/gpus, "GPU Operator").
GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL = ("gke-no-default-nvidia-gpu-device-plugin", "true")

#: The GPU compute class: how a GPU step gets spot first and on-demand only as a fallback
#: (docs/architecture.md#spot-first-on-demand-as-fallback). Every GPU pool, on both clouds, carries
#: `cloud.google.com/compute-class=spotkube-<GPU type>`. On GKE it is the label of a ComputeClass
#: that lists the type's spot pools before its on-demand pools, and GKE's autoscaler follows that
#: order for the pods that select the class; GKE pools also carry the class taint, GKE's documented
#: way to join a manually created pool to a class, so a pod that selects no class can't reach them.
#: On AKS the label is inert (AKS reserves no `cloud.google.com/` label): it is there so that a
#: pipeline compiled once, whose fallback steps select the class, lands on both clouds
#: (docs/platform-facts.md#gke-compute-classes).
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
#: GKE refuses class names that start with `gke` or `autopilot`; the prefix also says whose class it is.
COMPUTE_CLASS_PREFIX = "spotkube-"

#: Labels the kubelet and the cloud put on every node, on both clouds. Real pod specs select them
#: (KFP's workflow-controller selects `kubernetes.io/os: linux`), so a contract without them would
#: judge such pods as landing nowhere (kubernetes.io/docs/reference/labels-annotations-taints/).
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
REGION_LABEL = "topology.kubernetes.io/region"
#: The one well-known label whose value differs between nodes of a pool: a pool spread over three
#: zones has nodes in each, so the contract keeps the zones apart from the single-valued labels.
ZONE_LABEL = "topology.kubernetes.io/zone"

#: Label prefixes a stack's own labels may not use (docs/platform-facts.md#kubernetes-label-syntax):
#: spotkube's contract; Kubernetes' own, where a kubelet may set only the namespaces below on its
#: node (the clouds pass pool labels to the kubelet, so AKS refuses the rest and GKE nodes would
#: not join); and each cloud's system labels.
KUBERNETES_LABEL_PREFIXES = ("kubernetes.io", "k8s.io")
KUBELET_LABEL_PREFIXES = ("kubelet.kubernetes.io", "node.kubernetes.io")
CLOUD_LABEL_PREFIXES: dict[Cloud, str] = {"aks": "kubernetes.azure.com", "gke": "cloud.google.com"}


def reserved_label_prefix(cloud: Cloud, key: str) -> str | None:
    """The reserved prefix a stack's node label would use, or None."""
    if reserved_prefix(key, KUBELET_LABEL_PREFIXES):
        return None
    return reserved_prefix(key, (LABEL_PREFIX, *KUBERNETES_LABEL_PREFIXES, CLOUD_LABEL_PREFIXES[cloud]))


def reserved_taint_prefix(cloud: Cloud, key: str) -> str | None:
    """The reserved prefix a stack's own taint would use: spotkube's and the cloud's, whose taints
    (spot, GPU) spotkube and the cloud set themselves."""
    return reserved_prefix(key, (LABEL_PREFIX, CLOUD_LABEL_PREFIXES[cloud]))


def interruptible_taint(cloud: Cloud, capacity: Capacity) -> Taint | None:
    """The taint that keeps ordinary pods off a pool of interruptible capacity, if any."""
    if capacity == "on-demand":
        return None
    if cloud == "aks":
        return AKS_SPOT_TAINT
    return GKE_SPOT_TAINT if capacity == "spot" else GKE_PREEMPTIBLE_TAINT


def compute_class(gpu_type: str) -> str:
    """The compute class of a GPU type's pools: `spotkube-nvidia-l4`. GPU type names are lower-case
    words and hyphens, so the class is a valid object name and label value."""
    return f"{COMPUTE_CLASS_PREFIX}{gpu_type}"


def compute_class_taint(gpu_type: str) -> Taint:
    """The taint that joins a GKE pool to its GPU type's compute class."""
    return Taint(COMPUTE_CLASS_LABEL, compute_class(gpu_type))


def pool_taints(
    cloud: Cloud,
    role: Role,
    capacity: Capacity,
    *,
    has_gpu: bool,
    system_critical_only: bool = False,
    extra: Iterable[Taint] = (),
    accelerator: str | None = None,
) -> tuple[Taint, ...]:
    """All taints a pool must declare: interruptible capacity, GPU, the GPU's compute class on GKE,
    then the user's own."""
    taints: list[Taint] = []
    if role == "system" and system_critical_only:
        taints.append(SYSTEM_POOL_TAINTS[cloud])
    spot_taint = interruptible_taint(cloud, capacity)
    if spot_taint:
        taints.append(spot_taint)
    if has_gpu:
        taints.append(GPU_TAINT)
    if has_gpu and accelerator and cloud == "gke":
        taints.append(compute_class_taint(accelerator))
    taints.extend(t for t in extra if t not in taints)
    return tuple(taints)


def neutral_labels(pool: str, role: Role, capacity: Capacity, accelerator: str | None) -> dict[str, str]:
    """The labels every spotkube pool carries on both clouds."""
    return {
        POOL_LABEL: pool,
        ROLE_LABEL: role,
        CAPACITY_LABEL: capacity,
        ACCELERATOR_LABEL: accelerator or NO_ACCELERATOR,
    }


def declared_labels(
    cloud: Cloud, pool: str, role: Role, capacity: Capacity, accelerator: str | None,
    extra: Mapping[str, str] | None = None, sharing: GpuSharing | None = None,
) -> dict[str, str]:
    """The labels a pool's inputs declare: neutral ones, AKS's spot label, a GPU pool's compute
    class and its sharing, then the user's own.

    The user's labels cannot override ours: a pool whose capacity label lied would defeat the
    whole contract, and one whose class label lied would skip the spot-first order.
    """
    labels = dict(extra or {})
    if cloud == "aks" and capacity == "spot":
        labels[AKS_SPOT_LABEL[0]] = AKS_SPOT_LABEL[1]
    if accelerator:
        labels[COMPUTE_CLASS_LABEL] = compute_class(accelerator)
    if sharing is not None:
        labels.update(sharing.labels())
    labels.update(neutral_labels(pool, role, capacity, accelerator))
    return labels


def well_known_labels(machine: str, arch: str, region: str) -> dict[str, str]:
    """The kubelet's and the cloud's labels that are the same on every node of a pool."""
    return {OS_LABEL: "linux", ARCH_LABEL: arch, INSTANCE_TYPE_LABEL: machine, REGION_LABEL: region}


def zone_label_values(cloud: Cloud, region: str, zones: Sequence[str]) -> tuple[str, ...]:
    """The values of `topology.kubernetes.io/zone` on a pool's nodes: AKS writes `<region>-<zone>`
    (uksouth-1), GKE the zone's own name (us-central1-a). Empty when the cloud picks the zones."""
    return tuple(f"{region}-{zone}" for zone in zones) if cloud == "aks" else tuple(zones)


def cloud_added_labels(cloud: Cloud, pool: str, capacity: Capacity, accelerator: str | None,
                       sharing: GpuSharing | None = None) -> dict[str, str]:
    """Labels the cloud puts on the nodes by itself, which workloads may also select on. `pool` is
    the pool's name in the cloud, which the cloud writes into its node-pool label."""
    if cloud == "aks":
        labels = {AKS_AGENTPOOL_LABEL: pool}
        if capacity == "spot":
            labels[AKS_SPOT_LABEL[0]] = AKS_SPOT_LABEL[1]
        if accelerator:
            labels[AKS_ACCELERATOR_LABEL[0]] = AKS_ACCELERATOR_LABEL[1]
        return labels
    labels = {GKE_NODEPOOL_LABEL: pool}
    if capacity == "spot":
        labels[GKE_SPOT_LABEL[0]] = GKE_SPOT_LABEL[1]
    elif capacity == "preemptible":
        labels[GKE_PREEMPTIBLE_LABEL[0]] = GKE_PREEMPTIBLE_LABEL[1]
    if accelerator:
        labels[GKE_ACCELERATOR_LABEL] = accelerator
    labels.update(gke_sharing_labels(sharing))
    return labels


def mig_resource(profile: str) -> str:
    """The resource a MIG instance of `profile` is advertised as under the `mixed` strategy."""
    return f"{MIG_RESOURCE_PREFIX}{profile}"


def is_gpu_resource(name: str) -> bool:
    """Whether a container resource is a GPU or a slice of one, as the NVIDIA device plugin names them."""
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


@dataclass(frozen=True)
class GpuSharing:
    """How a pool's GPUs are shared, and what its nodes therefore advertise.

    `partition` is the MIG profile (`1g.10gb`) in MIG mode; `slices_per_gpu` is what one GPU becomes
    (MIG instances, or the clients of a time-shared or MPS GPU); `resource` is the name the device
    plugin advertises the slices under: `nvidia.com/gpu`, or `nvidia.com/mig-<profile>` with the
    `mixed` MIG strategy.
    """

    mode: SharingMode
    slices_per_gpu: int
    partition: str | None = None
    resource: str = GPU_RESOURCE

    def labels(self) -> dict[str, str]:
        """The neutral labels a pool with this sharing carries (see GPU_SHARING_LABEL)."""
        labels = {GPU_SHARING_LABEL: self.mode}
        if self.partition:
            labels[GPU_PARTITION_LABEL] = self.partition
        if self.mode != "mig":
            labels[GPU_CLIENTS_LABEL] = str(self.slices_per_gpu)
        return labels

    def text(self) -> str:
        """`MIG 1g.10gb, 7 per GPU as nvidia.com/gpu`, for the plan and the messages."""
        what = f"MIG {self.partition}" if self.mode == "mig" else self.mode
        return f"{what}, {self.slices_per_gpu} per GPU as {self.resource}"

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "partition": self.partition, "slicesPerGpu": self.slices_per_gpu,
                "resource": self.resource}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> GpuSharing:
        return GpuSharing(mode=data["mode"], slices_per_gpu=int(data["slicesPerGpu"]),
                          partition=data.get("partition"), resource=str(data.get("resource") or GPU_RESOURCE))


def gke_sharing_labels(sharing: GpuSharing | None) -> dict[str, str]:
    """The labels GKE adds to the nodes of a pool with this sharing (none without sharing)."""
    if sharing is None:
        return {}
    if sharing.mode == "mig":
        return {GKE_GPU_PARTITION_LABEL: sharing.partition or ""}
    return {GKE_GPU_SHARING_LABEL: sharing.mode, GKE_GPU_CLIENTS_LABEL: str(sharing.slices_per_gpu)}


@dataclass(frozen=True)
class PoolContract:
    """What a workload needs to know about a pool: the node labels and taints it will carry.

    `labels` holds every label the nodes will have with one value for the whole pool (declared,
    cloud-added and the kubelet's well-known ones) because placement depends on all of them; `zones`
    holds the values of `topology.kubernetes.io/zone`, which differ from node to node. `gpu_count`
    is the GPUs of one node; `sharing` says how they are shared, and with it what one node advertises
    (`advertised`), which bounds what one pod can request there.
    """

    name: str
    role: Role
    capacity: Capacity
    accelerator: str | None
    gpu_count: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    zones: tuple[str, ...] = ()
    sharing: GpuSharing | None = None

    def advertised(self) -> dict[str, int]:
        """The GPU resources one node advertises: whole GPUs, or slices of them."""
        if not self.accelerator:
            return {}
        if self.sharing is None:
            return {GPU_RESOURCE: self.gpu_count}
        return {self.sharing.resource: self.gpu_count * self.sharing.slices_per_gpu}

    def node_label_sets(self) -> list[dict[str, str]]:
        """The label sets the pool's nodes can carry: one per zone (or one, when the cloud picks)."""
        if not self.zones:
            return [dict(self.labels)]
        return [{**self.labels, ZONE_LABEL: zone} for zone in self.zones]

    def to_json(self) -> dict[str, Any]:
        """The pool contract as stack output and plan JSON (taints as `key=value:Effect`)."""
        return {
            "name": self.name,
            "role": self.role,
            "capacity": self.capacity,
            "gpu": self._gpu_json() if self.accelerator else None,
            "labels": dict(sorted(self.labels.items())),
            "zones": list(self.zones),
            "taints": [str(t) for t in self.taints],
        }

    def _gpu_json(self) -> dict[str, Any]:
        gpu: dict[str, Any] = {"type": self.accelerator, "count": self.gpu_count}
        if self.sharing is not None:
            gpu["sharing"] = self.sharing.to_json()
        return gpu

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> PoolContract:
        """Read a pool back from `spotkube plan --format json` or the `poolContracts` output."""
        gpu = data.get("gpu") or {}
        sharing = gpu.get("sharing")
        return PoolContract(
            name=data["name"],
            role=data["role"],
            capacity=data["capacity"],
            accelerator=gpu.get("type"),
            gpu_count=int(gpu.get("count") or 0),
            labels=dict(data.get("labels") or {}),
            taints=tuple(Taint.parse(t) for t in data.get("taints") or ()),
            zones=tuple(str(z) for z in data.get("zones") or ()),
            sharing=GpuSharing.from_json(sharing) if sharing else None,
        )


# --- The workload side: tolerations and node affinity -------------------------------------------


@dataclass(frozen=True)
class Toleration:
    """A pod toleration with the Kubernetes defaults: operator Equal, any effect."""

    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """The Kubernetes rule: an empty key with Exists matches every taint; an empty effect
        matches every effect; Equal compares values, Exists ignores them."""
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value

    def to_k8s(self) -> dict[str, str]:
        out = {"key": self.key, "operator": self.operator}
        if self.operator == "Equal":
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return {k: v for k, v in out.items() if v or k == "operator"}

    @staticmethod
    def from_k8s(data: Mapping[str, Any]) -> Toleration:
        return Toleration(
            key=data.get("key") or "",
            operator=data.get("operator") or "Equal",
            value=str(data.get("value") or ""),
            effect=data.get("effect") or "",
        )

    @staticmethod
    def for_taint(taint: Taint) -> Toleration:
        return Toleration(taint.key, "Equal", taint.value, taint.effect)


@dataclass(frozen=True)
class Requirement:
    """One node selector requirement (`matchExpressions` item)."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if not present or not self.values:
            return False
        try:
            node_number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return node_number > bound if self.operator == "Gt" else node_number < bound

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"

    def to_k8s(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out

    @staticmethod
    def from_k8s(data: Mapping[str, Any]) -> Requirement:
        return Requirement(data["key"], data["operator"], tuple(str(v) for v in data.get("values") or ()))


#: A node selector term: requirements that must all hold (an AND); terms are OR'ed.
Term = tuple[Requirement, ...]


@dataclass(frozen=True)
class Placement:
    """The scheduling-relevant part of a pod spec, read from or written into Kubernetes form.

    `unsupported` records constraints the matcher cannot judge from pool labels (such as
    `matchFields` on node names); a pod with any of them is reported as landing nowhere rather than
    guessed at. `required` is None when the pod has no required node affinity; an empty tuple is a
    required affinity without terms, which Kubernetes matches to no node.
    """

    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required: tuple[Term, ...] | None = None
    preferred: tuple[tuple[int, Term], ...] = ()
    gpus: int = 0
    unsupported: tuple[str, ...] = ()
    #: The resource the GPUs are requested as: `nvidia.com/gpu`, or a MIG profile's own resource.
    gpu_resource: str = GPU_RESOURCE

    def affinity_k8s(self) -> dict[str, Any]:
        """`spec.affinity` for a pod template (empty when there is nothing to say)."""
        node_affinity: dict[str, Any] = {}
        if self.required is not None:
            node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [
                    {"matchExpressions": [r.to_k8s() for r in term]} for term in self.required
                ]
            }
        if self.preferred:
            node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": weight, "preference": {"matchExpressions": [r.to_k8s() for r in term]}}
                for weight, term in self.preferred
            ]
        return {"nodeAffinity": node_affinity} if node_affinity else {}

    def tolerations_k8s(self) -> list[dict[str, str]]:
        return [t.to_k8s() for t in self.tolerations]

    @staticmethod
    def from_pod_spec(spec: Mapping[str, Any]) -> Placement:
        """Read a Kubernetes pod spec (camelCase, as applied) into a Placement."""
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        required_block = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        unsupported: list[str] = []
        required: list[Term] = []
        for term in (required_block or {}).get("nodeSelectorTerms") or ():
            if term.get("matchFields"):
                unsupported.append("a required node affinity term uses matchFields (node names)")
            required.append(tuple(Requirement.from_k8s(e) for e in term.get("matchExpressions") or ()))
        preferred = tuple(
            (int(p.get("weight", 1)), tuple(
                Requirement.from_k8s(e) for e in (p.get("preference") or {}).get("matchExpressions") or ()
            ))
            for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        )
        gpus, gpu_resource = 0, GPU_RESOURCE
        for container in spec.get("containers") or ():
            resources = container.get("resources") or {}
            asked = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
            for name, amount in asked.items():
                if is_gpu_resource(str(name)) and int(amount or 0) > gpus:
                    gpus, gpu_resource = int(amount), str(name)
        return Placement(
            tolerations=tuple(Toleration.from_k8s(t) for t in spec.get("tolerations") or ()),
            node_selector=dict(spec.get("nodeSelector") or {}),
            required=None if required_block is None else tuple(required),
            preferred=preferred,
            gpus=gpus,
            unsupported=tuple(unsupported),
            gpu_resource=gpu_resource,
        )


def tolerate_interruptible() -> tuple[Toleration, ...]:
    """Tolerations for spot and preemptible nodes of both clouds."""
    return tuple(Toleration.for_taint(t) for t in INTERRUPTIBLE_TAINTS)


#: Every spotkube GPU placement tolerates the compute class taint of GKE GPU pools, whatever the
#: class: the placement's node affinity already picks the GPU type, and on AKS, where no pool carries
#: the taint, a toleration changes nothing.
TOLERATE_COMPUTE_CLASS = Toleration(COMPUTE_CLASS_LABEL, "Exists", effect="NoSchedule")


def tolerate_gpu_pools() -> tuple[Toleration, ...]:
    """Tolerations for every spotkube GPU pool: spot and preemptible capacity of both clouds, the GPU
    taint and GKE's compute class taint."""
    return (*tolerate_interruptible(), Toleration.for_taint(GPU_TAINT), TOLERATE_COMPUTE_CLASS)


#: Keeps a workload off the system pool on both clouds, whatever the system pool's taint says (a stack
#: may turn its taint off): pipeline steps, Kubeflow and node agents of spotkube's add-ons require it.
NOT_SYSTEM = Requirement(ROLE_LABEL, "NotIn", ("system",))
#: What a GPU step that asked for whole GPUs requires: a pool that shares none.
WHOLE_GPUS = Requirement(GPU_SHARING_LABEL, "DoesNotExist")


@dataclass(frozen=True)
class SharedGpu:
    """A step's request for a slice of a GPU: a MIG instance of a profile, or a time-shared or MPS GPU
    (optionally with a given number of clients per GPU). `mig_strategy` says how the cluster's device
    plugin advertises MIG instances, which decides the resource the step requests."""

    mode: SharingMode
    partition: str | None = None
    clients_per_gpu: int | None = None
    mig_strategy: MigStrategy = "single"

    def requirements(self) -> Term:
        reqs = [Requirement(GPU_SHARING_LABEL, "In", (self.mode,))]
        if self.partition:
            reqs.append(Requirement(GPU_PARTITION_LABEL, "In", (self.partition,)))
        if self.clients_per_gpu:
            reqs.append(Requirement(GPU_CLIENTS_LABEL, "In", (str(self.clients_per_gpu),)))
        return tuple(reqs)

    @property
    def resource(self) -> str:
        if self.mode == "mig" and self.partition and self.mig_strategy == "mixed":
            return mig_resource(self.partition)
        return GPU_RESOURCE


def spot_gpu(
    gpu_type: str | Sequence[str] | None = None,
    *,
    pool: str | None = None,
    gpus: int = 1,
    fallback_to_on_demand: bool = False,
    spot_preference_weight: int = 100,
    shared: SharedGpu | None = None,
) -> Placement:
    """Run on an interruptible GPU pool: by GPU type, or by pool name.

    With `fallback_to_on_demand`, spot is preferred and an on-demand GPU pool of the same type is
    accepted when spot capacity is gone; otherwise spot or preemptible capacity is required.

    The fallback also selects the GPU type's compute class with a nodeSelector, the one way GKE
    lets a pod select a class: GKE then tries the class's spot pools first and grows an on-demand
    pool only when spot can't be had. Every spotkube GPU pool carries the class label on both
    clouds, so the same pod spec still lands on AKS, where the priority expander orders the pools.

    Without `shared` the step gets whole GPUs, on pools that share none; with it, `gpus` slices of a
    pool that shares its GPUs that way (docs/gpu-sharing.md). Several GPU types (a sequence) accept
    any of them, for a step that runs on whichever a stack has; the fallback, which selects one GPU
    type's compute class, takes one.
    """
    if (gpu_type is None) == (pool is None):
        raise ValueError("name exactly one target: a GPU type or a pool")
    types = (gpu_type,) if isinstance(gpu_type, str) else tuple(gpu_type or ())
    if gpu_type is not None and not types:
        raise ValueError("name at least one GPU type")
    if fallback_to_on_demand and len(types) > 1:
        raise ValueError("fallback_to_on_demand selects one GPU type's compute class; name one GPU type")
    target = (Requirement(ACCELERATOR_LABEL, "In", types) if types
              else Requirement(POOL_LABEL, "In", (pool,)))  # type: ignore[arg-type]
    spot = Requirement(CAPACITY_LABEL, "In", INTERRUPTIBLE)
    sharing: Term = shared.requirements() if shared else (WHOLE_GPUS,)
    selector: dict[str, str] = {}
    if fallback_to_on_demand:
        required: Term = (target, Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)), *sharing)
        preferred: tuple[tuple[int, Term], ...] = ((spot_preference_weight, (spot,)),)
        if types:
            selector[COMPUTE_CLASS_LABEL] = compute_class(types[0])
    else:
        required = (target, spot, Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)), *sharing)
        preferred = ()
    return Placement(
        tolerations=tolerate_gpu_pools(),
        node_selector=selector,
        required=(required,),
        preferred=preferred,
        gpus=gpus,
        gpu_resource=shared.resource if shared else GPU_RESOURCE,
    )


def spot_cpu(
    *, pool: str | None = None, fallback_to_on_demand: bool = True, spot_preference_weight: int = 100
) -> Placement:
    """Run a CPU step on interruptible nodes without GPUs (preprocessing, downloads); `pool` pins
    it to one named pool, such as a stack's spot CPU pool. Never the system pool, even untainted."""
    no_gpu: Term = (Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)), NOT_SYSTEM)
    if pool is not None:
        no_gpu = (*no_gpu, Requirement(POOL_LABEL, "In", (pool,)))
    spot = Requirement(CAPACITY_LABEL, "In", INTERRUPTIBLE)
    if fallback_to_on_demand:
        return Placement(tolerations=tolerate_interruptible(), required=(no_gpu,),
                         preferred=((spot_preference_weight, (spot,)),))
    return Placement(tolerations=tolerate_interruptible(), required=((*no_gpu, spot),))


def on_demand_only() -> Placement:
    """Stay on on-demand nodes without GPUs and off the system pool: steps that must not be
    interrupted, notebooks, datastores, serving."""
    return Placement(required=((
        Requirement(CAPACITY_LABEL, "In", ("on-demand",)),
        Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)),
        NOT_SYSTEM,
    ),))


def pipeline_pod_default() -> Placement:
    """What every pipeline pod gets from Argo's workflow defaults unless its own step says where it
    goes: stay off the system pool. KFP's driver pods and steps without a placement would otherwise
    land on an untainted system pool (a stack may turn its taint off); a step with its own required
    node affinity replaces this one, which is why every spotkube placement says it too."""
    return Placement(required=((NOT_SYSTEM,),))


def on_platform_pool() -> Placement:
    """Only the platform pool: the on-demand, GPU-free pool kept for platform control planes such as
    Kubeflow Pipelines. Selecting the role (not just "on-demand, no GPU") keeps them off the system
    pool too, which on GKE is untainted and would otherwise attract them."""
    return Placement(required=((
        Requirement(ROLE_LABEL, "In", ("platform",)),
        Requirement(CAPACITY_LABEL, "In", ("on-demand",)),
        Requirement(ACCELERATOR_LABEL, "In", (NO_ACCELERATOR,)),
    ),))


def on_any_gpu_pool() -> Placement:
    """Every GPU pool whatever its capacity, and no other: node agents such as the device plugin."""
    return Placement(
        tolerations=tolerate_gpu_pools(),
        required=((Requirement(ACCELERATOR_LABEL, "NotIn", (NO_ACCELERATOR,)),
                   Requirement(ACCELERATOR_LABEL, "Exists")),),
    )


def constrain_pod_spec(pod_spec: Mapping[str, Any], placement: Placement) -> dict[str, Any]:
    """A copy of a Kubernetes pod spec that also obeys `placement`, keeping what it already says.

    Required node affinity is ANDed in: every existing nodeSelectorTerm gains the placement's
    requirements, because Kubernetes ORs terms, so appending a term would widen where the pod may
    go instead of narrowing it. Tolerations and preferred terms are added to, the nodeSelector is
    merged, and everything else (pod affinity, anti-affinity) stays as it was.
    """
    spec = {**pod_spec}
    affinity = {**(spec.get("affinity") or {})}
    node_affinity = {**(affinity.get("nodeAffinity") or {})}
    if placement.required:
        block = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        terms = []
        for term in block.get("nodeSelectorTerms") or [{}]:
            for extra in placement.required:
                expressions = list(term.get("matchExpressions") or ())
                expressions += [r.to_k8s() for r in extra if r.to_k8s() not in expressions]
                terms.append({**term, "matchExpressions": expressions})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {**block, "nodeSelectorTerms": terms}
    if placement.preferred:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            *(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()),
            *placement.affinity_k8s()["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
        ]
    if node_affinity:
        spec["affinity"] = {**affinity, "nodeAffinity": node_affinity}
    tolerations = list(spec.get("tolerations") or ())
    tolerations += [t for t in placement.tolerations_k8s() if t not in tolerations]
    if tolerations:
        spec["tolerations"] = tolerations
    if placement.node_selector:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **placement.node_selector}
    return spec


def gke_default_device_plugin_serves(labels: Mapping[str, str]) -> bool:
    """Whether GKE's own NVIDIA device plugin runs on a node with these labels: every GPU node,
    unless the pool opted out with the label that makes room for NVIDIA's upstream plugin."""
    key, value = GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL
    return GKE_ACCELERATOR_LABEL in labels and labels.get(key) != value


# --- The matcher ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether a pod can land on a pool, and if not the first reason why (for error messages).

    `preference` is the weight of the preferred node affinity terms a node matches;
    `intolerable_soft_taints` counts the PreferNoSchedule taints the pod does not tolerate. The
    scheduler scores nodes on both (see `landing_pools`).
    """

    pool: str
    fits: bool
    reason: str = ""
    preference: int = 0
    intolerable_soft_taints: int = 0


def _judge_labels(placement: Placement, pool: PoolContract, labels: Mapping[str, str]) -> Verdict:
    """The label part of `judge` for one of the pool's label sets (one zone's nodes)."""
    for key, value in placement.node_selector.items():
        if labels.get(key) != value:
            return Verdict(pool.name, False, f"nodeSelector {key}={value} does not match")
    if placement.required is not None and not any(
        term and all(r.matches(labels) for r in term) for term in placement.required
    ):
        if not placement.required:
            return Verdict(pool.name, False, "required node affinity has no terms, which matches no node")
        unmet = next((r for term in placement.required for r in term if not r.matches(labels)), None)
        detail = f" ({unmet})" if unmet else ""
        return Verdict(pool.name, False, f"required node affinity does not match{detail}")
    preference = sum(w for w, term in placement.preferred if all(r.matches(labels) for r in term))
    return Verdict(pool.name, True, preference=preference)


def judge(placement: Placement, pool: PoolContract) -> Verdict:
    """Apply the Kubernetes scheduling rules that depend on node labels and taints.

    Taints with NoSchedule or NoExecute must each be tolerated, while PreferNoSchedule ones only
    count against the pool; the nodeSelector must match exactly; at least one required node
    selector term must match; preferred terms only add weight. A pool spread over zones fits when
    the nodes of one of its zones fit. GPU requests must fit the pool's GPUs per node.

    A pod whose nodeSelector picks a compute class also tolerates that class's taint: GKE's
    admission adds the toleration to such pods. Only GKE pools carry the taint, so this models GKE
    and changes nothing elsewhere.
    """
    for reason in placement.unsupported:
        return Verdict(pool.name, False, reason)
    selected_class = placement.node_selector.get(COMPUTE_CLASS_LABEL)
    soft = 0
    for taint in pool.taints:
        if any(t.tolerates(taint) for t in placement.tolerations):
            continue
        if taint.key == COMPUTE_CLASS_LABEL and taint.value == selected_class:
            continue
        if taint.effect == "PreferNoSchedule":
            soft += 1
            continue
        return Verdict(pool.name, False, f"does not tolerate taint {taint}")
    verdicts = [_judge_labels(placement, pool, labels) for labels in pool.node_label_sets()]
    fitting = [v for v in verdicts if v.fits]
    if not fitting:
        return verdicts[0]
    have = pool.advertised().get(placement.gpu_resource, 0)
    if placement.gpus > have:
        if not pool.accelerator:
            offer = "no GPU"
        elif pool.sharing is None:
            offer = f"{pool.gpu_count} × {pool.accelerator}"
        else:
            offer = f"{pool.gpu_count} × {pool.accelerator} shared ({pool.sharing.text()})"
        return Verdict(pool.name, False, f"requests {placement.gpus} {placement.gpu_resource}; a node has {offer}")
    preference = max(v.preference for v in fitting)
    return Verdict(pool.name, True, preference=preference, intolerable_soft_taints=soft)


#: kube-scheduler's default weights of the two score plugins that depend on pool labels and taints
#: (pkg/scheduler/apis/config/v1/default_plugins.go): NodeAffinity 2, TaintToleration 3.
NODE_AFFINITY_WEIGHT = 2
TAINT_TOLERATION_WEIGHT = 3
MAX_NODE_SCORE = 100


def _scores(verdicts: Sequence[Verdict]) -> dict[str, float]:
    """The scheduler's combined score per fitting pool: each plugin's raw score normalised to
    0..100 over the candidates (TaintToleration reversed, fewer intolerable taints is better),
    then weighted and summed, as kube-scheduler's DefaultNormalizeScore does."""
    most_preferred = max((v.preference for v in verdicts), default=0)
    most_soft = max((v.intolerable_soft_taints for v in verdicts), default=0)
    scores = {}
    for v in verdicts:
        affinity = MAX_NODE_SCORE * v.preference / most_preferred if most_preferred else 0
        taints = MAX_NODE_SCORE * (1 - v.intolerable_soft_taints / most_soft) if most_soft else MAX_NODE_SCORE
        scores[v.pool] = NODE_AFFINITY_WEIGHT * affinity + TAINT_TOLERATION_WEIGHT * taints
    return scores


def landing_pools(placement: Placement, pools: Sequence[PoolContract]) -> list[str]:
    """The pools a pod can land on, the scheduler's favourite first (ties keep the pools' order)."""
    fitting = [v for v in (judge(placement, pool) for pool in pools) if v.fits]
    scores = _scores(fitting)
    return [v.pool for v in sorted(fitting, key=lambda v: -scores[v.pool])]


def why_nowhere(placement: Placement, pools: Sequence[PoolContract]) -> str:
    """One line per pool saying why the pod cannot land there."""
    return "; ".join(f"{v.pool}: {v.reason}" for v in (judge(placement, p) for p in pools) if not v.fits)
