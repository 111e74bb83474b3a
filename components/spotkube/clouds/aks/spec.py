"""An AKS platform's spec: the shared models of `spotkube.platform.spec` with AKS's own fields.

A GKE stack is never offered these keys, and one that sets them is told they are AKS's; the stack keys,
component args and reference tables of AKS are generated from these models. Pure module: no Pulumi.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, Strict, field_validator

from spotkube.platform.spec import (
    ENVIRONMENT_PATTERN,
    REGION_PATTERN,
    AutoscalerSettings,
    ClusterLogs,
    ClusterSettings,
    DeployerNetwork,
    DeployerSettings,
    Flag,
    GpuPool,
    GpuSharingSpec,
    GpuSpec,
    LoginMode,
    Number,
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

POOL_NAME = "1-12 lower-case letters and digits, starting with a letter"
ZONES = 'Availability zones `"1"` to `"3"`; empty = regional.'


class AksSystemPool(SystemPool):
    """The on-demand pool that runs the cluster's own add-ons: AKS's System mode pool."""

    name: Text = Field(
        default="system",
        description=f"Pool name; never rename it once the cluster exists. {POOL_NAME}.",
    )
    machine: Text | None = Field(
        default=None,
        description="VM size; unset = the default machine. Retired sizes are refused, with their replacement named.",
    )
    zones: tuple[Text, ...] = Field(default=(), description=ZONES)
    critical_addons_only: Flag = Field(
        default=True,
        description="Taint the pool CriticalAddonsOnly=true:NoSchedule so only add-ons run here.",
    )

    def critical_addons_only_taint(self) -> bool:
        return self.critical_addons_only


class AksPlatformPool(PlatformPool):
    """The untainted on-demand pool for platform workloads such as Kubeflow Pipelines."""

    enabled: Flag = Field(
        default=True,
        description="Create the pool. It must stay enabled while Kubeflow is, and while the system pool is tainted "
        "(`criticalAddonsOnly`), because Kubeflow needs an untainted on-demand pool.",
    )
    name: Text = Field(
        default="platform",
        description="Pool name: at most 8 lower-case letters and digits, starting with a letter, because spotkube "
        "adds 4 characters that change when the pool must be replaced.",
    )
    machine: Text | None = Field(
        default=None,
        description="VM size; unset = the default machine. Retired sizes are refused, with their replacement named.",
    )
    zones: tuple[Text, ...] = Field(default=(), description=ZONES)


class AksPoolUpgrade(PoolUpgrade):
    """How AKS replaces an on-demand pool's nodes when it upgrades them (the AgentPool's
    `upgradeSettings`). Unset on a GPU pool: one surge node, none unavailable, a drain that waits an
    hour and cordons a node it can't empty, so a running step can finish or checkpoint. AKS takes none
    on spot pools ("Spot pools can't set max surge")."""

    max_surge: Text | None = Field(
        default=None, pattern=r"^[0-9]+%?$",
        description="Extra nodes added while the pool is upgraded: a number or a percentage (`10%`, AKS's default); "
        "GPU pools default to 1 (surge nodes need GPU quota).",
    )
    max_unavailable: Text | None = Field(
        default=None, pattern=r"^[0-9]+%?$",
        description="Nodes that may be down at once: a number or a percentage; GPU pools default to 0.",
    )
    soak_minutes: Whole | None = Field(
        default=None, ge=0, le=30,
        description="Minutes to wait after draining a node before reimaging it, 0 to 30 (default 0).",
    )
    drain_timeout_minutes: Whole | None = Field(
        default=None, ge=5, le=1440,
        description="How long a drain waits for pods to leave a node (pod disruption budgets honoured) before the "
        "node counts as undrainable, 5 to 1440; GPU pools default to 60, AKS's own is 30.",
    )
    undrainable_nodes: Literal["Cordon", "Schedule"] | None = Field(
        default=None,
        description="A node a drain can't empty in time is cordoned and replaced by a surge node (`Cordon`, the GPU "
        "default: its step runs on) or made schedulable again and left un-upgraded (`Schedule`).",
    )


class AksSpotPool(SpotPool):
    """A CPU pool on spot VMs that scales 0..N, for batch steps without GPUs."""

    name: Text = Field(description=f"Pool name, unique in the stack: {POOL_NAME}.")
    machine: Text = Field(
        min_length=1,
        description="VM size, e.g. Standard_D4s_v3; retired sizes are refused, with their replacement named.",
    )
    zones: tuple[Text, ...] = Field(default=(), description=ZONES)
    capacity: Literal["spot", "on-demand"] = Field(
        default="spot",
        description="`spot` or, for a GPU pool only, `on-demand` (a fallback pool).",
    )
    upgrade: AksPoolUpgrade = Field(
        default_factory=AksPoolUpgrade,
        description="How AKS replaces the nodes when it upgrades them (on-demand pools only: AKS takes none on spot "
        "pools).",
    )
    eviction_policy: Literal["Delete", "Deallocate"] = Field(
        default="Delete",
        description="Spot pools: what happens to an evicted node; deallocated nodes still count against quota.",
    )
    max_price: Number = Field(
        default=-1,
        description="Spot pools: the most to pay, in USD/hour with up to 5 decimals, or -1: never evict on price, "
        "pay at most the on-demand price.",
    )

    @field_validator("max_price")
    @classmethod
    def _max_price(cls, value: float) -> float:
        accepted = "use -1 (pay up to the on-demand price) or a positive USD/hour amount"
        shown = f"{value:g}"
        if value == -1:
            return value
        try:
            exponent = Decimal(str(value)).as_tuple().exponent
        except InvalidOperation as err:
            raise ValueError(f"{shown} is not a price; {accepted}") from err
        if value <= 0:
            raise ValueError(f"{shown} is not allowed; {accepted}")
        if isinstance(exponent, int) and exponent < -5:
            raise ValueError(f"{value} has more than 5 decimals, which Azure refuses; {accepted}")
        return value

    def spot_price_controls(self) -> tuple[str | None, float | None]:
        if self.capacity != "spot":
            return None, None
        return self.eviction_policy, self.max_price


class AksGpuSharing(GpuSharingSpec):
    """How an AKS GPU pool shares its GPUs: MIG only, through the pool's gpuInstanceProfile."""

    mig: Text = Field(
        description="MIG profile every GPU of the pool is split into, in NVIDIA's names (`1g.10gb`, `3g.40gb`): AKS "
        "sets the pool's gpuInstanceProfile (MIG1g..MIG7g) that yields it. Only A100, H100 and H200 sizes, with the "
        "profiles their GPU offers.",
    )


class AksReservationCreate(_Model):
    """A capacity reservation group the stack creates for the pool, with one reservation of the pool's VM
    size in each of its zones (one regional reservation for a pool without zones)."""

    count: Annotated[int, Field(ge=1, le=1000), Strict(), BeforeValidator(_whole_number)] = Field(
        description="VMs reserved in each of the pool's zones (or in the region, for a pool without zones), at "
        "most the pool's max; billed at the size's on-demand price whether nodes run or not.",
    )


class AksCapacityReservation(_Model):
    """The capacity reservation group an on-demand GPU pool draws its nodes from (the AgentPool's
    `capacityReservationGroupID`), so its fallback finds capacity. Exactly one of `id` and `create`."""

    id: Text | None = Field(
        default=None,
        description="An existing group's resource id (/subscriptions/<id>/resourceGroups/<group>/providers/"
        "Microsoft.Compute/capacityReservationGroups/<name>), reserved outside this stack; it must hold a "
        "reservation of the pool's VM size in the pool's zones.",
    )
    create: AksReservationCreate | None = Field(
        default=None,
        description="Create a group in the cluster's resource group with `count` VMs of the pool's size reserved in "
        "each of its zones.",
    )


class AksGpuPool(AksSpotPool, GpuPool):
    """A GPU pool that scales 0..N, on spot or on-demand VMs."""

    machine: Text = Field(
        min_length=1,
        description="GPU VM size, e.g. Standard_NC4as_T4_v3; retired sizes are refused, with their replacement "
        "named.",
    )

    gpu: GpuSpec | None = Field(
        default=None, description="GPU type and count; unset = filled in from the VM size, which fixes them."
    )
    sharing: AksGpuSharing | None = Field(
        default=None,
        description="Split each GPU into MIG instances (docs/gpu-sharing.md); unset = every pod gets whole GPUs.",
    )
    capacity_reservation_group: AksCapacityReservation | None = Field(
        default=None,
        description="On-demand pools only: the capacity reservation group the pool's nodes are placed in, so an "
        "on-demand fallback finds capacity (docs/cost.md: a reservation is paid whether used or not). The cluster "
        "then runs as a user-assigned identity with Contributor on the group's resource group, as AKS requires.",
    )
    artifact_streaming: Flag = Field(
        default=False,
        description="AKS artifact streaming (preview) from a Premium ACR in `cluster.registries`; refused while the "
        "installed pulumi-azure-native has no API version with the AgentPool's artifactStreamingProfile.",
    )


class AksAutoscalerSettings(AutoscalerSettings):
    """Cluster autoscaler tuning: the ManagedCluster's `autoScalerProfile`."""

    expander: Literal["priority", "least-waste", "most-pods", "random"] = Field(
        default="priority", description="`priority` makes spot pools win over on-demand fallbacks."
    )
    scan_interval: Text = Field(
        default="10s", description="How often the autoscaler looks for pending pods, in whole seconds (`10s`)."
    )
    max_node_provision_time: Text = Field(
        default="10m",
        description="How long the autoscaler waits for a requested node (GPU allocatable included) before it "
        "gives up on its pool and tries the next priority tier, in whole minutes (`10m`); AKS's own default is "
        "15m. Bounds how long a spot stock-out stalls a GPU step before on-demand is used.",
    )
    new_pod_scale_up_delay: Text = Field(
        default="0s",
        description="How old a pending pod must be before the autoscaler acts on it, an integer with `s`, `m` "
        "or `h` (`0s`, AKS's default).",
    )
    scale_down_unneeded_time: Text = Field(
        default="10m", description="How long a node is unneeded before it is removed."
    )
    scale_down_delay_after_add: Text = Field(default="10m", description="Scale-down pause after a scale-up.")
    max_graceful_termination_sec: Whole = Field(
        default=600, ge=0, description="Pods' termination grace during scale-down, in seconds."
    )
    skip_nodes_with_local_storage: Flag = Field(
        default=False, description="Keep nodes whose pods use local storage."
    )


class AksDeployerSettings(DeployerSettings):
    """Who runs `pulumi up` and from where, and how kubelogin signs it in. The Kubernetes provider logs
    in as the deployer, so the deployer needs a credential that works without a person, rights on the
    cluster, and a network path to its API server; the plan's preflight checks them."""

    object_id: Annotated[Text | None, RequiredArg()] = Field(
        default=None,
        description="Required: the Entra ID object id of whoever runs `pulumi up` (CI's deploy identity), which "
        "gets Azure Kubernetes Service RBAC Cluster Admin on the cluster; the same whoever previews or deploys. "
        "A service principal or managed identity: `az ad sp show --id <appId> --query id -o tsv`; yourself: "
        "`az ad signed-in-user show --query id -o tsv`.",
    )
    principal_type: Annotated[Literal["User", "ServicePrincipal", "Group"] | None, RequiredArg()] = Field(
        default=None,
        description="Required with objectId: what it is, User, ServicePrincipal (an app or a managed identity) or "
        "Group; Azure refuses an assignment whose type is wrong (UnmatchedPrincipalType).",
    )
    login: LoginMode = Field(
        default="azurecli",
        description="How kubelogin signs the deployer in, nothing more (objectId says who it is): azurecli (the az "
        "CLI's account, a person's or CI's after azure/login), workloadidentity (a federated token, "
        "AZURE_FEDERATED_TOKEN_FILE), spn (a service principal secret) or msi (a managed identity on an Azure host).",
    )
    network: DeployerNetwork = Field(
        default="internet",
        description="Where the deployer runs: internet (a hosted CI runner or a laptop) or cluster-network "
        "(a runner inside the cluster's VNet, which can reach a private API server).",
    )
    grant_propagation_wait: Text = Field(
        default="5m",
        pattern=r"^[1-9][0-9]*(s|m)$",
        description="How long the first deployment waits after granting the deployer its Kubernetes "
        "rights before it creates objects (Azure RBAC assignments take minutes to apply).",
    )
    reservation_grant_wait: Text = Field(
        default="60m",
        pattern=r"^[1-9][0-9]*(s|m)$",
        description="How long a deployment that grants the cluster identity Contributor for a capacity reservation "
        "group waits before it creates the reserved pools: AKS checks the grant once, when it creates a pool, and "
        "a pool made before the grant applies is made without its group (Azure allows up to an hour).",
    )


class AksClusterLogs(ClusterLogs):
    """Container Insights: container logs sent to a Log Analytics workspace, so a step's logs outlive the
    node that ran it (docs/logs.md)."""

    enabled: Flag | None = Field(
        default=None,
        description="Container Insights sends container logs to a Log Analytics workspace; default: on in prod.",
    )
    retention_days: Annotated[int, Field(ge=30, le=730), Strict(), BeforeValidator(_whole_number)] = Field(
        default=30, description="Days the workspace keeps logs, 30..730 (the first 31 days are included in the "
        "ingestion price)."
    )
    workspace_id: Text | None = Field(
        default=None,
        description="An existing Log Analytics workspace's resource id to send logs to; unset = spotkube creates one "
        "in the cluster's resource group.",
    )


class AksClusterSettings(ClusterSettings):
    """Cluster-wide settings of the ManagedCluster; the security switches default to on, or on in prod."""

    kubernetes_version: Text | None = Field(
        default=None,
        description="Pinned Kubernetes version: `major.minor` (its latest patch) or `major.minor.patch`; unset "
        "follows the channel.",
    )
    channel: Text | None = Field(
        default=None, description="Upgrade channel: stable, rapid, patch, node-image or none."
    )
    resource_group_name: Annotated[Text | None, Wired("spotkube-wired-resource-group")] = Field(
        default=None, description="Use this existing resource group instead of creating one."
    )
    private: Flag | None = Field(
        default=None, description="Private API server, reachable only from the VNet; default: on in prod."
    )
    local_accounts_disabled: Flag | None = Field(
        default=None, description="Disable local accounts, so Entra ID is the only way in; default: on in prod."
    )
    admin_group_object_ids: tuple[Annotated[Text, Wired("00000000-0000-4000-8000-000000000000")], ...] = Field(
        default=(),
        description="Object ids of the Entra ID groups that get cluster admin and the RBAC Cluster Admin role.",
    )
    network_policy: Literal["cilium", "azure", "calico"] = Field(
        default="cilium",
        description="`cilium` (Azure CNI overlay with the Cilium dataplane), `azure` or `calico`.",
    )
    autoscaler: AksAutoscalerSettings = Field(
        default_factory=AksAutoscalerSettings, description="Cluster autoscaler tuning."
    )
    deployer: AksDeployerSettings = Field(
        default_factory=AksDeployerSettings, description="Who runs `pulumi up`, from where, and how it signs in."
    )
    logs: AksClusterLogs = Field(
        default_factory=AksClusterLogs, description="Where container logs go, so evicted steps' logs are kept."
    )
    registries: tuple[Text, ...] = Field(
        default=(),
        description="Azure Container Registries the nodes pull from, by resource id (/subscriptions/<id>/"
        "resourceGroups/<group>/providers/Microsoft.ContainerRegistry/registries/<name>): the kubelet identity "
        "gets AcrPull on each (docs/identities.md says who may grant it).",
    )


class AksSpec(PlatformSpec):
    """One AKS platform: a ManagedCluster with its agent pools, for one environment and Azure region."""

    cloud: Literal["aks"] = Field(description="Which cloud: `aks`.")
    environment: Text = Field(
        pattern=ENVIRONMENT_PATTERN,
        description="Environment name, e.g. dev, staging or prod. `prod` turns on every unset security switch "
        "(`cluster.private`, `cluster.localAccountsDisabled` and `cluster.deletionProtection`) and `protect`.",
    )
    region: Text = Field(pattern=REGION_PATTERN, description="Azure region, e.g. uksouth or eastus.")
    system_pool: AksSystemPool = Field(default_factory=AksSystemPool, description="The on-demand system pool.")
    platform_pool: AksPlatformPool = Field(
        default_factory=AksPlatformPool,
        description="The untainted on-demand pool for Kubeflow and other platform workloads.",
    )
    gpu_pools: tuple[AksGpuPool, ...] = Field(
        default=(), max_length=100, description="GPU pools, each scaling min..max."
    )
    spot_pools: tuple[AksSpotPool, ...] = Field(
        default=(), max_length=100, description="CPU pools on spot VMs for batch steps, each scaling min..max."
    )
    cluster: AksClusterSettings = Field(default_factory=AksClusterSettings, description="Cluster-wide settings.")
