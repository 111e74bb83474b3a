"""No pull request can read prod's secrets.

Whoever can push a branch runs its code, workflows included, in every job a pull request triggers. So
no such job may hold anything that decrypts a prod stack's secrets: it runs only in the `preview`
environment (whose OIDC trust is the preview identity's), never in a stack's; it hands no prod stack
to `pulumi`; and a prod stack's secrets provider is a key that only the stack's deploy identity may
use, which the bootstrap makes, so even the Pulumi token in the preview environment reads ciphertext
(`pulumi stack export --show-secrets` fails without the key)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.clouds import load_stack_spec
from spotkube.clouds.gke.bootstrap import prod_account_id
from spotkube.components.offline import Recording, record_stack
from spotkube.platform.bootstrap import SECRETS_PROVIDERS
from spotkube.platform.project import Project, find_project

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
BOOTSTRAP = REPO / "infra" / "bootstrap"
PR_TRIGGERS = {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment",
               "workflow_run", "issue_comment"}


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict[str, Any]) -> set[str]:
    on = workflow.get("on", workflow.get(True))
    return {on} if isinstance(on, str) else set(on)


def pr_workflows() -> list[Path]:
    return [path for path in sorted(WORKFLOWS.glob("*.yml")) if triggers(load(path)) & PR_TRIGGERS]


def environment(job: dict[str, Any]) -> str | None:
    env = job.get("environment")
    return env.get("name") if isinstance(env, dict) else env


def test_only_the_plain_pull_request_trigger_runs_a_pull_request_s_code() -> None:
    """pull_request_target, workflow_run and comment triggers run with the base repository's secrets."""
    assert {path.name for path in pr_workflows()} == {"offline-plan.yml", "preview.yml"}
    for path in pr_workflows():
        assert triggers(load(path)) == {"pull_request"}, path.name


#: preview.yml's environment: each cloud's bootstrap makes its own preview environment.
PREVIEW = "${{ startsWith(matrix.stack, 'gke-') && 'preview-gke' || 'preview-aks' }}"


def test_a_pull_request_s_jobs_run_in_no_environment_but_preview() -> None:
    """A stack's environment holds its deploy identity's OIDC trust; only a cloud's preview environment is
    for pull requests."""
    workflows = pr_workflows()
    assert workflows, "the pull request workflows"
    for path in workflows:
        jobs = load(path)["jobs"]
        assert jobs, path.name
        for name, job in jobs.items():
            assert environment(job) in (None, PREVIEW), f"{path.name}: {name} runs in {environment(job)!r}"


def test_no_job_a_pull_request_triggers_uses_a_stored_secret() -> None:
    """A pull request's code runs in these jobs and can print whatever they hold: not one `secrets.*`
    (GITHUB_TOKEN, GitHub's own per-job token, is `github.token` and stays allowed)."""
    workflows = pr_workflows()
    assert workflows, "the pull request workflows"
    for path in workflows:
        text = path.read_text()
        used = set(re.findall(r"secrets\.([A-Za-z0-9_]+)", text)) - {"GITHUB_TOKEN"}
        assert used == set(), f"{path.name} uses {sorted(used)}"
        assert "secrets[" not in text and "toJSON(secrets" not in text, path.name


def test_only_the_preview_environment_s_jobs_get_a_cloud_identity_or_a_pulumi_token() -> None:
    workflows = pr_workflows()
    assert workflows, "the pull request workflows"
    for path in workflows:
        jobs = load(path)["jobs"]
        assert jobs, path.name
        for name, job in jobs.items():
            signs_in = (job.get("permissions") or {}).get("id-token") == "write"
            if signs_in:
                assert environment(job) == PREVIEW, f"{path.name}: {name}"


def test_the_preview_signs_in_to_pulumi_by_oidc_exchange_or_to_a_self_managed_backend() -> None:
    """No stored Pulumi token: Pulumi Cloud's token comes from exchanging the job's OIDC token for the
    preview team's (which reads the non-prod stacks only), or the backend is a cloud bucket the preview
    identity reads."""
    job = load(WORKFLOWS / "preview.yml")["jobs"]["preview"]
    assert "PULUMI_ACCESS_TOKEN" not in job.get("env", {})
    assert job["env"]["PULUMI_BACKEND_URL"] == "${{ vars.PULUMI_BACKEND_URL }}"
    (exchange,) = [s for s in job["steps"] if s.get("uses", "").startswith("pulumi/auth-actions@")]
    assert exchange["if"] == "vars.PULUMI_BACKEND_URL == ''"
    assert exchange["with"]["requested-token-type"] == "urn:pulumi:token-type:access_token:team"
    assert exchange["with"]["scope"] == "team:${{ vars.PULUMI_TEAM }}"
    names = [s.get("name") for s in job["steps"]]
    assert names.index(exchange["name"]) < names.index("pulumi preview")


def list_previewed(cwd: Path) -> list[str]:
    """Run preview.yml's `List stacks/` step as GitHub would, in `cwd`: the stacks it hands to pulumi."""
    (step,) = [s for s in load(WORKFLOWS / "preview.yml")["jobs"]["stacks"]["steps"] if s.get("id") == "list"]
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "github-output"
        output.write_text("")
        result = subprocess.run([sys.executable, "-c", step["run"]], cwd=cwd, capture_output=True, text=True,
                                timeout=60, check=False, env={**os.environ, "GITHUB_OUTPUT": str(output)})
        assert result.returncode == 0, result.stdout + result.stderr
        return json.loads(output.read_text().removeprefix("stacks="))


def test_the_preview_never_hands_a_prod_stack_to_pulumi(repo_project: Project) -> None:
    previewed = list_previewed(REPO)
    prod = [stack for stack in repo_project.stacks() if load_stack_spec(repo_project, stack).is_prod]
    assert prod and previewed
    assert sorted(previewed) == sorted(set(repo_project.stacks()) - set(prod))


@pytest.mark.parametrize("environment_line", [
    "  spotkube:environment: prod\n",
    '  spotkube:environment: "prod"\n',
    "  spotkube:environment: 'prod'   # the real one\n",
    "  spotkube:environment: prod\n  spotkube:environment: dev\n",
    "  spotkube:region: eastus\n",
])
def test_a_stack_whose_file_may_be_prod_is_held_back(environment_line: str, tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.aks-dev-uksouth.yaml").write_text("config:\n  spotkube:environment: dev\n")
    (tmp_path / "stacks" / "Pulumi.aks-x-eastus.yaml").write_text(f"config:\n{environment_line}")
    (tmp_path / "stacks" / "Pulumi.aks-y-eastus.yaml").write_text("config: {spotkube:environment: prod}\n")
    assert list_previewed(tmp_path) == ["aks-dev-uksouth"]


def test_a_repository_of_prod_stacks_only_previews_nothing(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.aks-prod-eastus.yaml").write_text("config:\n  spotkube:environment: prod\n")
    assert list_previewed(tmp_path) == []
    assert "needs.stacks.outputs.stacks != '[]'" in load(WORKFLOWS / "preview.yml")["jobs"]["preview"]["if"]


@pytest.fixture(scope="module")
def bootstrap() -> dict[str, Recording]:
    project = find_project(BOOTSTRAP)
    return {stack: record_stack(project, stack) for stack in project.stacks()}


def test_each_prod_stack_s_secrets_provider_is_the_key_the_bootstrap_makes(
    bootstrap: dict[str, Recording], repo_project: Project
) -> None:
    providers = {stack: url for recording in bootstrap.values()
                 for stack, url in recording.outputs[SECRETS_PROVIDERS].value.items()}
    stacks = repo_project.stacks()
    assert stacks, "the repository ships stacks"
    for stack in stacks:
        declared = yaml.safe_load(repo_project.stack_file(stack).read_text()).get("secretsprovider")
        if load_stack_spec(repo_project, stack).is_prod:
            assert declared == providers[stack], stack
            assert declared.startswith(("azurekeyvault://", "gcpkms://"))
        else:
            assert stack not in providers


def test_on_aks_only_the_deploy_identity_and_the_administrator_may_use_a_prod_key(
    bootstrap: dict[str, Recording]
) -> None:
    recording = bootstrap["aks"]
    identities = {r.inputs["resourceName"]: r.urn for r in recording.registrations
                  if r.type == "azure-native:managedidentity:UserAssignedIdentity"}
    keys = [r for r in recording.registrations if r.type == "azure-native:keyvault:Key"]
    assert [k.inputs["keyName"] for k in keys] == ["aks-prod-eastus"]
    (vault,) = [r for r in recording.registrations if r.type == "azure-native:keyvault:Vault"]
    assert vault.inputs["properties"]["enableRbacAuthorization"] is True, "no access policy grants anything"
    assert vault.inputs["properties"]["accessPolicies"] == [], "required unless the vault is recovered"
    assert vault.inputs["properties"]["enablePurgeProtection"] is True and vault.protect
    on_keys = [r for r in recording.registrations if r.type == "azure-native:authorization:RoleAssignment"
               and "/providers/Microsoft.KeyVault/" in r.inputs["scope"]]
    assert {r.name for r in on_keys} == {"deploy-secrets-aks-prod-eastus", "administrator-secrets-aks-prod-eastus"}
    for assignment in on_keys:
        assert identities["spotkube-preview"] not in assignment.dependencies
    (deploy,) = [r for r in on_keys if r.name.startswith("deploy-")]
    # The prod stack's own deploy identity; the one the dev stacks share can't use the key.
    assert identities["spotkube-deploy-aks-prod-eastus"] in deploy.dependencies
    assert identities["spotkube-deploy"] not in deploy.dependencies
    assert deploy.inputs["roleDefinitionId"].endswith("/12338af0-0e69-4776-bea7-57ae8d297424")


def test_on_gke_only_the_deploy_service_account_may_use_a_prod_key(bootstrap: dict[str, Recording]) -> None:
    recording = bootstrap["gke"]
    keys = [r for r in recording.registrations if r.type == "gcp:kms/cryptoKey:CryptoKey"]
    assert [k.inputs["name"] for k in keys] == ["gke-prod-europe-west4"] and all(k.protect for k in keys)
    members = [r for r in recording.registrations if r.type.startswith("gcp:kms/")
               and r.type.endswith(("IAMMember", "IAMBinding", "IAMPolicy"))]
    own = prod_account_id("gke-prod-europe-west4")
    assert [(m.inputs["member"].split("@")[0], m.inputs["role"]) for m in members] == [
        (f"serviceAccount:{own}", "roles/cloudkms.cryptoKeyEncrypterDecrypter")]


def test_a_self_managed_backend_keeps_each_prod_stack_s_state_apart(bootstrap: dict[str, Recording]) -> None:
    """The preview's backend (the non-prod stacks', which it may read) is never a prod stack's: each prod
    environment names a bucket of its own, which only its deploy identity is to be granted."""
    urls = {name: output.value["PULUMI_BACKEND_URL"] for name, output in bootstrap["gke"].outputs.items()
            if name != SECRETS_PROVIDERS}
    assert urls == {"preview-gke": "gs://spotkube-example-state", "gke-dev-us-central1": "gs://spotkube-example-state",
                    "gke-prod-europe-west4": "gs://spotkube-example-state-gke-prod-europe-west4"}
