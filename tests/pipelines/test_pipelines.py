"""spotkube.pipelines with the real kfp compiler: the examples, the placement calls and their checks.

Needs the `pipelines` extra (kfp, kfp-kubernetes); without it the whole module is skipped and the
core suite still runs. Component bodies are never executed here: they run only in a cluster.
"""

# No `from __future__ import annotations`: KFP reads the test components' real signatures.
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

#: kfp and Pulumi's provider runtime both register the protobuf message google.rpc.Status
#: (googleapis-common-protos' google/rpc/status.proto, pulumi/runtime/proto/status_pb2.py), and
#: whichever of the two is imported second in a process fails. When an earlier test module has
#: loaded the provider runtime, tests/pipelines/test_pipelines_isolated.py runs this module in a fresh
#: interpreter instead.
PROVIDER_RUNTIME = "pulumi.runtime.proto.status_pb2"
if PROVIDER_RUNTIME in sys.modules:
    pytest.skip("kfp cannot be imported next to Pulumi's provider runtime; "
                "tests/pipelines/test_pipelines_isolated.py runs this module in a fresh interpreter",
                allow_module_level=True)

kfp = pytest.importorskip("kfp")
pytest.importorskip("kfp.kubernetes")

from kfp import compiler, dsl, kubernetes  # noqa: E402

from spotkube.pipelines import (  # noqa: E402
    CpuSpot,
    GpuTarget,
    PlacementError,
    PoolTarget,
    apply_placement,
    declare_timing,
    on_demand,
    on_spot,
    to_queue,
)
from spotkube.platform import contract  # noqa: E402
from spotkube.platform.addons.argo_retries import RetryRule  # noqa: E402
from spotkube.platform.pipeline_reader import load_pool_contracts, read_pipeline  # noqa: E402
from spotkube.review.pipeline_check import check_pipeline  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))

# The `poolContracts` outputs of an AKS and a GKE stack, as `pulumi stack output --json` prints them.
AKS_OUTPUTS: dict[str, Any] = {"kubeconfig": "[secret]", "poolContracts": [
    {"name": "system", "role": "system", "capacity": "on-demand", "gpu": None,
     "labels": {"kubernetes.azure.com/agentpool": "system", "spotkube.io/accelerator": "none",
                "spotkube.io/capacity": "on-demand", "spotkube.io/pool": "system", "spotkube.io/role": "system"},
     "taints": ["CriticalAddonsOnly=true:NoSchedule"]},
    {"name": "platform", "role": "platform", "capacity": "on-demand", "gpu": None,
     "labels": {"kubernetes.azure.com/agentpool": "platform", "spotkube.io/accelerator": "none",
                "spotkube.io/capacity": "on-demand", "spotkube.io/pool": "platform", "spotkube.io/role": "platform"},
     "taints": []},
    {"name": "t4spot", "role": "gpu", "capacity": "spot", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
     "labels": {"kubernetes.azure.com/accelerator": "nvidia", "kubernetes.azure.com/agentpool": "t4spot",
                "kubernetes.azure.com/scalesetpriority": "spot", "spotkube.io/accelerator": "nvidia-tesla-t4",
                "spotkube.io/capacity": "spot", "spotkube.io/pool": "t4spot", "spotkube.io/role": "gpu"},
     "taints": ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule", "nvidia.com/gpu=present:NoSchedule"]},
    {"name": "a100od", "role": "gpu", "capacity": "on-demand", "gpu": {"type": "nvidia-a100-80gb", "count": 1},
     "labels": {"kubernetes.azure.com/accelerator": "nvidia", "kubernetes.azure.com/agentpool": "a100od",
                "spotkube.io/accelerator": "nvidia-a100-80gb", "spotkube.io/capacity": "on-demand",
                "spotkube.io/pool": "a100od", "spotkube.io/role": "gpu"},
     "taints": ["nvidia.com/gpu=present:NoSchedule"]},
]}
GKE_OUTPUTS: dict[str, Any] = {"poolContracts": [
    {"name": "system", "role": "system", "capacity": "on-demand", "gpu": None,
     "labels": {"cloud.google.com/gke-nodepool": "system-1a2b3c", "spotkube.io/accelerator": "none",
                "spotkube.io/capacity": "on-demand", "spotkube.io/pool": "system", "spotkube.io/role": "system"},
     "taints": ["components.gke.io/gke-managed-components=true:NoSchedule"]},
    {"name": "platform", "role": "platform", "capacity": "on-demand", "gpu": None,
     "labels": {"cloud.google.com/gke-nodepool": "platform-4d5e6f", "spotkube.io/accelerator": "none",
                "spotkube.io/capacity": "on-demand", "spotkube.io/pool": "platform", "spotkube.io/role": "platform"},
     "taints": []},
    {"name": "t4-spot", "role": "gpu", "capacity": "spot", "gpu": {"type": "nvidia-tesla-t4", "count": 2},
     "labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4", "cloud.google.com/gke-nodepool": "t4-spot",
                "cloud.google.com/gke-spot": "true", "spotkube.io/accelerator": "nvidia-tesla-t4",
                "spotkube.io/capacity": "spot", "spotkube.io/pool": "t4-spot", "spotkube.io/role": "gpu"},
     "taints": ["cloud.google.com/gke-spot=true:NoSchedule", "nvidia.com/gpu=present:NoSchedule"]},
    {"name": "l4-pre", "role": "gpu", "capacity": "preemptible", "gpu": {"type": "nvidia-l4", "count": 1},
     "labels": {"cloud.google.com/gke-accelerator": "nvidia-l4", "cloud.google.com/gke-nodepool": "l4-pre",
                "cloud.google.com/gke-preemptible": "true", "spotkube.io/accelerator": "nvidia-l4",
                "spotkube.io/capacity": "preemptible", "spotkube.io/pool": "l4-pre", "spotkube.io/role": "gpu"},
     "taints": ["cloud.google.com/gke-preemptible=true:NoSchedule", "nvidia.com/gpu=present:NoSchedule"]},
]}

SPOT_TOLERATIONS = [
    {"effect": "NoSchedule", "key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot"},
    {"effect": "NoSchedule", "key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true"},
    {"effect": "NoSchedule", "key": "cloud.google.com/gke-preemptible", "operator": "Equal", "value": "true"},
]
GPU_TOLERATION = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}
CLASS_TOLERATION = {"effect": "NoSchedule", "key": "cloud.google.com/compute-class", "operator": "Exists"}
RETRY_POLICY = {"backoffDuration": "300s", "backoffFactor": 1.0, "backoffMaxDuration": "604800s", "maxRetryCount": 10}


def load_example(name: str) -> ModuleType:
    path = REPO / "examples" / "pipelines" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documents(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    spec, platform = yaml.safe_load_all(path.read_text())
    return spec, platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]


def compile_one(tmp_path: Path, place: Callable[[dsl.PipelineTask], object]) -> Path:
    """Compile a one-step pipeline whose step `place` configures."""

    @dsl.component(base_image="python:3.12-slim")
    def step() -> None:
        print("runs only in a cluster")

    @dsl.pipeline(name="one-step")
    def one_step() -> None:
        place(step())

    path = tmp_path / "one_step.yaml"
    compiler.Compiler().compile(one_step, str(path))
    return path


# --- the examples, compiled with the real kfp compiler -------------------------------------------


@pytest.fixture(scope="module")
def download_csvs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return load_example("download_csvs").compile(tmp_path_factory.mktemp("csvs") / "download_csvs.yaml")


@pytest.fixture(scope="module")
def train_checkpointed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return load_example("train_checkpointed").compile(tmp_path_factory.mktemp("train") / "train.yaml")


def test_download_csvs_runs_every_step_on_cpu_spot_with_retries(download_csvs: Path) -> None:
    spec, platform = documents(download_csvs)
    tasks = spec["root"]["dag"]["tasks"]
    assert set(tasks) == {"download-archive", "unpack-archive", "concatenate-csvs"}
    for name, task in tasks.items():
        assert task["retryPolicy"] == RETRY_POLICY
        config = platform[f"exec-{name}"]
        assert config["tolerations"] == SPOT_TOLERATIONS
        assert "nodeSelector" not in config
        assert config["nodeAffinity"] == [
            {"matchExpressions": [{"key": "spotkube.io/accelerator", "operator": "In", "values": ["none"]},
                                  {"key": "spotkube.io/role", "operator": "NotIn", "values": ["system"]}]},
            {"matchExpressions": [{"key": "spotkube.io/capacity", "operator": "In", "values": ["spot", "preemptible"]}],
             "weight": 100.0},
        ]
        assert "accelerator" not in (spec["deploymentSpec"]["executors"][f"exec-{name}"]["container"]
                                     .get("resources") or {})


def test_train_checkpointed_asks_for_a_spot_gpu_with_retries_and_keeps_its_volume(train_checkpointed: Path) -> None:
    spec, platform = documents(train_checkpointed)
    tasks = spec["root"]["dag"]["tasks"]
    assert tasks["train"]["retryPolicy"] == RETRY_POLICY
    assert tasks["stage-dataset"]["retryPolicy"] == RETRY_POLICY
    assert tasks["train"]["dependentTasks"] == ["stage-dataset"]
    accelerator = spec["deploymentSpec"]["executors"]["exec-train"]["container"]["resources"]["accelerator"]
    assert accelerator["resourceType"] == "nvidia.com/gpu" and accelerator["resourceCount"] == "1"
    train = platform["exec-train"]
    assert train["tolerations"] == [*SPOT_TOLERATIONS, GPU_TOLERATION, CLASS_TOLERATION]
    assert "nodeSelector" not in train
    assert train["nodeAffinity"] == [{"matchExpressions": [
        {"key": "spotkube.io/accelerator", "operator": "In",
         "values": ["nvidia-tesla-t4", "nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb"]},
        {"key": "spotkube.io/capacity", "operator": "In", "values": ["spot", "preemptible"]},
        {"key": "spotkube.io/accelerator", "operator": "NotIn", "values": ["none"]},
        {"key": "spotkube.io/gpu-sharing", "operator": "DoesNotExist"},
    ]}]
    # Both steps mount the same workspace volume, so checkpoints outlive an evicted node.
    for name in ("exec-stage-dataset", "exec-train"):
        (mount,) = platform[name]["pvcMount"]
        assert mount["mountPath"] == "/workspace"
        assert mount["pvcNameParameter"] == {"componentInputParameter": "workspace_pvc"}
    # Checkpoints are keyed by the run, so a retry of the same run resumes them.
    assert tasks["train"]["inputs"]["parameters"]["run_id"]["runtimeValue"]["constant"] == "{{$.pipeline_job_uuid}}"


def test_the_examples_use_only_neutral_labels(download_csvs: Path, train_checkpointed: Path) -> None:
    for path in (download_csvs, train_checkpointed):
        terms = [term for config in documents(path)[1].values() for term in config.get("nodeAffinity", [])]
        assert terms, f"{path.name}: no step is placed by node affinity"
        for term in terms:
            assert term["matchExpressions"], path.name
            assert all(e["key"].startswith(f"{contract.LABEL_PREFIX}/") for e in term["matchExpressions"])


def test_train_checkpointed_compiled_once_lands_on_aks_and_gke(train_checkpointed: Path) -> None:
    pipeline = read_pipeline(train_checkpointed)
    aks = check_pipeline(pipeline, load_pool_contracts(AKS_OUTPUTS, "aks")[1], "aks-dev")
    gke = check_pipeline(pipeline, load_pool_contracts(GKE_OUTPUTS, "gke")[1], "gke-dev")
    assert aks.ok and gke.ok
    assert {r.step.name: r.pools for r in aks.steps} == {"stage-dataset": ("platform",), "train": ("t4spot",)}
    assert {r.step.name: r.pools for r in gke.steps} == {"stage-dataset": ("platform",), "train": ("t4-spot", "l4-pre")}
    assert all(not r.warnings for r in aks.steps + gke.steps)


def test_checkpoint_on_sigterm_compiles_with_its_limits_and_fits_both_clouds(tmp_path: Path) -> None:
    path = load_example("checkpoint_on_sigterm").compile(tmp_path / "sigterm.yaml")
    spec, platform = documents(path)
    assert spec["root"]["dag"]["tasks"]["fit"]["retryPolicy"]["maxRetryCount"] == 10
    assert platform["exec-fit"]["podMetadata"]["annotations"] == {contract.FAILURE_RETRIES_ANNOTATION: "1"}
    pipeline = read_pipeline(path)
    for outputs in (AKS_OUTPUTS, GKE_OUTPUTS):
        pools = load_pool_contracts(outputs, "s")[1]
        (result,) = check_pipeline(pipeline, pools, "s", retries=RetryRule(10, 1, 2)).steps
        assert result.error is None and (result.evictions, result.failures) == (10, 1)


def test_the_step_saves_a_checkpoint_on_sigterm_exits_143_and_resumes(tmp_path: Path) -> None:
    """The component's own function, run as the container runs it, stopped as the kubelet stops it."""
    example = REPO / "examples" / "pipelines" / "checkpoint_on_sigterm.py"
    call = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('example', sys.argv[1]); "
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
            "print(module.fit.python_func(workspace=sys.argv[2], run_id='run-1', steps=int(sys.argv[3]), "
            "seconds_per_step=0.01), flush=True)")
    state = tmp_path / "checkpoints" / "run-1" / "state.json"
    running = subprocess.Popen([sys.executable, "-c", call, str(example), str(tmp_path), "100000"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if state.parent.is_dir() or running.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        running.send_signal(15)
        out, err = running.communicate(timeout=60)
    finally:
        running.kill()
    assert running.returncode == 143, err
    saved = json.loads(state.read_text())
    assert saved["step"] > 0 and f"SIGTERM: saved step {saved['step']}" in out
    assert not state.with_suffix(".partial").exists()
    resumed = subprocess.run([sys.executable, "-c", call, str(example), str(tmp_path), str(saved["step"] + 20)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming at step {saved['step']}" in resumed.stdout
    assert json.loads(state.read_text())["step"] == saved["step"] + 20


def test_the_training_gpu_is_a_build_argument(tmp_path: Path) -> None:
    path = load_example("train_checkpointed").compile(tmp_path / "l4.yaml", gpu_type="nvidia-l4", gpus=1)
    pipeline = read_pipeline(path)
    (train,) = [r for r in check_pipeline(pipeline, load_pool_contracts(AKS_OUTPUTS, "aks")[1],
                                          "aks-dev-uksouth").steps if r.error]
    assert train.error == ("needs GPU type nvidia-l4; stack aks-dev-uksouth has only nvidia-a100-80gb and "
                           "nvidia-tesla-t4")
    assert check_pipeline(pipeline, load_pool_contracts(GKE_OUTPUTS, "gke")[1], "gke-dev").ok


# --- every target compiles into the placement the contract defines --------------------------------


@pytest.mark.parametrize("target", [
    GpuTarget("nvidia-tesla-t4"),
    GpuTarget("nvidia-l4", count=2, fallback_to_on_demand=True),
    CpuSpot(),
    CpuSpot(fallback_to_on_demand=False),
    PoolTarget.from_plan(GKE_OUTPUTS, "t4-spot", count=2),
], ids=repr)
def test_a_target_compiles_into_its_contract_placement(tmp_path: Path, target: Any) -> None:
    (step,) = read_pipeline(compile_one(tmp_path, lambda task: on_spot(task, target))).steps
    assert step.placement == target.placement()
    assert step.retry is not None
    assert (step.retry.max_retries, step.retry.backoff_seconds, step.retry.backoff_factor,
            step.retry.window_seconds) == (10, 300, 1, 7 * 86400)
    assert step.failures_wanted is None


def test_on_demand_keeps_a_step_off_spot_and_gpus(tmp_path: Path) -> None:
    pipeline = read_pipeline(compile_one(tmp_path, on_demand))
    assert pipeline.steps[0].placement == contract.on_demand_only() and pipeline.steps[0].retry is None
    (result,) = check_pipeline(pipeline, load_pool_contracts(AKS_OUTPUTS, "aks")[1], "aks").steps
    assert result.pools == ("platform",) and not result.warnings


def test_retries_are_configurable(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda task: on_spot(task, CpuSpot(), evictions=3, backoff=timedelta(seconds=90),
                                                      backoff_factor=2, retry_window="2d"))
    spec, _ = yaml.safe_load_all(path.read_text())
    assert spec["root"]["dag"]["tasks"]["step"]["retryPolicy"] == {
        "backoffDuration": "90s", "backoffFactor": 2.0, "backoffMaxDuration": "172800s", "maxRetryCount": 3}


def test_no_evictions_still_pins_the_step_s_own_limit_of_zero(tmp_path: Path) -> None:
    """Without a limit of its own, the step would take the workflow defaults' ten."""
    path = compile_one(tmp_path, lambda t: on_spot(t, GpuTarget("nvidia-tesla-t4"), evictions=0))
    policy = yaml.safe_load_all(path.read_text()).__next__()["root"]["dag"]["tasks"]["step"]["retryPolicy"]
    assert "maxRetryCount" not in policy, "protobuf leaves out a zero"
    (step,) = read_pipeline(path).steps
    assert step.retry is not None and step.retry.max_retries == 0
    (result,) = check_pipeline(read_pipeline(path), load_pool_contracts(AKS_OUTPUTS, "aks")[1], "aks",
                               retries=RetryRule(10, 1, 2)).steps
    assert (result.evictions, result.failures) == (0, 0)
    assert "has no retries: one eviction fails the run" in result.warnings[0]


def test_a_step_states_its_failure_retries_and_pipeline_check_holds_the_stack_to_them(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda t: on_spot(t, CpuSpot(), evictions=6, failures=0))
    _, platform = yaml.safe_load_all(path.read_text())
    executor = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-step"]
    assert executor["podMetadata"]["annotations"] == {contract.FAILURE_RETRIES_ANNOTATION: "0"}
    pipeline = read_pipeline(path)
    assert pipeline.steps[0].failures_wanted == 0
    pools = load_pool_contracts(AKS_OUTPUTS, "aks")[1]
    (strict,) = check_pipeline(pipeline, pools, "aks", retries=RetryRule(10, 0, 2)).steps
    assert strict.error is None and (strict.evictions, strict.failures) == (6, 0)
    (lenient,) = check_pipeline(pipeline, pools, "aks", retries=RetryRule(10, 1, 2)).steps
    assert lenient.error == ("asks for at most 0 retries after failing on its own (on_spot failures=), but stack "
                             "aks retries its failures once (kubeflow.failureRetryLimit); lower the stack's "
                             "failureRetryLimit, or raise the step's failures")


def test_apply_placement_takes_any_contract_placement(tmp_path: Path) -> None:
    placement = contract.Placement(node_selector={contract.POOL_LABEL: "platform"})
    (step,) = read_pipeline(compile_one(tmp_path, lambda task: apply_placement(task, placement))).steps
    assert step.placement == placement
    _, platform = yaml.safe_load_all((tmp_path / "one_step.yaml").read_text())
    executor = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-step"]
    assert executor["nodeSelector"] == {"labels": {"spotkube.io/pool": "platform"}}


# --- clear errors while the pipeline is built ------------------------------------------------------


@pytest.mark.parametrize(("make", "message"), [
    (lambda: GpuTarget("nvidia-t4"), "GPU type 'nvidia-t4' is not one spotkube builds pools for; use one of"),
    (lambda: GpuTarget("Standard_NC4as_T4_v3"), "(Standard_NC4as_T4_v3 is a machine; it carries nvidia-tesla-t4)"),
    (lambda: GpuTarget("g2-standard-8"), "(g2-standard-8 is a machine; it carries nvidia-l4)"),
    (lambda: GpuTarget("nvidia-l4", count=0), "count=0 is not allowed; use a whole number of GPUs from 1 to 16"),
    (lambda: GpuTarget("nvidia-l4", count=True), "count=True is not allowed"),
    (lambda: PoolTarget.from_plan(AKS_OUTPUTS, "a100od"),
     "pool 'a100od' is on-demand capacity, and on_spot needs a spot or preemptible pool; use "
     "GpuTarget('nvidia-a100-80gb', fallback_to_on_demand=True)"),
    (lambda: PoolTarget.from_plan(AKS_OUTPUTS, "platform"), "use CpuSpot() to prefer spot"),
    (lambda: PoolTarget.from_plan(AKS_OUTPUTS, "t4spot", count=2), "count=2 is not allowed; use a whole number of "
     "GPUs from 1 to 1"),
    (lambda: PoolTarget.from_plan(AKS_OUTPUTS, "v100"), "the pool contracts has no pool 'v100'; pools: system, "
     "platform, t4spot, a100od"),
])
def test_impossible_targets_are_refused_with_what_would_work(make: Callable[[], object], message: str) -> None:
    with pytest.raises(PlacementError) as caught:
        make()
    assert message in str(caught.value)


@pytest.mark.parametrize(("place", "message"), [
    (lambda t: on_spot(t, "nvidia-l4"), "target 'nvidia-l4' is a string; wrap a GPU type as GpuTarget('nvidia-l4')"),
    (lambda t: on_spot(t, CpuSpot(), evictions=-1), "evictions=-1 is not allowed"),
    (lambda t: on_spot(t, CpuSpot(), evictions=2, failures=3), "failures=3 is not allowed; use a whole number "
     "from 0 to evictions (2)"),
    (lambda t: on_spot(t, CpuSpot(), backoff="5 minutes"), "backoff='5 minutes' is not a duration"),
    (lambda t: on_spot(t, CpuSpot(), backoff_factor=1.5), "backoff_factor=1.5 is not allowed; Argo needs a whole"),
    (lambda t: on_spot(t, CpuSpot(), backoff="1h", retry_window="30m"), "must be longer than backoff='1h'"),
    (lambda t: on_spot(on_spot(t, CpuSpot()), GpuTarget("nvidia-l4")),
     "task 'step' already has tolerations, nodeAffinity; on_spot sets a step's whole placement"),
    (lambda t: on_demand(kubernetes.add_node_selector(t, "disk", "ssd")), "already has nodeSelector"),
])
def test_bad_calls_fail_while_the_pipeline_is_built(tmp_path: Path, place: Callable[[Any], object],
                                                   message: str) -> None:
    with pytest.raises(PlacementError) as caught:
        compile_one(tmp_path, place)
    assert message in str(caught.value)


def test_on_spot_needs_a_task_not_a_component() -> None:
    @dsl.component(base_image="python:3.12-slim")
    def step() -> None:
        print("runs only in a cluster")

    with pytest.raises(PlacementError, match="needs the task a component call returns"):
        on_spot(step, CpuSpot())  # type: ignore[arg-type]


def test_pool_targets_read_plan_json_files(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"stacks": [{"stack": "gke-dev", "pools": GKE_OUTPUTS["poolContracts"]}]}))
    target = PoolTarget.from_plan(path, "l4-pre")
    assert (target.stack, target.gpus, target.pool.capacity) == ("gke-dev", 1, "preemptible")
    with pytest.raises(PlacementError, match="stack gke-dev has no pool 't4spot'"):
        PoolTarget.from_plan(str(path), "t4spot")
    with pytest.raises(PlacementError, match="no such file"):
        PoolTarget.from_plan(tmp_path / "missing.json", "t4spot")


def test_a_cpu_spot_pool_can_be_targeted_by_name(tmp_path: Path) -> None:
    cpu_pool = {"name": "cpuspot", "role": "batch", "capacity": "spot", "gpu": None,
                "labels": {"spotkube.io/accelerator": "none", "spotkube.io/capacity": "spot",
                           "spotkube.io/pool": "cpuspot", "spotkube.io/role": "batch"},
                "taints": ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]}
    pools = [*AKS_OUTPUTS["poolContracts"], cpu_pool]
    target = PoolTarget.from_plan(pools, "cpuspot")
    assert target.gpus == 0
    pipeline = read_pipeline(compile_one(tmp_path, lambda task: on_spot(task, target)))
    assert check_pipeline(pipeline, load_pool_contracts(pools, "aks")[1], "aks").steps[0].pools == ("cpuspot",)
    with pytest.raises(PlacementError, match="has no GPUs; leave count unset"):
        PoolTarget.from_plan(pools, "cpuspot", count=1)


# --- the command, against this repository's stacks -----------------------------------------------


def spotkube(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPOTKUBE, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


def test_download_csvs_passes_pipeline_check_on_an_aks_and_a_gke_stack(download_csvs: Path) -> None:
    gke = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (REPO / "stacks").glob("Pulumi.gke-*.yaml"))
    if not gke:
        pytest.skip("no GKE stack in stacks/ yet; the core check against GKE pools is tested above")
    result = spotkube("pipeline-check", str(download_csvs), "--stack", "aks-dev-uksouth", "--stack", gke[0],
                      "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert [c["stack"] for c in document["checks"]] == ["aks-dev-uksouth", gke[0]]
    for check in document["checks"]:
        assert {s["name"] for s in check["steps"]} == {"download-archive", "unpack-archive", "concatenate-csvs"}
        assert all(s["pools"] and s["error"] is None for s in check["steps"])


def test_an_impossible_placement_fails_with_the_reason(tmp_path: Path) -> None:
    path = load_example("train_checkpointed").compile(tmp_path / "l4.yaml", gpu_type="nvidia-l4")
    result = spotkube("pipeline-check", str(path), "--stack", "aks-dev-uksouth", "--format", "json")
    assert result.returncode == 1, result.stderr
    (check,) = json.loads(result.stdout)["checks"]
    errors = {s["name"]: s["error"] for s in check["steps"]}
    assert errors["stage-dataset"] is None
    reason = "needs GPU type nvidia-l4; stack aks-dev-uksouth has only "
    assert errors["train"].startswith(reason) and "nvidia-tesla-t4" in errors["train"]
    stderr = " ".join(result.stderr.split())
    assert f"error: {path}: step train can land nowhere on stack aks-dev-uksouth: {reason}" in stderr
    assert "Traceback" not in result.stderr


def test_a_step_declares_its_runtime_and_checkpoint_interval_for_simulate(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda t: declare_timing(on_spot(t, CpuSpot()), runtime="3h",
                                                           checkpoint_every=timedelta(minutes=10)))
    _, executors = documents(path)
    (config,) = executors.values()
    assert config["podMetadata"]["annotations"] == {contract.RUNTIME_ANNOTATION: "10800",
                                                     contract.CHECKPOINT_ANNOTATION: "600"}
    (step,) = read_pipeline(path).steps
    assert (step.runtime_seconds, step.checkpoint_seconds) == (10800, 600)
    with pytest.raises(PlacementError, match="checkpoint_every='0s' must be above zero"):
        compile_one(tmp_path, lambda t: declare_timing(t, checkpoint_every="0s"))


def test_a_step_asks_for_a_mig_instance_or_a_shared_gpu_and_pipeline_check_judges_it(tmp_path: Path) -> None:
    mig = compile_one(tmp_path, lambda t: on_spot(t, GpuTarget("nvidia-a100-80gb", mig="1g.10gb")))
    (step,) = read_pipeline(mig).steps
    required = step.placement.required
    assert required is not None
    assert contract.Requirement(contract.GPU_PARTITION_LABEL, "In", ("1g.10gb",)) in required[0]
    assert step.placement.gpu_resource == contract.GPU_RESOURCE and step.placement.gpus == 1
    mixed = compile_one(tmp_path, lambda t: on_spot(t, GpuTarget("nvidia-a100-80gb", mig="1g.10gb",
                                                                  mig_strategy="mixed")))
    (step,) = read_pipeline(mixed).steps
    assert step.placement.gpu_resource == "nvidia.com/mig-1g.10gb"
    # On the AKS pools above (no shared pool) the MIG step lands nowhere, and says why.
    _, pools = load_pool_contracts(AKS_OUTPUTS, "aks")
    (result,) = check_pipeline(read_pipeline(mig), pools, "aks").steps
    assert result.error is not None and not result.pools
    whole = compile_one(tmp_path, lambda t: on_spot(t, GpuTarget("nvidia-tesla-t4")))
    (result,) = check_pipeline(read_pipeline(whole), pools, "aks").steps
    assert result.pools == ("t4spot",), "a whole-GPU step lands on a pool that shares none"


@pytest.mark.parametrize(("target", "said"), [
    (lambda: GpuTarget("nvidia-tesla-t4", mig="1g.5gb"), "mig='1g.5gb' is not a MIG profile of nvidia-tesla-t4"),
    (lambda: GpuTarget("nvidia-a100-80gb", mig="9g.99gb"), "use one of 1g.10gb, 2g.20gb"),
    (lambda: GpuTarget("nvidia-l4", sharing="slices"), "sharing='slices' is not a way spotkube shares GPUs"),
    (lambda: GpuTarget("nvidia-l4", clients_per_gpu=4), "clients_per_gpu=4 needs sharing"),
    (lambda: GpuTarget("nvidia-a100-80gb", mig="1g.10gb", sharing="mps"), "mig and sharing are two ways"),
])
def test_impossible_shared_gpu_requests_are_refused_when_the_pipeline_is_built(
    target: Callable[[], object], said: str,
) -> None:
    with pytest.raises(PlacementError, match=said):
        target()


@pytest.mark.parametrize("name", ["download_csvs", "train_checkpointed"])
def test_the_compiled_examples_are_what_their_code_compiles_to(tmp_path: Path, name: str) -> None:
    """examples/pipelines/*.yaml let `pipeline-check` and `simulate` run without kfp; they must not drift
    from the code (recompile with `python examples/pipelines/<name>.py examples/pipelines/<name>.yaml`)."""
    fresh = load_example(name).compile(tmp_path / f"{name}.yaml")
    assert fresh.read_text() == (REPO / "examples" / "pipelines" / f"{name}.yaml").read_text()


# --- Kueue's queue ---------------------------------------------------------------------------------


def test_a_step_sent_to_the_queue_carries_kueue_s_label_and_keeps_its_placement(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda t: to_queue(on_spot(t, GpuTarget("nvidia-tesla-t4"))))
    _, executors = documents(path)
    (config,) = executors.values()
    assert config["podMetadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "spot-gpus"}
    assert config["tolerations"], "the spot placement is kept"
    (step,) = read_pipeline(path).steps
    assert step.queue == "spot-gpus"
    pools = load_pool_contracts(GKE_OUTPUTS, "gke")[1]
    (queued,) = check_pipeline(read_pipeline(path), pools, "gke-prod", queue="spot-gpus").steps
    assert queued.error is None and queued.pools == ("t4-spot",)
    (unqueued,) = check_pipeline(read_pipeline(path), pools, "gke-dev").steps
    assert any("deploys no Kueue" in w and "kueue.x-k8s.io/queue-name" in w for w in unqueued.warnings)


def test_a_step_naming_another_queue_is_refused_by_pipeline_check(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda t: to_queue(t, queue="research"))
    pools = load_pool_contracts(GKE_OUTPUTS, "gke")[1]
    (result,) = check_pipeline(read_pipeline(path), pools, "gke-prod", queue="spot-gpus").steps
    assert result.error is not None
    assert "'research'" in result.error and "'spot-gpus' (kueue.localQueue)" in result.error
    with pytest.raises(PlacementError, match="queue='Not A Queue' is not a LocalQueue name"):
        compile_one(tmp_path, lambda t: to_queue(t, queue="Not A Queue"))


def test_pipeline_check_knows_the_queue_of_the_shipped_gke_prod_stack(tmp_path: Path) -> None:
    path = compile_one(tmp_path, lambda t: to_queue(on_spot(t, GpuTarget("nvidia-tesla-a100"))))
    result = spotkube("pipeline-check", str(path), "--stack", "gke-prod-europe-west4", "--format", "json")
    assert result.returncode == 0, result.stderr
    (check,) = json.loads(result.stdout)["checks"]
    (step,) = check["steps"]
    assert step["queue"] == "spot-gpus" and step["error"] is None
    assert not [w for w in step["warnings"] if "Kueue" in w]
    fallback = compile_one(tmp_path, lambda t: to_queue(on_spot(t, GpuTarget("nvidia-tesla-a100",
                                                                             fallback_to_on_demand=True))))
    result = spotkube("pipeline-check", str(fallback), "--stack", "gke-prod-europe-west4", "--format", "json")
    assert result.returncode == 0, result.stderr
    (step,) = json.loads(result.stdout)["checks"][0]["steps"]
    assert step["pools"] == ["a100-spot", "a100-flex", "a100-ondemand"]
    (pinned,) = [w for w in step["warnings"] if "Kueue" in w]
    assert "moves to on-demand only when the spot tier's quota is used up" in pinned
