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
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spotkube.cli import report
from spotkube.clouds.aks.resources import AGENT_POOL_TYPE, CLUSTER_TYPE
from spotkube.clouds.gke.resources import NODE_POOL_TYPE
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import contract
from spotkube.platform.project import Project
from spotkube.platform.registration import Registration

REPO = Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class _Policy:
    name: str
    description: str
    validate: Callable[..., None]
    enforcement_level: str


def _load_pack() -> list[_Policy]:
    """policy/__main__.py's policies, with a stand-in for the pulumi_policy names it imports."""
    stand_in = types.ModuleType("pulumi_policy")
    stand_in.EnforcementLevel = types.SimpleNamespace(MANDATORY="mandatory")  # type: ignore[attr-defined]
    stand_in.ResourceValidationPolicy = _Policy  # type: ignore[attr-defined]
    for name in ("PolicyPack", "ReportViolation", "ResourceValidation", "ResourceValidationArgs"):
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


def pack_verdict(run: StackRun) -> set[tuple[str, str]]:
    """What `pulumi preview --policy-pack policy/` reports: each policy over each resource."""
    found: set[tuple[str, str]] = set()
    for registration in run.registrations:
        args = types.SimpleNamespace(resource_type=registration.type, name=registration.name,
                                     props=report.unwrapped(registration.inputs))
        for policy in PACK:
            policy.validate(args, lambda message, urn, rule=policy.name: found.add((rule, message)))
    return found


def plan_verdict(run: StackRun) -> set[tuple[str, str]]:
    """The plan's resource-policy violations (the kubeconfig output rule is the plan's alone)."""
    document = report.stack_document(run)
    return {(f.rule, f.message) for f in document.policy if f.rule != "spotkube-kubeconfig-secret"}


@pytest.fixture(scope="module")
def runs(repo_project: Project) -> dict[str, StackRun]:
    return {stack: run_stack(repo_project, stack) for stack in repo_project.stacks()}


def test_the_pack_declares_one_mandatory_policy_per_rule() -> None:
    from spotkube.review.policy_rules import RESOURCE_RULES

    assert [p.name for p in PACK] == [r.name for r in RESOURCE_RULES]
    assert {p.enforcement_level for p in PACK} == {"mandatory"}


def test_plan_and_pack_agree_on_every_shipped_stack(runs: dict[str, StackRun]) -> None:
    for stack, run in runs.items():
        assert plan_verdict(run) == pack_verdict(run) == set(), stack


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
    for case, run in _doctored_runs(runs):
        plan, pack = plan_verdict(run), pack_verdict(run)
        assert plan, case  # the doctoring really breaks a rule...
        assert plan == pack, case  # ...and both report exactly the same violations
        assert report.stack_document(run).errors, case  # which fail the plan
