"""The plan as a pull-request reviewer reads it: security posture, policy verdicts, every component,
masked details, stable JSON against its schema, and `--diff` against a git ref."""

from __future__ import annotations

import copy
import json
import os
import pty
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from spotkube.cli import plan_views
from spotkube.components.offline import run_stack
from spotkube.platform.project import Project, find_project
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]
Run = Callable[..., subprocess.CompletedProcess[str]]

PLAN_SCHEMA = json.loads((REPO / "schemas" / "plan.schema.json").read_text())


def _stack_config(stack: str) -> dict[str, Any]:
    body = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return {key.removeprefix("spotkube:"): value for key, value in body["config"].items()}


def _markdown(project: Project, stack: str) -> str:
    return plan_views.to_markdown([stack_document(run_stack(project, stack))])


def _cluster(config: dict[str, Any], **settings: Any) -> dict[str, Any]:
    doctored = copy.deepcopy(config)
    doctored["cluster"] = {**doctored.get("cluster", {}), **settings}
    return doctored


def test_switching_security_off_on_prod_aks_changes_the_markdown_plan(
    repo_project: Project, project_with_stack: Callable[[str, dict[str, Any]], Project]
) -> None:
    stack = "aks-prod-eastus"
    before = _markdown(repo_project, stack)
    doctored = project_with_stack(stack, _cluster(_stack_config(stack), localAccountsDisabled=False,
                                                  deletionProtection=False, authorizedIpRanges=["0.0.0.0/0"]))
    after = _markdown(doctored, stack)
    assert "| local accounts | disabled |" in before
    assert "| deletion protection | protect on |" in before
    assert "| local accounts | enabled **weak: the cluster-admin certificate bypasses Entra ID** |" in after
    assert "| deletion protection | protect off **weak:" in after
    assert "| API server | public, authorized ranges 0.0.0.0/0" in after


def test_switching_security_off_on_prod_gke_changes_the_markdown_plan(
    repo_project: Project, project_with_stack: Callable[[str, dict[str, Any]], Project]
) -> None:
    stack = "gke-prod-europe-west4"
    before = _markdown(repo_project, stack)
    doctored = project_with_stack(stack, _cluster(_stack_config(stack), private=False, deletionProtection=False))
    after = _markdown(doctored, stack)
    assert "| private nodes | on |" in before
    assert "| private nodes | off **weak: nodes have public IP addresses** |" in after
    assert "| deletion protection | deletionProtection off, protect off **weak:" in after
    assert "| shielded nodes | on |" in after
    assert "| NVIDIA device plugin | GKE's managed plugin" in after


def test_the_addons_show_the_kfp_version_its_ui_and_the_plugin_image(
    project_with_stack: Callable[[str, dict[str, Any]], Project]
) -> None:
    config = _stack_config("aks-dev-uksouth")
    config["kubeflow"] = {**config.get("kubeflow", {}), "exposeUi": True, "uiSourceRanges": ["203.0.113.0/24"]}
    document = stack_document(run_stack(project_with_stack("aks-dev-uksouth", config), "aks-dev-uksouth"))
    addons = {a.name: a for a in document.addons}
    assert addons["Kubeflow Pipelines"].value.startswith("2.17.0 from https://github.com/kubeflow/pipelines")
    assert "only from 203.0.113.0/24" in addons["Kubeflow Pipelines"].value
    assert addons["Kubeflow Pipelines"].concern
    assert addons["NVIDIA device plugin"].value == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"


def test_a_deallocate_spot_pool_fails_the_plan(
    project_with_stack: Callable[[str, dict[str, Any]], Project], spotkube: Run
) -> None:
    config = _stack_config("aks-prod-eastus")
    config["gpuPools"][0]["evictionPolicy"] = "Deallocate"
    project = project_with_stack("aks-prod-eastus", config)
    result = spotkube("plan", "-s", "aks-prod-eastus", "--format", "markdown", cwd=project.root)
    assert result.returncode == 1, result.stderr
    assert "policy spotkube-spot-pool-delete-min-zero: AgentPool 'spotkube-a100spot'" in result.stdout
    assert "eviction policy 'Deallocate'" in result.stderr


def test_strict_fails_on_warnings_and_the_default_does_not(
    project_with_stack: Callable[[str, dict[str, Any]], Project], spotkube: Run
) -> None:
    stack = "aks-prod-eastus"  # public API server by design: a security warning, not an error
    config = _stack_config(stack)
    del config["acknowledgements"]  # the shipped stack accepts it; without that, --strict fails
    project = project_with_stack(stack, config)
    relaxed = spotkube("plan", "-s", stack, cwd=project.root)
    strict = spotkube("plan", "-s", stack, "--strict", cwd=project.root)
    assert relaxed.returncode == 0, relaxed.stderr
    assert strict.returncode == 1
    assert "aks-prod-eastus: warning [security-api-server]: API server: reachable from the whole internet" in (
        " ".join(strict.stderr.split()))


def test_every_component_and_its_children_are_in_the_resource_list(repo_project: Project) -> None:
    document = stack_document(run_stack(repo_project, "aks-prod-eastus"))
    by_name = {(r.name, r.kind): r for r in document.resources if r.kind != "component"}
    by_name |= {r.name: r for r in document.resources if r.kind == "component"}
    directory = by_name["kubeflow-pipelines-platform-agnostic"]
    assert directory.kind == "component" and directory.parent == "kubeflow-pipelines"
    assert "rendered by the Kubernetes provider at deploy time" in (directory.note or "")
    assert by_name["kubeflow-pipelines"].note == "expands to 2 × Directory, 3 × RandomPassword"
    assert by_name["spotkube"].kind == "component"
    assert by_name[("spotkube-k8s", "provider")].kind == "provider"
    # Each pool is an AksGpuNodePool of the cluster; its AgentPool names the cluster as its former parent.
    assert by_name["spotkube-a100spot"].path == ("spotkube", "spotkube-a100spot")
    assert by_name["spotkube-a100spot"].note == "expands to 1 × AgentPool"
    agent_pool = by_name[("spotkube-a100spot", "resource")]
    assert agent_pool.path == ("spotkube", "spotkube-a100spot", "spotkube-a100spot")
    assert agent_pool.delete_before_replace and agent_pool.former_parents == ("spotkube",)


def test_details_mask_every_secret(repo_project: Project, spotkube: Run) -> None:
    result = spotkube("plan", "-s", "aks-dev-uksouth", "--format", "json", "--details")
    assert result.returncode == 0, result.stderr
    stack = json.loads(result.stdout)["stacks"][0]
    provider = next(r for r in stack["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert "certificate-authority-data" not in result.stdout  # the kubeconfig's body never shows
    agent_pool = next(r for r in stack["resources"] if r["name"] == "spotkube-t4spot" and r["kind"] == "resource")
    assert agent_pool["inputs"]["minCount"] == 0 and agent_pool["inputs"]["vmSize"] == "Standard_NC4as_T4_v3"
    plain = json.loads(spotkube("plan", "-s", "aks-dev-uksouth", "--format", "json").stdout)
    resources = plain["stacks"][0]["resources"]
    assert resources and all("inputs" not in r for r in resources)


def test_json_is_always_versioned_stacks_matches_its_schema_and_is_byte_stable(spotkube: Run,
                                                                               spotkube_process: Run) -> None:
    """Byte-stable from one interpreter to the next (each hashes strings with its own seed): the two full
    plans run as processes of their own."""
    one = spotkube("plan", "-s", "gke-dev-us-central1", "--format", "json")
    first = spotkube_process("plan", "--all", "--format", "json", "--details")
    second = spotkube_process("plan", "--all", "--format", "json", "--details")
    assert one.returncode == first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    for body in (json.loads(one.stdout), json.loads(first.stdout)):
        assert list(body) == ["schemaVersion", "stacks"]
        jsonschema.Draft202012Validator(PLAN_SCHEMA).validate(body)
    assert len(json.loads(one.stdout)["stacks"]) == 1


def test_the_schema_refuses_a_document_of_another_shape() -> None:
    validator = jsonschema.Draft202012Validator(PLAN_SCHEMA)
    assert not validator.is_valid({"stack": "aks-dev-uksouth", "pools": []})
    assert not validator.is_valid({"schemaVersion": 1, "stacks": []})


# --- plan --diff ------------------------------------------------------------------------------------


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository holding a copy of this project (its package included) at one commit."""
    for name in ("Pulumi.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    for folder in ("infra", "stacks", "components"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_diff_names_the_pool_the_property_and_the_cost_delta(repository: Path, spotkube: Run) -> None:
    stack_file = repository / "stacks" / "Pulumi.aks-prod-eastus.yaml"
    _edit(stack_file, "machine: Standard_D8s_v3\n    min: 2", "machine: Standard_D8s_v3\n    min: 3")
    _git(repository, "commit", "-qam", "a bigger platform floor")
    result = spotkube("plan", "-s", "aks-prod-eastus", "--diff", "HEAD~1", "--format", "markdown",
                              cwd=repository)
    assert result.returncode == 0, result.stderr
    assert "- pool platform update: min: 2 → 3" in result.stdout
    assert "`minCount: 2 → 3`" in result.stdout
    # One more D8s_v3 node, $280.32, and its OS disk, a P10 at $19.71 (the idle floor's fixed lines).
    assert "idle floor $3,787.66 → $4,087.69 (+$300.03)" in result.stdout
    assert "count: " not in result.stdout  # ignoreChanges: count is the autoscaler's
    as_json = json.loads(spotkube("plan", "-s", "aks-prod-eastus", "--diff", "HEAD~1", "-f", "json",
                                  cwd=repository).stdout)
    (stack,) = as_json["stacks"]
    assert stack["cost"]["idleFloor"]["delta"] == 300.03
    assert [r["action"] for r in stack["resources"]] == ["update"]


def test_diff_reports_replacements_and_why(repository: Path, spotkube: Run) -> None:
    stack_file = repository / "stacks" / "Pulumi.aks-prod-eastus.yaml"
    _edit(stack_file, "machine: Standard_NC24ads_A100_v4\n      capacity: on-demand",
          "machine: Standard_NC48ads_A100_v4\n      capacity: on-demand")
    _git(repository, "commit", "-qam", "two GPUs")
    result = spotkube("plan", "-s", "aks-prod-eastus", "--diff", "HEAD~1", cwd=repository)
    assert result.returncode == 0, result.stderr
    assert "vmSize: AKS fixes it at creation" in " ".join(result.stdout.replace("│", " ").split())
    # The table may wrap the action beside the Kueue quota's long field path; the Markdown keeps it on a line.
    markdown = spotkube("plan", "-s", "aks-prod-eastus", "--diff", "HEAD~1", "-f", "markdown", cwd=repository)
    assert "| **replace (delete first)** | `azure-native:containerservice:AgentPool` spotkube-a100ondemand |" \
        in markdown.stdout


def test_diff_of_an_unchanged_tree_is_one_line_and_a_bad_ref_is_one_clear_error(
        repository: Path, spotkube: Run) -> None:
    same = spotkube("plan", "-s", "gke-dev-us-central1", "--diff", "HEAD", "-f", "markdown", cwd=repository)
    assert same.returncode == 0, same.stderr
    # The pull-request comment: one summary row, and the plan under <details> without a diff.
    assert "| gke-dev-us-central1 | unchanged | ±$0.00 | ±$0.00 | pass |" in same.stdout.splitlines()
    assert "<summary><b>gke-dev-us-central1</b>: unchanged since <code>HEAD</code>; pass</summary>" in same.stdout
    assert "### gke-dev-us-central1: unchanged" not in same.stdout
    table = spotkube("plan", "-s", "gke-dev-us-central1", "--diff", "HEAD", cwd=repository)
    assert table.stdout.strip() == "gke-dev-us-central1: unchanged since HEAD"
    bad = spotkube("plan", "-s", "gke-dev-us-central1", "--diff", "no-such-ref", cwd=repository)
    assert bad.returncode == 2
    assert " ".join(bad.stderr.split()).startswith(
        f"error: --diff no-such-ref: no commit, branch or tag of that name in {repository}; give a ref `git log` "
        "knows, e.g. origin/main (after `git fetch`), HEAD~1 or a commit id.")
    assert "Traceback" not in bad.stderr


def test_details_with_diff_and_a_stack_with_all_are_refused(spotkube: Run) -> None:
    details = spotkube("plan", "-s", "gke-dev-us-central1", "--diff", "HEAD", "--details")
    both = spotkube("plan", "-s", "gke-dev-us-central1", "--all")
    assert (details.returncode, both.returncode) == (2, 2)
    assert "--diff already lists each input that changed" in " ".join(details.stderr.split())
    assert "--all plans every stack, --stack only the ones named: use one of them" in " ".join(both.stderr.split())


def test_the_issue_s_bigger_platform_pool_reads_as_not_comparable_not_as_a_saving(
        repository: Path, spotkube: Run) -> None:
    """aks-dev-uksouth's platform pool from D4s_v3 to D16s_v3, which has no UK South price: the idle floor's
    delta and its nodes' part name the pool instead of a number over fewer pools; the fixed part and the
    scenario, which the pool has no hours of, still compare."""
    stack_file = repository / "stacks" / "Pulumi.aks-dev-uksouth.yaml"
    _edit(stack_file, "  spotkube:platformPool:\n    machine: Standard_D4s_v3",
          "  spotkube:platformPool:\n    machine: Standard_D16s_v3")
    _git(repository, "commit", "-qam", "a bigger platform pool")
    markdown = spotkube("plan", "-s", "aks-dev-uksouth", "--diff", "HEAD~1", "-f", "markdown", cwd=repository)
    as_json = spotkube("plan", "-s", "aks-dev-uksouth", "--diff", "HEAD~1", "-f", "json", cwd=repository)
    assert markdown.returncode == 0, markdown.stderr
    why = "not comparable: platform, Standard_D16s_v3 in uksouth, has no price"
    assert (f"**monthly cost: idle floor $606.81 → not known ({why}); of it, nodes $508.08 → not known ({why}), "
            "fixed $98.73 → $98.73 (+$0.00); scenario $173.86 → $173.86 (+$0.00)**") in markdown.stdout
    (delta,) = [line for line in markdown.stdout.splitlines()
                if line.startswith("**monthly cost: idle floor $606.81 →")]
    assert "$338.72" not in delta  # the system pool alone is never shown as the floor
    (stack,) = json.loads(as_json.stdout)["stacks"]
    idle = stack["cost"]["idleFloor"]
    assert (idle["old"], idle["new"], idle["delta"], idle["comparable"], idle["whyNot"]) == (
        606.81, None, None, False, why)
    assert stack["cost"]["unpriced"]["old"] == [
        {"pool": "t4spot", "machine": "Standard_NC4as_T4_v3", "gpu": None, "region": "uksouth", "missing": [],
         "blocks": []}]
    assert [u["pool"] for u in stack["cost"]["unpriced"]["new"]] == ["platform", "t4spot"]


def test_an_unpriced_disk_hides_no_node_cost_in_the_diff(repository: Path, spotkube: Run) -> None:
    """aks-dev-uksouth moved to westus3, whose managed disks the bundled table doesn't price, then its
    platform pool from D4s_v3 to D8s_v3, both priced: the disks leave the idle floor and its fixed part
    unknown, while the nodes' part of it compares on its own."""
    stack_file = repository / "stacks" / "Pulumi.aks-dev-uksouth.yaml"
    _edit(stack_file, "spotkube:region: uksouth", "spotkube:region: westus3")
    _git(repository, "commit", "-qam", "a region whose disks have no price")
    _edit(stack_file, "  spotkube:platformPool:\n    machine: Standard_D4s_v3",
          "  spotkube:platformPool:\n    machine: Standard_D8s_v3")
    _git(repository, "commit", "-qam", "a bigger platform pool")
    as_json = spotkube("plan", "-s", "aks-dev-uksouth", "--diff", "HEAD~1", "-f", "json", cwd=repository)
    table = spotkube("plan", "-s", "aks-dev-uksouth", "--diff", "HEAD~1", cwd=repository)

    (stack,) = json.loads(as_json.stdout)["stacks"]
    cost = stack["cost"]
    assert (cost["nodesIdleFloor"]["old"], cost["nodesIdleFloor"]["new"], cost["nodesIdleFloor"]["delta"]) == (
        508.08, 619.04, 110.96)
    assert cost["idleFloor"]["delta"] is None and cost["fixedIdleFloor"]["delta"] is None
    assert "no managed-disk:P10 price in westus3" in cost["fixedIdleFloor"]["whyNot"]
    assert "; of it, nodes $508.08 → $619.04 (+$110.96), fixed not known → not known (not comparable: " in " ".join(
        table.stdout.split())


def test_diff_shows_a_new_stack_as_added(repository: Path, spotkube: Run) -> None:
    shutil.copy(repository / "stacks" / "Pulumi.gke-dev-us-central1.yaml",
                repository / "stacks" / "Pulumi.gke-test-us-central1.yaml")
    _edit(repository / "stacks" / "Pulumi.gke-test-us-central1.yaml", "environment: dev", "environment: test")
    result = spotkube("plan", "-s", "gke-test-us-central1", "--diff", "HEAD", "-f", "json", cwd=repository)
    markdown = spotkube("plan", "-s", "gke-test-us-central1", "--diff", "HEAD", "-f", "markdown",
                                cwd=repository)
    assert result.returncode == 0, result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    assert stack["status"] == "added"
    assert {r["action"] for r in stack["resources"]} == {"add"}
    # Each pool and setting in a phrase, not every label from `(absent)`; a new stack's cost is all new.
    assert "(absent)" not in markdown.stdout and ": :" not in markdown.stdout
    assert "- pool l4-spot added: gpu, spot, g2-standard-8, 1 × nvidia-l4, 0..4 nodes" in markdown.stdout
    assert ("- security Cluster 'spotkube-gke': API server added: IP endpoint public, any address; DNS endpoint "
            "open to IAM-authorised callers") in markdown.stdout
    assert "**monthly cost (new stack): idle floor $411.46 (+$411.46); scenario $98.37 (+$98.37)**" in markdown.stdout
    assert find_project(repository).stacks().count("gke-test-us-central1") == 1


# --- prices in the plan ------------------------------------------------------------------------------


def _user_prices(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"currency": "USD", "date": "2026-11-01", "notes": ["negotiated"], "rows": rows}))
    return path


def _t4(capacity: str, usd: float) -> dict[str, Any]:
    return {"cloud": "azure", "region": "uksouth", "sku": "Standard_NC4as_T4_v3", "kind": "machine",
            "capacity": capacity, "usdPerHour": usd, "source": "our enterprise agreement", "date": "2026-11-01"}


def test_plan_reads_the_user_price_file(tmp_path: Path, spotkube: Run) -> None:
    before = json.loads(spotkube("plan", "-s", "aks-dev-uksouth", "-f", "json").stdout)["stacks"][0]
    assert "t4spot" in before["cost"]["total"]["unpricedPools"]
    prices = _user_prices(tmp_path / "prices.json", [_t4("on-demand", 0.5), _t4("spot", 0.1)])
    result = spotkube("plan", "-s", "aks-dev-uksouth", "-f", "json", "--prices", str(prices))
    assert result.returncode == 0, result.stderr
    cost = json.loads(result.stdout)["stacks"][0]["cost"]
    assert "t4spot" not in cost["total"]["unpricedPools"]
    t4 = next(p for p in cost["pools"] if p["pool"] == "t4spot")
    assert t4["usdPerHour"] == 0.1 and t4["priceSource"] == "our enterprise agreement"


def test_an_unpriced_gpu_pool_with_a_floor_still_warns(
    project_with_stack: Callable[[str, dict[str, Any]], Project]
) -> None:
    config = _stack_config("aks-dev-uksouth")
    t4 = next(p for p in config["gpuPools"] if p["name"] == "t4spot")
    t4.update(min=1)  # spot, which no dated copy prices in UK South
    document = stack_document(run_stack(project_with_stack("aks-dev-uksouth", config), "aks-dev-uksouth"))
    assert "t4spot" in document.cost.unpriced_pools
    assert any(w.id == "cost-idle-gpu:t4spot" and "t4spot: GPU pool min is 1, so it keeps 1 GPU node(s) running "
               "while idle (unpriced)" in w.message for w in document.warnings)


def test_plan_takes_pulumis_qualified_stack_names_and_never_a_path(spotkube: Run) -> None:
    qualified = spotkube("plan", "-s", "acme/spotkube/gke-dev-us-central1", "-f", "json")
    assert qualified.returncode == 0, qualified.stderr
    assert json.loads(qualified.stdout)["stacks"][0]["stack"] == "gke-dev-us-central1"
    other = spotkube("plan", "-s", "acme/other/gke-dev-us-central1")
    assert other.returncode == 2 and "project 'other' is not this project" in other.stderr
    path = spotkube("plan", "-s", "x/../../y")
    assert path.returncode == 2 and "not a stack name" in path.stderr and "Traceback" not in path.stderr


def test_plan_shows_progress_to_a_person_and_keeps_pipes_clean(spotkube: Run) -> None:
    controller, terminal = pty.openpty()
    shown = bytearray()

    def read_all() -> None:
        """Drain the terminal while the plan runs (a full pty would stall the spinner) until it closes."""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the plan exited and the terminal's other end is closed
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        with subprocess.Popen([str(Path(sys.executable).with_name("spotkube")), "plan", "--all", "-f", "json"],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=terminal) as process:
            os.close(terminal)
            stdout, _ = process.communicate(timeout=300)
        reader.join(timeout=30)
    finally:
        os.close(controller)
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout.decode())
    assert done.returncode == 0
    assert "planned aks-dev-uksouth (1/4) in" in shown.decode() and "planned gke-prod-europe-west4 (4/4) in" in (
        shown.decode())
    assert json.loads(done.stdout)["schemaVersion"] == 2
    piped = spotkube("plan", "-s", "aks-dev-uksouth", "-f", "json")
    assert "planning" not in piped.stderr
