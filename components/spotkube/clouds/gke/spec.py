"""A GKE platform's spec: the shared models of `spotkube.platform.spec` with GKE's own fields.

An AKS stack is never offered these keys, and one that sets them is told they are GKE's; the stack keys,
component args and reference tables of GKE are generated from these models. Pure module: no Pulumi.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, Strict, model_validator

from spotkube.platform.spec import (
    ENVIRONMENT_PATTERN,
    REGION_PATTERN,
    AutoscalerSettings,
    CapacityName,
    ClusterLogs,
    ClusterSettings,
    DeployerSettings,
    Flag,
    GpuPool,
    GpuSharingSpec,
    GpuSpec,
    PlatformPool,
    PlatformSpec,
    PoolUpgrade,
    RequiredArg,
    SpotPool,
    SystemPool,
    Text,
    Whole,
    Wired,
    _Model,
    _whole_number,
)

POOL_NAME = "`[a-z]([-a-z0-9]{0,38}[a-z0-9])?`"
ZONES = "Zones of the region, e.g. us-central1-a; empty = regional."


class GkeSystemPool(SystemPool):
    """The on-demand pool that runs the cluster's own add-ons."""

    name: Text = Field(
        default="system",
        description="Pool name; never rename it once the cluster exists. At most 33 characters (spotkube adds 7 "
        "when the pool must be replaced).",
    )
    machine: Text | None = Field(
        default=None, description="Machine type; unset = the default machine."
    )
    zones: tuple[Text, ...] = Field(default=(), description=ZONES)
    critical_addons_only: Flag = Field(
        default=True,
        description="Taint the pool components.gke.io/gke-managed-components=true:NoSchedule, which GKE's own system "
        "pods tolerate, so only they run here. Needs the platform pool.",
    )

    def critical_addons_only_taint(self) -> bool:
        return self.critical_addons_only


class GkePlatformPool(PlatformPool):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    name: Text = Field(
        default="platform",
        description="Pool name: at most 33 characters, because spotkube adds 7 that change when the pool must be "
        "replaced.",
    )
    machine: Text | None = Field(
        default=None, description="Machine type; unset = the default machine."
    )
    zones: tuple[Text, ...] = Field(default=(), description=ZONES)


class GkePoolUpgrade(PoolUpgrade):
    """How GKE replaces the pool's nodes when it upgrades them (the NodePool's `upgrade_settings`).
    Unset on a GPU pool: a surge upgrade of one node at a time, none unavailable. GKE drains each node,
    waiting up to an hour for pod disruption budgets."""

    strategy: Literal["surge", "blue-green"] | None = Field(
        default=None,
        description="`surge` (a few nodes at a time) or `blue-green` (a whole new set of nodes, then the old ones "
        "drained; needs twice the GPU quota).",
    )
    max_surge: Whole | None = Field(  # type: ignore[assignment]  # GKE takes a number of nodes, no percentage
        default=None, ge=0, le=100,
        description="Surge: extra nodes added while the pool is upgraded; GPU pools default to 1.",
    )
    max_unavailable: Whole | None = Field(  # type: ignore[assignment]
        default=None, ge=0, le=100,
        description="Surge: nodes that may be down at once; GPU pools default to 0.",
    )
    soak_minutes: Whole | None = Field(
        default=None, ge=0, le=10080,
        description="Blue-green: minutes the old nodes are kept after the new ones took the pods, for a rollback.",
    )


class GkeSpotPool(SpotPool):
    """A CPU pool on spot or preemptible VMs that scales 0..N, for batch steps without GPUs."""

    name: Text = Field(description=f"Pool name, unique in the stack: {POOL_NAME}.")
    machine: Text = Field(
        min_length=1,
        description="Machine type, e.g. e2-standard-8.",
    )
    zones: tuple[Text, ...] = Field(
        default=(),
        description="Zones of the region. Empty = regional, except a GPU pool, which gets every zone of the region "
        "that offers its GPU (from the bundled zone table).",
    )
    capacity: CapacityName = Field(
        default="spot",
        description="`spot`, `preemptible` (at most 24 hours per VM) or, for a GPU pool only, `flex-start` (Dynamic "
        "Workload Scheduler: discounted, provisioned when capacity is free, at most 7 days per VM; the tier between "
        "spot and on-demand) or `on-demand` (a fallback pool).",
    )
    upgrade: GkePoolUpgrade = Field(
        default_factory=GkePoolUpgrade, description="How GKE replaces the nodes when it upgrades them.",
    )


class GkeGpuSharing(GpuSharingSpec):
    """How a GKE GPU pool shares its GPUs: MIG partitions (gpu_partition_size), or time-sharing or
    NVIDIA MPS with a number of clients per GPU (gpu_sharing_config)."""

    mig: Text | None = Field(
        default=None,
        description="MIG profile every GPU of the pool is split into, in NVIDIA's names (`1g.10gb`, `3g.40gb`): GKE's "
        "gpu_partition_size. Only GPUs with MIG (A100, H100, H200, B200) and the partition sizes GKE offers for them.",
    )
    strategy: Literal["time-sharing", "mps"] | None = Field(
        default=None, description="Share each GPU among `clientsPerGpu` pods by time-sharing or NVIDIA MPS."
    )
    clients_per_gpu: Annotated[int, Field(ge=2, le=48), Strict(), BeforeValidator(_whole_number)] | None = Field(
        default=None, description="With `strategy`: pods per GPU, 2..48 (max_shared_clients_per_gpu)."
    )

    @model_validator(mode="after")
    def _one_way(self) -> GkeGpuSharing:
        if self.mig is not None and self.strategy is not None:
            raise ValueError("mig and strategy are two ways to share a GPU; set one of them")
        if self.mig is None and self.strategy is None:
            raise ValueError("says no way to share; set mig (a MIG profile such as 1g.10gb) or strategy "
                             "(time-sharing or mps) with clientsPerGpu")
        if (self.strategy is None) != (self.clients_per_gpu is None):
            raise ValueError("strategy and clientsPerGpu go together: e.g. strategy: time-sharing, clientsPerGpu: 4")
        return self

    def time_shared(self) -> tuple[str, int] | None:
        if self.strategy is None or self.clients_per_gpu is None:
            return None
        return self.strategy, self.clients_per_gpu


class GkeSecondaryBootDisk(_Model):
    """A disk image of preloaded container images that every new node of the pool gets as a second boot
    disk (the NodePool's `secondary_boot_disks`), so its steps start without pulling them."""

    disk_image: Text = Field(
        description="The Compute Engine image: `projects/PROJECT/global/images/NAME`, or `global/images/NAME` in the "
        "cluster's project (built with gke-disk-image-builder: "
        "docs/operators.md#building-a-disk-image-of-preloaded-images).",
    )
    mode: Literal["CONTAINER_IMAGE_CACHE"] = Field(
        default="CONTAINER_IMAGE_CACHE",
        description="`CONTAINER_IMAGE_CACHE`: containerd reads the disk's images instead of pulling them; needs "
        "`imageStreaming`.",
    )


class GkeGpuPool(GkeSpotPool, GpuPool):
    """A GPU pool that scales 0..N, on spot, preemptible, flex-start or on-demand VMs."""

    machine: Text = Field(
        min_length=1,
        description="Machine type with GPUs (a2, a3, g2: e.g. g2-standard-8) or an N1 type with `gpu` (e.g. "
        "n1-standard-8).",
    )

    gpu: GpuSpec | None = Field(
        default=None,
        description="GPU type and count; unset = filled in from the machine type. N1 machine types need it.",
    )
    gpu_driver: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] = Field(
        default="DEFAULT",
        description="The NVIDIA driver version GKE installs; `INSTALLATION_DISABLED` if you install it yourself.",
    )
    sharing: GkeGpuSharing | None = Field(
        default=None,
        description="Share each GPU among pods by MIG, time-sharing or MPS (docs/gpu-sharing.md); unset = every pod "
        "gets whole GPUs.",
    )
    image_streaming: Flag = Field(
        default=False,
        description="GKE image streaming (`gcfs_config`): a step starts while its image streams from Artifact "
        "Registry; needs the Container File System API (containerfilesystem.googleapis.com) in the project.",
    )
    secondary_boot_disk: GkeSecondaryBootDisk | None = Field(
        default=None,
        description="A disk image of preloaded container images attached to every new node; needs `imageStreaming`.",
    )

    queued_provisioning: Flag = Field(
        default=False,
        description="With `capacity: flex-start` only: nodes come only through ProvisioningRequests (Kueue's "
        "admission check, `queued-provisioning.gke.io`), all of a request's nodes at once; the pool then stays out "
        "of its GPU type's compute class (docs/evictions.md#the-flex-start-tier-on-gke).",
    )
    max_run_hours: Whole | None = Field(
        default=None,
        description="With `capacity: flex-start` only: hours a node may run before GKE deletes it, 1 to 168 (7 "
        "days); unset = GKE's 7 days.",
    )

    def driver(self) -> str | None:
        return self.gpu_driver

    def by_provisioning_request(self) -> bool:
        return self.queued_provisioning

    def run_limit_hours(self) -> int | None:
        return self.max_run_hours


class GkeAutoscalerSettings(AutoscalerSettings):
    """Cluster autoscaler tuning: GKE's managed autoscaler takes only its profile."""

    profile: Literal["BALANCED", "OPTIMIZE_UTILIZATION"] = Field(
        default="OPTIMIZE_UTILIZATION", description="GKE autoscaling profile."
    )


class GkeClusterLogs(ClusterLogs):
    """Cloud Logging: GKE sends system components' logs there, and with `enabled` the workloads' too,
    stated on the cluster rather than left to GKE's default (docs/logs.md)."""

    enabled: Flag | None = Field(
        default=None,
        description="Workloads' logs go to Cloud Logging besides system components'; default: on, GKE's own.",
    )


class GkeClusterSettings(ClusterSettings):
    """Cluster-wide settings of the GKE cluster; the security switches default to on, or on in prod."""

    kubernetes_version: Text | None = Field(
        default=None,
        description="Pinned Kubernetes version: `major.minor`, `major.minor.patch` or a GKE version such as "
        "`1.33.2-gke.1111000`; unset follows the channel.",
    )
    channel: Text | None = Field(
        default=None, description="Release channel: RAPID, REGULAR, STABLE or EXTENDED."
    )
    project: Annotated[Text | None, Wired("spotkube-wired-project"), RequiredArg()] = Field(
        default=None, description="The Google Cloud project id (required)."
    )
    network: Annotated[Text | None, Wired("spotkube-wired-network")] = Field(
        default=None, description="VPC network name or self link; unset = the project's `default` network."
    )
    subnetwork: Annotated[Text | None, Wired("spotkube-wired-subnetwork")] = Field(
        default=None,
        description="Subnetwork in the cluster's region; unset = the network's subnet there. Private nodes reach "
        "registries outside Google only through Cloud NAT on it.",
    )
    private: Flag | None = Field(
        default=None, description="Private nodes, without public IP addresses; default: on in prod."
    )
    network_policy: Literal["cilium", "calico"] = Field(
        default="cilium", description="`cilium` (Dataplane V2) or `calico`."
    )
    deletion_protection: Flag | None = Field(
        default=None, description="`protect` and GKE's deletion_protection on the cluster; default: on in prod."
    )
    autoscaler: GkeAutoscalerSettings = Field(
        default_factory=GkeAutoscalerSettings, description="Cluster autoscaler tuning."
    )
    deployer: DeployerSettings = Field(
        default_factory=DeployerSettings,
        description="Who runs `pulumi up` and from where; it signs in with Application Default Credentials.",
    )
    egress: Literal["cloud-nat", "own"] | None = Field(
        default=None,
        description="Private nodes' way out to public registries: cloud-nat (default: spotkube adds a Cloud Router "
        "and Cloud NAT) or own (the network already has NAT or a proxy).",
    )
    logs: GkeClusterLogs = Field(
        default_factory=GkeClusterLogs, description="Where container logs go, so evicted steps' logs are kept."
    )
    dns_endpoint: Flag | None = Field(
        default=None,
        description="Reach the control plane through its DNS-based endpoint, authorised by IAM and not by source "
        "address (default true); the kubeconfig then uses it.",
    )
    registries: tuple[Text, ...] = Field(
        default=(),
        description="Artifact Registry repositories the nodes pull private images from, each "
        "`projects/PROJECT/locations/LOCATION/repositories/REPOSITORY`: the nodes' service account gets "
        "roles/artifactregistry.reader on each.",
    )


class GkeSpec(PlatformSpec):
    """One GKE platform: a cluster with its node pools, for one environment and Google Cloud region."""

    cloud: Literal["gke"] = Field(description="Which cloud: `gke`.")
    environment: Text = Field(
        pattern=ENVIRONMENT_PATTERN,
        description="Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch "
        "(`cluster.private` and `cluster.deletionProtection`) and `protect`.",
    )
    region: Text = Field(pattern=REGION_PATTERN, description="Google Cloud region, e.g. us-central1 or europe-west4.")
    system_pool: GkeSystemPool = Field(default_factory=GkeSystemPool, description="The on-demand system pool.")
    platform_pool: GkePlatformPool = Field(
        default_factory=GkePlatformPool,
        description="The untainted on-demand pool for Kubeflow and other platform workloads.",
    )
    gpu_pools: tuple[GkeGpuPool, ...] = Field(
        default=(), max_length=100, description="GPU pools, each scaling min..max."
    )
    spot_pools: tuple[GkeSpotPool, ...] = Field(
        default=(),
        max_length=100,
        description="CPU pools on spot or preemptible VMs for batch steps, each scaling min..max.",
    )
    cluster: GkeClusterSettings = Field(default_factory=GkeClusterSettings, description="Cluster-wide settings.")
