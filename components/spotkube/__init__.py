"""spotkube: Pulumi components for ML platforms on AKS and GKE with spot GPU pools.

The components and their typed args are the public API. They are imported lazily, on first use,
so that the pure modules (`spotkube.platform.contract`, `spotkube.pipelines`, `spotkube.review.pipeline_check`)
can be used without loading Pulumi and the cloud SDKs: pipeline authors never need them.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    #: The installed distribution's version: pyproject.toml's `version` is its one source.
    __version__ = version("spotkube")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

#: Public name -> the module that defines it. Each cluster component has args of its own, generated
#: from its cloud's spec (`AksGpuClusterArgs`, `GkeGpuClusterArgs` and their nested types).
_EXPORTS = {
    "AksGpuCluster": "spotkube.clouds.aks.component",
    "GkeGpuCluster": "spotkube.clouds.gke.component",
    "NvidiaDevicePlugin": "spotkube.components.device_plugin",
    "KubeflowPipelines": "spotkube.components.kubeflow",
    **{name: "spotkube.clouds.aks.args" for name in (
        "AksAutoscalerArgs",
        "AksClusterArgs",
    "AksClusterLogsArgs",
        "AksClusterLogsArgs",
        "AksDeployerArgs",
        "AksGpuArgs",
        "AksGpuClusterArgs",
        "AksGpuPoolArgs",
    "AksGpuSharingArgs",
        "AksGpuSharingArgs",
        "AksPlatformPoolArgs",
        "AksSpotPoolArgs",
        "AksSystemPoolArgs",
    )},
    **{name: "spotkube.clouds.gke.args" for name in (
        "GkeAutoscalerArgs",
        "GkeClusterArgs",
    "GkeClusterLogsArgs",
        "GkeClusterLogsArgs",
        "GkeDeployerArgs",
        "GkeGpuArgs",
        "GkeGpuClusterArgs",
        "GkeGpuPoolArgs",
    "GkeGpuSharingArgs",
        "GkeGpuSharingArgs",
        "GkePlatformPoolArgs",
        "GkeSpotPoolArgs",
        "GkeSystemPoolArgs",
    )},
    **{name: "spotkube.components.args" for name in (
        "DevicePluginSettingsArgs",
        "KubeflowPipelinesArgs",
        "NvidiaDevicePluginArgs",
    )},
    "PoolContractOutput": "spotkube.shell.outputs",
}

__all__ = [
    "AksAutoscalerArgs",
    "AksClusterArgs",
    "AksClusterLogsArgs",
    "AksDeployerArgs",
    "AksGpuArgs",
    "AksGpuCluster",
    "AksGpuClusterArgs",
    "AksGpuPoolArgs",
    "AksGpuSharingArgs",
    "AksPlatformPoolArgs",
    "AksSpotPoolArgs",
    "AksSystemPoolArgs",
    "DevicePluginSettingsArgs",
    "GkeAutoscalerArgs",
    "GkeClusterArgs",
    "GkeClusterLogsArgs",
    "GkeDeployerArgs",
    "GkeGpuArgs",
    "GkeGpuCluster",
    "GkeGpuClusterArgs",
    "GkeGpuPoolArgs",
    "GkeGpuSharingArgs",
    "GkePlatformPoolArgs",
    "GkeSpotPoolArgs",
    "GkeSystemPoolArgs",
    "KubeflowPipelines",
    "KubeflowPipelinesArgs",
    "NvidiaDevicePlugin",
    "NvidiaDevicePluginArgs",
    "PoolContractOutput",
]

if TYPE_CHECKING:
    from spotkube.clouds.aks.args import (
        AksAutoscalerArgs,
        AksClusterArgs,
        AksClusterLogsArgs,
        AksDeployerArgs,
        AksGpuArgs,
        AksGpuClusterArgs,
        AksGpuPoolArgs,
        AksGpuSharingArgs,
        AksPlatformPoolArgs,
        AksSpotPoolArgs,
        AksSystemPoolArgs,
    )
    from spotkube.clouds.aks.component import AksGpuCluster
    from spotkube.clouds.gke.args import (
        GkeAutoscalerArgs,
        GkeClusterArgs,
        GkeClusterLogsArgs,
        GkeDeployerArgs,
        GkeGpuArgs,
        GkeGpuClusterArgs,
        GkeGpuPoolArgs,
        GkeGpuSharingArgs,
        GkePlatformPoolArgs,
        GkeSpotPoolArgs,
        GkeSystemPoolArgs,
    )
    from spotkube.clouds.gke.component import GkeGpuCluster
    from spotkube.components.args import DevicePluginSettingsArgs, KubeflowPipelinesArgs, NvidiaDevicePluginArgs
    from spotkube.components.device_plugin import NvidiaDevicePlugin
    from spotkube.components.kubeflow import KubeflowPipelines
    from spotkube.shell.outputs import PoolContractOutput


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'spotkube' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
