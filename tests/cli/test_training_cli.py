"""Multi-node training as a job author meets it: `spotkube.training` writes the TrainJob, `pipeline-check` judges
it on each prod stack (where each worker lands, whether the gang fits one tier, what it survives), and
`simulate` samples it under eviction and recommends a checkpoint interval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from crd_schemas import schema_errors
from in_process import run_spotkube
from spotkube.training import CHECKPOINT_DIR_ENV, CHECKPOINT_INTERVAL_ENV, to_yaml, train_job

PROD = {"aks-prod-eastus": "nvidia-a100-80gb", "gke-prod-europe-west4": "nvidia-tesla-a100"}


def write(tmp_path: Path, name: str, job: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(to_yaml(job))
    return path


def job(gpu_type: str, **kwargs: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"image": "registry.example/resnet:1", "command": ["python", "/app/ddp_train.py"],
                              "checkpoint_dir": "/mnt/checkpoints/resnet", **kwargs}
    return train_job("resnet-ddp", gpu_type=gpu_type, **values)


def test_the_helper_writes_a_queued_trainjob_on_the_gpu_type_s_runtime_with_the_checkpoint_contract() -> None:
    manifest = job("nvidia-l4", num_nodes=3, gpus_per_node=2, checkpoint_interval_seconds=600, cpu="8")
    assert manifest["metadata"] == {"name": "resnet-ddp", "namespace": "kubeflow",
                                    "labels": {"kueue.x-k8s.io/queue-name": "spot-gpus"}}
    spec = manifest["spec"]
    assert spec["runtimeRef"] == {"name": "spotkube-nvidia-l4", "apiGroup": "trainer.kubeflow.org",
                                  "kind": "ClusterTrainingRuntime"}
    assert spec["trainer"]["numNodes"] == 3
    assert spec["trainer"]["resourcesPerNode"] == {"requests": {"nvidia.com/gpu": "2", "cpu": "8"},
                                                   "limits": {"nvidia.com/gpu": "2"}}
    assert {e["name"]: e["value"] for e in spec["trainer"]["env"]} == {
        CHECKPOINT_DIR_ENV: "/mnt/checkpoints/resnet", CHECKPOINT_INTERVAL_ENV: "600"}
    assert schema_errors([manifest, yaml.safe_load(to_yaml(manifest))]) == [[], []]


@pytest.mark.parametrize("kwargs,message", [
    ({"num_nodes": 0}, "num_nodes: 0 is not a whole number above 0"),
    ({"checkpoint_dir": ""}, "checkpoint_dir: is empty"),
    ({"env": {CHECKPOINT_DIR_ENV: "/x"}}, f"env: {CHECKPOINT_DIR_ENV} is set by train_job"),
    ({"command": []}, "command: is empty"),
])
def test_the_helper_refuses_what_would_not_run(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        job("nvidia-l4", **kwargs)
    with pytest.raises(ValueError, match="name: 'ResNet' is not a Kubernetes name"):
        train_job("ResNet", gpu_type="nvidia-l4", image="i", command=["python"], checkpoint_dir="/c")


@pytest.mark.parametrize("stack", sorted(PROD))
def test_a_two_node_job_on_the_stack_s_runtime_passes_on_each_prod_stack(stack: str, tmp_path: Path) -> None:
    path = write(tmp_path, "two", job(PROD[stack], num_nodes=2))
    done = run_spotkube("pipeline-check", str(path), "--stack", stack, "--format", "json")
    assert done.returncode == 0, done.stderr
    (check,) = json.loads(done.stdout)["checks"]
    assert check["ok"] and check["workers"] == 2 and check["queue"] == "spot-gpus"
    assert check["runtime"] == f"spotkube-{PROD[stack]}"
    assert check["survives"] == "every eviction (restarts for free), 1 failure(s)"
    spot = [t for t in check["tiers"] if t["tier"].endswith("-spot")]
    assert spot and spot[0]["fitsAll"] and spot[0]["workers"] == 8, "8 spot A100 nodes at full scale"
    assert check["pools"][0] == spot[0]["pools"][0], "spot is preferred"
    assert check["graceSeconds"] == (30 if stack.startswith("aks") else 15)
    reserved = [t for t in check["tiers"] if t["tier"].endswith(" reserved")]
    if stack.startswith("aks"):
        assert reserved == [{"tier": "nvidia-a100-80gb-on-demand reserved", "pools": ["a100ondemand"], "workers": 1,
                             "fitsAll": False}], "the one A100 VM a100ondemand's reservation holds"
        assert any("outnumber what the capacity reservation holds (1 in a100ondemand)" in w for w in check["warnings"])
    else:
        assert reserved == [], "no capacity reservation on GKE"


@pytest.mark.parametrize("stack", sorted(PROD))
def test_a_job_asking_for_64_gpus_a_node_exits_1(stack: str, tmp_path: Path) -> None:
    path = write(tmp_path, "big", job(PROD[stack], gpus_per_node=64))
    done = run_spotkube("pipeline-check", str(path), "--stack", stack)
    assert done.returncode == 1
    assert "a worker can land nowhere: needs 64 GPUs on one node" in done.stderr


def test_a_gang_that_fits_no_single_tier_exits_1_though_the_pools_together_hold_it(tmp_path: Path) -> None:
    """AKS prod: 8 spot and 2 on-demand A100 nodes hold 10 workers together, but Kueue admits a gang in one flavor."""
    path = write(tmp_path, "nine", job("nvidia-a100-80gb", num_nodes=9))
    done = run_spotkube("pipeline-check", str(path), "--stack", "aks-prod-eastus", "--format", "markdown")
    assert done.returncode == 1
    assert "its 9 workers fit no single tier at once (nvidia-a100-80gb-spot (a100spot) holds 8; " \
           "nvidia-a100-80gb-on-demand (a100ondemand) holds 2)" in done.stderr
    assert "| workers | 9 |" in done.stdout


def test_a_job_naming_a_runtime_or_queue_the_stack_lacks_exits_1(tmp_path: Path) -> None:
    missing = write(tmp_path, "l4", job("nvidia-l4"))
    done = run_spotkube("pipeline-check", str(missing), "--stack", "aks-prod-eastus")
    assert done.returncode == 1
    assert ("names ClusterTrainingRuntime spotkube-nvidia-l4, which stack aks-prod-eastus doesn't register; its "
            "ClusterTrainingRuntimes: spotkube-nvidia-a100-80gb") in done.stderr
    other = write(tmp_path, "q", job("nvidia-a100-80gb", queue="research"))
    done = run_spotkube("pipeline-check", str(other), "--stack", "aks-prod-eastus")
    assert done.returncode == 1 and "names queue research; stack aks-prod-eastus's Kueue has only" in done.stderr
    unqueued = write(tmp_path, "none", job("nvidia-a100-80gb", queue=None))
    done = run_spotkube("pipeline-check", str(unqueued), "--stack", "aks-prod-eastus")
    assert done.returncode == 0 and "are not admitted as a gang" in done.stdout


def test_simulate_takes_workers_and_an_interval_and_recommends_the_cheapest(tmp_path: Path) -> None:
    path = write(tmp_path, "sim", job("nvidia-tesla-a100", checkpoint_interval_seconds=1800))
    done = run_spotkube("simulate", str(path), "--stack", "gke-prod-europe-west4", "--workers", "4",
                        "--default-runtime", "24h", "--checkpoint-write", "2m", "--runs", "400", "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["workers"] == 4 and result["pool"] == "a100-spot" and result["hours"] == 24
    intervals = result["intervals"]
    assert 0.5 in [i["checkpointHours"] for i in intervals], "the job's own interval is simulated"
    young_daly = result["youngDalyHours"]
    # 4 nodes at a 0.05 eviction rate: the gang every 1 / (4 × −ln 0.95) hours; √(2 × 2 min × that).
    assert young_daly == pytest.approx((2 * (2 / 60) / (4 * 0.051293294)) ** 0.5, rel=1e-6)
    best = min(intervals, key=lambda i: i["costUsd"]["mean"])
    assert result["recommendedCheckpointHours"] == best["checkpointHours"]
    assert young_daly / 2 <= best["checkpointHours"] <= young_daly * 2, "the simulation agrees with Young/Daly"
    for interval in intervals:
        assert interval["costUsd"]["mean"] > float(result["physicalLimitUsd"]), "evictions cost something"
        assert interval["overPhysicalLimit"] > 0 and interval["restartsMean"] > 0
    assert float(result["onDemandUsd"]) > float(result["physicalLimitUsd"])
    never = [i for i in intervals if i["checkpointHours"] is None]
    assert not never, "an interval was given, so every row saves"


def test_simulate_refuses_a_gang_larger_than_its_tier(tmp_path: Path) -> None:
    path = write(tmp_path, "sim", job("nvidia-tesla-a100"))
    done = run_spotkube("simulate", str(path), "--stack", "gke-prod-europe-west4", "--workers", "9")
    assert done.returncode == 2
    assert "--workers 9: tier nvidia-tesla-a100-spot of stack gke-prod-europe-west4 holds 8 workers" in done.stderr


@pytest.mark.parametrize("change,message", [
    (lambda j: j["spec"].pop("runtimeRef"), "spec.runtimeRef.name is missing"),
    (lambda j: j["spec"]["trainer"].update(numNodes="two"), "spec.trainer.numNodes: 'two' is not a whole number"),
    (lambda j: j["spec"]["trainer"].update(resourcesPerNode=["gpu"]), "spec.trainer.resourcesPerNode is not a mapping"),
])
def test_a_malformed_trainjob_is_one_line_naming_the_field_and_exit_2(change: Any, message: str,
                                                                      tmp_path: Path) -> None:
    manifest = job("nvidia-a100-80gb")
    change(manifest)
    path = write(tmp_path, "bad", manifest)
    done = run_spotkube("pipeline-check", str(path), "--stack", "aks-prod-eastus")
    assert done.returncode == 2
    assert f"{path}: {message}" in done.stderr and "Traceback" not in done.stderr
