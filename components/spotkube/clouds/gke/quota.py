"""GKE: the Compute Engine quotas a stack's node pools count against at full scale.

Compute Engine counts, per region (cloud.google.com/compute/resource-usage, .../compute/docs/gpus):
- vCPUs per machine family where the family has its own quota (`N2_CPUS`, `A2_CPUS`, `G2_CPUS`...),
  else against `CPUS` (N1 always): spotkube names the family's quota and falls back to `CPUS` when
  the region lists no such quota;
- vCPUs of Spot, preemptible and flex-start VMs against `PREEMPTIBLE_CPUS` when the project has that quota
  (a limit of 0 means it has none), else against the regular ones;
- GPUs per type (`NVIDIA_L4_GPUS`), and Spot or preemptible GPUs against `PREEMPTIBLE_NVIDIA_L4_GPUS`
  when set, else the regular quota;
and per project `GPUS_ALL_REGIONS` and `CPUS_ALL_REGIONS` (0 GPUs in a new project).
Upgrades add surge nodes: GKE's default is `maxSurge=1, maxUnavailable=0` per node pool
(cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies), and spotkube sets
no upgrade settings. Pure module: no Pulumi, no SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from spotkube.platform.quota import PoolDemand, QuotaNeed, QuotaPlan, QuotaRef, summed, surge_nodes

#: Surge nodes per pool during an upgrade: GKE's default `maxSurge`.
DEFAULT_MAX_SURGE = 1
SURGE = ("GKE adds each pool's max surge while it upgrades the pool: as the pool registers it, else "
         f"{DEFAULT_MAX_SURGE} node (GKE's default surge upgrade); a blue-green pool doubles. Spot and preemptible "
         "pools included. Every pool is counted surging at once: the worst case.")
ALL_REGIONS_CPUS = "CPUS_ALL_REGIONS"
ALL_REGIONS_GPUS = "GPUS_ALL_REGIONS"
PREEMPTIBLE_CPUS = "PREEMPTIBLE_CPUS"
CPUS = "CPUS"

#: Accelerator-optimized machine types, whose names count GPUs, not vCPUs (cloud.google.com/compute/
#: docs/accelerator-optimized-machines: A2 Standard and Ultra, A3 High, Mega, Edge and Ultra tables).
ACCELERATOR_VCPUS: dict[str, int] = {
    "a2-highgpu-1g": 12, "a2-highgpu-2g": 24, "a2-highgpu-4g": 48, "a2-highgpu-8g": 96, "a2-megagpu-16g": 96,
    "a2-ultragpu-1g": 12, "a2-ultragpu-2g": 24, "a2-ultragpu-4g": 48, "a2-ultragpu-8g": 96,
    "a3-highgpu-1g": 26, "a3-highgpu-2g": 52, "a3-highgpu-4g": 104, "a3-highgpu-8g": 208,
    "a3-edgegpu-8g": 208, "a3-megagpu-8g": 208, "a3-ultragpu-8g": 224,
}
#: Shared-core E2 types count 2 vCPUs each (cloud.google.com/compute/docs/general-purpose-machines#e2-shared-core).
SHARED_CORE_VCPUS: dict[str, int] = {"e2-micro": 2, "e2-small": 2, "e2-medium": 2}
#: GPU type (accelerator name) -> the quota metric's stem (`NVIDIA_<stem>_GPUS`), from the metrics
#: regions.get lists (google-cloud-compute `Quota.Metric`, and the names Compute Engine reports for
#: types that enum lacks: NVIDIA_H100_MEGA_GPUS, NVIDIA_H200_GPUS, NVIDIA_B200_GPUS).
GPU_METRICS: dict[str, str] = {
    "nvidia-tesla-t4": "T4", "nvidia-tesla-p4": "P4", "nvidia-tesla-v100": "V100", "nvidia-tesla-p100": "P100",
    "nvidia-l4": "L4", "nvidia-tesla-a100": "A100", "nvidia-a100-80gb": "A100_80GB", "nvidia-h100-80gb": "H100",
    "nvidia-h100-mega-80gb": "H100_MEGA", "nvidia-h200-141gb": "H200", "nvidia-b200": "B200",
}
_PREDEFINED = re.compile(r"^([a-z][a-z0-9]*)-[a-z]+-(\d+)(-lssd)?$")


def vcpus(machine_type: str) -> int | None:
    """vCPUs of a predefined machine type (`n2-standard-8` -> 8), or of an accelerator-optimized one."""
    if machine_type in ACCELERATOR_VCPUS:
        return ACCELERATOR_VCPUS[machine_type]
    if machine_type in SHARED_CORE_VCPUS:
        return SHARED_CORE_VCPUS[machine_type]
    match = _PREDEFINED.match(machine_type)
    return int(match.group(2)) if match else None


def gpu_metric(gpu_type: str, interruptible: bool) -> str:
    stem = GPU_METRICS.get(gpu_type, gpu_type.removeprefix("nvidia-").removeprefix("tesla-").replace("-", "_").upper())
    return f"{'PREEMPTIBLE_' if interruptible else ''}NVIDIA_{stem}_GPUS"


def quota_plan(pools: Sequence[PoolDemand], learnt: Mapping[str, str]) -> QuotaPlan:
    """The CPU and GPU quotas the pools need at full scale and during upgrades. `learnt` is unused:
    every Compute Engine quota name follows from the machine type's name."""
    needs: list[QuotaNeed] = []
    notes: list[str] = []
    for pool in pools:
        cores = vcpus(pool.machine)
        if cores is None:
            notes.append(f"pool {pool.name}: spotkube can't count the vCPUs of {pool.machine}; its CPU quota is "
                         "not counted")
        # Flex-start VMs count against the preemptible quotas too, and get short-lived upgrades, without surge
        # (docs/platform-facts.md#gke-flex-start-and-queued-provisioning).
        preemptible_quota = pool.capacity != "on-demand"
        flex = pool.capacity == "flex-start"
        nodes, surge = pool.max or 0, 0 if flex else surge_nodes(pool, DEFAULT_MAX_SURGE)
        family = pool.machine.split("-", 1)[0].upper()
        regular = (QuotaRef(f"{family}_CPUS"), QuotaRef(CPUS)) if family != "N1" else (QuotaRef(CPUS),)
        if cores is not None:
            refs = (QuotaRef(PREEMPTIBLE_CPUS, skip_if_zero=True), *regular) if preemptible_quota else regular
            title = f"{'Spot/preemptible ' if preemptible_quota else ''}{family} vCPUs"
            needs.append(QuotaNeed(refs, title, "vCPUs", nodes * cores, surge * cores, (pool.name,)))
            needs.append(QuotaNeed((QuotaRef(ALL_REGIONS_CPUS),), "vCPUs in all regions", "vCPUs", nodes * cores,
                                   surge * cores, (pool.name,), scope="global"))
        if pool.gpu_type and pool.gpu_count:
            gpus = pool.gpu_count
            regular_gpu = QuotaRef(gpu_metric(pool.gpu_type, interruptible=False))
            refs_gpu = ((QuotaRef(gpu_metric(pool.gpu_type, interruptible=True), skip_if_zero=True), regular_gpu)
                        if preemptible_quota else (regular_gpu,))
            title = f"{'Spot/preemptible ' if preemptible_quota else ''}{pool.gpu_type} GPUs"
            needs.append(QuotaNeed(refs_gpu, title, "GPUs", nodes * gpus, surge * gpus, (pool.name,)))
            needs.append(QuotaNeed((QuotaRef(ALL_REGIONS_GPUS),), "GPUs in all regions", "GPUs", nodes * gpus,
                                   surge * gpus, (pool.name,), scope="global"))
    return QuotaPlan(summed(needs), SURGE, tuple(notes))
