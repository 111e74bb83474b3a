"""Every registered cloud's components and their args, as `spotkube` exports them, for type checkers:
generated from the registry by `python -m spotkube.cli.reference write`; do not edit.
"""

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

__all__ = [
    "AksAutoscalerArgs", "AksBusyPeriodArgs", "AksCapacityReservationArgs", "AksClusterArgs",
    "AksClusterLogsArgs", "AksDeployerArgs", "AksGpuArgs", "AksGpuCluster", "AksGpuClusterArgs",
    "AksGpuNodePool", "AksGpuNodePoolArgs", "AksGpuPoolArgs", "AksGpuSharingArgs", "AksMaintenanceArgs",
    "AksMaintenanceWindowArgs", "AksPlatformPoolArgs", "AksPoolUpgradeArgs", "AksReservationCreateArgs",
    "AksSpotPoolArgs", "AksSystemPoolArgs", "GkeAutoscalerArgs", "GkeBusyPeriodArgs", "GkeClusterArgs",
    "GkeClusterLogsArgs", "GkeDeployerArgs", "GkeGpuArgs", "GkeGpuCluster", "GkeGpuClusterArgs",
    "GkeGpuNodePool", "GkeGpuNodePoolArgs", "GkeGpuPoolArgs", "GkeGpuSharingArgs", "GkeMaintenanceArgs",
    "GkeMaintenanceWindowArgs", "GkePlatformPoolArgs", "GkePoolUpgradeArgs", "GkeSecondaryBootDiskArgs",
    "GkeSpotPoolArgs", "GkeSystemPoolArgs",
]
