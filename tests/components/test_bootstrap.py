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
from spotkube.clouds.gke.bootstrap import prod_account_id
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
        environments = {f"preview-{stack}", *settings(stack)["stacks"]}  # type: ignore[misc]
        assert set(recording.outputs) == environments | {SECRETS_PROVIDERS}, "the example serves a prod stack"
        for name, output in recording.outputs.items():
            if name == SECRETS_PROVIDERS:
                continue
            assert not output.secret and output.value, name
            assert all(value for value in output.value.values()), f"{stack}: {name} has an empty variable"
            (preview if name.startswith("preview-") else deploy).update(output.value)
            written = {(r.inputs["variableName"], r.inputs["value"]) for r in of_type(
                recording, "github:index/actionsEnvironmentVariable:ActionsEnvironmentVariable")
                if r.inputs["environment"] == name}
            assert written == set(output.value.items()), f"{stack}: the bootstrap writes {name}'s variables"
    assert preview == read_vars("preview.yml")
    # DEPLOY_STACKS is the team's own repository variable (which stacks deploy.yml deploys), no identity's.
    assert deploy == read_vars("deploy.yml") - {"DEPLOY_STACKS"}


def test_every_platform_stack_gets_an_environment_with_a_branch_rule_and_prod_reviewers(
        plans: dict[str, Recording]) -> None:
    """A job naming a missing environment creates it with no rules: the bootstrap makes each stack's, which
    only protected branches enter, with required reviewers on prod; the preview's takes pull requests."""
    assert set(plans) == {"aks", "gke"}
    for stack, recording in plans.items():
        made = {r.inputs["environment"]: r for r in of_type(
            recording, "github:index/repositoryEnvironment:RepositoryEnvironment")}
        platforms = settings(stack)["stacks"]
        assert set(made) == {f"preview-{stack}", *platforms}  # type: ignore[misc]
        for name, environment in made.items():
            rule = environment.inputs.get("deploymentBranchPolicy")
            if name.startswith("preview-"):
                assert rule is None and not environment.inputs.get("reviewers")
                continue
            assert rule == {"protectedBranches": True, "customBranchPolicies": False}, name
            if "-prod-" in name:
                assert environment.inputs["reviewers"] == [{"users": [], "teams": [1234567]}], name
                assert environment.inputs["preventSelfReview"] is True and environment.protect
            else:
                assert not environment.inputs.get("reviewers"), name


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
        "spotkube-preview": {f"repo:{repo}:environment:preview-aks"},
        "spotkube-deploy": {f"repo:{repo}:environment:aks-dev-uksouth"},
        # A prod stack's own identity, which no other environment signs in as.
        "spotkube-deploy-aks-prod-eastus": {f"repo:{repo}:environment:aks-prod-eastus"},
    }
    assert set(config["stacks"]) == {"aks-dev-uksouth", "aks-prod-eastus"}  # type: ignore[arg-type]
    # Azure refuses two credential writes on one identity at once: each waits for the one before.
    pairs = [pair for found in by_identity.values() for pair in itertools.pairwise(found)]
    assert not pairs, "one credential per identity in the example"
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
        made.add((assignment.name.split("-", 1)[0], role, where))
        if assignment.name.startswith("preview-") and where == aks.RESOURCE_GROUP:
            assert inputs["scope"].endswith("/spotkube-aks-dev-uksouth"), "the preview reads non-prod only"
        if where == aks.RESOURCE_GROUP and assignment.name.startswith("deploy-"):
            # prod's group is its own identity's alone; the shared deploy identity holds nothing there
            prod = assignment.name.startswith("deploy-aks-prod-eastus-")
            assert inputs["scope"].endswith("/spotkube-aks-prod-eastus" if prod else "/spotkube-aks-dev-uksouth")
    assert made == {(a.identity, a.role.name if a.role.custom else a.role.id, a.scope)
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
    subject = f"{pool}/subject/repo:{config['repository']}:environment:"
    assert impersonation == {
        "preview-preview-gke": f"{subject}preview-gke",
        "deploy-gke-dev-us-central1": f"{subject}gke-dev-us-central1",
        # The prod stack's own account, which no other environment may impersonate.
        "deploy-gke-prod-europe-west4-gke-prod-europe-west4": f"{subject}gke-prod-europe-west4",
    }


def test_gke_binds_exactly_the_documented_roles_in_each_stack_s_project(plans: dict[str, Recording]) -> None:
    recording = plans["gke"]
    projects = {"spotkube-dev-example", "spotkube-prod-example"}
    bindings = {(r.inputs["project"], r.inputs["member"].split("@")[0].removeprefix("serviceAccount:spotkube-"),
                 r.inputs["role"].rsplit("/", 1)[-1], (r.inputs.get("condition") or {}).get("expression"))
                for r in of_type(recording, "gcp:projects/iAMMember:IAMMember")}
    # The dev stack's project is served by the shared deploy account, the prod stack's by its own.
    accounts = {"spotkube-dev-example": "deploy",
                "spotkube-prod-example": prod_account_id("gke-prod-europe-west4").removeprefix("spotkube-")}
    drilled = {"spotkube-dev-example"}  # gke-dev-us-central1 sets cluster.deployer.drills; the prod stack doesn't
    pulling = {"spotkube-prod-example"}  # gke-prod-europe-west4 sets cluster.registries; the dev stack doesn't
    previewed = {"spotkube-dev-example"}  # the preview reads non-prod only
    storing = {"spotkube-prod-example"}  # gke-prod-europe-west4 sets training.checkpointStore; the dev stack doesn't
    expected = {(p, "preview" if a.identity == "preview" else accounts[p], a.role.name.rsplit("/", 1)[-1], a.condition)
                for p in projects for a in gke.ASSIGNMENTS
                if (not a.drills_only or p in drilled) and (a.role != gke.REGISTRY_GRANTS or p in pulling)
                and (a.role != gke.CHECKPOINT_STORE or p in storing) and (a.identity != "preview" or p in previewed)}
    assert bindings == expected
    roles = {(r.inputs["project"], r.inputs["roleId"]): r.inputs["permissions"]
             for r in of_type(recording, "gcp:projects/iAMCustomRole:IAMCustomRole")}
    assert roles == {**{(p, gke.PREVIEW_READER.name): sorted(gke.PREVIEW_READER.permissions) for p in previewed},
                     **{(p, gke.EVICTION_DRILL.name): sorted(gke.EVICTION_DRILL.permissions) for p in drilled},
                     **{(p, gke.REGISTRY_GRANTS.name): sorted(gke.REGISTRY_GRANTS.permissions) for p in pulling},
                     **{(p, gke.CHECKPOINT_STORE.name): sorted(gke.CHECKPOINT_STORE.permissions) for p in storing}}


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
