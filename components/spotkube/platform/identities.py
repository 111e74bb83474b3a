"""Who may do what: the calls a preview and a deploy make, and the roles that allow them.

A CI identity with too little fails a preview half-way; one with too much is a standing risk, since
everyone who can push a branch runs code as the preview identity. So the calls are worked out from
what the program registers, the roles are declared beside them, and the tests check every call
against the clouds' published role definitions. Why each holds what: docs/identities.md. Pure module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from spotkube.platform.addons.kfp_kinds import RENDERED_KINDS
from spotkube.platform.addons.kfp_transforms import KUBEFLOW_TYPE
from spotkube.platform.addons.kueue_reference import RENDERED_KINDS as KUEUE_KINDS
from spotkube.platform.addons.kueue_transforms import KUEUE_TYPE
from spotkube.platform.addons.trainer_reference import API_VERSION as TRAINER_API_VERSION
from spotkube.platform.addons.trainer_reference import RENDERED_KINDS as TRAINER_KINDS
from spotkube.platform.addons.trainer_transforms import TRAINER_TYPE
from spotkube.platform.addons.training_runtime import KIND as RUNTIME_KIND
from spotkube.platform.records import record

#: The two CI identities: `preview` runs `pulumi preview` (and `spotkube quota`) on pull requests,
#: `deploy` runs `pulumi up` on main.
Identity = Literal["preview", "deploy"]
IDENTITIES: tuple[Identity, ...] = ("preview", "deploy")
#: Who issues the OIDC tokens of GitHub Actions jobs, which every cloud's CI identities trust in place of
#: a stored secret (docs/identities.md).
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
#: What a permission is in the cloud's terms: an Azure control-plane action, an Azure data action
#: (a Kubernetes verb under Azure RBAC), or a Google Cloud IAM permission.
PermissionKind = Literal["action", "dataAction", "permission"]


class Registered(Protocol):
    type: str
    inputs: Mapping[str, Any]


class Invoked(Protocol):
    token: str


@record
class Call:
    """One call an identity makes, and the permission the cloud checks for it, at which scope.

    `needed: False` marks a call the identity is denied on purpose: the tool copes without it (the
    docs say how), and the tests check that no role of the identity allows it."""

    identity: Identity
    what: str
    permission: str
    kind: PermissionKind
    scope: str
    when: str
    needed: bool = True

    @property
    def unmapped(self) -> bool:
        """A call whose permission the cloud's module doesn't know (the permission then says so)."""
        return self.permission.startswith(UNMAPPED)


#: How a cloud's module writes the permission of a call it has no row for; no role grants it.
UNMAPPED = "(no permission known"


@record
class Role:
    """A role as the cloud defines it, or the part of a built-in role spotkube relies on.

    Azure: actions and data actions with `*` wildcards, minus the `not_` ones; Google Cloud: the
    included permissions. `claim` marks a built-in role's relied-on part, which the tests check
    against the role's published definition; a custom role (which the bootstrap creates) is whole."""

    name: str
    id: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    data_actions: tuple[str, ...] = ()
    not_data_actions: tuple[str, ...] = ()
    permissions: frozenset[str] = frozenset()
    not_permissions: frozenset[str] = frozenset()
    custom: bool = False
    description: str = ""

    def allows(self, permission: str, kind: PermissionKind) -> bool:
        grants, denies = {"action": (self.actions, self.not_actions),
                          "dataAction": (self.data_actions, self.not_data_actions),
                          "permission": (self.permissions, self.not_permissions)}[kind]
        return any(matches(p, permission) for p in grants) and not any(matches(p, permission) for p in denies)


def matches(pattern: str, permission: str) -> bool:
    """Azure's rule: operations compare without case, and `*` stands for any text, slashes included
    (`Microsoft.ContainerService/managedClusters/*/read` covers `.../apps/deployments/read`). Google's
    permissions have no wildcards; a claim on a predefined role may (`container.*.get`), to be checked
    against the role's list."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, permission, flags=re.IGNORECASE) is not None


@record
class Assignment:
    """A role an identity holds, where, and why; `condition` narrows it (Azure ABAC, IAM conditions)."""

    identity: Identity
    role: Role
    scope: str
    why: str
    condition: str | None = None
    #: Who grants it: the bootstrap stack, or the program itself (the deployer's rights on the cluster).
    granted_by: str = "bootstrap"
    #: Held only for stacks with `cluster.deployer.drills`: the eviction drill's rights.
    drills_only: bool = False


def granting(call: Call, assignments: Iterable[Assignment], covers: Mapping[str, frozenset[str]]) -> list[Assignment]:
    """The assignments of the call's identity whose role allows it at a scope that covers the call's
    (`covers[scope]` is every scope an assignment there reaches, itself included)."""
    if call.unmapped:
        return []
    return [a for a in assignments if a.identity == call.identity and call.scope in covers.get(a.scope, {a.scope})
            and a.role.allows(call.permission, call.kind)]


def plural(name: str) -> str:
    """gengo's default pluralisation, which names Kubernetes resources, keeping the case it is given:
    ConfigMap -> ConfigMaps, NetworkPolicy -> NetworkPolicies, PriorityClass -> PriorityClasses."""
    if name.endswith("s"):
        return f"{name}es"
    if name.endswith("y"):
        return f"{name[:-1]}ies"
    return f"{name}s"


#: The API groups Kubernetes itself serves; a kind in any other group is a custom resource.
BUILT_IN_GROUPS = frozenset({
    "", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io", "apiextensions.k8s.io",
    "networking.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
    "events.k8s.io", "admissionregistration.k8s.io", "certificates.k8s.io", "node.k8s.io", "apiregistration.k8s.io",
})


@dataclass(frozen=True, order=True)
class KubernetesKind:
    """A kind of object the program applies: its API group ("" for the core group) and kind."""

    group: str
    kind: str

    @property
    def plural(self) -> str:
        """The resource's name in URLs and RBAC rules: `networkpolicies`."""
        return plural(self.kind).lower()

    @property
    def custom(self) -> bool:
        return self.group not in BUILT_IN_GROUPS

    @classmethod
    def of(cls, api_version: str, kind: str) -> KubernetesKind:
        group = api_version.rpartition("/")[0]
        return cls(group, kind)


#: Type tokens pulumi-kubernetes gives the objects a program registers: `kubernetes:<group>/<version>:<Kind>`
#: (the core group is `core`).
_KUBERNETES_TYPE = re.compile(r"^kubernetes:(?P<group>[^:/]+)/(?P<version>[^:/]+):(?P<kind>[A-Za-z]+)$")


def kubernetes_kinds(registrations: Iterable[Registered]) -> set[KubernetesKind]:
    """The Kubernetes kinds the program applies: the ones it registers (providers and components
    excluded), and Kubeflow's, Kueue's and Trainer's (with its runtimes), which the provider renders or reads at
    deploy time."""
    rendered = {KUBEFLOW_TYPE: RENDERED_KINDS, KUEUE_TYPE: KUEUE_KINDS,
                TRAINER_TYPE: (*TRAINER_KINDS, (TRAINER_API_VERSION, RUNTIME_KIND))}
    kinds = set()
    for registration in registrations:
        kinds |= {KubernetesKind.of(api_version, kind) for api_version, kind in rendered.get(registration.type, ())}
        match = _KUBERNETES_TYPE.match(registration.type)
        if match and match["kind"] not in ("Provider",) and match["group"] not in ("kustomize", "yaml"):
            group = "" if match["group"] == "core" else match["group"]
            kinds.add(KubernetesKind(group, match["kind"]))
    return kinds


SECRET = KubernetesKind("", "Secret")
#: Why an identity makes a call, shared by both clouds' calls.
REFRESH = "refresh: pulumi refresh, pulumi preview --refresh"
CHANGE_PREVIEW = "a preview of a change to such an object (the live object, before the server-side dry run)"
QUOTA = "spotkube quota (the pull request's comment; deploy.yml before pulumi up)"


def kind_preview_call(kind: KubernetesKind, permission: str, permission_kind: PermissionKind, scope: str) -> Call:
    """The preview's read of the live objects of a kind, which a change's preview compares with; a Secret's
    read is denied on purpose, since the provider previews a Secret from its state."""
    why = CHANGE_PREVIEW if kind != SECRET else "denied on purpose: the provider previews a Secret from its state"
    return Call("preview", f"get {kind.kind}", permission, permission_kind, scope, why, needed=kind != SECRET)


@record
class IdentityFacts:
    """A cloud's part: the calls each identity makes for a stack (from its registrations and
    invokes), the roles each identity holds, and which scopes an assignment at a scope reaches."""

    preview_calls: Callable[[Sequence[Registered], Iterable[Invoked]], list[Call]]
    deploy_calls: Callable[[Sequence[Registered], Iterable[Invoked]], list[Call]]
    assignments: tuple[Assignment, ...]
    covers: Mapping[str, frozenset[str]]

    def calls(self, registrations: Sequence[Registered], invokes: Sequence[Invoked]) -> list[Call]:
        return [*self.preview_calls(registrations, invokes), *self.deploy_calls(registrations, invokes)]


def sorted_calls(calls: Iterable[Call]) -> tuple[Call, ...]:
    """Calls once each, in a stable order: identity, then scope, then permission."""
    unique = {(c.identity, c.what, c.permission, c.kind, c.scope, c.when, c.needed): c for c in calls}
    order = {identity: i for i, identity in enumerate(IDENTITIES)}
    return tuple(sorted(unique.values(), key=lambda c: (order[c.identity], not c.needed, c.kind, c.permission,
                                                        c.what, c.scope, c.when)))

