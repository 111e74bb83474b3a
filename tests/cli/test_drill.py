"""`spotkube drill` end to end, as a user runs it: the shipped stacks' plans, a fake Kubernetes API
server on 127.0.0.1 (tests/cli/fake_kube.py) and fake `az` and `gcloud` on PATH.

AKS: the spot A100 node is evicted (AKS drains it on the Preempt notice, so the pod is deleted), the
step is retried by Argo and lands on the on-demand fallback pool; the plan's bound (AKS: 610 s) holds
or, in the slower variant, is missed. GKE: the preempted node's kubelet fails the pod with its
graceful-shutdown message and Argo retries it, or, in the lost variant, never does.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fake_kube import Change, FakeKube, fake_cli, kubelet_event, node, on_path, pipeline_pod

from in_process import run_spotkube

START = datetime.fromisoformat("2026-11-25T09:00:00+00:00")

AKS_NODE = "aks-a100spot-12345678-vmss000000"
AKS_FALLBACK_NODE = "aks-a100ondemand-12345678-vmss000000"
AKS_PROVIDER = ("azure:///subscriptions/0a1b2c3d-0000-4000-8000-000000000001/resourceGroups/"
                "mc_spotkube-prod-rg_spotkube-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/"
                "aks-a100spot-12345678-vmss/virtualMachines/0")
GKE_NODE = "gke-spotkube-gke-a100-spot-1a2b3c4d-x7k2"
GKE_NEW_NODE = "gke-spotkube-gke-a100-spot-1a2b3c4d-q9w8"
GKE_PROVIDER = f"gce://spotkube-prod-example/europe-west4-a/{GKE_NODE}"
WORKFLOW = "train-checkpointed-x7k2p"
POD = f"{WORKFLOW}-system-container-impl-1203914712"
RETRY = f"{WORKFLOW}-system-container-impl-3521408834"


@dataclass
class Drill:
    fake: FakeKube
    kubeconfig: Path
    bin: Path
    record: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`spotkube drill` in this process (tests/in_process.py), the fake cloud CLI first on PATH."""
        return run_spotkube("drill", "--kubeconfig", str(self.kubeconfig), *args, env=on_path(self.bin))

    @property
    def called(self) -> list[str] | None:
        return json.loads(self.record.read_text()) if self.record.exists() else None


def at(start: datetime, seconds: float) -> datetime:
    return start + timedelta(seconds=seconds)


def aks_script(replacement_after: float) -> list[Change]:
    """AKS node auto-drain on the Preempt notice: the pod is evicted (deleted), the VM goes, the node
    stops reporting and is removed; Argo's retry (after on_spot's 5-minute backoff) waits for the
    autoscaler, which gives up on spot and grows the on-demand pool."""
    return [
        Change("pod", "MODIFIED", lambda t: pipeline_pod(POD, WORKFLOW, "train", 0, node_name=AKS_NODE,
                                                         phase="Running", created=START, deleting=at(t, 4))),
        Change("pod", "DELETED", lambda t: pipeline_pod(POD, WORKFLOW, "train", 0, node_name=AKS_NODE,
                                                        phase="Running", created=START, deleting=at(t, 4))),
        Change("node", "MODIFIED", lambda t: node(AKS_NODE, "a100spot", AKS_PROVIDER, ready=False,
                                                  ready_since=at(t, 41), reason="NodeStatusUnknown")),
        Change("node", "DELETED", lambda t: node(AKS_NODE, "a100spot", AKS_PROVIDER, ready=False,
                                                 ready_since=at(t, 41), reason="NodeStatusUnknown")),
        Change("pod", "ADDED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=None, phase="Pending",
                                                      created=at(t, 305))),
        Change("node", "ADDED", lambda t: node(AKS_FALLBACK_NODE, "a100ondemand", AKS_PROVIDER.replace(
            "a100spot", "a100ondemand"), ready_since=at(t, replacement_after))),
        Change("pod", "MODIFIED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=AKS_FALLBACK_NODE,
                                                         phase="Pending", created=at(t, 305),
                                                         scheduled=at(t, replacement_after + 2))),
        *pulled_and_running(RETRY, AKS_FALLBACK_NODE, lambda t: at(t, replacement_after + 2), created=305),
    ]


def pulled_and_running(pod: str, node_name: str, scheduled: Callable[[datetime], datetime],
                       created: float) -> list[Change]:
    """The kubelet on the new node pulls the step's 6.5 GB image (62.3 s by its own clock, 63 s between its
    events) and starts the containers 2 s later."""
    image = "spotkubeexample.azurecr.io/train:1.4"
    return [
        Change("event", "ADDED", lambda t: kubelet_event(pod, "Pulling", f'Pulling image "{image}"',
                                                         scheduled(t) + timedelta(seconds=1), node_name=node_name)),
        Change("event", "ADDED", lambda t: kubelet_event(
            pod, "Pulled", f'Successfully pulled image "{image}" in 1m2.3s (1m2.3s including waiting). Image size: '
            '6979321856 bytes.', scheduled(t) + timedelta(seconds=64), node_name=node_name)),
        Change("pod", "MODIFIED", lambda t: pipeline_pod(pod, WORKFLOW, "train", 1, node_name=node_name,
                                                         phase="Running", created=at(t, created),
                                                         scheduled=scheduled(t),
                                                         started=scheduled(t) + timedelta(seconds=66))),
    ]


def gke_script(retried: bool) -> list[Change]:
    """GKE spot preemption: ACPI soft-off starts the kubelet's graceful node shutdown, which fails the
    pod with its message; the node stops reporting; Argo retries the step, and spot capacity returns."""
    shutdown = "Pod was terminated in response to imminent node shutdown."
    script = [
        Change("pod", "MODIFIED", lambda t: pipeline_pod(POD, WORKFLOW, "train", 0, node_name=GKE_NODE, phase="Failed",
                                                         created=START, message=shutdown, reason="Terminated")),
        Change("node", "MODIFIED", lambda t: node(GKE_NODE, "a100-spot", GKE_PROVIDER, ready=False,
                                                  ready_since=at(t, 38), reason="NodeStatusUnknown")),
    ]
    if retried:
        script += [
            Change("pod", "ADDED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=None,
                                                          phase="Pending", created=at(t, 302))),
            Change("node", "ADDED", lambda t: node(GKE_NEW_NODE, "a100-spot", GKE_PROVIDER.replace(GKE_NODE,
                                                                                                  GKE_NEW_NODE),
                                                   ready_since=at(t, 420))),
            Change("pod", "MODIFIED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=GKE_NEW_NODE,
                                                             phase="Running", created=at(t, 302),
                                                             scheduled=at(t, 423))),
        ]
    return script


T4_NODE = "aks-t4spot-87654321-vmss000000"
T4_NEW_NODE = "aks-t4spot-87654321-vmss000001"
T4_PROVIDER = AKS_PROVIDER.replace("a100spot-12345678", "t4spot-87654321").replace(
    "spotkube-prod-rg_spotkube-aks_eastus", "spotkube-dev-rg_spotkube-aks_uksouth")


def t4_script() -> list[Change]:
    """aks-dev's spot T4 pool, which has no on-demand fallback: the evicted step's retry waits for a new
    spot node (scale from 0), which pulls the step's image and runs it."""
    return [
        Change("pod", "MODIFIED", lambda t: pipeline_pod(POD, WORKFLOW, "train", 0, node_name=T4_NODE,
                                                         phase="Running", created=START, deleting=at(t, 4))),
        Change("pod", "DELETED", lambda t: pipeline_pod(POD, WORKFLOW, "train", 0, node_name=T4_NODE,
                                                        phase="Running", created=START, deleting=at(t, 4))),
        Change("node", "DELETED", lambda t: node(T4_NODE, "t4spot", T4_PROVIDER, ready=False, ready_since=at(t, 41),
                                                 reason="NodeStatusUnknown")),
        Change("pod", "ADDED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=None, phase="Pending",
                                                      created=at(t, 305))),
        Change("node", "ADDED", lambda t: node(T4_NEW_NODE, "t4spot", T4_PROVIDER[:-1] + "1",
                                               ready_since=at(t, 305 + 480))),
        Change("pod", "MODIFIED", lambda t: pipeline_pod(RETRY, WORKFLOW, "train", 1, node_name=T4_NEW_NODE,
                                                         phase="Pending", created=at(t, 305),
                                                         scheduled=at(t, 305 + 482))),
        *pulled_and_running(RETRY, T4_NEW_NODE, lambda t: at(t, 305 + 482), created=305),
    ]


def cluster_nodes(cloud: str) -> list[dict[str, object]]:
    if cloud == "aks-dev":
        return [node("aks-system-87654321-vmss000000", "system", T4_PROVIDER.replace("t4spot", "system")),
                node(T4_NODE, "t4spot", T4_PROVIDER)]
    if cloud == "aks":
        return [node("aks-system-12345678-vmss000000", "system", AKS_PROVIDER.replace("a100spot", "system")),
                node(AKS_NODE, "a100spot", AKS_PROVIDER)]
    return [node("gke-spotkube-gke-system-9f8e7d6c-a1b2", "system", GKE_PROVIDER.replace(GKE_NODE, "gke-sys")),
            node(GKE_NODE, "a100-spot", GKE_PROVIDER)]


@pytest.fixture
def drill(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Drill]:
    cloud, script = request.param
    trigger, record = tmp_path / "evicted-at", tmp_path / "cli-args.json"
    on = {"aks": AKS_NODE, "aks-dev": T4_NODE}.get(cloud, GKE_NODE)
    running = pipeline_pod(POD, WORKFLOW, "train", 0, node_name=on, phase="Running", created=START)
    fake = FakeKube(cluster_nodes(cloud), [running], script, trigger).start()
    folder = tmp_path / "bin"
    if cloud.startswith("aks"):
        fake_cli(folder, "az", trigger, record)
    else:
        fake_cli(folder, "gcloud", trigger, record, stderr="Simulating maintenance on instance(s) "
                 f"[{GKE_NODE}]...done.\n")
    try:
        yield Drill(fake, fake.kubeconfig(tmp_path / "kubeconfig"), folder, record)
    finally:
        fake.stop()


AKS_COMMAND = ["vmss", "simulate-eviction", "--subscription", "0a1b2c3d-0000-4000-8000-000000000001",
               "--resource-group", "mc_spotkube-prod-rg_spotkube-aks_eastus", "--name", "aks-a100spot-12345678-vmss",
               "--instance-id", "0"]
GKE_COMMAND = ["compute", "instances", "simulate-maintenance-event", GKE_NODE, "--zone", "europe-west4-a",
               "--project", "spotkube-prod-example"]


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=840))], indirect=True)
def test_without_run_it_names_the_node_and_the_command_and_evicts_nothing(drill: Drill) -> None:
    result = drill.run("--stack", "aks-prod-eastus", "--pool", "a100spot")
    assert result.returncode == 0, result.stderr
    assert f"node {AKS_NODE}" in result.stdout
    assert f"pipeline pods on it: {POD}" in result.stdout
    assert "command: az " + " ".join(AKS_COMMAND) in result.stdout
    assert "the plan's bound: 610s, plus 600s for a node to boot" in result.stdout
    assert "not run: add --run" in result.stdout
    assert drill.called is None


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=840))], indirect=True)
def test_aks_eviction_is_retried_on_the_fallback_within_the_bound(drill: Drill) -> None:
    result = drill.run("--stack", "aks-prod-eastus", "--pool", "a100spot", "--run", "--format", "json",
                       "--timeout", "60s")
    assert result.returncode == 0, result.stderr + result.stdout
    assert drill.called == AKS_COMMAND
    report = json.loads(result.stdout)
    assert report["ok"] and report["failures"] == []
    assert report["command"] == ["az", *AKS_COMMAND]
    (pod,) = report["pods"]
    assert (pod["pod"], pod["ended"], pod["retry"], pod["retryNode"], pod["retryPool"], pod["lost"]) == (
        POD, "deleted", RETRY, AKS_FALLBACK_NODE, "a100ondemand", False)
    assert pod["scheduledSeconds"] == pytest.approx(842, abs=3)
    assert report["replacement"]["node"] == AKS_FALLBACK_NODE
    assert report["replacement"]["seconds"] == pytest.approx(840, abs=3)
    # verify's node check, on the replacement as the watch last saw it (this recording lists no GPUs yet)
    assert report["replacement"]["check"] == (f"node {AKS_FALLBACK_NODE} advertises no nvidia.com/gpu (the plan says "
                                              "1): the device plugin isn't serving it yet")
    assert report["bound"] == {"planSeconds": 610, "bootAllowanceSeconds": 600}
    events = [e["event"] for e in report["timeline"]]
    assert events[0] == "eviction requested"
    assert "node NotReady (NodeStatusUnknown)" in events and "node deleted" in events
    assert f"Argo retry of {POD} created" in events


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=840))], indirect=True)
def test_the_drill_measures_the_retry_s_way_back_to_running(drill: Drill) -> None:
    """From the cluster's timestamps: the retry created at +305 s, the on-demand node Ready at +840 s, the
    image pulled at +906 s (62.3 s by the kubelet), the step running at +908 s; the step fell back, so the
    plan's figure is the spot pool's bound plus the on-demand start, which it can't state without imageGb."""
    result = drill.run("--stack", "aks-prod-eastus", "--pool", "a100spot", "--run", "--format", "json",
                       "--timeout", "60s")
    assert result.returncode == 0, result.stderr + result.stdout
    (measure,) = json.loads(result.stdout)["startup"]
    assert (measure["pod"], measure["pool"], measure["fellBack"]) == (RETRY, "a100ondemand", True)
    assert measure["measuredSeconds"] == {"pendingToNodeReady": 535.0, "nodeReadyToImagePulled": 66.0,
                                          "kubeletPull": pytest.approx(62.3), "imagePulledToRunning": 2.0,
                                          "total": 603.0}
    assert measure["expected"]["pool"] == "a100spot" and measure["expected"]["fallback"]["boundSeconds"] == 610
    # aks-prod declares a 12 GB image: the bound, then the on-demand node and its pull (5m-11m + 4m48s-6m).
    assert measure["expectedTotal"] == {"lowSeconds": 610 + 300 + 288, "highSeconds": 610 + 660 + 360}


@pytest.mark.parametrize("drill", [("aks-dev", t4_script())], indirect=True)
def test_the_measured_time_to_running_is_printed_next_to_the_plan_s(drill: Drill) -> None:
    result = drill.run("--stack", "aks-dev-uksouth", "--pool", "t4spot", "--run", "--timeout", "60s")
    assert result.returncode == 0, result.stderr + result.stdout
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert f"time to running of {RETRY} (pool t4spot): measured | the plan's, from 0 nodes (its pool)" in lines
    assert "pending -> node Ready: 8m | 5m–11m" in lines
    assert "node Ready -> image pulled: 1m6s (the kubelet's pull: 1m2s) | 2m36s–3m15s" in lines
    assert "image pulled -> running: 2s" in lines
    assert "total: 9m8s | 7m36s–14m15s" in lines


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=1500))], indirect=True)
def test_a_replacement_later_than_the_plan_s_bound_fails_the_drill(drill: Drill) -> None:
    result = drill.run("--stack", "aks-prod-eastus", "--pool", "a100spot", "--run", "--timeout", "60s")
    assert result.returncode == 1, result.stderr + result.stdout
    # The cluster's timestamps have whole seconds, the eviction's start does not: 1500 s, give or take one.
    took = re.search(r"FAILED: the replacement took (\d+)s, more than the plan's bound of 610s plus 600s for a "
                     r"node to boot", result.stdout)
    assert took is not None and abs(int(took[1]) - 1500) <= 2, result.stdout
    assert f"pod {POD}: deleted; retried as {RETRY} on {AKS_FALLBACK_NODE} (pool a100ondemand)" in result.stdout


@pytest.mark.parametrize("drill", [("gke", gke_script(retried=True))], indirect=True)
def test_gke_preemption_is_retried_when_spot_returns(drill: Drill) -> None:
    result = drill.run("--stack", "gke-prod-europe-west4", "--pool", "a100-spot", "--run", "--timeout", "60s")
    assert result.returncode == 0, result.stderr + result.stdout
    assert drill.called == GKE_COMMAND
    assert "the plan states no fallback bound" in result.stdout
    assert (f"{POD}: pod Failed: Pod was terminated in response to imminent node shutdown." in result.stdout)
    assert f"pod {POD}: Failed; retried as {RETRY} on {GKE_NEW_NODE} (pool a100-spot)" in result.stdout
    assert "replacement: " + GKE_NEW_NODE in result.stdout
    assert result.stdout.rstrip().endswith("ok")


@pytest.mark.parametrize("drill", [("gke", gke_script(retried=False))], indirect=True)
def test_a_pod_lost_without_a_retry_fails_the_drill(drill: Drill) -> None:
    result = drill.run("--stack", "gke-prod-europe-west4", "--pool", "a100-spot", "--run", "--timeout", "4s",
                       "--format", "json")
    assert result.returncode == 1, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["failures"] == [f"pipeline pod {POD} ({WORKFLOW}) was lost: no Argo retry before the drill "
                                  "timed out"]
    assert report["pods"][0]["lost"] is True and report["pods"][0]["ended"] == "Failed"


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=840))], indirect=True)
def test_bad_input_is_one_line_and_exit_2(drill: Drill, tmp_path: Path) -> None:
    missing = drill.run("--stack", "aks-prod-eastus", "--pool", "nope")
    assert missing.returncode == 2
    assert "error: stack aks-prod-eastus has no pool 'nope'; pools: " in missing.stderr
    on_demand = drill.run("--stack", "aks-prod-eastus", "--pool", "a100ondemand")
    assert on_demand.returncode == 2 and "is on-demand capacity, which the cloud never evicts" in on_demand.stderr
    empty = drill.run("--stack", "aks-dev-uksouth", "--pool", "t4spot")
    assert empty.returncode == 2 and "pool 't4spot' of stack aks-dev-uksouth has no Ready node" in empty.stderr
    assert "Traceback" not in missing.stderr + on_demand.stderr + empty.stderr


@pytest.mark.parametrize("drill", [("aks", aks_script(replacement_after=840))], indirect=True)
def test_a_failing_cloud_cli_stops_the_drill_with_what_it_said(drill: Drill) -> None:
    fake_cli(drill.bin, "az", drill.fake.trigger, drill.record, exit_code=1,
             stderr="ERROR: (OperationNotAllowed) Operation 'simulateEviction' is not allowed on VM "
                    "'aks-a100spot-12345678-vmss_0' since the VM is not a Spot VM.\n")
    result = drill.run("--stack", "aks-prod-eastus", "--pool", "a100spot", "--run", "--timeout", "10s")
    assert result.returncode == 2
    assert "failed (exit 1): ERROR: (OperationNotAllowed)" in result.stderr
