"""What the add-ons deploy, in the words a reviewer checks: the Kubeflow Pipelines version and
whether its UI is exposed, the device plugin's image, and Kueue's release and queue quotas.

Read from the registrations where they say it (the kustomize Directory's ref, the DaemonSet's
image). The UI's exposure is a kustomize transform applied at deploy time, which no registration
shows, so it comes from the validated spec that configured the transform. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Sequence

from spotkube.clouds import profile
from spotkube.platform.addons import (
    kfp_transforms,
    kueue_preset,
    kueue_transforms,
    trainer_transforms,
    training_runtime,
)
from spotkube.platform.addons.device_plugin import DAEMONSET_NAME, DAEMONSET_TYPE, DEVICE_PLUGIN_TYPE
from spotkube.platform.cloud import items, mapping
from spotkube.platform.posture import Setting
from spotkube.platform.registration import Registration
from spotkube.platform.spec import PlatformSpec
from spotkube.review.placements import DIRECTORY_TYPE, is_kueue_manifest, is_trainer_manifest, registered_runtimes
from spotkube.review.trainjob_check import checkpoint_location


def _kfp_refs(registrations: Sequence[Registration]) -> list[str]:
    directories = [str(r.inputs.get("directory", "")) for r in registrations
                   if r.type == DIRECTORY_TYPE and not is_trainer_manifest(r)]
    return sorted({d.rpartition("?ref=")[2] for d in directories if "?ref=" in d})


def _kubeflow(spec: PlatformSpec, registrations: Sequence[Registration]) -> Setting:
    settings = spec.kubeflow
    if not settings.enabled:
        return Setting("Kubeflow Pipelines", "not deployed")
    version = ", ".join(_kfp_refs(registrations)) or settings.version
    if not settings.expose_ui:
        ui = f"UI internal ({kfp_transforms.UI_PORT_FORWARD})"
        return Setting("Kubeflow Pipelines", f"{version} from {settings.repository}; {ui}")
    ranges = ", ".join(settings.ui_source_ranges)
    ui = f"UI on a public LoadBalancer, {'only from ' + ranges if ranges else 'open to any address'}"
    return Setting("Kubeflow Pipelines", f"{version} from {settings.repository}; {ui}",
                   "KFP standalone has no login: whoever reaches the UI can run pipelines")


def _device_plugin(spec: PlatformSpec, registrations: Sequence[Registration]) -> Setting:
    managed = profile(spec.cloud).managed_device_plugin
    if managed is not None:
        return Setting("NVIDIA device plugin", managed.summary)
    images = sorted({
        str(mapping(container).get("image"))
        for r in registrations if r.type == DAEMONSET_TYPE
        for container in items(mapping(mapping(mapping(r.inputs.get("spec")).get("template")).get("spec"))
                               .get("containers"))
        if mapping(r.inputs.get("metadata")).get("name") == DAEMONSET_NAME
    })
    if not images:
        return Setting("NVIDIA device plugin", "not deployed",
                       "GPU pools without a device plugin expose no GPUs" if spec.gpu_pools else None)
    return Setting("NVIDIA device plugin", ", ".join(images))


def _registered(registrations: Sequence[Registration], kind: str) -> list[Registration]:
    return [r for r in registrations if r.type == f"kubernetes:{kueue_preset.API_VERSION}:{kind}"]


def _kueue(registrations: Sequence[Registration]) -> Setting:
    """Kueue's release, and its queue as registered: the LocalQueue steps name and each flavor's quota."""
    urls = sorted({str(r.inputs.get("file")) for r in registrations if is_kueue_manifest(r)})
    if not urls:
        return Setting("Kueue", "not deployed")
    releases = ", ".join(url.removeprefix(kueue_transforms.RELEASES + "/").partition("/")[0] for url in urls)
    queues = [f"{mapping(r.inputs.get('metadata')).get('namespace')}/{mapping(r.inputs.get('metadata')).get('name')}"
              for r in _registered(registrations, "LocalQueue")]
    quotas = [
        f"{mapping(flavor).get('name')} " + " + ".join(f"{mapping(q).get('nominalQuota')} {mapping(q).get('name')}"
                                                      for q in items(mapping(flavor).get("resources")))
        for r in _registered(registrations, "ClusterQueue")
        for group in items(mapping(r.inputs.get("spec")).get("resourceGroups"))
        for flavor in items(mapping(group).get("flavors"))
    ]
    checked = [str(mapping(r.inputs.get("spec")).get("provisioningClassName"))
               for r in _registered(registrations, "ProvisioningRequestConfig")]
    value = (f"{releases} release manifests; steps labelled {', '.join(queues) or 'no LocalQueue'} queue for "
             f"{'; '.join(quotas) or 'no quota'}")
    if checked:
        value += f"; queued pools wait for a ProvisioningRequest ({', '.join(checked)})"
    return Setting("Kueue", value)


def _trainer(spec: PlatformSpec, registrations: Sequence[Registration]) -> Setting:
    """Trainer's release, each training runtime as registered (where its workers' grace and restarts stand),
    and where the stack's jobs save their checkpoints."""
    urls = sorted({str(r.inputs.get("directory")) for r in registrations if is_trainer_manifest(r)})
    if not urls:
        return Setting("Kubeflow Trainer", "not deployed")
    runtimes = []
    for runtime in registered_runtimes(registrations):
        free = training_runtime.evictions_restart_for_free(runtime)
        grace = training_runtime.worker_pod_spec(runtime).get("terminationGracePeriodSeconds")
        # The mocks hand numbers back as floats.
        runtimes.append(f"{mapping(runtime.get('metadata')).get('name')} ({int(grace or 0)} s to save on SIGTERM; "
                        f"{'evictions restart for free' if free else 'evictions spend restarts'}, "
                        f"{training_runtime.failure_restarts(runtime)} restart(s) for failures)")
    versions = ", ".join(trainer_transforms.version_of(url) for url in urls)
    location = checkpoint_location(spec)
    saves = f"; checkpoints in {location}" if location else ""
    return Setting("Kubeflow Trainer", f"{versions} with JobSet; runtimes {'; '.join(runtimes) or 'none'}{saves}")


def addon_settings(spec: PlatformSpec, registrations: Sequence[Registration]) -> tuple[Setting, ...]:
    """The add-ons' reviewable settings, in a fixed order."""
    present = {r.type for r in registrations}
    plugin = (_device_plugin(spec, registrations) if DEVICE_PLUGIN_TYPE in present
              else Setting("NVIDIA device plugin", "not deployed"))
    return (_kubeflow(spec, registrations), plugin, _kueue(registrations), _trainer(spec, registrations))
