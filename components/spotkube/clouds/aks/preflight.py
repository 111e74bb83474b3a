"""AKS's part of the deploy preflight: what the plan can prove about a real `pulumi up` on Azure.

Each function answers one of the shared rules (`spotkube.review.preflight`) over the AKS resources the
program registered. The facts: docs/platform-facts.md#aks-azure-rbac, #aks-api-server-access,
#aks-outbound-type and #aks-serial-agent-pool-operations. Pure module: no Pulumi.
"""

from __future__ import annotations

from spotkube.clouds.aks.catalog import RBAC_CLUSTER_ADMIN_ROLE_ID
from spotkube.clouds.aks.resources import (
    AGENT_POOL_TYPE,
    CLUSTER_TYPE,
    INLINE_POOL_FIXED_FIELDS,
    ROLE_ASSIGNMENT_TYPE,
)
from spotkube.platform.preflight import (
    KUBERNETES_PROVIDER,
    CloudPreflight,
    Deployment,
    ExternalCluster,
    Outcome,
    depends_on,
    pulled_registries,
    unreachable_by_address,
    waited_for,
)
from spotkube.platform.warnings import PlanWarning


def data_plane_rights(d: Deployment) -> Outcome:
    """With Azure RBAC for Kubernetes, the deployer and every admin group need the RBAC Cluster Admin
    role on the cluster, and the Kubernetes provider must wait for each grant."""
    clusters = [c for c in d.of_type(CLUSTER_TYPE) if (c.inputs.get("aadProfile") or {}).get("enableAzureRBAC")]
    if not clusters:
        return True, "no cluster that takes its Kubernetes rights from Azure RBAC only"
    # The stack's deployer, never whoever ran the plan: the grant must survive a preview by another identity.
    deployer = d.spec.cluster.deployer.object_id
    by_urn = {r.urn: r for r in d.registrations}
    providers = d.of_type(KUBERNETES_PROVIDER)
    problems = []
    for cluster in clusters:
        grants = [g for g in d.of_type(ROLE_ASSIGNMENT_TYPE)
                  if cluster.urn in g.dependencies
                  and str(g.inputs.get("roleDefinitionId", "")).endswith(f"/{RBAC_CLUSTER_ADMIN_ROLE_ID}")]
        principals = {g.inputs.get("principalId"): g for g in grants}
        wanted = [("the deployer", deployer), *((f"admin group {g}", g) for g in d.spec.cluster.admin_group_object_ids)]
        for who, principal in wanted:
            grant = principals.get(principal)
            if principal is None or grant is None:
                problems.append(f"{who} gets no Azure Kubernetes Service RBAC Cluster Admin role on {cluster.name}, "
                                "so every Kubernetes object is refused with 403")
                continue
            late = [p.name for p in providers if not depends_on(p, grant.urn, by_urn)]
            if late:
                problems.append(f"provider {', '.join(late)} does not wait for {who}'s role assignment, so the "
                                "first objects race the grant (assignments take minutes to apply)")
    if problems:
        return False, f"{d.key('cluster')}: " + "; ".join(problems)
    wait = d.spec.cluster.deployer.grant_propagation_wait
    groups = len(d.spec.cluster.admin_group_object_ids)
    who = (f"the deployer and {groups} admin group{'s' if groups > 1 else ''} are RBAC Cluster Admins" if groups
           else "the deployer is an RBAC Cluster Admin")
    return True, f"{who}; Kubernetes objects wait {wait} for the grants to apply"


def api_server_reachable(d: Deployment) -> Outcome:
    """A private API server admits only the VNet; authorized ranges must cover the deployer's egress."""
    problems = []
    for cluster in d.of_type(CLUSTER_TYPE):
        access = cluster.inputs.get("apiServerAccessProfile") or {}
        if access.get("enablePrivateCluster"):
            problems.append(
                f"the API server is private ({d.key('cluster.private')}), reachable only from inside the cluster's "
                f"VNet, and the deployer runs on the internet; run it inside the VNet and declare "
                f"{d.key('cluster.deployer.network')}: cluster-network, or set {d.key('cluster.private')}: false "
                f"with {d.key('cluster.authorizedIpRanges')}")
        elif access.get("authorizedIPRanges"):
            problem = unreachable_by_address(d, access["authorizedIPRanges"])
            if problem:
                problems.append(problem)
    return (False, "; ".join(problems)) if problems else None


def node_egress(d: Deployment) -> Outcome:
    """The outbound types `none` and `block` leave nodes no way to the public registries."""
    for cluster in d.of_type(CLUSTER_TYPE):
        outbound = (cluster.inputs.get("networkProfile") or {}).get("outboundType") or "loadBalancer"
        if outbound in ("none", "block"):
            return False, (f"outboundType {outbound!r} leaves nodes no way to pull from "
                           f"{', '.join(pulled_registries(d.spec))} or nvcr.io")
        return True, f"nodes reach public registries through outbound type {outbound}"
    return None


def _pool_chains(d: Deployment) -> list[str]:
    """AKS pools of one cluster that could run at the same time: each must wait for another."""
    # By name: the engine may register two pools in either order, and the message must not change with it.
    pools = sorted(d.of_type(AGENT_POOL_TYPE), key=lambda p: p.name)
    by_urn = {r.urn: r for r in d.registrations}
    # What each pool waits for, directly or through others, found once: asking `depends_on` of every
    # pair walked the whole chain each time (cubic in the number of pools).
    waits_for = {p.urn: waited_for(p, by_urn) for p in pools}
    # A cluster spotkube didn't make is one cluster, whose resource the deployment doesn't hold.
    clusters = [(p.urn, p.name) for p in d.of_type(CLUSTER_TYPE)] if not d.external else [("", "the cluster")]
    problems = []
    for urn, name in clusters:
        # By name: registrations arrive in whatever order the engine's threads finish them.
        mine = sorted((p for p in pools if not urn or urn in waits_for[p.urn]), key=lambda p: p.name)
        for i, first in enumerate(mine):
            for second in mine[i + 1:]:
                if second.urn not in waits_for[first.urn] and first.urn not in waits_for[second.urn]:
                    problems.append(f"AgentPools {first.name} and {second.name} of {name} may run at once")
    return problems


def serial_operations(d: Deployment) -> Outcome:
    """AKS refuses a second agent-pool operation while one runs (409 OperationNotAllowed); on a cluster
    spotkube didn't make, each pool component must depend on the one before it (`depends_on`)."""
    if not d.of_type(CLUSTER_TYPE) and not (d.external and d.of_type(AGENT_POOL_TYPE)):
        return None
    problems = _pool_chains(d)
    if problems:
        return False, ("; ".join(problems) + "; AKS refuses a second agent-pool operation while one runs (409 "
                       "OperationNotAllowed), so each pool must depend on the previous one")
    return True, f"{len(d.of_type(AGENT_POOL_TYPE))} AKS pools are created one after another"


def control_plane_problems(d: Deployment) -> list[str]:
    """The inline system pool's fixed fields must be ignored: AKS can't change them, and azure-native
    can't replace the inline pool."""
    problems = []
    for cluster in d.of_type(CLUSTER_TYPE):
        ignored = set(cluster.ignore_changes)
        missing = [f for f in INLINE_POOL_FIXED_FIELDS if f"agentPoolProfiles[0].{f}" not in ignored]
        if missing:
            problems.append(f"the inline system pool's {', '.join(missing)} would be sent to AKS, which can't change "
                            "them and fails the update half-way")
    return problems




def external_cluster(cluster: ExternalCluster) -> list[PlanWarning]:
    """What spotkube's pools on an AKS cluster it didn't make depend on and can't set: the autoscaler's
    spot-first ranking (`expander: priority` and its ConfigMap), a reserved pool's grant for the cluster
    identity, and the API server the add-ons deploy through. Read from the cluster's own resource when
    the program registers it; otherwise each is named, with its fix."""
    found: list[PlanWarning] = []
    name, spec = cluster.name, cluster.spec
    managed = [r for r in cluster.context if r.type == CLUSTER_TYPE]
    pools = [*spec.gpu_pools, *spec.spot_pools]
    ranks = any(p.capacity == "spot" for p in pools) and any(p.capacity == "on-demand" for p in pools)
    if ranks and not managed:
        found.append(PlanWarning(f"external-autoscaler:{name}", (
            f"cluster {name}'s autoscaler is not in this program, so spotkube can't check that it tries spot "
            "before on-demand: set its autoScalerProfile.expander to priority and the ConfigMap kube-system/"
            "cluster-autoscaler-priority-expander ranking the spot pools' scale sets (aks-<pool>-*) above the "
            "on-demand ones (docs/components.md#what-the-clusters-owner-sets)")))
    for pool in spec.gpu_pools:
        if pool.capacity_reservation_group is not None:
            found.append(PlanWarning(f"external-reservation-identity:{pool.name}", (
                f"{pool.name}: AKS places the reserved VMs as cluster {name}'s identity, which must be a "
                "user-assigned identity with Contributor on the capacity reservation group's resource group; "
                "spotkube can't grant that on a cluster it didn't make")))
    subnets = [p for c in managed for p in c.inputs.get("agentPoolProfiles") or () if p.get("vnetSubnetID")]
    for pool in (r for r in cluster.registrations if r.type == AGENT_POOL_TYPE):
        if subnets and not pool.inputs.get("vnetSubnetID"):
            found.append(PlanWarning(f"external-vnet-subnet:{pool.name}", (
                f"{pool.name}: cluster {name}'s pools join a subnet of its virtual network, and AKS wants all of a "
                "cluster's pools in one or none; give the pool vnet_subnet_id (and pod_subnet_id where the "
                "cluster's pools name one)")))
    providers = [r for r in cluster.registrations if r.type == KUBERNETES_PROVIDER]
    if providers and not managed:
        found.append(PlanWarning(f"external-api-server:{name}", (
            f"the add-ons deploy to cluster {name}, whose API server this program doesn't register: `pulumi up` "
            "must run where it is reachable (inside the cluster's network when it is private, or from an "
            "address among its authorized ranges)")))
    return found


PREFLIGHT = CloudPreflight(
    pool_types=(AGENT_POOL_TYPE,),
    data_plane_rights=data_plane_rights,
    api_server_reachable=api_server_reachable,
    node_egress=node_egress,
    serial_operations=serial_operations,
    control_plane_problems=control_plane_problems,
    external_cluster=external_cluster,
    control_plane_notes=("the AKS system pool's fixed fields are refused with the migration instead",),
)
