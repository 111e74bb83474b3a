"""The deploy preflight: what the offline plan can prove about a real `pulumi up` before it runs.

Pulumi's mocks accept anything, so a plan that is green offline can still fail on the first real
deployment: a login prompt nobody answers, a 403 from Azure RBAC, an API server the deployer can't
reach, nodes that can't pull images, a 409 from two AKS pool operations at once, a control-plane
pool deleted before its replacement exists, or pipeline retries weaker than Kubeflow's own. Each
rule here is a pure function over what the program registered (inputs and options) and the stack's
settings, and returns one verdict. A failed verdict makes the plan exit 1, like an unsafe placement.

Pure module: no Pulumi; registrations are read through a small protocol.

Why each rule exists: docs/architecture.md#the-deploy-preflight.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlparse

from spotkube.clouds import RegisteredPool, profile, registered_pools
from spotkube.clouds.aks.catalog import INLINE_POOL_FIXED_FIELDS, RBAC_CLUSTER_ADMIN_ROLE_ID
from spotkube.clouds.aks.profile import AGENT_POOL_TYPE as AKS_AGENT_POOL
from spotkube.clouds.aks.profile import CLUSTER_TYPE as AKS_CLUSTER
from spotkube.clouds.gke.profile import CLUSTER_TYPE as GKE_CLUSTER
from spotkube.clouds.gke.profile import NODE_POOL_TYPE as GKE_NODE_POOL
from spotkube.platform.addons import kfp_reference, kfp_transforms
from spotkube.platform.contract import POOL_LABEL, ROLE_LABEL
from spotkube.platform.kubeconfigs import login_problems
from spotkube.platform.spec import PlatformSpec

#: Pools registered as resources of their own, which Pulumi replaces (inline pools it can't).
SEPARATE_POOL_TYPES = (AKS_AGENT_POOL, GKE_NODE_POOL)
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
#: Pulumi's marker for a secret value in serialised inputs.
SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d"
CONTROL_PLANE_ROLES = ("system", "platform")


class RegisteredResource(Protocol):
    type: str
    name: str
    urn: str
    inputs: Mapping[str, Any]
    delete_before_replace: bool
    dependencies: tuple[str, ...]
    ignore_changes: tuple[str, ...]


class InvokeCall(Protocol):
    token: str
    result: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    """One rule's answer: `detail` says why it holds, or what fails and what to declare instead."""

    rule: str
    title: str
    ok: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True)
class Deployment:
    """What the rules read: the registrations, the provider calls, the settings and the stack file."""

    registrations: Sequence[RegisteredResource]
    invokes: Sequence[InvokeCall]
    spec: PlatformSpec
    source: str

    def of_type(self, type_token: str) -> list[RegisteredResource]:
        return [r for r in self.registrations if r.type == type_token]

    @staticmethod
    def key(path: str) -> str:
        """A config key as the stack file spells it: where the fix goes."""
        return f"spotkube:{path}"


def _unsecret(value: Any) -> Any:
    """A registered input without Pulumi's secret wrapper. Read here, never printed."""
    if isinstance(value, Mapping) and SECRET_SIGNATURE in value:
        return value.get("value")
    return value


def _depends_on(resource: RegisteredResource, target_urn: str, by_urn: Mapping[str, RegisteredResource]) -> bool:
    """Whether `resource` waits for `target_urn`, directly or through other resources."""
    seen: set[str] = set()
    todo = list(resource.dependencies)
    while todo:
        urn = todo.pop()
        if urn == target_urn:
            return True
        if urn in seen or urn not in by_urn:
            continue
        seen.add(urn)
        todo.extend(by_urn[urn].dependencies)
    return False


def credentials_need_no_person(d: Deployment) -> Verdict:
    rule, title = "credentials", "the Kubernetes provider's credential needs no person"
    providers = d.of_type(KUBERNETES_PROVIDER)
    if not providers:
        return Verdict(rule, title, True, "no Kubernetes provider")
    problems = []
    for provider in providers:
        kubeconfig = _unsecret(provider.inputs.get("kubeconfig"))
        if not kubeconfig:
            problems.append(f"provider {provider.name} has no kubeconfig and would use whoever's ~/.kube/config")
            continue
        problems += [f"provider {provider.name}: {p}" for p in login_problems(str(kubeconfig))]
    if problems:
        return Verdict(rule, title, False, f"{d.key('cluster.deployer.login')}: " + "; ".join(problems))
    return Verdict(rule, title, True, f"signs in with {profile(d.spec.cloud).sign_in(d.spec)}")


def deployer_has_data_plane_rights(d: Deployment) -> Verdict:
    rule, title = "data-plane-rights", "the deployer holds data-plane rights on an RBAC-only cluster"
    clusters = [c for c in d.of_type(AKS_CLUSTER)
                if (c.inputs.get("aadProfile") or {}).get("enableAzureRBAC")]
    if not clusters:
        return Verdict(rule, title, True, "no cluster that takes its Kubernetes rights from Azure RBAC only")
    deployer = d.spec.cluster.deployer.object_id
    by_urn = {r.urn: r for r in d.registrations}
    providers = d.of_type(KUBERNETES_PROVIDER)
    problems = []
    for cluster in clusters:
        grants = [g for g in d.of_type(ROLE_ASSIGNMENT)
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
            late = [p.name for p in providers if not _depends_on(p, grant.urn, by_urn)]
            if late:
                problems.append(f"provider {', '.join(late)} does not wait for {who}'s role assignment, so the "
                                "first objects race the grant (assignments take minutes to apply)")
    if problems:
        return Verdict(rule, title, False, f"{d.key('cluster')}: " + "; ".join(problems))
    wait = d.spec.cluster.deployer.grant_propagation_wait
    return Verdict(rule, title, True, f"the deployer and {len(d.spec.cluster.admin_group_object_ids)} admin group(s) "
                   f"are RBAC Cluster Admins; Kubernetes objects wait {wait} for the grants to apply")


def _covered(ranges: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The ranges in `ranges` that no range in `allowed` contains."""
    networks = [ipaddress.ip_network(a, strict=False) for a in allowed]
    return [r for r in ranges
            if not any(ipaddress.ip_network(r, strict=False).subnet_of(n) for n in networks  # type: ignore[arg-type]
                       if ipaddress.ip_network(r, strict=False).version == n.version)]


def _unreachable_by_address(d: Deployment, allowed: Sequence[str]) -> str | None:
    """Why an internet deployer can't pass the API server's address filter, or None."""
    deployer = d.spec.cluster.deployer
    if not deployer.egress_ranges:
        return (f"the API server admits only {', '.join(allowed) or 'the cluster network'}, and the deployer declares "
                f"no egress; declare {d.key('cluster.deployer.egressRanges')} (the public CIDRs your runner connects "
                f"from), or run it inside the cluster network and declare {d.key('cluster.deployer.network')}: "
                "cluster-network")
    outside = _covered(deployer.egress_ranges, allowed)
    if outside:
        return (f"the deployer's egress {', '.join(outside)} is not among the API server's authorized ranges "
                f"({', '.join(allowed) or 'none'}); add it to {d.key('cluster.authorizedIpRanges')}")
    return None


def _kubeconfig_server(d: Deployment) -> str:
    for provider in d.of_type(KUBERNETES_PROVIDER):
        kubeconfig = str(_unsecret(provider.inputs.get("kubeconfig")) or "")
        for line in kubeconfig.splitlines():
            if line.strip().startswith("server:"):
                return urlparse(line.split(":", 1)[1].strip()).hostname or ""
    return ""


def deployer_reaches_api_server(d: Deployment) -> Verdict:
    rule, title = "api-server-reachable", "the declared deployer can reach the API server"
    deployer = d.spec.cluster.deployer
    if deployer.network == "cluster-network":
        return Verdict(rule, title, True, "the deployer runs inside the cluster network")
    problems = []
    for cluster in d.of_type(AKS_CLUSTER):
        access = cluster.inputs.get("apiServerAccessProfile") or {}
        if access.get("enablePrivateCluster"):
            problems.append(
                f"the API server is private ({d.key('cluster.private')}), reachable only from inside the cluster's "
                f"VNet, and the deployer runs on the internet; run it inside the VNet and declare "
                f"{d.key('cluster.deployer.network')}: cluster-network, or set {d.key('cluster.private')}: false "
                f"with {d.key('cluster.authorizedIpRanges')}")
        elif access.get("authorizedIPRanges"):
            problem = _unreachable_by_address(d, access["authorizedIPRanges"])
            if problem:
                problems.append(problem)
    for cluster in d.of_type(GKE_CLUSTER):
        dns = ((cluster.inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig") or {})
        if dns.get("allowExternalTraffic") and _kubeconfig_server(d).endswith(".gke.goog"):
            continue
        private = (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateEndpoint")
        if private:
            problems.append(f"the control plane has only a private IP endpoint; turn on {d.key('cluster.dnsEndpoint')} "
                            f"or declare {d.key('cluster.deployer.network')}: cluster-network")
            continue
        networks = cluster.inputs.get("masterAuthorizedNetworksConfig")
        if networks is not None:
            allowed = [b.get("cidrBlock", "") for b in networks.get("cidrBlocks") or ()]
            problem = _unreachable_by_address(d, allowed)
            if problem:
                problems.append(f"{problem} (or turn on {d.key('cluster.dnsEndpoint')})")
    if problems:
        return Verdict(rule, title, False, "; ".join(problems))
    if d.spec.cloud == "gke" and d.spec.cluster.dns_endpoint is not False:
        return Verdict(rule, title, True, "through the control plane's DNS endpoint, which IAM authorises")
    return Verdict(rule, title, True, "the API server admits the deployer's address")


def nodes_have_egress(d: Deployment) -> Verdict:
    rule, title = "node-egress", "nodes that pull public images have egress"
    registries = ", ".join(kfp_reference.image_registries())
    for cluster in d.of_type(GKE_CLUSTER):
        if not (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes"):
            return Verdict(rule, title, True, "nodes have public addresses")
        if d.spec.cluster.egress == "own":
            return Verdict(rule, title, True, "private nodes; the stack declares that its network provides egress")
        if not d.of_type(ROUTER_NAT):
            return Verdict(rule, title, False, f"private nodes ({d.key('cluster.private')}) have no route to the "
                           f"public registries Kubeflow pulls from ({registries}) without Cloud NAT; remove "
                           f"{d.key('cluster.egress')}: own, or give the network NAT and declare it")
        return Verdict(rule, title, True, f"private nodes reach {registries} through Cloud NAT")
    for cluster in d.of_type(AKS_CLUSTER):
        outbound = (cluster.inputs.get("networkProfile") or {}).get("outboundType") or "loadBalancer"
        if outbound in ("none", "block"):
            return Verdict(rule, title, False, f"outboundType {outbound!r} leaves nodes no way to pull from "
                           f"{registries} or nvcr.io")
        return Verdict(rule, title, True, f"nodes reach public registries through outbound type {outbound}")
    return Verdict(rule, title, True, "no cluster")


def _aks_pool_chains(d: Deployment) -> list[str]:
    """AKS pools of one cluster that could run at the same time: each must wait for another."""
    pools = d.of_type(AKS_AGENT_POOL)
    by_urn = {r.urn: r for r in d.registrations}
    problems = []
    for cluster in d.of_type(AKS_CLUSTER):
        mine = [p for p in pools if _depends_on(p, cluster.urn, by_urn)]
        for i, first in enumerate(mine):
            for second in mine[i + 1:]:
                if not (_depends_on(first, second.urn, by_urn) or _depends_on(second, first.urn, by_urn)):
                    problems.append(f"AgentPools {first.name} and {second.name} of {cluster.name} may run at once")
    return problems


def operations_not_concurrent(d: Deployment) -> Verdict:
    rule, title = "serial-operations", "no cloud operations run concurrently where the cloud refuses them"
    if d.of_type(AKS_CLUSTER):
        problems = _aks_pool_chains(d)
        if problems:
            return Verdict(rule, title, False, "; ".join(problems) + "; AKS refuses a second agent-pool operation "
                           "while one runs (409 OperationNotAllowed), so each pool must depend on the previous one")
        return Verdict(rule, title, True, f"{len(d.of_type(AKS_AGENT_POOL))} AKS pools are created one after another")
    if d.of_type(GKE_CLUSTER):
        return Verdict(rule, title, True, "the Google provider queues node-pool operations of a cluster itself")
    return Verdict(rule, title, True, "no cluster")


def _pool_views(d: Deployment) -> list[tuple[RegisteredResource, RegisteredPool]]:
    """Every separately registered pool, read by its cloud's profile (as the plan and the policy pack
    read it). Inline pools are not replaced by Pulumi, so they have no replacement order."""
    return [(r, pool) for r in d.registrations if r.type in SEPARATE_POOL_TYPES
            for pool in registered_pools(r.type, r.name, r.inputs)]


def control_plane_pools_replaced_safely(d: Deployment) -> Verdict:
    rule, title = "control-plane-replacement", "no pool that hosts the control plane is deleted before its replacement"
    problems = []
    for resource, pool in _pool_views(d):
        role, cloud_name = pool.labels.get(ROLE_LABEL, ""), pool.cloud_name
        if role not in CONTROL_PLANE_ROLES:
            continue
        if resource.delete_before_replace:
            problems.append(f"{role} pool {cloud_name} is deleted before its replacement exists, taking down what "
                            "runs there")
        pool_label = pool.labels.get(POOL_LABEL)
        if pool_label and cloud_name == pool_label:
            problems.append(f"{role} pool {cloud_name} keeps its name across a replacement, so the new pool can't be "
                            "created beside the old one")
    for cluster in d.of_type(AKS_CLUSTER):
        ignored = set(cluster.ignore_changes)
        missing = [f for f in INLINE_POOL_FIXED_FIELDS if f"agentPoolProfiles[0].{f}" not in ignored]
        if missing:
            problems.append(f"the inline system pool's {', '.join(missing)} would be sent to AKS, which can't change "
                            "them and fails the update half-way")
    if problems:
        return Verdict(rule, title, False, f"{d.key('systemPool')}/{d.key('platformPool')}: " + "; ".join(problems))
    return Verdict(rule, title, True, "control-plane pools are replaced create-first under a new name; the AKS "
                   "system pool's fixed fields are refused with the migration instead")


def retries_not_weaker_than_upstream(d: Deployment) -> Verdict:
    rule, title = "retry-defaults", "the retry defaults are not weaker than upstream's"
    if not any(r.type == kfp_transforms.KUBEFLOW_TYPE for r in d.registrations):
        return Verdict(rule, title, True, "no Kubeflow Pipelines")
    problem = kfp_transforms.retry_defaults_problem(d.spec.kubeflow)
    if problem:
        return Verdict(rule, title, False, f"{d.key('kubeflow.retryLimit')}: {problem}")
    kubeflow = d.spec.kubeflow
    limit = f"KFP {kubeflow.version}'s own" if kubeflow.retry_limit is None else f"at least {kubeflow.retry_limit}"
    return Verdict(rule, title, True, f"retryPolicy {kubeflow.retry_policy}, limit {limit}")


RULES: tuple[Callable[[Deployment], Verdict], ...] = (
    credentials_need_no_person,
    deployer_has_data_plane_rights,
    deployer_reaches_api_server,
    nodes_have_egress,
    operations_not_concurrent,
    control_plane_pools_replaced_safely,
    retries_not_weaker_than_upstream,
)


def preflight(d: Deployment) -> list[Verdict]:
    """Every rule's verdict, in a fixed order; a failure names the stack file its fix goes in."""
    verdicts = [rule(d) for rule in RULES]
    return [v if v.ok or not d.source else Verdict(v.rule, v.title, v.ok, f"{d.source}: {v.detail}")
            for v in verdicts]
