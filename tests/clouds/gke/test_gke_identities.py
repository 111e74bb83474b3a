"""The GKE identities hold what the shipped stacks' previews and deploys call, checked against Google's
own role definitions (tests/clouds/gke/data/predefined_roles.json, with their source and date)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from spotkube.clouds.gke import identities
from spotkube.components.offline import StackRun
from spotkube.platform.identities import Call, KubernetesKind, Role, granting
from spotkube.platform.project import Project

DATA = json.loads((Path(__file__).parent / "data" / "predefined_roles.json").read_text())
PREDEFINED = {role["name"]: identities.read_role(role) for role in DATA["roles"]}


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> list[StackRun]:
    return [shipped_run(s) for s in repo_project.stacks() if s.startswith("gke-")]


@pytest.fixture(scope="module")
def calls(runs: list[StackRun]) -> list[tuple[str, Call]]:
    return [(run.stack, call) for run in runs for call in identities.FACTS.calls(run.registrations, run.invokes)]


def real(role: Role) -> Role:
    return role if role.custom else PREDEFINED[role.name]


def test_every_call_of_the_program_is_allowed_by_a_documented_role(calls: list[tuple[str, Call]]) -> None:
    missing = [f"{stack}: {c.identity} {c.what}: {c.permission}" for stack, c in calls
               if c.needed and not granting(c, identities.ASSIGNMENTS, identities.COVERS)]
    assert not missing, "calls no role allows:\n" + "\n".join(missing)


def test_every_role_really_allows_what_it_is_credited_with(calls: list[tuple[str, Call]]) -> None:
    wrong = [f"{a.role.name} does not hold {c.permission}" for _, c in calls
             for a in granting(c, identities.ASSIGNMENTS, identities.COVERS)
             if not real(a.role).allows(c.permission, c.kind)]
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_the_preview_connects_and_reads_no_secret(calls: list[tuple[str, Call]]) -> None:
    preview = [c for _, c in calls if c.identity == "preview"]
    assert identities.CONNECT in {c.permission for c in preview}
    assert PREDEFINED["roles/container.viewer"].allows(identities.CONNECT, "permission")
    denied = [c for c in preview if not c.needed]
    assert {c.permission for c in denied} == {"container.secrets.get"}
    for call in denied:
        assert not any(real(a.role).allows(call.permission, call.kind) for a in identities.ASSIGNMENTS
                       if a.identity == "preview")


def test_the_preview_reader_holds_exactly_what_container_viewer_lacks(calls: list[tuple[str, Call]]) -> None:
    viewer = PREDEFINED["roles/container.viewer"]
    gap = {c.permission for _, c in calls if c.identity == "preview" and c.needed and not viewer.allows(c.permission,
                                                                                                          c.kind)}
    assert identities.PREVIEW_READER.permissions == gap


@pytest.mark.parametrize(("api_version", "kind", "verb", "permission"), [
    ("v1", "ConfigMap", "get", "container.configMaps.get"),
    ("networking.k8s.io/v1", "NetworkPolicy", "get", "container.networkPolicies.get"),
    ("scheduling.k8s.io/v1", "PriorityClass", "create", "container.priorityClasses.create"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "escalate", "container.clusterRoles.escalate"),
    ("cloud.google.com/v1", "ComputeClass", "update", "container.thirdPartyObjects.update"),
])
def test_kubernetes_verbs_map_to_gke_permissions(api_version: str, kind: str, verb: str, permission: str) -> None:
    assert identities.permission(KubernetesKind.of(api_version, kind), verb) == permission
    assert PREDEFINED["roles/container.admin"].allows(permission, "permission")
