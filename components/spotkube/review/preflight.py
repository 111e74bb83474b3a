"""The deploy preflight: what the offline plan can prove about a real `pulumi up` before it runs, since
Pulumi's mocks accept anything. Each rule returns one verdict over what the program registered; what a
rule checks on one cloud's resources comes from its profile (`clouds/<cloud>/preflight.py`).

Why each rule exists: docs/architecture.md#the-deploy-preflight.
"""

from __future__ import annotations

from collections.abc import Callable

from spotkube.clouds import RegisteredPool, login_problems, profile, registered_pools
from spotkube.platform.addons import kfp_transforms
from spotkube.platform.contract import POOL_LABEL, ROLE_LABEL
from spotkube.platform.preflight import KUBERNETES_PROVIDER, CloudPreflight, Deployment, Outcome, Verdict, unsecret
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


def _judged(rule: str, title: str, outcome: Outcome, otherwise: str) -> Verdict:
    """The cloud's outcome as a verdict; it passes with `otherwise` where the cloud has nothing to judge."""
    return Verdict(rule, title, True, otherwise) if outcome is None else Verdict(rule, title, *outcome)


def deployer_has_data_plane_rights(d: Deployment) -> Verdict:
    rule, title = "data-plane-rights", "the deployer holds data-plane rights on an RBAC-only cluster"
    otherwise = "no cluster that takes its Kubernetes rights from the cloud's RBAC only"
    return _judged(rule, title, _cloud(d).data_plane_rights(d), otherwise)


def deployer_reaches_api_server(d: Deployment) -> Verdict:
    rule, title = "api-server-reachable", "the declared deployer can reach the API server"
    if d.spec.cluster.deployer.network == "cluster-network":
        return Verdict(rule, title, True, "the deployer runs inside the cluster network")
    return _judged(rule, title, _cloud(d).api_server_reachable(d), "the API server admits the deployer's address")


def nodes_have_egress(d: Deployment) -> Verdict:
    title = "nodes that pull public images have egress"
    return _judged("node-egress", title, _cloud(d).node_egress(d), "no cluster")


def operations_not_concurrent(d: Deployment) -> Verdict:
    title = "no cloud operations run concurrently where the cloud refuses them"
    return _judged("serial-operations", title, _cloud(d).serial_operations(d), "no cluster")


def _pool_views(d: Deployment) -> list[tuple[Registration, RegisteredPool]]:
    """Every separately registered pool: inline pools are not replaced by Pulumi, so they have no
    replacement order."""
    pool_types = _cloud(d).pool_types
    return [
        (r, pool)
        for r in d.registrations
        if r.type in pool_types
        for pool in registered_pools(r.type, r.name, r.inputs)
    ]


def control_plane_pools_replaced_safely(d: Deployment) -> Verdict:
    rule, title = "control-plane-replacement", "no pool that hosts the control plane is deleted before its replacement"
    problems = []
    for resource, pool in _pool_views(d):
        role, cloud_name = pool.labels.get(ROLE_LABEL, ""), pool.cloud_name
        if role not in CONTROL_PLANE_ROLES:
            continue
        if resource.delete_before_replace:
            problems.append(
                f"{role} pool {cloud_name} is deleted before its replacement exists, taking down what runs there"
            )
        pool_label = pool.labels.get(POOL_LABEL)
        if pool_label and cloud_name == pool_label:
            problems.append(
                f"{role} pool {cloud_name} keeps its name across a replacement, so the new pool can't be "
                "created beside the old one"
            )
    problems += _cloud(d).control_plane_problems(d)
    if problems:
        return Verdict(rule, title, False, f"{d.key('systemPool')}/{d.key('platformPool')}: " + "; ".join(problems))
    detail = "; ".join(
        ("control-plane pools are replaced create-first under a new name", *_cloud(d).control_plane_notes)
    )
    return Verdict(rule, title, True, detail)


def retries_not_weaker_than_upstream(d: Deployment) -> Verdict:
    rule, title = "retry-defaults", "the retry defaults are not weaker than upstream's"
    if not any(r.type == kfp_transforms.KUBEFLOW_TYPE for r in d.registrations):
        return Verdict(rule, title, True, "no Kubeflow Pipelines")
    problem = kfp_transforms.retry_defaults_problem(d.spec.kubeflow)
    if problem:
        return Verdict(rule, title, False, f"{d.key('kubeflow.evictionRetryLimit')}: {problem}")
    rule_ = kfp_transforms.retry_rule(d.spec.kubeflow)
    detail = (
        f"evictions retried up to {rule_.evictions} times, failures {rule_.failures}, other Argo errors "
        f"{max(rule_.errors, rule_.failures)} (KFP {d.spec.kubeflow.version}: errors only, {rule_.errors})"
    )
    return Verdict(rule, title, True, detail)


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
    return [v if v.ok or not d.source else Verdict(v.rule, v.title, v.ok, f"{d.source}: {v.detail}") for v in verdicts]
