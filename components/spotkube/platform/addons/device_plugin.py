"""The NVIDIA device plugin as plain data: where it runs on each cloud, and its DaemonSet manifest.

A GPU node needs exactly one plugin: with none its GPUs are never advertised, with two they are
advertised twice and pods get GPUs another pod holds. A plain dict built from the scheduling contract
keeps its pod spec known and testable offline, instead of hidden in a Helm chart.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from spotkube.platform import contract
from spotkube.platform.contract import PoolContract, Taint
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import kind, shown
from spotkube.platform.records import record
from spotkube.platform.spec import DevicePluginSettings, PlatformSpec, parse_settings

#: The Pulumi type token of the component; the plan recognises its registrations by it.
DEVICE_PLUGIN_TYPE = "spotkube:index:NvidiaDevicePlugin"
#: NVIDIA's own names from its static manifest, kept so that a cluster where someone applied that
#: manifest by hand fails loudly on create instead of silently running two plugins per node.
DAEMONSET_NAME = "nvidia-device-plugin-daemonset"
DAEMONSET_TYPE = "kubernetes:apps/v1:DaemonSet"
CONTAINER_NAME = "nvidia-device-plugin-ctr"
NAMESPACE = "kube-system"
#: The kubelet's device plugin socket directory, the one host path the plugin needs.
DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
#: NVIDIA's manifest sets none. Requests keep the scheduler honest on GPU nodes packed with training
#: pods; the memory limit stops a leak in a node agent from starving the kubelet.
RESOURCES = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}


@record
class ManagedDevicePlugin:
    """The NVIDIA device plugin a cloud runs on its GPU nodes itself: spotkube then deploys none, since a
    second plugin would advertise each GPU twice, and the plan checks that every GPU pool still has one."""

    #: Its DaemonSet, as the plan's per-pool plugin check names it.
    name: str
    #: Why spotkube deploys no plugin, for the program's log and the plan's notes.
    note: str
    #: The plan's device-plugin setting.
    summary: str
    #: Whether it runs on a node with these labels.
    serves: Callable[[Mapping[str, str]], bool]


@record
class DevicePluginRequest:
    """What the device plugin component builds: for which cloud, with which settings, tolerating which
    extra taints (taints the GPU pools carry beyond the contract's own, such as a team's)."""

    cloud: str
    settings: DevicePluginSettings
    extra_taints: tuple[Taint, ...] = ()

    @classmethod
    def for_spec(cls, spec: PlatformSpec) -> DevicePluginRequest:
        """The stack's device plugin: its settings, and every GPU pool's own taints."""
        taints = sorted({taint for pool in spec.gpu_pools for taint in pool.taints})
        return cls(spec.cloud, spec.device_plugin, tuple(Taint.parse(t) for t in taints))

    def tolerating(self, taints: Iterable[Taint]) -> DevicePluginRequest:
        """The request, tolerating these taints as well (each once, in the order first seen)."""
        return replace(self, extra_taints=tuple(dict.fromkeys([*self.extra_taints, *taints])))


def device_plugin_request(values: Mapping[str, Any], source: str, clouds: Collection[str]) -> DevicePluginRequest:
    """Validate `NvidiaDevicePlugin` args (cloud, one of `clouds`; extra_taints; then the settings), every
    problem at once."""
    values = dict(values)
    cloud = values.pop("cloud", None)
    problems = []
    if not isinstance(cloud, str) or cloud not in clouds:
        problems.append(Problem("cloud", f"{shown(cloud)} is not accepted; use {' or '.join(map(repr, clouds))}"))
    listed = values.pop("extra_taints", None) or ()
    if isinstance(listed, str | bytes) or not isinstance(listed, list | tuple):
        problems.append(Problem("extra_taints", f"{shown(listed)} is {kind(listed)}; use a list of strings "
                                "(`key=value:Effect`)"))
        listed = ()
    taints = []
    for i, text in enumerate(listed):
        try:
            if not isinstance(text, str):
                raise ValueError(f"{shown(text)} is {kind(text)}; use text (`key=value:Effect`)")
            taints.append(Taint.parse(text))
        except ValueError as err:
            problems.append(Problem(f"extra_taints[{i}]", str(err)))
    try:
        settings = parse_settings(DevicePluginSettings, values, source)
    except SpecError as err:
        raise SpecError(source, [*problems, *err.problems]) from None
    if problems:
        raise SpecError(source, problems)
    return DevicePluginRequest(cloud, settings, tuple(taints))


def device_plugin_daemonset(settings: DevicePluginSettings, extra_taints: Iterable[Taint] = ()) -> dict[str, Any]:
    """NVIDIA's static DaemonSet with spotkube's placement, priority, security and resources.

    `extra_taints` are taints the GPU pools carry beyond the contract's own (a user's dedicated-team
    taint, say): the plugin must tolerate them too, or those pools' GPUs are never advertised.
    """
    placement = contract.on_any_gpu_pool()
    tolerations = [*placement.tolerations_k8s()]
    tolerations += [t for t in (contract.Toleration.for_taint(x).to_k8s() for x in extra_taints)
                    if t not in tolerations]
    labels = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/managed-by": "spotkube"}
    pod_spec = {
        "priorityClassName": "system-node-critical",
        # The plugin talks to the kubelet over its socket, never to the API server.
        "automountServiceAccountToken": False,
        "affinity": placement.affinity_k8s(),
        "tolerations": tolerations,
        "containers": [{
            "name": CONTAINER_NAME,
            "image": f"{settings.image}:{settings.version}",
            # No FAIL_ON_INIT_ERROR: NVIDIA recommends the binary's default, true
            # (NVIDIA/k8s-device-plugin cmd/nvidia-device-plugin/main.go), and dropped `false` from
            # its static manifests in v0.18.0 (NVIDIA/k8s-device-plugin#1201; see
            # docs/platform-facts.md#nvidia-device-plugin). With false, a plugin that starts
            # before the driver is ready waits indefinitely and never advertises the GPUs; with true
            # it exits and the kubelet restarts it until the driver is ready.
            # How MIG instances are advertised (devicePlugin.migStrategy, docs/gpu-sharing.md): `single`
            # as nvidia.com/gpu, `mixed` as nvidia.com/mig-<profile>. On a node without MIG both
            # advertise whole GPUs as nvidia.com/gpu, so one DaemonSet serves every GPU pool.
            "env": [{"name": "MIG_STRATEGY", "value": settings.mig_strategy}],
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            "resources": RESOURCES,
            "volumeMounts": [{"name": "device-plugin", "mountPath": DEVICE_PLUGIN_DIR}],
        }],
        "volumes": [{"name": "device-plugin", "hostPath": {"path": DEVICE_PLUGIN_DIR, "type": "Directory"}}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DAEMONSET_NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": labels["app.kubernetes.io/name"]}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def plugins_per_pool(
    pools: Sequence[PoolContract], daemonset_pod_specs: Sequence[Mapping[str, Any]],
    managed: ManagedDevicePlugin | None,
) -> dict[str, list[str]]:
    """Which device plugins would run on each pool's nodes.

    The cloud's own plugin (`managed`, if it runs one) serves the nodes it says it serves, by their
    labels; each DaemonSet runs wherever the contract matcher says its pod spec can land.
    """
    placements = [contract.Placement.from_pod_spec(spec) for spec in daemonset_pod_specs]
    result: dict[str, list[str]] = {}
    for pool in pools:
        plugins = [managed.name] if managed is not None and managed.serves(pool.labels) else []
        plugins += [DAEMONSET_NAME for p in placements if contract.judge(p, pool).fits]
        result[pool.name] = plugins
    return result


def plugin_problems(
    pools: Sequence[PoolContract], plugins: Mapping[str, Sequence[str]], *, plugin_wanted: bool
) -> list[str]:
    """Every pool with two plugins, which advertise its GPUs twice; and, when a plugin was asked
    for, every GPU pool with none (without the ask it is the user's choice, e.g. the GPU Operator)."""
    problems = []
    for pool in pools:
        found = list(plugins.get(pool.name, ()))
        if len(found) > 1:
            problems.append(f"pool {pool.name!r} would run {len(found)} device plugins ({', '.join(found)}), "
                            "which advertise its GPUs twice")
        elif not found and pool.accelerator and plugin_wanted:
            problems.append(f"GPU pool {pool.name!r} would run no device plugin, so its GPUs are never "
                            "schedulable")
    return problems
