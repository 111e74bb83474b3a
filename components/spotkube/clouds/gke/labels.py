"""GKE's own node labels and taints, as the scheduling contract reads them (`contract.CloudLabels`):
what GKE puts on spot, preemptible, flex-start, GPU and system nodes by itself, and the taints spotkube
adds where GKE only labels (docs/platform-facts.md#gke-spot-and-preemptible-nodes,
docs/platform-facts.md#gke-gpus)."""

from __future__ import annotations

from collections.abc import Mapping

from spotkube.platform.contract import FLEX_START, CloudLabels, Taint

#: GKE Standard clusters label spot and preemptible nodes but do not taint them: we add these.
GKE_SPOT_TAINT = Taint("cloud.google.com/gke-spot", "true")
GKE_PREEMPTIBLE_TAINT = Taint("cloud.google.com/gke-preemptible", "true")
#: GKE's own system workloads (kube-dns and its autoscaler, konnectivity-agent, event-exporter, the
#: L7 default backend) tolerate `components.gke.io/gke-managed-components` with `Exists`, and GKE's
#: node agents (DaemonSets) tolerate every taint, so a GKE system pool tainted with it still runs
#: GKE's system pods while ordinary pods go elsewhere (docs/platform-facts.md#gke-system-pool-taint).
GKE_MANAGED_COMPONENTS_TAINT = Taint("components.gke.io/gke-managed-components", "true")
#: Labels GKE puts on nodes by itself, used to predict placement.
GKE_SPOT_LABEL = (GKE_SPOT_TAINT.key, "true")
GKE_PREEMPTIBLE_LABEL = (GKE_PREEMPTIBLE_TAINT.key, "true")
#: GKE labels flex-start nodes (Dynamic Workload Scheduler) `cloud.google.com/gke-flex-start=true` and taints
#: them with nothing of their own: a flex-start VM is not preempted, so it keeps only the GPU taint
#: (docs/platform-facts.md#gke-flex-start-and-queued-provisioning).
GKE_FLEX_START_LABEL = ("cloud.google.com/gke-flex-start", "true")
#: GKE taints the nodes it brings up for a ProvisioningRequest `cloud.google.com/gke-queued=true:NoSchedule`
#: (docs/platform-facts.md#gke-flex-start-and-queued-provisioning).
GKE_QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
#: The labels GKE puts on the nodes of a pool whose GPUs are partitioned or shared
#: (cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi, .../timesharing-gpus, .../nvidia-mps-gpus).
GKE_GPU_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
GKE_GPU_SHARING_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_GPU_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
#: On GKE, NVIDIA's upstream plugin may only run on pools that carry this label, with the driver
#: installed by hand (cloud.google.com/kubernetes-engine/docs/how-to/gpus, "GPU Operator").
GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL = ("gke-no-default-nvidia-gpu-device-plugin", "true")

LABELS = CloudLabels(
    prefix="cloud.google.com",
    interruptible_taints={"spot": GKE_SPOT_TAINT, "preemptible": GKE_PREEMPTIBLE_TAINT},
    interruptible_labels={"spot": GKE_SPOT_LABEL, "preemptible": GKE_PREEMPTIBLE_LABEL},
    declared_labels={},
    node_pool_label=GKE_NODEPOOL_LABEL,
    accelerator_label=(GKE_ACCELERATOR_LABEL, None),
    zone_label="{zone}",
    compute_class_taint=True,
    system_taint=GKE_MANAGED_COMPONENTS_TAINT,
    gpu_sharing_labels=(GKE_GPU_PARTITION_LABEL, GKE_GPU_SHARING_LABEL, GKE_GPU_CLIENTS_LABEL),
    provisioned_labels={FLEX_START: GKE_FLEX_START_LABEL},
)


def default_device_plugin_serves(labels: Mapping[str, str]) -> bool:
    """Whether GKE's own NVIDIA device plugin runs on a node with these labels: every GPU node,
    unless the pool opted out with the label that makes room for NVIDIA's upstream plugin."""
    key, value = GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL
    return GKE_ACCELERATOR_LABEL in labels and labels.get(key) != value
