"""AKS: the Azure resource provider namespaces a subscription must have registered for a first run.

Azure answers a write under a namespace the subscription has not registered with
`MissingSubscriptionRegistration`, and registering needs `*/register/action` on the subscription,
which no CI identity holds (the deployer's roles stop at its resource groups). So the bootstrap, run
by an administrator at subscription scope, registers them, and `spotkube doctor` checks them live.
The namespaces are derived from the ARM types of clouds/aks/identities.py's `RESOURCE_TYPES` (an ARM type's
first segment is its namespace), plus the bootstrap's own types and a short table of the rest, each with
its reason. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spotkube.clouds.aks.identities import NO_AZURE_CALL_PREFIXES, RESOURCE_TYPES
from spotkube.platform.records import record

#: Namespaces Azure registers in every subscription (learn.microsoft.com/azure/azure-resource-manager/
#: management/resource-providers-and-types, "registered by default"); registering them is never needed.
REGISTERED_BY_DEFAULT = frozenset({"Microsoft.Authorization", "Microsoft.Resources"})

#: Namespaces used beyond the ARM types the program registers: namespace -> why.
CALLED_BEYOND_TYPES: Mapping[str, str] = {
    "Microsoft.Compute": "the nodes' VM scale sets (AKS makes them in the node resource group), `spotkube quota` "
                         "(usages and SKUs) and drill.yml's `az vmss simulate-eviction`",
    "Microsoft.Network": "the nodes' virtual network, load balancer and public IPs, which AKS makes in the node "
                         "resource group",
}
#: The ARM types of what the bootstrap itself registers (clouds/aks/bootstrap.py), by azure-native token.
BOOTSTRAP_TYPES: Mapping[str, str] = {
    "azure-native:managedidentity:UserAssignedIdentity": "Microsoft.ManagedIdentity/userAssignedIdentities",
    "azure-native:managedidentity:FederatedIdentityCredential":
        "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
    "azure-native:authorization:RoleDefinition": "Microsoft.Authorization/roleDefinitions",
    "azure-native:keyvault:Vault": "Microsoft.KeyVault/vaults",
    "azure-native:keyvault:Key": "Microsoft.KeyVault/vaults/keys",
    "azure-native:storage:StorageAccount": "Microsoft.Storage/storageAccounts",
    "azure-native:storage:BlobContainer": "Microsoft.Storage/storageAccounts/blobServices/containers",
}


@record
class Namespaces:
    """The namespaces a program needs, and the registered types whose namespace spotkube doesn't know."""

    needed: tuple[str, ...]
    unknown_types: tuple[str, ...]


def namespace(arm_type: str) -> str:
    """An ARM type's namespace: `Microsoft.ContainerService/managedClusters` -> `Microsoft.ContainerService`."""
    return arm_type.split("/", 1)[0]


def _arm_types() -> dict[str, str]:
    return {**{token: arm for token, (arm, _) in RESOURCE_TYPES.items()}, **BOOTSTRAP_TYPES}


def namespaces_of(type_tokens: Iterable[str]) -> dict[str, str | None]:
    """Each azure-native type token's namespace; None for a type neither table has."""
    arm_types = _arm_types()
    return {token: namespace(arm_types[token]) if token in arm_types else None
            for token in type_tokens if token.startswith("azure-native:")}


def required_namespaces() -> tuple[str, ...]:
    """Every namespace the bootstrap registers: those of every type the program and the bootstrap can register
    and those called beyond them, less the ones Azure registers by default; sorted."""
    derived = {namespace(arm) for arm in _arm_types().values()} | set(CALLED_BEYOND_TYPES)
    return tuple(sorted(derived - REGISTERED_BY_DEFAULT))


def needed_namespaces(type_tokens: Iterable[str]) -> Namespaces:
    """The namespaces one program's registered types need (sorted), with those called beyond its types; the
    ones registered by default are left out, and a type spotkube has no ARM type for is named, not dropped."""
    arm_types = _arm_types()
    needed = set(CALLED_BEYOND_TYPES)
    unknown = set()
    for token in type_tokens:
        if token.startswith(NO_AZURE_CALL_PREFIXES):
            continue
        if token in arm_types:
            needed.add(namespace(arm_types[token]))
        else:
            unknown.add(token)
    return Namespaces(tuple(sorted(needed - REGISTERED_BY_DEFAULT)), tuple(sorted(unknown)))


def register_command(name: str, subscription: str) -> str:
    """What an administrator runs (registering needs `Microsoft.<namespace>/register/action` on the subscription)."""
    return f"az provider register --namespace {name} --subscription {subscription} --wait"
