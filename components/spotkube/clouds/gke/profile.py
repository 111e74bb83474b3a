"""GKE: everything spotkube knows about Google Kubernetes Engine, in one place.

Its validation rules (cloud.google.com/kubernetes-engine/docs), checked against the bundled
`catalog.gke` facts; GPU resolution from the machine type; the zones a GPU pool defaults to;
how a NodePool reads back from its inputs; the new-stack template; the price-table name and the
device-plugin mode. The facts behind them, with their sources, are in docs/platform-facts.md#gke.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from spotkube.clouds.gke import catalog as catalog
from spotkube.clouds.gke import identities, quota, usage_api
from spotkube.clouds.gke.spec import GkeGpuPool, GkeSpec
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
from spotkube.platform.spec import GpuSpec, all_pools, config_key

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
#: A GKE ComputeClass, registered through the Kubernetes provider as a custom resource.
COMPUTE_CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
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
}
#: Longest system or platform pool name whose cloud name spotkube versions (see
#: shells.gke.cloud_pool_name): GKE allows 40 characters, and the version adds 7.
VERSIONED_NAME_MAX = 33
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
#: GKE GPU pools `new-stack` offers, best first: (GPU type, pool name, machine type, GPU count or
#: None when the machine type fixes it). L4 is the usual price/performance pick for inference and
#: fine-tuning; T4 is the most widely available fallback.
NEW_STACK_GPU_CHOICES: tuple[tuple[str, str, str, int | None], ...] = (
    ("nvidia-l4", "l4-spot", "g2-standard-8", None),
    ("nvidia-tesla-t4", "t4-spot", "n1-standard-8", 1),
)


def _zones_in_region(region: str, path: str, zones: tuple[str, ...]) -> RuleOutput:
    """Zones of a pool without GPUs: they must belong to the region (checked against the zone table
    when it lists the region, by name otherwise)."""
    known = catalog.GPU_ZONES.get(region)
    for z, zone in enumerate(zones):
        if known is not None:
            valid, accepted = zone in known, ", ".join(known)
        else:
            valid, accepted = bool(re.fullmatch(rf"{re.escape(region)}-[a-z]", zone)), f"{region}-a, {region}-b, ..."
        if not valid:
            yield Problem(config_key(f"{path}.zones[{z}]"), f"{shown(zone)} is not a zone of {region}; use {accepted}")


def below_compute_class_version(version: str) -> bool:
    """Whether a pinned GKE version is certainly older than custom compute classes. A version without
    a patch or build (`1.30`) lets GKE pick the newest of its line, which is recent enough."""
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?", version.strip())
    if match is None:
        return False
    given = tuple(int(part) for part in match.groups() if part is not None)
    return given < COMPUTE_CLASS_MIN_VERSION[:len(given)]


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
    region_problem = None
    for i, pool in enumerate(spec.gpu_pools):
        path = f"gpuPools[{i}]"
        if catalog.requires_spot_or_flex(pool.machine) and pool.capacity != "spot":
            yield Problem(config_key(f"{path}.capacity"), f"{shown(pool.capacity)} is not available for "
                          f"{pool.machine}, which Compute Engine creates only as Spot or Flex-start VMs; use "
                          "capacity: spot, or a3-highgpu-8g for a pool that is not spot")
        gpu, error = gpu_of(pool)
        if gpu is None or error or not region_valid:
            continue  # the resolver reports a GPU problem; zones can't be judged without the GPU
        if catalog.zones_offering(spec.region, gpu.type) is None:
            # A region the GPU table lacks: zones the user names are taken on trust (their names
            # are checked), since spotkube can't fill them in; without zones the pool is refused.
            if pool.zones:
                yield from _zones_in_region(spec.region, path, pool.zones)
            else:
                region_problem = (f"{catalog.zone_check(spec.region, (), gpu.type)}; or list the zones that offer "
                                  f"{gpu.type} in {path}.zones yourself")
            continue
        zone_problem = catalog.zone_check(spec.region, pool.zones, gpu.type)
        if zone_problem:
            yield Problem(config_key(f"{path}.zones"), zone_problem)
    if region_problem:
        yield Problem(config_key("region"), region_problem)


def gpu_of(pool: GkeGpuPool) -> GpuResolution:
    """The GPU a GKE pool carries, or the reason its machine and GPU settings are wrong.

    a2, a3 and g2 machine types fix their GPUs, so `gpu` is filled in from the machine (or refused
    if it disagrees); N1 takes a GPU chosen separately, so `gpu` must be given there.
    """
    if pool.gpu is not None:
        error = catalog.pairing_error(pool.machine, pool.gpu.type, pool.gpu.count)
        return (None, error) if error else (pool.gpu, None)
    fixed = catalog.accelerator_for_machine(pool.machine)
    if fixed is not None:
        return GpuSpec(type=fixed[0], count=fixed[1]), None
    if catalog.is_n1(pool.machine):
        return None, (f"{pool.machine} has no built-in GPUs, so gpu must be given; use e.g. gpu: "
                      f"{{type: nvidia-tesla-t4, count: 1}} (N1 takes {', '.join(catalog.N1_ACCELERATOR_COUNTS)})")
    family = catalog.machine_family(pool.machine)
    same_family = [m for m in catalog.FIXED_GPU_MACHINE_TYPES if catalog.machine_family(m) == family]
    if same_family:
        return None, (f"{shown(pool.machine)} is not a {family} machine type spotkube knows; use one of "
                      f"{', '.join(same_family)}")
    return None, (f"{shown(pool.machine)} carries no GPU; use a machine type from {catalog.GPU_FAMILIES_TEXT}, "
                  "e.g. g2-standard-8 (1 × nvidia-l4), or an N1 type with gpu: {type: nvidia-tesla-t4, count: 1}")


def pool_defaults(spec: GkeSpec, pool: GkeGpuPool) -> GkeGpuPool:
    """Zones left empty become every zone of the region that offers the pool's GPU.

    GKE would otherwise spread the pool over the cluster's zones, some without the GPU, and scale-ups
    there fail. Filling them in here, not in the component, makes the plan show the real zones.
    """
    if pool.zones or pool.gpu is None:
        return pool
    offering = catalog.zones_offering(spec.region, pool.gpu.type)
    return pool.model_copy(update={"zones": offering}) if offering else pool


def _taints(values: Any) -> list[contract.Taint]:
    """GKE `taints` in their order; a malformed taint protects nothing, so it is simply not counted."""
    taints = []
    for item in items(values):
        try:
            taints.append(contract.Taint.from_gke(mapping(item)))
        except KeyError:
            continue
    return taints


def _capacity(node_config: Mapping[str, Any]) -> contract.Capacity:
    """What the pool really asks Compute Engine for; the capacity label only claims it."""
    if node_config.get("spot"):
        return "spot"
    return "preemptible" if node_config.get("preemptible") else "on-demand"


def _pool(where: str, name: str, inputs: Mapping[str, Any]) -> RegisteredPool:
    """Limits are read as totals (`totalMin/MaxNodeCount`, which spotkube sets), falling back to the
    per-zone `min/maxNodeCount` of pools built otherwise. GKE has no eviction policy or max price."""
    config = mapping(inputs.get("nodeConfig"))
    labels = {str(k): str(v) for k, v in mapping(config.get("labels")).items()}
    scaling = mapping(inputs.get("autoscaling"))
    accelerators = [mapping(a) for a in items(config.get("guestAccelerators"))]
    accelerator = labels.get(contract.ACCELERATOR_LABEL)
    labelled_gpu = accelerator not in (None, "", contract.NO_ACCELERATOR) or contract.GKE_ACCELERATOR_LABEL in labels
    taints = _taints(config.get("taints"))
    return RegisteredPool(
        where=where,
        cloud_name=name,
        labels=labels,
        machine=config.get("machineType"),
        gpu_count=sum(int(a.get("count") or 0) for a in accelerators),
        has_gpu=bool(accelerators) or labelled_gpu,
        capacity=_capacity(config),
        system=labels.get(contract.ROLE_LABEL) == "system",
        min_nodes=first(scaling, "totalMinNodeCount", "minNodeCount"),
        max_nodes=first(scaling, "totalMaxNodeCount", "maxNodeCount"),
        taint_texts=tuple(str(t) for t in taints),
        taints=frozenset(taints),
        zones=tuple(str(z) for z in items(inputs.get("nodeLocations"))),
        eviction_policy=None,
        max_price=None,
    )


def read_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The pools a registration declares: a NodePool, or pools inlined in a Cluster. spotkube removes
    the cluster's default pool at creation and inlines none."""
    if type_token == NODE_POOL_TYPE:
        return [_pool(f"NodePool {shown(name)}", str(inputs.get("name") or ""), inputs)]
    if type_token == CLUSTER_TYPE:
        pools = [mapping(p) for p in items(inputs.get("nodePools"))]
        return [_pool(f"Cluster {name!r} nodePools[{i}]", str(p.get("name") or ""), p) for i, p in enumerate(pools)]
    return []


def _new_stack_gpu_pool(region: str) -> dict[str, Any]:
    """A spot pool of the first GPU in NEW_STACK_GPU_CHOICES that the region offers in some zone."""
    if region not in catalog.GPU_ZONES:
        raise NewStackError(
            f"--region {region}: not in spotkube's GKE GPU zone table ({catalog.GPU_ZONES_SOURCE}, "
            f"{catalog.GPU_ZONES_DATE}); known regions: {', '.join(catalog.GPU_ZONES)}"
        )
    for gpu_type, name, machine, count in NEW_STACK_GPU_CHOICES:
        if catalog.zones_offering(region, gpu_type):
            pool: dict[str, Any] = {"name": name, "machine": machine, "capacity": "spot", "min": 0, "max": 4}
            if count is not None:
                pool["gpu"] = {"type": gpu_type, "count": count}
            return pool
    offered = ", ".join(gpu for gpu, *_ in NEW_STACK_GPU_CHOICES)
    raise NewStackError(f"--region {region}: offers none of {offered}; pick another region")


def _api_server(inputs: Mapping[str, Any]) -> Setting:
    """Who can reach the control plane: its IP endpoint (private, or public behind authorized
    networks) and its IAM-authorised DNS endpoint."""
    private = mapping(inputs.get("privateClusterConfig"))
    dns = mapping(mapping(inputs.get("controlPlaneEndpointsConfig")).get("dnsEndpointConfig"))
    authorized = inputs.get("masterAuthorizedNetworksConfig")
    if private.get("enablePrivateEndpoint"):
        ip = "IP endpoint private"
    elif authorized is not None:
        ip = "IP endpoint public, authorized networks only"
    else:
        ip = "IP endpoint public, any address"
    text = ip + ("; DNS endpoint open to IAM-authorised callers" if dns.get("allowExternalTraffic") else "")
    exposed = not private.get("enablePrivateEndpoint") and authorized is None
    return Setting("API server", text, "reachable from the whole internet" if exposed else None)


def read_posture(type_token: str, name: str, inputs: Mapping[str, Any], protect: bool) -> ClusterPosture | None:
    """A GKE Cluster's security settings as registered; the concerns are what spotkube's prod
    defaults avoid (docs/platform-facts.md#gke-cluster-access)."""
    if type_token != CLUSTER_TYPE:
        return None
    authorized = inputs.get("masterAuthorizedNetworksConfig")
    blocks = [str(mapping(b).get("cidrBlock")) for b in items(mapping(authorized).get("cidrBlocks"))]
    if authorized is None:
        networks = Setting("master authorized networks", "off", "any address may reach the IP endpoint")
    else:
        google = ", Google Cloud public ranges too" if mapping(authorized).get("gcpPublicCidrsAccessEnabled") else ""
        networks = Setting("master authorized networks", f"on: {listed(blocks)}{google}")
    certificate = mapping(mapping(inputs.get("masterAuth")).get("clientCertificateConfig"))
    dataplane_v2 = inputs.get("datapathProvider") == "ADVANCED_DATAPATH"
    calico = mapping(inputs.get("networkPolicy")).get("enabled")
    policy = "Dataplane V2 (Cilium)" if dataplane_v2 else "Calico" if calico else "none"
    channel = mapping(inputs.get("releaseChannel")).get("channel") or "UNSPECIFIED"
    deletion = bool(inputs.get("deletionProtection")) and protect
    return ClusterPosture(f"Cluster {shown(name)}", (
        _api_server(inputs),
        networks,
        flag("private nodes", mapping(inputs.get("privateClusterConfig")).get("enablePrivateNodes"), "on", "off",
             "nodes have public IP addresses"),
        flag("local accounts", not certificate.get("issueClientCertificate"), "client certificates off",
             "client certificates on", "a client certificate bypasses IAM"),
        Setting("IAM / RBAC", "Google IAM and Kubernetes RBAC"),
        Setting("network policy", policy, None if policy != "none" else "every pod can reach every pod"),
        Setting("release channel", str(channel), "no automatic upgrades" if channel == "UNSPECIFIED" else None),
        Setting("Kubernetes version", str(inputs.get("minMasterVersion") or "the channel's default")),
        Setting("deletion protection",
                f"deletionProtection {'on' if inputs.get('deletionProtection') else 'off'}, "
                f"protect {'on' if protect else 'off'}",
                None if deletion else "`pulumi destroy` or a replacement deletes the cluster"),
        flag("workload identity", mapping(inputs.get("workloadIdentityConfig")).get("workloadPool"), "on", "off",
             "pods use the node's service account"),
        flag("shielded nodes", inputs.get("enableShieldedNodes"), "on", "off",
             "nodes boot without verified firmware"),
    ))


def new_stack_config(
    environment: str, region: str, gcp_project: str | None, deployer: tuple[str, str] | None
) -> dict[str, Any]:
    """On-demand system and platform pools and a spot pool of a GPU the region really offers."""
    if deployer is not None:
        raise NewStackError("--deployer-object-id applies to --cloud aks only (GKE grants by IAM: docs/identities.md)")
    if not gcp_project:
        raise NewStackError("--gcp-project is required with --cloud gke (the Google Cloud project id)")
    return {
        "cloud": "gke",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": DEFAULT_MACHINE, "min": 2, "max": 3},
        "platformPool": {"machine": DEFAULT_MACHINE, "min": 1, "max": 3},
        # Zones left out on purpose: spotkube fills in the zones of the region that offer the GPU.
        "gpuPools": [_new_stack_gpu_pool(region)],
        "cluster": {"project": gcp_project, "channel": "REGULAR"},
    }


def sign_in(spec: GkeSpec) -> str:
    """The auth plugin as gcloud writes it: gcloud's credentials through the DNS endpoint (gcloud
    refuses ADC there), Application Default Credentials through the IP endpoint."""
    if spec.cluster.dns_endpoint is not False:
        return "gke-gcloud-auth-plugin with gcloud's credentials (the DNS endpoint, as gcloud writes it)"
    return "gke-gcloud-auth-plugin with Application Default Credentials (the IP endpoint)"



def _class_members(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> dict[str, str]:
    """Pool name -> the compute class it joined: a NodePool joins a class only with both the class
    label and the class taint (docs/platform-facts.md#gke-compute-classes)."""
    members = {}
    for kind, name, inputs in resources:
        for pool in read_pools(kind, name, inputs):
            label = pool.labels.get(contract.COMPUTE_CLASS_LABEL)
            if label and contract.Taint(contract.COMPUTE_CLASS_LABEL, label) in pool.taints:
                members[pool.cloud_name] = label
    return members


def _class_tiers(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> dict[int, list[str]]:
    """The registered ComputeClasses' priorities as tiers over pool names, the higher tried first: a
    class's first priority gets the highest number. A pool named by a class it did not join (no
    label or taint) is not ranked, because GKE would not count it as the class's capacity."""
    members = _class_members(resources)
    tiers: dict[int, list[str]] = {}
    for kind, _, inputs in resources:
        if kind != COMPUTE_CLASS_TYPE:
            continue
        class_name = mapping(inputs.get("metadata")).get("name")
        priorities = items(mapping(inputs.get("spec")).get("priorities"))
        for index, priority in enumerate(priorities):
            for pool in items(mapping(priority).get("nodepools")):
                if members.get(str(pool)) == class_name:
                    tiers.setdefault(len(priorities) - index, []).append(f"^{re.escape(str(pool))}$")
    return tiers


def read_autoscaler(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> AutoscalerFacts | None:
    """The order GKE grows a GPU type's pools in, from its registered ComputeClass.

    GKE grows a pool of the class's next priority only when the pools of the earlier one can't be
    grown, for pods that select the class. No timer bounds how long that takes: a spot stock-out is
    an error that backs the pool off, and `capacityCheckWaitTimeSeconds`, the only per-priority
    wait, applies to flex-start and TPU priorities only (docs/platform-facts.md#gke-compute-classes).
    Without a ComputeClass, GKE Standard's autoscaler ranks nothing: it may grow the on-demand pool
    while spot is available (docs/platform-facts.md#gke-autoscaling).
    """
    if not any(kind == CLUSTER_TYPE for kind, _, _ in resources):
        return None
    no_bound = ("not bounded by GKE: a spot stock-out is an error that backs the pool off (5 min, up to 30) and the "
                "next priority is tried; no ComputeClass timer applies to node pool priorities")
    if not any(kind == COMPUTE_CLASS_TYPE for kind, _, _ in resources):
        return AutoscalerFacts(
            ordered_by="GKE autoscaler (cheapest pool that fits, no priority expander)",
            priorities=None,
            node_group=None,
            give_up_seconds=None,
            first_look_seconds=0,
            formula=no_bound,
            caveat="order not guaranteed: without a ComputeClass, GKE Standard may grow the on-demand pool while "
            "spot is available",
        )
    return AutoscalerFacts(
        ordered_by=f"ComputeClass per GPU type ({contract.compute_class('<GPU type>')}), for pods that select it",
        priorities=_class_tiers(resources),
        node_group=lambda pool: pool,
        give_up_seconds=None,
        first_look_seconds=0,
        formula=no_bound,
        caveat="an on-demand pool is not behind every spot pool of its ComputeClass, or a pool lacks the class "
        "label and taint",
    )


PROFILE = CloudProfile(
    cloud="gke",
    title="GKE",
    spec_model=GkeSpec,
    instead_of=INSTEAD_OF,
    default_machine=DEFAULT_MACHINE,
    channels=CHANNELS,
    default_channel="REGULAR",
    rules=rules,
    gpu_of=gpu_of,
    machine_arch=catalog.machine_arch,
    machine_gpu=catalog.accelerator_for_machine,
    gpu_types=frozenset(catalog.ACCELERATORS),
    read_pools=read_pools,
    read_posture=read_posture,
    read_autoscaler=read_autoscaler,
    sign_in=sign_in,
    new_stack_config=new_stack_config,
    price_cloud="gcp",
    # GKE runs its own plugin on GPU nodes (and installs the driver on managed-driver pools); NVIDIA's
    # beside it would advertise each GPU twice.
    device_plugin_mode="gke-managed",
    regions=catalog.REGIONS,
    region_examples="us-central1 or europe-west4",
    # GKE takes a minor version, a patch or a full GKE version (docs/platform-facts.md#gke); spotkube
    # refuses `latest`, which would upgrade the control plane on any later `pulumi up`.
    version_pattern=r"^[1-9][0-9]*\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?$",
    version_accepted="major.minor (e.g. 1.33), major.minor.patch (e.g. 1.33.2) or a GKE version (e.g. "
    "1.33.2-gke.1111000); unset follows the release channel",
    pool_defaults=pool_defaults,
    # pulumi-gcp replaces a cluster or a pool when its identity, location or network changes, and a
    # pool when its node config does, except the fields GKE updates in place
    # (docs/platform-facts.md#gke-node-pool-updates).
    create_only={
        CLUSTER_TYPE: ("name", "location", "project", "network", "subnetwork"),
        NODE_POOL_TYPE: ("name", "cluster", "location", "project", "nodeConfig"),
    },
    updatable_in_place={NODE_POOL_TYPE: tuple(f"nodeConfig.{field}" for field in (
        "labels", "taints", "resourceLabels", "machineType", "diskType", "diskSizeGb"))},
    quota_plan=quota.quota_plan,
    read_quota=usage_api.read_quota,
    identities=identities.FACTS,
)
