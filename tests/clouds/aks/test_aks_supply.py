"""AKS GPU supply: a capacity reservation group on an on-demand GPU pool (one the stack creates, or an
existing one), AcrPull for the kubelet identity on the stack's registries, and artifact streaming,
refused while the SDK has no API version with it, through the component (Python API). The stack
file, the plan and the cost: tests/cli/test_aks_supply_plan.py."""

from __future__ import annotations

from typing import Any, cast

import pytest

from spotkube import AksGpuCluster, AksGpuClusterArgs
from spotkube.clouds.aks import offline
from spotkube.components.offline import ProgramFailed, Recording, record_program
from spotkube.platform.registration import Registration

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
GROUP = "azure-native:compute:CapacityReservationGroup"
RESERVATION = "azure-native:compute:CapacityReservation"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
A100 = "Standard_NC24ads_A100_v4"
REGISTRY = ("/subscriptions/22222222-3333-4444-8555-666666666666/resourceGroups/images/providers/"
            "Microsoft.ContainerRegistry/registries/teamimages")
EXISTING = ("/subscriptions/33333333-4444-4555-8666-777777777777/resourceGroups/capacity/providers/"
            "Microsoft.Compute/capacityReservationGroups/a100-reserved")
DEPLOYER = {"object_id": "c0ffee00-0000-4000-8000-000000000001", "principal_type": "ServicePrincipal"}


def args(reservation: dict[str, Any] | None = None, *, capacity: str = "on-demand", zones: tuple[str, ...] = ("1", "2"),
         registries: tuple[str, ...] = (), **pool: Any) -> AksGpuClusterArgs:
    gpu_pool: dict[str, Any] = {"name": "a100", "machine": A100, "capacity": capacity, "max": 4, "zones": list(zones),
                                **pool}
    if reservation is not None:
        gpu_pool["capacity_reservation_group"] = reservation
    return cast(AksGpuClusterArgs, {
        "environment": "dev", "region": "eastus",
        "gpu_pools": [{"name": "a100spot", "machine": A100, "capacity": "spot", "max": 4}, gpu_pool],
        "cluster": {"deployer": DEPLOYER, "registries": list(registries)},
    })


def build(cluster_args: AksGpuClusterArgs) -> Recording:
    def program() -> None:
        AksGpuCluster("ml", args=cluster_args)

    return record_program(program, project="spotkube", stack="test", config={})


def of_type(recording: Recording, type_token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == type_token]


def pool(recording: Recording, name: str) -> Registration:
    (found,) = [r for r in of_type(recording, AGENT_POOL) if r.inputs["agentPoolName"] == name]
    return found


def assignments(recording: Recording, role: str) -> list[Registration]:
    return [r for r in of_type(recording, ROLE_ASSIGNMENT) if str(r.inputs["roleDefinitionId"]).endswith(f"/{role}")]


def test_a_created_group_reserves_the_pool_s_size_in_each_zone_and_the_pool_names_it() -> None:
    recording = build(args({"create": {"count": 2}}))
    (group,) = of_type(recording, GROUP)
    assert group.inputs["zones"] == ["1", "2"] and group.inputs["location"] == "eastus"
    reservations = sorted(of_type(recording, RESERVATION), key=lambda r: r.inputs["zones"])
    assert [(r.inputs["sku"], r.inputs["zones"]) for r in reservations] == [
        ({"name": A100, "capacity": 2}, ["1"]), ({"name": A100, "capacity": 2}, ["2"])]
    assert {r.inputs["capacityReservationGroupName"] for r in reservations} == {group.inputs[
        "capacityReservationGroupName"]}
    reserved = pool(recording, "a100").inputs["capacityReservationGroupID"]
    assert reserved.endswith(f"/providers/Microsoft.Compute/capacityReservationGroups/"
                             f"{group.inputs['capacityReservationGroupName']}")
    assert "capacityReservationGroupID" not in pool(recording, "a100spot").inputs


def test_the_cluster_runs_as_a_user_assigned_identity_with_contributor_on_the_group_s_resource_group() -> None:
    """AKS places a pool's VMs in a reservation group only as a user-assigned cluster identity with
    Contributor on the group's resource group; the pool waits for that grant."""
    recording = build(args({"create": {"count": 1}}))
    (identity,) = of_type(recording, IDENTITY)
    (cluster,) = of_type(recording, CLUSTER)
    assert cluster.inputs["identity"]["type"] == "UserAssigned"
    (identity_id,) = cluster.inputs["identity"]["userAssignedIdentities"]
    assert identity_id.endswith(f"/userAssignedIdentities/{identity.name}")
    (grant,) = assignments(recording, CONTRIBUTOR)
    assert grant.inputs["scope"] == f"/subscriptions/{offline.CLIENT_CONFIG['subscriptionId']}/resourceGroups/" \
                                    f"{of_type(recording, GROUP)[0].inputs['resourceGroupName']}"
    assert grant.inputs["principalType"] == "ServicePrincipal"
    assert grant.inputs["principalId"] == offline.computed_outputs(IDENTITY, identity.name, identity.inputs)[
        "principalId"]
    # AKS checks the grant once, when it creates the pool: the pool waits as long as Azure may take.
    (wait,) = [r for r in of_type(recording, "time:index/sleep:Sleep") if r.name.endswith("-reservation-propagation")]
    assert wait.inputs["createDuration"] == "60m"
    by_urn = {r.urn: r for r in recording.registrations}

    def waits_for(registration: Registration, urn: str) -> bool:
        """Whether `registration` depends on `urn`, directly or through what it depends on (the pools are serial)."""
        return urn in registration.dependencies or any(
            waits_for(by_urn[d], urn) for d in registration.dependencies if d in by_urn)

    assert waits_for(pool(recording, "a100"), wait.urn)


def test_an_existing_group_is_named_by_id_and_its_resource_group_gets_the_grant() -> None:
    recording = build(args({"id": EXISTING}))
    assert not of_type(recording, GROUP) and not of_type(recording, RESERVATION)
    assert pool(recording, "a100").inputs["capacityReservationGroupID"] == EXISTING
    (grant,) = assignments(recording, CONTRIBUTOR)
    assert grant.inputs["scope"] == EXISTING.split("/providers/")[0]
    assert grant.inputs["roleDefinitionId"] == ("/subscriptions/33333333-4444-4555-8666-777777777777/providers/"
                                                f"Microsoft.Authorization/roleDefinitions/{CONTRIBUTOR}")


def test_without_a_reservation_the_cluster_keeps_its_system_assigned_identity() -> None:
    recording = build(args())
    (cluster,) = of_type(recording, CLUSTER)
    assert cluster.inputs["identity"] == {"type": "SystemAssigned"}
    assert not of_type(recording, IDENTITY) and not assignments(recording, CONTRIBUTOR)


def test_the_kubelet_identity_gets_acr_pull_on_each_registry() -> None:
    recording = build(args(registries=(REGISTRY,)))
    (cluster,) = of_type(recording, CLUSTER)
    kubelet = offline.computed_outputs(CLUSTER, cluster.name, cluster.inputs)["identityProfile"]["kubeletidentity"]
    (grant,) = assignments(recording, ACR_PULL)
    assert grant.inputs["principalId"] == kubelet["objectId"]
    assert grant.inputs["principalId"] != DEPLOYER["object_id"]
    assert grant.inputs["scope"] == REGISTRY and grant.inputs["principalType"] == "ServicePrincipal"
    assert grant.inputs["roleDefinitionId"] == ("/subscriptions/22222222-3333-4444-8555-666666666666/providers/"
                                                f"Microsoft.Authorization/roleDefinitions/{ACR_PULL}")


@pytest.mark.parametrize(("cluster_args", "message"), [
    (args({"create": {"count": 1}}, capacity="spot"),
     r"gpu_pools\[1\]\.capacity_reservation_group: applies to on-demand pools only: a capacity reservation holds "
     r"on-demand capacity and spot VMs never use it; remove it, or set capacity: on-demand"),
    (args({"id": EXISTING, "create": {"count": 1}}),
     r"gpu_pools\[1\]\.capacity_reservation_group: needs exactly one of id .* and create: \{count: N\}"),
    (args({}), r"gpu_pools\[1\]\.capacity_reservation_group: needs exactly one of id"),
    (args({"id": "/subscriptions/x/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/vm"}),
     r"capacity_reservation_group\.id: '/subscriptions/x/.* is not a capacity reservation group's resource id; use "
     r"/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft\.Compute/capacityReservationGroups/<name>"),
    (args({"create": {"count": 5}}),
     r"capacity_reservation_group\.create\.count: 5 reserves more VMs per zone than the pool's max \(4\) can ever "
     r"run, and each is billed; use at most 4"),
    (args({"create": {"count": 0}}), r"count"),
    (args(registries=("teamimages.azurecr.io",)),
     r"cluster\.registries\[0\]: 'teamimages\.azurecr\.io' is not an Azure Container Registry resource id; use "
     r"/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft\.ContainerRegistry/registries/<name>"),
    (args(registries=(REGISTRY, REGISTRY)), r"cluster\.registries\[1\]: .* is listed twice"),
    (args(artifact_streaming=True),
     r"gpu_pools\[1\]\.artifact_streaming: true needs the AgentPool's artifactStreamingProfile \(AKS preview\), "
     r"which no API version of the installed pulumi-azure-native has; .* It also needs a Premium ACR in "
     r"cluster\.registries"),
    (args(artifact_streaming=True, registries=(REGISTRY,)),
     r"gpu_pools\[1\]\.artifact_streaming: true needs the AgentPool's artifactStreamingProfile"),
])
def test_what_azure_would_refuse_is_refused_before_anything_is_registered(cluster_args: AksGpuClusterArgs,
                                                                          message: str) -> None:
    with pytest.raises(ProgramFailed, match=message) as err:
        build(cluster_args)
    assert err.value.registrations == []
    if "artifact_streaming" in message and "registries" not in str(cluster_args):
        assert "Premium ACR" in str(err.value)


def test_streaming_with_a_registry_does_not_claim_the_registry_is_missing() -> None:
    with pytest.raises(ProgramFailed) as err:
        build(args(artifact_streaming=True, registries=(REGISTRY,)))
    assert "Premium ACR in cluster.registries" not in str(err.value)
