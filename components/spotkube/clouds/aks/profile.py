"""AKS: everything spotkube knows about Azure Kubernetes Service, in one place.

Its validation rules (learn.microsoft.com/azure/aks: node pools, spot node pools, GPU clusters), GPU
resolution from the VM size, defaults, how an AgentPool or an inline pool reads back from its
inputs, the new-stack template, the price-table name and the device-plugin mode. The facts behind
them, with their sources, are in docs/platform-facts.md#aks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from spotkube.clouds.aks import catalog as catalog
from spotkube.clouds.aks import identities, quota, usage_api
from spotkube.clouds.aks.spec import AksGpuPool, AksSpec
from spotkube.platform import contract
from spotkube.platform.cloud import (
    AutoscalerFacts,
    CloudProfile,
    GpuResolution,
    RegisteredPool,
    RuleOutput,
    first,
    items,
    mapping,
)
from spotkube.platform.errors import NewStackError, Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.posture import ClusterPosture, Setting, flag, listed
from spotkube.platform.spec import GpuSpec, alias, all_pools, config_key, set_by_user, worker_pools

CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
CHANNELS = ("stable", "rapid", "patch", "node-image", "none")
DEFAULT_MACHINE = "Standard_D4s_v3"
#: Longest platform pool name whose cloud name spotkube versions (see shells.aks.cloud_pool_name):
#: AKS allows 12 characters, and the version adds 4.
VERSIONED_NAME_MAX = 8
GUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
#: The all-zero GUID: a placeholder, never a real group.
NIL_GUID = "00000000-0000-0000-0000-000000000000"
#: Azure region names are lower-case letters and digits (eastus, westeurope, eastus2); a hyphen
#: means a Google Cloud region was given for an AKS stack.
REGION_PATTERN = r"^[a-z]+[0-9]*$"
#: The autoscaler profile's duration formats, as azure-native's ManagedClusterPropertiesAutoScalerProfile
#: documents them (docs/platform-facts.md#aks-cluster-autoscaler): (pattern, what is accepted).
MINUTES = (r"^[1-9][0-9]*m$", "whole minutes followed by m, e.g. 10m (AKS accepts no other unit)")
AUTOSCALER_FORMATS: dict[str, tuple[str, str]] = {
    "scan_interval": (r"^[1-9][0-9]*s?$", "whole seconds, e.g. 10s"),
    "max_node_provision_time": MINUTES,
    "scale_down_unneeded_time": MINUTES,
    "scale_down_delay_after_add": MINUTES,
    "new_pod_scale_up_delay": (r"^[0-9]+(s|m|h)$", "an integer followed by s, m or h, e.g. 0s"),
}


def rules(spec: AksSpec) -> RuleOutput:
    """AKS's own rules, after the rules every cloud shares."""
    pattern = re.compile(catalog.POOL_NAME_PATTERN)
    for path, pool in all_pools(spec):
        if not pattern.fullmatch(pool.name):
            yield Problem(config_key(f"{path}.name"), f"{shown(pool.name)} is not a valid AKS pool name; use 1-12 "
                          "lower-case letters and digits, starting with a letter")
    machines = [("systemPool", spec.system_pool.machine), ("platformPool", spec.platform_pool.machine)]
    machines += [(path, worker.machine) for path, worker in worker_pools(spec)]
    for path, machine in machines:
        if machine in catalog.RETIRED_VM_SIZES:
            yield Problem(config_key(f"{path}.machine"), f"{shown(machine)} is retired; use "
                          f"{catalog.RETIRED_VM_SIZES[machine]}")
        elif machine is not None and not re.fullmatch(catalog.VM_SIZE_PATTERN, machine):
            yield Problem(config_key(f"{path}.machine"),
                          f"{shown(machine)} is not an Azure VM size; use e.g. Standard_D4s_v3")
    for path, worker in worker_pools(spec):
        if worker.capacity != "spot" and worker.max_price != -1:
            yield Problem(config_key(f"{path}.maxPrice"), f"{worker.max_price} applies to spot pools only; "
                          "remove it or set capacity: spot")
        if worker.capacity != "spot" and set_by_user(worker, "eviction_policy"):
            yield Problem(config_key(f"{path}.evictionPolicy"), f"{shown(worker.eviction_policy)} applies to spot "
                          "pools only (Azure evicts only spot VMs); remove it or set capacity: spot")
    for path, pool in all_pools(spec):
        for z, zone in enumerate(pool.zones):
            if zone not in ("1", "2", "3"):
                yield Problem(config_key(f"{path}.zones[{z}]"),
                              f"{shown(zone)} is not an Azure zone; use '1', '2' or '3'")
    if spec.region not in catalog.REGIONS and spec.cluster.allow_unlisted_region and not re.fullmatch(
            REGION_PATTERN, spec.region):
        yield Problem(config_key("region"), f"{shown(spec.region)} is not shaped like an Azure region; use e.g. "
                      "eastus or uksouth (lower-case letters and digits)")
    if spec.platform_pool.enabled and len(spec.platform_pool.name) > VERSIONED_NAME_MAX:
        yield Problem(config_key("platformPool.name"), f"{shown(spec.platform_pool.name)} is too long; use at most "
                      f"{VERSIONED_NAME_MAX} characters (AKS allows 12, and spotkube adds 4 that change when the "
                      "pool must be replaced, so the new pool can start before the old one goes)")
    for i, group in enumerate(spec.cluster.admin_group_object_ids):
        if not re.fullmatch(GUID_PATTERN, group) or group == NIL_GUID:
            yield Problem(config_key(f"cluster.adminGroupObjectIds[{i}]"), f"{shown(group)} is not an Entra ID group "
                          "object id; use the group's object id (a GUID such as 3f2b1c4d-...; az ad group show "
                          "--query id)")
    deployer = spec.cluster.deployer
    if deployer.object_id is not None and (not re.fullmatch(GUID_PATTERN, deployer.object_id)
                                           or deployer.object_id == NIL_GUID):
        yield Problem(config_key("cluster.deployer.objectId"), f"{shown(deployer.object_id)} is not an Entra ID "
                      f"object id (a GUID such as 3f2b1c4d-...); find it with {FIND_OBJECT_ID}")
    if spec.system_pool.critical_addons_only and not spec.platform_pool.enabled:
        yield Problem(config_key("platformPool.enabled"), "false leaves Kubeflow and other platform workloads no "
                      "untainted on-demand pool; enable it or set systemPool.criticalAddonsOnly: false")
    autoscaler = spec.cluster.autoscaler
    for name, (pattern, accepted) in AUTOSCALER_FORMATS.items():
        value = getattr(autoscaler, name)
        if not re.fullmatch(pattern, value):
            yield Problem(config_key(f"cluster.autoscaler.{alias(autoscaler, name)}"),
                          f"{shown(value)} is not accepted by AKS; use {accepted}")


def gpu_of(pool: AksGpuPool) -> GpuResolution:
    """The GPU an AKS VM size carries, or the reason the pool's GPU settings are wrong."""
    known = catalog.GPU_VM_SIZES.get(pool.machine)
    if known is None:
        if pool.machine in catalog.RETIRED_VM_SIZES:
            return None, None  # already reported as retired
        return None, (f"{shown(pool.machine)} is not a GPU VM size spotkube knows; use one of "
                      f"{', '.join(catalog.GPU_VM_SIZES)}")
    gpu = GpuSpec(type=known[0], count=known[1])
    if pool.gpu is not None and pool.gpu != gpu:
        return None, (f"{pool.gpu.count} × {pool.gpu.type} does not match {pool.machine}, which carries "
                      f"{gpu.count} × {gpu.type}; remove gpu or correct it")
    return gpu, None


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
    labelled_gpu = accelerator not in (None, "", contract.NO_ACCELERATOR) or contract.AKS_ACCELERATOR_LABEL[0] in labels
    return RegisteredPool(
        where=where,
        cloud_name=name,
        labels=labels,
        machine=machine,
        gpu_count=catalog.GPU_VM_SIZES.get(machine or "", ("", 0))[1],
        has_gpu=machine in catalog.GPU_VM_SIZES or labelled_gpu,
        capacity="spot" if spot else "on-demand",
        system=profile.get("mode") == "System" or labels.get(contract.ROLE_LABEL) == "system",
        min_nodes=first(profile, "minCount"),
        max_nodes=first(profile, "maxCount"),
        taint_texts=tuple(str(t) for t in items(profile.get("nodeTaints"))),
        taints=_taints(profile.get("nodeTaints")),
        zones=tuple(str(z) for z in items(profile.get("availabilityZones"))),
        eviction_policy=profile.get("scaleSetEvictionPolicy"),
        max_price=profile.get("spotMaxPrice"),
        retired_in_favour_of=catalog.RETIRED_VM_SIZES.get(machine or ""),
    )


def read_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The pools a registration declares: a ManagedCluster's inline profiles, or one AgentPool."""
    if type_token == AGENT_POOL_TYPE:
        return [_pool(f"AgentPool {shown(name)}", str(inputs.get("agentPoolName") or name), inputs)]
    if type_token == CLUSTER_TYPE:
        profiles = [mapping(p) for p in items(inputs.get("agentPoolProfiles"))]
        return [_pool(f"ManagedCluster {shown(name)} agentPoolProfiles[{i}] ({p.get('name')})", str(p.get("name")), p)
                for i, p in enumerate(profiles)]
    return []


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
    ))


#: The ConfigMap AKS's managed autoscaler reads its priority expander tiers from
#: (docs/platform-facts.md#aks-cluster-autoscaler).
PRIORITY_EXPANDER_CONFIGMAP = ("kube-system", "cluster-autoscaler-priority-expander")
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
#: AKS's autoscaler defaults for what a stack leaves unset (the SDK's docstrings).
DEFAULT_SCAN_SECONDS = 10
DEFAULT_PROVISION_SECONDS = 15 * 60


def seconds(text: Any, default: int) -> int:
    """An autoscaler duration (`10m`, `10s`, `10`) in seconds; the default when unset or unreadable."""
    match = re.fullmatch(r"([0-9]+)(s|m|h)?", str(text or ""))
    if not match:
        return default
    return int(match[1]) * {"s": 1, None: 1, "m": 60, "h": 3600}[match[2]]


def _priorities(inputs: Mapping[str, Any]) -> dict[int, list[str]] | None:
    tiers = yaml.safe_load(str(mapping(inputs.get("data")).get("priorities") or "")) or {}
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
        node_group=lambda pool: f"aks-{pool}-12345678-vmss",
        give_up_seconds=provision + scan,
        first_look_seconds=delay,
        formula=f"newPodScaleUpDelay {delay}s + N spot pools × (maxNodeProvisionTime {provision}s + scanInterval "
        f"{scan}s)",
        caveat=caveat,
    )


#: How to find the deployer's object id, for the message of a stack that names none.
FIND_OBJECT_ID = ("a service principal or managed identity (CI): az ad sp show --id <appId> --query id -o tsv; "
                  "yourself: az ad signed-in-user show --query id -o tsv")


def deploy_rules(spec: AksSpec) -> RuleOutput:
    """The deployer must be named to deploy: its grant may never follow whoever runs Pulumi, or every
    preview (run as the preview identity) would replace it, and a person's `pulumi up` would lock CI
    out. Planning and pricing the pools need no deployer."""
    deployer = spec.cluster.deployer
    if deployer.object_id is None:
        yield Problem(config_key("cluster.deployer.objectId"), "is required on AKS: the Entra ID object id of the "
                      "identity that runs `pulumi up`, which gets the RBAC Cluster Admin role on the cluster whoever "
                      f"plans or previews; find it with {FIND_OBJECT_ID}")
    if deployer.principal_type is None:
        yield Problem(config_key("cluster.deployer.principalType"), "is required on AKS with objectId: User, "
                      "ServicePrincipal (an app or a managed identity, as CI's deploy identity is) or Group")


def new_stack_config(
    environment: str, region: str, gcp_project: str | None, deployer: tuple[str, str] | None
) -> dict[str, Any]:
    """An on-demand system and platform pool and a spot T4 pool from 0: AKS offers T4 widely; the
    deployer as named by the flags."""
    if gcp_project is not None:
        raise NewStackError("--gcp-project applies to --cloud gke only")
    if deployer is None:
        raise NewStackError("--deployer-object-id is required with --cloud aks: the identity that runs pulumi up, "
                            f"which gets the RBAC Cluster Admin role on the cluster; find it with {FIND_OBJECT_ID}")
    if not re.fullmatch(REGION_PATTERN, region):
        raise NewStackError(f"--region {region}: not an Azure region name; use e.g. eastus, westeurope or uksouth")
    return {
        "cloud": "aks",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": DEFAULT_MACHINE, "min": 2, "max": 3},
        "platformPool": {"machine": DEFAULT_MACHINE, "min": 1, "max": 3},
        "gpuPools": [{
            "name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot",
            "evictionPolicy": "Delete", "maxPrice": -1, "min": 0, "max": 4,
        }],
        "cluster": {"channel": "stable", "deployer": {"objectId": deployer[0], "principalType": deployer[1]}},
    }


def sign_in(spec: AksSpec) -> str:
    """spotkube rewrites AKS's device-code kubeconfig to the deployer's kubelogin mode."""
    return f"kubelogin --login {spec.cluster.deployer.login}"


def price_refresh(region: str, machine: str) -> str:
    """Azure's Retail Prices API needs no credentials, so a missing price can be fetched."""
    return f"spotkube prices refresh --region {region} --sku {machine}"


PROFILE = CloudProfile(
    cloud="aks",
    title="AKS",
    spec_model=AksSpec,
    instead_of={"gpuDriver": "AKS installs the NVIDIA driver on GPU pools itself"},
    default_machine=DEFAULT_MACHINE,
    channels=CHANNELS,
    default_channel="stable",
    rules=rules,
    gpu_of=gpu_of,
    machine_arch=catalog.vm_size_arch,
    machine_gpu=catalog.GPU_VM_SIZES.get,
    gpu_types=frozenset(gpu for gpu, _ in catalog.GPU_VM_SIZES.values()),
    read_pools=read_pools,
    read_posture=read_posture,
    sign_in=sign_in,
    new_stack_config=new_stack_config,
    price_cloud="azure",
    device_plugin_mode="daemonset",
    regions=catalog.REGIONS,
    region_examples="eastus, westeurope or uksouth",
    # AKS takes major.minor (the latest patch) or major.minor.patch (docs/platform-facts.md#aks).
    version_pattern=r"^[1-9][0-9]*\.[0-9]+(\.[0-9]+)?$",
    version_accepted="major.minor (e.g. 1.33, which takes its latest patch) or major.minor.patch (e.g. 1.33.2)",
    price_refresh=price_refresh,
    read_autoscaler=read_autoscaler,
    # ARM ids carry the resource group and name, and a resource never moves region; AKS fixes the
    # DNS prefix at creation; azure-native replaces an AgentPool on vmSize
    # (docs/platform-facts.md#aks-pool-replacement).
    create_only={
        CLUSTER_TYPE: ("location", "resourceGroupName", "resourceName", "dnsPrefix"),
        AGENT_POOL_TYPE: ("resourceGroupName", "resourceName", "agentPoolName", "vmSize"),
    },
    quota_plan=quota.quota_plan,
    read_quota=usage_api.read_quota,
    identities=identities.FACTS,
    deploy_rules=deploy_rules,
)
