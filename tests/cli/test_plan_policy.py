"""`spotkube plan` and the policy pack never disagree: over every shipped stack, and over doctored
registrations that break each rule.

The pack (policy/__main__.py) can't be imported with pulumi-policy here (it pins protobuf 5, kfp
needs 6), so a stand-in `pulumi_policy` module records the policies the pack declares; the test then
calls each policy's `validate` the way pulumi-policy does, with the inputs unwrapped of their secret
markers, and compares its violations with the plan's.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import importlib.util
import shutil
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.clouds.aks.resources import AGENT_POOL_TYPE, CLUSTER_TYPE
from spotkube.clouds.gke.resources import NODE_POOL_TYPE
from spotkube.components.offline import StackRun, run_stack, unwrapped
from spotkube.platform import contract
from spotkube.platform.project import Project, find_project
from spotkube.platform.registration import Registration
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class _Policy:
    name: str
    description: str
    validate: Callable[..., None]
    enforcement_level: str


@dataclasses.dataclass
class _StackPolicy(_Policy):
    """A StackValidationPolicy: its `validate` takes every resource of the stack at once."""


def _load_pack() -> list[_Policy]:
    """policy/__main__.py's policies, with a stand-in for the pulumi_policy names it imports."""
    stand_in = types.ModuleType("pulumi_policy")
    stand_in.EnforcementLevel = types.SimpleNamespace(  # type: ignore[attr-defined]
        MANDATORY="mandatory", ADVISORY="advisory")
    stand_in.ResourceValidationPolicy = _Policy  # type: ignore[attr-defined]
    stand_in.StackValidationPolicy = _StackPolicy  # type: ignore[attr-defined]
    for name in ("PolicyPack", "ReportViolation", "ResourceValidation", "ResourceValidationArgs", "StackValidation",
                 "StackValidationArgs"):
        setattr(stand_in, name, object)
    spec = importlib.util.spec_from_file_location("spotkube_policy_pack", REPO / "policy" / "__main__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("pulumi_policy")
    sys.modules["pulumi_policy"] = stand_in
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["pulumi_policy"]
        else:
            sys.modules["pulumi_policy"] = saved
    return module.policies()


PACK = _load_pack()
RESOURCE_POLICIES = [p for p in PACK if not isinstance(p, _StackPolicy)]
STACK_POLICIES = [p for p in PACK if isinstance(p, _StackPolicy)]


def _policy_resources(run: StackRun) -> list[types.SimpleNamespace]:
    return [types.SimpleNamespace(resource_type=r.type, name=r.name, props=unwrapped(r.inputs))
            for r in run.registrations]


def pack_verdict(run: StackRun) -> set[tuple[str, str]]:
    """What `pulumi preview --policy-pack policy/` reports as mandatory: each policy over each resource."""
    found: set[tuple[str, str]] = set()
    for args in _policy_resources(run):
        for policy in RESOURCE_POLICIES:
            policy.validate(args, lambda message, urn, rule=policy.name: found.add((rule, message)))
    return found


def pack_advisories(run: StackRun) -> set[tuple[str, str]]:
    """What the pack's advisory stack policies report, over all the stack's resources at once."""
    found: set[tuple[str, str]] = set()
    stack = types.SimpleNamespace(resources=_policy_resources(run))
    for policy in STACK_POLICIES:
        policy.validate(stack, lambda message, urn, rule=policy.name: found.add((rule, message)))
    return found


def plan_verdict(run: StackRun) -> set[tuple[str, str]]:
    """The plan's resource-policy violations (the kubeconfig output rule is the plan's alone)."""
    document = stack_document(run)
    return {(f.rule, f.message) for f in document.policy if f.rule != "spotkube-kubeconfig-secret"}


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in repo_project.stacks()}


def test_the_pack_declares_one_mandatory_policy_per_rule_and_one_advisory_per_stack_rule() -> None:
    from spotkube.review.policy_rules import ADVISORY_STACK_RULES, RESOURCE_RULES

    assert [p.name for p in RESOURCE_POLICIES] == [r.name for r in RESOURCE_RULES]
    assert {p.enforcement_level for p in RESOURCE_POLICIES} == {"mandatory"}
    assert [p.name for p in STACK_POLICIES] == [r.name for r in ADVISORY_STACK_RULES]
    assert {p.enforcement_level for p in STACK_POLICIES} == {"advisory"}


def test_plan_and_pack_agree_on_a_gpu_pool_without_a_window(runs: dict[str, StackRun]) -> None:
    for stack in ("aks-dev-uksouth", "gke-dev-us-central1"):
        run = runs[stack]
        assert pack_advisories(run) == set(), stack
        anytime = run_with_anytime(run)
        document = stack_document(anytime)
        advisories = {(f.rule, f.message) for f in document.advisories}
        assert advisories == pack_advisories(anytime) != set(), stack
        assert all(rule == "spotkube-gpu-pool-upgrade-window" for rule, _ in advisories)
        gpu_pools = {p.name for p in run.spec.gpu_pools}
        assert {w.id for w in document.warnings if "is upgraded at any time" in w.message} == {
            f"policy-gpu-pool-upgrade-window:{pool}" for pool in gpu_pools}
        assert not document.errors


def test_plan_and_pack_agree_on_every_shipped_stack(runs: dict[str, StackRun]) -> None:
    assert runs, "the shipped stacks"
    for stack, run in runs.items():
        assert plan_verdict(run) == pack_verdict(run) == set(), stack


def run_with_anytime(run: StackRun) -> StackRun:
    """The stack planned again with `cluster.maintenance.anytime: true` (no window, no busy periods)."""
    folder = Path(tempfile.mkdtemp())
    (folder / "stacks").mkdir()
    (folder / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    shutil.copytree(REPO / "infra", folder / "infra")
    config = yaml.safe_load((REPO / run.source).read_text())
    cluster = config["config"].setdefault("spotkube:cluster", {})
    cluster["maintenance"] = {"anytime": True}
    (folder / run.source).write_text(yaml.safe_dump(config))
    return run_stack(find_project(folder), run.stack)


def _doctor(run: StackRun, type_token: str, change: Callable[[dict[str, Any]], None],
            pick: Callable[[Registration], bool] = lambda r: True) -> StackRun:
    """The run with the first matching registration's inputs changed."""
    target = next(r for r in run.registrations if r.type == type_token and pick(r))
    inputs = copy.deepcopy(dict(target.inputs))
    change(inputs)
    doctored = dataclasses.replace(target, inputs=inputs)
    return dataclasses.replace(run, registrations=[doctored if r is target else r for r in run.registrations])


def _spot(registration: Registration) -> bool:
    labels = registration.inputs.get("nodeLabels") or (registration.inputs.get("nodeConfig") or {}).get("labels")
    return (labels or {}).get(contract.CAPACITY_LABEL) == "spot"


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda inputs: inputs.__setitem__(key, value)


def _drop_gpu_taint(inputs: dict[str, Any]) -> None:
    inputs["nodeTaints"] = [t for t in inputs.get("nodeTaints", []) if not t.startswith("nvidia.com/gpu")]


def _drop_gke_gpu_taint(inputs: dict[str, Any]) -> None:
    config = inputs["nodeConfig"]
    config["taints"] = [t for t in config.get("taints", []) if t.get("key") != "nvidia.com/gpu"]


def _system_on_spot(inputs: dict[str, Any]) -> None:
    inputs["agentPoolProfiles"][0]["scaleSetPriority"] = "Spot"


def _gke_spot_floor(inputs: dict[str, Any]) -> None:
    inputs["autoscaling"] = {**inputs["autoscaling"], "totalMinNodeCount": 2, "minNodeCount": 2}


def _doctored_runs(runs: dict[str, StackRun]) -> Iterator[tuple[str, StackRun]]:
    aks, gke = runs["aks-prod-eastus"], runs["gke-prod-europe-west4"]
    yield "AKS spot pool deallocates", _doctor(aks, AGENT_POOL_TYPE, _set("scaleSetEvictionPolicy", "Deallocate"),
                                               _spot)
    yield "AKS spot pool min 1", _doctor(aks, AGENT_POOL_TYPE, _set("minCount", 1), _spot)
    yield "AKS GPU pool without the GPU taint", _doctor(aks, AGENT_POOL_TYPE, _drop_gpu_taint, _spot)
    yield "AKS system pool on spot", _doctor(aks, CLUSTER_TYPE, _system_on_spot)
    yield "AKS retired VM size", _doctor(aks, AGENT_POOL_TYPE, _set("vmSize", "Standard_NC6"), _spot)
    yield "GKE spot pool min 2", _doctor(gke, NODE_POOL_TYPE, _gke_spot_floor, _spot)
    yield "GKE GPU pool without the GPU taint", _doctor(gke, NODE_POOL_TYPE, _drop_gke_gpu_taint, _spot)
    secret = Registration("kubernetes:core/v1:Secret", "minio", "urn:minio", "", True, {
        "metadata": {"name": "mlpipeline-minio-artifact"},
        "data": {"accesskey": base64.b64encode(b"minio").decode(),
                 "secretkey": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
                               "value": base64.b64encode(b"minio123").decode()}},
    })
    yield "KFP default credentials, one of them a secret", dataclasses.replace(
        aks, registrations=[*aks.registrations, secret])


def test_plan_and_pack_agree_on_doctored_registrations(runs: dict[str, StackRun]) -> None:
    cases = list(_doctored_runs(runs))
    assert cases, "the doctored registrations"
    for case, run in cases:
        plan, pack = plan_verdict(run), pack_verdict(run)
        assert plan, case  # the doctoring really breaks a rule...
        assert plan == pack, case  # ...and both report exactly the same violations
        assert stack_document(run).errors, case  # which fail the plan
