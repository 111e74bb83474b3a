"""`NvidiaDevicePlugin`: exactly one NVIDIA device plugin on every GPU node, spot or on-demand.

The cloud and the GPU pools' taints are the cluster's facts, so the plugin takes them from the cluster: a
plugin told `aks` on a GKE cluster would run beside GKE's own and advertise every GPU twice, and a pool's
taint left untolerated would leave its GPUs unadvertised. A cluster component can't be an arg of the
cross-language schema (Pulumi's analyzer turns a resource-typed arg into a reference to another package's
schema and fails), so the schema keeps `cloud` and `extra_taints`, checked against a spotkube cluster's
provider when the plugin deploys through one.
"""

from collections.abc import Sequence
from dataclasses import replace

import pulumi
import pulumi_kubernetes as k8s

from spotkube.clouds import CLOUDS, profile
from spotkube.components.args import DevicePluginSettingsArgs, NvidiaDevicePluginArgs
from spotkube.platform.addons import device_plugin as workloads
from spotkube.platform.addons.device_plugin import DevicePluginRequest, device_plugin_request
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.spec import DevicePluginSettings, PlatformSpec
from spotkube.shell.common import (
    GpuCluster,
    addon_settings,
    built_from,
    built_onto_pools,
    checked_args,
    child,
    clusters_behind,
    refuse_disabled,
    refuse_outputs,
    validated,
)
from spotkube.shell.pools import pool_builds

ENABLED_REFUSAL = ("is not a key of these args: the component always deploys the plugin the cloud needs; to deploy "
                   "none (you run the GPU Operator, say), don't create the component, as a stack file's "
                   "devicePlugin.enabled: false does")


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """NVIDIA's device plugin on every GPU pool and no other, placed by the scheduling contract.

    In Python, build it for its cluster: `NvidiaDevicePlugin.for_cluster("gpus", cluster)`. The cluster
    says the cloud and every GPU pool's taints, and its provider is used. From other languages, give
    `cloud` (and `extra_taints`) and deploy through the cluster's provider.

    `enabled` is refused rather than honoured: a plugin component that deployed nothing would still
    read as the GPU pools' plugin in the program and the plan. Not creating it says so plainly.

    What it registers: on AKS, NVIDIA's device plugin as a DaemonSet that lands on GPU nodes only and
    tolerates every GPU pool's taints; on GKE, nothing (GKE runs its own plugin).

    Its args are `NvidiaDevicePluginArgs`: `cloud` (`aks` or `gke`), `extra_taints`, and the
    plugin's own settings (`version`, `image`, `mig_strategy`); `for_cluster` takes `DevicePluginSettingsArgs`.

    Outputs. `mode` resolves at once: it depends on the cloud only. The DaemonSet itself waits for
    the cluster's provider, which waits for every pool.

    - `mode`: `daemonset` (AKS) or `gke-managed` (GKE).
    """

    mode: pulumi.Output[str]
    """`daemonset` (spotkube's DaemonSet, on AKS) or `cloud-managed` (the cloud's own plugin, on GKE; nothing
    deployed)."""

    def __init__(
        self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """The plugin for a cluster named by its cloud; in Python, `for_cluster` is simpler.

        :param name: the component's name, and the DaemonSet's.
        :param args: `NvidiaDevicePluginArgs`; bad args end the program with one line naming the key.
        :param opts: Pulumi's resource options: deploy through the cluster's provider.
        """
        source = f"NvidiaDevicePlugin {name!r} args"

        def request() -> DevicePluginRequest:
            values = checked_args(args, NvidiaDevicePluginArgs, source, refused={"enabled": ENABLED_REFUSAL})
            # Every arg decides the DaemonSet (cloud, image, tolerations), so none may be an Output.
            refuse_outputs(values, source)
            return _as_its_cluster_says(device_plugin_request(values, source, CLOUDS), opts, source)
        self._build(name, validated(request), opts)

    @classmethod
    def for_cluster(
        cls, name: str, cluster: GpuCluster, args: DevicePluginSettingsArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> "NvidiaDevicePlugin":
        """The plugin for a spotkube cluster (`AksGpuCluster` or `GkeGpuCluster`): its cloud decides
        what is deployed, every GPU pool's own taints are tolerated, and it deploys through the
        cluster's provider once the cluster is built. `args` holds the plugin's own settings."""
        source = f"NvidiaDevicePlugin {name!r}"

        def request() -> DevicePluginRequest:
            plan = getattr(cluster, "plan", None)
            if plan is None or not hasattr(cluster, "provider"):
                raise pulumi.RunError(f"{source}: cluster: {type(cluster).__name__} is not accepted; give the "
                                      "AksGpuCluster or GkeGpuCluster the plugin serves")
            settings = addon_settings({} if args is None else args, DevicePluginSettingsArgs, DevicePluginSettings,
                                      f"{source} args", refused={"enabled": ENABLED_REFUSAL})
            others = [c.label for c in clusters_behind(opts) if c.cluster is not cluster]
            if others:
                raise SpecError(source, [Problem("opts", f"deploys through {others[0]}'s provider, not the cluster "
                                                 "it was built for; leave the provider out, for_cluster sets it")])
            return replace(DevicePluginRequest.for_spec(plan.spec), settings=settings)
        built = validated(request)
        # The provider waits for the cluster's pools and grants, so what deploys through it does too.
        on_cluster = pulumi.ResourceOptions(providers=[cluster.provider])
        return built_from(cls, name, built, pulumi.ResourceOptions.merge(on_cluster, opts))

    @classmethod
    def for_pools(
        cls, name: str, pools: Sequence[pulumi.ComponentResource], args: DevicePluginSettingsArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> "NvidiaDevicePlugin":
        """The plugin for spotkube's pool components (`AksGpuNodePool`, `GkeGpuNodePool`) on a cluster
        spotkube may not have made: their cloud decides what is deployed, and their own taints are
        tolerated. Deploy it through the cluster's Kubernetes provider (`opts`); `args` holds the
        plugin's own settings."""
        source = f"NvidiaDevicePlugin {name!r}"

        def request() -> DevicePluginRequest:
            builds = pool_builds(pools, source, "the plugin serves")
            settings = addon_settings({} if args is None else args, DevicePluginSettingsArgs, DevicePluginSettings,
                                      f"{source} args", refused={"enabled": ENABLED_REFUSAL})
            request = replace(DevicePluginRequest.for_spec(builds[0].plan.spec), settings=settings)
            return request.tolerating(t for b in builds for t in DevicePluginRequest.for_spec(b.plan.spec).extra_taints)
        return built_onto_pools(cls, name, pools, "device_plugin", request, opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "NvidiaDevicePlugin":
        """The stack's device plugin, from a spec `parse_spec` has already accepted: its settings, and
        tolerations for every GPU pool's own taints."""
        source = f"NvidiaDevicePlugin {name!r}"

        def request() -> DevicePluginRequest:
            refuse_disabled(source, "devicePlugin.enabled", spec.device_plugin.enabled, "device plugin")
            return _as_its_cluster_says(DevicePluginRequest.for_spec(spec), opts, source)
        return built_from(cls, name, validated(request), opts)

    def _build(self, name: str, request: DevicePluginRequest, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__(workloads.DEVICE_PLUGIN_TYPE, name, {}, opts)
        facts = profile(request.cloud)
        mode = facts.device_plugin_mode
        if facts.managed_device_plugin is not None:
            pulumi.log.info(f"{name}: {facts.managed_device_plugin.note}")
        else:
            manifest = workloads.device_plugin_daemonset(request.settings, request.extra_taints)
            k8s.apps.v1.DaemonSet(
                name, metadata=manifest["metadata"], spec=manifest["spec"], opts=child(self)
            )
        self.settings = request.settings
        self.mode = pulumi.Output.from_input(mode)
        self.register_outputs({"mode": self.mode})


def _as_its_cluster_says(
    request: DevicePluginRequest, opts: pulumi.ResourceOptions | None, source: str
) -> DevicePluginRequest:
    """The request checked against the spotkube cluster it deploys into, when its provider is one:
    a `cloud` that contradicts the cluster is refused, and the cluster's GPU pools' taints are tolerated
    whether or not the caller repeated them."""
    for found in clusters_behind(opts):
        cloud = found.cluster.plan.cloud
        if cloud != request.cloud:
            raise SpecError(source, [Problem("cloud", f"{request.cloud!r} contradicts the cluster it deploys to: "
                                             f"{found.label} is {cloud!r}; use {cloud!r}, or "
                                             "NvidiaDevicePlugin.for_cluster(name, cluster), which needs no cloud")])
        request = request.tolerating(DevicePluginRequest.for_spec(found.cluster.plan.spec).extra_taints)
    return request
