"""The typed arguments of the cluster components, as Pulumi's component analyzer accepts them.

These TypedDicts are the public, cross-language API (`pulumi package add` derives its schema from
them and from the docstrings below), so they use only primitives, lists, dicts and nested
TypedDicts. Their keys mirror the spec models in `spotkube.platform.spec`, which do the validation; a test
keeps the two in step.

Only the cluster settings a consumer wires from another resource are `Input[...]`, which the
analyzer marks as accepting outputs: the resource group, the project, the network and subnetwork,
and the items of the admin group and authorized range lists (`WIRED_CLUSTER_ARGS`). Every other
field decides the plan (pools, names, capacity, counts, cloud, region, versions), which is
validated and resolved before anything is registered, so it must be a plain value; the schema
marks it `plain`. `spotkube.shell.common` explains how wired values are checked.
"""


from collections.abc import Awaitable
from typing import NotRequired, TypedDict, TypeVar

from pulumi import Output

_T = TypeVar("_T")

Input = _T | Awaitable[_T] | Output[_T]
"""`pulumi.Input[T]`, spelt without its string forward reference to `Output[T]` so that
`typing.get_type_hints` resolves these TypedDicts; Pulumi's analyzer reads the two alike (an input
that accepts an output, not `plain`)."""

#: The `ClusterArgs` keys that accept an Output: (key, whether it is a list whose items may be
#: Outputs). A list itself stays plain, because its length decides what is registered (one role
#: assignment per admin group; an API server restricted by address or not).
WIRED_CLUSTER_ARGS: tuple[tuple[str, bool], ...] = (
    ("resource_group_name", False),
    ("project", False),
    ("network", False),
    ("subnetwork", False),
    ("admin_group_object_ids", True),
    ("authorized_ip_ranges", True),
)


class GpuArgs(TypedDict):
    type: str
    """GPU type in GKE's accelerator vocabulary, e.g. `nvidia-tesla-t4` or `nvidia-l4`."""
    count: int
    """GPUs per node."""


class SystemPoolArgs(TypedDict):
    name: NotRequired[str]
    """Pool name (default `system`). Never rename it once the cluster exists."""
    machine: NotRequired[str]
    """VM size (AKS) or machine type (GKE); default Standard_D4s_v3 / e2-standard-4."""
    min: NotRequired[int]
    """Minimum nodes, at least 1 (default 2)."""
    max: NotRequired[int]
    """Maximum nodes (default 3)."""
    zones: NotRequired[list[str]]
    """Availability zones; empty means the cloud's default."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels."""
    capacity: NotRequired[str]
    """Always `on-demand`: a system pool can't be spot."""
    critical_addons_only: NotRequired[bool]
    """AKS: taint the pool CriticalAddonsOnly=true:NoSchedule (default true)."""


class PlatformPoolArgs(TypedDict):
    enabled: NotRequired[bool]
    """Create the untainted on-demand pool for platform workloads (default true)."""
    name: NotRequired[str]
    """Pool name (default `platform`)."""
    machine: NotRequired[str]
    """VM size (AKS) or machine type (GKE); default Standard_D4s_v3 / e2-standard-4."""
    min: NotRequired[int]
    """Minimum nodes (default 1)."""
    max: NotRequired[int]
    """Maximum nodes (default 3)."""
    zones: NotRequired[list[str]]
    """Availability zones."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels."""
    capacity: NotRequired[str]
    """Always `on-demand`."""


class SpotPoolArgs(TypedDict):
    name: str
    """Pool name: AKS 1-12 lower-case letters/digits; GKE up to 40 characters with dashes."""
    machine: str
    """CPU VM size (AKS) or machine type (GKE), e.g. Standard_D4s_v3."""
    capacity: NotRequired[str]
    """`spot` (default) or `preemptible` (GKE only)."""
    eviction_policy: NotRequired[str]
    """AKS spot: `Delete` (default) or `Deallocate`."""
    max_price: NotRequired[float]
    """AKS spot: max USD/hour with up to 5 decimals, or -1 for "up to the on-demand price"."""
    min: NotRequired[int]
    """Minimum nodes (default 0)."""
    max: NotRequired[int]
    """Maximum nodes (default 4)."""
    zones: NotRequired[list[str]]
    """Zones."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels."""
    taints: NotRequired[list[str]]
    """Extra taints as key=value:Effect."""


class GpuPoolArgs(TypedDict):
    name: str
    """Pool name: AKS 1-12 lower-case letters/digits; GKE up to 40 characters with dashes."""
    machine: str
    """GPU VM size (AKS) or machine type (GKE)."""
    gpu: NotRequired[GpuArgs]
    """GPU type and count; filled in from the machine when it implies them."""
    capacity: NotRequired[str]
    """`spot` (default), `preemptible` (GKE only) or `on-demand` (a fallback pool)."""
    eviction_policy: NotRequired[str]
    """AKS spot: `Delete` (default) or `Deallocate`."""
    max_price: NotRequired[float]
    """AKS spot: max USD/hour with up to 5 decimals, or -1 for "up to the on-demand price"."""
    min: NotRequired[int]
    """Minimum nodes (default 0: an idle GPU pool costs nothing)."""
    max: NotRequired[int]
    """Maximum nodes (default 4)."""
    zones: NotRequired[list[str]]
    """Zones; on GKE they must offer the GPU."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels."""
    taints: NotRequired[list[str]]
    """Extra taints as key=value:Effect."""
    gpu_driver: NotRequired[str]
    """GKE: `DEFAULT` (default), `LATEST` or `INSTALLATION_DISABLED`."""


class AutoscalerArgs(TypedDict):
    expander: NotRequired[str]
    """AKS expander; `priority` (default) makes spot pools win over on-demand fallbacks."""
    scan_interval: NotRequired[str]
    """AKS: how often the autoscaler looks for pending pods, in whole seconds (default `10s`)."""
    max_node_provision_time: NotRequired[str]
    """AKS: how long the autoscaler waits for a node before it tries the next priority tier, in whole minutes
    (default `10m`; AKS's own is 15m)."""
    new_pod_scale_up_delay: NotRequired[str]
    """AKS: how old a pending pod must be before the autoscaler acts on it (default `0s`)."""
    scale_down_unneeded_time: NotRequired[str]
    """AKS: how long a node is unneeded before removal (default 10m)."""
    scale_down_delay_after_add: NotRequired[str]
    """AKS: scale-down pause after a scale-up (default 10m)."""
    max_graceful_termination_sec: NotRequired[int]
    """AKS: pod termination grace during scale-down (default 600)."""
    skip_nodes_with_local_storage: NotRequired[bool]
    """AKS: keep nodes whose pods use local storage (default false)."""
    profile: NotRequired[str]
    """GKE autoscaling profile: `OPTIMIZE_UTILIZATION` (default) or `BALANCED`."""


class DeployerArgs(TypedDict):
    object_id: NotRequired[str]
    """AKS, required: the Entra ID object id of the identity that runs `pulumi up`, which gets the RBAC Cluster
    Admin role on the cluster (`az ad sp show --id <appId> --query id -o tsv`)."""
    principal_type: NotRequired[str]
    """AKS, required: what `object_id` is, `User`, `ServicePrincipal` or `Group`."""
    login: NotRequired[str]
    """AKS: how kubelogin signs the deployer in: `azurecli` (default), `workloadidentity`, `spn` or `msi`."""
    network: NotRequired[str]
    """Where `pulumi up` runs: `internet` (default) or `cluster-network` (inside the VNet or VPC)."""
    egress_ranges: NotRequired[list[str]]
    """Public CIDRs the deployer connects from; added to the API server's authorized ranges when it has any."""
    grant_propagation_wait: NotRequired[str]
    """AKS: wait after granting the deployer Kubernetes rights before creating objects (default `5m`)."""


class ClusterArgs(TypedDict):
    kubernetes_version: NotRequired[str]
    """Pinned Kubernetes version (`1.33` or `1.33.2`; GKE also `1.33.2-gke.1111000`); unset follows the channel."""
    allow_unlisted_region: NotRequired[bool]
    """Accept a region newer than spotkube's bundled list of the cloud's regions (default false)."""
    channel: NotRequired[str]
    """AKS upgrade channel (default stable) or GKE release channel (default REGULAR)."""
    resource_group_name: NotRequired[Input[str]]
    """AKS: an existing resource group to build in; may be another resource's output."""
    project: NotRequired[Input[str]]
    """GKE: the Google Cloud project id; may be another resource's output."""
    network: NotRequired[Input[str]]
    """GKE: VPC network, name or self link (may be an output); unset uses the project's `default` network."""
    subnetwork: NotRequired[Input[str]]
    """GKE: subnetwork in the region, name or self link (may be an output); private nodes need Cloud NAT on it."""
    private: NotRequired[bool]
    """Private API server (AKS) or private nodes (GKE); default on in prod."""
    authorized_ip_ranges: NotRequired[list[Input[str]]]
    """CIDRs allowed to reach the API server; each may be an output, the list itself is plain."""
    local_accounts_disabled: NotRequired[bool]
    """AKS: Entra ID only, no local admin; default on in prod."""
    admin_group_object_ids: NotRequired[list[Input[str]]]
    """AKS: Entra ID group object ids that get cluster admin; each may be an output, the list itself is plain."""
    network_policy: NotRequired[str]
    """AKS network policy: `cilium` (default), `azure` or `calico`."""
    deletion_protection: NotRequired[bool]
    """Protect the cluster from deletion; default on in prod."""
    autoscaler: NotRequired[AutoscalerArgs]
    """Cluster autoscaler tuning."""
    deployer: NotRequired[DeployerArgs]
    """Who runs `pulumi up` and from where: its login, its network and its egress addresses."""
    egress: NotRequired[str]
    """GKE private nodes' egress: `cloud-nat` (default; spotkube adds Cloud Router and NAT) or `own`."""
    dns_endpoint: NotRequired[bool]
    """GKE: reach the control plane through its IAM-authorised DNS endpoint (default true)."""


class GpuClusterArgs(TypedDict):
    environment: str
    """Environment name, e.g. `dev` or `prod`; `prod` turns the security switches on."""
    region: str
    """Azure region (e.g. `uksouth`) or Google Cloud region (e.g. `us-central1`)."""
    system_pool: NotRequired[SystemPoolArgs]
    """The on-demand system pool."""
    platform_pool: NotRequired[PlatformPoolArgs]
    """The untainted on-demand pool for platform workloads."""
    gpu_pools: NotRequired[list[GpuPoolArgs]]
    """GPU pools, each scaling min..max."""
    spot_pools: NotRequired[list[SpotPoolArgs]]
    """CPU pools on spot or preemptible capacity for batch steps, each scaling min..max."""
    cluster: NotRequired[ClusterArgs]
    """Cluster-wide settings."""


class PoolContractGpu(TypedDict):
    type: str
    """GPU type."""
    count: int
    """GPUs per node."""


class PoolContractOutput(TypedDict):
    name: str
    """Pool name."""
    role: str
    """`system`, `platform` or `gpu`."""
    capacity: str
    """`spot`, `preemptible` or `on-demand`."""
    gpu: NotRequired[PoolContractGpu]
    """The pool's GPUs, absent on pools without GPUs."""
    labels: dict[str, str]
    """Every label the nodes carry, declared and cloud-added."""
    taints: list[str]
    """Every taint the nodes carry, as key=value:Effect."""


class NvidiaDevicePluginArgs(TypedDict):
    cloud: str
    """The cluster's cloud: `aks` (deploys NVIDIA's plugin as a DaemonSet) or `gke` (keeps GKE's managed plugin,
    deploys nothing). Python: use `NvidiaDevicePlugin.for_cluster(name, cluster)`, which takes it from the cluster."""
    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release, the image tag (default `v0.20.0`)."""
    image: NotRequired[str]
    """Image repository without a tag (default `nvcr.io/nvidia/k8s-device-plugin`)."""
    extra_taints: NotRequired[list[str]]
    """Taints your GPU pools carry beyond spotkube's own, as key=value:Effect; the plugin tolerates them. Python:
    `NvidiaDevicePlugin.for_cluster` tolerates every GPU pool's own taints without them."""


class DevicePluginSettingsArgs(TypedDict):
    """The device plugin's own settings, for `NvidiaDevicePlugin.for_cluster` (Python only): the cluster
    gives the cloud and the GPU pools' taints."""

    version: NotRequired[str]
    """NVIDIA k8s-device-plugin release, the image tag (default `v0.20.0`)."""
    image: NotRequired[str]
    """Image repository without a tag (default `nvcr.io/nvidia/k8s-device-plugin`)."""


class KubeflowPipelinesArgs(TypedDict):
    version: NotRequired[str]
    """Kubeflow Pipelines release, the git ref of its manifests (default `2.17.0`)."""
    repository: NotRequired[str]
    """Git repository of the manifests (default `https://github.com/kubeflow/pipelines`); needs git at deploy time."""
    expose_ui: NotRequired[bool]
    """Give the UI a public LoadBalancer (default false: use kubectl port-forward; KFP standalone has no login)."""
    ui_source_ranges: NotRequired[list[str]]
    """CIDRs allowed to reach the exposed UI."""
    storage_class: NotRequired[str]
    """StorageClass of the MySQL and SeaweedFS volumes; unset uses the cluster's default class."""
    retry_policy: NotRequired[str]
    """Argo retryPolicy every step inherits: `Always` (default) or `OnError`; both retry evicted pods."""
    retry_limit: NotRequired[int]
    """Raises the retry limit of steps without set_retry above KFP's own (2 in 2.17.0); never lowers it."""
