"""AKS GPU sharing facts: which GPUs split into MIG instances, and into which.

AKS partitions an agent pool's GPUs at creation from the pool's `gpuInstanceProfile` (MIG1g, MIG2g,
MIG3g, MIG4g or MIG7g, fixed for the pool's life) on the A100, H100 and H200 series
(learn.microsoft.com/azure/aks/gpu-multi-instance). The node's bootstrap creates the same GPU
instance profile on every GPU (Azure/AgentBaker `mig-partition.sh`: MIG1g `-cgi 19` seven times,
MIG2g `14` three times, MIG3g `9` twice, MIG4g `5` once, MIG7g `0` once), so each value yields one
NVIDIA MIG profile per GPU model, named below. AKS has no time-sharing or MPS setting.

Keyed by spotkube's GPU type; a GPU type missing here has no MIG on AKS. Docs: docs/gpu-sharing.md.
"""

from __future__ import annotations

from collections.abc import Mapping

#: GPU type -> NVIDIA MIG profile -> (AKS gpuInstanceProfile, instances per GPU).
MIG_PROFILES: Mapping[str, Mapping[str, tuple[str, int]]] = {
    "nvidia-tesla-a100": {"1g.5gb": ("MIG1g", 7), "2g.10gb": ("MIG2g", 3), "3g.20gb": ("MIG3g", 2),
                          "4g.20gb": ("MIG4g", 1), "7g.40gb": ("MIG7g", 1)},
    "nvidia-a100-80gb": {"1g.10gb": ("MIG1g", 7), "2g.20gb": ("MIG2g", 3), "3g.40gb": ("MIG3g", 2),
                         "4g.40gb": ("MIG4g", 1), "7g.80gb": ("MIG7g", 1)},
    "nvidia-h100-80gb": {"1g.10gb": ("MIG1g", 7), "2g.20gb": ("MIG2g", 3), "3g.40gb": ("MIG3g", 2),
                         "4g.40gb": ("MIG4g", 1), "7g.80gb": ("MIG7g", 1)},
    "nvidia-h200-141gb": {"1g.18gb": ("MIG1g", 7), "2g.35gb": ("MIG2g", 3), "3g.71gb": ("MIG3g", 2),
                          "4g.71gb": ("MIG4g", 1), "7g.141gb": ("MIG7g", 1)},
}
#: The agent pool field's values, as the API spells them.
GPU_INSTANCE_PROFILES = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")


def mig_profiles(gpu_type: str) -> dict[str, int]:
    """The MIG profiles of a GPU type on AKS, each with its instances per GPU."""
    return {profile: count for profile, (_, count) in MIG_PROFILES.get(gpu_type, {}).items()}


def gpu_instance_profile(gpu_type: str, profile: str) -> str | None:
    """The `gpuInstanceProfile` that yields `profile` on this GPU type, None if none does."""
    found = MIG_PROFILES.get(gpu_type, {}).get(profile)
    return found[0] if found else None


def profile_of(gpu_type: str, instance_profile: str) -> str | None:
    """The MIG profile a registered `gpuInstanceProfile` yields on this GPU type (for the plan)."""
    return next((p for p, (value, _) in MIG_PROFILES.get(gpu_type, {}).items() if value == instance_profile), None)
