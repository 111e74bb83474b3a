"""`GkeGpuCluster`: a GKE Standard cluster with an on-demand system pool and spot GPU pools.

A thin shell, like `spotkube.clouds.aks.component`: every decision (taints, labels, limits, zones, GPUs) comes from
`spotkube.platform.plan`; this module only spells it in pulumi-gcp's terms and applies the GKE facts that
are about resources rather than decisions (default pool removed, a dedicated node service account,
explicit driver versions, per-zone initial counts, create-only node pool fields).

Like every module that defines a component, it does without `from __future__ import annotations`:
Pulumi's schema analyzer needs the `args` annotation as a real TypedDict, not a string.

The GKE facts it relies on, with sources: docs/platform-facts.md#gke.
"""

import hashlib
import math
import re
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import yaml

from spotkube.platform.kubeconfigs import GKE_ADC_FLAG, GKE_AUTH_PLUGIN
from spotkube.platform.plan import PlatformPlan, PoolPlan, compute_class_priorities, versioned_name
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.args import GpuClusterArgs, PoolContractOutput
from spotkube.shell.common import (
    ClusterPlan,
    Wiring,
    built_from,
    child,
    joined,
    kubernetes_provider,
    log_plan_warnings,
    plan_from_args,
    plan_from_spec,
    pool_contract_outputs,
    protected,
    refuse_bad_name,
    security_concerns,
    then,
)

#: The one role GKE nodes need for their system tasks (logging, monitoring), instead of the Editor
#: role the default compute service account usually holds. Pulling private images from Artifact
#: Registry needs roles/artifactregistry.reader on top; spotkube grants nothing it does not need.
NODE_SERVICE_ACCOUNT_ROLE = "roles/container.defaultNodeServiceAccount"
#: With a dedicated service account, Google recommends the broad scope and lets IAM decide.
NODE_OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
#: GKE sets this key itself; a pool whose metadata lacks it shows a diff and is recreated
#: (terraform-provider-google, node_config.metadata).
NODE_METADATA = {"disable-legacy-endpoints": "true"}
#: Pods get the GKE metadata server, which workload identity needs and which hides node credentials.
WORKLOAD_METADATA = {"mode": "GKE_METADATA"}
#: The network GKE and Compute Engine use when none is named; its subnetwork in each region has the
#: same name.
DEFAULT_NETWORK = "default"
#: GKE puts a regional cluster's nodes in three of the region's zones unless told otherwise.
REGIONAL_DEFAULT_ZONE_COUNT = 3
#: A versioned control-plane pool name is the pool's name, a dash and this many hex digits; GKE
#: allows 40 characters, so such a pool's own name has at most 33.
VERSION_DIGITS = 6
#: Node config fields left out of a pool's version: GKE updates labels and taints in place, and the
#: service account (an Output) is versioned by its stable id instead. Every other field replaces.
UNVERSIONED_NODE_FIELDS = ("labels", "taints", "service_account")
#: The API of GKE's ComputeClass custom resource, which GKE installs on clusters that support it.
COMPUTE_CLASS_API_VERSION = "cloud.google.com/v1"
#: The install hint gcloud writes into the kubeconfig (`GKE_GCLOUD_AUTH_INSTALL_HINT`).
AUTH_PLUGIN_HINT = (
    "Install gke-gcloud-auth-plugin for use with kubectl by following "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
)


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


def initial_node_count(pool: PoolPlan) -> int:
    """Nodes per zone at creation.

    GKE counts `initial_node_count` per zone while the spec's min is a pool total, so divide and
    round up: the pool starts at min or a little above. The autoscaler owns the count afterwards,
    which is why the component ignores later changes to it.
    """
    return math.ceil(pool.min / (len(pool.zones) or REGIONAL_DEFAULT_ZONE_COUNT))


def node_config(pool: PoolPlan, service_account: pulumi.Input[str]) -> dict:
    """A pool's `node_config`: machine, GPUs, capacity, and the plan's labels and taints.

    `spot` and `preemptible` are never both set: one is chosen by the pool's single capacity. The
    driver version is always explicit because GKE fills in DEFAULT since 1.30 and an unset field
    then shows a diff. Secure Boot stays on except where the driver is installed by hand
    (INSTALLATION_DISABLED): a self-built kernel module is unsigned, and Secure Boot refuses it.
    """
    config: dict = {
        "machine_type": pool.machine,
        "labels": pool.labels,
        "taints": [t.as_gke() for t in pool.taints] or None,
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
        config["guest_accelerators"] = [{
            "type": pool.gpu_type,
            "count": pool.gpu_count,
            "gpu_driver_installation_config": {"gpu_driver_version": pool.gpu_driver},
        }]
    if pool.capacity == "spot":
        config["spot"] = True
    elif pool.capacity == "preemptible":
        config["preemptible"] = True
    return config


def cloud_pool_name(pool: PoolPlan, service_account_id: str) -> str:
    """The NodePool name. A pool that hosts the control plane is versioned by every node setting GKE
    can't change in place (the service account by its stable id), so that replacing it creates the
    new pool before the old one is deleted; spot and GPU pools keep their name and go first."""
    if not pool.hosts_control_plane:
        return pool.name
    config = {k: v for k, v in node_config(pool, "").items() if k not in UNVERSIONED_NODE_FIELDS}
    return versioned_name(pool.name, {**config, "service_account_id": service_account_id},
                          separator="-", digits=VERSION_DIGITS)


def gke_kubeconfig(context: str, endpoint: str, ca_certificate: str | None, dns_endpoint: bool) -> str:
    """The kubeconfig `gcloud container clusters get-credentials` writes for this cluster, so the
    provider signs in exactly as kubectl would (gcloud's `api_lib/container/kubeconfig.py`).

    - DNS endpoint (`--dns-endpoint`): `server: https://<endpoint>` and no CA data, because the
      `.gke.goog` name serves a publicly trusted certificate; the plugin runs without arguments,
      taking its token from gcloud, since gcloud refuses to pair a DNS endpoint with
      `--use_application_default_credentials`. No person is needed: CI's google-github-actions/auth
      points gcloud at its credential file (`CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE`).
    - IP endpoint: the cluster's CA data, and the plugin with
      `--use_application_default_credentials`, as gcloud writes it when the
      `container/use_application_default_credentials` property is set: it then needs no gcloud.

    The plugin itself reads only its flags (kubernetes/cloud-provider-gcp
    `cmd/gke-gcloud-auth-plugin/cred.go`); the component exports the kubeconfig as a secret.
    """
    cluster: dict[str, str] = {"server": f"https://{endpoint}"}
    exec_: dict[str, Any] = {
        "command": GKE_AUTH_PLUGIN,
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "installHint": AUTH_PLUGIN_HINT,
        "provideClusterInfo": True,
    }
    if not dns_endpoint:
        if ca_certificate:
            cluster["certificate-authority-data"] = ca_certificate
        exec_["args"] = [GKE_ADC_FLAG]
    return yaml.safe_dump({
        "apiVersion": "v1",
        "clusters": [{"name": context, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": context, "user": {"exec": exec_}}],
    }, sort_keys=False)


class GkeGpuCluster(pulumi.ComponentResource):
    """A GKE Standard cluster for ML: an on-demand system pool, an untainted platform pool, and GPU
    pools on spot, preemptible or on-demand capacity that scale 0..N.

    Spot first, provably: every GPU type gets a ComputeClass (`spotkube-<GPU type>`, registered
    through the cluster's Kubernetes provider) whose priorities name the type's spot and preemptible
    pools first and its on-demand pools (capacity `on-demand`, min 0) after them, each group a
    priority of its own, with `whenUnsatisfiable: DoNotScaleUp`, no node pool auto-creation, and
    active migration back to spot when it returns. Each GPU pool carries the class label and taint,
    GKE's documented way to join a manually created pool to a class. A pod placed with the
    contract's `spot_gpu(type, fallback_to_on_demand=True)` selects the class with a nodeSelector, so
    GKE grows an on-demand pool only when the spot pools can't be grown; a pod that selects no class
    and does not tolerate the class taint can't reach the type's pools at all.

    Why a class per GPU type and a nodeSelector, not a namespace default: Kubeflow Pipelines runs
    every pipeline pod (drivers, CPU steps) in the `kubeflow` namespace beside its own control plane,
    so a namespace default would send all of them to GPU classes, and the control plane would leave
    the platform pool. The class label is on the AKS GPU pools too, where it is inert, so a pipeline
    compiled once still lands on both clouds. Custom compute classes need GKE 1.30.3-gke.1451000 or
    later (docs/platform-facts.md#gke-compute-classes).
    """

    kubeconfig: pulumi.Output[str]
    """Kubeconfig (a secret) that authenticates with gke-gcloud-auth-plugin and gcloud credentials."""
    cluster_name: pulumi.Output[str]
    """The GKE cluster's name."""
    endpoint: pulumi.Output[str]
    """The API server's address."""
    workload_pool: pulumi.Output[str]
    """Workload identity pool (`<project>.svc.id.goog`) for binding Kubernetes to Google service accounts."""
    node_service_account_email: pulumi.Output[str]
    """The dedicated, least-privilege service account every node runs as."""
    pool_contracts: pulumi.Output[list[PoolContractOutput]]
    """Labels and taints of every pool, for targeting workloads."""

    def __init__(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        self._build(name, plan_from_args("gke", args, GpuClusterArgs, f"GkeGpuCluster {name!r} args"), opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "GkeGpuCluster":
        """The cluster of a typed spec, as the stack program reads it from the stack file with
        `parse_spec`: no dict round trip, and a spec built by hand still meets every rule."""
        return built_from(cls, name, plan_from_spec("gke", spec, f"GkeGpuCluster {name!r}"), opts)

    def _build(self, name: str, built: ClusterPlan, opts: pulumi.ResourceOptions | None) -> None:
        label = f"GkeGpuCluster {name!r}"
        refuse_bad_name(label, name, built.plan)
        super().__init__("spotkube:index:GkeGpuCluster", name, {}, opts)
        log_plan_warnings(self, label, built.plan)
        plan, wiring = built.plan, built.wiring
        spec = plan.spec
        # The project, network and subnetwork come from the wiring: the consumer's values, which may
        # be other resources' outputs (the spec holds placeholders for those).
        project = wiring.project
        assert project is not None, "the GKE rules require cluster.project"
        account_id = node_service_account_id(name, spec)
        plan = plan.with_cloud_names({pool.name: cloud_pool_name(pool, account_id) for pool in plan.pools})
        self.plan = plan

        account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=account_id,
            display_name=f"GKE nodes of spotkube {name!r} ({spec.environment}, {spec.region})",
            project=project,
            opts=child(self),
        )
        node_role = gcp.projects.IAMMember(
            f"{name}-nodes-role",
            project=project,
            role=NODE_SERVICE_ACCOUNT_ROLE,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child(self),
        )

        workload_pool = joined(project, ".svc.id.goog")
        cluster = self._cluster(name, plan, wiring, workload_pool, account.email, node_role)
        egress = self._egress(name, plan, wiring)
        node_pools: list[pulumi.Resource] = []
        for pool in plan.pools:
            node_pools.append(gcp.container.NodePool(
                f"{name}-{pool.name}",
                name=pool.cloud_name,
                project=project,
                location=spec.region,
                cluster=cluster.name,
                node_locations=list(pool.zones) or None,
                initial_node_count=initial_node_count(pool),
                autoscaling={
                    "total_min_node_count": pool.min,
                    "total_max_node_count": pool.max,
                    # ANY lowers preemption risk for spot; BALANCED spreads on-demand nodes.
                    "location_policy": "ANY" if pool.interruptible else "BALANCED",
                },
                management={"auto_repair": True, "auto_upgrade": True},
                node_config=node_config(pool, account.email),
                opts=child(
                    self,
                    ignore_changes=["initialNodeCount"],
                    # A spot or GPU pool keeps its name, so its replacement waits for it to go; a
                    # control-plane pool's name is versioned, so its replacement comes up first.
                    delete_before_replace=not pool.hosts_control_plane,
                    depends_on=[node_role],
                ),
            ))

        context = pulumi.Output.concat("gke_", project, "_", spec.region, "_", cluster.name)
        dns = spec.cluster.dns_endpoint is not False
        if dns:
            endpoint = cluster.control_plane_endpoints_config.apply(_dns_endpoint)
            ca_certificate: pulumi.Input[str | None] = None
        else:
            endpoint, ca_certificate = cluster.endpoint, cluster.master_auth.cluster_ca_certificate
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(context, endpoint, ca_certificate).apply(lambda parts: gke_kubeconfig(*parts, dns))
        )
        # Kubeflow's images come from public registries: nothing is applied before nodes can pull them.
        self.provider = kubernetes_provider(self, label, name, self.kubeconfig, depends_on=egress)
        self._compute_classes(name, plan, node_pools)

        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.workload_pool = pulumi.Output.from_input(workload_pool)
        self.node_service_account_email = account.email
        self.pool_contracts = pulumi.Output.from_input(pool_contract_outputs(plan))
        self.register_outputs({
            "kubeconfig": self.kubeconfig,
            "clusterName": self.cluster_name,
            "endpoint": self.endpoint,
            "workloadPool": self.workload_pool,
            "nodeServiceAccountEmail": self.node_service_account_email,
            "poolContracts": self.pool_contracts,
        })

    def _compute_classes(self, name: str, plan: PlatformPlan, node_pools: list[pulumi.Resource]) -> None:
        """One ComputeClass per GPU type, its priorities decided by `compute_class_priorities`.

        Each priority names existing pools only (`nodepools` admits no other field), and neither
        `whenUnsatisfiable: DoNotScaleUp` nor `nodePoolAutoCreation` lets GKE go beyond them: a pod
        of the class waits rather than land on capacity nobody declared. `optimizeRulePriority`
        moves the class's pods back to a spot pool once it can grow again; a moved step restarts, and
        its retries cover it like an eviction.
        """
        for class_name, priorities in compute_class_priorities(plan).items():
            k8s.apiextensions.CustomResource(
                f"{name}-{class_name}",
                api_version=COMPUTE_CLASS_API_VERSION,
                kind="ComputeClass",
                metadata={"name": class_name},
                spec={
                    "priorities": [{"nodepools": pools} for pools in priorities],
                    "whenUnsatisfiable": "DoNotScaleUp",
                    "nodePoolAutoCreation": {"enabled": False},
                    "activeMigration": {"optimizeRulePriority": True},
                },
                opts=child(self, provider=self.provider, depends_on=node_pools),
            )

    def _egress(self, name: str, plan: PlatformPlan, wiring: Wiring) -> list[pulumi.Resource]:
        """A Cloud Router and Cloud NAT for private nodes, which otherwise can't reach the public
        registries KFP pulls from (ghcr.io, quay.io, docker.io). Skipped when the nodes are public or
        the stack says its network already provides egress (`cluster.egress: own`)."""
        spec = plan.spec
        settings = spec.cluster
        if not spec.switch(settings.private) or settings.egress == "own":
            return []
        # Whether a network or subnetwork was given comes from the spec; their values from the wiring.
        router = gcp.compute.Router(
            f"{name}-router", project=wiring.project, region=spec.region,
            network=wiring.network if settings.network else DEFAULT_NETWORK, opts=child(self),
        )
        subnetwork: pulumi.Input[str] | None = (
            wiring.subnetwork if settings.subnetwork else DEFAULT_NETWORK if settings.network is None else None
        )
        nat = gcp.compute.RouterNat(
            f"{name}-nat", project=wiring.project, region=spec.region, router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            # Only the cluster's subnetwork, so a NAT that already serves the network's other
            # subnetworks is left alone; the whole network when the subnetwork is not known.
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS" if subnetwork is not None
            else "ALL_SUBNETWORKS_ALL_IP_RANGES",
            subnetworks=[{"name": subnetwork, "source_ip_ranges_to_nats": ["ALL_IP_RANGES"]}]
            if subnetwork is not None else None,
            log_config={"enable": True, "filter": "ERRORS_ONLY"},
            opts=child(self),
        )
        return [nat]

    def _cluster(
        self, name: str, plan: PlatformPlan, wiring: Wiring, workload_pool: pulumi.Input[str],
        node_service_account: pulumi.Output[str], node_role: gcp.projects.IAMMember,
    ) -> gcp.container.Cluster:
        """The regional, VPC-native cluster; its default pool is removed once created.

        The default pool still exists for a moment at creation, so it gets the dedicated service
        account too. `nodeConfig` only describes that removed pool and would replace the whole
        cluster on change, hence ignored, like `initialNodeCount`.
        """
        spec = plan.spec
        settings = spec.cluster
        private = spec.switch(settings.private)
        # Listed ranges always restrict the API server; in prod (or with private nodes) it is
        # restricted even with none listed, reachable then only from inside the VPC.
        authorized = private or bool(settings.authorized_ip_ranges)
        ranges = wiring.api_server_ranges(spec, authorized)
        protect = spec.switch(settings.deletion_protection)
        cilium = settings.network_policy == "cilium"
        return gcp.container.Cluster(
            f"{name}-gke",
            project=wiring.project,
            location=spec.region,
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config={
                "service_account": node_service_account,
                "oauth_scopes": NODE_OAUTH_SCOPES,
                "metadata": NODE_METADATA,
                "workload_metadata_config": WORKLOAD_METADATA,
                "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
            },
            release_channel={"channel": settings.channel},
            min_master_version=settings.kubernetes_version,
            workload_identity_config={"workload_pool": workload_pool},
            enable_shielded_nodes=True,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy={"stack_type": "IPV4"},
            network=wiring.network,
            subnetwork=wiring.subnetwork,
            # Dataplane V2 is GKE's Cilium and enforces network policy itself; Calico needs the addon.
            datapath_provider="ADVANCED_DATAPATH" if cilium else "LEGACY_DATAPATH",
            network_policy=None if cilium else {"enabled": True, "provider": "CALICO"},
            addons_config=None if cilium else {"network_policy_config": {"disabled": False}},
            private_cluster_config={"enable_private_nodes": True, "enable_private_endpoint": False}
            if private else None,
            master_authorized_networks_config={
                "cidr_blocks": then(ranges, lambda cidrs: [
                    {"cidr_block": cidr, "display_name": f"spotkube-{i}"} for i, cidr in enumerate(cidrs)
                ]),
                "gcp_public_cidrs_access_enabled": False,
            } if authorized else None,
            master_auth={"client_certificate_config": {"issue_client_certificate": False}},
            # The DNS-based endpoint is authorised by IAM, not by source address, so a hosted CI runner
            # reaches a control plane whose IP endpoint admits only the VPC and the listed ranges.
            control_plane_endpoints_config={"dns_endpoint_config": {"allow_external_traffic": True}}
            if settings.dns_endpoint is not False else None,
            # Node auto-provisioning stays off: spotkube declares every pool itself.
            cluster_autoscaling={"enabled": False, "autoscaling_profile": settings.autoscaler.profile},
            deletion_protection=protect,
            opts=child(
                self,
                protect=protected(protect),
                transforms=[security_concerns(self, f"GkeGpuCluster {name!r}", "gke")],
                ignore_changes=["initialNodeCount", "nodeConfig"],
                depends_on=[node_role],
            ),
        )


def _dns_endpoint(config: Any) -> str:
    """The control plane's DNS endpoint from the cluster's outputs (an SDK object or a dict)."""
    dns = getattr(config, "dns_endpoint_config", None) if config is not None else None
    if isinstance(config, dict):
        dns = config.get("dns_endpoint_config") or config.get("dnsEndpointConfig")
    endpoint = dns.get("endpoint") if isinstance(dns, dict) else getattr(dns, "endpoint", None)
    return str(endpoint or "")
