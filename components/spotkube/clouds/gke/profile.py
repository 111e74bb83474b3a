"""GKE: everything spotkube knows about Google Kubernetes Engine, in one place.

Its validation rules (cloud.google.com/kubernetes-engine/docs), checked against the GPU catalog
(`catalog`, docs/catalog.md); GPU resolution from the machine type; the zones a GPU pool defaults to;
how a NodePool reads back from its inputs; the price-table name and the device-plugin mode. What only
spotkube's commands need (the new-stack template, live reads, the drill) is in `commands`, which the
profile names rather than imports. The facts behind them, with their sources, are in
docs/platform-facts.md#gke.
"""

from __future__ import annotations

import re

from spotkube.clouds.gke import catalog as catalog
from spotkube.clouds.gke import (
    checkpoints,
    device_plugin,
    fixed_costs,
    gpu_sharing,
    kubeconfig,
    labels,
    offline,
    preflight,
    quota,
    resources,
    startup,
)
from spotkube.clouds.gke.labels import GKE_QUEUED_TAINT_KEY
from spotkube.clouds.gke.resources import VERSIONED_NAME_MAX
from spotkube.clouds.gke.spec import GkeGpuPool, GkePoolUpgrade, GkeSpec
from spotkube.platform.catalog import declared_gpu_problem
from spotkube.platform.cloud import Cloud, GpuResolution, NodePoolFacts, RuleOutput, TargetKey
from spotkube.platform.component_names import ComponentNaming
from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.maintenance import replaces_no_node_problem
from spotkube.platform.spec import GpuSpec, alias, all_pools, config_key, set_by_user, worker_pools

CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
DEFAULT_MACHINE = "e2-standard-4"

#: What a GKE stack uses in place of another cloud's setting (keyed by the setting, or by the section
#: that holds it), for the message that refuses it: the setting is refused rather than ignored, so
#: nobody believes it protects a cluster it never reaches.
INSTEAD_OF = {
    "resourceGroupName": "a GKE cluster lives in cluster.project",
    "localAccountsDisabled": "GKE issues no client certificates; access goes through IAM",
    "adminGroupObjectIds": "grant roles/container.admin through IAM instead",
    "autoscaler": "GKE's autoscaler takes only cluster.autoscaler.profile: BALANCED or OPTIMIZE_UTILIZATION",
    "deployer": "GKE's auth plugin always uses Application Default Credentials",
    "evictionPolicy": "GKE always deletes preempted spot and preemptible VMs",
    "maxPrice": "GKE spot prices are set by Google and have no per-pool cap",
    "drainTimeoutMinutes": "GKE's surge upgrade waits up to an hour for pod disruption budgets, a limit it takes no "
    "setting for",
    "undrainableNodes": "GKE upgrades a node once its hour for pod disruption budgets is over",
}
#: Google Cloud project ids: 6-30 lower-case letters, digits and hyphens, starting with a letter.
PROJECT_PATTERN = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
#: Region names such as us-central1 or northamerica-northeast1 (not Azure's uksouth).
REGION_PATTERN = r"^[a-z]+-[a-z]+[0-9]+$"
#: Machine type names such as e2-standard-4 or n2d-highmem-8 (not Azure's Standard_D4s_v3).
MACHINE_PATTERN = r"^[a-z][a-z0-9]*-[a-z0-9-]*[a-z0-9]$"
#: The first GKE version with custom compute classes, which spotkube's GPU pools join
#: (docs/platform-facts.md#gke-compute-classes): major, minor, patch and GKE build.
COMPUTE_CLASS_MIN_VERSION = (1, 30, 3, 1451000)
COMPUTE_CLASS_MIN_VERSION_TEXT = "1.30.3-gke.1451000"
#: The first GKE version with flex-start GPU nodes (docs/platform-facts.md#gke-flex-start-and-queued-provisioning).
FLEX_START_MIN_VERSION = (1, 32, 2, 1652000)
FLEX_START_MIN_VERSION_TEXT = "1.32.2-gke.1652000"
#: The longest run GKE gives a flex-start VM: 7 days.
FLEX_START_MAX_RUN_HOURS = 168


def _zones_in_region(region: str, path: str, zones: tuple[str, ...]) -> RuleOutput:
    """Zones of a pool without GPUs: they must belong to the region (checked against the zone table
    when it lists the region, by name otherwise)."""
    known = catalog.region_zones(region)
    for z, zone in enumerate(zones):
        if known is not None:
            valid, accepted = zone in known, ", ".join(known)
        else:
            valid, accepted = bool(re.fullmatch(rf"{re.escape(region)}-[a-z]", zone)), f"{region}-a, {region}-b, ..."
        if not valid:
            yield Problem(config_key(f"{path}.zones[{z}]"), f"{shown(zone)} is not a zone of {region}; use {accepted}")


def _upgrade_rules(path: str, upgrade: GkePoolUpgrade, gpu: bool) -> RuleOutput:
    if upgrade.soak_minutes is not None and upgrade.strategy != "blue-green":
        yield Problem(config_key(f"{path}.upgrade.soakMinutes"), "applies to GKE's blue-green upgrades only; set "
                      "strategy: blue-green or remove it")
    if upgrade.strategy == "blue-green" and (upgrade.max_surge is not None or upgrade.max_unavailable is not None):
        yield Problem(config_key(f"{path}.upgrade.strategy"), "blue-green replaces the whole pool and takes no "
                      "maxSurge or maxUnavailable; remove them or use strategy: surge")
        return
    if {"max_surge", "max_unavailable"} & upgrade.model_fields_set:
        chosen = resources.chosen_upgrade(upgrade, gpu=gpu)
        surge, unavailable = resources.surge_and_unavailable(chosen)
        if chosen.strategy != "blue-green" and surge == 0 and unavailable == 0:
            yield replaces_no_node_problem(path, upgrade, surge, unavailable, "GKE")


def older_than(version: str, minimum: tuple[int, int, int, int]) -> bool:
    """Whether a pinned GKE version is certainly older than `minimum` (major, minor, patch, GKE build). A
    version without a patch or build (`1.30`) lets GKE pick the newest of its line, so only the parts
    given are compared."""
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?", version.strip())
    if match is None:
        return False

    given = tuple(int(part) for part in match.groups() if part is not None)
    return given < minimum[:len(given)]


def below_compute_class_version(version: str) -> bool:
    """Whether a pinned GKE version is certainly older than custom compute classes."""
    return older_than(version, COMPUTE_CLASS_MIN_VERSION)


def rules(spec: GkeSpec) -> RuleOutput:
    """GKE's own rules, after the rules every cloud shares."""
    settings = spec.cluster
    if spec.gpu_pools and settings.kubernetes_version and below_compute_class_version(settings.kubernetes_version):
        yield Problem(config_key("cluster.kubernetesVersion"), f"{settings.kubernetes_version!r} is older than "
                      f"{COMPUTE_CLASS_MIN_VERSION_TEXT}, the first GKE version with the compute classes that put "
                      "spot GPU pools before on-demand ones; use that version or later, or leave it unset to follow "
                      "the release channel")
    if not settings.project:
        yield Problem(config_key("cluster.project"), "is required on GKE; set the Google Cloud project id, "
                      "e.g. my-ml-platform")
    elif not re.fullmatch(PROJECT_PATTERN, settings.project):
        yield Problem(config_key("cluster.project"), f"{shown(settings.project)} is not a Google Cloud project id; use "
                      "6-30 lower-case letters, digits and hyphens, starting with a letter")

    control_plane = [("systemPool", spec.system_pool)]
    control_plane += [("platformPool", spec.platform_pool)] if spec.platform_pool.enabled else []
    for path, pool in control_plane:
        if len(pool.name) > VERSIONED_NAME_MAX:
            yield Problem(config_key(f"{path}.name"), f"{shown(pool.name)} is too long; use at most "
                          f"{VERSIONED_NAME_MAX} characters (GKE allows 40, and spotkube adds 7 that change when the "
                          "pool must be replaced, so the new pool can start before the old one goes)")
    # An unlisted region is the shared rules' to report; zones are judged only in a region known to
    # exist, or in one accepted with allowUnlistedRegion that has a Google Cloud region's shape.
    shaped = bool(re.fullmatch(REGION_PATTERN, spec.region))
    region_valid = spec.region in catalog.REGIONS or (settings.allow_unlisted_region and shaped)
    if not shaped and settings.allow_unlisted_region:
        yield Problem(config_key("region"), f"{shown(spec.region)} is not shaped like a Google Cloud region; use e.g. "
                      "us-central1 or europe-west4")
    for path, pool in all_pools(spec):
        if not catalog.is_valid_node_pool_name(pool.name):
            yield Problem(config_key(f"{path}.name"), f"{shown(pool.name)} is not a valid GKE node pool name; use 1-40 "
                          "lower-case letters, digits and hyphens, starting with a letter and not ending with a hyphen")

    cpu_pools = [("systemPool", spec.system_pool), ("platformPool", spec.platform_pool)]
    cpu_pools += [(f"spotPools[{i}]", p) for i, p in enumerate(spec.spot_pools)]
    for path, cpu_pool in cpu_pools:
        if cpu_pool.machine is not None and not re.fullmatch(MACHINE_PATTERN, cpu_pool.machine):
            yield Problem(config_key(f"{path}.machine"), f"{shown(cpu_pool.machine)} is not a GKE machine type; use "
                          f"e.g. {DEFAULT_MACHINE}")
        if region_valid:
            yield from _zones_in_region(spec.region, path, cpu_pool.zones)
    for path, worker in worker_pools(spec):
        yield from _upgrade_rules(path, worker.upgrade, isinstance(worker, GkeGpuPool))

    window = settings.maintenance.window
    if window is not None and len(window.days) * window.hours < MIN_WEEKLY_HOURS:
        yield Problem(config_key("cluster.maintenance.window"), f"{len(window.days)} day(s) of {window.hours} hours is "
                      f"less than the {MIN_WEEKLY_HOURS} hours a week GKE needs (48 hours in any 32 days); add days or "
                      "hours")

    region_problem = None
    for i, pool in enumerate(spec.gpu_pools):
        path = f"gpuPools[{i}]"
        if catalog.requires_spot_or_flex(pool.machine) and pool.capacity not in ("spot", "flex-start"):
            yield Problem(config_key(f"{path}.capacity"), f"{shown(pool.capacity)} is not available for "
                          f"{pool.machine}, which Compute Engine creates only as Spot or Flex-start VMs; use "
                          "capacity: spot or flex-start, or a3-highgpu-8g for an on-demand pool")
        gpu, error = gpu_of(pool)
        if gpu is None or error or not region_valid:
            continue  # the resolver reports a GPU problem; zones can't be judged without the GPU
        if catalog.zones_offering(spec.region, gpu.type) is None:
            # Where the catalog can't say which zones offer the GPU (a region or a GPU type it doesn't
            # know), zones the user names are taken on trust (their names are checked), since
            # spotkube can't fill them in; without zones the pool is refused.
            if pool.zones:
                yield from _zones_in_region(spec.region, path, pool.zones)
            elif gpu.type not in catalog.accelerators():
                yield Problem(config_key(f"{path}.zones"), catalog.zone_check(spec.region, (), gpu.type) or "")
            else:
                region_problem = (f"{catalog.zone_check(spec.region, (), gpu.type)}; or list the zones that offer "
                                  f"{gpu.type} in {path}.zones yourself")
            continue
        zone_problem = catalog.zone_check(spec.region, pool.zones, gpu.type)
        if zone_problem:
            yield Problem(config_key(f"{path}.zones"), zone_problem)
    if region_problem:
        yield Problem(config_key("region"), region_problem)
    yield from _sharing_rules(spec)
    yield from _flex_start_rules(spec)
    yield from _image_rules(spec)
    yield from _registry_rules(spec)
    yield from checkpoints.rules(spec)
    if set_by_user(spec.device_plugin, "mig_strategy"):
        yield Problem(config_key("devicePlugin.migStrategy"), f"{shown(spec.device_plugin.mig_strategy)} is an AKS "
                      "setting; GKE's own device plugin advertises every MIG partition as nvidia.com/gpu")


def _flex_start_rules(spec: GkeSpec) -> RuleOutput:
    """Flex-start and queued provisioning as GKE accepts them
    (docs/platform-facts.md#gke-flex-start-and-queued-provisioning). What spotkube writes itself for such a
    pool (autoscaling from 0, location policy ANY, no reservation, no auto-repair) can't be set otherwise in
    a stack; what a stack can set is checked here."""
    flex = [(f"gpuPools[{i}]", pool) for i, pool in enumerate(spec.gpu_pools) if pool.capacity == "flex-start"]
    version = spec.cluster.kubernetes_version
    if flex and version and older_than(version, FLEX_START_MIN_VERSION):
        yield Problem(config_key("cluster.kubernetesVersion"), f"{shown(version)} is older than "
                      f"{FLEX_START_MIN_VERSION_TEXT}, the first GKE version with flex-start GPU nodes, which the "
                      f"pool {shown(flex[0][1].name)} uses; use that version or later, or leave it unset to follow "
                      "the release channel")
    for i, pool in enumerate(spec.gpu_pools):
        path = f"gpuPools[{i}]"
        if pool.capacity != "flex-start":
            flex_only = (("queued_provisioning", pool.queued_provisioning), ("max_run_hours", pool.max_run_hours))
            for name, value in flex_only:
                if set_by_user(pool, name) and value not in (None, False):
                    given = "true" if value is True else shown(value)
                    yield Problem(config_key(f"{path}.{alias(pool, name)}"), f"{given} applies to flex-start pools "
                                  f"only, and this pool's capacity is {shown(pool.capacity)}; set capacity: "
                                  "flex-start or remove it")
            continue
        what = "flex-start with queued provisioning" if pool.queued_provisioning else "flex-start"
        if pool.min > 0:
            yield Problem(config_key(f"{path}.min"), f"{pool.min} is not allowed: GKE grows a {what} pool only from "
                          "0 nodes (total_min_node_count 0), creating each node when Dynamic Workload Scheduler has "
                          "capacity for it; use min: 0")
        if pool.max_run_hours is not None and pool.max_run_hours < 1:
            yield Problem(config_key(f"{path}.maxRunHours"), f"{pool.max_run_hours} is not accepted: a flex-start VM "
                          f"runs at least an hour; use 1 to {FLEX_START_MAX_RUN_HOURS}, or leave it unset for GKE's "
                          "7 days")
        if pool.max_run_hours is not None and pool.max_run_hours > FLEX_START_MAX_RUN_HOURS:
            yield Problem(config_key(f"{path}.maxRunHours"), f"{pool.max_run_hours} is longer than the 7 days "
                          f"({FLEX_START_MAX_RUN_HOURS} hours) GKE lets a flex-start VM run; use 1 to "
                          f"{FLEX_START_MAX_RUN_HOURS}, or leave it unset for GKE's 7 days")
        upgrade = pool.upgrade
        given = [alias(upgrade, name) for name in type(upgrade).model_fields if set_by_user(upgrade, name)]
        if given:
            yield Problem(config_key(f"{path}.upgrade.{given[0]}"), f"GKE upgrades {what} nodes only by short-lived "
                          "upgrades (a node is replaced when its run ends, never surged or drained in place), so a "
                          "flex-start pool takes no upgrade settings; remove upgrade")


def _sharing_rules(spec: GkeSpec) -> RuleOutput:
    """A MIG partition size GKE's device plugin knows for the GPU (docs/gpu-sharing.md)."""
    for i, pool in enumerate(spec.gpu_pools):
        sharing = pool.sharing
        if sharing is None or sharing.mig is None:
            continue
        gpu, error = gpu_of(pool)
        if gpu is None or error:
            continue  # the resolver reports the GPU problem
        sizes = gpu_sharing.mig_profiles(gpu.type)
        if not sizes:
            with_mig = ", ".join(gpu_sharing.PARTITION_SIZES)
            yield Problem(config_key(f"gpuPools[{i}].sharing.mig"), f"{shown(sharing.mig)} is not possible on "
                          f"{gpu.type}, which has no MIG; GKE partitions {with_mig}; or share it with strategy: "
                          "time-sharing (or mps) and clientsPerGpu")
        elif sharing.mig not in sizes:
            yield Problem(config_key(f"gpuPools[{i}].sharing.mig"), f"{shown(sharing.mig)} is not a partition size "
                          f"of {gpu.type} on GKE; use one of {', '.join(sizes)}")


def _image_rules(spec: GkeSpec) -> RuleOutput:
    """A secondary boot disk names a Compute Engine image GKE can read, and comes with image streaming,
    through which GKE's containerd reads a CONTAINER_IMAGE_CACHE disk (docs/platform-facts.md#gke-images)."""
    for i, pool in enumerate(spec.gpu_pools):
        disk = pool.secondary_boot_disk
        if disk is None:
            continue
        path = f"gpuPools[{i}].secondaryBootDisk"
        if not re.fullmatch(resources.DISK_IMAGE_PATTERN, disk.disk_image):
            yield Problem(config_key(f"{path}.diskImage"), f"{shown(disk.disk_image)} is not a Compute Engine image; "
                          "use projects/PROJECT/global/images/NAME, or global/images/NAME for an image in "
                          "cluster.project")
        if not pool.image_streaming:
            yield Problem(config_key(path), f"needs image streaming: GKE reads a {disk.mode} disk through it; set "
                          f"gpuPools[{i}].imageStreaming: true, or remove secondaryBootDisk")


def _registry_rules(spec: GkeSpec) -> RuleOutput:
    """Each registry is an Artifact Registry repository's id, and is named once."""
    seen: set[str] = set()
    for i, registry in enumerate(spec.cluster.registries):
        key = config_key(f"cluster.registries[{i}]")
        if not re.fullmatch(resources.REPOSITORY_PATTERN, registry):
            yield Problem(key, f"{shown(registry)} is not an Artifact Registry repository; use "
                          "projects/PROJECT/locations/LOCATION/repositories/REPOSITORY, e.g. "
                          "projects/my-ml-platform/locations/europe-west4/repositories/training")
        elif registry in seen:
            yield Problem(key, f"{shown(registry)} is listed twice; name each repository once")
        seen.add(registry)


def gpu_of(pool: GkeGpuPool) -> GpuResolution:
    """The GPU a GKE pool carries, or the reason its machine and GPU settings are wrong.

    Machine types that come with GPUs (a2, a3, a4, g2, ... in the catalog) fix them, so `gpu` is
    filled in from the machine (or refused if it disagrees); N1 takes a GPU chosen separately, so
    `gpu` must be given there. A machine type the catalog doesn't know is taken with the GPUs the
    pool declares (the plan warns with `catalog-unlisted-size`).
    """
    if not re.fullmatch(MACHINE_PATTERN, pool.machine):
        return None, (f"{shown(pool.machine)} is not a GKE machine type; use e.g. g2-standard-8 (1 × nvidia-l4) or "
                      "a4-highgpu-8g (8 × nvidia-b200)")
    if pool.gpu is not None:
        error = catalog.pairing_error(pool.machine, pool.gpu.type, pool.gpu.count)
        if error is None and not catalog.knows_machine(pool.machine):
            error = declared_gpu_problem(pool.gpu.type)
        return (None, error) if error else (pool.gpu, None)

    fixed = catalog.accelerator_for_machine(pool.machine)
    if fixed is not None:
        return GpuSpec(type=fixed[0], count=fixed[1]), None
    if catalog.is_n1(pool.machine):
        return None, (f"{pool.machine} has no built-in GPUs, so gpu must be given; use e.g. gpu: "
                      f"{{type: nvidia-tesla-t4, count: 1}} (N1 takes {', '.join(catalog.N1_ACCELERATOR_COUNTS)})")
    if catalog.carries_no_gpu(pool.machine):
        return None, (f"{shown(pool.machine)} carries no GPU: the {catalog.machine_family(pool.machine)} family has "
                      f"none; use a machine type from {catalog.gpu_families_text()}, e.g. g2-standard-8 "
                      "(1 × nvidia-l4), or an N1 type with gpu: {type: nvidia-tesla-t4, count: 1}")
    return None, catalog.unlisted_machine_error(pool.machine)


#: GKE wants 48 hours of maintenance availability in any 32 days: a weekly window of 12 hours
#: (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
MIN_WEEKLY_HOURS = 12


#: The environment variable `spotkube prices refresh` reads the Cloud Billing Catalog API key from.
BILLING_API_KEY_ENV = "SPOTKUBE_GCP_BILLING_API_KEY"


NODE_POOL = NodePoolFacts("GkeGpuNodePool", (
    TargetKey("cluster_id", "Input[str]", "The GKE cluster the pool joins: its id, "
              "`projects/<project>/locations/<region>/clusters/<name>`, or its name; another resource's output "
              "(a `gcp.container.Cluster`'s `id`) is fine."),
    TargetKey("region", "str", "The cluster's region, e.g. us-central1 (a regional cluster): it decides the "
              "pool's zones, prices and quota.", "region"),
    TargetKey("project", "Input[str]", "The Google Cloud project the cluster is in, e.g. my-ml-platform.",
              "cluster.project"),
    TargetKey("service_account", "Input[str]", "The e-mail of the service account the pool's nodes run as; "
              "unset: the cluster's default (Compute Engine's default service account unless the cluster "
              "names another). spotkube's own clusters give theirs a least-privilege account.", required=False),
))


class Gke(Cloud):
    """Google Kubernetes Engine."""

    cloud = "gke"
    title = "GKE"
    vendor = "Google Cloud"
    principal = "service account e-mail"
    labels = labels.LABELS
    regions = catalog.REGIONS
    region_examples = "us-central1 or europe-west4"
    default_machine = DEFAULT_MACHINE
    channels = CHANNELS
    default_channel = "REGULAR"
    # GKE takes a minor version, a patch or a full GKE version (docs/platform-facts.md#gke); spotkube refuses
    # `latest`, which would upgrade the control plane on any later `pulumi up`.
    version_pattern = r"^[1-9][0-9]*\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?$"
    version_accepted = ("major.minor (e.g. 1.33), major.minor.patch (e.g. 1.33.2) or a GKE version (e.g. "
                        "1.33.2-gke.1111000); unset follows the release channel")

    pricing = catalog.PRICING
    catalog_file = catalog.CATALOG_FILE
    default_maintenance_window = resources.DEFAULT_WINDOW
    # GKE gives a preempted node's pods 30 seconds and the kubelet keeps the last 15 for system pods: a
    # workload pod gets 15 (docs/evictions.md#how-much-time-a-step-gets).
    workload_notice_seconds = 15
    kfp_cloud_logs_link = True
    startup_figures = staticmethod(startup.figures)
    # GKE's cluster autoscaler serves ProvisioningRequests of this class for node pools with queued
    # provisioning (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
    provisioning_request_class = "queued-provisioning.gke.io"
    # ... and taints the nodes it brings up for them.
    provisioning_request_taint = GKE_QUEUED_TAINT_KEY
    commands_module = "spotkube.clouds.gke.commands"

    machine_arch = staticmethod(catalog.machine_arch)
    machine_gpu = staticmethod(catalog.accelerator_for_machine)
    knows_machine = staticmethod(catalog.knows_machine)
    mig_profiles = staticmethod(gpu_sharing.mig_profiles)
    shared_gpu_modes = tuple(gpu_sharing.STRATEGIES)
    max_clients_per_gpu = gpu_sharing.MAX_CLIENTS_PER_GPU
    managed_device_plugin = device_plugin.MANAGED_PLUGIN

    def gpu_types(self) -> frozenset[str]:
        return catalog.section().gpu_types()

    spec_model = GkeSpec
    instead_of = INSTEAD_OF
    check = staticmethod(rules)
    gpu_of = staticmethod(gpu_of)

    def pool_defaults(self, spec: GkeSpec, pool: GkeGpuPool) -> GkeGpuPool:
        """Zones left empty become every zone of the region that offers the pool's GPU.

        GKE would otherwise spread the pool over the cluster's zones, some without the GPU, and scale-ups
        there fail. Filling them in here, not in the component, makes the plan show the real zones.
        """
        if pool.zones or pool.gpu is None:
            return pool
        offering = catalog.zones_offering(spec.region, pool.gpu.type)
        return pool.model_copy(update={"zones": offering}) if offering else pool

    component = "GkeGpuCluster"
    node_pool = NODE_POOL
    component_naming = ComponentNaming(resources.longest_component_name, resources.component_name_becomes)
    read_pools = staticmethod(resources.read_pools)
    read_posture = staticmethod(resources.read_posture)
    read_autoscaler = staticmethod(resources.read_autoscaler)
    read_upgrades = staticmethod(resources.read_upgrades)
    read_supply = staticmethod(resources.read_supply)
    checkpoint_location = staticmethod(checkpoints.location)
    create_only = resources.CREATE_ONLY
    updatable_in_place = resources.UPDATABLE_IN_PLACE
    offline_outputs = staticmethod(offline.computed_outputs)
    offline_answer = staticmethod(offline.call_answer)
    offline_id = staticmethod(offline.resource_id)
    image_delivery = staticmethod(startup.image_delivery)

    def sign_in(self, spec: GkeSpec) -> str:
        """The auth plugin as gcloud writes it: gcloud's credentials through the DNS endpoint (gcloud
        refuses ADC there), Application Default Credentials through the IP endpoint."""
        if spec.cluster.dns_endpoint is not False:
            return "gke-gcloud-auth-plugin with gcloud's credentials (the DNS endpoint, as gcloud writes it)"
        return "gke-gcloud-auth-plugin with Application Default Credentials (the IP endpoint)"

    login_problem = staticmethod(kubeconfig.login_problem)
    preflight = preflight.PREFLIGHT

    def price_refresh(self, region: str, machine: str) -> str:
        """The Cloud Billing Catalog API answers any project's API key, given in the environment."""
        return f"{BILLING_API_KEY_ENV}=<API key> spotkube prices refresh --cloud gcp --region {region} --sku {machine}"

    def logs_cost_basis(self, spec: GkeSpec) -> str | None:
        """Cloud Logging bills the GiB ingested beyond a monthly free allotment per project: the plan
        states the basis, not a figure (docs/logs.md)."""
        what = "system components' and workloads'" if spec.cluster.logs.enabled is not False else "system components'"
        return (f"logs: Cloud Logging bills each GiB of {what} logs ingested beyond its monthly free allotment per "
                "project, kept 30 days in the _Default bucket; not priced here, as it depends on how much the steps "
                "print (cloud.google.com/stackdriver/pricing)")

    fixed_items = staticmethod(fixed_costs.fixed_items)
    fixed_prices = staticmethod(fixed_costs.fixed_prices)
    quota_plan = staticmethod(quota.quota_plan)


PROFILE = Gke()
