"""spotkube: Pulumi components for ML platforms on AKS and GKE with spot GPU pools.

The components and their typed args are the public API. They are imported lazily, on first use,
so that the pure modules (`spotkube.platform.contract`, `spotkube.pipelines`, `spotkube.review.pipeline_check`)
can be used without loading Pulumi and the cloud SDKs: pipeline authors never need them.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Public name -> the module that defines it. Each cluster component has args of its own, generated
#: from its cloud's spec (`AksGpuClusterArgs`, `GkeGpuClusterArgs` and their nested types).
_EXPORTS = {
    "AksGpuCluster": "spotkube.clouds.aks.component",
    "AksGpuNodePool": "spotkube.clouds.aks.node_pool",
    "GkeGpuCluster": "spotkube.clouds.gke.component",
    "GkeGpuNodePool": "spotkube.clouds.gke.node_pool",
    "NvidiaDevicePlugin": "spotkube.components.device_plugin",
    "KubeflowPipelines": "spotkube.components.kubeflow",
    "Kueue": "spotkube.components.kueue",
    "KubeflowTrainer": "spotkube.components.trainer",
    **{name: "spotkube.clouds.aks.args" for name in (
        "AksAutoscalerArgs",
        "AksBusyPeriodArgs",
        "AksCapacityReservationArgs",
        "AksClusterArgs",
        "AksClusterLogsArgs",
        "AksDeployerArgs",
        "AksGpuArgs",
        "AksGpuClusterArgs",
        "AksGpuNodePoolArgs",
        "AksGpuPoolArgs",
        "AksGpuSharingArgs",
        "AksMaintenanceArgs",
        "AksMaintenanceWindowArgs",
        "AksPlatformPoolArgs",
        "AksPoolUpgradeArgs",
        "AksReservationCreateArgs",
        "AksSpotPoolArgs",
        "AksSystemPoolArgs",
    )},
    **{name: "spotkube.clouds.gke.args" for name in (
        "GkeAutoscalerArgs",
        "GkeBusyPeriodArgs",
        "GkeClusterArgs",
        "GkeClusterLogsArgs",
        "GkeDeployerArgs",
        "GkeGpuArgs",
        "GkeGpuClusterArgs",
        "GkeGpuNodePoolArgs",
        "GkeGpuPoolArgs",
        "GkeGpuSharingArgs",
        "GkeMaintenanceArgs",
        "GkeMaintenanceWindowArgs",
        "GkePlatformPoolArgs",
        "GkePoolUpgradeArgs",
        "GkeSecondaryBootDiskArgs",
        "GkeSpotPoolArgs",
        "GkeSystemPoolArgs",
    )},
    **{name: "spotkube.components.args" for name in (
        "DevicePluginSettingsArgs",
        "KubeflowPipelinesArgs",
        "KubeflowTrainerArgs",
        "KueueArgs",
        "NvidiaDevicePluginArgs",
    )},
    "PoolContractOutput": "spotkube.shell.outputs",
}
#: The cluster components that need a cloud's SDK, which the base install leaves out: the extra that
#: brings it, and the SDK's module.
_EXTRAS = {"AksGpuCluster": ("aks", "pulumi_azure_native"), "AksGpuNodePool": ("aks", "pulumi_azure_native"),
           "GkeGpuCluster": ("gke", "pulumi_gcp"), "GkeGpuNodePool": ("gke", "pulumi_gcp")}

__all__ = [
    "AksAutoscalerArgs",
    "AksBusyPeriodArgs",
    "AksCapacityReservationArgs",
    "AksClusterArgs",
    "AksClusterLogsArgs",
    "AksDeployerArgs",
    "AksGpuArgs",
    "AksGpuCluster",
    "AksGpuClusterArgs",
    "AksGpuNodePool",
    "AksGpuNodePoolArgs",
    "AksGpuPoolArgs",
    "AksGpuSharingArgs",
    "AksMaintenanceArgs",
    "AksMaintenanceWindowArgs",
    "AksPlatformPoolArgs",
    "AksPoolUpgradeArgs",
    "AksReservationCreateArgs",
    "AksSpotPoolArgs",
    "AksSystemPoolArgs",
    "DevicePluginSettingsArgs",
    "GkeAutoscalerArgs",
    "GkeBusyPeriodArgs",
    "GkeClusterArgs",
    "GkeClusterLogsArgs",
    "GkeDeployerArgs",
    "GkeGpuArgs",
    "GkeGpuCluster",
    "GkeGpuClusterArgs",
    "GkeGpuNodePool",
    "GkeGpuNodePoolArgs",
    "GkeGpuPoolArgs",
    "GkeGpuSharingArgs",
    "GkeMaintenanceArgs",
    "GkeMaintenanceWindowArgs",
    "GkePlatformPoolArgs",
    "GkePoolUpgradeArgs",
    "GkeSecondaryBootDiskArgs",
    "GkeSpotPoolArgs",
    "GkeSystemPoolArgs",
    "KubeflowPipelines",
    "KubeflowPipelinesArgs",
    "KubeflowTrainer",
    "KubeflowTrainerArgs",
    "Kueue",
    "KueueArgs",
    "NvidiaDevicePlugin",
    "NvidiaDevicePluginArgs",
    "PoolContractOutput",
]

if TYPE_CHECKING:
    __version__: str
    from spotkube.clouds.aks.args import (
        AksAutoscalerArgs,
        AksBusyPeriodArgs,
        AksCapacityReservationArgs,
        AksClusterArgs,
        AksClusterLogsArgs,
        AksDeployerArgs,
        AksGpuArgs,
        AksGpuClusterArgs,
        AksGpuNodePoolArgs,
        AksGpuPoolArgs,
        AksGpuSharingArgs,
        AksMaintenanceArgs,
        AksMaintenanceWindowArgs,
        AksPlatformPoolArgs,
        AksPoolUpgradeArgs,
        AksReservationCreateArgs,
        AksSpotPoolArgs,
        AksSystemPoolArgs,
    )
    from spotkube.clouds.aks.component import AksGpuCluster
    from spotkube.clouds.aks.node_pool import AksGpuNodePool
    from spotkube.clouds.gke.args import (
        GkeAutoscalerArgs,
        GkeBusyPeriodArgs,
        GkeClusterArgs,
        GkeClusterLogsArgs,
        GkeDeployerArgs,
        GkeGpuArgs,
        GkeGpuClusterArgs,
        GkeGpuNodePoolArgs,
        GkeGpuPoolArgs,
        GkeGpuSharingArgs,
        GkeMaintenanceArgs,
        GkeMaintenanceWindowArgs,
        GkePlatformPoolArgs,
        GkePoolUpgradeArgs,
        GkeSecondaryBootDiskArgs,
        GkeSpotPoolArgs,
        GkeSystemPoolArgs,
    )
    from spotkube.clouds.gke.component import GkeGpuCluster
    from spotkube.clouds.gke.node_pool import GkeGpuNodePool
    from spotkube.components.args import (
        DevicePluginSettingsArgs,
        KubeflowPipelinesArgs,
        KubeflowTrainerArgs,
        KueueArgs,
        NvidiaDevicePluginArgs,
    )
    from spotkube.components.device_plugin import NvidiaDevicePlugin
    from spotkube.components.kubeflow import KubeflowPipelines
    from spotkube.components.kueue import Kueue
    from spotkube.components.trainer import KubeflowTrainer
    from spotkube.shell.outputs import PoolContractOutput


def _installed_version() -> str:
    """The installed distribution's version: pyproject.toml's `version` is its one source. Looked up
    on first use, because importlib.metadata costs every import of spotkube a few milliseconds."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spotkube")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562); `__version__` likewise."""
    if name == "__version__":
        value: Any = _installed_version()
    elif name in _EXPORTS:
        try:
            module = import_module(_EXPORTS[name])
        except ModuleNotFoundError as err:
            extra, sdk = _EXTRAS.get(name, ("", ""))
            if not sdk or (err.name or "").partition(".")[0] != sdk:
                raise
            from spotkube.shell.extras import missing_extra

            raise missing_extra(name, extra) from None
        value = getattr(module, name)
    else:
        raise AttributeError(f"module 'spotkube' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
