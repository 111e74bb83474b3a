"""`NvidiaDevicePlugin`: exactly one NVIDIA device plugin on every GPU node, spot or on-demand.

A thin shell: the DaemonSet is built in `spotkube.core.workloads` from the scheduling contract, and the
decision per cloud lives there too. On AKS this registers that DaemonSet; on GKE it registers
nothing and says why, because GKE already runs its own plugin on every GPU node.
"""

from typing import cast

import pulumi
import pulumi_kubernetes as k8s

from spotkube.core import workloads
from spotkube.core.contract import Cloud, Taint
from spotkube.core.errors import Problem, SpecError
from spotkube.core.spec import DevicePluginSettings, parse_settings
from spotkube.shells.args import NvidiaDevicePluginArgs
from spotkube.shells.common import child


def _validated(name: str, args: NvidiaDevicePluginArgs) -> tuple[Cloud, DevicePluginSettings, tuple[Taint, ...]]:
    """Cloud, settings and extra taints, or one clear error before anything is registered."""
    source = f"NvidiaDevicePlugin {name!r} args"
    values = dict(args)
    cloud = values.pop("cloud", None)
    problems = []
    if cloud not in ("aks", "gke"):
        problems.append(Problem("cloud", f"{cloud!r} is not accepted; use 'aks' or 'gke'"))
    taints = []
    for i, text in enumerate(values.pop("extra_taints", None) or ()):
        try:
            taints.append(Taint.parse(text))
        except ValueError as err:
            problems.append(Problem(f"extra_taints[{i}]", str(err)))
    try:
        settings = parse_settings(DevicePluginSettings, values, source)
    except SpecError as err:
        raise pulumi.RunError(str(SpecError(source, [*problems, *err.problems]))) from None
    if problems:
        raise pulumi.RunError(str(SpecError(source, problems)))
    return cast(Cloud, cloud), settings, tuple(taints)


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """NVIDIA's device plugin on every GPU pool and no other, placed by the scheduling contract.

    Deploy it through the cluster's provider: `opts=pulumi.ResourceOptions(providers=[cluster.provider])`.
    """

    mode: pulumi.Output[str]
    """`daemonset` (AKS: spotkube's DaemonSet) or `gke-managed` (GKE's own plugin; nothing deployed)."""

    def __init__(
        self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        cloud, settings, extra_taints = _validated(name, args)
        super().__init__(workloads.DEVICE_PLUGIN_TYPE, name, {}, opts)
        mode = workloads.plugin_mode(cloud)
        if mode == "gke-managed":
            pulumi.log.info(f"{name}: {workloads.GKE_MANAGED_NOTE}")
        else:
            manifest = workloads.device_plugin_daemonset(settings, extra_taints)
            k8s.apps.v1.DaemonSet(
                name, metadata=manifest["metadata"], spec=manifest["spec"], opts=child(self)
            )
        self.mode = pulumi.Output.from_input(mode)
        self.register_outputs({"mode": self.mode})
