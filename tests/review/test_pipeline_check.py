"""pipeline-check's core without kfp: reading KFP's compiled shapes and judging steps against pools.

The compiled documents here are written by hand in exactly the shapes kfp 2.17 writes (see
tests/pipelines/test_pipelines.py, which compiles real pipelines), so this file runs in the core install.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.platform import contract
from spotkube.platform.addons.argo_retries import RetryRule
from spotkube.platform.contract import Capacity, Placement, PoolContract, Requirement, Role, Toleration
from spotkube.platform.pipeline_reader import (
    PipelineCheckError,
    load_pool_contracts,
    parse_pipeline,
    read_pipeline,
    read_pool_file,
)
from spotkube.review.pipeline_check import CLUSTER_RETRY_POLICY_NOTE, check_pipeline, required_values

# --- pools of both clouds, built with the same pure contract functions the plan uses ------------


def pool(cloud: str, name: str, role: Role, capacity: Capacity, gpu: str | None = None, count: int = 0,
         critical: bool = False) -> PoolContract:
    labels = {**contract.declared_labels(cloud, name, role, capacity, gpu),
              **contract.cloud_added_labels(cloud, name, capacity, gpu)}
    taints = contract.pool_taints(cloud, role, capacity, has_gpu=gpu is not None, system_critical_only=critical)
    return PoolContract(name, role, capacity, gpu, count, labels, taints)


AKS = [
    pool("aks", "system", "system", "on-demand", critical=True),
    pool("aks", "platform", "platform", "on-demand"),
    pool("aks", "t4spot", "gpu", "spot", "nvidia-tesla-t4", 1),
]
GKE = [
    pool("gke", "system", "system", "on-demand"),
    pool("gke", "platform", "platform", "on-demand"),
    pool("gke", "t4-spot", "gpu", "spot", "nvidia-tesla-t4", 1),
    pool("gke", "l4-pre", "gpu", "preemptible", "nvidia-l4", 1),
]

# --- compiled documents in kfp 2.17's shapes ------------------------------------------------------

RETRY = {"backoffDuration": "300s", "backoffFactor": 1.0, "backoffMaxDuration": "604800s", "maxRetryCount": 5}


def executor(gpus: int | str | None = None, kind: str = "nvidia.com/gpu") -> dict[str, Any]:
    container: dict[str, Any] = {"image": "python:3.12-slim", "command": ["python"]}
    if gpus is not None:
        accelerator = {"resourceCount": str(gpus), "resourceType": kind}
        if str(gpus).isdigit():
            accelerator |= {"count": str(gpus), "type": kind}
        container["resources"] = {"accelerator": accelerator}
    return {"container": container}


def kfp_config(placement: Placement) -> dict[str, Any]:
    """A placement as kfp-kubernetes writes it into the platform spec."""
    config: dict[str, Any] = {}
    if placement.tolerations:
        config["tolerations"] = [
            {k: v for k, v in {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}.items() if v}
            for t in placement.tolerations
        ]
    affinity = [{"matchExpressions": [r.to_k8s() for r in term]} for term in placement.required or ()]
    affinity += [{"matchExpressions": [r.to_k8s() for r in term], "weight": float(weight)}
                 for weight, term in placement.preferred]
    if affinity:
        config["nodeAffinity"] = affinity
    if placement.node_selector:
        config["nodeSelector"] = {"labels": dict(placement.node_selector)}
    return config


def compiled(steps: dict[str, tuple[Placement | dict[str, Any], dict[str, Any], dict[str, Any] | None]],
             name: str = "demo") -> list[dict[str, Any]]:
    """Two documents: the pipeline spec with one component per step, and the platform spec."""
    components, executors, tasks, platform = {}, {}, {}, {}
    for step, (placement, exec_spec, retry) in steps.items():
        components[f"comp-{step}"] = {"executorLabel": f"exec-{step}"}
        executors[f"exec-{step}"] = exec_spec
        task: dict[str, Any] = {"componentRef": {"name": f"comp-{step}"}, "taskInfo": {"name": step}}
        if retry:
            task["retryPolicy"] = retry
        tasks[step] = task
        config = kfp_config(placement) if isinstance(placement, Placement) else placement
        if config:
            platform[f"exec-{step}"] = config
    spec = {"pipelineInfo": {"name": name}, "components": components, "deploymentSpec": {"executors": executors},
            "root": {"dag": {"tasks": tasks}}, "schemaVersion": "2.1.0", "sdkVersion": "kfp-2.17.0"}
    return [spec, {"platforms": {"kubernetes": {"deploymentSpec": {"executors": platform}}}}]


def write(path: Path, documents: list[Any]) -> Path:
    path.write_text("# PIPELINE DEFINITION\n" + yaml.safe_dump_all(documents, sort_keys=True))
    return path


# --- reading KFP's shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("placement", [
    contract.spot_gpu("nvidia-tesla-t4", gpus=1),
    contract.spot_gpu("nvidia-l4", gpus=2, fallback_to_on_demand=True),
    contract.spot_cpu(),
    contract.spot_cpu(fallback_to_on_demand=False),
    contract.on_demand_only(),
])
def test_a_placement_survives_kfp_s_shapes(placement: Placement) -> None:
    documents = compiled({"step": (placement, executor(placement.gpus or None), RETRY)})
    (step,) = parse_pipeline(documents, "p.yaml").steps
    assert step.placement == placement
    assert step.retry is not None and step.retry.max_retries == 5 and step.retry.backoff_seconds == 300


def test_node_selector_is_read_from_kfp_s_labels_shape() -> None:
    config = {"nodeSelector": {"labels": {contract.POOL_LABEL: "t4spot"}},
              "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"},
                              {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists"}]}
    (step,) = parse_pipeline(compiled({"s": (config, executor(1), RETRY)}), "p.yaml").steps
    assert step.placement.node_selector == {contract.POOL_LABEL: "t4spot"}
    assert step.placement.tolerations[0] == Toleration("nvidia.com/gpu", "Exists")
    report = check_pipeline(parse_pipeline(compiled({"s": (config, executor(1), RETRY)}), "p.yaml"), AKS, "aks")
    assert report.steps[0].pools == ("t4spot",)


def test_a_weighted_term_is_preferred_and_an_unweighted_one_required() -> None:
    config = {"nodeAffinity": [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]},
        {"matchExpressions": [{"key": "b", "operator": "Exists"}], "weight": 50.0},
        {},  # the KFP driver skips empty terms
    ]}
    (step,) = parse_pipeline(compiled({"s": (config, executor(), None)}), "p.yaml").steps
    assert step.placement.required == ((Requirement("a", "In", ("1",)),),)
    assert step.placement.preferred == ((50, (Requirement("b", "Exists"),)),)


@pytest.mark.parametrize(("config", "exec_spec", "reason"), [
    ({"tolerations": [{"tolerationJson": {"componentInputParameter": "t"}}]}, executor(), "tolerations come from"),
    ({"nodeSelector": {"nodeSelectorJson": {"componentInputParameter": "n"}}}, executor(), "nodeSelector comes from"),
    ({"nodeAffinity": [{"nodeAffinityJson": {"componentInputParameter": "a"}}]}, executor(), "node affinity comes"),
    ({"nodeAffinity": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
     executor(), "matchFields"),
    ({}, executor("{{$.inputs.parameters['pipelinechannel--gpus']}}"), "set from a pipeline parameter"),
    ({}, executor(1, kind="NVIDIA_TESLA_T4"), "a resource no spotkube node advertises"),
])
def test_what_pipeline_check_cannot_judge_lands_nowhere_with_the_reason(
        config: dict[str, Any], exec_spec: dict[str, Any], reason: str) -> None:
    pipeline = parse_pipeline(compiled({"s": (config, exec_spec, RETRY)}), "p.yaml")
    (result,) = check_pipeline(pipeline, AKS, "aks-dev-uksouth").steps
    assert result.pools == ()
    assert result.error is not None and reason in result.error


def test_steps_inside_sub_pipelines_conditions_and_loops_are_found_and_inherit_retries() -> None:
    spec, platform = compiled({"train": (contract.spot_gpu("nvidia-tesla-t4"), executor(1), None)})
    spec["components"]["comp-inner"] = {"dag": {"tasks": {"loop": {"componentRef": {"name": "comp-for-loop-2"}}}}}
    spec["components"]["comp-for-loop-2"] = {"dag": {"tasks": spec["root"]["dag"]["tasks"]}}
    spec["root"]["dag"]["tasks"] = {"inner": {"componentRef": {"name": "comp-inner"}, "retryPolicy": RETRY}}
    (step,) = parse_pipeline([spec, platform], "p.yaml").steps
    assert step.name == "inner/loop/train"
    assert step.retry is not None and step.retry.max_retries == 5 and step.retry.source == "inner"
    assert check_pipeline(parse_pipeline([spec, platform], "p.yaml"), GKE, "gke").steps[0].pools == ("t4-spot",)


def test_a_pipeline_without_kubernetes_settings_has_one_document() -> None:
    spec, _ = compiled({"s": (Placement(), executor(), None)})
    (result,) = check_pipeline(parse_pipeline([spec], "p.yaml"), AKS, "aks").steps
    assert result.pools == ("platform",)  # the system pool is tainted CriticalAddonsOnly on AKS
    assert result.warnings == ()


# --- judging ------------------------------------------------------------------------------------


def test_one_compiled_pipeline_lands_on_aks_and_gke_pools() -> None:
    pipeline = parse_pipeline(compiled({
        "download": (contract.spot_cpu(), executor(), RETRY),
        "train": (contract.spot_gpu("nvidia-tesla-t4"), executor(1), RETRY),
        "publish": (contract.on_demand_only(), executor(), None),
    }), "p.yaml")
    aks, gke = check_pipeline(pipeline, AKS, "aks-dev"), check_pipeline(pipeline, GKE, "gke-dev")
    assert aks.ok and gke.ok
    assert [r.pools for r in aks.steps] == [("platform",), ("t4spot",), ("platform",)]
    # Neither cloud puts a step on its system pool (tainted on both, and every placement excludes it).
    assert [r.pools for r in gke.steps] == [("platform",), ("t4-spot",), ("platform",)]
    assert aks.steps[1].spot_pools == ("t4spot",) and gke.steps[1].spot_pools == ("t4-spot",)
    assert all(not r.warnings for r in aks.steps + gke.steps)
    assert aks.warnings == (CLUSTER_RETRY_POLICY_NOTE,)  # no spotkube KFP: the cluster's retries are unknown
    assert [(r.evictions, r.failures) for r in aks.steps] == [(None, None)] * 3
    with_kfp = check_pipeline(pipeline, AKS, "aks-dev", retries=RetryRule(10, 1, 2))
    assert with_kfp.warnings == ()
    # download and train set_retry(5), whose limit wins; publish takes the defaults' ten.
    assert [(r.evictions, r.failures) for r in with_kfp.steps] == [(5, 1), (5, 1), (10, 1)]


def test_a_missing_gpu_type_reads_like_a_sentence() -> None:
    pipeline = parse_pipeline(compiled({"train": (contract.spot_gpu("nvidia-l4"), executor(1), RETRY)}), "p.yaml")
    report = check_pipeline(pipeline, AKS, "aks-dev-uksouth")
    assert not report.ok
    assert report.steps[0].error == "needs GPU type nvidia-l4; stack aks-dev-uksouth has only nvidia-tesla-t4"
    assert check_pipeline(pipeline, AKS[:2], "cpu-only").steps[0].error == \
        "needs GPU type nvidia-l4; stack cpu-only has no GPU pools"
    assert check_pipeline(pipeline, GKE, "gke").ok


@pytest.mark.parametrize(("placement", "gpus", "expected"), [
    (contract.spot_gpu(pool="a100spot"), 1,
     "needs pool a100spot; stack aks has pools system, platform and t4spot"),
    (contract.spot_gpu("nvidia-tesla-t4", gpus=2), 2,
     "needs 2 GPUs on one node; the largest nvidia-tesla-t4 node of stack aks has 1"),
    (contract.spot_cpu(fallback_to_on_demand=False), None,
     "needs preemptible or spot capacity without GPUs; stack aks has no such pool"),
])
def test_other_impossible_placements_name_what_is_missing(placement: Placement, gpus: int | None,
                                                          expected: str) -> None:
    pipeline = parse_pipeline(compiled({"s": (placement, executor(gpus), RETRY)}), "p.yaml")
    error = check_pipeline(pipeline, AKS, "aks").steps[0].error
    assert error is not None and error.startswith(expected)


def test_otherwise_the_matcher_s_detail_per_pool_is_given() -> None:
    no_gpu_toleration = Placement(tolerations=contract.tolerate_interruptible(),
                                  required=((Requirement(contract.ACCELERATOR_LABEL, "In", ("nvidia-tesla-t4",)),),),
                                  gpus=1)
    pipeline = parse_pipeline(compiled({"s": (no_gpu_toleration, executor(1), RETRY)}), "p.yaml")
    error = check_pipeline(pipeline, AKS, "aks").steps[0].error
    assert error is not None
    assert error.startswith("no pool of stack aks fits: ")
    assert "t4spot: does not tolerate taint nvidia.com/gpu=present:NoSchedule" in error


def test_a_step_that_can_land_on_spot_without_retries_is_a_warning_not_an_error() -> None:
    pipeline = parse_pipeline(compiled({"s": (contract.spot_gpu("nvidia-tesla-t4"), executor(1), None)}), "p.yaml")
    report = check_pipeline(pipeline, AKS, "aks")
    assert report.ok
    (warning,) = report.steps[0].warnings
    assert "can land on spot capacity (t4spot) but has no retries" in warning
    assert report.warnings == ()  # nothing relies on retries, so the cluster note is not relevant
    # spotkube's Kubeflow Pipelines retries it anyway, with the workflow defaults' limit.
    (defaults,) = check_pipeline(pipeline, AKS, "aks", retries=RetryRule(10, 1, 2)).steps
    assert defaults.warnings == () and (defaults.evictions, defaults.failures) == (10, 1)


def test_a_step_that_stays_off_spot_needs_no_retries() -> None:
    pipeline = parse_pipeline(compiled({"s": (contract.on_demand_only(), executor(), None)}), "p.yaml")
    assert check_pipeline(pipeline, AKS, "aks").steps[0].warnings == ()


def test_kfp_s_default_retry_window_and_a_fractional_factor_are_warned_about() -> None:
    kfp_defaults = {"backoffDuration": "0s", "backoffFactor": 2.0, "backoffMaxDuration": "3600s", "maxRetryCount": 5}
    fractional = {**RETRY, "backoffFactor": 1.5}
    pipeline = parse_pipeline(compiled({
        "a": (contract.spot_gpu("nvidia-tesla-t4"), executor(1), kfp_defaults),
        "b": (contract.spot_gpu("nvidia-tesla-t4"), executor(1), fractional),
    }), "p.yaml")
    a, b = check_pipeline(pipeline, AKS, "aks").steps
    assert len(a.warnings) == 1 and "retries stop 3600s after the first attempt started" in a.warnings[0]
    assert len(b.warnings) == 1 and "backoffFactor 1.5 is not a whole number" in b.warnings[0]


def test_required_values_follow_or_ed_terms() -> None:
    key = contract.ACCELERATOR_LABEL
    assert required_values(contract.spot_gpu("nvidia-l4"), key) == {"nvidia-l4"}
    assert required_values(contract.spot_cpu(), key) == {contract.NO_ACCELERATOR}
    either = Placement(required=((Requirement(key, "In", ("a",)),), (Requirement(key, "In", ("b",)),)))
    assert required_values(either, key) == {"a", "b"}
    one_open = Placement(required=((Requirement(key, "In", ("a",)),), (Requirement("x", "Exists"),)))
    assert required_values(one_open, key) is None
    assert required_values(Placement(node_selector={key: "c"}), key) == {"c"}


def test_reports_say_per_stack_whether_each_step_lands_and_where() -> None:
    pipeline = parse_pipeline(compiled({"train": (contract.spot_gpu("nvidia-l4"), executor(1), RETRY)}), "p.yaml")
    reports = [check_pipeline(pipeline, AKS, "aks"), check_pipeline(pipeline, GKE, "gke")]
    assert [r.ok for r in reports] == [False, True]
    assert reports[0].steps[0].error == "needs GPU type nvidia-l4; stack aks has only nvidia-tesla-t4"
    (step,) = reports[1].to_json()["steps"]
    assert step["pools"] == ["l4-pre"] and step["spotPools"] == ["l4-pre"] and step["gpus"] == 1
    assert step["retries"]["maxRetries"] == 5
    assert step["capacities"] == {"l4-pre": "preemptible"}


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("", "is empty"),
    ("---\n", "is empty"),
    ("a: [1, 2\n", "is not valid YAML at line 2"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
     "is not a compiled KFP pipeline (it has no pipelineInfo and root; it is a Kubernetes ConfigMap manifest)"),
    ("just a string\n", "is not a compiled KFP pipeline"),
    ("pipelineInfo: {name: x}\nroot: {dag: {tasks: {t: {componentRef: {name: comp-missing}}}}}\n",
     "task t refers to component 'comp-missing', which the file does not define"),
    ("pipelineInfo: {name: x}\nroot: {dag: {tasks: [1, 2]}}\n", "dag.tasks: expected a mapping, found list"),
])
def test_bad_files_give_one_error_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text(text)
    with pytest.raises(PipelineCheckError) as caught:
        read_pipeline(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PipelineCheckError, match="no such file"):
        read_pipeline(tmp_path / "nope.yaml")


def test_a_wrongly_typed_field_deep_inside_is_a_clear_error(tmp_path: Path) -> None:
    documents = compiled({"s": (contract.spot_cpu(), executor(), {**RETRY, "maxRetryCount": "many"})})
    with pytest.raises(PipelineCheckError, match="is not a well-formed compiled KFP pipeline"):
        read_pipeline(write(tmp_path / "p.yaml", documents))


def test_a_sub_pipeline_that_contains_itself_is_refused() -> None:
    spec, platform = compiled({})
    spec["components"]["comp-loop"] = {"dag": {"tasks": {"again": {"componentRef": {"name": "comp-loop"}}}}}
    spec["root"]["dag"]["tasks"] = {"loop": {"componentRef": {"name": "comp-loop"}}}
    with pytest.raises(PipelineCheckError, match="contains itself"):
        parse_pipeline([spec, platform], "p.yaml")


# --- pool contracts from plan JSON and stack outputs ---------------------------------------------


def test_pool_contracts_are_read_from_every_shape_spotkube_hands_out(tmp_path: Path) -> None:
    contracts = [p.to_json() for p in AKS]
    plan_one = {"stack": "aks-dev", "cloud": "aks", "pools": contracts}
    plan_all = {"stacks": [plan_one, {"stack": "gke-dev", "pools": [p.to_json() for p in GKE]}]}
    assert load_pool_contracts(contracts, "x") == ("", AKS)
    assert load_pool_contracts(plan_one, "x") == ("aks-dev", AKS)
    assert load_pool_contracts({"poolContracts": contracts, "kubeconfig": "[secret]"}, "x") == ("", AKS)
    assert load_pool_contracts(plan_all, "x", stack="gke-dev") == ("gke-dev", GKE)
    with pytest.raises(PipelineCheckError, match="holds the stacks aks-dev, gke-dev; name the one to use"):
        load_pool_contracts(plan_all, "x")
    with pytest.raises(PipelineCheckError, match="has no stack 'nope'"):
        load_pool_contracts(plan_all, "x", stack="nope")
    with pytest.raises(PipelineCheckError, match="holds no pool contracts"):
        load_pool_contracts({"something": 1}, "x")
    with pytest.raises(PipelineCheckError, match=r"pool \[0\] is not a pool contract"):
        load_pool_contracts([{"name": "x", "role": "gpu", "capacity": "spot", "taints": ["bad"]}], "x")
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan_one))
    assert read_pool_file(path) == ("aks-dev", AKS)
    path.write_text("{not json")
    with pytest.raises(PipelineCheckError, match="is not readable JSON"):
        read_pool_file(path)


# --- the core install does not need kfp -----------------------------------------------------------


def test_the_core_imports_no_kfp() -> None:
    code = ("import sys, spotkube, spotkube.review.pipeline_check; "
            "print(sorted(m for m in sys.modules if m == 'kfp' or m.startswith('kfp.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
