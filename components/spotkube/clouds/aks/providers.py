"""AKS: the Azure resource provider namespaces a stack's program needs registered in the subscription.

A subscription must register a namespace (`Microsoft.ContainerService`) before anything of it can be
created there, and the deploy identity, which holds roles on resource groups only, can't register one:
the first `up` fails with `MissingSubscriptionRegistration`. The namespaces follow from the program's
registered type tokens through the table of Azure resource types in clouds/aks/identities.py, so a
new resource type is covered as soon as its permissions are: one list, which `spotkube doctor` checks
live and the bootstrap registers. Pure module: no Pulumi, no SDK.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spotkube.clouds.aks.identities import NO_AZURE_CALL_PREFIXES, QUOTA_ACTIONS, RESOURCE_TYPES

#: Namespaces every subscription has registered from the start, which can't be unregistered
#: (learn.microsoft.com/azure/azure-resource-manager/management/resource-providers-and-types:
#: "registered by default"); they need no check.
ALWAYS_REGISTERED = frozenset({"Microsoft.Resources", "Microsoft.Authorization"})


@dataclass(frozen=True)
class Namespaces:
    """The namespaces a program needs, and the registered types whose namespace spotkube doesn't know."""

    needed: tuple[str, ...]
    unknown_types: tuple[str, ...]


def namespace(arm_type: str) -> str:
    """`Microsoft.ContainerService/managedClusters/agentPools` -> `Microsoft.ContainerService`."""
    return arm_type.split("/", 1)[0]


def needed_namespaces(type_tokens: Iterable[str]) -> Namespaces:
    """The namespaces of the Azure resources the program registers (sorted), plus Microsoft.Compute,
    which the cluster's node pools run on and `spotkube quota` reads; the ones registered by default
    are left out."""
    needed = {namespace(action) for action in QUOTA_ACTIONS}
    unknown = set()
    for token in type_tokens:
        if token.startswith(NO_AZURE_CALL_PREFIXES):
            continue
        if token in RESOURCE_TYPES:
            needed.add(namespace(RESOURCE_TYPES[token][0]))
        else:
            unknown.add(token)
    return Namespaces(tuple(sorted(needed - ALWAYS_REGISTERED)), tuple(sorted(unknown)))


def register_command(name: str, subscription: str) -> str:
    """What an administrator runs (registering needs `Microsoft.<namespace>/register/action` on the subscription)."""
    return f"az provider register --namespace {name} --subscription {subscription} --wait"
