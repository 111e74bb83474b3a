"""The pool side of the scheduling contract: every label and taint key, and what each pool carries.

Each cloud's own keys are data (`clouds/<cloud>/labels.py`), so the functions here read facts instead
of testing a cloud's name. Why each label and taint exists: docs/architecture.md#the-scheduling-contract;
the clouds' own, with sources: docs/platform-facts.md#aks-spot-pools and
docs/platform-facts.md#gke-spot-and-preemptible-nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Literal

from spotkube.platform.input_messages import shown
from spotkube.platform.kubernetes_syntax import TAINT_EFFECTS, key_problem, reserved_prefix, value_problem
from spotkube.platform.records import record

Capacity = Literal["spot", "preemptible", "flex-start", "on-demand"]
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
#: The middle tier: VMs the cloud's capacity scheduler provisions when it can, at a discount, for a bounded
#: run, and never takes back before it ends (GKE's flex-start). Not interruptible, so no spot taint.
FLEX_START: Capacity = "flex-start"

#: The GPU resource name the NVIDIA device plugin advertises: a whole GPU, or with GPU sharing one
#: slice of it (a MIG instance under the `single` strategy, or one client's share of a time-shared or
#: MPS GPU on GKE).
GPU_RESOURCE = "nvidia.com/gpu"
#: The pod annotation with which `on_spot(..., failures=N)` states how often a step may be retried after
#: failing on its own; `spotkube pipeline-check` compares it with the stack's failure retries.
FAILURE_RETRIES_ANNOTATION = f"{LABEL_PREFIX}/failure-retries"
#: What Argo Workflows puts on every pod it runs (argo-workflows v4.0.5 workflow/common/common.go): the
#: workflow's name, and the workflow node the pod is an attempt of; the drill follows a step's retries by them.
ARGO_WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
ARGO_NODE_NAME_ANNOTATION = "workflows.argoproj.io/node-name"
#: The label KFP's API server puts on every pod of a run (backend/src/common/util, LabelKeyWorkflowRunId);
#: `spotkube logs --run` finds a run's pods by it.
KFP_RUN_ID_LABEL = "pipeline/runid"
#: The pod label with which a step asks Kueue for admission (Kueue's `constants.QueueLabel`): Kueue's pod
#: integration gates a pod that carries it until the named LocalQueue of its namespace admits it, and
#: leaves pods without it alone. Its value is the LocalQueue spotkube's Kueue preset creates.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_LOCAL_QUEUE = "spot-gpus"
#: With the NVIDIA device plugin's `mixed` MIG strategy each MIG profile is a resource of its own:
#: `nvidia.com/mig-1g.10gb` (docs/gpu-sharing.md).
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"

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


@dataclass(frozen=True, order=True)
class Taint:
    """A node taint, written the Kubernetes way (each cloud's resources spell it their own way)."""

    key: str
    value: str
    effect: Effect = "NoSchedule"

    def __str__(self) -> str:
        """`key=value:Effect`, the AKS `nodeTaints` format and the plan's display format."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

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


# --- The pool side: taints and labels ------------------------------------------------------------

#: Every GPU pool carries it, so that only pods that ask for GPUs land on expensive nodes. GKE adds
#: it only when a non-GPU pool exists and AKS never does, so we always declare it ourselves.
GPU_TAINT = Taint("nvidia.com/gpu", "present")
#: The GPU compute class: how a GPU step gets spot first and on-demand only as a fallback
#: (docs/architecture.md#spot-first-on-demand-as-fallback). Every GPU pool, on both clouds, carries
#: `cloud.google.com/compute-class=spotkube-<GPU type>`: on GKE the label (and taint) of a ComputeClass
#: that lists the type's spot pools first; on AKS inert, so that a pipeline compiled once, whose fallback
#: steps select the class, lands on both clouds (docs/platform-facts.md#gke-compute-classes).
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


@record
class CloudLabels:
    """What one cloud does with node labels and taints by itself (`clouds/<cloud>/labels.py`)."""

    #: The prefix of the cloud's own labels and taints, which a stack's labels and taints may not use.
    prefix: str
    #: The taint that keeps ordinary pods off a pool of each interruptible capacity: the cloud's own
    #: (which a pool repeats), or spotkube's where the cloud labels such nodes without tainting them.
    interruptible_taints: Mapping[Capacity, Taint]
    #: The label the cloud puts on the nodes of each interruptible capacity.
    interruptible_labels: Mapping[Capacity, tuple[str, str]]
    #: Of those, the labels a pool's inputs repeat, where the cloud would otherwise show a diff forever.
    declared_labels: Mapping[Capacity, tuple[str, str]]
    #: The label whose value is the pool's name in the cloud.
    node_pool_label: str
    #: The label the cloud puts on GPU nodes, and its value (None: the GPU type, in spotkube's names).
    accelerator_label: tuple[str, str | None]
    #: The zone label's value for a zone of a region, as `str.format` fields {region} and {zone}.
    zone_label: str
    #: GPU pools also carry their compute class's taint, the cloud's way to join a pool to the class.
    compute_class_taint: bool
    #: The taint that keeps the system pool for the cluster's own add-ons, one the cloud's own system
    #: pods tolerate.
    system_taint: Taint
    #: The labels the cloud puts on nodes whose GPUs are shared (partition, strategy, clients per GPU);
    #: None where it puts none.
    gpu_sharing_labels: tuple[str, str, str] | None = None
    #: The label the cloud puts on the nodes of a capacity that is not interruptible but provisioned its own
    #: way (GKE's flex-start); empty where the cloud has none.
    provisioned_labels: Mapping[Capacity, tuple[str, str]] = field(default_factory=dict)


#: Each registered cloud's labels and taints, by the cloud's name, entered by the registry as it loads.
CLOUD_LABELS: dict[str, CloudLabels] = {}


def _rows() -> Mapping[str, CloudLabels]:
    """The registered clouds' rows. A program that imports only the contract (a pipeline author's) has this
    load the registry, by name, so its placements still tolerate every cloud's taints: the one way up from
    the platform to `spotkube.clouds`, on purpose, and it names no cloud."""
    if not CLOUD_LABELS:
        import_module("spotkube.clouds")
    return CLOUD_LABELS


def cloud_labels(cloud: str) -> CloudLabels:
    """A registered cloud's row."""
    found = _rows().get(cloud)
    if found is None:
        raise LookupError(f"{cloud!r} is not a registered cloud; registered: {', '.join(_rows())}")
    return found


def interruptible_taints() -> tuple[Taint, ...]:
    """Every taint that marks interruptible capacity, on any registered cloud. A workload that tolerates
    all of them can be compiled once and still land on spot nodes of every cloud."""
    return tuple(dict.fromkeys(taint for row in _rows().values() for taint in row.interruptible_taints.values()))


def reserved_label_prefix(cloud: str, key: str) -> str | None:
    """The reserved prefix a stack's node label would use, or None."""
    if reserved_prefix(key, KUBELET_LABEL_PREFIXES):
        return None
    return reserved_prefix(key, (LABEL_PREFIX, *KUBERNETES_LABEL_PREFIXES, cloud_labels(cloud).prefix))


def reserved_taint_prefix(cloud: str, key: str) -> str | None:
    """The reserved prefix a stack's own taint would use: spotkube's and the cloud's, whose taints
    (spot, GPU) spotkube and the cloud set themselves."""
    return reserved_prefix(key, (LABEL_PREFIX, cloud_labels(cloud).prefix))


def interruptible_taint(cloud: str, capacity: Capacity) -> Taint | None:
    """The taint that keeps ordinary pods off a pool of interruptible capacity, if any."""
    return cloud_labels(cloud).interruptible_taints.get(capacity)


def compute_class(gpu_type: str) -> str:
    """The compute class of a GPU type's pools: `spotkube-nvidia-l4`. GPU type names are lower-case
    words and hyphens, so the class is a valid object name and label value."""
    return f"{COMPUTE_CLASS_PREFIX}{gpu_type}"


def compute_class_taint(gpu_type: str) -> Taint:
    """The taint that joins a GKE pool to its GPU type's compute class."""
    return Taint(COMPUTE_CLASS_LABEL, compute_class(gpu_type))


def pool_taints(
    cloud: str,
    role: Role,
    capacity: Capacity,
    *,
    has_gpu: bool,
    system_critical_only: bool = False,
    extra: Iterable[Taint] = (),
    accelerator: str | None = None,
    in_class: bool = True,
) -> tuple[Taint, ...]:
    """All taints a pool must declare: interruptible capacity, GPU, the GPU's compute class where the
    cloud joins pools to classes by taint (unless the pool stays out of its class, `in_class`), then the
    user's own."""
    taints: list[Taint] = []
    if role == "system" and system_critical_only:
        taints.append(cloud_labels(cloud).system_taint)
    spot_taint = interruptible_taint(cloud, capacity)
    if spot_taint:
        taints.append(spot_taint)
    if has_gpu:
        taints.append(GPU_TAINT)
    if has_gpu and accelerator and in_class and cloud_labels(cloud).compute_class_taint:
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
    cloud: str, pool: str, role: Role, capacity: Capacity, accelerator: str | None,
    extra: Mapping[str, str] | None = None, sharing: GpuSharing | None = None, in_class: bool = True,
) -> dict[str, str]:
    """The labels a pool's inputs declare: neutral ones, the cloud's capacity label where the pool
    repeats it (AKS's spot label), a GPU pool's compute class (unless it stays out of its class,
    `in_class`: a pool whose nodes come only through provisioning requests), then the user's own.

    The user's labels cannot override ours: a pool whose capacity label lied would defeat the
    whole contract, and one whose class label lied would skip the spot-first order.
    """
    labels = dict(extra or {})
    if capacity in cloud_labels(cloud).declared_labels:
        key, value = cloud_labels(cloud).declared_labels[capacity]
        labels[key] = value
    if accelerator and in_class:
        labels[COMPUTE_CLASS_LABEL] = compute_class(accelerator)
    if sharing is not None:
        labels.update(sharing.labels())
    labels.update(neutral_labels(pool, role, capacity, accelerator))
    return labels


def well_known_labels(machine: str, arch: str, region: str) -> dict[str, str]:
    """The kubelet's and the cloud's labels that are the same on every node of a pool."""
    return {OS_LABEL: "linux", ARCH_LABEL: arch, INSTANCE_TYPE_LABEL: machine, REGION_LABEL: region}


def zone_label_values(cloud: str, region: str, zones: Sequence[str]) -> tuple[str, ...]:
    """The values of `topology.kubernetes.io/zone` on a pool's nodes, as the cloud spells them: AKS
    writes `<region>-<zone>` (uksouth-1), GKE the zone's own name (us-central1-a). Empty when the cloud
    picks the zones."""
    return tuple(cloud_labels(cloud).zone_label.format(region=region, zone=zone) for zone in zones)


def cloud_added_labels(cloud: str, pool: str, capacity: Capacity, accelerator: str | None,
                       sharing: GpuSharing | None = None) -> dict[str, str]:
    """Labels the cloud puts on the nodes by itself, which workloads may also select on. `pool` is
    the pool's name in the cloud, which the cloud writes into its node-pool label."""
    facts = cloud_labels(cloud)
    labels = {facts.node_pool_label: pool}
    capacity_label = facts.interruptible_labels.get(capacity) or facts.provisioned_labels.get(capacity)
    if capacity_label:
        key, value = capacity_label
        labels[key] = value
    if accelerator:
        key, fixed = facts.accelerator_label
        labels[key] = fixed or accelerator
    if sharing is not None and facts.gpu_sharing_labels is not None:
        partition, strategy, clients = facts.gpu_sharing_labels
        if sharing.mode == "mig":
            labels[partition] = sharing.partition or ""
        else:
            labels[strategy] = sharing.mode
            labels[clients] = str(sharing.slices_per_gpu)
    return labels


def mig_resource(profile: str) -> str:
    """The resource a MIG instance of `profile` is advertised as under the `mixed` strategy."""
    return f"{MIG_RESOURCE_PREFIX}{profile}"


def is_gpu_resource(name: str) -> bool:
    """Whether a container resource is a GPU or a slice of one, as the NVIDIA device plugin names them."""
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


@record
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


@record
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
