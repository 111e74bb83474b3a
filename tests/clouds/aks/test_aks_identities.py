"""The AKS identities hold what the shipped stacks' previews and deploys call, checked against Azure's
own role definitions (tests/clouds/aks/data/builtin_roles.json, with their source and date).

A role spotkube documents must really allow every call it is credited with (Azure's wildcards and
notActions applied as Azure applies them), every call the program makes must be allowed, and the
calls denied on purpose (Secrets, to the preview identity) must be allowed by none of its roles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from spotkube.clouds.aks import identities
from spotkube.components.offline import StackRun
from spotkube.platform.identities import Call, Role, granting, matches
from spotkube.platform.project import Project

DATA = json.loads((Path(__file__).parent / "data" / "builtin_roles.json").read_text())
BUILT_IN = {role["roleName"]: identities.read_role(role) for role in DATA["roles"]}


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> list[StackRun]:
    return [shipped_run(s) for s in repo_project.stacks() if s.startswith("aks-")]


@pytest.fixture(scope="module")
def calls(runs: list[StackRun]) -> list[tuple[str, Call]]:
    return [(run.stack, call) for run in runs for call in identities.FACTS.calls(run.registrations, run.invokes)]


def real(role: Role) -> Role:
    """The published definition of a built-in role, or spotkube's own definition of a custom one."""
    return role if role.custom else BUILT_IN[role.name]


def test_the_data_says_where_it_comes_from() -> None:
    assert DATA["read"] and DATA["source"]
    assert all(s.startswith("https://github.com/MicrosoftDocs/") for s in DATA["source"])
    assert BUILT_IN, "the built-in roles the data holds"
    for role in BUILT_IN.values():
        assert not role.custom


def test_every_call_of_the_program_is_allowed_by_a_documented_role(calls: list[tuple[str, Call]]) -> None:
    missing = [f"{stack}: {c.identity} {c.what}: {c.permission} at the {c.scope}" for stack, c in calls
               if c.needed and not granting(c, identities.ASSIGNMENTS, identities.COVERS)]
    assert not missing, "calls no role allows:\n" + "\n".join(missing)


def test_every_role_really_allows_what_it_is_credited_with(calls: list[tuple[str, Call]]) -> None:
    """A documented role that lacks an action the program calls fails here, by name."""
    wrong = [f"{a.role.name} does not allow {c.permission}" for _, c in calls
             for a in granting(c, identities.ASSIGNMENTS, identities.COVERS)
             if not real(a.role).allows(c.permission, c.kind)]
    assert not wrong, "\n".join(sorted(set(wrong)))
    for assignment in identities.ASSIGNMENTS:
        if not assignment.role.custom:
            assert real(assignment.role).id == assignment.role.id, assignment.role.name


def test_the_preview_reads_no_secret(calls: list[tuple[str, Call]]) -> None:
    denied = [c for _, c in calls if not c.needed]
    assert {c.permission for c in denied} == {"Microsoft.ContainerService/managedClusters/secrets/read"}
    for call in denied:
        allowing = [a.role.name for a in identities.ASSIGNMENTS
                    if a.identity == call.identity and real(a.role).allows(call.permission, call.kind)]
        assert not allowing, f"{call.permission} is allowed by {allowing}"


def test_the_preview_reader_holds_exactly_what_rbac_reader_lacks(calls: list[tuple[str, Call]]) -> None:
    rbac_reader = BUILT_IN["Azure Kubernetes Service RBAC Reader"]
    gap = {c.permission for _, c in calls if c.identity == "preview" and c.kind == "dataAction" and c.needed
           and not rbac_reader.allows(c.permission, c.kind)}
    assert set(identities.PREVIEW_READER.data_actions) == gap


def test_the_issue_s_premises_hold_on_azure_s_definitions() -> None:
    """Reader can't list the user credential; RBAC Reader reads neither Secrets nor CRDs; Contributor
    can't write role assignments; RBAC Cluster Admin lists credentials and does everything inside."""
    list_credential = "Microsoft.ContainerService/managedClusters/listClusterUserCredential/action"
    assert not BUILT_IN["Reader"].allows(list_credential, "action")
    assert BUILT_IN["Azure Kubernetes Service Cluster User Role"].allows(list_credential, "action")
    reader = BUILT_IN["Azure Kubernetes Service RBAC Reader"]
    for data_action in ("secrets/read", "apiextensions.k8s.io/customresourcedefinitions/read",
                        "rbac.authorization.k8s.io/roles/read"):
        assert not reader.allows(f"{identities.DATA_PLANE}/{data_action}", "dataAction")
    writer = BUILT_IN["Azure Kubernetes Service RBAC Writer"]
    assert writer.allows(f"{identities.DATA_PLANE}/secrets/read", "dataAction"), "RBAC Writer would read Secrets"
    assert not BUILT_IN["Contributor"].allows("Microsoft.Authorization/roleAssignments/write", "action")
    admin = BUILT_IN["Azure Kubernetes Service RBAC Cluster Admin"]
    assert admin.allows(list_credential, "action")
    assert admin.allows(f"{identities.DATA_PLANE}/apps/deployments/write", "dataAction")


@pytest.mark.parametrize(("pattern", "permission", "expected"), [
    ("*/read", "Microsoft.ContainerService/managedClusters/read", True),
    ("*/read", "Microsoft.ContainerService/managedClusters/listClusterUserCredential/action", False),
    ("Microsoft.ContainerService/managedClusters/*/read",
     "Microsoft.ContainerService/managedClusters/apps/deployments/read", True),
    ("Microsoft.ContainerService/managedClusters/*/read",
     "Microsoft.ContainerService/managedClusters/apps/deployments/write", False),
    ("Microsoft.Authorization/*/Write", "Microsoft.Authorization/roleAssignments/write", True),
    ("microsoft.compute/locations/usages/read", "Microsoft.Compute/locations/usages/read", True),
    ("Microsoft.ContainerService/managedClusters/*", "Microsoft.ContainerService/fleets/read", False),
])
def test_azure_wildcards(pattern: str, permission: str, expected: bool) -> None:
    assert matches(pattern, permission) is expected


def test_the_deployer_may_assign_only_rbac_cluster_admin_and_with_drills_the_drill_role() -> None:
    """On its groups RBAC Cluster Admin (the bootstrap adds, in one condition, what each stack grants in
    its own group: tests/components/test_bootstrap_grants.py); in the subscription (a node resource group
    exists only once the cluster does) the eviction drill role only, and that only when a stack sets
    cluster.deployer.drills; on a registry AcrPull only, and on a capacity reservation group's resource
    group Contributor only, each granted by whoever owns them."""
    limited = {a.scope: a for a in identities.ASSIGNMENTS if a.role == identities.RBAC_ADMINISTRATOR}
    assert set(limited) == {identities.RESOURCE_GROUP, identities.SUBSCRIPTION, identities.REGISTRY,
                            identities.RESERVATION_GROUP}
    assert limited[identities.SUBSCRIPTION].drills_only and not limited[identities.RESOURCE_GROUP].drills_only
    assert {limited[s].granted_by for s in (identities.REGISTRY, identities.RESERVATION_GROUP)} == {
        identities.REGISTRY_OWNER, identities.RESERVATION_OWNER}
    for scope, role in ((identities.RESOURCE_GROUP, identities.RBAC_CLUSTER_ADMIN),
                        (identities.SUBSCRIPTION, identities.EVICTION_DRILL),
                        (identities.REGISTRY, Role("AcrPull", "7f951dda-4ed3-4680-a7ca-43fe172d538d")),
                        (identities.RESERVATION_GROUP, identities.CONTRIBUTOR)):
        condition = limited[scope].condition
        assert condition is not None
        assert re.findall(r"GuidEquals \{([\w-]+)\}", condition) == [role.id] * 2
        assert identities.allowed_roles(condition) == {role.id}
        assert "roleAssignments/write" in condition and "roleAssignments/delete" in condition
