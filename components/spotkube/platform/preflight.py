"""The deploy preflight's shapes, below the clouds and the judges: the shared rules
(`spotkube.review.preflight`) and each cloud's part (`clouds/<cloud>/preflight.py`) read the same
`Deployment` and answer the same `Verdict`. Why each rule: docs/architecture.md#the-deploy-preflight.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from spotkube.platform.addons import kfp_reference, trainer_reference
from spotkube.platform.input_messages import KeyStyle
from spotkube.platform.records import record
from spotkube.platform.registration import Invoke, Registration
from spotkube.platform.spec import PlatformSpec, user_key
from spotkube.platform.warnings import PlanWarning

KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
#: Pulumi's marker for a secret value in serialised inputs.
SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d"


@record
class Verdict:
    """One rule's answer: `detail` says why it holds, or what fails and what to declare instead."""

    rule: str
    title: str
    ok: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "ok": self.ok, "detail": self.detail}


@record
class Deployment:
    """What the rules read: the registrations, the provider calls, the settings and the stack file."""

    registrations: Sequence[Registration]
    invokes: Sequence[Invoke]
    spec: PlatformSpec
    source: str
    #: How the settings were written: a stack file's `spotkube:` keys, or a cluster component's args.
    style: KeyStyle = "stack"
    #: Pools added to a cluster spotkube didn't make: the fixes go in the program's own resources.
    external: bool = False

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]

    def key(self, path: str) -> str:
        """A setting as its author spelt it (`spotkube:cluster.deployer.egressRanges` in a stack file,
        `cluster.deployer.egress_ranges` in a component's args): where the fix goes."""
        return user_key(path, self.style, type(self.spec))


#: A cloud's answer to one rule over its own resources: (holds, why or what fails), or None when the
#: deployment has nothing of this cloud for the rule to judge.
Outcome = tuple[bool, str] | None
CloudCheck = Callable[[Deployment], Outcome]


def no_outcome(d: Deployment) -> Outcome:
    """A cloud with nothing to judge for a rule."""
    return None


@record
class ExternalCluster:
    """A cluster spotkube didn't make, as the review sees it: its name, the pools spotkube added (in the
    spec), what the program registered onto it, and the cluster's own resource when the program registers
    it too (`context`; empty when the cluster comes from elsewhere)."""

    name: str
    spec: PlatformSpec
    registrations: Sequence[Registration]
    context: Sequence[Registration] = ()


@record
class CloudPreflight:
    """One cloud's part of the preflight's rules (`clouds/<cloud>/preflight.py`); the rules' names,
    titles and the answers when a cloud has nothing to say stay with the shared rules."""

    #: Pools registered as resources of their own, which Pulumi replaces (inline pools it can't).
    pool_types: tuple[str, ...]
    #: `data-plane-rights`: the deployer's and the admin groups' rights on a cluster that needs grants.
    data_plane_rights: CloudCheck
    #: `api-server-reachable`, for a deployer outside the cluster network.
    api_server_reachable: CloudCheck
    #: `node-egress`: the first cluster's nodes reach the public registries.
    node_egress: CloudCheck
    #: `serial-operations`: no two operations run at once where the cloud refuses them.
    serial_operations: CloudCheck
    #: `control-plane-replacement`: what only this cloud's pools risk (AKS: the inline system pool).
    control_plane_problems: Callable[[Deployment], list[str]]
    #: What the cloud's pools on a cluster spotkube didn't make depend on that only the cluster's owner can
    #: set (`ExternalCluster`): each a warning with its fix, or none where the program shows it is set.
    external_cluster: Callable[[ExternalCluster], list[PlanWarning]] = lambda cluster: []
    #: What the `control-plane-replacement` rule's passing answer adds for this cloud (AKS: how its
    #: inline system pool's fixed fields are handled); nothing for a cloud without such a pool.
    control_plane_notes: tuple[str, ...] = ()


def unsecret(value: Any) -> Any:
    """A registered input without Pulumi's secret wrapper. Read here, never printed."""
    if isinstance(value, Mapping) and SECRET_SIGNATURE in value:
        return value.get("value")
    return value


def waited_for(resource: Registration, by_urn: Mapping[str, Registration]) -> set[str]:
    """Every URN `resource` waits for, directly or through other resources."""
    seen: set[str] = set()
    todo = list(resource.dependencies)
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        if urn in by_urn:
            todo.extend(by_urn[urn].dependencies)
    return seen


def depends_on(resource: Registration, target_urn: str, by_urn: Mapping[str, Registration]) -> bool:
    """Whether `resource` waits for `target_urn`, directly or through other resources."""
    return target_urn in waited_for(resource, by_urn)


def _uncovered(ranges: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The ranges in `ranges` that no range in `allowed` contains."""
    networks = [ipaddress.ip_network(a, strict=False) for a in allowed]
    return [r for r in ranges
            if not any(ipaddress.ip_network(r, strict=False).subnet_of(n) for n in networks  # type: ignore[arg-type]
                       if ipaddress.ip_network(r, strict=False).version == n.version)]


def unreachable_by_address(d: Deployment, allowed: Sequence[str]) -> str | None:
    """Why an internet deployer can't pass the API server's address filter, or None."""
    deployer = d.spec.cluster.deployer
    if not deployer.egress_ranges:
        return (f"the API server admits only {', '.join(allowed) or 'the cluster network'}, and the deployer declares "
                f"no egress; declare {d.key('cluster.deployer.egressRanges')} (the public CIDRs your runner connects "
                f"from), or run it inside the cluster network and declare {d.key('cluster.deployer.network')}: "
                "cluster-network")
    outside = _uncovered(deployer.egress_ranges, allowed)
    if outside:
        return (f"the deployer's egress {', '.join(outside)} is not among the API server's authorized ranges "
                f"({', '.join(allowed) or 'none'}); add it to {d.key('cluster.authorizedIpRanges')}")
    return None


def kubeconfig_server(d: Deployment) -> str:
    """The host name of the API server the Kubernetes provider's kubeconfig points at."""
    for provider in d.of_type(KUBERNETES_PROVIDER):
        kubeconfig = str(unsecret(provider.inputs.get("kubeconfig")) or "")
        for line in kubeconfig.splitlines():
            if line.strip().startswith("server:"):
                return urlparse(line.split(":", 1)[1].strip()).hostname or ""
    return ""


def pulled_registries(spec: PlatformSpec) -> tuple[str, ...]:
    """The public registries the stack's add-ons pull from, sorted: Kubeflow's, and with training on
    Trainer's and JobSet's, which the node-egress rule names."""
    extra = trainer_reference.image_registries() if spec.training.enabled else ()
    return tuple(sorted({*kfp_reference.image_registries(), *extra}))

