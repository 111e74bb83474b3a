"""docs/identities.md's threat model is what the workflows and the bootstrap say: each job that signs in
or holds a token is in the row of its environment, with its workflow, job and triggers; each identity the
bootstrap trusts, each Pulumi Cloud team its issuer hands out and each environment's rule is named in the
row of the environment it serves. Derived here, so neither the table nor the code can drift alone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.components.offline import Recording, record_stack
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
DOC = REPO / "docs" / "identities.md"
PR_TRIGGERS = {"pull_request", "pull_request_target"}


def table() -> dict[str, dict[str, str]]:
    """The threat model's rows by their first cell, each a dict of column -> cell."""
    section = DOC.read_text().split("## The threat model", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True)) for line in lines[2:]]
    return {row["who"]: row for row in rows}


def triggers(workflow: dict[str, Any]) -> list[str]:
    on = workflow.get("on", workflow.get(True))
    return [on] if isinstance(on, str) else list(on)


def environment(job: dict[str, Any]) -> str | None:
    env = job.get("environment")
    return env.get("name") if isinstance(env, dict) else env


def rows_of_job(workflow: dict[str, Any], job: dict[str, Any]) -> set[str]:
    """The rows a job belongs in, from its environment and triggers."""
    env = environment(job)
    if env is None:
        return {"pull request token"} if PR_TRIGGERS & set(triggers(workflow)) else {"main and tag token"}
    if "preview" in env:
        return {"preview"}
    if env == "pypi":
        return {"release"}
    if env == "${{ inputs.stack }}":  # drill.yml: its first step refuses every stack but aks-dev-*/gke-dev-*
        (guard,) = [s for s in job["steps"] if s.get("name") == "Only dev stacks"]
        assert r"(aks|gke)-dev-" in guard["run"]
        return {"deploy"}
    assert env == "${{ matrix.stack }}", env  # deploy.yml: any stack the bootstrap made an environment for
    return {"deploy", "prod deploy"}


def test_every_job_is_in_the_row_of_its_environment_with_its_workflow_and_triggers() -> None:
    rows = table()
    seen: set[str] = set()
    jobs = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = yaml.safe_load(path.read_text())
        for name, job in workflow["jobs"].items():
            jobs += 1
            for key in rows_of_job(workflow, job):
                seen.add(key)
                cell = rows[key]["started by"]
                assert f"`{path.name}`" in cell and f"`{name}`" in cell, (key, path.name, name, cell)
                started = triggers(workflow)
                assert started, path.name
                for trigger in started:
                    assert f"`{trigger}`" in cell, (key, trigger, cell)
                if (job.get("permissions") or {}).get("id-token") != "write":
                    assert "`GITHUB_TOKEN` only" in rows[key]["signs in as"], (key, name)
    assert jobs > 5 and seen == set(rows), "every row is some job's, and every job has a row"


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    """Both shipped bootstrap stacks, and the AKS one with the self-managed backend it makes (the shipped
    GKE one makes its own)."""
    project = find_project(REPO / "infra" / "bootstrap")
    recordings = {stack: record_stack(project, stack) for stack in project.stacks()}
    root = tmp_path_factory.mktemp("blob")
    for name in ("Pulumi.yaml", "stacks", "infra"):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, root / name)
    path = root / "infra" / "bootstrap" / "Pulumi.aks.yaml"
    document = yaml.safe_load(path.read_text())
    del document["config"]["spotkube:pulumiOrganization"]
    document["config"] |= {"spotkube:backendUrl": "azblob://spotkube-state?storage_account=spotkubestate",
                           "spotkube:createBackend": True}
    path.write_text(yaml.safe_dump(document))
    return {**recordings, "aks-blob": record_stack(find_project(path.parent), "aks")}


def row_of_environment(name: str, prod_stacks: set[str]) -> str:
    return "preview" if name.startswith("preview-") else "prod deploy" if name in prod_stacks else "deploy"


def _prod(recording: Recording) -> set[str]:
    return {r.inputs["environment"] for r in recording.registrations
            if r.type == "github:index/repositoryEnvironment:RepositoryEnvironment" and r.inputs.get("reviewers")}


def test_each_identity_team_and_rule_the_bootstrap_registers_is_named_in_its_row(
        bootstrap: dict[str, Recording]) -> None:
    rows = table()
    checked = 0
    for stack, recording in bootstrap.items():
        cloud, prod = stack.split("-")[0], _prod(recording)
        assert prod, f"the {cloud} example serves a prod stack"
        for r in recording.registrations:
            if r.type == "azure-native:managedidentity:FederatedIdentityCredential":
                env = r.inputs["subject"].rsplit(":environment:", 1)[1]
                who = r.inputs["resourceName"].replace(env, "<stack>")
                assert f"`{who}`" in rows[row_of_environment(env, prod)]["signs in as"], (env, who)
                checked += 1
            elif r.type == "pulumiservice:index:OidcIssuer":
                for policy in r.inputs["policies"]:
                    env = policy["rules"]["sub"].rsplit(":environment:", 1)[1]
                    team = (policy["teamName"].replace(f"-{cloud}", "-<cloud>") if env.startswith("preview-")
                            else policy["teamName"].replace(env, "<stack>"))
                    assert f"`{team}`" in rows[row_of_environment(env, prod)]["signs in as"], (env, team)
                    checked += 1
            elif r.type == "pulumiservice:index:TeamStackPermission":
                permission = {101: "Stack Read", 102: "Stack Write"}[r.inputs["permission"]]
                env = r.inputs["team"].removeprefix("spotkube-")
                assert permission in rows[row_of_environment(env, prod)]["signs in as"], (env, permission)
                checked += 1
            elif r.type == "github:index/repositoryEnvironment:RepositoryEnvironment":
                env, cell = r.inputs["environment"], rows[row_of_environment(r.inputs["environment"], prod)]
                rules = cell["GitHub environment"]
                if r.inputs.get("deploymentBranchPolicy") == {"protectedBranches": True, "customBranchPolicies": False}:
                    assert "protected branches only" in rules and cell["from which branches"] == "protected branches"
                else:
                    assert "no branch rule" in rules and f"`{env}`" in rules, env
                assert ("required reviewers" in rules) is bool(r.inputs.get("reviewers")), env
                checked += 1
    assert checked > 10


def test_the_prod_row_names_the_only_identity_that_may_use_its_key(bootstrap: dict[str, Recording]) -> None:
    """The key's one deploy-side grantee is the prod stack's own identity, as its row says."""
    recording = bootstrap["aks"]
    identities = {r.urn: r.inputs["resourceName"] for r in recording.registrations
                  if r.type == "azure-native:managedidentity:UserAssignedIdentity"}
    users = {identities[urn] for r in recording.registrations if r.type == "azure-native:authorization:RoleAssignment"
             and "/providers/Microsoft.KeyVault/" in r.inputs["scope"] for urn in r.dependencies if urn in identities}
    assert users == {"spotkube-deploy-aks-prod-eastus"}
    assert re.search(r"the only identity with its key", table()["prod deploy"]["reads"])


#: The state stores' roles as the threat model names them, by role name or Azure role definition id.
STATE_ROLES = {"roles/storage.objectUser": "`roles/storage.objectUser`",
               "roles/storage.objectViewer": "`roles/storage.objectViewer`",
               "ba92f5b4-2d11-453d-a403-e96b0029c9fe": "Storage Blob Data Contributor",
               "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1": "Storage Blob Data Reader"}
STATE_STORES = ("gcp:storage/bucket:Bucket", "azure-native:storage:BlobContainer")


def _trusted(recording: Recording) -> dict[str, set[str]]:
    """Each identity's (service account's or managed identity's) URN -> the GitHub environments it trusts."""
    identities = {r.urn for r in recording.registrations if r.type in (
        "gcp:serviceaccount/account:Account", "azure-native:managedidentity:UserAssignedIdentity")}
    found: dict[str, set[str]] = {}
    for r in recording.registrations:
        subject = r.inputs.get("subject") or (r.inputs.get("member") if r.inputs.get("role") ==
                                              "roles/iam.workloadIdentityUser" else None)
        if subject and ":environment:" in subject:
            for urn in set(r.dependencies) & identities:
                found.setdefault(urn, set()).add(subject.rsplit(":environment:", 1)[1])
    return found


def test_each_state_store_grant_is_named_in_the_row_of_the_environments_it_serves(
        bootstrap: dict[str, Recording]) -> None:
    """A self-managed backend's grants: the writer's row names its write role and the state it writes, the
    preview's its read role; a prod stack's store is its own."""
    rows, checked = table(), 0
    for stack in ("gke", "aks-blob"):
        recording = bootstrap[stack]
        prod, trusted = _prod(recording), _trusted(recording)
        stores = {r.urn: r for r in recording.registrations if r.type in STATE_STORES}
        assert stores, f"the {stack} bootstrap makes its backend's storage"
        for grant in recording.registrations:
            if not set(grant.dependencies) & set(stores):
                continue
            role = grant.inputs.get("role") or grant.inputs.get("roleDefinitionId", "").rsplit("/", 1)[-1]
            if role not in STATE_ROLES:
                continue
            (identity,) = set(grant.dependencies) & set(trusted)
            for env in trusted[identity]:
                row = rows[row_of_environment(env, prod)]
                assert STATE_ROLES[role] in row["signs in as"], (env, role)
                writes = role in ("roles/storage.objectUser", "ba92f5b4-2d11-453d-a403-e96b0029c9fe")
                assert ("state" in row["writes"]) is writes, (env, row["writes"])
                if env in prod:
                    assert "its own bucket or container" in row["signs in as"], env
                checked += 1
    assert checked >= 6, "both clouds grant the preview, the shared deploy identity and a prod one"
