"""What spotkube changes in Kueue's release manifests, as pure functions over object dicts.

- The controller is kept on the platform pool: its webhooks admit every pod of the pipelines' namespace,
  so an eviction of it stalls every queued step, and the system pool is kept for the cluster's add-ons.
- The manager's `Configuration` turns on the `pod` integration (KFP's steps are plain pods) for the
  pipelines' namespace only, checks quota only for the ClusterQueue's resources (the GPUs), and sets
  `waitForPodsReady`, so a gang admitted while the cloud has too few nodes gives its quota back.

Queued provisioning needs nothing here: from v0.19 Kueue's ProvisioningRequest admission check controller
starts whenever the cluster serves `autoscaling.x-k8s.io` ProvisioningRequests (GKE does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from spotkube.platform import contract
from spotkube.platform.addons import kfp_transforms, kueue_reference

#: The Pulumi type token of the component; the plan recognises its registrations by it.
KUEUE_TYPE = "spotkube:index:Kueue"
RELEASES = "https://github.com/kubernetes-sigs/kueue/releases/download"
#: The integration that manages plain pods; the others stay as the release ships them.
POD_FRAMEWORK = "pod"
#: The label Kubernetes puts on every namespace with its name; the selector limits Kueue to those named.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: Only the resources a ClusterQueue names are checked against quota (Kueue's `IgnoreUndeclared`, Beta
#: and on by default from v0.19).
QUOTA_CHECK_STRATEGY = "IgnoreUndeclared"
#: Kueue v0.19.2's `Configuration.waitForPodsReady` (apis/config/v1beta2/configuration_types.go; the
#: v1beta2 API has no `enable`: the block's presence turns it on, pkg/util/waitforpodsready). Set in full
#: so the plan shows what runs rather than Kueue's defaults (apis/config/v1beta2/defaults.go):
#: - `timeout` 30m: an admitted workload's pods must all be ready within it, or it is evicted
#:   (`PodsReadyTimeout`) and requeued. Longer than a spot node's start and AKS's spot-to-on-demand
#:   fallback (the autoscaler's 15 min `max-node-provision-time` plus its backoff, about 20 min).
#: - `recoveryTimeout` 30m: once running, a workload whose pods stop being ready (a worker's node
#:   evicted) stays admitted this long for the replacement to start, then is evicted and requeued.
#: - `blockAdmission` false: true would hold every queued pipeline step behind a gang not yet ready.
#: - `requeuingStrategy`: back off from the eviction (60 s, doubling up to 1 h) and requeue without a
#:   limit (`backoffLimitCount` unset), since a short cloud is no fault of the job's.
WAIT_FOR_PODS_READY: dict[str, Any] = {
    "timeout": "30m",
    "recoveryTimeout": "30m",
    "blockAdmission": False,
    "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
}


def manifest_url(version: str) -> str:
    """The release asset spotkube applies: every object of a Kueue install, in one file."""
    return f"{RELEASES}/{version}/manifests.yaml"


def manager_configuration(configmap: Mapping[str, Any]) -> dict[str, Any]:
    """The manager's `Configuration` in the ConfigMap, parsed (empty when it has none)."""
    text = (configmap.get("data") or {}).get(kueue_reference.CONFIG_KEY) or ""
    parsed = yaml.safe_load(text) or {}
    return dict(parsed) if isinstance(parsed, Mapping) else {}


def configure_manager(configmap: Mapping[str, Any], namespaces: Sequence[str]) -> dict[str, Any]:
    """The manager's Configuration with the pod integration on, for `namespaces` only, quota checked
    for the ClusterQueue's resources only, and all-or-nothing admission (`WAIT_FOR_PODS_READY`); every
    other setting is kept as the release ships it.

    `managedJobsNamespaceSelector` is where Kueue's pod-based integrations look for the pods they
    manage: a pod elsewhere is never gated, whatever its labels. A pod of those namespaces is managed
    only when it names a queue (`manageJobsWithoutQueueName` stays false), so KFP's own pods and the
    steps that don't ask for the queue run as before.
    """
    config = manager_configuration(configmap)
    integrations = dict(config.get("integrations") or {})
    frameworks = list(integrations.get("frameworks") or [])
    if POD_FRAMEWORK not in frameworks:
        frameworks.append(POD_FRAMEWORK)
    integrations["frameworks"] = frameworks
    config["integrations"] = integrations
    config["managedJobsNamespaceSelector"] = {"matchExpressions": [
        {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(namespaces)}]}
    resources = {k: v for k, v in (config.get("resources") or {}).items() if k != "excludeResourcePrefixes"}
    config["resources"] = {**resources, "quotaCheckStrategy": QUOTA_CHECK_STRATEGY}
    config["waitForPodsReady"] = dict(WAIT_FOR_PODS_READY)
    data = {**(configmap.get("data") or {}), kueue_reference.CONFIG_KEY: yaml.safe_dump(config, sort_keys=False)}
    return {**configmap, "data": data}


def transform(obj: Mapping[str, Any], namespaces: Sequence[str],
              platform_pool_labels: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The object as spotkube applies it, or None when spotkube leaves it as the release ships it.
    `namespaces` are the ones whose pods Kueue may queue (the pipelines'); the controller runs on the
    platform pool, or on the pool `platform_pool_labels` pick on a cluster spotkube didn't make."""
    kind = obj.get("kind")
    name = str((obj.get("metadata") or {}).get("name") or "")
    if kind in kfp_transforms.CONTROL_PLANE_KINDS:
        return contract.constrain_workload(obj, contract.on_platform_pool_of(platform_pool_labels or {}))
    if kind == "ConfigMap" and name == kueue_reference.CONFIGMAP:
        return configure_manager(obj, namespaces)
    return None
