"""The policy pack's rules, both ways: every shipped stack passes, and each broken registration fails.

The registrations are the ones the offline plan records for the real `infra/__main__.py`, so a stack
or component change that breaks a guardrail fails here before any `pulumi preview` runs. The
doctored cases start from those same registrations and break exactly one thing.
"""

from __future__ import annotations

import ast
import base64
import copy
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

import spotkube
from spotkube.clouds.aks.resources import AGENT_POOL_TYPE as AKS_AGENT_POOL
from spotkube.clouds.aks.resources import CLUSTER_TYPE as AKS_CLUSTER
from spotkube.clouds.gke.resources import NODE_POOL_TYPE as GKE_NODE_POOL
from spotkube.clouds.gke.resources import gke_taint
from spotkube.components.offline import StackRun
from spotkube.platform import contract
from spotkube.platform.project import Project
from spotkube.platform.registration import Registration, StackOutput
from spotkube.review import policy_rules
from spotkube.review.policy_rules import Finding, check_outputs, check_registrations, node_pools

GPU_TAINT = str(contract.GPU_TAINT)
#: Where the project keeps Python code (never a virtualenv).
SOURCE_DIRS = ("components", "infra", "tests", "examples", "policy", "bench")


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in repo_project.stacks()}


def doctor(registration: Registration, change: Callable[[dict[str, Any]], None]) -> Registration:
    """The registration with changed inputs (a copy: registrations are frozen)."""
    inputs = copy.deepcopy(dict(registration.inputs))
    change(inputs)
    return dataclasses.replace(registration, inputs=inputs)


def registered(type_token: str, name: str, inputs: Mapping[str, Any]) -> Registration:
    """A resource another program registered, as the engine records it."""
    return Registration(type_token, name, f"urn:pulumi:dev::theirs::{type_token}::{name}", "", True, inputs)


def registrations(runs: dict[str, StackRun], cloud: str) -> list[Registration]:
    found = [r for run in runs.values() if run.spec.cloud == cloud for r in run.registrations]
    if not found:
        pytest.skip(f"no {cloud} stack in stacks/")
    return found


def first(regs: list[Registration], type_token: str, role: str, capacity: str | None = None) -> Registration:
    """The first registered pool of a role (and capacity), read through the contract's labels."""
    for registration in regs:
        if registration.type != type_token:
            continue
        inputs = registration.inputs
        labels = inputs.get("nodeLabels") or (inputs.get("nodeConfig") or {}).get("labels") or {}
        if labels.get(contract.ROLE_LABEL) == role and capacity in (None, labels.get(contract.CAPACITY_LABEL)):
            return registration
    raise AssertionError(f"no {role} {capacity or ''} pool registered as {type_token}")


# --- Every shipped stack passes ---------------------------------------------------------------------


def test_every_stack_passes_every_rule(runs: dict[str, StackRun]) -> None:
    assert runs, "the shipped stacks"
    for stack, run in runs.items():
        assert list(check_registrations(run.registrations)) == [], stack
        assert list(check_outputs(run.outputs)) == [], stack


def test_the_rules_really_looked_at_each_stack(runs: dict[str, StackRun]) -> None:
    """Guard against a vacuous pass: each stack's pools and kubeconfig reached the rules."""
    assert runs, "the shipped stacks"
    for stack, run in runs.items():
        pools = [p for r in run.registrations for p in node_pools(r.type, r.name, r.inputs)]
        assert sum(p.system for p in pools) == 1, stack
        assert len(pools) == len(run.spec.gpu_pools) + 1 + run.spec.platform_pool.enabled \
            + len(run.spec.spot_pools), stack
        assert sum(p.has_gpu for p in pools) == len(run.spec.gpu_pools), stack
        assert any("kubeconfig" in name.lower() for name in run.outputs), stack


# --- Each rule fails on a doctored registration ---------------------------------------------------


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def test_aks_gpu_pool_without_gpu_taint(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "aks"), AKS_AGENT_POOL, "gpu")
    broken = doctor(pool, lambda i: i.update(nodeTaints=[t for t in i["nodeTaints"] if t != GPU_TAINT]))
    finding = only(list(check_registrations([broken])))
    assert finding == Finding("spotkube-gpu-pool-taint",
                              f"AgentPool {pool.name!r}: GPU pool ({pool.inputs['vmSize']}) lacks the taint "
                              f"{GPU_TAINT}; add it so only pods that request GPUs land there")


def test_gke_gpu_pool_without_gpu_taint(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "gke"), GKE_NODE_POOL, "gpu")

    def drop(inputs: dict[str, Any]) -> None:
        config = inputs["nodeConfig"]
        config["taints"] = [t for t in config["taints"] if t != gke_taint(contract.GPU_TAINT)]

    finding = only(list(check_registrations([doctor(pool, drop)])))
    assert finding.rule == "spotkube-gpu-pool-taint"
    assert finding.message.startswith(f"NodePool {pool.name!r}: GPU pool ({pool.inputs['nodeConfig']['machineType']})"
                                      f" lacks the taint {GPU_TAINT}")


def test_gke_gpu_taint_with_the_wrong_effect_does_not_count(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "gke"), GKE_NODE_POOL, "gpu")

    def soften(inputs: dict[str, Any]) -> None:
        for taint in inputs["nodeConfig"]["taints"]:
            if taint["key"] == contract.GPU_TAINT.key:
                taint["effect"] = "PREFER_NO_SCHEDULE"

    assert only(list(check_registrations([doctor(pool, soften)]))).rule == "spotkube-gpu-pool-taint"


def test_aks_spot_pool_with_deallocate(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "aks"), AKS_AGENT_POOL, "gpu", "spot")
    broken = doctor(pool, lambda i: i.update(scaleSetEvictionPolicy="Deallocate"))
    assert only(list(check_registrations([broken]))) == Finding(
        "spotkube-spot-pool-delete-min-zero",
        f"AgentPool {pool.name!r}: spot pool uses eviction policy 'Deallocate'; use 'Delete' "
        "(deallocated nodes still count against quota and hamper scaling)")


def test_aks_spot_pool_with_a_floor(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "aks"), AKS_AGENT_POOL, "gpu", "spot")
    broken = doctor(pool, lambda i: i.update(minCount=2))
    assert only(list(check_registrations([broken]))) == Finding(
        "spotkube-spot-pool-delete-min-zero",
        f"AgentPool {pool.name!r}: spot pool has min 2; use min 0 so an idle pool costs nothing")


def test_gke_spot_pool_with_a_floor(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "gke"), GKE_NODE_POOL, "gpu", "spot")

    def floor(inputs: dict[str, Any]) -> None:
        autoscaling = inputs["autoscaling"]
        key = "minNodeCount" if "minNodeCount" in autoscaling else "totalMinNodeCount"
        autoscaling[key] = 1

    finding = only(list(check_registrations([doctor(pool, floor)])))
    assert finding == Finding("spotkube-spot-pool-delete-min-zero",
                              f"NodePool {pool.name!r}: spot pool has min 1; use min 0 so an idle pool costs nothing")


def test_spot_pool_without_autoscaling(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "gke"), GKE_NODE_POOL, "gpu", "spot")
    finding = only(list(check_registrations([doctor(pool, lambda i: i.pop("autoscaling"))])))
    assert finding.message == (f"NodePool {pool.name!r}: spot pool has no autoscaling minimum; enable the "
                               "autoscaler with min 0")


def test_aks_system_pool_on_spot(runs: dict[str, StackRun]) -> None:
    cluster = next(r for r in registrations(runs, "aks") if r.type == AKS_CLUSTER)
    broken = doctor(cluster, lambda i: i["agentPoolProfiles"][0].update(scaleSetPriority="Spot", minCount=0))
    system = cluster.inputs["agentPoolProfiles"][0]["name"]
    assert only(list(check_registrations([broken]))) == Finding(
        "spotkube-system-pool-on-demand",
        f"ManagedCluster {cluster.name!r} agentPoolProfiles[0] ({system}): the system pool is on spot or "
        "preemptible capacity; use on-demand capacity")


def test_gke_system_pool_on_preemptible(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "gke"), GKE_NODE_POOL, "system")

    def preempt(inputs: dict[str, Any]) -> None:
        inputs["nodeConfig"]["preemptible"] = True
        inputs["autoscaling"] = {"totalMinNodeCount": 0, "totalMaxNodeCount": 3}

    assert only(list(check_registrations([doctor(pool, preempt)]))) == Finding(
        "spotkube-system-pool-on-demand",
        f"NodePool {pool.name!r}: the system pool is on spot or preemptible capacity; use on-demand capacity")


def test_retired_vm_size(runs: dict[str, StackRun]) -> None:
    pool = first(registrations(runs, "aks"), AKS_AGENT_POOL, "gpu")
    broken = doctor(pool, lambda i: i.update(vmSize="Standard_NC6s_v3"))
    assert only(list(check_registrations([broken]))) == Finding(
        "spotkube-no-retired-vm-sizes",
        f"AgentPool {pool.name!r}: Standard_NC6s_v3 is retired; use Standard_NC4as_T4_v3 (T4) or "
        "Standard_NC24ads_A100_v4 (A100)")


def test_unlabelled_gpu_vm_size_still_needs_the_taint() -> None:
    """A GPU pool is recognised by its VM size even when someone else's program built it."""
    pool = registered(AKS_AGENT_POOL, "theirs", {"vmSize": "Standard_NC24ads_A100_v4", "minCount": 0})
    assert only(list(check_registrations([pool]))).rule == "spotkube-gpu-pool-taint"


# --- Kubeflow Pipelines' default credentials -------------------------------------------------------


def secret(name: str, **fields: Mapping[str, str]) -> Registration:
    return registered(policy_rules.K8S_SECRET, name, {"metadata": {"name": name, "namespace": "kubeflow"}, **fields})


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("registration", [
    secret("mlpipeline-minio-artifact", stringData={"accesskey": "minio", "secretkey": "minio123"}),
    secret("mlpipeline-minio-artifact", data={"accesskey": b64("minio"), "secretkey": b64("minio123")}),
], ids=["stringData", "base64 data"])
def test_kfp_default_object_store_credentials(registration: Registration) -> None:
    assert list(check_registrations([registration])) == [
        Finding("spotkube-no-kfp-default-credentials",
                f"Secret 'mlpipeline-minio-artifact': {key} is Kubeflow Pipelines' default {value!r}; "
                "generate a credential (e.g. with pulumi_random) instead")
        for key, value in (("accesskey", "minio"), ("secretkey", "minio123"))
    ]


@pytest.mark.parametrize("registration", [
    secret("mysql-secret", stringData={"username": "root", "password": ""}),
    secret("mysql-secret", data={"username": b64("root"), "password": ""}),
    secret("mysql-secret", data={"username": b64("root")}),
], ids=["empty stringData", "empty data", "absent"])
def test_kfp_empty_mysql_password(registration: Registration) -> None:
    assert list(check_registrations([registration])) == [
        Finding("spotkube-no-kfp-default-credentials",
                "Secret 'mysql-secret': password is empty, Kubeflow Pipelines' default; "
                "generate a credential (e.g. with pulumi_random) instead")
    ]


def test_generated_kfp_credentials_pass() -> None:
    generated = [
        secret("mlpipeline-minio-artifact", stringData={"accesskey": "k3yXq9", "secretkey": "Zr8w2PqL0aVt"}),
        secret("mysql-secret", data={"username": b64("root"), "password": b64("Zr8w2PqL0aVt")}),
        secret("unrelated", stringData={"password": ""}),
    ]
    assert list(check_registrations(generated)) == []


# --- Stack outputs -------------------------------------------------------------------------------


def test_plain_kubeconfig_output(runs: dict[str, StackRun]) -> None:
    run = next(iter(runs.values()))
    outputs = {**run.outputs, "kubeconfig": StackOutput(secret=False, value="apiVersion: v1")}
    assert list(check_outputs(outputs)) == [
        Finding("spotkube-kubeconfig-secret",
                "stack output 'kubeconfig' is a kubeconfig but not a secret; export it with pulumi.Output.secret")
    ]


def test_every_rule_has_a_failing_case_here() -> None:
    """A rule added to the pack without a doctored case in this file is caught."""
    source = Path(__file__).read_text()
    assert policy_rules.RESOURCE_RULES, "the pack's resource rules"
    for rule in policy_rules.RESOURCE_RULES:
        assert f'"{rule.name}"' in source, rule.name


# --- The pack itself -----------------------------------------------------------------------------


def test_the_pack_is_versioned_with_spotkube_and_kept_apart() -> None:
    """pulumi-policy pins protobuf 5 and kfp needs 6: only policy/__main__.py may import it, and the
    pack has its own requirements (pulumi-policy pins protobuf 5, kfp needs 6)."""
    root = Path(__file__).resolve().parents[2]
    manifest = yaml.safe_load((root / "policy" / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python" and manifest["version"] == spotkube.__version__
    assert "pulumi-policy==1.21.0" in (root / "policy" / "requirements.txt").read_text().split()
    importers = sorted(
        str(path.relative_to(root))
        for path in [*root.glob("*.py"), *(p for d in SOURCE_DIRS for p in (root / d).glob("**/*.py"))]
        if "venv" not in path.parts
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any((name or "").split(".")[0] == "pulumi_policy"
                for name in ([node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]))
    )
    assert importers == ["policy/__main__.py"]
