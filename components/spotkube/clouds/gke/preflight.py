"""GKE's part of the deploy preflight: what the plan can prove about a real `pulumi up` on Google Cloud.

Each function answers one of the shared rules (`spotkube.review.preflight`) over the GKE resources the
program registered: the control plane's DNS and IP endpoints, Cloud NAT for private nodes, and the
provider's own queueing of node-pool operations. GKE takes Kubernetes rights from IAM, which needs no
grant on the cluster, so it has nothing to say about data-plane rights. The facts:
docs/platform-facts.md#gke-cluster-access and #gke-private-nodes-and-cloud-nat. Pure module: no Pulumi.
"""

from __future__ import annotations

from spotkube.clouds.gke.resources import CLUSTER_TYPE, NODE_POOL_TYPE, ROUTER_NAT_TYPE
from spotkube.platform.addons import kfp_reference
from spotkube.platform.preflight import (
    CloudPreflight,
    Deployment,
    Outcome,
    kubeconfig_server,
    no_outcome,
    unreachable_by_address,
)


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
    registries = ", ".join(kfp_reference.image_registries())
    for cluster in d.of_type(CLUSTER_TYPE):
        if not (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes"):
            return True, "nodes have public addresses"
        if d.spec.cluster.egress == "own":
            return True, "private nodes; the stack declares that its network provides egress"
        if not d.of_type(ROUTER_NAT_TYPE):
            return False, (f"private nodes ({d.key('cluster.private')}) have no route to the public registries "
                           f"Kubeflow pulls from ({registries}) without Cloud NAT; remove {d.key('cluster.egress')}: "
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


PREFLIGHT = CloudPreflight(
    pool_types=(NODE_POOL_TYPE,),
    data_plane_rights=no_outcome,
    api_server_reachable=api_server_reachable,
    node_egress=node_egress,
    serial_operations=serial_operations,
    control_plane_problems=control_plane_problems,
)
