"""`NvidiaDevicePlugin`: exactly one NVIDIA device plugin on every GPU node, spot or on-demand.

A thin shell: the DaemonSet is built in `spotkube.core.workloads` from the scheduling contract, and
each cloud's profile says which plugin serves its GPU nodes. On AKS this registers that DaemonSet; on GKE it registers
nothing and says why, because GKE already runs its own plugin on every GPU node.
"""

import pulumi
import pulumi_kubernetes as k8s

from spotkube.core import workloads
from spotkube.core.profiles import profile
from spotkube.core.spec import PlatformSpec
from spotkube.core.workloads import DevicePluginRequest, device_plugin_request
from spotkube.shells.args import NvidiaDevicePluginArgs
from spotkube.shells.common import built_from, child, refuse_outputs, validated


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """NVIDIA's device plugin on every GPU pool and no other, placed by the scheduling contract.

    Deploy it through the cluster's provider: `opts=pulumi.ResourceOptions(providers=[cluster.provider])`.
    """

    mode: pulumi.Output[str]
    """`daemonset` (AKS: spotkube's DaemonSet) or `gke-managed` (GKE's own plugin; nothing deployed)."""

    def __init__(
        self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        source = f"NvidiaDevicePlugin {name!r} args"

        def request() -> DevicePluginRequest:
            # Every arg decides the DaemonSet (cloud, image, tolerations), so none may be an Output.
            refuse_outputs(args, source)
            return device_plugin_request(args, source)
        self._build(name, validated(request), opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "NvidiaDevicePlugin":
        """The stack's device plugin, from a spec `parse_spec` has already accepted: its settings, and
        tolerations for every GPU pool's own taints."""
        return built_from(cls, name, DevicePluginRequest.for_spec(spec), opts)

    def _build(self, name: str, request: DevicePluginRequest, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__(workloads.DEVICE_PLUGIN_TYPE, name, {}, opts)
        mode = profile(request.cloud).device_plugin_mode
        if mode == "gke-managed":
            pulumi.log.info(f"{name}: {workloads.GKE_MANAGED_NOTE}")
        else:
            manifest = workloads.device_plugin_daemonset(request.settings, request.extra_taints)
            k8s.apps.v1.DaemonSet(
                name, metadata=manifest["metadata"], spec=manifest["spec"], opts=child(self)
            )
        self.mode = pulumi.Output.from_input(mode)
        self.register_outputs({"mode": self.mode})
