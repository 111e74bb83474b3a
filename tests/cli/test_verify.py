"""`spotkube verify` against a Kubernetes API server on 127.0.0.1 (tests/cli/fake_kube.py) answering
with real-shaped objects: AKS and GKE nodes with their clouds' label sets, taints and capacity (with
and without `nvidia.com/gpu`), the device plugin's DaemonSet and pods, Kubeflow's Deployments and
pods, the priority expander ConfigMap and GKE's ComputeClasses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_kube import ClusterAtRest, node

from in_process import run_spotkube
from spotkube.components.offline import run_stack
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]
AKS_RG = "MC_spotkube-aks-prod-eastus_spotkube-aks_eastus"
AKS_VMSS = ("azure:///subscriptions/0a1b2c3d-0000-4000-8000-000000000001/resourceGroups/mc_spotkube-aks-prod-eastus_"
            "spotkube-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-{pool}-12345678-vmss/"
            "virtualMachines/0")


def registered(stack: str, kind: str) -> list[Obj]:
    """The objects of a kind the stack's program applies, as it registers them (the cluster holds them)."""
    run = run_stack(find_project(REPO), stack)
    return [json.loads(json.dumps(r.inputs)) for r in run.registrations if r.type.endswith(f":{kind}")]


def aks_node(pool: str, agentpool: str, machine: str, *, gpus: int | None, spot: bool = False, zone: str = "0",
             ready: bool = True) -> Obj:
    """An AKS node as `kubectl get node -o json` shows it: AKS's labels, the pool's taints, capacity."""
    name = f"aks-{agentpool}-12345678-vmss000000"
    labels = {
        "agentpool": agentpool, "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": machine,
        "beta.kubernetes.io/os": "linux", "failure-domain.beta.kubernetes.io/region": "eastus",
        "kubernetes.azure.com/agentpool": agentpool, "kubernetes.azure.com/cluster": AKS_RG,
        "kubernetes.azure.com/consolidated-additional-properties": "4b1ff2e8-0c0c-11f0-a0f5-7a1b4b5c8d9e",
        "kubernetes.azure.com/kubelet-identity-client-id": "5c2f2a40-0000-4000-8000-00000000c11e",
        "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/node-image-version":
        "AKSUbuntu-2204gen2containerd-202511.07.0", "kubernetes.azure.com/nodepool-type": "VirtualMachineScaleSets",
        "kubernetes.azure.com/os-sku": "Ubuntu", "kubernetes.azure.com/role": "agent",
        "kubernetes.azure.com/storageprofile": "managed", "kubernetes.azure.com/storagetier": "Premium_LRS",
        "node.kubernetes.io/instance-type": machine, "topology.disk.csi.azure.com/zone": "",
        "topology.kubernetes.io/region": "eastus", "topology.kubernetes.io/zone": zone,
        "spotkube.io/pool": pool, "spotkube.io/role": "gpu" if gpus is not None else pool,
        "spotkube.io/capacity": "spot" if spot else "on-demand",
        "spotkube.io/accelerator": "nvidia-a100-80gb" if gpus is not None else "none",
    }
    taints = []
    if gpus is not None:
        labels["kubernetes.azure.com/accelerator"] = "nvidia"
        taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    if spot:
        labels["kubernetes.azure.com/scalesetpriority"] = "spot"
        taints.insert(0, {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"})
    obj = node(name, pool, AKS_VMSS.format(pool=agentpool), ready=ready, extra_labels=labels)
    capacity = {"cpu": "24", "ephemeral-storage": "129886128Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": "226420004Ki", "pods": "30"}
    allocatable = {**capacity, "cpu": "23660m", "memory": "214033188Ki", "ephemeral-storage": "119703055367"}
    if gpus is not None:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(gpus)
    obj["spec"]["taints"] = taints
    obj["status"]["capacity"], obj["status"]["allocatable"] = capacity, allocatable
    return obj


def gke_node(pool: str, machine: str, accelerator: str | None, *, gpus: int | None, capacity: str = "on-demand",
             zone: str = "europe-west4-a") -> Obj:
    """A GKE node: GKE's labels (node pool, accelerator, spot or preemptible), taints and capacity."""
    name = f"gke-spotkube-gke-{pool}-1a2b3c4d-x7k2"
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": machine, "beta.kubernetes.io/os":
        "linux", "cloud.google.com/gke-boot-disk": "pd-balanced", "cloud.google.com/gke-container-runtime":
        "containerd", "cloud.google.com/gke-cpu-scaling-level": "12", "cloud.google.com/gke-logging-variant":
        "DEFAULT", "cloud.google.com/gke-max-pods-per-node": "110", "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-os-distribution": "cos", "cloud.google.com/gke-provisioning": "standard",
        "cloud.google.com/machine-family": machine.split("-")[0], "cloud.google.com/private-node": "false",
        "node.kubernetes.io/instance-type": machine, "topology.gke.io/zone": zone,
        "topology.kubernetes.io/region": zone.rsplit("-", 1)[0], "topology.kubernetes.io/zone": zone,
        "spotkube.io/pool": pool, "spotkube.io/capacity": capacity,
        "spotkube.io/role": "gpu" if accelerator else pool, "spotkube.io/accelerator": accelerator or "none",
    }
    taints = []
    if accelerator:
        labels |= {"cloud.google.com/gke-accelerator": accelerator, "cloud.google.com/gke-gpu": "true",
                   "cloud.google.com/compute-class": f"spotkube-{accelerator}"}
        taints += [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                   {"key": "cloud.google.com/compute-class", "value": f"spotkube-{accelerator}",
                    "effect": "NoSchedule"}]
    if capacity != "on-demand":
        key = "cloud.google.com/gke-spot" if capacity == "spot" else "cloud.google.com/gke-preemptible"
        labels[key] = "true"
        taints.insert(0, {"key": key, "value": "true", "effect": "NoSchedule"})
    obj = node(name, pool, f"gce://spotkube-prod-example/{zone}/{name}", extra_labels=labels)
    cap = {"cpu": "12", "ephemeral-storage": "98831908Ki", "memory": "87533304Ki", "pods": "110"}
    allocatable = {**cap, "cpu": "11900m", "memory": "80103672Ki"}
    if gpus is not None:
        cap["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(gpus)
    obj["spec"]["taints"] = taints
    obj["status"]["capacity"], obj["status"]["allocatable"] = cap, allocatable
    return obj


def pod(name: str, namespace: str, labels: dict[str, str], node_name: str, phase: str = "Running") -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels, "uid": f"uid-{name}"},
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "image": "x"}]},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]}}


def daemonset_with_status(obj: Obj, ready: int) -> Obj:
    obj = {**obj, "apiVersion": "apps/v1", "kind": "DaemonSet"}
    obj["status"] = {"currentNumberScheduled": ready, "desiredNumberScheduled": ready, "numberAvailable": ready,
                     "numberMisscheduled": 0, "numberReady": ready, "observedGeneration": 1,
                     "updatedNumberScheduled": ready}
    return obj


def deployment(name: str, app: str, ready: int, replicas: int = 1) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "kubeflow", "labels": {"app": app,
                                                                          "application-crd-id": "kubeflow-pipelines"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app,
                                                                        "application-crd-id": "kubeflow-pipelines"}}},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       **({"readyReplicas": ready, "availableReplicas": ready} if ready else {}),
                       "conditions": [{"type": "Available", "status": "True" if ready >= replicas else "False",
                                       "reason": "MinimumReplicasAvailable"}]}}


KFP_APPS = (("ml-pipeline", "ml-pipeline"), ("ml-pipeline-ui", "ml-pipeline-ui"), ("mysql", "mysql"),
            ("workflow-controller", "workflow-controller"))


def kubeflow(platform_node: str, *, unready: str | None = None) -> list[Obj]:
    labels = {"application-crd-id": "kubeflow-pipelines"}
    objs: list[Obj] = []
    for name, app in KFP_APPS:
        objs.append(deployment(name, app, 0 if name == unready else 1))
        objs.append(pod(f"{name}-7d9c8b6f5-abcde", "kubeflow", {"app": app, **labels}, platform_node))
    return objs


def aks_cluster(*, gpus: int | None = 1, plugin_on_gpu: bool = True, expander: bool = True) -> list[Obj]:
    system = aks_node("system", "system", "Standard_D4s_v3", gpus=None, zone="eastus-1")
    platform = aks_node("platform", "platform964d", "Standard_D8s_v3", gpus=None, zone="eastus-2")
    spot = aks_node("a100spot", "a100spot", "Standard_NC24ads_A100_v4", gpus=gpus, spot=True)
    (plugin,) = registered("aks-prod-eastus", "DaemonSet")
    objs = [system, platform, spot, daemonset_with_status(plugin, 1), *kubeflow(platform["metadata"]["name"])]
    if plugin_on_gpu:
        objs.append(pod("nvidia-device-plugin-daemonset-x2x8v", "kube-system",
                        {"app.kubernetes.io/name": "nvidia-device-plugin", "controller-revision-hash": "6c7f9d8b4",
                         "pod-template-generation": "1"}, spot["metadata"]["name"]))
    if expander:
        objs += [{**cm, "apiVersion": "v1", "kind": "ConfigMap"} for cm in registered("aks-prod-eastus", "ConfigMap")]
    # The stack's Kueue queue objects, as applied.
    objs += [obj for kind in ("ResourceFlavor", "ClusterQueue", "LocalQueue")
             for obj in registered("aks-prod-eastus", kind)]
    return objs


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ClusterAtRest, Path]]:
    fake = ClusterAtRest(request.param).start()
    try:
        yield fake, fake.kubeconfig(tmp_path / "kubeconfig")
    finally:
        fake.stop()


def verify(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`spotkube verify` in this process (tests/in_process.py)."""
    return run_spotkube("verify", "--kubeconfig", str(kubeconfig), *args)


@pytest.mark.parametrize("cluster", [aks_cluster()], indirect=True)
def test_a_healthy_aks_platform_passes_and_an_idle_pool_is_said_to_be_at_zero(
        cluster: tuple[ClusterAtRest, Path]) -> None:
    _, kubeconfig = cluster
    result = verify(kubeconfig, "--stack", "aks-prod-eastus")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "ok   gpus: pool a100spot: node aks-a100spot-12345678-vmss000000 advertises 1 nvidia.com/gpu" in out
    assert "warn gpus: pool a100ondemand is at 0 nodes, so its GPUs can't be checked; --scale-up" in out
    assert ("ok   device-plugin: the device plugin DaemonSet kube-system/nvidia-device-plugin-daemonset runs on node "
            "aks-a100spot-12345678-vmss000000 (pool a100spot)") in out
    assert "ok   tolerations: DaemonSet kube-system/nvidia-device-plugin-daemonset tolerates every GPU pool's" in out
    assert "ok   kubeflow: deployment kubeflow/ml-pipeline: 1/1 ready" in out
    assert "ok   objects: ConfigMap kube-system/cluster-autoscaler-priority-expander is present" in out
    assert out.rstrip().endswith("the platform is ready")


@pytest.mark.parametrize("cluster", [aks_cluster(gpus=None, plugin_on_gpu=False, expander=False)], indirect=True)
def test_gpus_missing_on_aks_spot_nodes_are_found(cluster: tuple[ClusterAtRest, Path]) -> None:
    """The most reported AKS spot failure: the node is up, nvidia.com/gpu is not (Azure/AKS#4418)."""
    _, kubeconfig = cluster
    result = verify(kubeconfig, "--stack", "aks-prod-eastus", "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    failed = {(f["check"], f["message"]) for f in report["findings"] if f["level"] == "fail"}
    assert ("gpus", "pool a100spot: node aks-a100spot-12345678-vmss000000 advertises no nvidia.com/gpu (the plan says "
            "1): the device plugin isn't serving it yet") in failed
    assert ("device-plugin", "the device plugin DaemonSet kube-system/nvidia-device-plugin-daemonset has no running "
            "pod on node aks-a100spot-12345678-vmss000000 (pool a100spot)") in failed
    assert ("objects", "ConfigMap kube-system/cluster-autoscaler-priority-expander, which the stack applies, is "
            "missing") in failed
    assert not report["ok"]


def _intolerant(objs: list[Obj]) -> list[Obj]:
    for obj in objs:
        if obj["kind"] == "DaemonSet":
            spec = obj["spec"]["template"]["spec"]
            spot = "kubernetes.azure.com/scalesetpriority"
            spec["tolerations"] = [t for t in spec["tolerations"] if t["key"] != spot]
        if obj["kind"] == "Deployment" and obj["metadata"]["name"] == "ml-pipeline":
            obj["status"].pop("readyReplicas")
    return objs


@pytest.mark.parametrize("cluster", [_intolerant(aks_cluster())], indirect=True)
def test_a_daemonset_that_does_not_tolerate_a_pool_and_an_unready_kfp_are_findings(
        cluster: tuple[ClusterAtRest, Path]) -> None:
    _, kubeconfig = cluster
    result = verify(kubeconfig, "--stack", "aks-prod-eastus")
    assert result.returncode == 1
    assert ("FAIL tolerations: DaemonSet kube-system/nvidia-device-plugin-daemonset doesn't tolerate "
            "kubernetes.azure.com/scalesetpriority=spot:NoSchedule of pool a100spot: it can't run there"
            ) in result.stdout
    assert ("FAIL kubeflow: deployment kubeflow/ml-pipeline: 0/1 ready; fix: kubectl -n kubeflow describe deployment "
            "ml-pipeline") in result.stdout


def gke_cluster() -> list[Obj]:
    platform = gke_node("platform-033d0f", "e2-standard-4", None, gpus=None)
    platform["metadata"]["labels"]["spotkube.io/pool"] = "platform"
    platform["metadata"]["labels"]["spotkube.io/role"] = "platform"
    t4 = gke_node("t4-preemptible", "n1-standard-8", "nvidia-tesla-t4", gpus=1, capacity="preemptible")
    a100 = gke_node("a100-spot", "a2-highgpu-1g", "nvidia-tesla-a100", gpus=0, capacity="spot")
    plugin = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
        "name": "nvidia-gpu-device-plugin-medium-cos", "namespace": "kube-system",
        "labels": {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "nvidia-gpu-device-plugin"}},
        "spec": {"selector": {"matchLabels": {"k8s-app": "nvidia-gpu-device-plugin"}}, "template": {
            "metadata": {"labels": {"k8s-app": "nvidia-gpu-device-plugin"}},
            "spec": {"priorityClassName": "system-node-critical", "tolerations": [
                {"operator": "Exists", "effect": "NoExecute"}, {"operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "nvidia-gpu-device-plugin",
                                "image": "gke.gcr.io/nvidia-gpu-device-plugin@sha256:0f8c2e"}]}}}}
    classes = [{**c, "apiVersion": "cloud.google.com/v1", "kind": "ComputeClass"}
               for c in registered("gke-prod-europe-west4", "ComputeClass")]
    plugin_pods = [pod(f"nvidia-gpu-device-plugin-medium-cos-{n}", "kube-system",
                       {"k8s-app": "nvidia-gpu-device-plugin"}, gpu_node["metadata"]["name"])
                   for n, gpu_node in (("4xk9q", t4), ("7hv2m", a100))]
    return [platform, t4, a100, daemonset_with_status(plugin, 2), *plugin_pods, *classes,
            *kubeflow(platform["metadata"]["name"])]


@pytest.mark.parametrize("cluster", [gke_cluster()], indirect=True)
def test_gke_checks_its_own_plugin_and_the_compute_classes(cluster: tuple[ClusterAtRest, Path]) -> None:
    fake, kubeconfig = cluster
    result = verify(kubeconfig, "--stack", "gke-prod-europe-west4")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "ok   gpus: pool t4-preemptible: node gke-spotkube-gke-t4-preemptible-1a2b3c4d-x7k2 advertises 1" in out
    # a node whose plugin runs but whose GPU isn't initialised yet advertises 0
    assert ("FAIL gpus: pool a100-spot: node gke-spotkube-gke-a100-spot-1a2b3c4d-x7k2 advertises no "
            "nvidia.com/gpu") in out
    assert ("ok   device-plugin: the cloud's device plugin (kube-system/nvidia-gpu-device-plugin*) runs on node "
            "gke-spotkube-gke-t4-preemptible-1a2b3c4d-x7k2") in out
    assert "ok   objects: ComputeClass spotkube-nvidia-tesla-a100 is present" in out
    assert "ok   objects: ComputeClass spotkube-nvidia-tesla-t4 is present" in out
    assert ("GET", "/apis/cloud.google.com/v1/computeclasses/spotkube-nvidia-tesla-t4") in fake.requests
    assert not [r for r in fake.requests if r[0] != "GET"]  # without --scale-up nothing is created


def _node_joins(fake_objects: list[Obj]) -> Any:
    def join(created: Obj) -> None:
        assert created["spec"]["nodeSelector"] == {"spotkube.io/pool": "a100ondemand"}
        assert created["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                "effect": "NoSchedule"} in created["spec"]["tolerations"]
        # Kubernetes ends a probe verify could not delete (a cancelled job): 30 s of wait plus the grace.
        assert created["spec"]["activeDeadlineSeconds"] == 30 + 120
        fake_objects.append(aks_node("a100ondemand", "a100ondemand", "Standard_NC24ads_A100_v4", gpus=1))
    return join


def test_scale_up_brings_a_node_up_checks_it_and_deletes_the_probe(tmp_path: Path) -> None:
    objs = aks_cluster()
    fake = ClusterAtRest(objs)
    fake.on_create = _node_joins(fake.objects)
    fake.start()
    try:
        result = verify(fake.kubeconfig(tmp_path / "kubeconfig"), "--stack", "aks-prod-eastus", "--scale-up",
                        "--timeout", "30s")
    finally:
        fake.stop()
    assert ("ok   scale-up: pool a100ondemand: node aks-a100ondemand-12345678-vmss000000 came up for the probe pod "
            "and advertises 1 nvidia.com/gpu") in result.stdout, result.stdout + result.stderr
    writes = [r for r in fake.requests if r[0] != "GET"]
    assert writes == [("POST", "/api/v1/namespaces/default/pods"),
                      ("DELETE", "/api/v1/namespaces/default/pods/spotkube-verify-a100ondemand")]
    # the new node has no device plugin pod in this recording: verify says so
    assert result.returncode == 1
    assert "has no running pod on node aks-a100ondemand-12345678-vmss000000" in result.stdout


def test_a_missing_kubeconfig_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = verify(tmp_path / "nope", "--stack", "aks-prod-eastus")
    assert result.returncode == 2
    assert "no kubeconfig there" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("cluster", [aks_cluster()], indirect=True)
def test_context_picks_the_kubeconfig_s_context(cluster: tuple[ClusterAtRest, Path], tmp_path: Path) -> None:
    fake, _ = cluster
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "elsewhere",
        "clusters": [{"name": "fake", "cluster": {"server": fake.url}},
                     {"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}}],
        "contexts": [{"name": "spotkube", "context": {"cluster": "fake", "user": "u"}},
                     {"name": "elsewhere", "context": {"cluster": "gone", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "fake-token"}}],
    }
    kubeconfig = tmp_path / "two-contexts"
    kubeconfig.write_text(json.dumps(config))
    assert verify(kubeconfig, "--stack", "aks-prod-eastus", "--context", "spotkube").returncode == 0
    unreachable = verify(kubeconfig, "--stack", "aks-prod-eastus")
    assert unreachable.returncode == 2 and "the Kubernetes API could not be reached" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr


REQUESTS = "/apis/autoscaling.x-k8s.io/v1/namespaces/default/provisioningrequests"
QUEUED_PROBE = "spotkube-verify-l4-queued"


def _with_queued_pool(root: Path) -> Path:
    """A copy of the project whose GKE dev stack has a queued-provisioning pool besides its spot one."""
    for name in ("Pulumi.yaml", "stacks", "infra"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    stack_file = root / "stacks" / "Pulumi.gke-dev-us-central1.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["spotkube:gpuPools"].append({"name": "l4-queued", "machine": "g2-standard-8",
                                                    "capacity": "flex-start", "max": 4, "queuedProvisioning": True})
    stack_file.write_text(yaml.safe_dump(document))
    return root


def queued_node() -> Obj:
    """A node of a queued-provisioning flex-start pool: GKE's flex-start and queued labels and its
    `gke-queued` taint; such a pool stays out of its GPU type's compute class."""
    obj = gke_node("l4-queued", "g2-standard-8", "nvidia-l4", gpus=1, zone="us-central1-a")
    labels = obj["metadata"]["labels"]
    del labels["cloud.google.com/compute-class"]
    labels |= {"cloud.google.com/gke-flex-start": "true", "cloud.google.com/gke-queued": "true",
               "spotkube.io/capacity": "flex-start"}
    obj["spec"]["taints"] = [{"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"},
                             {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    return obj


def condition(kind: str, status: str, reason: str, message: str) -> Obj:
    """A metav1.Condition as the cluster autoscaler writes it on a ProvisioningRequest."""
    return {"type": kind, "status": status, "observedGeneration": 1, "lastTransitionTime": "2026-12-02T04:20:11Z",
            "reason": reason, "message": message}


def _queued_cluster(tmp_path: Path, conditions: list[Obj] | None, **fake_args: Any) -> tuple[
        subprocess.CompletedProcess[str], ClusterAtRest, dict[str, Obj]]:
    """verify --scale-up of the queued pool; the autoscaler answers a ProvisioningRequest with `conditions`
    (and, once provisioned, a node). The spot pool has a node, so it isn't probed."""
    (tmp_path / "project").mkdir()
    project = _with_queued_pool(tmp_path / "project")
    created: dict[str, Obj] = {}
    spot = gke_node("l4-spot", "g2-standard-8", "nvidia-l4", gpus=1, capacity="spot", zone="us-central1-a")
    fake = ClusterAtRest([spot], **fake_args)

    def autoscaler(obj: Obj) -> None:
        created[obj["kind"]] = json.loads(json.dumps(obj))
        if obj["kind"] == "ProvisioningRequest" and conditions is not None:
            obj["status"] = {"conditions": conditions}
            if any(c["type"] == "Provisioned" and c["status"] == "True" for c in conditions):
                fake.objects.append(queued_node())

    fake.on_create = autoscaler
    fake.start()
    try:
        result = verify(fake.kubeconfig(tmp_path / "kubeconfig"), "--stack", "gke-dev-us-central1", "--scale-up",
                        "--timeout", "5s", "--project", str(project))
    finally:
        fake.stop()
    return result, fake, created


def test_a_queued_pool_is_brought_up_through_a_provisioning_request(tmp_path: Path) -> None:
    """GKE's queued provisioning gives nodes only to a ProvisioningRequest: verify makes one of class
    queued-provisioning.gke.io for one pod of its PodTemplate, waits for `Provisioned`, lands the probe pod
    that consumes it on the new node, checks the node and deletes all three."""
    provisioned = [condition("Accepted", "True", "Accepted", "Provisioning Request was accepted."),
                   condition("Provisioned", "True", "Provisioned",
                             "Provisioning Request was successfully provisioned.")]
    result, fake, created = _queued_cluster(tmp_path, provisioned)
    assert (f"ok   scale-up: pool l4-queued: ProvisioningRequest {QUEUED_PROBE} was provisioned and node "
            "gke-spotkube-gke-l4-queued-1a2b3c4d-x7k2 came up for the probe pod and advertises 1 nvidia.com/gpu"
            ) in result.stdout, result.stdout + result.stderr
    request = created["ProvisioningRequest"]
    assert request["apiVersion"] == "autoscaling.x-k8s.io/v1"
    assert request["spec"] == {"provisioningClassName": "queued-provisioning.gke.io",
                               "podSets": [{"count": 1, "podTemplateRef": {"name": QUEUED_PROBE}}]}
    template, pod = created["PodTemplate"], created["Pod"]
    assert template["metadata"]["name"] == QUEUED_PROBE and template["template"]["spec"] == pod["spec"]
    assert pod["metadata"]["annotations"] == {
        "autoscaling.x-k8s.io/consume-provisioning-request": QUEUED_PROBE,
        "autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io"}
    assert {"key": "cloud.google.com/gke-queued", "operator": "Exists",
            "effect": "NoSchedule"} in pod["spec"]["tolerations"]
    assert pod["spec"]["nodeSelector"] == {"spotkube.io/pool": "l4-queued"}
    writes = [r for r in fake.requests if r[0] != "GET"]
    assert writes == [("POST", "/api/v1/namespaces/default/podtemplates"), ("POST", REQUESTS),
                      ("POST", "/api/v1/namespaces/default/pods"),
                      ("DELETE", f"/api/v1/namespaces/default/pods/{QUEUED_PROBE}"),
                      ("DELETE", f"{REQUESTS}/{QUEUED_PROBE}"),
                      ("DELETE", f"/api/v1/namespaces/default/podtemplates/{QUEUED_PROBE}")]
    assert [o["kind"] for o in fake.objects] == ["Node", "Node"], "nothing of verify's is left"


def test_a_provisioning_request_that_fails_is_said_and_no_probe_pod_is_made(tmp_path: Path) -> None:
    failed = [condition("Accepted", "True", "Accepted", "Provisioning Request was accepted."),
              condition("Failed", "True", "ResourcePoolExhausted", "Not enough nvidia-l4 capacity in us-central1.")]
    result, fake, created = _queued_cluster(tmp_path, failed)
    assert ("FAIL scale-up: pool l4-queued: within 5s, the ProvisioningRequest ended (Failed: ResourcePoolExhausted "
            "Not enough nvidia-l4 capacity in us-central1.); fix: kubectl -n default describe provisioningrequest "
            f"{QUEUED_PROBE}") in result.stdout, result.stdout + result.stderr
    assert "Pod" not in created
    assert [r for r in fake.requests if r[0] == "DELETE"] == [
        ("DELETE", f"{REQUESTS}/{QUEUED_PROBE}"), ("DELETE", f"/api/v1/namespaces/default/podtemplates/{QUEUED_PROBE}")]


def test_a_provisioning_request_still_queued_at_the_timeout_is_said_with_its_last_condition(tmp_path: Path) -> None:
    queued = [condition("Accepted", "True", "Accepted", "Provisioning Request was accepted.")]
    result, fake, created = _queued_cluster(tmp_path, queued)
    assert ("FAIL scale-up: pool l4-queued: within 5s, the ProvisioningRequest was not provisioned (last Accepted: "
            "Accepted Provisioning Request was accepted.)") in result.stdout, result.stdout + result.stderr
    assert "Pod" not in created and ("DELETE", f"{REQUESTS}/{QUEUED_PROBE}") in fake.requests


def test_a_cluster_that_serves_no_provisioning_requests_is_said_so(tmp_path: Path) -> None:
    result, fake, created = _queued_cluster(tmp_path, None, unserved=(REQUESTS,))
    assert ("warn scale-up: pool l4-queued scales only through a ProvisioningRequest, and the cluster serves no "
            "autoscaling.x-k8s.io/v1 ProvisioningRequests: --scale-up can't bring it up") in result.stdout, \
        result.stdout + result.stderr
    assert ("DELETE", f"/api/v1/namespaces/default/podtemplates/{QUEUED_PROBE}") in fake.requests
    assert "Pod" not in created


class _NotKubernetes(BaseHTTPRequestHandler):
    """A web server at the kubeconfig's address that isn't an API server: every path a 404 page, or HTML."""

    def do_GET(self) -> None:
        body = b"<html><body>Welcome</body></html>"
        self.send_response(200 if self.path == "/" or self.server.html_everywhere else 404)  # type: ignore[attr-defined]
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize(("html_everywhere", "said"), [
    (False, "is not a Kubernetes API server: GET /version answered 404; check the kubeconfig's server"),
    (True, "answered GET /version with something that is not JSON: it is not a Kubernetes API server"),
])
def test_a_server_that_is_not_kubernetes_is_said_to_be_so(tmp_path: Path, html_everywhere: bool, said: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotKubernetes)
    server.html_everywhere = html_everywhere  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "web",
            "clusters": [{"name": "web", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
            "contexts": [{"name": "web", "context": {"cluster": "web", "user": "u"}}],
            "users": [{"name": "u", "user": {"token": "fake-token"}}]}))
        result = verify(kubeconfig, "--stack", "aks-prod-eastus")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr and "Traceback" not in result.stderr
    assert "pulumi up" not in result.stdout + result.stderr
