"""GKE's resources, both ways: the inputs the component writes, and how the plan reads them back.

Writer and reader sit together so that what `GkeGpuCluster` sends Google Cloud and what the plan, the
policy pack and `plan --diff` say it sent can't drift apart: the node pools' inputs and their reading
(`RegisteredPool`), the cluster's inputs and its security posture, the ComputeClasses and the order
they give the autoscaler, the fields GKE fixes at creation, and the names derived from the
component's. The writers return pulumi-gcp's inputs as its constructors take them (snake_case
keywords and keys); the readers read them as the engine registers them (camelCase). Values that are
other resources' outputs (the project, the cluster's name, the node service account) are passed in and
passed through untouched.

Pure module: no Pulumi. The facts, with sources: docs/platform-facts.md#gke.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any

from spotkube.clouds.gke import gpu_sharing
from spotkube.clouds.gke.labels import GKE_ACCELERATOR_LABEL
from spotkube.clouds.gke.spec import GkeGpuPool, GkePoolUpgrade
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
from spotkube.platform.maintenance import WEEKDAYS, UpgradeExposure, first_day_on_or_after, in_utc, window_text
from spotkube.platform.plan import PlatformPlan, PoolPlan, versioned_name
from spotkube.platform.posture import ClusterPosture, Setting, flag, listed
from spotkube.platform.spec import MaintenanceSettings, MaintenanceWindow, PlatformSpec, PoolUpgrade

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
#: A GKE ComputeClass, registered through the Kubernetes provider as a custom resource.
COMPUTE_CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
SERVICE_ACCOUNT_TYPE = "gcp:serviceaccount/account:Account"
#: A grant on one Artifact Registry repository (the nodes' read access to a registry).
REPOSITORY_IAM_MEMBER_TYPE = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
ROUTER_NAT_TYPE = "gcp:compute/routerNat:RouterNat"
#: A stack without a window of its own: Saturday and Sunday 02:00-08:00 UTC. GKE wants 48 hours of
#: availability in any 32 days (a weekly window of 12 hours) and 4 hours in a row
#: (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
DEFAULT_WINDOW = MaintenanceWindow(days=("Saturday", "Sunday"), start="02:00", hours=6)
#: RFC 5545 day names, for the window's recurrence rule.
RRULE_DAYS = dict(zip(WEEKDAYS, ("MO", "TU", "WE", "TH", "FR", "SA", "SU"), strict=True))
#: A window's times are RFC 3339 instants on the first of its days on or after this date; the
#: recurrence repeats them.
WINDOW_ANCHOR = date(2025, 1, 1)
RFC3339_UTC = "%Y-%m-%dT%H:%M:%SZ"
#: Busy periods stop node upgrades and minor versions; GKE still applies the control plane's patches.
EXCLUSION_SCOPE = "NO_MINOR_OR_NODE_UPGRADES"
#: What a GPU pool's upgrade does unless the stack says otherwise: one surge node, none taken away
#: before it is up; GKE then drains each node, waiting up to an hour for pod disruption budgets.
GPU_UPGRADE = GkePoolUpgrade(strategy="surge", max_surge=1, max_unavailable=0)
GKE_DRAIN_LIMIT_MINUTES = 60

# --- Names ----------------------------------------------------------------------------------------

#: The cluster resource's logical name is the component's name with this suffix; Pulumi auto-names it.
CLUSTER_SUFFIX = "-gke"
#: A cluster name has at most 40 characters, and so has a node pool name.
CLUSTER_NAME_MAX = 40
POOL_NAME_MAX = 40
#: A versioned control-plane pool's cloud name is its own name, a dash and this many hex digits...
VERSION_SEPARATOR = "-"
VERSION_DIGITS = 6
#: ...so a versioned pool's own name has at most 33 characters (GKE's rules refuse longer ones).
VERSIONED_NAME_MAX = POOL_NAME_MAX - len(VERSION_SEPARATOR) - VERSION_DIGITS


def longest_component_name(environment: str) -> int:
    """The longest `GkeGpuCluster` name whose auto-named cluster name fits."""
    return CLUSTER_NAME_MAX - len(CLUSTER_SUFFIX) - AUTONAME_SUFFIX


def component_name_becomes(name: str, environment: str) -> str:
    """What a component name turns into, for the message that refuses it."""
    return f"it becomes the start of the GKE cluster's name ({name}{CLUSTER_SUFFIX}-<random suffix>)"


def node_service_account_id(name: str, spec: PlatformSpec) -> str:
    """A service account id that is stable, unique per component, environment and region, and
    within IAM's rule (6-30 characters, lower-case, starting with a letter).

    Several clusters may share one project, so the component name alone would collide; a short
    digest of name, environment and region keeps ids apart without exceeding 30 characters.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not slug[:1].isalpha():
        slug = f"sk-{slug}".rstrip("-")
    digest = hashlib.sha256(f"{name}/{spec.environment}/{spec.region}".encode()).hexdigest()[:6]
    return f"{slug[:16].rstrip('-')}-nodes-{digest}"


# --- Node pools -----------------------------------------------------------------------------------

#: The one role GKE nodes need for their system tasks (logging, monitoring), instead of the Editor role the
#: default compute service account usually holds (private images need roles/artifactregistry.reader on the
#: stack's `cluster.registries` too); the deployer may grant only it, by IAM condition.
NODE_SERVICE_ACCOUNT_ROLE = "roles/container.defaultNodeServiceAccount"
#: With a dedicated service account, Google recommends the broad scope and lets IAM decide.
NODE_OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
#: GKE sets this key itself; a pool whose metadata lacks it shows a diff and is recreated
#: (terraform-provider-google, node_config.metadata).
NODE_METADATA = {"disable-legacy-endpoints": "true"}
#: Pods get the GKE metadata server, which workload identity needs and which hides node credentials.
WORKLOAD_METADATA = {"mode": "GKE_METADATA"}
#: GKE puts a regional cluster's nodes in three of the region's zones unless told otherwise.
REGIONAL_DEFAULT_ZONE_COUNT = 3
#: Node config fields left out of a pool's version: GKE updates labels and taints in place, and the
#: service account (an Output) is versioned by its stable id instead. Every other field replaces.
UNVERSIONED_NODE_FIELDS = ("labels", "taints", "service_account")
#: What a NodePool ignores: its initial count, after creation, belongs to the autoscaler.
NODE_POOL_IGNORED = ("initialNodeCount",)
#: GKE node pool taints spell the effect in SCREAMING_SNAKE_CASE.
TAINT_EFFECTS: Mapping[str, str] = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE",
                                    "NoExecute": "NO_EXECUTE"}


def gke_taint(taint: contract.Taint) -> dict[str, str]:
    """A taint as a GKE node pool's `taints` item."""
    return {"key": taint.key, "value": taint.value, "effect": TAINT_EFFECTS[taint.effect]}


def taint_of(item: Mapping[str, Any]) -> contract.Taint:
    """The inverse of `gke_taint`, for reading registered node pools back; KeyError when malformed."""
    effect = {gke: kubernetes for kubernetes, gke in TAINT_EFFECTS.items()}[item["effect"]]
    return contract.Taint(item["key"], item.get("value", ""), effect)  # type: ignore[arg-type]


def initial_node_count(pool: PoolPlan) -> int:
    """Nodes per zone at creation.

    GKE counts `initial_node_count` per zone while the spec's min is a pool total, so divide and
    round up: the pool starts at min or a little above. The autoscaler owns the count afterwards,
    which is why the component ignores later changes to it.
    """
    return math.ceil(pool.min / (len(pool.zones) or REGIONAL_DEFAULT_ZONE_COUNT))


def node_config(pool: PoolPlan, service_account: Any) -> dict[str, Any]:
    """A pool's `node_config`: machine, GPUs, capacity, and the plan's labels and taints.

    `spot` and `preemptible` are never both set: one is chosen by the pool's single capacity. The
    driver version is always explicit because GKE fills in DEFAULT since 1.30 and an unset field
    then shows a diff. Secure Boot stays on except where the driver is installed by hand
    (INSTALLATION_DISABLED): a self-built kernel module is unsigned, and Secure Boot refuses it.
    """
    config: dict[str, Any] = {
        "machine_type": pool.machine,
        "labels": pool.labels,
        "taints": [gke_taint(t) for t in pool.taints] or None,
        "service_account": service_account,
        "oauth_scopes": NODE_OAUTH_SCOPES,
        "metadata": NODE_METADATA,
        "workload_metadata_config": WORKLOAD_METADATA,
        "shielded_instance_config": {
            "enable_secure_boot": pool.gpu_driver != "INSTALLATION_DISABLED",
            "enable_integrity_monitoring": True,
        },
    }
    if pool.gpu_type:
        accelerator: dict[str, Any] = {
            "type": pool.gpu_type,
            "count": pool.gpu_count,
            "gpu_driver_installation_config": {"gpu_driver_version": pool.gpu_driver},
        }
        sharing = pool.sharing
        if sharing is not None and sharing.mode == "mig":
            accelerator["gpu_partition_size"] = sharing.partition
        elif sharing is not None:
            accelerator["gpu_sharing_config"] = {
                "gpu_sharing_strategy": gpu_sharing.STRATEGIES[sharing.mode],
                "max_shared_clients_per_gpu": sharing.slices_per_gpu,
            }
        config["guest_accelerators"] = [accelerator]
    if pool.capacity == "spot":
        config["spot"] = True
    elif pool.capacity == "preemptible":
        config["preemptible"] = True
    elif pool.capacity == "flex-start":
        config.update(flex_start_config(pool))
    return config


#: GKE's flex-start and queued-provisioning pools take capacity from Dynamic Workload Scheduler, never from a
#: reservation (docs/platform-facts.md#gke-flex-start-and-queued-provisioning).
NO_RESERVATION = {"consume_reservation_type": "NO_RESERVATION"}


def flex_start_config(pool: PoolPlan) -> dict[str, Any]:
    """A flex-start pool's `node_config` fields: flex-start itself, no reservation, and the run a node
    gets before GKE deletes it (`max_run_duration` in seconds; unset keeps GKE's 7 days)."""
    config: dict[str, Any] = {"flex_start": True, "reservation_affinity": NO_RESERVATION}
    if pool.max_run_hours is not None:
        config["max_run_duration"] = f"{pool.max_run_hours * 3600}s"
    return config


def cloud_pool_name(pool: PoolPlan, service_account_id: str) -> str:
    """The NodePool name. A pool that hosts the control plane is versioned by every node setting GKE
    can't change in place (the service account by its stable id), so that replacing it creates the
    new pool before the old one is deleted; spot and GPU pools keep their name and go first."""
    if not pool.hosts_control_plane:
        return pool.name
    config = {k: v for k, v in node_config(pool, "").items() if k not in UNVERSIONED_NODE_FIELDS}
    return versioned_name(pool.name, {**config, "service_account_id": service_account_id},
                          separator=VERSION_SEPARATOR, digits=VERSION_DIGITS)


#: A GKE cluster's id, as `GkeGpuNodePool`'s `cluster_id` may give it (or the cluster's name alone).
CLUSTER_ID_PATTERN = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/clusters/(?P<name>[^/]+)$")
CLUSTER_NAME_PATTERN = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")


#: A service account's e-mail, as a NodePool's `node_config.service_account` takes it.
SERVICE_ACCOUNT_PATTERN = re.compile(r"^[a-z0-9][-a-z0-9]*@[-a-z0-9.]+\.gserviceaccount\.com$")


def service_account_problem(email: object) -> str | None:
    """Why a plain `service_account` is no service account's e-mail, or None (an Output is GKE's to judge)."""
    if not isinstance(email, str) or SERVICE_ACCOUNT_PATTERN.match(email):
        return None
    return (f"{email!r} is not a service account's e-mail; use <name>@<project>.iam.gserviceaccount.com (or "
            "<number>-compute@developer.gserviceaccount.com, Compute Engine's default)")


def cluster_id_problem(cluster_id: object, project: object, region: str) -> str | None:
    """Why a plain `cluster_id` can't name the regional cluster of `project` and `region`, or None (an
    Output is GKE's to judge once it resolves)."""
    if not isinstance(cluster_id, str):
        return None
    match = CLUSTER_ID_PATTERN.match(cluster_id)
    if match is None:
        if CLUSTER_NAME_PATTERN.match(cluster_id):
            return None
        return (f"{cluster_id!r} is neither a cluster id, projects/<project>/locations/<region>/clusters/<name>, nor a "
                "cluster's name (lower-case letters, digits and hyphens, at most 40)")
    if isinstance(project, str) and match["project"] != project:
        return f"{cluster_id!r} is in project {match['project']!r}, not in {project!r}; give the cluster's own project"
    if match["location"] != region:
        return (f"{cluster_id!r} is in {match['location']!r}, not in region {region!r}; spotkube's pools join "
                "regional clusters: give the cluster's region")
    return None


def node_pool_inputs(pool: PoolPlan, *, project: Any, location: str, cluster: Any,
                     service_account: Any, images: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A NodePool's inputs; `project`, `cluster` and `service_account` may be other resources' outputs,
    `images` the node config's image fields (`image_config`).

    A flex-start pool is written as GKE requires one (the rules refuse what a stack could break): scaled
    from 0 (its `min` is 0), location policy ANY, no reservation, auto-repair off, and GKE's own
    short-lived upgrades; with queued provisioning, its nodes come only through ProvisioningRequests.
    """
    flex = pool.capacity == "flex-start"
    inputs = {
        "name": pool.cloud_name,
        "project": project,
        "location": location,
        "cluster": cluster,
        "node_locations": list(pool.zones) or None,
        "initial_node_count": initial_node_count(pool),
        "autoscaling": {
            "total_min_node_count": pool.min,
            "total_max_node_count": pool.max,
            # ANY lowers preemption risk for spot and lets flex-start take capacity in any zone that has
            # it (GKE requires it there); BALANCED spreads on-demand nodes.
            "location_policy": "ANY" if pool.interruptible or flex else "BALANCED",
        },
        # GKE refuses auto-repair on flex-start and queued-provisioning pools: a repaired node would be a
        # new flex-start VM, provisioned again.
        "management": {"auto_repair": not flex, "auto_upgrade": True},
        # Flex-start nodes get GKE's short-lived upgrades, which take no surge or blue-green settings.
        "upgrade_settings": None if flex else upgrade_settings(pool),
        "node_config": {**node_config(pool, service_account), **(images or {})},
    }
    if pool.queued:
        inputs["queued_provisioning"] = {"enabled": True}
    return inputs


# --- Images and registries ------------------------------------------------------------------------

#: The node image image streaming and secondary boot disks need: Container-Optimized OS with
#: containerd, GKE's default, stated on the pools that use them (docs/platform-facts.md#gke-images).
STREAMING_IMAGE_TYPE = "COS_CONTAINERD"
#: A Compute Engine image: `projects/PROJECT/global/images/NAME`, or `global/images/NAME` in the
#: cluster's project (image names: a letter, then up to 62 lower-case letters, digits and hyphens).
DISK_IMAGE_PATTERN = r"(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/)?global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
#: An Artifact Registry repository's id (repository ids: a letter, then up to 62 lower-case letters,
#: digits and hyphens).
REPOSITORY_PATTERN = (r"projects/(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])/locations/(?P<location>[a-z][a-z0-9-]*"
                      r"[a-z0-9])/repositories/(?P<repository>[a-z]([a-z0-9-]{0,61}[a-z0-9])?)")
#: What the nodes' service account gets on each registry the stack names: reading its images.
REGISTRY_READER_ROLE = "roles/artifactregistry.reader"


def gpu_pool_spec(spec: PlatformSpec, name: str) -> GkeGpuPool | None:
    """The GKE GPU pool of that name, for the node settings only GKE has."""
    return next((p for p in spec.gpu_pools if p.name == name and isinstance(p, GkeGpuPool)), None)


def image_config(pool: GkeGpuPool | None) -> dict[str, Any]:
    """A GPU pool's image streaming (`gcfs_config`, on Container-Optimized OS with containerd) and
    secondary boot disk (`secondary_boot_disks`), as node config fields; empty for a pool with neither.
    The image type is written only where streaming is on, so no other pool's node config changes."""
    if pool is None or not pool.image_streaming:
        return {}
    config: dict[str, Any] = {"image_type": STREAMING_IMAGE_TYPE, "gcfs_config": {"enabled": True}}
    disk = pool.secondary_boot_disk
    if disk is not None:
        config["secondary_boot_disks"] = [{"disk_image": disk.disk_image, "mode": disk.mode}]
    return config


def registry_grant_inputs(repository_id: str, member: Any) -> dict[str, Any]:
    """A RepositoryIamMember's inputs: the reader role on one repository (an id the rules accepted) for
    `member`, which may be an output."""
    match = re.fullmatch(REPOSITORY_PATTERN, repository_id)
    assert match is not None, "the GKE rules accept only repository ids"
    return {"project": match["project"], "location": match["location"], "repository": match["repository"],
            "role": REGISTRY_READER_ROLE, "member": member}


def registry_grant_name(component: str, repository_id: str) -> str:
    """The grant's logical name: the repository's project, location and name, so that reordering the
    stack's list replaces nothing."""
    match = re.fullmatch(REPOSITORY_PATTERN, repository_id)
    assert match is not None, "the GKE rules accept only repository ids"
    return f"{component}-registry-{match['project']}-{match['location']}-{match['repository']}"


def _images(config: Mapping[str, Any]) -> str | None:
    """How a pool's nodes get their images, as registered, when not by a plain pull."""
    streaming = bool(mapping(config.get("gcfsConfig")).get("enabled"))
    disks = [mapping(d) for d in items(config.get("secondaryBootDisks"))]
    parts = ["image streaming (gcfs_config)"] if streaming else []
    parts += [f"secondary boot disk {d.get('diskImage')} ({d.get('mode') or 'MODE_UNSPECIFIED'})" for d in disks]
    return "; ".join(parts) or None


def read_supply(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[Setting]:
    """What the plan's GPU supply rows show, as registered: each pool whose nodes get images other than
    by a plain pull (streaming, a preloaded disk), and each registry the nodes may read."""
    rows = []
    for kind, name, inputs in resources:
        if kind == NODE_POOL_TYPE:
            images = _images(mapping(inputs.get("nodeConfig")))
            if images:
                pool = mapping(mapping(inputs.get("nodeConfig")).get("labels")).get(contract.POOL_LABEL)
                rows.append(Setting(f"{pool or inputs.get('name') or name}: images", images))
        elif kind == REPOSITORY_IAM_MEMBER_TYPE:
            where = f"projects/{inputs.get('project')}/locations/{inputs.get('location')}/repositories/"
            repository = str(inputs.get("repository") or "")
            rows.append(Setting("registry grant", f"{inputs.get('role')} for the nodes' service account on "
                                f"{repository if repository.startswith('projects/') else where + repository}"))
    return sorted(rows, key=lambda s: (s.name, str(s.value)))


def _taints(values: Any) -> list[contract.Taint]:
    """GKE `taints` in their order; a malformed taint protects nothing, so it is simply not counted."""
    taints = []
    for item in items(values):
        try:
            taints.append(taint_of(mapping(item)))
        except KeyError:
            continue
    return taints


def _capacity(node_config: Mapping[str, Any]) -> contract.Capacity:
    """What the pool really asks Compute Engine for; the capacity label only claims it."""
    if node_config.get("spot"):
        return "spot"
    if node_config.get("preemptible"):
        return "preemptible"
    return contract.FLEX_START if node_config.get("flexStart") else "on-demand"


def _seconds(duration: Any) -> int | None:
    """`"86400s"`, a registered `maxRunDuration`, as seconds; None when unset or not in seconds."""
    match = re.fullmatch(r"([0-9]+)s", str(duration or ""))
    return int(match[1]) if match else None


def _pool(where: str, name: str, inputs: Mapping[str, Any]) -> RegisteredPool:
    """Limits are read as totals (`totalMin/MaxNodeCount`, which spotkube sets), falling back to the
    per-zone `min/maxNodeCount` of pools built otherwise. GKE has no eviction policy or max price."""
    config = mapping(inputs.get("nodeConfig"))
    labels = {str(k): str(v) for k, v in mapping(config.get("labels")).items()}
    scaling = mapping(inputs.get("autoscaling"))
    accelerators = [mapping(a) for a in items(config.get("guestAccelerators"))]
    accelerator = labels.get(contract.ACCELERATOR_LABEL)
    labelled_gpu = accelerator not in (None, "", contract.NO_ACCELERATOR) or GKE_ACCELERATOR_LABEL in labels
    taints = _taints(config.get("taints"))
    return RegisteredPool(
        where=where,
        cloud_name=name,
        labels=labels,
        machine=str(config.get("machineType") or ""),
        gpu_count=sum(int(a.get("count") or 0) for a in accelerators),
        has_gpu=bool(accelerators) or labelled_gpu,
        capacity=_capacity(config),
        system=labels.get(contract.ROLE_LABEL) == "system",
        min=node_count(first(scaling, "totalMinNodeCount", "minNodeCount")),
        max=node_count(first(scaling, "totalMaxNodeCount", "maxNodeCount")),
        taints=tuple(str(t) for t in taints),
        parsed_taints=frozenset(taints),
        zones=tuple(str(z) for z in items(inputs.get("nodeLocations"))),
        eviction_policy=None,
        max_price=None,
        gpu_sharing=_registered_sharing(accelerators),
        max_surge=_max_surge(mapping(inputs.get("upgradeSettings"))),
        queued=bool(mapping(inputs.get("queuedProvisioning")).get("enabled")),
        max_run_seconds=_seconds(config.get("maxRunDuration")),
        images=_images(config),
    )


def _max_surge(settings: Mapping[str, Any]) -> str | None:
    """Nodes an upgrade adds, as registered: blue-green makes a whole new pool ("100%"), a surge upgrade
    its `maxSurge`; None when the pool leaves GKE's default."""
    if settings.get("strategy") == "BLUE_GREEN":
        return "100%"
    surge = settings.get("maxSurge")
    return None if surge is None else f"{surge:g}" if isinstance(surge, int | float) else str(surge)


def _registered_sharing(accelerators: Sequence[Mapping[str, Any]]) -> str | None:
    """`MIG 1g.10gb (gpu_partition_size)` or `TIME_SHARING, 4 clients per GPU`, from the inputs."""
    for accelerator in accelerators:
        partition = accelerator.get("gpuPartitionSize")
        sharing = mapping(accelerator.get("gpuSharingConfig"))
        if partition:
            return f"MIG {partition} (gpu_partition_size)"
        if sharing:
            clients = sharing.get("maxSharedClientsPerGpu")
            # The wire has only floats: 4 arrives as 4.0.
            shown_clients = int(clients) if isinstance(clients, float) and clients.is_integer() else clients
            return f"{sharing.get('gpuSharingStrategy')}, {shown_clients} clients per GPU (gpu_sharing_config)"
    return None


@read_once_per_plan
def read_pools(type_token: str, name: str, inputs: Mapping[str, Any]) -> list[RegisteredPool]:
    """The pools a registration declares: a NodePool, or pools inlined in a Cluster. spotkube removes
    the cluster's default pool at creation and inlines none."""
    if type_token == NODE_POOL_TYPE:
        return [_pool(f"NodePool {shown(name)}", str(inputs.get("name") or ""), inputs)]
    if type_token == CLUSTER_TYPE:
        pools = [mapping(p) for p in items(inputs.get("nodePools"))]
        return [_pool(f"Cluster {name!r} nodePools[{i}]", str(p.get("name") or ""), p) for i, p in enumerate(pools)]
    return []


# --- The cluster ----------------------------------------------------------------------------------

#: pulumi-gcp replaces a cluster or a pool when its identity, location or network changes, and a pool
#: when its node config does, except the fields GKE updates in place
#: (docs/platform-facts.md#gke-node-pool-updates).
CREATE_ONLY: Mapping[str, tuple[str, ...]] = {
    CLUSTER_TYPE: ("name", "location", "project", "network", "subnetwork"),
    NODE_POOL_TYPE: ("name", "cluster", "location", "project", "nodeConfig", "queuedProvisioning"),
}
UPDATABLE_IN_PLACE: Mapping[str, tuple[str, ...]] = {NODE_POOL_TYPE: tuple(f"nodeConfig.{field}" for field in (
    "labels", "taints", "resourceLabels", "machineType", "diskType", "diskSizeGb"))}
#: What the cluster resource ignores: `nodeConfig` only describes the default pool, removed once the
#: cluster exists, and would replace the whole cluster on change; like the initial count.
CLUSTER_IGNORED = ("initialNodeCount", "nodeConfig")


def api_server_restricted(spec: PlatformSpec) -> bool:
    """Listed ranges always restrict the API server; in prod (or with private nodes) it is restricted
    even with none listed, reachable then only from inside the VPC."""
    return spec.switch(spec.cluster.private) or bool(spec.cluster.authorized_ip_ranges)


def authorized_networks(cidrs: Sequence[str]) -> list[dict[str, str]]:
    """The API server's authorized networks, one block per range."""
    return [{"cidr_block": cidr, "display_name": f"spotkube-{i}"} for i, cidr in enumerate(cidrs)]


#: What GKE sends to Cloud Logging (logging_config.enable_components) for a pipeline step's logs to
#: outlive its node (docs/logs.md).
LOGGED_COMPONENTS = ("SYSTEM_COMPONENTS", "WORKLOADS")


def cluster_inputs(
    plan: PlatformPlan, *, project: Any, network: Any, subnetwork: Any, workload_pool: Any,
    node_service_account: Any, cidr_blocks: Any,
) -> dict[str, Any]:
    """The regional, VPC-native cluster's inputs; its default pool is removed once created.

    The default pool still exists for a moment at creation, so it gets the dedicated service account
    too. `cidr_blocks` are the authorized networks (`authorized_networks`, once the ranges, which may
    be outputs, resolve).
    """
    spec = plan.spec
    settings = spec.cluster
    private = spec.switch(settings.private)
    cilium = settings.network_policy == "cilium"
    return {
        "project": project,
        "location": spec.region,
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "node_config": {
            "service_account": node_service_account,
            "oauth_scopes": NODE_OAUTH_SCOPES,
            "metadata": NODE_METADATA,
            "workload_metadata_config": WORKLOAD_METADATA,
            "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        },
        "release_channel": {"channel": settings.channel},
        "maintenance_policy": maintenance_policy(settings.maintenance),
        "min_master_version": settings.kubernetes_version,
        "workload_identity_config": {"workload_pool": workload_pool},
        "enable_shielded_nodes": True,
        "networking_mode": "VPC_NATIVE",
        "ip_allocation_policy": {"stack_type": "IPV4"},
        "network": network,
        "subnetwork": subnetwork,
        # Dataplane V2 is GKE's Cilium and enforces network policy itself; Calico needs the addon.
        "datapath_provider": "ADVANCED_DATAPATH" if cilium else "LEGACY_DATAPATH",
        "network_policy": None if cilium else {"enabled": True, "provider": "CALICO"},
        "addons_config": None if cilium else {"network_policy_config": {"disabled": False}},
        "private_cluster_config": {"enable_private_nodes": True, "enable_private_endpoint": False}
        if private else None,
        "master_authorized_networks_config": {
            "cidr_blocks": cidr_blocks,
            "gcp_public_cidrs_access_enabled": False,
        } if api_server_restricted(spec) else None,
        "master_auth": {"client_certificate_config": {"issue_client_certificate": False}},
        # The DNS-based endpoint is authorised by IAM, not by source address, so a hosted CI runner
        # reaches a control plane whose IP endpoint admits only the VPC and the listed ranges.
        "control_plane_endpoints_config": {"dns_endpoint_config": {"allow_external_traffic": True}}
        if settings.dns_endpoint is not False else None,
        # Stated, not left to GKE's default: workloads' logs go to Cloud Logging, so a step's logs
        # outlive the node spot takes away (docs/logs.md).
        "logging_config": {"enable_components": list(LOGGED_COMPONENTS) if settings.logs.enabled is not False
                           else ["SYSTEM_COMPONENTS"]},
        "monitoring_config": {"enable_components": ["SYSTEM_COMPONENTS"]},
        # Node auto-provisioning stays off: spotkube declares every pool itself.
        "cluster_autoscaling": {"enabled": False, "autoscaling_profile": settings.autoscaler.profile},
        "deletion_protection": spec.switch(settings.deletion_protection),
    }


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
        _logging(inputs),
    ))


def _logging(inputs: Mapping[str, Any]) -> Setting:
    """The cluster's logging as registered; GKE's default is not trusted, so it must be stated."""
    components = [str(c) for c in items(mapping(inputs.get("loggingConfig")).get("enableComponents"))]
    monitoring = [str(c) for c in items(mapping(inputs.get("monitoringConfig")).get("enableComponents"))]
    if not components:
        return Setting("logging", "not stated (GKE's default applies)",
                       "the cluster does not say its workloads' logs go to Cloud Logging")
    text = f"Cloud Logging: {', '.join(components)}; monitoring: {', '.join(monitoring) or 'not stated'}"
    if "WORKLOADS" not in components:
        return Setting("logging", text, "a step's logs are lost with its node when spot preempts it")
    return Setting("logging", text)


# --- Compute classes and the autoscaler -----------------------------------------------------------

#: The API of GKE's ComputeClass custom resource, which GKE installs on clusters that support it.
COMPUTE_CLASS_API_VERSION = "cloud.google.com/v1"


def compute_class_inputs(class_name: str, priorities: Sequence[Sequence[str]]) -> dict[str, Any]:
    """A ComputeClass custom resource's inputs: its priorities name existing pools only (`nodepools`
    admits no other field), and neither `whenUnsatisfiable: DoNotScaleUp` nor `nodePoolAutoCreation`
    lets GKE go beyond them; `optimizeRulePriority` moves the class's pods back to a spot pool once it
    can grow again."""
    return {
        "api_version": COMPUTE_CLASS_API_VERSION,
        "kind": "ComputeClass",
        "metadata": {"name": class_name},
        "spec": {
            "priorities": [{"nodepools": list(pools)} for pools in priorities],
            "whenUnsatisfiable": "DoNotScaleUp",
            "nodePoolAutoCreation": {"enabled": False},
            "activeMigration": {"optimizeRulePriority": True},
        },
    }


def _class_members(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> dict[str, str]:
    """Pool name -> the compute class it joined: a NodePool joins a class only with both the class
    label and the class taint (docs/platform-facts.md#gke-compute-classes)."""
    members = {}
    for kind, name, inputs in resources:
        for pool in read_pools(kind, name, inputs):
            label = pool.labels.get(contract.COMPUTE_CLASS_LABEL)
            if label and contract.Taint(contract.COMPUTE_CLASS_LABEL, label) in pool.parsed_taints:
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
        caveat="a pool of its ComputeClass is not behind every pool of a cheaper tier (spot, flex-start, "
        "on-demand), or a pool lacks the class label and taint",
        tier_bounds=TIER_BOUNDS,
    )


#: What bounds each tier of a ComputeClass over node pools (docs/platform-facts.md#gke-compute-classes): no
#: timer applies to node-pool priorities, so each tier holds a step until GKE gives up on its pools.
_BACKED_OFF = "no timer: a stock-out is an error that backs the pool off (5 min, up to 30), then the next priority"
TIER_BOUNDS = {
    "spot": _BACKED_OFF,
    "preemptible": _BACKED_OFF,
    contract.FLEX_START: "no timer on node-pool priorities: the next priority once Dynamic Workload Scheduler "
    "can't provision the node",
}


def maintenance_policy(maintenance: MaintenanceSettings) -> dict[str, Any] | None:
    """The Cluster's `maintenance_policy` (the SDK's names): a weekly recurring window and the busy
    periods as exclusions; None when the stack lets GKE upgrade at any time.

    GKE counts the recurrence's days in UTC, so the window is written in UTC, its days shifted when
    the local start is on another day in UTC; and its times as RFC 3339 in UTC (`Z`), the way GKE
    reads them back, so a refresh shows no difference."""
    if maintenance.window is None:
        return None
    window = in_utc(maintenance.window)
    start = datetime.combine(first_day_on_or_after(WINDOW_ANCHOR, window.days[0]),
                             time.fromisoformat(window.start))
    end = start + timedelta(hours=window.hours)
    policy: dict[str, Any] = {"recurring_window": {
        "start_time": start.strftime(RFC3339_UTC),
        "end_time": end.strftime(RFC3339_UTC),
        "recurrence": "FREQ=WEEKLY;BYDAY=" + ",".join(RRULE_DAYS[d] for d in window.days),
    }}
    if maintenance.busy_periods:
        policy["maintenance_exclusions"] = [{
            "exclusion_name": period.name,
            "start_time": f"{period.start}T00:00:00Z",
            "end_time": f"{date.fromisoformat(period.end) + timedelta(days=1)}T00:00:00Z",
            "exclusion_options": {"scope": EXCLUSION_SCOPE},
        } for period in maintenance.busy_periods]
    return policy


def chosen_upgrade(upgrade: PoolUpgrade, *, gpu: bool) -> GkePoolUpgrade:
    """What the stack set over the pool's defaults (`GPU_UPGRADE` on a GPU pool's surge upgrade)."""
    given = upgrade.model_dump(exclude_unset=True)
    gpu_surge = gpu and given.get("strategy") != "blue-green"
    return GkePoolUpgrade.model_validate({**(GPU_UPGRADE.model_dump(exclude_none=True) if gpu_surge else {}),
                                          **given})


def surge_and_unavailable(upgrade: GkePoolUpgrade) -> tuple[int, int]:
    """A surge upgrade's nodes added and taken away at once, GKE's defaults (1 and 0) where unset."""
    return (1 if upgrade.max_surge is None else upgrade.max_surge,
            0 if upgrade.max_unavailable is None else upgrade.max_unavailable)


def upgrade_settings(pool: PoolPlan) -> dict[str, Any] | None:
    """A NodePool's `upgrade_settings` (the SDK's names), or None to leave GKE's own: a GPU pool gets
    `GPU_UPGRADE` under what the stack set."""
    if pool.upgrade is None:
        return None
    if pool.role != "gpu" and not pool.upgrade.model_fields_set:
        return None
    chosen = chosen_upgrade(pool.upgrade, gpu=pool.role == "gpu")
    if chosen.strategy == "blue-green":
        return {"strategy": "BLUE_GREEN", "blue_green_settings": {
            "node_pool_soak_duration": f"{(chosen.soak_minutes or 0) * 60}s",
            "standard_rollout_policy": {"batch_node_count": 1, "batch_soak_duration": "0s"}}}
    surge, unavailable = surge_and_unavailable(chosen)
    return {"strategy": "SURGE", "max_surge": surge, "max_unavailable": unavailable}


def _registered_window(inputs: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    policy = mapping(inputs.get("maintenancePolicy"))
    window = mapping(policy.get("recurringWindow"))
    busy = tuple(str(mapping(e).get("exclusionName")) for e in items(policy.get("maintenanceExclusions")))
    match = re.search(r"BYDAY=([A-Z,]+)", str(window.get("recurrence") or ""))
    start = _instant(window.get("startTime"))
    end = _instant(window.get("endTime"))
    if not match or start is None or end is None:
        return None, busy
    codes = {code: day for day, code in RRULE_DAYS.items()}
    days = [codes.get(code, code) for code in match[1].split(",")]
    offset = start.strftime("%z")
    offset = "+00:00" if offset in ("", "+0000") else f"{offset[:3]}:{offset[3:]}"
    hours = round((end - start).total_seconds() / 3600)
    return window_text(days, start.strftime("%H:%M"), hours, offset), busy


def _instant(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


def _replacement(inputs: Mapping[str, Any]) -> str:
    if mapping(inputs.get("management")).get("autoUpgrade") is False:
        return "never upgraded by GKE (autoUpgrade off)"
    if mapping(inputs.get("nodeConfig")).get("flexStart"):
        return "short-lived upgrades: GKE replaces a flex-start node when its run ends, never in place"
    settings = mapping(inputs.get("upgradeSettings"))
    if settings.get("strategy") == "BLUE_GREEN":
        soak = str(mapping(settings.get("blueGreenSettings")).get("nodePoolSoakDuration") or "0s")
        return f"blue-green: the new nodes take the pods first, the old ones are kept {soak} for a rollback"
    surge, unavailable = settings.get("maxSurge", 1), settings.get("maxUnavailable", 0)
    drain = f"drain waits up to {GKE_DRAIN_LIMIT_MINUTES} min (GKE's limit for disruption budgets)"
    if not isinstance(surge, int | float) or not isinstance(unavailable, int | float):
        return drain
    return f"{drain}; {surge:g} surge node(s), {unavailable:g} unavailable"


def read_upgrades(resources: Sequence[tuple[str, str, Mapping[str, Any]]]) -> list[UpgradeExposure]:
    """Each worker NodePool's exposure: the cluster's recurring window and exclusions, and the pool's
    upgrade settings. A cluster without a window: any time."""
    clusters = [inputs for kind, _, inputs in resources if kind == CLUSTER_TYPE]
    window, busy = _registered_window(clusters[0]) if clusters else (None, ())
    exposures = []
    for kind, name, inputs in resources:
        if kind != NODE_POOL_TYPE:
            continue
        for pool in read_pools(kind, name, inputs):
            if pool.labels.get(contract.ROLE_LABEL) not in ("gpu", "batch"):
                continue
            exposures.append(UpgradeExposure(pool.name, pool.has_gpu,
                                             window, _replacement(inputs), busy,
                                             what="node upgrades and image updates"))
    return sorted(exposures, key=lambda e: e.pool)
