"""`spotkube drill --trainjob` end to end: a fake Kubernetes API server on 127.0.0.1 (tests/cli/fake_kube.py) and
a fake `az` on PATH. A two-worker TrainJob runs on aks-prod-eastus's spot A100 pool; the drill evicts one
worker's node, JobSet restarts the job (every worker deleted and created again, restart-attempt 1), a
replacement node comes up, and the drill times how long until both workers run again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_kube import Change, FakeKube, fake_cli, node, on_path, stamp

from in_process import run_spotkube

START = datetime.fromisoformat("2026-11-25T09:00:00+00:00")
PROVIDER = ("azure:///subscriptions/0a1b2c3d-0000-4000-8000-000000000001/resourceGroups/"
            "mc_spotkube-prod-rg_spotkube-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/"
            "aks-a100spot-12345678-vmss/virtualMachines/{}")
NODES = [f"aks-a100spot-12345678-vmss00000{i}" for i in range(3)]
JOB = "resnet-ddp"


def worker(index: int, attempt: int, *, node_name: str | None, phase: str, created: datetime,
           started: datetime | None = None, disrupted: bool = False) -> dict[str, Any]:
    """A pod of the JobSet Trainer makes of a TrainJob: JobSet's labels, Trainer's `node` container."""
    name = f"{JOB}-node-0-{index}-{'abcde'[attempt]}x{index}"
    status: dict[str, Any] = {"phase": phase, "conditions": [
        {"type": "PodScheduled", "status": "True" if node_name else "False", "lastTransitionTime": stamp(created)}]}
    if disrupted:
        status["conditions"].append({"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
                                     "lastTransitionTime": stamp(created)})
    if started is not None:
        status["containerStatuses"] = [{"name": "node", "image": "registry.example/resnet:1", "ready": True,
                                        "restartCount": 0, "started": True,
                                        "state": {"running": {"startedAt": stamp(started)}}}]
    spec: dict[str, Any] = {"containers": [{"name": "node", "image": "registry.example/resnet:1"}],
                            "restartPolicy": "Never", "terminationGracePeriodSeconds": 30}
    if node_name:
        spec["nodeName"] = node_name
    labels = {"jobset.sigs.k8s.io/jobset-name": JOB, "jobset.sigs.k8s.io/replicatedjob-name": "node",
              "jobset.sigs.k8s.io/restart-attempt": str(attempt), "batch.kubernetes.io/job-completion-index": "0"}
    return {"kind": "Pod", "apiVersion": "v1", "spec": spec, "status": status,
            "metadata": {"name": name, "namespace": "kubeflow", "uid": f"uid-{name}",
                         "creationTimestamp": stamp(created), "labels": labels}}


def at(t: datetime, seconds: float) -> datetime:
    return t + timedelta(seconds=seconds)


def script() -> list[Change]:
    """The node of worker 0 is preempted: its pod fails with DisruptionTarget, JobSet deletes both workers and
    creates them again; the second lands at once on the surviving node, the first on a new node at +300 s."""
    return [
        Change("pod", "MODIFIED", lambda t: worker(0, 0, node_name=NODES[0], phase="Failed", created=START,
                                                   disrupted=True)),
        Change("node", "MODIFIED", lambda t: node(NODES[0], "a100spot", PROVIDER.format(0), ready=False,
                                                  ready_since=at(t, 40), reason="NodeStatusUnknown")),
        Change("pod", "DELETED", lambda t: worker(0, 0, node_name=NODES[0], phase="Failed", created=START)),
        Change("pod", "DELETED", lambda t: worker(1, 0, node_name=NODES[1], phase="Running", created=START)),
        Change("pod", "ADDED", lambda t: worker(0, 1, node_name=None, phase="Pending", created=at(t, 35))),
        Change("pod", "ADDED", lambda t: worker(1, 1, node_name=NODES[1], phase="Running", created=at(t, 35),
                                                started=at(t, 38))),
        Change("node", "ADDED", lambda t: node(NODES[2], "a100spot", PROVIDER.format(2), ready_since=at(t, 300))),
        Change("pod", "MODIFIED", lambda t: worker(0, 1, node_name=NODES[2], phase="Running", created=at(t, 35),
                                                   started=at(t, 330))),
    ]


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[tuple[FakeKube, Path, Path, Path]]:
    trigger, record = tmp_path / "evicted-at", tmp_path / "cli-args.json"
    nodes = [node(NODES[0], "a100spot", PROVIDER.format(0)), node(NODES[1], "a100spot", PROVIDER.format(1))]
    pods = [worker(0, 0, node_name=NODES[0], phase="Running", created=START, started=START),
            worker(1, 0, node_name=NODES[1], phase="Running", created=START, started=START)]
    server = FakeKube(nodes, pods, script(), trigger).start()
    fake_cli(tmp_path / "bin", "az", trigger, record)
    try:
        yield server, server.kubeconfig(tmp_path / "kubeconfig"), tmp_path / "bin", record
    finally:
        server.stop()


def drill(fake: tuple[FakeKube, Path, Path, Path], *args: str) -> Any:
    _, kubeconfig, folder, _ = fake
    return run_spotkube("drill", "--kubeconfig", str(kubeconfig), "--stack", "aks-prod-eastus", "--pool", "a100spot",
                        "--trainjob", JOB, *args, env=on_path(folder))


def test_without_run_it_names_the_worker_s_node_and_evicts_nothing(fake: tuple[FakeKube, Path, Path, Path]) -> None:
    result = drill(fake)
    assert result.returncode == 0, result.stderr
    assert f"TrainJob {JOB}, 2 workers; evicting node {NODES[0]} (pool a100spot)" in result.stdout
    assert "command: az vmss simulate-eviction" in result.stdout and "--instance-id 0" in result.stdout
    assert "not run: add --run" in result.stdout
    assert not fake[3].exists(), "the cloud CLI was not called"


def test_one_worker_evicted_and_the_time_until_every_worker_runs_again(fake: tuple[FakeKube, Path, Path, Path]) -> None:
    result = drill(fake, "--run", "--format", "json", "--timeout", "60s")
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["ok"] and report["ran"] and report["workers"] == 2 and report["restartAttempt"] == 1
    assert report["secondsToAllRunning"] == pytest.approx(330, abs=3), "the last worker's container start"
    events = [e["event"] for e in report["timeline"]]
    assert events[0].startswith("eviction requested") and "node lost" in events
    assert "JobSet restart 1: workers created again" in events and "all 2 workers running" in events
    assert json.loads(fake[3].read_text())[:2] == ["vmss", "simulate-eviction"]


def test_a_job_with_no_worker_in_the_pool_is_one_line_and_exit_2(fake: tuple[FakeKube, Path, Path, Path]) -> None:
    _, kubeconfig, folder, _ = fake
    result = run_spotkube("drill", "--kubeconfig", str(kubeconfig), "--stack", "aks-prod-eastus", "--pool", "a100spot",
                          "--trainjob", "other", env=on_path(folder))
    assert result.returncode == 2
    assert "no worker of TrainJob 'other' runs on a Ready node of pool 'a100spot'" in result.stderr
