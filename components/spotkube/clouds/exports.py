"""Every registered cloud's components and their args, as `spotkube` exports them, for type checkers:
generated from the registry by `python -m spotkube.cli.reference write`; do not edit.
"""

from spotkube.clouds.aks.args import AksAutoscalerArgs as AksAutoscalerArgs
from spotkube.clouds.aks.args import AksBusyPeriodArgs as AksBusyPeriodArgs
from spotkube.clouds.aks.args import AksCapacityReservationArgs as AksCapacityReservationArgs
from spotkube.clouds.aks.args import AksClusterArgs as AksClusterArgs
from spotkube.clouds.aks.args import AksClusterLogsArgs as AksClusterLogsArgs
from spotkube.clouds.aks.args import AksDeployerArgs as AksDeployerArgs
from spotkube.clouds.aks.args import AksGpuArgs as AksGpuArgs
from spotkube.clouds.aks.args import AksGpuClusterArgs as AksGpuClusterArgs
from spotkube.clouds.aks.args import AksGpuNodePoolArgs as AksGpuNodePoolArgs
from spotkube.clouds.aks.args import AksGpuPoolArgs as AksGpuPoolArgs
from spotkube.clouds.aks.args import AksGpuSharingArgs as AksGpuSharingArgs
from spotkube.clouds.aks.args import AksMaintenanceArgs as AksMaintenanceArgs
from spotkube.clouds.aks.args import AksMaintenanceWindowArgs as AksMaintenanceWindowArgs
from spotkube.clouds.aks.args import AksPlatformPoolArgs as AksPlatformPoolArgs
from spotkube.clouds.aks.args import AksPoolUpgradeArgs as AksPoolUpgradeArgs
from spotkube.clouds.aks.args import AksReservationCreateArgs as AksReservationCreateArgs
from spotkube.clouds.aks.args import AksSpotPoolArgs as AksSpotPoolArgs
from spotkube.clouds.aks.args import AksSystemPoolArgs as AksSystemPoolArgs
from spotkube.clouds.aks.component import AksGpuCluster as AksGpuCluster
from spotkube.clouds.aks.node_pool import AksGpuNodePool as AksGpuNodePool
from spotkube.clouds.gke.args import GkeAutoscalerArgs as GkeAutoscalerArgs
from spotkube.clouds.gke.args import GkeBusyPeriodArgs as GkeBusyPeriodArgs
from spotkube.clouds.gke.args import GkeClusterArgs as GkeClusterArgs
from spotkube.clouds.gke.args import GkeClusterLogsArgs as GkeClusterLogsArgs
from spotkube.clouds.gke.args import GkeDeployerArgs as GkeDeployerArgs
from spotkube.clouds.gke.args import GkeGpuArgs as GkeGpuArgs
from spotkube.clouds.gke.args import GkeGpuClusterArgs as GkeGpuClusterArgs
from spotkube.clouds.gke.args import GkeGpuNodePoolArgs as GkeGpuNodePoolArgs
from spotkube.clouds.gke.args import GkeGpuPoolArgs as GkeGpuPoolArgs
from spotkube.clouds.gke.args import GkeGpuSharingArgs as GkeGpuSharingArgs
from spotkube.clouds.gke.args import GkeMaintenanceArgs as GkeMaintenanceArgs
from spotkube.clouds.gke.args import GkeMaintenanceWindowArgs as GkeMaintenanceWindowArgs
from spotkube.clouds.gke.args import GkePlatformPoolArgs as GkePlatformPoolArgs
from spotkube.clouds.gke.args import GkePoolUpgradeArgs as GkePoolUpgradeArgs
from spotkube.clouds.gke.args import GkeSecondaryBootDiskArgs as GkeSecondaryBootDiskArgs
from spotkube.clouds.gke.args import GkeSpotPoolArgs as GkeSpotPoolArgs
from spotkube.clouds.gke.args import GkeSystemPoolArgs as GkeSystemPoolArgs
from spotkube.clouds.gke.component import GkeGpuCluster as GkeGpuCluster
from spotkube.clouds.gke.node_pool import GkeGpuNodePool as GkeGpuNodePool
