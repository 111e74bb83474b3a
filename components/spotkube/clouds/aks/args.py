"""The typed args of `AksGpuCluster`, generated from `spotkube.clouds.aks.spec` by `python -m
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
    AksSystemPoolCapacity = Literal["spot", "preemptible", "flex-start", "on-demand"]
    AksPoolUpgradeUndrainableNodes = Literal["Cordon", "Schedule"]
    AksGpuPoolCapacity = Literal["spot", "on-demand"]
    AksGpuPoolEvictionPolicy = Literal["Delete", "Deallocate"]
    AksAutoscalerExpander = Literal["priority", "least-waste", "most-pods", "random"]
    AksDeployerNetwork = Literal["internet", "cluster-network"]
    AksDeployerPrincipalType = Literal["User", "ServicePrincipal", "Group"]
    AksDeployerLogin = Literal["azurecli", "workloadidentity", "spn", "msi"]
    AksMaintenanceWindowDays = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    AksClusterNetworkPolicy = Literal["cilium", "azure", "calico"]
else:
    AksSystemPoolCapacity = str
    AksPoolUpgradeUndrainableNodes = str
    AksGpuPoolCapacity = str
    AksGpuPoolEvictionPolicy = str
    AksAutoscalerExpander = str
    AksDeployerNetwork = str
    AksDeployerPrincipalType = str
    AksDeployerLogin = str
    AksMaintenanceWindowDays = str
    AksClusterNetworkPolicy = str
"""`Literal` for type checkers, `str` at run time: Pulumi's analyzer accepts no `Literal`, so the
schema types them as strings and the component's checks name the accepted values."""


class AksSystemPoolArgs(TypedDict):
    """The on-demand pool that runs the cluster's own add-ons: AKS's System mode pool."""

    name: NotRequired[str]
    """Pool name; never rename it once the cluster exists. 1-12 lower-case letters and digits, starting with a letter. Default: `system`."""
    machine: NotRequired[str]
    """VM size; unset = the default machine. Retired sizes are refused, with their replacement named. Default: `Standard_D4s_v3`."""
    min: NotRequired[int]
    """Minimum nodes; at least 1. Default: `2`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `3`."""
    zones: NotRequired[list[str]]
    """Availability zones `"1"` to `"3"`; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[AksSystemPoolCapacity]
    """Must stay `on-demand`: a spot pool can't be a System pool, and evictions would take the platform down. Default: `on-demand`."""
    critical_addons_only: NotRequired[bool]
    """Taint the pool CriticalAddonsOnly=true:NoSchedule so only add-ons run here. Default: `true`."""


class AksPlatformPoolArgs(TypedDict):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    name: NotRequired[str]
    """Pool name: at most 8 lower-case letters and digits, starting with a letter, because spotkube adds 4 characters that change when the pool must be replaced. Default: `platform`."""
    machine: NotRequired[str]
    """VM size; unset = the default machine. Retired sizes are refused, with their replacement named. Default: `Standard_D4s_v3`."""
    min: NotRequired[int]
    """Minimum nodes. Default: `1`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `3`."""
    zones: NotRequired[list[str]]
    """Availability zones `"1"` to `"3"`; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[AksSystemPoolCapacity]
    """Must stay `on-demand`: a spot pool can't be a System pool, and evictions would take the platform down. Default: `on-demand`."""
    enabled: NotRequired[bool]
    """Create the pool. It must stay enabled while Kubeflow is, and while the system pool is tainted (`criticalAddonsOnly`), because Kubeflow needs an untainted on-demand pool. Default: `true`."""


class AksPoolUpgradeArgs(TypedDict):
    """How AKS replaces an on-demand pool's nodes when it upgrades them (the AgentPool's `upgradeSettings`). Unset on a GPU pool: one surge node, none unavailable, a drain that waits an hour and cordons a node it can't empty, so a running step can finish or checkpoint. AKS takes none on spot pools ("Spot pools can't set max surge")."""

    max_surge: NotRequired[str]
    """Extra nodes added while the pool is upgraded: a number or a percentage (`10%`, AKS's default); GPU pools default to 1 (surge nodes need GPU quota)."""
    max_unavailable: NotRequired[str]
    """Nodes that may be down at once: a number or a percentage; GPU pools default to 0."""
    soak_minutes: NotRequired[int]
    """Minutes to wait after draining a node before reimaging it, 0 to 30 (default 0)."""
    drain_timeout_minutes: NotRequired[int]
    """How long a drain waits for pods to leave a node (pod disruption budgets honoured) before the node counts as undrainable, 5 to 1440; GPU pools default to 60, AKS's own is 30."""
    undrainable_nodes: NotRequired[AksPoolUpgradeUndrainableNodes]
    """A node a drain can't empty in time is cordoned and replaced by a surge node (`Cordon`, the GPU default: its step runs on) or made schedulable again and left un-upgraded (`Schedule`)."""


class AksGpuArgs(TypedDict):
    """GPU type (GKE accelerator name, spotkube's neutral vocabulary) and GPUs per node."""

    type: str
    """GPU type in spotkube's neutral vocabulary, on every cloud: `nvidia-tesla-t4`, `nvidia-l4`, `nvidia-tesla-a100`, `nvidia-a100-80gb`, ..."""
    count: int
    """GPUs per node."""


class AksGpuSharingArgs(TypedDict):
    """How an AKS GPU pool shares its GPUs: MIG only, through the pool's gpuInstanceProfile."""

    mig: str
    """MIG profile every GPU of the pool is split into, in NVIDIA's names (`1g.10gb`, `3g.40gb`): AKS sets the pool's gpuInstanceProfile (MIG1g..MIG7g) that yields it. Only A100, H100 and H200 sizes, with the profiles their GPU offers."""


class AksReservationCreateArgs(TypedDict):
    """A capacity reservation group the stack creates for the pool, with one reservation of the pool's VM size in each of its zones (one regional reservation for a pool without zones)."""

    count: int
    """VMs reserved in each of the pool's zones (or in the region, for a pool without zones), at most the pool's max; billed at the size's on-demand price whether nodes run or not."""


class AksCapacityReservationArgs(TypedDict):
    """The capacity reservation group an on-demand GPU pool draws its nodes from (the AgentPool's `capacityReservationGroupID`), so its fallback finds capacity. Exactly one of `id` and `create`."""

    id: NotRequired[str]
    """An existing group's resource id (/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Compute/capacityReservationGroups/<name>), reserved outside this stack; it must hold a reservation of the pool's VM size in the pool's zones."""
    create: NotRequired[AksReservationCreateArgs]
    """Create a group in the cluster's resource group with `count` VMs of the pool's size reserved in each of its zones."""


class AksGpuPoolArgs(TypedDict):
    """A GPU pool that scales 0..N, on spot or on-demand VMs."""

    name: str
    """Pool name, unique in the stack: 1-12 lower-case letters and digits, starting with a letter."""
    machine: str
    """GPU VM size, e.g. Standard_NC4as_T4_v3; retired sizes are refused, with their replacement named."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Availability zones `"1"` to `"3"`; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[AksGpuPoolCapacity]
    """`spot` or, for a GPU pool only, `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[AksPoolUpgradeArgs]
    """How AKS replaces the nodes when it upgrades them (on-demand pools only: AKS takes none on spot pools)."""
    gpu: NotRequired[AksGpuArgs]
    """GPU type and count; unset = filled in from the VM size, which fixes them."""
    sharing: NotRequired[AksGpuSharingArgs]
    """Split each GPU into MIG instances (docs/gpu-sharing.md); unset = every pod gets whole GPUs."""
    image_gb: NotRequired[float]
    """Compressed size in GB of the image the pool's steps run, for the plan's time to a running step (docs/time-to-gpu.md); unset = the plan says the image size is not declared."""
    eviction_policy: NotRequired[AksGpuPoolEvictionPolicy]
    """Spot pools: what happens to an evicted node; deallocated nodes still count against quota. Default: `Delete`."""
    max_price: NotRequired[float]
    """Spot pools: the most to pay, in USD/hour with up to 5 decimals, or -1: never evict on price, pay at most the on-demand price. Default: `-1`."""
    capacity_reservation_group: NotRequired[AksCapacityReservationArgs]
    """On-demand pools only: the capacity reservation group the pool's nodes are placed in, so an on-demand fallback finds capacity (docs/cost.md: a reservation is paid whether used or not). The cluster then runs as a user-assigned identity with Contributor on the group's resource group, as AKS requires."""
    artifact_streaming: NotRequired[bool]
    """AKS artifact streaming (preview) from a Premium ACR in `cluster.registries`; refused while the installed pulumi-azure-native has no API version with the AgentPool's artifactStreamingProfile. Default: `false`."""


class AksSpotPoolArgs(TypedDict):
    """A CPU pool on spot VMs that scales 0..N, for batch steps without GPUs."""

    name: str
    """Pool name, unique in the stack: 1-12 lower-case letters and digits, starting with a letter."""
    machine: str
    """VM size, e.g. Standard_D4s_v3; retired sizes are refused, with their replacement named."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Availability zones `"1"` to `"3"`; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[AksGpuPoolCapacity]
    """`spot` or, for a GPU pool only, `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[AksPoolUpgradeArgs]
    """How AKS replaces the nodes when it upgrades them (on-demand pools only: AKS takes none on spot pools)."""
    eviction_policy: NotRequired[AksGpuPoolEvictionPolicy]
    """Spot pools: what happens to an evicted node; deallocated nodes still count against quota. Default: `Delete`."""
    max_price: NotRequired[float]
    """Spot pools: the most to pay, in USD/hour with up to 5 decimals, or -1: never evict on price, pay at most the on-demand price. Default: `-1`."""


class AksAutoscalerArgs(TypedDict):
    """Cluster autoscaler tuning: the ManagedCluster's `autoScalerProfile`."""

    expander: NotRequired[AksAutoscalerExpander]
    """`priority` makes spot pools win over on-demand fallbacks. Default: `priority`."""
    scan_interval: NotRequired[str]
    """How often the autoscaler looks for pending pods, in whole seconds (`10s`). Default: `10s`."""
    max_node_provision_time: NotRequired[str]
    """How long the autoscaler waits for a requested node (GPU allocatable included) before it gives up on its pool and tries the next priority tier, in whole minutes (`10m`); AKS's own default is 15m. Bounds how long a spot stock-out stalls a GPU step before on-demand is used. Default: `10m`."""
    new_pod_scale_up_delay: NotRequired[str]
    """How old a pending pod must be before the autoscaler acts on it, an integer with `s`, `m` or `h` (`0s`, AKS's default). Default: `0s`."""
    scale_down_unneeded_time: NotRequired[str]
    """How long a node is unneeded before it is removed. Default: `10m`."""
    scale_down_delay_after_add: NotRequired[str]
    """Scale-down pause after a scale-up. Default: `10m`."""
    max_graceful_termination_sec: NotRequired[int]
    """Pods' termination grace during scale-down, in seconds. Default: `600`."""
    skip_nodes_with_local_storage: NotRequired[bool]
    """Keep nodes whose pods use local storage. Default: `false`."""


class AksDeployerArgs(TypedDict):
    """Who runs `pulumi up` and from where, and how kubelogin signs it in. The Kubernetes provider logs in as the deployer, so the deployer needs a credential that works without a person, rights on the cluster, and a network path to its API server; the plan's preflight checks them."""

    network: NotRequired[AksDeployerNetwork]
    """Where the deployer runs: internet (a hosted CI runner or a laptop) or cluster-network (a runner inside the cluster's VNet, which can reach a private API server). Default: `internet`."""
    egress_ranges: NotRequired[list[str]]
    """Public CIDRs the deployer connects from (a runner's static egress). Added to the API server's authorized ranges whenever the API server restricts by address."""
    drills: NotRequired[bool]
    """Let the deployer evict a node of the stack's spot pools on purpose (`spotkube drill --run`, drill.yml, which runs as the deploy identity): the right to simulate an eviction or a maintenance event on the stack's nodes, as the cloud names it, and nothing more (docs/identities.md). Default: `false`."""
    object_id: str
    """Required: the Entra ID object id of whoever runs `pulumi up` (CI's deploy identity), which gets Azure Kubernetes Service RBAC Cluster Admin on the cluster; the same whoever previews or deploys. A service principal or managed identity: `az ad sp show --id <appId> --query id -o tsv`; yourself: `az ad signed-in-user show --query id -o tsv`."""
    principal_type: AksDeployerPrincipalType
    """Required with objectId: what it is, User, ServicePrincipal (an app or a managed identity) or Group; Azure refuses an assignment whose type is wrong (UnmatchedPrincipalType)."""
    login: NotRequired[AksDeployerLogin]
    """How kubelogin signs the deployer in, nothing more (objectId says who it is): azurecli (the az CLI's account, a person's or CI's after azure/login), workloadidentity (a federated token, AZURE_FEDERATED_TOKEN_FILE), spn (a service principal secret) or msi (a managed identity on an Azure host). Default: `azurecli`."""
    grant_propagation_wait: NotRequired[str]
    """How long the first deployment waits after granting the deployer its Kubernetes rights before it creates objects (Azure RBAC assignments take minutes to apply). Default: `5m`."""
    reservation_grant_wait: NotRequired[str]
    """How long a deployment that grants the cluster identity Contributor for a capacity reservation group waits before it creates the reserved pools: AKS checks the grant once, when it creates a pool, and a pool made before the grant applies is made without its group (Azure allows up to an hour). Default: `60m`."""


class AksMaintenanceWindowArgs(TypedDict):
    """A weekly window: the only time the cloud may upgrade the cluster or replace its nodes' images."""

    days: list[AksMaintenanceWindowDays]
    """Days of the week, e.g. `[Saturday]`; how many the cloud takes, and how many hours a week it needs, is checked per cloud (docs/evictions.md)."""
    start: str
    """Start time, `HH:MM`."""
    hours: int
    """Length in hours, 4 to 24."""
    utc_offset: NotRequired[str]
    """The times' offset from UTC, e.g. `+01:00`. A cloud that counts a window's days in UTC gets the window in UTC, its days shifted when the start crosses midnight; the plan shows both. Default: `+00:00`."""


class AksBusyPeriodArgs(TypedDict):
    """Dates on which nothing may drain a node for an upgrade: a deadline, a long training run."""

    name: str
    """A name, e.g. `quarter-end`."""
    start: str
    """First day, `YYYY-MM-DD` (UTC)."""
    end: str
    """Last day, `YYYY-MM-DD` (UTC), included."""


class AksMaintenanceArgs(TypedDict):
    """When the cloud may upgrade the cluster and drain its nodes: AKS maintenance configurations (the Kubernetes auto-upgrade and node OS schedules), GKE's maintenance policy (a recurring window and exclusions)."""

    window: NotRequired[AksMaintenanceWindowArgs]
    """The weekly window; unset = the cloud's default, which the plan shows (docs/evictions.md)."""
    busy_periods: NotRequired[list[AksBusyPeriodArgs]]
    """Periods with no node upgrade at all, `[{name, start, end}]`."""
    anytime: NotRequired[bool]
    """Let the cloud upgrade whenever it likes: no window, no busy periods (the plan warns for every GPU pool). Default: `false`."""


class AksClusterLogsArgs(TypedDict):
    """Container Insights: container logs sent to a Log Analytics workspace, so a step's logs outlive the node that ran it (docs/logs.md)."""

    enabled: NotRequired[bool]
    """Container Insights sends container logs to a Log Analytics workspace; default: on in prod."""
    retention_days: NotRequired[int]
    """Days the workspace keeps logs, 30..730 (the first 31 days are included in the ingestion price). Default: `30`."""
    workspace_id: NotRequired[str]
    """An existing Log Analytics workspace's resource id to send logs to; unset = spotkube creates one in the cluster's resource group."""


class AksClusterArgs(TypedDict):
    """Cluster-wide settings of the ManagedCluster; the security switches default to on, or on in prod."""

    kubernetes_version: NotRequired[str]
    """Pinned Kubernetes version: `major.minor` (its latest patch) or `major.minor.patch`; unset follows the channel."""
    allow_unlisted_region: NotRequired[bool]
    """Accept a `region` that is not in spotkube's bundled region list of the cloud (a region newer than this spotkube release); its name is still checked for the cloud's shape. Default: `false`."""
    channel: NotRequired[str]
    """Upgrade channel: stable, rapid, patch, node-image or none. Default: `stable`."""
    private: NotRequired[bool]
    """Private API server, reachable only from the VNet; default: on in prod."""
    authorized_ip_ranges: NotRequired[list[Input[str]]]
    """CIDRs allowed to reach the API server."""
    deletion_protection: NotRequired[bool]
    """`protect` on the cluster; default: on in prod."""
    autoscaler: NotRequired[AksAutoscalerArgs]
    """Cluster autoscaler tuning."""
    deployer: AksDeployerArgs
    """Who runs `pulumi up`, from where, and how it signs in."""
    maintenance: NotRequired[AksMaintenanceArgs]
    """When the cloud may upgrade the cluster and drain nodes: a weekly window and busy periods."""
    logs: NotRequired[AksClusterLogsArgs]
    """Where container logs go, so evicted steps' logs are kept."""
    resource_group_name: NotRequired[Input[str]]
    """Use this existing resource group instead of creating one."""
    local_accounts_disabled: NotRequired[bool]
    """Disable local accounts, so Entra ID is the only way in; default: on in prod."""
    admin_group_object_ids: NotRequired[list[Input[str]]]
    """Object ids of the Entra ID groups that get cluster admin and the RBAC Cluster Admin role."""
    network_policy: NotRequired[AksClusterNetworkPolicy]
    """`cilium` (Azure CNI overlay with the Cilium dataplane), `azure` or `calico`. Default: `cilium`."""
    registries: NotRequired[list[str]]
    """Azure Container Registries the nodes pull from, by resource id (/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ContainerRegistry/registries/<name>): the kubelet identity gets AcrPull on each (docs/identities.md says who may grant it)."""


class AksGpuClusterArgs(TypedDict):
    """The args of `AksGpuCluster`: one AKS platform: a ManagedCluster with its agent pools, for one environment and Azure region."""

    environment: str
    """Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch (`cluster.private`, `cluster.localAccountsDisabled` and `cluster.deletionProtection`) and `protect`."""
    region: str
    """Azure region, e.g. uksouth or eastus."""
    system_pool: NotRequired[AksSystemPoolArgs]
    """The on-demand system pool."""
    platform_pool: NotRequired[AksPlatformPoolArgs]
    """The untainted on-demand pool for Kubeflow and other platform workloads."""
    gpu_pools: NotRequired[list[AksGpuPoolArgs]]
    """GPU pools, each scaling min..max."""
    spot_pools: NotRequired[list[AksSpotPoolArgs]]
    """CPU pools on spot VMs for batch steps, each scaling min..max."""
    cluster: AksClusterArgs
    """Cluster-wide settings."""
    checkpoint_store: NotRequired[str]
    """The name of an object store the cluster creates for training checkpoints, writable by the identity the workers run as, as a stack file's `training.checkpointStore.name` is (the cloud's storage account or bucket, whose naming rules it checks); `spotkube.training.store_location` gives its URI for `train_job`. Unset = none."""


class AksGpuNodePoolArgs(TypedDict):
    """The args of `AksGpuNodePool`: one pool, GPU or CPU, added to a cluster spotkube may not have made (an entry of `AksGpuCluster`'s `gpu_pools` and the cluster it joins). A machine without a GPU makes a CPU pool."""

    cluster_id: Input[str]
    """The AKS cluster the pool joins: its Azure resource id, `/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ContainerService/managedClusters/<name>`; another resource's output (a `ManagedCluster`'s `id`) is fine."""
    region: str
    """The cluster's Azure region, e.g. uksouth or eastus: it decides the pool's zones, prices and quota."""
    vnet_subnet_id: NotRequired[Input[str]]
    """The subnet of your virtual network the pool's nodes join, as the cluster's other pools do (Azure CNI; AKS wants all of a cluster's pools in a subnet or none); unset: the network AKS manages."""
    pod_subnet_id: NotRequired[Input[str]]
    """The subnet the pods get their addresses from, where the cluster's other pools name one (Azure CNI with dynamic pod IPs); unset: none."""
    name: str
    """Pool name, unique in the stack: 1-12 lower-case letters and digits, starting with a letter."""
    machine: str
    """GPU VM size, e.g. Standard_NC4as_T4_v3; retired sizes are refused, with their replacement named."""
    min: NotRequired[int]
    """Minimum nodes, at most `max`; 0 means an idle pool costs nothing. Default: `0`."""
    max: NotRequired[int]
    """Maximum nodes. Default: `4`."""
    zones: NotRequired[list[str]]
    """Availability zones `"1"` to `"3"`; empty = regional."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels in Kubernetes' syntax (keys `[prefix/]name`, names and values of at most 63 letters, digits, `-`, `_` and `.`); the prefixes `spotkube.io/`, `kubernetes.io/`, `k8s.io/` and the cloud's own node-label prefix are reserved; `node.kubernetes.io/` and `kubelet.kubernetes.io/` are accepted."""
    capacity: NotRequired[AksGpuPoolCapacity]
    """`spot` or, for a GPU pool only, `on-demand` (a fallback pool). Default: `spot`."""
    taints: NotRequired[list[str]]
    """Extra taints, as `key=value:Effect` with Kubernetes' syntax for the key and value and Effect NoSchedule, PreferNoSchedule or NoExecute; the prefixes `spotkube.io/` and the cloud's own are reserved."""
    upgrade: NotRequired[AksPoolUpgradeArgs]
    """How AKS replaces the nodes when it upgrades them (on-demand pools only: AKS takes none on spot pools)."""
    gpu: NotRequired[AksGpuArgs]
    """GPU type and count; unset = filled in from the VM size, which fixes them."""
    sharing: NotRequired[AksGpuSharingArgs]
    """Split each GPU into MIG instances (docs/gpu-sharing.md); unset = every pod gets whole GPUs."""
    image_gb: NotRequired[float]
    """Compressed size in GB of the image the pool's steps run, for the plan's time to a running step (docs/time-to-gpu.md); unset = the plan says the image size is not declared."""
    eviction_policy: NotRequired[AksGpuPoolEvictionPolicy]
    """Spot pools: what happens to an evicted node; deallocated nodes still count against quota. Default: `Delete`."""
    max_price: NotRequired[float]
    """Spot pools: the most to pay, in USD/hour with up to 5 decimals, or -1: never evict on price, pay at most the on-demand price. Default: `-1`."""
    capacity_reservation_group: NotRequired[AksCapacityReservationArgs]
    """On-demand pools only: the capacity reservation group the pool's nodes are placed in, so an on-demand fallback finds capacity (docs/cost.md: a reservation is paid whether used or not). The cluster then runs as a user-assigned identity with Contributor on the group's resource group, as AKS requires."""
    artifact_streaming: NotRequired[bool]
    """AKS artifact streaming (preview) from a Premium ACR in `cluster.registries`; refused while the installed pulumi-azure-native has no API version with the AgentPool's artifactStreamingProfile. Default: `false`."""
