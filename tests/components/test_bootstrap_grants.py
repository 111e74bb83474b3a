"""Every role assignment an AKS stack's program registers inside a scope the bootstrap manages is one its
deploy identity may make: the bootstrap's own RBAC Administrator conditions allow exactly those roles
there, one assignment per identity and scope (Azure refuses a second with `RoleAssignmentExists`).

Checked for every shipped AKS stack and for one with every option that grants a role turned on: a
capacity reservation group it creates (the cluster identity's Contributor on the stack's group), a
registry in its own group (AcrPull), the eviction drill (its role on the node resource group) and a
training checkpoint store (Storage Blob Data Contributor on its container, in the stack's group). A
grant outside the bootstrap's scopes (a registry in another subscription) is its owner's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from spotkube.clouds.aks import checkpoints, supply
from spotkube.clouds.aks import identities as aks
from spotkube.components.offline import Recording, Registration, record_stack
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
#: The subscription the offline mocks give every Azure id, the bootstrap's and the program's alike.
SUBSCRIPTION = "/subscriptions/00000000-0000-0000-0000-00000000000e"
EVERY_OPTION = "aks-qa-westeurope"


def _with_every_option(root: Path) -> None:
    """A copy of the dev stack with a reservation group it creates, a registry in its own group, drills and a
    checkpoint store."""
    stack = yaml.safe_load((REPO / "stacks" / "Pulumi.aks-dev-uksouth.yaml").read_text())
    config = stack["config"]
    config["spotkube:environment"] = "qa"
    config["spotkube:region"] = "westeurope"
    group = f"spotkube-{EVERY_OPTION}"
    config["spotkube:cluster"]["resourceGroupName"] = group
    config["spotkube:cluster"]["deployer"]["drills"] = True
    config["spotkube:cluster"]["registries"] = [
        f"{SUBSCRIPTION}/resourceGroups/{group}/providers/Microsoft.ContainerRegistry/registries/qaimages"]
    config["spotkube:gpuPools"].append({"name": "t4reserved", "machine": "Standard_NC4as_T4_v3",
                                        "capacity": "on-demand", "min": 0, "max": 1,
                                        "capacityReservationGroup": {"create": {"count": 1}}})
    config["spotkube:kueue"] = {"enabled": True}
    config["spotkube:training"] = {"enabled": True, "checkpointStore": {"name": "qacheckpoints"}}
    (root / "stacks" / f"Pulumi.{EVERY_OPTION}.yaml").write_text(yaml.safe_dump(stack))
    bootstrap = root / "infra" / "bootstrap" / "Pulumi.aks.yaml"
    document = yaml.safe_load(bootstrap.read_text())
    document["config"]["spotkube:stacks"].append(EVERY_OPTION)
    bootstrap.write_text(yaml.safe_dump(document))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Recording, dict[str, Recording]]:
    root = tmp_path_factory.mktemp("grants")
    for name in ("Pulumi.yaml", "stacks", "infra"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    _with_every_option(root)
    bootstrap = record_stack(find_project(root / "infra" / "bootstrap"), "aks")
    platform = find_project(root)
    stacks = yaml.safe_load((root / "infra" / "bootstrap" / "Pulumi.aks.yaml").read_text())["config"]["spotkube:stacks"]
    return bootstrap, {stack: record_stack(platform, stack) for stack in stacks}


def _administrators(bootstrap: Recording) -> dict[tuple[str, str], Registration]:
    """The deploy identities' RBAC Administrator assignments, by (identity, scope), each once."""
    identities = {r.urn: r.inputs["resourceName"] for r in bootstrap.registrations
                  if r.type == "azure-native:managedidentity:UserAssignedIdentity"}
    found: dict[tuple[str, str], Registration] = {}
    for r in bootstrap.registrations:
        if r.type == ROLE_ASSIGNMENT and r.inputs["roleDefinitionId"].endswith(f"/{aks.RBAC_ADMINISTRATOR.id}"):
            (identity,) = [identities[urn] for urn in r.dependencies if urn in identities]
            key = (identity, r.inputs["scope"].lower())
            assert key not in found, f"a second RBAC Administrator assignment for {key}: RoleAssignmentExists"
            found[key] = r
    return found


def _deployer(stack: str) -> str:
    """The deploy identity that runs a stack: its own for prod, the shared one otherwise."""
    return f"spotkube-deploy-{stack}" if "-prod-" in stack else "spotkube-deploy"


def test_every_grant_inside_the_bootstrap_s_scopes_is_allowed_by_its_conditions(
        recorded: tuple[Recording, dict[str, Recording]]) -> None:
    bootstrap, platforms = recorded
    administrators = _administrators(bootstrap)
    managed = {scope for _, scope in administrators}
    checked: list[tuple[str, str, str]] = []
    owners: list[tuple[str, str]] = []
    for stack, recording in platforms.items():
        grants = [r for r in recording.registrations if r.type == ROLE_ASSIGNMENT]
        assert grants, f"{stack} assigns roles"
        for grant in grants:
            scope, role = grant.inputs["scope"].lower(), grant.inputs["roleDefinitionId"].rsplit("/", 1)[1].lower()
            covering = [(identity, at) for identity, at in administrators
                        if identity == _deployer(stack) and (scope == at or scope.startswith(f"{at}/"))]
            if not any(scope == at or scope.startswith(f"{at}/") for at in managed):
                owners.append((stack, role))  # outside every scope the bootstrap manages: its owner's
                continue
            allowed = [aks.allowed_roles(administrators[key].inputs["condition"]) for key in covering]
            assert any(role in roles for roles in allowed), (
                f"{stack}: {grant.name} assigns {role} at {scope}, which no condition of "
                f"{_deployer(stack)} allows ({allowed})")
            checked.append((stack, grant.name, role))
    names = {(stack, role) for stack, _, role in checked}
    assert ("aks-prod-eastus", supply.CONTRIBUTOR_ROLE_ID) in names, "prod's reservation grant is checked"
    assert ("aks-prod-eastus", checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID) in names, "prod's checkpoint grant too"
    assert {(EVERY_OPTION, role) for role in (supply.CONTRIBUTOR_ROLE_ID, supply.ACR_PULL_ROLE_ID,
                                              aks.RBAC_CLUSTER_ADMIN.id, aks.EVICTION_DRILL.id,
                                              checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID)} <= names
    # Prod's registry lives in another subscription: AcrPull there is granted by the registry's owner.
    assert owners == [("aks-prod-eastus", supply.ACR_PULL_ROLE_ID)]


def test_the_conditions_allow_nothing_the_stacks_do_not_assign(
        recorded: tuple[Recording, dict[str, Recording]]) -> None:
    """Each stack group's condition names exactly the roles that stack's program assigns there."""
    bootstrap, platforms = recorded
    administrators = _administrators(bootstrap)
    expected = {
        "aks-dev-uksouth": {aks.RBAC_CLUSTER_ADMIN.id},
        "aks-prod-eastus": {aks.RBAC_CLUSTER_ADMIN.id, supply.CONTRIBUTOR_ROLE_ID,
                            checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID},
        EVERY_OPTION: {aks.RBAC_CLUSTER_ADMIN.id, supply.CONTRIBUTOR_ROLE_ID, supply.ACR_PULL_ROLE_ID,
                       checkpoints.BLOB_DATA_CONTRIBUTOR_ROLE_ID},
    }
    assert set(platforms) == set(expected)
    for stack, roles in expected.items():
        key = (_deployer(stack), f"{SUBSCRIPTION}/resourceGroups/spotkube-{stack}".lower())
        assert aks.allowed_roles(administrators[key].inputs["condition"]) == roles, stack
    drill = aks.allowed_roles(administrators[("spotkube-deploy", SUBSCRIPTION.lower())].inputs["condition"])
    assert drill == {aks.EVICTION_DRILL.id}
    assert not any(identity.endswith("-aks-prod-eastus") and scope == SUBSCRIPTION.lower()
                   for identity, scope in administrators), "prod drills nothing"


@pytest.mark.parametrize("condition", [
    aks.ONLY_RBAC_CLUSTER_ADMIN.replace("@Resource[", "@Request[", 1),
    aks.ONLY_RBAC_CLUSTER_ADMIN.replace(aks.RBAC_CLUSTER_ADMIN.id, supply.CONTRIBUTOR_ROLE_ID, 1),
    aks.ONLY_RBAC_CLUSTER_ADMIN + " OR (true)",
    "",
])
def test_a_condition_of_another_form_allows_nothing(condition: str) -> None:
    assert aks.allowed_roles(condition) == frozenset()
