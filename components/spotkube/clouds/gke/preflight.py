"""GKE's part of the deploy preflight: what the plan can prove about a real `pulumi up` on Google Cloud.

Each function answers one of the shared rules (`spotkube.review.preflight`) over the GKE resources the
program registered. GKE takes Kubernetes rights from IAM, which needs no grant on the cluster, so it has
nothing to say about data-plane rights. The facts: docs/platform-facts.md#gke-cluster-access and
#gke-private-nodes-and-cloud-nat. Pure module: no Pulumi.
"""

from __future__ import annotations

from spotkube.clouds.gke.resources import CLUSTER_TYPE, NODE_POOL_TYPE, ROUTER_NAT_TYPE
from spotkube.platform.contract import COMPUTE_CLASS_PREFIX
from spotkube.platform.preflight import (
    KUBERNETES_PROVIDER,
    CloudPreflight,
    Deployment,
    ExternalCluster,
    Outcome,
    kubeconfig_server,
    no_outcome,
    pulled_registries,
    unreachable_by_address,
)
from spotkube.platform.warnings import PlanWarning


def api_server_reachable(d: Deployment) -> Outcome:
    """The IAM-authorised DNS endpoint admits a deployer anywhere; else the IP endpoint must be public and
    admit the deployer's egress."""
    problems = []
    for cluster in d.of_type(CLUSTER_TYPE):
        dns = ((cluster.inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig") or {})
        if dns.get("allowExternalTraffic") and kubeconfig_server(d).endswith(".gke.goog"):
            continue
        private = (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateEndpoint")
        if private:
            problems.append(f"the control plane has only a private IP endpoint; turn on {d.key('cluster.dnsEndpoint')} "
                            f"or declare {d.key('cluster.deployer.network')}: cluster-network")
            continue
        networks = cluster.inputs.get("masterAuthorizedNetworksConfig")
        if networks is not None:
            allowed = [b.get("cidrBlock", "") for b in networks.get("cidrBlocks") or ()]
            problem = unreachable_by_address(d, allowed)
            if problem:
                problems.append(f"{problem} (or turn on {d.key('cluster.dnsEndpoint')})")
    if problems:
        return False, "; ".join(problems)
    if d.spec.cluster.dns_endpoint is not False:
        return True, "through the control plane's DNS endpoint, which IAM authorises"
    return None


def node_egress(d: Deployment) -> Outcome:
    """Private nodes reach the public registries only through Cloud NAT, or the stack's own egress."""
    registries = ", ".join(pulled_registries(d.spec))
    for cluster in d.of_type(CLUSTER_TYPE):
        if not (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes"):
            return True, "nodes have public addresses"
        if d.spec.cluster.egress == "own":
            return True, "private nodes; the stack declares that its network provides egress"
        if not d.of_type(ROUTER_NAT_TYPE):
            return False, (f"private nodes ({d.key('cluster.private')}) have no route to the public registries "
                           f"the add-ons pull from ({registries}) without Cloud NAT; remove {d.key('cluster.egress')}: "
                           "own, or give the network NAT and declare it")
        return True, f"private nodes reach {registries} through Cloud NAT"
    return None


def serial_operations(d: Deployment) -> Outcome:
    """The Google provider waits for one node-pool operation of a cluster before it starts the next."""
    if not d.of_type(CLUSTER_TYPE):
        return None
    return True, "the Google provider queues node-pool operations of a cluster itself"


def control_plane_problems(d: Deployment) -> list[str]:
    """GKE's pools are NodePools of their own, which the shared rule judges; none is inline."""
    return []


def external_cluster(cluster: ExternalCluster) -> list[PlanWarning]:
    """What spotkube's pools on a GKE cluster it didn't make depend on and can't set: Workload Identity
    (the pools' nodes serve GKE's metadata server, which GKE refuses on a cluster without it), the
    ComputeClass per GPU type that falls back from spot to on-demand (a `GkeGpuCluster` makes them), the
    nodes' service account and egress, and the API server the add-ons deploy through. Read from the
    cluster's own resource when the program registers it; otherwise each is named, with its fix."""
    found: list[PlanWarning] = []
    name, spec = cluster.name, cluster.spec
    clusters = [r for r in cluster.context if r.type == CLUSTER_TYPE]
    identity = clusters and (clusters[0].inputs.get("workloadIdentityConfig") or {}).get("workloadPool")
    if not identity:
        where = "isn't in this program" if not clusters else "has no workloadIdentityConfig.workloadPool"
        found.append(PlanWarning(f"external-workload-identity:{name}", (
            f"cluster {name} {where}: spotkube's pools run GKE's metadata server (workloadMetadataConfig "
            "GKE_METADATA), which GKE refuses on a cluster without Workload Identity; set the cluster's "
            "workload pool to <project>.svc.id.goog")))
    gpu_types = sorted({p.gpu.type for p in spec.gpu_pools if p.gpu is not None and not p.queued_provisioning})
    for gpu in gpu_types:
        found.append(PlanWarning(f"external-compute-class:{gpu}", (
            f"no ComputeClass {COMPUTE_CLASS_PREFIX}{gpu} on cluster {name}: its pools carry the class's label and "
            "taint, so steps reach them through the class, which falls back from spot to on-demand; create it "
            "through your Kubernetes provider (docs/components.md#what-the-clusters-owner-sets)")))
    for pool in (*spec.gpu_pools, *spec.spot_pools):
        if not _has_service_account(cluster, pool.name):
            found.append(PlanWarning(f"external-service-account:{pool.name}", (
                f"{pool.name}'s nodes run as the cluster's default service account (Compute Engine's, often an "
                "Editor of the project); give the pool a least-privilege one: service_account")))
    providers = [r for r in cluster.registrations if r.type == KUBERNETES_PROVIDER]
    if providers and not clusters:
        found.append(PlanWarning(f"external-api-server:{name}", (
            f"the add-ons deploy to cluster {name}, whose API server and node egress this program doesn't "
            "register: `pulumi up` must reach the API server, and private nodes need Cloud NAT to pull "
            "Kubeflow's public images")))
    return found


def _has_service_account(cluster: ExternalCluster, pool: str) -> bool:
    """Whether the program gives the pool's NodePool a service account of its own."""
    return any(r.type == NODE_POOL_TYPE and (r.inputs.get("nodeConfig") or {}).get("serviceAccount")
               for r in cluster.registrations if r.name == pool or (r.inputs.get("name") == pool))


PREFLIGHT = CloudPreflight(
    pool_types=(NODE_POOL_TYPE,),
    data_plane_rights=no_outcome,
    api_server_reachable=api_server_reachable,
    node_egress=node_egress,
    serial_operations=serial_operations,
    control_plane_problems=control_plane_problems,
    external_cluster=external_cluster,
)
