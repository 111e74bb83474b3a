"""spotkube: Pulumi components for ML platforms on AKS and GKE with spot GPU pools."""

from spotkube.aks import AksGpuCluster
from spotkube.args import (
    AutoscalerArgs,
    ClusterArgs,
    GpuArgs,
    GpuClusterArgs,
    GpuPoolArgs,
    PlatformPoolArgs,
    PoolContractOutput,
    SystemPoolArgs,
)

__version__ = "0.1.0"

__all__ = [
    "AksGpuCluster",
    "AutoscalerArgs",
    "ClusterArgs",
    "GpuArgs",
    "GpuClusterArgs",
    "GpuPoolArgs",
    "PlatformPoolArgs",
    "PoolContractOutput",
    "SystemPoolArgs",
]
