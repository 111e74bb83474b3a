"""`GkeGpuCluster`: a GKE Standard cluster with an on-demand system pool and spot GPU pools.

A thin shell, like `spotkube.clouds.aks.component`: every decision comes from `spotkube.platform.plan`;
this module spells it in pulumi-gcp's terms. Like every module that defines a component, it does without
`from __future__ import annotations`: Pulumi's schema analyzer needs the `args` annotation as a real
TypedDict, not a string. The GKE facts, with sources: docs/platform-facts.md#gke.
"""

from typing import Any, cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from spotkube.clouds.gke import checkpoints, resources
from spotkube.clouds.gke.args import GkeGpuClusterArgs
from spotkube.clouds.gke.kubeconfig import gke_kubeconfig
from spotkube.clouds.gke.node_pool import GkeGpuNodePool, NodePoolTarget
from spotkube.clouds.gke.spec import GkeClusterSettings
from spotkube.platform.addons import kfp_reference
from spotkube.platform.contract import COMPUTE_CLASS_PREFIX
from spotkube.platform.plan import PlatformPlan, compute_class_priorities
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.common import (
    ClusterPlan,
    Wiring,
    all_created,
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
    required,
    security_concerns,
    settled,
    then,
    unanswered,
)
from spotkube.shell.outputs import PoolContractOutput
from spotkube.shell.pools import PoolBuild

#: The network GKE and Compute Engine use when none is named; its subnetwork in each region has the
#: same name.
DEFAULT_NETWORK = "default"


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

    What it registers: the nodes' own service account and its one role, and its read access
    (roles/artifactregistry.reader) to each repository in `cluster.registries`; the regional cluster, its
    default pool removed; one NodePool per system, platform, GPU and spot pool; for private nodes, a
    Cloud Router and Cloud NAT (unless `cluster.egress` is `own`); the Kubernetes provider; and the
    ComputeClass of each GPU type.

    Its args are `GkeGpuClusterArgs` (docs/settings-per-cloud.md): `environment`, `region`, the
    pools (`system_pool`, `platform_pool`, `gpu_pools`, `spot_pools`) and `cluster`, whose
    `project` is required. They are checked before anything is registered.

    Outputs. Each resolves only once every resource above exists, pools included, and carries them
    as dependencies, so whatever is built on it waits for the pools; in a preview of a new cluster
    they are unknown.

    - `kubeconfig`: a secret; it signs in with gke-gcloud-auth-plugin and gcloud's credentials.
    - `cluster_name`: the GKE cluster's name.
    - `endpoint`: the API server's address.
    - `workload_pool`: the workload identity pool, `<project>.svc.id.goog`.
    - `node_service_account_email`: the least-privilege service account every node runs as.
    - `pool_contracts`: every pool's name, capacity, labels and taints, to target workloads.
    - `provider` (Python only): the `pulumi_kubernetes.Provider` for what you deploy on the
      cluster; it is created after every node pool and the network's egress.
    - `training_env` (Python only): what every training worker's environment needs on this cluster,
      nothing on GKE (the checkpoint bucket's grant names the workers' Kubernetes service account).
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
        self, name: str, args: GkeGpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Check the args and register the cluster; bad args end the program with one line naming the
        key, and nothing is registered.

        :param name: the component's name: lower-case letters, digits and hyphens, at most 28
            characters (GKE's cluster names are at most 40, and `-gke` and a suffix are added).
        :param args: the cluster's typed args, `GkeGpuClusterArgs`.
        :param opts: Pulumi's resource options (`protect=True` protects the cluster in any environment).
        """
        self._build(name, plan_from_args("gke", args, GkeGpuClusterArgs, f"GkeGpuCluster {name!r} args"), opts)

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
        account_id = resources.node_service_account_id(name, spec)
        plan = plan.with_cloud_names({pool.name: resources.cloud_pool_name(pool, account_id) for pool in plan.pools})
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
            role=resources.NODE_SERVICE_ACCOUNT_ROLE,
            member=account.email.apply(
                lambda email: f"serviceAccount:{email}" if email
                else unanswered(self, label, "e-mail", "the nodes' service account")),
            opts=child(self),
        )

        registry_grants = self._registry_grants(name, plan, node_role.member)
        workload_pool = joined(project, ".svc.id.goog")
        cluster = self._cluster(name, plan, wiring, workload_pool, account.email, node_role)
        egress = self._egress(name, plan, wiring)
        node_pools: list[pulumi.Resource] = []
        for pool in plan.pools:
            # The pool component's NodePool was this component's own child before: its alias keeps it.
            node_pools.append(GkeGpuNodePool.on_cluster(
                f"{name}-{pool.name}", PoolBuild(plan, pool, {}, external=False),
                NodePoolTarget(project, spec.region, cluster.name, account.email, (node_role,), moved_from=self),
                opts=child(self),
            ).node_pool)

        # What only GKE can tell (the cluster's name, endpoint and CA) is required: a test's plain mocks
        # may leave it out, and the kubeconfig then stays unknown rather than point nowhere.
        cluster_name = required(self, label, cluster.name, "name", "the GKE cluster's outputs")
        context = pulumi.Output.concat("gke_", project, "_", spec.region, "_", cluster_name)
        dns = spec.cluster.dns_endpoint is not False
        if dns:
            endpoint = required(self, label, cluster.control_plane_endpoints_config.apply(_dns_endpoint),
                                "DNS endpoint", "the GKE cluster's controlPlaneEndpointsConfig")
            ca_certificate: pulumi.Input[str | None] = None
        else:
            endpoint = required(self, label, cluster.endpoint, "endpoint", "the GKE cluster's outputs")
            ca_certificate = required(
                self, label, cluster.master_auth.apply(lambda auth: getattr(auth, "cluster_ca_certificate", None)),
                "CA certificate", "the GKE cluster's masterAuth")
        kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(context, endpoint, ca_certificate).apply(lambda parts: gke_kubeconfig(*parts, dns))
        )
        # Kubeflow's images come from public registries: nothing is applied before nodes can pull them,
        # and nothing deployed through the provider (a consumer's DaemonSet) races the node pools.
        # What is deployed through the provider may pull from the stack's registries: it waits for the grants.
        self.provider = kubernetes_provider(self, label, name, kubeconfig,
                                            depends_on=[*egress, *node_pools, *registry_grants])
        classes = self._compute_classes(name, plan, node_pools)
        store = self._checkpoint_store(name, plan, project)

        # Every resource registered here: the outputs resolve only once all of them exist.
        children = [account, node_role, *registry_grants, cluster, *egress, *node_pools, self.provider, *classes,
                    *store]
        created = all_created(children)
        self.kubeconfig = settled(kubeconfig, created)
        self.cluster_name = settled(cluster.name, created)
        self.endpoint = settled(cluster.endpoint, created)
        self.workload_pool = settled(workload_pool, created)
        self.node_service_account_email = settled(account.email, created)
        self.pool_contracts = settled(pool_contract_outputs(plan), created)
        # Workers reach the checkpoint bucket through Workload Identity as their Kubernetes service account:
        # nothing to tell them.
        self.training_env: dict[str, pulumi.Output[str]] = {}
        self.register_outputs({
            "kubeconfig": self.kubeconfig,
            "clusterName": self.cluster_name,
            "endpoint": self.endpoint,
            "workloadPool": self.workload_pool,
            "nodeServiceAccountEmail": self.node_service_account_email,
            "poolContracts": self.pool_contracts,
        })

    def _checkpoint_store(self, name: str, plan: PlatformPlan, project: pulumi.Input[str]) -> list[pulumi.Resource]:
        """With `training.checkpointStore`: the bucket the training jobs save to, and `roles/storage.objectUser`
        on it for the workers' Kubernetes service account through Workload Identity
        (`clouds/gke/checkpoints.py`)."""
        spec = plan.spec
        if spec.training.checkpoint_store is None:
            return []
        bucket = gcp.storage.Bucket(f"{name}-checkpoints", **checkpoints.bucket_inputs(spec, project),
                                    opts=child(self, protect=protected(spec.is_prod)))
        number = gcp.organizations.get_project_output(project_id=project, opts=pulumi.InvokeOutputOptions(
            parent=self)).number
        member = pulumi.Output.all(number, project).apply(
            lambda values: checkpoints.workers_principal(str(values[0]), str(values[1]), kfp_reference.NAMESPACE))
        grant = gcp.storage.BucketIAMMember(f"{name}-checkpoints-writer", bucket=bucket.name,
                                            role=checkpoints.OBJECT_USER_ROLE, member=member, opts=child(self))
        return [bucket, grant]

    def _registry_grants(self, name: str, plan: PlatformPlan, member: pulumi.Output[str]) -> list[pulumi.Resource]:
        """The nodes' read access to each Artifact Registry repository the stack names, so a step's
        private image pulls on a fresh node instead of failing with ImagePullBackOff."""
        return [gcp.artifactregistry.RepositoryIamMember(
            resources.registry_grant_name(name, repository),
            **resources.registry_grant_inputs(repository, member),
            opts=child(self),
        ) for repository in cast(GkeClusterSettings, plan.spec.cluster).registries]

    def _compute_classes(
        self, name: str, plan: PlatformPlan, node_pools: list[pulumi.Resource]
    ) -> list[pulumi.Resource]:
        """One ComputeClass per GPU type, its priorities decided by `compute_class_priorities`: a pod of
        the class waits rather than land on capacity nobody declared, and a moved step restarts, its
        retries covering it like an eviction."""
        classes: list[pulumi.Resource] = []
        for class_name, priorities in compute_class_priorities(plan).items():
            gpu_type = class_name.removeprefix(COMPUTE_CLASS_PREFIX)
            classes.append(k8s.apiextensions.CustomResource(
                # `spotkube-computeclass-nvidia-l4`, not the class name after the component's name
                # (`spotkube-spotkube-nvidia-l4`); the alias keeps a stack built with that name from
                # replacing its class, which would delete the object it has just created.
                f"{name}-computeclass-{gpu_type}",
                **resources.compute_class_inputs(class_name, priorities),
                opts=child(self, provider=self.provider, depends_on=node_pools,
                           aliases=[pulumi.Alias(name=f"{name}-{class_name}")]),
            ))
        return classes

    def _egress(self, name: str, plan: PlatformPlan, wiring: Wiring) -> list[pulumi.Resource]:
        """A Cloud Router and Cloud NAT (last) for private nodes, which otherwise can't reach the public
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
        return [router, nat]

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
        protect = spec.switch(spec.cluster.deletion_protection)
        restricted = resources.api_server_restricted(spec)
        ranges = wiring.api_server_ranges(spec, restricted)
        return gcp.container.Cluster(
            f"{name}{resources.CLUSTER_SUFFIX}",
            **resources.cluster_inputs(plan, project=wiring.project, network=wiring.network,
                                       subnetwork=wiring.subnetwork, workload_pool=workload_pool,
                                       node_service_account=node_service_account,
                                       cidr_blocks=then(ranges, resources.authorized_networks) if restricted else None),
            opts=child(
                self,
                protect=protected(protect),
                transforms=[security_concerns(self, f"GkeGpuCluster {name!r}", "gke")],
                ignore_changes=list(resources.CLUSTER_IGNORED),
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
