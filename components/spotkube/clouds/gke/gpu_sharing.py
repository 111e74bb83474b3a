"""GKE GPU sharing facts: MIG partition sizes per GPU, and time-sharing and MPS limits.

A GKE node pool's accelerator takes `gpu_partition_size` (a MIG profile), and `gpu_sharing_config`
with `gpu_sharing_strategy` TIME_SHARING or MPS and `max_shared_clients_per_gpu` (pulumi-gcp
`NodePoolNodeConfigGuestAcceleratorArgs`; cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi,
.../timesharing-gpus, .../nvidia-mps-gpus). The valid partition sizes, with how many fit on one
GPU, are GKE's device plugin's own table (GoogleCloudPlatform/container-engine-accelerators
`pkg/gpu/nvidia/mig/mig.go`, `gpuPartitionSizeMaxCount`): note that A100 and H100 have no 4g
partition on GKE, unlike AKS. Every slice is advertised as `nvidia.com/gpu`. Docs: docs/gpu-sharing.md.
"""

from __future__ import annotations

from collections.abc import Mapping

#: GPU type -> partition size -> partitions per GPU.
PARTITION_SIZES: Mapping[str, Mapping[str, int]] = {
    "nvidia-tesla-a100": {"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "7g.40gb": 1},
    "nvidia-a100-80gb": {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "7g.80gb": 1},
    "nvidia-h100-80gb": {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "7g.80gb": 1},
    "nvidia-h100-mega-80gb": {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "7g.80gb": 1},
    "nvidia-h200-141gb": {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1},
    "nvidia-b200": {"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1},
    "nvidia-gb200": {"1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1},
}
#: spotkube's names of the sharing strategies -> the API's.
STRATEGIES: Mapping[str, str] = {"time-sharing": "TIME_SHARING", "mps": "MPS"}
#: The most clients per GPU GKE accepts for time-sharing and MPS (max_shared_clients_per_gpu).
MAX_CLIENTS_PER_GPU = 48


def mig_profiles(gpu_type: str) -> dict[str, int]:
    """The partition sizes of a GPU type on GKE, each with its partitions per GPU."""
    return dict(PARTITION_SIZES.get(gpu_type, {}))
