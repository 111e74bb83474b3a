"""Where each workload a stack deploys can land, judged by the contract matcher from its pod spec.

Placement is the part of a spotkube platform that fails silently: a Deployment that matches no pool
stays Pending forever, and a device plugin on the wrong nodes leaves GPUs unusable or counted
twice. The plan therefore reads every workload the program registered (its pod spec exactly as it
will be applied), adds the Kubeflow Pipelines Deployments that kustomize only renders at deploy time
(KFP's pod specs as shipped, from `kfp_reference`, put through spotkube's own transform, and
labelled as such), and matches each against the stack's pool contracts. A workload that can land
nowhere is an error.

Pure module: no Pulumi; it reads the registrations the offline engine records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spotkube.clouds import profile
from spotkube.platform.addons import device_plugin as workloads
from spotkube.platform.addons import (
    kfp_reference,
    kfp_transforms,
    kueue_reference,
    kueue_transforms,
    trainer_reference,
    trainer_transforms,
    training_runtime,
)
from spotkube.platform.contract import Placement, PoolContract, landing_pools, why_nowhere
from spotkube.platform.records import record
from spotkube.platform.registration import Registration
from spotkube.platform.spec import KubeflowSettings, KueueSettings, TrainingSettings

#: Registered resources whose pod template the plan judges, by type token.
WORKLOAD_KINDS = {
    "kubernetes:apps/v1:Deployment": "Deployment",
    "kubernetes:apps/v1:StatefulSet": "StatefulSet",
    "kubernetes:apps/v1:DaemonSet": "DaemonSet",
    "kubernetes:batch/v1:Job": "Job",
}
DIRECTORY_TYPE = "kubernetes:kustomize/v2:Directory"
CONFIGGROUP_TYPE = "kubernetes:yaml/v2:ConfigGroup"


def registered_runtimes(registrations: Sequence[Registration]) -> list[Mapping[str, Any]]:
    """The training runtimes the program applies (the objects of `KubeflowTrainer`'s ConfigGroup), as registered."""
    return [obj for r in registrations if r.type == CONFIGGROUP_TYPE for obj in r.inputs.get("objs") or ()
            if isinstance(obj, Mapping) and obj.get("kind") == training_runtime.KIND
            and obj.get("apiVersion") == trainer_reference.API_VERSION]
CONFIGFILE_TYPE = "kubernetes:yaml/v2:ConfigFile"


@record
class WorkloadPlacement:
    """Where one workload can land, most preferred pool first; `reason` says why nowhere."""

    workload: str
    kind: str
    namespace: str
    pools: tuple[str, ...]
    reason: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"workload": self.workload, "kind": self.kind, "namespace": self.namespace,
                                 "pools": list(self.pools)}
        if self.reason is not None:
            entry["reason"] = self.reason
        if self.note:
            entry["note"] = self.note
        return entry


@dataclass
class StackPlacements:
    """The placements section of a stack's plan: entries, explanations, and what is wrong."""

    placements: list[WorkloadPlacement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def kfp_deployments_as_applied(settings: KubeflowSettings | None = None) -> list[dict[str, Any]]:
    """KFP's Deployments as shipped, after spotkube's transform: what the cluster will schedule.

    Of the settings, only the pool KFP's services run on (`platform_pool_labels`) reaches the Deployments
    (the rest reach Secrets, the Argo ConfigMap, the UI Service and volumes), and no credential does.
    """
    return [kfp_transforms.transform(d, settings or KubeflowSettings(), kfp_transforms.NO_CREDENTIALS) or d
            for d in kfp_reference.shipped_deployments()]


def kueue_controller_as_applied(settings: KueueSettings | None = None) -> dict[str, Any]:
    """Kueue's controller Deployment as the release ships it, after spotkube's transform."""
    shipped = kueue_reference.shipped_controller_deployment()
    labels = settings.platform_pool_labels if settings is not None else {}
    return kueue_transforms.transform(shipped, [kfp_reference.NAMESPACE], labels) or shipped


def is_kueue_manifest(resource: Registration) -> bool:
    """A ConfigFile of Kueue's release manifests (what the `Kueue` component applies)."""
    return resource.type == CONFIGFILE_TYPE and str(resource.inputs.get("file", "")).startswith(
        kueue_transforms.RELEASES)


def _kueue_note(url: str) -> str:
    """Why Kueue's controller entry is described rather than read, and from which release."""
    note = (f"described, not read: the Kubernetes provider reads {url} at deploy time, so Kueue's pod spec is not "
            f"visible offline; this is spotkube's transform applied to Kueue {kueue_reference.VERSION}'s controller "
            "as shipped")
    version = url.removeprefix(kueue_transforms.RELEASES + "/").partition("/")[0]
    if version != kueue_reference.VERSION:
        note += f"; the stack deploys {version}, whose controller may differ"
    return note


def trainer_controllers_as_applied(settings: TrainingSettings | None = None) -> list[dict[str, Any]]:
    """Trainer's and JobSet's controller Deployments as shipped, after spotkube's transform."""
    labels = settings.platform_pool_labels if settings is not None else {}
    return [trainer_transforms.transform(d, labels) or d for d in trainer_reference.shipped_controller_deployments()]


def is_trainer_manifest(resource: Registration) -> bool:
    """A Directory of Trainer's manager kustomization (what `KubeflowTrainer` applies)."""
    directory = str(resource.inputs.get("directory", ""))
    return resource.type == DIRECTORY_TYPE and trainer_transforms.is_manifest_url(directory)


def _trainer_note(url: str) -> str:
    note = (f"described, not read: kustomize renders {url} inside the Kubernetes provider at deploy time, so the "
            f"controllers' pod specs are not visible offline; this is spotkube's transform applied to Trainer "
            f"{trainer_reference.VERSION}'s and JobSet {trainer_reference.JOBSET_VERSION}'s controllers as shipped")
    version = trainer_transforms.version_of(url)
    if version != trainer_reference.VERSION:
        note += f"; the stack deploys {version}, whose controllers may differ"
    return note


def runtime_workers(runtime: Mapping[str, Any]) -> dict[str, Any]:
    """A registered training runtime's workers as a workload (its name, the pod template of its `node` job)."""
    metadata = runtime.get("metadata") or {}
    return {"metadata": {"name": metadata.get("name", ""), "namespace": "cluster-wide"},
            "spec": {"template": {"spec": training_runtime.worker_pod_spec(runtime)}}}


def _pod_spec(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}


def placement_of(
    workload: Mapping[str, Any], kind: str, pools: Sequence[PoolContract], note: str | None = None
) -> WorkloadPlacement:
    """One placements entry; a workload that lands nowhere carries the matcher's reasons."""
    metadata = workload.get("metadata") or {}
    placement = Placement.from_pod_spec(_pod_spec(workload))
    landing = tuple(landing_pools(placement, pools))
    reason = None if landing else (why_nowhere(placement, pools) or "the stack has no pools")
    return WorkloadPlacement(str(metadata.get("name", "")), kind, metadata.get("namespace") or "default", landing,
                             reason, note)


def _described_note(directory: str) -> str:
    """Why the KFP entries are described rather than read, and from which version."""
    note = (f"described, not read: kustomize renders {directory} inside the Kubernetes provider at deploy "
            "time, so KFP's pod specs are not visible offline; this is spotkube's transform applied to "
            f"KFP {kfp_reference.VERSION}'s Deployments as shipped")
    ref = directory.rpartition("?ref=")[2] if "?ref=" in directory else ""
    if ref and ref != kfp_reference.VERSION:
        note += f"; the stack deploys {ref}, whose Deployments may differ"
    return note


def stack_placements(
    cloud: str, registrations: Sequence[Registration], pools: Sequence[PoolContract],
    kubeflow: KubeflowSettings | None = None, kueue: KueueSettings | None = None,
    training: TrainingSettings | None = None,
) -> StackPlacements:
    """Placements of everything the stack deploys, with notes and errors, against its pools; `kubeflow`
    and `kueue` say where their services are placed (by default on spotkube's platform pool)."""
    result = StackPlacements()
    for resource in registrations:
        kind = WORKLOAD_KINDS.get(resource.type)
        if kind:
            result.placements.append(placement_of(resource.inputs, kind, pools))
        elif resource.type == DIRECTORY_TYPE and kfp_transforms.PLATFORM_AGNOSTIC_PATH in str(
            resource.inputs.get("directory", "")
        ):
            note = _described_note(str(resource.inputs["directory"]))
            result.placements += [placement_of(d, "Deployment", pools, note)
                                  for d in kfp_deployments_as_applied(kubeflow)]
        elif is_kueue_manifest(resource):
            note = _kueue_note(str(resource.inputs["file"]))
            result.placements.append(placement_of(kueue_controller_as_applied(kueue), "Deployment", pools, note))
        elif is_trainer_manifest(resource):
            note = _trainer_note(str(resource.inputs["directory"]))
            result.placements += [placement_of(d, "Deployment", pools, note)
                                  for d in trainer_controllers_as_applied(training)]
        elif resource.type == CONFIGGROUP_TYPE:
            result.placements += [placement_of(runtime_workers(runtime), "TrainJob workers", pools,
                                               "a TrainJob on this runtime: every worker, each on a node of these")
                                  for runtime in registered_runtimes([resource])]
    # Registration order comes from the mocks' worker threads; the plan must not change with it. The
    # sort is stable, so KFP's Deployments keep their shipped order.
    result.placements.sort(key=lambda p: (p.namespace, p.kind))
    result.errors += [
        f"{p.kind} {p.namespace}/{p.workload} can land on no pool: {p.reason}"
        for p in result.placements if not p.pools
    ]
    _check_device_plugins(cloud, registrations, pools, result)
    return result


def _check_device_plugins(
    cloud: str, registrations: Sequence[Registration], pools: Sequence[PoolContract],
    result: StackPlacements,
) -> None:
    """Exactly one device plugin per GPU node: the cloud's own, or the DaemonSet the component built."""
    components = [r for r in registrations if r.type == workloads.DEVICE_PLUGIN_TYPE]
    daemonsets = [r.inputs for r in registrations
                  if r.type == workloads.DAEMONSET_TYPE and any(r.parent == c.urn for c in components)]
    managed = profile(cloud).managed_device_plugin
    if components and not daemonsets and managed is not None:
        result.notes.append(managed.note)
    plugins = workloads.plugins_per_pool(pools, [_pod_spec(d) for d in daemonsets], managed)
    result.errors += workloads.plugin_problems(pools, plugins, plugin_wanted=bool(components))
