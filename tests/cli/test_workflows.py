"""The GitHub workflows: valid against GitHub's schema, clean under zizmor, and covering every stack.

The workflows can't run here, so these checks are what stands between a typo and a red pipeline,
and between a new stack and a stack nobody previews or deploys. The stacks a workflow runs are
listed from stacks/ by its first job, whose script these tests run for real.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import spotkube
from fake_http import FakeServer, Reply, Request, serving
from spotkube.platform.project import Project

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    """`on:` (PyYAML reads the bare key as the boolean True, YAML 1.1's "on")."""
    return workflow.get("on", workflow.get(True))


def steps_using(workflow: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])
            if step.get("uses", "").startswith(f"{action}@")]


def test_the_four_workflows_exist() -> None:
    assert [w.name for w in WORKFLOWS] == ["deploy.yml", "drill.yml", "offline-plan.yml", "preview.yml", "release.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_matches_githubs_schema(workflow: Path) -> None:
    result = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_high() -> None:
    """Offline audits only, and no ignore rules or comments: a high finding can't be waved through."""
    result = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--no-config", "--no-ignores", "--no-exit-codes", "--format", "json",
         str(REPO / ".github")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    findings = json.loads(result.stdout)
    high = [(f["ident"], f["locations"][0]["symbolic"]["key"], f["determinations"]["severity"])
            for f in findings if f["determinations"]["severity"] == "High"]
    assert high == []
    audited = {Path(f).name for f in re.findall(r"completed (\S+\.yml)", result.stderr)}
    assert {w.name for w in WORKFLOWS} <= audited, result.stderr


#: The job that runs Pulumi in each workflow with a stack matrix.
STACK_JOBS = {"deploy.yml": "up", "preview.yml": "preview"}


def list_stacks(workflow: str, cwd: Path, chosen: str = "", **env: str) -> tuple[int, str, list[str] | None]:
    """Run the workflow's `List stacks/` step as GitHub would (shell: python) in `cwd`, with `env` on
    top of the step's own variables: its exit code, what it printed, and the stacks it handed to the
    matrix."""
    (step,) = [s for s in load(workflow)["jobs"]["stacks"]["steps"] if s.get("id") == "list"]
    assert step["shell"] == "python"
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "github-output"
        output.write_text("")
        result = subprocess.run([sys.executable, "-c", step["run"]], cwd=cwd, capture_output=True, text=True,
                                timeout=60, check=False, env={**os.environ, "GITHUB_OUTPUT": str(output),
                                                              "CHOSEN": chosen, **env})
        written = output.read_text()
    stacks = json.loads(written.removeprefix("stacks=")) if written.startswith("stacks=") else None
    return result.returncode, result.stdout + result.stderr, stacks


@pytest.mark.parametrize("workflow", ["preview.yml"])  # deploy.yml: every stack the team enabled, below
def test_the_matrix_is_every_stack_in_the_stacks_folder_with_no_list_kept_by_hand(
    workflow: str, repo_project: Project, tmp_path: Path,
) -> None:
    text = (REPO / ".github" / "workflows" / workflow).read_text()
    for stack in repo_project.stacks():
        assert stack not in text, f"{workflow} names {stack}: the stacks must come from stacks/, not a list"
    jobs = load(workflow)["jobs"]
    job = jobs[STACK_JOBS[workflow]]
    assert job["needs"] == "stacks"
    assert job["strategy"]["matrix"] == {"stack": "${{ fromJSON(needs.stacks.outputs.stacks) }}"}
    assert job["strategy"]["fail-fast"] is False
    lister = jobs["stacks"]
    assert lister["outputs"] == {"stacks": "${{ steps.list.outputs.stacks }}"}
    assert lister["permissions"] == {"contents": "read"}
    assert (job.get("if") or "").startswith(lister.get("if") or ""), "both jobs skip the same pull requests"
    # The listing is what's in stacks/, which is Pulumi.yaml's stackConfigDir.
    assert repo_project.stack_dir == REPO / "stacks"
    code, printed, stacks = list_stacks(workflow, REPO)
    assert code == 0, printed
    # A pull request's preview leaves prod out (tests/cli/test_workflow_secrets.py).
    expected = [s for s in repo_project.stacks() if workflow == "deploy.yml" or "-prod-" not in s]
    assert stacks == expected
    # A stack file added by `spotkube new-stack` joins the matrix with no other change.
    shutil.copytree(REPO / "stacks", tmp_path / "stacks")
    (tmp_path / "stacks" / "Pulumi.aks-qa-westeurope.yaml").write_text("config:\n  spotkube:environment: qa\n")
    assert list_stacks(workflow, tmp_path)[2] == sorted([*expected, "aks-qa-westeurope"])


@pytest.mark.parametrize("workflow", sorted(STACK_JOBS))
def test_a_stack_file_whose_name_is_not_a_stack_name_stops_the_run(workflow: str, tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev eu.yaml").write_text("config: {}\n")
    code, printed, stacks = list_stacks(workflow, tmp_path)
    assert (code, stacks) == (1, None)
    assert "::error::" in printed and "dev eu" in printed


def test_a_manual_deploy_runs_the_one_chosen_stack_which_must_exist(repo_project: Project) -> None:
    stack_input = triggers(load("deploy.yml"))["workflow_dispatch"]["inputs"]["stack"]
    assert stack_input["type"] == "string" and stack_input["required"] is True and "options" not in stack_input
    assert load("deploy.yml")["jobs"]["stacks"]["steps"][1]["env"]["CHOSEN"] == "${{ inputs.stack }}"
    code, printed, stacks = list_stacks("deploy.yml", REPO, chosen="aks-prod-mars")
    assert (code, stacks) == (1, None)
    assert "::error::'aks-prod-mars' is not a stack; stacks/ has " + ", ".join(repo_project.stacks()) in printed


def test_least_privilege_and_no_persisted_credentials() -> None:
    assert WORKFLOWS, "the repository's workflows"
    for path in WORKFLOWS:
        workflow = load(path.name)
        assert workflow["permissions"] == {}, path.name
        assert workflow["jobs"], path.name
        for job in workflow["jobs"].values():
            assert "write-all" not in str(job.get("permissions")), path.name
        checkouts = steps_using(workflow, "actions/checkout")
        assert checkouts, path.name
        for checkout in checkouts:
            assert checkout["with"]["persist-credentials"] is False, path.name
        actions = [s for job in workflow["jobs"].values() for s in job.get("steps", []) if "uses" in s]
        assert actions, path.name
        for step in actions:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_preview_runs_pulumi_preview_with_oidc_per_cloud() -> None:
    preview = load("preview.yml")
    assert set(triggers(preview)) == {"pull_request"}
    job = preview["jobs"]["preview"]
    assert job["permissions"] == {"contents": "read", "id-token": "write", "pull-requests": "write"}
    assert job["env"]["ARM_USE_OIDC"] == "true"
    assert {"ARM_CLIENT_ID", "ARM_TENANT_ID", "ARM_SUBSCRIPTION_ID"} <= set(job["env"])
    (pulumi,) = steps_using(preview, "pulumi/actions")
    assert pulumi["with"]["command"] == "preview" and pulumi["with"]["comment-on-pr"] is True
    assert pulumi["with"]["stack-name"] == "${{ matrix.stack }}"
    (google,) = steps_using(preview, "google-github-actions/auth")
    assert google["if"] == "startsWith(matrix.stack, 'gke-')"
    assert {"workload_identity_provider", "service_account"} <= set(google["with"])
    assert "cancel-in-progress" in preview["concurrency"] and "pull_request.number" in preview["concurrency"]["group"]


def test_deploy_waits_per_stack_and_never_cancels() -> None:
    job = load("deploy.yml")["jobs"]["up"]
    assert job["environment"]["name"] == "${{ matrix.stack }}"
    assert job["concurrency"] == {"group": "deploy-${{ matrix.stack }}", "cancel-in-progress": False}
    (pulumi,) = steps_using(load("deploy.yml"), "pulumi/actions")
    assert pulumi["with"]["command"] == "up"


def test_offline_plan_runs_no_privileged_trigger_and_holds_no_secret() -> None:
    """A pull request's code runs here; the GCP billing key stays out (the refresh reads Azure's keyless list)."""
    text = (REPO / ".github" / "workflows" / "offline-plan.yml").read_text()
    workflow = yaml.safe_load(text)
    assert set(triggers(workflow)) == {"pull_request"}
    assert "secrets." not in text
    assert "SPOTKUBE_GCP_BILLING_API_KEY" not in json.dumps(workflow)


def test_the_plan_comment_does_not_wait_for_the_tests_which_still_run_beside_it() -> None:
    """The reviewer reads the plan in about a minute; `make test` runs in its own job, which the branch
    protection rule requires, so the tests still gate the merge."""
    jobs = load("offline-plan.yml")["jobs"]
    assert set(jobs) == {"tests", "plan"}
    assert "needs" not in jobs["plan"] and "needs" not in jobs["tests"]
    runs = {name: [s.get("run", "") for s in job["steps"]] for name, job in jobs.items()}
    assert "make test" in runs["tests"]
    assert "make setup" in runs["plan"] and not any("make test" in r for r in runs["plan"])
    for job in jobs.values():
        (cache,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
        assert "~/.cache/uv" in cache["with"]["path"]
        assert "hashFiles('constraints.txt', 'pyproject.toml'" in cache["with"]["key"]


def test_the_pr_plan_refreshes_prices_first_says_where_they_come_from_and_is_strict() -> None:
    steps = {s.get("name"): s for s in load("offline-plan.yml")["jobs"]["plan"]["steps"]}
    names = list(steps)
    assert names.index("Refresh prices") < names.index("spotkube plan")
    refresh, plan = steps["Refresh prices"], steps["spotkube plan"]
    assert refresh["env"]["SPOTKUBE_PRICES"] == plan["env"]["PRICE_FILE"]
    assert "spotkube prices refresh --format markdown > prices.md" in refresh["run"]
    assert "the bundled table is used" in refresh["run"], "a failed refresh says so and the plan goes on"
    assert "cat prices.md > plan.md" in plan["run"], "the comment starts with the prices' source and date"
    assert 'export SPOTKUBE_PRICES="$PRICE_FILE"' in plan["run"]
    assert "spotkube plan --all --strict --diff \"$base\" --format markdown --max-chars \"$budget\"" in plan["run"]
    assert "SPOTKUBE_GCP_BILLING_API_KEY" not in json.dumps(plan), "the key reaches the refresh only"


@pytest.mark.parametrize("where", ["offline-plan.yml", "action"])
def test_the_comment_is_posted_as_spotkube_printed_it_and_every_plan_is_kept(where: str) -> None:
    """spotkube made the comment fit (--max-chars); the workflow cuts nothing, and the plans the comment
    names as left out are in the artifact it points at."""
    if where == "action":
        workflow = yaml.safe_load((REPO / ".github/actions/plan-comment/action.yml").read_text())
        steps = workflow["runs"]["steps"]
        script = (REPO / ".github/actions/plan-comment/plan.sh").read_text()
    else:
        steps = load(where)["jobs"]["plan"]["steps"]
        script = next(s["run"] for s in steps if s.get("name") == "spotkube plan")
    (post,) = [s for s in steps if s.get("name") == "Post or update the plan comment"]
    assert "slice" not in post["with"]["script"] and "limit" not in post["with"]["script"]
    assert "--diff" in script and "--max-chars" in script
    (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["with"]["name"] == "spotkube-plan" and upload["with"]["path"].endswith("spotkube-plan.md")
    assert "spotkube-plan.md" in script or '> "$FULL_PLAN_FILE"' in script


@pytest.mark.parametrize("name", ["deploy.yml", "preview.yml"])
def test_jobs_that_reach_the_cluster_install_its_sign_in_plugins_pinned(name: str) -> None:
    """The Kubernetes provider runs kubelogin (AKS) or gke-gcloud-auth-plugin (GKE); neither is on a
    hosted runner, and kubelogin's workloadidentity mode needs AZURE_CLIENT_ID and AZURE_TENANT_ID."""
    workflow = load(name)
    job = workflow["jobs"][STACK_JOBS[name]]
    (kubelogin,) = steps_using(workflow, "Azure/use-kubelogin")
    assert re.fullmatch(r"Azure/use-kubelogin@[0-9a-f]{40}", kubelogin["uses"])
    assert re.fullmatch(r"v\d+\.\d+\.\d+", kubelogin["with"]["kubelogin-version"])
    assert kubelogin["if"] == "startsWith(matrix.stack, 'aks-')"
    (gcloud,) = steps_using(workflow, "google-github-actions/setup-gcloud")
    assert gcloud["with"]["install_components"] == "gke-gcloud-auth-plugin"
    assert re.fullmatch(r"\d+\.\d+\.\d+", gcloud["with"]["version"]), "gcloud is pinned"
    assert job["env"]["AZURE_CLIENT_ID"] == "${{ vars.ARM_CLIENT_ID }}"
    assert job["env"]["AZURE_TENANT_ID"] == "${{ vars.ARM_TENANT_ID }}"
    names = [step.get("name", step.get("uses", "")) for step in job["steps"]]
    pulumi_step = next(i for i, n in enumerate(names) if n.startswith("pulumi "))
    assert names.index("Install kubelogin") < pulumi_step
    assert names.index("Install gke-gcloud-auth-plugin") < pulumi_step


def _dev_guard(stack: str, pool: str = "t4spot", timeout: str = "45m") -> subprocess.CompletedProcess[str]:
    """The drill workflow's first step, run as GitHub would (shell: python)."""
    (step,) = [s for s in load("drill.yml")["jobs"]["drill"]["steps"] if s.get("name") == "Only dev stacks"]
    assert step["shell"] == "python"
    return subprocess.run([sys.executable, "-c", step["run"]], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "STACK": stack, "POOL": pool, "TIMEOUT": timeout})


def test_the_drill_is_dispatched_by_hand_on_dev_stacks_only() -> None:
    workflow = load("drill.yml")
    assert set(triggers(workflow)) == {"workflow_dispatch"}
    assert set(triggers(workflow)["workflow_dispatch"]["inputs"]) == {"stack", "pool", "timeout"}
    job = workflow["jobs"]["drill"]
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    assert job["environment"]["name"] == "${{ inputs.stack }}"
    assert job["concurrency"] == {"group": "drill-${{ inputs.stack }}", "cancel-in-progress": False}
    assert job["steps"][0]["name"] == "Only dev stacks", "nothing is installed or signed in before the check"
    assert _dev_guard("aks-dev-uksouth").returncode == 0
    assert _dev_guard("gke-dev-us-central1", "l4-spot", "30m").returncode == 0
    refused = _dev_guard("aks-prod-eastus")
    assert refused.returncode == 1 and "'aks-prod-eastus' is not a dev stack" in refused.stdout
    assert _dev_guard("aks-dev-uksouth", pool="t4spot; rm -rf /").returncode == 1
    assert _dev_guard("aks-dev-uksouth", timeout="forever").returncode == 1


def test_the_drill_runs_spotkube_drill_and_keeps_its_json() -> None:
    workflow = load("drill.yml")
    job = workflow["jobs"]["drill"]
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert 'spotkube drill --stack "$STACK" --pool "$POOL" --run' in runs and "--format json > drill.json" in runs
    assert '-e ".[all,drill]"' in runs, "the Kubernetes client is the drill extra; the plan needs the clouds' SDKs"
    assert 'pulumi stack output kubeconfig --show-secrets --stack "$STACK" > "$RUNNER_TEMP/kubeconfig"' in runs
    assert "${{" not in runs, "inputs reach the scripts through the environment, never spliced into them"
    (upload,) = steps_using(workflow, "actions/upload-artifact")
    assert upload["with"]["path"] == "drill.json" and upload["if"].startswith("${{ !cancelled()")
    (azure,) = steps_using(workflow, "azure/login")
    assert azure["if"] == "startsWith(inputs.stack, 'aks-')" and "client-secret" not in azure["with"]
    (google,) = steps_using(workflow, "google-github-actions/auth")
    assert google["if"] == "startsWith(inputs.stack, 'gke-')"
    (gcloud,) = steps_using(workflow, "google-github-actions/setup-gcloud")
    assert gcloud["with"]["install_components"] == "gke-gcloud-auth-plugin"


@pytest.mark.parametrize("name", ["deploy.yml", "preview.yml"])
def test_quota_is_read_with_the_job_s_identity_before_pulumi_runs(name: str) -> None:
    """`spotkube quota` needs the `refresh` extra and, on Azure, the CLI signed in with the job's OIDC token
    (DefaultAzureCredential); on deploy it runs before `pulumi up`, and its exit code stops the job."""
    workflow = load(name)
    job = workflow["jobs"][STACK_JOBS[name]]
    names = [step.get("name", step.get("uses", "")) for step in job["steps"]]
    install = job["steps"][names.index("Install the project")]["run"]
    assert '-e ".[all,refresh' in install
    (login,) = steps_using(workflow, "azure/login")
    assert login["if"] == "startsWith(matrix.stack, 'aks-')"
    assert login["with"] == {"client-id": "${{ vars.ARM_CLIENT_ID }}", "tenant-id": "${{ vars.ARM_TENANT_ID }}",
                             "subscription-id": "${{ vars.ARM_SUBSCRIPTION_ID }}"}
    quota = job["steps"][names.index("spotkube quota")]
    assert 'spotkube quota --stack "$STACK"' in quota["run"] and quota["env"] == {"STACK": "${{ matrix.stack }}"}
    assert names.index("Sign the Azure CLI in") < names.index("spotkube quota")
    pulumi_step = next(i for i, n in enumerate(names) if n.startswith("pulumi "))
    assert names.index("spotkube quota") < pulumi_step
    if name == "deploy.yml":
        assert quota["shell"] == "bash", "pipefail keeps the exit code through tee"
    else:
        comment = job["steps"][names.index("Post or update the quota comment")]
        assert "<!-- spotkube-quota-" in comment["with"]["script"]
        failing = job["steps"][-1]
        assert failing["if"] == "${{ !cancelled() && steps.quota.outputs.status != '0' }}"


# --- release.yml ----------------------------------------------------------------------------------


def test_a_release_runs_on_version_tags_only_and_never_cancels() -> None:
    release = load("release.yml")
    assert triggers(release) == {"push": {"tags": ["v*"]}}
    assert release["concurrency"]["cancel-in-progress"] is False


def test_a_release_builds_then_tests_the_built_files_before_anything_is_published() -> None:
    jobs = load("release.yml")["jobs"]
    assert (jobs["test"]["needs"], jobs["publish"]["needs"], jobs["github-release"]["needs"]) == \
        ("build", ["build", "test"], "publish")
    build_runs = [s.get("run", "") for s in jobs["build"]["steps"]]
    assert "make dist" in build_runs
    (upload,) = steps_using(load("release.yml"), "actions/upload-artifact")
    assert upload["with"]["path"] == "dist/" and upload["with"]["if-no-files-found"] == "error"
    test_runs = "\n".join(s.get("run", "") for s in jobs["test"]["steps"])
    assert 'make release-test SPOTKUBE_DIST="$PWD/dist"' in test_runs
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^release-test: .*\n\tSPOTKUBE_DIST=\"\$\(SPOTKUBE_DIST\)\" .*pytest -m release", makefile, re.M)
    assert re.search(r"^dist: .*\n(\t.*\n)*\t\$\(PY\) -m build --no-isolation", makefile, re.M)


def test_pypi_gets_the_files_by_trusted_publishing_with_no_token() -> None:
    text = (REPO / ".github" / "workflows" / "release.yml").read_text()
    assert "secrets." not in text and "password" not in text
    publish = load("release.yml")["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    (action,) = [s for s in publish["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert action["with"] == {"packages-dir": "dist/"}
    # Only the publish job may mint an OIDC token; only the GitHub release job may write to the repository.
    for name, job in load("release.yml")["jobs"].items():
        if name != "publish":
            assert "id-token" not in job["permissions"], name
        if name != "github-release":
            assert job["permissions"].get("contents", "read") == "read", name


def test_the_github_release_attaches_the_published_files() -> None:
    job = load("release.yml")["jobs"]["github-release"]
    assert job["permissions"] == {"contents": "write"}
    (step,) = [s for s in job["steps"] if "run" in s]
    assert step["run"].startswith('gh release create "$TAG" dist/* ') and "--verify-tag" in step["run"]
    assert step["env"]["TAG"] == "${{ github.ref_name }}"


@pytest.mark.parametrize(("tag", "code"), [(f"v{spotkube.__version__}", 0), ("v99.0.0", 1)])
def test_a_tag_that_is_not_the_package_version_stops_the_release(tag: str, code: int, tmp_path: Path) -> None:
    """The build job's check, run as GitHub runs a step (bash -e), against this package's metadata."""
    steps = load("release.yml")["jobs"]["build"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "The tag is the package's version"]
    python = tmp_path / ".venv" / "bin" / "python"  # the one `make dist` set up: this test's own
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    result = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "TAG": tag}, timeout=60, check=False)
    assert result.returncode == code, result.stdout + result.stderr
    assert ("::error::tag v99.0.0" in result.stdout) == bool(code)


# --- deploy.yml deploys only the stacks the team enabled --------------------------------------------


REPOSITORY = "octo-org/ml-platform"


#: GitHub's answer for an environment whose only rule is "protected branches", as the bootstrap makes it.
PROTECTED = {"protected_branches": True, "custom_branch_policies": False}
#: The protection rules GitHub lists for one with required reviewers and that branch rule.
REVIEWED = [{"id": 3755, "node_id": "MDQ6R2F0ZTM3NTU=", "type": "required_reviewers", "prevent_self_review": True,
             "reviewers": [{"type": "Team", "reviewer": {"id": 1, "slug": "platform-leads"}}]},
            {"id": 3756, "node_id": "MDQ6R2F0ZTM3NTY=", "type": "branch_policy"}]
BRANCH_ONLY = [{"id": 3757, "node_id": "MDQ6R2F0ZTM3NTc=", "type": "branch_policy"}]


def github_environment(name: str, number: int, rules: dict[str, Any] | None = None) -> dict[str, Any]:
    """One environment as GitHub's "List environments" answers it; `rules` replaces its protection fields
    (by default none: an environment a job created by naming it)."""
    return {"id": 161088068 + number, "node_id": f"EN_kwDOAAABCDEFG{number}", "name": name,
            "url": f"https://api.github.com/repos/{REPOSITORY}/environments/{name}",
            "html_url": f"https://github.com/{REPOSITORY}/deployments/activity_log?environments_filter={name}",
            "created_at": "2026-11-20T09:12:44Z", "updated_at": "2026-11-20T09:12:44Z", "can_admins_bypass": True,
            "protection_rules": [], "deployment_branch_policy": None, **(rules or {})}


def bootstrapped(prod: bool) -> dict[str, Any]:
    """The protection the bootstrap gives an environment: protected branches, and reviewers on prod."""
    return {"protection_rules": REVIEWED if prod else BRANCH_ONLY, "deployment_branch_policy": PROTECTED}


@pytest.fixture
def github() -> Iterator[tuple[FakeServer, dict[str, dict[str, Any] | None]]]:
    """GitHub's environments API on 127.0.0.1, answering the environments in the dict it yields (name ->
    protection fields, None for none), 100 a page."""
    created: dict[str, dict[str, Any] | None] = {}
    path = f"/repos/{REPOSITORY}/environments"

    def respond(request: Request) -> Reply:
        if request.path.split("?")[0] != path:
            return Reply(404, {"message": "Not Found", "status": "404"})
        page = int(request.query.get("page", ["1"])[0])
        names = list(created)[(page - 1) * 100:page * 100]
        return Reply(200, {"total_count": len(created),
                           "environments": [github_environment(n, i, created[n]) for i, n in enumerate(names)]})

    with serving() as server:
        server.respond = respond
        yield server, created


Environments = tuple[FakeServer, dict[str, dict[str, Any] | None]]


def deploy_stacks(server: FakeServer, cwd: Path = REPO, chosen: str = "",
                  listed: str = "") -> tuple[int, str, list[str] | None]:
    return list_stacks("deploy.yml", cwd, chosen, DEPLOY_STACKS=listed, GITHUB_TOKEN="ghs_test-token",
                       ENVIRONMENTS_URL=server.url(f"/repos/{REPOSITORY}/environments"))


def test_the_deploy_step_reads_the_environments_of_its_own_repository_with_its_token() -> None:
    job = load("deploy.yml")["jobs"]["stacks"]
    assert job["permissions"] == {"contents": "read", "actions": "read"}
    (step,) = [s for s in job["steps"] if s.get("id") == "list"]
    assert step["env"] == {
        "CHOSEN": "${{ inputs.stack }}", "DEPLOY_STACKS": "${{ vars.DEPLOY_STACKS }}",
        "GITHUB_TOKEN": "${{ github.token }}",
        "ENVIRONMENTS_URL": "${{ github.api_url }}/repos/${{ github.repository }}/environments"}
    assert load("deploy.yml")["jobs"]["up"]["if"] == "needs.stacks.outputs.stacks != '[]'"


def test_a_new_repository_deploys_no_example_stack_on_its_first_push(
        github: Environments, repo_project: Project) -> None:
    server, _ = github
    code, printed, stacks = deploy_stacks(server)
    assert (code, stacks) == (0, [])
    assert ("::notice::not deployed, no GitHub environment made by the bootstrap: "
            f"{', '.join(repo_project.stacks())}") in printed
    (asked,) = server.requests
    assert asked.headers["authorization"] == "Bearer ghs_test-token"
    assert asked.query["per_page"] == ["100"]


def test_a_stack_deploys_once_the_bootstrap_made_its_environment(
        github: Environments, repo_project: Project, tmp_path: Path) -> None:
    server, created = github
    created.update({"preview": None, "aks-dev-uksouth": bootstrapped(False),
                    "GKE-PROD-EUROPE-WEST4": bootstrapped(True)})  # GitHub's names ignore case
    code, printed, stacks = deploy_stacks(server)
    assert (code, stacks) == (0, ["aks-dev-uksouth", "gke-prod-europe-west4"]), printed
    # A stack added by `spotkube new-stack` joins once its environment exists, on any page.
    shutil.copytree(REPO / "stacks", tmp_path / "stacks")
    (tmp_path / "stacks" / "Pulumi.aks-qa-westeurope.yaml").write_text("config:\n  spotkube:environment: qa\n")
    teams = {f"team-{n}": None for n in range(100)}
    created_before = dict(created)
    created.clear()
    created.update({**teams, **created_before, "aks-qa-westeurope": bootstrapped(False)})
    assert deploy_stacks(server, tmp_path)[2] == ["aks-dev-uksouth", "aks-qa-westeurope", "gke-prod-europe-west4"]
    assert {r.query["page"][0] for r in server.requests[1:]} == {"1", "2"}


@pytest.mark.parametrize(("rules", "lacks"), [
    (None, "the protected-branches rule and required reviewers (a prod stack)"),
    ({"deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True},
      "protection_rules": REVIEWED}, "the protected-branches rule"),
    (bootstrapped(False), "required reviewers (a prod stack)"),
])
def test_an_environment_without_the_bootstrap_s_rules_stops_the_run(
        github: Environments, rules: dict[str, Any] | None, lacks: str) -> None:
    """An environment a job created by naming it, or one whose rules were loosened by hand, lets any branch
    sign in as its deploy identity: nothing deploys until the bootstrap's rules are back."""
    server, created = github
    created.update({"aks-dev-uksouth": bootstrapped(False), "aks-prod-eastus": rules})
    code, printed, stacks = deploy_stacks(server)
    assert (code, stacks) == (1, None)
    assert (f"::error::aks-prod-eastus's GitHub environment lacks {lacks}; it was not made by the bootstrap "
            "(infra/bootstrap), or was changed by hand: rerun the bootstrap") in printed


def test_a_stack_file_whose_environment_can_t_be_read_needs_reviewers_like_prod(
        github: Environments, tmp_path: Path) -> None:
    server, created = github
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.aks-x-eastus.yaml").write_text("config: {spotkube:environment: dev}\n")
    created["aks-x-eastus"] = bootstrapped(False)
    code, printed, _ = deploy_stacks(server, tmp_path)
    assert code == 1 and "aks-x-eastus's GitHub environment lacks required reviewers" in printed
    created["aks-x-eastus"] = bootstrapped(True)
    assert deploy_stacks(server, tmp_path)[::2] == (0, ["aks-x-eastus"])


def test_an_explicit_list_narrows_the_run_and_each_stack_still_needs_its_environment(
        github: Environments) -> None:
    server, created = github
    created.update({"aks-dev-uksouth": bootstrapped(False), "gke-dev-us-central1": bootstrapped(False),
                    "aks-prod-eastus": bootstrapped(True)})
    code, printed, stacks = deploy_stacks(server, listed="aks-dev-uksouth, gke-dev-us-central1")
    assert (code, stacks) == (0, ["aks-dev-uksouth", "gke-dev-us-central1"]), printed
    del created["gke-dev-us-central1"]
    code, printed, stacks = deploy_stacks(server, listed="aks-dev-uksouth gke-dev-us-central1")
    assert (code, stacks) == (1, None)
    assert ("::error::no GitHub environment made by the bootstrap for gke-dev-us-central1: add the stack to the "
            "bootstrap stack's spotkube:stacks and rerun it (infra/bootstrap, docs/identities.md)") in printed
    code, printed, stacks = deploy_stacks(server, listed="aks-dev-uksouth aks-dev-mars")
    assert (code, stacks) == (1, None)
    assert "::error::DEPLOY_STACKS names aks-dev-mars, which stacks/ lacks" in printed


def test_a_manual_deploy_of_a_stack_the_bootstrap_did_not_enable_is_refused(github: Environments) -> None:
    """Dispatching a stack without its environment would create the environment with no rules: refused,
    saying how to enable it."""
    server, created = github
    created["aks-dev-uksouth"] = bootstrapped(False)
    assert deploy_stacks(server, chosen="aks-dev-uksouth")[::2] == (0, ["aks-dev-uksouth"])
    code, printed, stacks = deploy_stacks(server, chosen="aks-prod-eastus")
    assert (code, stacks) == (1, None)
    assert "::error::no GitHub environment made by the bootstrap for aks-prod-eastus" in printed


def test_environments_that_can_t_be_listed_stop_the_run(github: Environments) -> None:
    server, _ = github
    server.respond = lambda request: Reply(403, {"message": "Resource not accessible by integration", "status": "403"})
    code, printed, stacks = deploy_stacks(server)
    assert (code, stacks) == (1, None)
    assert ("::error::could not list the repository's GitHub environments (HTTP Error 403: Forbidden); nothing is "
            "deployed") in printed


def _environment_guard(stack: str, made_for: str) -> subprocess.CompletedProcess[str]:
    """deploy.yml's first step in the `up` job, run as GitHub would (bash)."""
    (step,) = [s for s in load("deploy.yml")["jobs"]["up"]["steps"]
               if s.get("name") == "Only the bootstrap's environment"]
    return subprocess.run(["bash", "-e", "-c", step["run"]], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "STACK": stack, "MADE_FOR": made_for})


def test_the_deploy_job_first_checks_its_environment_is_the_bootstrap_s() -> None:
    """The bootstrap writes SPOTKUBE_STACK into each stack's environment; a job in any other runs nothing."""
    job = load("deploy.yml")["jobs"]["up"]
    first = job["steps"][0]
    assert first["name"] == "Only the bootstrap's environment"
    assert first["env"] == {"STACK": "${{ matrix.stack }}", "MADE_FOR": "${{ vars.SPOTKUBE_STACK }}"}
    assert _environment_guard("aks-dev-uksouth", "aks-dev-uksouth").returncode == 0
    refused = _environment_guard("aks-prod-eastus", "")
    assert refused.returncode == 1 and "was not made by the bootstrap" in refused.stdout


def test_deploy_verifies_the_running_platform_after_up_without_printing_the_kubeconfig() -> None:
    """`spotkube verify` reads the cluster through the stack's kubeconfig, a secret output: it goes to a
    file only the job's user reads, never to the log."""
    (job,) = [j for j in load("deploy.yml")["jobs"].values() if any(
        s.get("uses", "").startswith("pulumi/actions@") for s in j.get("steps", []))]
    names = [s.get("name") for s in job["steps"]]
    assert names.index("spotkube verify") == names.index("pulumi up") + 1
    verify = job["steps"][names.index("spotkube verify")]
    run = verify["run"]
    assert "umask 077" in run.splitlines()[0]
    assert 'pulumi stack output kubeconfig --show-secrets --stack "$STACK" > "$RUNNER_TEMP/kubeconfig"' in run
    assert '.venv/bin/spotkube verify --stack "$STACK" --kubeconfig "$RUNNER_TEMP/kubeconfig"' in run
    install = next(s["run"] for s in job["steps"] if s.get("name") == "Install the project")
    assert "drill" in install, "verify reads the cluster with the Kubernetes client (the drill extra)"
