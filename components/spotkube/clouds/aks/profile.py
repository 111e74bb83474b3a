"""AKS: everything spotkube knows about Azure Kubernetes Service, in one place.

Its validation rules (learn.microsoft.com/azure/aks: node pools, spot node pools, GPU clusters), GPU
resolution from the VM size, defaults, how an AgentPool or an inline pool reads back from its
inputs, the price-table name and the device-plugin mode. What only spotkube's commands need (the
new-stack template, live reads, the drill) is in `commands`, which the profile names rather than
imports. The facts behind them, with their sources, are in docs/platform-facts.md#aks.
"""

from __future__ import annotations

import re

from spotkube.clouds.aks import catalog as catalog
from spotkube.clouds.aks import (
    checkpoints,
    fixed_costs,
    gpu_sharing,
    kubeconfig,
    labels,
    offline,
    preflight,
    quota,
    resources,
    startup,
    supply,
)
from spotkube.clouds.aks.resources import VERSIONED_NAME_MAX, WORKSPACE_ID_PATTERN
from spotkube.clouds.aks.spec import AksGpuPool, AksSpec
from spotkube.platform import contract
from spotkube.platform.catalog import CloudCatalog, declared_gpu_problem, refresh_command
from spotkube.platform.cloud import Cloud, GpuResolution, NodePoolFacts, RuleOutput, TargetKey
from spotkube.platform.component_names import ComponentNaming
from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import did_you_mean, shown
from spotkube.platform.maintenance import replaces_no_node_problem
from spotkube.platform.spec import GpuSpec, alias, all_pools, config_key, set_by_user, worker_pools

CHANNELS = ("stable", "rapid", "patch", "node-image", "none")
DEFAULT_MACHINE = "Standard_D4s_v3"
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

    autoscaler = spec.cluster.autoscaler
    for name, (pattern, accepted) in AUTOSCALER_FORMATS.items():
        value = getattr(autoscaler, name)
        if not re.fullmatch(pattern, value):
            yield Problem(config_key(f"cluster.autoscaler.{alias(autoscaler, name)}"),
                          f"{shown(value)} is not accepted by AKS; use {accepted}")
    yield from _sharing_rules(spec)
    workspace = spec.cluster.logs.workspace_id
    if workspace is not None and not re.fullmatch(WORKSPACE_ID_PATTERN, workspace, flags=re.IGNORECASE):
        yield Problem(config_key("cluster.logs.workspaceId"), f"{shown(workspace)} is not a Log Analytics workspace "
                      "resource id; use /subscriptions/<id>/resourceGroups/<group>/providers/"
                      "Microsoft.OperationalInsights/workspaces/<name> (az monitor log-analytics workspace show "
                      "--query id)")
    yield from _gpu_offers(spec)
    yield from _upgrade_rules(spec)
    yield from supply.rules(spec)
    yield from checkpoints.rules(spec)


def _upgrade_rules(spec: AksSpec) -> RuleOutput:
    """AKS's limits on windows and pool upgrade settings."""
    window = spec.cluster.maintenance.window
    if window is not None and len(window.days) != 1:
        yield Problem(config_key("cluster.maintenance.window.days"), f"{shown(list(window.days))}: an AKS maintenance "
                      "window is weekly on one day; name one day (and lengthen hours, up to 24, if you need more)")
    for path, pool in worker_pools(spec):
        upgrade = pool.upgrade
        given = [alias(upgrade, name) for name in type(upgrade).model_fields if set_by_user(upgrade, name)]
        if pool.capacity == "spot" and given:
            yield Problem(config_key(f"{path}.upgrade.{given[0]}"), "AKS refuses surge settings on a spot pool "
                          "(\"Spot pools can't set max surge\"), so spotkube sends a spot pool no upgrade settings: "
                          "in the maintenance window AKS cordons each node and sends it an eviction notice, without "
                          "drain or surge, and Argo retries its steps; remove upgrade from the spot pool")
        elif given:
            chosen = resources.chosen_upgrade(upgrade, gpu=isinstance(pool, AksGpuPool))
            if resources.replaces_no_node(chosen):
                yield replaces_no_node_problem(path, upgrade, chosen.max_surge or resources.AKS_DEFAULT_MAX_SURGE,
                                               chosen.max_unavailable or "0", "AKS")


def _gpu_offers(spec: AksSpec) -> RuleOutput:
    """GPU pools against where the catalog says Azure offers their size: a region it knows completely
    without the size, or zones the size lacks there, would fail only when Azure creates the pool."""
    section = catalog.section()
    for i, pool in enumerate(spec.gpu_pools):
        if section.machine(pool.machine) is None:
            continue  # not in the catalog: gpu_of reports it, or the plan warns that it was declared
        offer = section.offer(pool.machine, spec.region)
        where = f"catalog of {section.describe()}"
        if offer.status == "absent":
            elsewhere = ", ".join(section.regions_offering(pool.machine)) or "none"
            yield Problem(config_key(f"gpuPools[{i}].machine"), f"{pool.machine} is not offered in {spec.region} "
                          f"({where}); regions that offer it: {elsewhere}. If the catalog is stale, run "
                          f"`{refresh_command(catalog.CLOUD)}`")
        elif offer.status == "offered" and offer.zones is not None and pool.zones:
            missing = [zone for zone in pool.zones if zone not in offer.zones]
            if missing:
                offered = f"in zones {', '.join(offer.zones)}" if offer.zones else "without availability zones"
                yield Problem(config_key(f"gpuPools[{i}].zones"), f"{', '.join(map(repr, missing))}: {pool.machine} is "
                              f"offered in {spec.region} only {offered} ({where}); use those zones, or none")


def _sharing_rules(spec: AksSpec) -> RuleOutput:
    """MIG only, on the sizes whose GPUs have it, with a profile the GPU offers (docs/gpu-sharing.md)."""
    for i, pool in enumerate(spec.gpu_pools):
        sharing = pool.sharing
        if sharing is None:
            continue
        path = f"gpuPools[{i}].sharing"
        known = catalog.gpu_vm_size(pool.machine)
        if known is None:
            continue  # the GPU resolver reports an unknown size
        gpu_type = known[0]
        profiles = gpu_sharing.mig_profiles(gpu_type)
        if not profiles:
            sizes = sorted(m for m, machine in catalog.section().machines.items()
                           if gpu_sharing.mig_profiles(machine.gpu.type))
            yield Problem(config_key(f"{path}.mig"), f"{shown(sharing.mig)} is not possible on {pool.machine}: its "
                          f"{gpu_type} has no MIG; AKS offers MIG on A100, H100 and H200 sizes such as "
                          f"{', '.join(sizes)}, or remove sharing")
        elif sharing.mig not in profiles:
            yield Problem(config_key(f"{path}.mig"), f"{shown(sharing.mig)} is not a MIG profile AKS makes of "
                          f"{gpu_type}; use one of {', '.join(profiles)} (gpuInstanceProfile "
                          f"{', '.join(gpu_sharing.GPU_INSTANCE_PROFILES)})")
        elif spec.device_plugin.mig_strategy == "mixed" and pool.min == 0:
            # AKS's autoscaler builds an empty pool's node from its API properties and knows only
            # nvidia.com/gpu, so a pod asking nvidia.com/mig-<profile> never scales it up from zero
            # (Azure/AKS#5161, kubernetes/autoscaler#8129).
            yield Problem(config_key(f"gpuPools[{i}].min"), f"0 leaves the pool empty, and AKS's autoscaler never "
                          f"grows it for pods asking {contract.mig_resource(sharing.mig)} (it knows only "
                          "nvidia.com/gpu); use devicePlugin.migStrategy: single (the default) or min: 1 or more")


def _unlisted_gpu(pool: AksGpuPool, section: CloudCatalog) -> GpuResolution:
    """A size the catalog doesn't know: a series without GPUs is refused, a declared GPU is taken."""
    date = section.date.isoformat()
    if catalog.carries_no_gpu(pool.machine):
        return None, (f"{shown(pool.machine)} carries no GPU: Azure's {catalog.series(pool.machine)} series has none "
                      f"(catalog of {date}); use a GPU size, e.g. Standard_NC4as_T4_v3 (1 × nvidia-tesla-t4) or "
                      "Standard_NC24ads_A100_v4 (1 × nvidia-a100-80gb)")
    if pool.gpu is not None:
        problem = declared_gpu_problem(pool.gpu.type)
        return (None, problem) if problem else (pool.gpu, None)
    return None, (f"{shown(pool.machine)} is not in spotkube's catalog of {date}; if it is a GPU size, declare its "
                  "GPUs with gpu: {type: <GPU type, e.g. nvidia-h100-80gb>, count: <GPUs per VM>}, or run "
                  f"`{refresh_command(catalog.CLOUD)}`{did_you_mean(pool.machine, section.machines, quoted=True)}")


#: How to find the deployer's object id, for the message of a stack that names none.
FIND_OBJECT_ID = ("a service principal or managed identity (CI): az ad sp show --id <appId> --query id -o tsv; "
                  "yourself: az ad signed-in-user show --query id -o tsv")


#: What an AKS stack uses in place of another cloud's setting, for the message that refuses it.
INSTEAD_OF = {"gpuDriver": "AKS installs the NVIDIA driver on GPU pools itself"}

NODE_POOL = NodePoolFacts("AksGpuNodePool", (
    TargetKey("cluster_id", "Input[str]", "The AKS cluster the pool joins: its Azure resource id, `/subscriptions/<id>/"
              "resourceGroups/<group>/providers/Microsoft.ContainerService/managedClusters/<name>`; another "
              "resource's output (a `ManagedCluster`'s `id`) is fine."),
    TargetKey("region", "str", "The cluster's Azure region, e.g. uksouth or eastus: it decides the pool's zones, "
              "prices and quota.", "region"),
    TargetKey("vnet_subnet_id", "Input[str]", "The subnet of your virtual network the pool's nodes join, as the "
              "cluster's other pools do (Azure CNI; AKS wants all of a cluster's pools in a subnet or none); unset: "
              "the network AKS manages.", required=False),
    TargetKey("pod_subnet_id", "Input[str]", "The subnet the pods get their addresses from, where the cluster's "
              "other pools name one (Azure CNI with dynamic pod IPs); unset: none.", required=False),
))


class Aks(Cloud):
    """Azure Kubernetes Service."""

    cloud = "aks"
    title = "AKS"
    vendor = "Azure"
    principal = "object id"
    labels = labels.LABELS
    regions = catalog.REGIONS
    region_examples = "eastus, westeurope or uksouth"
    default_region = "uksouth"
    default_machine = DEFAULT_MACHINE
    channels = CHANNELS
    default_channel = "stable"
    # AKS takes major.minor (the latest patch) or major.minor.patch (docs/platform-facts.md#aks).
    version_pattern = r"^[1-9][0-9]*\.[0-9]+(\.[0-9]+)?$"
    version_accepted = "major.minor (e.g. 1.33, which takes its latest patch) or major.minor.patch (e.g. 1.33.2)"
    pricing = catalog.PRICING
    catalog_file = catalog.CATALOG_FILE
    default_maintenance_window = resources.DEFAULT_WINDOW
    # Azure's Scheduled Events give a spot VM 30 seconds' notice (Preempt), and AKS drains the node on it
    # (docs/evictions.md#how-much-time-a-step-gets).
    workload_notice_seconds = 30
    startup_figures = staticmethod(startup.figures)
    commands_module = "spotkube.clouds.aks.commands"

    machine_arch = staticmethod(catalog.vm_size_arch)
    machine_gpu = staticmethod(catalog.gpu_vm_size)
    mig_profiles = staticmethod(gpu_sharing.mig_profiles)

    def gpu_types(self) -> frozenset[str]:
        return catalog.section().gpu_types()

    def knows_machine(self, machine: str) -> bool:
        return catalog.section().machine(machine) is not None

    spec_model = AksSpec
    instead_of = INSTEAD_OF
    check = staticmethod(rules)

    def gpu_of(self, pool: AksGpuPool) -> GpuResolution:
        """The GPU an AKS VM size carries, or the reason the pool's GPU settings are wrong.

        A size the catalog doesn't know is taken with the GPUs the pool declares (the plan warns with
        `catalog-unlisted-size`); without a declaration the message says so, and how to declare or refresh.
        """
        if pool.machine in catalog.RETIRED_VM_SIZES or not re.fullmatch(catalog.VM_SIZE_PATTERN, pool.machine):
            return None, None  # already reported as retired, or as not an Azure VM size
        section = catalog.section()
        known = section.machine(pool.machine)
        if known is None:
            return _unlisted_gpu(pool, section)
        gpu = GpuSpec(type=known.gpu.type, count=known.gpu.count)
        if pool.gpu is not None and pool.gpu != gpu:
            return None, (f"{pool.gpu.count} × {pool.gpu.type} does not match {pool.machine}, which carries "
                          f"{gpu.count} × {gpu.type}; remove gpu or correct it")
        return gpu, None

    def deploy_rules(self, spec: AksSpec) -> RuleOutput:
        """The deployer must be named to deploy: its grant may never follow whoever runs Pulumi, or every
        preview (run as the preview identity) would replace it, and a person's `pulumi up` would lock CI
        out. Planning and pricing the pools need no deployer."""
        deployer = spec.cluster.deployer
        if deployer.object_id is None:
            yield Problem(config_key("cluster.deployer.objectId"), "is required on AKS: the Entra ID object id of "
                          "the identity that runs `pulumi up`, which gets the RBAC Cluster Admin role on the cluster "
                          f"whoever plans or previews; find it with {FIND_OBJECT_ID}")
        if deployer.principal_type is None:
            yield Problem(config_key("cluster.deployer.principalType"), "is required on AKS with objectId: User, "
                          "ServicePrincipal (an app or a managed identity, as CI's deploy identity is) or Group")

    component = "AksGpuCluster"
    node_pool = NODE_POOL
    component_naming = ComponentNaming(resources.longest_component_name, resources.component_name_becomes)
    read_pools = staticmethod(resources.read_pools)
    read_posture = staticmethod(resources.read_posture)
    read_autoscaler = staticmethod(resources.read_autoscaler)
    read_upgrades = staticmethod(resources.read_upgrades)
    read_supply = staticmethod(supply.read_supply)
    read_reserved_nodes = staticmethod(supply.reserved_nodes)
    checkpoint_location = staticmethod(checkpoints.location)
    create_only = resources.CREATE_ONLY
    offline_outputs = staticmethod(offline.computed_outputs)
    offline_answer = staticmethod(offline.call_answer)
    offline_id = staticmethod(offline.resource_id)

    def sign_in(self, spec: AksSpec) -> str:
        """spotkube rewrites AKS's device-code kubeconfig to the deployer's kubelogin mode."""
        return f"kubelogin --login {spec.cluster.deployer.login}"

    login_problem = staticmethod(kubeconfig.login_problem)
    preflight = preflight.PREFLIGHT

    def price_refresh(self, region: str, machine: str) -> str:
        """Azure's Retail Prices API needs no credentials, so a missing price can be fetched."""
        return f"spotkube prices refresh --cloud azure --region {region} --sku {machine}"

    def logs_cost_basis(self, spec: AksSpec) -> str | None:
        """Container Insights is billed per GB ingested into the workspace, which depends on what the steps
        print: the plan states that basis and no figure (docs/logs.md)."""
        logs = spec.cluster.logs
        if not spec.switch(logs.enabled):
            return None
        where = "the stack's workspace" if logs.workspace_id else "the workspace spotkube creates"
        return (f"container logs: Azure Monitor Log Analytics bills each GB of logs ingested into {where} "
                f"(Analytics logs, pay-as-you-go), retention {logs.retention_days} days, of which the first 31 are "
                "included; not priced here, as it depends on how much the steps print "
                "(azure.microsoft.com/pricing/details/monitor)")

    fixed_items = staticmethod(fixed_costs.fixed_items)
    fixed_prices = staticmethod(fixed_costs.fixed_prices)
    quota_plan = staticmethod(quota.quota_plan)


PROFILE = Aks()
