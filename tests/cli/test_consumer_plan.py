"""`spotkube plan` in another team's repository: a Pulumi project of its own, whose program builds an
AKS and a GKE platform with spotkube's components among its own resources and reads its own config.

The project is written into a fresh folder outside this repository, as a team would write it, and
planned the way its developers and its CI would: `spotkube plan` run in that folder, `--diff` against
its own git history, `cost` and `pipeline-check`, and the plan-comment action's plan step.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spotkube.components.offline import ProgramFailed, run_stack
from spotkube.platform.errors import SpecError, SpotkubeError
from spotkube.platform.project import find_project
from spotkube.review.program_review import stack_documents

REPO = Path(__file__).resolve().parents[2]
SpotkubeRun = Callable[..., subprocess.CompletedProcess[str]]
BIN = Path(sys.executable).parent
ACTION = REPO / ".github" / "actions" / "plan-comment"

PROJECT = """\
name: vision-infra
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: venv
config:
  gcpProject:
    type: string
"""

STACK = """\
config:
  vision-infra:gcpProject: vision-ml-dev
  vision-infra:deployer: c0ffee00-0000-4000-8000-000000000001
  vision-infra:databasePassword:
    secure: v1:AAABAM0xNDRlYjAwMGVkNTdiYzc1ZDY5NzM=
"""

PROGRAM = """\
import pulumi
import pulumi_azure_native as azure

from spotkube import AksGpuCluster, GkeGpuCluster

config = pulumi.Config()
group = azure.resources.ResourceGroup("vision", location="northeurope")
training = AksGpuCluster("training", args={
    "environment": "dev",
    "region": "northeurope",
    "gpu_pools": [{"name": "a100", "machine": "Standard_NC24ads_A100_v4", "max": 4}],
    "cluster": {
        "resource_group_name": group.name,
        "deployer": {"object_id": config.require("deployer"), "principal_type": "ServicePrincipal"},
    },
})
inference = GkeGpuCluster("inference", args={
    "environment": "dev",
    "region": "europe-west4",
    "gpu_pools": [{"name": "l4", "machine": "g2-standard-8", "max": 8}],
    "cluster": {"project": config.require("gcpProject")},
})
pulumi.export("databasePassword", config.require_secret("databasePassword"))
pulumi.export("trainingKubeconfig", training.kubeconfig)
"""


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=vision", "-c", "user.email=vision@example.com",
                    *args], check=True, capture_output=True, timeout=60)


def write_project(folder: Path, program: str = PROGRAM, stack: str = STACK) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(PROJECT)
    (folder / "Pulumi.dev.yaml").write_text(stack)
    (folder / "__main__.py").write_text(program)
    return folder


@pytest.fixture(scope="module")
def consumer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The consumer's repository, with two commits: the second lets the GKE pool grow from 8 to 12 nodes."""
    folder = write_project(tmp_path_factory.mktemp("vision-infra"))
    _git(folder, "init", "--quiet")
    _git(folder, "add", "-A")
    _git(folder, "commit", "--quiet", "-m", "two platforms")
    (folder / "__main__.py").write_text(PROGRAM.replace('"max": 8', '"max": 12'))
    _git(folder, "commit", "--quiet", "-am", "inference grows to 12 nodes")
    return folder


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_plan_reviews_both_clusters_of_a_consumer_program(spotkube: SpotkubeRun, consumer: Path) -> None:
    done = spotkube("plan", "--stack", "dev", "--format", "json", cwd=consumer)
    stacks = _json(done)["stacks"]

    assert [(s["stack"], s["cluster"], s["cloud"], s["region"]) for s in stacks] == [
        ("dev", "training", "aks", "northeurope"), ("dev", "inference", "gke", "europe-west4")]
    training, inference = stacks
    assert [p["name"] for p in training["pools"]] == ["system", "platform", "a100"]
    assert [(p["name"], p["machine"], p["max"]) for p in inference["pools"]][-1] == ("l4", "g2-standard-8", 12)
    # Priced from the pools each cluster registered: GKE's whole, AKS's with the pools the table lacks named.
    assert inference["cost"]["total"]["complete"] is True
    # Its idle floor is priced whole: the nodes, and the fixed lines with europe-west4's balanced disks.
    inference_total = inference["cost"]["total"]
    assert inference_total["nodesIdleFloor"] > 0 and inference_total["fixedIdleFloor"] > 0
    assert inference_total["idleFloor"] == pytest.approx(
        inference_total["nodesIdleFloor"] + inference_total["fixedIdleFloor"])
    assert [p["pool"] for p in training["cost"]["pools"]] == ["system", "platform", "a100"]
    for review in stacks:
        assert review["preflight"] and all("title" in check for check in review["preflight"])
        assert review["errors"] == []
        # Each cluster's resources are its own; the program's resource group is listed apart, by type.
        assert review["otherResources"] == [{"type": "azure-native:resources:ResourceGroup", "names": ["vision"]}]
    assert {r["type"] for r in training["resources"]} >= {"azure-native:containerservice:ManagedCluster"}
    assert not any(r["type"].startswith("gcp:") for r in training["resources"])
    # The secure value reached the program as a secret: shown as one, its ciphertext never printed.
    assert training["outputs"]["databasePassword"] == {"secret": True}
    assert "AAABAM0x" not in done.stdout + done.stderr


def test_diff_in_the_consumer_repository_shows_the_changed_pool(spotkube_process: SpotkubeRun,
                                                                consumer: Path) -> None:
    diffs = _json(spotkube_process("plan", "--stack", "dev", "--diff", "HEAD~1", "--format", "json",
                                   cwd=consumer))["stacks"]

    by_name = {d["stack"]: d for d in diffs}
    assert by_name["dev/training"]["status"] == "unchanged"
    changed = by_name["dev/inference"]
    assert changed["status"] == "changed"
    assert changed["pools"] == [{"name": "l4", "action": "update", "changes": [{"path": "max", "old": 8, "new": 12}]}]


def test_cost_and_pipeline_check_take_a_consumer_stack(spotkube: SpotkubeRun, consumer: Path,
                                                       two_step_pipeline: Path) -> None:
    both = spotkube("cost", "--stack", "dev", cwd=consumer)
    assert both.returncode == 2
    assert "the program builds training, inference: name one with --cluster NAME" in both.stderr

    cost = _json(spotkube("cost", "--stack", "dev", "--cluster", "inference", "--hours", "l4=100", "--format",
                          "json", cwd=consumer))
    assert cost["stack"] == "dev/inference"
    assert {p["pool"]: p["scenarioHours"] for p in cost["cost"]["pools"]}["l4"] == 100
    assert cost["cost"]["total"]["scenario"] > 0

    checked = _json(spotkube("pipeline-check", str(two_step_pipeline), "--stack", "dev", "--format", "json",
                             cwd=consumer))
    assert [r["stack"] for r in checked["checks"]] == ["dev/training", "dev/inference"]


def test_review_settings_live_in_the_stack_file_under_spotkube_clusters(tmp_path: Path) -> None:
    stack = STACK + """\
  spotkube:clusters:
    inference:
      acknowledgements:
        - id: fallback-no-on-demand
          reason: inference waits for spot L4s; a late batch is acceptable
      cost:
        hours: {l4: 200}
"""
    run = run_stack(find_project(write_project(tmp_path, stack=stack)), "dev")
    training, inference = stack_documents(run)

    assert [a.warning.id for a in inference.acknowledged] == ["fallback-no-on-demand:nvidia-l4"]
    assert not any(w.id.startswith("fallback-no-on-demand") for w in inference.warnings)
    assert any(w.id.startswith("fallback-no-on-demand") for w in training.warnings)
    assert {p.pool.name: p.hours for p in inference.cost.pools}["l4"] == 200


@pytest.mark.parametrize(("settings", "expected"), [
    ("  spotkube:clusters:\n    serving: {}\n",
     "spotkube:clusters names serving, which the program does not build; its clusters: training, inference"),
    ("  spotkube:clusters:\n    inference: {acknowledgments: []}\n",
     "spotkube:clusters.inference.acknowledgments: is not a known key; accepted keys: acknowledgements, cost"),
])
def test_wrong_review_settings_are_refused_with_the_key(tmp_path: Path, settings: str, expected: str) -> None:
    project = find_project(write_project(tmp_path, stack=STACK + settings))
    with pytest.raises((SpecError, SpotkubeError)) as raised:
        run_stack(project, "dev")
    assert "Pulumi.dev.yaml" in str(raised.value)
    assert expected in str(raised.value)


def test_a_program_without_a_spotkube_cluster_says_so_in_one_line(tmp_path: Path) -> None:
    program = 'import pulumi_azure_native as azure\n\nazure.resources.ResourceGroup("vision", location="uksouth")\n'
    with pytest.raises(SpotkubeError) as raised:
        run_stack(find_project(write_project(tmp_path, program=program)), "dev")
    assert str(raised.value) == ("Pulumi.dev.yaml: the program (__main__.py) registers no spotkube cluster "
                                 "(AksGpuCluster or GkeGpuCluster), so there is nothing to review")


def test_a_failing_program_shows_its_own_error_at_its_own_line(spotkube: SpotkubeRun, tmp_path: Path) -> None:
    (tmp_path / "vision_settings.py").write_text("def region(config):\n    return config['region']\n")
    program = "import pulumi\nimport vision_settings\n\nvision_settings.region({})\n"
    folder = write_project(tmp_path, program=program)
    with pytest.raises(ProgramFailed) as raised:
        run_stack(find_project(folder), "dev")
    assert str(raised.value) == "vision_settings.py:2: KeyError: 'region'"

    done = spotkube("plan", "--stack", "dev", cwd=folder)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: vision_settings.py:2: KeyError: 'region'"


def test_the_plan_comment_action_is_valid_and_audited() -> None:
    schema = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ACTION / "action.yml")],
        capture_output=True, text=True, timeout=120, check=False)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    audit = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--no-config", "--no-ignores", "--no-exit-codes", "--format", "json",
         str(ACTION / "action.yml")], capture_output=True, text=True, timeout=120, check=False)
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout) == []


def test_the_plan_comment_actions_plan_step_plans_a_consumer(consumer: Path, tmp_path: Path) -> None:
    """The step's script as the action runs it, in the consumer's checkout, without a base to diff."""
    plan_file, summary = tmp_path / "plan.md", tmp_path / "summary.md"
    env = {**os.environ, "PROJECT": str(consumer), "STACKS": "dev", "STRICT": "false", "BASE_SHA": "",
           "SPOTKUBE": str(BIN / "spotkube"), "PLAN_FILE": str(plan_file), "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(["bash", str(ACTION / "plan.sh")], env=env, capture_output=True, text=True,
                          timeout=300, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    plan = plan_file.read_text()
    assert "### dev/training (aks, northeurope)" in plan
    assert "### dev/inference (gke, europe-west4)" in plan
    assert summary.read_text() == plan


def test_examples_consumer_is_plannable_with_its_dev_stack() -> None:
    """examples/consumer, planned as its own repository: both platforms reviewed, the review settings of
    its stack file applied, and no error, no warning and nothing acknowledged as it ships (its README
    shows how the deploy preflight fails)."""
    example = REPO / "examples" / "consumer"
    sys.path.insert(0, str(example))
    try:
        run = run_stack(find_project(example), "dev")
    finally:
        sys.path.remove(str(example))
        sys.modules.pop("platforms", None)
    training, inference = stack_documents(run)

    assert (training.title, inference.title) == ("dev/vision-training", "dev/vision-inference")
    assert [p.name for p in inference.pools] == ["system", "platform", "l4-ondemand", "l4-spot"]
    assert {p.pool.name: p.hours for p in inference.cost.pools}["l4-spot"] == 300
    for document in (training, inference):
        assert (document.warnings, document.acknowledged) == ([], []), document.title
    assert {o.type for o in training.others} == {
        "azure-native:resources:ResourceGroup", "gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork"}
    assert [(a.name, a.value) for a in training.addons][2] == ("Kueue", "not deployed")
    assert [a.name for a in training.addons] == ["Kubeflow Pipelines", "NVIDIA device plugin", "Kueue",
                                                 "Kubeflow Trainer"]
    assert training.addons[3].value == "not deployed"
    assert training.addons[0].value.startswith("2.17.0")
    assert inference.errors == [] and training.errors == []


def test_examples_consumer_passes_strict_as_it_ships(spotkube_process: SpotkubeRun) -> None:
    """The stack a newcomer copies: `spotkube plan --strict` in its folder exits 0, and its stack file
    acknowledges nothing. (A process of its own: the program's `platforms` module stays out of this one.)"""
    example = REPO / "examples" / "consumer"
    assert "acknowledgements" not in (example / "Pulumi.dev.yaml").read_text()
    done = spotkube_process("plan", "--stack", "dev", "--strict", cwd=example)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "acknowledged [" not in done.stdout and "\nwarning [" not in done.stdout


def test_examples_consumer_s_readme_shows_the_preflight_it_describes(tmp_path: Path) -> None:
    """Without the deployer's egress, the preflight the README names fails, worded in the component's args."""
    example = tmp_path / "consumer"
    shutil.copytree(REPO / "examples" / "consumer", example)
    platforms = example / "platforms.py"
    text = platforms.read_text()
    assert ',\n                         "egress_ranges": [runner_egress]}' in text
    platforms.write_text(text.replace(',\n                         "egress_ranges": [runner_egress]}', "}"))
    sys.path.insert(0, str(example))
    try:
        run = run_stack(find_project(example), "dev")
    finally:
        sys.path.remove(str(example))
        sys.modules.pop("platforms", None)
    training, _ = stack_documents(run)
    (finding,) = training.errors
    assert "AksGpuCluster 'vision-training' args" in finding and "cluster.deployer.egress_ranges" in finding
    readme = (REPO / "examples" / "consumer" / "README.md").read_text()
    preflight = "the declared deployer can reach the API server"
    assert preflight in finding and preflight in readme


def test_a_module_the_program_lacks_says_where_to_install_it(tmp_path: Path) -> None:
    folder = write_project(tmp_path, program="import pulumi\nimport vision_helpers_not_installed\n")
    with pytest.raises(ProgramFailed) as raised:
        run_stack(find_project(folder), "dev")
    assert str(raised.value) == (
        "__main__.py:2: ModuleNotFoundError: No module named 'vision_helpers_not_installed'; spotkube plan runs "
        "the program with the Python it runs in (Pulumi.yaml's virtualenv, venv, is not used): install the "
        "program's requirements there")
