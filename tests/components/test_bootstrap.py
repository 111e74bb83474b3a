"""The bootstrap stack (infra/bootstrap) plans offline on both clouds like the platform program, makes
exactly the identities and roles docs/identities.md documents, trusts only the repository's GitHub
environments, exports exactly the variables the workflows read, and refuses bad settings before
anything is registered."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import pytest
import yaml

from spotkube.clouds import CLOUDS
from spotkube.clouds.aks import identities as aks
from spotkube.clouds.gke import identities as gke
from spotkube.components.offline import ProgramFailed, Recording, Registration, record_stack
from spotkube.platform.bootstrap import SECRETS_PROVIDERS
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = REPO / "infra" / "bootstrap"
WORKFLOWS = REPO / ".github" / "workflows"
ISSUER = "https://token.actions.githubusercontent.com"


@pytest.fixture(scope="module")
def plans() -> dict[str, Recording]:
    project = find_project(BOOTSTRAP)
    assert project.stacks() and set(project.stacks()) <= set(CLOUDS), "bootstrap stacks are named by their cloud"
    return {stack: record_stack(project, stack) for stack in project.stacks()}


def settings(stack: str) -> dict[str, object]:
    config = yaml.safe_load((BOOTSTRAP / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in config.items()}


def of_type(recording: Recording, token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == token]


def read_vars(workflow: str) -> set[str]:
    return set(re.findall(r"\$\{\{\s*vars\.([A-Z0-9_]+)\s*\}\}", (WORKFLOWS / workflow).read_text()))


def test_the_outputs_are_exactly_the_variables_the_workflows_read(plans: dict[str, Recording]) -> None:
    """preview.yml runs every stack in the `preview` environment; deploy.yml runs each stack in the
    environment of its name. Each bootstrap output is one environment's variables."""
    preview: set[str] = set()
    deploy: set[str] = set()
    for stack, recording in plans.items():
        environments = {"preview", *settings(stack)["stacks"]}  # type: ignore[misc]
        assert set(recording.outputs) == environments | {SECRETS_PROVIDERS}, "the example serves a prod stack"
        for name, output in recording.outputs.items():
            if name == SECRETS_PROVIDERS:
                continue
            assert not output.secret and output.value, name
            assert all(value for value in output.value.values()), f"{stack}: {name} has an empty variable"
            (preview if name == "preview" else deploy).update(output.value)
    assert preview == read_vars("preview.yml")
    # DEPLOY_STACKS is the team's own repository variable (which stacks deploy.yml deploys), no identity's.
    assert deploy == read_vars("deploy.yml") - {"DEPLOY_STACKS"}


def test_aks_trusts_only_the_repository_s_environments(plans: dict[str, Recording]) -> None:
    recording, config = plans["aks"], settings("aks")
    credentials = of_type(recording, "azure-native:managedidentity:FederatedIdentityCredential")
    by_identity: dict[str, list[Registration]] = {}
    for credential in credentials:
        assert credential.inputs["issuer"] == ISSUER and credential.inputs["audiences"] == ["api://AzureADTokenExchange"]
        by_identity.setdefault(credential.inputs["resourceName"], []).append(credential)
    subjects = {name: {c.inputs["subject"] for c in found} for name, found in by_identity.items()}
    repo = config["repository"]
    assert subjects == {
        "spotkube-preview": {f"repo:{repo}:environment:preview"},
        "spotkube-deploy": {f"repo:{repo}:environment:{stack}" for stack in config["stacks"]},  # type: ignore[union-attr]
    }
    # Azure refuses two credential writes on one identity at once: each waits for the one before.
    pairs = [pair for found in by_identity.values() for pair in itertools.pairwise(found)]
    assert pairs, "spotkube-deploy has a credential per stack"
    for before, after in pairs:
        assert before.urn in after.dependencies


def test_aks_assigns_exactly_the_documented_roles_at_their_scopes(plans: dict[str, Recording]) -> None:
    recording, config = plans["aks"], settings("aks")
    groups = {r.inputs["resourceGroupName"] for r in of_type(recording, "azure-native:resources:ResourceGroup")}
    assert {f"spotkube-{stack}" for stack in config["stacks"]} <= groups, "each stack's group is created"  # type: ignore[union-attr]
    custom = {r.urn: r for r in of_type(recording, "azure-native:authorization:RoleDefinition")}
    made = set()
    for assignment in of_type(recording, "azure-native:authorization:RoleAssignment"):
        inputs = assignment.inputs
        if "/providers/Microsoft.KeyVault/" in inputs["scope"]:
            continue  # a prod stack's secrets key: tests/components/test_prod_secrets.py
        assert inputs["principalType"] == "ServicePrincipal"
        assert (inputs.get("conditionVersion") == "2.0") is bool(inputs.get("condition"))
        defined = [custom[urn].inputs["roleName"] for urn in assignment.dependencies if urn in custom]
        role = defined[0] if defined else inputs["roleDefinitionId"].rsplit("/", 1)[1]
        where = aks.SUBSCRIPTION if inputs["scope"].count("/") == 2 else aks.RESOURCE_GROUP
        made.add((assignment.name.split("-", 1)[0], role, where, inputs.get("condition")))
    assert made == {(a.identity, a.role.name if a.role.custom else a.role.id, a.scope, a.condition)
                    for a in aks.ASSIGNMENTS if a.granted_by == "bootstrap"}
    reader = next(r for r in custom.values() if r.inputs["roleName"] == aks.PREVIEW_READER.name)
    permissions = reader.inputs["permissions"][0]
    assert permissions["dataActions"] == list(aks.PREVIEW_READER.data_actions)
    assert not permissions.get("actions") and not permissions.get("notDataActions")


def test_gke_trusts_only_the_repository_and_its_environments(plans: dict[str, Recording]) -> None:
    recording, config = plans["gke"], settings("gke")
    (provider,) = of_type(recording, "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider")
    assert provider.inputs["oidc"] == {"issuerUri": ISSUER}
    assert provider.inputs["attributeCondition"] == f"assertion.repository == '{config['repository']}'"
    assert provider.inputs["attributeMapping"]["google.subject"] == "assertion.sub"
    impersonation = {r.name: r.inputs["member"] for r in of_type(recording, "gcp:serviceaccount/iAMMember:IAMMember")
                     if r.inputs["role"] == "roles/iam.workloadIdentityUser"}
    pool = "principal://iam.googleapis.com/projects/000000000000/locations/global/workloadIdentityPools/github-actions"
    assert impersonation == {
        "preview-preview": f"{pool}/subject/repo:{config['repository']}:environment:preview",
        **{f"deploy-{stack}": f"{pool}/subject/repo:{config['repository']}:environment:{stack}"
           for stack in config["stacks"]},  # type: ignore[union-attr]
    }


def test_gke_binds_exactly_the_documented_roles_in_each_stack_s_project(plans: dict[str, Recording]) -> None:
    recording = plans["gke"]
    projects = {"spotkube-dev-example", "spotkube-prod-example"}
    bindings = {(r.inputs["project"], r.inputs["member"].split("@")[0].removeprefix("serviceAccount:spotkube-"),
                 r.inputs["role"].rsplit("/", 1)[-1], (r.inputs.get("condition") or {}).get("expression"))
                for r in of_type(recording, "gcp:projects/iAMMember:IAMMember")}
    drilled = {"spotkube-dev-example"}  # gke-dev-us-central1 sets cluster.deployer.drills; the prod stack doesn't
    pulling = {"spotkube-prod-example"}  # gke-prod-europe-west4 sets cluster.registries; the dev stack doesn't
    expected = {(p, a.identity, a.role.name.rsplit("/", 1)[-1], a.condition) for p in projects for a in gke.ASSIGNMENTS
                if (not a.drills_only or p in drilled) and (a.role != gke.REGISTRY_GRANTS or p in pulling)}
    assert bindings == expected
    roles = {(r.inputs["project"], r.inputs["roleId"]): r.inputs["permissions"]
             for r in of_type(recording, "gcp:projects/iAMCustomRole:IAMCustomRole")}
    assert roles == {**{(p, gke.PREVIEW_READER.name): sorted(gke.PREVIEW_READER.permissions) for p in projects},
                     **{(p, gke.EVICTION_DRILL.name): sorted(gke.EVICTION_DRILL.permissions) for p in drilled},
                     **{(p, gke.REGISTRY_GRANTS.name): sorted(gke.REGISTRY_GRANTS.permissions) for p in pulling}}


def _copy(tmp_path: Path) -> Path:
    for name in ("Pulumi.yaml", "stacks", "infra"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    return tmp_path / "infra" / "bootstrap"


@pytest.mark.parametrize(("change", "fragments"), [
    ({"spotkube:repository": "not a repo"}, ("spotkube:repository", "not a repo")),
    ({"spotkube:stacks": ["aks-dev-uksouth", "aks-test-nowhere"]}, ("spotkube:stacks[1]", "aks-test-nowhere",
                                                                   "stacks: aks-dev-uksouth")),
    ({"spotkube:stacks": ["gke-dev-us-central1"]}, ("spotkube:stacks[0]", "is a gke stack")),
    ({"spotkube:project": "spotkube-dev-example"}, ("project is a gke setting",)),
    ({"spotkube:repositry": "a/b"}, ("spotkube:repositry", "did you mean", "repository")),
])
def test_bad_settings_are_refused_before_anything_is_registered(
    tmp_path: Path, change: dict[str, object], fragments: tuple[str, ...]
) -> None:
    folder = _copy(tmp_path)
    path = folder / "Pulumi.aks.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"].update(change)
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ProgramFailed) as failure:
        record_stack(find_project(folder), "aks")
    message = str(failure.value)
    assert message.startswith("Pulumi.aks.yaml: "), message
    for fragment in fragments:
        assert fragment in message, message
    assert failure.value.registrations == []
