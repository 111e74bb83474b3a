"""AKS GPU supply: capacity reservation groups on on-demand GPU pools, AcrPull grants on the stack's
registries, and artifact streaming, both ways (the rules and inputs the component sends, and how the
plan and the cost read them back).

Why: an on-demand fallback is only certain when Azure holds capacity for it, and a reservation is
billed whether nodes run or not, so the plan shows it as a fixed cost; a step on a fresh node pulls
its image with the kubelet identity, which needs AcrPull on the registry or the step ends in
ImagePullBackOff. The facts (learn.microsoft.com/azure/aks/use-capacity-reservation-groups and
artifact-streaming, read 2026-11-27): AKS needs a user-assigned cluster identity with Contributor on
the resource group that holds the group (system-assigned identities don't work); a reservation holds
one VM size in one zone, or in the region; associating a group with an existing pool is preview, so
the pool is replaced instead; artifact streaming is preview, Premium ACR only.

Pure module: no Pulumi.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from spotkube.clouds.aks.spec import AksGpuPool, AksSpec
from spotkube.platform import contract
from spotkube.platform.cloud import RuleOutput, items, mapping, whole
from spotkube.platform.cost.fixed import FixedItem
from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.posture import Setting
from spotkube.platform.spec import config_key

AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
ROLE_ASSIGNMENT_TYPE = "azure-native:authorization:RoleAssignment"
RESERVATION_GROUP_TYPE = "azure-native:compute:CapacityReservationGroup"
RESERVATION_TYPE = "azure-native:compute:CapacityReservation"
IDENTITY_TYPE = "azure-native:managedidentity:UserAssignedIdentity"
#: What Azure can't change on a reservation (only its quantity), so the component replaces it instead.
RESERVATION_CREATE_ONLY = ("sku.name",)
#: Built-in role ids (learn.microsoft.com/azure/role-based-access-control/built-in-roles): AcrPull lets
#: the kubelet identity pull images; Contributor on the group's resource group is what AKS requires of
#: the cluster identity to place a pool's VMs in a capacity reservation group.
ACR_PULL_ROLE_ID = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
CONTRIBUTOR_ROLE_ID = "b24988ac-6180-42a0-ab88-20f7382dd24c"
#: ARM ids: a registry's name is 5-50 letters and digits; a capacity reservation group's 1-80 letters,
#: digits, hyphens, periods and underscores.
REGISTRY_ID = re.compile(r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[-\w.()]{1,90}/providers/"
                         r"Microsoft\.ContainerRegistry/registries/[A-Za-z0-9]{5,50}$")
RESERVATION_GROUP_ID = re.compile(r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[-\w.()]{1,90}/providers/"
                                  r"Microsoft\.Compute/capacityReservationGroups/[-\w.]{1,80}$")
REGISTRY_SHAPE = "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ContainerRegistry/registries/<name>"
RESERVATION_GROUP_SHAPE = ("/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Compute/"
                           "capacityReservationGroups/<name>")
#: The API property artifact streaming needs, which no API version of the installed SDK has.
STREAMING_PROPERTY = "artifactStreamingProfile"
#: What the plan says a registered group is when the stack did not create it.
OUTSIDE = "reserved outside this stack"


def rules(spec: AksSpec) -> RuleOutput:
    """Reservations on on-demand pools only, in one of two forms; registries and groups by their ARM
    ids; artifact streaming refused with what it needs."""
    registries = spec.cluster.registries
    for i, registry in enumerate(registries):
        if not REGISTRY_ID.fullmatch(registry):
            yield Problem(config_key(f"cluster.registries[{i}]"), f"{shown(registry)} is not an Azure Container "
                          f"Registry resource id; use {REGISTRY_SHAPE} (az acr show -n <name> --query id -o tsv)")
        elif registry in registries[:i]:
            yield Problem(config_key(f"cluster.registries[{i}]"), f"{shown(registry)} is listed twice; list each "
                          "registry once")
    for i, pool in enumerate(spec.gpu_pools):
        yield from _reservation_rules(f"gpuPools[{i}].capacityReservationGroup", pool)
        if pool.artifact_streaming:
            needs = "" if registries else (" It also needs a Premium ACR in cluster.registries (AKS streams from "
                                           "ACR only), which this stack lists none of.")
            yield Problem(config_key(f"gpuPools[{i}].artifactStreaming"), "true needs the AgentPool's "
                          f"{STREAMING_PROPERTY} (AKS preview), which no API version of the installed "
                          "pulumi-azure-native has; remove it (or set false) until spotkube ships an SDK with it."
                          + needs)


def _reservation_rules(path: str, pool: AksGpuPool) -> RuleOutput:
    reservation = pool.capacity_reservation_group
    if reservation is None:
        return
    if pool.capacity != "on-demand":
        yield Problem(config_key(path), f"applies to on-demand pools only: a capacity reservation holds "
                      f"on-demand capacity and {pool.capacity} VMs never use it; remove it, or set capacity: "
                      "on-demand")
        return
    if (reservation.id is None) == (reservation.create is None):
        yield Problem(config_key(path), "needs exactly one of id (an existing group's resource id) and create: "
                      "{count: N} (a group this stack creates)")
        return
    if reservation.id is not None and not RESERVATION_GROUP_ID.fullmatch(reservation.id):
        yield Problem(config_key(f"{path}.id"), f"{shown(reservation.id)} is not a capacity reservation group's "
                      f"resource id; use {RESERVATION_GROUP_SHAPE} (az capacity reservation group show --query id)")
    if reservation.create is not None and reservation.create.count > pool.max:
        yield Problem(config_key(f"{path}.create.count"), f"{reservation.create.count} reserves more VMs per zone "
                      f"than the pool's max ({pool.max}) can ever run, and each is billed; use at most {pool.max}")


def reserved_pools(spec: AksSpec) -> list[AksGpuPool]:
    """The GPU pools placed in a capacity reservation group."""
    return [pool for pool in spec.gpu_pools if pool.capacity_reservation_group is not None]


def resource_group_id(arm_id: str) -> str | None:
    """`/subscriptions/<s>/resourceGroups/<g>` of a resource's ARM id; None when it is not one."""
    match = re.match(r"^(/subscriptions/[^/]+/resourceGroups/[^/]+)(/|$)", arm_id, flags=re.IGNORECASE)
    return match[1] if match else None


def group_name(component: str, pool: AksGpuPool) -> str:
    """The name of the group the stack creates for a pool: fixed, so the plan and the cost can tell a
    group of this stack from one reserved outside it."""
    return f"{component}-{pool.name}-crg"


def reservation_group_inputs(component: str, pool: AksGpuPool, region: str, resource_group_name: Any) -> dict[str, Any]:
    """A capacity reservation group in the pool's zones (none: a regional group)."""
    return {"resource_group_name": resource_group_name, "location": region,
            "capacity_reservation_group_name": group_name(component, pool), "zones": list(pool.zones) or None}


def reservations_inputs(component: str, pool: AksGpuPool, region: str,
                        resource_group_name: Any) -> dict[str, dict[str, Any]]:
    """One reservation of the pool's VM size per zone (a reservation holds one zone, or the region), by
    reservation name; `count` VMs each."""
    create = pool.capacity_reservation_group.create if pool.capacity_reservation_group else None
    assert create is not None, "only for a group the stack creates"
    zones: Sequence[str | None] = pool.zones or (None,)
    return {f"{pool.name}-{'z' + zone if zone else 'regional'}": {
        "resource_group_name": resource_group_name, "location": region,
        "capacity_reservation_group_name": group_name(component, pool),
        "capacity_reservation_name": f"{pool.name}-{'z' + zone if zone else 'regional'}",
        "sku": {"name": pool.machine, "capacity": create.count},
        "zones": [zone] if zone else None,
    } for zone in zones}


# --- Reading back what the program registered ----------------------------------------------------

Registered = Sequence[tuple[str, str, Mapping[str, Any]]]


def _created_groups(registered: Registered) -> dict[str, list[Mapping[str, Any]]]:
    """Each group the stack creates, by name, with its reservations' inputs."""
    groups: dict[str, list[Mapping[str, Any]]] = {
        str(inputs.get("capacityReservationGroupName") or name): []
        for kind, name, inputs in registered if kind == RESERVATION_GROUP_TYPE}
    for kind, _, inputs in registered:
        if kind == RESERVATION_TYPE:
            groups.setdefault(str(inputs.get("capacityReservationGroupName")), []).append(inputs)
    return groups


def _pool_name(inputs: Mapping[str, Any], name: str) -> str:
    return str(inputs.get("agentPoolName") or name)


def _reservation_text(reservations: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for inputs in reservations:
        sku = mapping(inputs.get("sku"))
        zones = [str(z) for z in items(inputs.get("zones"))]
        where = f"zone {zones[0]}" if zones else "the region"
        parts.append(f"{whole(sku.get('capacity'))} × {sku.get('name')} in {where}")
    return ", ".join(parts) or "no reservation"


def reserved_nodes(registered: Registered) -> dict[str, int]:
    """The VMs the stack's own reservations hold for each pool (every zone's), by pool name; a group
    reserved outside the stack is left out, since what it holds is not in the program."""
    created = _created_groups(registered)
    out: dict[str, int] = {}
    for kind, name, inputs in registered:
        group = inputs.get("capacityReservationGroupID") if kind == AGENT_POOL_TYPE else None
        found = None if group is None else created.get(str(group).rsplit("/", 1)[-1])
        if found is not None:
            out[_pool_name(inputs, name)] = sum(whole(mapping(r.get("sku")).get("capacity")) for r in found)
    return out


#: A grant outside every scope the bootstrap manages: whoever owns the scope lets the deploy identity make it.
GRANTED_BY_OWNER = ("granted by its owner: the registry's owner lets the deploy identity assign AcrPull there "
                    "(docs/identities.md; spotkube doctor checks it)")


def _group_name(arm_id: str) -> str:
    """The resource group name of an ARM id, lower-cased; empty when it names none."""
    found = resource_group_id(arm_id)
    return found.rsplit("/", 1)[-1].lower() if found else ""


def read_supply(registered: Registered) -> list[Setting]:
    """Per pool, its capacity reservation group and artifact streaming; the kubelet identity's registry
    grants. What the plan shows in its GPU supply section."""
    created = _created_groups(registered)
    out: list[Setting] = []
    for kind, name, inputs in registered:
        if kind != AGENT_POOL_TYPE:
            continue
        pool = _pool_name(inputs, name)
        group = inputs.get("capacityReservationGroupID")
        if group is not None:
            found = created.get(str(group).rsplit("/", 1)[-1])
            value = (f"group created by this stack: {_reservation_text(found)}, billed whether used or not (a fixed "
                     "cost)" if found is not None else f"{group} ({OUTSIDE})")
            out.append(Setting(f"{pool}: capacity reservation", value))
        streaming = mapping(inputs.get(STREAMING_PROPERTY)).get("enabled")
        if streaming:
            out.append(Setting(f"{pool}: artifact streaming", "on (AKS preview)"))
        elif mapping(inputs.get("nodeLabels")).get(contract.ROLE_LABEL) == "gpu":
            out.append(Setting(f"{pool}: artifact streaming", "off: each node pulls whole images; AKS's "
                               "artifact streaming is preview, and no API version of the installed SDK has "
                               f"{STREAMING_PROPERTY}"))
    grants = sorted(str(inputs.get("scope")) for kind, _, inputs in registered
                    if kind == ROLE_ASSIGNMENT_TYPE and str(inputs.get("roleDefinitionId") or "").endswith(
                        f"/{ACR_PULL_ROLE_ID}"))
    # The cluster's group: the stack's own, where the bootstrap scopes the deployer's grants.
    own = {str(inputs.get("resourceGroupName") or "").lower() for kind, _, inputs in registered
           if kind == "azure-native:containerservice:ManagedCluster"}
    out += [Setting("registry grant", f"AcrPull for the kubelet identity (every pool's nodes) on {scope}; "
                    + ("the bootstrap lets the deploy identity make it (the stack's own group)"
                       if _group_name(scope) in own else GRANTED_BY_OWNER))
            for scope in grants]
    return sorted(out, key=lambda s: s.name)


def reservation_items(registered: Registered) -> list[FixedItem]:
    """A reservation is billed at its size's on-demand price whether VMs run in it or not: one line per
    reservation the stack creates; a pool's group reserved outside the stack is named, unpriced here."""
    out = []
    created = _created_groups(registered)
    for kind, name, inputs in registered:
        if kind == RESERVATION_TYPE:
            sku = mapping(inputs.get("sku"))
            zones = [str(z) for z in items(inputs.get("zones"))]
            where = f"zone {zones[0]}" if zones else "regional"
            count = whole(sku.get("capacity"))
            out.append(FixedItem(f"capacity reservation {sku.get('name')} × {count} VM(s) ({where})",
                                 f"CapacityReservation {shown(name)}", f"capacity-reservation:{sku.get('name')}",
                                 Decimal(count)))
        elif kind == AGENT_POOL_TYPE and inputs.get("capacityReservationGroupID") is not None:
            group = str(inputs.get("capacityReservationGroupID"))
            if group.rsplit("/", 1)[-1] not in created:
                out.append(FixedItem(f"capacity reservation group of pool {_pool_name(inputs, name)} ({OUTSIDE})",
                                     f"AgentPool {shown(name)}", None, Decimal(0),
                                     f"{group} is billed to whoever owns it, whether used or not; not priced here"))
    return out
