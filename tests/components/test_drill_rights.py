"""drill.yml works with the bootstrap's identities as shipped: it runs in the stack's GitHub environment,
as the deploy identity, and a stack that sets `cluster.deployer.drills` gives that identity exactly the
right to evict a spot node (AKS: the eviction drill role on the node resource group, assigned by the
program; GKE: the eviction drill role in the project, bound by the bootstrap), and a stack that
doesn't gives none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from spotkube.clouds import load_stack_spec
from spotkube.clouds.aks import identities as aks
from spotkube.clouds.gke import identities as gke
from spotkube.components.offline import Recording, record_stack
from spotkube.platform.project import Project, find_project

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = REPO / "infra" / "bootstrap"


@pytest.fixture(scope="module")
def bootstrap() -> dict[str, Recording]:
    project = find_project(BOOTSTRAP)
    return {stack: record_stack(project, stack) for stack in project.stacks()}


@pytest.mark.parametrize("cloud", find_project(BOOTSTRAP).stacks())
def test_the_drill_runs_as_the_deploy_identity_of_a_stack_that_allows_drills(repo_project: Project, cloud: str) -> None:
    drill = yaml.safe_load((REPO / ".github" / "workflows" / "drill.yml").read_text())["jobs"]["drill"]
    assert drill["environment"] == {"name": "${{ inputs.stack }}"}, "the stack's environment: its deploy identity"
    served = yaml.safe_load((BOOTSTRAP / f"Pulumi.{cloud}.yaml").read_text())["config"]["spotkube:stacks"]
    dev = [s for s in served if "-dev-" in s]
    assert dev and all(load_stack_spec(repo_project, s).cluster.deployer.drills for s in dev)


def _drill_grants(recording: Recording) -> list[dict[str, object]]:
    return [r.inputs for r in recording.registrations if r.type == "azure-native:authorization:RoleAssignment"
            and str(r.inputs.get("roleDefinitionId", "")).endswith(f"/{aks.DRILL_ROLE_ID}")]


def test_aks_grants_the_deployer_the_drill_role_on_the_node_resource_group_only_with_drills(
    repo_project: Project,
) -> None:
    dev = record_stack(repo_project, "aks-dev-uksouth")
    (grant,) = _drill_grants(dev)
    spec = load_stack_spec(repo_project, "aks-dev-uksouth")
    assert grant["principalId"] == spec.cluster.deployer.object_id
    assert grant["principalType"] == spec.cluster.deployer.principal_type
    subscription = str(grant["roleDefinitionId"]).split("/")[2]
    # AKS names it MC_<group>_<cluster>_<region> when the stack names none.
    assert grant["scope"] == (f"/subscriptions/{subscription}/resourceGroups/"
                              "MC_spotkube-aks-dev-uksouth_spotkube-aks_uksouth")
    assert not _drill_grants(record_stack(repo_project, "aks-prod-eastus"))


def test_aks_bootstrap_defines_the_drill_role_and_lets_the_deployer_assign_it_and_nothing_else(
    bootstrap: dict[str, Recording],
) -> None:
    recording = bootstrap["aks"]
    (role,) = [r for r in recording.registrations if r.type == "azure-native:authorization:RoleDefinition"
               and r.inputs["roleName"] == aks.EVICTION_DRILL.name]
    assert role.inputs["roleDefinitionId"] == aks.DRILL_ROLE_ID
    assert role.inputs["permissions"] == [{"actions": [aks.SIMULATE_EVICTION]}]
    assert role.inputs["assignableScopes"] == [role.inputs["scope"]], "the subscription: the MC_ group comes later"
    (delegation,) = [r for r in recording.registrations if r.type == "azure-native:authorization:RoleAssignment"
                     and r.inputs.get("condition") == aks.ONLY_EVICTION_DRILL]
    assert delegation.name == "deploy-role-based-access-control-administrator-subscription"
    assert delegation.inputs["scope"].count("/") == 2


def test_gke_bootstrap_binds_the_drill_role_in_the_drilled_stack_s_project_only(
    bootstrap: dict[str, Recording],
) -> None:
    recording = bootstrap["gke"]
    bound = {(r.inputs["project"], r.inputs["member"].split("@")[0]) for r in recording.registrations
             if r.type == "gcp:projects/iAMMember:IAMMember" and r.inputs["role"].endswith(gke.EVICTION_DRILL.name)}
    assert bound == {("spotkube-dev-example", "serviceAccount:spotkube-deploy")}
    assert gke.EVICTION_DRILL.permissions == {"compute.instances.simulateMaintenanceEvent",
                                              "compute.zoneOperations.get"}
