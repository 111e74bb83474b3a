"""AKS: the Azure permissions the preview and the deploy call, and the roles each CI identity gets.

The calls follow from what the program registers and invokes:
- `pulumi preview` invokes `listManagedClusterUserCredentials` for the provider's kubeconfig once the
  cluster exists: the action `.../managedClusters/listClusterUserCredential/action`, which Reader
  (`*/read`) lacks.
- pulumi-kubernetes, previewing a change to an object, reads the live object before its server-side
  dry run (pulumi-kubernetes `provider/pkg/await/await.go`, `Update`): a data action on the cluster,
  `.../managedClusters/<group>/<resource>/read`, under Azure RBAC for Kubernetes. The dry run itself
  is a write, and a preview identity may not write: the provider answers a forbidden dry run by
  previewing from its state (`provider.go`: "unable to compute Server-side dry-run and defaulting to
  client-side"), so the preview works and shows the change, without the API server's own check.
- `pulumi refresh` (and `preview --refresh`) reads every Azure resource: `*/read`.
- `spotkube quota` reads the subscription's usages and SKUs.

Secrets are read by nobody but the deployer: KFP's Secrets hold its database password and object
store keys, and anyone who can push a branch runs code as the preview identity. pulumi-kubernetes
previews a Secret it may not read from its state, like a forbidden dry run.

Pure module: no Pulumi. The calls and roles, as tables: docs/identities.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spotkube.clouds.aks import checkpoints, supply
from spotkube.clouds.aks.catalog import RBAC_CLUSTER_ADMIN_ROLE_ID
from spotkube.clouds.aks.resources import DRILL_ROLE_ID
from spotkube.clouds.aks.spec import AksSpec
from spotkube.platform.cloud import mapping
from spotkube.platform.identities import (
    QUOTA,
    REFRESH,
    UNMAPPED,
    Assignment,
    Call,
    Identity,
    IdentityFacts,
    Invoked,
    KubernetesKind,
    Registered,
    Role,
    kind_preview_call,
    kubernetes_kinds,
    sorted_calls,
)

SUBSCRIPTION = "subscription"
RESOURCE_GROUP = "resource group"
CLUSTER = "cluster"
#: The group AKS makes for the nodes' scale sets (`MC_...`), outside the cluster's own group.
NODE_RESOURCE_GROUP = "node resource group"
#: Each registry of `cluster.registries`, which may live in any group or subscription.
REGISTRY = "registry"
#: The resource group of a pool's capacity reservation group (the cluster's own, for a group the stack
#: creates): AKS requires the cluster identity to hold Contributor there.
RESERVATION_GROUP = "capacity reservation group's resource group"
#: Every scope an assignment at a scope reaches: Azure role assignments are inherited downwards.
COVERS: dict[str, frozenset[str]] = {
    SUBSCRIPTION: frozenset({SUBSCRIPTION, RESOURCE_GROUP, CLUSTER, NODE_RESOURCE_GROUP}),
    RESOURCE_GROUP: frozenset({RESOURCE_GROUP, CLUSTER}),
    CLUSTER: frozenset({CLUSTER}),
    NODE_RESOURCE_GROUP: frozenset({NODE_RESOURCE_GROUP}),
    REGISTRY: frozenset({REGISTRY}),
    RESERVATION_GROUP: frozenset({RESERVATION_GROUP}),
}
SIMULATE_EVICTION = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/simulateEviction/action"
DATA_PLANE = "Microsoft.ContainerService/managedClusters"

#: azure-native type token -> (ARM resource type, the scope its writes need).
RESOURCE_TYPES: dict[str, tuple[str, str]] = {
    "azure-native:resources:ResourceGroup": ("Microsoft.Resources/subscriptions/resourceGroups", SUBSCRIPTION),
    "azure-native:containerservice:ManagedCluster": ("Microsoft.ContainerService/managedClusters", RESOURCE_GROUP),
    "azure-native:containerservice:AgentPool": ("Microsoft.ContainerService/managedClusters/agentPools",
                                                RESOURCE_GROUP),
    "azure-native:authorization:RoleAssignment": ("Microsoft.Authorization/roleAssignments", CLUSTER),
    "azure-native:containerservice:MaintenanceConfiguration": (
        "Microsoft.ContainerService/managedClusters/maintenanceConfigurations", RESOURCE_GROUP),
    # Container Insights (clouds/aks/logs.py): the workspace and the data collection rule in the
    # cluster's group, and the rule's association, an extension resource on the cluster itself.
    "azure-native:operationalinsights:Workspace": ("Microsoft.OperationalInsights/workspaces", RESOURCE_GROUP),
    "azure-native:monitor:DataCollectionRule": ("Microsoft.Insights/dataCollectionRules", RESOURCE_GROUP),
    "azure-native:monitor:DataCollectionRuleAssociation": ("Microsoft.Insights/dataCollectionRuleAssociations",
                                                           CLUSTER),
    # Capacity reservations (clouds/aks/supply.py): the cluster's user-assigned identity, and the group with
    # its reservations, in the cluster's group.
    "azure-native:managedidentity:UserAssignedIdentity": ("Microsoft.ManagedIdentity/userAssignedIdentities",
                                                          RESOURCE_GROUP),
    "azure-native:compute:CapacityReservationGroup": ("Microsoft.Compute/capacityReservationGroups", RESOURCE_GROUP),
    "azure-native:compute:CapacityReservation": ("Microsoft.Compute/capacityReservationGroups/capacityReservations",
                                                 RESOURCE_GROUP),
    # The training checkpoint store (clouds/aks/checkpoints.py), in the cluster's group.
    "azure-native:storage:StorageAccount": ("Microsoft.Storage/storageAccounts", RESOURCE_GROUP),
    "azure-native:storage:BlobContainer": ("Microsoft.Storage/storageAccounts/blobServices/containers",
                                           RESOURCE_GROUP),
}
#: Giving the cluster a user-assigned identity is an action on the identity (Azure's linked access check).
ASSIGN_IDENTITY = "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action"
#: azure-native function token -> (the action it needs, its scope).
INVOKES: dict[str, tuple[str, str]] = {
    "azure-native:containerservice:listManagedClusterUserCredentials": (
        "Microsoft.ContainerService/managedClusters/listClusterUserCredential/action", RESOURCE_GROUP),
}
#: Registered types that call no Azure API: components, providers, and resources of other providers.
NO_AZURE_CALL_PREFIXES = ("spotkube:", "pulumi:", "kubernetes:", "random:", "time:")
#: What `spotkube quota` reads (clouds/aks/usage_api.py).
QUOTA_ACTIONS = ("Microsoft.Compute/locations/usages/read", "Microsoft.Compute/skus/read")
EVERY_PREVIEW = "every preview and deploy of an existing cluster (the provider's kubeconfig)"


def _assignment_scope(registration: Registered, drill_scope: str = NODE_RESOURCE_GROUP) -> str:
    """Where a role assignment the program registers lives: AcrPull on a registry, Contributor on a
    capacity reservation group's resource group, the drill's role on the node resource group (the
    preview's reading of it is counted on the cluster, `drill_scope`), the checkpoint store's on its
    container in the cluster's group, the rest on the cluster."""
    role = str(registration.inputs.get("roleDefinitionId") or "")
    for role_id, scope in ((supply.ACR_PULL_ROLE_ID, REGISTRY), (supply.CONTRIBUTOR_ROLE_ID, RESERVATION_GROUP),
                           (DRILL_ROLE_ID, drill_scope), (checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID, RESOURCE_GROUP)):
        if role.endswith(f"/{role_id}"):
            return scope
    return CLUSTER


def _identity_calls(registrations: Sequence[Registered]) -> list[Call]:
    """A cluster that runs as a user-assigned identity (capacity reservations) is given it by the deployer."""
    return [Call("deploy", "give the cluster its user-assigned identity", ASSIGN_IDENTITY, "action", RESOURCE_GROUP,
                 "pulumi up") for r in registrations if r.type == "azure-native:containerservice:ManagedCluster"
            and str(mapping(r.inputs.get("identity")).get("type")) == "UserAssigned"]


def _unmapped(type_token: str) -> str:
    """The permission of a type spotkube has no row for: no role allows it, so the tests name it."""
    return f"{UNMAPPED} for {type_token}; add it to clouds/aks/identities.py)"


def data_action(kind: KubernetesKind, verb: str) -> str:
    """Azure RBAC for Kubernetes' name of a verb on a kind: `.../managedClusters/apps/deployments/read`."""
    group = f"{kind.group}/" if kind.group else ""
    return f"{DATA_PLANE}/{group}{kind.plural}/{verb}"


def _invoke_and_quota_calls(who: Identity, invokes: Iterable[Invoked]) -> list[Call]:
    """The provider functions the program invokes, and `spotkube quota`'s reads, which the preview and the
    deploy both make."""
    invokes = list(invokes)
    calls = [Call(who, f"invoke {token.rsplit(':', 1)[-1]}", action, "action", scope, EVERY_PREVIEW)
             for token, (action, scope) in INVOKES.items() if any(i.token == token for i in invokes)]
    calls += [Call(who, f"invoke {i.token}", _unmapped(i.token), "action", RESOURCE_GROUP, EVERY_PREVIEW)
              for i in invokes if i.token not in INVOKES]
    return calls + [Call(who, "read the region's quota", action, "action", SUBSCRIPTION, QUOTA)
                    for action in QUOTA_ACTIONS]


def preview_calls(registrations: Sequence[Registered], invokes: Iterable[Invoked]) -> list[Call]:
    """What a pull request's preview (and its quota check) calls."""
    calls = _invoke_and_quota_calls("preview", invokes)
    for registration in registrations:
        if registration.type.startswith(NO_AZURE_CALL_PREFIXES):
            continue
        arm, _ = RESOURCE_TYPES.get(registration.type, (None, RESOURCE_GROUP))
        permission = f"{arm}/read" if arm else _unmapped(registration.type)
        assignment = registration.type.endswith(":RoleAssignment")
        scope = _assignment_scope(registration, drill_scope=CLUSTER) if assignment else RESOURCE_GROUP
        calls.append(Call("preview", f"read {registration.type.rsplit(':', 1)[-1]}", permission, "action", scope,
                          REFRESH))
    for kind in kubernetes_kinds(registrations):
        calls.append(kind_preview_call(kind, data_action(kind, "read"), "dataAction", CLUSTER))
    return list(sorted_calls(calls))


def deploy_calls(registrations: Sequence[Registered], invokes: Iterable[Invoked]) -> list[Call]:
    """What `pulumi up` (and the quota check before it) calls."""
    calls = _invoke_and_quota_calls("deploy", invokes)
    for registration in registrations:
        if registration.type.startswith(NO_AZURE_CALL_PREFIXES):
            continue
        name = registration.type.rsplit(":", 1)[-1]
        if registration.type not in RESOURCE_TYPES:
            calls.append(Call("deploy", f"create {name}", _unmapped(registration.type), "action", RESOURCE_GROUP,
                              "pulumi up"))
            continue
        arm, scope = RESOURCE_TYPES[registration.type]
        if registration.type.endswith(":RoleAssignment"):
            scope = _assignment_scope(registration)
        calls += [Call("deploy", f"{verb} {name}", f"{arm}/{operation}", "action", scope, when)
                  for verb, operation, when in (("read", "read", "pulumi up, refresh"),
                                                ("create or update", "write", "pulumi up"),
                                                ("delete", "delete", "pulumi up, destroy"))]
    for kind in kubernetes_kinds(registrations):
        calls += [Call("deploy", f"{verb} {kind.kind}", data_action(kind, operation), "dataAction", CLUSTER,
                       "pulumi up")
                  for verb, operation in (("get", "read"), ("apply", "write"), ("delete", "delete"))]
        if kind.group == "rbac.authorization.k8s.io" and kind.kind in ("Role", "ClusterRole"):
            calls += [Call("deploy", f"{verb} {kind.kind}", data_action(kind, f"{verb}/action"), "dataAction",
                           CLUSTER, "pulumi up (Kubernetes checks a role's rules against the deployer's)")
                      for verb in ("bind", "escalate")]
    calls += _identity_calls(registrations)
    return list(sorted_calls(calls))


# --- The roles: built-in ones as far as spotkube relies on them, and the two it defines -------------

READER = Role("Reader", "acdd72a7-3385-48ef-bd42-f606fba81ae7", actions=("*/read",))
CLUSTER_USER = Role("Azure Kubernetes Service Cluster User Role", "4abbcc35-e782-43d8-92c5-2d3f1bd2253f",
                    actions=("Microsoft.ContainerService/managedClusters/listClusterUserCredential/action",))
RBAC_READER = Role("Azure Kubernetes Service RBAC Reader", "7f6c6a51-bcf8-42ba-9220-52d62157d7db",
                   data_actions=tuple(f"{DATA_PLANE}/{resource}/read" for resource in (
                       "apps/controllerrevisions", "apps/daemonsets", "apps/deployments", "apps/replicasets",
                       "apps/statefulsets", "autoscaling/horizontalpodautoscalers", "batch/cronjobs", "batch/jobs",
                       "configmaps", "discovery.k8s.io/endpointslices", "endpoints", "events.k8s.io/events",
                       "events", "extensions/daemonsets", "extensions/deployments", "extensions/ingresses",
                       "extensions/networkpolicies", "extensions/replicasets", "limitranges",
                       "metrics.k8s.io/pods", "metrics.k8s.io/nodes", "namespaces", "networking.k8s.io/ingresses",
                       "networking.k8s.io/networkpolicies", "persistentvolumeclaims", "pods",
                       "policy/poddisruptionbudgets", "replicationcontrollers", "resourcequotas", "serviceaccounts",
                       "services")))
CONTRIBUTOR = Role("Contributor", "b24988ac-6180-42a0-ab88-20f7382dd24c", actions=("*",),
                   not_actions=("Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write",
                                "Microsoft.Authorization/elevateAccess/Action"))
RBAC_ADMINISTRATOR = Role("Role Based Access Control Administrator", "f58310d9-a9f6-439a-9e8d-f62e7b41a168",
                          actions=("Microsoft.Authorization/roleAssignments/write",
                                   "Microsoft.Authorization/roleAssignments/delete", "*/read"))
RBAC_CLUSTER_ADMIN = Role("Azure Kubernetes Service RBAC Cluster Admin", RBAC_CLUSTER_ADMIN_ROLE_ID,
                          actions=("Microsoft.ContainerService/managedClusters/listClusterUserCredential/action",),
                          data_actions=(f"{DATA_PLANE}/*",))
#: What the preview reads that RBAC Reader does not grant, Secrets excepted: Kubeflow's CRDs, RBAC
#: objects and PriorityClass; Kueue's and Kubeflow Trainer's webhooks, Kueue's visibility APIService, its queue
#: objects and the training runtimes. Data actions as Azure lists them for managed clusters
#: (learn.microsoft.com/azure/role-based-access-control/permissions/containers). tests check it is
#: exactly what the shipped stacks' previews need beyond RBAC Reader.
PREVIEW_READER = Role(
    "spotkube preview reader", "", custom=True,
    description="Reads the Kubernetes objects spotkube applies that Azure Kubernetes Service RBAC Reader does not "
    "cover (Secrets excepted), for pull-request previews.",
    data_actions=tuple(f"{DATA_PLANE}/{resource}/read" for resource in (
        "admissionregistration.k8s.io/mutatingwebhookconfigurations",
        "admissionregistration.k8s.io/validatingwebhookconfigurations",
        "apiextensions.k8s.io/customresourcedefinitions", "apiregistration.k8s.io/apiservices",
        "kueue.x-k8s.io/clusterqueues", "kueue.x-k8s.io/localqueues", "kueue.x-k8s.io/resourceflavors",
        "rbac.authorization.k8s.io/clusterrolebindings", "rbac.authorization.k8s.io/clusterroles",
        "rbac.authorization.k8s.io/rolebindings", "rbac.authorization.k8s.io/roles",
        "scheduling.k8s.io/priorityclasses", "trainer.kubeflow.org/clustertrainingruntimes")))
QUOTA_READER = Role("spotkube quota reader", "", custom=True, actions=QUOTA_ACTIONS,
                    description="Reads the subscription's compute quota and VM sizes, for `spotkube quota`.")
def only_roles(role_ids: Iterable[str]) -> str:
    """The ABAC condition that lets an identity assign (and remove) the given roles only, in the form of
    Microsoft's "Constrain roles" example (learn.microsoft.com/azure/role-based-access-control/
    delegate-role-assignments-examples): one condition per assignment, since Azure keeps one assignment
    per principal, role and scope (a second is `RoleAssignmentExists`)."""
    guids = ", ".join(sorted({role_id.lower() for role_id in role_ids}))
    role = "Microsoft.Authorization/roleAssignments:RoleDefinitionId] ForAnyOfAnyValues:GuidEquals"
    return ("((!(ActionMatches{'Microsoft.Authorization/roleAssignments/write'})) OR "
            f"(@Request[{role} {{{guids}}})) AND "
            "((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'})) OR "
            f"(@Resource[{role} {{{guids}}}))")


_CONSTRAINED = re.compile(r"@(Request|Resource)\[Microsoft\.Authorization/roleAssignments:RoleDefinitionId\] "
                          r"ForAnyOfAnyValues:GuidEquals ?\{([^}]*)\}")


def allowed_roles(condition: str) -> frozenset[str]:
    """The role ids a condition of `only_roles`' form lets its holder assign; a condition that constrains
    writes and deletes differently, or isn't of that form, allows none (nothing is assumed)."""
    found: dict[str, frozenset[str]] = {}
    for source, guids in _CONSTRAINED.findall(condition):
        found[source] = frozenset(g.strip().lower() for g in guids.split(",") if g.strip())
    if set(found) != {"Request", "Resource"} or found["Request"] != found["Resource"] or only_roles(
            found["Request"]) != condition:
        return frozenset()
    return found["Request"]


#: The ABAC condition that lets the deployer assign one role only, RBAC Cluster Admin (to itself and the
#: admin groups); at a stack's resource group the bootstrap widens it to the roles that stack assigns
#: there (Contributor for a reservation group it creates, AcrPull for a registry in it).
ONLY_RBAC_CLUSTER_ADMIN = only_roles([RBAC_CLUSTER_ADMIN_ROLE_ID])

#: `az vmss simulate-eviction` on a spot node, for `spotkube drill --run` (drill.yml); nothing else.
EVICTION_DRILL = Role(
    "spotkube eviction drill", DRILL_ROLE_ID, custom=True, actions=(SIMULATE_EVICTION,),
    description="Evicts a spot VM scale set instance as Azure does when it reclaims capacity, for spotkube's "
    "eviction drill.")
#: The ABAC condition that lets the deployer assign the eviction drill role only (on a cluster's node
#: resource group, which exists only once the cluster does).
ONLY_EVICTION_DRILL = only_roles([DRILL_ROLE_ID])


#: Who grants the rights a stack's registries and reservation groups need: they live where the bootstrap
#: has no say (any group, any subscription), so whoever owns them grants the CI identities there.
REGISTRY_OWNER = "the registry's owner (stacks with cluster.registries)"
RESERVATION_OWNER = "the group's owner (stacks with a capacityReservationGroup)"

ASSIGNMENTS: tuple[Assignment, ...] = (
    Assignment("preview", READER, RESOURCE_GROUP, "reads the cluster, its pools and role assignments on refresh"),
    Assignment("preview", CLUSTER_USER, RESOURCE_GROUP, "lists the cluster's user kubeconfig, which every preview of "
               "an existing cluster does; Reader's */read doesn't cover this action"),
    Assignment("preview", RBAC_READER, RESOURCE_GROUP, "reads most Kubernetes objects the program applies (no "
               "Secrets, no RBAC objects, no CRDs)"),
    Assignment("preview", PREVIEW_READER, RESOURCE_GROUP, "reads the rest of them, Secrets excepted"),
    Assignment("preview", QUOTA_READER, SUBSCRIPTION, "reads the quota for the pull request's comment"),
    Assignment("deploy", CONTRIBUTOR, RESOURCE_GROUP, "creates, updates and deletes the cluster and its pools"),
    Assignment("deploy", RBAC_ADMINISTRATOR, RESOURCE_GROUP, "creates the deployer's and the admin groups' role "
               "assignments on the cluster, and the roles the stack grants in its own group: Contributor for a "
               "capacity reservation group it creates, AcrPull for a registry there; one assignment whose condition "
               "names every one of them", condition=ONLY_RBAC_CLUSTER_ADMIN),
    Assignment("deploy", QUOTA_READER, SUBSCRIPTION, "reads the quota before pulumi up"),
    Assignment("deploy", RBAC_CLUSTER_ADMIN, CLUSTER, "applies the Kubernetes objects: the program grants it to "
               "cluster.deployer.objectId, then waits for it to apply", granted_by="the program"),
    Assignment("deploy", RBAC_ADMINISTRATOR, SUBSCRIPTION, "grants the eviction drill role on the node resource "
               "group, and no other role (only when a stack sets cluster.deployer.drills)",
               condition=ONLY_EVICTION_DRILL, drills_only=True),
    Assignment("deploy", EVICTION_DRILL, NODE_RESOURCE_GROUP, "evicts a spot node for spotkube drill (drill.yml): "
               "the program grants it to cluster.deployer.objectId when the stack sets cluster.deployer.drills",
               granted_by="the program", drills_only=True),
    Assignment("preview", READER, REGISTRY, "reads the kubelet identity's AcrPull assignment on refresh",
               granted_by=REGISTRY_OWNER),
    Assignment("deploy", RBAC_ADMINISTRATOR, REGISTRY, "grants the kubelet identity AcrPull on the registry, and no "
               "other role", condition=only_roles([supply.ACR_PULL_ROLE_ID]), granted_by=REGISTRY_OWNER),
    Assignment("preview", READER, RESERVATION_GROUP, "reads the cluster identity's Contributor assignment on refresh",
               granted_by=RESERVATION_OWNER),
    Assignment("deploy", RBAC_ADMINISTRATOR, RESERVATION_GROUP, "grants the cluster's user-assigned identity "
               "Contributor there, which AKS requires to place a pool's VMs in a capacity reservation group, and no "
               "other role", condition=only_roles([supply.CONTRIBUTOR_ROLE_ID]), granted_by=RESERVATION_OWNER),
)


FACTS = IdentityFacts(preview_calls, deploy_calls, ASSIGNMENTS, COVERS)


def read_role(definition: Mapping[str, Any]) -> Role:
    """A role from Azure's JSON (`az role definition list`, the built-in roles pages)."""
    permissions = list(definition.get("permissions") or [])

    def joined(key: str) -> tuple[str, ...]:
        return tuple(p for block in permissions for p in block.get(key) or ())
    return Role(name=definition["roleName"], id=definition["name"], actions=joined("actions"),
                not_actions=joined("notActions"), data_actions=joined("dataActions"),
                not_data_actions=joined("notDataActions"), custom=definition.get("roleType") != "BuiltInRole",
                description=str(definition.get("description", "")))


def grants_in_group(spec: AksSpec, subscription_id: str) -> frozenset[str]:
    """The roles a stack's program assigns inside its own resource group (which the bootstrap creates and
    scopes the deployer's RBAC Administrator to): RBAC Cluster Admin on the cluster, Contributor for a
    capacity reservation group it creates (AKS wants it on the group's resource group, the stack's own) or
    one reserved in that group, AcrPull for a registry there, Storage Blob Data Contributor on the checkpoint
    store's container. A grant anywhere else is its owner's."""
    group = f"/subscriptions/{subscription_id}/resourceGroups/{spec.cluster.resource_group_name}".lower()

    def inside(arm_id: str) -> bool:
        return (supply.resource_group_id(arm_id) or "").lower() == group

    roles = {RBAC_CLUSTER_ADMIN_ROLE_ID}
    for pool in supply.reserved_pools(spec):
        reservation = pool.capacity_reservation_group
        if reservation is not None and (reservation.id is None or inside(reservation.id)):
            roles.add(supply.CONTRIBUTOR_ROLE_ID)
    roles |= {supply.ACR_PULL_ROLE_ID for registry in spec.cluster.registries if inside(registry)}
    if spec.training.checkpoint_store is not None:  # the store's account lives in the stack's own group
        roles.add(checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID)
    return frozenset(roles)
