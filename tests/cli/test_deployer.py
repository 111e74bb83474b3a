"""The deployer is the stack's, never whoever runs Pulumi: the same stack planned as two different
identities registers exactly the same resources, and the grant goes to the configured principal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spotkube.clouds.aks.offline import CLIENT_CONFIG as OFFLINE_CLIENT_CONFIG
from spotkube.clouds.aks.resources import CLIENT_CONFIG_INVOKE
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform.project import Project

#: A person at a laptop, and CI's preview identity: two `getClientConfig` answers.
PERSON = {**OFFLINE_CLIENT_CONFIG, "objectId": "5e6f7a8b-0000-4000-8000-0000000000aa",
          "clientId": "04b07795-8ddb-461a-bbee-02f9e1bf7b46"}
PREVIEW = {**OFFLINE_CLIENT_CONFIG, "objectId": "9a8b7c6d-0000-4000-8000-0000000000bb",
           "clientId": "9a8b7c6d-0000-4000-8000-0000000000cc"}


def registered(run: StackRun) -> list[tuple[str, str, str, str]]:
    """Every registration with its inputs and options, in a stable order (the mock monitor records them
    from several threads)."""
    return sorted((r.type, r.name, json.dumps(r.inputs, sort_keys=True, default=str),
                   json.dumps([r.parent, sorted(r.dependencies), r.provider, r.protect, sorted(r.ignore_changes)]))
                  for r in run.registrations)


@pytest.mark.parametrize("stack", ["aks-dev-uksouth", "aks-prod-eastus"])
def test_two_identities_plan_the_same_resources(repo_project: Project, stack: str) -> None:
    as_person, as_preview = (run_stack(repo_project, stack, answers={CLIENT_CONFIG_INVOKE: c})
                             for c in (PERSON, PREVIEW))
    assert registered(as_person) == registered(as_preview)
    assert not [i for i in (*as_person.invokes, *as_preview.invokes)
                if i.token == "azure-native:authorization:getClientConfig"], "nobody asks who runs Pulumi"
    for run in (as_person, as_preview):
        grants: dict[str, Any] = {r.name: r.inputs for r in run.registrations
                                  if r.type == "azure-native:authorization:RoleAssignment"}
        deployer = run.spec.cluster.deployer
        assert grants["spotkube-rbac-deployer"]["principalId"] == deployer.object_id
        assert grants["spotkube-rbac-deployer"]["principalType"] == deployer.principal_type
        assert {PERSON["objectId"], PREVIEW["objectId"]}.isdisjoint(g["principalId"] for g in grants.values())
