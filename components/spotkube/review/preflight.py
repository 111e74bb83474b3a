"""The deploy preflight: what the offline plan can prove about a real `pulumi up` before it runs.

Pulumi's mocks accept anything, so a plan that is green offline can still fail on the first real
deployment: a login prompt nobody answers, a 403 from the cluster's RBAC, an API server the deployer
can't reach, nodes that can't pull images, a 409 from two pool operations at once, a control-plane
pool deleted before its replacement exists, or pipeline retries weaker than Kubeflow's own. Each
rule here is a pure function over what the program registered (inputs and options) and the stack's
settings, and returns one verdict. A failed verdict makes the plan exit 1, like an unsafe placement.

The rules are shared; what a rule checks on one cloud's resources comes from that cloud's profile
(`Cloud.preflight`, `clouds/<cloud>/preflight.py`), and the shapes from
`spotkube.platform.preflight`. Pure module: no Pulumi.

Why each rule exists: docs/architecture.md#the-deploy-preflight.
"""

from __future__ import annotations

from collections.abc import Callable

from spotkube.clouds import RegisteredPool, login_problems, profile, registered_pools
from spotkube.platform.addons import kfp_transforms
from spotkube.platform.contract import POOL_LABEL, ROLE_LABEL
from spotkube.platform.preflight import KUBERNETES_PROVIDER, CloudPreflight, Deployment, Verdict, unsecret
from spotkube.platform.registration import Registration

CONTROL_PLANE_ROLES = ("system", "platform")


def _cloud(d: Deployment) -> CloudPreflight:
    return profile(d.spec.cloud).preflight


def credentials_need_no_person(d: Deployment) -> Verdict:
    rule, title = "credentials", "the Kubernetes provider's credential needs no person"
    providers = d.of_type(KUBERNETES_PROVIDER)
    if not providers:
        return Verdict(rule, title, True, "no Kubernetes provider")
    problems = []
    for provider in providers:
        kubeconfig = unsecret(provider.inputs.get("kubeconfig"))
        if not kubeconfig:
            problems.append(f"provider {provider.name} has no kubeconfig and would use whoever's ~/.kube/config")
            continue
        problems += [f"provider {provider.name}: {p}" for p in login_problems(str(kubeconfig))]
    if problems:
        where = "the kubeconfig of your Kubernetes provider" if d.external else d.key("cluster.deployer.login")
        return Verdict(rule, title, False, f"{where}: " + "; ".join(problems))
    return Verdict(rule, title, True, f"signs in with {profile(d.spec.cloud).sign_in(d.spec)}")


def deployer_has_data_plane_rights(d: Deployment) -> Verdict:
    rule, title = "data-plane-rights", "the deployer holds data-plane rights on an RBAC-only cluster"
    outcome = _cloud(d).data_plane_rights(d)
    if outcome is None:
        return Verdict(rule, title, True, "no cluster that takes its Kubernetes rights from the cloud's RBAC only")
    return Verdict(rule, title, *outcome)


def deployer_reaches_api_server(d: Deployment) -> Verdict:
    rule, title = "api-server-reachable", "the declared deployer can reach the API server"
    if d.spec.cluster.deployer.network == "cluster-network":
        return Verdict(rule, title, True, "the deployer runs inside the cluster network")
    outcome = _cloud(d).api_server_reachable(d)
    if outcome is None:
        return Verdict(rule, title, True, "the API server admits the deployer's address")
    return Verdict(rule, title, *outcome)


def nodes_have_egress(d: Deployment) -> Verdict:
    rule, title = "node-egress", "nodes that pull public images have egress"
    outcome = _cloud(d).node_egress(d)
    return Verdict(rule, title, True, "no cluster") if outcome is None else Verdict(rule, title, *outcome)


def operations_not_concurrent(d: Deployment) -> Verdict:
    rule, title = "serial-operations", "no cloud operations run concurrently where the cloud refuses them"
    outcome = _cloud(d).serial_operations(d)
    return Verdict(rule, title, True, "no cluster") if outcome is None else Verdict(rule, title, *outcome)


def _pool_views(d: Deployment) -> list[tuple[Registration, RegisteredPool]]:
    """Every separately registered pool, read by its cloud's profile (as the plan and the policy pack
    read it). Inline pools are not replaced by Pulumi, so they have no replacement order."""
    pool_types = _cloud(d).pool_types
    return [(r, pool) for r in d.registrations if r.type in pool_types
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
    problems += _cloud(d).control_plane_problems(d)
    if problems:
        return Verdict(rule, title, False, f"{d.key('systemPool')}/{d.key('platformPool')}: " + "; ".join(problems))
    detail = "; ".join(("control-plane pools are replaced create-first under a new name",
                        *_cloud(d).control_plane_notes))
    return Verdict(rule, title, True, detail)


def retries_not_weaker_than_upstream(d: Deployment) -> Verdict:
    rule, title = "retry-defaults", "the retry defaults are not weaker than upstream's"
    if not any(r.type == kfp_transforms.KUBEFLOW_TYPE for r in d.registrations):
        return Verdict(rule, title, True, "no Kubeflow Pipelines")
    problem = kfp_transforms.retry_defaults_problem(d.spec.kubeflow)
    if problem:
        return Verdict(rule, title, False, f"{d.key('kubeflow.evictionRetryLimit')}: {problem}")
    rule_ = kfp_transforms.retry_rule(d.spec.kubeflow)
    return Verdict(rule, title, True, f"evictions retried up to {rule_.evictions} times, failures "
                   f"{rule_.failures}, other Argo errors {max(rule_.errors, rule_.failures)} (KFP "
                   f"{d.spec.kubeflow.version}: errors only, {rule_.errors})")


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
