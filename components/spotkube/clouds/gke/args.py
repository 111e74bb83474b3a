"""The typed args of `GkeGpuCluster`, generated from `spotkube.clouds.gke.spec` by `python -m
spotkube.cli.reference write`; do not edit. The cross-language schema is derived from them and their
docstrings; only `Wired` settings are `Input[...]`, every other field decides the plan and is a plain value.
"""

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, TypeVar

from pulumi import Output

_T = TypeVar("_T")

Input = _T | Awaitable[_T] | Output[_T]
"""`pulumi.Input[T]` without its forward reference to `Output[T]`, so `typing.get_type_hints` resolves it."""

if TYPE_CHECKING:
    GkeSystemPoolCapacity = Literal["spot", "preemptible", "flex-start", "on-demand"]
    GkePoolUpgradeStrategy = Literal["surge", "blue-green"]
    GkeGpuSharingStrategy = Literal["time-sharing", "mps"]
    GkeSecondaryBootDiskMode = Literal["CONTAINER_IMAGE_CACHE"]
    GkeGpuPoolGpuDriver = Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"]
    GkeAutoscalerProfile = Literal["BALANCED", "OPTIMIZE_UTILIZATION"]
    GkeDeployerNetwork = Literal["internet", "cluster-network"]
    GkeMaintenanceWindowDays = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    GkeClusterNetworkPolicy = Literal["cilium", "calico"]
    GkeClusterEgress = Literal["cloud-nat", "own"]
else:
    GkeSystemPoolCapacity = str
    GkePoolUpgradeStrategy = str
    GkeGpuSharingStrategy = str
    GkeSecondaryBootDiskMode = str
    GkeGpuPoolGpuDriver = str
    GkeAutoscalerProfile = str
    GkeDeployerNetwork = str
    GkeMaintenanceWindowDays = str
    GkeClusterNetworkPolicy = str
    GkeClusterEgress = str
"""`Literal` for type checkers, `str` at run time: Pulumi's analyzer accepts no `Literal`, so the
schema types them as strings and the component's checks name the accepted values."""


class GkeSystemPoolArgs(TypedDict):
    """The on-demand pool that runs the cluster's own add-ons."""

    name: NotRequired[str]
    """Pool name; never rename it once the cluster exists. At most 33 characters (spotkube adds 7 when the pool must be replaced). Default: `system`."""
    machine: NotRequired[str]
    """Machine type; unset = the default machine. Default: `e2-standard-4`."""
    min: NotRequired[int]
    """Minimum nodes; at least 1. Default: `2`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `3`."""
    zones: NotRequired[list[str]]
    """Zones of the region, e.g. us-central1-a; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[GkeSystemPoolCapacity]
    """Must stay `on-demand`: a spot pool can't be a System pool, and evictions would take the platform down. Default: `on-demand`."""
    critical_addons_only: NotRequired[bool]
    """Taint the pool components.gke.io/gke-managed-components=true:NoSchedule, which GKE's own system pods tolerate, so only they run here. Needs the platform pool. Default: `true`."""


class GkePlatformPoolArgs(TypedDict):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    name: NotRequired[str]
    """Pool name: at most 33 characters, because spotkube adds 7 that change when the pool must be replaced. Default: `platform`."""
    machine: NotRequired[str]
    """Machine type; unset = the default machine. Default: `e2-standard-4`."""
    min: NotRequired[int]
    """Minimum nodes. Default: `1`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `3`."""
    zones: NotRequired[list[str]]
    """Zones of the region, e.g. us-central1-a; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[GkeSystemPoolCapacity]
    """Must stay `on-demand`: a spot pool can't be a System pool, and evictions would take the platform down. Default: `on-demand`."""
    enabled: NotRequired[bool]
    """Create the pool. It must stay enabled while Kubeflow is, because Kubeflow needs an untainted on-demand pool. Default: `true`."""


class GkePoolUpgradeArgs(TypedDict):
    """How GKE replaces the pool's nodes when it upgrades them (the NodePool's `upgrade_settings`). Unset on a GPU pool: a surge upgrade of one node at a time, none unavailable. GKE drains each node, waiting up to an hour for pod disruption budgets."""

    max_surge: NotRequired[int]
    """Surge: extra nodes added while the pool is upgraded; GPU pools default to 1."""
    max_unavailable: NotRequired[int]
    """Surge: nodes that may be down at once; GPU pools default to 0."""
    soak_minutes: NotRequired[int]
    """Blue-green: minutes the old nodes are kept after the new ones took the pods, for a rollback."""
    strategy: NotRequired[GkePoolUpgradeStrategy]
    """`surge` (a few nodes at a time) or `blue-green` (a whole new set of nodes, then the old ones drained; needs twice the GPU quota)."""


class GkeGpuArgs(TypedDict):
    """GPU type (GKE accelerator name, spotkube's neutral vocabulary) and GPUs per node."""

    type: str
    """GPU type in spotkube's neutral vocabulary, on every cloud: `nvidia-tesla-t4`, `nvidia-l4`, `nvidia-tesla-a100`, `nvidia-a100-80gb`, ..."""
    count: int
    """GPUs per node."""


class GkeGpuSharingArgs(TypedDict):
    """How a GKE GPU pool shares its GPUs: MIG partitions (gpu_partition_size), or time-sharing or NVIDIA MPS with a number of clients per GPU (gpu_sharing_config)."""

    mig: NotRequired[str]
    """MIG profile every GPU of the pool is split into, in NVIDIA's names (`1g.10gb`, `3g.40gb`): GKE's gpu_partition_size. Only GPUs with MIG (A100, H100, H200, B200) and the partition sizes GKE offers for them."""
    strategy: NotRequired[GkeGpuSharingStrategy]
    """Share each GPU among `clientsPerGpu` pods by time-sharing or NVIDIA MPS."""
    clients_per_gpu: NotRequired[int]
    """With `strategy`: pods per GPU, 2..48 (max_shared_clients_per_gpu)."""


class GkeSecondaryBootDiskArgs(TypedDict):
    """A disk image of preloaded container images that every new node of the pool gets as a second boot disk (the NodePool's `secondary_boot_disks`), so its steps start without pulling them."""

    disk_image: str
    """The Compute Engine image: `projects/PROJECT/global/images/NAME`, or `global/images/NAME` in the cluster's project (built with gke-disk-image-builder: docs/operators.md#building-a-disk-image-of-preloaded-images)."""
    mode: NotRequired[GkeSecondaryBootDiskMode]
    """`CONTAINER_IMAGE_CACHE`: containerd reads the disk's images instead of pulling them; needs `imageStreaming`. Default: `CONTAINER_IMAGE_CACHE`."""


class GkeGpuPoolArgs(TypedDict):
    """A GPU pool that scales 0..N, on spot, preemptible, flex-start or on-demand VMs."""

    name: str
    """Pool name, unique in the stack: `[a-z]([-a-z0-9]{0,38}[a-z0-9])?`."""
    machine: str
    """Machine type with GPUs (a2, a3, g2: e.g. g2-standard-8) or an N1 type with `gpu` (e.g. n1-standard-8)."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Zones of the region. Empty = regional, except a GPU pool, which gets every zone of the region that offers its GPU (from the bundled zone table)."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[GkeSystemPoolCapacity]
    """`spot`, `preemptible` (at most 24 hours per VM) or, for a GPU pool only, `flex-start` (Dynamic Workload Scheduler: discounted, provisioned when capacity is free, at most 7 days per VM; the tier between spot and on-demand) or `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[GkePoolUpgradeArgs]
    """How GKE replaces the nodes when it upgrades them."""
    gpu: NotRequired[GkeGpuArgs]
    """GPU type and count; unset = filled in from the machine type. N1 machine types need it."""
    sharing: NotRequired[GkeGpuSharingArgs]
    """Share each GPU among pods by MIG, time-sharing or MPS (docs/gpu-sharing.md); unset = every pod gets whole GPUs."""
    image_gb: NotRequired[float]
    """Compressed size in GB of the image the pool's steps run, for the plan's time to a running step (docs/time-to-gpu.md); unset = the plan says the image size is not declared."""
    gpu_driver: NotRequired[GkeGpuPoolGpuDriver]
    """The NVIDIA driver version GKE installs; `INSTALLATION_DISABLED` if you install it yourself. Default: `DEFAULT`."""
    image_streaming: NotRequired[bool]
    """GKE image streaming (`gcfs_config`): a step starts while its image streams from Artifact Registry; needs the Container File System API (containerfilesystem.googleapis.com) in the project. Default: `false`."""
    secondary_boot_disk: NotRequired[GkeSecondaryBootDiskArgs]
    """A disk image of preloaded container images attached to every new node; needs `imageStreaming`."""
    queued_provisioning: NotRequired[bool]
    """With `capacity: flex-start` only: nodes come only through ProvisioningRequests (Kueue's admission check, `queued-provisioning.gke.io`), all of a request's nodes at once; the pool then stays out of its GPU type's compute class (docs/evictions.md#the-flex-start-tier-on-gke). Default: `false`."""
    max_run_hours: NotRequired[int]
    """With `capacity: flex-start` only: hours a node may run before GKE deletes it, 1 to 168 (7 days); unset = GKE's 7 days."""


class GkeSpotPoolArgs(TypedDict):
    """A CPU pool on spot or preemptible VMs that scales 0..N, for batch steps without GPUs."""

    name: str
    """Pool name, unique in the stack: `[a-z]([-a-z0-9]{0,38}[a-z0-9])?`."""
    machine: str
    """Machine type, e.g. e2-standard-8."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Zones of the region. Empty = regional, except a GPU pool, which gets every zone of the region that offers its GPU (from the bundled zone table)."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[GkeSystemPoolCapacity]
    """`spot`, `preemptible` (at most 24 hours per VM) or, for a GPU pool only, `flex-start` (Dynamic Workload Scheduler: discounted, provisioned when capacity is free, at most 7 days per VM; the tier between spot and on-demand) or `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[GkePoolUpgradeArgs]
    """How GKE replaces the nodes when it upgrades them."""


class GkeAutoscalerArgs(TypedDict):
    """Cluster autoscaler tuning: GKE's managed autoscaler takes only its profile."""

    profile: NotRequired[GkeAutoscalerProfile]
    """GKE autoscaling profile. Default: `OPTIMIZE_UTILIZATION`."""


class GkeDeployerArgs(TypedDict):
    """Who runs `pulumi up` and from where. The Kubernetes provider logs in as the deployer, so the deployer needs a credential that works without a person, rights on the cluster, and a network path to its API server; none of that is visible to a mock, so the plan's preflight checks it."""

    network: NotRequired[GkeDeployerNetwork]
    """Where the deployer runs: internet (a hosted CI runner or a laptop) or cluster-network (a runner inside the cluster's network, which can reach a private API server). Default: `internet`."""
    egress_ranges: NotRequired[list[str]]
    """Public CIDRs the deployer connects from (a runner's static egress). Added to the API server's authorized ranges whenever the API server restricts by address."""
    drills: NotRequired[bool]
    """Let the deployer evict a node of the stack's spot pools on purpose (`spotkube drill --run`, drill.yml, which runs as the deploy identity): the right to simulate an eviction or a maintenance event on the stack's nodes, as the cloud names it, and nothing more (docs/identities.md). Default: `false`."""


class GkeMaintenanceWindowArgs(TypedDict):
    """A weekly window: the only time the cloud may upgrade the cluster or replace its nodes' images."""

    days: list[GkeMaintenanceWindowDays]
    """Days of the week, e.g. `[Saturday]`; how many the cloud takes, and how many hours a week it needs, is checked per cloud (docs/evictions.md)."""
    start: str
    """Start time, `HH:MM`."""
    hours: int
    """Length in hours, 4 to 24."""
    utc_offset: NotRequired[str]
    """The times' offset from UTC, e.g. `+01:00`. A cloud that counts a window's days in UTC gets the window in UTC, its days shifted when the start crosses midnight; the plan shows both. Default: `+00:00`."""


class GkeBusyPeriodArgs(TypedDict):
    """Dates on which nothing may drain a node for an upgrade: a deadline, a long training run."""

    name: str
    """A name, e.g. `quarter-end`."""
    start: str
    """First day, `YYYY-MM-DD` (UTC)."""
    end: str
    """Last day, `YYYY-MM-DD` (UTC), included."""


class GkeMaintenanceArgs(TypedDict):
    """When the cloud may upgrade the cluster and drain its nodes: AKS maintenance configurations (the Kubernetes auto-upgrade and node OS schedules), GKE's maintenance policy (a recurring window and exclusions)."""

    window: NotRequired[GkeMaintenanceWindowArgs]
    """The weekly window; unset = the cloud's default, which the plan shows (docs/evictions.md)."""
    busy_periods: NotRequired[list[GkeBusyPeriodArgs]]
    """Periods with no node upgrade at all, `[{name, start, end}]`."""
    anytime: NotRequired[bool]
    """Let the cloud upgrade whenever it likes: no window, no busy periods (the plan warns for every GPU pool). Default: `false`."""


class GkeClusterLogsArgs(TypedDict):
    """Cloud Logging: GKE sends system components' logs there, and with `enabled` the workloads' too, stated on the cluster rather than left to GKE's default (docs/logs.md)."""

    enabled: NotRequired[bool]
    """Workloads' logs go to Cloud Logging besides system components'; default: on, GKE's own."""


class GkeClusterArgs(TypedDict):
    """Cluster-wide settings of the GKE cluster; the security switches default to on, or on in prod."""

    kubernetes_version: NotRequired[str]
    """Pinned Kubernetes version: `major.minor`, `major.minor.patch` or a GKE version such as `1.33.2-gke.1111000`; unset follows the channel."""
    allow_unlisted_region: NotRequired[bool]
    """Accept a `region` that is not in spotkube's bundled region list of the cloud (a region newer than this spotkube release); its name is still checked for the cloud's shape. Default: `false`."""
    channel: NotRequired[str]
    """Release channel: RAPID, REGULAR, STABLE or EXTENDED. Default: `REGULAR`."""
    private: NotRequired[bool]
    """Private nodes, without public IP addresses; default: on in prod."""
    authorized_ip_ranges: NotRequired[list[Input[str]]]
    """CIDRs allowed to reach the API server."""
    deletion_protection: NotRequired[bool]
    """`protect` and GKE's deletion_protection on the cluster; default: on in prod."""
    autoscaler: NotRequired[GkeAutoscalerArgs]
    """Cluster autoscaler tuning."""
    deployer: NotRequired[GkeDeployerArgs]
    """Who runs `pulumi up` and from where; it signs in with Application Default Credentials."""
    maintenance: NotRequired[GkeMaintenanceArgs]
    """When the cloud may upgrade the cluster and drain nodes: a weekly window and busy periods."""
    logs: NotRequired[GkeClusterLogsArgs]
    """Where container logs go, so evicted steps' logs are kept."""
    project: Input[str]
    """The Google Cloud project id (required)."""
    network: NotRequired[Input[str]]
    """VPC network name or self link; unset = the project's `default` network."""
    subnetwork: NotRequired[Input[str]]
    """Subnetwork in the cluster's region; unset = the network's subnet there. Private nodes reach registries outside Google only through Cloud NAT on it."""
    network_policy: NotRequired[GkeClusterNetworkPolicy]
    """`cilium` (Dataplane V2) or `calico`. Default: `cilium`."""
    egress: NotRequired[GkeClusterEgress]
    """Private nodes' way out to public registries: cloud-nat (default: spotkube adds a Cloud Router and Cloud NAT) or own (the network already has NAT or a proxy)."""
    dns_endpoint: NotRequired[bool]
    """Reach the control plane through its DNS-based endpoint, authorised by IAM and not by source address (default true); the kubeconfig then uses it."""
    registries: NotRequired[list[str]]
    """Artifact Registry repositories the nodes pull private images from, each `projects/PROJECT/locations/LOCATION/repositories/REPOSITORY`: the nodes' service account gets roles/artifactregistry.reader on each."""


class GkeGpuClusterArgs(TypedDict):
    """The args of `GkeGpuCluster`: one GKE platform: a cluster with its node pools, for one environment and Google Cloud region."""

    environment: str
    """Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch (`cluster.private` and `cluster.deletionProtection`) and `protect`."""
    region: str
    """Google Cloud region, e.g. us-central1 or europe-west4."""
    system_pool: NotRequired[GkeSystemPoolArgs]
    """The on-demand system pool."""
    platform_pool: NotRequired[GkePlatformPoolArgs]
    """The untainted on-demand pool for Kubeflow and other platform workloads."""
    gpu_pools: NotRequired[list[GkeGpuPoolArgs]]
    """GPU pools, each scaling min..max."""
    spot_pools: NotRequired[list[GkeSpotPoolArgs]]
    """CPU pools on spot or preemptible VMs for batch steps, each scaling min..max."""
    cluster: GkeClusterArgs
    """Cluster-wide settings."""
    checkpoint_store: NotRequired[str]
    """The name of an object store the cluster creates for training checkpoints, writable by the identity the workers run as, as a stack file's `training.checkpointStore.name` is (the cloud's storage account or bucket, whose naming rules it checks); `spotkube.training.store_location` gives its URI for `train_job`. Unset = none."""


class GkeGpuNodePoolArgs(TypedDict):
    """The args of `GkeGpuNodePool`: one pool, GPU or CPU, added to a cluster spotkube may not have made (an entry of `GkeGpuCluster`'s `gpu_pools` and the cluster it joins). A machine without a GPU makes a CPU pool."""

    cluster_id: Input[str]
    """The GKE cluster the pool joins: its id, `projects/<project>/locations/<region>/clusters/<name>`, or its name; another resource's output (a `gcp.container.Cluster`'s `id`) is fine."""
    region: str
    """The cluster's region, e.g. us-central1 (a regional cluster): it decides the pool's zones, prices and quota."""
    project: Input[str]
    """The Google Cloud project the cluster is in, e.g. my-ml-platform."""
    service_account: NotRequired[Input[str]]
    """The e-mail of the service account the pool's nodes run as; unset: the cluster's default (Compute Engine's default service account unless the cluster names another). spotkube's own clusters give theirs a least-privilege account."""
    name: str
    """Pool name, unique in the stack: `[a-z]([-a-z0-9]{0,38}[a-z0-9])?`."""
    machine: str
    """Machine type with GPUs (a2, a3, g2: e.g. g2-standard-8) or an N1 type with `gpu` (e.g. n1-standard-8)."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Zones of the region. Empty = regional, except a GPU pool, which gets every zone of the region that offers its GPU (from the bundled zone table)."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[GkeSystemPoolCapacity]
    """`spot`, `preemptible` (at most 24 hours per VM) or, for a GPU pool only, `flex-start` (Dynamic Workload Scheduler: discounted, provisioned when capacity is free, at most 7 days per VM; the tier between spot and on-demand) or `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[GkePoolUpgradeArgs]
    """How GKE replaces the nodes when it upgrades them."""
    gpu: NotRequired[GkeGpuArgs]
    """GPU type and count; unset = filled in from the machine type. N1 machine types need it."""
    sharing: NotRequired[GkeGpuSharingArgs]
    """Share each GPU among pods by MIG, time-sharing or MPS (docs/gpu-sharing.md); unset = every pod gets whole GPUs."""
    image_gb: NotRequired[float]
    """Compressed size in GB of the image the pool's steps run, for the plan's time to a running step (docs/time-to-gpu.md); unset = the plan says the image size is not declared."""
    gpu_driver: NotRequired[GkeGpuPoolGpuDriver]
    """The NVIDIA driver version GKE installs; `INSTALLATION_DISABLED` if you install it yourself. Default: `DEFAULT`."""
    image_streaming: NotRequired[bool]
    """GKE image streaming (`gcfs_config`): a step starts while its image streams from Artifact Registry; needs the Container File System API (containerfilesystem.googleapis.com) in the project. Default: `false`."""
    secondary_boot_disk: NotRequired[GkeSecondaryBootDiskArgs]
    """A disk image of preloaded container images attached to every new node; needs `imageStreaming`."""
    queued_provisioning: NotRequired[bool]
    """With `capacity: flex-start` only: nodes come only through ProvisioningRequests (Kueue's admission check, `queued-provisioning.gke.io`), all of a request's nodes at once; the pool then stays out of its GPU type's compute class (docs/evictions.md#the-flex-start-tier-on-gke). Default: `false`."""
    max_run_hours: NotRequired[int]
    """With `capacity: flex-start` only: hours a node may run before GKE deletes it, 1 to 168 (7 days); unset = GKE's 7 days."""
