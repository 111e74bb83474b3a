"""AKS's own node labels and taints, as the scheduling contract reads them (`contract.CloudLabels`):
what AKS puts on spot, GPU and system nodes by itself, and what a pool repeats
(docs/platform-facts.md#aks-spot-pools)."""

from __future__ import annotations

from spotkube.platform.contract import CloudLabels, Taint

#: AKS adds this taint to every spot pool; repeating it in our inputs avoids a perpetual diff
#: (pulumi-azure-native #959).
AKS_SPOT_TAINT = Taint("kubernetes.azure.com/scalesetpriority", "spot")
#: The AKS docs' recommended taint for a dedicated system pool.
CRITICAL_ADDONS_ONLY_TAINT = Taint("CriticalAddonsOnly", "true")
#: Labels AKS puts on nodes by itself. We repeat the spot label in the pool inputs for the same
#: perpetual-diff reason as the taint; the others are only used to predict placement.
AKS_SPOT_LABEL = (AKS_SPOT_TAINT.key, "spot")
AKS_ACCELERATOR_LABEL = ("kubernetes.azure.com/accelerator", "nvidia")
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"

LABELS = CloudLabels(
    prefix="kubernetes.azure.com",
    # Azure calls all interruptible capacity spot (AKS's rules refuse `preemptible`).
    interruptible_taints={"spot": AKS_SPOT_TAINT, "preemptible": AKS_SPOT_TAINT},
    interruptible_labels={"spot": AKS_SPOT_LABEL},
    declared_labels={"spot": AKS_SPOT_LABEL},
    node_pool_label=AKS_AGENTPOOL_LABEL,
    accelerator_label=AKS_ACCELERATOR_LABEL,
    zone_label="{region}-{zone}",
    compute_class_taint=False,
    system_taint=CRITICAL_ADDONS_ONLY_TAINT,
)
