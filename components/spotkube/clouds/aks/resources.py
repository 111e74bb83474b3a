"""AKS's resources, both ways: the inputs the component writes, and how the plan reads them back.

Writer and reader sit together so that what `AksGpuCluster` sends Azure and what the plan, the policy
pack and `plan --diff` say it sent can't drift apart: the pool inputs and their reading
(`RegisteredPool`), the cluster's inputs and its security posture, the priority expander's ConfigMap
and the autoscaler's facts, the fields Azure fixes at creation, and the names derived from the
component's. The writers return azure-native's inputs as its constructors take them (snake_case
keywords); the readers read them as the engine registers them (camelCase, `api_spelling` for the
pools' flat fields). Values that are other resources' outputs (the resource group, the cluster's name,
the authorized ranges) are passed in and passed through untouched.

Pure module: no Pulumi. The facts, with sources: docs/platform-facts.md#aks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from spotkube.clouds.aks import catalog, gpu_sharing
from spotkube.clouds.aks.labels import AKS_ACCELERATOR_LABEL
from spotkube.clouds.aks.spec import AksPoolUpgrade
from spotkube.clouds.aks.supply import RESERVATION_CREATE_ONLY, RESERVATION_TYPE
from spotkube.platform import contract
from spotkube.platform.cloud import (
    AutoscalerFacts,
    RegisteredPool,
    first,
    items,
    mapping,
    node_count,
    read_once_per_plan,
)
from spotkube.platform.component_names import AUTONAME_SUFFIX
from spotkube.platform.input_messages import shown
from spotkube.platform.maintenance import UpgradeExposure, window_text
from spotkube.platform.plan import PlatformPlan, PoolPlan, autoscaler_priorities, versioned_name
from spotkube.platform.posture import ClusterPosture, Setting, flag, listed
from spotkube.platform.spec import MaintenanceSettings, MaintenanceWindow, PoolUpgrade
from spotkube.platform.strict_yaml import safe_load

CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
ROLE_ASSIGNMENT_TYPE = "azure-native:authorization:RoleAssignment"
MAINTENANCE_TYPE = "azure-native:containerservice:MaintenanceConfiguration"
#: The maintenance configurations AKS reads by name: the Kubernetes auto-upgrade channel's schedule and
#: the node OS channel's (learn.microsoft.com/azure/aks/planned-maintenance).
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"
#: The node OS channel spotkube sets: weekly node images, each update a drain of every node.
NODE_OS_CHANNEL = "NodeImage"
#: A stack without a window of its own: Saturday 02:00-06:00 UTC, the shortest window AKS takes.
DEFAULT_WINDOW = MaintenanceWindow(days=("Saturday",), start="02:00", hours=4)
#: What an on-demand GPU pool's upgrade does unless the stack says otherwise: one surge node (GPU quota),
#: none taken away early, a drain that waits an hour (pod disruption budgets honoured) and a node it can't
#: drain cordoned and left running beside its surge replacement, so a step on it can finish.
GPU_UPGRADE = AksPoolUpgrade(max_surge="1", max_unavailable="0", drain_timeout_minutes=60, soak_minutes=0,
                          undrainable_nodes="Cordon")
#: AKS's own default, for pools it upgrades with none set (the AgentPoolUpgradeSettings docstrings).
AKS_DRAIN_DEFAULT_MINUTES = 30
AKS_DEFAULT_MAX_SURGE = "10%"
#: The kubeconfigs of a cluster's users, and the deployer's own identity.
USER_CREDENTIALS_INVOKE = "azure-native:containerservice:listManagedClusterUserCredentials"
CLIENT_CONFIG_INVOKE = "azure-native:authorization:getClientConfig"

# --- Azure resource ids ---------------------------------------------------------------------------

#: The eviction drill's custom role's id, fixed so that the bootstrap defines it and the program assigns it
#: by the same GUID: uuid5(NAMESPACE_URL, "https://spotkube.invalid/roles/eviction-drill"). A role
#: definition's GUID is unique in the tenant, as its name is, like spotkube's other custom roles.
DRILL_ROLE_ID = "be7e2d3a-1994-5ce6-8d7a-e25395b50652"


def role_definition_id(scope_id: str, role: str) -> str | None:
    """A role's definition id in the subscription of the resource `scope_id` (an ARM id
    `/subscriptions/<id>/...`), the form Azure stores on an assignment; None when `scope_id` is no ARM id."""
    parts = scope_id.split("/")
    if len(parts) < 3 or parts[:2] != ["", "subscriptions"] or not parts[2]:
        return None
    return f"/subscriptions/{parts[2]}/providers/Microsoft.Authorization/roleDefinitions/{role}"


#: A managed cluster's ARM id, as `AksGpuNodePool`'s `cluster_id` takes it.
CLUSTER_ID_PATTERN = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.ContainerService/"
    r"managedClusters/(?P<name>[^/]+)$", flags=re.IGNORECASE)
CLUSTER_ID_ACCEPTED = ("a managed cluster's Azure resource id, /subscriptions/<id>/resourceGroups/<group>/providers/"
                       "Microsoft.ContainerService/managedClusters/<name> (az aks show --query id -o tsv)")


def cluster_of_id(cluster_id: object) -> tuple[str, str] | None:
    """The resource group and name of a managed cluster's ARM id; None when it is not one."""
    match = CLUSTER_ID_PATTERN.match(cluster_id) if isinstance(cluster_id, str) else None
    return (match["group"], match["name"]) if match else None


def node_resource_group_id(cluster_id: str, node_resource_group: str | None) -> str | None:
    """The ARM id of a cluster's node resource group (`MC_...`), in the cluster's subscription; None when
    either is unknown."""
    parts = cluster_id.split("/")
    if len(parts) < 3 or parts[:2] != ["", "subscriptions"] or not parts[2] or not node_resource_group:
        return None
    return f"/subscriptions/{parts[2]}/resourceGroups/{node_resource_group}"


# --- Names ----------------------------------------------------------------------------------------

#: The cluster resource's logical name is the component's name with this suffix; Pulumi auto-names it.
CLUSTER_SUFFIX = "-aks"
#: The DNS prefix (`<name>-<environment>`) has at most 54 characters; a managed cluster name 63.
DNS_PREFIX_MAX = 54
CLUSTER_NAME_MAX = 63
#: The longest AgentPool name: Linux pools take 1-12 characters (catalog.POOL_NAME_PATTERN).
POOL_NAME_MAX = 12
#: A versioned control-plane pool's cloud name is its own name plus this many hex digits...
VERSION_DIGITS = 4
#: ...so a versioned pool's own name has at most 8 characters (AKS's rules refuse longer ones).
VERSIONED_NAME_MAX = POOL_NAME_MAX - VERSION_DIGITS


def dns_prefix(name: str, environment: str) -> str:
    return f"{name}-{environment}"


def longest_component_name(environment: str) -> int:
    """The longest `AksGpuCluster` name whose DNS prefix and auto-named cluster name both fit."""
    return min(DNS_PREFIX_MAX - len(dns_prefix("", environment)),
               CLUSTER_NAME_MAX - len(CLUSTER_SUFFIX) - AUTONAME_SUFFIX)


def component_name_becomes(name: str, environment: str) -> str:
    """What a component name turns into, for the message that refuses it."""
    return (f"it becomes the AKS DNS prefix {dns_prefix(name, environment)} and the start of the resource "
            "group's and the managed cluster's names")


# --- Pools ----------------------------------------------------------------------------------------

#: AgentPool fields Azure fixes at creation that azure-native itself replaces the pool on (the parts of
#: its ARM id, and vmSize); `plan --diff` counts a change to one as a replacement.
PROVIDER_REPLACED_POOL_FIELDS = ("resourceGroupName", "resourceName", "agentPoolName", "vmSize")
#: AgentPool fields Azure fixes at creation but azure-native does not mark as replacing: the component
#: marks them `replaceOnChanges`, so changing any of them replaces the pool instead of failing.
CREATE_ONLY_POOL_FIELDS = (
    "scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "osType", "gpuProfile", "availabilityZones",
    "gpuInstanceProfile",
    # Associating a capacity reservation group with an existing pool is preview (AKS's "Assign capacity
    # reservation groups" page), so a changed group replaces the pool.
    "capacityReservationGroupID",
)
#: The pool settings a control-plane pool's versioned name digests: every field fixed at creation that
#: the pool's own settings decide.
VERSIONED_POOL_FIELDS = ("vmSize", *CREATE_ONLY_POOL_FIELDS)
#: Fields of the cluster's inline system pool that AKS can't change on an existing pool and that
#: azure-native can't replace either (pulumi-azure-native PR #2774): the cluster ignores them, and a
#: change is refused with the migration instead.
INLINE_POOL_FIXED_FIELDS = ("vmSize", "availabilityZones", "osType")
#: What the cluster resource ignores of its inline system pool: its count belongs to the autoscaler.
INLINE_POOL_IGNORED = ("agentPoolProfiles[0].count", *(f"agentPoolProfiles[0].{f}" for f in INLINE_POOL_FIXED_FIELDS))
#: What an AgentPool ignores: its count, after creation, belongs to the autoscaler.
AGENT_POOL_IGNORED = ("count",)
#: Pool fields that are objects of the SDK's own fields, spelled like the pool's.
NESTED_POOL_FIELDS = ("upgrade_settings",)


def api_spelling(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A pool's snake_case SDK fields as Azure and the registrations spell them (vm_size -> vmSize),
    unset ones left out. azure-native camel-cases the field names this way, and the names inside
    `upgrade_settings` too; node labels are the user's own keys and stay as they are."""
    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part.title() for part in rest)
    return {camel(k): api_spelling(v) if k in NESTED_POOL_FIELDS else v for k, v in fields.items() if v is not None}


def pool_fields(pool: PoolPlan) -> dict[str, Any]:
    """The agent pool fields the inline system pool and the AgentPools share."""
    fields: dict[str, Any] = {
        "vm_size": pool.machine,
        "os_type": "Linux",
        "type": "VirtualMachineScaleSets",
        "enable_auto_scaling": True,
        "min_count": pool.min,
        "max_count": pool.max,
        # `count` only matters at creation; the autoscaler owns it afterwards (ignore_changes).
        "count": max(pool.min, 1) if pool.role == "system" else pool.min,
        "node_labels": pool.labels,
        "node_taints": [str(t) for t in pool.taints] or None,
        "availability_zones": list(pool.zones) or None,
    }
    if pool.sharing is not None and pool.sharing.mode == "mig" and pool.gpu_type and pool.sharing.partition:
        # AKS partitions every GPU of the pool at creation; the field can't change afterwards.
        fields["gpu_instance_profile"] = gpu_sharing.gpu_instance_profile(pool.gpu_type, pool.sharing.partition)
    if pool.capacity == "spot":
        fields.update(
            scale_set_priority="Spot",
            scale_set_eviction_policy=pool.eviction_policy,
            spot_max_price=pool.max_price,
        )
    else:
        fields["scale_set_priority"] = "Regular"
    return fields


def cloud_pool_name(pool: PoolPlan) -> str:
    """The AgentPool name. A pool that hosts the control plane is versioned by its create-only
    fields, so that replacing it creates the new pool before the old one is deleted; spot and GPU
    pools keep their name and may be deleted first (workloads there are retried)."""
    if not pool.hosts_control_plane:
        return pool.name
    fields = {k: v for k, v in api_spelling(pool_fields(pool)).items() if k in VERSIONED_POOL_FIELDS}
    return versioned_name(pool.name, fields, separator="", digits=VERSION_DIGITS)


def agent_pool_inputs(pool: PoolPlan, reservation_group_id: Any = None) -> dict[str, Any]:
    """An AgentPool's inputs, but for its resource group and cluster (other resources' outputs), and
    the capacity reservation group its nodes are placed in (an id, or the created group's output)."""
    upgrade = upgrade_settings(pool)
    return {"agent_pool_name": pool.cloud_name, "mode": "User", **pool_fields(pool),
            **({"upgrade_settings": upgrade} if upgrade else {}),
            **({"capacity_reservation_group_id": reservation_group_id} if reservation_group_id is not None else {})}


def system_pool_profile(pool: PoolPlan) -> dict[str, Any]:
    """The cluster's one inline pool, its System pool."""
    return {"name": pool.cloud_name, "mode": "System", **pool_fields(pool)}


def system_pool_change_problem(
    wanted: PoolPlan, deployed_profiles: Sequence[Mapping[str, Any]] | None, source: str
) -> str | None:
    """Why the deployed inline system pool can't become `wanted`, or None when nothing fixed changes.

    AKS can't change a pool's VM size, zones or OS in place, and azure-native can't replace the
    inline pool, so such a change would fail half-way through an update. It is refused instead,
    with the migration that works.
    """
    profiles = list(deployed_profiles or ())
    if not profiles:
        return None  # a new cluster: nothing deployed yet
    deployed = next((p for p in profiles if p.get("name") == wanted.cloud_name), None)
    fixed = api_spelling(pool_fields(wanted))
    migration = (
        "AKS can't change an existing pool's VM size, zones or OS, and the cluster's inline system pool "
        "can't be replaced. To move it: `az aks nodepool add --mode System --name <newname> ...` with the new "
        "settings, wait until its nodes are Ready, `az aks nodepool delete --name {old}`, then set "
        "systemPool.name to <newname> with the new settings, run `pulumi refresh`, then `pulumi up`"
    )
    if deployed is None:
        names = ", ".join(str(p.get("name")) for p in profiles)
        return (f"{source}: spotkube:systemPool.name: {wanted.cloud_name!r} is not the deployed system pool "
                f"({names}); a system pool can't be renamed in place. {migration.format(old=names)}")
    changed = [f for f in INLINE_POOL_FIXED_FIELDS if _normal(deployed.get(f)) != _normal(fixed.get(f))]
    if not changed:
        return None
    what = "; ".join(f"{f} {deployed.get(f)!r} -> {fixed.get(f)!r}" for f in changed)
    return (f"{source}: spotkube:systemPool: {what} is refused. {migration.format(old=wanted.cloud_name)}")


def _normal(value: Any) -> Any:
    """Zones compare as sets and an empty list as unset, as Azure reports them."""
    if isinstance(value, list | tuple):
        return tuple(sorted(str(v) for v in value)) or None
    return value


def _taints(texts: Any) -> frozenset[contract.Taint]:
    """AKS `nodeTaints`; a malformed taint protects nothing, so it is simply not counted."""
    taints = set()
    for text in items(texts):
        try:
            taints.add(contract.Taint.parse(str(text)))
        except ValueError:
            continue
    return frozenset(taints)


def _pool(where: str, name: str, profile: Mapping[str, Any]) -> RegisteredPool:
    labels = {str(k): str(v) for k, v in mapping(profile.get("nodeLabels")).items()}
    machine = profile.get("vmSize")
    spot = profile.get("scaleSetPriority") == "Spot"
    accelerator = labels.get(contract.ACCELERATOR_LABEL)
    labelled_gpu = accelerator not in (None, "", contract.NO_ACCELERATOR) or AKS_ACCELERATOR_LABEL[0] in labels
    gpu = catalog.gpu_vm_size(machine or "")
    return RegisteredPool(
        where=where,
        cloud_name=name,
        labels=labels,
        machine=str(machine or ""),
        gpu_count=(gpu or ("", 0))[1],
        has_gpu=gpu is not None or labelled_gpu,
        capacity="spot" if spot else "on-demand",
        system=profile.get("mode") == "System" or labels.get(contract.ROLE_LABEL) == "system",
        min=node_count(first(profile, "minCount")),
        max=node_count(first(profile, "maxCount")),
        taints=tuple(str(t) for t in items(profile.get("nodeTaints"))),
        parsed_taints=_taints(profile.get("nodeTaints")),
        zones=tuple(str(z) for z in items(profile.get("availabilityZones"))),
        eviction_policy=profile.get("scaleSetEvictionPolicy") if spot else None,
        max_price=profile.get("spotMaxPrice") if spot else None,
        retired_in_favour_of=catalog.RETIRED_VM_SIZES.get(machine or ""),
        gpu_sharing=_registered_sharing(machine, profile.get("gpuInstanceProfile")),
        max_surge=_max_surge(profile.get("upgradeSettings")),
    )


def _max_surge(settings: Any) -> str | None:
    """`upgradeSettings.maxSurge` as registered ("1", "33%"), None when the pool leaves AKS's default."""
    surge = settings.get("maxSurge") if isinstance(settings, Mapping) else None
    return None if surge is None else str(surge)


def _registered_sharing(machine: Any, instance_profile: Any) -> str | None:
    """`MIG 1g.10gb (gpuInstanceProfile MIG1g)`, from the pool's inputs."""
    if not instance_profile:
        return None
    gpu = (catalog.gpu_vm_size(str(machine or "")) or ("", 0))[0]
    profile = gpu_sharing.profile_of(gpu, str(instance_profile))
    return f"MIG {profile or '?'} (gpuInstanceProfile {instance_profile})"


@read_once_per_plan
def read_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The pools a registration declares: a ManagedCluster's inline profiles, or one AgentPool."""
    if type_token == AGENT_POOL_TYPE:
        return [_pool(f"AgentPool {shown(name)}", str(inputs.get("agentPoolName") or name), inputs)]
    if type_token == CLUSTER_TYPE:
        profiles = [mapping(p) for p in items(inputs.get("agentPoolProfiles"))]
        return [_pool(f"ManagedCluster {shown(name)} agentPoolProfiles[{i}] ({p.get('name')})", str(p.get("name")), p)
                for i, p in enumerate(profiles)]
    return []


# --- The cluster ----------------------------------------------------------------------------------

#: The AKS add-on that runs Azure Monitor's agent for Container Insights (addonProfiles key).
OMS_AGENT_ADDON = "omsagent"
#: Container Insights (docs/logs.md): the tables a step's logs are found in (ContainerLogV2, and
#: KubePodInventory for a run's pods by label), with KubeEvents for why a pod went.
CONTAINER_INSIGHTS_STREAMS = ["Microsoft-ContainerLogV2", "Microsoft-KubeEvents", "Microsoft-KubePodInventory"]
#: The names azure-cli gives the extension and its association when it enables Container Insights.
CONTAINER_INSIGHTS_EXTENSION = "ContainerInsightsExtension"
WORKSPACE_SKU = "PerGB2018"
#: A Log Analytics workspace's ARM resource id.
WORKSPACE_ID_PATTERN = (r"/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w.()]{1,90}/providers/"
                        r"Microsoft\.OperationalInsights/workspaces/[A-Za-z0-9][-A-Za-z0-9]{2,61}[A-Za-z0-9]")


def workspace_inputs(plan: PlatformPlan, resource_group_name: Any) -> dict[str, Any]:
    """The Log Analytics workspace spotkube creates for container logs, with the stack's retention."""
    spec = plan.spec
    return {
        "resource_group_name": resource_group_name,
        "location": spec.region,
        "sku": {"name": WORKSPACE_SKU},
        "retention_in_days": spec.cluster.logs.retention_days,
    }


def container_insights_rule_inputs(plan: PlatformPlan, resource_group_name: Any, workspace_id: Any) -> dict[str, Any]:
    """The data collection rule Container Insights with managed identity (`useAADAuth`) reads its
    streams from, as azure-cli creates it: without it the agent runs but collects nothing."""
    return {
        "resource_group_name": resource_group_name,
        "location": plan.spec.region,
        "kind": "Linux",
        "data_sources": {"extensions": [{
            "name": CONTAINER_INSIGHTS_EXTENSION,
            "extension_name": "ContainerInsights",
            "streams": CONTAINER_INSIGHTS_STREAMS,
            "extension_settings": {"dataCollectionSettings": {
                "interval": "1m", "namespaceFilteringMode": "Off", "enableContainerLogV2": True,
            }},
        }]},
        "destinations": {"log_analytics": [{"name": "ciworkspace", "workspace_resource_id": workspace_id}]},
        "data_flows": [{"streams": CONTAINER_INSIGHTS_STREAMS, "destinations": ["ciworkspace"]}],
    }

#: Input paths, per type token, that Azure fixes at creation although no `replaceOnChanges` says so:
#: ARM ids carry the resource group and name, a resource never moves region, AKS fixes the DNS prefix,
#: and azure-native replaces an AgentPool on vmSize (docs/platform-facts.md#aks-pool-replacement).
CREATE_ONLY: Mapping[str, tuple[str, ...]] = {
    CLUSTER_TYPE: ("location", "resourceGroupName", "resourceName", "dnsPrefix"),
    AGENT_POOL_TYPE: PROVIDER_REPLACED_POOL_FIELDS,
    # A capacity reservation's VM size can't change (only its quantity): the component replaces it.
    RESERVATION_TYPE: ("location", "resourceGroupName", "capacityReservationGroupName", "capacityReservationName",
                       *RESERVATION_CREATE_ONLY),
}


def cluster_inputs(
    plan: PlatformPlan, name: str, *, resource_group_name: Any, admin_group_object_ids: Sequence[Any],
    authorized_ip_ranges: Any, workspace_id: Any = None, identity_id: Any = None,
) -> dict[str, Any]:
    """The managed cluster's inputs, with its one inline System pool, which is never renamed.

    `authorized_ip_ranges` is the API server's address filter, or None: the listed ranges and the
    deployer's egress, which may be other resources' outputs. `workspace_id` is the Log Analytics
    workspace Container Insights' agent (the omsagent add-on, signing in with managed identity) sends
    container logs to, or None when logs stay on the nodes. `identity_id` is the user-assigned identity
    the control plane runs as, which capacity reservation groups require (None: system-assigned)."""
    spec = plan.spec
    settings = spec.cluster
    autoscaler = settings.autoscaler
    return {
        "resource_group_name": resource_group_name,
        "location": spec.region,
        "dns_prefix": dns_prefix(name, spec.environment),
        "kubernetes_version": settings.kubernetes_version,
        "identity": {"type": "SystemAssigned"} if identity_id is None else {
            "type": "UserAssigned", "user_assigned_identities": [identity_id]},
        "agent_pool_profiles": [system_pool_profile(plan.system_pool)],
        "enable_rbac": True,
        "aad_profile": {
            "managed": True,
            "enable_azure_rbac": True,
            "admin_group_object_ids": list(admin_group_object_ids) or None,
        },
        "disable_local_accounts": spec.switch(settings.local_accounts_disabled),
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
        "network_profile": {
            "network_plugin": "azure",
            "network_plugin_mode": "overlay",
            "network_policy": settings.network_policy,
            "network_dataplane": "cilium" if settings.network_policy == "cilium" else "azure",
            "load_balancer_sku": "standard",
        },
        "api_server_access_profile": {
            "enable_private_cluster": spec.switch(settings.private),
            "authorized_ip_ranges": authorized_ip_ranges,
        },
        "addon_profiles": {OMS_AGENT_ADDON: {
            "enabled": True,
            "config": {"logAnalyticsWorkspaceResourceID": workspace_id, "useAADAuth": "true"},
        }} if workspace_id is not None else None,
        "auto_upgrade_profile": {
            "upgrade_channel": settings.channel,
            "node_os_upgrade_channel": NODE_OS_CHANNEL,
        },
        "auto_scaler_profile": {
            "expander": autoscaler.expander,
            "scan_interval": autoscaler.scan_interval,
            "max_node_provision_time": autoscaler.max_node_provision_time,
            "new_pod_scale_up_delay": autoscaler.new_pod_scale_up_delay,
            "scale_down_unneeded_time": autoscaler.scale_down_unneeded_time,
            "scale_down_delay_after_add": autoscaler.scale_down_delay_after_add,
            "max_graceful_termination_sec": str(autoscaler.max_graceful_termination_sec),
            "skip_nodes_with_local_storage": str(autoscaler.skip_nodes_with_local_storage).lower(),
        },
    }


def read_posture(type_token: str, name: str, inputs: Mapping[str, Any], protect: bool) -> ClusterPosture | None:
    """A ManagedCluster's security settings as registered; the concerns are what spotkube's prod
    defaults avoid (docs/platform-facts.md#aks-api-server-access)."""
    if type_token != CLUSTER_TYPE:
        return None
    access = mapping(inputs.get("apiServerAccessProfile"))
    ranges = [str(r) for r in items(access.get("authorizedIPRanges"))]
    if access.get("enablePrivateCluster"):
        exposure = Setting("API server", "private (VNet only)")
    elif ranges:
        exposure = Setting("API server", f"public, authorized ranges {listed(ranges)}")
    else:
        exposure = Setting("API server", "public, any address", "reachable from the whole internet")
    aad = mapping(inputs.get("aadProfile"))
    if aad.get("managed") and aad.get("enableAzureRBAC"):
        identity = Setting("Entra ID / RBAC", "Entra ID with Azure RBAC; admin groups "
                           f"{listed(items(aad.get('adminGroupObjectIDs')))}")
    elif aad.get("managed"):
        identity = Setting("Entra ID / RBAC", "Entra ID with Kubernetes RBAC")
    elif inputs.get("enableRBAC"):
        identity = Setting("Entra ID / RBAC", "Kubernetes RBAC without Entra ID", "no Entra ID sign-in")
    else:
        identity = Setting("Entra ID / RBAC", "off", "no RBAC")
    network = mapping(inputs.get("networkProfile"))
    upgrade = mapping(inputs.get("autoUpgradeProfile"))
    security = mapping(inputs.get("securityProfile"))
    channel = upgrade.get("upgradeChannel") or "none"
    return ClusterPosture(f"ManagedCluster {shown(name)}", (
        exposure,
        flag("local accounts", inputs.get("disableLocalAccounts"), "disabled", "enabled",
             "the cluster-admin certificate bypasses Entra ID"),
        identity,
        Setting("network policy", str(network.get("networkPolicy") or "none"),
                None if network.get("networkPolicy") else "every pod can reach every pod"),
        Setting("upgrade channel", str(channel), "no automatic upgrades" if channel == "none" else None),
        Setting("Kubernetes version", str(inputs.get("kubernetesVersion") or "the channel's default")),
        flag("deletion protection", protect, "protect on", "protect off",
             "`pulumi destroy` or a replacement deletes the cluster"),
        flag("workload identity", mapping(security.get("workloadIdentity")).get("enabled")
             and mapping(inputs.get("oidcIssuerProfile")).get("enabled"), "on", "off",
             "pods need stored credentials to reach Azure"),
        _container_logs(inputs),
    ))


def _container_logs(inputs: Mapping[str, Any]) -> Setting:
    """Container Insights as registered: the omsagent add-on and the workspace it sends logs to."""
    addon = mapping(mapping(inputs.get("addonProfiles")).get(OMS_AGENT_ADDON))
    if not addon.get("enabled"):
        return Setting("container logs", "kept on the node only",
                       "a step's logs are lost with its node when spot evicts it (cluster.logs.enabled)")
    config = mapping(addon.get("config"))
    workspace = config.get("logAnalyticsWorkspaceResourceID")
    named = isinstance(workspace, str) and re.fullmatch(WORKSPACE_ID_PATTERN, workspace, flags=re.IGNORECASE)
    where = f"workspace {workspace}" if named else "a workspace the stack creates"
    auth = "managed identity" if str(config.get("useAADAuth")).lower() == "true" else "workspace key"
    return Setting("container logs", f"Container Insights (ContainerLogV2) to Log Analytics, {where}, {auth}")


# --- The autoscaler -------------------------------------------------------------------------------

#: The ConfigMap AKS's managed autoscaler reads its priority expander tiers from, as (namespace, name)
#: (docs/platform-facts.md#aks-cluster-autoscaler).
PRIORITY_EXPANDER_CONFIGMAP = ("kube-system", "cluster-autoscaler-priority-expander")
#: The VM scale set AKS creates per pool, which the autoscaler calls the pool's node group
#: (`aks-gpuspot-12345678-vmss`); the tiers' regexes match it.
VMSS_PATTERN = "^aks-{pool}-[0-9]+-vmss$"
VMSS_EXAMPLE = "aks-{pool}-12345678-vmss"
#: AKS's autoscaler defaults for what a stack leaves unset (the SDK's docstrings).
DEFAULT_SCAN_SECONDS = 10
DEFAULT_PROVISION_SECONDS = 15 * 60


def priority_expander(plan: PlatformPlan) -> dict[str, Any]:
    """The priority expander's ConfigMap: spot pools first, on-demand GPU fallbacks next, read by
    AKS's managed autoscaler."""
    namespace, name = PRIORITY_EXPANDER_CONFIGMAP
    priorities = autoscaler_priorities(plan, VMSS_PATTERN)
    return {"metadata": {"name": name, "namespace": namespace},
            "data": {"priorities": yaml.safe_dump(priorities, sort_keys=False)}}


def seconds(text: Any, default: int) -> int:
    """An autoscaler duration (`10m`, `10s`, `10`) in seconds; the default when unset or unreadable."""
    match = re.fullmatch(r"([0-9]+)(s|m|h)?", str(text or ""))
    if not match:
        return default
    return int(match[1]) * {"s": 1, None: 1, "m": 60, "h": 3600}[match[2]]


def _priorities(inputs: Mapping[str, Any]) -> dict[int, list[str]] | None:
    tiers = safe_load(str(mapping(inputs.get("data")).get("priorities") or "")) or {}
    if not isinstance(tiers, Mapping):
        return None
    return {int(k): [str(r) for r in items(v)] for k, v in tiers.items()}


def read_autoscaler(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> AutoscalerFacts | None:
    """The autoscaler as registered: the ManagedCluster's profile and the priority expander ConfigMap.
    Azure reports no spot stock-out to the autoscaler, so each spot pool ahead of on-demand costs
    `maxNodeProvisionTime` plus a scan (docs/platform-facts.md#aks-cluster-autoscaler)."""
    clusters = [inputs for kind, _, inputs in resources if kind == CLUSTER_TYPE]
    if not clusters:
        return None
    settings = mapping(clusters[0].get("autoScalerProfile"))
    scan = seconds(settings.get("scanInterval"), DEFAULT_SCAN_SECONDS)
    provision = seconds(settings.get("maxNodeProvisionTime"), DEFAULT_PROVISION_SECONDS)
    delay = seconds(settings.get("newPodScaleUpDelay"), 0)
    expander = str(settings.get("expander") or "random")
    config_maps = [inputs for kind, _, inputs in resources if kind == CONFIG_MAP_TYPE
                   and (mapping(inputs.get("metadata")).get("namespace"), mapping(inputs.get("metadata")).get("name"))
                   == PRIORITY_EXPANDER_CONFIGMAP]
    priorities = _priorities(config_maps[0]) if config_maps and expander == "priority" else None
    caveat = None
    if expander != "priority":
        caveat = f"expander {shown(expander)} does not rank spot above on-demand; use expander: priority"
    elif priorities is None:
        caveat = "expander 'priority' without its ConfigMap ranks nothing"
    return AutoscalerFacts(
        ordered_by=f"priority expander ({'/'.join(PRIORITY_EXPANDER_CONFIGMAP)})" if priorities is not None
        else f"expander {shown(expander)}",
        priorities=priorities,
        node_group=lambda pool: VMSS_EXAMPLE.format(pool=pool),
        give_up_seconds=provision + scan,
        first_look_seconds=delay,
        formula=f"newPodScaleUpDelay {delay}s + N spot pools × (maxNodeProvisionTime {provision}s + scanInterval "
        f"{scan}s)",
        caveat=caveat,
    )


def chosen_upgrade(upgrade: PoolUpgrade, *, gpu: bool) -> AksPoolUpgrade:
    """What the stack set over the pool's defaults (`GPU_UPGRADE` on a GPU pool)."""
    base = GPU_UPGRADE.model_dump(exclude_none=True) if gpu else {}
    return AksPoolUpgrade.model_validate({**base, **upgrade.model_dump(exclude_unset=True)})


def replaces_no_node(upgrade: AksPoolUpgrade) -> bool:
    """Whether an upgrade would neither add a node nor take one away, which AKS refuses: `maxSurge`
    must be above 0 when `maxUnavailable` is 0 (unset, AKS's defaults: a 10% surge, none unavailable)."""
    surge = AKS_DEFAULT_MAX_SURGE if upgrade.max_surge is None else upgrade.max_surge
    unavailable = "0" if upgrade.max_unavailable is None else upgrade.max_unavailable
    return int(surge.rstrip("%")) == 0 and int(unavailable.rstrip("%")) == 0


def upgrade_settings(pool: PoolPlan) -> dict[str, Any] | None:
    """An AgentPool's `upgrade_settings` (the SDK's names), or None to leave AKS's own: an on-demand GPU
    pool gets `GPU_UPGRADE` under what the stack set; a spot pool gets none, which AKS refuses."""
    if pool.capacity == "spot" or pool.upgrade is None:
        return None
    if pool.role != "gpu" and not pool.upgrade.model_fields_set:
        return None
    chosen = chosen_upgrade(pool.upgrade, gpu=pool.role == "gpu")
    settings = {"max_surge": chosen.max_surge, "max_unavailable": chosen.max_unavailable,
                "drain_timeout_in_minutes": chosen.drain_timeout_minutes,
                "node_soak_duration_in_minutes": chosen.soak_minutes,
                "undrainable_node_behavior": chosen.undrainable_nodes}
    return {key: value for key, value in settings.items() if value is not None} or None


def maintenance_configurations(maintenance: MaintenanceSettings, channel: str) -> dict[str, dict[str, Any]]:
    """The MaintenanceConfigurations (config name -> `maintenance_window`, the SDK's names): the node OS
    schedule always, the Kubernetes auto-upgrade schedule unless the upgrade channel is `none`."""
    window = maintenance.window
    if window is None:
        return {}
    spec = {
        "schedule": {"weekly": {"day_of_week": window.days[0], "interval_weeks": 1}},
        "start_time": window.start,
        "duration_hours": window.hours,
        "utc_offset": window.utc_offset,
        "not_allowed_dates": [{"start": p.start, "end": p.end} for p in maintenance.busy_periods] or None,
    }
    names = [NODE_OS_SCHEDULE] if channel == "none" else [AUTO_UPGRADE_SCHEDULE, NODE_OS_SCHEDULE]
    return {name: spec for name in names}


def _registered_window(inputs: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    window = mapping(inputs.get("maintenanceWindow"))
    weekly = mapping(mapping(window.get("schedule")).get("weekly"))
    if not weekly.get("dayOfWeek") or not window.get("startTime"):
        return None, ()
    busy = tuple(f"{mapping(d).get('start')}–{mapping(d).get('end')}" for d in items(window.get("notAllowedDates")))
    return window_text([str(weekly["dayOfWeek"])], str(window["startTime"]), int(window.get("durationHours") or 24),
                       str(window.get("utcOffset") or "+00:00")), busy


def _replacement(pool: Mapping[str, Any]) -> str:
    if pool.get("scaleSetPriority") == "Spot":
        return ("each node is cordoned and gets an eviction notice, with no drain and no surge node (AKS's upgrade "
                "of a spot pool), then Argo retries its steps")
    settings = mapping(pool.get("upgradeSettings"))
    drain = settings.get("drainTimeoutInMinutes") or AKS_DRAIN_DEFAULT_MINUTES
    parts = [f"drain waits {float(drain):g} min", f"{settings.get('maxSurge') or AKS_DEFAULT_MAX_SURGE} surge node(s)"]
    if settings.get("undrainableNodeBehavior") == "Cordon":
        parts.append("a node it can't drain is cordoned and kept")
    return "; ".join(parts)


def read_upgrades(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[UpgradeExposure]:
    """Each AgentPool's exposure: the node OS schedule's window (node images are what drain GPU nodes
    week after week) and its upgrade settings. No schedule registered: any time."""
    windows = {str(inputs.get("configName")): _registered_window(inputs)
               for kind, _, inputs in resources if kind == MAINTENANCE_TYPE}
    window, busy = windows.get(NODE_OS_SCHEDULE, (None, ()))
    exposures = []
    for kind, name, inputs in resources:
        if kind != AGENT_POOL_TYPE:
            continue
        (pool,) = read_pools(kind, name, inputs)
        if pool.labels.get(contract.ROLE_LABEL) not in ("gpu", "batch"):
            continue
        exposures.append(UpgradeExposure(pool.name, pool.has_gpu,
                                         window, _replacement(inputs), busy))
    return sorted(exposures, key=lambda e: e.pool)
